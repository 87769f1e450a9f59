"""What would it cost to be fairer? The frontier points nearest an audited model that improve
its fairness metric, with their change in error, as a small table."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from fairengine import metrics

COLUMNS = (
    "method", "point_id", "knobs", "fairness", "performance", "fairness_gain", "error_cost",
    "distance", "checks",
)  # fmt: skip


def cost_of_fairness(
    audited: Any,
    frontiers: Iterable[Any],
    *,
    split: str = "test",
    per_method: int = 3,
) -> pd.DataFrame:
    """The ``per_method`` points of each method nearest the audited model on the plane that
    improve its fairness metric, cheapest error first.

    Parameters
    ----------
    audited : AuditResult
        The outside model (its ``fairness_metric``, ``performance_metric`` and metrics).
    frontiers : iterable
        Frontiers, or lists of their point records (``Frontier.to_records``).
    split : {"test", "train"}
    per_method : int

    Returns
    -------
    pandas.DataFrame
        One row per point: ``method``, ``point_id``, ``knobs`` (text), ``fairness`` and
        ``performance`` (its metric values), ``fairness_gain`` (how much the fairness metric
        improves, positive), ``error_cost`` (performance change; positive = more error),
        ``distance`` (on the plane) and ``checks`` (the point's worst check level, or "").
    """
    from fairengine.frontier.compare import knob_label

    fair, perf = audited.fairness_metric, audited.performance_metric
    here_perf, here_fair = audited.point(split)
    sign_fair = 1.0 if metrics.is_lower_better(fair) else -1.0
    sign_perf = 1.0 if metrics.is_lower_better(perf) else -1.0
    rows = []
    items = (f.to_records() if hasattr(f, "to_records") else f for f in frontiers)
    for record in (record for item in items for record in item):
        values = (record.get("metrics") or {}).get(split) or {}
        f, p = _number(values.get(fair)), _number(values.get(perf))
        if f is None or p is None:
            continue
        gain = sign_fair * (here_fair - f)
        if gain <= 1e-12:
            continue
        rows.append(
            {
                "method": str(record.get("method", "")),
                "point_id": str(record.get("point_id", "")),
                "knobs": knob_label(dict(record.get("knobs") or {})),
                "fairness": f,
                "performance": p,
                "fairness_gain": gain,
                "error_cost": sign_perf * (p - here_perf),
                "distance": math.hypot(f - here_fair, p - here_perf),
                "checks": worst_level(record.get("checks")),
            }
        )
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    if table.empty:
        return table
    nearest = table.sort_values("distance").groupby("method", sort=False).head(per_method)
    return nearest.sort_values(["error_cost", "distance"]).reset_index(drop=True)


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def worst_level(checks: Any) -> str:
    """The worst level among point checks (``"fail"``, ``"warn"``, ``"ok"``; "" without any)."""
    levels = {str(c.get("level")) for c in checks or () if isinstance(c, Mapping)}
    return next((level for level in ("fail", "warn", "ok") if level in levels), "")
