"""Tables for comparing cached frontiers of several methods on one task (the Compare page)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from fairengine import metrics
from fairengine.frontier.pareto import pareto_mask
from fairengine.methods import list_methods


def knob_label(knobs: dict[str, Any]) -> str:
    """``eps=0.02, max_iter=50`` — knobs in a short readable form."""
    parts = []
    for name, value in knobs.items():
        shown = f"{value:.4g}" if isinstance(value, float) else str(value)
        parts.append(f"{name}={shown}")
    return ", ".join(parts)


def comparison_table(points: Sequence[Any]) -> pd.DataFrame:
    """One row per (cached point, split): method, point_id, knobs, every metric.

    ``points`` are :class:`~fairengine.frontier.CachedPoint` objects (anything with ``method``,
    ``point_id``, ``knobs`` and ``metrics``).
    """
    rows = []
    for point in points:
        for split, values in point.metrics.items():
            rows.append(
                {
                    "method": point.method,
                    "point_id": point.point_id,
                    "split": split,
                    "knobs": knob_label(point.knobs),
                    **{k: float(v) for k, v in values.items()},
                }
            )
    return pd.DataFrame(rows)


def metric_columns(table: pd.DataFrame) -> list[str]:
    """The metric columns of a comparison table, in the registry's order (the methods' own
    metrics included: every method is registered first)."""
    list_methods()
    return [m for m in metrics.ALL_METRIC_NAMES if m in table.columns]


def mark_pareto(table: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """Add ``pareto`` (within each method and split) and ``pareto_all`` (across methods).

    Directions come from :func:`fairengine.metrics.is_lower_better`.
    """
    table = table.copy()
    minimize = (metrics.is_lower_better(x), metrics.is_lower_better(y))
    table["pareto"] = False
    table["pareto_all"] = False
    if table.empty or x not in table or y not in table:
        return table
    for _, index in table.groupby("split").groups.items():
        part = table.loc[index]
        table.loc[index, "pareto_all"] = pareto_mask(part[x], part[y], minimize=minimize)
    for _, index in table.groupby(["split", "method"]).groups.items():
        part = table.loc[index]
        table.loc[index, "pareto"] = pareto_mask(part[x], part[y], minimize=minimize)
    return table


#: The plane every predicting method of a task kind shares (the shared evaluation's axes).
SHARED_PLANE = {"classification": ("error", "dp_diff"), "regression": ("loss", "sp_ks")}


def _covered(table: pd.DataFrame, x: str, y: str) -> set[str]:
    """Methods with at least one point that has both ``x`` and ``y``."""
    if table.empty or x not in table or y not in table:
        return set()
    rows = table[table[x].notna() & table[y].notna()]
    return set(rows["method"])


def default_plane(table: pd.DataFrame, kind: str) -> tuple[str, str]:
    """The axes to open on: the kind's shared plane when any point has it, else the pair of
    declared metrics (x ≠ y) that the most methods have (ties: registry order)."""
    x, y = SHARED_PLANE.get(kind, SHARED_PLANE["classification"])
    if _covered(table, x, y):
        return x, y
    names = metric_columns(table)
    best, best_count = (x, y), 0
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            count = len(_covered(table, a, b))
            if count > best_count:
                best, best_count = (a, b), count
    return best


def plane_notes(table: pd.DataFrame, x: str, y: str, methods: Sequence[str]) -> dict[str, str]:
    """For each of ``methods`` with no point on (x, y): why, in a few words.

    E.g. ``{"balanced_filtering": "reports no Error rate / Demographic parity difference — it
    filters data rather than predicting; see its page"}``.
    """
    covered = _covered(table, x, y)
    standard = {
        *metrics.standard_metrics("classification"),
        *metrics.standard_metrics("regression"),
    }
    notes = {}
    for method in methods:
        if method in covered:
            continue
        part = table[table["method"] == method]
        has = [m for m in metric_columns(part) if part[m].notna().any()]
        missing = [m for m in (x, y) if m not in has]
        what = " / ".join(metrics.metric_label(m) for m in missing)
        if not standard & set(has):
            why = "it does not predict the target (it filters or generates data); see its page"
        else:
            shown = ", ".join(metrics.metric_label(m) for m in has[:3])
            why = f"it reports {shown}{' and more' if len(has) > 3 else ''}"
        notes[method] = f"no {what} — {why}"
    return notes
