"""How a method page waits for the fit a knob change submitted (dashboard/components/runner.py):
a short job's result is drawn by the same script run that submitted it (no poll, no second
run); a job that outlasts the in-run wait shows its progress and a Cancel button instead, and is
polled quickly at first, then at the usual interval."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.components import runner, waiting


def _page() -> None:
    """A page that fits reweighing on German credit through ``run_panel``, with a fit function
    that first sleeps ``$SLEEP`` seconds (a quick or a long job)."""
    import os
    import time

    import streamlit as st

    from dashboard.components import runner
    from fairengine.data import load_dataset
    from fairengine.methods import get_method

    def fit(train, test, *, sleep: float, **knobs):
        time.sleep(sleep)
        return get_method("reweighing").run(train, test, **knobs)

    train, test = load_dataset("german_credit").split()
    sleep = float(os.environ["SLEEP"])
    result = runner.run_panel(
        "t", "reweighing", train, test, {"strength": 0.5}, label="Fitting",
        extra={"sleep": sleep}, function=fit,
    )  # fmt: skip
    st.metric("Test error", f"{result.metrics['test']['error']:.4f}")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FAIRENGINE_PREFETCH", "0")
    runner._memo.clear()


def test_a_short_job_is_drawn_by_the_run_that_submitted_it(monkeypatch) -> None:
    monkeypatch.setenv("SLEEP", "0")
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "120")  # the budget, not a measured time
    at = AppTest.from_function(_page, default_timeout=180).run()  # one script run
    assert not at.exception and not at.error
    assert len(at.metric) == 1  # the result, drawn in that run
    assert not at.get("progress") and not any("Fitting" in i.value for i in at.info)
    assert not any(b.label == "Cancel" for b in at.button)


def test_a_long_job_shows_its_progress_and_can_be_cancelled(monkeypatch) -> None:
    monkeypatch.setenv("SLEEP", "600")
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "0.2")
    at = AppTest.from_function(_page, default_timeout=180).run()
    assert not at.exception and not at.error
    assert len(at.metric) == 0  # nothing to show yet: the page ends after the progress
    waiting = [i.value for i in at.info] + [p.value for p in at.get("progress")]
    assert waiting, "no waiting state drawn"
    cancel = [b for b in at.button if b.label == "Cancel"]
    assert cancel
    job = runner.job_pool().get(at.session_state["runner.state.t"]["job"])
    assert job is not None and not job.done
    cancel[0].click().run()
    assert job.cancelled
    assert any("Press **Run**" in i.value for i in at.info)  # only Run starts it again


def test_a_young_job_is_polled_quickly_then_at_the_usual_interval() -> None:
    assert waiting.poll_seconds(0, workers=2, age=0.5) == waiting.FIRST_POLL < waiting.POLL
    assert waiting.poll_seconds(1, workers=2, age=0.5) == waiting.FIRST_POLL  # next in line
    assert waiting.poll_seconds(0, workers=2, age=waiting.FIRST_POLLS_FOR) == waiting.POLL
    assert waiting.poll_seconds(3, workers=2, age=0.5) > waiting.POLL  # jobs ahead: no hurry
