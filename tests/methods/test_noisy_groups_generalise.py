"""noisy_groups on split seeds no other test or bench uses (501–504): soft assignments keep the
true-group constraints within the slack (+ 0.01) on the test rows on average over seeds, so does
DRO while staying clearly below the all-negatives error (with λ on the relaxed constraints it is
the all-negatives classifier), and the checks say when a setting cannot keep its constraints.

Real data (Adult, race as White / Black / Other, the noisy group a feature whose columns the
checks know; TPR, α = 0.05), rows sampled to stay fast: 16,000 training rows (soft: 12,000
fitted, 4,000 held out for the best iterate; DRO: all 16,000, as the Method's
``selection="auto"``) and 12,000 test rows per seed; the page's T = 300.
"""

from __future__ import annotations

import numpy as np
import pytest

from fairengine.methods import get_method
from fairengine.methods.noisy_groups import RobustFairClassifier, add_group_noise
from fairengine.methods.noisy_groups.method import (
    NOISY_COLUMN,
    noisy_group_columns,
    resolve_selection,
    with_noisy_group,
)
from fairengine.methods.noisy_groups.rates import violations

SEEDS = (501, 502, 503)
SLACK = 0.05


@pytest.fixture(scope="module")
def adult3():
    from bench.bench_noisy_groups import adult_race3

    return adult_race3()


def _rows(task, noise: float, seed: int):
    from fairengine.data.encoding import FeatureEncoder

    order = np.random.default_rng(seed).permutation(len(task.y))
    fit, held, test = (
        np.sort(order[a:b]) for a, b in ((0, 12_000), (12_000, 16_000), (-12_000, None))
    )
    noisy = add_group_noise(task.groups, noise, seed)
    frame = with_noisy_group(task.X, task.group_names, noisy)
    encoder = FeatureEncoder().fit(frame.iloc[fit])
    columns = noisy_group_columns(encoder, NOISY_COLUMN)
    return encoder.transform(frame), task.y, task.groups, noisy, fit, held, test, columns


def _fit(task, method: str, noise: float, seed: int, **params):
    z, y, g, h, fit, held, test, columns = _rows(task, noise, seed)
    clf = RobustFairClassifier(method, "tpr", SLACK, n_steps=300, random_state=seed, **params)
    eval_set = (z[held], y[held], h[held])
    if resolve_selection("auto", method) == "train":
        fit, eval_set = np.union1d(fit, held), None
    clf.fit(z[fit], y[fit], h[fit], g[fit], h[fit], eval_set=eval_set,
            group_columns=columns)  # fmt: skip
    pred = clf.predict(z[test])
    error = float(np.mean(pred != y[test]))
    viol = float(np.max(violations(y[test], pred, g[test], "tpr", SLACK, 3)))
    return clf, error, viol, float(np.mean(y[test]))


@pytest.mark.slow
@pytest.mark.parametrize(
    "noise",
    [
        0.1,
        pytest.param(0.3, marks=pytest.mark.xfail(strict=False, reason=(
            "open: on these rows (12,000 fitted) noise 0.3 measured errors .234/.212/.223 and "
            "true violations -.016/+.035/+.023 (mean +.014); on the authors' rows (bench "
            "ng_side_by_side, 10 seeds) -.009"
        ))),
    ],
)  # fmt: skip
def test_soft_keeps_the_true_group_constraints_over_seeds(adult3, noise):
    """Mean over 3 seeds of the max true-group test violation (α included) <= +0.01, and the
    classifier is useful (error clearly below predicting all negatives) at every seed."""
    runs = [_fit(adult3, "soft", noise, seed) for seed in SEEDS]
    errors, viols, base = zip(*[(e, v, b) for _, e, v, b in runs], strict=True)
    print(f"noise {noise}: errors {np.round(errors, 3)}, true violations {np.round(viols, 3)}")
    assert np.mean(viols) <= 0.01
    assert max(viols) <= 0.06  # one seed's small groups may miss by sampling (SE ~ 0.04)
    assert all(e <= b - 0.01 for e, b in zip(errors, base, strict=True))


@pytest.mark.slow
def test_the_relaxed_lambda_rule_is_the_cause_and_the_zero_one_rule_moves(adult3):
    """The paper code's λ rule (ascent on the hinge-relaxed constraints, β = 0) ends on its
    bound ||λ||₁ = 1 (the relaxed constraints never hold, whatever the 0-1 ones do); the 0-1
    rule's λ grows past that bound while the exact check fails, and both selected iterates keep
    the true groups within the slack (+ 0.01) here."""
    relaxed, _, v_relaxed, _ = _fit(adult3, "soft", 0.3, SEEDS[0], lambda_signal="relaxed")
    auto, _, v_auto, _ = _fit(adult3, "soft", 0.3, SEEDS[0])
    print(f"λ relaxed {relaxed.lambda_}, λ 0-1 {auto.lambda_}; violations {v_relaxed}, {v_auto}")
    assert relaxed.lambda_.sum() == pytest.approx(1.0)
    assert auto.lambda_.sum() > 1.0 + 1e-9
    assert max(v_relaxed, v_auto) <= 0.01


def _dro(task, seed: int, **params):
    """DRO at the Method's defaults on one seed's rows (noise 0.1; the paper's radius
    γ_j = P(Ĝ ≠ G | G = j) and the noise model from the fitted rows' pairs, β = 1, p̃ updated
    every 10 steps, best iterate on all the training rows)."""
    _, _, g, h, fit, _, _, _ = _rows(task, 0.1, seed)
    gamma = [float(np.mean(h[fit][g[fit] == j] != j)) for j in range(3)]
    return _fit(task, "dro", 0.1, seed, gamma=gamma, beta=1.0, adversary_every=10, **params)


@pytest.mark.slow
def test_dro_is_useful_and_keeps_the_true_group_constraints_over_seeds(adult3):
    """DRO's default (λ on the noise-corrected check with a one-standard-error margin, best
    iterate on the training rows): error clearly below predicting all negatives at every seed, and
    the max true-group test violation (α included) within the slack + 0.01 on average."""
    runs = [_dro(adult3, seed) for seed in SEEDS[:2]]
    errors, viols, base = zip(*[(e, v, b) for _, e, v, b in runs], strict=True)
    print(f"DRO noise 0.1: errors {np.round(errors, 3)}, true violations {np.round(viols, 3)}")
    assert all(e <= b - 0.03 for e, b in zip(errors, base, strict=True))
    assert np.mean(viols) <= 0.01
    assert all(clf.selection_status_ == "feasible" for clf, *_ in runs)


@pytest.mark.slow
def test_dro_with_the_relaxed_lambda_rule_is_the_all_negatives_classifier(adult3):
    """The cause: with λ on the hinge-relaxed constraints (the paper code's rule) the DRO
    adversary keeps λ near its bound and every recorded iterate predicts (nearly) no positive;
    the default on the same rows does not."""
    relaxed, error, _, base = _dro(adult3, SEEDS[2], lambda_signal="relaxed")
    default, default_error, default_viol, _ = _dro(adult3, SEEDS[2])
    print(f"relaxed: candidates' train errors {np.round(relaxed.candidate_errors_, 3)}, test "
          f"error {error:.3f} (all negatives {base:.3f}); default {default_error:.3f}")  # fmt: skip
    # after the first recorded step the relaxed trajectory sits at the all-negatives error
    assert np.median(relaxed.candidate_errors_) >= base - 0.01
    assert np.median(default.candidate_errors_) <= base - 0.03
    assert default_error <= base - 0.03 and default_viol <= 0.05


def test_the_checks_flag_too_few_rows_per_group(adult3):
    """On few rows per true group the held-out check allows for their sampling error, and the
    few-rows warning fires exactly when those rows cannot tell: the violation is above one
    standard error but within that allowance, and the allowance is wider than the slack."""
    train, test = adult3.split(random_state=504)
    small = test.subset(np.sort(np.random.default_rng(0).choice(len(test.y), 800, replace=False)))
    fit = train.subset(np.sort(np.random.default_rng(1).choice(len(train.y), 3000, replace=False)))
    method = get_method("noisy_groups")
    for rows in (small, test):
        run = method.run(fit, rows, slack=SLACK, n_steps=60, noise=0.3)
        names = {c.name: c for c in run.checks}
        held = names["held_out_constraint"]
        value, allowance = run.metrics["test"]["true_violation"], held.numbers["allowance"]
        assert held.level == ("fail" if value > allowance else "ok")
        undetermined = allowance / 2 < value <= allowance and allowance > SLACK
        assert ("few_group_rows" in names) == undetermined, (value, allowance)
    assert allowance < {c.name: c for c in method.run(fit, small, slack=SLACK, n_steps=60,
        noise=0.3).checks}["held_out_constraint"].numbers["allowance"]  # fmt: skip


@pytest.mark.slow
def test_dro_at_the_page_defaults_is_useful_and_keeps_its_constraint():
    """Adult/sex at the page's defaults (DRO, noise 0.1, α = 0.03, T = 300; `Method.run`) on
    splits 0–2: test error clearly below predicting all negatives on every split (≤ .225 on
    average) and the true-group constraint kept on the test rows, with a "feasible" status."""
    from fairengine.data import load_dataset

    task = load_dataset("adult", sensitive=["sex"])
    method = get_method("noisy_groups")
    errors, viols, bases = [], [], []
    for seed in (0, 1, 2):
        train, test = task.split(random_state=seed)
        run = method.run(train, test, random_state=seed)
        errors.append(run.metrics["test"]["error"])
        viols.append(run.metrics["test"]["true_violation"])
        bases.append(float(np.mean(test.y != test.y.max())))
        assert run.artifacts["status"] == "feasible"
    print(f"DRO page defaults: errors {np.round(errors, 3)} (all negatives {np.round(bases, 3)}), "
          f"true violations {np.round(viols, 3)}")  # fmt: skip
    assert all(e <= b - 0.01 for e, b in zip(errors, bases, strict=True))
    assert np.mean(errors) <= 0.225
    assert max(viols) <= 0.0
