"""Charts of the fair regression page (Agarwal et al. 2019): frontier, prediction CDFs, group
losses."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.components.charts import PALETTE, axes_layout
from fairengine.textsafe import plot_text

BASELINES = {"unconstrained": "Unconstrained regression", "seo": "SEO (zero correlation)"}


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str) -> go.Figure:
    return axes_layout(fig, title, (x_title, y_title), legend={"orientation": "h", "y": -0.25})


def frontier_figure(
    current: dict[str, float], baselines: pd.DataFrame, points: pd.DataFrame | None, split: str
) -> go.Figure:
    """Loss vs SP disparity (sp_ks): swept points with their convex envelope, the baselines and
    the current point."""
    fig = go.Figure()
    if points is not None and len(points):
        part = points[points["split"] == split].sort_values("sp_ks")
        fig.add_scatter(
            x=part["sp_ks"],
            y=part["scaled_loss"],
            mode="markers",
            name="fair regression (ε sweep)",
            marker={"color": PALETTE[0], "size": 8},
            text=[f"ε = {e:g}" for e in part["eps"]],
            hovertemplate="%{text}<extra></extra>",
        )
        env = part[part["envelope"]].sort_values("sp_ks")
        fig.add_scatter(
            x=env["sp_ks"],
            y=env["scaled_loss"],
            mode="lines",
            name="convex envelope (train)",
            line={"color": PALETTE[0]},
        )
    rows = baselines[baselines["split"] == split]
    for i, row in enumerate(rows.itertuples()):
        fig.add_scatter(
            x=[row.sp_ks],
            y=[row.scaled_loss],
            mode="markers",
            name=BASELINES.get(row.baseline, row.baseline),
            marker={"color": PALETTE[2 + i], "size": 12, "symbol": "diamond"},
        )
    fig.add_scatter(
        x=[current["sp_ks"]],
        y=[current["scaled_loss"]],
        mode="markers",
        name="current Q",
        marker={"color": PALETTE[1], "size": 15, "symbol": "star"},
    )
    return _layout(
        fig,
        f"Loss vs disparity ({split})",
        "SP disparity: max_a sup_z |F_a(z) − F(z)|",
        "loss (target scaled to [0, 1])",
    )


def cdf_figure(cdfs: pd.DataFrame, ks: dict, split: str, target: str) -> go.Figure:
    """Per-group CDFs of Q's predictions (exact mixture) with the KS gap marked."""
    part = cdfs[cdfs["split"] == split]
    fig = go.Figure()
    names = [g for g in part["group"].unique() if g != "overall"] + ["overall"]
    for i, name in enumerate(names):
        rows = part[part["group"] == name]
        fig.add_scatter(
            x=rows["threshold"],
            y=rows["cdf"],
            mode="lines",
            line_shape="hv",
            name=plot_text(name),
            line={
                "color": "#444444" if name == "overall" else PALETTE[i % len(PALETTE)],
                "dash": "dash" if name == "overall" else "solid",
            },
        )
    fig.add_scatter(
        x=[ks["threshold"], ks["threshold"]],
        y=[ks["group_cdf"], ks["overall_cdf"]],
        mode="lines+markers",
        name=f"KS gap {ks['gap']:.3f} ({plot_text(ks['group'])})",
        line={"color": "#d62728", "width": 4},
    )
    return _layout(
        fig, f"Prediction CDFs per group ({split})", f"predicted {plot_text(target)}", "P(Q(x) ≤ t)"
    )


def group_loss_figure(losses: pd.DataFrame, split: str, bound: float | None) -> go.Figure:
    """Each group's loss under Q and the baselines; the BGL bound as a line when it applies."""
    part = losses[losses["split"] == split]
    fig = go.Figure()
    for i, (model, rows) in enumerate(part.groupby("model", sort=False)):
        label = "fair regression Q" if model == "fair" else BASELINES.get(model, model)
        fig.add_bar(
            x=[plot_text(g) for g in rows["group"]],
            y=rows["loss"],
            name=label,
            marker_color=PALETTE[i],
        )
    if bound is not None:
        fig.add_hline(y=bound, line_dash="dash", annotation_text="bound ζ")
    return _layout(fig, f"Loss per group ({split})", "group", "loss")
