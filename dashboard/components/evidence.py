"""A result's evidence on a method page: its checks in plain words at the top of the result, and
its baselines (constant predictor, unconstrained model) on the same rows.

:func:`dashboard.components.runner.run_panel` calls :func:`show_evidence` once per result, so a
status word a page shows ("feasible", "converged") is always on the same view as the held-out
check that qualifies it. Group and column names go through :mod:`fairengine.textsafe`.
"""

from __future__ import annotations

import contextlib
import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard.components.charts import PALETTE, legend_above
from dashboard.components.tables import markdown_table
from fairengine.data import Task
from fairengine.methods.base import RunResult
from fairengine.methods.evidence import Baselines, Check, attach_evidence
from fairengine.methods.registry import get_method
from fairengine.metrics import REGISTRY, metric_label
from fairengine.textsafe import md_text, plot_text

#: What a check's level is called in the numbers table.
LEVEL_WORDS = {"ok": "held", "warn": "warning", "fail": "failed"}


def plane_metrics(result: RunResult) -> tuple[str, str]:
    """The (performance, fairness) metrics of ``result``'s method: the run's own plane."""
    method = get_method(result.method)
    spec = method.evidence
    fairness = method.fairness_metric
    if spec is not None and spec.fairness_metric is not None:
        fairness = spec.fairness_metric(result)
    return method.performance_metric, fairness


def _label(name: str) -> str:
    return metric_label(name) if name in REGISTRY else name


def _value(splits: dict[str, dict[str, float]], split: str, name: str) -> float:
    try:
        return float(splits.get(split, {}).get(name))
    except (TypeError, ValueError):
        return math.nan


def _references(result: RunResult, baselines: Baselines) -> tuple[tuple[str, dict], ...]:
    """(label, metrics by split) of the run and of both references."""
    return (
        ("this run", result.metrics),
        (baselines.constant_label, baselines.constant),
        (baselines.unconstrained_label, baselines.unconstrained),
    )


def baselines_table(result: RunResult, baselines: Baselines) -> pd.DataFrame:
    """One row per (reference, split): this run, the constant and the unconstrained reference,
    with the method's performance and fairness metrics (those the baselines carry)."""
    names = [
        n
        for n in dict.fromkeys(plane_metrics(result))
        if any(n in baselines.constant.get(s, {}) for s in ("train", "test"))
    ]
    rows = [
        {"result": label, "rows": split} | {_label(n): _value(splits, split, n) for n in names}
        for label, splits in _references(result, baselines)
        for split in ("train", "test")
    ]
    return pd.DataFrame(rows)


def baselines_line(result: RunResult, baselines: Baselines) -> str:
    """One sentence: the run beside both references on the test rows (Markdown, escaped)."""
    names = [n for n in dict.fromkeys(plane_metrics(result)) if n in baselines.constant["test"]]

    def shown(splits: dict[str, dict[str, float]]) -> str:
        return ", ".join(f"{_label(n)} {_value(splits, 'test', n):.4f}" for n in names)

    return (
        f"**Baselines on the same test rows.** This run: {md_text(shown(result.metrics))}. "
        f"{md_text(baselines.constant_label)}: {md_text(shown(baselines.constant))}. "
        f"{md_text(baselines.unconstrained_label)}: {md_text(shown(baselines.unconstrained))}."
    )


def reference_figure(result: RunResult, baselines: Baselines) -> go.Figure | None:
    """The run and both references on the method's (performance, fairness) plane, filled on
    the test rows and hollow on the training rows; None when the plane has no two metrics."""
    x, y = plane_metrics(result)
    if x == y or x not in baselines.constant.get("test", {}) or y not in baselines.constant["test"]:
        return None
    fig = go.Figure()
    for i, (label, splits) in enumerate(_references(result, baselines)):
        name = plot_text(label)
        for split, symbol in (("test", "circle"), ("train", "circle-open")):
            fig.add_scatter(
                x=[_value(splits, split, x)],
                y=[_value(splits, split, y)],
                mode="markers+text" if split == "test" else "markers",
                text=[name] if split == "test" else None,
                textposition="top center",
                name=f"{name} ({split})",
                legendgroup=name,
                marker={"color": PALETTE[i], "size": 13, "symbol": symbol},
                hovertemplate=(
                    f"<b>{name}</b> ({split})<br>{plot_text(_label(x))}: %{{x:.4f}}"
                    f"<br>{plot_text(_label(y))}: %{{y:.4f}}<extra></extra>"
                ),
            )
    fig.update_layout(
        xaxis_title=plot_text(_label(x)), yaxis_title=plot_text(_label(y)), height=340
    )
    return legend_above(fig, "The run and its baselines (filled: test rows, hollow: train)")


def show_checks(checks: tuple[Check, ...]) -> None:
    """Each failed check as an error, each warning as a warning, the others in one line."""
    if not checks:
        st.info("No held-out checks were computed for this result.", icon=":material/info:")
        return
    for check in checks:
        if check.level == "fail":
            st.error(f"**Check failed:** {md_text(check.sentence)}", icon=":material/error:")
    for check in checks:
        if check.level == "warn":
            st.warning(f"**Check warning:** {md_text(check.sentence)}", icon=":material/warning:")
    held = [c for c in checks if c.level == "ok"]
    names = md_text(", ".join(c.name.replace("_", " ") for c in held))
    if len(held) == len(checks):
        st.success(
            f"All {len(held)} checks held on the test rows: {names}.", icon=":material/verified:"
        )
    elif held:
        other = "1 other check" if len(held) == 1 else f"{len(held)} other checks"
        st.caption(f"{other} held on the test rows: {names}.")


def show_evidence(result: RunResult, train: Task, test: Task) -> RunResult:
    """Draw ``result``'s checks and baselines (see the module docstring); returns ``result``
    with its evidence attached: a run stored before results carried them gets them now (in
    place, so the memo keeps them), unless they cannot be rebuilt."""
    if not result.checks and result.baselines is None:
        with contextlib.suppress(Exception):
            attach_evidence(result, train, test, get_method(result.method))
    checks = tuple(result.checks or ())
    baselines = result.baselines
    show_checks(checks)
    if baselines is not None:
        st.caption(baselines_line(result, baselines))
    if not checks and baselines is None:
        return result
    with st.expander("Checks and baselines: the numbers"):
        if checks:
            numbers = [", ".join(f"{k} = {v:.4g}" for k, v in c.numbers.items()) for c in checks]
            table = {
                "check": [c.name.replace("_", " ") for c in checks],
                "verdict": [LEVEL_WORDS[c.level] for c in checks],
                "what was found": [c.sentence for c in checks],
                "numbers": numbers,
            }
            st.markdown(markdown_table(pd.DataFrame(table), index=False))
        if baselines is not None:
            st.caption(
                f"References fitted on the same training rows and scored by the same "
                f"evaluation. Unconstrained model: {md_text(baselines.learner)}."
            )
            st.markdown(markdown_table(baselines_table(result, baselines), index=False))
            figure = reference_figure(result, baselines)
            # on demand: a figure is the heaviest element of a page, and this one repeats the
            # table's numbers
            if figure is not None and st.toggle(
                "Draw them on the error–fairness plane", key=f"evidence.plane.{result.method}"
            ):
                st.plotly_chart(figure, key=f"evidence_plane.{result.method}")
    return result
