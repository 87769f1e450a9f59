"""The one run model of the method pages (dashboard/components/runner.py) under AppTest.

A knob change of an expensive fit keeps the last result, marked stale, until Run; Run updates
it; a setting seen before comes from the cache; every page's first view on the default and the
paper datasets comes from the runs shipped by ``fairengine precompute`` without fitting.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.components import runner
from fairengine.methods import get_method

METHOD_DEFAULT_ALPHA = get_method("balanced_filtering").knob("alpha").default
APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("FAIRENGINE_CACHE", str(cache))
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "600")  # a submitted fit is awaited inline
    monkeypatch.setenv("FAIRENGINE_CHEAP_SECONDS", "0")  # every fit counts as expensive
    monkeypatch.setenv("FAIRENGINE_PREFETCH", "0")  # no run computed ahead (test_prefetch.py)
    runner._memo.clear()  # results that earlier tests in this process left in the shared memo
    return cache


def open_page(view: str, dataset: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=240)
    at.query_params["dataset"] = dataset
    at.run()
    at.switch_page(f"views/{view}.py").run()
    assert not at.exception
    return at


def stored_runs(cache: Path) -> int:
    return len(list((cache / "runs").rglob("*.fairrun")))


def metrics(at: AppTest) -> list[str]:
    return [m.value for m in at.metric]


def page_failures(at: AppTest) -> list[str]:
    """The page's error boxes other than a result's failed checks (a check that fails is the
    result's news, shown as an error on purpose; the page itself must not fail)."""
    return [e.value for e in at.error if not e.value.startswith("**Check failed")]


def stale(at: AppTest) -> bool:
    return any("Knobs changed" in w.value for w in at.warning)


def test_knob_change_keeps_the_result_marked_stale_until_run(private_cache: Path) -> None:
    at = open_page("balanced_filtering", "german_credit")  # nothing to show: fits at once
    assert len(at.get("plotly_chart")) == 2 and not stale(at)
    first = metrics(at)
    assert stored_runs(private_cache) == 1

    at.slider(key="w.bf.alpha").set_value(0.05).run()
    assert not at.exception and stale(at)
    assert len(at.get("plotly_chart")) == 2  # never wiped by a knob
    assert metrics(at) == first  # still the previous knobs' result
    assert stored_runs(private_cache) == 1  # nothing fitted without Run

    at.button(key="runner.run.balanced_filtering").click().run()
    assert not at.exception and not page_failures(at) and not stale(at)
    assert metrics(at) != first  # a smaller budget α: a less disclosive proxy
    assert stored_runs(private_cache) == 2

    default = METHOD_DEFAULT_ALPHA
    at.slider(key="w.bf.alpha").set_value(default).run()  # back to a setting seen before
    assert not stale(at) and metrics(at) == first  # from the cache, no Run needed
    assert stored_runs(private_cache) == 2


@pytest.mark.parametrize(
    ("view", "dataset", "charts"),
    [
        ("maxent", "adult", 3),
        ("balanced_filtering", "adult", 2),
        ("noisy_groups", "adult", 1),
        ("multiaccurate_proxy", "adult", 5),
        ("fair_regression", "law_school", 3),
    ],
)
def test_first_view_comes_from_the_shipped_runs(monkeypatch, view, dataset, charts) -> None:
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "0")  # a fit would show progress, not charts
    at = open_page(view, dataset)
    assert not page_failures(at) and not stale(at)
    assert len(at.get("plotly_chart")) >= charts
    assert not any(b.key == f"runner.run.{view}" for b in at.button)  # nothing to run


def test_fair_regression_offers_its_dataset_in_one_click(monkeypatch) -> None:
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "0")
    at = open_page("fair_regression", "adult")
    assert at.error and "real-valued target" in at.error[0].value.replace("\\", "")
    assert len(at.get("plotly_chart")) == 0
    at.button(key="runner.open.law_school").click().run()
    assert not at.exception and not at.error
    assert len(at.get("plotly_chart")) == 3  # the paper's dataset, from the shipped run


def test_a_cache_folder_others_can_write_is_not_used_and_the_page_says_so(
    monkeypatch, private_cache: Path
) -> None:
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "0")
    private_cache.mkdir()
    os.chmod(private_cache, 0o777)
    at = open_page("maxent", "adult")
    notes = [c.value for c in at.caption if "not used" in c.value]
    assert len(notes) == 1 and "writable by every user" in notes[0]
    print(notes[0])
    assert not at.error and len(at.get("plotly_chart")) >= 3  # the shipped run still shows
    assert stored_runs(private_cache) == 0
