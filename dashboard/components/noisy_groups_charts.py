"""Charts of the noisy groups page (seed 003): per-group rates, Theorem 1's bound, and the
noise sweep in the style of the paper's Figures 1–3 (and 4/7 against them)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.components.charts import PALETTE

LABELS = {"naive": "Naive", "dro": "DRO", "soft": "Soft assignments", "unconstrained":
          "Unconstrained"}  # fmt: skip


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str) -> go.Figure:
    fig.update_layout(
        title=title,
        xaxis_title=x_title,
        yaxis_title=y_title,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        height=360,
        legend={"orientation": "h", "y": -0.3},
    )
    return fig


def rates_figure(rates: pd.DataFrame, split: str = "test") -> go.Figure:
    """Per-group TPR on the true and on the noisy groups."""
    part = rates[rates["split"] == split]
    fig = go.Figure()
    for i, (label, rows) in enumerate(part.groupby("groups", sort=False)):
        fig.add_bar(x=rows["group"], y=rows["tpr"], name=f"{label} groups", marker_color=PALETTE[i])
    fig.update_layout(barmode="group")
    return _layout(fig, f"Per-group true positive rate ({split})", "group", "TPR")


def bound_figure(bound: pd.DataFrame) -> go.Figure:
    """Observed violation per (rate, group) on the true and noisy groups beside Theorem 1's
    bound (noisy violation + TV, in rate units)."""
    x = [f"{r.rate.upper()} {r.group}" for r in bound.itertuples()]
    fig = go.Figure()
    fig.add_bar(x=x, y=bound["true_violation"], name="true-group violation",
                marker_color=PALETTE[0])  # fmt: skip
    fig.add_bar(x=x, y=bound["noisy_violation"], name="noisy-group violation",
                marker_color=PALETTE[1])  # fmt: skip
    fig.add_scatter(
        x=x, y=bound["bound"], mode="markers", name="Theorem 1 bound (from Ĝ violation + TV)",
        marker={"color": "#d62728", "size": 14, "symbol": "line-ew-open", "line": {"width": 3}},
        text=[f"TV = {tv:.3f}" for tv in bound["tv"]], hovertemplate="%{y:.3f}, %{text}",
    )  # fmt: skip
    fig.add_hline(y=0.0, line_dash="dot", annotation_text="constraint met below")
    fig.update_layout(barmode="group")
    return _layout(fig, "Observed violation vs the TV-distance bound (test)", "", "violation")


def _by_method(points: pd.DataFrame, split: str):
    part = points[points["split"] == split].sort_values("noise")
    return part.groupby("method", sort=False)


def violation_vs_noise(points: pd.DataFrame, slack: float, split: str = "test") -> go.Figure:
    """Max true-group violation vs noise level per approach (the paper's Figures 1–2)."""
    fig = go.Figure()
    for i, (method, rows) in enumerate(_by_method(points, split)):
        fig.add_scatter(x=rows["noise"], y=rows["true_violation"], mode="lines+markers",
                        name=LABELS.get(method, method), line={"color": PALETTE[i]})  # fmt: skip
    fig.add_hline(y=0.0, line_dash="dot", annotation_text="0: constraints met below")
    fig.add_hline(y=-slack, line_color="#222222", annotation_text="all negatives (−α)")
    return _layout(fig, f"True-group violation vs noise ({split})", "noise level",
                   "max true-group violation")  # fmt: skip


def error_vs_noise(points: pd.DataFrame, split: str = "test") -> go.Figure:
    """Error vs noise level per approach (the paper's Figure 3)."""
    fig = go.Figure()
    for i, (method, rows) in enumerate(_by_method(points, split)):
        fig.add_scatter(x=rows["noise"], y=rows["error"], mode="lines+markers",
                        name=LABELS.get(method, method), line={"color": PALETTE[i]})  # fmt: skip
    return _layout(fig, f"Error vs noise ({split})", "noise level", "error")


def noisy_vs_true(points: pd.DataFrame, split: str = "test") -> go.Figure:
    """Noisy-group vs true-group violation of every swept point, with the y = x line (naive
    meets its constraints on Ĝ but not on G: the paper's Figures 4/7 against 1/2)."""
    part = points[points["split"] == split]
    fig = go.Figure()
    for i, (method, rows) in enumerate(part.groupby("method", sort=False)):
        fig.add_scatter(
            x=rows["noisy_violation"], y=rows["true_violation"], mode="markers",
            name=LABELS.get(method, method), marker={"color": PALETTE[i], "size": 10},
            text=[f"noise {v:g}" for v in rows["noise"]], hovertemplate="%{text}<extra></extra>",
        )  # fmt: skip
    if len(part):
        low = float(min(part["noisy_violation"].min(), part["true_violation"].min()))
        high = float(max(part["noisy_violation"].max(), part["true_violation"].max()))
        fig.add_scatter(x=[low, high], y=[low, high], mode="lines", name="y = x",
                        line={"color": "#888888", "dash": "dash"})  # fmt: skip
    return _layout(fig, f"Noisy- vs true-group violation ({split})", "noisy-group violation",
                   "true-group violation")  # fmt: skip
