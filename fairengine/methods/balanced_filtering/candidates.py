"""[EXT] Split candidates beyond the game's own split, for :func:`.tree.grow_tree`'s search:
thresholds along the game's directions and single-feature (axis-aligned) thresholds.

Design notes: ``docs/methods/balanced_filtering.md``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from fairengine.methods.balanced_filtering.tree import Leaf, Problem, Round


@dataclass
class AxisCandidates:
    """Feasible single-feature splits of one leaf: x[:, feature] > threshold is child 1."""

    feature: np.ndarray  # (C,)
    threshold: np.ndarray  # (C,)
    rows: np.ndarray  # (C, 2, K): rows of A of child 0 and child 1


def axis_candidates(
    X: np.ndarray,
    w: np.ndarray,
    onehot: np.ndarray,
    n: int,
    rates: np.ndarray,
    alpha_eff: float,
    min_mass: float,
    n_thresholds: int = 16,
) -> AxisCandidates:
    """Every alpha_eff-disclosive single-feature split of a leaf with both children >= min_mass.

    ``X``, ``w`` and ``onehot`` are the leaf's live rows (encoded features, leaf weights, one-hot
    groups); masses are shares of all ``n`` training rows. Numeric columns are cut at up to
    ``n_thresholds`` weighted quantiles, binary columns at their midpoint.
    """
    total = w @ onehot
    mass = total.sum()
    feats, thrs, rows = [], [], []
    for c in range(X.shape[1]):
        col = X[:, c]
        values = np.unique(col)
        if len(values) < 2:
            continue
        if len(values) > n_thresholds + 1:
            order = np.argsort(col, kind="stable")
            cum = np.cumsum(w[order])
            qs = np.searchsorted(cum, cum[-1] * np.linspace(0, 1, n_thresholds + 2)[1:-1])
            cut_values = np.unique(col[order][np.clip(qs, 0, len(col) - 1)])
            idx = np.searchsorted(values, cut_values)
            idx = idx[idx < len(values) - 1]
            cuts = 0.5 * (values[idx] + values[idx + 1])
        else:
            cuts = 0.5 * (values[:-1] + values[1:])
        if len(cuts) == 0:
            continue
        side = col[:, None] > cuts[None, :]  # (m, cuts)
        counts1 = (side * w[:, None]).T @ onehot  # (cuts, K)
        counts0 = total - counts1
        m1, m0 = counts1.sum(axis=1), counts0.sum(axis=1)
        ok = (m1 >= min_mass * n) & (m0 >= min_mass * n) & (m1 < mass) & (m0 < mass)
        if not ok.any():
            continue
        r1 = counts1[ok] / m1[ok, None]
        r0 = counts0[ok] / m0[ok, None]
        dev = np.maximum(np.abs(r1 - rates).max(axis=1), np.abs(r0 - rates).max(axis=1))
        keep = dev <= alpha_eff + 1e-12
        if not keep.any():
            continue
        feats.append(np.full(int(keep.sum()), c))
        thrs.append(cuts[ok][keep])
        rows.append(np.stack([r0[keep], r1[keep]], axis=1))
    k = onehot.shape[1]
    if not feats:
        return AxisCandidates(np.zeros(0, int), np.zeros(0), np.zeros((0, 2, k)))
    return AxisCandidates(np.concatenate(feats), np.concatenate(thrs), np.concatenate(rows))


def segment_bound(rows: np.ndarray, point: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Distance from U to the segment [U', p] for each candidate child row p (C, 2, K) -> (C,).

    Adding p to the hull's rows keeps U' in it, so this is an upper bound on the new hull
    distance (the best of the two children is taken).
    """
    d = rows - point  # (C, 2, K)
    u = target - point
    norm2 = np.maximum((d * d).sum(axis=-1), 1e-18)
    t = np.clip((d @ u) / norm2, 0.0, 1.0)
    gap = u - t[..., None] * d
    return np.sqrt((gap * gap).sum(axis=-1)).min(axis=1)


def top_candidates(
    cands: AxisCandidates, point: np.ndarray, target: np.ndarray, n_best: int
) -> list[tuple[int, float]]:
    """(feature, threshold) of the ``n_best`` candidates with the smallest :func:`segment_bound`."""
    if len(cands.feature) == 0:
        return []
    bound = segment_bound(cands.rows, point, target)
    best = np.argsort(bound, kind="stable")[:n_best]
    return [(int(cands.feature[i]), float(cands.threshold[i])) for i in best]


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
