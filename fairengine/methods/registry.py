"""Name -> Method. Method modules register themselves when :mod:`fairengine.methods` is imported."""

from __future__ import annotations

from fairengine.methods.base import Method

_METHODS: dict[str, Method] = {}


def register(method: Method) -> Method:
    """Add a method to the registry (a module calls this once at import)."""
    _METHODS[method.name] = method
    return method


def list_methods() -> list[str]:
    """Names of the registered methods, in registration order."""
    return list(_METHODS)


def get_method(name: str) -> Method:
    """The method called ``name``; ``ValueError`` naming the valid ones otherwise."""
    try:
        return _METHODS[name]
    except KeyError:
        raise ValueError(
            f"Unknown method {name!r}. Available methods: {', '.join(_METHODS)}."
        ) from None
