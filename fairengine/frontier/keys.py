"""Store keys: which (train, test) pair, method, knob values and engine version a point is."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fairengine.methods.base import Method


def task_key(train: Any, test: Any) -> str:
    """SHA-256 identifying a (train, test) pair of :class:`~fairengine.data.Task` by content."""
    return hashlib.sha256((train.fingerprint + test.fingerprint).encode()).hexdigest()


def _canonical(value: Any) -> Any:
    # Floats via repr, so that 0.1 and 0.1000000000000001 differ and 1 / 1.0 of a float knob
    # (already coerced by Knob.validate) agree.
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return {"float": repr(float(value))}
    if hasattr(value, "item"):  # numpy scalar
        return _canonical(value.item())
    return str(value)


def method_version(method: str | Method) -> str:
    """A method's ``version`` (of the registered method for a name): bumping it invalidates only
    that method's cache."""
    if not isinstance(method, str):
        return str(method.version)
    if method.startswith("@"):  # the run store's own entries (baseline fits, tables): no method
        return ""
    from fairengine.methods.registry import get_method

    try:
        return str(get_method(method).version)
    except ValueError:  # not registered (e.g. a test double): the name alone
        return ""


def point_key(
    task_key: str,
    method: str | Method,
    knobs: Mapping[str, Any],
    *,
    engine_version: str | None = None,
) -> str:
    """The store key of one point: SHA-256 of its task, method (name and ``Method.version``),
    canonical knobs and engine version.

    Parameters
    ----------
    task_key : str
        From :func:`task_key`.
    method : str or Method
        A :class:`~fairengine.methods.Method` (its name and version, looked up nowhere), or a
        method name (the registered method's version).
    knobs : mapping
        Every knob's (validated) value.
    engine_version : str, optional
        Defaults to the running ``fairengine.__version__``.
    """
    if engine_version is None:
        import fairengine

        engine_version = fairengine.__version__
    payload = {
        "task_key": task_key,
        "method": method if isinstance(method, str) else method.name,
        "method_version": method_version(method),
        "knobs": {name: _canonical(knobs[name]) for name in sorted(knobs)},
        "engine_version": engine_version,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
