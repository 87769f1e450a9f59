"""The runs ``fairengine precompute`` ships: every slider position of a method's ``demo_knob`` on
the task its page opens on, and nothing the pages cannot open."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairengine.frontier.demo import (
    DEFAULT_DATASET,
    drop_unused_entries,
    opening_task,
    shipped_knobs,
)
from fairengine.methods import get_method, list_methods
from fairengine.methods.base import Knob
from fairengine.methods.knob_steps import neighbours, slider_values


@pytest.mark.parametrize(
    ("knob", "start", "count"),
    [
        (Knob("a", 0.2, low=0.0, high=1.0, step=0.05), 0.2, 21),
        (Knob("n", 30, low=10, high=100, step=5, integer=True), 30, 19),
        (Knob("c", "b", choices=("a", "b", "c")), "b", 3),
    ],
)
def test_slider_values_are_every_position_one_step_apart(knob: Knob, start, count) -> None:
    values = slider_values(knob, start)
    assert len(values) == count == len(set(values)) and start in values
    if knob.kind != "choice":
        assert values == sorted(values) and values[0] == knob.low and values[-1] == knob.high
        # each position is one widget step from the next: exactly what a visitor reaches
        for low, high in zip(values, values[1:], strict=False):
            assert high in neighbours(knob, low) and low in neighbours(knob, high)


def test_a_log_knob_covers_its_range_on_the_exponent_grid() -> None:
    knob = Knob("eps", 0.05, low=0.001, high=1.0, log=True)
    values = slider_values(knob, 0.05)
    assert values[0] == 0.001 and values[-1] == 1.0 and 0.05 in values
    assert all(b > a for a, b in zip(values, values[1:], strict=False))


@pytest.mark.parametrize("name", list_methods())
def test_the_shipped_settings_move_only_the_demo_knob(name: str) -> None:
    method = get_method(name)
    defaults = method.validate_knobs({})
    assert shipped_knobs(method, False) == [defaults]
    settings = shipped_knobs(method, True)
    assert settings[0] == defaults
    if method.demo_knob is None:
        assert settings == [defaults]
        return
    moved = [s[method.demo_knob] for s in settings]
    assert len(moved) == len(set(moved)) > 2
    for setting in settings:
        assert {k for k in setting if setting[k] != defaults[k]} <= {method.demo_knob}


def test_the_opening_task_is_the_default_dataset_else_the_first_demo_task() -> None:
    default = (DEFAULT_DATASET, None)
    assert opening_task([("law", ("race",)), default]) == default
    assert opening_task([("law", ("race",))]) == ("law", ("race",))
    assert opening_task([]) is None


def test_unused_entries_go_and_runs_stay(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    (runs / "task_a" / "maxent").mkdir(parents=True)
    (runs / "task_a" / "@unconstrained").mkdir()
    (runs / "task_b" / "@unconstrained").mkdir(parents=True)
    (runs / "task_b" / "@unconstrained" / "x.fairrun").write_bytes(b"fit")
    said: list[str] = []
    drop_unused_entries(tmp_path, said.append)
    assert sorted(p.name for p in runs.iterdir()) == ["task_a"]
    assert (runs / "task_a" / "@unconstrained").is_dir() and len(said) == 1
    drop_unused_entries(tmp_path / "nothing here", said.append)  # no runs folder: nothing to do


def test_a_demo_task_that_is_the_opening_task_ships_the_same_runs(monkeypatch) -> None:
    """Max-entropy's demo task (Adult, sex) is the task the default dataset resolves to: both
    ship the slider runs, so a second precompute keeps them instead of removing and refitting."""
    from fairengine.frontier import demo

    calls: list[tuple[str, list[str], bool]] = []
    monkeypatch.setattr(demo._Writer, "frontiers", lambda *args: None)
    monkeypatch.setattr(
        demo._Writer,
        "default_run",
        lambda self, method, task, record, opening=False: calls.append(
            (record["dataset"], record["sensitive"], opening)
        ),
    )
    monkeypatch.setattr(demo, "drop_unused_entries", lambda *args: None)
    demo.precompute(Path("/nonexistent"), ["maxent"], log=lambda _: None)
    assert calls and all(opening for _, _, opening in calls)
    assert {(dataset, tuple(sensitive)) for dataset, sensitive, _ in calls} == {("adult", ("sex",))}
