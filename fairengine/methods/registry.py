"""Name -> Method. Each method module registers itself when imported; :func:`list_methods` and
:func:`get_method` import every module of :data:`METHOD_MODULES` first (once), so importing
:mod:`fairengine.methods` alone stays cheap (see the package docstring)."""

from __future__ import annotations

import importlib

from fairengine.methods.base import Method

#: The method modules under ``fairengine.methods``, in listing order (seed order after the
#: two baselines).
METHOD_MODULES: tuple[str, ...] = (
    "reweighing",
    "fairlearn_eg",
    "balanced_filtering",  # seed 000
    "maxent",  # seed 001
    "fair_regression",  # seed 002
    "noisy_groups",  # seed 003
    "multiaccurate_proxy",  # seed 004
)

_METHODS: dict[str, Method] = {}
_loaded = False


def _load_all() -> None:
    global _loaded
    if not _loaded:
        for module in METHOD_MODULES:
            importlib.import_module(f"fairengine.methods.{module}")
        _loaded = True


def register(method: Method) -> Method:
    """Add a method to the registry (a module calls this once at import)."""
    _METHODS[method.name] = method
    return method


def list_methods() -> list[str]:
    """Names of the registered methods: :data:`METHOD_MODULES` order, then any others in
    registration order."""
    _load_all()
    order = {name: i for i, name in enumerate(METHOD_MODULES)}
    return sorted(_METHODS, key=lambda name: order.get(name, len(order)))


def get_method(name: str) -> Method:
    """The method called ``name``; ``ValueError`` naming the valid ones otherwise."""
    if name not in _METHODS:
        _load_all()
    try:
        return _METHODS[name]
    except KeyError:
        raise ValueError(
            f"Unknown method {name!r}. Available methods: {', '.join(list_methods())}."
        ) from None
