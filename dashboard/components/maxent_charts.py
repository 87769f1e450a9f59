"""Charts of the max-entropy debiasing page (Celis et al., ICML 2020): rates, groups, θ; the
generated samples as CSV and the run's warnings on their rates."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard.components.charts import PALETTE, axes_layout, legend_above
from fairengine.methods.base import RunResult
from fairengine.textsafe import plot_text

SOURCES = {
    "raw": "Raw data",
    "prior": "Prior q_C only",
    "reweighing": "Kamiran-Calders",
    "maxent": "Max-entropy p*",
}


def _layout(fig: go.Figure, title: str, y_title: str, x_title: str = "") -> go.Figure:
    return legend_above(axes_layout(fig, title, (x_title, y_title)), title)


def rates_figure(rates: pd.DataFrame, tau: float) -> go.Figure:
    """Representation and statistical rate of each dataset (bars; whiskers: standard deviation
    over the sample sets), with the τ target as a line."""
    names = [SOURCES.get(s, s) for s in rates.index]
    fig = go.Figure()
    for i, (column, label) in enumerate(
        (("data_rr", "Representation rate"), ("data_sr", "Statistical rate"))
    ):
        sd = rates.get(f"{column}_sd")
        error = None if sd is None else {"type": "data", "array": sd.fillna(0).tolist()}
        fig.add_bar(x=names, y=rates[column], name=label, marker_color=PALETTE[i], error_y=error)
    fig.add_hline(y=tau, line_dash="dash", annotation_text=f"τ = {tau:g}")
    fig.update_yaxes(range=[0, 1.05])
    return _layout(
        fig, "Representation and statistical rate: raw, prior, reweighted, p*", "rate (1 = parity)"
    )


def group_outcomes_figure(groups: pd.DataFrame) -> go.Figure:
    """P(Y = 1 | Z = z) per group in the real training data and in the generated data."""
    fig = go.Figure()
    for i, (source, part) in enumerate(groups.groupby("source", sort=False)):
        fig.add_bar(
            x=[plot_text(g) for g in part["group"]],
            y=part["outcome_rate"],
            name=f"{source} data",
            marker_color=PALETTE[i],
            customdata=part["share"],
            hovertemplate="P(Y=1 | %{x}) = %{y:.3f}<br>share %{customdata:.3f}<extra></extra>",
        )
    return _layout(fig, "P(Y = 1 | group): real vs generated data", "P(Y = 1 | group)")


#: Marker colours of the marginals chart: θ dark so that it reads on top of the achieved dot.
COLORS = {"raw": PALETTE[7], "achieved": PALETTE[1], "theta": "#1f2633"}


def marginals_figure(marginals: pd.DataFrame) -> go.Figure:
    """Target marginals θ, the marginals achieved by p*, and the raw data's, per coordinate."""
    # cut before escaping: an entity cut in half would show as its characters
    names = [plot_text(n if len(n) <= 28 else n[:27] + "…") for n in marginals["coordinate"]]
    fig = go.Figure()
    for column, label, symbol, size in (
        ("raw", "raw data", "circle-open", 9),
        ("achieved", "achieved by p* (E_p*[α])", "circle", 13),
        ("theta", "target θ", "x-thin-open", 11),
    ):  # θ last: drawn on top of the achieved marker it usually coincides with
        fig.add_scatter(
            x=names,
            y=marginals[column],
            customdata=[plot_text(n) for n in marginals["coordinate"]],
            hovertemplate="%{customdata}: %{y:.4f}<extra></extra>",
            mode="markers",
            name=label,
            marker={
                "symbol": symbol,
                "size": size,
                "color": COLORS[column],
                "line": {"width": 2, "color": COLORS[column]},
            },
            opacity=0.55 if column == "achieved" else 1.0,
        )
    fig.update_xaxes(tickangle=45)
    _layout(fig, "Marginals: target θ vs achieved by p*, per coordinate", "P(coordinate = 1)")
    fig.update_layout(height=560)
    return fig


@st.cache_data(show_spinner=False, max_entries=16)
def samples_csv(_result: RunResult, key: str) -> bytes:
    """The generated samples as CSV bytes."""
    del key
    return _result.artifacts["samples"].to_csv(index=False).encode()


def rate_warnings(result: RunResult) -> list:
    """The run's warnings on the generated data's rates (its ``data_rates_vs_tau`` check: one
    rule, in :mod:`fairengine.methods.maxent.checks`)."""
    return [c for c in result.checks if c.name == "data_rates_vs_tau" and c.level != "ok"]
