"""Plotly figures of the multiaccurate proxies page, the spread table across row splits and the
α slider's range learned from the runs."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from dashboard.components.charts import legend_above, legend_below
from fairengine.methods.multiaccurate_proxy import PROXIES
from fairengine.methods.multiaccurate_proxy.pipeline import PROXY_KNOBS
from fairengine.textsafe import plot_text

#: One colour per proxy, the same on every chart.
COLOURS = dict(zip(PROXIES, px.colors.qualitative.Plotly, strict=False))
#: The proxies in words, for legends and axes.
PROXY_NAMES = {
    "multiaccurate": "multiaccurate (linear)",
    "multiaccurate_tree": "multiaccurate (trees)",
    "true": "true groups (oracle)",
    "regression": "regression E[z|x]",
    "thresholded": "thresholded classifier",
    "constant": "constant mean(z)",
}
#: The bars of plot 2 and their labels (short: a legend line in a half-width column).
QUALITY = {
    "proxy_accuracy": "group accuracy",
    "proxy_auc": "group AUC",
    "multiaccuracy_violation_in_sample": "violation, in-sample (proxy rows)",
    "multiaccuracy_violation_held_out": "violation, held-out (test rows)",
}


def audit_heatmap(audit: pd.DataFrame, split: str, alpha: float) -> go.Figure:
    """Plot 1: the audited ratio violation |γ_k(z) − γ_k(ẑ)| per group × task on one split."""
    table = audit[audit["split"] == split].pivot(index="group", columns="task", values="violation")
    fig = px.imshow(
        table.to_numpy(),
        x=[plot_text(c) for c in table.columns],
        y=[plot_text(i) for i in table.index],
        color_continuous_scale="Reds",
        zmin=0.0,
        zmax=max(float(np.nanmax(table.to_numpy())) if table.size else 0.0, 2 * alpha),
        text_auto=".3f",
        aspect="auto",
        labels={"color": "violation"},
    )
    title = (
        f"Audit on {split} rows: ratio violation per group and task<br>"
        f"<sup>max over the auditor's error regions {{h ≠ y}}; α = {alpha:g}</sup>"
    )
    fig.update_layout(
        title={"text": title, "x": 0}, xaxis_title="task", yaxis_title="group", margin={"t": 80}
    )
    return fig


def quality_figure(points: pd.DataFrame | None, result_metrics: dict, proxy: str) -> go.Figure:
    """Plot 2: how well each proxy predicts the group (accuracy, AUC) beside its multiaccuracy
    violation, on test rows. ``points``: sweep points (any ε); else the current run only."""
    if points is not None and len(points):
        test = points[points["split"] == "test"]
        rows = test.groupby("proxy", sort=False)[list(QUALITY)].mean()
        rows = rows.reindex([p for p in PROXIES if p in rows.index])
    else:
        rows = pd.DataFrame(
            [{name: result_metrics[name] for name in QUALITY}],
            index=[proxy],
        )
    long = rows.reset_index(names="proxy").melt(id_vars="proxy", var_name="measure")
    long["measure"] = long["measure"].map(QUALITY)
    long["proxy"] = long["proxy"].map(lambda p: PROXY_NAMES.get(p, p))
    # bars across, proxies down: their names need no turned, cut tick labels
    fig = px.bar(long, y="proxy", x="value", color="measure", barmode="group", orientation="h")
    fig.update_layout(xaxis_title="", yaxis_title="")
    fig.update_yaxes(autorange="reversed")
    title = (
        "Accuracy ≠ multiaccuracy<br><sup>predicting the group (accuracy, AUC) vs the "
        "audited multiaccuracy violation (test)</sup>"
    )
    return legend_below(fig, title, entries=len(QUALITY), height=460)


def frontier_figure(points: pd.DataFrame | None, result_metrics: dict, proxy: str) -> go.Figure:
    """Plot 4: downstream test error vs TRUE-group violation as ε sweeps, one curve per proxy
    (the current run as a star)."""
    fig = go.Figure()
    if points is not None and len(points):
        test = points[points["split"] == "test"].sort_values("eps")
        for name in PROXIES:
            part = test[test["proxy"] == name]
            if part.empty:
                continue
            fig.add_scatter(
                x=part["true_group_gap"],
                y=part["error"],
                mode="lines+markers",
                name=PROXY_NAMES.get(name, name),
                line={"color": COLOURS.get(name)},
                text=[f"ε={e:g}" for e in part["eps"]],
                hovertemplate="%{text}<br>true violation %{x:.4f}<br>error %{y:.4f}",
            )
    fig.add_scatter(
        x=[result_metrics["true_group_gap"]],
        y=[result_metrics["error"]],
        mode="markers",
        marker={"symbol": "star", "size": 14, "color": COLOURS.get(proxy, "black")},
        name=f"current run ({PROXY_NAMES.get(proxy, proxy)})",
    )
    # Error and violation are >= 0: start both axes at 0 (a lone point would otherwise centre an
    # axis on itself and run it below 0).
    fig.update_xaxes(rangemode="tozero", title_text="true-group violation max_k |γ_k − γ|")
    fig.update_yaxes(rangemode="tozero", title_text="error (test)")
    if points is None or not len(points):
        note = {"text": "Sweep ε to draw every proxy's frontier", "font": {"color": "#6b7280"}}
        fig.add_annotation(**note, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    return legend_below(  # up to seven entries, one per line under the plot
        fig,
        "Downstream frontiers (test)<br><sup>error vs violation on the TRUE groups</sup>",
        entries=len(fig.data),
        height=460,
    )


def trace_figure(
    trace: np.ndarray,
    group_names: list[str],
    eps: list[float],
    floor: float | None = None,
    served: int | None = None,
) -> go.Figure:
    """Plot 3: the auditor's max additive violation per round of Algorithm 4 / 2, with the
    additive tolerance α·mean(z_k), (plot 8) the LP floor of linear G over the audit vectors
    found, a lower bound on what any linear proxy reaches, and the round of the proxy served
    (``served``; round 1 is the least-squares start)."""
    fig = go.Figure()
    for k, row in enumerate(np.atleast_2d(trace)):
        # With two groups both traces are often equal: the first is wide and pale, the later
        # ones thin and dashed on top, so no group's line hides another.
        dash = ("dash", "dot", "dashdot")[(k - 1) % 3]
        line = {"width": 1.5, "dash": dash} if k else {"width": 6, "color": "rgba(58,91,160,0.45)"}
        fig.add_scatter(
            y=row,
            x=np.arange(1, len(row) + 1),
            mode="lines",
            name=plot_text(group_names[k]),
            line=line,
        )
    for value in sorted(set(eps)):
        fig.add_hline(y=value, line_dash="dot", annotation_text=f"tolerance {value:.4f}")
    if served is not None:
        fig.add_vline(
            x=served,
            line_dash="dot",
            line_color="#b45309",
            annotation_text=f"served: round {served}",
        )
    if floor is not None and np.isfinite(floor):
        fig.add_hline(
            y=floor,
            line_dash="dash",
            line_color="grey",
            annotation_text=f"LP floor of linear G {floor:.4f}",
            annotation_position="bottom right",
        )
    fig.update_layout(
        xaxis_title="round t",
        yaxis_title="max |Σ(z − ẑ)1[h ≠ y]|/n",
    )
    return legend_above(
        fig, "Algorithm trace: the largest additive violation the auditor finds, per round"
    )


def alpha_figure(points: pd.DataFrame) -> go.Figure:
    """The tree class along α: the multiaccuracy violation in sample (proxy rows, where α is a
    bound) beside held out (test rows), so the user sees where a smaller α stops helping on
    rows the proxy never saw."""
    test = points[points["split"] == "test"].sort_values("alpha")
    fig = go.Figure()
    for column, name, dash in (
        ("multiaccuracy_violation_in_sample", "in-sample (proxy rows)", "dot"),
        ("multiaccuracy_violation_held_out", "held-out (test rows)", "solid"),
    ):
        fig.add_scatter(
            x=test["alpha"],
            y=test[column],
            mode="lines+markers",
            name=name,
            line={"dash": dash, "color": COLOURS["multiaccurate_tree"]},
            hovertemplate="α = %{x:g}<br>violation %{y:.3f}",
        )
    fig.update_xaxes(title_text="α (tree class, Algorithm 2)")
    fig.update_yaxes(rangemode="tozero", title_text="multiaccuracy violation (ratio)")
    return legend_above(fig, "Trees along α: in-sample vs held-out multiaccuracy")


def gaps_figure(gaps: pd.DataFrame) -> go.Figure:
    """Plot 6: γ_k − γ on test from the true groups and through the proxy."""
    long = gaps[gaps["split"] == "test"].melt(
        id_vars=["split", "group"], value_vars=["true_gap", "proxy_gap"]
    )
    long["group"] = long["group"].map(plot_text)
    long["variable"] = long["variable"].map(
        {"true_gap": "true groups", "proxy_gap": "through the proxy ẑ"}
    )
    fig = px.bar(long, x="group", y="value", color="variable", barmode="group")
    fig.update_layout(yaxis_title="γ_k − γ (test)", xaxis_title="group")
    return legend_above(
        fig,
        "Downstream gap per group<br><sup>γ_k − γ on test: true groups vs through ẑ</sup>",
        top=120,
    )


def spread_figure(summary: pd.DataFrame) -> go.Figure:
    """The downstream true-group gap and error across row splits: mean ± sd per proxy."""
    fig = go.Figure()
    for _, row in summary.iterrows():
        name = str(row["proxy"])
        fig.add_scatter(
            x=[row["true_group_gap mean"]],
            y=[row["error mean"]],
            error_x={"type": "data", "array": [row["true_group_gap std"]]},
            error_y={"type": "data", "array": [row["error std"]]},
            mode="markers",
            marker={"size": 11, "color": COLOURS.get(name)},
            name=PROXY_NAMES.get(name, name),
            hovertemplate=(
                f"{int(row['true_group_gap count'])} splits<br>true-group gap %{{x:.4f}}"
                "<br>error %{y:.4f}"
            ),
        )
    fig.update_xaxes(rangemode="tozero", title_text="true-group gap (test), mean ± sd")
    fig.update_yaxes(title_text="error (test), mean ± sd")
    fig.update_layout(height=420)
    return legend_above(fig)


def spread_summary(points: pd.DataFrame, proxies: Sequence[str]) -> pd.DataFrame:
    """Per proxy (in the order of ``proxies``): mean and sd over the split seeds of the test
    true-group gap and test error."""
    test = points[points["split"] == "test"]
    grouped = test.groupby("proxy")[["true_group_gap", "error"]]
    table = grouped.agg(["mean", "std", "count"])
    table.columns = [f"{metric} {stat}" for metric, stat in table.columns]
    order = [p for p in proxies if p in table.index]
    return table.loc[order].reset_index()


# ------------------------------------------------------------- the α slider's range


def alpha_range_key(task_fingerprint: str, knobs: dict) -> str:
    """Session key of the α range learned for this task and these proxy knobs (not α)."""
    proxy_knobs = [(k, knobs.get(k)) for k in PROXY_KNOBS if k != "alpha"]
    return f"map.alpha_range.{(task_fingerprint, proxy_knobs)!r}"


def alpha_knob(knob, alpha_range: list[float] | None):
    """The α knob with the range the runs computed for these rows: [lowest reachable, OLS
    start], rounded outwards to the slider's 0.001 step (so its lower end is still reached);
    its lower end stands for α = 0, "the lowest reachable". None: the declared knob."""
    if not alpha_range:
        return knob
    low = math.ceil(alpha_range[0] * 1000) / 1000
    high = max(math.ceil(alpha_range[1] * 1000) / 1000, low + 0.001)
    return dataclasses.replace(knob, default=low, low=low, high=high, step=0.001, log=False)
