"""The Data page under streamlit.testing.v1.AppTest."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.hostile_text import shown
from tests.upload_tables import arrests_like

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")

ROWS = [
    f"{20 + i % 40};{'f' if i % 3 else 'm'};{i % 7 / 7:.3f};{'yes' if i % 4 == 0 else 'no'}"
    for i in range(120)
]
GOOD_CSV = "\n".join(["age;gender;score;approved", *ROWS]).encode()


@pytest.fixture
def app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def sidebar_text(at: AppTest) -> str:
    return "\n".join(m.value for m in at.sidebar.markdown)


def task_name(at: AppTest) -> str | None:
    """Name of the task the sidebar shows.

    AppTest drops the sidebar of an ``st.navigation`` app on reruns (the first run has it; a real
    browser always does, see the e2e tests), so reruns check the state the sidebar renders.
    """
    task = at.session_state["task"] if "task" in at.session_state else None  # noqa: SIM401
    return None if task is None else task.name


def test_opens_on_adult(app: AppTest) -> None:
    assert not app.error
    assert metrics(app)["Rows"] == "48,842"
    assert metrics(app)["Groups"] == "2"
    assert "**adult**" in sidebar_text(app)
    assert len(app.get("plotly_chart")) == 2


def test_group_table_describes_the_data_only(app: AppTest) -> None:
    table = next(d.value for d in app.dataframe if "share" in d.value.columns)
    assert list(table.columns) == ["n", "share", "base_rate", "base_rate_low", "base_rate_high"]
    assert 0.0 < table.loc["overall", "base_rate"] < 0.5  # Adult: about 24% earn > 50K
    assert not {"accuracy", "tpr", "fpr", "selection_rate"} & set(table.columns)


def test_pick_dataset_updates_task_and_url(app: AppTest) -> None:
    app.selectbox(key="w.dataset").set_value("compas").run()
    assert not app.exception and not app.error
    assert metrics(app)["Rows"] == "6,172"
    assert task_name(app) == "compas"
    assert app.query_params["dataset"] == "compas"
    assert app.multiselect(key="w.sensitive").value == ["race"]


def test_change_sensitive_attribute(app: AppTest) -> None:
    app.multiselect(key="w.sensitive").set_value(["race"]).run()
    assert metrics(app)["Groups"] == "5"
    app.multiselect(key="w.sensitive").set_value(["sex", "race"]).run()
    assert metrics(app)["Groups"] == "10"
    assert app.session_state["task"].n_groups == 10
    app.multiselect(key="w.sensitive").set_value([]).run()
    assert not app.error  # a question, not an error
    assert any("at least one sensitive" in i.value for i in app.info)
    assert task_name(app) is None


def test_small_groups_error_then_merge(app: AppTest) -> None:
    app.selectbox(key="w.dataset").set_value("compas").run()
    app.multiselect(key="w.sensitive").set_value(["race", "sex"]).run()
    assert "fewer than 10 rows" in app.error[0].value
    app.checkbox(key="w.merge_small").check().run()
    assert not app.error
    assert metrics(app)["Groups"] == "10"


def test_query_param_opens_dataset() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["dataset"] = "german_credit"
    at.run()
    assert metrics(at)["Rows"] == "1,000"
    bad = AppTest.from_file(APP, default_timeout=60)
    bad.query_params["dataset"] = "nope"
    bad.run()
    assert "Unknown dataset 'nope'" in shown(bad.warning[0].value)
    assert metrics(bad)["Rows"] == "48,842"


def test_upload_good_csv(app: AppTest) -> None:
    app.radio(key="w.source").set_value("upload").run()
    app.file_uploader[0].set_value(("people.csv", GOOD_CSV, "text/csv")).run()
    assert not app.exception and not app.error
    assert app.selectbox(key="w.target").value == "approved"
    assert app.multiselect(key="w.sensitive").value == ["gender"]
    assert metrics(app)["Rows"] == "120"
    assert metrics(app)["P(approved = yes)"] == f"{30 / 120:.3f}"
    assert task_name(app) == "people"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"", "empty"),
        (b'a,b\n1,"2\n', "cannot be parsed"),
        (b"x,x,y\n1,2,3\n", "duplicate column names"),
    ],
)
def test_upload_malformed_file_shows_error(app: AppTest, payload: bytes, message: str) -> None:
    app.radio(key="w.source").set_value("upload").run()
    app.file_uploader[0].set_value(("bad.csv", payload, "text/csv")).run()
    assert not app.exception
    assert any(message in e.value for e in app.error)
    assert task_name(app) is None


def test_upload_with_missing_sensitive_values(app: AppTest) -> None:
    lines = GOOD_CSV.decode().splitlines()
    lines[5] = lines[5].replace(";f;", ";;").replace(";m;", ";;")
    app.radio(key="w.source").set_value("upload").run()
    app.file_uploader[0].set_value(("gaps.csv", "\n".join(lines).encode(), "text/csv")).run()
    assert "1 row(s)" in shown(app.error[0].value)
    app.checkbox(key="w.drop_missing").check().run()
    assert not app.error
    assert metrics(app)["Rows"] == "119"
    assert any("Dropped 1 row" in i.value for i in app.info)


def test_selections_survive_page_switch(app: AppTest) -> None:
    app.selectbox(key="w.dataset").set_value("bank_marketing").run()
    app.switch_page("views/about.py").run()
    assert not app.exception
    assert task_name(app) == "bank_marketing"
    app.switch_page("views/data.py").run()
    assert app.selectbox(key="w.dataset").value == "bank_marketing"
    assert metrics(app)["Rows"] == "45,203"


def _upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.radio(key="w.source").set_value("upload").run()
    at.file_uploader[0].set_value((name, data, "text/csv")).run()
    assert not at.exception
    return at


ARRESTS_CSV = arrests_like().to_csv(index=False).encode()


def test_first_upload_opens_on_the_guessed_two_valued_target_and_colour(app: AppTest) -> None:
    _upload(app, "arrests.csv", ARRESTS_CSV)
    assert not app.error
    assert app.selectbox(key="w.target").value == "released"  # not the last column, a count
    assert app.multiselect(key="w.sensitive").value == ["colour"]
    said = [shown(i.value) for i in app.info if i.value.startswith("Guessed")]
    assert said == [
        "Guessed the target 'released' (two values, named like an outcome) and the sensitive "
        "attribute 'colour' (named like a protected attribute; also 'sex', 'citizen'). Change "
        "them below."
    ]
    task = app.session_state["task"]
    assert task.kind == "classification" and task.target == "released" and task.n_groups == 2
    # the address names the upload and its roles, never a bundled dataset
    assert dict(app.query_params) == {
        "data": "upload",
        "name": "arrests.csv",
        "target": "released",
        "sensitive": "colour",
    }
    # the line speaks of the guess only while the roles are the guessed ones
    app.multiselect(key="w.sensitive").set_value(["sex"]).run()
    assert not [i for i in app.info if i.value.startswith("Guessed")]
    assert app.query_params["sensitive"] == "sex"


def test_a_count_target_chosen_by_hand_is_explained_in_words(app: AppTest) -> None:
    _upload(app, "arrests.csv", ARRESTS_CSV)
    app.selectbox(key="w.target").set_value("checks").run()
    message = shown(app.error[0].value)
    assert "'checks' has 7 values: 0, 1, 2, 3, 4, 5, …;" in message
    assert "from_frame" not in message and "positive_label" not in message and "=[" not in message


def test_a_table_without_a_two_valued_column_asks_for_the_target_without_an_error(
    app: AppTest,
) -> None:
    rows = [f"{i % 5},{i * 0.37:.2f},{'abc'[i % 3]}" for i in range(150)]
    _upload(app, "scores.csv", "\n".join(["grade,score,region", *rows]).encode())
    assert not app.error
    assert app.selectbox(key="w.target").value is None
    assert any("Choose the target" in i.value for i in app.info)
    assert task_name(app) is None and app.query_params["data"] == "upload"
    app.selectbox(key="w.target").set_value("score").run()
    # no column is named like a protected attribute: the page asks, few-valued columns first
    assert app.multiselect(key="w.sensitive").value == []
    assert app.multiselect(key="w.sensitive").options[:2] == ["grade", "region"]
    app.multiselect(key="w.sensitive").set_value(["region"]).run()
    assert not app.error and app.session_state["task"].kind == "regression"


def test_a_link_to_an_upload_asks_for_the_file_and_keeps_its_roles() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(
        {"data": "upload", "name": "arrests.csv", "target": "released", "sensitive": "sex"}
    )
    at.run()
    assert not at.exception and not at.error
    assert [shown(w.value) for w in at.warning] == [
        "This link refers to an uploaded table (arrests.csv), which is not kept on the server. "
        "Upload it again to continue."
    ]
    assert at.session_state["task"] is None and not at.metric  # Adult was not loaded
    assert at.query_params["data"] == "upload" and at.query_params["name"] == "arrests.csv"
    at.file_uploader[0].set_value(("arrests.csv", ARRESTS_CSV, "text/csv")).run()
    assert not at.error
    assert at.multiselect(key="w.sensitive").value == ["sex"]  # the link's roles, not the guess
    assert at.session_state["task"].sensitive == ("sex",)
