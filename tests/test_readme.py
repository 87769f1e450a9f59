"""The README's Python examples: every block compiles, and the engine/API examples that are cheap
enough to run (constraints as objects, ``RobustFairClassifier`` as a scikit-learn estimator) run
as printed on real bundled data and do what the text around them says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def _block(marker: str) -> str:
    found = [b for b in BLOCKS if marker in b]
    assert len(found) == 1, f"one README python block with {marker!r}, found {len(found)}"
    return found[0]


def test_every_python_block_compiles() -> None:
    assert len(BLOCKS) >= 5
    for i, block in enumerate(BLOCKS):
        compile(block, f"README.md python block {i}", "exec")


@pytest.fixture(scope="module")
def constraint_example() -> dict:
    namespace: dict = {}
    exec(compile(_block("class SelectionCap"), "README: constraints as objects", "exec"), namespace)
    return namespace


def test_constraint_object_example_runs_and_caps_selection(constraint_example) -> None:
    ns = constraint_example
    cap, game, oracle = ns["cap"], ns["game"], ns["oracle"]
    rates = cap.gamma(ns["mixture"])
    assert np.all(rates <= 0.12 + 1e-6)  # the mixture meets every group's cap...
    unconstrained = cap.gamma(oracle.best_response(ns["own"]).predict(ns["X"]))
    assert unconstrained.max() > 0.15  # ...which the plain error minimiser breaks
    assert np.all(game.constraints() <= 1e-6)
    np.testing.assert_allclose(game.constraints(), rates - 0.12, atol=1e-9)
    assert cap.names[0] == "selection[a=0]" and cap.dim == len(np.unique(ns["groups"]))


@pytest.fixture(scope="module")
def robust_example() -> dict:
    namespace: dict = {}
    block = _block("RobustFairClassifier(")
    exec(compile(block, "README: RobustFairClassifier", "exec"), namespace)
    return namespace


def test_robust_fair_classifier_example_is_a_sklearn_estimator(robust_example) -> None:
    ns = robust_example
    clf, refit, X = ns["clf"], ns["refit"], ns["X"]
    assert clf.robust_eval_ == "exact" and clf.get_params()["robust_eval"] == "margin"
    assert clf.selection_status_ in ("ok", "fallback")
    assert refit.get_params() == clf.get_params() and refit.robust_eval_ == "margin"
    np.testing.assert_array_equal(refit.candidates_, clf.candidates_)  # clone: the same fit
    np.testing.assert_array_equal(refit.select("exact").predict(X), clf.predict(X))


def test_audit_example_trains_on_the_engines_rows_and_gives_the_held_out_answer(
    tmp_path, monkeypatch, capsys
) -> None:
    """The README's (and the how-to's) audit example: the model never sees a test row, so the
    audit's test error is the model's own error on the held-out rows, and it says so."""
    from fairengine.audit import audit, from_model_file
    from fairengine.cli import main

    docs = (README.parent / "docs" / "howto" / "audit.md").read_text(encoding="utf-8")
    fit_line = '.fit(table.loc[train_ids], task.frame["credit"].loc[train_ids])'
    assert fit_line in docs and ".iloc[:500]" not in docs
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    ns: dict = {}
    exec(compile(_block(fit_line), "README: the audit example", "exec"), ns)
    task, model, train_ids, test_ids = ns["task"], ns["model"], ns["train_ids"], ns["test_ids"]
    assert set(train_ids).isdisjoint(test_ids)
    truth = task.frame.loc[test_ids, "credit"]
    held_out = float(np.mean(model.predict(ns["table"].loc[test_ids]) != truth))
    result = audit(from_model_file(task, "credit_model.skops"), trained_on="engine")
    assert result.metrics["test"]["error"] == pytest.approx(held_out)
    check = next(c for c in result.checks if c.name == "unseen_rows")
    assert check.level == "ok" and check.numbers["unseen_rows"] == len(test_ids)
    argv = [
        "audit",
        "--dataset",
        "german_credit",
        "--model",
        "credit_model.skops",
        "--trained-on",
        "engine",
        "--json",
    ]
    assert "--trained-on engine" in README.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["metrics"]["test"]["error"] == pytest.approx(held_out)
