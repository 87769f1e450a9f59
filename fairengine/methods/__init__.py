"""Fairness methods behind one contract: ``list_methods``, ``get_method``, ``Method``, ``Knob``.

The built-in method modules register themselves on the first lookup
(:func:`~fairengine.methods.registry.list_methods` / ``get_method``), not when this package is
imported, so ``fairengine.methods.base`` and the command line's listings stay light (issue 18).
"""

from fairengine.methods.base import Knob, KnobError, Method, RunResult
from fairengine.methods.registry import get_method, list_methods, register

__all__ = ["Knob", "KnobError", "Method", "RunResult", "get_method", "list_methods", "register"]
