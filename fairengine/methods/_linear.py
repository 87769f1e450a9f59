"""The logistic-regression learner shared by the reference methods."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from fairengine.data import Task
from fairengine.data.encoding import FeatureEncoder
from fairengine.methods.fitted import fitted_once

__all__ = ["MAX_ITER", "encode_train", "fitted_logistic", "logistic_regression"]

MAX_ITER = 1000


class _SingleThreadLogisticRegression(LogisticRegression):
    """Logistic regression fitted with single-threaded BLAS.

    On the engine's problem sizes (tens of thousands of rows, ~100 columns) multi-threaded BLAS
    is *slower* than one thread (bench ``sweep_parallel``), and sweeps parallelise over points
    instead.
    """

    def fit(self, X, y, sample_weight=None):
        with threadpool_limits(limits=1, user_api="blas"):
            return super().fit(X, y, sample_weight=sample_weight)


def logistic_regression(C: float) -> LogisticRegression:
    """The base learner: L2-regularised logistic regression (lbfgs), deterministic."""
    return _SingleThreadLogisticRegression(C=C, max_iter=MAX_ITER)


def encode_train(train: Task) -> tuple[FeatureEncoder, np.ndarray]:
    """The feature encoder fitted on the training features, and those features encoded: fitted
    once per training rows (:func:`~fairengine.methods.fitted.fitted_once`), shared by
    every point of a sweep and by the baselines; the matrix is read-only."""

    def fit() -> tuple[FeatureEncoder, np.ndarray]:
        encoder = FeatureEncoder().fit(train.X)
        Z = encoder.transform(train.X)
        Z.flags.writeable = False
        return encoder, Z

    return fitted_once(("encoding", train.fingerprint), fit)


def fitted_logistic(train: Task, C: float) -> LogisticRegression:
    """:func:`logistic_regression` with ``C`` fitted on the encoded training rows, once per rows
    and C: the unconstrained model of the baselines and the base model of post-processing."""
    return fitted_once(
        ("logistic", train.fingerprint, float(C)),
        lambda: logistic_regression(C).fit(encode_train(train)[1], train.y),
    )
