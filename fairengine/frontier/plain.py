"""A frontier's points as plain records, without pandas (the command line's cached path).

:func:`plain_records` returns exactly what :meth:`Frontier.to_records` returns for the same sweep
records (same metric order, same Pareto flags, NaN as None), but builds no DataFrame, so that a
fully cached ``fairengine sweep`` imports neither pandas nor a method's algorithm.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fairengine.frontier.pareto import pareto_mask
from fairengine.frontier.result import (
    SPLITS,
    PointRecord,
    _metric_float,
    _metric_order,
    _plain,
    record_evidence,
)
from fairengine.metrics import is_lower_better


def plain_records(
    method: str,
    records: Sequence[PointRecord],
    axes: tuple[str, str],
    knob_names: Sequence[str],
) -> list[dict[str, Any]]:
    """``Frontier.from_records(method, ..., records, axes, knob_names).to_records()``, pandas-free.

    Parameters
    ----------
    method : str
        Method name.
    records : sequence of PointRecord
        One per knob setting, in grid order.
    axes : (str, str)
        The metrics the ``pareto`` flags are computed on (per split).
    knob_names : sequence of str
        The knob columns, in the method's order.
    """
    metric_names = _metric_order(
        {name for r in records for split in SPLITS for name in r.metrics.get(split, {})}
    )
    values = {
        split: [
            {m: _metric_float(r.metrics.get(split, {}).get(m)) for m in metric_names}
            for r in records
        ]
        for split in SPLITS
    }
    pareto = {split: [False] * len(records) for split in SPLITS}
    x, y = axes
    if x in metric_names and y in metric_names:
        minimize = (is_lower_better(x), is_lower_better(y))
        for split in SPLITS:
            rows = values[split]
            mask = pareto_mask([v[x] for v in rows], [v[y] for v in rows], minimize=minimize)
            pareto[split] = [bool(flag) for flag in mask]
    out: dict[str, dict[str, Any]] = {}
    for i, record in enumerate(records):
        if record.point_id in out:  # as Frontier.to_records: one entry per point id
            continue
        out[record.point_id] = {
            "point_id": record.point_id,
            "method": method,
            "knobs": {k: _plain(record.knobs.get(k)) for k in knob_names},
            "metrics": {
                split: {m: _plain(values[split][i][m]) for m in metric_names} for split in SPLITS
            },
            "pareto": {split: pareto[split][i] for split in SPLITS},
            "cached": bool(record.cached),
            "elapsed": _plain(float(record.elapsed)),
            **record_evidence(record),
        }
    return list(out.values())
