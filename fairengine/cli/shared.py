"""What the ``fairengine`` commands share: exit statuses, the usage error, the arguments several
commands take and reading them (the task, its split, the method, the frontier store), and what
they print and write (JSON, metric and evidence lines, point tables and files: pure formatting of
records, no engine import)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fairengine.data import Task

EXIT_USAGE = 2
#: ``--strict``: some result carries a failed check.
EXIT_CHECK_FAILED = 3


class UsageError(Exception):
    """A bad command-line argument (exit status 2)."""


#: One argument: its flags and :meth:`argparse.ArgumentParser.add_argument`'s keywords.
Arg = tuple[tuple[str, ...], dict[str, Any]]


def arg(*flags: str, **keywords: Any) -> Arg:
    return flags, keywords


def add_arguments(parser: argparse.ArgumentParser, specs: Sequence[Arg | tuple[str, list]]) -> None:
    """Add ``specs`` to ``parser``: arguments, or ``(title, arguments)`` for an argument group."""
    for flags, more in specs:
        if isinstance(flags, str):
            add_arguments(parser.add_argument_group(flags), more)  # type: ignore[arg-type]
        else:
            parser.add_argument(*flags, **more)


JSON = arg("--json", action="store_true", help="machine-readable output")
CACHE_DIR = arg("--cache-dir", type=Path, help="frontier cache (default: user cache)")
DATA = ("data (a bundled dataset, or your own file)", [
    arg("--dataset", help="bundled dataset name (see `fairengine datasets`)"),
    arg("--data", type=Path, help="your own CSV or Parquet file"),
    arg("--target", help="target column (default: the dataset's)"),
    arg("--sensitive", nargs="+", help="sensitive column(s)"),
    arg("--features", nargs="+", help="feature columns (default: all others)"),
    arg("--kind", choices=["classification", "regression"]),
    arg("--positive-label", help="target value coded 1 (classification)"),
    arg("--drop-missing", action="store_true", help="drop rows missing roles"),
    arg("--merge-small-groups", action="store_true"),
    arg("--test-size", type=float, default=0.3),
    arg("--split-seed", type=int, default=0),
])  # fmt: skip
METHOD = [
    arg("method", help="method name (see `fairengine methods`)"),
    arg("--set", action="append", default=[], metavar="KNOB=VALUE", help="fix a knob"),
]
METHOD_END = [
    CACHE_DIR,
    arg("--no-cache", action="store_true", help="neither read nor write the cache"),
    JSON,
    arg("--strict", action="store_true",
        help=f"exit with status {EXIT_CHECK_FAILED} when any result fails one of its checks"),
]  # fmt: skip


def parse_pairs(items: Sequence[str], flag: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"{flag} expects KNOB=VALUE, got {item!r}.")
        pairs[name.strip()] = value.strip()
    return pairs


def load_task(args: argparse.Namespace) -> Task:
    """The task of ``--dataset`` or ``--data``; its notes (identifiers left out, leaked columns,
    dropped rows) go to stderr, so ``--json`` output stays one document."""
    from fairengine.data import from_frame, load_dataset, read_table

    if (args.dataset is None) == (args.data is None):
        raise UsageError("Give exactly one of --dataset NAME or --data FILE.")
    roles = {"sensitive": args.sensitive, "features": args.features, "kind": args.kind}
    if args.dataset is not None:
        task = load_dataset(args.dataset, target=args.target, **roles)
    elif not args.target or not args.sensitive:
        raise UsageError("With --data FILE, give --target COL and --sensitive COL [COL ...].")
    else:
        task = from_frame(
            read_table(args.data),
            target=args.target,
            **roles,
            name=args.data.stem,
            positive_label=args.positive_label,
            drop_missing=args.drop_missing,
            merge_small_groups=args.merge_small_groups,
        )
    for note in task.notes:
        print(f"note: {note}", file=sys.stderr)
    return task


def split_task(task: Task, args: argparse.Namespace) -> tuple[Task, Task]:
    if not 0.0 < args.test_size < 1.0:
        raise UsageError(f"--test-size must be in (0, 1), got {args.test_size}.")
    return task.split(test_size=args.test_size, random_state=args.split_seed)


def find_method(name: str):
    from fairengine.methods import get_method

    try:
        return get_method(name)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def open_store(args: argparse.Namespace):
    from fairengine.frontier import FrontierStore

    return None if args.no_cache else FrontierStore(args.cache_dir)


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, default=_json_default))


def _json_default(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else str(value)


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
    rows = [
        {
            "point_id": record["point_id"],
            "split": split,
            **{k: record["knobs"].get(k) for k in knob_names},
            **record["metrics"][split],
            "cached": record["cached"],
            "elapsed": record["elapsed"],
            "pareto": record["pareto"][split],
        }
        for record in records
        for split in ("train", "test")
    ]
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
