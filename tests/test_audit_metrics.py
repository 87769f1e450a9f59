"""The audit rates by group, their differences and ratios to a reference group, and the
four-fifths verdict: known answers by hand, fairlearn's MetricFrame and Aequitas' definitions."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairengine import metrics
from fairengine.metrics import GROUP_RATES, REGISTRY, group_table

# three groups counted by hand: a (TP 2, FN 1, FP 1, TN 2), b (TP 1, FN 1, FP 0, TN 2),
# c (TP 1, FP 1: no predicted negative, so NPV and FOR are undefined)
Y = [1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 1, 0]
P = [1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 1]
G = ["a"] * 6 + ["b"] * 4 + ["c"] * 2
HAND = {
    "a": {"selection_rate": 3 / 6, "tpr": 2 / 3, "fpr": 1 / 3, "fnr": 1 / 3, "tnr": 2 / 3,
          "ppv": 2 / 3, "fdr": 1 / 3, "npv": 2 / 3, "for": 1 / 3},
    "b": {"selection_rate": 1 / 4, "tpr": 1 / 2, "fpr": 0.0, "fnr": 1 / 2, "tnr": 1.0,
          "ppv": 1.0, "fdr": 0.0, "npv": 2 / 3, "for": 1 / 3},
    "c": {"selection_rate": 1.0, "tpr": 1.0, "fpr": 1.0, "fnr": 0.0, "tnr": 0.0,
          "ppv": 1 / 2, "fdr": 1 / 2, "npv": np.nan, "for": np.nan},
}  # fmt: skip


def test_every_audit_rate_is_declared_once_with_its_disparity_metrics():
    assert set(GROUP_RATES) == set(metrics.RATE_TERMS)
    for rate, info in GROUP_RATES.items():
        assert info.label and info.definition and info.kinds == ("classification",)
        ratio = REGISTRY[f"{rate}_ratio"]
        assert not ratio.lower_is_better and ratio.standard
        diff = {"tpr": "tpr_diff", "selection_rate": "dp_diff"}.get(rate, f"{rate}_diff")
        assert REGISTRY[diff].lower_is_better and REGISTRY[diff].standard
    # the error-type rates are lower-is-better, the others higher
    assert {r for r, i in GROUP_RATES.items() if i.lower_is_better} == {"fpr", "fnr", "fdr", "for"}


def test_group_table_rates_match_the_hand_counts():
    table = group_table(Y, P, G)
    for group, rates in HAND.items():
        for rate, value in rates.items():
            np.testing.assert_allclose(table.loc[group, rate], value, err_msg=f"{group} {rate}")
    pd.testing.assert_frame_equal(
        metrics.audit_rates(Y, P, G),
        table.drop(index="overall")[list(metrics.RATE_TERMS)],
        check_names=False,
    )


def test_disparities_to_the_largest_group_and_the_four_fifths_verdict():
    table = group_table(Y, P, G, reference="largest")  # a: 6 rows
    # Aequitas: disparity = group rate / reference rate; pass iff 0.8 <= disparity <= 1.25
    assert table.loc["b", "selection_rate_ratio"] == pytest.approx(0.5)
    assert table.loc["c", "selection_rate_ratio"] == pytest.approx(2.0)
    assert table.loc["b", "fpr_ratio"] == 0.0 and table.loc["c", "fpr_ratio"] == pytest.approx(3)
    assert table.loc["b", "npv_ratio"] == pytest.approx(1.0) and bool(table.loc["b", "npv_pass"])
    assert table.loc["b", "fpr_diff"] == pytest.approx(-1 / 3)
    assert list(table.loc[["a", "b", "c"], "selection_rate_pass"]) == [True, False, False]
    assert pd.isna(table.loc["c", "npv_pass"]), "an undefined ratio has no verdict"
    # a user-set tau: 0.5 <= ratio <= 2 passes both
    loose = group_table(Y, P, G, reference="largest", tau=0.5)
    assert list(loose.loc[["a", "b", "c"], "selection_rate_pass"]) == [True, True, True]
    # another reference group
    to_b = group_table(Y, P, G, reference="b")
    assert to_b.loc["a", "tnr_ratio"] == pytest.approx(2 / 3)
    assert not bool(to_b.loc["a", "tnr_pass"]) and not bool(to_b.loc["c", "tnr_pass"])
    with pytest.raises(ValueError, match="reference group"):
        group_table(Y, P, G, reference="nobody")


def test_a_table_rereferenced_gives_the_ratio_metrics_of_that_reference():
    """``disparities`` re-takes a table's ratios against another group (what a user picks on
    the Compare page): the same columns as ``group_table(reference=)``; ``table_ratios`` of it
    are the ``<rate>_ratio`` metrics with that reference (by hand on the three groups, and on
    random tables)."""
    to_b = metrics.disparities(group_table(Y, P, G, reference="largest"), "b", 0.9)
    pd.testing.assert_frame_equal(to_b, group_table(Y, P, G, reference="b", tau=0.9))
    ratios = metrics.table_ratios(to_b)
    # to b: selection rates a 1/2, b 1/4, c 1 -> ratios 2, 1, 4 -> worst folded 1/4
    assert ratios["selection_rate_ratio"] == pytest.approx(1 / 4)
    assert ratios["tnr_ratio"] == 0.0 and ratios["tpr_ratio"] == pytest.approx(1 / 2)
    for seed in range(4):
        rng = np.random.default_rng(seed)
        y, p, g = rng.integers(0, 2, 400), rng.random(400), rng.integers(0, 4, 400)
        names = ["w", "x", "y", "z"]
        for code, name in enumerate(names):
            table = group_table(y, p, g, group_names=names, reference=name)
            for metric, value in metrics.table_ratios(table).items():
                want = metrics.METRICS[metric](y, p, g, reference=code)
                assert value == pytest.approx(want, abs=1e-12), (seed, name, metric)
    with pytest.raises(ValueError, match="reference group"):
        metrics.disparities(to_b, "nobody")


def test_scalar_disparity_metrics_by_hand():
    # differences: max − min over groups with a defined rate
    assert metrics.fpr_diff(Y, P, G) == pytest.approx(1.0)
    assert metrics.ppv_diff(Y, P, G) == pytest.approx(1 / 2)
    assert metrics.for_diff(Y, P, G) == pytest.approx(0.0)  # c has none
    # ratios: worst min(r, 1/r) to the reference (largest group a unless named)
    assert metrics.selection_rate_ratio(Y, P, G) == pytest.approx(0.5)
    assert metrics.fpr_ratio(Y, P, G) == 0.0
    assert metrics.npv_ratio(Y, P, G) == pytest.approx(1.0)
    assert metrics.tnr_ratio(Y, P, G, reference="b") == 0.0
    assert metrics.tpr_ratio(Y, P, G, reference="b") == pytest.approx(1 / 2)
    # the fold is symmetric: the verdict on the scalar is value >= tau
    assert metrics.folded_ratio(np.array([2.0, 0.5, 1.0])).tolist() == [0.5, 0.5, 1.0]


def test_randomized_predictions_give_expected_rates():
    rng = np.random.default_rng(3)
    y, g = rng.integers(0, 2, 400), rng.integers(0, 3, 400)
    prob = rng.random(400)
    draws = (rng.random((4000, 400)) < prob).astype(float)
    expected = metrics.audit_rates(y, prob, g)
    tp, pp = (draws * y).sum(axis=0), draws.sum(axis=0)  # PPV's expectation is a ratio of sums
    for z in range(3):
        m = g == z
        assert expected.loc[z, "ppv"] == pytest.approx(tp[m].sum() / pp[m].sum(), abs=0.01)


def test_scores_give_auc_and_brier_by_group():
    from sklearn.metrics import brier_score_loss, roc_auc_score

    rng = np.random.default_rng(0)
    y, g = rng.integers(0, 2, 300), rng.integers(0, 2, 300)
    s = np.clip(0.3 * y + 0.7 * rng.random(300), 0, 1)
    table = group_table(y, (s > 0.5).astype(float), g, scores=s, ci=0.9, n_boot=50)
    for z in (0, 1):
        m = g == z
        assert table.loc[z, "auc"] == pytest.approx(roc_auc_score(y[m], s[m]), abs=1e-12)
        assert table.loc[z, "brier"] == pytest.approx(brier_score_loss(y[m], s[m]), abs=1e-12)
        assert table.loc[z, "brier_low"] <= table.loc[z, "brier"] <= table.loc[z, "brier_high"]
    assert {"auc", "brier"} <= set(metrics.GROUP_SCORE_MEASURES)


def test_bootstrap_intervals_cover_every_audit_rate():
    table = group_table(Y * 5, P * 5, G * 5, ci=0.9, n_boot=100)
    for rate in metrics.RATE_TERMS:
        defined = table[rate].notna()
        low, high = table[f"{rate}_low"][defined], table[f"{rate}_high"][defined]
        assert (low <= table[rate][defined] + 1e-12).all() and (
            table[rate][defined] <= high + 1e-12
        ).all()


def test_the_new_metrics_are_axes_of_the_shared_plane():
    standard = metrics.standard_metrics("classification")
    for name in ("fpr_diff", "fpr_ratio", "ppv_ratio", "selection_rate_ratio", "for_diff"):
        assert name in standard and metrics.METRICS[name] is getattr(metrics, name)


def _agreement():
    path = Path(__file__).resolve().parents[1] / "tools" / "audit_agreement.py"
    spec = importlib.util.spec_from_file_location("audit_agreement", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("dataset", ["adult", "compas"])
def test_agrees_with_fairlearn_metricframe_and_aequitas_by_hand(dataset):
    gaps = _agreement().audit(dataset, quiet=True)
    assert len(gaps) == 6
    for what, value in gaps.items():
        assert value <= 1e-9, f"{dataset}: {what} differs by {value}"


def test_an_audited_score_gets_auc_and_brier_by_group():
    from sklearn.metrics import roc_auc_score

    from fairengine.audit import audit
    from fairengine.data import load_dataset

    task = load_dataset("german_credit")
    rng = np.random.default_rng(1)
    scores = np.clip(0.5 * task.y + 0.5 * rng.random(len(task.y)), 0, 1)
    result = audit(task, scores=scores, threshold=0.5)
    _, test = task.split(random_state=0)
    s, y, g = scores[test.frame.index], test.y, np.asarray(test.groups)
    for code, name in enumerate(test.group_names):
        m = g == code
        assert result.groups.loc[name, "auc"] == pytest.approx(roc_auc_score(y[m], s[m]))
        assert result.groups.loc[name, "brier"] == pytest.approx(np.mean((s[m] - y[m]) ** 2))
    hard = audit(task, predictions=(scores >= 0.5).astype(int))
    assert "auc" not in hard.groups
