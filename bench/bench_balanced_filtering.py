"""Balanced filtering (Deng et al. 2023): the alpha sweep on Adult (race) and Bank Marketing (job).

Paper numbers: Adult pre-filter imbalance 0.7358; naive / QP regression never below
0.7 in training (0.65 test); QP tree and (alpha, beta) span beta 0-0.7; one alpha grid took
20 min - 2 h. Bank: "almost perfectly balanced" in-sample at alpha = 0.2; ~3 h per grid.
"""

from __future__ import annotations

import time

import numpy as np

from fairengine.data import load_dataset
from fairengine.frontier import sweep
from fairengine.methods.balanced_filtering import ALPHA_GRID, ETA_GRID, beta_min

#: The spec's target for the full alpha sweep on 2 cores.
SWEEP_TARGET_S = 60.0
#: Adult (race) train imbalance of version 1 (RESULTS.md, 2026-11-22 02:34), the "before"
V1_ADULT = {0.0: 0.74, 0.2: 0.53, 0.4: 0.40, 0.6: 0.35, 0.8: 0.27, 1.0: 0.27}
#: Bank (job) relaxed, gamma = 0.1, version 1 (same run): (train, test, least group x on test)
V1_BANK = {0.0: (0.2518, 0.252, 1.0), 0.1: (0.0979, 0.131, 8.3), 0.2: (0.0825, 0.148, 8.3)}


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
    rates = np.bincount(np.asarray(train.groups)) / len(train.groups)
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
            "note": f"test {te.imbalance.min():.3f}; paper: curve spans 0-0.7; v1 (before): 0.242 "
            "train / 0.324 test",
        },
        {
            "what": "(alpha,beta) proxy: train imbalance rises with alpha (count of steps)",
            "value": float((np.diff(tr.sort_values("alpha").imbalance.to_numpy()) > 1e-9).sum()),
            "unit": "steps",
            "note": "out of 20 grid steps; v1 (before): 0.5 -> 0.6 and others rose",
        },
    ]
    for alpha in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        a_tr, a_te = (
            tr[np.isclose(tr.alpha, alpha)].iloc[0],
            te[np.isclose(te.alpha, alpha)].iloc[0],
        )
        rows.append(
            {
                "what": f"alpha={alpha:.1f}: paper / reference / ours (train imbalance)",
                "value": float(a_tr.imbalance),
                "unit": "beta",
                "note": f"paper: Fig. 2 curve from 0.74 toward 0 (growth stops below 0.1), "
                f"oracle floor beta_min = {beta_min(alpha, rates):.3f}; reference: no code "
                f"released; ours {a_tr.imbalance:.3f} train / {a_te.imbalance:.3f} test, "
                f"{int(a_tr.n_leaves)} leaves, disclosivity {a_tr.disclosivity:.3f}; v1 (before): "
                f"{V1_ADULT[alpha]:.2f}",
            }
        )
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
    """Bank Marketing (job, K=12), relaxed (alpha, beta) proxy at alpha in {0, 0.1, 0.2} (Fig. 3),
    with the paper's beta_stop = 0.1, and alpha = 0.2 grown until no split passes (beta_stop 0)."""
    from fairengine.methods import get_method

    train, test = _task(quick, "bank_marketing", "job")
    rows = []
    for alpha, beta_stop in ((0.0, 0.1), (0.1, 0.1), (0.2, 0.1), (0.2, 0.0)):
        result = get_method("balanced_filtering").run(
            train, test, alpha=alpha, relaxed=True, beta_stop=beta_stop
        )
        art = result.artifacts
        before, after = art["proportions_before_test"], art["proportions_after_test"]
        least = int(np.argmin(before))
        tr_b, te_b = result.metrics["train"]["imbalance"], result.metrics["test"]["imbalance"]
        v1 = V1_BANK.get(alpha) if beta_stop == 0.1 else None
        rows.append(
            {
                "what": f"Bank alpha={alpha}, beta_stop={beta_stop}: paper / reference / ours "
                "(train imbalance, relaxed)",
                "value": tr_b,
                "unit": "beta",
                "note": "paper: "
                + (
                    "base rates (0.2518)"
                    if alpha == 0
                    else "slightly more balanced"
                    if alpha == 0.1
                    else "almost perfectly balanced in-sample, least group ~x4.5 on test"
                )
                + f"; reference: no code released; ours {tr_b:.3f} train / {te_b:.3f} test, "
                f"{int(result.metrics['train']['n_leaves'])} leaves, least group "
                f"({art['group_names'][least]}) x{after[least] / before[least]:.1f} on test, "
                f"stop: {art['status']['code']}, fit {result.elapsed:.1f} s"
                + (f"; v1 (before): {v1[0]:.3f} / {v1[1]:.3f}, x{v1[2]:.1f}" if v1 else ""),
            }
        )
    return rows


def adult_leaf_floor(quick: bool) -> list[dict]:
    """What stops the Adult (race) tree: the leaf-mass floor against the rare groups.

    Amer-Indian-Eskimo (0.96%) and Other (0.83%) must reach 20% of the filtered sample, so some
    leaf must be rich in each. The richest set of >= 0.5% of the rows that one halfspace can cut
    out (top scores of a one-vs-rest logistic regression, in-sample) holds far less than that,
    and the hull of those five per-group sets is far from U: the (1 - gamma) rule then finds no
    split. Smaller leaves (the paper sets no floor) let the tree go further.
    """
    from sklearn.linear_model import LogisticRegression

    from fairengine.data.encoding import FeatureEncoder
    from fairengine.methods import get_method
    from fairengine.methods.balanced_filtering import hull_distance

    train, test = _task(quick, "adult", "race")
    X = FeatureEncoder().fit(train.X).transform(train.X)
    z = np.asarray(train.groups, dtype=np.int64)
    k, n = int(z.max()) + 1, len(z)
    rows = []
    for floor in (0.005, 0.001):
        m = max(int(floor * n), 30)
        sets = []
        for g in range(k):
            scores = LogisticRegression(max_iter=500).fit(X, z == g).decision_function(X)
            sets.append(np.bincount(z[np.argsort(-scores)[:m]], minlength=k) / m)
        A = np.array(sets)
        rows.append(
            {
                "what": f"floor {floor:.1%} ({m} rows): hull of the {k} best one-halfspace leaves",
                "value": hull_distance(A, np.full(k, 1 / k)),
                "unit": "dist",
                "note": "richest share of each group in its best leaf: "
                + ", ".join(f"{name} {A[g, g]:.2f}" for g, name in enumerate(train.group_names)),
            }
        )
        result = get_method("balanced_filtering").run(train, test, alpha=1.0, min_leaf_mass=floor)
        rows.append(
            {
                "what": f"floor {floor:.1%}: (alpha,beta) proxy at alpha = 1, train imbalance",
                "value": result.metrics["train"]["imbalance"],
                "unit": "beta",
                "note": f"test {result.metrics['test']['imbalance']:.3f}, "
                f"{int(result.metrics['train']['n_leaves'])} leaves, "
                f"stop: {result.artifacts['status']['code']}, fit {result.elapsed:.1f} s",
            }
        )
    return rows


#: round 2 "before" (version 2 defaults, RESULTS.md 2026-11-23 22:30): Adult (race) train / test
V2_ADULT = {
    0.2: (0.534, 0.540),
    0.4: (0.401, 0.411),
    0.6: (0.345, 0.359),
    0.8: (0.271, 0.355),
    1.0: (0.271, 0.355),
}
#: Bank (job) relaxed alpha = 0.2, version 2 defaults: train, test, least group x on test
V2_BANK = (0.082, 0.148, 8.3)


def paper_setting(quick: bool) -> list[dict]:
    """The paper's setting (``PAPER_SETTING``: gamma 0.1, height 20, beta_stop 0.1, no leaf floor
    (5 rows), no budget ladder): Adult (race) per alpha and the Bank (job) Fig. 3 panels, train
    and test, paper / reference / ours, with the version-2 defaults as "before"."""
    from fairengine.methods import get_method
    from fairengine.methods.balanced_filtering import PAPER_SETTING

    method = get_method("balanced_filtering")
    rows = []
    train, test = _task(quick, "adult", "race")
    rates = np.bincount(np.asarray(train.groups)) / len(train.groups)
    for alpha in (0.2, 0.4, 0.6, 0.8, 1.0):
        res = method.run(train, test, alpha=alpha, **PAPER_SETTING)
        tr_b, te_b = res.metrics["train"]["imbalance"], res.metrics["test"]["imbalance"]
        before = V2_ADULT[alpha]
        rows.append(
            {
                "what": f"Adult alpha={alpha:.1f}, paper setting: paper / reference / ours "
                "(train imbalance)",
                "value": tr_b,
                "unit": "beta",
                "note": f"paper: Fig. 2 in-sample curve toward 0 (stop below 0.1), beta_min "
                f"{beta_min(alpha, rates):.3f}; reference: no code released; ours {tr_b:.3f} "
                f"train / {te_b:.3f} test, {int(res.metrics['train']['n_leaves'])} leaves, "
                f"disclosivity {res.metrics['train']['disclosivity']:.3f}, stop "
                f"{res.artifacts['status']['code']}, fit {res.elapsed:.0f} s; defaults v2 "
                f"(before): {before[0]:.3f} / {before[1]:.3f}",
            }
        )
    train, test = _task(quick, "bank_marketing", "job")
    for alpha, beta_stop in ((0.0, 0.1), (0.1, 0.1), (0.2, 0.1), (0.2, 0.0)):
        knobs = {**PAPER_SETTING, "beta_stop": beta_stop}
        res = method.run(train, test, alpha=alpha, relaxed=True, **knobs)
        art = res.artifacts
        before, after = art["proportions_before_test"], art["proportions_after_test"]
        least = int(np.argmin(before))
        tr_b, te_b = res.metrics["train"]["imbalance"], res.metrics["test"]["imbalance"]
        paper = (
            "base rates (0.2518)"
            if alpha == 0
            else "slightly more balanced"
            if alpha == 0.1
            else "almost perfectly balanced in-sample, least group ~x4.5 on test"
        )
        rows.append(
            {
                "what": f"Bank alpha={alpha}, paper setting, beta_stop={beta_stop}: paper / "
                "reference / ours (train imbalance, relaxed)",
                "value": tr_b,
                "unit": "beta",
                "note": f"paper: {paper}; reference: no code released; ours {tr_b:.3f} train / "
                f"{te_b:.3f} test, {int(res.metrics['train']['n_leaves'])} leaves, least group "
                f"({art['group_names'][least]}) x{after[least] / before[least]:.1f} on test, stop "
                f"{art['status']['code']}, fit {res.elapsed:.0f} s"
                + (
                    f"; defaults v2 (before): {V2_BANK[0]:.3f} / {V2_BANK[1]:.3f}, x{V2_BANK[2]}"
                    if alpha == 0.2
                    else ""
                ),
            }
        )
    return rows


def default_curves(quick: bool) -> list[dict]:
    """The page's default curves: the (alpha, beta) and relaxed proxies at the
    defaults (= the paper setting) on Adult (race) over the demo splits, read from the shipped
    demo frontiers (nothing is computed when they are present), mean and 95% t-interval of the
    train and test imbalance per alpha, paper / reference / ours; then the version-3 defaults
    (leaf floor) on the same splits as "before" (``FLOOR_SETTING``, computed, not stored), and
    Bank (job) at alpha = 0.2 in-sample at the defaults."""
    from fairengine.frontier import FrontierStore
    from fairengine.frontier.demo import demo_root
    from fairengine.methods import get_method
    from fairengine.methods.balanced_filtering import FLOOR_SETTING, tradeoff_curves
    from fairengine.methods.balanced_filtering.method import DEMO_ALPHAS, DEMO_SEEDS
    from fairengine.sweeps.balanced_filtering import missing_points, tradeoff_points

    if quick:
        task, seeds, alphas = load_dataset("german_credit", sensitive=["sex"]), (0, 1), (0.0, 1.0)
    else:
        task, seeds, alphas = load_dataset("adult", sensitive=["race"]), DEMO_SEEDS, DEMO_ALPHAS
    names = ("(α, β) proxy", "Relaxed (α, β) proxy")
    args = {"curves": names, "alphas": alphas, "seeds": seeds, "test_size": 0.3}
    store = FrontierStore(demo_root())
    missing = missing_points(task, store, **args)
    start = time.perf_counter()
    points = tradeoff_points(task, store=None if quick else store, **args)
    read = time.perf_counter() - start
    curves = tradeoff_curves(points)
    before_alphas = alphas if quick else (0.2, 0.6, 1.0)  # the floor's ladder is slow: 3 alphas
    before = tradeoff_curves(
        tradeoff_points(
            task, **{**args, "curves": names[:1], "alphas": before_alphas}, **FLOOR_SETTING
        )
    )
    rows = [
        {
            "what": f"default curves: {len(points) // 2} fits ({len(seeds)} splits), "
            f"{missing} missing from the shipped store",
            "value": read,
            "unit": "s",
            "note": "read from assets/frontiers when nothing is missing",
        }
    ]

    def cell(frame, name: str, alpha: float, split: str) -> str:
        row = frame[
            (frame.curve == name) & np.isclose(frame.level, alpha) & (frame.split == split)
        ].iloc[0]
        return f"{row.imbalance:.3f} ± {(row.imbalance_high - row.imbalance_low) / 2:.3f}"

    for alpha in alphas:
        for name in names:
            row = curves[
                (curves.curve == name) & np.isclose(curves.level, alpha) & (curves.split == "train")
            ].iloc[0]
            floor = (
                f"; v3 defaults (before, leaf floor): {cell(before, name, alpha, 'train')} train / "
                f"{cell(before, name, alpha, 'test')} test"
                if name == names[0] and alpha in before_alphas
                else ""
            )
            rows.append(
                {
                    "what": f"{name}, alpha={alpha:.1f}: paper / reference / ours (train "
                    "imbalance, mean ± 95% CI)",
                    "value": float(row.imbalance),
                    "unit": "beta",
                    "note": "paper: Fig. 2 in-sample curve from 0.7358 toward 0 (growth stops "
                    "below beta = 0.1); reference: no code released; ours "
                    f"{cell(curves, name, alpha, 'train')} train / "
                    f"{cell(curves, name, alpha, 'test')} test, {row.n_leaves:.1f} leaves" + floor,
                }
            )
    train, test = _task(quick, "bank_marketing", "job")
    res = get_method("balanced_filtering").run(train, test, alpha=0.2, relaxed=True)
    art = res.artifacts
    before_p, after_p = art["proportions_before_test"], art["proportions_after_test"]
    least = int(np.argmin(before_p))
    rows.append(
        {
            "what": "Bank (job) alpha=0.2, defaults, relaxed: paper / reference / ours (train "
            "imbalance)",
            "value": res.metrics["train"]["imbalance"],
            "unit": "beta",
            "note": "paper: almost perfectly balanced in-sample, least group ~x4.5 on test; "
            f"reference: no code released; ours {res.metrics['train']['imbalance']:.3f} train / "
            f"{res.metrics['test']['imbalance']:.3f} test, least group "
            f"x{after_p[least] / before_p[least]:.1f} on test, stop {art['status']['code']}; v2-3 "
            f"defaults (before): {V2_BANK[0]:.3f} / {V2_BANK[1]:.3f}, x{V2_BANK[2]}",
        }
    )
    return rows


#: Split seeds of the paper-vs-fairengine table: none of them is used to choose anything (the
#: generalising protocol's floor grid and tolerance were fixed before; the tests use seed 7).
REPORT_SEEDS = (501, 502, 503, 504, 505)
#: Paper claims per task, quoted next to our numbers.
PAPER_CLAIMS = {
    ("adult", "race"): "Fig. 2: tree proxies span beta 0-0.7 in-sample; QP / naive regression "
    "never below 0.7 (train) / 0.65 (test); relaxed Pareto-dominates in-sample",
    ("adult", "sex"): "not in the paper (sex is not a sensitive attribute of its experiments)",
    ("bank_marketing", "job"): "Fig. 1: tree proxies and QP tree just above 0 in-sample at high "
    "disclosivity, a more modest improvement on test; Fig. 3: almost perfectly balanced "
    "in-sample at alpha = 0.2",
}
#: The earlier defaults (paper setting = defaults), as measured then
BEFORE_NOTE = "v4 (before): in-sample balance from 5-row leaves, test 0.35-0.39"


def _paper_table(
    quick: bool, name: str, sensitive: str, alphas, etas, baselines: tuple[str, ...] = ()
) -> list[dict]:
    from fairengine.methods.balanced_filtering import PAPER_SETTING, tradeoff_curves
    from fairengine.metrics import max_imbalance
    from fairengine.sweeps.balanced_filtering import tradeoff_points

    if quick:
        task, seeds, alphas, etas = (
            load_dataset("german_credit", sensitive=["sex"]),
            (501, 502),
            (0.0, 1.0),
            (0.0, 1.0),
        )
    else:
        task, seeds = load_dataset(name, sensitive=[sensitive]), REPORT_SEEDS
    trees = ("(α, β) proxy", "Relaxed (α, β) proxy")
    args = {"seeds": seeds, "test_size": 1 / 3, "n_jobs": 2}
    start = time.perf_counter()
    ours = tradeoff_points(task, curves=trees + baselines, alphas=alphas, etas=etas, **args)
    paper = tradeoff_points(
        task, curves=trees, alphas=alphas, **args, **{k: v for k, v in PAPER_SETTING.items()}
    )
    took = time.perf_counter() - start
    k = len(task.group_names)
    vanished = max_imbalance(np.full(k, 1.0 / k))
    mine, theirs = tradeoff_curves(ours), tradeoff_curves(paper)

    def cell(frame, curve: str, level: float, split: str) -> tuple[float, str]:
        row = frame[
            (frame.curve == curve) & np.isclose(frame.level, level) & (frame.split == split)
        ].iloc[0]
        return float(
            row.imbalance
        ), f"{row.imbalance:.3f}±{(row.imbalance_high - row.imbalance_low) / 2:.3f}"

    label = f"{task.name if quick else name} ({sensitive})"
    rows = [
        {
            "what": f"{label}: {(len(ours) + len(paper)) // 2} fits, seeds {seeds[0]}-{seeds[-1]}",
            "value": took,
            "unit": "s",
            "note": f"paper: {PAPER_CLAIMS.get((name, sensitive), '')}",
        }
    ]
    for alpha in alphas:
        for curve in trees:
            tr, tr_s = cell(mine, curve, alpha, "train")
            te, te_s = cell(mine, curve, alpha, "test")
            _, ptr_s = cell(theirs, curve, alpha, "train")
            _, pte_s = cell(theirs, curve, alpha, "test")
            n_van = int((ours[(ours.curve == curve) & np.isclose(ours.level, alpha)].imbalance
                         >= vanished - 1e-9).sum())  # fmt: skip
            rows.append(
                {
                    "what": f"{label} {curve} alpha={alpha:.1f}: test - train imbalance (ours)",
                    "value": te - tr,
                    "unit": "beta",
                    "note": f"ours (generalising) {tr_s} train / {te_s} test; paper protocol "
                    f"(before) {ptr_s} train / {pte_s} test; {n_van} split×side with a "
                    f"vanished group (imbalance {vanished:.3f})",
                }
            )
    for curve in baselines:
        part = mine[mine.curve == curve]
        for split in ("train", "test"):
            rows_split = part[part.split == split].sort_values("level")
            rows.append(
                {
                    "what": f"{label} {curve}: lowest mean {split} imbalance over eta",
                    "value": float(rows_split.imbalance.min()),
                    "unit": "beta",
                    "note": "eta: "
                    + ", ".join(
                        f"{e:g}: {b:.3f}"
                        for e, b in zip(rows_split.level, rows_split.imbalance, strict=True)
                    )
                    + (
                        "; paper: never below 0.7 train / 0.65 test"
                        if "regression" in curve and name == "adult" and sensitive == "race"
                        else ""
                    ),
                }
            )
    exact = mine[(mine.curve == trees[0]) & (mine.split == "train")].set_index("level")
    relaxed = mine[(mine.curve == trees[1]) & (mine.split == "train")].set_index("level")
    wins = int((relaxed.imbalance <= exact.imbalance + 1e-9).sum())
    rows.append(
        {
            "what": f"{label}: relaxed <= exact in-sample imbalance (alphas, ours)",
            "value": float(wins),
            "unit": f"of {len(exact)}",
            "note": "paper: relaxed Pareto-dominates in-sample; "
            + ", ".join(
                f"{a:g}: {relaxed.imbalance[a]:.3f}/{exact.imbalance[a]:.3f}" for a in exact.index
            ),
        }
    )
    return rows


def bf_paper_adult_race(quick: bool) -> list[dict]:
    """Paper vs fairengine, Adult (race), 5 splits (seeds 501-505), alpha 0.2 / 0.6 / 1 (2
    shared cores), the four baselines at eta 0 and 0.5."""
    every = ("QP regression", "QP decision tree", "Naive regression", "Naive decision tree")
    return _paper_table(quick, "adult", "race", (0.2, 0.6, 1.0), (0.0, 0.5), every)


def bf_paper_adult_sex(quick: bool) -> list[dict]:
    """Paper vs fairengine, Adult (sex), 5 splits (seeds 501-505), alpha 0.2 / 1."""
    return _paper_table(quick, "adult", "sex", (0.2, 1.0), (0.0,), ("QP regression",))


def bf_paper_bank_job(quick: bool) -> list[dict]:
    """Paper vs fairengine, Bank (job), 5 splits (seeds 501-505), alpha 0.2 / 1 (the 45k-row,
    12-group fits are the slowest; 2 shared cores)."""
    baselines = ("QP regression", "QP decision tree")
    return _paper_table(quick, "bank_marketing", "job", (0.2, 1.0), (0.0,), baselines)


def register(registry) -> None:
    """Register this module's benchmarks with ``bench/run.py``."""
    registry.add(adult_alpha_sweep)
    registry.add(bank_alphas)
    registry.add(adult_leaf_floor)
    registry.add(paper_setting)
    registry.add(default_curves)
    registry.add(bf_paper_adult_race)
    registry.add(bf_paper_adult_sex)
    registry.add(bf_paper_bank_job)
