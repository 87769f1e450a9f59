"""The Data page and the app-level guard against hostile uploads, under AppTest."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.hostile_text import shown

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")

FIVE_CLASS = "\n".join(
    ["age,gender,grade"]
    + [f"{20 + i % 40},{'f' if i % 3 else 'm'},{'ABCDE'[i % 5]}" for i in range(150)]
).encode()


@pytest.fixture
def upload_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.radio(key="w.source").set_value("upload").run()
    return at


def test_multiclass_target_offers_one_vs_rest(upload_page: AppTest) -> None:
    at = upload_page
    at.file_uploader[0].set_value(("grades.csv", FIVE_CLASS, "text/csv")).run()
    assert not at.exception and not at.error  # no two-valued column: the page asks, no error
    assert at.selectbox(key="w.target").value is None
    at.selectbox(key="w.target").set_value("grade").run()
    assert not at.exception
    assert any("count as positive" in shown(e.value) for e in at.error)
    at.multiselect(key="w.positive_values").set_value(["A", "B"]).run()
    assert not at.exception and not at.error
    task = at.session_state["task"]
    assert task.positive_values == ("A", "B") and task.y.mean() == pytest.approx(0.4)
    assert any(m.label == "P(grade = A or B)" for m in at.metric)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("名前,y\n山田,0\n田中,1\n佐藤,0\n鈴木,1\n".encode("shift_jis"), "shift_jis"),
        (b"a,b,c\n1,2,3\n4,5\n", "line 3 has 2 fields"),
        (b"b,c\n1,2,3\n4,5,6\n", "one column has no name"),
    ],
)
def test_hostile_upload_is_explained(upload_page: AppTest, payload: bytes, message: str) -> None:
    upload_page.file_uploader[0].set_value(("odd.csv", payload, "text/csv")).run()
    assert not upload_page.exception
    assert any(message in shown(e.value) for e in upload_page.error)


def _break_the_engine(upload_page: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unexpected error (not a DataError) while the Data page builds the task."""
    from dashboard.components import cached

    def broken(*args, **kwargs):
        raise RuntimeError("solver exploded in /srv/secret/path.py")

    monkeypatch.setattr(cached, "from_frame", broken)
    payload = FIVE_CLASS.replace(b"grade", b"level")  # a new upload: not served from the cache
    upload_page.file_uploader[0].set_value(("boom.csv", payload, "text/csv")).run()
    upload_page.selectbox(key="w.target").set_value("level").run()
    upload_page.multiselect(key="w.positive_values").set_value(["A"]).run()


def _page_text(at: AppTest) -> str:
    parts = [e.value for e in at.error] + [c.value for c in at.get("code")]
    parts += [x.label for x in at.expander]
    return "\n".join(parts)


def test_unexpected_error_shows_an_id_and_logs_the_details(
    upload_page: AppTest, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import platform
    import re

    monkeypatch.delenv("FAIRENGINE_DEBUG", raising=False)
    with caplog.at_level("ERROR", logger="fairengine.dashboard"):
        _break_the_engine(upload_page, monkeypatch)
    assert not upload_page.exception  # no redacted Streamlit error box
    messages = [e.value for e in upload_page.error if "Something went wrong" in e.value]
    assert len(messages) == 1
    error_id = re.search(r"error id ([0-9a-f]{8})\b", messages[0]).group(1)
    page = _page_text(upload_page)
    for secret in ("Traceback", "solver exploded", "/srv/secret", "RuntimeError", ".py"):
        assert secret not in page, secret
    assert platform.platform() not in page and platform.python_version() not in page
    assert not [x for x in upload_page.expander if x.label.startswith("Report")]
    # The server log has the details under the same id.
    logged = [r for r in caplog.records if error_id in r.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info is not None
    assert "solver exploded" in str(logged[0].exc_info[1])
    assert platform.python_version() in logged[0].getMessage()
    print(f"error id {error_id} on the page and in {len(logged)} log record")


@pytest.mark.parametrize(("demo", "report"), [("0", True), ("1", False)])
def test_debug_setting_shows_the_report_except_in_demo_mode(
    upload_page: AppTest, monkeypatch: pytest.MonkeyPatch, demo: str, report: bool
) -> None:
    monkeypatch.setenv("FAIRENGINE_DEBUG", "1")
    monkeypatch.setenv("FAIRENGINE_DEMO", demo)
    _break_the_engine(upload_page, monkeypatch)
    reports = [x for x in upload_page.expander if x.label.startswith("Report")]
    assert bool(reports) is report
    page = _page_text(upload_page)
    assert ("Traceback" in page) is report and ("solver exploded" in page) is report


def test_refused_encoding_can_be_chosen(upload_page: AppTest) -> None:
    at = upload_page
    rows = [f"{'山田田中'[i % 4]},{'男女'[i % 2]},{i % 3 % 2}" for i in range(60)]
    payload = "\n".join(["名前,性別,y", *rows]).encode("shift_jis")
    at.file_uploader[0].set_value(("jp.csv", payload, "text/csv")).run()
    assert any("shift_jis" in shown(e.value) for e in at.error)
    at.selectbox(key="w.encoding").set_value("shift_jis").run()
    assert not at.exception
    at.selectbox(key="w.target").set_value("y").run()
    at.multiselect(key="w.sensitive").set_value(["性別"]).run()
    assert not at.error
    assert at.session_state["task"].group_names == ("女", "男")


def test_read_notes_reach_the_page(upload_page: AppTest) -> None:
    rows = [
        f"{20 + i % 40};{'fm'[i % 2]};{i % 7},{i};{'yes' if i % 4 == 0 else 'no'};"
        for i in range(80)
    ]
    payload = "\n".join(["age;gender;score;approved", *rows]).encode()
    upload_page.file_uploader[0].set_value(("notes.csv", payload, "text/csv")).run()
    assert not upload_page.error
    infos = " ".join(i.value for i in upload_page.info)
    assert "end of every data row" in infos and "decimal commas" in infos
    assert upload_page.session_state["task"].frame["score"].dtype == float


def test_one_group_sensitive_upload_is_an_error_not_a_swap(upload_page: AppTest) -> None:
    rows = [f"{20 + i % 40},f,{'ab'[i % 2]},{i % 2}" for i in range(60)]
    payload = "\n".join(["age,gender,region,approved", *rows]).encode()
    upload_page.file_uploader[0].set_value(("one.csv", payload, "text/csv")).run()
    # The guess avoids a one-group column; chosen by hand, it is an error, not a swap.
    assert upload_page.multiselect(key="w.sensitive").value != ["gender"]
    upload_page.multiselect(key="w.sensitive").set_value(["gender"]).run()
    assert upload_page.multiselect(key="w.sensitive").value == ["gender"]
    assert any("single group" in e.value for e in upload_page.error)
    assert "task" not in upload_page.session_state or upload_page.session_state["task"] is None
