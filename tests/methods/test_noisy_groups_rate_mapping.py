"""noisy_groups' rate tables go through the engine's one rate mapping (
``fairengine.metrics.rate_base`` / ``RATE_SIGN``) and give, bit for bit, what the earlier
per-kind copies gave. The "before" formulas below are those copies, kept here as the reference."""

from __future__ import annotations

import numpy as np
import pytest

from fairengine.data import load_dataset
from fairengine.methods.noisy_groups import add_group_noise
from fairengine.methods.noisy_groups.adversaries import BASE_CELLS, POS_CELLS
from fairengine.methods.noisy_groups.method import group_rates, theorem1_table
from fairengine.methods.noisy_groups.rates import dro_sampled_violations
from fairengine.metrics.noisy_groups import FN, FP, TN, TP, overall_rates, rate_gap


@pytest.fixture(scope="module")
def adult():
    """3,000 Adult rows, race in three groups, a real (rule) classifier and a randomized one."""
    task = load_dataset("adult", sensitive=["race"])
    idx = np.sort(np.random.default_rng(3).choice(len(task.y), 3000, replace=False))
    frame, y = task.X.iloc[idx], task.y[idx]
    names = list(task.group_names)
    codes = task.groups[idx]
    groups = np.select([codes == names.index("White"), codes == names.index("Black")], [0, 1], 2)
    hard = ((frame["age"] > 35) & (frame["hours_per_week"] >= 45)).to_numpy().astype(float)
    soft = np.random.default_rng(0).uniform(size=len(y)) * 0.5 + 0.25 * hard
    return y, groups, add_group_noise(groups, 0.3, 0), hard, soft


def test_cells_are_the_paper_tables() -> None:
    """Spec §3.4 step 4: TPR = TP / (FN + TP), FPR = FP / (TN + FP), PPR = (FP + TP) / all."""
    assert BASE_CELLS == {"tpr": (FN, TP), "fpr": (TN, FP), "ppr": (TN, FN, FP, TP)}
    assert POS_CELLS == {"tpr": (TP,), "fpr": (FP,), "ppr": (FP, TP)}


def _rates_before(y, pred, mask) -> dict[str, float]:
    pos, neg = mask & (y == 1), mask & (y == 0)
    return {
        "tpr": float(pred[pos].mean()) if pos.any() else float("nan"),
        "fpr": float(pred[neg].mean()) if neg.any() else float("nan"),
        "ppr": float(pred[mask].mean()) if mask.any() else float("nan"),
    }


def test_group_rate_table_bit_identical(adult) -> None:
    y, groups, noisy, hard, soft = adult
    masks = [groups == j for j in range(3)] + [noisy == j for j in range(3)]
    masks += [(groups == 1) & (y == 0), np.zeros(len(y), bool)]  # no positives; empty group
    for pred in (hard, soft):
        for mask in masks:
            now, before = group_rates(y, pred, mask), _rates_before(y, pred, mask)
            np.testing.assert_array_equal(list(now.values()), list(before.values()))
    assert np.isnan(group_rates(y, hard, masks[-2])["tpr"])
    assert not np.isnan(group_rates(y, hard, masks[-2])["fpr"])
    # the rates are real ones: the rule selects more of the positives than of the negatives
    assert group_rates(y, hard, groups == 0)["tpr"] > 2 * group_rates(y, hard, groups == 0)["fpr"]


def _gap_before(kind, overall, rate, slack) -> float:
    if kind == "fpr":
        return rate - overall["fpr"] - slack
    return overall[kind] - rate - slack


def test_one_sided_gap_bit_identical(adult) -> None:
    y, groups, _, hard, soft = adult
    rng = np.random.default_rng(1)
    for pred in (hard, soft):
        overall = overall_rates(y, pred)
        for kind in ("tpr", "fpr", "ppr"):
            for rate, slack in zip(rng.uniform(size=200), rng.uniform(0, 0.1, 200), strict=True):
                assert rate_gap(kind, overall, rate, slack) == _gap_before(
                    kind, overall, rate, slack
                )


def test_sampled_dro_violations_bit_identical(adult) -> None:
    y, _, noisy, hard, _ = adult
    rng = np.random.default_rng(2)
    samples = [rng.dirichlet(np.ones(len(y)) * 0.5, size=6) * (noisy == j) for j in range(3)]
    overall = overall_rates(y, hard)
    for constraint in ("tpr", "eo", "dp"):
        kinds = {"tpr": ["tpr"], "eo": ["tpr", "fpr"], "dp": ["ppr"]}[constraint]
        before = []
        for kind in kinds:
            for j in range(3):
                base = {"tpr": y, "fpr": 1.0 - y, "ppr": np.ones_like(y, dtype=float)}[kind]
                num, den = samples[j] @ (base * hard), samples[j] @ base
                rates = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
                worst = float(rates.max() if kind == "fpr" else rates.min())
                before.append(_gap_before(kind, overall, worst, 0.02))
        now = dro_sampled_violations(y, hard, constraint, 0.02, samples)
        np.testing.assert_array_equal(now, before)


def test_theorem1_bases_bit_identical(adult) -> None:
    """Theorem 1's b_j = P(Y=1 | G=j) (TPR) / P(Y=0 | G=j) (FPR) through the one mapping: the
    bound column equals the earlier per-label formula, and it holds on real rows."""
    y, groups, noisy, hard, _ = adult
    table = theorem1_table(y, hard, groups, noisy, "eo", 0.02, ["White", "Black", "Other"])
    for row in table.itertuples():
        if row.rate == "ppr":
            continue
        j = ["White", "Black", "Other"].index(row.group)
        label = 1 if row.rate == "tpr" else 0
        b_true = float(np.mean(y[groups == j] == label))
        b_noisy = float(np.mean(y[noisy == j] == label))
        assert row.bound == (b_noisy * row.noisy_violation + 2.0 * row.tv) / b_true
        assert row.true_violation <= row.bound + 1e-12
