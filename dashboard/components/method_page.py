"""The parts every method page shares (:func:`open_page` with its "How to read this page"
guide, :func:`fit`, :func:`model_and_comparison`), and the page of a method without a view of
its own, generated from its declaration: its knobs, one run, its plane's two numbers, its
``"page"`` sweep (:mod:`.grid_sweep`) when it declares one, the model file and "Add to
comparison". A page's guide is Markdown in ``dashboard/guides/<method>.md`` (also shown in the
docs), else written from the method's declaration."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard.components import cached, runner
from dashboard.components.comparison import add_to_comparison
from dashboard.components.grid_sweep import GridSweep, grid_sweep
from dashboard.components.knobs import knob_panel, share_knobs
from dashboard.components.services import result_key
from dashboard.components.state import require_task
from fairengine.data import Task
from fairengine.methods import get_method
from fairengine.methods.base import Method, RunResult
from fairengine.metrics import metric_info
from fairengine.textsafe import md_text, plot_text

#: The pages' reading guides, written by the dashboard's authors (never data).
GUIDES = Path(__file__).resolve().parents[1] / "guides"


def guide_text(method_name: str) -> str | None:
    """The written guide of a method's page (None when it has none)."""
    path = GUIDES / f"{method_name}.md"
    return path.read_text(encoding="utf-8").strip() if path.is_file() else None


def reading_guide(method_name: str) -> str:
    """The reading guide of a method's page: its written guide, else one from its declaration:
    what it does, its knobs and its plane."""
    if guide := guide_text(method_name):
        return guide
    method = get_method(method_name)
    knobs = "; ".join(f"*{md_text(k.display_label)}*: {md_text(k.help)}" for k in method.knobs)
    performance = metric_info(method.performance_metric).label
    fairness = metric_info(method.fairness_metric).label
    return (
        f"**The question.** {md_text(method.description)}\n\n"
        f"- **Knobs.** {knobs}.\n"
        f"- **Numbers.** {md_text(performance)} and {md_text(fairness)} on the test rows; the "
        "checks and baselines above say whether the result keeps its promise on held-out rows.\n"
        "- **Sweep.** Each point is one fit with the other knobs fixed; its points appear on "
        "the Compare page too."
    )


def how_to_read(method_name: str) -> None:
    """A collapsed "How to read this page" expander with the method's reading guide and citation."""
    method = get_method(method_name)
    with st.expander("How to read this page", icon=":material/help:"):
        st.markdown(reading_guide(method_name))
        if method.reference:
            st.caption(f"Paper: {method.reference}.")


def generated_page(name: str) -> Callable[[], None]:
    """The page function of method ``name`` for ``st.Page``."""

    def page() -> None:
        draw(get_method(name))

    page.__name__ = f"{name}_page"  # st.Page names a page function's page after it
    return page


def open_page(method: Method, caption: str) -> tuple[Task, Task, Task]:
    """The top of every method page: its title, ``caption``, its reading guide; then the task
    and its train/test split, or the page ends saying what is missing (no task yet, or one the
    method cannot run on: :meth:`Method.check`'s words and its paper dataset in one click)."""
    st.title(method.title)
    st.caption(caption)
    how_to_read(method.name)
    task = require_task()
    runner.require(method, task)
    train, test = cached.split_task(task, task.fingerprint)
    return task, train, test


def fit(
    method: Method,
    opened: tuple[Task, Task, Task],
    knobs: dict[str, Any],
    label: str,
    **run: Any,
) -> tuple[RunResult, dict[str, Any]]:
    """Validate ``knobs``, put them in the page's link and run ``method`` on the ``opened``
    page's split (:func:`.runner.run_panel` with ``label`` and ``run``'s options: progress,
    checks, baselines); returns the result shown and its knobs (the last ones while a fit runs)."""
    task, train, test = opened
    knobs = method.validate_knobs(knobs)
    share_knobs(method, knobs, task)
    result = runner.run_panel(method.name, method.name, train, test, knobs, label=label, **run)
    return result, dict(result.knobs)


def draw(method: Method) -> None:
    """Draw the generated page of ``method``."""
    words = " ".join(p for p in (method.reference + ".", method.description) if p)
    opened = open_page(method, md_text(words))
    knobs = knob_panel(method, key_prefix=f"w.{method.name}")
    result, knobs = fit(method, opened, knobs, f"Fitting {method.title}")
    _, train, test = opened
    names = (method.performance_metric, method.fairness_metric)
    for column, name in zip(st.columns(len(names)), names, strict=True):
        info = metric_info(name)
        value = result.metrics["test"].get(name, float("nan"))
        column.metric(f"{info.label} (test)", f"{value:.4f}", help=md_text(info.explained))
    if "page" in method.sweep_grids:
        axis = next(iter(method.grid("page")))
        words = method.knob(axis).display_label
        st.subheader(f"Sweep over {words}")
        points = grid_sweep(method, train, test, knobs, GridSweep(axis=axis, what=words))
        if points is not None:
            st.plotly_chart(plane_figure(method, points, axis), key=f"{method.name}_plane")
    model_and_comparison(result, (train, test), key=method.name)


def model_and_comparison(
    result: RunResult,
    split: tuple[Task, Task],
    *,
    key: str,
    label: str = "Download model file",
    file_name: str = "",
    place: DeltaGenerator | None = None,
) -> None:
    """The end of every method page: the run's model file (button ``label`` in ``place``,
    default the page; ``file_name`` default the method's name) and "Add to comparison" (widget
    keys ``{key}_model``, ``{key}_add``). The file's bytes are cached per run and handed over
    as bytes, not as a deferred callable: Streamlit drops a deferred file as orphaned after two
    script runs anywhere on the server, so on a busy server the browser's request could 404."""
    train, test = split
    (place or st).download_button(
        label,
        cached.model_file(result, train, test, str(result_key(result.method))),
        file_name=file_name or f"{result.method}.fairmodel",
        mime="application/zip",
        key=f"{key}_model",
    )
    add_to_comparison(result, train, test, key=f"{key}_add")


def plane_figure(method: Method, points: pd.DataFrame, axis: str) -> go.Figure:
    """The sweep's test points on the method's plane, each labelled with its value of ``axis``."""
    import plotly.express as px

    test = points[points["split"] == "test"].sort_values(axis)
    x, y = method.fairness_metric, method.performance_metric
    fig = px.scatter(test, x=x, y=y, text=[plot_text(f"{axis}={v}") for v in test[axis]])
    fig.update_traces(textposition="top center")
    fig.update_layout(
        xaxis_title=plot_text(metric_info(x).with_unit),
        yaxis_title=plot_text(metric_info(y).with_unit),
        height=380,
        margin={"t": 30},
    )
    return fig
