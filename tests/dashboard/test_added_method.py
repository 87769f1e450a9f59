"""A method defined only in this test — a constant-rate classifier with its own model type and
metric (:mod:`tests.dashboard.added_model`) — registered through the one shared entry point
(``fairengine.methods.register``): it appears in the CLI (``fairengine methods``, ``run``,
``sweep`` over its declared grid), its models go through the model file format, its metric is in
the metric registry, and it gets a page the dashboard generates from its declaration (knobs, run
with checks and baselines, its plane's numbers, its sweep). Adding it takes no shared file, as
``tools/code_metrics.py`` counts them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fairengine.methods.base import Knob, Method, RunResult
from fairengine.metrics.registry import CLASSIFICATION, MetricInfo
from tests.dashboard.boxes import evidence_shown, page_errors

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
NAME = "constant_rate"


MODEL_MODULE = "tests.dashboard.added_model"


def _run(train, test, *, rate: float) -> RunResult:
    """P(ŷ = 1) = ``rate`` for every row; its own metric on both splits."""
    from fairengine.methods._linear import encode_train
    from tests.dashboard.added_model import ConstantRateModel, predicted_rate

    encoder, _ = encode_train(train)
    model = ConstantRateModel(encoder, rate)
    own = {s: {"predicted_rate": predicted_rate(t.y, model.predict_score(t.X), t.groups)}
           for s, t in (("train", train), ("test", test))}  # fmt: skip
    return RunResult(method=NAME, knobs={"rate": rate}, metrics=own, model=model)


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
    model_types={"constant_rate": MODEL_MODULE},
    metrics=(
        MetricInfo(
            "predicted_rate",
            "Predicted rate",
            True,
            CLASSIFICATION,
            "Mean P(ŷ = 1) over the rows.",
            unit="share of rows",
            module=MODEL_MODULE,
        ),
    ),  # fmt: skip
)


@pytest.fixture
def registered(tmp_path, monkeypatch):
    from fairengine.methods.registry import register, unregister

    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "600")
    monkeypatch.setenv("FAIRENGINE_CHEAP_SECONDS", "1e9")
    from fairengine.models import register_model
    from tests.dashboard.added_model import ConstantRateModel

    register(CONSTANT_RATE)
    register_model(ConstantRateModel)  # again, after an earlier test unregistered it
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
    assert '"predicted_rate": 0.7' in out  # its own metric, on both splits
    assert main(["sweep", NAME, *args]) == 0  # no --grid: its declared "cli" grid
    table = capsys.readouterr().out
    assert "0.3" in table and "0.7" in table


def test_its_model_type_goes_through_the_model_file_format(registered, tmp_path, capsys) -> None:
    from fairengine.cli import main
    from fairengine.data import load_dataset
    from fairengine.export import ModelFileError, load_model, read_manifest, save_model
    from fairengine.methods.registry import unregister
    from tests.dashboard.added_model import ConstantRateModel

    train, test = load_dataset("german_credit").split(random_state=0)
    result = registered.run(train, test, rate=0.7)
    path = save_model(result.model, tmp_path / "m.fairmodel")
    assert read_manifest(path)["model_type"] == "constant_rate"
    loaded = load_model(path)
    assert type(loaded) is ConstantRateModel and loaded.rate == 0.7
    np.testing.assert_array_equal(loaded.predict_score(test.X), result.model.predict_score(test.X))
    assert main(["inspect", str(path), "--json"]) == 0
    assert '"model_type": "constant_rate"' in capsys.readouterr().out
    forged = ConstantRateModel(result.model.encoder, 0.7)
    forged.rate = 2.0  # outside its declared schema: refused before the class is built
    with pytest.raises(ModelFileError, match="rate"):
        load_model(save_model(forged, tmp_path / "forged.fairmodel"))
    unregister(NAME)  # no method declares the type any more: the file cannot name it
    with pytest.raises(ModelFileError, match="unknown model type"):
        load_model(path)


def test_its_metric_is_in_the_metric_registry_while_it_is_registered(registered) -> None:
    from fairengine import metrics
    from fairengine.methods.registry import unregister
    from tests.dashboard.added_model import predicted_rate

    info = metrics.metric_info("predicted_rate")
    assert info.function is predicted_rate and info.unit == "share of rows"
    assert (
        "predicted_rate" in metrics.ALL_METRIC_NAMES
        and metrics.undeclared(["predicted_rate"]) == []
    )
    assert metrics.ordered({"predicted_rate", "error"}) == ["error", "predicted_rate"]
    unregister(NAME)
    assert metrics.undeclared(["predicted_rate"]) == ["predicted_rate"]


def test_adding_it_takes_at_most_two_shared_files() -> None:
    """The count ``tools/code_metrics.py`` prints: shared files (engine, dashboard, docs
    navigation) naming the method. A built-in method needs its registry entry and its guide
    page; this one, registered at run time, needs none."""
    from tests.test_code_metrics import _tool

    tool = _tool()
    assert tool.test_only_methods() == {NAME: "tests/dashboard/test_added_method.py"}
    counts = {n: len(p) for n, p in tool.shared_files((NAME, *tool._method_names())).items()}
    print(counts)
    assert counts[NAME] <= 2
    assert max(counts.values()) <= 2, counts


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
