"""Feature encoding shared by every method: one-hot categoricals, standardised numerics.

The encoder keeps its state as plain lists and arrays (``to_dict`` / ``from_dict``), so model files
store it without pickle.
"""

from __future__ import annotations

import warnings
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from fairengine.data.identifiers import text_identifier

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
    dropped_ : list of str
        Identifier-like text columns (see :func:`identifier_like`), dropped: not encoded, not
        required at prediction time, and none of their values stored (so a model file holds no
        names or ids). Dropping, not hashing: such a column's values barely repeat, so any code
        for them would let a model memorise training rows rather than learn.
    """

    def __init__(self, max_categories: int = MAX_CATEGORIES, scale: bool = True) -> None:
        self.max_categories = max_categories
        self.scale = scale

    def fit(self, X: pd.DataFrame, y: Any = None) -> FeatureEncoder:
        X = _as_frame(X)
        names = [str(c) for c in X.columns]
        self.dropped_ = []
        numeric_dtype = [is_numeric_dtype(d) for d in X.dtypes]
        numeric_pos = [i for i, is_num in enumerate(numeric_dtype) if is_num]
        categories: dict[int, list[str]] = {}
        other_pos = [i for i, is_num in enumerate(numeric_dtype) if not is_num]
        for chunk in _chunks(other_pos, len(X), _TEXT_CELLS):
            values = X.iloc[:, chunk].to_numpy(dtype=object)
            for j, pos in enumerate(chunk):
                if _all_decimal(values[:, j]):
                    numeric_pos.append(pos)  # decimals are numbers, not categories
                    continue
                strings = _category_strings(values[:, j])  # once, for both decisions below
                if text_identifier(strings[~pd.isna(values[:, j])]):
                    self.dropped_.append(names[pos])
                else:
                    categories[pos] = self._kept_categories(strings)
        numeric_pos.sort()
        self.numeric_ = [names[i] for i in numeric_pos]
        self.categorical_ = {names[i]: categories[i] for i in sorted(categories)}
        self.columns_ = [c for c in names if c not in self.dropped_]
        k = len(numeric_pos)
        self.median_, center, std = np.zeros(k), np.zeros(k), np.ones(k)
        start = 0
        for chunk in _chunks(numeric_pos, len(X)):
            # A column-major block, like the DataFrame.to_numpy() of earlier versions, so the
            # per-column reductions below are bit-for-bit what they computed.
            block = np.array(_numeric_block(X, chunk), order="F")  # a writable copy
            stop = start + len(chunk)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-missing column: median 0
                self.median_[start:stop] = np.nan_to_num(np.nanmedian(block, axis=0))
            np.copyto(block, self.median_[start:stop], where=np.isnan(block))
            if self.scale:
                center[start:stop] = block.mean(axis=0)
                std[start:stop] = block.std(axis=0)
            start = stop
        if self.scale and k:
            self.center_, self.scale_ = center, np.where(std > 0, std, 1.0)
        else:
            self.center_, self.scale_ = np.zeros(k), np.ones(k)
        self.feature_names_out_ = _feature_names(self.numeric_, self.categorical_)
        return self

    def _kept_categories(self, strings: np.ndarray) -> list[str]:
        """The categories one-hot encoded for a non-numeric column (its
        :func:`_category_strings`): the most frequent ones.

        Ties in frequency keep the order of first occurrence (as ``Series.value_counts``).
        """
        codes, uniques = pd.factorize(strings)
        counts = np.bincount(codes, minlength=len(uniques))
        order = np.argsort(-counts, kind="stable")
        return [str(uniques[i]) for i in order[: self.max_categories]]

    def transform(self, X: pd.DataFrame) -> np.ndarray:
        """Encode ``X`` into one preallocated float matrix (no intermediate blocks)."""
        check_is_fitted(self, "feature_names_out_")
        X = _as_frame(X)
        by_name = {str(c): i for i, c in enumerate(X.columns)}
        missing = [c for c in self.columns_ if c not in by_name]
        if missing:
            raise ValueError(f"Columns missing from the input: {missing}.")
        out = np.zeros((len(X), len(self.feature_names_out_)))
        start = 0
        for chunk in _chunks([by_name[c] for c in self.numeric_], len(X)):
            stop = start + len(chunk)
            dest = out[:, start:stop]  # a view: every step below writes in place
            np.copyto(dest, _numeric_block(X, chunk))
            np.copyto(dest, self.median_[start:stop], where=np.isnan(dest))
            dest -= self.center_[start:stop]
            dest /= self.scale_[start:stop]
            start = stop
        offset = len(self.numeric_)
        rows = np.arange(len(X))
        kept = iter(self.categorical_.values())
        for chunk in _chunks([by_name[c] for c in self.categorical_], len(X), _TEXT_CELLS):
            values = X.iloc[:, chunk].to_numpy(dtype=object)
            for j in range(len(chunk)):
                cats = next(kept)
                codes = _category_codes(cats, _category_strings(values[:, j]))
                out[rows, offset + np.where(codes < 0, len(cats), codes)] = 1.0
                offset += len(cats) + 1
        return out

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
            "dropped": list(getattr(self, "dropped_", [])),
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
        encoder.dropped_ = [str(c) for c in state.get("dropped", [])]
        encoder.feature_names_out_ = _feature_names(encoder.numeric_, encoder.categorical_)
        return encoder


def _as_frame(X: Any) -> pd.DataFrame:
    if isinstance(X, pd.DataFrame):
        return X
    array = np.asarray(X)
    if array.ndim != 2:
        raise ValueError(f"Expected a 2-D table of features, got shape {array.shape}.")
    return pd.DataFrame(array, columns=[f"x{i}" for i in range(array.shape[1])])


#: Cells per temporary block (columns are processed in blocks of about this many cells).
_BLOCK_CELLS = 1 << 20
#: Cells per block of text columns (each cell becomes a Python string while it is encoded).
_TEXT_CELLS = 1 << 16


def _chunks(positions: list[int], n_rows: int, cells: int = _BLOCK_CELLS) -> list[list[int]]:
    """Column positions in blocks of at most ``cells`` cells (at least one column)."""
    size = max(1, min(4096, cells // max(n_rows, 1)))
    return [positions[i : i + size] for i in range(0, len(positions), size)]


def _numeric_block(X: pd.DataFrame, positions: list[int]) -> np.ndarray:
    """Columns at ``positions`` as floats; anything unparseable becomes NaN."""
    part = X.iloc[:, positions]
    try:
        return part.to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):  # text in a column that was numeric when fitted
        block = np.empty((len(X), len(positions)))
        for j in range(len(positions)):
            column = pd.to_numeric(part.iloc[:, j], errors="coerce")
            block[:, j] = column.to_numpy(dtype=float, na_value=np.nan)
        return block


def _feature_names(numeric: list[str], categorical: dict[str, list[str]]) -> list[str]:
    names = list(numeric)
    for col, cats in categorical.items():
        names.extend(f"{col}={c}" for c in cats)
        names.append(f"{col}={_OTHER}")
    return names


def identifier_like(column: pd.Series) -> bool:
    """A text column whose values barely repeat (names, ids, free text): the text case of the
    identifier rule (:func:`fairengine.data.identifiers.text_identifier`). Exactly the columns
    :meth:`FeatureEncoder.fit` drops (numbers and all-``Decimal`` columns never are)."""
    if is_numeric_dtype(column.dtype):
        return False
    values = column.to_numpy(dtype=object)
    if _all_decimal(values):
        return False
    return text_identifier(_category_strings(values[~pd.isna(values)]))


def is_numeric_dtype(dtype: Any) -> bool:
    """Whether a column of ``dtype`` is encoded as a number: numeric and not boolean (booleans
    are categories)."""
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def _all_decimal(values: np.ndarray) -> bool:
    """Whether every present value is a ``decimal.Decimal`` (e.g. a Parquet decimal column)."""
    present = values[~pd.isna(values)]
    return len(present) > 0 and all(isinstance(v, Decimal) for v in present)


def _category_strings(values: np.ndarray) -> np.ndarray:
    """A column's values as category names (object array of str; missing as its own name)."""
    missing = pd.isna(values)
    if pd.api.types.infer_dtype(values, skipna=True) == "string":
        strings = values.copy()
        strings[missing] = _MISSING
        return strings
    filled = pd.Series(values, dtype=object).where(~missing, _MISSING)
    try:
        return filled.astype(str).to_numpy(dtype=object)
    except UnicodeDecodeError:  # bytes that are not UTF-8: keep them readable, never crash
        return np.array([_safe_str(v) for v in filled], dtype=object)


def _category_codes(cats: list[str], strings: np.ndarray) -> np.ndarray:
    """Position of each string among ``cats`` (-1 if absent), by one hash pass."""
    codes, _ = pd.factorize(np.concatenate([np.asarray(cats, dtype=object), strings]))
    codes = codes[len(cats) :]
    return np.where(codes < len(cats), codes, -1)


def _safe_str(value: object) -> str:
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="backslashreplace")
    return str(value)
