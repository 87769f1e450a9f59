"""Cached engine calls of the fair regression page (the page itself computes nothing)."""

from __future__ import annotations

import pandas as pd

from dashboard.components.cached import model_file  # noqa: F401  (one definition)
from fairengine.data import Task
from fairengine.sweeps.fair_regression import eps_frontier

#: ε values of the page's frontier sweep (log grid).
EPS_GRID = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 1.0)


def frontier_over_eps(train: Task, test: Task, knobs: dict, store, n_jobs: int = 1) -> pd.DataFrame:
    """Train and test points of a sweep over ε (other knobs fixed), with the convex envelope of
    the training points marked (cached in ``store``)."""
    fixed = {k: v for k, v in knobs.items() if k != "eps"}
    return eps_frontier(train, test, EPS_GRID, store=store, n_jobs=n_jobs, **fixed)
