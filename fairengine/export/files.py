"""Model files: one zip per model, self-describing, checksummed, never pickled.

Design notes: docs/howto/export.md, "The model file".
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
import re
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine import __version__
from fairengine.export import safe
from fairengine.models import schema_rules, schemas
from fairengine.models.base import Model
from fairengine.models.columns import input_schema
from fairengine.models.schema_rules import ModelFileError, invalid

if TYPE_CHECKING:
    from fairengine.data import Task
    from fairengine.methods.base import Method, RunResult

FORMAT = "fairengine-model"
FORMAT_VERSION = 1
SUFFIX = ".fairmodel"
_ARRAY_NAME = re.compile(r"^arrays/[A-Za-z0-9_.-]{1,128}\.npy$")
_FIXED_MEMBERS = {"manifest.json", "state.json", "card.md"}
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"Cannot store {type(value).__name__} in a model file's JSON.")


def _dumps(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, indent=1, default=_json_default, allow_nan=False
    ).encode()


def model_bytes(model: Model, *, card: str | None = None, metadata: dict | None = None) -> bytes:
    """The bytes of a model file for ``model`` (what :func:`save_model` writes)."""
    from fairengine.methods.registry import is_model_type

    if not isinstance(model, Model) or not is_model_type(type(model).model_type):
        raise TypeError(f"{type(model).__name__} is not an exportable fairengine model.")
    state, arrays = model.get_state()
    try:
        members: dict[str, bytes] = {"state.json": _dumps(state)}
    except ValueError as exc:  # NaN / infinity: readers refuse them, so writers do too
        raise ValueError(f"Cannot export {type(model).__name__}: its state {exc}.") from exc
    for name, array in arrays.items():
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(array), allow_pickle=False)
        members[f"arrays/{name}.npy"] = buffer.getvalue()
    if card is not None:
        members["card.md"] = card.encode()
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model_type": type(model).model_type,
        "engine_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "metadata": json.loads(
            json.dumps(metadata or {}, default=_json_default), parse_constant=lambda _: None
        ),
        "checksums": {name: _sha256(data) for name, data in sorted(members.items())},
    }
    manifest["manifest_sha256"] = _sha256(_dumps(manifest))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", _dumps(manifest))
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def save_model(
    model: Model | RunResult,
    path: str | os.PathLike[str],
    *,
    card: str | None = None,
    metadata: dict | None = None,
    train: Task | None = None,
    test: Task | None = None,
    method: Method | None = None,
) -> Path:
    """Write ``model`` to one self-describing file, atomically (temp file + ``os.replace``).

    Given a run result with the ``train`` and ``test`` tasks it was run on, this writes the
    complete file the CLI's ``export`` writes: the result's model with its card, method, knobs,
    metrics, checks, baselines and the training data's schema (target, sensitive columns,
    features), so ``fairengine predict`` reads the raw table; and the card beside it as
    ``<path>.md``.

    Parameters
    ----------
    model : Model or RunResult
        A fitted fairengine model (any registered model type), or a method's run result.
    path : path
        Target file; ``.fairmodel`` is the conventional suffix.
    card : str, optional
        A Markdown model card stored inside the file (made from the result when not given).
    metadata : dict, optional
        JSON-able description: method, knobs, metrics, task schema, fingerprint (made from the
        result when not given).
    train, test : Task, optional
        With a run result: the tasks it was fitted and scored on (both required).
    method : Method, optional
        With a run result: the method that made it, whose title heads the card.
    """
    path, result = Path(path), None
    if not isinstance(model, Model) and hasattr(model, "method") and hasattr(model, "model"):
        from fairengine.export.cards import model_card, result_metadata  # cards read the methods

        if train is None or test is None:
            raise TypeError(
                "save_model(result, path) needs the tasks the result was run on: pass "
                "train=... and test=... (the two halves of task.split())."
            )
        result, model = model, model.model
        if card is None:
            card = model_card(
                result, train, test, method=method, file_name=path.name, for_file=True
            )
        metadata = result_metadata(result, train, test) if metadata is None else metadata
    data = model_bytes(model, card=card, metadata=metadata)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if result is not None:  # the card beside the file
        path.with_suffix(".md").write_text(card, encoding="utf-8")
    return path


def _open(
    source: str | os.PathLike[str] | bytes, *, members: bool
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The verified manifest and (with ``members``) every member's checked bytes."""
    from fairengine.methods.registry import is_model_type, model_type_names

    if isinstance(source, bytes | bytearray | memoryview):
        label, raw = "The model file", bytes(source)
    else:
        label = f"Model file '{Path(source).name}'"
        try:
            raw = safe.read_regular(source, safe.MAX_FILE_BYTES)
        except OSError as exc:
            raise ModelFileError(f"{label} cannot be read: {exc.strerror or exc}.") from exc
    if raw[:1] == b"\x80":
        raise ModelFileError(
            f"{label} is a Python pickle, not a fairengine model file. fairengine never loads "
            "pickles (they can run arbitrary code)."
        )
    with safe.open_zip(raw, label) as archive:
        infos = safe.check_infos(archive.infolist(), label)
        unexpected = [n for n in infos if n not in _FIXED_MEMBERS and not _ARRAY_NAME.match(n)]
        if unexpected or "manifest.json" not in infos:
            raise ModelFileError(
                f"{label} is not a fairengine model file (unexpected content: "
                f"{', '.join(repr(n) for n in unexpected[:5]) or 'no manifest.json'})."
            )
        raw_manifest = safe.read_member(archive, infos["manifest.json"], label)
        manifest = safe.check_manifest(raw_manifest, label, _RULES)
        if not is_model_type(manifest["model_type"]):
            raise ModelFileError(
                f"{label} names an unknown model type {manifest['model_type'][:64]!r}; known "
                f"types: {', '.join(sorted(model_type_names()))}."
            )
        data = {"manifest.json": raw_manifest}
        if not members:
            return manifest, data
        checksums = manifest["checksums"]
        present = set(infos) - {"manifest.json"}
        if set(checksums) != present:
            changed = sorted(set(checksums) ^ present)
            raise ModelFileError(
                f"{label} failed its checksum: members were added or removed "
                f"({', '.join(repr(n) for n in changed[:5])})."
            )
        for name in sorted(present):
            data[name] = safe.read_member(archive, infos[name], label)
            if _sha256(data[name]) != checksums[name]:
                raise ModelFileError(f"{label} failed its checksum: {name} was modified.")
    return manifest, data


def _hex_digest(value: Any, path: str) -> None:
    if not isinstance(value, str) or not _SHA256.fullmatch(value):
        raise ModelFileError(f"The model file's manifest is invalid: {path} is not a SHA-256.")


_MANIFEST = schema_rules.obj(
    {
        "format": schema_rules.STR,
        "format_version": schema_rules.INT,
        "model_type": schema_rules.STR,
        "engine_version": schema_rules.STR,
        "created": schema_rules.STR,
        "metadata": schema_rules.obj({}, extra=lambda v, p: None),
        "checksums": schema_rules.obj({}, extra=_hex_digest),
        "manifest_sha256": _hex_digest,
    }
)


_RULES = safe.ManifestRules(
    FORMAT,
    FORMAT_VERSION,
    "model",
    _MANIFEST,
    _dumps,
    advice=" Re-export the model with this version.",
)


def read_manifest(path: str | os.PathLike[str] | bytes) -> dict[str, Any]:
    """The verified manifest of a model file (format, type, metadata) without building the model."""
    return _open(path, members=False)[0]


def verify_model(path: str | os.PathLike[str] | bytes) -> dict[str, Any]:
    """Check every member's checksum without rebuilding the model; returns the manifest.

    Raises
    ------
    ModelFileError
        As :func:`load_model` does.
    """
    return _open(path, members=True)[0]


def load_model(path: str | os.PathLike[str] | bytes) -> Model:
    """Rebuild a model from a file written by :func:`save_model`; verifies every checksum.

    Every step is bounded (see :mod:`fairengine.export.safe`): the zip's member count and declared
    sizes, JSON depth and numbers, array headers; then the state is checked against the model
    type's schema (:mod:`fairengine.models.schemas`: every stored number finite and modest) before
    the model is built, and the built model must predict one synthetic row, a finite number.

    Raises
    ------
    ModelFileError
        For anything that is not an intact fairengine model file: a pickle under our suffix, a
        foreign, damaged, modified or forged file, an unknown model type, or state that does not
        fit its type. No other exception escapes for a bad file.
    """
    from fairengine.methods.registry import resolve_model_type

    manifest, members = _open(path, members=True)
    model_type = manifest["model_type"]
    if "state.json" not in members:
        raise ModelFileError("The model file has no state.json.")
    state = safe.load_json(members.pop("state.json"), "The model file's state.json")
    arrays = {  # each member's bytes are released once its array is built
        name[len("arrays/") : -len(".npy")]: safe.load_npy(members.pop(name), name)
        for name in [n for n in members if n.startswith("arrays/")]
    }
    try:
        cls = resolve_model_type(model_type)
    except (KeyError, ImportError) as exc:
        raise ModelFileError(f"The model type {model_type!r} cannot be loaded: {exc}") from None
    if cls.state_schema is None:
        raise ModelFileError(f"The model type {model_type!r} has no state schema to check against.")
    try:
        cls.state_schema.check(state, arrays)
    except ModelFileError:
        raise
    except (KeyError, IndexError, TypeError, ValueError) as exc:  # a rule meeting odd state
        raise invalid(f"its arrays do not fit its state ({type(exc).__name__}: {exc})") from None
    for name, array in arrays.items():  # skops payloads are zips too: same checks, before skops
        if name.endswith("_skops"):
            safe.check_skops(array.tobytes(), f"The stored estimator {name}")
    try:
        model = cls.from_state(state, arrays)
        probe = schemas.probe_frame(state["encoder"])  # plus columns a model reads besides
        score = model.predict_score(probe.assign(**getattr(model, "probe_inputs", dict)()))
        if not np.all(np.isfinite(np.asarray(score, dtype=float))):
            raise ModelFileError(
                f"The model file's {model_type} model predicts a number that is not finite: "
                "its parameters were forged or damaged."
            )
    except ModelFileError:
        raise
    except Exception as exc:
        raise ModelFileError(
            f"The model file's content does not rebuild a working {model_type} model: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    model.input_schema = input_schema(model, manifest)  # predict checks its columns
    return model


def read_card(path: str | os.PathLike[str] | bytes) -> str | None:
    """The model card stored in a verified model file, if any."""
    card = _open(path, members=True)[1].get("card.md")
    try:
        return None if card is None else card.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelFileError(f"The model file's card is not UTF-8 text: {exc}") from None
