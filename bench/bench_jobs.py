"""The dashboard's job pool: what one process per job (forked from a warm forkserver parent) costs
per job against the long-lived loky worker pool it replaced, and how fast a cancel frees a slot.

Run: ``python bench/run.py jobs_startup`` (``--quick``: fewer repetitions).
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any


def _noop() -> int:
    return os.getpid()


def _echo(task: Any) -> int:
    return len(task.X)


def _fit(method: str, task: Any, seed: int) -> float:
    """One fit on a fresh split (no in-process memo of an earlier call can serve it)."""
    from fairengine.methods import get_method

    train, test = task.split(random_state=seed)
    return get_method(method).run(train, test).elapsed


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


class _Loky:
    """The previous design: a warm loky pool of long-lived workers (same initializer)."""

    def __init__(self, workers: int) -> None:
        from joblib.externals.loky import ProcessPoolExecutor

        from dashboard.components.jobs import WORKER_NICE, _own_autogroup

        self.executor = ProcessPoolExecutor(
            max_workers=workers, initializer=_own_autogroup, initargs=(WORKER_NICE,)
        )

    def run(self, function: Any, *args: Any) -> Any:
        return self.executor.submit(function, *args).result(timeout=600)

    def close(self) -> None:
        self.executor.shutdown(wait=True, kill_workers=True)


class _Pool:
    def __init__(self, workers: int) -> None:
        from dashboard.components.jobs import JobPool

        self.pool = JobPool(workers=workers, per_session=1000, queue_limit=1000)
        self.ids = iter(range(10**9))

    def run(self, function: Any, *args: Any) -> Any:
        key = f"k{next(self.ids)}"
        return self.pool.submit("bench", key, key, function, *args).future.result(timeout=600)

    def close(self) -> None:
        self.pool.shutdown()


def _timed(pool: Any, function: Any, *args: Any, repeat: int) -> tuple[float, list[float]]:
    """Seconds of the first call, and of ``repeat`` later calls (submit → result); a fit gets
    a new split seed on every call."""
    times = []
    for i in range(repeat + 1):
        call = (*args[:-1], i) if function is _fit else args
        start = time.perf_counter()
        pool.run(function, *call)
        times.append(time.perf_counter() - start)
    return times[0], times[1:]


def _cases(quick: bool) -> list[tuple[str, Any, tuple]]:
    from fairengine.data import load_dataset

    task = load_dataset("german_credit" if quick else "adult")
    cases: list[tuple[str, Any, tuple]] = [
        ("empty job", _noop, ()),
        (f"job receiving the {task.name} task ({len(task.X):,} rows)", _echo, (task,)),
    ]
    for method in ("reweighing", "maxent", "noisy_groups"):
        cases.append((f"{method} fit on {task.name}", _fit, (method, task, 0)))
    return cases


def jobs_startup(quick: bool) -> list[dict]:
    """Submit → result of one job: process per job (forkserver) vs the loky pool it replaced."""
    repeat = 3 if quick else 5
    rows: list[dict] = []
    results: dict[tuple[str, str], tuple[float, float]] = {}
    for design, factory in (("loky pool (before)", _Loky), ("process per job (ours)", _Pool)):
        pool = factory(2)
        try:
            for what, function, args in _cases(quick):
                first, times = _timed(pool, function, *args, repeat=repeat)
                median = statistics.median(times)
                results[(design, what)] = (first, median)
        finally:
            pool.close()
    for (design, what), (first, median) in results.items():
        before = results.get(("loky pool (before)", what))
        ratio = None if design.startswith("loky") or not before else median / before[1]
        rows.append(
            {
                "what": f"{design}: {what}",
                "value": round(median, 4),
                "unit": "s (median)",
                "ratio": None if ratio is None else round(ratio, 2),
                "note": f"first call {first:.3f} s; median of {repeat} later calls"
                + ("" if ratio is None else "; ratio: ours / loky"),
            }
        )
    rows += _cancel_rows(repeat)
    return rows


def _cancel_rows(repeat: int) -> list[dict]:
    """Cancel of a running fit: until its process is gone, and until the next job is done."""
    from dashboard.components.jobs import JobPool

    pool = JobPool(workers=1, per_session=1000, queue_limit=1000)
    gone, next_done = [], []
    try:
        for i in range(repeat):
            job = pool.submit("bench", "fit", f"c{i}", _sleep, 60)
            after = pool.submit("bench", "next", f"n{i}", _noop)
            while job.pid is None or job.started is None:
                time.sleep(0.01)
            pid = job.pid
            start = time.perf_counter()
            pool.cancel(job)
            while _exists(pid):
                time.sleep(0.001)
            gone.append(time.perf_counter() - start)
            after.future.result(timeout=60)
            next_done.append(time.perf_counter() - start)
    finally:
        pool.shutdown()
    return [
        {
            "what": "process per job (ours): cancel of a running fit → its process gone",
            "value": round(statistics.median(gone), 4),
            "unit": "s (median)",
            "note": f"max {max(gone):.4f} s over {repeat}; the loky pool could not stop a "
            "running fit (it ran to the end, holding its worker)",
        },
        {
            "what": "process per job (ours): cancel of a running fit → the next queued job done",
            "value": round(statistics.median(next_done), 4),
            "unit": "s (median)",
            "note": f"max {max(next_done):.4f} s over {repeat}; one worker",
        },
    ]


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def register(registry: Any) -> None:
    registry.add(jobs_startup)
