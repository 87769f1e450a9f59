"""Tests for fairengine.metrics: hand-computed values, fairlearn/scipy cross-checks, bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import demographic_parity_difference, equalized_odds_difference
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ks_2samp

from fairengine.metrics import (
    GROUP_RATES,
    HIGHER_IS_BETTER,
    METRICS,
    REGISTRY,
    accuracy,
    bootstrap_ci,
    dp_diff,
    eo_diff,
    error,
    group_table,
    is_lower_better,
    ks_distance_from_cdfs,
    loss,
    max_group_loss,
    metric_label,
    prediction_cdfs,
    representation_rate,
    sp_ks,
    standard_metrics,
    statistical_rate,
    tpr_diff,
    undeclared,
)

# Small classification example used by several hand checks.
#   group a: y = 1 0 1 1, p = 1 0 0 1 -> correct 1 1 0 1, selection 2/4, TPR 2/3, FPR 0/1
#   group b: y = 0 0 1 0, p = 1 0 1 1 -> correct 0 1 1 0, selection 3/4, TPR 1/1, FPR 2/3
Y = [1, 0, 1, 1, 0, 0, 1, 0]
P = [1, 0, 0, 1, 1, 0, 1, 1]
G = ["a", "a", "a", "a", "b", "b", "b", "b"]


# --------------------------------------------------------------------------- hand values


def test_accuracy_and_error_hand_values():
    # correct: 3 (group a) + 2 (group b) = 5 of 8
    assert accuracy(Y, P, G) == pytest.approx(5 / 8)
    assert error(Y, P, G) == pytest.approx(3 / 8)
    assert accuracy(Y, P) == pytest.approx(5 / 8)  # groups optional for overall metrics


def test_accuracy_of_probabilities_is_expected_accuracy():
    # y = 1, 0 with p = 0.8, 0.3: P(correct) = 0.8 and 0.7 -> 0.75
    assert accuracy([1, 0], [0.8, 0.3], [0, 0]) == pytest.approx(0.75)


def test_weighted_accuracy():
    # correct = 1, 0 with weights 3, 1 -> 3/4
    assert accuracy([1, 1], [1, 0], [0, 1], sample_weight=[3, 1]) == pytest.approx(0.75)


def test_classification_losses_hand_values():
    # y - p = 0 0 1 0 -1 0 0 -1: three unit errors of 8
    for kind in ("square", "absolute", "zero_one"):
        assert loss(Y, P, G, loss=kind) == pytest.approx(3 / 8)
    assert loss(Y, P, G, loss="zero_one") == pytest.approx(error(Y, P, G))
    # max_group_loss: group a 1/4, group b 2/4
    assert max_group_loss(Y, P, G) == pytest.approx(0.5)


def test_regression_losses_hand_values():
    y, p, g = [0.0, 1.0, 2.0], [0.5, 1.0, 1.0], [0, 0, 1]
    # square: 0.25, 0, 1 -> 1.25 / 3; absolute: 0.5, 0, 1 -> 1.5 / 3
    assert loss(y, p, g, loss="square") == pytest.approx(1.25 / 3)
    assert loss(y, p, g, loss="absolute") == pytest.approx(0.5)
    # group means: square 0.125 | 1.0, absolute 0.25 | 1.0
    assert max_group_loss(y, p, g, loss="square") == pytest.approx(1.0)
    assert max_group_loss([0.0, 1.0, 0.0], [0.5, 1.0, 0.1], g, loss="absolute") == pytest.approx(
        0.25
    )


def test_log_loss_hand_value_and_clipping():
    # -(log 0.8 + log 0.6) / 2
    assert loss([1, 0], [0.8, 0.4], [0, 0], loss="log") == pytest.approx(
        -(math.log(0.8) + math.log(0.6)) / 2
    )
    # a confident wrong prediction is clipped at 1e-15, not infinite
    assert loss([1], [0.0], [0], loss="log") == pytest.approx(-math.log(1e-15))


def test_dp_tpr_eo_hand_values():
    assert dp_diff(Y, P, G) == pytest.approx(0.75 - 0.5)
    assert tpr_diff(Y, P, G) == pytest.approx(1 - 2 / 3)
    # TPR gap 1/3, FPR gap 2/3 - 0
    assert eo_diff(Y, P, G) == pytest.approx(2 / 3)


def test_dp_diff_with_scores_and_weights():
    # mean scores: group 0 (0.2 + 0.4) / 2 = 0.3, group 1 0.9 -> 0.6
    assert dp_diff(None, [0.2, 0.4, 0.9], [0, 0, 1]) == pytest.approx(0.6)
    # weighted: group a (3*1 + 1*0) / 4 = 0.75, group b 0.5 -> 0.25
    assert dp_diff(None, [1, 0, 0, 1], ["a", "a", "b", "b"], sample_weight=[3, 1, 1, 1]) == (
        pytest.approx(0.25)
    )


def test_groups_without_eligible_rows_are_skipped():
    # group 2 has no positives: TPRs are 1 (group 0) and 0 (group 1) only
    y, p, g = [1, 0, 1, 0, 0], [1, 0, 0, 1, 1], [0, 0, 1, 1, 2]
    assert tpr_diff(y, p, g) == pytest.approx(1.0)
    # FPRs: group 0 0, group 1 1, group 2 1 -> gap 1
    assert eo_diff(y, p, g) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="y_true == 1"):
        tpr_diff([0, 0], [1, 0], [0, 1])


def test_zero_weight_rows_and_groups_are_absent():
    # group "c" has only zero-weight rows: it must not enter dp_diff or representation_rate
    p, g = [1, 0, 1, 1], ["a", "b", "c", "c"]
    assert dp_diff(None, p, g, sample_weight=[1, 1, 0, 0]) == pytest.approx(1.0)
    assert representation_rate(None, None, g, sample_weight=[1, 1, 0, 0]) == pytest.approx(1.0)
    table = group_table([1, 0, 1, 1], p, g, sample_weight=[1, 1, 0, 0])
    assert list(table.index) == ["a", "b", "overall"]


def test_representation_rate_hand_values():
    # shares 3/4 and 1/4 -> 1/3
    assert representation_rate(None, None, ["a", "a", "a", "b"]) == pytest.approx(1 / 3)
    # counts 2, 1, 3 -> 1/3
    assert representation_rate([0] * 6, [0] * 6, [0, 0, 1, 2, 2, 2]) == pytest.approx(1 / 3)
    # weighted: a = 1+1+1, b = 3 -> 1
    assert representation_rate(None, None, list("aaab"), sample_weight=[1, 1, 1, 3]) == 1.0
    assert representation_rate(None, None, [5, 5]) == 1.0  # a single group


def test_statistical_rate_hand_values():
    p, g = [0.2, 0.4, 0.6, 0.8], [0, 0, 1, 1]
    # mean probabilities 0.3 and 0.7 -> 3/7; for label 0: 0.7 and 0.3 -> 3/7
    assert statistical_rate(None, p, g) == pytest.approx(3 / 7)
    assert statistical_rate(None, p, g, label=0) == pytest.approx(3 / 7)
    # hard predictions of the example: selection 0.5 and 0.75 -> 2/3; label 0: 0.25 / 0.5
    assert statistical_rate(Y, P, G) == pytest.approx(2 / 3)
    assert statistical_rate(Y, P, G, label=0) == pytest.approx(0.5)
    assert statistical_rate(None, [0, 0, 0], [0, 1, 1]) == 1.0  # 0/0: nobody favoured
    assert statistical_rate(None, [0, 1], [0, 1]) == 0.0


@pytest.mark.parametrize("scale", [1e-3, 0.5, 7.0, 1e4])
def test_rates_are_invariant_to_weight_scaling(scale):
    rng = np.random.default_rng(3)
    g = rng.integers(0, 3, 200)
    p = rng.random(200)
    w = rng.random(200) + 0.1
    for fn in (representation_rate, statistical_rate, dp_diff, sp_ks):
        assert fn(None, p, g, sample_weight=w * scale) == pytest.approx(
            fn(None, p, g, sample_weight=w)
        )


# --------------------------------------------------------------------------- fairlearn


def _random_classification(seed: int, n_groups: int, strings: bool, n: int = 400):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, n_groups, n)
    y = (rng.random(n) < 0.3 + 0.1 * g).astype(int)
    p = (rng.random(n) < 0.2 + 0.15 * g).astype(int)
    groups = np.array([f"group-{k}" for k in g]) if strings else g
    return y, p, groups, rng.random(n) + 0.5


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_groups", [2, 3, 5])
@pytest.mark.parametrize("strings", [False, True])
def test_dp_and_eo_match_fairlearn(seed, n_groups, strings):
    y, p, g, w = _random_classification(seed, n_groups, strings)
    assert dp_diff(y, p, g) == pytest.approx(
        demographic_parity_difference(y, p, sensitive_features=g)
    )
    assert eo_diff(y, p, g) == pytest.approx(equalized_odds_difference(y, p, sensitive_features=g))
    assert dp_diff(y, p, g, sample_weight=w) == pytest.approx(
        demographic_parity_difference(y, p, sensitive_features=g, sample_weight=w)
    )
    assert eo_diff(y, p, g, sample_weight=w) == pytest.approx(
        equalized_odds_difference(y, p, sensitive_features=g, sample_weight=w)
    )


def test_input_types_give_the_same_answer():
    y, p, g, _ = _random_classification(0, 3, strings=True, n=60)
    reference = eo_diff(y, p, g)
    shuffled_index = np.random.default_rng(0).permutation(60)  # alignment is positional
    assert eo_diff(list(y), list(p), list(g)) == reference
    assert eo_diff(pd.Series(y), pd.Series(p), pd.Series(g, dtype="category")) == reference
    assert eo_diff(pd.Series(y, index=shuffled_index), p, pd.Series(g)) == reference


# --------------------------------------------------------------------------- sp_ks


def test_sp_ks_zero_for_identical_group_distributions():
    values = np.array([0.1, 0.5, 0.5, 0.9])
    p = np.tile(values, 3)
    g = np.repeat(["x", "y", "z"], 4)
    assert sp_ks(None, p, g) == 0.0


def test_sp_ks_hand_values():
    # worked example: overall CDF at 0.1..0.4 is .25 .5 .75 1; group 0 .5 1 1 1 -> 0.5
    assert sp_ks(None, [0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1]) == pytest.approx(0.5)
    # group 0 {0, 1}, group 1 {1, 1, 1, 1}: at t = 0 overall 1/6, group 0 1/2 -> 1/3
    assert sp_ks(None, [0, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1]) == pytest.approx(1 / 3)


@pytest.mark.parametrize("seed", range(3))
def test_sp_ks_matches_scipy_ks_2samp(seed):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, 300)
    p = np.round(rng.normal(0.3 * g, 1.0), 1)  # rounding makes ties across groups
    expected = max(ks_2samp(p[g == z], p).statistic for z in (0, 1))
    assert sp_ks(None, p, g) == pytest.approx(expected)


def test_sp_ks_integer_weights_equal_repeated_rows():
    rng = np.random.default_rng(5)
    p, g, w = rng.random(40).round(1), rng.integers(0, 3, 40), rng.integers(1, 4, 40)
    assert sp_ks(None, p, g, sample_weight=w) == pytest.approx(
        sp_ks(None, np.repeat(p, w), np.repeat(g, w))
    )


def test_ks_distance_from_mixture_cdfs():
    # Q = 1/2 f1 + 1/2 f2: its CDF averages the two; the same as stacking both predictions with
    # weight 1/2 per row.
    rng = np.random.default_rng(1)
    g = rng.integers(0, 3, 50)
    f1, f2 = rng.random(50).round(2), rng.random(50).round(2) + 0.2 * g
    grid = np.union1d(f1, f2)
    _, g1, o1 = prediction_cdfs(f1, g, thresholds=grid)
    _, g2, o2 = prediction_cdfs(f2, g, thresholds=grid)
    mixture = ks_distance_from_cdfs((g1 + g2) / 2, (o1 + o2) / 2)
    stacked = sp_ks(None, np.concatenate([f1, f2]), np.concatenate([g, g]))
    assert mixture == pytest.approx(stacked)
    # the deterministic average predictor is a different (wrong) answer in general
    assert sp_ks(None, (f1 + f2) / 2, g) != pytest.approx(mixture)


def test_prediction_cdfs_shape_and_values():
    t, group_cdf, overall = prediction_cdfs([0.1, 0.2, 0.3, 0.4], ["b", "b", "a", "a"])
    np.testing.assert_allclose(t, [0.1, 0.2, 0.3, 0.4])
    # rows in sorted label order: "a" = {0.3, 0.4}, "b" = {0.1, 0.2}
    np.testing.assert_allclose(group_cdf, [[0, 0, 0.5, 1], [0.5, 1, 1, 1]])
    np.testing.assert_allclose(overall, [0.25, 0.5, 0.75, 1])
    with pytest.raises(ValueError, match="same thresholds"):
        ks_distance_from_cdfs(group_cdf, overall[:3])


# --------------------------------------------------------------------------- group_table


def test_group_table_classification_hand_values():
    table = group_table(Y, P, G, group_names={"a": "women", "b": "men"})
    assert list(table.index) == ["women", "men", "overall"]
    assert list(table.columns) == [
        "n", "share", "base_rate", "selection_rate", "accuracy", "tpr", "fpr",
        "fnr", "tnr", "ppv", "fdr", "npv", "for",
    ]  # fmt: skip
    expected = {
        "women": [4, 0.5, 3 / 4, 2 / 4, 3 / 4, 2 / 3, 0.0],
        "men": [4, 0.5, 1 / 4, 3 / 4, 2 / 4, 1.0, 2 / 3],
        # overall: 4 positives of 8, 5 selected, 5 correct, TPR 3/4, FPR 2/4
        "overall": [8, 1.0, 4 / 8, 5 / 8, 5 / 8, 3 / 4, 2 / 4],
    }
    for name, row in expected.items():
        np.testing.assert_allclose(table.loc[name].iloc[:7].to_numpy(dtype=float), row)
    # the table agrees with the metrics (one definition of each rate)
    assert table["selection_rate"].iloc[:-1].agg(np.ptp) == pytest.approx(dp_diff(Y, P, G))
    assert table.loc["overall", "accuracy"] == pytest.approx(accuracy(Y, P, G))


def test_group_table_regression_and_sequence_names():
    y, p, g = [0.0, 1.0, 2.0], [0.5, 1.0, 1.0], [0, 0, 1]
    table = group_table(y, p, g, kind="regression", group_names=("low", "high"))
    assert list(table.columns) == ["n", "share", "mean_target", "mean_prediction", "mse", "mae"]
    # group "low": targets 0, 1 -> 0.5; predictions 0.75; mse (0.25 + 0) / 2; mae (0.5 + 0) / 2
    np.testing.assert_allclose(
        table.loc["low"].to_numpy(dtype=float), [2, 2 / 3, 0.5, 0.75, 0.125, 0.25]
    )
    np.testing.assert_allclose(
        table.loc["high"].to_numpy(dtype=float), [1, 1 / 3, 2.0, 1.0, 1.0, 1.0]
    )
    assert table.loc["overall", "mse"] == pytest.approx(loss(y, p, g))


def test_group_table_ci_columns_cover_point_and_are_reproducible():
    y, p, g, _ = _random_classification(0, 3, strings=False, n=6000)
    table = group_table(y, p, g, ci=0.95, random_state=1)
    for col in ("base_rate", "selection_rate", "accuracy", "tpr", "fpr"):
        assert (table[f"{col}_low"] <= table[col]).all()
        assert (table[col] <= table[f"{col}_high"]).all()
        assert (table[f"{col}_low"] < table[f"{col}_high"]).all()
    pd.testing.assert_frame_equal(table, group_table(y, p, g, ci=0.95, random_state=1))


def test_group_table_rejects_a_bootstrap_setting_it_does_not_have():
    """Its interval level is ``ci``: ``level=`` (a setting of :func:`bootstrap_ci`) or a
    misspelt name must not be ignored silently."""
    y, p, g, _ = _random_classification(0, 2, strings=False, n=200)
    for name in ("level", "stratify", "nboot"):
        with pytest.raises(TypeError, match=name):
            group_table(y, p, g, ci=0.95, **{name: 0.9})


def test_bootstrap_ci_passes_other_options_to_the_metric():
    """Bootstrap settings are taken by ``bootstrap_ci``; any other keyword reaches the metric."""
    y, p, g = _gap_data(300)
    seen = []

    def metric(y_true, y_pred, groups, *, sample_weight=None, label=None):
        seen.append(label)
        return float(np.average(y_pred, weights=sample_weight))

    low, high = bootstrap_ci(metric, y, p, g, n_boot=7, level=0.9, stratify=False, label="x")
    assert seen == ["x"] * 7
    assert low <= high


@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_group_table_ci_width_matches_normal_approximation(kind):
    # a mean of n iid values has standard error sd / sqrt(n): a 95% interval is ~3.92 of it wide.
    # Hard predictions use the multinomial path, continuous ones resample rows: both must agree.
    rng = np.random.default_rng(2)
    n = 4000
    g = rng.integers(0, 2, n)
    p = (rng.random(n) < 0.3).astype(float) if kind == "classification" else rng.random(n)
    y = (rng.random(n) < 0.5).astype(float)
    col = "selection_rate" if kind == "classification" else "mean_prediction"
    table = group_table(y, p, g, kind=kind, ci=0.95, n_boot=400)
    for z in (0, 1):
        values = p[g == z]
        expected = 2 * 1.96 * values.std() / np.sqrt(values.size)
        width = table.loc[z, f"{col}_high"] - table.loc[z, f"{col}_low"]
        assert width == pytest.approx(expected, rel=0.2)


# --------------------------------------------------------------------------- bootstrap_ci


def _gap_data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, n)
    p = (rng.random(n) < 0.4 + 0.1 * g).astype(int)
    return np.zeros(n), p, g


def test_bootstrap_ci_contains_point_and_narrows():
    y, p, g = _gap_data(20_000)
    low, high = bootstrap_ci(dp_diff, y, p, g)
    assert low <= dp_diff(y, p, g) <= high
    small = bootstrap_ci("dp_diff", *_gap_data(500))
    assert high - low < (small[1] - small[0]) / 3  # width ~ 1/sqrt(n): 40x data, ~6x narrower


def test_bootstrap_ci_is_reproducible():
    y, p, g = _gap_data(2000)
    first = bootstrap_ci(dp_diff, y, p, g, random_state=7, n_boot=100)
    assert first == bootstrap_ci(dp_diff, y, p, g, random_state=7, n_boot=100)
    assert first != bootstrap_ci(dp_diff, y, p, g, random_state=8, n_boot=100)


def test_bootstrap_ci_stratification_keeps_group_sizes():
    # stratified resamples keep each group's row count, so representation_rate cannot move
    g = np.array(["big"] * 90 + ["small"] * 10)
    low, high = bootstrap_ci(representation_rate, None, None, g, n_boot=50)
    assert low == pytest.approx(10 / 90)
    assert high == pytest.approx(10 / 90)
    low, high = bootstrap_ci(representation_rate, None, None, g, n_boot=50, stratify=False)
    assert low < high


def test_bootstrap_ci_passes_metric_options():
    rng = np.random.default_rng(0)
    y, p, g = rng.random(3000), rng.random(3000), rng.integers(0, 2, 3000)
    sq = bootstrap_ci(max_group_loss, y, p, g, loss="square", n_boot=50)
    ab = bootstrap_ci(max_group_loss, y, p, g, loss="absolute", n_boot=50)
    assert sq[0] <= max_group_loss(y, p, g, loss="square") <= sq[1]
    assert ab[0] <= max_group_loss(y, p, g, loss="absolute") <= ab[1]
    assert sq[1] < ab[0]  # E(y - p)^2 = 1/6 < E|y - p| = 1/3 for independent uniforms


# --------------------------------------------------------------------------- properties


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.sampled_from([0.0, 0.5, 1.0]), st.integers(0, 2)),
        min_size=1,
        max_size=30,
    ),
    st.data(),
)
def test_integer_weights_equal_repeated_rows(rows, data):
    y, p, g = (np.array(col) for col in zip(*rows, strict=True))
    w = np.array(data.draw(st.lists(st.integers(1, 3), min_size=len(y), max_size=len(y))))
    rep = {"y_true": np.repeat(y, w), "y_pred": np.repeat(p, w), "groups": np.repeat(g, w)}
    for name in ("accuracy", "dp_diff", "eo_diff", "sp_ks", "representation_rate"):
        fn = METRICS[name]
        assert fn(y, p, g, sample_weight=w) == pytest.approx(fn(**rep))


# --------------------------------------------------------------------------- registry


def test_registry_and_directions():
    from fairengine import metrics
    from fairengine.methods import list_methods

    list_methods()  # the methods' own metrics join the registry when they register
    all_names = set(metrics.ALL_METRIC_NAMES)  # read after the methods declared theirs
    assert set(METRICS) == {
        "accuracy", "error", "loss", "dp_diff", "tpr_diff", "eo_diff", "sp_ks",
        "max_group_loss", "representation_rate", "statistical_rate", "data_statistical_rate",
        "disclosivity", "imbalance", "acceptance_rate",
        *(f"{r}_ratio" for r in GROUP_RATES),
        *(f"{r}_diff" for r in GROUP_RATES if r not in ("tpr", "selection_rate")),
    }  # fmt: skip
    design_names = [
        "accuracy", "error", "loss", "dp_diff", "eo_diff", "tpr_diff", "sp_ks", "max_group_loss",
        "disclosivity", "imbalance", "acceptance_rate", "representation_rate", "statistical_rate",
        "kl_to_empirical", "true_violation", "noisy_violation",
        "multiaccuracy_violation_in_sample", "multiaccuracy_violation_held_out",
        "robust_violation",
    ]  # fmt: skip
    assert all_names >= set(design_names)
    assert all_names >= set(METRICS)
    assert all_names >= HIGHER_IS_BETTER
    for name in ("accuracy", "representation_rate", "statistical_rate", "acceptance_rate"):
        assert not is_lower_better(name)
    for name in ("error", "loss", "dp_diff", "eo_diff", "sp_ks", "disclosivity", "imbalance"):
        assert is_lower_better(name)
    with pytest.raises(ValueError, match="unknown metric"):
        is_lower_better("f1")


def test_every_declaration_is_complete():
    labels = [info.label for info in REGISTRY.values()]
    assert len(set(labels)) == len(labels), "two metrics share a label"
    for name, info in REGISTRY.items():
        assert info.name == name and info.label and info.definition.endswith(".")
        assert set(info.kinds) <= {"classification", "regression"} and info.kinds
        if info.standard:
            assert info.function is not None, f"standard metric {name} needs a function"
    assert standard_metrics("classification")[:2] == ("error", "accuracy")
    assert set(standard_metrics("regression")) == {"loss", "sp_ks", "max_group_loss"}
    assert metric_label("dp_diff") == "Demographic parity difference"
    assert undeclared(["error", "f1"]) == ["f1"]


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dp_diff([0, 1], [0, 1, 1], [0, 1]), "y_pred has 3 rows but groups has 2"),
        (lambda: accuracy([0, 1, 1], [0, 1], [0, 1]), "y_true has 3 rows"),
        (lambda: dp_diff([], [], []), "empty"),
        (lambda: representation_rate(None, None, None), "groups is required"),
        (lambda: dp_diff(None, [0.1, np.nan], [0, 1]), "NaN"),
        (lambda: dp_diff(None, [0.1, 0.2], ["a", None]), "missing values"),
        (lambda: dp_diff(None, [[0.1, 0.2]], [0]), "1-D"),
        (lambda: dp_diff(None, [0, 1], [0, 1], sample_weight=[1, -1]), "non-negative"),
        (lambda: dp_diff(None, [0, 1], [0, 1], sample_weight=[0, 0]), "positive sum"),
        (lambda: dp_diff(None, [0, 1], [0, 1], sample_weight=[1]), "sample_weight has 1 rows"),
        (lambda: accuracy([0, 2], [0, 1], [0, 1]), "0/1 labels"),
        (lambda: eo_diff([0, 1], [0, 1.5], [0, 1]), r"in \[0, 1\]"),
        (lambda: loss([0, 1], [0, 1], [0, 1], loss="hinge"), "unknown loss"),
        (lambda: loss([0, 1], [0, 2], [0, 1], loss="log"), r"in \[0, 1\]"),
        (lambda: statistical_rate(None, [0, 1], [0, 1], label=2), "label must be 0 or 1"),
        (lambda: group_table([0], [0], [0], kind="ranking"), "kind must be"),
        (lambda: bootstrap_ci(dp_diff, None, [0, 1], [0, 1], level=1.5), "level"),
    ],
)
def test_validation_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---------------------------------------------------------------- a group missing from a sample


def test_a_missing_group_makes_the_imbalance_maximal() -> None:
    """One rule (Deng et al. 2023 Def. 2 plus a missing group): ||p - tau|| can look small with one
    group
    at 0 — (0.5, 0.5, 0) is 0.41 from uniform — but a sample without a group is as unbalanced as
    any: sqrt(1 - 1/K), the distance of a single-group sample."""
    from fairengine.metrics import (
        MISSING_GROUP_ROWS,
        distribution_imbalance,
        imbalance,
        max_imbalance,
    )

    uniform3 = np.full(3, 1 / 3)
    assert max_imbalance(uniform3) == pytest.approx(math.sqrt(2 / 3))
    assert max_imbalance(np.array([0.7, 0.2, 0.1])) == pytest.approx(
        np.linalg.norm(np.array([0.0, 0.0, 1.0]) - [0.7, 0.2, 0.1])
    )
    assert distribution_imbalance([0.5, 0.5, 0.0]) == pytest.approx(math.sqrt(2 / 3))
    assert distribution_imbalance([0.4, 0.3, 0.3]) == pytest.approx(
        np.linalg.norm([0.4, 0.3, 0.3] - uniform3)
    )
    # a group the target does not ask for may be absent
    assert distribution_imbalance([0.5, 0.5, 0.0], [0.5, 0.5, 0.0]) == 0.0
    groups = np.array([0] * 10 + [1] * 10 + [2] * 10)
    accept = np.r_[np.ones(20), np.full(10, 0.04)]  # 0.4 expected rows of group 2
    assert MISSING_GROUP_ROWS > 10 * 0.04
    assert imbalance(None, None, groups, sample_weight=accept) == pytest.approx(math.sqrt(2 / 3))
    accept[20:] = 0.1  # one expected row: present, ordinary distance
    share = np.array([10, 10, 1]) / 21
    assert imbalance(None, None, groups, sample_weight=accept) == pytest.approx(
        np.linalg.norm(share - uniform3)
    )
