"""Disclosivity-imbalance trade-off curves of every proxy, over seeds (spec §4.2, §5 plot 1).

Every point goes through :func:`fairengine.frontier.sweep`, so it is cached by the
FrontierStore: tree proxies sweep ``alpha``, the baselines sweep ``eta`` (interpolation).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from fairengine.data import Task
from fairengine.methods.balanced_filtering.method import ALPHA_GRID, ETA_GRID

#: curve name -> knobs of its points (the sweep variable is added per point)
CURVES: dict[str, dict[str, Any]] = {
    "(α, β) proxy": {"proxy": "ab", "relaxed": False},
    "Relaxed (α, β) proxy": {"proxy": "ab", "relaxed": True},
    "QP decision tree": {"proxy": "qp_dt"},
    "QP regression": {"proxy": "qp_lr"},
    "Naive decision tree": {"proxy": "naive_dt"},
    "Naive regression": {"proxy": "naive_lr"},
}


def curve_grid(
    curves: Sequence[str] = tuple(CURVES),
    alphas: Sequence[float] = ALPHA_GRID,
    etas: Sequence[float] = ETA_GRID,
    **fixed: Any,
) -> list[dict[str, Any]]:
    """The knob dicts of the requested curves (``fixed`` knobs added to every point)."""
    grid = []
    for name in curves:
        base = {**CURVES[name], **fixed}
        if base["proxy"] == "ab":
            grid += [{**base, "alpha": float(a)} for a in alphas]
        else:
            grid += [{**base, "eta": float(e)} for e in etas]
    return grid


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
    progress: Callable[[int, int, dict], None] | None = None,
    **fixed: Any,
) -> pd.DataFrame:
    """Every (curve, seed, alpha or eta, split) point: one row with the metrics.

    Each seed is a fresh stratified split (2/3 train, 1/3 test, App. A.1.2).
    """
    from fairengine.frontier import sweep

    frames = []
    grid = curve_grid(curves, alphas, etas, **fixed)
    for seed in seeds:
        train, test = task.split(test_size=test_size, random_state=int(seed))
        frontier = sweep(
            "balanced_filtering", train, test, grid, store=store, n_jobs=n_jobs, progress=progress
        )
        points = frontier.points.copy()
        points["seed"] = int(seed)
        frames.append(points)
    points = pd.concat(frames, ignore_index=True)
    names = {tuple(sorted(v.items())): k for k, v in CURVES.items()}

    def curve_of(row: pd.Series) -> str:
        knobs = {"proxy": row["proxy"]}
        if row["proxy"] == "ab":
            knobs["relaxed"] = bool(row["relaxed"])
        return names[tuple(sorted(knobs.items()))]

    points["curve"] = points.apply(curve_of, axis=1)
    points["level"] = np.where(points["proxy"] == "ab", points["alpha"], points["eta"])
    return points


def tradeoff_curves(points: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Mean and t-interval over seeds per (curve, level, split) (pitfall P13:
    mean ± t_{0.975, n-1} sd / sqrt(n))."""
    rows = []
    metric_names = ("disclosivity", "imbalance", "acceptance_rate", "n_leaves")
    for (curve, value, split), group in points.groupby(["curve", "level", "split"], sort=False):
        n = len(group)
        record = {"curve": curve, "level": value, "split": split, "n_seeds": n}
        for name in metric_names:
            mean = float(group[name].mean())
            half = (
                float(stats.t.ppf(0.5 + level / 2, n - 1) * group[name].std(ddof=1) / np.sqrt(n))
                if n > 1
                else 0.0
            )
            record[name], record[f"{name}_low"], record[f"{name}_high"] = (
                mean,
                mean - half,
                mean + half,
            )
        rows.append(record)
    return pd.DataFrame(rows)
