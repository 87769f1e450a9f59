"""Work shared between sessions: what one visitor's page computes is reused by the
next, but never crosses over to a session with other data.

``dashboard/components/shared.py`` keeps figures by run key for every session of the server, and
``task_loader.bundled_task`` keeps the bundled datasets' tasks; these tests check that two
sessions with different uploads see their own results, that a session's view does not change
when another session computes, and that equal inputs share one object.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.components import runner, services, waiting
from dashboard.components.shared import shared
from tests.dashboard.boxes import page_errors

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


def table(shift: int) -> bytes:
    """A small upload; ``shift`` changes which rows are in which group and the labels."""
    rows = ["x1,x2,group,y"]
    for i in range(300):
        x1, x2 = (i * (3 + shift)) % 7, (i * 5 + shift) % 11
        group = "a" if (i + shift) % (3 + shift) else "b"
        y = int(x1 + 2 * (group == "a") + (x2 > 5 + shift) > 4)
        rows.append(f"{x1},{x2},{group},{y}")
    return "\n".join(rows).encode()


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "600")  # a submitted fit is awaited inline
    monkeypatch.setenv("FAIRENGINE_CHEAP_SECONDS", "1e9")
    runner._memo.clear()


def upload_session(name: str, payload: bytes) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.radio(key="w.source").set_value("upload").run()
    at.file_uploader[0].set_value((name, payload, "text/csv")).run()
    at.selectbox(key="w.target").set_value("y").run()
    at.multiselect(key="w.sensitive").set_value(["group"]).run()
    assert not at.exception and not at.error
    at.switch_page("views/balanced_filtering.py").run()
    assert not at.exception and not page_errors(at)
    return at


def specs(at: AppTest) -> list[str]:
    return [chart.proto.spec for chart in at.get("plotly_chart")]


def test_two_uploads_never_see_each_others_results() -> None:
    first = upload_session("data.csv", table(0))
    mine = specs(first)
    assert len(mine) == 2  # A heatmap and proportions (no trade-off curves stored)
    metrics = [m.value for m in first.metric]

    second = upload_session("data.csv", table(1))  # same file name and columns, other rows
    theirs = specs(second)
    assert first.session_state["task"].fingerprint != second.session_state["task"].fingerprint
    assert services.result_key("balanced_filtering") is None  # no session outside a script
    assert all(a != b for a, b in zip(mine, theirs, strict=True))
    assert [m.value for m in second.metric] != metrics

    first.run()  # the first visitor's page after the second computed: unchanged
    assert not first.exception
    assert specs(first) == mine and [m.value for m in first.metric] == metrics

    again = upload_session("data.csv", table(0))  # the first table again, in a new session
    assert specs(again) == mine  # the same result, its figures shared rather than rebuilt


def test_shared_values_are_keyed_by_function_and_key() -> None:
    def build(value: int) -> list[int]:
        return [value]

    def other(value: int) -> list[int]:
        return [value, value]

    one = shared(build, ("run", 1), 1)
    assert shared(build, ("run", 1), 99) is one  # the key, not the arguments, names the value
    assert shared(build, ("run", 2), 2) == [2]
    assert shared(other, ("run", 1), 1) == [1, 1]


def test_bundled_tasks_are_shared_per_dataset_and_roles() -> None:
    sessions = {}
    for dataset in ("compas", "german_credit", "compas"):
        at = AppTest.from_file(APP, default_timeout=120)
        at.query_params["dataset"] = dataset
        at.switch_page("views/about.py").run()  # a page that does not rebuild the task
        assert not at.exception
        sessions.setdefault(dataset, []).append(at.session_state["task"])
    first, second = sessions["compas"]
    assert first is second  # one task object for both visitors of compas
    assert sessions["german_credit"][0].name == "german_credit"
    assert first.name == "compas" and first.fingerprint != sessions["german_credit"][0].fingerprint


def test_poll_is_longer_far_back_in_the_queue_and_bounded() -> None:
    running = waiting.poll_seconds(0, workers=2)
    assert running == waiting.poll_seconds(1, workers=2) == waiting.POLL  # runs or is next
    waits = [waiting.poll_seconds(position, workers=2) for position in range(1, 40)]
    assert waits == sorted(waits) and waits[-1] == waiting.MAX_POLL
    assert waiting.poll_seconds(5, workers=2) > waiting.POLL
