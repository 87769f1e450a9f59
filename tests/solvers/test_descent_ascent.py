"""The descent–ascent pieces: the loop reaches the KKT point of a small constrained problem, λ
stays in Λ, the recorder keeps the right iterates and the players act in the documented order."""

from __future__ import annotations

import numpy as np
import pytest

from fairengine.solvers.descent_ascent import (
    CandidateRecorder,
    LambdaPlayer,
    ThetaPlayer,
    descent_ascent,
    project_lambda,
)


class SquaredLoss:
    """loss = mean((s − 1)²)/2 over a linear score s; λ ascends on the constraint values."""

    def __init__(self, n: int) -> None:
        self.n = n

    def state(self, scores):
        return scores

    def loss_coef(self, state):
        return (state - 1.0) / self.n

    def signal(self, state, values, theta, tables):
        return values


class MeanCap:
    """One constraint mean(s) − cap <= 0 against no adversary; logs what it is asked."""

    def __init__(self, cap: float) -> None:
        self.cap, self.calls = cap, []

    def respond(self, state, lam):
        self.calls.append("respond")

    def add_theta_coef(self, coef, state, lam):
        self.calls.append("theta")
        coef += lam.sum() / len(state)  # no multiplier: no pull

    def constraints(self, state):
        self.calls.append("constraints")
        return np.array([state.mean() - self.cap])

    def move(self, t, state, lam):
        self.calls.append("move")

    def tables(self):
        return []


@pytest.fixture
def rows() -> np.ndarray:
    x = np.random.default_rng(0).normal(size=(50, 1))
    return np.hstack([x, np.ones((50, 1))])


def test_reaches_the_constrained_optimum(rows) -> None:
    # min mean((s − 1)²)/2 s.t. mean(s) <= 0.3: s ≡ 0.3 (slope 0), λ = 0.7 (stationarity)
    theta, lam = ThetaPlayer(rows, 0.01), LambdaPlayer(1, 0.05, 1.0, adam=False)
    descent_ascent(SquaredLoss(50), theta, lam, MeanCap(0.3), CandidateRecorder(10, 5000))
    assert theta.scores().mean() == pytest.approx(0.3, abs=1e-6)
    assert theta.theta[0] == pytest.approx(0.0, abs=1e-4)
    assert lam.lam[0] == pytest.approx(0.7, abs=1e-4)


def test_without_constraints_theta_fits_the_loss(rows) -> None:
    theta, lam = ThetaPlayer(rows, 0.05), LambdaPlayer(0, 0.05, 1.0, adam=False)
    adversary = MeanCap(0.3)
    descent_ascent(SquaredLoss(50), theta, lam, adversary, CandidateRecorder(10, 2000))
    np.testing.assert_allclose(theta.scores(), 1.0, atol=1e-3)  # the cap is never enforced
    assert "constraints" not in adversary.calls


def test_players_act_in_order_and_the_recorder_keeps_every_kth_and_the_last(rows) -> None:
    adversary, recorder = MeanCap(0.3), CandidateRecorder(4, 10)
    theta = ThetaPlayer(rows, 0.01)
    descent_ascent(SquaredLoss(50), theta, LambdaPlayer(1, 0.1, 1.0, True), adversary, recorder)
    assert adversary.calls[:4] == ["respond", "theta", "constraints", "move"]
    assert len(adversary.calls) == 4 * 10
    assert recorder.step == [4, 8, 10]
    np.testing.assert_array_equal(recorder.theta[-1], theta.theta)
    assert recorder.theta[0] is not recorder.theta[1]  # copies, not the live iterate
    assert not np.array_equal(recorder.theta[0], recorder.theta[-1])


@pytest.mark.parametrize("seed", range(5))
def test_lambda_stays_in_its_set(seed) -> None:
    lam = np.random.default_rng(seed).normal(scale=3.0, size=6)
    out = project_lambda(lam, 2.0)
    assert (out >= 0).all() and out.sum() <= 2.0 + 1e-12
    inside = np.abs(lam) / (np.abs(lam).sum() * 2)  # already in Λ: unchanged
    np.testing.assert_array_equal(project_lambda(inside, 2.0), inside)
