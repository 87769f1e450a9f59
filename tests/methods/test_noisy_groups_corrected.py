"""noisy_groups: the noise-corrected group rates behind DRO's margin check and the
``noise_too_strong`` check — on rows whose group noise is the paper's (random flips), the
corrected rate recovers the true group's rate where the noisy group's rate is pulled towards the
others, its standard error grows with the noise, and the check warns only where the noise (not
the row count) leaves the rate undetermined."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from fairengine.methods.noisy_groups import add_group_noise
from fairengine.methods.noisy_groups.checks import NOISE_COST, noise_check
from fairengine.methods.noisy_groups.noise import estimate_noise
from fairengine.methods.noisy_groups.rates import (
    corrected_se_bound,
    corrected_violations,
    corrected_violations_se,
    violations,
)

TPR = (0.75, 0.45, 0.60)  # true groups' TPRs: group 1 is disadvantaged


def _rows(noise: float, n: int = 120_000, seed: int = 0):
    rng = np.random.default_rng(seed)
    g = rng.choice(3, size=n, p=[0.8, 0.12, 0.08])
    y = (rng.random(n) < 0.3).astype(float)
    yhat = np.where(y == 1, rng.random(n) < np.take(TPR, g), rng.random(n) < 0.1).astype(float)
    h = add_group_noise(g, noise, seed + 1)
    return y, yhat, g, h, estimate_noise(g, h, 3)


@pytest.mark.parametrize("noise", [0.1, 0.3])
def test_corrected_rates_recover_the_true_groups_violations(noise):
    y, yhat, g, h, model = _rows(noise)
    true = violations(y, yhat, g, "tpr", 0.05, 3)
    noisy = violations(y, yhat, h, "tpr", 0.05, 3)
    corrected, se = corrected_violations_se(y, yhat, h, "tpr", 0.05, model.flip)
    print(f"noise {noise}: true {true.round(3)}, noisy {noisy.round(3)}, corrected "
          f"{corrected.round(3)} ± {se.round(3)}")  # fmt: skip
    assert np.all(np.abs(corrected - true) <= 3 * se + 1e-3)
    # the noisy group hides group 1's gap; the correction does not
    assert noisy[1] < true[1] - 0.03
    assert abs(corrected[1] - true[1]) < (true[1] - noisy[1]) / 2


def test_a_classifier_reading_the_noisy_group_cannot_game_the_correction():
    """A classifier that favours the rows labelled with the small group 1 (noisy group as a
    feature) raises the plain corrected estimate of group 1's TPR far more than its true TPR
    (most such rows belong to other groups); rating every row under each noisy group it may
    carry (``yhat_by_group``) recovers the true violation."""
    rng = np.random.default_rng(5)
    n, noise = 150_000, 0.3
    g = rng.choice(3, size=n, p=[0.8, 0.12, 0.08])
    y = (rng.random(n) < 0.3).astype(float)
    h = add_group_noise(g, noise, 6)
    flip = estimate_noise(g, h, 3).flip
    u = rng.random(n)
    base_tpr = np.take(TPR, g)  # the part of the decision that sees the features only

    def decide(groups):  # a bonus for the positives labelled group 1
        return np.where(y == 1, u < base_tpr + 0.2 * (groups == 1), u < 0.1).astype(float)

    yhat = decide(h)
    by_group = np.vstack([decide(np.full(n, k)) for k in range(3)])
    true = violations(y, yhat, g, "tpr", 0.05, 3)
    plain, se = corrected_violations_se(y, yhat, h, "tpr", 0.05, flip)
    fixed, se_fixed = corrected_violations_se(y, yhat, h, "tpr", 0.05, flip, yhat_by_group=by_group)
    print(f"true {true.round(3)}, plain {plain.round(3)} ± {se.round(3)}, by group "
          f"{fixed.round(3)} ± {se_fixed.round(3)}")  # fmt: skip
    assert true[1] > 0.0  # group 1 misses the constraint on the true groups
    assert plain[1] + 3 * se[1] < 0.0  # the plain correction calls it met, far beyond its SE
    assert np.all(np.abs(fixed - true) <= 3 * se_fixed + 2e-3)


def test_margin_adds_z_standard_errors_and_grows_with_the_noise():
    y, yhat, _, h, model = _rows(0.3, n=40_000)
    plain, se = corrected_violations_se(y, yhat, h, "tpr", 0.05, model.flip)
    shifted = corrected_violations(y, yhat, h, "tpr", 0.05, model.flip, z=1.0)
    np.testing.assert_allclose(shifted, plain + se)
    costs = []
    for noise in (0.1, 0.3, 0.5):
        y, _, _, h, model = _rows(noise, n=40_000)
        bound, without = corrected_se_bound(y, h, "tpr", model.flip)
        costs.append(float(np.max(bound / without)))
    assert costs[0] < 1.5 < costs[1] < costs[2]  # noise multiplies the standard error


def test_noise_check_warns_only_when_the_noise_hides_a_group():
    def result(se: float, plain: float):
        return SimpleNamespace(
            knobs={"slack": 0.05}, artifacts={"noise_se": {"se": se, "plain": plain}}
        )

    warned = noise_check(result(0.15, 0.04))
    assert warned is not None and warned.level == "warn" and "0.150" in warned.sentence
    assert noise_check(result(0.06, 0.055)) is None  # few rows, not noise: few_group_rows says so
    assert noise_check(result(0.04, 0.01)) is None  # within the slack
    assert noise_check(result(0.2, 0.2 / NOISE_COST)) is not None
    assert noise_check(SimpleNamespace(knobs={"slack": 0.05}, artifacts={})) is None


def test_status_sentence_carries_the_noise_warning(monkeypatch):
    """A "feasible" status whose constraints the noisy groups cannot confirm says so: the noise
    check's sentence is added to the status the page shows (a passing held-out audit alone
    does not clear it); a warning of its own only where the run shows the noise's cost."""
    from fairengine.methods.evidence import Check
    from fairengine.methods.noisy_groups import checks

    ok = Check("held_out_constraint", "ok", "kept", {})
    monkeypatch.setattr(checks, "held_out_constraint", lambda result, test: ok)
    monkeypatch.setattr(checks, "few_rows_check", lambda result, test: None)

    def result(se):
        return SimpleNamespace(
            knobs={"slack": 0.05},
            artifacts={
                "noise_se": {"se": se, "plain": 0.04},
                "status": "feasible",
                "status_message": "An iterate met the check (feasible).",
            },
        )

    noisy = result(0.3)
    found = checks.promise(noisy, None, None, None)
    # the held-out audit passed and no classifier shows a cost: said in the status, no warning
    assert [c.name for c in found] == ["held_out_constraint"]
    assert noisy.artifacts["status_message"].startswith("An iterate met the check (feasible).")
    assert "group noise hides some true group" in noisy.artifacts["status_message"]
    quiet = result(0.04)
    checks.promise(quiet, None, None, None)
    assert quiet.artifacts["status_message"] == "An iterate met the check (feasible)."
    missed = Check("held_out_constraint", "ok", "within", {"test_true_violation": 0.02})
    monkeypatch.setattr(checks, "held_out_constraint", lambda result, test: missed)
    found = checks.promise(result(0.3), None, None, None)
    assert [c.name for c in found] == ["held_out_constraint", "noise_too_strong"]


def test_soft_joint_check_takes_the_corrected_rates_only_where_the_noise_is_mild():
    """Soft assignments' extra held-out check is DRO's corrected violation + 1 SE for the
    constraints the noisy groups determine (noise costs < NOISE_COST × a rate's SE) and leaves
    the others to the worst-case checks (-inf)."""
    from fairengine.methods.noisy_groups.game import soft_joint_check
    from fairengine.methods.noisy_groups.rates import corrected_se_bound

    y, yhat, _, h, model = _rows(0.3, n=40_000)
    clf = SimpleNamespace(noise_model_=model, constraint="tpr", slack=0.05, group_block_=None)
    got = soft_joint_check(clf, y, h)(yhat)
    plain, se = corrected_violations_se(y, yhat, h, "tpr", 0.05, model.flip)
    bound, without = corrected_se_bound(y, h, "tpr", model.flip)
    live = bound < NOISE_COST * without
    assert live.any() and not live.all()  # the big group is determined, the small ones are not
    np.testing.assert_allclose(got[live], (plain + se)[live])
    assert np.all(np.isneginf(got[~live]))
