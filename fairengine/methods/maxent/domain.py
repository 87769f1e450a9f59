"""The paper's finite product domain Omega = U_1 x ... x U_F and its reference coding.

Design notes: ``docs/methods/maxent.md``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairengine.data import DataError, Task
from fairengine.data.encoding import identifier_like, is_numeric_dtype
from fairengine.data.row_keys import first_rows
from fairengine.methods.maxent.knobs import FEATURE_SETS

#: Levels kept per categorical column (the most frequent; the rest share ``OTHER``).
MAX_LEVELS = 8
OTHER = "other"
MISSING = "missing"
#: Code cells per block of :meth:`Domain.encode` (bounds its temporary index arrays).
_BLOCK = 1 << 18


@dataclass(frozen=True)
class Feature:
    """One attribute of the domain: its readable levels and how raw values map onto them.

    Attributes
    ----------
    name : str
        Column name in readable rows.
    role : {"feature", "label", "protected"}
    levels : tuple of str
        Readable level names; level 0 is the reference (zero vector).
    edges : tuple of float
        Inner bin edges of a binned numeric column (empty otherwise).
    """

    name: str
    role: str
    levels: tuple[str, ...]
    edges: tuple[float, ...] = field(default=())

    @property
    def size(self) -> int:
        return len(self.levels)

    def codes(self, column: pd.Series) -> np.ndarray:
        """Level codes of raw (or readable) values; unseen values go to ``other`` or level 0."""
        if self.edges:
            values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
            binned = np.searchsorted(np.asarray(self.edges), values, side="right")
            if is_numeric_dtype(column.dtype):  # never readable names such as "[17, 28)"
                known = np.full(len(values), -1)
            else:
                known = _level_indexer(self.levels, column, lambda c: c.astype(str))
            codes = np.where(known >= 0, known, binned)
            return np.where(np.isnan(values) & (known < 0), self._fallback(), codes)
        codes = _level_indexer(self.levels, column, _level_strings)
        return np.where(codes < 0, self._fallback(), codes).astype(np.int64)

    def _fallback(self) -> int:
        return self.levels.index(OTHER) if OTHER in self.levels else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "role": self.role,
            "levels": list(self.levels),
            "edges": list(self.edges),
        }

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> Feature:
        return cls(
            str(state["name"]),
            str(state["role"]),
            tuple(str(v) for v in state["levels"]),
            tuple(float(v) for v in state["edges"]),
        )


def _numeric_feature(name: str, column: pd.Series, n_bins: int, max_levels: int) -> Feature:
    values = pd.to_numeric(column, errors="coerce").dropna().to_numpy(dtype=float)
    if len(pd.unique(values)) <= n_bins:  # hashing, not a sort of every value
        return _categorical_feature(name, column, max_levels)
    low, high = values.min(), values.max()
    edges = np.unique(np.quantile(values, np.linspace(0, 1, n_bins + 1)[1:-1]))
    edges = edges[(edges > low) & (edges <= high)]
    bounds = [low, *edges, high]
    levels = [
        f"[{_number_label(lo)}, {_number_label(hi)}{']' if i == len(edges) else ')'}"
        for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True))
    ]
    return Feature(name, "feature", tuple(levels), tuple(float(e) for e in edges))


def _level_indexer(levels: tuple[str, ...], column: pd.Series, as_strings: Any) -> np.ndarray:
    """Position in ``levels`` of each value's level name (−1 if none), ``as_strings`` applied to
    the column's distinct values only (no string cast of every row)."""
    column = pd.Series(column).reset_index(drop=True)
    index = pd.Index(levels)
    if column.dtype == object and pd.api.types.infer_dtype(column, skipna=True) != "string":
        # mixed Python objects (1, 1.0, True hash alike but print differently): row by row
        return index.get_indexer(pd.Series(as_strings(column)).to_numpy(dtype=object))
    factor, _ = pd.factorize(column, use_na_sentinel=False)
    distinct = column.iloc[first_rows(factor)]
    return index.get_indexer(pd.Series(as_strings(distinct)).to_numpy(dtype=object))[factor]


def _level_strings(column: pd.Series) -> pd.Series:
    """Values as level names: numbers as in :func:`_number_label`, missing as ``missing``."""
    if is_numeric_dtype(column.dtype):
        return column.astype(object).map(_number_label)
    return column.astype(object).where(column.notna(), MISSING).astype(str)


def _number_label(value: Any) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return MISSING
    number = float(value)
    return str(int(number)) if number == round(number) else f"{number:.4g}"


def _categorical_feature(name: str, column: pd.Series, max_levels: int) -> Feature:
    counts = _level_strings(column).value_counts()
    levels = [str(v) for v in counts.index[:max_levels]]
    if len(counts) > max_levels:
        levels.append(OTHER)
    return Feature(name, "feature", tuple(levels))


@dataclass(frozen=True)
class Domain:
    """A product domain of features in reference coding (generalised).

    Build it with :func:`domain_from_task`. Never enumerated: only per-feature sizes are used.

    Attributes
    ----------
    features : tuple of Feature
        Model features first, then the label, then the protected attribute.
    """

    features: tuple[Feature, ...]

    @property
    def sizes(self) -> np.ndarray:
        return np.array([f.size for f in self.features], dtype=np.int64)

    @property
    def offsets(self) -> np.ndarray:
        """Start of each feature's coordinates in an encoded point (length F + 1)."""
        return np.concatenate([[0], np.cumsum(self.sizes - 1)])

    @property
    def d(self) -> int:
        """Number of coordinates d = sum_f (|U_f| - 1)."""
        return int(self.offsets[-1])

    @property
    def log_size(self) -> float:
        """log |Omega| = sum_f log |U_f| (never |Omega| itself as a float)."""
        return float(np.log(self.sizes).sum())

    @property
    def columns(self) -> list[str]:
        return [f.name for f in self.features]

    def index(self, role: str) -> int:
        """Position of the (single) feature with ``role``."""
        return next(i for i, f in enumerate(self.features) if f.role == role)

    def coordinate(self, role: str) -> int:
        """The encoded coordinate of a binary label / protected attribute (its level 1)."""
        return int(self.offsets[self.index(role)])

    @property
    def model_features(self) -> list[int]:
        return [i for i, f in enumerate(self.features) if f.role == "feature"]

    @property
    def coordinate_names(self) -> list[str]:
        return [f"{f.name}={level}" for f in self.features for level in f.levels[1:]]

    def codes(self, frame: pd.DataFrame, only: list[int] | None = None) -> np.ndarray:
        """Level codes (n, F) of readable or raw rows (columns named as the features), in the
        smallest unsigned type that holds them (:func:`code_dtype`; uint8 for every domain with
        at most 256 levels per feature)."""
        chosen = range(len(self.features)) if only is None else only
        missing = [self.features[i].name for i in chosen if self.features[i].name not in frame]
        if missing:
            raise DataError(f"Columns {missing} are missing from the rows; the domain needs them.")
        out = np.empty((len(frame), len(chosen)), dtype=code_dtype(self))  # lossless, compact
        for j, i in enumerate(chosen):
            out[:, j] = self.features[i].codes(frame[self.features[i].name])
        return out

    def encode(
        self, codes: np.ndarray, only: list[int] | None = None, dtype: Any = float
    ) -> np.ndarray:
        """Reference-coded 0/1 points (n, d') of level codes (n, F') (``only``: these features)
        as ``dtype`` (``np.float32`` for scikit-learn's trees, ``np.uint8`` for many rows)."""
        chosen = list(range(len(self.features))) if only is None else only
        codes = np.asarray(codes).reshape(-1, len(chosen))
        widths = np.array([self.features[i].size - 1 for i in chosen], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(widths)])[:-1] - 1  # code c ↦ start + c - 1
        width = int(widths.sum())
        out = np.zeros((len(codes), width), dtype=dtype)
        flat = out.reshape(-1)  # a view: the 1s are written at flat positions
        step = max(1, _BLOCK // max(len(chosen), 1))
        for lo in range(0, len(codes), step):
            block = codes[lo : lo + step]
            at = block.astype(np.int64) + (starts + lo * width)  # row lo's flat position …
            at += (np.arange(len(block), dtype=np.int64) * width)[:, None]  # … + each row's
            flat[at[block > 0]] = 1
        return out

    def marginal_sums(self, codes: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Σ_i w_i α(row_i) (d,) of level codes (n, F) without encoding them: one weighted
        count per feature (w = 1 without ``weights``; divide by n for the mean point)."""
        codes = np.asarray(codes)
        out = np.zeros(self.d)
        for f, (feature, start) in enumerate(zip(self.features, self.offsets[:-1], strict=True)):
            counts = np.bincount(codes[:, f], weights=weights, minlength=feature.size)
            out[start : start + feature.size - 1] = counts[1 : feature.size]
        return out

    def decode(self, codes: np.ndarray, categorical: bool = False) -> pd.DataFrame:
        """Readable rows: each code replaced by its level name (``categorical``: as pandas
        categoricals, the same values in a fraction of the memory)."""
        codes = np.asarray(codes, dtype=np.int64)
        frame = pd.DataFrame(
            {
                f.name: pd.Categorical.from_codes(codes[:, i], categories=list(f.levels))
                for i, f in enumerate(self.features)
            }
        )
        return frame if categorical else frame.astype(str)

    def to_dict(self) -> dict[str, Any]:
        return {"features": [f.to_dict() for f in self.features]}

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> Domain:
        return cls(tuple(Feature.from_dict(f) for f in state["features"]))


class CodedPoints:
    """Reference-coded points of level codes, never materialised: ``w @ points`` and
    ``points.mean(axis=0)`` are computed by weighted counts (:meth:`Domain.marginal_sums`), so
    θ needs no (n, d) float matrix (peak memory). Used by
    :func:`~fairengine.methods.maxent.reweighting.target_marginals`."""

    __array_ufunc__ = None  # ``ndarray @ CodedPoints`` defers to __rmatmul__

    def __init__(self, domain: Domain, codes: np.ndarray) -> None:
        self.domain = domain
        self.codes = np.asarray(codes)

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.codes), self.domain.d)

    def __rmatmul__(self, weights: np.ndarray) -> np.ndarray:
        return self.domain.marginal_sums(self.codes, np.asarray(weights, dtype=float))

    def mean(self, axis: int = 0) -> np.ndarray:
        if axis != 0:
            raise ValueError("Only the mean point (axis=0) is available.")
        return self.domain.marginal_sums(self.codes) / len(self.codes)


def code_dtype(domain: Domain) -> np.dtype:
    """The smallest unsigned integer type holding every level code of ``domain`` (lossless)."""
    return np.min_scalar_type(max(int(domain.sizes.max(initial=1)) - 1, 0))


def protected_name(task: Task) -> str:
    return "&".join(task.sensitive)


def check_task(task: Task) -> None:
    """Raise :class:`DataError` for tasks the method cannot handle (binary Y and Z)."""
    if task.kind != "classification":
        raise DataError(
            f"Max-entropy debiasing needs a binary target, but {task.target!r} makes this a "
            f"{task.kind} task. Choose a yes/no target column."
        )
    if task.n_groups != 2 or len(np.unique(task.groups)) != 2:
        raise DataError(
            f"Max-entropy debiasing needs a sensitive attribute with exactly two groups; "
            f"{protected_name(task)!r} has {task.n_groups} ({', '.join(task.group_names)}). "
            "Choose a binary sensitive column (e.g. sex) or merge the groups into two."
        )


def identifier_columns(task: Task) -> list[str]:
    """The task's identifier-like text feature columns (names, ids, free text), as the shared
    encoder decides (:func:`fairengine.data.encoding.identifier_like`): left out of the domain."""
    return [name for name in task.features if identifier_like(task.frame[name])]


def _binned(name: str, edges: tuple[float, ...], levels: tuple[str, ...]) -> Feature:
    return Feature(name, "feature", levels, edges)


#: The paper's domains (Celis et al. 2020 §5), per bundled dataset: (its label, its features).
#: Adult: race (White or not), sex, age by decade (7 levels), years of education (9 levels);
#: |Omega| = 504. COMPAS small: sex, race (Caucasian or not), age category, priors (0, 1-3, >3),
#: charge degree; |Omega| = 144 (the paper also keeps only Black and White defendants; here every
#: row stays, so "not Caucasian" holds the other groups too). Categorical columns without a rule
#: keep their own levels (sex, age category, charge degree).
PAPER_DOMAINS: dict[str, tuple[str, dict[str, Feature | None]]] = {
    "adult": ("income", {
        "race": Feature("race", "feature", ("White", OTHER)),
        "sex": None,
        "age": _binned("age", (20, 30, 40, 50, 60, 70),
                       ("<20", "20-29", "30-39", "40-49", "50-59", "60-69", "70+")),
        "education_num": _binned("education_num", tuple(range(6, 14)),
                                 ("<6", *(str(v) for v in range(6, 13)), ">12")),
    }),
    "compas": ("two_year_recid", {
        "sex": None,
        "race": Feature("race", "feature", ("Caucasian", OTHER)),
        "age_cat": None,
        "priors_count": _binned("priors_count", (1, 4), ("0", "1-3", ">3")),
        "c_charge_degree": None,
    }),
}  # fmt: skip


def paper_columns(task: Task) -> list[str] | None:
    """The task's feature columns in the paper's domain of its dataset, or None when the task is
    not one of the paper's datasets (another dataset or label, or none of the columns)."""
    entry = PAPER_DOMAINS.get(task.name)
    if entry is None or task.target != entry[0]:
        return None
    columns = [c for c in entry[1] if c in task.features]
    return columns or None


def domain_from_task(
    task: Task,
    n_bins: int = 4,
    max_levels: int = MAX_LEVELS,
    dropped: list[str] | None = None,
    feature_set: str = "all",
) -> Domain:
    """Discretise a task into the paper's domain.

    The label's level 1 is the positive label and the protected attribute's level 1 (Z = 1) is
    the larger group, so Algorithm 1 down-weights the smaller group Z = 0. Identifier-like
    columns (:func:`identifier_columns`) are left out (design notes).

    Parameters
    ----------
    task : Task
        A classification task with a binary sensitive attribute.
    n_bins : int
        Bins per numeric column (columns with at most ``n_bins`` distinct values keep them).
    max_levels : int
        Levels kept per categorical column (the rest share an ``other`` level).
    dropped : list of str, optional
        ``identifier_columns(task)`` when the caller has it already (it reads every text value).
    feature_set : {"paper", "all"}
        ``"paper"``: the paper's columns and levels (:data:`PAPER_DOMAINS`) when the task is one
        of its datasets (:func:`paper_columns`), every column otherwise; ``"all"``: every column.
    """
    check_task(task)
    if feature_set not in FEATURE_SETS:
        raise ValueError(f"feature_set must be one of {FEATURE_SETS}, got {feature_set!r}.")
    columns = paper_columns(task) if feature_set == "paper" else None
    features = []
    if columns is not None:  # the paper's levels where it gives them, else the column's own
        rules = PAPER_DOMAINS[task.name][1]
        features = [rules[c] or _categorical_feature(c, task.frame[c], max_levels) for c in columns]
    dropped = set(identifier_columns(task) if dropped is None else dropped)
    for name in (c for c in task.features if c not in dropped and columns is None):
        column = task.frame[name]
        if is_numeric_dtype(column.dtype):
            feature = _numeric_feature(name, column, n_bins, max_levels)
        else:
            feature = _categorical_feature(name, column, max_levels)
        if feature.size >= 2:  # a constant column carries no information and no coordinate
            features.append(feature)
    positive = str(task.positive_label)
    features.append(Feature(task.target, "label", (f"not {positive}", positive)))
    sizes = np.bincount(task.groups, minlength=2)
    minority, majority = (0, 1) if sizes[0] <= sizes[1] else (1, 0)
    names = (task.group_names[minority], task.group_names[majority])
    features.append(Feature(protected_name(task), "protected", names))
    return Domain(tuple(features))


def readable_rows(task: Task, domain: Domain) -> pd.DataFrame:
    """The task's rows with the domain's columns: raw features, label and group as level names."""
    frame = task.frame.loc[:, [f.name for f in domain.features if f.role == "feature"]].copy()
    label = domain.features[domain.index("label")]
    protected = domain.features[domain.index("protected")]
    frame[label.name] = np.asarray(label.levels, dtype=object)[task.y]
    frame[protected.name] = np.asarray(task.group_names, dtype=object)[task.groups]
    return frame.reset_index(drop=True)
