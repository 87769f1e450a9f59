"""Weighted cost-sensitive classification (CSC) oracles: h in argmin_h sum_j w_j [h(x_j) c_j^1 +
(1 - h(x_j)) c_j^0] (Deng et al. 2023 Def. 18), given ``weight`` w and ``cost_diff`` c^1 - c^0
(the rest is a constant).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairengine.solvers.least_squares import LeastSquares


@dataclass(frozen=True)
class Halfspace:
    """A linear split h(x) = 1[x . coef + intercept > 0].

    Attributes
    ----------
    coef : ndarray of shape (d,)
    intercept : float
    """

    coef: np.ndarray
    intercept: float

    def predict(self, X: np.ndarray) -> np.ndarray:
        """0/1 labels of the rows of ``X``."""
        return (np.asarray(X, float) @ self.coef + self.intercept > 0.0).astype(float)


def best_intercept(
    scores: np.ndarray,
    weight: np.ndarray,
    cost_diff: np.ndarray,
    order: np.ndarray | None = None,
) -> float:
    """Exact CSC over thresholds of a fixed score: the b minimising sum_j w_j d_j 1[s_j + b > 0].

    The cheapest prefix of the highest scores (tied scores kept or dropped together), the
    threshold halfway between the last kept and the first dropped score; ``order`` may pass the
    scores' descending order (ties in any order) when the caller has it.

    Examples
    --------
    >>> best_intercept(np.array([0.0, 1.0, 2.0, 3.0]), np.ones(4), np.array([1.0, 2.0, -1.0, -2.0]))
    -1.5
    """
    scores = np.asarray(scores, float)
    if scores.size == 0:
        return 0.0
    if order is None:
        order = np.argsort(-scores, kind="stable")
    sorted_scores = scores[order]
    cumulative = np.cumsum((np.asarray(weight, float) * np.asarray(cost_diff, float))[order])
    # a cut after position i is allowed only between distinct scores (and after the last one)
    allowed = np.append(sorted_scores[1:] < sorted_scores[:-1], True)
    candidates = np.where(allowed, cumulative, np.inf)
    i = int(np.argmin(candidates))
    if candidates[i] >= 0.0:  # labelling nobody 1 is at least as cheap
        return float(-(sorted_scores[0] + 1.0))
    if i == len(scores) - 1:
        return float(-(sorted_scores[-1] - 1.0))
    return float(-0.5 * (sorted_scores[i] + sorted_scores[i + 1]))


class PairedRegressionOracle:
    """The paper's paired regression classifier (Deng et al. 2023 Def. 14), weighted.

    h(x) = 1[x . beta + b < 0], beta, b the weighted least-squares regression of the cost
    difference d_j on x (one solve instead of the paired form's two). The Gram matrix is
    factorised once in :meth:`fit`, so each best response is one triangular solve;
    :meth:`best_response_grouped` takes per-category costs for an O(d K) right-hand side.

    Parameters
    ----------
    ridge : float
        Tikhonov term added to the Gram diagonal (relative to its mean), for collinear one-hot
        columns.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> oracle = PairedRegressionOracle().fit(X, np.ones(4))
    >>> oracle.best_response(np.array([1.0, 1.0, -1.0, -1.0])).predict(X).tolist()
    [0.0, 0.0, 1.0, 1.0]
    """

    def __init__(self, ridge: float = 1e-6) -> None:
        self.ridge = ridge

    def fit(
        self,
        X: np.ndarray,
        weight: np.ndarray,
        categories: np.ndarray | None = None,
        n_categories: int | None = None,
    ) -> PairedRegressionOracle:
        """Factorise the weighted Gram matrix of [X, 1] (and category moments, if given)."""
        self.weight_ = np.asarray(weight, float)
        self.least_squares_ = LeastSquares(X, ridge=self.ridge)
        self.design_weighted_ = self.least_squares_.weighted_design(self.weight_)
        if categories is not None:
            k = int(n_categories if n_categories is not None else np.max(categories) + 1)
            onehot = np.eye(k)[np.asarray(categories, int)]
            self.moments_ = self.design_weighted_.T @ onehot  # (d + 1, K): X^T diag(w) 1[z=k]
        return self

    def _solve(self, rhs: np.ndarray) -> Halfspace:
        beta = self.least_squares_.solve(rhs, self.weight_)
        # label 1 where the predicted cost difference is negative
        return Halfspace(-beta[:-1], float(-beta[-1]))

    def best_response(self, cost_diff: np.ndarray) -> Halfspace:
        """The halfspace for per-unit cost differences ``cost_diff`` (one per fitted row)."""
        return self._solve(self.design_weighted_.T @ np.asarray(cost_diff, float))

    def best_response_grouped(self, category_cost: np.ndarray) -> Halfspace:
        """Fast path: the cost difference of row j is ``category_cost[categories[j]]``."""
        return self._solve(self.moments_ @ np.asarray(category_cost, float))
