"""Constraints as objects for the exponentiated-gradient game (fairlearn's ``Moment`` idea).

Design notes: docs/architecture.md, "Constraints of the exponentiated-gradient game".
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairengine.solvers.expgrad import Response


class Constraint(ABC):
    """Base class of a constraint family g(h) ≤ 0: subclasses implement :meth:`load`,
    :attr:`dim`, :attr:`names`, :attr:`bound`, :meth:`gamma` and :meth:`signed_weights`."""

    @abstractmethod
    def load(self, *args: Any, **kwargs: Any) -> Constraint:
        """Store the rows the constraint is evaluated on; returns ``self``."""

    @property
    @abstractmethod
    def dim(self) -> int:
        """Number of constraints g_j."""

    @property
    @abstractmethod
    def names(self) -> list[str]:
        """One readable name per g_j."""

    @property
    @abstractmethod
    def bound(self) -> np.ndarray:
        """ε_j per constraint, shape ``(dim,)``."""

    @abstractmethod
    def gamma(self, predictions: np.ndarray) -> np.ndarray:
        """The moments γ(h) from a predictor's predictions on the loaded rows."""

    def signed(self, gamma: np.ndarray) -> np.ndarray:
        """γ → the constraint rows before slack (default: one-sided, γ itself)."""
        return np.asarray(gamma, float)

    def values(self, predictions: np.ndarray) -> np.ndarray:
        """g(h) = signed(γ(h)) − ε, shape ``(dim,)``; feasible iff every entry ≤ 0."""
        return self.signed(self.gamma(predictions)) - self.bound

    @abstractmethod
    def signed_weights(self, lam: np.ndarray) -> np.ndarray:
        """The λ-dependent part of the Lagrangian per row, for the learner's best response."""

    def project(self, lam: np.ndarray) -> np.ndarray:
        """λ unchanged (override with a map that never lowers L(Q, ·) for any Q)."""
        return lam


class TwoSidedConstraint(Constraint):
    """|γ_k| ≤ ε_k as the pair γ_k − ε_k ≤ 0 (λ⁺, first half) and −γ_k − ε_k ≤ 0 (λ⁻);
    subclasses give :meth:`gamma` (``dim // 2`` entries), :attr:`eps` and :meth:`moment_names`."""

    eps: np.ndarray

    @abstractmethod
    def moment_names(self) -> list[str]:
        """One readable name per γ_k."""

    @property
    def names(self) -> list[str]:
        base = self.moment_names()
        return [f"+{n}" for n in base] + [f"-{n}" for n in base]

    @property
    def bound(self) -> np.ndarray:
        return np.concatenate([self.eps, self.eps])

    def signed(self, gamma: np.ndarray) -> np.ndarray:
        gamma = np.asarray(gamma, float)
        return np.concatenate([gamma, -gamma])

    def net(self, lam: np.ndarray) -> np.ndarray:
        """λ⁺ − λ⁻, one entry per γ_k."""
        lam = np.asarray(lam, float)
        half = len(lam) // 2
        return lam[:half] - lam[half:]


@dataclass
class Reduction:
    """``best_response(λ)`` for :func:`~fairengine.solvers.solve_game` from a constraint object.

    Attributes
    ----------
    constraint : Constraint
        Loaded on the training rows.
    learner : callable
        signed weights (``constraint.signed_weights(λ)``) → a fitted predictor (the payload);
        it adds them to its own costs (the objective's part of the Lagrangian).
    predict : callable
        payload → predictions on the loaded rows (what ``constraint.values`` reads).
    objective : callable
        predictions → the objective of the game (e.g. error or mean loss).
    """

    constraint: Constraint
    learner: Callable[[np.ndarray], Any]
    predict: Callable[[Any], np.ndarray]
    objective: Callable[[np.ndarray], float]

    def respond(self, payload: Any) -> Response:
        """The :class:`Response` (objective, g, payload) of a fitted predictor."""
        predictions = self.predict(payload)
        return Response(
            float(self.objective(predictions)), self.constraint.values(predictions), payload
        )

    def __call__(self, lam: np.ndarray) -> Response:
        return self.respond(self.learner(self.constraint.signed_weights(lam)))
