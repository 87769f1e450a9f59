"""Evaluation as in the paper (Celis et al. 2020 §5): data rates, KL to the data, classifiers."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from fairengine import metrics
from fairengine.data import Task
from fairengine.data.row_keys import RowCounts, unique_rows
from fairengine.lru import LRU
from fairengine.methods.maxent.classifier import INPUT_DTYPE, classifier_scores, fit_classifier
from fairengine.methods.maxent.domain import Domain, readable_rows
from fairengine.metrics.dataset import kl_to_empirical


class RealData:
    """A real split as level codes, its encoded classifier inputs, labels and groups.

    ``with_protected`` adds Z to the classifier's inputs, as the paper's protocol does (§5: every
    non-label column); without it the inputs are the task's features, what the exported model
    takes. :meth:`with_z` gives the split with Z added, sharing its codes.
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

    def with_z(self) -> RealData:
        """The same split with Z among the classifier's inputs (no recoding: Z is binary and
        last, so its one coordinate is appended)."""
        iz = self.domain.index("protected")
        if iz in self.only:
            return self
        out = object.__new__(RealData)
        out.__dict__.update(self.__dict__)
        out.only = [*self.only, iz]
        out.X = np.column_stack([self.X, (self.z == 1).astype(np.uint8)])
        return out


def _classifier_data(
    codes: np.ndarray, domain: Domain, only: list[int], classifier: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, sample_weight) the downstream classifier is fitted on: the distinct (inputs, label)
    rows weighted by their counts, the same classifier as on every row (design notes)."""
    columns = [*only, domain.index("label")]
    rows, _, counts = unique_rows(codes[:, columns], domain.sizes[columns])
    X = domain.encode(rows[:, :-1], only, dtype=INPUT_DTYPE.get(classifier, float))
    return X, rows[:, -1], counts.astype(float)


def train_classifier(codes: np.ndarray, domain: Domain, classifier: str, only: list[int]) -> dict:
    """The downstream classifier fitted on a dataset's rows (level codes), its inputs the
    features ``only`` (a split's :attr:`RealData.only`); its arrays."""
    return fit_classifier(classifier, *_classifier_data(codes, domain, only, classifier))


def evaluate_dataset(
    codes: np.ndarray,
    domain: Domain,
    classifier: str,
    train: RealData,
    test: RealData,
) -> tuple[dict[str, float], dict]:
    """Paper metrics of one (generated or reweighted) dataset and the classifier trained on it.

    Returns the row (data RR and SR; classifier SR on the held-out rows from hard predictions, the
    definition, and ``clf_sr_soft`` from mean predicted probabilities, the paper's code (spec
    §7.6); accuracy on the held-out and the training rows; KL to the training and held-out data)
    and the classifier's arrays.
    """
    y, z = codes[:, domain.index("label")], codes[:, domain.index("protected")]
    params = train_classifier(codes, domain, classifier, test.only)
    rr = metrics.representation_rate(None, None, z)
    sr = metrics.data_statistical_rate(np.asarray(y, dtype=float), None, z)
    distinct = unique_rows(codes, train.counts.sizes)[::2]  # the dataset's rows, counted once
    test_score = classifier_scores(params, test.X)
    test_pred = (test_score >= 0.5).astype(float)
    train_pred = (classifier_scores(params, train.X) >= 0.5).astype(float)
    row = {
        "data_rr": rr,
        "data_sr": sr,
        "clf_sr": metrics.statistical_rate(None, test_pred, test.z),
        "clf_sr_soft": metrics.statistical_rate(None, test_score, test.z),
        "clf_accuracy": float(np.mean(test_pred == test.y)),
        "train_accuracy": float(np.mean(train_pred == train.y)),
        "kl_train": kl_to_empirical(codes, train.counts, distinct=distinct),
        "kl_test": kl_to_empirical(codes, test.counts, distinct=distinct),
    }
    return row, params


def evaluate_sets(
    draw: Callable[[int], np.ndarray],
    n_sets: int,
    domain: Domain,
    classifier: str,
    train: RealData,
    test: RealData,
) -> tuple[dict[str, float], dict[str, float]]:
    """Mean and standard deviation over ``n_sets`` datasets ``draw(k)`` of
    :func:`evaluate_dataset`'s row: the paper repeats the sampling and reports means (§5)."""
    rows = pd.DataFrame(
        [evaluate_dataset(draw(k), domain, classifier, train, test)[0] for k in range(n_sets)]
    )
    sd = rows.std(ddof=1) if n_sets > 1 else rows.iloc[0] * 0.0
    return rows.mean().to_dict(), sd.to_dict()


#: Coded splits of the last few (train, test, n_bins, feature set), shared by a sweep's points.
_SPLITS: LRU[tuple[Domain, list[str], RealData, RealData]] = LRU(2)


def coded_splits(
    train: Task, test: Task, n_bins: int, feature_set: str = "paper"
) -> tuple[Domain, list[str], RealData, RealData]:
    """The domain of ``train``, its identifier-like columns and both splits coded on it, cached
    per (train, test, n_bins, feature set) across the points of a sweep (deterministic: same
    numbers)."""
    from fairengine.methods.maxent.domain import domain_from_task, identifier_columns

    key = (train.fingerprint, test.fingerprint, n_bins, feature_set)
    if key in _SPLITS:
        return _SPLITS.get(key)
    dropped = identifier_columns(train)  # left out of the domain, as the encoder drops them
    domain = domain_from_task(train, n_bins, dropped=dropped, feature_set=feature_set)
    return _SPLITS.put(key, (domain, dropped, RealData(train, domain), RealData(test, domain)))


def raw_predictions(
    train: Task, test: Task, n_bins: int, classifier: str, feature_set: str = "paper"
) -> tuple[np.ndarray, np.ndarray]:
    """Hard predictions on train and test of the downstream classifier trained on the raw
    training rows with Z among its inputs — the paper's raw classifier, the method's
    unconstrained reference."""
    domain, _, real_train, real_test = coded_splits(train, test, n_bins, feature_set)
    ztrain, ztest = real_train.with_z(), real_test.with_z()
    params = train_classifier(real_train.codes, domain, classifier, ztrain.only)
    return tuple(
        (classifier_scores(params, real.X) >= 0.5).astype(float) for real in (ztrain, ztest)
    )  # type: ignore[return-value]
