"""Frontiers: sweeps over knob grids, Pareto masks, the on-disk FrontierStore, parallel backends.

>>> from fairengine.frontier import FrontierStore, sweep  # doctest: +SKIP
>>> frontier = sweep("reweighing", train, test, {"strength": [0, 0.5, 1]},
...                  store=FrontierStore(), n_jobs=2)  # doctest: +SKIP
"""

from fairengine.frontier.pareto import pareto_mask
from fairengine.frontier.result import Frontier
from fairengine.frontier.store import CachedPoint, FrontierStore, point_key, task_key
from fairengine.frontier.sweep import expand_grid, sweep

__all__ = [
    "CachedPoint",
    "Frontier",
    "FrontierStore",
    "expand_grid",
    "pareto_mask",
    "point_key",
    "sweep",
    "task_key",
]
