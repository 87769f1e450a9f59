"""The ``fairengine`` command line.

Commands so far: ``datasets`` (the bundled benchmarks). Errors in the user's arguments or data
print one readable line and exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict

from fairengine import __version__
from fairengine.data import DataError, list_datasets

EXIT_USAGE = 2


def _cmd_datasets(args: argparse.Namespace) -> int:
    infos = list_datasets()
    if args.json:
        rows = [
            {k: v for k, v in asdict(info).items() if k not in ("positive_labels", "leaks")}
            for info in infos
        ]
        print(json.dumps(rows, indent=2, default=str))
        return 0
    width = max(len(info.name) for info in infos)
    for info in infos:
        print(
            f"{info.name:<{width}}  {info.kind:<14}  {info.rows:>7,} rows  "
            f"target {info.target}, sensitive {', '.join(info.sensitive)}"
        )
        print(f"{'':<{width}}  {info.description}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fairengine",
        description="Explore fairness-accuracy trade-offs: the engine behind the dashboard.",
    )
    parser.add_argument("--version", action="version", version=f"fairengine {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    datasets = commands.add_parser("datasets", help="list the bundled datasets")
    datasets.add_argument("--json", action="store_true", help="machine-readable output")
    datasets.set_defaults(handler=_cmd_datasets)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except DataError as exc:
        print(f"fairengine: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
