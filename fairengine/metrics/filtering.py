"""Balanced filtering's metrics (Deng et al. 2023): disclosivity of a proxy, imbalance of a
sample, acceptance rate of a filter."""

from __future__ import annotations

import numpy as np

from fairengine.metrics.core import as_column, check_unit, prepare_rows

# The matrix-level primitives below are the single definitions; the metrics wrap them and
# ``fairengine.methods.balanced_filtering`` re-exports them under the contract names.


def conditional_distribution_matrix(
    leaves, z, n_groups: int, *, n_leaves: int | None = None, sample_weight=None
) -> tuple[np.ndarray, np.ndarray]:
    """A[j, k] = P(z = k | proxy = j) and r_hat[j] = P(proxy = j) (Deng et al. 2023 §3, Alg. 1).

    ``leaves`` and ``z`` are integer codes per row; ``sample_weight`` gives soft memberships (a
    randomised proxy contributes one weighted row per leaf). A leaf without mass gets r_hat = 0
    and the overall base rates as its row, so it never adds disclosivity.
    """
    leaves = np.asarray(leaves, dtype=np.int64).ravel()
    z = np.asarray(z, dtype=np.int64).ravel()
    if leaves.shape != z.shape:
        raise ValueError("leaves and z need one value per row")
    w = (
        np.ones(len(z))
        if sample_weight is None
        else as_column("sample_weight", sample_weight, None)
    )
    n_leaves = int(leaves.max()) + 1 if n_leaves is None else int(n_leaves)
    joint = np.bincount(leaves * n_groups + z, weights=w, minlength=n_leaves * n_groups)
    joint = joint.reshape(n_leaves, n_groups)
    total = joint.sum()
    if total <= 0:
        raise ValueError("sample_weight must have a positive sum")
    mass = joint.sum(axis=1)
    base = joint.sum(axis=0) / total
    A = np.where(mass[:, None] > 0, joint / np.maximum(mass, 1e-300)[:, None], base)
    return A, mass / total


def matrix_disclosivity(A, base_rates, mass=None) -> float:
    """max_{j,k} |A[j, k] - r_k| over leaves with mass > 0 (Deng et al. 2023 Def. 5)."""
    A = np.atleast_2d(np.asarray(A, dtype=float))
    if mass is not None:
        A = A[np.asarray(mass, dtype=float) > 0]
    if A.size == 0:
        return 0.0
    return float(np.max(np.abs(A - np.asarray(base_rates, dtype=float)[None, :])))


#: A group with fewer rows than this in a sample (the expected count when the rows carry their
#: acceptance probabilities) is missing from it: the sample says nothing about that group.
MISSING_GROUP_ROWS = 0.5


def max_imbalance(target) -> float:
    """The largest imbalance any distribution can have: max_k ||e_k - tau||_2 (all mass on one
    group), sqrt(1 - 1/K) for the uniform target."""
    tau = np.asarray(target, dtype=float).ravel()
    return float(np.sqrt(np.max((1.0 - tau) ** 2 - tau**2) + np.sum(tau**2)))


def distribution_imbalance(proportions, target=None) -> float:
    """||p - tau||_2, tau = uniform 1/K by default (Deng et al. 2023 Def. 2; [spec erratum] 1/K not
    1/k).

    A group the target asks for (tau_k > 0) that is missing from the sample (p_k = 0) makes the
    imbalance maximal (:func:`max_imbalance`): a balanced-looking distance must not hide a group
    that vanished, and ||p - tau|| alone can be small with one group at 0.
    """
    p = np.asarray(proportions, dtype=float).ravel()
    tau = np.full(p.size, 1.0 / p.size) if target is None else np.asarray(target, float).ravel()
    if tau.shape != p.shape:
        raise ValueError(f"target has {tau.size} entries but there are {p.size} groups")
    if np.any((p <= 0) & (tau > 0)):
        return max_imbalance(tau)
    return float(np.linalg.norm(p - tau))


def group_counts(groups, *, sample_weight=None) -> np.ndarray:
    """Rows of each group (sorted labels) in a sample, weighted by ``sample_weight`` (each row's
    acceptance probability gives the expected count of the filtered sample)."""
    rows = prepare_rows(None, None, groups)
    w = rows.weight if sample_weight is None else as_column("sample_weight", sample_weight, None)
    if w.size != rows.codes.size or (w < 0).any() or w.sum() <= 0:
        raise ValueError("sample_weight must be one non-negative value per row, positive sum")
    return np.bincount(rows.codes, weights=w, minlength=rows.n_groups)


def disclosivity(y_true, y_pred, groups, *, sample_weight=None) -> float:
    """Disclosivity of a proxy: max_{j,k} |P(z=k | proxy=j) - P(z=k)| (Deng et al. 2023 Def. 5).

    ``y_pred`` is each row's proxy value (leaf id), ``groups`` its sensitive group z; ``y_true`` is
    ignored. A randomised proxy passes one row per (row, leaf) with weight P(leaf | x).
    """
    import pandas as pd  # lazy: metric names load without pandas

    rows = prepare_rows(None, y_pred, groups, sample_weight)
    leaves = pd.factorize(rows.y_pred, sort=True)[0]
    A, mass = conditional_distribution_matrix(
        leaves, rows.codes, rows.n_groups, sample_weight=rows.weight
    )
    return matrix_disclosivity(A, mass @ A, mass)


def imbalance(y_true, y_pred, groups, *, sample_weight=None, target=None) -> float:
    """L2 distance of the (weighted) group proportions to ``target`` (Deng et al. 2023 Def. 2).

    ``sample_weight`` = each row's acceptance probability gives the imbalance of the filtered
    sample (weights are expected row counts); without it, of the data itself. ``target`` is a
    distribution over the sorted group labels (uniform by default). Every group of ``groups``
    counts: one with fewer than :data:`MISSING_GROUP_ROWS` (expected) rows is missing, and a
    missing group makes the imbalance maximal (:func:`distribution_imbalance`).
    """
    return count_imbalance(group_counts(groups, sample_weight=sample_weight), target)


def count_imbalance(counts, target=None) -> float:
    """:func:`distribution_imbalance` of a sample given its (expected) rows per group: a group
    with fewer than :data:`MISSING_GROUP_ROWS` rows is missing, which makes it maximal."""
    counts = np.asarray(counts, dtype=float).ravel()
    counts = np.where(counts < MISSING_GROUP_ROWS, 0.0, counts)
    if counts.sum() <= 0:
        return max_imbalance(np.full(counts.size, 1.0 / counts.size) if target is None else target)
    return distribution_imbalance(counts / counts.sum(), target)


def acceptance_rate(y_true, y_pred, groups=None, *, sample_weight=None) -> float:
    """Share of candidates kept: weighted mean of the acceptance probabilities (or 0/1 flags)
    ``y_pred`` (Deng et al. 2023 Alg. 1: sum(q) / C in expectation)."""
    rows = prepare_rows(None, y_pred, groups, sample_weight)
    check_unit("y_pred", rows.y_pred)
    return float(np.average(rows.y_pred, weights=rows.weight))


def n_leaves(proxy) -> float:
    """Leaves of a fitted non-disclosive proxy tree (its ``n_leaves``): the number of proxy values
    a filter can tell apart, as a float like every reported metric."""
    return float(proxy.n_leaves)
