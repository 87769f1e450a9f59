"""Fairness methods behind one contract: ``list_methods``, ``get_method``, ``Method``, ``Knob``.

Importing this package registers every method module.
"""

from fairengine.methods import reweighing  # noqa: F401, I001  (registration order)
from fairengine.methods import fairlearn_eg  # noqa: F401, E402
from fairengine.methods import balanced_filtering  # noqa: F401, E402  (seed 000)
from fairengine.methods import maxent  # noqa: F401, E402  (seed 001)
from fairengine.methods import fair_regression  # noqa: F401, E402  (seed 002)
from fairengine.methods import noisy_groups  # noqa: F401, E402  (seed 003)
from fairengine.methods import multiaccurate_proxy  # noqa: F401, E402  (seed 004)
from fairengine.methods.base import Knob, KnobError, Method, RunResult
from fairengine.methods.registry import get_method, list_methods, register

__all__ = ["Knob", "KnobError", "Method", "RunResult", "get_method", "list_methods", "register"]
