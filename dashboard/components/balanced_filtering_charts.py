"""Cached engine calls and charts of the balanced-filtering page (the page computes nothing).
Group names come from the data: they enter a figure through
:func:`~fairengine.textsafe.plot_text`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from dashboard.components.charts import axes_layout
from dashboard.components.state import stop_page
from fairengine.data import Task
from fairengine.methods import get_method
from fairengine.methods.balanced_filtering import CURVES, tradeoff_curves
from fairengine.methods.balanced_filtering.curves import curve_grid
from fairengine.methods.base import RunResult
from fairengine.sweeps.balanced_filtering import missing_points, tradeoff_points
from fairengine.textsafe import md_text, plot_text

#: the page's default curves: the paper's two tree proxies
DEFAULT_CURVES = ("(α, β) proxy", "Relaxed (α, β) proxy")
_PALETTE = ("#1565c0", "#6a1b9a", "#2e7d32", "#ef6c00", "#8d6e63", "#c62828")
_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
_SYMBOLS = ("circle", "diamond", "square", "triangle-up", "x", "cross")


def target_widget(groups: Sequence[str]) -> tuple[float, ...] | None:
    """The target distribution over ``groups``: None for uniform, else the custom shares the
    visitor enters, renormalised to sum 1 (the page ends when none is positive)."""
    mode = st.radio("Target distribution", ["uniform", "custom"], horizontal=True, key="w.bf.tmode")
    if mode != "custom":
        return None
    cols = st.columns(min(len(groups), 6))
    raw = [
        cols[i % len(cols)].number_input(
            md_text(g), 0.0, 1.0, 1.0 / len(groups), 0.01, key=f"w.bf.t{i}"
        )
        for i, g in enumerate(groups)
    ]
    if sum(raw) <= 0:
        st.error("The custom target needs at least one positive share.")
        stop_page()
    target = tuple(float(v) / sum(raw) for v in raw)
    st.caption("Shares renormalised to sum 1: " + ", ".join(f"{v:.3f}" for v in target))
    return target


@st.cache_data(show_spinner=False, max_entries=16)
def accepted_csv(_result: RunResult, _test: Task, key: str, seed: int) -> bytes:
    """Accept flags (Algorithm 2, seeded) and acceptance probabilities of the test rows."""
    del key
    model = _result.model
    frame = pd.DataFrame(
        {
            "row": _test.frame.index,
            "acceptance_probability": model.predict_score(_test.X),
            "accepted": model.predict(_test.X, random_state=seed),
        }
    )
    return frame.to_csv(index=False).encode()


def curve_args(knobs: dict, curves: Sequence[str], n_seeds: int) -> tuple[dict, int]:
    """The keyword arguments of :func:`tradeoff_points` for the chosen curves over ``n_seeds``
    splits (seed s is the task's split with ``random_state=s``, seed 0 the page's own), and
    their number of points. α runs over the method's page grid (the shipped demo's: the default
    curves on Adult (race) are read, not computed), η over its ``"baselines"`` grid."""
    method = get_method("balanced_filtering")
    fixed = {k: v for k, v in knobs.items() if k not in ("proxy", "alpha", "eta", "relaxed")}
    sweep = {
        "curves": tuple(curves),
        "alphas": tuple(method.grid("page")["alpha"]),
        "etas": tuple(method.grid("baselines")["eta"]),
    }
    n_points = int(n_seeds) * len(curve_grid(**sweep, **fixed))
    return {**sweep, "seeds": tuple(range(int(n_seeds))), "test_size": 0.3, **fixed}, n_points


@st.cache_data(show_spinner=False, max_entries=32, ttl=3600)
def curves_stored(
    _task: Task, _store, key: str, knobs: tuple[tuple[str, object], ...], curves, n_seeds: int
) -> bool:
    """True when every point of these curves is in ``_store`` (drawn at once, nothing to run);
    cached per (task fingerprint + store, knobs, curves, seeds): a stored point stays stored."""
    del key
    return missing_points(_task, _store, **curve_args(dict(knobs), curves, n_seeds)[0]) == 0


def tradeoff_view(
    task: Task, knobs: dict, store, curves: tuple[str, ...], n_seeds: int
) -> tuple[go.Figure, str]:
    """The trade-off figure and its caption for curves whose points are all in ``store`` (the
    page shares them between sessions with :func:`dashboard.components.shared.shared`)."""
    points = tradeoff_points(task, store=store, **curve_args(knobs, curves, n_seeds)[0])
    table = tradeoff_curves(points)
    return tradeoff_figure(table, points), gap_caption(table)


def gap_caption(curves: pd.DataFrame) -> str:
    """One sentence on the train / test imbalance at the largest α of each tree curve."""
    parts = []
    for name in DEFAULT_CURVES:
        rows = curves[curves["curve"] == name]
        if rows.empty:
            continue
        top = rows[rows["level"] == rows["level"].max()].set_index("split")
        half = {
            s: (top.at[s, "imbalance_high"] - top.at[s, "imbalance_low"]) / 2 for s in top.index
        }
        parts.append(
            f"{name} at α = {top['level'].iloc[0]:g}: imbalance {top.at['train', 'imbalance']:.3f}"
            f" ± {half['train']:.3f} in-sample, {top.at['test', 'imbalance']:.3f}"
            f" ± {half['test']:.3f} on the test split, keeping "
            f"{top.at['train', 'acceptance_rate']:.2%} of the candidates"
        )
    empty = curves[curves["n_empty"] > 0] if "n_empty" in curves else curves.iloc[:0]
    if not empty.empty:
        parts.append(
            f"{int(empty['n_empty'].sum())} fitted filters accept no row of their "
            f"{'/'.join(sorted(set(empty['split'])))} split (ρ only on tiny leaves that split "
            "never reaches): those points are left out of the means"
        )
    return "; ".join(parts) + "." if parts else ""


def heatmap_figure(
    A: np.ndarray, base: np.ndarray, groups: list[str], *, minus_base: bool
) -> go.Figure:
    """Heatmap of A (rows = leaves, columns = groups), or of A - r, values annotated."""
    values = A - base[None, :] if minus_base else A
    fig = go.Figure(
        go.Heatmap(
            z=values,
            x=[plot_text(g) for g in groups],
            y=[f"leaf {j}" for j in range(len(A))],
            text=np.round(values, 3),
            texttemplate="%{text}",
            colorscale="RdBu" if minus_base else "Blues",
            zmid=0 if minus_base else None,
        )
    )
    fig.update_yaxes(autorange="reversed")
    title = (
        "A − base rates: how far each leaf departs from the population"
        if minus_base
        else "A = P(group | proxy leaf): what each leaf reveals"
    )
    return axes_layout(fig, title, (None, None), height=max(260, 60 + 40 * len(A)))


def proportions_figure(result: RunResult) -> go.Figure:
    """Group proportions before and after filtering, train and test, with the target marked."""
    art = result.artifacts
    groups = [plot_text(g) for g in art["group_names"]]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("train", "test"), shared_yaxes=True)
    colors = {"before": "#9aa5b1", "after": "#2e7d32"}
    for col, split in enumerate(("train", "test"), start=1):
        for which in ("before", "after"):
            fig.add_bar(
                x=groups,
                y=art[f"proportions_{which}_{split}"],
                name=f"{which} filtering",
                marker_color=colors[which],
                showlegend=col == 1,
                row=1,
                col=col,
            )
        target = {"symbol": "line-ew-open", "size": 30, "color": "black"}
        fig.add_scatter(
            x=groups,
            y=art["target"],
            mode="markers",
            marker=target,
            name="target",
            showlegend=col == 1,
            row=1,
            col=col,
        )
    fig.update_layout(barmode="group")
    title = "Group shares before and after filtering, with the target"
    return axes_layout(fig, title, (None, None))


def _rgba(color: str, alpha: float) -> str:
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _curve(
    fig: go.Figure, rows: pd.DataFrame, raw: pd.DataFrame, name: str, i: int, col: int
) -> None:
    """One proxy's mean curve on one split, with its 95% band (when there are several seeds)
    and its disclosivity error bars, over every split's own point (``raw``: small, translucent,
    no legend entry, so the spread behind the mean shows: a mean can hide one split with a
    vanished group)."""
    color = _PALETTE[i % len(_PALETTE)]
    fig.add_scatter(
        x=raw["disclosivity"],
        y=raw["imbalance"],
        mode="markers",
        marker={"symbol": _SYMBOLS[i % len(_SYMBOLS)], "size": 5, "color": color},
        opacity=0.35,
        name=f"{name} (each split)",
        legendgroup=name,
        showlegend=False,
        customdata=np.column_stack([raw["level"], raw["seed"]]),
        hovertemplate="disclosivity %{x:.3f}<br>imbalance %{y:.3f}<br>α or η "
        "%{customdata[0]}<br>split seed %{customdata[1]}<extra>" + name + "</extra>",
        row=1,
        col=col,
    )
    x = rows["disclosivity"].to_numpy()
    if int(rows["n_seeds"].min()) > 1:
        fig.add_scatter(
            x=np.concatenate([x, x[::-1]]),
            y=np.concatenate(
                [
                    rows["imbalance_high"].to_numpy(),
                    # imbalance is a distance: the band stops at 0
                    rows["imbalance_low"].clip(lower=0.0).to_numpy()[::-1],
                ]
            ),
            fill="toself",
            mode="lines",  # not the default markers at the band's vertices
            fillcolor=_rgba(color, 0.15),
            line={"width": 0},
            hoverinfo="skip",
            name=f"{name} (95% band)",
            legendgroup=name,
            showlegend=False,
            row=1,
            col=col,
        )
    fig.add_scatter(
        x=x,
        y=rows["imbalance"],
        mode="lines+markers",
        name=name,
        legendgroup=name,
        # Earlier curves wider, later ones thinner on top: where two coincide (the
        # (α, β) and relaxed trees often do) both stay visible.
        line={
            "color": color,
            "dash": _DASHES[i % len(_DASHES)],
            "width": max(1.5, 6.0 - 1.5 * i),
        },
        marker={
            "symbol": _SYMBOLS[i % len(_SYMBOLS)],
            "size": max(6, 12 - 2 * i),
            "opacity": 0.8,
        },
        opacity=0.85,
        error_x={
            "type": "data",
            "symmetric": False,
            "array": rows["disclosivity_high"] - x,
            "arrayminus": x - rows["disclosivity_low"],
            "color": _rgba(color, 0.4),
            "thickness": 1,
        },
        showlegend=col == 1,
        customdata=np.column_stack([rows["level"], rows["acceptance_rate"], rows["n_seeds"]]),
        hovertemplate="disclosivity %{x:.3f}<br>imbalance %{y:.3f}"
        "<br>α or η %{customdata[0]}<br>acceptance %{customdata[1]:.3f}"
        "<br>seeds (non-empty sample) %{customdata[2]}<extra>" + name + "</extra>",
        row=1,
        col=col,
    )


def tradeoff_figure(curves: pd.DataFrame, points: pd.DataFrame) -> go.Figure:
    """Disclosivity vs imbalance per proxy, train and test, mean over seeds with 95% bands and
    every split's own point (``points``, of :func:`tradeoff_points`), as the paper's Figures
    1-2 (mean over splits with confidence intervals).

    ``curves`` is :func:`~fairengine.methods.balanced_filtering.tradeoff_curves` output. Each
    proxy has its own colour, dash and marker, and its band (t-interval of the imbalance,
    shaded, cut at 0) and error bars (t-interval of the disclosivity) are drawn half-transparent,
    and earlier curves are drawn wider than later ones, so a curve lying on another stays visible.
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=("train", "test"), shared_yaxes=True)
    for i, name in enumerate(CURVES):
        part = curves[curves["curve"] == name]
        if part.empty:
            continue
        for col, split in enumerate(("train", "test"), start=1):
            raw = points[(points["curve"] == name) & (points["split"] == split)]
            _curve(fig, part[part["split"] == split].sort_values("level"), raw, name, i, col)
    fig.update_xaxes(title_text="disclosivity")
    fig.update_yaxes(title_text="imbalance β", col=1)
    fig.update_yaxes(rangemode="tozero")
    title = "Disclosivity vs imbalance per proxy (mean over random splits, 95% bands, dots: splits)"
    return axes_layout(fig, title, (None, None), height=460)
