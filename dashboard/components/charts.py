"""Charts shared by the pages (plotly figures built from engine tables).

Group, column and task names come from the data and knob values from stored runs: Plotly reads
a small HTML subset in labels, legend entries and hover texts (``<a href>``, ``<b>``, entities),
so in this and every page's chart module they go in through
:func:`~fairengine.textsafe.plot_text` where they enter a figure, once.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from fairengine.metrics import metric_label
from fairengine.textsafe import plot_text

PALETTE = ["#3a5ba0", "#e07b39", "#4c9f70", "#b5485d", "#7e6bb3", "#c9a227", "#3fa7b5", "#8c8c8c"]
#: The narrow margins of the method pages' charts (px).
MARGIN = {"l": 10, "r": 10, "t": 50, "b": 10}
#: The thin dark edge of a highlighted marker.
DARK_EDGE = {"color": "#1f2633", "width": 1}
#: Where a figure's title sits: the top left of its container.
_TITLE_TOP_LEFT = {"x": 0, "xanchor": "left", "y": 0.98, "yanchor": "top", "yref": "container"}
_LEGEND_BELOW = {"orientation": "v", "x": 0, "xanchor": "left", "y": 0, "yanchor": "bottom"}
#: The per-group rates the Compare page draws for a chosen point, per task kind.
GROUP_RATES = {
    "classification": (
        ("selection_rate", "Selection rate"),
        ("tpr", "True positive rate"),
        ("fpr", "False positive rate"),
    ),
    "regression": (("mean_prediction", "Mean prediction"), ("mse", "Mean squared error")),
}


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
    return axes_layout(fig, "Rows per group", (None, "rows"), height=360, showlegend=False)


def group_rates_figure(table: pd.DataFrame, kind: str) -> go.Figure:
    """Base rate (classification) or mean target (regression) per group with 95% intervals."""
    column = "base_rate" if kind == "classification" else "mean_target"
    groups = table.drop(index="overall", errors="ignore")
    fig = go.Figure(
        go.Bar(
            x=[plot_text(g) for g in groups.index],
            y=groups[column],
            error_y=_interval(groups, column),
            marker_color=PALETTE[1],
            hovertemplate="%{x}: %{y:.3f}<extra></extra>",
        )
    )
    if "overall" in table.index:
        overall = float(table.loc["overall", column])
        fig.add_hline(
            y=overall,
            line_dash="dot",
            annotation_text=f"overall {overall:.3f}",
            annotation_position="top left",
        )
    title = "Base rate P(y = 1) per group" if kind == "classification" else "Mean target per group"
    title, axes = f"{title} (95% bootstrap interval)", (None, column.replace("_", " "))
    return axes_layout(fig, title, axes, height=360, showlegend=False)


def legend_above(fig: go.Figure, title: str | None = None, *, top: int = 90) -> go.Figure:
    """Title at the top left and a horizontal legend between it and the plot area, where it
    cannot cover tick labels, markers or the plotly toolbar (which sits at the top right)."""
    if title is not None:
        fig.update_layout(title={"text": title, **_TITLE_TOP_LEFT})
    legend = {"orientation": "h", "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom"}
    return fig.update_layout(legend={**legend, "title": {"text": ""}}, margin={"t": top})


def legend_below(
    fig: go.Figure, title: str, *, entries: int, top: int = 80, height: int = 420
) -> go.Figure:
    """Title at the top left and the legend under the plot, one entry per line, in a bottom
    margin sized for ``entries`` lines: however narrow the column, the legend covers no part
    of the plot and no entry is cut. ``height`` is kept for the plot and its axes."""
    legend = 22 * entries + 10  # 22 px a line
    return fig.update_layout(
        title={"text": title, **_TITLE_TOP_LEFT},
        legend={**_LEGEND_BELOW, "yref": "container", "title": {"text": ""}},
        margin={"t": top, "b": legend + 60},
        height=height + legend,
    )


def axes_layout(
    fig: go.Figure, title: str, axes: tuple[str | None, str | None], **layout: object
) -> go.Figure:
    """``title``, the x and y axis titles (``None``: left as they are), the narrow margins and
    height 380 unless ``layout`` (further layout properties) says otherwise."""
    titles = {f"{a}axis_title": t for a, t in zip("xy", axes, strict=True) if t is not None}
    fig.update_layout(title=title, **titles, margin=MARGIN, height=380)
    return fig.update_layout(**layout)


def labelled_marker(
    fig: go.Figure,
    label: str,
    xy: tuple[float, float],
    axes: tuple[str, str],
    *,
    note: str = "",
    **style: object,
) -> None:
    """One point as a marker labelled ``label`` (already plot-safe), its hover ``label``, ``note``
    and its x and y under the metric labels ``axes``; ``style``: the trace's marker, legend
    name and other properties."""
    x_label, y_label = (plot_text(a) for a in axes)
    fig.add_scatter(
        x=[xy[0]],
        y=[xy[1]],
        mode="markers+text",
        text=[label],
        textposition="top center",
        hovertemplate=f"<b>{label}</b>{note}<br>{x_label}: %{{x:.4f}}<br>{y_label}: %{{y:.4f}}"
        "<extra></extra>",
        **style,
    )


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
    x_label, y_label = metric_label(x), metric_label(y)
    titles = titles or {}
    fig = go.Figure()
    for i, (method, part) in enumerate(table.groupby("method", sort=False)):
        color, name = PALETTE[i % len(PALETTE)], plot_text(titles.get(method, method))
        front = part[part["pareto"]].sort_values(x)
        line = {"color": color, "width": 1.5, "shape": "hv"}
        fig.add_scatter(
            x=front[x], y=front[y], mode="lines", line=line, hoverinfo="skip", showlegend=False
        )
        outline = part["pareto_all"]
        fig.add_scatter(
            x=part[x],
            y=part[y],
            mode="markers",
            name=name,
            customdata=part["point_id"],  # the app's own ids: a click returns them as sent
            text=[plot_text(k) for k in part["knobs"]],
            marker={
                "color": color,
                "size": np.where(outline, 13, 9),
                "line": {
                    "color": np.where(outline, "#1f2633", "white").tolist(),
                    "width": np.where(outline, 2, 1).tolist(),
                },
            },
            hovertemplate=f"<b>{name}</b><br>%{{text}}<br>{x_label}: %{{x:.4f}}"
            f"<br>{y_label}: %{{y:.4f}}<br>id %{{customdata}}<extra></extra>",
        )
    if selected is not None and selected in set(table["point_id"]):
        row = table[table["point_id"] == selected].iloc[0]
        star = {"symbol": "star", "size": 20, "color": "#c9a227"}
        fig.add_scatter(
            x=[row[x]],
            y=[row[y]],
            mode="markers",
            name="selected",
            marker={**star, "line": DARK_EDGE},
            customdata=[selected],
            hoverinfo="skip",
        )
    failed = table.iloc[0:0]
    if "failed_checks" in table:
        failed = table[table["failed_checks"].fillna("").astype(str) != ""]
    if not failed.empty:  # a red cross over every point with a failed check
        fig.add_scatter(
            x=failed[x],
            y=failed[y],
            mode="markers",
            name="check failed",
            customdata=failed["point_id"],
            text=[plot_text(t) for t in failed["failed_checks"]],
            marker={"symbol": "x-thin", "size": 16, "line": {"color": "#c0392b", "width": 3}},
            hovertemplate="check failed: %{text}<br>id %{customdata}<extra></extra>",
        )
    for label, xy in (references or {}).items():  # baselines as labelled grey diamonds
        labelled_marker(
            fig,
            plot_text(label),
            xy,
            (x_label, y_label),
            name=plot_text(label),
            textfont={"color": "#555555", "size": 11},
            marker={"symbol": "diamond", "size": 12, "color": "#8c8c8c", "line": DARK_EDGE},
            note=" (baseline)",
        )
    return fig.update_layout(
        xaxis_title=x_label,
        yaxis_title=y_label,
        height=520,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        # Below the x axis title: the plotly toolbar sits at the top right, over any legend there.
        legend={"orientation": "h", "x": 0, "y": -0.14, "yanchor": "top"},
        clickmode="event+select",
        title={"text": f"{y_label} vs {x_label}: every cached frontier point", "x": 0},
    )


def group_metrics_figure(table: pd.DataFrame, kind: str) -> go.Figure:
    """One bar per (group, rate) with 95% bootstrap intervals, the overall value as a tick."""
    groups = table.drop(index="overall", errors="ignore")
    fig = go.Figure()
    for i, (column, label) in enumerate(GROUP_RATES[kind]):
        if column in groups:
            fig.add_bar(
                x=[plot_text(g) for g in groups.index],
                y=groups[column],
                name=label,
                error_y=_interval(groups, column),
                marker_color=PALETTE[i % len(PALETTE)],
                hovertemplate=f"{label}<br>%{{x}}: %{{y:.3f}}<extra></extra>",
            )
    fig.update_layout(
        barmode="group",
        yaxis_title="rate" if kind == "classification" else "value",
        height=360,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
    )
    return legend_above(fig, top=40)  # the page's heading says what and where
