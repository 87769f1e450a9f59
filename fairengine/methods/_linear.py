"""The logistic-regression learner shared by the reference methods."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from fairengine.data import Task
from fairengine.data.encoding import FeatureEncoder
from fairengine.methods._knobs import C_KNOB

__all__ = ["C_KNOB", "MAX_ITER", "encode_train", "logistic_regression"]

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
    """Fit the feature encoder on the training features and encode them."""
    encoder = FeatureEncoder().fit(train.X)
    return encoder, encoder.transform(train.X)
