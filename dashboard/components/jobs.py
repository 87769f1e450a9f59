"""Fits and sweeps outside the Streamlit script thread: one process per job, shared by all sessions.

The dashboard holds one :class:`JobPool` (``st.cache_resource``). A page submits a job (a
function and its arguments; closures are fine, they travel with cloudpickle) and polls it. A
dispatcher thread keeps at most ``workers`` jobs running, in submission order; each session may
have at most ``per_session`` unfinished jobs (its oldest one is dropped first when it asks for
more), and at most ``queue_limit`` jobs wait in all: beyond that :meth:`JobPool.submit` raises
:class:`ServerBusy`, whose message the page shows as it is.

Every job runs in a process of its own, forked from a warm parent (a multiprocessing
*forkserver* that imported the engine once, so a job starts in a few tens of milliseconds and
never re-runs the server's ``__main__``). One process per job isolates the jobs from one another:

* a job that dies (killed by the kernel's out-of-memory killer, a crash in native code) fails
  alone, with a message in words (:class:`JobFailed`); every other job is unaffected;
* each job runs under an address-space limit (``RLIMIT_AS``, :func:`job_memory_mb`), so one
  heavy fit fails with "ran out of memory" instead of taking the server down;
* cancelling a running job kills its process (and anything it started) at once; its slot goes
  to the next queued job. Sweeps write each finished point atomically, so those stay cached.

Jobs run at the lowest CPU priority (``nice`` 19, in a session and scheduling group of their
own), so pages stay responsive while they compute, and each one exits on its own if the server
goes away. They report progress through a small JSON file per job (``{"done", "total",
"started"}``).

This module does not import Streamlit (the pool can be tested and benchmarked on its own).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from multiprocessing import connection, context, popen_forkserver, reduction, spawn, util
from pathlib import Path
from typing import Any

import cloudpickle

#: Environment knobs of the pool (the hosted demo sets them low).
WORKERS_ENV = "FAIRENGINE_WORKERS"
PER_SESSION_ENV = "FAIRENGINE_SESSION_JOBS"
NICE_ENV = "FAIRENGINE_WORKER_NICE"
QUEUE_LIMIT_ENV = "FAIRENGINE_QUEUE_LIMIT"
MEMORY_ENV = "FAIRENGINE_JOB_MEMORY_MB"
#: Workers run at this much lower CPU priority than the server, so that drawing pages (the
#: server's work) wins over fits when the cores are busy. 19, the lowest: a fit is batch work
#: (measured, ``bench/bench_load.py``: the seventh visitor's page 5.1 s at +10 → 4.0 s at 19,
#: the six computing visitors' charts after the same ~22 s).
WORKER_NICE = 19
#: Jobs that may wait for a worker, all sessions together (``$FAIRENGINE_QUEUE_LIMIT``).
QUEUE_LIMIT = 32
#: Address space a job's interpreter and libraries reserve without using it (measured: a job
#: process with the engine, NumPy, pandas and scikit-learn imported maps ~600 MB, ~120 MB
#: resident); added to the job's share of the memory.
BASELINE_MB = 768
#: Modules the warm parent imports once, so that no job pays for them: the engine and what the
#: methods' fits import (a missing one is skipped).
PRELOAD = (
    "dashboard.components.jobs",
    "fairengine.methods",
    "fairengine.frontier",
    "fairengine.frontier.runs",
    "fairengine.data.encoding",
    "fairengine.methods.evaluation",
    "fairengine.models.linear",
    "fairengine.solvers",
    "fairengine.methods.balanced_filtering.method",
    "fairengine.methods.fair_regression.method",
    "fairengine.methods.maxent.method",
    "fairengine.methods.multiaccurate_proxy.method",
    "fairengine.methods.noisy_groups.method",
    "fairlearn.reductions",
    "pandas",
    "sklearn.linear_model",
    "sklearn.naive_bayes",
    "sklearn.tree",
)
BUSY_MESSAGE = "The server is busy; try again in a minute."


class Cancelled(Exception):  # noqa: N818 - a control-flow signal
    """The outcome of a job cancelled while it ran (or raised inside it by its progress hook)."""


class ServerBusy(RuntimeError):  # noqa: N818 - what the visitor reads
    """:meth:`JobPool.submit` when the queue is full; the message is for the visitor."""

    def __init__(self) -> None:
        super().__init__(BUSY_MESSAGE)


class JobFailed(RuntimeError):
    """A job whose process died or ran out of memory; the message says so in words."""


def out_of_memory(memory_mb: int | None, *, killed: bool = False) -> JobFailed:
    """The error of a fit that needed more memory than it may use (``killed``: the system
    stopped it, else it hit the per-job limit of ``memory_mb``)."""
    if killed:
        limit = " (the system stopped it)"
    else:
        limit = f" (the limit is {memory_mb:,} MB per fit)" if memory_mb else ""
    return JobFailed(
        f"this fit ran out of memory{limit}. Try fewer rows or a smaller setting of the knobs."
    )


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
    pid: int | None = None
    _call: tuple | None = field(default=None, repr=False)
    _finished: float | None = field(default=None, repr=False)
    _started: float | None = field(default=None, repr=False)

    @property
    def done(self) -> bool:
        return self.cancelled or self.future.done()

    def progress(self) -> dict[str, Any]:
        """``{"started": epoch or None, "done": int, "total": int}`` as the job last wrote."""
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
    """Job side: note the start, pass a progress callback if asked, run."""
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


# --- the job's process ---------------------------------------------------------------------


def _lower_priority(increment: int, server: int | None = None) -> None:
    """Give the job a lower CPU priority than the server, in a session of its own.

    ``nice`` orders processes only inside one scheduling group. With the kernel's autogroup
    scheduling on (``/proc/sys/kernel/sched_autogroup_enabled``, the default of many
    distributions) every session is one group and the groups share the cores equally, so a
    niced job would still take its group's full share from everything outside the server's
    session. The job therefore starts its own session (which also lets a cancel kill its whole
    process group) and lowers that group's weight by the same increment
    (``/proc/self/autogroup``): fits then yield to every interactive process on the host. Out
    of the server's process group, a group kill of the server no longer reaches the job, so it
    watches its parent and the server and exits when either is gone.
    """
    with contextlib.suppress(OSError, AttributeError):  # not on every platform
        os.nice(increment)
    with contextlib.suppress(OSError, AttributeError):
        os.setsid()
    _own_autogroup(increment)
    _exit_with_parent(server=server)


def _exit_with_parent(every: float = 1.0, server: int | None = None) -> None:
    """End this process soon after its parent (the warm parent, which ends with the server) or
    the server itself is gone (killed, not shut down), even in the middle of a fit: a daemon
    thread watches both pids."""
    parent = os.getppid()

    def alive(pid: int | None) -> bool:
        if pid is None:
            return True
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except OSError:  # exists, owned by someone else
            return True
        return True

    def watch() -> None:
        while os.getppid() == parent and alive(server):
            time.sleep(every)
        os._exit(0)

    threading.Thread(target=watch, name="fairengine-parent-watch", daemon=True).start()


def _own_autogroup(increment: int) -> bool:
    """Give this process's session (its scheduling autogroup) ``nice`` ``increment``; False
    where autogroups are off or unavailable."""
    enabled = Path("/proc/sys/kernel/sched_autogroup_enabled")
    try:
        if enabled.read_text().strip() != "1":
            return False
        Path("/proc/self/autogroup").write_text(str(min(19, max(0, increment))))
    except (OSError, AttributeError):
        return False
    return True


def _limit_memory(memory_mb: int | None) -> None:
    """Cap this process's address space: an allocation beyond it raises ``MemoryError``."""
    if not memory_mb:
        return
    import resource

    limit = int(memory_mb) * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _is_memory_error(exc: BaseException | None) -> bool:
    """True for a MemoryError, or an error raised while handling one (libraries wrap it)."""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, MemoryError):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def _child(payload: bytes, paths: tuple[str, str, str], settings: tuple) -> None:
    """Body of a job's process: lower its priority, cap its memory, run, write the outcome."""
    increment, memory_mb, server = settings
    _lower_priority(increment, server)
    _limit_memory(memory_mb)
    progress_path, cancel_path, result_path = (Path(p) for p in paths)
    try:
        function, args, kwargs, with_progress = cloudpickle.loads(payload)
        value = _run_job(progress_path, cancel_path, function, args, kwargs, with_progress)
        outcome: tuple[str, Any] = ("done", value)
    except Cancelled:
        outcome = ("cancelled", None)
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the page
        outcome = ("memory", None) if _is_memory_error(exc) else ("error", exc)
    _write_outcome(result_path, outcome)
    os._exit(0)  # no interpreter teardown (threads a library left behind must not hold it)


def _write_outcome(path: Path, outcome: tuple[str, Any]) -> None:
    try:
        data = cloudpickle.dumps(outcome)
    except MemoryError:
        data = cloudpickle.dumps(("memory", None))
    except Exception as exc:  # noqa: BLE001 - an unpicklable value or exception
        kind, value = outcome
        words = value if kind == "error" else exc
        data = cloudpickle.dumps(("error", RuntimeError(f"{type(words).__name__}: {words}")))
    tmp = path.with_suffix(".part")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class _NoMainPopen(popen_forkserver.Popen):
    """Start a process from the forkserver without re-running the server's ``__main__`` in it
    (under Streamlit that is the app script). The same steps as the standard library's
    ``Popen._launch``, with the main module left out of the preparation data."""

    def _launch(self, process_obj: Any) -> None:
        prep_data = spawn.get_preparation_data(process_obj._name)
        prep_data.pop("init_main_from_path", None)
        prep_data.pop("init_main_from_name", None)
        buf = io.BytesIO()
        context.set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            context.set_spawning_popen(None)
        forkserver = popen_forkserver.forkserver
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)
        parent_w = os.dup(w)  # the child's sentinel of its parent, as the standard library
        self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _JobProcess(context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> _NoMainPopen:  # noqa: N802 - the multiprocessing hook
        return _NoMainPopen(process_obj)


def _start_warm_parent() -> None:
    """Start the forkserver (it imports :data:`PRELOAD` once); later calls return at once."""
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver").set_forkserver_preload(list(PRELOAD))
    forkserver.ensure_running()


# --- memory --------------------------------------------------------------------------------


def machine_memory_mb() -> int:
    """Memory this process may use in all: the host's RAM, or its container's limit if lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        with contextlib.suppress(OSError, ValueError):
            total = min(total, int(Path(path).read_text().strip()))
    return int(total // (1024 * 1024))


def job_memory_mb(workers: int, environ: dict[str, str] | None = None) -> int | None:
    """Address-space limit of one job in MB: ``$FAIRENGINE_JOB_MEMORY_MB`` (0 = none), else
    each of ``workers`` running jobs gets an equal share of 80% of the machine's memory (the
    rest is the server's) plus :data:`BASELINE_MB` the libraries reserve without using."""
    env = os.environ if environ is None else environ
    if env.get(MEMORY_ENV):
        value = int(env[MEMORY_ENV])
        return value if value > 0 else None
    return max(1024, int(0.8 * machine_memory_mb() / max(1, workers)) + BASELINE_MB)


def _failure(exitcode: int | None, memory_mb: int | None) -> JobFailed:
    """The error of a job whose process ended without an outcome."""
    if exitcode is not None and exitcode < 0:
        if -exitcode == signal.SIGKILL:  # what the kernel's out-of-memory killer sends
            return out_of_memory(memory_mb, killed=True)
        name = signal.Signals(-exitcode).name if -exitcode in signal.valid_signals() else ""
        return JobFailed(
            f"the worker stopped unexpectedly ({name or f'signal {-exitcode}'}); it may have run "
            "out of memory. Try again, or with fewer rows or a smaller setting."
        )
    return JobFailed(
        f"the worker stopped unexpectedly (exit code {exitcode}). Try again, or with fewer rows "
        "or a smaller setting."
    )


# --- the pool ------------------------------------------------------------------------------


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


class JobPool:
    """One process per job, at most ``workers`` at once: per-session limits, a global queue
    limit, queue positions, progress and cancelling (see the module docstring).

    Parameters
    ----------
    workers : int, optional
        Jobs running at once (default ``$FAIRENGINE_WORKERS``, else ``min(2, cpu count)``).
    per_session : int, optional
        Unfinished jobs one session may hold (default ``$FAIRENGINE_SESSION_JOBS``, else 2).
    warm : bool
        Start the warm parent at once (so a first fit does not pay for importing the engine).
    queue_limit : int, optional
        Jobs that may wait, all sessions together (default ``$FAIRENGINE_QUEUE_LIMIT``, else
        :data:`QUEUE_LIMIT`).
    memory_mb : int, optional
        Address-space limit of one job (default :func:`job_memory_mb`; 0 = none).
    """

    def __init__(
        self,
        workers: int | None = None,
        per_session: int | None = None,
        *,
        warm: bool = True,
        queue_limit: int | None = None,
        memory_mb: int | None = None,
    ) -> None:
        cpus = os.cpu_count() or 1
        self.workers = int(workers or _env_int(WORKERS_ENV, max(1, min(2, cpus))))
        self.per_session = int(per_session or _env_int(PER_SESSION_ENV, 2))
        self.queue_limit = int(queue_limit or _env_int(QUEUE_LIMIT_ENV, QUEUE_LIMIT))
        self.memory_mb = job_memory_mb(self.workers) if memory_mb is None else memory_mb or None
        self._nice = _env_int(NICE_ENV, WORKER_NICE)
        self._dir = Path(tempfile.mkdtemp(prefix="fairengine-jobs-"))
        self._jobs: dict[int, Job] = {}
        self._queue: deque[Job] = deque()
        self._running: dict[int, tuple[Job, Any]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._closed = False
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(
            target=self._dispatch, args=(warm,), name="fairengine-jobs", daemon=True
        )
        self._thread.start()

    # -- pages' side --

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
        its oldest one is cancelled first. Raises :class:`ServerBusy` (nothing cancelled) when
        ``queue_limit`` jobs already wait.
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
            dropped = mine[: max(0, len(mine) - self.per_session + 1)]
            waiting = sum(1 for j in self._queue if j not in dropped)
            if waiting >= self.queue_limit:
                raise ServerBusy
            for old in dropped:
                self._cancel(old)
            job_id = next(self._ids)
            job = Job(
                id=job_id,
                session=session,
                label=label,
                key=key,
                future=Future(),
                submitted=time.time(),
                estimate=estimate,
                progress_path=self._dir / f"{job_id}.json",
                cancel_path=self._dir / f"{job_id}.cancel",
                _call=(function, args, kwargs, with_progress),
            )
            self._jobs[job_id] = job
            self._queue.append(job)
        self._wake()
        return job

    def get(self, job_id: int | None) -> Job | None:
        with self._lock:
            return None if job_id is None else self._jobs.get(job_id)

    def queue_position(self, job: Job) -> int:
        """0 when the job runs (or is done), else its place in the queue (1 = next)."""
        with self._lock:
            for position, queued in enumerate(self._queue, start=1):
                if queued is job:
                    return position
        return 0

    def active(self, session: str | None = None) -> list[Job]:
        """Unfinished jobs (of one session, or all), oldest first."""
        with self._lock:
            jobs = [j for j in self._jobs.values() if not j.done]
        if session is not None:
            jobs = [j for j in jobs if j.session == session]
        return sorted(jobs, key=lambda j: j.id)

    def cancel(self, job: Job) -> None:
        """Drop a queued job; stop a running one (its process is killed)."""
        with self._lock:
            self._cancel(job)
        self._wake()

    def _cancel(self, job: Job) -> None:
        if job.future.done():
            return
        job.cancelled = True
        job.cancel_path.touch()
        if job in self._queue:
            self._queue.remove(job)
            job.future.cancel()
        running = self._running.get(job.id)
        if running is not None:
            _kill(running[1])

    def shutdown(self) -> None:
        """Kill every running job, drop the queued ones, remove the job files."""
        with self._lock:
            self._closed = True
            for job in list(self._queue) + [job for job, _ in self._running.values()]:
                self._cancel(job)
        self._wake()
        self._thread.join(timeout=10)
        shutil.rmtree(self._dir, ignore_errors=True)

    # -- dispatcher's side --

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def _dispatch(self, warm: bool) -> None:
        """Start queued jobs while fewer than ``workers`` run; collect the ones that end."""
        if warm:
            with contextlib.suppress(Exception):
                _start_warm_parent()
        while True:
            try:
                if self._step():
                    break
            except Exception:  # noqa: BLE001 - the dispatcher must outlive any one job
                time.sleep(0.5)
        with contextlib.suppress(OSError):
            os.close(self._wake_r)
            os.close(self._wake_w)

    def _step(self) -> bool:
        """One round of the dispatcher; True once the pool is shut down and idle."""
        self._start_queued()
        with self._lock:
            if self._closed and not self._running:
                return True
            sentinels = {process.sentinel: job for job, process in self._running.values()}
        ready = connection.wait([*sentinels, self._wake_r], timeout=1.0)
        if self._wake_r in ready:
            os.read(self._wake_r, 4096)
        for sentinel in ready:
            if sentinel in sentinels:
                self._collect(sentinels[sentinel])
        return False

    def _start_queued(self) -> None:
        while True:
            with self._lock:
                if self._closed or len(self._running) >= self.workers or not self._queue:
                    return
                job = self._queue.popleft()
                if not job.future.set_running_or_notify_cancel():
                    continue
                call, job._call = job._call, None
            try:
                process = self._start(job, call)
            except Exception as exc:  # noqa: BLE001 - e.g. an argument that cannot be pickled
                job.future.set_exception(exc)
                continue
            with self._lock:
                self._running[job.id] = (job, process)
                job.pid = process.pid
                if job.cancelled or self._closed:  # cancelled while its process started
                    _kill(process)

    def _start(self, job: Job, call: tuple | None) -> Any:
        _start_warm_parent()
        payload = cloudpickle.dumps(call)
        paths = (str(job.progress_path), str(job.cancel_path), str(self._result_path(job)))
        settings = (self._nice, self.memory_mb, os.getpid())
        process = _JobProcess(
            target=_child, args=(payload, paths, settings), name=f"fairengine-job-{job.id}"
        )
        process.daemon = True  # killed if the server shuts down normally
        process.start()
        return process

    def _result_path(self, job: Job) -> Path:
        return self._dir / f"{job.id}.result"

    def _collect(self, job: Job) -> None:
        """Settle the future of a job whose process has ended."""
        with self._lock:
            _, process = self._running.pop(job.id)
        process.join(timeout=5)
        exitcode = process.exitcode
        with contextlib.suppress(ValueError):
            process.close()
        path = self._result_path(job)
        try:
            kind, value = cloudpickle.loads(path.read_bytes())
        except (OSError, EOFError, ValueError, ImportError, AttributeError):
            kind, value = None, None
        path.unlink(missing_ok=True)
        if kind == "done":
            job.future.set_result(value)
        elif kind == "error":
            job.future.set_exception(value)
        elif kind == "memory":
            job.future.set_exception(out_of_memory(self.memory_mb))
        elif kind == "cancelled" or job.cancelled:
            job.future.set_exception(Cancelled())
        else:
            job.future.set_exception(_failure(exitcode, self.memory_mb))

    def _forget_finished(self, keep_seconds: float = 600.0) -> None:
        now = time.time()
        for job_id, job in list(self._jobs.items()):
            if job.done:
                job._finished = job._finished or now
                if now - job._finished > keep_seconds:
                    del self._jobs[job_id]
                    job.progress_path.unlink(missing_ok=True)
                    job.cancel_path.unlink(missing_ok=True)


def _kill(process: Any) -> None:
    """Kill a job's process and everything it started (its process group, once it has one)."""
    pid = process.pid
    if pid is None:
        return
    with contextlib.suppress(OSError):
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
            return
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
