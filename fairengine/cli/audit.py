"""``fairengine audit``, ``split`` and ``report``: an outside model on the plane, the engine's
split, and the one-file report of a comparison (docs/howto/audit.md). The engine loads on a
command's run, not when the parser is built."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairengine.cli.shared import CACHE_DIR, DATA, JSON, UsageError, arg, load_task, split_task

if TYPE_CHECKING:
    from fairengine.audit import AuditResult
    from fairengine.data import Task


class _SourceAction(argparse.Action):
    """Keep every outside model option in command-line order, as (option dest, value), in
    ``sources`` (so the i-th ``--name`` labels the i-th model whatever its route)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        found = list(getattr(namespace, "sources", None) or [])
        namespace.sources = [*found, (self.dest, values)]


def _outsides(args: argparse.Namespace, task: Task) -> list[Any]:
    """The outside models of the command line, each on the task without every column an outside
    model holds (no method may learn from one), so all are audited on the same task and split."""
    from dataclasses import replace

    from fairengine.audit import from_column, from_file, from_model_file
    from fairengine.audit.comparison import MAX_OUTSIDE

    sources = getattr(args, "sources", None) or []
    if not sources:
        raise UsageError(
            "Give at least one of --predictions-column COL, --predictions FILE (with --id-column "
            "ID) or --model FILE."
        )
    if len(args.name) > len(sources):
        raise UsageError(
            f"{len(args.name)} --name given for {len(sources)} model(s): give at most one name "
            "per model, in the models' order."
        )
    if len(sources) > MAX_OUTSIDE:
        raise UsageError(f"Give at most {MAX_OUTSIDE} outside models in one audit.")
    outsides = []
    for route, value in sources:
        if route == "predictions_column":
            outside = from_column(task, value, args.values)
        elif route == "predictions":
            if not args.id_column:
                raise UsageError("--predictions FILE needs --id-column ID (the row id column).")
            outside = from_file(task, value, args.id_column, kind=args.values)
        else:
            outside = from_model_file(task, value)
        outsides.append(outside)
        task = outside.task
    return [replace(o, task=task) for o in outsides]


def _id_values(args: argparse.Namespace) -> Any:
    """The table's ``--id-column``: the ids its rows are known by. None (row numbers) without
    one or when the table has no such column, as for ``--predictions``."""
    from fairengine.data import read_table
    from fairengine.data.registry import load_frame

    if not args.id_column:
        return None
    table = load_frame(args.dataset) if args.dataset else read_table(args.data)
    return table[args.id_column] if args.id_column in table.columns else None


def _cmd_audit(args: argparse.Namespace) -> int:
    from fairengine.audit import audit, cost_of_fairness
    from fairengine.audit.comparison import MAX_PINS, unique_names
    from fairengine.audit.core import referenced
    from fairengine.audit.overlap import ids_from_table
    from fairengine.cli.shared import print_json
    from fairengine.data import read_table

    outsides = _outsides(args, load_task(args))
    given = args.name + ["outside model"] * (len(outsides) - len(args.name))
    trained_on, id_values = args.trained_on, None
    if args.trained_on_ids is not None:
        if args.trained_on != "unknown":
            raise UsageError("Give either --trained-on or --trained-on-ids FILE, not both.")
        trained_on = ids_from_table(read_table(args.trained_on_ids), args.id_column)
        id_values = _id_values(args)
    task = outsides[0].task
    train = _positional_split(args, task)[0]
    _check_reference(args, list(train.group_names))
    results = []
    for outside, name in zip(outsides, unique_names(given), strict=True):
        result = audit(
            outside,
            threshold=args.threshold,
            name=name,
            test_size=args.test_size,
            random_state=args.split_seed,
            trained_on=trained_on,
            id_values=id_values,
        )
        results.append(referenced(result, args.reference_group, args.tau, train))
    frontiers = _frontiers(args, task)
    costs = [cost_of_fairness(r, frontiers) if frontiers else None for r in results]
    if args.save_comparison or args.report:
        pins = args.pin or [
            *(r.name for r in results),
            *dict.fromkeys(c["point_id"].iloc[0] for c in costs if c is not None and not c.empty),
        ]
        _write(args, task, frontiers, results, pins[:MAX_PINS])
    if args.json:
        documents = [r.to_dict() for r in results]
        for document, cost in zip(documents, costs, strict=True):
            if cost is not None:
                document["cost"] = json.loads(cost.to_json(orient="records"))
        print_json(documents[0] if len(documents) == 1 else documents)
        return 0
    print("\n\n".join("\n".join(_audit_lines(r, c)) for r, c in zip(results, costs, strict=True)))
    return 0


def _audit_lines(result: AuditResult, cost: Any) -> list[str]:
    from fairengine.cli.shared import evidence_lines, metrics_lines

    threshold = f", threshold {result.threshold:g}" if result.threshold is not None else ""
    lines = [f"{result.name}: {result.kind} from {result.source}{threshold}"]
    lines += [f"note: {n}" for n in result.notes]
    lines += evidence_lines(result.to_dict())  # its checks and baselines as a point's record
    lines += metrics_lines(result.metrics)
    columns = [c for c in result.groups.columns if not c.endswith(("_low", "_high"))]
    lines += ["per group (test rows; 95% intervals in --json):"]
    lines += [result.groups[columns].to_string(float_format="{:.4f}".format)]
    if cost is not None:
        lines.append("what it would cost to be fairer (nearest fairer points):")
        table = cost.to_string(index=False, float_format="{:.4f}".format)
        lines.append("  none" if cost.empty else table)
    return lines


def _cmd_split(args: argparse.Namespace) -> int:
    from fairengine.cli.shared import print_json
    from fairengine.data import DataError
    from fairengine.data.split import PART_COLUMN, split_table

    task = load_task(args)
    train, test = split_task(task, args)
    if not args.ids:
        if args.json:
            rows, seed = len(task.frame), args.split_seed
            sizes = {"train": len(train.frame), "test": len(test.frame)}
            print_json({"rows": rows, **sizes, "test_size": args.test_size, "split_seed": seed})
        else:
            print(
                f"{len(task.frame):,} rows: {len(train.frame):,} train, {len(test.frame):,} "
                f"test (--test-size {args.test_size:g}, --split-seed {args.split_seed}). "
                "Add --ids for each row's id and part."
            )
        return 0
    id_values = _id_values(args)
    if args.id_column and id_values is None:
        raise DataError(f"The table has no column {args.id_column!r} to identify its rows by.")
    table = split_table(task, args.test_size, args.split_seed, id_values=id_values)
    id_name = str(table.columns[0])
    if args.json or (args.out is not None and args.out.suffix.lower() == ".json"):
        parts = table.groupby(PART_COLUMN)[id_name]
        document = {
            "id_column": id_name,
            **{p: parts.get_group(p).tolist() for p in ("train", "test")},
        }
        text = json.dumps(document, default=str)
    else:
        text = table.to_csv(index=False)
    if args.out is None:
        print(text.rstrip("\n"))
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"{len(train.frame):,} train and {len(test.frame):,} test ids written to {args.out}")
    return 0


def _frontiers(args: argparse.Namespace, task: Task) -> list[Any]:
    """The frontiers of the points in ``--frontier`` files: each method's knob settings run (or
    served from the cache) on the task's split, so their models and checks are at hand."""
    from fairengine.frontier import FrontierStore, sweep

    if not args.frontier:
        return []
    train, test = _positional_split(args, task)
    settings: dict[str, list[dict]] = {}
    for path in args.frontier:
        for record in _records(path):
            settings.setdefault(str(record["method"]), []).append(dict(record["knobs"]))
    store = FrontierStore(args.cache_dir)
    return [sweep(m, train, test, knobs, store=store) for m, knobs in settings.items()]


def _positional_split(args: argparse.Namespace, task: Task) -> tuple[Task, Task]:
    from fairengine.audit.core import positional

    return positional(task).split(test_size=args.test_size, random_state=args.split_seed)


def _check_reference(args: argparse.Namespace, groups: list[str]) -> None:
    if not 0 < args.tau <= 1:
        raise UsageError(f"--tau must be in (0, 1], got {args.tau}.")
    if args.reference_group is not None and args.reference_group not in groups:
        shown = ", ".join(repr(g) for g in groups[:20])
        raise UsageError(
            f"--reference-group {args.reference_group!r} is not a group of this table; its "
            f"groups are {shown}."
        )


def _records(path: Path) -> list[dict[str, Any]]:
    from fairengine.export.safe import MAX_JSON_BYTES, ModelFileError, load_json, read_regular

    try:
        data = load_json(read_regular(path, MAX_JSON_BYTES), f"The points file {path.name!r}")
    except OSError as exc:
        raise UsageError(f"Cannot read the points file {path.name!r}: {exc.strerror}.") from None
    except ModelFileError as exc:
        raise UsageError(f"Cannot read the points file {path.name!r}: {exc}") from None
    ok = isinstance(data, list) and all(
        isinstance(r, dict)
        and isinstance(r.get("method"), str)
        and isinstance(r.get("knobs"), dict)
        for r in data
    )
    if not ok:
        raise UsageError(
            f"{path.name!r} is not a points file: write one with `fairengine sweep ... --out "
            "points.json`."
        )
    return data


def _write(
    args: argparse.Namespace, task: Task, frontiers: list, audits: list, pins: Sequence[str]
) -> Any:
    from fairengine.audit.comparison import build_comparison, save_comparison

    split = (args.test_size, args.split_seed)
    comparison = build_comparison(
        task, frontiers, audits, pins, split, reference=args.reference_group, tau=args.tau
    )
    if getattr(args, "save_comparison", None):
        save_comparison(comparison, args.save_comparison)
        print(f"comparison written to {args.save_comparison}")
    if getattr(args, "report", None):
        _write_report(comparison, args.report, getattr(args, "title", "fairengine comparison"))
    return comparison


def _write_report(comparison: Any, out: Path, title: str) -> None:
    from fairengine.report import build_report

    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build_report(comparison, title=title), encoding="utf-8")
    print(f"report written to {out}")


def _cmd_report(args: argparse.Namespace) -> int:
    from fairengine.audit.comparison import load_comparison, with_disparities

    if (args.comparison is None) == (not args.frontier):
        raise UsageError("Give either --comparison FILE or --frontier FILE [--frontier ...].")
    if args.comparison is not None:
        train = test = None
        if args.dataset is not None or args.data is not None:
            train, test = _positional_split(args, load_task(args))
        comparison = load_comparison(args.comparison, train=train, test=test)
        _check_reference(args, [g["name"] for g in comparison.tasks[0]["groups"]])
        if args.reference_group is not None or args.tau != comparison.tau:
            comparison = with_disparities(comparison, args.reference_group, args.tau)
        _write_report(comparison, args.out, args.title)
        return 0
    task = load_task(args)
    _check_reference(args, list(task.group_names))
    args.report = args.out
    _write(args, task, _frontiers(args, task), [], args.pin)
    return 0


COMPARISON = [
    arg("--frontier", type=Path, action="append", default=[], metavar="FILE",
        help="points of `fairengine sweep --out FILE.json` on the same data"),
    arg("--pin", action="append", default=[], metavar="ID",
        help="a point id (or prefix) or outside model name to pin"),
    CACHE_DIR,
    arg("--reference-group", metavar="GROUP",
        help="the group every ratio and four-fifths verdict is taken against, by name as in the "
        "group table (e.g. 'Black', or 'female & <25' for two sensitive columns; default: the "
        "largest group)"),
    arg("--tau", type=float, default=0.8,
        help="the four-fifths rule's threshold: a group passes when tau <= ratio <= 1/tau "
        "(default 0.8)"),
]  # fmt: skip
SOURCES = ("the outside models (one or more, in any mix; each --name labels the model given at "
           "the same position)", [
    arg("--predictions-column", action=_SourceAction, metavar="COL",
        help="a column of the table holding its predictions or scores"),
    arg("--predictions", action=_SourceAction, type=Path, metavar="FILE",
        help="a CSV/Parquet file of predictions keyed by --id-column"),
    arg("--id-column", metavar="ID",
        help="the table's row id column, which --predictions and --trained-on-ids use "
        "(default for --trained-on-ids: row numbers, 0 = first data row)"),
    arg("--model", action=_SourceAction, type=Path, metavar="FILE",
        help="a .fairmodel file, or a scikit-learn pipeline saved with skops"),
])  # fmt: skip
TRAINED_ON = ("the rows the model was trained on (test rows it saw are left out; default: "
              "unknown, and the result says so)", [
    arg("--trained-on", choices=["unknown", "none", "engine"], default="unknown",
        help="none of this table's rows, or the engine's training rows (`fairengine split`)"),
    arg("--trained-on-ids", type=Path, metavar="FILE",
        help="a CSV/Parquet file of the ids it was trained on (by --id-column, else row "
        "numbers; a `fairengine split --ids` file: its train rows)"),
])  # fmt: skip
#: ``audit``, ``split`` and ``report``: help, handler, arguments (see :mod:`fairengine.cli.main`).
COMMANDS = {
    "audit": ("score an outside model (predictions, scores or a model file) on the plane",
              _cmd_audit, [
        DATA, SOURCES,
        arg("--values", choices=["predictions", "scores"],
            help="what the column or file holds (default: guessed from the values)"),
        arg("--threshold", type=float, default=0.5,
            help="scores at or above it predict 1 (default 0.5)"),
        arg("--name", action="append", default=[],
            help="a model's label, repeated in the order of the models (default 'outside "
            "model'; a repeated name gets a suffix ' (2)', ' (3)', ...)"),
        TRAINED_ON, *COMPARISON,
        arg("--save-comparison", type=Path, metavar="FILE",
            help="write the comparison (JSON) to reopen or report later"),
        arg("--report", type=Path, metavar="FILE", help="write the HTML report"),
        JSON,
    ]),
    "split": ("the engine's train/test split: row counts, or with --ids the row ids", _cmd_split, [
        DATA,
        arg("--ids", action="store_true", help="print or write every row's id and part"),
        arg("--id-column", metavar="ID",
            help="identify rows by this column (default: row numbers)"),
        arg("--out", type=Path, metavar="FILE", help="write the ids (.csv or .json)"),
        JSON,
    ]),
    "report": ("write one self-contained HTML report", _cmd_report, [
        DATA,
        arg("--comparison", type=Path, metavar="FILE",
            help="a saved comparison (fairengine audit --save-comparison)"),
        *COMPARISON,
        arg("-o", "--out", type=Path, required=True, help="the .html file to write"),
        arg("--title", default="fairengine comparison", help="the report's title"),
    ]),
}  # fmt: skip
