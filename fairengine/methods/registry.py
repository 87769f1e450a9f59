"""Name -> Method. The built-in method modules register themselves on the first lookup:
:func:`list_methods` imports all of them (once), :func:`get_method` only the one asked for, so
importing :mod:`fairengine.methods` (or loading one method's model file) stays light."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from fairengine.methods.base import Method
from fairengine.models.base import (
    MODEL_MODULES,
    Model,
    registered_model,
    registered_names,
    unregister_model,
)

#: The built-in method modules under ``fairengine.methods``, in listing order (the reference
#: methods, then the papers' methods).
METHOD_MODULES: tuple[str, ...] = (
    "reweighing",
    "fairlearn_eg",
    "threshold_optimizer",
    "balanced_filtering",
    "maxent",
    "fair_regression",
    "noisy_groups",
    "multiaccurate_proxy",
)
#: Their full module names.
BUILTIN: tuple[str, ...] = tuple(f"fairengine.methods.{m}" for m in METHOD_MODULES)

_METHODS: dict[str, Method] = {}
#: Model type name → its module, from the registered methods' :attr:`Method.model_types`.
_MODEL_TYPES: dict[str, str] = {}
_loaded = False


def register(method: Method) -> Method:
    """Add a method to the registry (a module calls this once at import), with the model types
    and metrics it declares."""
    _METHODS[method.name] = method
    _MODEL_TYPES.update(method.model_types)
    if method.metrics:
        from fairengine.metrics.registry import declare_metrics

        declare_metrics(method.metrics)
    return method


def unregister(name: str) -> None:
    """Remove a method added with :func:`register` (e.g. one a test defines), with the model
    types and metrics it declares that no other registered method declares too."""
    method = _METHODS.pop(name, None)
    if method is None:
        return
    kept_types = {t for m in _METHODS.values() for t in m.model_types}
    for type_name in set(method.model_types) - kept_types:
        _MODEL_TYPES.pop(type_name, None)
        unregister_model(type_name)
    kept_metrics = {info.name for m in _METHODS.values() for info in m.metrics}
    gone = {info.name for info in method.metrics} - kept_metrics
    if gone:
        from fairengine.metrics.registry import forget_metrics

        forget_metrics(gone)


def portable(method: Method) -> str | Method:
    """What a job in a fresh process needs to find ``method``: the name of a registered built-in
    one (imported by name there), else the :class:`Method` itself (unpickling it imports the
    module that defines its functions, so a method registered elsewhere runs in a worker too)."""
    builtin = _rank(method) < len(BUILTIN) and _METHODS.get(method.name) is method
    return method.name if builtin else method


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
            f"Unknown method {name!r}. Available methods: {', '.join(list_methods())}."
        ) from None


def model_type_module(name: str) -> str | None:
    """The module that defines model type ``name``: an engine type's
    (:data:`fairengine.models.base.MODEL_MODULES`) or the one a registered method declares
    (found by importing the method named after it, else every built-in method); None if no one
    declares it, so a model file never chooses what gets imported."""
    if name in MODEL_MODULES:
        return MODEL_MODULES[name]
    if name not in _MODEL_TYPES:
        for method in METHOD_MODULES:
            if method.startswith(name):
                importlib.import_module(f"fairengine.methods.{method}")
    if name not in _MODEL_TYPES:
        load_builtin()
    return _MODEL_TYPES.get(name)


def model_type_names() -> set[str]:
    """The type names a model file may carry (imports every method's declaration, not its
    model module)."""
    load_builtin()
    return set(MODEL_MODULES) | set(_MODEL_TYPES) | registered_names()


def is_model_type(name: str) -> bool:
    """Whether a model file may carry the type ``name`` (imports at most its method's
    declaration, not its model module)."""
    return registered_model(name) is not None or model_type_module(name) is not None


def resolve_model_type(name: str) -> type[Model]:
    """The class registered under ``name``, importing its declared module on first use;
    KeyError if no module declares it (a file never chooses what gets imported)."""
    cls = registered_model(name)
    if cls is None:
        module = model_type_module(name)
        if module is not None:
            importlib.import_module(module)
        cls = registered_model(name)
    if cls is None:
        raise KeyError(name)
    return cls


def lazy_attributes(package: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """A method package's module ``__getattr__`` (PEP 562): ``name`` is read from the submodule
    ``table[name]`` when first asked for, so registering the method does not load its
    algorithm; any other name raises :class:`AttributeError`."""

    def __getattr__(name: str) -> Any:
        if name in table:
            return getattr(importlib.import_module(f"{package}.{table[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
