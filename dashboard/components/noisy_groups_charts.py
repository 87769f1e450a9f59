"""Charts of the noisy groups page (Wang et al. 2020): per-group rates, Theorem 1's bound, and the
noise sweep in the style of the paper's Figures 1–3 (and 4/7 against them)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.components.charts import PALETTE, axes_layout
from fairengine.textsafe import plot_text

LABELS = {"naive": "Naive", "dro": "DRO", "soft": "Soft assignments", "unconstrained":
          "Unconstrained"}  # fmt: skip


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str) -> go.Figure:
    legend = {"orientation": "h", "y": -0.3}
    return axes_layout(fig, title, (x_title, y_title), height=360, legend=legend)


#: Rates each constraint family compares across groups, with their names for people.
RATES = {"tpr": ("tpr",), "eo": ("tpr", "fpr"), "dp": ("ppr",)}
RATE_NAMES = {"tpr": "true positive rate", "fpr": "false positive rate",
              "ppr": "positive prediction rate"}  # fmt: skip


def rates_figure(rates: pd.DataFrame, constraint: str = "tpr", split: str = "test") -> go.Figure:
    """Per-group rates of the chosen constraint (TPR; TPR and FPR; or PPR) on the true and on
    the noisy groups."""
    part = rates[rates["split"] == split]
    fig = go.Figure()
    i = 0
    for rate in RATES[constraint]:
        for label, rows in part.groupby("groups", sort=False):
            suffix = f" {rate.upper()}" if len(RATES[constraint]) > 1 else ""
            fig.add_bar(
                x=[plot_text(g) for g in rows["group"]],
                y=rows[rate],
                name=f"{label} groups{suffix}",
                marker_color=PALETTE[i % len(PALETTE)],
            )
            i += 1
    fig.update_layout(barmode="group")
    title = f"Per-group {' and '.join(RATE_NAMES[r] for r in RATES[constraint])} ({split})"
    return _layout(fig, title, "group", " / ".join(r.upper() for r in RATES[constraint]))


#: What the table says for a bound of 1 or more: a rate gap never exceeds 1.
VACUOUS = "vacuous (≥ 1): says nothing for this data"
#: The rates in words.
RATE_WORDS = {"tpr": "true-positive rate", "fpr": "false-positive rate", "ppr": "selection rate"}


def bound_table(bound: pd.DataFrame) -> pd.DataFrame:
    """Theorem 1's bound per (rate, group) as a table (the bound can be far above the observed
    violations, so it gets no shared bar scale). A bound of 1 or more on a rate gap, which is
    never above 1, is shown as :data:`VACUOUS` rather than as a number."""
    table = bound.rename(
        columns={
            "group": "true group",
            "true_violation": "true-group violation",
            "noisy_violation": "noisy-group violation",
            "tv": "TV(p_j, p̂_j)",
            "bound": "Theorem 1 bound",
        }
    )
    table["rate"] = table["rate"].map(lambda r: RATE_WORDS.get(str(r).lower(), str(r)))
    table = table.round(4)
    table["Theorem 1 bound"] = [
        VACUOUS if b >= 1 else f"{b:.4f}" for b in bound["bound"].astype(float)
    ]
    return table


def noise_model_table(artifacts: dict, group_names: Sequence[str]) -> pd.DataFrame:
    """The noise model's radii and the selection's outcome as a two-column table (quantity,
    value); per-group arrays are written as ``group value`` pairs."""

    def text(value: object) -> str:
        if value is None:
            return "–"
        if isinstance(value, np.ndarray | list | tuple):
            values = [float(v) for v in np.ravel(value)]
            names = list(group_names) if len(group_names) == len(values) else range(len(values))
            return ", ".join(f"{n}: {v:.4f}" for n, v in zip(names, values, strict=True))
        if isinstance(value, float):
            return f"{value:.4f}"
        return str(value)

    rows = {
        "γ, safe (per group)": artifacts["gamma_safe"],
        "γ, paper (per group)": artifacts["gamma_paper"],
        "γ used by DRO": artifacts["gamma_used"],
        "empirical TV on test (per group)": artifacts["empirical_tv"],
        "best iterate (step)": artifacts["best_step"],
        "selection": artifacts["status_message"],
        "violation, selection's check (selection rows)": artifacts["adversary_violation"],
        "β used": artifacts["beta_used"],
    }
    return pd.DataFrame({"quantity": list(rows), "value": [text(v) for v in rows.values()]})


def _lines_by_method(points: pd.DataFrame, split: str, column: str) -> go.Figure:
    """One line of ``column`` against the noise level per approach."""
    fig = go.Figure()
    part = points[points["split"] == split].sort_values("noise")
    for i, (method, rows) in enumerate(part.groupby("method", sort=False)):
        name, color = LABELS.get(method, method), PALETTE[i]
        fig.add_scatter(
            x=rows["noise"], y=rows[column], mode="lines+markers", name=name, line={"color": color}
        )
    return fig


def violation_vs_noise(points: pd.DataFrame, slack: float, split: str = "test") -> go.Figure:
    """Max true-group violation vs noise level per approach (the paper's Figures 1–2)."""
    fig = _lines_by_method(points, split, "true_violation")
    fig.add_hline(y=0.0, line_dash="dot", annotation_text="0: constraints met below")
    fig.add_hline(y=-slack, line_color="#222222", annotation_text="all negatives (−α)")
    return _layout(
        fig, f"True-group violation vs noise ({split})", "noise level", "max true-group violation"
    )


def error_vs_noise(points: pd.DataFrame, split: str = "test") -> go.Figure:
    """Error vs noise level per approach (the paper's Figure 3)."""
    fig = _lines_by_method(points, split, "error")
    return _layout(fig, f"Error vs noise ({split})", "noise level", "error")


def noisy_vs_true(points: pd.DataFrame, split: str = "test") -> go.Figure:
    """Noisy-group vs true-group violation of every swept point, with the y = x line (naive
    meets its constraints on Ĝ but not on G: the paper's Figures 4/7 against 1/2)."""
    part = points[points["split"] == split]
    fig = go.Figure()
    for i, (method, rows) in enumerate(part.groupby("method", sort=False)):
        fig.add_scatter(
            x=rows["noisy_violation"],
            y=rows["true_violation"],
            mode="markers",
            name=LABELS.get(method, method),
            marker={"color": PALETTE[i], "size": 10},
            text=[f"noise {v:g}" for v in rows["noise"]],
            hovertemplate="%{text}<extra></extra>",
        )
    if len(part):
        low = float(min(part["noisy_violation"].min(), part["true_violation"].min()))
        high = float(max(part["noisy_violation"].max(), part["true_violation"].max()))
        fig.add_scatter(
            x=[low, high],
            y=[low, high],
            mode="lines",
            name="y = x",
            line={"color": "#888888", "dash": "dash"},
        )
    return _layout(
        fig,
        f"Noisy- vs true-group violation ({split})",
        "noisy-group violation",
        "true-group violation",
    )
