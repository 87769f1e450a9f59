"""The logistic-regression learner shared by the reference methods."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression

from fairengine.data import Task
from fairengine.data.encoding import FeatureEncoder

#: Regularisation knob shared by the methods that fit a logistic regression.
MAX_ITER = 1000


def logistic_regression(C: float) -> LogisticRegression:  # noqa: N803
    """The base learner: L2-regularised logistic regression (lbfgs), deterministic."""
    return LogisticRegression(C=C, max_iter=MAX_ITER)


def encode_train(train: Task) -> tuple[FeatureEncoder, np.ndarray]:
    """Fit the feature encoder on the training features and encode them."""
    encoder = FeatureEncoder().fit(train.X)
    return encoder, encoder.transform(train.X)
