"""Balanced filtering (seed 000): the alpha sweep on Adult (race) and Bank Marketing (job).

Paper numbers (spec §4.3): Adult pre-filter imbalance 0.7358; naive / QP regression never below
0.7 in training (0.65 test); QP tree and (alpha, beta) span beta 0-0.7; one alpha grid took
20 min - 2 h. Bank: "almost perfectly balanced" in-sample at alpha = 0.2; ~3 h per grid.
"""

from __future__ import annotations

import time

import numpy as np

from fairengine.data import load_dataset
from fairengine.frontier import sweep
from fairengine.methods.balanced_filtering import ALPHA_GRID, ETA_GRID

#: The spec's target for the full alpha sweep on 2 cores.
SWEEP_TARGET_S = 60.0


def _task(quick: bool, name: str, sensitive: str):
    if quick:
        return load_dataset("german_credit", sensitive=["sex"]).split(test_size=1 / 3)
    return load_dataset(name, sensitive=[sensitive]).split(test_size=1 / 3, random_state=0)


def adult_alpha_sweep(quick: bool) -> list[dict]:
    """The default alpha grid (21 points) of the (alpha, beta) proxy, n_jobs=2, no store."""
    train, test = _task(quick, "adult", "race")
    grid = {"proxy": ["ab"], "alpha": list(ALPHA_GRID)}
    start = time.perf_counter()
    frontier = sweep("balanced_filtering", train, test, grid, n_jobs=2)
    total = time.perf_counter() - start
    pts = frontier.points
    tr, te = pts[pts.split == "train"], pts[pts.split == "test"]
    fit_mean = float(pts.drop_duplicates("point_id")["elapsed"].mean())
    at0 = tr[tr.alpha == 0.0].iloc[0]
    rows = [
        {
            "what": f"alpha sweep, 21 points, n_jobs=2 ({train.name}, {len(train.frame):,} rows)",
            "value": total,
            "unit": "s",
            "ratio": SWEEP_TARGET_S / total,
            "note": f"speed-up vs the {SWEEP_TARGET_S:.0f} s target; paper: 20 min - 2 h per grid",
        },
        {"what": "time per fit (mean over the grid)", "value": fit_mean, "unit": "s"},
        {
            "what": "alpha=0: train imbalance",
            "value": float(at0.imbalance),
            "unit": "beta",
            "note": f"{int(at0.n_leaves)} leaf; paper/spec ||r-U|| = 0.7358",
        },
        {
            "what": "(alpha,beta) proxy: lowest train / test imbalance over alpha",
            "value": float(tr.imbalance.min()),
            "unit": "beta",
            "note": f"test {te.imbalance.min():.3f}; paper: curve spans 0-0.7; imbalance by alpha "
            + ", ".join(
                f"{a:.1f}:{b:.2f}"
                for a, b in zip(tr.alpha, tr.imbalance, strict=True)
                if round(a * 10) == a * 10
            ),
        },
    ]
    for proxy in ("qp_dt", "qp_lr", "naive_lr"):
        base = sweep(
            "balanced_filtering", train, test, {"proxy": [proxy], "eta": list(ETA_GRID)}, n_jobs=2
        ).points
        btr, bte = base[base.split == "train"], base[base.split == "test"]
        above = btr[btr.eta > 0].imbalance.min()
        rows.append(
            {
                "what": f"{proxy}: lowest train imbalance over eta (eta=0 / eta>=0.1)",
                "value": float(btr.imbalance.min()),
                "unit": "beta",
                "note": f"eta>=0.1: {above:.3f}; test min {bte.imbalance.min():.3f}; paper: "
                + ("QP tree spans 0-0.7" if proxy == "qp_dt" else "never below 0.7 (train)"),
            }
        )
        if proxy != "qp_dt":  # the full interpolation curve (App. A.1.1), train and test
            for split, part in (("train", btr), ("test", bte)):
                part = part.sort_values("eta")
                rows.append(
                    {
                        "what": f"{proxy}: eta curve, {split} (eta: imbalance / disclosivity)",
                        "value": float(part.imbalance.iloc[0]),
                        "unit": "beta",
                        "note": ", ".join(
                            f"{e:.1f}: {b:.3f}/{d:.3f}"
                            for e, b, d in zip(
                                part.eta, part.imbalance, part.disclosivity, strict=True
                            )
                        )
                        + f"; {int(part.n_leaves.iloc[0])} predicted groups; see "
                        "proxies.py: standardised features, LR predicts 3 races",
                    }
                )
    return rows


def bank_alphas(quick: bool) -> list[dict]:
    """Bank Marketing (job, K=12), relaxed (alpha, beta) proxy at alpha in {0, 0.1, 0.2}."""
    from fairengine.methods import get_method

    train, test = _task(quick, "bank_marketing", "job")
    rows = []
    settings = [(alpha, 0.1) for alpha in (0.0, 0.1, 0.2)] + [(0.2, 0.05)]
    for alpha, gamma in settings:
        result = get_method("balanced_filtering").run(
            train, test, alpha=alpha, relaxed=True, gamma=gamma
        )
        art = result.artifacts
        before, after = art["proportions_before_test"], art["proportions_after_test"]
        least = int(np.argmin(before))
        rows.append(
            {
                "what": f"Bank alpha={alpha}, gamma={gamma}: train imbalance (relaxed)",
                "value": result.metrics["train"]["imbalance"],
                "unit": "beta",
                "note": f"test {result.metrics['test']['imbalance']:.3f}; "
                f"{int(result.metrics['train']['n_leaves'])} leaves; fit {result.elapsed:.1f} s; "
                f"least group ({art['group_names'][least]}) x{after[least] / before[least]:.1f} "
                "on test; paper: 0 = base rates (0.2518), 0.2 = almost balanced in-sample, "
                "least group ~x4.5",
            }
        )
    return rows


def register(registry) -> None:
    """Register this module's benchmarks with ``bench/run.py``."""
    registry.add(adult_alpha_sweep)
    registry.add(bank_alphas)
