"""Run files: a whole :class:`~fairengine.methods.base.RunResult` as data, never pickled.

Values are written as typed JSON nodes (:class:`Encoder`) with arrays and model files as
members, and read back through :class:`Decoder`: only numbers, strings, NumPy and pandas values,
model files (through their hardened reader) and dataclasses registered with
:func:`register_dataclass` ever come out, every member is used at most once, and nothing is
imported by name. Design notes: docs/architecture.md, "Run files".
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import math
import re
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd

from fairengine.export import safe
from fairengine.export.files import load_model, model_bytes
from fairengine.export.safe import ModelFileError
from fairengine.methods.base import RunResult
from fairengine.methods.evidence import Baselines, Check
from fairengine.models import schema_rules
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
            return value if math.isfinite(value) else {"t": "float", "v": repr(value)}
        if kind in (list, tuple):
            items = [self.node(v, f"{where}[{i}]") for i, v in enumerate(value)]
            return {"t": kind.__name__, "v": items}
        if kind is dict:
            return self.mapping(value, where)
        if _numeric_scalar(value):
            return {"t": "scalar", "dtype": value.dtype.name, "v": self.node(value.item(), where)}
        if kind is np.ndarray and value.dtype.kind == "U":  # strings and objects as JSON lists
            width, shape = value.dtype.itemsize // 4, list(value.shape)
            return {"t": "strarray", "width": width, "shape": shape, "v": value.ravel().tolist()}
        if kind is np.ndarray and value.dtype.kind == "O":  # (never a pickled .npy)
            items = self.objects(value.ravel(order="C"), where)
            return {"t": "objarray", "shape": list(value.shape), "v": items}
        if kind is np.ndarray:
            return self.array(value, where)
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
            bounds = {"start": index.start, "stop": index.stop, "step": index.step}
            return {"t": "range", **bounds, "name": name}
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


def run_fields() -> tuple[dataclasses.Field, ...]:
    return tuple(f for f in dataclasses.fields(RunResult) if f.init)


# ----------------------------------------------------------------------------- the file

FORMAT = "fairengine-run"
FORMAT_VERSION = 1
_MEMBER = re.compile(r"^(arrays/[0-9]{1,6}\.npy|models/[0-9]{1,6}\.fairmodel)$")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _dumps(value: Any, *, sort_keys: bool = True) -> bytes:
    """Compact JSON; the run's own dicts keep their order (``sort_keys=False``)."""
    return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), allow_nan=False).encode()


def encode_run(result: RunResult, key: str) -> bytes:
    """The bytes of a run file holding ``result`` under ``key``.

    Raises
    ------
    TypeError
        If any field holds something a run file cannot store (the message says where), or the
        run is beyond the limits a reader accepts.
    """
    from fairengine import __version__

    if type(result) is not RunResult:
        raise TypeError(f"encode_run stores a RunResult, not a {type(result).__name__}.")
    encoder = Encoder()
    fields = {f.name: encoder.node(getattr(result, f.name), f.name) for f in run_fields()}
    members = {"run.json": _dumps({"fields": fields}, sort_keys=False), **encoder.members}
    _check_limits(members)
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "key": key,
        "method": result.method,
        "engine_version": __version__,
        "checksums": {name: _sha256(data) for name, data in sorted(members.items())},
    }
    manifest["manifest_sha256"] = _sha256(_dumps(manifest))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", _dumps(manifest))
        for name, data in members.items():  # model files are zips already: stored as they are
            stored = zipfile.ZIP_STORED if name.startswith("models/") else zipfile.ZIP_DEFLATED
            archive.writestr(name, data, compress_type=stored)
    data = buffer.getvalue()
    if len(data) > safe.MAX_FILE_BYTES:
        raise TypeError(f"The run is too large to store ({len(data):,} bytes).")
    return data


def _check_limits(members: dict[str, bytes]) -> None:
    """Refuse to write what :func:`decode_run` would refuse to read."""
    total = sum(len(data) for data in members.values())
    if len(members) + 1 > safe.MAX_MEMBERS or total > safe.MAX_TOTAL_BYTES:
        raise TypeError(
            f"The run is too large to store ({len(members)} arrays and models, {total:,} bytes)."
        )
    for name, data in members.items():
        if len(data) > safe.MAX_MEMBER_BYTES:
            raise TypeError(f"The run is too large to store ({name} has {len(data):,} bytes).")
    depth = safe.json_depth(members["run.json"])
    if depth > safe.MAX_JSON_DEPTH or len(members["run.json"]) > safe.MAX_JSON_BYTES:
        raise TypeError(
            f"The run is nested too deeply or too large to store as JSON (depth {depth})."
        )


# ----------------------------------------------------------------------------- reading

_MANIFEST = schema_rules.obj(
    {
        "format": schema_rules.STR,
        "format_version": schema_rules.INT,
        "key": schema_rules.STR,
        "method": schema_rules.STR,
        "engine_version": schema_rules.STR,
        "checksums": schema_rules.obj({}, extra=schema_rules.STR),
        "manifest_sha256": schema_rules.STR,
    }
)


_RULES = safe.ManifestRules(FORMAT, FORMAT_VERSION, "run", _MANIFEST, _dumps, RunFileError)


@contextlib.contextmanager
def _open(raw: bytes, label: str) -> Iterator[tuple[zipfile.ZipFile, dict, dict[str, Any]]]:
    """The open archive, its checked member infos and its verified manifest."""
    if raw[:1] == b"\x80" or raw[:2] == b"\x1f\x8b":
        raise RunFileError(f"{label} is a pickle or gzip file; run files never are.")
    with safe.open_zip(raw, label) as archive:
        infos = safe.check_infos(archive.infolist(), label)
        if "manifest.json" not in infos:
            raise RunFileError(f"{label} is not a fairengine run file (no manifest.json).")
        manifest = safe.check_manifest(
            safe.read_member(archive, infos["manifest.json"], label), label, _RULES
        )
        for name, digest in manifest["checksums"].items():
            if not (name == "run.json" or _MEMBER.match(name)) or not _SHA256.fullmatch(digest):
                raise RunFileError(f"{label} lists an unexpected member {name[:64]!r}.")
        yield archive, infos, manifest


def stored_key(raw: bytes, *, label: str = "The run file") -> str:
    """The key a run file is stored under, from its verified manifest (nothing else is read)."""
    with _open(raw, label) as (_, _, manifest):
        return manifest["key"]


def decode_run(raw: bytes, key: str, *, label: str = "The run file") -> RunResult:
    """The run stored in ``raw``, once the file is verified and holds ``key``.

    Raises
    ------
    RunFileError, ModelFileError
        For anything that is not an intact run file of ``key`` (see the module docstring).
    """
    with _open(raw, label) as (archive, infos, manifest):
        if manifest["key"] != key:
            raise RunFileError(f"{label} holds key {manifest['key'][:12]!r}, not {key[:12]!r}.")
        present = set(infos) - {"manifest.json"}
        if present != set(manifest["checksums"]) or "run.json" not in present:
            raise RunFileError(f"{label} failed its checksum: members were added or removed.")
        members = {name: safe.read_member(archive, infos[name], label) for name in sorted(present)}
    for name, data in members.items():
        if _sha256(data) != manifest["checksums"][name]:
            raise RunFileError(f"{label} failed its checksum: {name} was modified.")
    tree = safe.load_json(members.pop("run.json"), f"{label}'s run.json")
    decoder = Decoder(members, label)
    result = decoder.run(tree)
    if decoder.members:
        raise RunFileError(f"{label} holds members no value uses ({len(decoder.members)}).")
    if result.method != manifest["method"]:
        raise RunFileError(f"{label} holds a run of another method.")
    return result


# ----------------------------------------------------------------------------- reading nodes


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
        fields = tree.get("fields") if isinstance(tree, dict) and set(tree) == {"fields"} else None
        if type(fields) is not dict or set(fields) - {f.name for f in run_fields()}:
            raise self.fail("run.json is not an object of the run's fields")
        values = {name: self.node(v) for name, v in fields.items()}
        try:
            return RunResult(**values)
        except TypeError as exc:  # a field without a default is missing
            raise self.fail(f"run.json lacks a field ({exc})") from None

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
        return [self.node(v) for v in _list(self, node)]


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
    width, texts = node["width"], _list(d, node["v"])
    if (
        any(type(t) is not str for t in texts)
        or type(width) is not int
        or not 0 <= width <= 1 << 16
    ):
        raise d.fail("a string array holds a non-string or has an invalid width")
    return _shaped(d, node, np.array(texts, dtype=f"<U{width}"))


def _shaped(d: Decoder, node: dict[str, Any], values: np.ndarray) -> np.ndarray:
    """The flat ``values`` of a string or object array in the node's shape."""
    shape = node["shape"]
    if type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape):
        raise d.fail(f"a {node['t']} node has an invalid shape")
    if math.prod(shape) != len(values):
        raise d.fail(f"a {node['t']} node does not fit its shape")
    return values.reshape(shape)


def _objects(d: Decoder, value: Any) -> np.ndarray:
    """A flat object array of the scalar values in ``value`` (built here, never unpickled)."""
    items = d.items(value)
    if any(isinstance(v, list | tuple | dict) for v in items):
        raise d.fail("an object array holds a container")
    values = np.empty(len(items), dtype=object)
    values[:] = items
    return values


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
    columns_data = {
        i: pd.Series(v, index=index, dtype=_object_dtype(v), copy=False) for i, v in enumerate(data)
    }
    frame = pd.DataFrame(columns_data, index=index) if data else pd.DataFrame(index=index)
    frame.columns = columns
    frame.attrs = _build_dict(d, node["attrs"]) if "attrs" in node else {}
    return frame


def _build_series(d: Decoder, node: dict[str, Any]) -> pd.Series:
    index, values = _build_index(d, node["index"]), _build_values(d, node["values"])
    if len(values) != len(index):
        raise d.fail("a series does not fit its index")
    series = pd.Series(values, index=index, dtype=_object_dtype(values), copy=False)
    series.name = d.node(node["name"])
    series.attrs = _build_dict(d, node["attrs"]) if "attrs" in node else {}
    return series


def _object_dtype(values: Any) -> Any:
    """``object`` for object values (else pandas would infer strings from them), else None."""
    return object if isinstance(values, np.ndarray) and values.dtype == object else None


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


_VALUE_BUILDERS: dict[str, Callable[[Decoder, dict[str, Any]], Any]] = {
    "array": _column_array,
    "strings": _column_strings,
    "categorical": _column_categorical,
    "masked": _column_masked,
    "objects": lambda d, node: _objects(d, node["v"]),
}


_BUILDERS: dict[str, Callable[[Decoder, dict[str, Any]], Any]] = {
    "float": lambda d, node: FLOAT_WORDS[node["v"]],
    "list": lambda d, node: d.items(node["v"]),
    "tuple": lambda d, node: tuple(d.items(node["v"])),
    "dict": _build_dict,
    "scalar": _build_scalar,
    "array": _build_array,
    "strarray": _build_strarray,
    "objarray": lambda d, node: _shaped(d, node, _objects(d, node["v"])),
    "model": lambda d, node: load_model(d.take(node, "models", ".fairmodel")),
    "dataclass": _build_dataclass,
    "frame": _build_frame,
    "series": _build_series,
}
