"""Fair regression's points over ε (Agarwal et al. 2019, Figure 1): a cached sweep of the ε grid
with the convex envelope of the training points marked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from fairengine.data import Task
from fairengine.frontier import sweep

__all__ = ["eps_points", "mark_envelope"]


def eps_points(
    train: Task,
    test: Task,
    eps_grid: Sequence[float],
    *,
    store: Any = None,
    n_jobs: int = 1,
    **knobs: Any,
) -> pd.DataFrame:
    """The train and test points of an ε sweep (:func:`fairengine.frontier.sweep`, cached in
    ``store``) with an ``envelope`` column (:func:`mark_envelope`)."""
    grid = {"eps": list(eps_grid), **{k: [v] for k, v in knobs.items()}}
    points = sweep("fair_regression", train, test, grid, store=store, n_jobs=n_jobs).points
    return mark_envelope(points)


def mark_envelope(points: pd.DataFrame) -> pd.DataFrame:
    """``points`` (train and test rows of an ε sweep) with an ``envelope`` column: the convex
    envelope of the training points; test points inherit the train selection."""
    from fairengine.methods.fair_regression.baselines import convex_envelope  # loads sklearn

    points = points.copy()
    on_train = points["split"] == "train"
    mask = convex_envelope(points.loc[on_train, "sp_ks"], points.loc[on_train, "scaled_loss"])
    chosen = set(points.loc[on_train, "point_id"][mask])
    points["envelope"] = points["point_id"].isin(chosen)
    return points
