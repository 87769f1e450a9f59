"""Speculative neighbours: the knob values one widget step away, background jobs in the shared
pool that never hold up a visitor's job, and their runs served as the page would compute them."""

from __future__ import annotations

import math
import os
import time
from concurrent import futures

import pytest

from dashboard.components import jobs, prefetch
from dashboard.components.job_scheduling import BACKGROUND_NICE
from dashboard.components.jobs import JobPool
from fairengine.methods import get_method
from fairengine.methods.base import Knob
from fairengine.methods.knob_steps import LOG_STEP, neighbours, slider_step
from fairengine.settings import SettingsError

SLIDER = Knob("alpha", 0.2, low=0.0, high=1.0, step=0.05)
LOG = Knob("eps", 0.05, low=0.001, high=1.0, log=True)
INTEGER = Knob("n_samples", 5000, low=500, high=50000, step=500, integer=True)
SELECT = Knob("method", "soft", choices=("naive", "dro", "soft", "unconstrained"))
FLAG = Knob("relaxed", False)


def test_slider_neighbours_are_one_step_within_the_range() -> None:
    assert neighbours(SLIDER, 0.2) == (0.25, 0.15)
    assert neighbours(SLIDER, 0.0) == (0.05,)  # the low end: nothing below
    assert neighbours(SLIDER, 1.0) == (0.95,)  # the high end: nothing above
    # every grid point goes one step up and back down to itself, with no float dust
    for k in range(21):
        value = round(k * 0.05, 2)
        for moved in neighbours(SLIDER, value):
            assert 0.0 <= moved <= 1.0 and moved == round(moved, 2)
            assert value in neighbours(SLIDER, moved)


def test_a_value_off_the_grid_moves_to_the_grid_as_the_slider_does() -> None:
    assert neighbours(SLIDER, 0.22) == (0.25, 0.15)  # 0.27 → 0.25, 0.17 → 0.15 (nearest)
    assert neighbours(Knob("gap", 0.0, low=0.0, high=0.5, step=0.001), 0.0) == (0.001,)


def test_log_neighbours_slide_the_exponent_and_read_three_digits() -> None:
    up, down = neighbours(LOG, 0.05)
    assert (up, down) == (0.0562, 0.0447)
    # the exponent log10(0.05) + 0.05 = -1.251 snaps to the slider's grid point -1.25
    assert up == float(f"{10**-1.25:.3g}") != float(f"{10 ** (math.log10(0.05) + LOG_STEP):.3g}")
    assert neighbours(LOG, 0.001) == (0.00112,)  # the low end
    assert neighbours(LOG, 1.0) == (0.891,)  # the high end
    assert slider_step(LOG) == LOG_STEP


def test_integer_neighbours_are_whole_steps_and_stop_at_the_ends() -> None:
    assert neighbours(INTEGER, 5000) == (5500, 4500)
    assert all(isinstance(v, int) for v in neighbours(INTEGER, 5000))
    assert neighbours(INTEGER, 500) == (1000,)
    assert neighbours(INTEGER, 50000) == (49500,)


def test_select_and_checkbox_neighbours() -> None:
    assert neighbours(SELECT, "dro") == ("soft", "naive")
    assert neighbours(SELECT, "naive") == ("dro",)  # first choice: only the next one
    assert neighbours(SELECT, "unconstrained") == ("soft",)  # last choice
    assert neighbours(FLAG, False) == (True,)
    assert neighbours(Knob("C", 1.0, low=0.1), 1.0) == ()  # no range: a number box, no slider


def test_every_method_knob_has_valid_neighbours_at_its_default() -> None:
    for name in ("balanced_filtering", "maxent", "multiaccurate_proxy", "noisy_groups"):
        method = get_method(name)
        for knob in method.knobs:
            for value in neighbours(knob, knob.default):
                assert value != knob.default
                assert knob.validate(value) == value  # what the widget would send


def test_neighbour_settings_put_the_last_changed_knob_first_in_its_direction() -> None:
    method = get_method("noisy_groups")
    values = method.validate_knobs({"slack": 0.05})
    first = prefetch.neighbour_settings(method, values, None, limit=4)
    assert len(first) == 4
    # no change seen yet: the main knob (slack), then the other sliders in order, up first
    assert [s["slack"] for s in first[:2]] == [0.06, 0.04]
    assert [s["noise"] for s in first[2:]] == [0.15, 0.05]
    moved_down = prefetch.neighbour_settings(method, values, {**values, "slack": 0.06}, limit=2)
    assert [s["slack"] for s in moved_down] == [0.04, 0.06]
    noise_moved = prefetch.neighbour_settings(method, values, {**values, "noise": 0.05}, limit=3)
    assert [s["noise"] for s in noise_moved[:2]] == [0.15, 0.05]  # the knob changed last first
    assert noise_moved[2]["slack"] == 0.06
    for setting in first + moved_down + noise_moved:  # one knob moved, every other as shown
        assert sum(setting[k] != values[k] for k in values) == 1


@pytest.mark.parametrize(
    ("environ", "jobs"),
    [
        ({"FAIRENGINE_PREFETCH": "0"}, 0),
        ({}, prefetch.PREFETCH_JOBS),
        ({"FAIRENGINE_DEMO": "1"}, 0),
        ({"FAIRENGINE_DEMO": "1", "FAIRENGINE_PREFETCH": "2"}, 2),
    ],
)
def test_the_prefetch_setting_turns_it_off_and_demo_mode_too(environ, jobs, monkeypatch) -> None:
    monkeypatch.delenv("FAIRENGINE_DEMO", raising=False)
    monkeypatch.delenv("FAIRENGINE_PREFETCH", raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    assert prefetch.prefetch_jobs() == jobs


def test_a_prefetch_setting_that_is_no_number_is_refused(monkeypatch) -> None:
    monkeypatch.setenv("FAIRENGINE_PREFETCH", "many")
    with pytest.raises(SettingsError, match="FAIRENGINE_PREFETCH must be a whole number"):
        prefetch.prefetch_jobs()


def test_sliders_in_view_come_before_the_advanced_ones() -> None:
    """Multiaccurate proxies on data where α has a single value: the page draws no α slider, so
    the first settings computed ahead are those of the sliders in view (C, then ε), not of the
    Advanced expander's (the game's rounds)."""
    method = get_method("multiaccurate_proxy")
    values = method.validate_knobs({})
    drawn = {k.name: (k, values[k.name]) for k in method.knobs if k.name != "alpha"}
    moved = [
        next(name for name in s if s[name] != values[name])
        for s in prefetch.neighbour_settings(method, values, None, 4, drawn)
    ]
    assert moved == ["C", "C", "eps", "eps"]
    advanced = {k.name for k in method.knobs if k.advanced}
    assert not advanced & set(moved)


def test_prefetch_off_submits_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from dashboard.components import services

    def no_pool() -> None:
        raise AssertionError("the pool was asked for a job with prefetching off")

    monkeypatch.setenv("FAIRENGINE_PREFETCH", "0")
    monkeypatch.setattr(services, "job_pool", no_pool)
    prefetch.after_result("slot", "reweighing", None, None, {"strength": 0.5})  # type: ignore[arg-type]


# --- the pool ------------------------------------------------------------------------------


def nap(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def own_nice() -> int:
    return os.nice(0)


def wait_for(predicate, timeout: float = 60.0) -> None:
    end = time.time() + timeout
    while not predicate() and time.time() < end:
        time.sleep(0.02)
    assert predicate()


@pytest.fixture()
def single():
    pool = JobPool(workers=1, per_session=2, warm=False)
    yield pool
    pool.shutdown()


def test_a_visitors_job_preempts_and_overtakes_background_jobs(single: JobPool) -> None:
    first = single.submit_background("s", "b1", nap, 30.0)
    second = single.submit_background("s", "b2", nap, 0.1)
    wait_for(lambda: first.running_calls == 1)
    assert second.started is None  # one background call at a time
    visitor = single.submit("v", "fit", "u1", nap, 0.2)
    assert single.queue_position(visitor) == 1  # no background job counts as ahead of it
    wait_for(lambda: visitor.done)
    assert visitor.outcome()[0] == "done"
    assert first.outcome()[0] == "cancelled"  # killed to free the only worker
    assert second.started is None or second.started >= visitor.started
    wait_for(lambda: second.done)
    assert second.outcome()[0] == "done"


def test_background_jobs_wait_while_a_visitors_job_runs_and_run_niced() -> None:
    pool = JobPool(workers=2, per_session=2, warm=False)
    try:
        visitor = pool.submit("v", "fit", "u", nap, 1.0)
        wait_for(lambda: visitor.running_calls == 1)
        ahead = pool.submit_background("s", "b", own_nice)
        time.sleep(0.5)
        assert ahead.started is None and not visitor.done  # a worker is free, yet it waits
        wait_for(lambda: ahead.done)
        assert visitor.done and ahead.started >= visitor.started
        assert ahead.outcome() == ("done", max(pool.priority.nice, BACKGROUND_NICE))
    finally:
        pool.shutdown()


def test_a_visitors_job_stops_a_running_background_job_even_with_a_free_worker() -> None:
    pool = JobPool(workers=2, per_session=2, warm=False)
    try:
        ahead = pool.submit_background("s", "b", nap, 30.0)
        wait_for(lambda: ahead.running_calls == 1)
        visitor = pool.submit("v", "fit", "u", nap, 3.0)
        wait_for(lambda: ahead.done, timeout=10)  # killed, not left to share the cores
        assert ahead.outcome()[0] == "cancelled" and not visitor.done
        wait_for(lambda: visitor.done)
        assert visitor.outcome()[0] == "done"
    finally:
        pool.shutdown()


def test_a_visitor_takes_over_a_background_job_of_the_same_key(single: JobPool) -> None:
    ahead = single.submit_background("s", "k", nap, 0.5)
    wait_for(lambda: ahead.running_calls == 1)
    mine = single.submit("v", "Fitting", "k", nap, 0.5)
    assert mine is ahead and not mine.background and mine.label == "Fitting"
    wait_for(lambda: mine.done)
    assert mine.outcome()[0] == "done"


def test_a_queued_background_job_taken_over_starts_without_waiting_for_the_dispatchers_round(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Taking over a background job that waits wakes the dispatcher: it starts (killing the
    running background job) at once, not at the dispatcher's next idle round."""
    monkeypatch.setattr(jobs, "IDLE_WAIT", 600.0)  # a round that never comes within the test
    pool = JobPool(workers=1, per_session=2, warm=False)
    try:
        running = pool.submit_background("s", "b1", nap, 600.0)
        waiting = pool.submit_background("s", "k", nap, 0.1)
        wait_for(lambda: running.running_calls == 1)
        assert waiting.started is None
        mine = pool.submit("v", "Fitting", "k", nap, 0.1)
        assert mine is waiting and not mine.background
        futures.wait([mine.future], timeout=60)  # a safety limit, well under the idle round
        assert mine.outcome()[0] == "done"
        assert running.outcome()[0] == "cancelled"
    finally:
        pool.shutdown()


def test_background_jobs_count_against_no_visitors_limit() -> None:
    pool = JobPool(workers=1, per_session=1, queue_limit=1, warm=False)
    try:
        pool.submit("v", "fit", "u", nap, 0.5)
        for i in range(3):
            pool.submit_background("v", f"b{i}", nap, 0.0)
        assert [j.key for j in pool.active("v") if not j.background] == ["u"]
    finally:
        pool.shutdown()


# --- served as the page would compute it -----------------------------------------------------


def test_a_prefetched_neighbour_is_the_run_the_page_would_compute(tmp_path) -> None:
    from fairengine.data import load_dataset
    from fairengine.frontier import task_key
    from fairengine.frontier.runs import RunStore, compute_and_store, run_key

    train, test = load_dataset("german_credit").split()
    method = get_method("reweighing")
    shown = method.validate_knobs({"strength": 0.5})
    store = RunStore(tmp_path / "store")
    settings = prefetch.neighbour_settings(method, shown, None, limit=2)
    assert [s["strength"] for s in settings] == [0.55, 0.45]
    pool = JobPool(workers=1, warm=False)
    try:
        run = ("reweighing", train, test, None, None)
        keys = prefetch.submit_neighbours(pool, store, "s", run, settings)
        jobs = [job for job in pool.active("s") if job.background]
        assert sorted(job.key for job in jobs) == sorted(keys) and len(keys) == 2
        wait_for(lambda: not pool.active(), timeout=120)
        tkey = task_key(train, test)
        for knobs in settings:  # the page's one-step change: found in the store, same run
            assert prefetch.stored(store, tkey, "reweighing", run_key(tkey, "reweighing", knobs))
            served = store.get(tkey, "reweighing", knobs)
            direct = compute_and_store(None, "reweighing", train, test, knobs)
            assert served is not None and served.knobs == direct.knobs
            assert served.metrics == direct.metrics
        # once stored, nothing is submitted again
        assert prefetch.submit_neighbours(pool, store, "s", run, settings) == []
    finally:
        pool.shutdown()


def test_a_one_step_knob_change_is_served_from_the_runs_computed_ahead(tmp_path, monkeypatch):
    """The balanced-filtering page on German credit, every fit counted as expensive (a knob
    change would wait for Run): after the first result the neighbours are computed in the
    background, and one slider step then shows its result at once, with no Run and no fit."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from dashboard.components import runner

    cache = tmp_path / "cache"
    monkeypatch.setenv("FAIRENGINE_CACHE", str(cache))
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "600")
    monkeypatch.setenv("FAIRENGINE_CHEAP_SECONDS", "0")
    monkeypatch.setenv("FAIRENGINE_PREFETCH", "2")
    runner._memo.clear()
    pool = runner.job_pool()
    for leftover in pool.active():  # the pool is per process: other page tests' jobs go first
        pool.cancel(leftover)
    wait_for(lambda: not pool.active(), timeout=120)
    app = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
    at = AppTest.from_file(app, default_timeout=240)
    at.query_params["dataset"] = "german_credit"
    at.run()
    at.switch_page("views/balanced_filtering.py").run()
    assert not at.exception
    ahead = [job for job in pool.active() if job.background]
    assert len(ahead) == 2  # α one step up and down
    wait_for(lambda: not pool.active(), timeout=240)
    runs = len(list((cache / "runs").rglob("*.fairrun")))
    assert runs == 3  # the page's run and its two neighbours

    at.slider(key="w.bf.alpha").set_value(0.25).run()
    assert not at.exception
    assert not any("Knobs changed" in w.value for w in at.warning)  # no Run asked for
    shown = at.session_state["runner.state.balanced_filtering"]["result"]
    assert shown.knobs["alpha"] == 0.25  # the new budget's result is drawn
    assert len(list((cache / "runs").rglob("*.fairrun"))) == runs  # nothing fitted for it


def test_each_main_knob_is_a_slider_of_its_method() -> None:
    from fairengine.methods import list_methods

    declared = {m: get_method(m).main_knob for m in list_methods() if get_method(m).main_knob}
    papers = {"balanced_filtering", "maxent", "multiaccurate_proxy", "noisy_groups"}
    papers.add("fair_regression")
    assert papers <= set(declared)  # each paper method's page has one
    for method, name in declared.items():
        knob = get_method(method).knob(name)
        assert knob.kind == "float" and knob.low is not None and knob.high is not None


def test_a_widget_with_the_pages_own_range_gives_the_neighbours() -> None:
    """Multiaccurate proxies' α slides over the range its runs reached, its lower end standing
    for α = 0: the neighbour is one step of that slider, not of the declared knob."""
    import dataclasses

    method = get_method("multiaccurate_proxy")
    values = method.validate_knobs({"alpha": 0.0})
    page_alpha = dataclasses.replace(method.knob("alpha"), low=0.081, high=0.5, default=0.081)
    drawn = {"alpha": (page_alpha, 0.081)}
    settings = prefetch.neighbour_settings(method, values, None, limit=1, drawn=drawn)
    assert settings[0]["alpha"] == 0.082
    # a widget of the declared range left from another page, at another value: not used
    stale = {"alpha": (method.knob("alpha"), 0.3)}
    settings = prefetch.neighbour_settings(method, values, None, limit=1, drawn=stale)
    assert settings[0]["alpha"] == 0.001


def test_a_knob_the_page_drew_no_widget_for_is_not_stepped() -> None:
    """Multiaccurate proxies with a single-valued α: the page shows a note instead of the
    slider, so the runs computed ahead move the knobs it did draw, never α."""
    method = get_method("multiaccurate_proxy")
    values = method.validate_knobs({})
    eps = method.knob("eps")
    drawn = {"eps": (eps, values["eps"])}
    settings = prefetch.neighbour_settings(method, values, None, limit=4, drawn=drawn)
    assert settings  # eps is stepped
    assert all(s["alpha"] == values["alpha"] for s in settings)
    assert {name for s in settings for name in s if s[name] != values[name]} == {"eps"}
