"""Fits and sweeps outside the Streamlit script thread: a process per call, shared by all sessions.

The dashboard holds one :class:`JobPool` (``st.cache_resource``). A page submits a job (a
function and its arguments; closures are fine, they travel with cloudpickle) and polls it. A
dispatcher thread keeps at most ``workers`` calls running (in the order described below); each
session may have at most ``per_session`` unfinished jobs (its oldest one is dropped first when
it asks for more), each visitor's address at most ``per_client`` (all its tabs), and at most
``queue_limit`` jobs wait in all, shared out so that a visitor holding fewer jobs than the
heaviest one still gets in (:mod:`.job_scheduling`): beyond that :meth:`JobPool.submit` raises
:class:`ServerBusy`, whose message the page shows as it is.

Every call runs in a process of its own, forked from a warm parent (a multiprocessing
*forkserver* that imported the engine once, so a job starts in a few tens of milliseconds and
never re-runs the server's ``__main__``). One process per job isolates the jobs from one another:

* a job that dies (killed by the kernel's out-of-memory killer, a crash in native code, a
  ``kill`` from outside) fails alone, with a message in words that says which (:class:`JobFailed`;
  the kernel's count of out-of-memory kills tells its killer from a manual one); every other job
  is unaffected;
* each job runs under an address-space limit (``RLIMIT_AS``, :func:`job_memory_mb`), so one
  heavy fit fails with "ran out of memory" instead of taking the server down; a job whose cost
  an upload decides (reading a file, scoring an outside model) also under a limit of processor
  time (``cpu_seconds``, ``RLIMIT_CPU``);
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

The pool lives here; its rules (which call starts next, what makes room, background jobs) in
:mod:`.job_scheduling`, what it keeps about one job (progress, processor time, outcome) in
:mod:`.job_state`, the job's process (priority, memory limit, signed outcome, warm parent) in
:mod:`.job_process`. None of them imports Streamlit (the pool can be tested and benchmarked on
its own).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from multiprocessing import connection
from pathlib import Path
from typing import Any

import cloudpickle

from dashboard.components.job_process import (  # noqa: F401  (the pool's public names)
    BASELINE_MB,
    GROUP_ENV,
    GROUPS,
    MEMORY_ENV,
    NICE_ENV,
    PRELOAD,
    WORKER_GROUP,
    WORKER_NICE,
    Priority,
    _child,
    _failure,
    _JobProcess,
    _kill,
    _own_autogroup,
    _read_outcome,
    _start_warm_parent,
    _write_outcome,
    discard,
    job_memory_mb,
    machine_memory_mb,
    oom_kills,
)
from dashboard.components.job_scheduling import (
    BACKGROUND_NICE,
    next_job,
    preempted,
    queue_position,
    to_drop,
)
from dashboard.components.job_state import (  # noqa: F401  (the pool's public names)
    BUSY_MESSAGE,
    LOW_SHARE,
    MIN_WINDOW,
    SHARE_WINDOW,
    Cancelled,
    Job,
    JobFailed,
    ServerBusy,
    out_of_memory,
    process_cpu_seconds,
)

#: Environment knobs of the pool (the hosted demo sets them low).
WORKERS_ENV = "FAIRENGINE_WORKERS"
PER_SESSION_ENV = "FAIRENGINE_SESSION_JOBS"
PER_CLIENT_ENV = "FAIRENGINE_CLIENT_JOBS"
QUEUE_LIMIT_ENV = "FAIRENGINE_QUEUE_LIMIT"
#: Unfinished jobs of one visitor's address, all its tabs together (``$FAIRENGINE_CLIENT_JOBS``;
#: 0 = no limit, e.g. behind a proxy that hides the visitors' addresses).
PER_CLIENT = 4
#: Jobs that may wait for a worker, all sessions together (``$FAIRENGINE_QUEUE_LIMIT``).
QUEUE_LIMIT = 32
#: Longest the dispatcher sleeps between rounds (seconds); a submit, a take-over, a cancel or
#: a call's end wakes it at once.
IDLE_WAIT = 1.0


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


#: One call of a job: ``(function, args, kwargs, with_progress)``.
Call = tuple[Callable[..., Any], tuple, dict[str, Any], bool]


@dataclass(frozen=True)
class _Owner:
    """Who submits a job and what it may use: the session, the visitor's address (None when
    not known) and the processor seconds of each call (None: no limit)."""

    session: str
    client: str | None
    cpu_seconds: float | None


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
    per_client : int, optional
        Unfinished jobs one visitor's address may hold, all its sessions together (default
        ``$FAIRENGINE_CLIENT_JOBS``, else :data:`PER_CLIENT`; 0 = no limit).

    A job submitted by :meth:`submit_background` never delays a visitor's job: it starts only
    while no other job runs or waits, at nice 19, and is killed as soon as a visitor's job
    waits or runs (the rules: :mod:`.job_scheduling`). A visitor's job with the key of a
    background job takes that job over (it becomes the visitor's, reniced to the workers'
    priority where the system allows).
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
        cpus = os.cpu_count() or 1
        self.workers = int(workers or _env_int(WORKERS_ENV, max(1, cpus)))
        self.per_session = int(per_session or _env_int(PER_SESSION_ENV, 2))
        client_jobs = _env_int(PER_CLIENT_ENV, PER_CLIENT) if per_client is None else per_client
        self.per_client = int(client_jobs) or None
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
        client: str | None = None,
        cpu_seconds: float | None = None,
        **kwargs: Any,
    ) -> Job:
        """Queue ``function(*args, **kwargs)`` for ``session`` (of the visitor at address
        ``client``, when known); returns the job to poll. ``cpu_seconds`` caps the processor
        time of the call (for work whose cost an upload decides).

        A job with the same ``key`` that is still unfinished (from any session) is shared
        rather than run twice. If the session already holds ``per_session`` unfinished jobs,
        its oldest one is cancelled first. Raises :class:`ServerBusy` (nothing cancelled) when
        the address holds ``per_client`` jobs, or ``queue_limit`` jobs already wait and no
        visitor holds more jobs than this one (see :func:`.job_scheduling.to_drop`).
        """
        units: list[Call] = [(function, args, kwargs, with_progress)]
        owner = _Owner(session, client, cpu_seconds)
        return self._enqueue(owner, label, key, units, 0, estimate)

    def submit_background(
        self, session: str, key: str, function: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> Job:
        """Queue ``function(*args, **kwargs)`` as a background job of ``session`` (a result a
        page may want next; see the class notes): it never holds up a visitor's job and
        counts against no limit of theirs."""
        units: list[Call] = [(function, args, kwargs, False)]
        owner = _Owner(session, None, None)
        return self._enqueue(owner, "Computing ahead", key, units, 0, None, background=True)

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
        """Queue one job made of several independent calls ``(function, args, kwargs)`` (a
        sweep's points), run on as many workers as are free; its value is the list of the
        calls' values, in order. It fails with its first failing call (the others are
        stopped); otherwise as :meth:`submit`."""
        units = [(function, tuple(args), dict(kwargs), False) for function, args, kwargs in calls]
        if not units:
            raise ValueError("A job needs at least one call.")
        return self._enqueue(_Owner(session, client, None), label, key, units, len(units), estimate)

    def _enqueue(
        self,
        owner: _Owner,
        label: str,
        key: str,
        units: list[Call],
        parts: int,
        estimate: float | None,
        background: bool = False,
    ) -> Job:
        with self._lock:
            self._forget_finished()
            for job in self._jobs.values():
                if job.key == key and not job.done:
                    if job.background and not background:
                        self._promote(job, owner, label, estimate)
                        self._wake()  # a queued one now starts ahead of the background jobs
                    return job
            job_id = next(self._ids)
            job = Job(
                id=job_id,
                session=owner.session,
                client=owner.client,
                cpu_limit=owner.cpu_seconds,
                label=label,
                key=key,
                future=Future(),
                submitted=time.time(),
                estimate=estimate,
                progress_path=self._dir / f"{job_id}.json",
                cancel_path=self._dir / f"{job_id}.cancel",
                parts=parts,
                background=background,
                _pending=deque(enumerate(units)),
                _values=[None] * len(units),
            )
            self._make_room(job)
            self._jobs[job_id] = job
            self._queue.append(job)
        self._wake()
        return job

    def _make_room(self, job: Job) -> None:
        """Cancel, or end as busy, what :func:`.job_scheduling.to_drop` says before queueing
        ``job`` (lock held)."""
        jobs = [other for other in self._jobs.values() if not other.done]
        limits = (self.per_session, self.queue_limit, self.per_client)
        dropped, bumped = to_drop(jobs, self._queue, job, *limits)
        for old in dropped:
            self._cancel(old)
        for old in bumped:  # waiting, so nothing to kill: its page says the server is busy
            old._pending.clear()
            self._queue.remove(old)
            old.future.set_exception(ServerBusy())

    def _promote(self, job: Job, owner: _Owner, label: str, estimate: float | None) -> None:
        """A visitor asked for a background job's result (lock held): it becomes theirs, and
        its running processes get the workers' priority back (where the system allows)."""
        job.background = False
        job.session, job.client, job.label, job.estimate = (
            owner.session,
            owner.client,
            label,
            estimate,
        )
        job.cpu_limit = owner.cpu_seconds
        for pid in list(job._pids.values()):
            with contextlib.suppress(OSError, AttributeError):
                os.setpriority(os.PRIO_PGRP, pid, self.priority.nice)

    def get(self, job_id: int | None) -> Job | None:
        with self._lock:
            return None if job_id is None else self._jobs.get(job_id)

    def queue_position(self, job: Job) -> int:
        """0 when the job runs (or is done), else its place among the jobs not started yet
        (1 = next; background jobs come after every visitor's job)."""
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
        ready = connection.wait([*sentinels, self._wake_r], timeout=IDLE_WAIT)
        if self._wake_r in ready:
            os.read(self._wake_r, 4096)
        for sentinel in ready:
            if sentinel in sentinels:
                self._collect(sentinels[sentinel])
        return False

    def _next_call(self) -> tuple[Job, int, Call] | None:
        """The call to start next (lock held; see :func:`.job_scheduling.next_job`)."""
        best = next_job(self._queue, [job for job, _, _ in self._running.values()])
        if best is None:
            return None
        part, call = best._pending.popleft()
        if not best._pending:
            self._queue.remove(best)
        return best, part, call

    def _start_queued(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                for victim in preempted(self._queue, [job for job, _, _ in self._running.values()]):
                    self._cancel(victim)  # killed: its worker and core go to the visitor's call
                if len(self._running) >= self.workers:
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
        priority = self.priority
        if job.background:
            priority = replace(priority, nice=max(priority.nice, BACKGROUND_NICE))
        settings = (priority, self.memory_mb, os.getpid(), self._secret, job.cpu_limit)
        process = _JobProcess(
            target=_child, args=(payload, paths, settings), name=f"fairengine-job-{job.id}"
        )
        process.daemon = True  # killed if the server shuts down normally
        process.oom_kills = oom_kills()  # to tell the out-of-memory killer from a manual kill
        process.start()
        return process

    def _collect(self, call: int) -> None:
        """Settle what one ended call of a job means for it."""
        with self._lock:
            job, part, process = self._running.pop(call)
        process.join(timeout=5)
        exitcode = process.exitcode
        oom_killed = oom_kills() > process.oom_kills
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
        self._fail(job, self._error(job, kind, value, exitcode, oom_killed))

    def _error(
        self, job: Job, kind: str | None, value: Any, exitcode: int | None, oom_killed: bool
    ) -> Exception:
        if kind == "error":
            return value
        if kind == "memory":
            return out_of_memory(self.memory_mb)
        if kind == "cancelled" or job.cancelled:
            return Cancelled()
        return _failure(exitcode, self.memory_mb, oom_killed=oom_killed, cpu_seconds=job.cpu_limit)

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
