"""The shared job pool of the dashboard: per-session limit, queue positions, progress, cancel."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time

import pytest

from dashboard.components.job_state import Cancelled
from dashboard.components.jobs import JobPool


def counting(n: int, pause: float, progress=None) -> int:
    """A sweep stand-in: ``n`` steps of ``pause`` seconds, reporting progress after each."""
    for i in range(n):
        time.sleep(pause)
        if progress is not None:
            progress(i + 1, n)
    return n


@pytest.fixture(scope="module")
def pool():
    pool = JobPool(workers=1, per_session=2, warm=False)
    yield pool
    pool.shutdown()


def wait_started(job, timeout: float = 60.0) -> None:
    end = time.time() + timeout
    while job.started is None and time.time() < end:
        time.sleep(0.05)
    assert job.started is not None


def test_queue_position_progress_and_result(pool: JobPool) -> None:
    first = pool.submit("a", "first", "k1", counting, 6, 0.1, with_progress=True)
    second = pool.submit("b", "second", "k2", counting, 1, 0.0)
    wait_started(first)
    assert pool.queue_position(first) == 0
    assert pool.queue_position(second) == 1  # one worker: behind the first
    assert first.future.result(timeout=60) == 6
    assert first.progress() == (6, 6)
    assert second.future.result(timeout=60) == 1
    assert first.outcome() == ("done", 6) and pool.queue_position(second) == 0


def test_same_key_is_shared_and_session_limit_drops_the_oldest(pool: JobPool) -> None:
    blocker = pool.submit("other", "blocker", "block", counting, 10, 0.1, with_progress=True)
    wait_started(blocker)
    a = pool.submit("s", "a", "ka", counting, 1, 0.0)
    assert pool.submit("t", "a again", "ka", counting, 1, 0.0) is a  # never run twice
    b = pool.submit("s", "b", "kb", counting, 1, 0.0)
    c = pool.submit("s", "c", "kc", counting, 1, 0.0)  # limit 2: the oldest (a) is dropped
    assert a.outcome()[0] == "cancelled"
    assert [j.key for j in pool.active("s")] == ["kb", "kc"]
    assert pool.queue_position(c) == 2
    pool.cancel(blocker)  # a running sweep stops at its next point
    with pytest.raises(Cancelled):
        blocker.future.result(timeout=60)
    assert blocker.outcome()[0] == "cancelled" and blocker.progress()[0] < 10
    assert c.future.result(timeout=60) == 1 and b.outcome() == ("done", 1)


def scheduling() -> tuple[int, int, str]:
    """The worker's nice value, session id and autogroup line ("" where there is none)."""
    import os
    from pathlib import Path

    group = Path("/proc/self/autogroup")
    return (
        os.getpriority(os.PRIO_PROCESS, 0),
        os.getsid(0),
        group.read_text().strip() if group.exists() else "",
    )


def test_workers_run_niced_in_the_servers_scheduling_group(pool: JobPool) -> None:
    """By default a job runs 10 nice levels below the server (nice 10 under a server at nice 0)
    in the server's session (so in its autogroup: the group keeps its fair share against other
    work on the host, pages win inside it), leading a process group of its own (a cancel kills
    it whole)."""
    import os

    from dashboard.components.jobs import WORKER_NICE

    job = pool.submit("prio", "scheduling", "k-prio", scheduling)
    nice, session, _ = job.future.result(timeout=60)
    assert WORKER_NICE == 10
    assert nice == min(19, os.nice(0) + WORKER_NICE)  # os.nice adds to the server's own level
    assert session == os.getsid(0)
    assert job.pid is not None  # its own process group: the pool's cancel kills the group
    gid = pool.submit("prio", "group", "k-pgid", own_group_leader).future.result(timeout=60)
    assert gid is True


def own_group_leader() -> bool:
    import os

    return os.getpgid(0) == os.getpid()


def test_the_own_group_setting_lowers_a_session_of_its_own() -> None:
    """``FAIRENGINE_WORKER_GROUP=own``: a session and autogroup per job, its weight lowered by
    the nice value. (At nice 19, the former default, such a job gets almost no CPU while the
    host is busy: bench/bench_sched.py; nice 5 here, so that this test runs on a busy host.)"""
    import os
    from pathlib import Path

    from dashboard.components.jobs import Priority
    from fairengine.settings import load

    found = load({"FAIRENGINE_WORKER_NICE": "5", "FAIRENGINE_WORKER_GROUP": "own"})
    priority = Priority.from_settings(found)
    assert priority == Priority(nice=5, own_group=True)
    own = JobPool(workers=1, warm=False, priority=priority)
    try:
        nice, session, group = own.submit("p", "s", "k", scheduling).future.result(timeout=60)
    finally:
        own.shutdown()
    assert nice == 5 and session != os.getsid(0)
    switch = Path("/proc/sys/kernel/sched_autogroup_enabled")
    if not (switch.exists() and switch.read_text().strip() == "1"):
        pytest.skip("no autogroup scheduling on this kernel: nice alone orders the processes")
    probe = subprocess.run(  # may a new session lower its group's weight here (e.g. in a jail)?
        [sys.executable, "-c", "open('/proc/self/autogroup', 'w').write('5')"],
        start_new_session=True, capture_output=True, check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        pytest.skip("this system does not let a session lower its autogroup's weight")
    assert group.endswith("nice 5")


@pytest.mark.parametrize(
    ("environ", "words"),
    [
        ({"FAIRENGINE_WORKER_NICE": "25"}, "WORKER_NICE must be a whole number from 0 to 19"),
        ({"FAIRENGINE_WORKER_GROUP": "mine"}, "WORKER_GROUP must be one of server, own"),
    ],
)
def test_a_bad_priority_setting_is_refused_in_words(environ: dict[str, str], words: str) -> None:
    from dashboard.components.jobs import Priority
    from fairengine.settings import SettingsError, load

    with pytest.raises(SettingsError, match=words):
        load(environ)
    assert Priority.from_settings(load({})) == Priority(nice=10, own_group=False)


SERVER_STAND_IN = """
import os, sys, time
sys.path.insert(0, {root!r})
from dashboard.components.jobs import JobPool, Priority
pool = JobPool(workers=1, warm=False, priority=Priority(10, {own}))
job = pool.submit('s', 'sleep', 'sleep', time.sleep, 120)
while job.pid is None:
    time.sleep(0.05)
print(job.pid, flush=True)
time.sleep(120)
"""


@pytest.mark.parametrize("own", [False, True], ids=["server-session", "own-session"])
def test_workers_end_when_the_server_is_killed(own: bool) -> None:
    """A worker in its own process group (and session, with ``own``) is out of reach of a kill
    of the server's process group (how the harness and many supervisors stop a server); it must
    not outlive the server."""
    import os
    import signal
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER_STAND_IN.format(root=root, own=own)],
        stdout=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    try:
        worker = int(server.stdout.readline())
        os.killpg(server.pid, signal.SIGKILL)  # the server's group only: no shutdown
        server.wait(timeout=30)
        end = time.time() + 30
        while time.time() < end:
            try:
                os.kill(worker, 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)
        pytest.fail(f"worker {worker} still runs 30 s after its server was killed")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)


def sleeper(seconds: float) -> str:
    time.sleep(seconds)
    return "slept"


def hog(megabytes: int) -> int:
    """Allocate and touch ``megabytes`` (a fit that needs too much memory)."""
    import numpy as np

    block = np.ones(megabytes * 1024 * 1024 // 8)
    return int(block.sum())


def gone(pid: int, timeout: float) -> float | None:
    """Seconds until process ``pid`` no longer exists, None if it still runs after ``timeout``."""
    import os

    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return time.perf_counter() - start
        time.sleep(0.02)
    return None


@pytest.fixture()
def pair():
    pool = JobPool(workers=2, per_session=2, warm=False, memory_mb=2048)
    yield pool
    pool.shutdown()


def test_a_killed_job_fails_alone_in_words(pair: JobPool) -> None:
    """SIGKILL of one running job from outside (no out-of-memory kill meanwhile) fails that job
    only, with a message that says it was stopped, not that it ran out of memory; the job
    running next to it completes."""
    import os
    import signal

    victim = pair.submit("a", "victim", "kv", sleeper, 30)
    other = pair.submit("b", "other", "ko", counting, 10, 0.1, with_progress=True)
    queued = pair.submit("c", "queued", "kq", counting, 1, 0.0)
    wait_started(victim)
    wait_started(other)
    os.kill(victim.pid, signal.SIGKILL)
    with pytest.raises(Exception) as failed:
        victim.future.result(timeout=30)
    status, error = victim.outcome()
    print(f"killed job: {status}: {error}")
    assert status == "error" and "was stopped" in str(error) and "SIGKILL" in str(error)
    assert "memory" not in str(error)
    assert "Traceback" not in str(failed.value)
    assert other.future.result(timeout=60) == 10 and other.outcome() == ("done", 10)
    assert queued.future.result(timeout=60) == 1


def test_cancelled_running_jobs_stop_within_seconds(pair: JobPool) -> None:
    """Cancelling a running single fit (no progress hook) kills its process at once; the next
    queued job takes its place."""
    fit = pair.submit("a", "fit", "kf", sleeper, 60)
    sweep = pair.submit("b", "sweep", "ks", counting, 600, 0.1, with_progress=True)
    after = pair.submit("c", "after", "ka", counting, 1, 0.0)
    wait_started(fit)
    wait_started(sweep)
    fit_pid, sweep_pid = fit.pid, sweep.pid
    start = time.perf_counter()
    pair.cancel(fit)
    pair.cancel(sweep)
    fit_gone, sweep_gone = gone(fit_pid, 10), gone(sweep_pid, 10)
    print(f"cancelled fit's process gone after {fit_gone:.3f} s, sweep's after {sweep_gone:.3f} s")
    assert fit_gone is not None and sweep_gone is not None
    assert fit.outcome()[0] == "cancelled" and sweep.outcome()[0] == "cancelled"
    assert after.future.result(timeout=60) == 1
    print(f"next queued job done {time.perf_counter() - start:.3f} s after the cancel")
    assert not pair.active()


def test_queue_limit_answers_busy_and_cancels_nothing() -> None:
    """A full queue refuses a visitor who holds as many jobs as anyone else (the fair-share
    rule itself: tests/dashboard/test_fair_queue.py)."""
    from dashboard.components.job_state import BUSY_MESSAGE, ServerBusy

    pool = JobPool(workers=1, per_session=5, warm=False, queue_limit=2)
    try:
        running = pool.submit("a", "running", "k0", sleeper, 30)
        wait_started(running)
        pool.submit("b", "one", "k1", counting, 1, 0.0)
        pool.submit("c", "two", "k2", counting, 1, 0.0)
        with pytest.raises(ServerBusy) as busy:
            pool.submit("b", "three", "k3", counting, 1, 0.0)
        assert str(busy.value) == BUSY_MESSAGE
        assert pool.submit("e", "shared", "k1", counting, 1, 0.0).key == "k1"  # no new work
        assert len(pool.active()) == 3  # the refused submit dropped nothing
    finally:
        pool.shutdown()


def test_memory_limit_fails_the_heavy_fit_only(pair: JobPool) -> None:
    """A fit that allocates beyond the per-job limit (2 GB here) ends with "ran out of memory";
    the job beside it completes."""
    other = pair.submit("b", "other", "ko", counting, 10, 0.1, with_progress=True)
    heavy = pair.submit("a", "heavy", "kh", hog, 4096)
    with pytest.raises(Exception):  # noqa: B017 - the type is checked below
        heavy.future.result(timeout=60)
    status, error = heavy.outcome()
    print(f"heavy fit: {status}: {error}")
    assert status == "error" and "ran out of memory" in str(error) and "2,048 MB" in str(error)
    assert other.future.result(timeout=60) == 10
    small = pair.submit("c", "small", "ks", hog, 64)  # the pool still runs fits that fit
    assert small.future.result(timeout=60) == 64 * 1024 * 1024 // 8


def spin(seconds: float) -> int:
    """Burn processor time (a hostile file's parse or prediction)."""
    end, n = time.process_time() + seconds, 0
    while time.process_time() < end:
        n += 1
    return n


def test_a_job_over_its_processor_time_fails_in_words(pair: JobPool) -> None:
    """A call given ``cpu_seconds`` is ended by the kernel at that limit, with a message that
    names it; one within its limit completes."""
    burner = pair.submit("a", "parse", "kcpu", spin, 120, cpu_seconds=2)
    quick = pair.submit("b", "parse", "kcpu2", spin, 0.2, cpu_seconds=10)
    with pytest.raises(Exception):  # noqa: B017 - the type is checked below
        burner.future.result(timeout=60)
    status, error = burner.outcome()
    print(f"job over its processor time: {status}: {error}")
    assert status == "error" and "2 seconds of processor time" in str(error)
    assert "memory" not in str(error)
    assert quick.future.result(timeout=60) > 0


def test_closures_and_errors_come_back() -> None:
    """Pages may submit closures (cloudpickle); an exception raised by the fit is the outcome."""
    pool = JobPool(workers=1, warm=False)
    try:
        offset = 5
        assert pool.submit("a", "closure", "kc", lambda x: x + offset, 1).future.result(60) == 6

        def broken() -> None:
            raise ValueError("no rows left after filtering")

        job = pool.submit("a", "broken", "kb", broken)
        with pytest.raises(ValueError):
            job.future.result(timeout=60)
        assert job.outcome()[0] == "error" and "no rows left" in str(job.outcome()[1])
    finally:
        pool.shutdown()


def _busy_app() -> None:
    import time

    import streamlit as st

    from dashboard.components import runner

    st.session_state["job"] = runner._submit("Fitting", "k-new", time.sleep, 0)


def test_a_page_says_the_server_is_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A submit beyond the queue limit, from a session that holds as many jobs as anyone
    (the queued one), draws the pool's words on the page, nothing else."""
    from streamlit.testing.v1 import AppTest

    from dashboard.components import runner
    from dashboard.components.job_state import BUSY_MESSAGE
    from fairengine.textsafe import md_text

    full = JobPool(workers=1, warm=False, queue_limit=1)
    try:
        running = full.submit("a", "running", "k0", sleeper, 30)
        wait_started(running)
        full.submit("b", "queued", "k1", counting, 1, 0.0)
        monkeypatch.setattr(runner, "job_pool", lambda: full)
        at = AppTest.from_function(_busy_app, default_timeout=30)
        at.session_state["_session_id"] = "b"
        at.run()
        assert not at.exception and not at.error
        assert at.session_state["job"] is None
        assert [w.value for w in at.warning] == [md_text(BUSY_MESSAGE)]  # as Markdown, escaped
    finally:
        full.shutdown()


def loaded_modules() -> list[str]:
    return sorted(sys.modules)


def test_a_job_starts_with_every_methods_algorithm_already_imported() -> None:
    """The warm parent imports every module of the engine's methods, so a fit imports (and,
    without a bytecode cache, compiles) none of them itself."""
    from concurrent import futures

    from dashboard.components.jobs import preload_modules

    pool = JobPool(workers=1, warm=True)
    try:
        job = pool.submit("s", "probe", "probe", loaded_modules)
        futures.wait([job.future], timeout=120)  # a safety limit
        status, modules = job.outcome()
    finally:
        pool.shutdown()
    assert status == "done"
    wanted = {m for m in preload_modules() if m.startswith("fairengine.methods.")}
    assert "fairengine.methods.fair_regression.estimator" in wanted  # an algorithm module
    assert "fairengine.methods.multiaccurate_proxy.linear" in wanted
    assert wanted <= set(modules)


def open_sockets() -> int:
    """How many sockets this process holds open."""
    import os

    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the folder's own descriptor, closed by now
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    return count


def test_a_job_holds_no_pipe_but_its_own(pair: JobPool) -> None:
    """Each call talks to the pool over one pipe; a job (which may read a visitor's file) must
    not hold the pipe of another job running beside it, nor the warm parent's socket."""
    other = pair.submit("a", "sleeper", "sleeper", time.sleep, 30)
    wait_started(other)
    try:
        probe = pair.submit("b", "probe", "sockets", open_sockets)
        assert probe.future.result(timeout=120) == 1
    finally:
        pair.cancel(other)


MAIN_SCRIPT = """
open({marker!r}, "w").write("ran")
"""


def test_a_job_never_runs_the_servers_main_script(tmp_path, monkeypatch) -> None:
    """Under Streamlit ``__main__`` is the app script: a job's process must not run it again
    (the forkserver and spawn start methods would, as ``__mp_main__``)."""
    import types

    marker, script = tmp_path / "ran", tmp_path / "app.py"
    script.write_text(MAIN_SCRIPT.format(marker=str(marker)))
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)
    own = JobPool(workers=1, warm=False)
    try:
        assert own.submit("s", "pid", "pid", sum, [1, 2]).future.result(timeout=120) == 3
    finally:
        own.shutdown()
    assert not marker.exists()
