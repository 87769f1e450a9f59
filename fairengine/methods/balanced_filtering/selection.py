"""[EXT] The generalising protocol: leaf size and stopping chosen on held-out training rows.

Design notes: ``docs/methods/balanced_filtering.md``."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from fairengine import metrics
from fairengine.data.split import held_out_rows
from fairengine.methods.balanced_filtering.definitions import (
    FEW_GROUP_ROWS,
    conditional_distribution_matrix,
)
from fairengine.methods.balanced_filtering.oblique import node_weights
from fairengine.methods.balanced_filtering.sampling import sampling_probabilities
from fairengine.methods.balanced_filtering.tree import GrowthSettings, grow_tree

#: share of the training rows held out to choose the leaf floor and the number of leaves
VALIDATION_SHARE = 0.3
#: smallest-leaf shares of the growing rows tried (the knobs' own floor is a lower bound)
FLOOR_GRID = (0.005, 0.01, 0.02)
#: held-out imbalances this close to the best count as ties (then fewer leaves, larger floor)
SELECTION_TOL = 0.01


def prefix_leaves(children: np.ndarray, n_splits: int) -> np.ndarray:
    """Node ids of the leaves of the tree after its first ``n_splits`` splits (nodes are added
    two per split, in split order, so that tree holds nodes 0 .. 2 n_splits)."""
    last = 2 * n_splits
    nodes = np.arange(last + 1)
    return nodes[(children[nodes, 0] < 0) | (children[nodes, 0] > last)]


def prefix_scores(
    X: np.ndarray,
    z: np.ndarray,
    n_groups: int,
    settings: GrowthSettings,
    target: np.ndarray,
    rows: tuple[np.ndarray, np.ndarray],
    max_yield: bool,
) -> list[tuple[float, int]]:
    """(held-out imbalance, number of leaves) of every prefix of the tree grown on ``rows[0]``."""
    grow, held = rows
    tree, _, _ = grow_tree(X[grow], z[grow], n_groups, settings, target)
    arrays = tree.arrays()
    fit_nodes, held_nodes = node_weights(arrays, X[grow]), node_weights(arrays, X[held])
    n_splits = int((arrays["children"][:, 0] >= 0).sum())
    # a group too small to have a held-out row cannot be judged there: score the others
    present = np.bincount(z[held], minlength=n_groups) > 0
    tau_present = target[present] / target[present].sum()
    out = []
    for k in range(n_splits + 1):
        leaves = prefix_leaves(arrays["children"], k)
        w = fit_nodes[:, leaves]
        r_idx, l_idx = np.nonzero(w > 0)
        A, r_hat = conditional_distribution_matrix(
            l_idx, z[grow][r_idx], n_groups, n_leaves=len(leaves), sample_weight=w[r_idx, l_idx]
        )
        _, rho = sampling_probabilities(A, r_hat, target, settings.relaxed, max_yield=max_yield)
        pi = np.clip(held_nodes[:, leaves] @ rho, 0.0, 1.0)
        counts = np.bincount(z[held], weights=pi, minlength=n_groups)[present]
        if counts.min() < FEW_GROUP_ROWS:  # a group too thin to show balance: as if missing
            value = metrics.max_imbalance(tau_present)
        else:
            value = metrics.count_imbalance(counts, tau_present)
        out.append((value, len(leaves)))
    return out


def select_growth(
    X: np.ndarray,
    z: np.ndarray,
    n_groups: int,
    settings: GrowthSettings,
    target: np.ndarray,
    *,
    max_yield: bool = True,
    seed: int = 0,
) -> tuple[GrowthSettings, dict]:
    """The settings of the generalising protocol (leaf floor, ``max_leaves``) and a record of
    the choice (``floor``, ``n_leaves``, ``held_out_imbalance``, the scores per floor)."""
    rows = held_out_rows(z, VALIDATION_SHARE, seed)
    scored = []  # (value, n_leaves, -floor)
    per_floor = {}
    for floor in FLOOR_GRID:
        trial = replace(settings, min_leaf_mass=max(settings.min_leaf_mass, floor))
        scores = prefix_scores(X, z, n_groups, trial, target, rows, max_yield)
        per_floor[floor] = [round(v, 4) for v, _ in scores]
        scored += [(v, n, -floor) for v, n in scores]
    best = min(v for v, _, _ in scored)
    value, n_leaves, neg_floor = min(
        (s for s in scored if s[0] <= best + SELECTION_TOL), key=lambda s: (s[1], s[2])
    )
    floor = -neg_floor
    chosen = replace(
        settings,
        min_leaf_mass=max(settings.min_leaf_mass, floor),
        max_leaves=min(settings.max_leaves, n_leaves),
    )
    record = {
        "floor": floor,
        "n_leaves": n_leaves,
        "held_out_imbalance": value,
        "held_out_rows": len(rows[1]),
        "scores": per_floor,
    }
    return chosen, record
