"""What every method declares for pages, the CLI and the demo: its task preconditions
(``Method.check``), its named sweep grids and which knobs are advanced."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pytest

from fairengine import load_dataset
from fairengine.data import DataError, from_frame
from fairengine.methods import get_method, list_methods
from fairengine.methods.base import GRID_NAMES

PAGE_METHODS = ("balanced_filtering", "maxent", "fair_regression", "noisy_groups",
                "multiaccurate_proxy")  # fmt: skip


def _synthetic(n_groups: int, kind: str, rows_per_group: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = n_groups * rows_per_group
    y = rng.integers(0, 2, n) if kind == "classification" else rng.normal(size=n)
    return pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "g": np.repeat([f"group {i}" for i in range(n_groups)], rows_per_group),
            "y": y,
        }
    )


@pytest.fixture(scope="module")
def regression_task():
    return load_dataset("law_school")


@pytest.fixture(scope="module")
def classification_task():
    return load_dataset("adult")


@pytest.mark.parametrize("name", PAGE_METHODS)
def test_check_accepts_the_methods_own_demo_task(name: str) -> None:
    method = get_method(name)
    dataset, sensitive = method.demo_tasks[0]
    task = load_dataset(dataset, sensitive=list(sensitive) if sensitive else None)
    method.check(task)  # no DataError


@pytest.mark.parametrize("name", ["maxent", "noisy_groups", "multiaccurate_proxy"])
def test_check_rejects_a_regression_target_in_plain_words(name, regression_task) -> None:
    with pytest.raises(DataError, match="needs a binary target.*Choose another target"):
        get_method(name).check(regression_task)


def test_fair_regression_rejects_a_classification_target(classification_task) -> None:
    with pytest.raises(DataError, match="needs a real-valued target"):
        get_method("fair_regression").check(classification_task)


def test_maxent_needs_exactly_two_groups() -> None:
    task = load_dataset("compas")  # race: six groups
    with pytest.raises(DataError, match="exactly two groups.*merge the groups"):
        get_method("maxent").check(task)


def test_balanced_filtering_rejects_too_many_groups_and_takes_regression() -> None:
    method = get_method("balanced_filtering")
    many = from_frame(_synthetic(25, "classification"), target="y", sensitive="g")
    with pytest.raises(DataError, match="2 to 20 sensitive groups.*merge rare groups"):
        method.check(many)
    method.check(from_frame(_synthetic(3, "regression"), target="y", sensitive="g"))


def test_run_asks_check_before_fitting() -> None:
    """A bad task fails in ``run`` with the same words, before any fit."""
    task = load_dataset("compas")
    train, test = task.split()
    with pytest.raises(DataError, match="exactly two groups"):
        get_method("maxent").run(train, test)


@pytest.mark.parametrize("name", PAGE_METHODS)
def test_page_and_cli_sweep_the_same_grid_object(name: str) -> None:
    method = get_method(name)
    assert set(GRID_NAMES) <= set(method.sweep_grids)
    assert method.grid("page") is method.grid("cli")
    assert method.demo_grid is method.grid("demo")
    for grid in method.sweep_grids.values():  # every value is a valid setting of its knob
        for knob, values in grid.items():
            assert values, (name, knob)
            for value in values:
                method.knob(knob).validate(value)


def test_every_method_has_a_cli_grid_the_cli_sweeps_by_default() -> None:
    from fairengine.cli.main import _grid

    for name in list_methods():
        method = get_method(name)
        args = argparse.Namespace(grid=[], set=[])
        assert _grid(args, method) == {k: list(v) for k, v in method.grid("cli").items()}
    # --set takes a knob out of the default grid and fixes it
    args = argparse.Namespace(grid=[], set=["method=dro"])
    grid = _grid(args, get_method("noisy_groups"))
    assert grid["method"] == ["dro"] and len(grid["noise"]) == 5


def test_unknown_grid_names_the_declared_ones() -> None:
    from fairengine.methods import KnobError

    with pytest.raises(KnobError, match="declares no 'spread'.*page, cli, demo"):
        get_method("maxent").grid("spread")


def test_advanced_knobs_are_declared_and_the_main_ones_stay_few() -> None:
    """Every page method keeps at most 13 knobs outside its Advanced expander."""
    for name in PAGE_METHODS:
        method = get_method(name)
        main = [k.name for k in method.knobs if not k.advanced]
        assert 1 <= len(main) <= 13, (name, main)
    assert [k.name for k in get_method("balanced_filtering").knobs if not k.advanced] == ["alpha"]
