"""Demo frontiers for the hosted dashboard: ``fairengine precompute``.

Each method declares a ``demo_grid`` and the bundled ``demo_tasks`` to sweep it on; the points
are written into a :class:`FrontierStore` under ``assets/frontiers/``, which the dashboard reads
(read-only) at start, so the demo shows frontiers without computing anything.

Precompute also stores each method's *default run* (every knob at its default, the page's
first view) as a complete :class:`~fairengine.methods.base.RunResult` in the store's ``runs/``
folder (:mod:`fairengine.frontier.runs`), on every demo task and on the default dataset (Adult
with its default roles) where the method applies, so every method page opens on a finished
result without fitting anything.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairengine.data import load_dataset
from fairengine.resources import assets_dir

#: The dashboard's default dataset (its pages open on it): every method's default run is
#: precomputed on it too, with the dataset's default roles.
DEFAULT_DATASET = "adult"


def demo_root() -> Path:
    """Where the shipped demo frontiers live."""
    return assets_dir() / "frontiers"


def precompute(
    out: Path | None = None,
    methods: list[str] | None = None,
    *,
    quick: bool = False,
    runs: bool = True,
    log: Callable[[str], Any] = print,
) -> list[dict[str, Any]]:
    """Sweep every method's demo grid on its demo tasks into the store at ``out``.

    Parameters
    ----------
    out : Path, optional
        Store root (default ``assets/frontiers``).
    methods : list of str, optional
        Only these methods (default: every registered method with a demo grid).
    quick : bool
        Only the first two values of each grid knob (for tests).
    runs : bool
        Also store each method's default run on its demo tasks and the default dataset.

    Returns
    -------
    list of dict
        One record per (method, dataset): the number of points and the task key (and, for a
        default run, ``"run": True`` and its fit seconds).
    """
    from fairengine.frontier import FrontierStore
    from fairengine.frontier.runs import RunStore
    from fairengine.methods import get_method, list_methods

    store = FrontierStore(out or demo_root())
    writer = _Writer(store, RunStore(store.root), log)
    names = methods or [m for m in list_methods() if get_method(m).demo_grid]
    for name in names:
        method = get_method(name)
        grid = {k: list(v[:2] if quick else v) for k, v in method.demo_grid.items()}
        if not grid:
            continue
        tasks = list(dict.fromkeys([*method.demo_tasks, (DEFAULT_DATASET, None)]))
        for dataset, sensitive in tasks:
            task = load_dataset(dataset, sensitive=sensitive)
            if task.kind not in method.kinds:
                continue
            record = {"method": name, "dataset": dataset, "sensitive": list(task.sensitive)}
            if (dataset, sensitive) in method.demo_tasks:  # the default dataset: the run only
                writer.frontiers(method, task, grid, record)
            if runs:
                writer.default_run(method, task, record)
    return writer.written


@dataclass
class _Writer:
    """Writes the demo frontiers and default runs into the stores; ``written`` lists them."""

    store: Any
    run_store: Any
    log: Callable[[str], Any]
    written: list[dict[str, Any]] = field(default_factory=list)

    def frontiers(self, method: Any, task: Any, grid: dict, record: dict[str, Any]) -> None:
        """The method's demo grid on ``task``, one train/test split per demo seed."""
        from fairengine.frontier import sweep, task_key

        label = _label(record)
        n_points = len(list(itertools.product(*grid.values())))
        for seed in method.demo_seeds:  # one train/test split per seed (0: the default)
            seed_train, seed_test = task.split(random_state=seed)
            split = f", split {seed}" if seed else ""
            self.log(f"{label[:-1]}{split}): {n_points} points")
            frontier = sweep(method, seed_train, seed_test, grid, store=self.store)
            points = int(frontier.points["point_id"].nunique())
            self.written.append(
                {
                    **record,
                    "seed": int(seed),
                    "points": points,
                    "task_key": task_key(seed_train, seed_test),
                }
            )

    def default_run(self, method: Any, task: Any, record: dict[str, Any]) -> None:
        """The method's default run on the default split of ``task``; older runs beside it go."""
        from fairengine.frontier import task_key
        from fairengine.frontier.runs import LEGACY_SUFFIX, SUFFIX, compute_and_store, run_key

        name, label = method.name, _label(record)
        train, test = task.split()
        tkey = task_key(train, test)
        knobs = method.validate_knobs({})
        if self.run_store.get(tkey, name, knobs) is None:
            self.log(f"{label}: default run")
            result = compute_and_store(self.run_store, name, train, test, knobs)
            self.written.append(
                {**record, "run": True, "elapsed": result.elapsed, "task_key": tkey}
            )
        current = self.run_store.path(tkey, name, run_key(tkey, name, knobs))
        for stale in sorted(current.parent.iterdir()):
            # an older version's (or other defaults') run, or one in the old pickled format
            if stale != current and stale.name.endswith((SUFFIX, LEGACY_SUFFIX)):
                self.log(f"{label}: removing the stale run {stale.name}")
                stale.unlink()


def _label(record: dict[str, Any]) -> str:
    return f"{record['method']} on {record['dataset']} ({', '.join(record['sensitive'])})"
