"""[EXT] Split candidates beyond the game's own split, for :func:`.tree.grow_tree`'s search.

Design notes: ``docs/methods/balanced_filtering.md``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fairengine.methods.balanced_filtering.axis import axis_candidates, top_candidates

if TYPE_CHECKING:
    from fairengine.methods.balanced_filtering.tree import Leaf, Problem, Round


def _feasible_cuts(
    problem: Problem, wl: np.ndarray, onehot_l: np.ndarray, scores: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The rows' order by decreasing score and the cuts of it feasible for Program (3)."""
    n, rates, alpha_eff = problem.n, problem.rates, problem.alpha_eff
    total = wl @ onehot_l
    mass = total.sum()
    order = np.argsort(-scores, kind="stable")
    sorted_scores = scores[order]
    counts1 = np.cumsum(wl[order, None] * onehot_l[order], axis=0)
    mass1 = counts1.sum(axis=1)
    mass0 = mass - mass1
    ok = (mass1 >= problem.min_mass * n) & (mass0 >= problem.min_mass * n)
    ok &= np.append(sorted_scores[1:] < sorted_scores[:-1], False)  # cut between distinct
    with np.errstate(divide="ignore", invalid="ignore"):
        dev1 = np.abs(counts1 / mass1[:, None] - rates).max(axis=1)
        dev0 = np.abs((total - counts1) / mass0[:, None] - rates).max(axis=1)
    ok &= (dev1 <= alpha_eff) & (dev0 <= alpha_eff)
    return sorted_scores, np.nonzero(ok)[0]


def threshold_candidates(
    problem: Problem, leaf: Leaf, coefs: np.ndarray, n_directions: int = 4
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """[EXT] Single-halfspace splits along the game's directions, every threshold considered."""
    n_cuts = problem.settings.n_cuts
    unique = np.unique(np.round(coefs, 12), axis=0)
    if len(unique) > n_directions:
        unique = unique[np.linspace(0, len(unique) - 1, n_directions).round().astype(int)]
    Xl, wl, onehot_l = leaf.Xl, leaf.wl, leaf.onehot_l
    out = []
    for coef in unique:
        scores = Xl @ coef
        sorted_scores, cuts = _feasible_cuts(problem, wl, onehot_l, scores)
        if len(cuts) == 0:
            continue
        if len(cuts) > n_cuts:
            cuts = cuts[np.unique(np.linspace(0, len(cuts) - 1, n_cuts).round().astype(int))]
        for i in cuts:
            intercept = -0.5 * (sorted_scores[i] + sorted_scores[i + 1])
            labels = (scores + intercept > 0).astype(float)
            out.append((coef[None, :], np.array([intercept]), labels))
    return out


def axis_split_candidates(
    problem: Problem, state: Round, leaf: Leaf, cache: dict
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """[EXT] The ``axis_splits`` best single-feature splits of a leaf as (e_c, -threshold, labels).

    ``cache`` maps a node to its candidates, which depend only on the leaf's weights.
    """
    Xl = leaf.Xl
    if leaf.node not in cache:
        cache[leaf.node] = axis_candidates(
            Xl,
            leaf.wl,
            leaf.onehot_l,
            problem.n,
            problem.rates,
            problem.alpha_eff,
            problem.min_mass,
        )
    n_best = problem.settings.axis_splits
    out = []
    for feature, threshold in top_candidates(cache[leaf.node], state.point, problem.target, n_best):
        coef = np.zeros((1, Xl.shape[1]))
        coef[0, feature] = 1.0
        labels = (Xl[:, feature] > threshold).astype(float)
        out.append((coef, np.array([-threshold]), labels))
    return out
