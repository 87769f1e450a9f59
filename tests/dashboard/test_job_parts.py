"""Jobs of several calls (a sweep's points) in the shared pool, and what a waiting page says."""

from __future__ import annotations

import os
import time

import pytest

from dashboard.components.job_state import LOW_SHARE, Cancelled
from dashboard.components.jobs import JobPool


def nap(seconds: float, tag: str) -> tuple[str, int]:
    time.sleep(seconds)
    return tag, os.getpid()


def spin(seconds: float) -> float:
    end = time.time() + seconds
    while time.time() < end:
        pass
    return seconds


@pytest.fixture()
def pair():
    pool = JobPool(workers=2, per_session=2, warm=False)
    yield pool
    pool.shutdown()


def gone(pid: int, timeout: float) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_a_sweeps_points_run_on_every_idle_worker_in_order(pair: JobPool) -> None:
    calls = [(nap, (0.8, f"p{i}"), {}) for i in range(4)]
    job = pair.submit_parts("a", "sweep", "k-sweep", calls)
    most = 0
    while not job.done:
        most = max(most, job.running_calls)
        time.sleep(0.02)
    values = job.future.result(timeout=60)
    print(f"most calls of the sweep running at once: {most}; processes {[p for _, p in values]}")
    assert [tag for tag, _ in values] == ["p0", "p1", "p2", "p3"]  # grid order
    assert most == 2  # both workers, nothing else queued
    assert len({pid for _, pid in values}) == 4  # one process per point
    assert job.progress() == (4, 4)


def test_another_visitors_fit_does_not_wait_for_a_whole_sweep(pair: JobPool) -> None:
    """While a sweep of 8 points holds both workers, another session's single fit takes the
    next free worker; its result comes while the sweep still has points to run."""
    sweep = pair.submit_parts("a", "sweep", "k-a", [(nap, (1.0, f"p{i}"), {}) for i in range(8)])
    while sweep.running_calls < 2:
        time.sleep(0.02)
    fit = pair.submit("b", "fit", "k-b", nap, 0.1, "fit")
    assert fit.future.result(timeout=60)[0] == "fit"
    done = sweep.progress()[0]
    print(f"the other visitor's fit finished with {done} of 8 sweep points done")
    assert not sweep.done and done < 6
    assert len(sweep.future.result(timeout=60)) == 8


def test_cancel_kills_every_point_of_a_sweep(pair: JobPool) -> None:
    calls = [(nap, (60.0, f"p{i}"), {}) for i in range(5)]
    job = pair.submit_parts("a", "sweep", "k-cancel", calls)
    while job.running_calls < 2:
        time.sleep(0.02)
    pids = list(job._pids.values())
    pair.cancel(job)
    assert all(gone(pid, 10) for pid in pids)
    with pytest.raises(Cancelled):
        job.future.result(timeout=30)
    assert job.outcome()[0] == "cancelled" and job.progress()[0] == 0
    assert not pair.active() and job.running_calls == 0


def broken(tag: str) -> None:
    raise ValueError(f"point {tag} has no rows")


def test_a_failing_point_fails_the_sweep_in_its_words_and_stops_the_rest(pair: JobPool) -> None:
    calls = [(nap, (60.0, "slow"), {}), (broken, ("p1",), {}), (nap, (60.0, "never"), {})]
    job = pair.submit_parts("a", "sweep", "k-broken", calls)
    with pytest.raises(ValueError, match="point p1 has no rows"):
        job.future.result(timeout=60)
    end = time.time() + 10
    while job.running_calls and time.time() < end:
        time.sleep(0.05)
    assert job.running_calls == 0 and not pair.active()


def test_split_sweep_points_equal_the_serial_sweep(tmp_path) -> None:
    """The dashboard's sweep, split into one call per point in the pool, stores exactly the
    points (metrics, predictions' scores) of the same sweep run serially in one process."""
    from dashboard.components.runner import sweep_calls
    from fairengine.data import load_dataset
    from fairengine.frontier import FrontierStore, sweep, task_key

    train, test = load_dataset("german_credit").split(random_state=3)
    grid = {"strength": [0.0, 0.5, 1.0, 0.5]}  # one repeat: 3 distinct points
    serial = sweep("reweighing", train, test, grid, store=FrontierStore(tmp_path / "serial"))
    split_store = FrontierStore(tmp_path / "split")
    calls = sweep_calls(sweep, ("reweighing", train, test, grid), {"store": split_store})
    assert calls is not None and len(calls) == 3
    pool = JobPool(workers=2, warm=False)
    try:
        pool.submit_parts("a", "sweep", "k-eq", calls).future.result(timeout=300)
    finally:
        pool.shutdown()
    parts = sweep("reweighing", train, test, grid, store=split_store)  # all served from the store
    assert parts.points["cached"].all()
    key = task_key(train, test)
    columns = [c for c in serial.points.columns if c not in ("cached", "elapsed", "path")]
    assert serial.points[columns].equals(parts.points[columns])
    import numpy as np

    for point_id in serial.points["point_id"].unique():
        a, b = serial._records[point_id], parts._records[point_id]
        assert a.metrics == b.metrics
        ours, theirs = serial.model(point_id), parts.model(point_id)
        assert np.array_equal(ours.predict_proba(test.X), theirs.predict_proba(test.X))
    assert len(split_store.points(key)) == len(FrontierStore(tmp_path / "serial").points(key))


def test_sweep_calls_leave_other_functions_and_bad_grids_whole() -> None:
    from dashboard.components.runner import sweep_calls
    from fairengine.data import load_dataset
    from fairengine.frontier import sweep

    train, test = load_dataset("german_credit").split(random_state=3)
    assert sweep_calls(nap, (1, "x", 2, 3), {}) is None
    assert sweep_calls(sweep, ("reweighing", train, test, {"strength": [7.0]}), {}) is None


def test_cpu_seconds_and_share_of_a_running_job(pair: JobPool) -> None:
    """A computing job's processor seconds grow; a job that only waits gets a share near 0,
    what the page calls "getting little CPU"."""
    busy = pair.submit("a", "spin", "k-spin", spin, 6.0)
    idle = pair.submit("b", "nap", "k-nap", nap, 6.0, "x")
    while busy.running_calls == 0 or idle.running_calls == 0:
        time.sleep(0.02)
    start = time.time()
    while time.time() - start < 5.0:
        busy_share, idle_share = busy.cpu_share(), idle.cpu_share()
        time.sleep(0.5)
    print(f"shares over 5 s: computing {busy_share}, waiting {idle_share}")
    assert idle_share is not None and idle_share < LOW_SHARE
    assert busy_share is not None and busy_share > idle_share
    assert busy.future.result(timeout=60) == 6.0
    assert busy.cpu_seconds() > idle.cpu_seconds() + 0.1  # from the finished process's usage


# --- what a waiting page says ------------------------------------------------------------------


def test_waiting_text_of_a_sweep_says_points_time_and_processor_time() -> None:
    from dashboard.components.waiting import BUSY_WORDS, Waiting, waiting_text

    w = Waiting("Sweeping C", done=3, total=8, elapsed=75, cpu=40.4, share=0.9, remaining=125)
    fraction, text = waiting_text(w)
    print(text)
    assert fraction == 3 / 8
    assert text == (
        "Sweeping C: 3 of 8 points done, running for 1 min 15 s, 40 s of processor time so "
        "far, about 2 min left."
    )
    assert BUSY_WORDS not in text


def test_waiting_text_says_the_server_is_busy_only_when_the_job_gets_little_cpu() -> None:
    from dashboard.components.waiting import BUSY_WORDS, Waiting, waiting_text

    starved = Waiting("Fitting", elapsed=300, cpu=2.0, share=0.02)
    _, text = waiting_text(starved)
    print(text)
    assert text.startswith("Fitting: running for 5 min, 2 s of processor time so far")
    assert text.endswith(BUSY_WORDS) and "The server is busy" in BUSY_WORDS
    assert BUSY_WORDS not in waiting_text(Waiting("Fitting", elapsed=300, cpu=280, share=0.95))[1]
    assert BUSY_WORDS not in waiting_text(Waiting("Fitting", elapsed=2, cpu=0.0, share=None))[1]


def test_waiting_text_in_the_queue_and_before_the_start() -> None:
    from dashboard.components.waiting import Waiting, waiting_text

    assert waiting_text(Waiting("Fitting", position=1, workers=2)) == (
        None,
        "Fitting: waiting for a free worker (next in line; 2 shared workers).",
    )
    assert "3 jobs ahead" in waiting_text(Waiting("Fitting", position=4, workers=2))[1]
    fraction, text = waiting_text(Waiting("Fitting", estimate=10.0, elapsed=4.0, remaining=6.0))
    assert fraction == pytest.approx(0.4) and "about 6 s left" in text
    assert "first fit of this setting" in waiting_text(Waiting("Fitting", elapsed=4.0))[1]
    assert waiting_text(Waiting("Fitting"))[1] == "Fitting: starting, first fit of this setting."


def test_waiting_text_escapes_the_label() -> None:
    from dashboard.components.waiting import Waiting, waiting_text
    from fairengine.textsafe import md_text

    label = "Sweeping **ε** of <b>[x](javascript:1)</b>"
    _, text = waiting_text(Waiting(label, done=1, total=2, elapsed=3, cpu=1, remaining=3))
    assert text.startswith(md_text(label) + ":") and "**ε**" not in text


def test_a_polled_job_is_described_from_the_pool(pair: JobPool) -> None:
    from dashboard.components.waiting import waiting, waiting_text

    job = pair.submit_parts("a", "Sweeping α", "k-w", [(spin, (1.5,), {}), (spin, (1.5,), {})])
    while job.running_calls < 2:
        time.sleep(0.02)
    time.sleep(0.5)
    snapshot = waiting(pair, job)
    _, text = waiting_text(snapshot)
    print(text)
    assert snapshot.total == 2 and snapshot.position == 0 and snapshot.elapsed > 0
    assert text.startswith("Sweeping α: 0 of 2 points done, running for")
    job.future.result(timeout=60)
    assert waiting(pair, job).done == 2 and waiting(pair, job).cpu > 0


def run_and_list_streamlit(call: tuple) -> bool:
    """Run one part of a split sweep; whether the job's process then holds Streamlit."""
    import sys

    function, args, kwargs = call
    function(*args, **kwargs)
    return "streamlit" in sys.modules


def test_a_sweep_point_job_does_not_import_the_pages(tmp_path) -> None:
    """A point's call refers only to modules the warm parent imported (no Streamlit, whose
    import costs each point's process seconds)."""
    from dashboard.components.runner import sweep_calls
    from fairengine.data import load_dataset
    from fairengine.frontier import FrontierStore, sweep, task_key

    train, test = load_dataset("german_credit").split(random_state=3)
    store = FrontierStore(tmp_path)
    calls = sweep_calls(sweep, ("reweighing", train, test, {"strength": [0, 1]}), {"store": store})
    pool = JobPool(workers=1, warm=False)
    try:
        job = pool.submit("a", "point", "k-point", run_and_list_streamlit, calls[0])
        assert job.future.result(timeout=300) is False
    finally:
        pool.shutdown()
    assert len(store.points(task_key(train, test))) == 1  # the point is stored


def test_cpu_share_counts_only_the_time_a_job_runs(tmp_path) -> None:
    """Time spent queued is not "little CPU": the share is measured over running time only,
    and only once :data:`MIN_WINDOW` seconds of it have been seen."""
    from concurrent.futures import Future

    from dashboard.components.job_state import MIN_WINDOW, Job

    job = Job(1, "s", "fit", "k", Future(), 0.0, None, tmp_path / "p", tmp_path / "c")
    assert job.cpu_share(now=0.0) is None and job.cpu_share(now=30.0) is None  # queued
    job._pids[0] = os.getpid()  # "running": this process
    assert job.cpu_share(now=31.0) is None
    assert job.cpu_share(now=31.0 + MIN_WINDOW / 2) is None
    share = job.cpu_share(now=31.0 + MIN_WINDOW + 0.5)
    print(f"share after {MIN_WINDOW + 0.5} s of (fake) running time: {share}")
    assert share is not None and share >= 0.0
