"""Algorithm 3: the splitting game for one leaf.

The learner best-responds with a cost-sensitive oracle to the Lagrangian costs; the auditor runs
projected gradient ascent on the 4K multipliers of the per-child disclosivity constraints. The
output is the uniform mixture of the learner's T halfspaces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairengine.solvers import Halfspace, PairedRegressionOracle, ProjectedGradientAscent
from fairengine.solvers.oracles import best_intercept


@dataclass
class SplitGame:
    """Program (3) for a leaf V in the homogeneous per-child form.

    Attributes
    ----------
    row : ndarray (K,)
        R(V), the leaf's row of A.
    rates : ndarray (K,)
        r, the global training base rates.
    cost : ndarray (K,)
        c_k = (U' - U)_k - Q*, Q* = <R(V), U' - U> - f ||U' - U||; [spec erratum] the paper's
        Lemma 4 prints + f (sign error); with the default f = 0 both agree.
    alpha_eff : float
        alpha - epsilon, the budget the constraints use (Algorithm 4).
    """

    row: np.ndarray
    rates: np.ndarray
    cost: np.ndarray
    alpha_eff: float

    def constraints(self, m1: np.ndarray) -> np.ndarray:
        """g = (g1p, g1m, g0p, g0m) <= 0: |R(V_b)_k - r_k| <= alpha_eff times the child mass."""
        m0 = self.row - m1
        big_m1, big_m0 = m1.sum(), 1.0 - m1.sum()
        hi, lo = self.rates + self.alpha_eff, self.rates - self.alpha_eff
        return np.concatenate(
            [m1 - hi * big_m1, lo * big_m1 - m1, m0 - hi * big_m0, lo * big_m0 - m0]
        )

    def unit_costs(self, lam: np.ndarray) -> np.ndarray:
        """s_k(lambda): the Lagrangian's per-unit cost of sending a group-k point to child 1."""
        k = len(self.row)
        l1p, l1m, l0p, l0m = lam[:k], lam[k : 2 * k], lam[2 * k : 3 * k], lam[3 * k :]
        dp, dm = l1p - l0p, l1m - l0m
        hi, lo = self.rates + self.alpha_eff, self.rates - self.alpha_eff
        return self.cost + dp - dm - dp @ hi + dm @ lo


def split_cost(
    row: np.ndarray, point: np.ndarray, target: np.ndarray, f: float = 0.0
) -> np.ndarray:
    """c = (U' - U) - Q* with the corrected Q* = <R(V), U' - U> - f ||U' - U|| (Lemma 4)."""
    direction = point - target
    q_star = float(row @ direction) - f * float(np.linalg.norm(direction))
    return direction - q_star


def play_split_game(
    X: np.ndarray,
    z: np.ndarray,
    weight: np.ndarray,
    game: SplitGame,
    *,
    n_rounds: int = 300,
    lambda_max: float = 100.0,
    step: float = 1.0,
    refit_intercept: bool = False,
) -> tuple[list[Halfspace], np.ndarray]:
    """Run Algorithm 3 on a leaf; return the T halfspaces and pbar(x_j) = mean_t h_t(x_j).

    Parameters
    ----------
    X, z, weight : the leaf's points (encoded features), groups and leaf weights w_V(x_j) > 0.
    n_rounds : int
        T, game rounds (the paper's T is impractical, pitfall P6).
    lambda_max : float
        Radius of the auditor's multiplier set (W-normalised units).
    step : float
        eta0, the auditor's base step (eta_t = eta0 / sqrt(t)).
    refit_intercept : bool
        [EXT] Keep the regression's direction but choose the halfspace's threshold exactly for
        the round's CSC costs (:func:`~fairengine.solvers.oracles.best_intercept`). The plain
        least-squares threshold is a weak best response: on Bank (job, K = 12) it is already
        feasible at lambda = 0, so the auditor never moves, every round returns the same mild
        split (disclosivity 0.12 of an alpha = 0.2 budget) and the tree stalls at 3 leaves.
        Off by default (the paper's oracle); :func:`grow_tree` uses it in its tier-1 search.
    """
    k = len(game.row)
    oracle = PairedRegressionOracle().fit(X, weight, z, k)
    auditor = ProjectedGradientAscent(4 * k, step=step, radius=lambda_max)
    total = weight.sum()
    hypotheses: list[Halfspace] = []
    p_sum = np.zeros(len(X))
    for _ in range(int(n_rounds)):
        unit = game.unit_costs(auditor.lambda_)
        h = oracle.best_response_grouped(unit)
        if refit_intercept:
            scores = X @ h.coef
            h = Halfspace(h.coef, best_intercept(scores, weight, unit[z]))
            p = (scores + h.intercept > 0.0).astype(float)
        else:
            p = h.predict(X)
        m1 = np.bincount(z, weights=weight * p, minlength=k) / total
        auditor.update(game.constraints(m1))
        hypotheses.append(h)
        p_sum += p
    return hypotheses, p_sum / max(len(hypotheses), 1)
