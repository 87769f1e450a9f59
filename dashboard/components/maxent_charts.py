"""Charts of the max-entropy debiasing page (seed 001): rates, frontier over C, groups, θ."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.components.charts import PALETTE

SOURCES = {
    "raw": "Raw data",
    "prior": "Prior q_C only",
    "reweighing": "Kamiran-Calders",
    "maxent": "Max-entropy p*",
}


def _layout(fig: go.Figure, title: str, y_title: str, x_title: str = "") -> go.Figure:
    fig.update_layout(
        title=title,
        xaxis_title=x_title,
        yaxis_title=y_title,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        height=360,
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def rates_figure(rates: pd.DataFrame, tau: float) -> go.Figure:
    """Representation and statistical rate of each dataset (bars), with the τ target as a line."""
    names = [SOURCES.get(s, s) for s in rates.index]
    fig = go.Figure()
    for i, (column, label) in enumerate(
        (("data_rr", "Representation rate"), ("data_sr", "Statistical rate"))
    ):
        fig.add_bar(x=names, y=rates[column], name=label, marker_color=PALETTE[i])
    fig.add_hline(y=tau, line_dash="dash", annotation_text=f"τ = {tau:g}")
    fig.update_yaxes(range=[0, 1.05])
    return _layout(fig, "Rates of the data before and after", "rate (1 = parity)")


def frontier_over_c_figure(points: pd.DataFrame, x: str, y: str) -> go.Figure:
    """Held-out fairness vs accuracy of the classifier trained on samples, one point per C."""
    part = points.sort_values("C")
    fig = go.Figure(
        go.Scatter(
            x=part[x],
            y=part[y],
            mode="markers+text",
            text=[f"C={c:g}" for c in part["C"]],
            textposition="top center",
            marker={"color": PALETTE[0], "size": 9},
        )
    )
    return _layout(fig, "Fairness–accuracy frontier over C (test data)", y, x)


def group_outcomes_figure(groups: pd.DataFrame) -> go.Figure:
    """P(Y = 1 | Z = z) per group in the real training data and in the generated data."""
    fig = go.Figure()
    for i, (source, part) in enumerate(groups.groupby("source", sort=False)):
        fig.add_bar(
            x=part["group"],
            y=part["outcome_rate"],
            name=f"{source} data",
            marker_color=PALETTE[i],
            customdata=part["share"],
            hovertemplate="P(Y=1 | %{x}) = %{y:.3f}<br>share %{customdata:.3f}<extra></extra>",
        )
    return _layout(fig, "Group outcome rates: real vs generated", "P(Y = 1 | group)")


def marginals_figure(marginals: pd.DataFrame) -> go.Figure:
    """Target marginals θ, the marginals achieved by p*, and the raw data's, per coordinate."""
    names = [n if len(n) <= 28 else n[:27] + "…" for n in marginals["coordinate"]]
    fig = go.Figure()
    for i, (column, label, symbol) in enumerate(
        (("raw", "raw data", "circle-open"), ("theta", "target θ", "x"),
         ("achieved", "E_p*[α]", "circle"))
    ):  # fmt: skip
        fig.add_scatter(
            x=names,
            y=marginals[column],
            customdata=marginals["coordinate"],
            hovertemplate="%{customdata}: %{y:.4f}<extra></extra>",
            mode="markers",
            name=label,
            marker={"symbol": symbol, "size": 9, "color": PALETTE[i]},
        )
    fig.update_xaxes(tickangle=45)
    _layout(fig, "Target θ vs achieved marginals", "P(coordinate = 1)")
    fig.update_layout(height=520)
    return fig
