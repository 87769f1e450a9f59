"""Reading run files' typed JSON nodes back into values (:class:`Decoder`).

Each value is built from its node through :data:`_BUILDERS` (column values through
:data:`_VALUE_BUILDERS`); only numbers, strings, NumPy and pandas values, model files (through
their hardened reader) and dataclasses registered with
:func:`~fairengine.frontier.runnodes.register_dataclass` ever come out, every member is used at
most once, and nothing is imported by name.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from fairengine.export import safe
from fairengine.export.files import load_model
from fairengine.export.safe import ModelFileError
from fairengine.frontier.runnodes import (
    DATACLASSES,
    FLOAT_WORDS,
    MASKED,
    NUMERIC_DTYPES,
    STRING_STORAGES,
    RunFileError,
    run_fields,
)
from fairengine.methods.base import RunResult
from fairengine.models.base import Model


class Decoder:
    """Builds values from nodes; every member is used at most once."""

    def __init__(self, members: dict[str, bytes], label: str) -> None:
        self.members = members
        self.label = label

    def fail(self, what: str) -> RunFileError:
        return RunFileError(f"{self.label} is invalid: {what}.")

    def take(self, node: dict[str, Any], folder: str, suffix: str) -> bytes:
        index = node.get("m")
        if type(index) is not int:
            raise self.fail(f"a {node['t']} node without a member number")
        name = f"{folder}/{index}{suffix}"
        if name not in self.members:
            raise self.fail(f"{name} is missing or used twice")
        return self.members.pop(name)

    def run(self, tree: Any) -> RunResult:
        if (
            not isinstance(tree, dict)
            or set(tree) != {"fields"}
            or type(tree["fields"]) is not dict
        ):
            raise self.fail("run.json is not an object of fields")
        fields = {f.name: f for f in run_fields()}
        unknown = sorted(set(tree["fields"]) - set(fields))
        missing = [
            name
            for name, f in fields.items()
            if name not in tree["fields"]
            and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        ]
        if unknown or missing:
            raise self.fail(f"unknown fields {unknown[:5]} or missing fields {missing[:5]}")
        return RunResult(**{name: self.node(v) for name, v in tree["fields"].items()})

    def node(self, node: Any) -> Any:
        if node is None or type(node) in (bool, str, int, float):
            return node
        if type(node) is not dict or type(node.get("t")) is not str:
            raise self.fail(f"a value of JSON type {type(node).__name__} has no type tag")
        build = _BUILDERS.get(node["t"])
        if build is None:
            raise self.fail(f"unknown value type {node['t'][:32]!r}")
        try:
            return build(self, node)
        except (RunFileError, ModelFileError):
            raise
        except (KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
            raise self.fail(
                f"a {node['t']} value does not build ({type(exc).__name__}: {exc})"
            ) from None

    def items(self, node: Any) -> list[Any]:
        if type(node) is not list:
            raise self.fail("a list of values is not a list")
        return [self.node(v) for v in node]


def _build_float(d: Decoder, node: dict[str, Any]) -> float:
    return FLOAT_WORDS[node["v"]]


def _build_list(d: Decoder, node: dict[str, Any]) -> list:
    return d.items(node["v"])


def _build_tuple(d: Decoder, node: dict[str, Any]) -> tuple:
    return tuple(d.items(node["v"]))


def _build_dict(d: Decoder, node: dict[str, Any]) -> dict:
    if "v" in node:
        if type(node["v"]) is not dict:
            raise d.fail("a dict's values are not an object")
        return {k: d.node(v) for k, v in node["v"].items()}
    pairs = node["items"]
    if type(pairs) is not list or any(type(p) is not list or len(p) != 2 for p in pairs):
        raise d.fail("a dict's items are not pairs")
    return {d.node(k): d.node(v) for k, v in pairs}


def _build_scalar(d: Decoder, node: dict[str, Any]) -> np.generic:
    if node["dtype"] not in NUMERIC_DTYPES:
        raise d.fail(f"a scalar of dtype {str(node['dtype'])[:32]!r}")
    value = d.node(node["v"])
    if type(value) not in (bool, int, float):
        raise d.fail("a scalar is not a number")
    return np.dtype(node["dtype"]).type(value)


def _build_array(d: Decoder, node: dict[str, Any]) -> np.ndarray:
    return safe.load_npy(d.take(node, "arrays", ".npy"), f"{d.label}'s array")


def _build_strarray(d: Decoder, node: dict[str, Any]) -> np.ndarray:
    shape, width, texts = node["shape"], node["width"], node["v"]
    if (
        type(texts) is not list
        or any(type(t) is not str for t in texts)
        or type(width) is not int
        or not 0 <= width <= 1 << 16
        or type(shape) is not list
        or not all(type(n) is int and n >= 0 for n in shape)
        or math.prod(shape) != len(texts)
    ):
        raise d.fail("a string array does not fit its shape")
    return np.array(texts, dtype=f"<U{width}").reshape(shape)


def _build_objarray(d: Decoder, node: dict[str, Any]) -> np.ndarray:
    shape, items = node["shape"], _objects(d, node["v"])
    if type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape):
        raise d.fail("an object array has an invalid shape")
    if math.prod(shape) != len(items):
        raise d.fail("an object array does not fit its shape")
    return items.reshape(shape)


def _objects(d: Decoder, value: Any) -> np.ndarray:
    """A flat object array of the scalar values in ``value`` (built here, never unpickled)."""
    items = d.items(value)
    if any(isinstance(v, list | tuple | dict) for v in items):
        raise d.fail("an object array holds a container")
    values = np.empty(len(items), dtype=object)
    values[:] = items
    return values


def _build_model(d: Decoder, node: dict[str, Any]) -> Model:
    return load_model(d.take(node, "models", ".fairmodel"))


def _build_dataclass(d: Decoder, node: dict[str, Any]) -> Any:
    cls = DATACLASSES.get(node["name"]) if type(node["name"]) is str else None
    if cls is None:  # never imported by name: only what the engine registered
        raise d.fail(f"the class {str(node['name'])[:80]!r} is not one run files may hold")
    values = _build_dict(d, {"v": node["fields"]})
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    if set(values) - names:
        raise d.fail(f"unknown fields of {cls.__name__}")
    return cls(**values)


def _build_frame(d: Decoder, node: dict[str, Any]) -> pd.DataFrame:
    columns, index = _build_index(d, node["columns"]), _build_index(d, node["index"])
    data = [_build_values(d, v) for v in _list(d, node["data"])]
    if len(data) != len(columns) or any(len(v) != len(index) for v in data):
        raise d.fail("a table's columns do not fit its index")
    columns_data = {i: _series(values, index) for i, values in enumerate(data)}
    frame = pd.DataFrame(columns_data, index=index) if data else pd.DataFrame(index=index)
    frame.columns = columns
    _set_attrs(d, frame, node)
    return frame


def _build_series(d: Decoder, node: dict[str, Any]) -> pd.Series:
    index, values = _build_index(d, node["index"]), _build_values(d, node["values"])
    if len(values) != len(index):
        raise d.fail("a series does not fit its index")
    series = _series(values, index)
    series.name = d.node(node["name"])
    _set_attrs(d, series, node)
    return series


def _object_dtype(values: Any) -> Any:
    """``object`` for object values (else pandas would infer strings from them), else None."""
    return object if isinstance(values, np.ndarray) and values.dtype == object else None


def _series(values: Any, index: pd.Index) -> pd.Series:
    return pd.Series(values, index=index, dtype=_object_dtype(values), copy=False)


def _set_attrs(d: Decoder, value: pd.DataFrame | pd.Series, node: dict[str, Any]) -> None:
    if "attrs" in node:
        value.attrs = _build_dict(d, node["attrs"])


def _list(d: Decoder, value: Any) -> list:
    if type(value) is not list:
        raise d.fail("a list of values is not a list")
    return value


def _build_index(d: Decoder, node: Any) -> pd.Index:
    if type(node) is not dict:
        raise d.fail("an index is not an object")
    name = d.node(node.get("name"))
    if node.get("t") == "range":
        bounds = [node["start"], node["stop"], node["step"]]
        if any(type(b) is not int for b in bounds):
            raise d.fail("a range index has non-integer bounds")
        return pd.RangeIndex(*bounds, name=name)
    if node.get("t") != "index":
        raise d.fail("an index has an unknown type")
    values = _build_values(d, node["values"])
    return pd.Index(values, name=name, dtype=_object_dtype(values), copy=False)


def _build_values(d: Decoder, node: Any) -> Any:
    """Column values: a NumPy array or a pandas extension array (never an object ``.npy``)."""
    kind = node.get("t") if type(node) is dict else None
    build = _VALUE_BUILDERS.get(kind) if type(kind) is str else None
    if build is None:
        raise d.fail("a column has an unknown type")
    return build(d, node)


def _column_array(d: Decoder, node: dict[str, Any]) -> np.ndarray:
    values = _build_array(d, node)
    if values.ndim != 1:
        raise d.fail("a column is not one-dimensional")
    return values


def _column_strings(d: Decoder, node: dict[str, Any]) -> Any:
    texts = _list(d, node["v"])
    if node["storage"] not in STRING_STORAGES or node["na"] not in ("NA", "nan"):
        raise d.fail("a string column has an unknown storage")
    if any(t is not None and type(t) is not str for t in texts):
        raise d.fail("a string column holds a non-string")
    dtype = pd.StringDtype(node["storage"], na_value=pd.NA if node["na"] == "NA" else np.nan)
    return pd.array(texts, dtype=dtype)


def _column_categorical(d: Decoder, node: dict[str, Any]) -> pd.Categorical:
    raw_categories = _build_values(d, node["categories"])
    categories = pd.Index(raw_categories, dtype=_object_dtype(raw_categories))
    codes = _build_values(d, node["codes"])
    if type(node["ordered"]) is not bool or codes.dtype.kind != "i":
        raise d.fail("a categorical column is invalid")
    dtype = pd.CategoricalDtype(categories, ordered=node["ordered"])
    return pd.Categorical.from_codes(codes, dtype=dtype)


def _column_masked(d: Decoder, node: dict[str, Any]) -> Any:
    if node["dtype"] not in MASKED:
        raise d.fail("a column has an unknown type")
    data, mask = _build_values(d, node["data"]), _build_values(d, node["mask"])
    expected = pd.api.types.pandas_dtype(node["dtype"]).numpy_dtype
    if mask.dtype != bool or data.dtype != expected or len(mask) != len(data):
        raise d.fail("a nullable column's data or mask has the wrong dtype")
    return MASKED[node["dtype"]](data, mask)


def _column_objects(d: Decoder, node: dict[str, Any]) -> np.ndarray:
    return _objects(d, node["v"])


_VALUE_BUILDERS: dict[str, Callable[[Decoder, dict[str, Any]], Any]] = {
    "array": _column_array,
    "strings": _column_strings,
    "categorical": _column_categorical,
    "masked": _column_masked,
    "objects": _column_objects,
}


_BUILDERS: dict[str, Callable[[Decoder, dict[str, Any]], Any]] = {
    "float": _build_float,
    "list": _build_list,
    "tuple": _build_tuple,
    "dict": _build_dict,
    "scalar": _build_scalar,
    "array": _build_array,
    "strarray": _build_strarray,
    "objarray": _build_objarray,
    "model": _build_model,
    "dataclass": _build_dataclass,
    "frame": _build_frame,
    "series": _build_series,
}
