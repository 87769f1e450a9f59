"""Fits and sweeps outside the Streamlit script thread: one process pool shared by all sessions.

The dashboard holds one :class:`JobPool` (``st.cache_resource``). A page submits a job (a
picklable function and its arguments) and polls it; the pool runs at most ``workers`` jobs at
once in worker processes, in submission order, and each session may have at most
``per_session`` unfinished jobs (its oldest queued one is dropped first when it asks for more).
Workers run at the lowest CPU priority (``nice`` 19, and in a session of their own where the
kernel groups processes by session), so pages stay responsive while they compute. Workers
report progress through a small JSON file per job (``{"done", "total", "started"}``), and a
running sweep stops between points when its cancel file appears.
A running single fit cannot be interrupted: cancelling it detaches it (it finishes in the
background, still filling the cache) and the job reports ``cancelled``.

This module does not import Streamlit (the pool can be tested and benchmarked on its own).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Environment knobs of the pool (the hosted demo sets them low).
WORKERS_ENV = "FAIRENGINE_WORKERS"
PER_SESSION_ENV = "FAIRENGINE_SESSION_JOBS"
NICE_ENV = "FAIRENGINE_WORKER_NICE"
#: Workers run at this much lower CPU priority than the server, so that drawing pages (the
#: server's work) wins over fits when the cores are busy. 19, the lowest: a fit is batch work
#: (measured, ``bench/bench_load.py``: the seventh visitor's page 5.1 s at +10 → 4.0 s at 19,
#: the six computing visitors' charts after the same ~22 s).
WORKER_NICE = 19


class Cancelled(Exception):  # noqa: N818 - a control-flow signal
    """Raised inside a worker when the job's cancel file appears."""


@dataclass
class Job:
    """One submitted job (what a page polls)."""

    id: int
    session: str
    label: str
    key: str
    future: Future
    submitted: float
    estimate: float | None
    progress_path: Path
    cancel_path: Path
    cancelled: bool = False
    _finished: float | None = field(default=None, repr=False)
    _started: float | None = field(default=None, repr=False)

    @property
    def done(self) -> bool:
        return self.cancelled or self.future.done()

    def progress(self) -> dict[str, Any]:
        """``{"started": epoch or None, "done": int, "total": int}`` as the worker last wrote."""
        try:
            return json.loads(self.progress_path.read_text())
        except (OSError, ValueError):
            return {"started": None, "done": 0, "total": 0}

    @property
    def started(self) -> float | None:
        if self._started is None:  # once started, never read again (queue positions poll it)
            self._started = self.progress().get("started")
        return self._started

    def remaining(self) -> float | None:
        """Estimated seconds to go (from the points done so far, else the job's estimate)."""
        info = self.progress()
        if info.get("started") is None:
            return self.estimate
        spent = time.time() - float(info["started"])
        done, total = int(info.get("done", 0)), int(info.get("total", 0))
        if total and done:
            return max(0.0, spent / done * (total - done))
        if self.estimate is not None:
            return max(0.0, self.estimate - spent)
        return None

    def outcome(self) -> tuple[str, Any]:
        """``("pending", None)``, ``("cancelled", None)``, ``("error", exception)`` or
        ``("done", value)``."""
        if self.cancelled:
            return "cancelled", None
        if not self.future.done():
            return "pending", None
        if self.future.cancelled():
            return "cancelled", None
        exc = self.future.exception()
        if isinstance(exc, Cancelled):
            return "cancelled", None
        if exc is not None:
            return "error", exc
        return "done", self.future.result()


def _write_progress(path: Path, **info: Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(info))
    os.replace(tmp, path)


def _run_job(
    progress_path: Path,
    cancel_path: Path,
    function: Callable[..., Any],
    args: tuple,
    kwargs: dict[str, Any],
    with_progress: bool,
) -> Any:
    """Worker side of a job: note the start, pass a progress callback if asked, run."""
    started = time.time()
    _write_progress(progress_path, started=started, done=0, total=0)
    if with_progress:

        def progress(done: int, total: int, point: Any = None) -> None:
            del point
            _write_progress(progress_path, started=started, done=done, total=total)
            if cancel_path.exists():
                raise Cancelled

        kwargs = {**kwargs, "progress": progress}
    return function(*args, **kwargs)


def _lower_priority(increment: int) -> None:
    """Worker initializer: give the fits a lower CPU priority than the server.

    ``nice`` orders processes only inside one scheduling group. With the kernel's autogroup
    scheduling on (``/proc/sys/kernel/sched_autogroup_enabled``, the default of many
    distributions) every session is one group and the groups share the cores equally, so a
    niced worker still takes its group's full share from everything outside the server's
    session. The worker therefore also starts its own session and lowers that group's weight
    by the same increment (``/proc/self/autogroup``): fits then yield to every interactive
    process on the host. Outside the server's process group a group kill no longer reaches the
    worker, so it then watches its parent and exits when the server is gone.
    """
    with contextlib.suppress(OSError, AttributeError):  # not on every platform
        os.nice(increment)
    if _own_autogroup(increment):  # out of the server's process group: a group kill misses it
        _exit_with_parent()


def _exit_with_parent(every: float = 1.0) -> None:
    """End this worker soon after the server that started it is gone (killed, not shut down),
    even in the middle of a fit: a daemon thread watches the parent's pid."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(0)

    threading.Thread(target=watch, name="fairengine-parent-watch", daemon=True).start()


def _own_autogroup(increment: int) -> bool:
    """Move this process into a new session whose autogroup runs at ``nice`` ``increment``;
    False (and nothing changed) where autogroups are off or unavailable."""
    enabled = Path("/proc/sys/kernel/sched_autogroup_enabled")
    try:
        if enabled.read_text().strip() != "1":
            return False
        os.setsid()
        Path("/proc/self/autogroup").write_text(str(min(19, max(0, increment))))
    except (OSError, AttributeError):
        return False
    return True


def _warm() -> int:
    import fairengine.methods  # noqa: F401  (import the engine once per worker)

    return os.getpid()


class JobPool:
    """A process pool with per-session limits, queue positions, progress and cancelling.

    Parameters
    ----------
    workers : int, optional
        Worker processes (default ``$FAIRENGINE_WORKERS``, else ``min(2, cpu count)``).
    per_session : int, optional
        Unfinished jobs one session may hold (default ``$FAIRENGINE_SESSION_JOBS``, else 2).
    warm : bool
        Start the workers at once and import the engine in them (so a first fit does not pay
        for it).
    """

    def __init__(
        self, workers: int | None = None, per_session: int | None = None, *, warm: bool = True
    ) -> None:
        cpus = os.cpu_count() or 1
        self.workers = int(workers or os.environ.get(WORKERS_ENV) or max(1, min(2, cpus)))
        self.per_session = int(per_session or os.environ.get(PER_SESSION_ENV) or 2)
        self._executor = self._new_executor()
        self._dir = Path(tempfile.mkdtemp(prefix="fairengine-jobs-"))
        self._jobs: dict[int, Job] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        for _ in range(self.workers if warm else 0):  # start the workers, import the engine
            self._submit(_warm)

    def _new_executor(self) -> Any:
        # loky's executor: fresh interpreters (forking a threaded server is unsafe) that do not
        # re-run ``__main__`` (under Streamlit that is the app script), and callables shipped
        # with cloudpickle.
        from joblib.externals.loky import ProcessPoolExecutor

        increment = int(os.environ.get(NICE_ENV) or WORKER_NICE)
        return ProcessPoolExecutor(
            max_workers=self.workers, initializer=_lower_priority, initargs=(increment,)
        )

    def _submit(self, *args: Any) -> Future:
        try:
            return self._executor.submit(*args)
        except Exception:  # a worker died (e.g. out of memory): the pool is broken, renew it
            self._executor.shutdown(wait=False)
            self._executor = self._new_executor()
            return self._executor.submit(*args)

    def submit(
        self,
        session: str,
        label: str,
        key: str,
        function: Callable[..., Any],
        *args: Any,
        estimate: float | None = None,
        with_progress: bool = False,
        **kwargs: Any,
    ) -> Job:
        """Queue ``function(*args, **kwargs)`` for ``session``; returns the job to poll.

        A job with the same ``key`` that is still unfinished (from any session) is shared
        rather than run twice. If the session already holds ``per_session`` unfinished jobs,
        its oldest one is cancelled first.
        """
        with self._lock:
            self._forget_finished()
            for job in self._jobs.values():
                if job.key == key and not job.done:
                    return job
            mine = sorted(
                (j for j in self._jobs.values() if j.session == session and not j.done),
                key=lambda j: j.id,
            )
            while len(mine) >= self.per_session:
                self._cancel(mine.pop(0))
            job_id = next(self._ids)
            progress_path = self._dir / f"{job_id}.json"
            cancel_path = self._dir / f"{job_id}.cancel"
            future = self._submit(
                _run_job, progress_path, cancel_path, function, args, kwargs, with_progress
            )
            job = Job(
                id=job_id,
                session=session,
                label=label,
                key=key,
                future=future,
                submitted=time.time(),
                estimate=estimate,
                progress_path=progress_path,
                cancel_path=cancel_path,
            )
            self._jobs[job_id] = job
            return job

    def get(self, job_id: int | None) -> Job | None:
        with self._lock:
            return None if job_id is None else self._jobs.get(job_id)

    def queue_position(self, job: Job) -> int:
        """0 when the job runs (or is done), else its place in the queue (1 = next)."""
        if job.done or job.started is not None:
            return 0
        with self._lock:
            waiting = [
                j for j in self._jobs.values() if not j.done and j.started is None and j.id < job.id
            ]
        return len(waiting) + 1

    def active(self, session: str | None = None) -> list[Job]:
        """Unfinished jobs (of one session, or all), oldest first."""
        with self._lock:
            jobs = [j for j in self._jobs.values() if not j.done]
        if session is not None:
            jobs = [j for j in jobs if j.session == session]
        return sorted(jobs, key=lambda j: j.id)

    def cancel(self, job: Job) -> None:
        """Cancel a queued job; ask a running sweep to stop; detach a running fit."""
        with self._lock:
            self._cancel(job)

    def _cancel(self, job: Job) -> None:
        if job.future.done():
            return
        job.cancel_path.touch()
        job.future.cancel()  # succeeds only while still queued
        job.cancelled = True

    def _forget_finished(self, keep_seconds: float = 600.0) -> None:
        now = time.time()
        for job_id, job in list(self._jobs.items()):
            if job.done:
                job._finished = job._finished or now
                if now - job._finished > keep_seconds:
                    del self._jobs[job_id]
                    job.progress_path.unlink(missing_ok=True)
                    job.cancel_path.unlink(missing_ok=True)

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, kill_workers=True)
        shutil.rmtree(self._dir, ignore_errors=True)
