"""What the ``fairengine`` commands print and write: JSON, metric and evidence lines, point tables
and point files. Pure formatting of records (no engine import), shared by :mod:`fairengine.cli`
and :mod:`fairengine.cli.audit`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, default=_json_default))


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def metrics_lines(metrics: dict[str, dict[str, float]]) -> list[str]:
    names = list(dict.fromkeys([*metrics.get("train", {}), *metrics.get("test", {})]))
    width = max((len(n) for n in names), default=6)
    lines = [f"{'metric':<{width}}  {'train':>9}  {'test':>9}"]
    for name in names:
        train = metrics.get("train", {}).get(name, float("nan"))
        test = metrics.get("test", {}).get(name, float("nan"))
        lines.append(f"{name:<{width}}  {train:>9.4f}  {test:>9.4f}")
    return lines


def evidence_lines(record: dict[str, Any]) -> list[str]:
    """The checks (level first, one a line) and the baselines of a point record."""
    checks, baselines = record.get("checks"), record.get("baselines")
    if checks is None:
        return [
            "checks: not stored with this point (computed before checks existed; "
            "rerun with --no-cache)"
        ]
    lines = ["checks:"] + [
        f"  {c['level'].upper():<4}  {c['name']}: {c['sentence']}" for c in checks
    ]
    if baselines:
        lines.append(f"baselines (same rows, same evaluation; learner: {baselines['learner']}):")
        for which in ("constant", "unconstrained"):
            splits = baselines[which]
            shown = ", ".join(
                f"{name} {_number(splits['train'].get(name))}/{_number(value)}"
                for name, value in splits.get("test", {}).items()
            )
            lines.append(f"  {baselines[which + '_label']}: {shown} (train/test)")
    return lines


def _number(value: Any) -> str:
    return "nan" if value is None else f"{float(value):.4f}"


def failed(records: Sequence[dict[str, Any]]) -> bool:
    """Whether any record carries a failed check."""
    return any(c["level"] == "fail" for r in records for c in (r.get("checks") or ()))


def point_rows(
    records: list[dict[str, Any]], knob_names: Sequence[str]
) -> tuple[list[str], list[dict[str, Any]]]:
    """One row per (point, split), with the columns of ``Frontier.points``, from the records."""
    metric_names = list(records[0]["metrics"]["train"]) if records else []
    columns = ["point_id", "split", *knob_names, *metric_names, "cached", "elapsed", "pareto"]
    rows = []
    for record in records:
        for split in ("train", "test"):
            rows.append(
                {
                    "point_id": record["point_id"],
                    "split": split,
                    **{k: record["knobs"].get(k) for k in knob_names},
                    **record["metrics"][split],
                    "cached": record["cached"],
                    "elapsed": record["elapsed"],
                    "pareto": record["pareto"][split],
                }
            )
    return columns, rows


def format_table(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    """A plain text table: right-aligned columns two spaces apart; a float column with one
    _number of decimals (up to 6, the trailing zeros common to all its values dropped)."""
    cells = [_format_column([row.get(c) for row in rows]) for c in columns]
    widths = [max(len(c), *(len(v) for v in col)) for c, col in zip(columns, cells, strict=True)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(columns, widths, strict=True))]
    for i in range(len(rows)):
        lines.append("  ".join(col[i].rjust(w) for col, w in zip(cells, widths, strict=True)))
    return "\n".join(lines)


def _format_column(values: list[Any]) -> list[str]:
    """A column's cells as text (None, a missing metric, as NaN)."""
    numbers = [v for v in values if v is not None]
    if all(isinstance(v, int) or not isinstance(v, float) for v in numbers):  # bool is an int
        return ["NaN" if v is None else str(v) for v in values]
    finite = [abs(float(v)) for v in numbers if math.isfinite(v)]
    if any(v >= 1e6 or 0 < v < 1e-4 for v in finite):
        return ["NaN" if v is None else f"{v:.6e}" for v in values]
    fixed = [f"{float(v):.6f}" for v in numbers if math.isfinite(v)]
    decimals = max(1, *(len(t.partition(".")[2].rstrip("0")) for t in fixed))
    return ["NaN" if v is None else f"{float(v):.{decimals}f}" for v in values]


def write_points(records: list[dict[str, Any]], out: Path) -> None:
    """The points as JSON (the records) or CSV (the columns of ``Frontier.points``)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() == ".json":
        out.write_text(json.dumps(records, indent=2, default=_json_default))
        return
    import csv

    knob_names = list(records[0]["knobs"]) if records else []
    columns, rows = point_rows(records, knob_names)
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
