""" "Add to comparison": put a method page's current single run on the Compare page's chart; the
evidence the Compare page draws for cached points (failed checks, baselines on the plane); and
the reference group and τ its ratios and four-fifths verdicts are taken against."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import streamlit as st

from dashboard.components import cached
from dashboard.components.evidence import LEVEL_WORDS
from dashboard.components.state import seed_widget
from fairengine import metrics
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
from fairengine.textsafe import md_text


def add_to_comparison(result: RunResult, train: Task, test: Task, *, key: str) -> None:
    """A button that stores ``result`` in the frontier cache as one more point of its method,
    shown (and selected) on the Compare page."""
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
    shown = st.session_state.get("sel.cmp_methods")
    if isinstance(shown, list) and result.method not in shown:
        st.session_state["sel.cmp_methods"] = [*shown, result.method]
        st.session_state.pop("w.cmp_methods", None)
    if (point := store.get(tkey, result.method, result.knobs)) is not None:
        st.session_state["sel.cmp_point"] = point.point_id
        st.session_state.pop("w.cmp_point", None)
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
    return {
        p.point_id: ", ".join(
            c.name.replace("_", " ") for c in stored_checks(p) if c.level == "fail"
        )
        for p in points
    }


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
    for b in candidates:
        for label, splits in (
            (b.constant_label, b.constant),
            (b.unconstrained_label, b.unconstrained),
        ):
            xy = [splits.get(split, {}).get(a) for a in (x, y)]
            if label not in references and all(v is not None and math.isfinite(v) for v in xy):
                references[label] = (float(xy[0]), float(xy[1]))
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
            _point.method,
            dict(_point.knobs),
            _point.metrics,
            _model,
            checks=checks,
            baselines=baselines,
        )
    return stored_result(
        get_method(_point.method), _point.knobs, _point.metrics, _model, _train, _test
    )


# -- the reference group and τ of the disparities ------------------------------------------------

#: The ratio axes a reference group drives (``<rate>_ratio`` of each audit rate).
RATIO_AXES = frozenset(f"{rate}_ratio" for rate in metrics.GROUP_RATES)


def largest_group(task: Task) -> str:
    """The group with the most rows of ``task`` (the default reference)."""
    counts = np.bincount(np.asarray(task.groups), minlength=len(task.group_names))
    return task.group_names[metrics.reference_index(task.group_names, counts)]


def render_reference(test: Task) -> tuple[str, float]:
    """The reference group (default: the largest on the test rows) and the four-fifths rule's
    τ (default 0.8) every ratio and verdict of the page is taken against."""
    counts = np.bincount(np.asarray(test.groups), minlength=len(test.group_names))
    names = [n for n, c in zip(test.group_names, counts, strict=True) if c]  # a rate needs rows
    largest, columns = largest_group(test), ", ".join(test.sensitive)

    def _words(name: str) -> str:  # a selectbox shows its options as plain text, no Markdown
        size = f"{counts[test.group_names.index(name)]:,} test rows"
        return f"{columns} = {name} ({size}{', the largest' if name == largest else ''})"

    c1, c2 = st.columns([3, 2])
    reference = c1.selectbox(
        f"Reference group for ratios ({md_text(columns)})",
        names,
        format_func=_words,
        key=seed_widget("cmp_reference", largest, names),
        help="Each group's rate is divided by this group's (Aequitas' disparity); the default is "
        "the largest group.",
    )
    tau = c2.slider(
        "Four-fifths rule τ",
        min_value=0.5,
        max_value=1.0,
        step=0.01,
        key=seed_widget("cmp_tau", 0.8),
        help="A group passes when τ ≤ its ratio ≤ 1/τ; the plane's ratio axes show the worst "
        "group's min(ratio, 1/ratio), which passes when it is at least τ.",
    )
    return reference, float(tau)


@st.cache_data(show_spinner=False, max_entries=4096)
def _point_ratios(path: str, mtime: float, _task: Task, key: tuple) -> dict[str, float]:
    """The ratio metrics of the cached point's model at ``path`` on ``_task`` against group
    ``key[-1]`` (empty when its file cannot be read or its model cannot score the rows)."""
    try:
        model = cached.point_model(path, mtime)
        predictions = model.metric_predictions(_task.X)
        table = metrics.task_group_table(_task, predictions, ci=None, reference=key[-1])
    except Exception:  # a missing or unreadable file, or inputs the table lacks
        return {}
    return metrics.table_ratios(table)


def referenced_table(
    table: Any, points: Sequence[Any], task: Task, split: str, axes: Sequence[str], reference: str
) -> Any:
    """The comparison ``table`` with its ``split`` rows' ratio ``axes`` taken against group
    ``reference`` (the stored values are against the split's largest group: kept when that is
    the reference); a point whose model cannot be read or scored loses them (NaN)."""
    axes = [a for a in dict.fromkeys(axes) if a in RATIO_AXES and a in table]
    if not axes or reference == largest_group(task):
        return table
    table = table.copy()
    rows = table["split"] == split
    by_id = {p.point_id: p for p in points}
    with st.spinner("Taking every point's ratios against the chosen reference group…"):
        for index, pid in table.loc[rows, "point_id"].items():
            point = by_id[pid]
            mtime = point.path.stat().st_mtime if point.path.exists() else 0.0
            key = (point.key, task.fingerprint, reference)
            values = _point_ratios(str(point.path), mtime, task, key)
            for axis in axes:
                table.loc[index, axis] = values.get(axis, float("nan"))
    return table


def referenced_metrics(
    by_split: dict[str, dict[str, float]], groups: Any, reference: str | None, train: Task
) -> dict[str, dict[str, float]]:
    """A point's stored metrics with its ratio metrics against ``reference``: on the test rows
    from its group table ``groups`` (taken against it); on the train rows the stored ones when
    ``reference`` is the train rows' largest group, else none (NaN)."""
    if reference is None or "tpr_ratio" not in groups:
        return by_split
    out = {split: dict(values) for split, values in by_split.items()}
    if "test" in out:
        out["test"].update(metrics.table_ratios(groups))
    if "train" in out and reference != largest_group(train):
        out["train"].update({k: float("nan") for k in RATIO_AXES if k in out["train"]})
    return out


def verdict_words(name: str, value: float, tau: float) -> str:
    """ " (passes τ)" / " (fails τ)" after a ratio axis' value: the four-fifths verdict of the
    worst group (its folded ratio against τ); "" for any other metric."""
    if name not in RATIO_AXES or not math.isfinite(value):
        return ""
    return f" ({'passes' if value >= tau - 1e-12 else 'fails'} τ = {tau:.2f})"


def draw_four_fifths(
    figure: Any,
    view: Any,
    plane: tuple[str, str],
    disparity: tuple[str | None, float],
    selected: str | None = None,
) -> None:
    """On a plane (x, y) with ratio axes: a dotted line at τ on each (the worst group's folded
    ratio passes the four-fifths rule at or beyond it) and, in words, how many points pass and
    the ``selected`` point's verdict; ``disparity`` is (reference group, τ)."""
    reference, tau = disparity
    axes = [a for a in dict.fromkeys(plane) if a in RATIO_AXES]
    if not axes:
        return
    for axis in axes:
        draw = figure.add_vline if axis == plane[0] else figure.add_hline
        draw(tau, line={"dash": "dot", "color": "#cf222e"}, annotation_text=f"τ = {tau:.2f}")
    points = view.drop_duplicates("point_id")
    counts = "; ".join(
        f"{md_text(metrics.metric_label(a))}: {int((points[a] >= tau - 1e-12).sum())} of "
        f"{len(points)} points pass"
        for a in axes
    )
    chosen = points[points["point_id"] == selected]
    mine = "".join(
        f" The selected point {verdict_words(a, float(chosen[a].iloc[0]), tau).strip(' ()')} on "
        f"{md_text(metrics.metric_label(a))} ({float(chosen[a].iloc[0]):.4f})."
        for a in axes
        if len(chosen)
    )
    st.caption(
        f"Ratios to the reference group **{md_text(reference)}**; the four-fifths rule at "
        f"τ = {tau:.2f} passes at or beyond the dotted line: {counts}.{mine}"
    )


def show_verdicts(groups: Any, tau: float) -> None:
    """A classifier's group table read as an audit: each group's ratio of every audit rate to
    the reference group, with the four-fifths verdict at ``tau`` (the table's ``_ratio`` and
    ``_pass`` columns, in words)."""
    rates = [r for r in metrics.GROUP_RATES if f"{r}_ratio" in groups]
    if not rates:
        return
    rows = groups.drop(index="overall", errors="ignore")

    def _cell(ratio: float, passed: Any) -> str:
        if math.isnan(ratio):  # the rate is undefined for a group (e.g. FPR without negatives)
            return "–"
        return f"{ratio:.3f} {'pass' if bool(passed) else '**fail**'}"

    st.table(
        {
            "group": [md_text(g) for g in rows.index],
            **{
                f"{metrics.GROUP_RATES[r].label} ratio": [
                    _cell(float(v), p)
                    for v, p in zip(rows[f"{r}_ratio"], rows[f"{r}_pass"], strict=True)
                ]
                for r in rates
            },
        }
    )
    st.caption(
        f"Four-fifths rule at τ = {tau:.2f}: a group passes when its ratio to the reference "
        f"group lies between {tau:.2f} and {1 / tau:.2f}."
    )
