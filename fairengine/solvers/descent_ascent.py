"""Projected gradient descent–ascent on a Lagrangian, as three players and a recorder.

Design notes: docs/architecture.md, "Gradient descent–ascent".
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from fairengine.solvers.candidates import CandidateRecorder
from fairengine.solvers.projections import project_simplex


class AdamAscent:
    """Adam (TF defaults β1 = .9, β2 = .999, ε = 1e-8) taking ascent steps on one array."""

    def __init__(self, shape, learning_rate: float) -> None:
        self.lr = float(learning_rate)
        self.m = np.zeros(shape)
        self.v = np.zeros(shape)
        self.t = 0

    def step(self, x: np.ndarray, grad: np.ndarray) -> np.ndarray:
        self.t += 1
        self.m = 0.9 * self.m + 0.1 * grad
        self.v = 0.999 * self.v + 0.001 * grad**2
        m_hat = self.m / (1 - 0.9**self.t)
        v_hat = self.v / (1 - 0.999**self.t)
        return x + self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)


def project_lambda(lam: np.ndarray, bound: float) -> np.ndarray:
    """λ projected onto Λ = {λ >= 0, ||λ||_1 <= ``bound``}."""
    lam = np.maximum(lam, 0.0)
    return lam if lam.sum() <= bound else project_simplex(lam, bound)


class ThetaPlayer:
    """θ of a linear score over ``Xt`` (rows with their intercept column), descending by Adam."""

    def __init__(self, Xt: np.ndarray, learning_rate: float) -> None:
        self.Xt = Xt
        self.theta = np.zeros(Xt.shape[1])
        self.opt = AdamAscent(Xt.shape[1], learning_rate)  # descent: ascent on −∇

    def scores(self) -> np.ndarray:
        """s = X̃θ of the current iterate."""
        return self.Xt @ self.theta

    def step(self, coef: np.ndarray) -> np.ndarray:
        """One descent step on ∇_θ = X̃ᵀ·``coef``; returns the new scores."""
        self.theta = self.opt.step(self.theta, -(self.Xt.T @ coef))
        return self.scores()


class LambdaPlayer:
    """The multipliers λ (one per constraint): ascent by ``learning_rate`` (plain steps, or Adam
    with ``adam``) on a signal, projected onto Λ of radius ``bound``."""

    def __init__(self, size: int, learning_rate: float, bound: float, adam: bool) -> None:
        self.lam = np.zeros(size)
        self.eta = float(learning_rate)
        self.bound = bound
        self.opt = AdamAscent(size, self.eta) if adam else None

    def step(self, signal: np.ndarray) -> None:
        lam = self.lam
        step = lam + self.eta * signal if self.opt is None else self.opt.step(lam, signal)
        self.lam = project_lambda(step, self.bound)


class Adversary(Protocol):
    """What the constraints ψ_c are measured against. ``state`` is the game's view of the current
    scores (:meth:`Game.state`); ``lam`` the current multipliers."""

    def respond(self, state: Any, lam: np.ndarray) -> None:
        """Answer the current iterate before θ moves."""

    def add_theta_coef(self, coef: np.ndarray, state: Any, lam: np.ndarray) -> None:
        """Add Σ_c λ_c ∇_θ ψ_c (as row coefficients) to ``coef`` in place."""

    def constraints(self, state: Any) -> np.ndarray:
        """ψ_c at ``state`` (> 0 violated)."""

    def move(self, t: int, state: Any, lam: np.ndarray) -> None:
        """Step ``t``'s move after λ's step."""

    def tables(self) -> list:
        """The adversary's current choice, as the recorder keeps it."""


class Game(Protocol):
    """The method's side of the game: its view of the scores, its loss and λ's signal."""

    def state(self, scores: np.ndarray) -> Any:
        """Everything the players read at ``scores`` (computed once per iterate)."""

    def loss_coef(self, state: Any) -> np.ndarray:
        """∇_θ loss as row coefficients (a new array: the adversary adds to it)."""

    def signal(self, state: Any, values: np.ndarray, theta: np.ndarray, tables: list) -> np.ndarray:
        """What λ ascends on, given the constraint ``values`` at ``state``."""


def descent_ascent(
    game: Game,
    theta: ThetaPlayer,
    lam: LambdaPlayer,
    adversary: Adversary,
    recorder: CandidateRecorder,
) -> None:
    """Run ``recorder.n_steps`` steps of the game; the players keep their final iterates."""
    constrained = len(lam.lam) > 0
    state = game.state(theta.scores())
    for t in range(1, recorder.n_steps + 1):
        adversary.respond(state, lam.lam)
        coef = game.loss_coef(state)
        adversary.add_theta_coef(coef, state, lam.lam)
        state = game.state(theta.step(coef))
        values = adversary.constraints(state) if constrained else np.zeros(0)
        if constrained:
            lam.step(game.signal(state, values, theta.theta, adversary.tables()))
        adversary.move(t, state, lam.lam)
        if recorder.due(t):
            recorder.add(t, theta.theta, state, values, adversary.tables())
