"""Metrics of a dataset (generated or reweighted rows; Celis et al. 2020): representation rate,
statistical rate of the labels, KL divergence to the real data."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fairengine.metrics.core import check_unit, group_means, min_max_ratio, prepare_rows

if TYPE_CHECKING:
    from fairengine.data.row_keys import RowCounts

#: Probability added to every point before the KL's normalisation (Celis et al.'s footnote 6).
SMOOTHING = 1e-7


def representation_rate(y_true, y_pred, groups, *, sample_weight=None) -> float:
    """Representation rate min_z P(Z=z) / max_z P(Z=z) (Celis et al. 2020 §2.2, Def. 2.1).

    Uses only ``groups`` and ``sample_weight``; ``y_true`` and ``y_pred`` are ignored.
    """
    rows = prepare_rows(None, None, groups, sample_weight)
    return min_max_ratio(np.bincount(rows.codes, weights=rows.weight, minlength=rows.n_groups))


def data_statistical_rate(y_true, y_pred, groups, *, sample_weight=None) -> float:
    """Statistical rate of the data's labels: min_z P(y = 1 | z) / max_z P(y = 1 | z) (Celis et
    al. 2020, Def. 2.2, on a dataset instead of a classifier).

    Uses ``y_true`` (0/1 labels, or probabilities of label 1), ``groups`` and ``sample_weight``;
    ``y_pred`` is ignored. 1.0 when no group has a positive label.
    """
    rows = prepare_rows(None, y_true, groups, sample_weight)
    check_unit("y_true", rows.y_pred)
    return min_max_ratio(group_means(rows.y_pred, rows))


def _sizes(codes: np.ndarray) -> np.ndarray:
    return codes.max(axis=0, initial=0) + 1 if codes.size else np.zeros(codes.shape[1], np.int64)


def kl_to_empirical(
    sample_codes: np.ndarray,
    data_codes: np.ndarray | RowCounts,
    smoothing: float = SMOOTHING,
    sizes: np.ndarray | None = None,
    distinct: tuple[np.ndarray, np.ndarray] | None = None,
) -> float:
    """KL of a dataset to the data: KL(P_synth || P_raw + ε), renormalised.

    P_synth is the empirical distribution of the samples and P_raw that of the data, both rows
    of level codes; ε goes to every point that occurs in either before normalising, so a sample
    off the data's support costs a finite log(1/ε) (design notes: docs/architecture.md,
    "Metrics").

    ``data_codes`` may be a :class:`~fairengine.data.row_keys.RowCounts` of the data, built
    once per split; ``sizes`` are the domain's (default: from the codes); ``distinct``: the
    samples' (distinct rows, counts) when already known (one dataset is scored against both
    splits).
    """
    from fairengine.data.row_keys import RowCounts, unique_rows  # lazy: pandas

    sample_codes = np.asarray(sample_codes)
    if sample_codes.dtype.kind not in "iu":
        sample_codes = sample_codes.astype(np.int64)
    if sizes is None:
        sizes = data_codes.sizes if isinstance(data_codes, RowCounts) else _sizes(sample_codes)
    if not isinstance(data_codes, RowCounts):
        data_codes = RowCounts(np.asarray(data_codes, dtype=np.int64), sizes)
    if distinct is None:
        distinct = unique_rows(sample_codes, sizes)[::2]
    sample_keys, sample_counts = distinct
    raw = data_codes.lookup(sample_keys)
    p = sample_counts / sample_counts.sum()
    support = data_codes.n_distinct + int(np.count_nonzero(raw == 0))
    log_norm = np.log1p(smoothing * support)
    log_raw = np.log(raw / data_codes.total + smoothing) - log_norm
    return float(max(np.sum(p * (np.log(p) - log_raw)), 0.0))
