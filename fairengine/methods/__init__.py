"""Fairness methods behind one contract: ``list_methods``, ``get_method``, ``Method``, ``Knob``.

The built-in method modules register themselves on the first lookup (:func:`list_methods`
imports all of them, :func:`get_method` only the one asked for), and ``fairengine.methods.<name>``
imports one on attribute access. Importing this package alone imports no method, so loading one
method's exported model pulls in neither the others nor fairlearn, and the command line's listings
stay light.
"""

from __future__ import annotations

import importlib
from typing import Any

from fairengine.methods.base import Knob, KnobError, Method, RunResult
from fairengine.methods.registry import METHOD_MODULES, get_method, list_methods, register

__all__ = ["Knob", "KnobError", "Method", "RunResult", "get_method", "list_methods", "register"]


def __getattr__(name: str) -> Any:
    if name in METHOD_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
