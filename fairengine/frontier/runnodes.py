"""The typed JSON nodes of run files and how they are written (:class:`Encoder`).

The node types are listed in :mod:`fairengine.frontier.runcodec`'s docstring, which also describes
the file around them (manifest, checksums, members); :mod:`fairengine.frontier.runbuild` reads
nodes back. Only dataclasses registered with :func:`register_dataclass` may appear in a run.
"""

from __future__ import annotations

import dataclasses
import io
import math
from typing import Any

import numpy as np
import pandas as pd

from fairengine.export import safe
from fairengine.export.files import model_bytes
from fairengine.export.safe import ModelFileError
from fairengine.methods.base import RunResult
from fairengine.methods.evidence import Baselines, Check
from fairengine.models.base import Model

#: NumPy dtypes stored as ``.npy`` members (what :func:`fairengine.export.safe.load_npy` reads).
NUMERIC_DTYPES = frozenset(
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
    + ["float16", "float32", "float64"]
)
#: pandas masked (nullable) dtypes: data + mask arrays.
MASKED = {
    **{name: pd.arrays.IntegerArray for name in ("Int8", "Int16", "Int32", "Int64")},
    **{name: pd.arrays.IntegerArray for name in ("UInt8", "UInt16", "UInt32", "UInt64")},
    "Float32": pd.arrays.FloatingArray,
    "Float64": pd.arrays.FloatingArray,
    "boolean": pd.arrays.BooleanArray,
}
STRING_STORAGES = ("python", "pyarrow")
FLOAT_WORDS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


DATACLASSES: dict[str, type] = {}


class RunFileError(ModelFileError):
    """A run file that is not ours, is damaged or forged, or holds another key."""


def register_dataclass(cls: type) -> type:
    """Class decorator: allow instances of the dataclass ``cls`` inside run files.

    Only engine-defined classes should be registered, at their definition (so the registry is
    filled by importing the engine, never by reading a file).
    """
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"{cls!r} is not a dataclass.")
    DATACLASSES[_class_name(cls)] = cls
    return cls


def _class_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


# A run's evidence (RunResult.baselines, RunResult.checks): frozen dataclasses of numbers and
# strings, registered here because the methods layer does not import the frontier's codec.
register_dataclass(Check)
register_dataclass(Baselines)


# ----------------------------------------------------------------------------- writing


class Encoder:
    """Turns a value tree into JSON nodes, collecting arrays and model files as members."""

    def __init__(self) -> None:
        self.members: dict[str, bytes] = {}

    def _member(self, folder: str, suffix: str, data: bytes) -> dict[str, Any]:
        index = sum(name.startswith(folder) for name in self.members)
        self.members[f"{folder}/{index}{suffix}"] = data
        return {"m": index}

    def array(self, array: np.ndarray, where: str) -> dict[str, Any]:
        if array.dtype.name not in NUMERIC_DTYPES or array.ndim > safe.MAX_ARRAY_NDIM:
            raise TypeError(
                f"A run file cannot store {where}: an array of dtype {array.dtype} with "
                f"{array.ndim} dimensions (numbers, at most {safe.MAX_ARRAY_NDIM} dimensions)."
            )
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        return {"t": "array", **self._member("arrays", ".npy", buffer.getvalue())}

    def node(self, value: Any, where: str) -> Any:
        kind = type(value)
        if value is None or kind in (bool, str):
            return value
        if kind is int:
            if len(str(value)) > safe.MAX_NUMBER_CHARS:
                raise TypeError(f"A run file cannot store {where}: the integer is too large.")
            return value
        if kind is float:
            return value if math.isfinite(value) else {"t": "float", "v": _float_word(value)}
        if kind in (list, tuple):
            items = [self.node(v, f"{where}[{i}]") for i, v in enumerate(value)]
            return {"t": kind.__name__, "v": items}
        if kind is dict:
            return self.mapping(value, where)
        return self.structured(value, where)

    def structured(self, value: Any, where: str) -> dict[str, Any]:
        """A NumPy value, a pandas table or series, a model or a registered dataclass."""
        kind = type(value)
        if isinstance(value, np.generic) and value.dtype.name in NUMERIC_DTYPES:
            return {"t": "scalar", "dtype": value.dtype.name, "v": self.node(value.item(), where)}
        if kind is np.ndarray:
            return self.ndarray(value, where)
        if kind in (pd.DataFrame, pd.Series):
            return self.pandas(value, where)
        if isinstance(value, Model):
            try:
                data = model_bytes(value)
            except ValueError as exc:
                raise TypeError(f"A run file cannot store {where}: {exc}") from exc
            return {"t": "model", **self._member("models", ".fairmodel", data)}
        if DATACLASSES.get(_class_name(kind)) is kind:
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if f.init}
            return {
                "t": "dataclass",
                "name": _class_name(kind),
                "fields": self.mapping(fields, where)["v"],
            }
        raise TypeError(
            f"A run file cannot store {where}: a {kind.__module__}.{kind.__qualname__} (it "
            "stores numbers, strings, lists, tuples, dicts, NumPy arrays and pandas tables)."
        )

    def ndarray(self, value: np.ndarray, where: str) -> dict[str, Any]:
        """Strings and objects as JSON lists (never a pickled ``.npy``), numbers as members."""
        if value.dtype.kind == "U":
            return {
                "t": "strarray",
                "width": value.dtype.itemsize // 4,
                "shape": list(value.shape),
                "v": value.ravel().tolist(),
            }
        if value.dtype.kind == "O":
            return {
                "t": "objarray",
                "shape": list(value.shape),
                "v": self.objects(value.ravel(order="C"), where),
            }
        return self.array(value, where)

    def mapping(self, value: dict, where: str) -> dict[str, Any]:
        if all(type(k) is str for k in value):
            return {
                "t": "dict",
                "v": {k: self.node(v, f"{where}[{k!r}]") for k, v in value.items()},
            }
        pairs = [
            [self.node(k, f"{where} key {k!r}"), self.node(v, f"{where}[{k!r}]")]
            for k, v in value.items()
        ]
        return {"t": "dict", "items": pairs}

    def pandas(self, value: pd.DataFrame | pd.Series, where: str) -> dict[str, Any]:
        node: dict[str, Any]
        if isinstance(value, pd.DataFrame):
            node = {
                "t": "frame",
                "columns": self.index(value.columns, f"{where}.columns"),
                "index": self.index(value.index, f"{where}.index"),
                "data": [
                    self.values(value.iloc[:, i], f"{where}[{name!r}]")
                    for i, name in enumerate(value.columns)
                ],
            }
        else:
            node = {
                "t": "series",
                "name": self.node(value.name, f"{where}.name"),
                "index": self.index(value.index, f"{where}.index"),
                "values": self.values(value, where),
            }
        if value.attrs:
            node["attrs"] = self.mapping(dict(value.attrs), f"{where}.attrs")
        return node

    def index(self, index: pd.Index, where: str) -> dict[str, Any]:
        name = self.node(index.name, f"{where}.name")
        if type(index) is pd.RangeIndex:
            return {
                "t": "range",
                "start": index.start,
                "stop": index.stop,
                "step": index.step,
                "name": name,
            }
        if type(index) not in (pd.Index, pd.CategoricalIndex):
            raise TypeError(f"A run file cannot store {where}: a {type(index).__name__}.")
        return {"t": "index", "values": self.values(index, where), "name": name}

    def values(self, values: pd.Series | pd.Index, where: str) -> dict[str, Any]:
        """A column's (or an index's) values, keeping its dtype."""
        dtype = values.dtype
        if isinstance(dtype, np.dtype) and dtype.name in NUMERIC_DTYPES:
            return self.array(values.to_numpy(), where)
        if isinstance(dtype, pd.StringDtype) and dtype.storage in STRING_STORAGES:
            na = "NA" if dtype.na_value is pd.NA else "nan"
            texts = [None if pd.isna(v) else str(v) for v in values]
            return {"t": "strings", "storage": dtype.storage, "na": na, "v": texts}
        if isinstance(dtype, pd.CategoricalDtype):
            cats = pd.Categorical(values)
            return {
                "t": "categorical",
                "categories": self.values(dtype.categories, f"{where}.categories"),
                "ordered": bool(dtype.ordered),
                "codes": self.array(np.asarray(cats.codes), where),
            }
        if str(dtype) in MASKED and type(values.array) is MASKED[str(dtype)]:
            mask = np.asarray(values.isna(), dtype=bool)
            data = values.array.to_numpy(
                dtype=dtype.numpy_dtype, na_value=dtype.numpy_dtype.type(0)
            )
            return {
                "t": "masked",
                "dtype": str(dtype),
                "data": self.array(data, where),
                "mask": self.array(mask, where),
            }
        if isinstance(dtype, np.dtype) and dtype.kind == "O":
            return {"t": "objects", "v": self.objects(values, where)}
        raise TypeError(f"A run file cannot store {where}: a column of dtype {dtype}.")

    def objects(self, values: Any, where: str) -> list[Any]:
        """The items of an object array or column: numbers, strings and missing values only."""
        items = []
        for i, v in enumerate(values):
            if not (v is None or type(v) in (bool, int, float, str) or _numeric_scalar(v)):
                raise TypeError(
                    f"A run file cannot store {where}: item {i} is a {type(v).__name__} (object "
                    "arrays and columns may hold only numbers, strings and missing values)."
                )
            items.append(self.node(v, f"{where}[{i}]"))
        return items


def _numeric_scalar(value: Any) -> bool:
    return isinstance(value, np.generic) and value.dtype.name in NUMERIC_DTYPES


def _float_word(value: float) -> str:
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def run_fields() -> tuple[dataclasses.Field, ...]:
    return tuple(f for f in dataclasses.fields(RunResult) if f.init)
