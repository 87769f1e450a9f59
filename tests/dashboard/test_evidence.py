"""The evidence box of a result (dashboard/components/evidence.py) and the Compare page's
baselines toggle and failed-check marks, under AppTest."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.components.comparison import point_result
from fairengine.data import load_dataset
from fairengine.export import result_metadata
from fairengine.frontier import FrontierStore, sweep, task_key
from fairengine.methods import get_method
from fairengine.methods.evidence import Check

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
HOSTILE = "group <b>x</b> *y* [link](https://evil.example) :red[z]"


def _box_script() -> None:
    """A forged result with one check of each level and baselines, drawn by show_evidence."""
    import streamlit as st

    from dashboard.components.evidence import show_evidence
    from fairengine.methods.base import RunResult
    from fairengine.methods.evidence import Baselines, Check

    level = st.session_state.get("level", "mixed")
    checks = {
        "mixed": (
            Check("held_out_constraint", "fail", "Constraint broken for " + HOSTILE, {"gap": 0.3}),
            Check("convergence", "warn", "Stopped at the iteration cap.", {"iterations": 50}),
            Check("constant_predictions", "ok", "Predictions vary.", {"share": 0.7}),
        ),
        "ok": (
            Check("constant_predictions", "ok", "Predictions vary.", {"share": 0.7}),
            Check("no_better_than_constant", "ok", "Beats the constant.", {"error": 0.2}),
        ),
    }[level]
    baselines = Baselines(
        learner="logistic regression (C = 1)",
        constant={s: {"error": 0.3, "true_violation": 0.0} for s in ("train", "test")},
        unconstrained={s: {"error": 0.22, "true_violation": 0.12} for s in ("train", "test")},
        constant_label="always 1 (the training majority class)",
        unconstrained_label="unconstrained " + HOSTILE,
    )
    metrics = {s: {"error": 0.25, "true_violation": 0.02} for s in ("train", "test")}
    result = RunResult("noisy_groups", {}, metrics, None, checks=checks, baselines=baselines)
    show_evidence(result, None, None)  # evidence present: the rows are not needed


HOSTILE_SRC = f"HOSTILE = {HOSTILE!r}\n"


def test_fail_is_an_error_warn_a_warning_and_the_numbers_are_in_an_expander() -> None:
    at = AppTest.from_string(
        HOSTILE_SRC + _source(_box_script) + "\n_box_script()\n", default_timeout=60
    )
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and "Check failed" in at.error[0].value
    assert len(at.warning) == 1 and "iteration cap" in at.warning[0].value
    assert not at.success  # not every check held: no "all held" line
    assert any("1 other check held" in c.value for c in at.caption)
    # hostile group names are shown as text: no HTML, link or directive can form
    assert "<b>" not in at.error[0].value and "](https" not in at.error[0].value
    assert "\\<b\\>" in at.error[0].value and "\\:red\\[" in at.error[0].value.replace("\u2060", "")
    # the baselines: one line at once, the table and the reference plane in the expander
    assert any("Baselines on the same test rows" in c.value for c in at.caption)
    expander = at.expander[0]
    assert "Checks and baselines" in expander.label
    tables = [m.value for m in expander.markdown if m.value.startswith("|")]
    assert any("held out constraint" in t and "gap \\= 0\\.3" in t for t in tables)
    assert any("this run" in t and "always 1" in t and "0.22" in t for t in tables)
    assert not at.get("plotly_chart")  # the plane is drawn on demand
    at.toggle(key="evidence.plane.noisy_groups").set_value(True).run()
    spec = at.expander[0].get("plotly_chart")[0].proto.spec
    assert "this run" in spec and "&lt;b&gt;" in spec and "<b>x</b>" not in spec


def test_all_checks_held_is_one_success_line() -> None:
    script = HOSTILE_SRC + _source(_box_script) + "\n"
    at = AppTest.from_string(
        script + "st.session_state['level'] = 'ok'\n_box_script()\n", default_timeout=60
    )
    at.run()
    assert not at.exception and not at.error and not at.warning
    assert len(at.success) == 1
    assert "All 2 checks held on the test rows" in at.success[0].value


def _source(function) -> str:
    import inspect
    import textwrap

    return "import streamlit as st\n" + textwrap.dedent(inspect.getsource(function))


# -- Compare ------------------------------------------------------------------------------------


@pytest.fixture
def cache(tmp_path, monkeypatch) -> FrontierStore:
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "600")
    store = FrontierStore(tmp_path / "cache")
    train, test = load_dataset("german_credit").split()
    sweep("reweighing", train, test, {"strength": [0.0, 1.0]}, store=store)
    forged = get_method("reweighing").run(train, test, strength=0.5)
    forged = dataclasses.replace(
        forged,
        checks=(Check("forged_failure", "fail", "Forged failure for " + HOSTILE, {"x": 1.0}),),
    )
    store.put(task_key(train, test), forged, result_metadata(forged, train, test))
    # the page keeps results by point key for the whole process: another test may have shown
    # the same (unforged) point before
    point_result.clear()
    return store


def test_compare_draws_baselines_and_crosses_out_failed_points(cache: FrontierStore) -> None:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["dataset"] = "german_credit"
    at.run()
    at.switch_page("views/compare.py").run()
    assert not at.exception
    toggle = at.toggle(key="cmp_baselines")
    assert toggle.value is True
    spec = at.get("plotly_chart")[0].proto.spec
    assert "always 0" in spec or "always 1" in spec  # the constant predictor
    assert "unconstrained logistic regression" in spec
    assert "check failed" in spec and "forged failure" in spec
    assert any("crossed out" in c.value for c in at.caption)

    at.toggle(key="cmp_baselines").set_value(False).run()
    spec = at.get("plotly_chart")[0].proto.spec
    assert "unconstrained logistic regression" not in spec and "check failed" in spec

    train, test = load_dataset("german_credit").split()
    forged = next(
        p.point_id for p in cache.points(task_key(train, test)) if p.knobs["strength"] == 0.5
    )
    at.selectbox(key="w.cmp_point").set_value(forged).run()
    assert not at.exception
    assert any("Forged failure" in e.value for e in at.error)
    at.multiselect(key="cmp_pinned").set_value([forged]).run()
    assert not at.exception
    pinned = next(d.value for d in at.dataframe if "checks" in d.value.index)
    assert "failed: forged failure" in pinned.loc["checks"].tolist()
