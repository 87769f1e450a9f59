"""The ``fairengine`` parser and the ``datasets``, ``run``, ``sweep``, ``precompute`` and
``methods`` commands, and the model-file ones: ``export`` (a point's model file and card),
``predict`` (score a table with a model file) and ``inspect`` (verify and describe one).
Problems with the user's arguments or data print one readable line and exit with status 2."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairengine import __version__
from fairengine.cli import shared
from fairengine.cli.shared import DATA, JSON, METHOD, METHOD_END, UsageError, arg
from fairengine.data.errors import DataError
from fairengine.data.registry import list_datasets

if TYPE_CHECKING:
    from fairengine.data import Task
    from fairengine.methods.base import Method


def _cmd_datasets(args: argparse.Namespace) -> int:
    infos = list_datasets()
    if args.json:
        drop = ("positive_labels", "leaks")
        shared.print_json([{k: v for k, v in asdict(i).items() if k not in drop} for i in infos])
        return 0
    width = max(len(info.name) for info in infos)
    for info in infos:
        print(
            f"{info.name:<{width}}  {info.kind:<14}  {info.rows:>7,} rows  "
            f"target {info.target}, sensitive {', '.join(info.sensitive)}"
        )
        print(f"{'':<{width}}  {info.description}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    """Run (or fetch from the cache) one knob setting and print or write it."""
    from fairengine.cli.cache import remember_task_key
    from fairengine.frontier import sweep

    method = shared.find_method(args.method)
    train, test = shared.split_task(shared.load_task(args), args)
    store = shared.open_store(args)
    frontier = sweep(method, train, test, [shared.parse_pairs(args.set, "--set")], store=store)
    remember_task_key(args, store, frontier.task_key)
    point_id = frontier.points["point_id"].iloc[0]
    result = frontier.result(point_id)
    record = frontier.to_records()[0]
    if record.get("checks") is None:  # a stored point without them: from its model
        from fairengine.methods.base import stored_result
        from fairengine.methods.evidence import evidence_dict

        model = frontier.model(record["point_id"])
        stored = stored_result(method, record["knobs"], record["metrics"], model, train, test)
        record.update(evidence_dict(stored))
    status = shared.EXIT_CHECK_FAILED if args.strict and shared.failed([record]) else 0
    if args.out:
        _export_point(frontier, point_id, train, test, args.out)
    if args.json:
        shared.print_json(record)
        return status
    cached = " (from cache)" if record.get("cached") else ""
    print(f"{method.title} on {train.name}: point {point_id}{cached}")
    print("knobs: " + ", ".join(f"{k}={v}" for k, v in record["knobs"].items()))
    print("\n".join(shared.evidence_lines(record)))
    print("\n".join(shared.metrics_lines(result.metrics if result else record["metrics"])))
    if args.out:
        print(f"model written to {args.out}")
    return status


def _grid(args: argparse.Namespace, method: Method) -> dict[str, list[Any]]:
    grid: dict[str, list[Any]] = {
        k: [v for v in vs.split(",") if v]
        for k, vs in shared.parse_pairs(args.grid, "--grid").items()
    }
    if not grid:  # the method's own "cli" grid; a knob fixed with --set leaves it
        if "cli" not in method.sweep_grids:
            raise UsageError("sweep needs at least one --grid KNOB=V1,V2,...")
        fixed = shared.parse_pairs(args.set, "--set")
        grid = {k: list(v) for k, v in method.sweep_grids.get("cli", {}).items() if k not in fixed}
    for name, values in grid.items():
        if not values:
            raise UsageError(f"--grid {name}= has no values.")
    for name, value in shared.parse_pairs(args.set, "--set").items():
        grid.setdefault(name, [value])
    return grid


def _cmd_sweep(args: argparse.Namespace) -> int:
    from fairengine.cli.cache import cached_sweep, remember_task_key

    method = shared.find_method(args.method)
    grid = _grid(args, method)
    if args.backend == "dask" and not args.scheduler:
        raise UsageError("--backend dask needs --scheduler ADDRESS (e.g. tcp://127.0.0.1:8786).")
    records = cached_sweep(args, method, grid)
    if records is None:  # build the task and run the sweep (computing the missing points)
        from tqdm import tqdm

        from fairengine.frontier import sweep

        train, test = shared.split_task(shared.load_task(args), args)
        store = shared.open_store(args)
        total = math.prod(len(values) for values in grid.values())
        quiet = not sys.stderr.isatty() and not args.progress
        with tqdm(
            total=total, desc=method.name, unit="point", file=sys.stderr, disable=quiet
        ) as bar:

            def progress(done: int, total: int, _point: dict) -> None:
                bar.total = total  # duplicate grid settings run once
                bar.update(done - bar.n)

            frontier = sweep(
                method,
                train,
                test,
                grid,
                store=store,
                n_jobs=args.n_jobs,
                backend=args.backend,
                scheduler=args.scheduler if args.backend == "dask" else None,
                progress=progress,
            )
        remember_task_key(args, store, frontier.task_key)
        records = frontier.to_records()
    status = shared.EXIT_CHECK_FAILED if args.strict and shared.failed(records) else 0
    if args.out:
        shared.write_points(records, args.out)
    if args.json:
        shared.print_json(records)
        return status
    knob_names = [*grid, *(k.name for k in method.knobs if k.name not in grid)]
    columns, rows = shared.point_rows(records, knob_names)
    shown = ["point_id", "split", *grid, method.performance_metric, method.fairness_metric]
    shown += ["pareto", "cached"]
    print(shared.format_table([c for c in shown if c in columns], rows))
    for record in records:
        print(f"point {record['point_id']}:")
        print("\n".join("  " + line for line in shared.evidence_lines(record)))
    if args.out:
        print(f"points written to {args.out}")
    return status


def _cmd_precompute(args: argparse.Namespace) -> int:
    from fairengine.frontier.demo import list_shipped, precompute

    if args.list_only:
        list_shipped(args.out, log=print)
        return 0
    written = precompute(
        out=args.out,
        methods=args.methods or None,
        quick=args.quick,
        runs=not args.no_runs,
        log=print,
    )
    if args.json:
        shared.print_json(written)
    return 0


def _export_point(frontier, point_id: str, train: Task, test: Task, out: Path) -> None:
    from fairengine.export import save_model
    from fairengine.methods import get_method

    result = frontier.run_result(point_id, train, test)
    # the file and its card beside it
    save_model(result, out, train=train, test=test, method=get_method(result.method))


def _cmd_export(args: argparse.Namespace) -> int:
    from fairengine.data.registry import assets_dir
    from fairengine.frontier import FrontierStore, sweep, task_key

    method = shared.find_method(args.method)
    train, test = shared.split_task(shared.load_task(args), args)
    shipped = assets_dir() / "frontiers"
    store = FrontierStore(args.cache_dir, read_only=(shipped,) if shipped.is_dir() else ())
    if args.point:
        tkey = task_key(train, test)
        matches = [p for p in store.points(tkey, method.name) if p.point_id.startswith(args.point)]
        if len(matches) != 1:
            found = "no cached point" if not matches else f"{len(matches)} cached points"
            raise UsageError(
                f"{found} of {method.name} on this data has id {args.point!r}; run `fairengine "
                "sweep` first or give a longer id."
            )
        knobs = matches[0].knobs
    else:
        knobs = method.validate_knobs(shared.parse_pairs(args.set, "--set"))
    frontier = sweep(method, train, test, [knobs], store=None if args.no_cache else store)
    point_id = frontier.points["point_id"].iloc[0]
    _export_point(frontier, point_id, train, test, args.out)
    card = args.out.with_suffix(".md")
    if args.json:
        shared.print_json({"point_id": point_id, "out": str(args.out), "card": str(card)})
    else:
        print(f"model {point_id} written to {args.out} (card: {card})")
    return 0


def _cmd_predict(args: argparse.Namespace) -> int:
    from fairengine.export.client import predict_file

    if args.chunk_size < 1:
        raise UsageError(f"--chunk-size must be positive, got {args.chunk_size}.")
    rows = predict_file(
        args.model,
        args.data,
        args.out,
        proba=args.proba,
        id_columns=args.id_columns or (),
        allow_extra=args.allow_extra,
        random_state=args.random_state,
        chunk_rows=args.chunk_size,
    )
    if args.out is not None:
        print(f"{rows:,} predictions written to {args.out}", file=sys.stderr)
    return 0


def _cmd_inspect(args: argparse.Namespace) -> int:
    from fairengine.export.client import describe

    info = describe(args.model)
    if args.json:
        shared.print_json(info)
        return 0
    schema = info["schema"]
    print(
        f"{info['file']}: {info['format']}, model type {info['model_type']} ({info['kind']}"
        f"{', randomized' if info['randomized'] else ''})"
    )
    print(f"written by fairengine {info['engine_version']} on {info['created']}")
    if info["method"]:
        knobs = ", ".join(f"{k}={v}" for k, v in info["knobs"].items())
        print(f"method: {info['method']} ({knobs})")
    print(f"numeric columns ({len(schema['numeric'])}): {', '.join(schema['numeric']) or '-'}")
    print(f"text columns ({len(schema['text'])}): {', '.join(schema['text']) or '-'}")
    if schema["not_needed"]:
        print(f"known, not needed: {', '.join(schema['not_needed'])}")
    if schema["dropped_identifier_columns"]:
        print(
            "dropped identifier-like columns (no values stored): "
            + ", ".join(schema["dropped_identifier_columns"])
        )
    if info["metrics"]:
        print("\n".join(shared.metrics_lines(info["metrics"])))
    print(
        f"checksums: ok ({len(info['checksums']['verified'])} members); state schema: ok; "
        "probe prediction: ok"
    )
    return 0


class _Parser(argparse.ArgumentParser):
    """The top-level parser: its help also names every registered method (looked up only when
    the help is shown, so other commands start without loading the method registry)."""

    def format_help(self) -> str:
        from fairengine.methods import list_methods

        self.epilog = (
            f"methods: {', '.join(list_methods())} (`fairengine methods` shows their knobs)"
        )
        return super().format_help()


def _cmd_methods(args: argparse.Namespace) -> int:
    from fairengine.methods import get_method, list_methods

    rows = [
        {
            "name": m.name,
            "title": m.title,
            "kinds": list(m.kinds),
            "reference": m.reference,
            "plane": [m.performance_metric, m.fairness_metric],
            "knobs": [k.name for k in m.knobs],
        }
        for m in (get_method(name) for name in list_methods())
    ]
    if args.json:
        shared.print_json(rows)
        return 0
    width = max(len(row["name"]) for row in rows)
    for row in rows:
        print(f"{row['name']:<{width}}  {row['title']} ({', '.join(row['kinds'])})")
        print(f"{'':<{width}}  knobs: {', '.join(row['knobs'])}")
    return 0


MODEL_FILE = arg("model", type=Path, help="a .fairmodel file")
#: The commands of this module: help, handler, arguments.
COMMANDS = {
    "datasets": ("list the bundled datasets", _cmd_datasets, [JSON]),
    "run": ("fit one method with fixed knobs and print metrics", _cmd_run, [
        *METHOD, *METHOD_END, DATA, arg("--out", type=Path, help="also write the model file here"),
    ]),
    "sweep": ("sweep knobs and print the frontier", _cmd_sweep, [
        *METHOD,
        arg("--grid", action="append", default=[], metavar="KNOB=V1,V2,...",
            help="sweep a knob over values (default: the method's own grid)"),
        *METHOD_END, DATA,
        arg("--n-jobs", type=int, default=1, help="parallel workers (joblib)"),
        arg("--backend", choices=["loky", "threading", "dask"], default="loky"),
        arg("--scheduler", help="dask scheduler address, e.g. tcp://127.0.0.1:8786"),
        arg("--out", type=Path, help="write the points (.csv or .json)"),
        arg("--progress", action="store_true", help="progress bar even when piped"),
    ]),
    "export": ("write a point's model file and model card", _cmd_export, [
        *METHOD, *METHOD_END, DATA,
        arg("--point", help="id (or prefix) of a cached point; else use --set"),
        arg("--out", type=Path, required=True, help="model file to write"),
    ]),
    "predict": ("predict every row of a CSV or Parquet file with a model file", _cmd_predict, [
        MODEL_FILE,
        arg("--data", type=Path, required=True, help="CSV or Parquet input"),
        arg("--out", type=Path, help="output .csv or .parquet (default: stdout)"),
        arg("--proba", action="store_true",
            help="add P(prediction = 1) (regression: expected value)"),
        arg("--id-columns", nargs="+", help="input columns copied to the output"),
        arg("--allow-extra", action="store_true", help="ignore unknown columns"),
        arg("--random-state", type=int, default=0, help="seed of randomized models' draws"),
        arg("--chunk-size", type=int, default=50_000, help="rows per chunk"),
    ]),
    "inspect": ("print a model file's manifest, schema, metrics; verify it", _cmd_inspect, [
        MODEL_FILE, JSON,
    ]),
    "precompute": ("write the demo frontiers into assets/frontiers", _cmd_precompute, [
        arg("--out", type=Path, help="target folder (default: assets/frontiers)"),
        arg("--methods", nargs="+", help="only these methods"),
        arg("--quick", action="store_true", help="first two grid values only (tests)"),
        arg("--no-runs", action="store_true",
            help="skip the default runs the method pages open on"),
        arg("--list-only", action="store_true",
            help="compute nothing: list the digests of the demo folder's files in the package "
            "(the files every install trusts)"),
        JSON,
    ]),
}  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    from fairengine.cli.audit import COMMANDS as AUDIT_COMMANDS
    from fairengine.cli.dashboard import COMMAND as DASHBOARD_COMMAND

    parser = _Parser(
        prog="fairengine",
        description="Explore fairness-accuracy trade-offs: the engine behind the dashboard.",
    )
    parser.add_argument("--version", action="version", version=f"fairengine {__version__}")
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=argparse.ArgumentParser
    )
    table = {
        **COMMANDS,
        **AUDIT_COMMANDS,
        **DASHBOARD_COMMAND,
        "methods": ("list the methods and their knobs", _cmd_methods, [JSON]),
    }
    for name, (words, handler, specs) in table.items():
        help_, description = words if isinstance(words, tuple) else (words, None)
        command = commands.add_parser(name, help=help_, description=description)
        shared.add_arguments(command, specs)
        command.set_defaults(handler=handler)
    return parser


def _user_error(exc: Exception) -> bool:
    """Whether ``exc`` is a problem with the user's arguments or data: also a model file's
    (:class:`fairengine.export.ModelFileError`, a model's input ``SchemaError``), recognised
    without importing the model modules for commands that never load them (``datasets``), so
    they start at once."""
    from fairengine.methods.base import KnobError

    rules = sys.modules.get("fairengine.models.schema_rules")
    columns = sys.modules.get("fairengine.models.columns")
    return (
        isinstance(exc, DataError | KnobError | UsageError | ConnectionError)
        or (rules is not None and isinstance(exc, rules.ModelFileError))
        or (columns is not None and isinstance(exc, columns.SchemaError))
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except BrokenPipeError:  # e.g. `fairengine predict ... | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:
        if not _user_error(exc):
            raise
        print(f"fairengine: error: {exc}", file=sys.stderr)
        return shared.EXIT_USAGE
    except KeyboardInterrupt:
        print("fairengine: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
