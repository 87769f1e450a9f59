"""[EXT] Axis-aligned split candidates for Algorithm 4 (single-feature thresholds).

Design notes: ``docs/methods/balanced_filtering.md``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
