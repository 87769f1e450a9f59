"""Where sweep points are computed: in-process, joblib (loky / threading) or a dask cluster.

Every backend runs the same function, ``Method.run(train, test, **knobs)``, and yields
``(index, RunResult)`` pairs as points complete; the caller restores grid order. Results come
back to the calling process, which alone writes the store (a remote cluster need not share a
file system with it).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from fairengine.methods.base import Method, RunResult
from fairengine.methods.registry import get_method, portable

if TYPE_CHECKING:  # the Task's pandas loads with the data
    from fairengine.data import Task

BACKENDS = ("loky", "threading", "dask")
Job = tuple[int, dict[str, Any]]


def run_point(
    method: Method | str, train: Task, test: Task, index: int, knobs: dict[str, Any]
) -> tuple[int, RunResult]:
    """Compute one point (runs in a worker; a method name is imported there by
    :func:`get_method`); returns its grid index with the result."""
    method = get_method(method) if isinstance(method, str) else method
    return index, method.run(train, test, **knobs)


def run_points(
    method: Method,
    train: Task,
    test: Task,
    jobs: Sequence[Job],
    *,
    n_jobs: int = 1,
    backend: str = "loky",
    scheduler: Any = None,
) -> Iterator[tuple[int, RunResult]]:
    """Compute ``jobs`` (grid index, knobs) and yield ``(index, result)`` in completion order."""
    if backend not in BACKENDS:
        raise ValueError(f"Unknown backend {backend!r}; use one of {', '.join(BACKENDS)}.")
    if scheduler is not None and backend != "dask":
        raise ValueError("A scheduler is only used with backend='dask'.")
    if not jobs:
        return iter(())
    if backend != "dask" and (n_jobs == 1 or len(jobs) == 1):  # in this process: no lookup
        return ((i, method.run(train, test, **knobs)) for i, knobs in jobs)
    ref = portable(method)  # what a worker process can find the method by
    if backend == "dask":
        return _dask(ref, train, test, jobs, scheduler)
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered")
    return parallel(delayed(run_point)(ref, train, test, i, knobs) for i, knobs in jobs)


def _dask(
    ref: Method | str, train: Task, test: Task, jobs: Sequence[Job], scheduler: Any
) -> Iterator[tuple[int, RunResult]]:
    try:
        import distributed
    except ImportError:
        raise ImportError(
            "backend='dask' needs dask.distributed: pip install 'dask[distributed]'."
        ) from None
    client, owned = _client(distributed, scheduler)
    futures = []
    try:
        # Ship the data once to every worker instead of once per point.
        train_f, test_f = client.scatter([train, test], broadcast=True, hash=False)
        futures = [
            client.submit(run_point, ref, train_f, test_f, i, knobs, pure=False)
            for i, knobs in jobs
        ]
        # the client may not be the default one: give as_completed its event loop
        for future in distributed.as_completed(futures, loop=client.loop):
            yield future.result()
    finally:
        pending = [f for f in futures if not f.done()]
        if pending:
            client.cancel(pending)
        if owned:
            client.close()


def _client(distributed: Any, scheduler: Any) -> tuple[Any, bool]:
    """The client to use and whether this sweep created it (and so must close it)."""
    if isinstance(scheduler, distributed.Client):
        return scheduler, False
    if isinstance(scheduler, str):
        try:
            return distributed.Client(scheduler, set_as_default=False, timeout="10s"), True
        except OSError as exc:
            raise ConnectionError(
                f"Cannot reach the dask scheduler at {scheduler!r}: {exc}. Start one with "
                "`dask scheduler` (and workers with `dask worker ADDRESS`), or check the address."
            ) from exc
    if scheduler is None:
        try:
            return distributed.get_client(), False
        except ValueError:
            raise ValueError(
                "backend='dask' needs a dask.distributed cluster: pass scheduler=Client(...) or "
                "an address such as 'tcp://127.0.0.1:8786', or create a Client first."
            ) from None
    raise TypeError(
        f"scheduler must be a distributed.Client, an address string or None; got "
        f"{type(scheduler).__name__}."
    )
