"""The disclosivity–imbalance trade-off of balanced filtering (Deng et al. 2023)
over several train/test splits: every point goes through :func:`fairengine.frontier.sweep`, so it
is cached by the FrontierStore (and served from the shipped demo frontiers where they exist)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairengine.data import Task
from fairengine.frontier import point_key, sweep, task_key
from fairengine.methods import get_method
from fairengine.methods.balanced_filtering.curves import CURVES, curve_grid, curve_of
from fairengine.methods.balanced_filtering.method import ALPHA_GRID, ETA_GRID

__all__ = ["missing_points", "tradeoff_points"]


def _splits(task: Task, seeds: Sequence[int], test_size: float) -> list[tuple[int, Task, Task]]:
    return [(int(s), *task.split(test_size=test_size, random_state=int(s))) for s in seeds]


def missing_points(
    task: Task,
    store: Any,
    *,
    curves: Sequence[str] = tuple(CURVES),
    alphas: Sequence[float] = ALPHA_GRID,
    etas: Sequence[float] = ETA_GRID,
    seeds: Sequence[int] = (0,),
    test_size: float = 1 / 3,
    **fixed: Any,
) -> int:
    """How many points of :func:`tradeoff_points` (same arguments) ``store`` does not hold; 0
    means the curves can be drawn without computing anything (e.g. the shipped demo curves)."""
    method = get_method("balanced_filtering")
    grid = [method.validate_knobs(k) for k in curve_grid(curves, alphas, etas, **fixed)]
    missing = 0
    for _, train, test in _splits(task, seeds, test_size):
        tkey = task_key(train, test)
        keys = {point_key(tkey, method, knobs): knobs for knobs in grid}
        missing += sum(store.get(tkey, method, knobs) is None for knobs in keys.values())
    return missing


def tradeoff_points(
    task: Task,
    *,
    curves: Sequence[str] = tuple(CURVES),
    alphas: Sequence[float] = ALPHA_GRID,
    etas: Sequence[float] = ETA_GRID,
    seeds: Sequence[int] = (0,),
    test_size: float = 1 / 3,
    store: Any = None,
    n_jobs: int = 1,
    progress: Any = None,
    **fixed: Any,
) -> pd.DataFrame:
    """Every (curve, seed, alpha or eta, split) point: one row with the metrics.

    Each seed is a fresh stratified split ``task.split(test_size, random_state=seed)`` (the
    paper: 2/3 train, 1/3 test, App. A.1.2). Summarise with
    :func:`~fairengine.methods.balanced_filtering.tradeoff_curves`.

    Parameters
    ----------
    task : Task
        The rows to split.
    curves : sequence of str
        The curves (names of ``CURVES``).
    alphas, etas : sequence of float
        The levels of the tree curves (α) and of the classifier curves (η).
    seeds : sequence of int
        One train/test split per seed.
    test_size : float
        The held-out share of each split.
    store : FrontierStore, optional
        The cache every point goes through (:func:`fairengine.frontier.sweep`).
    n_jobs : int
        Parallel workers of each split's sweep.
    progress : callable, optional
        ``progress(done, total, point)`` after each point of each split's sweep.
    **fixed
        Knobs fixed for every point.
    """
    frames = []
    grid = curve_grid(curves, alphas, etas, **fixed)
    for seed, train, test in _splits(task, seeds, test_size):
        frontier = sweep(
            "balanced_filtering", train, test, grid, store=store, n_jobs=n_jobs, progress=progress
        )
        points = frontier.points.copy()
        points["seed"] = seed
        frames.append(points)
    points = pd.concat(frames, ignore_index=True)
    points["curve"] = [
        curve_of(p, r) for p, r in zip(points["proxy"], points["relaxed"], strict=True)
    ]
    points["level"] = np.where(points["proxy"] == "ab", points["alpha"], points["eta"])
    return points
