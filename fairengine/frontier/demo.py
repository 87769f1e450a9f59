"""Demo frontiers for the hosted dashboard: ``fairengine precompute``.

Design notes: docs/howto/deploy.md, "The demo frontiers".
"""

from __future__ import annotations

import math
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
        loaded = {pair: load_dataset(pair[0], sensitive=pair[1]) for pair in tasks}
        usable = [pair for pair in tasks if loaded[pair].kind in method.kinds]
        # the page's task as loaded: a demo task may name the same columns the default resolves to
        opens_on = opening_task(usable)
        opens = (opens_on[0], loaded[opens_on].sensitive) if opens_on else None
        for dataset, sensitive in usable:
            task = loaded[dataset, sensitive]
            record = {"method": name, "dataset": dataset, "sensitive": list(task.sensitive)}
            if (dataset, sensitive) in method.demo_tasks:  # the default dataset: the run only
                writer.frontiers(method, task, grid, record)
            if runs:
                opening = (dataset, task.sensitive) == opens
                writer.default_run(method, task, record, opening=opening)
    drop_unused_entries(writer.run_store.root, log)
    if store.root.resolve() == demo_root().resolve():
        list_shipped(store.root, log)
    return writer.written


def list_shipped(root: Path | None = None, log: Callable[[str], Any] = print) -> int:
    """List the SHA-256 of every entry in the demo folder ``root`` in the package (see
    :func:`fairengine.frontier.trust.write_shipped_digests`), once each is checked to be an intact
    model or run file; return how many. ``fairengine precompute`` ends with this; ``fairengine
    precompute --list-only`` does only this, for a demo folder checked out as committed.

    Raises
    ------
    ValueError
        If an entry is damaged (nothing is listed then).
    """
    from fairengine.export import verify_model
    from fairengine.frontier.runcodec import stored_key
    from fairengine.frontier.runs import SUFFIX as RUN_SUFFIX
    from fairengine.frontier.store import SUFFIX as POINT_SUFFIX
    from fairengine.frontier.trust import write_shipped_digests

    root = Path(root or demo_root())
    for path in sorted(root.rglob(f"*{POINT_SUFFIX}")):
        verify_model(path.read_bytes())
    for path in sorted(root.rglob(f"*{RUN_SUFFIX}")):
        stored_key(path.read_bytes(), label=f"Run file {path}")
    listed = write_shipped_digests(root, (POINT_SUFFIX, RUN_SUFFIX))
    log(f"listed the digests of {listed} shipped files in the package")
    return listed


def drop_unused_entries(root: Path, log: Callable[[str], Any]) -> None:
    """Remove the run store's task folders under ``root`` that hold no method's run, only
    entries runs reuse (``@``-named: the unconstrained fits the demo sweeps left for their other
    splits): no page opens on those splits, so they would only grow the package."""
    import shutil

    from fairengine.frontier.runs import RUNS_DIR

    runs = Path(root) / RUNS_DIR
    for folder in sorted(p for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else ():
        if all(sub.name.startswith("@") for sub in folder.iterdir() if sub.is_dir()):
            log(f"removing {folder.name}: no run of its own")
            shutil.rmtree(folder)


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
        n_points = math.prod(len(values) for values in grid.values())
        for seed in method.demo_seeds:  # one train/test split per seed (0: the default)
            seed_train, seed_test = task.split(random_state=seed)
            split = f", split {seed}" if seed else ""
            self.log(f"{label[:-1]}{split}): {n_points} points")
            frontier = sweep(method, seed_train, seed_test, grid, store=self.store)
            points = int(frontier.points["point_id"].nunique())
            tkey = task_key(seed_train, seed_test)
            self.written.append({**record, "seed": int(seed), "points": points, "task_key": tkey})

    def default_run(
        self, method: Any, task: Any, record: dict[str, Any], *, opening: bool = False
    ) -> None:
        """The method's default run on the default split of ``task`` (on the task a page opens
        on, ``opening``, also one run per slider position of its
        :attr:`~fairengine.methods.Method.demo_knob`); older runs beside them go."""
        from fairengine.frontier import task_key
        from fairengine.frontier.runs import LEGACY_SUFFIX, SUFFIX, compute_and_store, run_key

        train, test = task.split()
        tkey = task_key(train, test)
        settings = shipped_knobs(method, opening)
        current = set()
        for knobs in settings:
            if self.run_store.get(tkey, method.name, knobs) is None:  # else shipped already
                moved = {k: v for k, v in knobs.items() if v != settings[0][k]}
                self.log(f"{_label(record)}: run at {moved or 'the defaults'}")
                result = compute_and_store(self.run_store, method.name, train, test, knobs)
                done = {"run": True, "elapsed": result.elapsed, "task_key": tkey}
                self.written.append({**record, **done})
            current.add(self.run_store.path(tkey, method.name, run_key(tkey, method.name, knobs)))
        folder = next(iter(current)).parent
        for stale in sorted(folder.iterdir()):
            # an older version's (or other defaults') run, or one in the old pickled format
            if stale not in current and stale.name.endswith((SUFFIX, LEGACY_SUFFIX)):
                self.log(f"{_label(record)}: removing the stale run {stale.name}")
                stale.unlink()


def opening_task(usable: list[tuple[str, Any]]) -> tuple[str, Any] | None:
    """The (dataset, sensitive) pair a method's page opens on among the ``usable`` demo tasks: the
    default dataset, else its first demo task (the page offers it in one click)."""
    if (DEFAULT_DATASET, None) in usable:
        return (DEFAULT_DATASET, None)
    return usable[0] if usable else None


def shipped_knobs(method: Any, opening: bool) -> list[dict[str, Any]]:
    """The knob settings of the runs shipped for ``method`` on one demo task: its defaults, and
    on the task its page opens on (``opening``) every slider position of its ``demo_knob`` (the
    other knobs at their defaults)."""
    from fairengine.methods.knob_steps import slider_values

    knobs = method.validate_knobs({})
    if not (opening and method.demo_knob):
        return [knobs]
    knob = next(k for k in method.knobs if k.name == method.demo_knob)
    values = slider_values(knob, knobs[knob.name])
    return [knobs] + [
        method.validate_knobs({**knobs, knob.name: v}) for v in values if v != knobs[knob.name]
    ]


def _label(record: dict[str, Any]) -> str:
    return f"{record['method']} on {record['dataset']} ({', '.join(record['sensitive'])})"
