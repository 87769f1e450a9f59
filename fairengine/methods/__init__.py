"""Fairness methods behind one contract: ``list_methods``, ``get_method``, ``Method``, ``Knob``.

The method modules register themselves when first imported; :func:`list_methods` and
:func:`get_method` import all of them (in :data:`registry.METHOD_MODULES` order) on first use, and
``fairengine.methods.<name>`` imports one on attribute access. Importing this package alone imports
no method (so loading one method's exported model pulls in neither the others nor fairlearn).
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
