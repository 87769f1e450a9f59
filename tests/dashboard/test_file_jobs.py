"""Work on a visitor's file runs in the pool (:func:`dashboard.components.runner.job_value`):
a failure is said again on every rerun without running the file again, until the visitor asks
again; the values come back as plain data."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest


def refuse(marker: str) -> None:
    """A file that cannot be read: notes each attempt, then fails in words."""
    from fairengine.data import DataError

    with open(marker, "a") as out:
        out.write("attempt\n")
    raise DataError("This file cannot be read: it is hostile.")


def _page() -> None:
    import streamlit as st

    from dashboard.components import runner
    from tests.dashboard.test_file_jobs import refuse

    retry = st.button("again", key="again")
    status, value = runner.job_value(
        "t", "Reading", "key-1", refuse, st.session_state["marker"], start=True, retry=retry
    )
    st.session_state["outcome"] = (status, str(value))


@pytest.fixture
def page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[AppTest, Path]:
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "120")  # await the job inline
    marker = tmp_path / "attempts.txt"
    at = AppTest.from_function(_page, default_timeout=150)
    at.session_state["marker"] = str(marker)
    return at, marker


def test_a_failed_file_is_not_read_again_on_every_rerun(page) -> None:
    at, marker = page
    at.run()
    assert at.session_state["outcome"] == ("error", "This file cannot be read: it is hostile.")
    at.run()
    at.run()
    assert at.session_state["outcome"][0] == "error"
    assert marker.read_text().count("attempt") == 1
    at.button(key="again").click().run()  # the visitor asks again: read once more
    assert marker.read_text().count("attempt") == 2


def test_a_models_values_come_back_as_plain_data() -> None:
    from dashboard.components.upload_jobs import outside_values, scored_task
    from fairengine.data import load_dataset

    task = load_dataset("german_credit")
    ids = ",".join(["row", "p"])
    rows = [ids, *(f"{i},{(i % 10) / 10}" for i in range(len(task.frame)))]
    found = outside_values(task, "\n".join(rows).encode(), "p.csv", "file", id_column="row")
    assert set(found) == {"values", "kind", "source", "features", "notes"}
    assert found["values"].dtype.kind == "f" and len(found["values"]) == len(task.frame)
    assert all(isinstance(x, str) for x in (found["kind"], found["source"], *found["features"]))
    assert found["kind"] == "scores"
    rebuilt = scored_task(task, found)
    assert rebuilt.features == found["features"] and rebuilt.fingerprint == task.fingerprint
