"""Disclosivity-imbalance trade-off curves of every proxy, over seeds:
the curves' knob grids and their mean / t-interval over seeds. The cached sweep that produces
the points sits above the methods: :func:`fairengine.sweeps.balanced_filtering.tradeoff_points`
(tree proxies sweep ``alpha``, the baselines sweep ``eta``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

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


def curve_of(proxy: str, relaxed: bool) -> str:
    """The name in :data:`CURVES` of a point's proxy (and relaxed flag, tree proxies)."""
    knobs: dict[str, Any] = {"proxy": proxy}
    if proxy == "ab":
        knobs["relaxed"] = bool(relaxed)
    for name, curve in CURVES.items():
        if curve == knobs:
            return name
    raise KeyError(f"no curve for {knobs}")


def tradeoff_curves(points: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Mean and t-interval over seeds per (curve, level, split) (pitfall P13:
    mean ± t_{0.975, n-1} sd / sqrt(n)); NaN values (an empty filtered sample) are left out,
    ``n_seeds`` counts the seeds with a defined imbalance."""
    rows = []
    metric_names = ("disclosivity", "imbalance", "acceptance_rate", "n_leaves")
    for (curve, value, split), group in points.groupby(["curve", "level", "split"], sort=False):
        record = {
            "curve": curve,
            "level": value,
            "split": split,
            "n_seeds": int(group["imbalance"].notna().sum()),
            "n_empty": int(group["imbalance"].isna().sum()),
        }
        for name in metric_names:
            values = group[name].dropna()
            n = len(values)
            mean = float(values.mean()) if n else float("nan")
            half = (
                float(stats.t.ppf(0.5 + level / 2, n - 1) * values.std(ddof=1) / np.sqrt(n))
                if n > 1
                else 0.0
            )
            record |= {name: mean, f"{name}_low": mean - half, f"{name}_high": mean + half}
        rows.append(record)
    return pd.DataFrame(rows)
