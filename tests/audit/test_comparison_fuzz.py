"""Comparison files that pass the schema never crash: schema-valid but odd comparisons (empty
lists, missing optional parts, extreme finite numbers, duplicate and unknown names, rows of any
keys) go through loading, the outside models the Compare page draws and the CLI report, and
each either works or raises a :class:`ComparisonError` in words, never another exception."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairengine.audit import audit, cost_of_fairness
from fairengine.audit.comparison import ComparisonError, build_comparison, load_comparison
from fairengine.data import load_dataset
from fairengine.frontier import sweep
from fairengine.report import build_report


@pytest.fixture(scope="module")
def base() -> tuple[dict[str, Any], Any, Any]:
    task = load_dataset("german_credit")
    train, test = task.split()
    rng = np.random.default_rng(0)
    scores = np.clip(0.35 * task.y + 0.65 * rng.random(len(task.y)), 0, 1)
    outside = audit(task, scores=scores, name="v2")
    frontier = sweep("reweighing", train, test, {"strength": [0.0, 1.0]})
    pin = frontier.points["point_id"].iloc[0]
    comparison = build_comparison(task, [frontier], [outside], ["v2", pin])
    return json.loads(json.dumps(comparison.to_dict())), train, test


_NUMBERS = [0.0, -0.0, 1.0, -1.0, 1e308, -1e308, 5e-324, 1e-300, 2.0**63, None]
_NAMES = ["", "v2", "error", "accuracy", "dp_diff", "x" * 300, "é", "0"]
_ONCE = [None]


def _mutations() -> dict[str, Any]:
    """name -> (function(data, value) applying one schema-valid oddity, its values)."""

    def empty(key: str):
        return lambda d, v: d.__setitem__(key, []), _ONCE

    def drop_optional(d: dict, v: Any) -> None:
        for point in d["points"]:
            for key in ("pareto", "cached", "elapsed", "checks", "baselines", "method_version"):
                point.pop(key, None)
        for item in d["outside"]:
            item["curve"], item["checks"], item["baselines"] = None, None, None
        for pin in d["pins"]:
            pin["groups"], pin["card"] = None, None

    def numbers(d: dict, v: Any) -> None:
        for item in [*d["points"], *d["outside"]]:
            for split in item["metrics"].values():
                for key in split:
                    split[key] = v
        for item in d["outside"]:
            item["threshold"] = v
        for task in d["tasks"]:
            task["base_rate"] = v
            for group in task["groups"]:
                group["base_rate"] = v

    def axes(d: dict, v: Any) -> None:
        d["axes"] = [v, d["axes"][1]]

    def same_axes(d: dict, v: Any) -> None:
        d["axes"] = [d["axes"][0], d["axes"][0]]

    def metric_names(d: dict, v: Any) -> None:
        for item in [*d["points"], *d["outside"]]:
            item["metrics"] = {s: {v: 0.5} for s in item["metrics"]}

    def no_splits(d: dict, v: Any) -> None:
        for item in [*d["points"], *d["outside"]]:
            item["metrics"] = {}

    def duplicates(d: dict, v: Any) -> None:
        d["points"] = d["points"] + copy.deepcopy(d["points"])
        d["outside"] = d["outside"] + copy.deepcopy(d["outside"])
        d["pins"] = d["pins"] + copy.deepcopy(d["pins"])
        d["tasks"] = d["tasks"] + copy.deepcopy(d["tasks"])
        for task in d["tasks"]:
            task["groups"] = task["groups"] + copy.deepcopy(task["groups"])

    def rows(d: dict, v: Any) -> None:
        for item in [*d["outside"], *d["pins"]]:
            item["groups"] = [{str(v): v}, {}] if item.get("groups") is not None else None
        for item in d["outside"]:
            item["curve"] = [{"threshold": v}, {str(v): "x"}]

    def outside_names(d: dict, v: Any) -> None:
        for item in d["outside"]:
            item["name"], item["fairness_metric"], item["performance_metric"] = v, v, v
            item["kind"] = v

    def outside_axis(d: dict, v: Any) -> None:  # a name the registry does not declare
        for item in d["outside"]:
            item["fairness_metric"] = v
            for values in item["metrics"].values():
                values[v] = 0.1

    def texts(d: dict, v: Any) -> None:
        for task in d["tasks"]:
            task["kind"], task["name"], task["target"] = v, v, v
            task["sensitive"], task["notes"] = [], []
            task["rows"] = task["train_rows"] = task["test_rows"] = 0
            task["features"] = -1
        for point in d["points"]:
            point["method"] = v
            point["knobs"] = {v: None}

    def checks(d: dict, v: Any) -> None:
        for item in [*d["points"], *d["outside"]]:
            item["checks"] = [{"name": v, "level": v, "sentence": v, "numbers": {v: None}}]

    def baselines(d: dict, v: Any) -> None:
        for item in [*d["points"], *d["outside"]]:
            item["baselines"] = {"learner": "", "constant_label": "", "unconstrained_label": "",
                                 "constant": {}, "unconstrained": {"test": {}}}  # fmt: skip

    return {
        "empty points": empty("points"),
        "empty outside": empty("outside"),
        "empty pins": empty("pins"),
        "empty versions": (lambda d, v: d.__setitem__("versions", {}), _ONCE),
        "optional parts missing": (drop_optional, _ONCE),
        "extreme numbers": (numbers, _NUMBERS),
        "an axis": (axes, _NAMES),
        "the same axis twice": (same_axes, _ONCE),
        "metric names": (metric_names, _NAMES),
        "no splits": (no_splits, _ONCE),
        "duplicates": (duplicates, _ONCE),
        "rows of any keys": (rows, _NUMBERS + _NAMES),
        "outside names": (outside_names, _NAMES),
        "an outside model's axis": (outside_axis, _NAMES),
        "odd texts and counts": (texts, _NAMES),
        "checks": (checks, _NAMES),
        "empty baselines": (baselines, _ONCE),
    }


_MUTATIONS = _mutations()


@st.composite
def _odd(draw) -> list[tuple[str, Any]]:
    names = draw(st.lists(st.sampled_from(sorted(_MUTATIONS)), min_size=1, max_size=4))
    return [(name, draw(st.sampled_from(_MUTATIONS[name][1]))) for name in names]


def _open_everywhere(raw: bytes, train: Any, test: Any) -> None:
    """What reading a comparison does: the CLI report (load, build the report) and the Compare
    page (load for its data, then the outside models it draws)."""
    comparison = load_comparison(raw)
    build_report(comparison, title="fuzz")
    opened = load_comparison(raw, train=train, test=test)
    for audited in opened.audits():  # the page's "what it would cost to be fairer"
        cost_of_fairness(audited, [opened.points])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(odd=_odd())
def test_schema_valid_comparisons_open_or_fail_in_words(base, odd) -> None:
    data, train, test = base
    data = copy.deepcopy(data)
    for name, value in odd:
        _MUTATIONS[name][0](data, value)
    raw = json.dumps(data).encode()
    try:
        _open_everywhere(raw, train, test)
    except ComparisonError as exc:
        assert str(exc) and "Traceback" not in str(exc)


@pytest.mark.parametrize(
    ("name", "value"), [(n, v) for n, (_, values) in sorted(_MUTATIONS.items()) for v in values]
)
def test_each_oddity_alone(base, name, value) -> None:
    """Every oddity with every value once (the fuzz above combines them)."""
    data, train, test = base
    data = copy.deepcopy(data)
    _MUTATIONS[name][0](data, value)
    try:
        _open_everywhere(json.dumps(data).encode(), train, test)
    except ComparisonError as exc:
        assert str(exc)
