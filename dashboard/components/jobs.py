"""Fits and sweeps outside the Streamlit script thread: one process per call, for all sessions.

A page submits a job (a function and its arguments; closures travel with cloudpickle) to the one
:class:`JobPool` and polls it. Each call runs in a process forked from a warm parent
(:func:`serve`) under its limits, talks to the pool over one :func:`multiprocessing.Pipe`, and
fails alone with a message in words. Who runs next: :mod:`.job_scheduling`; see "The dashboard's
run model" in ``docs/architecture.md``. This module does not import Streamlit.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import itertools
import multiprocessing
import os
import pickle
import pkgutil
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from multiprocessing import connection
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import cloudpickle

from dashboard.components.job_scheduling import (
    BACKGROUND_NICE,
    next_job,
    preempted,
    queue_position,
    to_drop,
)
from dashboard.components.job_state import (
    Cancelled,
    Job,
    JobFailed,
    ServerBusy,
    out_of_memory,
    process_cpu_seconds,
)
from fairengine import settings

#: Jobs that may wait for a worker, all sessions together, unless set (demo: lower).
QUEUE_LIMIT = 32
#: Longest the dispatcher sleeps between rounds (seconds); a submit, a cancel or a message
#: from a call wakes it at once.
IDLE_WAIT = 1.0
#: Address space a job's interpreter and libraries reserve without using it (several times
#: what they keep resident), added to the job's share of memory.
BASELINE_MB = 768
#: Modules the warm parent imports once, so that no job pays for them (a missing one is
#: skipped); :func:`preload_modules` adds every module of the engine's methods.
PRELOAD = (
    "dashboard.components.jobs",
    "dashboard.components.upload_jobs",  # a visitor's files, read in jobs
    "fairengine.audit.sources",
    "fairengine.audit.comparison",
    "fairengine.frontier",
    "fairengine.frontier.runs",
    "fairengine.data.encoding",
    "fairengine.models.linear",
    "fairengine.solvers",
    "fairlearn.reductions",
    "pandas",
    "sklearn.linear_model",
    "sklearn.naive_bayes",
    "sklearn.tree",
)
#: The default nice value of a job.
WORKER_NICE = settings.Settings.worker_nice

#: One call of a job: ``(function, args, kwargs, with_progress)``.
Call = tuple[Callable[..., Any], tuple, dict[str, Any], bool]


@dataclass(frozen=True)
class Priority:
    """How a job's process is scheduled: its nice value, and whether it runs in a scheduling
    group of its own (see :func:`_confine`)."""

    nice: int = WORKER_NICE
    own_group: bool = False

    @classmethod
    def from_settings(cls, found: settings.Settings) -> Priority:
        """``$FAIRENGINE_WORKER_NICE`` and ``$FAIRENGINE_WORKER_GROUP`` (see :mod:`.settings`)."""
        return cls(nice=found.worker_nice, own_group=found.worker_group == "own")


@dataclass
class _Running:
    """One running call: its job, its place in the job, its pipe, what it has said."""

    job: Job
    part: int
    pipe: Connection
    oom_kills: int
    outcome: tuple = (None, None, 0.0)


class JobPool:
    """One process per call, at most ``workers`` at once (see the module docstring).

    Parameters
    ----------
    workers : int, optional
        Calls running at once (default ``$FAIRENGINE_WORKERS``, else the number of cores).
    per_session : int, optional
        Unfinished jobs one session may hold (default ``$FAIRENGINE_SESSION_JOBS``).
    warm : bool
        Start the warm parent at once (so a first fit does not pay for importing the engine).
    queue_limit : int, optional
        Jobs that may wait, all sessions together (default ``$FAIRENGINE_QUEUE_LIMIT``, else
        :data:`QUEUE_LIMIT`).
    memory_mb : int, optional
        Address-space limit of one call (default :func:`job_memory_mb`; 0 = none).
    priority : Priority, optional
        How the calls are scheduled (default :meth:`Priority.from_settings`).
    per_client : int, optional
        Unfinished jobs one visitor's address may hold, all its sessions together (default
        ``$FAIRENGINE_CLIENT_JOBS``; 0 = no limit, e.g. behind a proxy that hides addresses).
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
        per_client: int | None = None,
    ) -> None:
        found = settings.current()
        self.workers = int(workers or found.workers or max(1, os.cpu_count() or 1))
        self.per_session = int(per_session or found.session_jobs)
        self.per_client = int(found.client_jobs if per_client is None else per_client) or None
        self.queue_limit = int(queue_limit or found.queue_limit or QUEUE_LIMIT)
        self.memory_mb = job_memory_mb(self.workers) if memory_mb is None else memory_mb or None
        self.priority = Priority.from_settings(found) if priority is None else priority
        self._jobs: dict[int, Job] = {}
        self._queue: deque[Job] = deque()  # jobs with calls not yet started, oldest first
        self._running: dict[int, _Running] = {}  # by call id
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
        client: str | None = None,
        cpu_seconds: float | None = None,
        **kwargs: Any,
    ) -> Job:
        """Queue ``function(*args, **kwargs)`` for ``session`` (of the visitor at address
        ``client``, when known); returns the job to poll. ``cpu_seconds`` caps the call's
        processor time. An unfinished job with the same ``key`` (from any session) is shared
        instead; the limits apply as :func:`.job_scheduling.to_drop` says (raises
        :class:`ServerBusy`, nothing cancelled, when there is no room)."""
        job = _job(session, label, key, estimate, client=client, cpu_limit=cpu_seconds)
        return self._enqueue(job, [(function, args, kwargs, with_progress)])

    def submit_background(
        self, session: str, key: str, function: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> Job:
        """Queue ``function(*args, **kwargs)`` as a background job of ``session`` (a result a
        page may want next): it never holds up a visitor's job nor counts against their limits."""
        job = _job(session, "Computing ahead", key, None, background=True)
        return self._enqueue(job, [(function, args, kwargs, False)])

    def submit_parts(
        self,
        session: str,
        label: str,
        key: str,
        calls: list[tuple[Callable[..., Any], tuple, dict[str, Any]]],
        *,
        estimate: float | None = None,
        client: str | None = None,
    ) -> Job:
        """Queue one job of several independent calls ``(function, args, kwargs)`` (a sweep's
        points) on as many workers as are free; its value is the list of the calls' values. It
        fails with its first failing call (the others are stopped); otherwise as :meth:`submit`."""
        units = [(function, tuple(args), dict(kwargs), False) for function, args, kwargs in calls]
        if not units:
            raise ValueError("A job needs at least one call.")
        job = _job(session, label, key, estimate, client=client, parts=len(units))
        return self._enqueue(job, units)

    def _enqueue(self, job: Job, units: list[Call]) -> Job:
        """Queue ``job`` after making room as :func:`.job_scheduling.to_drop` says, or return
        the unfinished job of its key (a background one becomes this visitor's, and its
        processes get the workers' priority back where the system allows). Jobs finished over
        ten minutes ago are forgotten."""
        with self._lock:
            now = time.time()
            for job_id, old in list(self._jobs.items()):
                if old.done:
                    old._finished = old._finished or now
                    if now - old._finished > 600:
                        del self._jobs[job_id]
            for old in self._jobs.values():
                if old.key == job.key and not old.done:
                    if old.background and not job.background:
                        old.background = False
                        old.session, old.client, old.label = job.session, job.client, job.label
                        old.estimate, old.cpu_limit = job.estimate, job.cpu_limit
                        for pid in list(old._pids.values()):
                            with contextlib.suppress(OSError, AttributeError):
                                os.setpriority(os.PRIO_PGRP, pid, self.priority.nice)
                        self._wake()  # a queued one now starts ahead of the background jobs
                    return old
            job.id = next(self._ids)
            job._pending, job._values = deque(enumerate(units)), [None] * len(units)
            unfinished = [other for other in self._jobs.values() if not other.done]
            limits = (self.per_session, self.queue_limit, self.per_client)
            dropped, bumped = to_drop(unfinished, self._queue, job, *limits)
            for old in dropped:
                self._cancel(old)
            for old in bumped:  # waiting, so nothing to kill: its page says the server is busy
                old._pending.clear()
                self._queue.remove(old)
                old.future.set_exception(ServerBusy())
            self._jobs[job.id] = job
            self._queue.append(job)
        self._wake()
        return job

    def get(self, job_id: int | None) -> Job | None:
        with self._lock:
            return None if job_id is None else self._jobs.get(job_id)

    def queue_position(self, job: Job) -> int:
        """See :func:`.job_scheduling.queue_position`."""
        with self._lock:
            return queue_position(self._queue, job)

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
        self._stop_calls(job)
        if not job.future.running():
            job.future.cancel()

    def _stop_calls(self, job: Job) -> None:
        """Drop a job's calls not started yet and kill its running ones (lock held; a process
        that has not said its pid yet is killed when it does)."""
        job._pending.clear()
        if job in self._queue:
            self._queue.remove(job)
        for run in self._running.values():
            if run.job is job and run.part in job._pids:
                _kill(job._pids[run.part])

    def shutdown(self) -> None:
        """Kill every running job and drop the queued ones."""
        with self._lock:
            self._closed = True
            for job in list(self._queue) + [run.job for run in self._running.values()]:
                self._cancel(job)
        self._wake()
        self._thread.join(timeout=10)

    # -- dispatcher's side --

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def _dispatch(self, warm: bool) -> None:
        """Start queued calls while fewer than ``workers`` run; read what the running ones say."""
        if warm:
            with contextlib.suppress(Exception):
                _launcher()
        while True:
            try:
                self._start_queued()
                with self._lock:
                    if self._closed and not self._running:
                        break
                    pipes = {run.pipe: call for call, run in self._running.items()}
                ready = connection.wait([*pipes, self._wake_r], timeout=IDLE_WAIT)
                if self._wake_r in ready:
                    os.read(self._wake_r, 4096)
                for pipe in ready:
                    if pipe in pipes:
                        self._receive(pipes[pipe])
            except Exception:
                time.sleep(0.5)
        with contextlib.suppress(OSError):
            os.close(self._wake_r)
            os.close(self._wake_w)

    def _start_queued(self) -> None:
        """Start calls while fewer than ``workers`` run (see :mod:`.job_scheduling`)."""
        while True:
            with self._lock:
                if self._closed:
                    return
                for victim in preempted(self._queue, [run.job for run in self._running.values()]):
                    self._cancel(victim)  # killed: its worker and core go to the visitor's call
                if len(self._running) >= self.workers:
                    return
                job = next_job(self._queue, [run.job for run in self._running.values()])
                if job is None:
                    return
                part, call = job._pending.popleft()
                if not job._pending:
                    self._queue.remove(job)
                if not job.future.running() and not job.future.set_running_or_notify_cancel():
                    continue
                priority = self.priority
                if job.background:
                    priority = replace(priority, nice=max(priority.nice, BACKGROUND_NICE))
                limits = (priority, self.memory_mb, job.cpu_limit)
            try:
                pipe = _launcher().start(limits, cloudpickle.dumps(call))
            except Exception as exc:
                self._fail(job, exc)
                continue
            with self._lock:
                self._running[next(self._call_ids)] = _Running(job, part, pipe, oom_kills())

    def _receive(self, call: int) -> None:
        """Read what one call has said; settle the call once its process has ended."""
        run = self._running[call]
        job, exitcode = run.job, None
        try:
            while True:
                message = pickle.loads(run.pipe.recv_bytes())
                if message[0] == "exit":
                    exitcode = message[1]
                    break
                if message[0] == "started":
                    with self._lock:
                        job.pid = job._pids[run.part] = message[1]
                        job.started = job.started or time.time()
                        if job.cancelled or self._closed:  # cancelled while it started
                            _kill(message[1])
                elif message[0] == "progress":
                    job._progress = message[1:]
                else:
                    run.outcome = message
                if not run.pipe.poll():
                    return
        except (EOFError, OSError):  # the warm parent is gone: no exit code to read
            pass
        self._collect(call, exitcode)

    def _collect(self, call: int, exitcode: int | None) -> None:
        """Settle what one ended call of a job means for it."""
        with self._lock:
            run = self._running.pop(call)
        run.pipe.close()
        kind, value, cpu = run.outcome
        job = run.job
        with self._lock:
            job._pids.pop(run.part, None)
            job._cpu += float(cpu or 0.0)
            if job.future.done():
                return
            if kind == "done":
                job._values[run.part] = value
                job._finished_parts += 1
                if job._finished_parts == len(job._values):
                    job.future.set_result(job._values if job.parts else value)
                return
        if kind == "error":
            error = value
        elif kind == "memory":
            error = out_of_memory(self.memory_mb)
        elif kind == "cancelled" or job.cancelled:
            error = Cancelled()
        else:
            oom_killed = oom_kills() > run.oom_kills
            error = _failure(
                exitcode, self.memory_mb, oom_killed=oom_killed, cpu_seconds=job.cpu_limit
            )
        self._fail(job, error)

    def _fail(self, job: Job, error: BaseException) -> None:
        with self._lock:
            self._stop_calls(job)
            if not job.future.done():
                job.future.set_exception(error)


def _job(session: str, label: str, key: str, estimate: float | None, **more: Any) -> Job:
    return Job(0, session, label, key, Future(), time.time(), estimate, **more)


# --- the warm parent and a job's process ----------------------------------------------------


def _send(pipe: Connection, message: tuple) -> None:
    pipe.send_bytes(cloudpickle.dumps(message))


class _Launcher:
    """The server's end of the warm parent (:func:`serve`): a socket over which each call's
    pipe end travels to it (``SCM_RIGHTS``). Started on first use, again if it died."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        code = f"from dashboard.components.jobs import serve; serve({theirs.fileno()})"
        prefixes = (sys.prefix, sys.base_prefix)  # a new interpreter finds those on its own
        path = os.pathsep.join(p for p in sys.path if p and not p.startswith(prefixes))
        self.process = subprocess.Popen(
            [sys.executable, "-c", code],
            pass_fds=[theirs.fileno()],
            env={**os.environ, "PYTHONPATH": path},
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        self.socket = ours
        self.lock = threading.Lock()

    def start(self, limits: tuple, payload: bytes) -> Connection:
        """Start one call (``payload``: its pickled :data:`Call`) under ``limits``; returns the
        pool's end of its pipe."""
        ours, theirs = multiprocessing.Pipe()
        with self.lock:
            socket.send_fds(self.socket, [b"j"], [theirs.fileno()])
        theirs.close()
        with contextlib.suppress(OSError):  # died before reading it: its exit code says why
            _send(ours, limits)
            ours.send_bytes(payload)
        return ours


_LAUNCHER: list[_Launcher] = []
_LAUNCHER_LOCK = threading.Lock()


def _launcher() -> _Launcher:
    with _LAUNCHER_LOCK:
        if not _LAUNCHER or _LAUNCHER[0].process.poll() is not None:
            _LAUNCHER[:] = [_Launcher()]
        return _LAUNCHER[0]


def serve(fd: int) -> None:
    """Body of the warm parent: import :func:`preload_modules` once, then fork a job's process
    for each pipe end that arrives on socket ``fd``; when one ends, send its exit code down its
    pipe. Ends when the server closes the socket (the jobs then end too)."""
    for name in preload_modules():
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    server = socket.socket(fileno=fd)
    fork = multiprocessing.get_context("fork")
    running: dict[int, tuple[Any, Connection]] = {}
    while True:
        for ready in connection.wait([server, *running]):
            if ready is not server:
                process, pipe = running.pop(ready)
                process.join()
                with contextlib.suppress(OSError):
                    _send(pipe, ("exit", process.exitcode))
                pipe.close()
                continue
            try:
                message, fds, _, _ = socket.recv_fds(server, 16, 4)
            except OSError:
                message, fds = b"", []
            if not message:
                os._exit(0)
            for end in fds:
                pipe = Connection(end)
                others = [server.fileno(), *(other.fileno() for _, other in running.values())]
                process = fork.Process(target=_child, args=(pipe, others), daemon=False)
                process.start()
                running[process.sentinel] = (process, pipe)


def _child(pipe: Connection, others: list[int]) -> None:
    """Body of a job's process: lower its priority, cap its memory and processor time, say
    its pid, run the call, send the outcome (``(kind, value, processor seconds)``)."""
    for fd in others:  # the other jobs' pipes: not this job's to read or write
        with contextlib.suppress(OSError):
            os.close(fd)
    priority, memory_mb, cpu_seconds = pickle.loads(pipe.recv_bytes())
    _confine(priority, memory_mb, cpu_seconds)
    _send(pipe, ("started", os.getpid()))
    try:
        function, args, kwargs, with_progress = cloudpickle.loads(pipe.recv_bytes())
        if with_progress:

            def progress(done: int, total: int, point: Any = None) -> None:
                _send(pipe, ("progress", done, total))

            kwargs = {**kwargs, "progress": progress}
        outcome: tuple[str, Any] = ("done", function(*args, **kwargs))
    except Cancelled:
        outcome = ("cancelled", None)
    except BaseException as exc:
        outcome = ("memory", None) if _is_memory_error(exc) else ("error", exc)
    cpu = process_cpu_seconds(os.getpid()) or 0.0
    try:
        data = cloudpickle.dumps((*outcome, cpu))
    except MemoryError:
        data = cloudpickle.dumps(("memory", None, cpu))
    except Exception as exc:  # a value or error that does not pickle: its words
        words = outcome[1] if outcome[0] == "error" else exc
        data = cloudpickle.dumps(("error", RuntimeError(f"{type(words).__name__}: {words}"), cpu))
    pipe.send_bytes(data)
    os._exit(0)  # no interpreter teardown (threads a library left behind must not hold it)


def discard(function: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Run ``function(*args, **kwargs)`` for its side effect only (a sweep filling the store):
    nothing travels back. Here, in a module the warm parent imports, so that a job calling it
    imports nothing more (the pages' modules import Streamlit)."""
    function(*args, **kwargs)


def _confine(priority: Priority, memory_mb: int | None, cpu: float | None) -> None:
    """Schedule this job's process as ``priority`` says, in a process group of its own (a
    cancel kills it and anything it started); cap its address space at ``memory_mb`` (an
    allocation beyond raises ``MemoryError``) and its processor time at ``cpu`` seconds (the
    kernel ends it with ``SIGXCPU``, even inside native code; no core file); end it with its
    parent (out of the server's process group, a group kill of the server does not reach it)."""
    with contextlib.suppress(OSError, AttributeError):  # not on every platform
        os.nice(priority.nice)
        if priority.own_group:
            os.setsid()
        else:  # same session (scheduling group) as the server
            os.setpgid(0, 0)
    if priority.own_group:
        _own_autogroup(priority.nice)
    # the kernel kills this process as soon as its parent ends (``PR_SET_PDEATHSIG``), even in
    # a fit: the warm parent ends with the server's end of its socket
    with contextlib.suppress(OSError, AttributeError):  # Linux only
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:  # it ended before the line above
        os._exit(0)
    with contextlib.suppress(ValueError, OSError):
        if memory_mb:
            limit = int(memory_mb) * 1024 * 1024
            hard = resource.getrlimit(resource.RLIMIT_AS)[1]
            limit = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        if cpu:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_CPU, (max(1, int(cpu)), max(1, int(cpu)) + 5))
            signal.signal(signal.SIGXCPU, signal.SIG_DFL)


def _own_autogroup(increment: int) -> None:
    """Give this process's session (its scheduling autogroup) ``nice`` ``increment``, where
    autogroups are on."""
    with contextlib.suppress(OSError):
        if Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1":
            Path("/proc/self/autogroup").write_text(str(min(19, max(0, increment))))


def _is_memory_error(exc: BaseException | None) -> bool:
    """True for a MemoryError, or an error raised while handling one (libraries wrap it)."""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, MemoryError):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def preload_modules() -> list[str]:
    """What the warm parent imports: :data:`PRELOAD`, then every module of the engine's methods
    (and what they import on a first fit), so that a job imports nothing of its own."""
    from fairengine import methods

    found = pkgutil.walk_packages(methods.__path__, f"{methods.__name__}.")
    return [*PRELOAD, *(info.name for info in found)]


def job_memory_mb(workers: int) -> int | None:
    """Address-space limit of one job in MB: ``$FAIRENGINE_JOB_MEMORY_MB`` (0 = none), else
    each of ``workers`` running jobs gets an equal share of 80% of the machine's memory (the
    host's, or its container's limit if lower; the rest is the server's) plus
    :data:`BASELINE_MB` the libraries reserve without using."""
    value = settings.current().job_memory_mb
    if value is not None:
        return value or None
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        with contextlib.suppress(OSError, ValueError):
            total = min(total, int(Path(path).read_text().strip()))
    return max(1024, int(0.8 * (total // 2**20) / max(1, workers)) + BASELINE_MB)


def oom_kills() -> int:
    """How many processes the kernel's out-of-memory killer has ended since boot (0 where it
    does not say): a job killed while this number grew was most likely one of them."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/vmstat").read_text().splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
    return 0


def _failure(
    exitcode: int | None,
    memory_mb: int | None,
    *,
    oom_killed: bool = False,
    cpu_seconds: float | None = None,
) -> JobFailed:
    """The error of a job whose process ended without an outcome (and that the pool did not
    cancel): ``oom_killed`` when the out-of-memory killer ended a process meanwhile,
    ``cpu_seconds`` the job's limit of processor time."""
    if exitcode is not None and exitcode < 0:
        number = -exitcode
        if number == signal.SIGXCPU:  # what the kernel sends at the limit of processor time
            return JobFailed(
                f"this job was stopped after {cpu_seconds or 0:,.0f} seconds of processor time, "
                "its limit. Try a smaller file or model."
            )
        if number == signal.SIGKILL and oom_killed:  # what the out-of-memory killer sends
            return out_of_memory(memory_mb, killed=True)
        name = signal.Signals(number).name if number in signal.valid_signals() else ""
        return JobFailed(  # ``kill``, an administrator, the host shutting down
            f"the worker was stopped from outside the dashboard ({name or f'signal {number}'}) "
            "before it finished. Try again."
        )
    return JobFailed(
        f"the worker stopped unexpectedly (exit code {exitcode}). Try again, or with fewer rows "
        "or a smaller setting."
    )


def _kill(pid: int) -> None:
    """Kill a job's process and everything it started (its process group, once it has one)."""
    with contextlib.suppress(OSError):
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
            return
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
