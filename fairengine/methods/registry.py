"""Name -> Method. The built-in method modules register themselves on the first lookup."""

from __future__ import annotations

import importlib

from fairengine.methods.base import Method

_METHODS: dict[str, Method] = {}

#: Built-in method modules, in listing order (reference methods first, then seeds 000-004).
BUILTIN = (
    "fairengine.methods.reweighing",
    "fairengine.methods.fairlearn_eg",
    "fairengine.methods.balanced_filtering",  # seed 000
    "fairengine.methods.maxent",  # seed 001
    "fairengine.methods.fair_regression",  # seed 002
    "fairengine.methods.noisy_groups",  # seed 003
    "fairengine.methods.multiaccurate_proxy",  # seed 004
)
_loaded = False


def register(method: Method) -> Method:
    """Add a method to the registry (a module calls this once at import)."""
    _METHODS[method.name] = method
    return method


def load_builtin() -> None:
    """Import every built-in method module (once); each registers its method."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in BUILTIN:
        importlib.import_module(module)
    # a built-in module imported directly before the first lookup registered out of order
    ordered = sorted(_METHODS.values(), key=_rank)
    _METHODS.clear()
    _METHODS.update({m.name: m for m in ordered})


def _rank(method: Method) -> int:
    """Position of a built-in method's module in :data:`BUILTIN`; others after (stable sort)."""
    module = getattr(method.run_function, "__module__", "") or ""
    for i, prefix in enumerate(BUILTIN):
        if module == prefix or module.startswith(prefix + "."):
            return i
    return len(BUILTIN)


def list_methods() -> list[str]:
    """Names of the registered methods: the built-in ones in :data:`BUILTIN` order, then others
    in registration order."""
    load_builtin()
    return list(_METHODS)


def get_method(name: str) -> Method:
    """The method called ``name``; ``ValueError`` naming the valid ones otherwise.

    A built-in method is found by importing its own module only (a cached sweep of one method
    does not load the other six)."""
    module = f"fairengine.methods.{name}"
    if name not in _METHODS and module in BUILTIN:
        importlib.import_module(module)
    if name not in _METHODS:
        load_builtin()
    try:
        return _METHODS[name]
    except KeyError:
        raise ValueError(
            f"Unknown method {name!r}. Available methods: {', '.join(_METHODS)}."
        ) from None
