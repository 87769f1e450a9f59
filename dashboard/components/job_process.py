"""The process side of the dashboard's job pool (:mod:`.jobs`): one process per call, forked from
a warm parent, at a lowered CPU priority, under a memory limit, writing a signed outcome file.

See :mod:`.jobs` for why each call runs in a process of its own and how it is scheduled. This
module does not import Streamlit.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import io
import json
import multiprocessing
import os
import pkgutil
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import context, popen_forkserver, reduction, spawn, util
from pathlib import Path
from typing import Any

import cloudpickle

from dashboard.components.job_state import (
    Cancelled,
    JobFailed,
    out_of_memory,
    out_of_time,
    stopped,
)
from fairengine.methods.registry import BUILTIN

NICE_ENV = "FAIRENGINE_WORKER_NICE"
GROUP_ENV = "FAIRENGINE_WORKER_GROUP"
MEMORY_ENV = "FAIRENGINE_JOB_MEMORY_MB"
#: Workers run at this much lower CPU priority than the server, inside the server's scheduling
#: group (see the module docstring and ``bench/bench_sched.py`` for the measured choice).
WORKER_NICE = 10
#: Where jobs are scheduled: ``"server"`` (the server's session and scheduling group) or ``"own"``
#: (a session and autogroup per job, its weight lowered by the nice value).
WORKER_GROUP = "server"
GROUPS = ("server", "own")
#: Address space a job's interpreter and libraries reserve without using it (a job process with
#: the engine, NumPy, pandas and scikit-learn imported maps several times what it keeps
#: resident; numbers in bench/RESULTS.md); added to the job's share of the memory.
BASELINE_MB = 768
#: Modules the warm parent imports once, so that no job pays for them: the engine and what the
#: methods' fits import (a missing one is skipped).
PRELOAD = (
    "dashboard.components.jobs",
    "dashboard.components.upload_jobs",  # a visitor's files, read in jobs
    "fairengine.audit.sources",
    "fairengine.audit.comparison",
    "fairengine.methods",
    "fairengine.frontier",
    "fairengine.frontier.runs",
    "fairengine.data.encoding",
    "fairengine.methods.evaluation",
    "fairengine.models.linear",
    "fairengine.solvers",
    *BUILTIN,  # each built-in method's module (it imports its own)
    "fairlearn.reductions",
    "pandas",
    "sklearn.linear_model",
    "sklearn.naive_bayes",
    "sklearn.tree",
)

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


def _limit_cpu(cpu_seconds: float | None) -> None:
    """Cap this process's processor time: the kernel ends it with ``SIGXCPU`` at the limit
    (``SIGKILL`` a little later should anything catch that), even in the middle of native code
    that holds the interpreter; no core file is written."""
    if not cpu_seconds:
        return
    import resource

    soft = max(1, int(cpu_seconds))
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))
    signal.signal(signal.SIGXCPU, signal.SIG_DFL)


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
    priority, memory_mb, server, secret, cpu_seconds = settings
    _lower_priority(priority, server)
    _limit_memory(memory_mb)
    _limit_cpu(cpu_seconds)
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


def preload_modules() -> list[str]:
    """What the warm parent imports: :data:`PRELOAD`, then every module of the engine's methods
    (the algorithm a method imports on its first fit, and what that imports, e.g. scikit-learn's
    ensembles), so that a job imports nothing of its own: without it every job imported, and
    where no bytecode cache is written compiled, its algorithm's modules (a sizeable share of a
    short job's CPU time; numbers in bench/RESULTS.md)."""
    from fairengine import methods

    found = pkgutil.walk_packages(methods.__path__, f"{methods.__name__}.")
    return [*PRELOAD, *(info.name for info in found)]


def _start_warm_parent() -> None:
    """Start the forkserver (it imports :func:`preload_modules` once); later calls return at
    once."""
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver").set_forkserver_preload(preload_modules())
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
            return out_of_time(cpu_seconds or 0.0)
        if number == signal.SIGKILL and oom_killed:  # what the out-of-memory killer sends
            return out_of_memory(memory_mb, killed=True)
        name = signal.Signals(number).name if number in signal.valid_signals() else ""
        return stopped(name or f"signal {number}")
    return JobFailed(
        f"the worker stopped unexpectedly (exit code {exitcode}). Try again, or with fewer rows "
        "or a smaller setting."
    )


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
