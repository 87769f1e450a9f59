"""Sweeps: run a method over a knob grid, reusing and filling the FrontierStore."""

from __future__ import annotations

import dataclasses
import itertools
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fairengine.export import model_card, result_metadata
from fairengine.frontier.backends import run_points
from fairengine.frontier.result import Frontier, PointRecord
from fairengine.frontier.store import FrontierStore, point_key, task_key
from fairengine.methods.base import Method, RunResult
from fairengine.methods.evidence_fits import stored_fits
from fairengine.methods.registry import get_method

if TYPE_CHECKING:  # the Task's pandas loads with the data
    from fairengine.data import Task

logger = logging.getLogger("fairengine.frontier")

Grid = Mapping[str, Any] | Sequence[Mapping[str, Any]]
Progress = Callable[[int, int, dict[str, Any]], None]


def expand_grid(grid: Grid) -> list[dict[str, Any]]:
    """Knob combinations of a grid, in order.

    Parameters
    ----------
    grid : dict or list of dict
        ``{knob: [values...]}`` gives the cartesian product, the first knob varying slowest (a
        single value counts as a one-element list); a list of knob dicts is taken as is.

    Examples
    --------
    >>> expand_grid({"a": [1, 2], "b": ["x", "y"]})
    [{'a': 1, 'b': 'x'}, {'a': 1, 'b': 'y'}, {'a': 2, 'b': 'x'}, {'a': 2, 'b': 'y'}]
    """
    if isinstance(grid, Mapping):
        names = list(grid)
        values = []
        for name in names:
            options = grid[name]
            if isinstance(options, str | bytes) or not isinstance(options, Iterable):
                options = [options]
            options = list(options)
            if not options:
                raise ValueError(f"Grid knob {name!r} has no values.")
            values.append(options)
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)]
    combos = []
    for item in grid:
        if not isinstance(item, Mapping):
            raise TypeError(f"A grid list must hold knob dicts; got {type(item).__name__}.")
        combos.append(dict(item))
    return combos


def sweep(
    method: str | Method,
    train: Task,
    test: Task,
    grid: Grid,
    *,
    store: FrontierStore | None = None,
    progress: Progress | None = None,
    n_jobs: int = 1,
    backend: str = "loky",
    scheduler: Any = None,
) -> Frontier:
    """Run ``method`` at every knob combination of ``grid`` and collect the frontier.

    Every combination is validated first (a bad one raises before anything runs). Each point
    is then looked up in ``store``; the missing ones are computed with
    ``method.run(train, test, **knobs)`` and written to the store.

    Parameters
    ----------
    method : str or Method
        A registered method name, or a :class:`~fairengine.methods.Method`.
    train, test : Task
        Fit on ``train``; metrics on both.
    grid : dict or list of dict
        ``{knob: [values...]}`` (cartesian product, in the given order) or a list of knob
        dicts. Knobs not named take their defaults; equal settings are run once.
    store : FrontierStore, optional
        Cache to read from and write to. None: compute everything, keep nothing on disk.
    n_jobs : int
        Parallel workers for the local backends (-1: all cores).
    backend : {"loky", "threading", "dask"}
        ``"dask"`` runs the points on a ``dask.distributed`` cluster (``n_jobs`` is ignored).
    scheduler : distributed.Client or str, optional
        With ``backend="dask"``: a client, or a scheduler address (``"tcp://host:8786"``);
        None uses the current default client. Workers need ``fairengine`` installed.
    progress : callable, optional
        ``progress(done, total, point)`` is called in this process after each point (cached
        ones included); ``point`` holds the point's knob values and ``point_id``, ``cached``
        and ``elapsed``.

    Returns
    -------
    Frontier
        Points in grid order, whatever order they completed in.

    Raises
    ------
    KnobError
        An unknown knob or a value outside its range (before any run).

    Examples
    --------
    >>> train, test = load_dataset("german_credit").split()  # doctest: +SKIP
    >>> frontier = sweep("reweighing", train, test, {"strength": [0, 0.5, 1]})  # doctest: +SKIP
    >>> frontier.points.query("split == 'test' and pareto")  # doctest: +SKIP
    """
    method = get_method(method) if isinstance(method, str) else method
    tkey = task_key(train, test)
    keyed = _keyed_settings(method, train, tkey, grid)
    keys = list(keyed)
    records: list[PointRecord | None] = [None] * len(keys)

    def add(index: int, record: PointRecord) -> None:  # in grid order, reported as they arrive
        records[index] = record
        if progress is not None:
            point = {**record.knobs, "point_id": record.point_id, "cached": record.cached}
            done = len(records) - records.count(None)
            progress(done, len(records), {**point, "elapsed": record.elapsed})

    todo = []
    for index, (key, knobs) in enumerate(keyed.items()):
        cached = store.get(tkey, method, knobs) if store is not None else None
        if cached is None:
            todo.append((index, knobs))
        else:
            add(index, PointRecord.from_stored(key, knobs, cached))
    computed = run_points(
        method, train, test, todo, n_jobs=n_jobs, backend=backend, scheduler=scheduler
    )
    from fairengine.frontier.runs import RunStore  # pandas loads with a computed point

    # points computed here (serially) read and keep the unconstrained baseline fit beside the
    # store, so a sweep in a fresh process fits it once per task and learner, not once per job
    with stored_fits(None if store is None else RunStore(store.root, read_only=store.read_only)):
        for index, result in computed:
            if result.method != method.name:  # the store files it under the method's name
                result = dataclasses.replace(result, method=method.name)
            knobs = keyed[keys[index]]
            elapsed = float(result.elapsed)
            record = PointRecord(keys[index][:12], knobs, result.metrics, False, elapsed, result)
            if store is not None:
                record.path = _store_result(store, tkey, result, method, knobs, train, test)
            add(index, record)
    return Frontier.from_records(
        method.name,
        tkey,
        [r for r in records if r is not None],
        axes=(method.fairness_metric, method.performance_metric),
        knob_names=[k.name for k in method.knobs],
        store=store,
    )


def sweep_settings(
    method: str | Method, train: Task, test: Task, grid: Grid
) -> list[dict[str, Any]]:
    """The distinct, validated knob settings :func:`sweep` runs for ``grid``, in its order (a
    sweep of each one alone computes the same points, e.g. in separate processes).

    Raises
    ------
    KnobError
        An unknown knob or a value outside its range.
    """
    method = get_method(method) if isinstance(method, str) else method
    return list(_keyed_settings(method, train, task_key(train, test), grid).values())


def _keyed_settings(
    method: Method, train: Task, tkey: str, grid: Grid
) -> dict[str, dict[str, Any]]:
    """Validated settings of ``grid`` by point key (equal settings once), in grid order."""
    method.check(train)
    keyed: dict[str, dict[str, Any]] = {}
    for combo in expand_grid(grid):
        knobs = method.validate_knobs(combo)
        keyed.setdefault(point_key(tkey, method, knobs), knobs)
    return keyed


def _store_result(
    store: FrontierStore,
    tkey: str,
    result: RunResult,
    method: Method,
    knobs: dict[str, Any],
    train: Task,
    test: Task,
) -> Any:
    """Write a computed point; a cache that cannot be written never fails the sweep."""
    try:
        card = model_card(result, train, test, method=method)
    except ValueError:  # a result the card cannot describe is stored without one
        card = None
    try:
        meta = result_metadata(result, train, test)
        return store.put(tkey, result, meta, knobs=knobs, card=card, method=method)
    except (OSError, TypeError, ValueError) as exc:
        logger.warning("Could not store point %s of %s: %s", knobs, result.method, exc)
        return None
