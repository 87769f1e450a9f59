""" "Add to comparison": put a method page's current single run on the Compare page's chart; and
the evidence the Compare page draws for cached points (failed checks, baselines on the plane)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import streamlit as st

from dashboard.components import cached
from dashboard.components.evidence import LEVEL_WORDS
from fairengine.data import Task
from fairengine.export import result_metadata
from fairengine.frontier import task_key
from fairengine.methods import get_method
from fairengine.methods.base import RunResult, stored_result
from fairengine.methods.evidence import (
    Baselines,
    Check,
    Evidence,
    evidence_from_dict,
    predictor_baselines,
)


def remember_for_compare(method: str, point_id: str | None = None) -> None:
    """Make sure the Compare page's method filter shows ``method`` (and select ``point_id``)."""
    shown = st.session_state.get("sel.cmp_methods")
    if isinstance(shown, list) and method not in shown:
        st.session_state["sel.cmp_methods"] = [*shown, method]
        st.session_state.pop("w.cmp_methods", None)
    if point_id is not None:
        st.session_state["sel.cmp_point"] = point_id
        st.session_state.pop("w.cmp_point", None)


def add_to_comparison(result: RunResult, train: Task, test: Task, *, key: str) -> None:
    """A button that stores ``result`` in the frontier cache as one more point of its method."""
    if not st.button(
        "Add to comparison",
        key=key,
        icon=":material/add_chart:",
        help="Store this run in the frontier cache so the Compare & export page plots it beside "
        "every other method on this task.",
    ):
        return
    store = cached.frontier_store()
    tkey = task_key(train, test)
    store.put(tkey, result, result_metadata(result, train, test))
    point = store.get(tkey, result.method, result.knobs)
    remember_for_compare(result.method, point.point_id if point else None)
    st.success("Added to the comparison.")
    st.page_link("views/compare.py", label="Open Compare & export", icon=":material/show_chart:")


# -- evidence on the Compare plane ---------------------------------------------------------------


def point_evidence(point: Any) -> tuple[tuple[Check, ...], Baselines | None] | None:
    """A cached point's stored checks and baselines, or None when it was stored without them."""
    stored = point.evidence
    if stored is None:
        return None
    try:
        return evidence_from_dict(stored)
    except (KeyError, TypeError, ValueError):  # a malformed record: treat as not checked
        return None


def stored_checks(point: Any) -> tuple[Check, ...]:
    """The checks stored with a cached point (empty when it was stored without them)."""
    found = point_evidence(point)
    return found[0] if found else ()


def failed_checks(points: Sequence[Any]) -> dict[str, str]:
    """Point id → the names of its failed checks ("" when none failed or none were stored)."""
    failed = {}
    for point in points:
        checks = stored_checks(point)
        failed[point.point_id] = ", ".join(
            c.name.replace("_", " ") for c in checks if c.level == "fail"
        )
    return failed


@st.cache_resource(show_spinner=False, max_entries=8)
def _task_baselines(tkey: str, _train: Task, _test: Task) -> Baselines:
    """The task's constant predictor and unconstrained logistic regression (the engine's
    generic baselines, fitted once per task)."""
    return predictor_baselines(None, Evidence(), _train, _test)


def plane_references(
    points: Sequence[Any], train: Task, test: Task, x: str, y: str, split: str
) -> dict[str, tuple[float, float]]:
    """Label → (x, y) of the baselines on the plane: the task's generic ones (classification)
    when they carry both metrics, else those stored with the points (a method's own learner and
    metrics; regression)."""
    candidates: list[Baselines] = []
    if train.kind == "classification":  # the generic learner is a classifier
        candidates.append(_task_baselines(task_key(train, test), train, test))
    for point in points:
        found = point_evidence(point)
        if found and found[1] is not None:
            candidates.append(found[1])
    references: dict[str, tuple[float, float]] = {}
    for baselines in candidates:
        for label, splits in (
            (baselines.constant_label, baselines.constant),
            (baselines.unconstrained_label, baselines.unconstrained),
        ):
            values = splits.get(split, {})
            ref_x, ref_y = values.get(x), values.get(y)
            if label in references or ref_x is None or ref_y is None:
                continue
            if math.isfinite(float(ref_x)) and math.isfinite(float(ref_y)):
                references[label] = (float(ref_x), float(ref_y))
    return references


def checks_summary(checks: Sequence[Check]) -> str:
    """One line for a pinned point: the checks that failed or warned by name, else "all held"."""
    if not checks:
        return "not stored with this point"
    parts = [
        f"{LEVEL_WORDS[level]}: " + ", ".join(c.name.replace("_", " ") for c in bad)
        for level in ("fail", "warn")
        if (bad := [c for c in checks if c.level == level])
    ]
    return "; ".join(parts) if parts else f"all {len(checks)} held"


@st.cache_resource(show_spinner=False, max_entries=32)
def point_result(point_key: str, _point: Any, _model: Any, _train: Task, _test: Task) -> RunResult:
    """The cached point as a result with its evidence: stored with the point, or rebuilt by the
    engine from its model for a point stored before results carried checks."""
    found = point_evidence(_point)
    if found is not None:
        checks, baselines = found
        return RunResult(
            _point.method, dict(_point.knobs), _point.metrics, _model,
            checks=checks, baselines=baselines,
        )  # fmt: skip
    return stored_result(
        get_method(_point.method), _point.knobs, _point.metrics, _model, _train, _test
    )
