"""Charts shared by the pages (plotly figures built from engine tables).

Group names come from the data and knob values from stored runs: Plotly reads a small HTML
subset in labels, legend entries and hover texts (``<a href>``, ``<b>``, entities), so they go in
through :func:`~fairengine.textsafe.plot_text` where they enter a figure, once.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from fairengine.textsafe import plot_text

PALETTE = ["#3a5ba0", "#e07b39", "#4c9f70", "#b5485d", "#7e6bb3", "#c9a227", "#3fa7b5", "#8c8c8c"]


def group_sizes_figure(table: pd.DataFrame) -> go.Figure:
    """Bar chart of the number of rows per group (``table`` from ``metrics.group_table``)."""
    groups = table.drop(index="overall", errors="ignore")
    fig = go.Figure(
        go.Bar(
            x=[plot_text(g) for g in groups.index],
            y=groups["n"],
            marker_color=PALETTE[0],
            text=[f"{n:,}<br>{s:.1%}" for n, s in zip(groups["n"], groups["share"], strict=True)],
            textposition="auto",
            hovertemplate="%{x}: %{y:,} rows<extra></extra>",
        )
    )
    return _layout(fig, "Rows per group", "rows")


def _interval(groups: pd.DataFrame, column: str) -> dict | None:
    """Plotly error bars from ``<column>_low`` / ``<column>_high`` (None without intervals)."""
    if f"{column}_low" not in groups:
        return None
    value = groups[column]
    return {
        "type": "data",
        "array": (groups[f"{column}_high"] - value).clip(lower=0),
        "arrayminus": (value - groups[f"{column}_low"]).clip(lower=0),
        "color": "#1f2633",
    }


def group_rates_figure(table: pd.DataFrame, kind: str) -> go.Figure:
    """Base rate (classification) or mean target (regression) per group with 95% intervals."""
    column = "base_rate" if kind == "classification" else "mean_target"
    groups = table.drop(index="overall", errors="ignore")
    value = groups[column]
    fig = go.Figure(
        go.Bar(
            x=[plot_text(g) for g in groups.index],
            y=value,
            error_y=_interval(groups, column),
            marker_color=PALETTE[1],
            hovertemplate="%{x}: %{y:.3f}<extra></extra>",
        )
    )
    overall = float(table.loc["overall", column]) if "overall" in table.index else None
    if overall is not None:
        fig.add_hline(
            y=overall,
            line_dash="dot",
            annotation_text=f"overall {overall:.3f}",
            annotation_position="top left",
        )
    title = "Base rate P(y = 1) per group" if kind == "classification" else "Mean target per group"
    return _layout(fig, f"{title} (95% bootstrap interval)", column.replace("_", " "))


#: Where a figure's title sits: the top left of its container.
_TITLE_TOP_LEFT = {"x": 0, "xanchor": "left", "y": 0.98, "yanchor": "top", "yref": "container"}


def legend_above(fig: go.Figure, title: str | None = None, *, top: int = 90) -> go.Figure:
    """Title at the top left and a horizontal legend between it and the plot area, where it
    cannot cover tick labels, markers or the plotly toolbar (which sits at the top right)."""
    if title is not None:
        fig.update_layout(title={"text": title, **_TITLE_TOP_LEFT})
    fig.update_layout(
        legend={
            "orientation": "h",
            "x": 0,
            "xanchor": "left",
            "y": 1.02,
            "yanchor": "bottom",
            "title": {"text": ""},
        },
        margin={"t": top},
    )
    return fig


#: Height of one legend line under a plot (px).
LEGEND_LINE = 22


def legend_below(
    fig: go.Figure, title: str | None = None, *, entries: int, top: int = 80, height: int = 420
) -> go.Figure:
    """Title at the top left and the legend under the plot, one entry per line, in a bottom
    margin sized for ``entries`` lines: however narrow the column, the legend covers no part
    of the plot and no entry is cut. ``height`` is kept for the plot and its axes."""
    if title is not None:
        fig.update_layout(title={"text": title, **_TITLE_TOP_LEFT})
    legend = LEGEND_LINE * entries + 10
    fig.update_layout(
        legend={
            "orientation": "v",
            "x": 0,
            "xanchor": "left",
            "y": 0,
            "yanchor": "bottom",
            "yref": "container",
            "title": {"text": ""},
        },
        margin={"t": top, "b": legend + 60},
        height=height + legend,
    )
    return fig


#: The narrow margins of the method pages' charts (px).
MARGIN = {"l": 10, "r": 10, "t": 50, "b": 10}


def axes_layout(
    fig: go.Figure, title: str, axes: tuple[str | None, str | None], **layout: object
) -> go.Figure:
    """``title``, the x and y axis titles (``None``: left as they are), the narrow margins and
    height 380 unless ``layout`` (further layout properties) says otherwise."""
    titles = {f"{a}axis_title": t for a, t in zip("xy", axes, strict=True) if t is not None}
    fig.update_layout(title=title, **titles, margin=MARGIN, height=380)
    fig.update_layout(**layout)
    return fig


def _layout(fig: go.Figure, title: str, y_title: str) -> go.Figure:
    return axes_layout(fig, title, (None, y_title), height=360, showlegend=False)


def frontier_figure(
    table: pd.DataFrame,
    x: str,
    y: str,
    selected: str | None = None,
    titles: dict[str, str] | None = None,
    references: dict[str, tuple[float, float]] | None = None,
) -> go.Figure:
    """Every method's points on (x, y); each method's Pareto front as a line; the overall Pareto
    points outlined; the selected point starred. ``customdata`` carries the point id; axis titles
    and hover use the metrics' labels, the legend the methods' ``titles``.

    A ``failed_checks`` column (text; empty when every check held) crosses out the points whose
    held-out checks failed, in one legend entry "check failed" whose hover names the checks;
    ``references`` (label → (x, y)) adds baselines as labelled diamonds."""
    from fairengine.metrics import metric_label

    x_label, y_label = metric_label(x), metric_label(y)
    titles = titles or {}
    fig = go.Figure()
    for i, (method, part) in enumerate(table.groupby("method", sort=False)):
        color = PALETTE[i % len(PALETTE)]
        name = plot_text(titles.get(method, method))
        front = part[part["pareto"]].sort_values(x)
        fig.add_trace(
            go.Scatter(
                x=front[x],
                y=front[y],
                mode="lines",
                line={"color": color, "width": 1.5, "shape": "hv"},
                hoverinfo="skip",
                showlegend=False,
            )
        )
        fig.add_trace(
            go.Scatter(
                x=part[x],
                y=part[y],
                mode="markers",
                name=name,
                customdata=part["point_id"],  # the app's own ids: a click returns them as sent
                text=[plot_text(k) for k in part["knobs"]],
                marker={
                    "color": color,
                    "size": np.where(part["pareto_all"], 13, 9),
                    "line": {
                        "color": np.where(part["pareto_all"], "#1f2633", "white").tolist(),
                        "width": np.where(part["pareto_all"], 2, 1).tolist(),
                    },
                },
                hovertemplate=(
                    f"<b>{name}</b><br>%{{text}}<br>{x_label}: %{{x:.4f}}"
                    f"<br>{y_label}: %{{y:.4f}}<br>id %{{customdata}}<extra></extra>"
                ),
            )
        )
    if selected is not None and selected in set(table["point_id"]):
        _add_selected(fig, table[table["point_id"] == selected].iloc[0], x, y, selected)
    if "failed_checks" in table:
        _add_failed(fig, table, x, y)
    for label, (ref_x, ref_y) in (references or {}).items():
        _add_reference(fig, label, ref_x, ref_y, x_label, y_label)
    fig.update_layout(
        xaxis_title=x_label,
        yaxis_title=y_label,
        height=520,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        # Below the x axis title: the plotly toolbar sits at the top right, over any legend there.
        legend={"orientation": "h", "x": 0, "y": -0.14, "yanchor": "top"},
        clickmode="event+select",
        title={"text": f"{y_label} vs {x_label}: every cached frontier point", "x": 0},
    )
    return fig


def _add_selected(fig: go.Figure, row: pd.Series, x: str, y: str, selected: str) -> None:
    """A gold star on the selected point."""
    fig.add_trace(
        go.Scatter(
            x=[row[x]],
            y=[row[y]],
            mode="markers",
            name="selected",
            marker={
                "symbol": "star",
                "size": 20,
                "color": "#c9a227",
                "line": {"color": "#1f2633", "width": 1},
            },
            customdata=[selected],
            hoverinfo="skip",
        )
    )


def _add_failed(fig: go.Figure, table: pd.DataFrame, x: str, y: str) -> None:
    """A red cross over every point with a failed check (hover: the checks' names)."""
    failed = table[table["failed_checks"].fillna("").astype(str) != ""]
    if failed.empty:
        return
    fig.add_trace(
        go.Scatter(
            x=failed[x],
            y=failed[y],
            mode="markers",
            name="check failed",
            customdata=failed["point_id"],
            text=[plot_text(t) for t in failed["failed_checks"]],
            marker={"symbol": "x-thin", "size": 16, "line": {"color": "#c0392b", "width": 3}},
            hovertemplate="check failed: %{text}<br>id %{customdata}<extra></extra>",
        )
    )


def _add_reference(
    fig: go.Figure, label: str, x: float, y: float, x_label: str, y_label: str
) -> None:
    """One baseline as a labelled grey diamond."""
    name = plot_text(label)
    fig.add_trace(
        go.Scatter(
            x=[x],
            y=[y],
            mode="markers+text",
            name=name,
            text=[name],
            textposition="top center",
            textfont={"color": "#555555", "size": 11},
            marker={
                "symbol": "diamond",
                "size": 12,
                "color": "#8c8c8c",
                "line": {"color": "#1f2633", "width": 1},
            },
            hovertemplate=(
                f"<b>{name}</b> (baseline)<br>{x_label}: %{{x:.4f}}<br>{y_label}: %{{y:.4f}}"
                "<extra></extra>"
            ),
        )
    )


#: The per-group rates the Compare page draws for a chosen point, per task kind.
GROUP_RATES = {
    "classification": (
        ("selection_rate", "Selection rate"),
        ("tpr", "True positive rate"),
        ("fpr", "False positive rate"),
    ),
    "regression": (("mean_prediction", "Mean prediction"), ("mse", "Mean squared error")),
}


def group_metrics_figure(table: pd.DataFrame, kind: str) -> go.Figure:
    """One bar per (group, rate) with 95% bootstrap intervals, the overall value as a tick."""
    groups = table.drop(index="overall", errors="ignore")
    fig = go.Figure()
    for i, (column, label) in enumerate(GROUP_RATES[kind]):
        if column not in groups:
            continue
        fig.add_trace(
            go.Bar(
                x=[plot_text(g) for g in groups.index],
                y=groups[column],
                name=label,
                error_y=_interval(groups, column),
                marker_color=PALETTE[i % len(PALETTE)],
                hovertemplate=f"{label}<br>%{{x}}: %{{y:.3f}}<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        yaxis_title="rate" if kind == "classification" else "value",
        height=360,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
    )
    return legend_above(fig, top=40)  # the page's heading says what and where
