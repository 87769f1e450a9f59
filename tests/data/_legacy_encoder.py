"""A second implementation of the feature encoder, kept frozen: the reference of
``test_encoding_golden.py``.

A plain version (one dense block per column, no memory or wide-table optimisation, no
identifier-like column detection) that is never changed with the engine: the test checks the
engine's encoder gives the same state and the same matrix bit for bit, because exported models
and shipped frontiers depend on those outputs. A deliberate change of the encoding must change
this file too, and say why; do not edit it otherwise.

Its own description: feature encoding shared by every method.

The encoder keeps its state as plain lists and arrays (``to_dict`` / ``from_dict``), so model files
store it without pickle.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

#: Categories kept per categorical column (the most frequent); the rest share an "other" column.
MAX_CATEGORIES = 30
_OTHER = "__other__"
_MISSING = "__missing__"


class FeatureEncoder(TransformerMixin, BaseEstimator):
    """Encode a feature frame as a float matrix, fitted on training data only.

    Numeric columns are imputed with the training median and standardised; other columns are
    one-hot encoded over their most frequent ``max_categories`` values (missing values get their
    own category; unseen and rare values go to an "other" column).

    Parameters
    ----------
    max_categories : int
        Categories kept per categorical column.
    scale : bool
        Standardise numeric columns (zero mean, unit variance on the training data).

    Attributes
    ----------
    numeric_ : list of str
    categorical_ : dict of str to list of str
        The kept categories of each categorical column.
    center_, scale_ : ndarray
        Per numeric column: median used for imputation is ``median_``; scaling uses mean / std.
    feature_names_out_ : list of str
    """

    def __init__(self, max_categories: int = MAX_CATEGORIES, scale: bool = True) -> None:
        self.max_categories = max_categories
        self.scale = scale

    def fit(self, X: pd.DataFrame, y: Any = None) -> FeatureEncoder:
        X = _as_frame(X)
        self.columns_ = [str(c) for c in X.columns]
        self.numeric_ = [c for c in self.columns_ if _is_numeric(X[c])]
        self.categorical_ = {}
        for col in self.columns_:
            if col in self.numeric_:
                continue
            counts = _as_category_strings(X[col]).value_counts()
            self.categorical_[col] = [str(v) for v in counts.index[: self.max_categories]]
        numeric = X[self.numeric_].astype(float) if self.numeric_ else pd.DataFrame(index=X.index)
        self.median_ = (
            np.nan_to_num(numeric.median().to_numpy(dtype=float)) if self.numeric_ else np.zeros(0)
        )
        filled = numeric.fillna(pd.Series(self.median_, index=self.numeric_)).to_numpy(dtype=float)
        if self.scale and self.numeric_:
            self.center_ = filled.mean(axis=0)
            std = filled.std(axis=0)
            self.scale_ = np.where(std > 0, std, 1.0)
        else:
            self.center_ = np.zeros(len(self.numeric_))
            self.scale_ = np.ones(len(self.numeric_))
        self.feature_names_out_ = list(self.numeric_)
        for col, cats in self.categorical_.items():
            self.feature_names_out_ += [f"{col}={c}" for c in cats] + [f"{col}={_OTHER}"]
        return self

    def transform(self, X: pd.DataFrame) -> np.ndarray:
        check_is_fitted(self, "feature_names_out_")
        X = _as_frame(X)
        missing = [c for c in self.columns_ if c not in X.columns]
        if missing:
            raise ValueError(f"Columns missing from the input: {missing}.")
        blocks = []
        if self.numeric_:
            values = X[self.numeric_].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
            values = np.where(np.isnan(values), self.median_, values)
            blocks.append((values - self.center_) / self.scale_)
        for col, cats in self.categorical_.items():
            strings = _as_category_strings(X[col])
            codes = pd.Index(cats).get_indexer(strings)
            onehot = np.zeros((len(X), len(cats) + 1))
            onehot[np.arange(len(X)), np.where(codes < 0, len(cats), codes)] = 1.0
            blocks.append(onehot)
        return np.hstack(blocks) if blocks else np.zeros((len(X), 0))

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        check_is_fitted(self, "feature_names_out_")
        return np.asarray(self.feature_names_out_, dtype=object)

    def to_dict(self) -> dict[str, Any]:
        """Fitted state as JSON-able data (for model files)."""
        check_is_fitted(self, "feature_names_out_")
        return {
            "max_categories": self.max_categories,
            "scale": self.scale,
            "columns": self.columns_,
            "numeric": self.numeric_,
            # a list of pairs, not a dict: JSON writers may sort keys, and order is meaning here
            "categorical": [[col, cats] for col, cats in self.categorical_.items()],
            "median": self.median_.tolist(),
            "center": self.center_.tolist(),
            "scale_values": self.scale_.tolist(),
        }

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> FeatureEncoder:
        """Rebuild a fitted encoder from :meth:`to_dict` output."""
        encoder = cls(max_categories=int(state["max_categories"]), scale=bool(state["scale"]))
        encoder.columns_ = [str(c) for c in state["columns"]]
        encoder.numeric_ = [str(c) for c in state["numeric"]]
        encoder.categorical_ = {str(k): [str(v) for v in vs] for k, vs in state["categorical"]}
        encoder.median_ = np.asarray(state["median"], dtype=float)
        encoder.center_ = np.asarray(state["center"], dtype=float)
        encoder.scale_ = np.asarray(state["scale_values"], dtype=float)
        names = list(encoder.numeric_)
        for col, cats in encoder.categorical_.items():
            names += [f"{col}={c}" for c in cats] + [f"{col}={_OTHER}"]
        encoder.feature_names_out_ = names
        return encoder


def _as_frame(X: Any) -> pd.DataFrame:
    if isinstance(X, pd.DataFrame):
        return X
    array = np.asarray(X)
    if array.ndim != 2:
        raise ValueError(f"Expected a 2-D table of features, got shape {array.shape}.")
    return pd.DataFrame(array, columns=[f"x{i}" for i in range(array.shape[1])])


def _is_numeric(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


def _as_category_strings(column: pd.Series) -> pd.Series:
    return column.astype(object).where(column.notna(), _MISSING).astype(str)
