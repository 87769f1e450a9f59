"""Evaluation as in the paper (seed 001 §5, spec §4.4): data rates, KL to the data, classifiers."""

from __future__ import annotations

import numpy as np

from fairengine import metrics
from fairengine.data import Task
from fairengine.methods.maxent.classifier import INPUT_DTYPE, classifier_scores, fit_classifier
from fairengine.methods.maxent.domain import Domain, readable_rows
from fairengine.methods.maxent.keys import RowCounts, unique_rows


def kl_to_empirical(
    sample_codes: np.ndarray,
    data_codes: np.ndarray | RowCounts,
    log_domain_size: float,
    smoothing: float = 1e-7,
    sizes: np.ndarray | None = None,
    distinct: tuple[np.ndarray, np.ndarray] | None = None,
) -> float:
    """The paper's "KL-div w.r.t. raw data": KL(P_synth || P_raw + ε), renormalised (spec §4.4).

    P_synth is the empirical distribution of the samples and P_raw that of the data, with ε added
    to every point of Omega before normalising (footnote 6; ``scipy.stats.entropy`` in the code).
    Only points in the samples' support contribute, so Omega is never enumerated: the smoothed
    P_raw(α) = (P_raw(α) + ε) / (1 + ε |Omega|), with |Omega| entering through its logarithm.

    ``data_codes`` may be a :class:`~fairengine.methods.maxent.keys.RowCounts` of the data, built
    once per split (:class:`RealData`); ``sizes`` are the domain's (default: from the codes);
    ``distinct``: the samples' (distinct rows, counts) when already known (one dataset is scored
    against both splits).
    """
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
    log_norm = np.logaddexp(0.0, np.log(smoothing) + log_domain_size)
    log_raw = np.log(raw / data_codes.total + smoothing) - log_norm
    return float(np.sum(p * (np.log(p) - log_raw)))


def _sizes(codes: np.ndarray) -> np.ndarray:
    return codes.max(axis=0, initial=0) + 1 if codes.size else np.zeros(codes.shape[1], np.int64)


def data_rates(
    z: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None
) -> tuple[float, float]:
    """(representation rate, statistical rate for y = 1) of a (weighted) dataset (Defs. 2.1-2.2)."""
    rr = metrics.representation_rate(None, None, z, sample_weight=weights)
    sr = metrics.statistical_rate(None, np.asarray(y, dtype=float), z, sample_weight=weights)
    return float(rr), float(sr)


class RealData:
    """A real split as level codes, its encoded classifier inputs, labels and groups.

    ``with_protected`` adds Z to the classifier's inputs, as the paper's protocol does (§5); the
    method leaves it out so that its exported model takes a task's feature columns only.
    """

    def __init__(self, task: Task, domain: Domain, with_protected: bool = False) -> None:
        self.domain = domain
        self.codes = domain.codes(readable_rows(task, domain))
        only = domain.model_features + ([domain.index("protected")] if with_protected else [])
        self.only = only
        # uint8: exact for 0/1 and 1 byte a coordinate; scored a block of rows at a time
        self.X = domain.encode(self.codes[:, only], only, dtype=np.uint8)
        self.y = self.codes[:, domain.index("label")]
        self.z = self.codes[:, domain.index("protected")]
        self.counts = RowCounts(self.codes, domain.sizes)  # the KL's data side, once per split


def _classifier_data(
    codes: np.ndarray, domain: Domain, only: list[int], classifier: str,
    weights: np.ndarray | None, inputs: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:  # fmt: skip
    """(X, y, sample_weight) the downstream classifier is fitted on.

    An unweighted tree is fitted on the distinct (inputs, label) rows weighted by their counts
    (issue 18): the same tree as on every row — CART's impurities are sums of integer weights,
    exact in float64, its candidate splits lie between distinct values and constant features are
    the same in every node — at the cost of the distinct rows (16x Adult, resampled: 547k
    training rows, 30k distinct), so the raw baseline's tree no longer grows as n log n.
    """
    dtype = INPUT_DTYPE.get(classifier, float)
    iy = domain.index("label")
    if classifier == "tree" and weights is None:
        columns = [*only, iy]
        rows, _, counts = unique_rows(codes[:, columns], domain.sizes[columns])
        X = domain.encode(rows[:, :-1], only, dtype=dtype)  # noqa: N806
        return X, rows[:, -1], counts.astype(float)
    if inputs is None:  # the classifier's inputs: the model features, reference-coded
        X = domain.encode(codes[:, only], only, dtype=dtype)  # noqa: N806
    else:
        X = np.asarray(inputs, dtype=dtype)  # noqa: N806
    return X, codes[:, iy], weights


def evaluate_dataset(
    codes: np.ndarray, domain: Domain, classifier: str, train: RealData, test: RealData,
    weights: np.ndarray | None = None, inputs: np.ndarray | None = None,
) -> tuple[dict[str, float], dict]:  # fmt: skip
    """Paper metrics of one (generated or reweighted) dataset and the classifier trained on it.

    Returns the row (data RR and SR; classifier SR on the held-out rows from hard predictions, the
    definition, and ``clf_sr_soft`` from mean predicted probabilities, the paper's code (spec
    §7.6); accuracy on the held-out and the training rows; KL to the training and held-out data)
    and the classifier's arrays.
    ``inputs``: the classifier's inputs for ``codes`` when a split already holds them (the raw
    rows: ``train.X``), instead of encoding the rows again.
    """
    only = test.only
    y, z = codes[:, domain.index("label")], codes[:, domain.index("protected")]
    params = fit_classifier(classifier, *_classifier_data(codes, domain, only, classifier,
                                                          weights, inputs))  # fmt: skip
    rr, sr = data_rates(z, y, weights)
    distinct = unique_rows(codes, train.counts.sizes)[::2]  # the dataset's rows, counted once
    test_score = classifier_scores(params, test.X)
    test_pred = (test_score >= 0.5).astype(float)
    train_pred = (classifier_scores(params, train.X) >= 0.5).astype(float)
    row = {
        "data_rr": rr,
        "data_sr": sr,
        "clf_sr": data_rates(test.z, test_pred)[1],
        "clf_sr_soft": data_rates(test.z, test_score)[1],
        "clf_accuracy": float(np.mean(test_pred == test.y)),
        "train_accuracy": float(np.mean(train_pred == train.y)),
        "kl_train": kl_to_empirical(codes, train.counts, domain.log_size, distinct=distinct),
        "kl_test": kl_to_empirical(codes, test.counts, domain.log_size, distinct=distinct),
    }
    return row, params
