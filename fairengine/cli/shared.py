"""What the ``fairengine`` commands share: exit statuses, the usage error, the data and method
arguments, and reading them (the task, its split, the method, the frontier store)."""

from __future__ import annotations

import argparse
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


# ----------------------------------------------------------------------------- arguments

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
    if args.dataset is not None:
        task = load_dataset(
            args.dataset,
            target=args.target,
            sensitive=args.sensitive,
            features=args.features,
            kind=args.kind,
        )
    elif not args.target or not args.sensitive:
        raise UsageError("With --data FILE, give --target COL and --sensitive COL [COL ...].")
    else:
        task = from_frame(
            read_table(args.data),
            target=args.target,
            sensitive=args.sensitive,
            features=args.features,
            kind=args.kind,
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
