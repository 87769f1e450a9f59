"""MultiaccurateProxyModel: the downstream randomized classifier plus the linear proxy θ̄."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fairengine.data.encoding import FeatureEncoder
from fairengine.methods.multiaccurate_proxy.general import predict_trees
from fairengine.methods.multiaccurate_proxy.schema import SCHEMA
from fairengine.models.base import Arrays, Model, State, register_model
from fairengine.models.linear import RandomizedClassifier


@register_model
class MultiaccurateProxyModel(RandomizedClassifier):
    """The downstream fair classifier Q (a mixture of halfspaces, as
    :class:`~fairengine.models.RandomizedClassifier`) and the proxy it was trained with.

    ``predict_proxy(X)`` returns ẑ(x) (n, K) for the multiaccurate proxies: the linear part
    ``proxy_coef`` (K, d + 1), last column the intercept, plus for Algorithm 2 the mean of the
    stored regression trees ``proxy_trees`` (K, T, 5, size) (feature, threshold, left, right,
    value arrays; no pickle). Other proxies are not stored (``proxy_coef`` empty).
    """

    model_type = "multiaccurate_proxy"
    state_schema = SCHEMA
    randomized = True  # predict draws (seeded by random_state)

    def __init__(
        self,
        encoder: FeatureEncoder,
        coefs: np.ndarray,
        intercepts: np.ndarray,
        weights: np.ndarray,
        proxy_coef: np.ndarray,
        proxy: str = "multiaccurate",
        group_names: tuple[str, ...] = (),
        proxy_trees: np.ndarray | None = None,
    ) -> None:
        super().__init__(encoder, coefs, intercepts, weights)
        self.proxy_coef = np.asarray(proxy_coef, float).reshape(-1, self.coefs.shape[1] + 1)
        trees = np.zeros((len(self.proxy_coef), 0, 5, 1)) if proxy_trees is None else proxy_trees
        self.proxy_trees = np.asarray(trees, float)
        self.proxy = proxy
        self.group_names = tuple(str(g) for g in group_names)

    def predict_proxy(self, X: pd.DataFrame) -> np.ndarray:
        if self.proxy_coef.size == 0:
            raise ValueError(f"The {self.proxy!r} proxy is not stored in the model.")
        Z = self.encode(X)
        linear = np.column_stack([Z, np.ones(len(Z))]) @ self.proxy_coef.T
        if self.proxy_trees.shape[1] == 0:
            return linear
        return linear + np.column_stack([predict_trees(Z, t) for t in self.proxy_trees])

    def _state(self) -> State:
        meta, arrays = super()._state()
        meta = {**meta, "proxy": self.proxy, "group_names": list(self.group_names)}
        return meta, {**arrays, "proxy_coef": self.proxy_coef, "proxy_trees": self.proxy_trees}

    @classmethod
    def _from_state(cls, encoder: FeatureEncoder, meta: dict[str, Any], arrays: Arrays) -> Model:
        return cls(
            encoder,
            arrays["coefs"],
            arrays["intercepts"],
            arrays["weights"],
            arrays["proxy_coef"],
            str(meta["proxy"]),
            tuple(meta["group_names"]),
            arrays.get("proxy_trees"),
        )
