"""Fits and sweeps outside the Streamlit script thread: a process per call, shared by all sessions.

The dashboard holds one :class:`JobPool` (``st.cache_resource``). A page submits a job (a
function and its arguments; closures are fine, they travel with cloudpickle) and polls it. A
dispatcher thread keeps at most ``workers`` calls running (in the order described below); each
session may have at most ``per_session`` unfinished jobs (its oldest one is dropped first when
it asks for more), and at most ``queue_limit`` jobs wait in all: beyond that
:meth:`JobPool.submit` raises :class:`ServerBusy`, whose message the page shows as it is.

Every call runs in a process of its own, forked from a warm parent (a multiprocessing
*forkserver* that imported the engine once, so a job starts in a few tens of milliseconds and
never re-runs the server's ``__main__``). One process per job isolates the jobs from one another:

* a job that dies (killed by the kernel's out-of-memory killer, a crash in native code) fails
  alone, with a message in words (:class:`JobFailed`); every other job is unaffected;
* each job runs under an address-space limit (``RLIMIT_AS``, :func:`job_memory_mb`), so one
  heavy fit fails with "ran out of memory" instead of taking the server down;
* cancelling a running job kills its process (and anything it started) at once; its slot goes
  to the next queued job. Sweeps write each finished point atomically, so those stay cached.

A job may be several separate calls (:meth:`JobPool.submit_parts`: a sweep, one call per point).
The dispatcher starts the calls of all jobs as workers free up, choosing each time from the
session with the fewest calls running (the oldest job first among equals): a sweep uses every
idle worker, yet a visitor's single fit never waits behind all the points of another visitor's
sweep. Cancelling such a job kills every one of its running calls and drops the rest.

CPU priority (:class:`Priority`): by default a job runs at ``nice`` :data:`WORKER_NICE` in the
server's own session, so in the server's scheduling group. Nice orders processes only inside
one group; with the kernel's autogroup scheduling (``/proc/sys/kernel/sched_autogroup_enabled``,
on in many distributions) every session is one group and the groups share the cores equally.
Inside the server's group a page's script (nice 0) wins the cores over fits, while the group as
a whole keeps its fair share against everything else on the host, so fits are neither starved
by a busy neighbour nor in the way of the pages. ``$FAIRENGINE_WORKER_NICE`` sets the nice
value; ``$FAIRENGINE_WORKER_GROUP=own`` runs each job in a session and scheduling group of its
own whose weight is lowered by the same nice value instead (with ``nice`` 19, the weight of
that group is about 1/70 of a normal one: fits then get almost no CPU as long as anything else
on the host is busy; measured, ``bench/bench_sched.py``). Either way a job runs in a process
group of its own (a cancel kills it whole) and exits on its own if the server goes away.

Jobs report progress through a small JSON file per call (``{"done", "total", "started"}``);
:meth:`Job.cpu_seconds` and :meth:`Job.cpu_share` say how much processor time a job got (read
from ``/proc/<pid>/stat`` while it runs, from its own resource usage once it ends).

This module does not import Streamlit (the pool can be tested and benchmarked on its own).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
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
GROUP_ENV = "FAIRENGINE_WORKER_GROUP"
QUEUE_LIMIT_ENV = "FAIRENGINE_QUEUE_LIMIT"
MEMORY_ENV = "FAIRENGINE_JOB_MEMORY_MB"
#: Workers run at this much lower CPU priority than the server, inside the server's scheduling
#: group (see the module docstring and ``bench/bench_sched.py`` for the measured choice).
WORKER_NICE = 10
#: Where jobs are scheduled: ``"server"`` (the server's session and scheduling group) or ``"own"``
#: (a session and autogroup per job, its weight lowered by the nice value).
WORKER_GROUP = "server"
GROUPS = ("server", "own")
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


#: Bytes of the signature in front of a job's outcome file.
_MAC_BYTES = hashlib.sha256().digest_size


@dataclass(frozen=True)
class Priority:
    """How a job's process is scheduled (see the module docstring)."""

    nice: int = WORKER_NICE
    own_group: bool = False

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Priority:
        """``$FAIRENGINE_WORKER_NICE`` (0–19) and ``$FAIRENGINE_WORKER_GROUP`` (server/own)."""
        env = os.environ if environ is None else environ
        nice = int(env.get(NICE_ENV) or WORKER_NICE)
        group = (env.get(GROUP_ENV) or WORKER_GROUP).strip().lower()
        if not 0 <= nice <= 19 or group not in GROUPS:
            raise ValueError(
                f"{NICE_ENV} must be 0 to 19 and {GROUP_ENV} one of {', '.join(GROUPS)}; got "
                f"{nice} and {group!r}."
            )
        return cls(nice=nice, own_group=group == "own")


class Cancelled(Exception):
    """The outcome of a job cancelled while it ran (or raised inside it by its progress hook)."""


class ServerBusy(RuntimeError):
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


#: A job whose calls got less than this share of one core each over the last
#: :data:`SHARE_WINDOW` seconds is "getting little CPU" (the page says the server is busy).
LOW_SHARE = 0.3
#: Seconds over which :meth:`Job.cpu_share` measures (at least :data:`MIN_WINDOW` of them).
SHARE_WINDOW = 15.0
MIN_WINDOW = 4.0


@dataclass
class Job:
    """One submitted job (what a page polls): one call, or ``parts`` calls (a sweep's points)."""

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
    parts: int = 0
    _pending: deque = field(default_factory=deque, repr=False)
    _values: list = field(default_factory=list, repr=False)
    _pids: dict[int, int] = field(default_factory=dict, repr=False)
    _finished_parts: int = field(default=0, repr=False)
    _cpu: float = field(default=0.0, repr=False)
    _samples: deque = field(default_factory=lambda: deque(maxlen=64), repr=False)
    _finished: float | None = field(default=None, repr=False)
    _started: float | None = field(default=None, repr=False)

    @property
    def done(self) -> bool:
        return self.cancelled or self.future.done()

    @property
    def running_calls(self) -> int:
        """How many of this job's calls run right now."""
        return len(self._pids)

    def progress(self) -> dict[str, Any]:
        """``{"started": epoch or None, "done": int, "total": int}``: as the job last wrote, or
        for a job of ``parts`` calls, how many of them have finished."""
        if self.parts:
            return {"started": self._started, "done": self._finished_parts, "total": self.parts}
        try:
            return json.loads(self.progress_path.read_text())
        except (OSError, ValueError):
            return {"started": self._started, "done": 0, "total": 0}

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

    def cpu_seconds(self) -> float:
        """Processor seconds this job's processes got so far (finished calls and running ones)."""
        running = (process_cpu_seconds(pid) for pid in list(self._pids.values()))
        return self._cpu + sum(value or 0.0 for value in running)

    def cpu_share(self, now: float | None = None) -> float | None:
        """Share of one core each running call got over the last :data:`SHARE_WINDOW` seconds
        (1.0: a full core each); None until :data:`MIN_WINDOW` seconds have been seen. Each call
        records a sample, so a page that polls the job measures it."""
        now = time.time() if now is None else now
        calls = self.running_calls
        if not calls:  # queued, or between two calls: nothing to measure, start afresh
            self._samples.clear()
            return None
        self._samples.append((now, self.cpu_seconds(), calls))
        with contextlib.suppress(IndexError):  # pages of several sessions may poll at once
            while len(self._samples) > 2 and now - self._samples[1][0] >= SHARE_WINDOW:
                self._samples.popleft()
        samples = [sample for sample in list(self._samples) if sample[0] <= now]
        first_time, first_cpu, _ = samples[0]
        span = now - first_time
        if span < MIN_WINDOW:
            return None
        mean_calls = max(1.0, sum(c for _, _, c in samples) / len(samples))
        return max(0.0, samples[-1][1] - first_cpu) / span / mean_calls

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


def process_cpu_seconds(pid: int) -> float | None:
    """User and system seconds of process ``pid`` and its reaped children
    (``/proc/<pid>/stat``); None where it cannot be read (gone, or no ``/proc``)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()  # the name in parentheses may hold spaces
    try:  # fields 14-17 of proc(5): utime, stime, cutime, cstime (here from the state, 3)
        ticks = sum(int(value) for value in fields[11:15])
    except (ValueError, IndexError):
        return None
    return ticks / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
    """This process's processor seconds, its waited-for children's included."""
    import resource

    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def discard(function: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Run ``function(*args, **kwargs)`` for its side effect only (a sweep filling the store):
    nothing travels back. It lives here, in a module the warm parent imports, so that a job
    calling it imports nothing more (the pages' modules would import Streamlit, seconds per
    job)."""
    function(*args, **kwargs)


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


def _lower_priority(priority: Priority, server: int | None = None) -> None:
    """Schedule this job's process as ``priority`` says (see the module docstring).

    Either way the job leads a process group of its own, so that a cancel kills it and anything
    it started at once. Out of the server's process group, a group kill of the server no longer
    reaches the job, so it watches its parent and the server and exits when either is gone.
    """
    with contextlib.suppress(OSError, AttributeError):  # not on every platform
        os.nice(priority.nice)
    if priority.own_group:
        with contextlib.suppress(OSError, AttributeError):
            os.setsid()
        _own_autogroup(priority.nice)
    else:  # same session (scheduling group) as the server
        with contextlib.suppress(OSError, AttributeError):
            os.setpgid(0, 0)
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
    """Body of a job's process: lower its priority, cap its memory, run, write the outcome
    (``(kind, value, processor seconds)``)."""
    priority, memory_mb, server, secret = settings
    _lower_priority(priority, server)
    _limit_memory(memory_mb)
    progress_path, cancel_path, result_path = (Path(p) for p in paths)
    try:
        function, args, kwargs, with_progress = cloudpickle.loads(payload)
        value = _run_job(progress_path, cancel_path, function, args, kwargs, with_progress)
        outcome: tuple[str, Any] = ("done", value)
    except Cancelled:
        outcome = ("cancelled", None)
    except BaseException as exc:
        outcome = ("memory", None) if _is_memory_error(exc) else ("error", exc)
    _write_outcome(result_path, (*outcome, _own_cpu_seconds()), secret)
    os._exit(0)  # no interpreter teardown (threads a library left behind must not hold it)


def _signature(secret: bytes, data: bytes) -> bytes:
    return hmac.new(secret, data, hashlib.sha256).digest()


def _read_outcome(path: Path, secret: bytes) -> tuple:
    """The outcome a job's process wrote, unpickled only once its signature (an HMAC with the
    pool's in-memory secret) proves that process wrote it; ``(None, None)`` otherwise."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None, None
    mac, data = blob[:_MAC_BYTES], blob[_MAC_BYTES:]
    if len(mac) != _MAC_BYTES or not hmac.compare_digest(mac, _signature(secret, data)):
        return None, None
    try:
        return cloudpickle.loads(data)
    except (EOFError, ValueError, ImportError, AttributeError):
        return None, None


def _write_outcome(path: Path, outcome: tuple, secret: bytes) -> None:
    """Pickle ``outcome`` (``(kind, value, *extra)``) behind its signature (see
    :func:`_read_outcome`)."""
    kind, value, *extra = outcome
    try:
        data = cloudpickle.dumps(outcome)
    except MemoryError:
        data = cloudpickle.dumps(("memory", None, *extra))
    except Exception as exc:
        words = value if kind == "error" else exc
        error = RuntimeError(f"{type(words).__name__}: {words}")
        data = cloudpickle.dumps(("error", error, *extra))
    tmp = path.with_suffix(".part")
    tmp.write_bytes(_signature(secret, data) + data)
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
    def _Popen(process_obj: Any) -> _NoMainPopen:
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


#: One call of a job: ``(function, args, kwargs, with_progress)``.
Call = tuple[Callable[..., Any], tuple, dict[str, Any], bool]


class JobPool:
    """One process per call, at most ``workers`` at once: per-session limits, a global queue
    limit, fair sharing of the workers between sessions, queue positions, progress and
    cancelling (see the module docstring).

    Parameters
    ----------
    workers : int, optional
        Calls running at once (default ``$FAIRENGINE_WORKERS``, else the number of cores).
    per_session : int, optional
        Unfinished jobs one session may hold (default ``$FAIRENGINE_SESSION_JOBS``, else 2).
    warm : bool
        Start the warm parent at once (so a first fit does not pay for importing the engine).
    queue_limit : int, optional
        Jobs that may wait, all sessions together (default ``$FAIRENGINE_QUEUE_LIMIT``, else
        :data:`QUEUE_LIMIT`).
    memory_mb : int, optional
        Address-space limit of one call (default :func:`job_memory_mb`; 0 = none).
    priority : Priority, optional
        How the calls are scheduled (default :meth:`Priority.from_env`).
    """

    def __init__(
        self,
        workers: int | None = None,
        per_session: int | None = None,
        *,
        warm: bool = True,
        queue_limit: int | None = None,
        memory_mb: int | None = None,
        priority: Priority | None = None,
    ) -> None:
        cpus = os.cpu_count() or 1
        self.workers = int(workers or _env_int(WORKERS_ENV, max(1, cpus)))
        self.per_session = int(per_session or _env_int(PER_SESSION_ENV, 2))
        self.queue_limit = int(queue_limit or _env_int(QUEUE_LIMIT_ENV, QUEUE_LIMIT))
        self.memory_mb = job_memory_mb(self.workers) if memory_mb is None else memory_mb or None
        self.priority = Priority.from_env() if priority is None else priority
        self._dir = Path(tempfile.mkdtemp(prefix="fairengine-jobs-"))
        # Signs each job's outcome file: only a process this pool started can write one that
        # is unpickled (the key lives in memory and reaches the job through the fork).
        self._secret = os.urandom(32)
        self._jobs: dict[int, Job] = {}
        self._queue: deque[Job] = deque()  # jobs with calls not yet started, oldest first
        self._running: dict[int, tuple[Job, int, Any]] = {}  # call id -> (job, part, process)
        self._ids = itertools.count(1)
        self._call_ids = itertools.count(1)
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
        return self._enqueue(
            session, label, key, [(function, args, kwargs, with_progress)], 0, estimate
        )

    def submit_parts(
        self,
        session: str,
        label: str,
        key: str,
        calls: list[tuple[Callable[..., Any], tuple, dict[str, Any]]],
        *,
        estimate: float | None = None,
    ) -> Job:
        """Queue one job made of several independent calls ``(function, args, kwargs)`` (a
        sweep's points), run on as many workers as are free; its value is the list of the
        calls' values, in order. It fails with its first failing call (the others are
        stopped); otherwise as :meth:`submit`."""
        units = [(function, tuple(args), dict(kwargs), False) for function, args, kwargs in calls]
        if not units:
            raise ValueError("A job needs at least one call.")
        return self._enqueue(session, label, key, units, len(units), estimate)

    def _enqueue(
        self,
        session: str,
        label: str,
        key: str,
        units: list[Call],
        parts: int,
        estimate: float | None,
    ) -> Job:
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
            waiting = sum(1 for j in self._queue if j not in dropped and j._started is None)
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
                parts=parts,
                _pending=deque(enumerate(units)),
                _values=[None] * len(units),
            )
            self._jobs[job_id] = job
            self._queue.append(job)
        self._wake()
        return job

    def get(self, job_id: int | None) -> Job | None:
        with self._lock:
            return None if job_id is None else self._jobs.get(job_id)

    def queue_position(self, job: Job) -> int:
        """0 when the job runs (or is done), else its place among the jobs not started yet
        (1 = next)."""
        with self._lock:
            waiting = (queued for queued in self._queue if queued._started is None)
            for position, queued in enumerate(waiting, start=1):
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
        """Drop a queued job; stop a running one (every process of it is killed)."""
        with self._lock:
            self._cancel(job)
        self._wake()

    def _cancel(self, job: Job) -> None:
        if job.future.done():
            return
        job.cancelled = True
        job.cancel_path.touch()
        self._stop_calls(job)
        if not job.future.running():
            job.future.cancel()

    def _stop_calls(self, job: Job) -> None:
        """Drop a job's calls not started yet and kill its running ones (lock held)."""
        job._pending.clear()
        if job in self._queue:
            self._queue.remove(job)
        for owner, _, process in self._running.values():
            if owner is job:
                _kill(process)

    def shutdown(self) -> None:
        """Kill every running job, drop the queued ones, remove the job files."""
        with self._lock:
            self._closed = True
            running = [job for job, _, _ in self._running.values()]
            for job in list(self._queue) + running:
                self._cancel(job)
        self._wake()
        self._thread.join(timeout=10)
        shutil.rmtree(self._dir, ignore_errors=True)

    # -- dispatcher's side --

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def _dispatch(self, warm: bool) -> None:
        """Start queued calls while fewer than ``workers`` run; collect the ones that end."""
        if warm:
            with contextlib.suppress(Exception):
                _start_warm_parent()
        while True:
            try:
                if self._step():
                    break
            except Exception:
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
            sentinels = {process.sentinel: call for call, (_, _, process) in self._running.items()}
        ready = connection.wait([*sentinels, self._wake_r], timeout=1.0)
        if self._wake_r in ready:
            os.read(self._wake_r, 4096)
        for sentinel in ready:
            if sentinel in sentinels:
                self._collect(sentinels[sentinel])
        return False

    def _next_call(self) -> tuple[Job, int, Call] | None:
        """The call to start next (lock held): from the session with the fewest calls running,
        its oldest job first; None when nothing waits."""
        running: dict[str, int] = {}
        for job, _, _ in self._running.values():
            running[job.session] = running.get(job.session, 0) + 1
        best = None
        for job in self._queue:
            if job._pending and (
                best is None or running.get(job.session, 0) < running.get(best.session, 0)
            ):
                best = job
        if best is None:
            return None
        part, call = best._pending.popleft()
        if not best._pending:
            self._queue.remove(best)
        return best, part, call

    def _start_queued(self) -> None:
        while True:
            with self._lock:
                if self._closed or len(self._running) >= self.workers:
                    return
                picked = self._next_call()
                if picked is None:
                    return
                job, part, call = picked
                if not job.future.running() and not job.future.set_running_or_notify_cancel():
                    continue
            try:
                process = self._start(job, part, call)
            except Exception as exc:
                self._fail(job, exc)
                continue
            with self._lock:
                self._running[next(self._call_ids)] = (job, part, process)
                job.pid = job._pids[part] = process.pid
                job._started = job._started or time.time()
                if job.cancelled or self._closed:  # cancelled while its process started
                    _kill(process)

    def _paths(self, job: Job, part: int) -> tuple[Path, Path]:
        """Progress and outcome files of one call of ``job``."""
        if not job.parts:
            return job.progress_path, self._dir / f"{job.id}.result"
        return self._dir / f"{job.id}.{part}.json", self._dir / f"{job.id}.{part}.result"

    def _start(self, job: Job, part: int, call: Call) -> Any:
        _start_warm_parent()
        payload = cloudpickle.dumps(call)
        progress, result = self._paths(job, part)
        paths = (str(progress), str(job.cancel_path), str(result))
        settings = (self.priority, self.memory_mb, os.getpid(), self._secret)
        process = _JobProcess(
            target=_child, args=(payload, paths, settings), name=f"fairengine-job-{job.id}"
        )
        process.daemon = True  # killed if the server shuts down normally
        process.start()
        return process

    def _collect(self, call: int) -> None:
        """Settle what one ended call of a job means for it."""
        with self._lock:
            job, part, process = self._running.pop(call)
        process.join(timeout=5)
        exitcode = process.exitcode
        with contextlib.suppress(ValueError):
            process.close()
        progress, path = self._paths(job, part)
        kind, value, *extra = _read_outcome(path, self._secret) + (None,)
        path.unlink(missing_ok=True)
        if job.parts:
            progress.unlink(missing_ok=True)
        with self._lock:
            job._pids.pop(part, None)
            job._cpu += float(extra[0] or 0.0)
            if job.future.done():
                return
            if kind == "done":
                job._values[part] = value
                job._finished_parts += 1
                if job._finished_parts == len(job._values):
                    job.future.set_result(job._values if job.parts else value)
                return
        self._fail(job, self._error(job, kind, value, exitcode))

    def _error(self, job: Job, kind: str | None, value: Any, exitcode: int | None) -> Exception:
        if kind == "error":
            return value
        if kind == "memory":
            return out_of_memory(self.memory_mb)
        if kind == "cancelled" or job.cancelled:
            return Cancelled()
        return _failure(exitcode, self.memory_mb)

    def _fail(self, job: Job, error: BaseException) -> None:
        """End ``job`` with ``error``; its other calls stop."""
        with self._lock:
            self._stop_calls(job)
            if not job.future.done():
                job.future.set_exception(error)

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
