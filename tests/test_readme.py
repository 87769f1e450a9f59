"""The README's Python examples: every block compiles, and the engine/API examples that are cheap
enough to run (constraints as objects, ``RobustFairClassifier`` as a scikit-learn estimator) run
as printed on real bundled data and do what the text around them says."""

from __future__ import annotations

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
