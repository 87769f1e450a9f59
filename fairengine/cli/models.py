"""The model-file commands of ``fairengine``: ``export`` (a point's model file and card),
``predict`` (score a table with a model file) and ``inspect`` (verify and describe one)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fairengine.cli.shared import (
    UsageError,
    find_method,
    load_task,
    metrics_lines,
    parse_pairs,
    print_json,
    split_task,
)

if TYPE_CHECKING:
    from fairengine.data import Task


def export_point(frontier, point_id: str, train: Task, test: Task, out: Path) -> None:
    from fairengine.export import save_model
    from fairengine.methods import get_method

    result = frontier.run_result(point_id, train, test)
    # the file and its card beside it
    save_model(result, out, train=train, test=test, method=get_method(result.method))


def cmd_export(args: argparse.Namespace) -> int:
    from fairengine.data.registry import assets_dir
    from fairengine.frontier import FrontierStore, sweep, task_key

    method = find_method(args.method)
    train, test = split_task(load_task(args), args)
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
        knobs = method.validate_knobs(parse_pairs(args.set, "--set"))
    frontier = sweep(method, train, test, [knobs], store=None if args.no_cache else store)
    point_id = frontier.points["point_id"].iloc[0]
    export_point(frontier, point_id, train, test, args.out)
    card = args.out.with_suffix(".md")
    if args.json:
        print_json({"point_id": point_id, "out": str(args.out), "card": str(card)})
    else:
        print(f"model {point_id} written to {args.out} (card: {card})")
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
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


def cmd_inspect(args: argparse.Namespace) -> int:
    from fairengine.export.client import describe

    info = describe(args.model)
    if args.json:
        print_json(info)
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
        print("\n".join(metrics_lines(info["metrics"])))
    print(
        f"checksums: ok ({len(info['checksums']['verified'])} members); state schema: ok; "
        "probe prediction: ok"
    )
    return 0
