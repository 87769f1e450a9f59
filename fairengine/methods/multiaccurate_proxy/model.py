"""MultiaccurateProxyModel: the downstream randomized classifier plus the linear proxy θ̄."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fairengine.data.encoding import FeatureEncoder
from fairengine.models.base import Arrays, Model, State, register_model
from fairengine.models.linear import RandomizedClassifier


@register_model
class MultiaccurateProxyModel(RandomizedClassifier):
    """The downstream fair classifier Q (a mixture of halfspaces, as
    :class:`~fairengine.models.RandomizedClassifier`) and the proxy it was trained with.

    ``predict_proxy(X)`` returns ẑ(x) (n, K) when the proxy is the linear multiaccurate one
    (``proxy_coef`` of shape (K, d + 1), last column the intercept); other proxies are not
    stored (``proxy_coef`` empty).
    """

    model_type = "multiaccurate_proxy"

    def __init__(
        self,
        encoder: FeatureEncoder,
        coefs: np.ndarray,
        intercepts: np.ndarray,
        weights: np.ndarray,
        proxy_coef: np.ndarray,
        proxy: str = "multiaccurate",
        group_names: tuple[str, ...] = (),
    ) -> None:
        super().__init__(encoder, coefs, intercepts, weights)
        self.proxy_coef = np.asarray(proxy_coef, float).reshape(-1, self.coefs.shape[1] + 1)
        self.proxy = proxy
        self.group_names = tuple(str(g) for g in group_names)

    def predict_proxy(self, X: pd.DataFrame) -> np.ndarray:  # noqa: N803
        if self.proxy_coef.size == 0:
            raise ValueError(f"The {self.proxy!r} proxy is not stored in the model.")
        Z = self.encode(X)  # noqa: N806
        return np.column_stack([Z, np.ones(len(Z))]) @ self.proxy_coef.T

    def _state(self) -> State:
        meta, arrays = super()._state()
        meta = {**meta, "proxy": self.proxy, "group_names": list(self.group_names)}
        return meta, {**arrays, "proxy_coef": self.proxy_coef}

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
        )
