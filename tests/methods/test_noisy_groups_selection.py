"""noisy_groups (Wang et al. 2020): soft assignments select their best iterate on held-out rows
(``selection="auto"``, the default) — its effect on real (Adult) rows and
the Method's wiring (soft on 25% of the training rows held out, the other approaches on train)."""

from __future__ import annotations

import numpy as np
import pytest

from fairengine.methods import get_method
from fairengine.methods.noisy_groups import RobustFairClassifier, add_group_noise
from fairengine.methods.noisy_groups.method import (
    MIN_HELD_OUT_BASE,
    NOISY_COLUMN,
    held_out_base,
    noisy_group_columns,
    resolve_selection,
    with_noisy_group,
)
from fairengine.methods.noisy_groups.rates import violations


@pytest.fixture(scope="module")
def adult_noise01():
    """One Adult split (3 races, the noisy group a feature), noise 0.1: soft assignments fitted on
    12,000 rows with 4,000 held-out rows for the selection, naive on the same rows, and 15,000
    test rows; T = 150 (the in-sample problem is at steps 25–50)."""
    from bench.bench_noisy_groups import adult_race3
    from fairengine.data.encoding import FeatureEncoder

    task = adult_race3()
    order = np.random.default_rng(0).permutation(len(task.y))
    fit, held, test = np.sort(order[:12_000]), np.sort(order[12_000:16_000]), order[-15_000:]
    test = np.sort(test)
    noisy = add_group_noise(task.groups, 0.1, 0)
    frame = with_noisy_group(task.X, task.group_names, noisy)
    encoder = FeatureEncoder().fit(frame.iloc[fit])
    z, columns = encoder.transform(frame), noisy_group_columns(encoder, NOISY_COLUMN)
    y, g = task.y, task.groups
    common = {"constraint": "tpr", "slack": 0.05, "n_steps": 150, "random_state": 0}
    held_out = {"eval_set": (z[held], y[held], noisy[held]), "group_columns": columns}
    soft = RobustFairClassifier("soft", **common).fit(
        z[fit], y[fit], noisy[fit], g[fit], noisy[fit], **held_out
    )
    naive = RobustFairClassifier("naive", beta=1.0, **common).fit(z[fit], y[fit], noisy[fit])
    # the paper code's λ rule (ascent on the relaxed constraints): the trajectory of version 7
    relaxed = RobustFairClassifier("soft", lambda_signal="relaxed", **common).fit(
        z[fit], y[fit], noisy[fit], g[fit], noisy[fit], **held_out
    )
    return soft, naive, z[test], y[test], g[test], relaxed


def _in_sample(soft: RobustFairClassifier) -> int:
    """Re-select ``soft`` on its training rows (the in-sample rule); return that iterate's index
    and leave the held-out selection in place."""
    saved = soft.validation_errors_
    soft.validation_errors_ = None
    try:
        return soft.select("margin").best_index_
    finally:
        soft.validation_errors_ = saved
        soft.select("margin")


def test_held_out_selection_is_useful_and_within_the_slack_on_the_true_groups(adult_noise01):
    soft, naive, z, y, g, _ = adult_noise01
    assert soft.validation_errors_ is not None and soft.robust_eval_ == "margin"
    # on 16,000 training rows the corrected-rate part of the check may reject every useful
    # iterate ("fallback", reported by the not_converged check); the pick must still be useful
    # and keep the true groups
    print("selection status:", soft.selection_status_)
    pred = soft.predict(z)
    assert np.mean(pred != naive.predict(z)) > 0.005  # not naive
    assert np.mean(pred != y) < np.mean(y) - 0.02  # well below the all-negatives error
    assert violations(y, pred, g, "tpr", 0.05, 3).max() <= 0.01  # TRUE groups, test rows


def test_in_sample_margin_pick_is_rejected_on_held_out_rows(adult_noise01):
    """The version-6 failure at noise 0.1: on its own training rows the margin check passes an
    early iterate that breaks the true groups on new rows; the same check on the held-out rows
    (noisy groups only) rejects it, and the held-out pick is fairer on the true test groups. On
    the relaxed λ rule's trajectory, where it was found."""
    _, _, z, y, g, soft = adult_noise01
    best = soft.best_index_
    early = _in_sample(soft)
    assert early != best
    assert soft.candidate_steps_[early] < soft.candidate_steps_[best]
    assert np.max(soft.candidate_violations_by_eval_["margin"][early]) <= 0.0  # passed in-sample
    assert np.max(soft.validation_violations_by_eval_["margin"][early]) > 0.0  # not held out
    coef = soft.candidates_[early]
    early_pred = (z @ coef[:-1] + coef[-1] > 0).astype(int)
    true_early = violations(y, early_pred, g, "tpr", 0.05, 3).max()
    assert true_early > violations(y, soft.predict(z), g, "tpr", 0.05, 3).max() + 0.02


def test_auto_selection_is_held_out_for_soft_with_enough_rows_and_train_otherwise():
    assert resolve_selection("auto", "soft") == "validation"
    assert resolve_selection("auto", "soft", MIN_HELD_OUT_BASE) == "validation"
    assert resolve_selection("auto", "soft", MIN_HELD_OUT_BASE - 1) == "train"  # too few
    # DRO's check is a sampling bound over all its training rows (half the SE of 25% of them)
    for method in ("dro", "naive", "unconstrained"):
        assert resolve_selection("auto", method) == "train"
    assert resolve_selection("train", "soft") == "train"
    assert resolve_selection("validation", "dro", 0) == "validation"  # explicit choices stand
    assert get_method("noisy_groups").defaults()["selection"] == "auto"


def test_held_out_base_counts_the_smallest_rate_base_of_a_noisy_group():
    y = np.array([1, 1, 0, 0, 0, 1, 0, 0])
    noisy = np.array([0, 0, 0, 1, 1, 1, 1, 1])
    # TPR: positives per group 2, 1; EO adds negatives 1, 4; DP: all rows 3, 5
    assert held_out_base(y, noisy, "tpr", 2) == pytest.approx(0.25 * 1)
    assert held_out_base(y, noisy, "eo", 2) == pytest.approx(0.25 * 1)
    assert held_out_base(y, noisy, "dp", 2) == pytest.approx(0.25 * 3)


@pytest.fixture(scope="module")
def adult_small():
    from fairengine.data import load_dataset

    task = load_dataset("adult", sensitive=["race"])
    rows = np.sort(np.random.default_rng(1).choice(len(task.y), 3000, replace=False))
    return task.subset(rows).split(random_state=0)


def test_method_auto_selection_follows_the_row_floor(adult_small):
    """3,000 Adult rows: 25% of train holds fewer than 100 positives of some noisy group, so
    ``auto`` selects on the training rows and says so; an explicit ``validation`` holds out."""
    train, test = adult_small
    method = get_method("noisy_groups")
    common = {"method": "soft", "noise": 0.2, "n_steps": 50, "random_state": 3}
    auto = method.run(train, test, **common)
    held = method.run(train, test, selection="validation", **common)
    in_sample = method.run(train, test, selection="train", **common)
    assert auto.knobs["selection"] == "auto"
    assert auto.artifacts["selection_used"] == "train"
    assert "too few" in auto.artifacts["status_message"]
    assert auto.metrics["test"] == in_sample.metrics["test"]
    assert held.artifacts["selection_used"] == "validation"
    assert "held-out" in held.artifacts["status_message"]
    assert "training rows" in in_sample.artifacts["status_message"]


def test_method_auto_selection_holds_out_on_full_adult():
    """Adult/sex at the page's defaults has enough rows: ``auto`` holds out for soft."""
    from fairengine.data import load_dataset
    from fairengine.methods.noisy_groups.method import VALIDATION_FRACTION

    train, _ = load_dataset("adult", sensitive=["sex"]).split(random_state=0)
    noisy = add_group_noise(train.groups, 0.1, 0)
    rows = held_out_base(train.y, noisy, "tpr", len(train.group_names))
    assert resolve_selection("auto", "soft", rows) == "validation"
    assert rows >= VALIDATION_FRACTION * 1000  # far above the floor


def test_method_default_keeps_dro_on_the_training_rows_when_rows_are_few(adult_small):
    train, test = adult_small
    method = get_method("noisy_groups")
    common = {"method": "dro", "noise": 0.2, "n_steps": 40, "random_state": 3}
    auto = method.run(train, test, **common)
    assert (
        auto.metrics["test"] == method.run(train, test, selection="train", **common).metrics["test"]
    )
    assert "training rows" in auto.artifacts["status_message"]


def test_trivial_classifier_is_reported():
    from fairengine.methods.noisy_groups.method import trivial_message

    assert trivial_message("soft", np.array([1, 0, 1]), np.array([0, 1])) is None
    text = trivial_message("soft", np.ones(5, dtype=int), np.array([0, 1]))
    assert "trivial" in text and "'1'" in text and "hinge" in text
    assert "trivial" not in trivial_message("unconstrained", np.zeros(3), np.array([0, 1]))
