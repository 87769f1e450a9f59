"""A method defined only in this test — a constant-rate classifier — registered through the one
shared entry point (``fairengine.methods.register``): it appears in the CLI (``fairengine methods``,
``run``, ``sweep`` over its declared grid) and on a page the dashboard generates from its
declaration (knobs, run with checks and baselines, its plane's numbers, its sweep)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fairengine.methods.base import Knob, Method, RunResult
from tests.dashboard.boxes import evidence_shown, page_errors

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
NAME = "constant_rate"


def _run(train, test, *, rate: float) -> RunResult:
    """P(ŷ = 1) = ``rate`` for every row: a linear model with no weights."""
    from fairengine.methods._linear import encode_train
    from fairengine.models import LinearClassifier

    encoder, Z = encode_train(train)
    model = LinearClassifier(encoder, np.zeros(Z.shape[1]), float(np.log(rate / (1 - rate))))
    return RunResult(
        method=NAME, knobs={"rate": rate}, metrics={"train": {}, "test": {}}, model=model
    )


GRID = {"rate": (0.3, 0.7)}
CONSTANT_RATE = Method(
    name=NAME,
    title="Constant rate",
    seed=None,
    kinds=("classification",),
    knobs=(
        Knob(
            "rate",
            0.3,
            0.05,
            0.95,
            0.05,
            label="Predicted rate",
            help="P(ŷ = 1) the model gives every row.",
        ),
    ),  # fmt: skip
    fairness_metric="dp_diff",
    performance_metric="error",
    run_function=_run,
    description="Predicts the same probability for every row: fair by construction.",
    reference="A method defined in a test",
    sweep_grids={"page": GRID, "cli": GRID},
)


@pytest.fixture
def registered(tmp_path, monkeypatch):
    from fairengine.methods.registry import register, unregister

    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "600")
    monkeypatch.setenv("FAIRENGINE_CHEAP_SECONDS", "1e9")
    register(CONSTANT_RATE)
    yield CONSTANT_RATE
    unregister(NAME)


def test_it_is_listed_run_and_swept_by_the_cli(registered, capsys) -> None:
    from fairengine.cli import main

    assert main(["methods"]) == 0
    assert f"{NAME}  " in capsys.readouterr().out
    args = ["--dataset", "german_credit", "--no-cache"]
    assert main(["run", NAME, *args, "--set", "rate=0.7", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"rate": 0.7' in out and '"dp_diff": 0.0' in out  # fair by construction
    assert main(["sweep", NAME, *args]) == 0  # no --grid: its declared "cli" grid
    table = capsys.readouterr().out
    assert "0.3" in table and "0.7" in table


def _open_generated_page(at: AppTest) -> None:
    """Switch to the page registered under the url path ``constant_rate``: a generated page is
    a function, not a file, so ``AppTest.switch_page`` (which takes a file) cannot name it."""
    pages = [h for h, info in at._registered_pages.items() if info.get("url_pathname") == NAME]
    assert len(pages) == 1, at._registered_pages
    at._page_hash = pages[0]


def test_it_gets_a_generated_page_that_runs_and_sweeps(registered) -> None:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["dataset"] = "german_credit"
    at.run()
    _open_generated_page(at)
    at.run()
    assert not at.exception and not page_errors(at)
    assert at.title[0].value == "Constant rate"
    assert at.slider(key=f"w.{NAME}.rate").value == 0.3
    assert evidence_shown(at)  # the shared checks and baselines of Method.run
    labels = {m.label for m in at.metric}
    assert {"Error rate (test)", "Demographic parity difference (test)"} <= labels
    dp = next(m for m in at.metric if m.label.startswith("Demographic parity"))
    assert float(dp.value) == 0.0
    at.slider(key=f"w.{NAME}.rate").set_value(0.7).run()  # a knob change refits
    assert at.session_state[f"runner.state.{NAME}"]["result"].knobs == {"rate": 0.7}
    at.button(key=f"runner.sweep.{NAME}").click().run()  # the declared page grid
    assert not at.exception and not page_errors(at)
    assert len(at.get("plotly_chart")) >= 1
    how_to = next(e for e in at.expander if "How to read" in e.label)
    assert "Predicted rate" in how_to.markdown[0].value  # the guide written from the knobs
