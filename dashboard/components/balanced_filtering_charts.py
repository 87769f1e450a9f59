"""Cached engine calls and charts of the balanced-filtering page (the page computes nothing).

Group names come from the data: they enter a figure through
:func:`~fairengine.textsafe.plot_text` (Plotly reads a small HTML subset in labels)."""

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
from fairengine.methods.balanced_filtering import CURVES
from fairengine.methods.base import RunResult
from fairengine.sweeps.balanced_filtering import missing_points, tradeoff_points
from fairengine.textsafe import md_text, plot_text

#: the page's default curves: the paper's two tree proxies
DEFAULT_CURVES = ("(α, β) proxy", "Relaxed (α, β) proxy")


def page_alphas() -> tuple[float, ...]:
    """α values of the page's tree curves: the method's page grid (the shipped demo's alphas,
    so the default curves on Adult (race) are read, not computed)."""
    return tuple(get_method("balanced_filtering").grid("page")["alpha"])


def page_etas() -> tuple[float, ...]:
    """η values of the page's baseline curves (the method's ``"baselines"`` grid)."""
    return tuple(get_method("balanced_filtering").grid("baselines")["eta"])


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


def _curve_args(knobs: dict, curves, n_seeds: int) -> dict:
    fixed = {k: v for k, v in knobs.items() if k not in ("proxy", "alpha", "eta", "relaxed")}
    return {
        "curves": tuple(curves),
        "alphas": page_alphas(),
        "etas": page_etas(),
        "seeds": tuple(range(int(n_seeds))),
        "test_size": 0.3,
        **fixed,
    }


def curve_points(
    task: Task, knobs: dict, store, curves, n_seeds: int, progress=None
) -> pd.DataFrame:
    """Points of the chosen trade-off curves over ``n_seeds`` splits (cached in ``store``).

    Seed s is the task's split with ``random_state=s`` (seed 0 is the page's own split); the
    shipped demo frontiers hold the default curves on Adult (race) for the demo seeds.
    """
    return tradeoff_points(
        task, store=store, progress=progress, **_curve_args(knobs, curves, n_seeds)
    )


@st.cache_data(show_spinner=False, max_entries=32, ttl=3600)
def curves_stored(
    _task: Task, _store, key: str, knobs: tuple[tuple[str, object], ...], curves, n_seeds: int
) -> bool:
    """True when every point of these curves is in ``_store`` (drawn at once, nothing to run);
    cached per (task fingerprint + store, knobs, curves, seeds): a stored point stays stored."""
    del key
    return missing_points(_task, _store, **_curve_args(dict(knobs), curves, n_seeds)) == 0


def tradeoff_view(
    task: Task, knobs: dict, store, curves: tuple[str, ...], n_seeds: int
) -> tuple[go.Figure, str]:
    """The trade-off figure and its caption for curves whose points are all in ``store`` (the
    page shares them between sessions with :func:`dashboard.components.shared.shared`)."""
    from fairengine.methods.balanced_filtering import tradeoff_curves

    points = curve_points(task, knobs, store, curves, n_seeds)
    table = tradeoff_curves(points)
    return tradeoff_figure(table, None, points), gap_caption(table)


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


def _layout(fig: go.Figure, title: str, height: int = 380) -> go.Figure:
    return axes_layout(fig, title, (None, None), height=height)


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
    return _layout(fig, title, height=max(260, 60 + 40 * len(A)))


def proportions_figure(result: RunResult) -> go.Figure:
    """Group proportions before and after filtering, train and test, with the target marked."""
    art = result.artifacts
    groups = [plot_text(g) for g in art["group_names"]]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("train", "test"), shared_yaxes=True)
    colors = {"before": "#9aa5b1", "after": "#2e7d32"}
    for col, split in enumerate(("train", "test"), start=1):
        for which in ("before", "after"):
            fig.add_trace(
                go.Bar(
                    x=groups,
                    y=art[f"proportions_{which}_{split}"],
                    name=f"{which} filtering",
                    marker_color=colors[which],
                    showlegend=col == 1,
                ),
                row=1,
                col=col,
            )
        _black_marker(fig, (groups, art["target"]), col, ("line-ew-open", 30), "target")
    fig.update_layout(barmode="group")
    return _layout(fig, "Group shares before and after filtering, with the target")


def _black_marker(
    fig: go.Figure, xy: tuple[Sequence, Sequence], col: int, shape: tuple[str, int], name: str
) -> None:
    """Black markers of ``shape`` (symbol, size) at ``xy`` in column ``col`` of the first row,
    named in the legend once (from column 1)."""
    symbol, size = shape
    fig.add_trace(
        go.Scatter(
            x=xy[0],
            y=xy[1],
            mode="markers",
            marker={"symbol": symbol, "size": size, "color": "black"},
            name=name,
            showlegend=col == 1,
        ),
        row=1,
        col=col,
    )


_PALETTE = ("#1565c0", "#6a1b9a", "#2e7d32", "#ef6c00", "#8d6e63", "#c62828")
_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
_SYMBOLS = ("circle", "diamond", "square", "triangle-up", "x", "cross")


def _rgba(color: str, alpha: float) -> str:
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _raw_points(fig: go.Figure, points: pd.DataFrame, name: str, color: str, i: int) -> None:
    """Every split's own point of curve ``name`` (small, translucent, no legend entry), so the
    spread behind the mean shows: a mean can hide one split with a vanished group."""
    part = points[points["curve"] == name]
    for col, split in enumerate(("train", "test"), start=1):
        rows = part[part["split"] == split]
        if rows.empty:
            continue
        fig.add_trace(
            go.Scatter(
                x=rows["disclosivity"],
                y=rows["imbalance"],
                mode="markers",
                marker={"symbol": _SYMBOLS[i % len(_SYMBOLS)], "size": 5, "color": color},
                opacity=0.35,
                name=f"{name} (each split)",
                legendgroup=name,
                showlegend=False,
                customdata=np.column_stack([rows["level"], rows["seed"]]),
                hovertemplate="disclosivity %{x:.3f}<br>imbalance %{y:.3f}<br>α or η "
                "%{customdata[0]}<br>split seed %{customdata[1]}<extra>" + name + "</extra>",
            ),
            row=1,
            col=col,
        )


def _curve(fig: go.Figure, rows: pd.DataFrame, name: str, i: int, col: int) -> None:
    """One proxy's mean curve on one split, with its 95% band (when there are several seeds)
    and its disclosivity error bars."""
    color = _PALETTE[i % len(_PALETTE)]
    x = rows["disclosivity"].to_numpy()
    if int(rows["n_seeds"].min()) > 1:
        fig.add_trace(
            go.Scatter(
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
            ),
            row=1,
            col=col,
        )
    fig.add_trace(
        go.Scatter(
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
        ),
        row=1,
        col=col,
    )


def tradeoff_figure(
    curves: pd.DataFrame, current: RunResult | None, points: pd.DataFrame | None = None
) -> go.Figure:
    """Disclosivity vs imbalance per proxy, train and test, mean over seeds with 95% bands and,
    when ``points`` (the per-split points of :func:`curve_points`) are given, every split's own
    point, as the paper's Figures 1-2 (mean over splits with confidence intervals).

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
        color = _PALETTE[i % len(_PALETTE)]
        if points is not None:
            _raw_points(fig, points, name, color, i)
        for col, split in enumerate(("train", "test"), start=1):
            rows = part[part["split"] == split].sort_values("level")
            _curve(fig, rows, name, i, col)
    if current is not None:
        for col, split in enumerate(("train", "test"), start=1):
            m = current.metrics[split]
            xy = ([m["disclosivity"]], [m["imbalance"]])
            _black_marker(fig, xy, col, ("star", 16), "current run")
    fig.update_xaxes(title_text="disclosivity")
    fig.update_yaxes(title_text="imbalance β", col=1)
    fig.update_yaxes(rangemode="tozero")
    return _layout(
        fig,
        "Disclosivity vs imbalance per proxy (mean over random splits, 95% bands, dots: splits)",
        height=460,
    )


#: The page's "How to read this page" guide: what to look at first, what each chart means and
#: where the paper's effect is (:func:`dashboard.components.page_help.how_to_read`).
HOW_TO_READ = """
**The question.** Can we pick a group-balanced sample from candidates whose group we may not use,
with a rule that reveals little about anyone's group?

- **Knobs.** The *disclosivity budget α* caps how much a leaf of the proxy tree may reveal about
  the group (0 = nothing beyond base rates). Larger α allows sharper proxies and a more balanced
  sample.
- **Numbers.** *Disclosivity* is what the fitted proxy reveals (≤ α); *imbalance β* is the L2
  distance between the accepted sample's group shares and the target (0 = perfectly balanced);
  the *acceptance rate* tells how many candidates you need.
- **Heat map.** Each row is a proxy leaf, each column a group: P(group | leaf). Toggle
  "A − base rates" to see how far each leaf departs from the population.
- **Bars.** Group shares before filtering, after filtering, and the target.
- **Trade-off curves.** Disclosivity (x) against imbalance (y) for the tree proxies and the
  baselines, on the training rows (left) and the test rows (right); lower-left is better. Each
  proxy has its own colour, dash and marker, so curves that coincide stay visible; the gap
  between the panels is overfitting.
"""
