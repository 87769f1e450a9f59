"""The dashboard's job pool: what one process per job (forked from a warm parent) costs per job
against the long-lived loky worker pool it replaced, how fast a cancel frees a slot, and how long
a job's result takes to come back by its size.

Run: ``python bench/run.py jobs_startup jobs_transfer`` (``--quick``: fewer repetitions).
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


def _old_priority(increment: int) -> None:
    """The loky workers' initializer of the previous design: nice, a session and autogroup of
    their own (without its parent watch)."""
    from dashboard.components.jobs import _own_autogroup

    os.nice(increment)
    os.setsid()
    _own_autogroup(increment)


class _Loky:
    """The previous design: a warm loky pool of long-lived workers."""

    def __init__(self, workers: int) -> None:
        from joblib.externals.loky import ProcessPoolExecutor

        self.executor = ProcessPoolExecutor(
            max_workers=workers, initializer=_old_priority, initargs=(19,)
        )

    def run(self, function: Any, *args: Any) -> Any:
        return self.executor.submit(function, *args).result(timeout=600)

    def close(self) -> None:
        self.executor.shutdown(wait=True, kill_workers=True)


class _Pool:
    """Ours: one process per job from the warm parent."""

    def __init__(self, workers: int) -> None:
        from dashboard.components.jobs import JobPool, Priority

        self.pool = JobPool(  # the loky pool's priority, so that only the start-up differs
            workers=workers,
            per_session=1000,
            queue_limit=1000,
            priority=Priority(nice=19, own_group=True),
        )
        self.ids = iter(range(10**9))

    def run(self, function: Any, *args: Any) -> Any:
        key = f"k{next(self.ids)}"
        return self.pool.submit("bench", key, key, function, *args).future.result(timeout=600)

    def close(self) -> None:
        self.pool.shutdown()


def _once(pool: Any, function: Any, args: tuple, i: int) -> float:
    """Seconds of one call (submit → result); a fit gets split seed ``i`` (no in-process memo
    of an earlier call can serve it)."""
    call = (*args[:-1], i) if function is _fit else args
    start = time.perf_counter()
    pool.run(function, *call)
    return time.perf_counter() - start


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
    """Submit → result of one job: process per job vs the loky pool it replaced."""
    repeat = 3 if quick else 7
    pools = {"loky pool (before)": _Loky(2), "process per job (ours)": _Pool(2)}
    rows: list[dict] = []
    try:
        for what, function, args in _cases(quick):
            # the two designs alternate call by call, so a change of the machine's load
            # (other work on the host) reaches both alike
            times: dict[str, list[float]] = {design: [] for design in pools}
            for i in range(repeat + 1):
                for design, pool in pools.items():
                    times[design].append(_once(pool, function, args, i))
            before = statistics.median(times["loky pool (before)"][1:])
            for design, series in times.items():
                median = statistics.median(series[1:])
                ours = design.endswith("(ours)")
                rows.append(
                    {
                        "what": f"{design}: {what}",
                        "value": round(median, 4),
                        "unit": "s (median)",
                        "ratio": round(median / before, 2) if ours and before else None,
                        "note": f"first call {series[0]:.3f} s; median of {repeat} later calls "
                        f"(min {min(series[1:]):.3f}, max {max(series[1:]):.3f})"
                        + ("; ratio: ours / loky" if ours else ""),
                    }
                )
    finally:
        for pool in pools.values():
            pool.close()
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


def _blob(size: int) -> bytes:
    return os.urandom(size)


def jobs_transfer(quick: bool) -> list[dict]:
    """Submit → result of a job returning ``size`` random bytes (its start and its result's
    way back to the pool), one worker, nothing else queued."""
    from dashboard.components.jobs import JobPool

    repeat = 5 if quick else 11
    pool = JobPool(workers=1, per_session=1000, queue_limit=1000)
    rows = []
    try:
        for size in (0, 1 << 20, 32 << 20):
            times = []
            for i in range(repeat + 1):
                key = f"t{size}.{i}"
                start = time.perf_counter()
                value = pool.submit("bench", key, key, _blob, size).future.result(timeout=600)
                times.append(time.perf_counter() - start)
                assert len(value) == size
            median = statistics.median(times[1:])
            rows.append(
                {
                    "what": f"job returning {size / (1 << 20):g} MB: submit → result",
                    "value": round(median, 4),
                    "unit": "s (median)",
                    "note": f"first call {times[0]:.3f} s; median of {repeat} later calls "
                    f"(min {min(times[1:]):.3f}, max {max(times[1:]):.3f})",
                }
            )
    finally:
        pool.shutdown()
    return rows


def register(registry: Any) -> None:
    registry.add(jobs_startup)
    registry.add(jobs_transfer)
