"""Every Plotly figure of the dashboard, built from real runs on a table whose column names, group
values and category values hold HTML: the user's text reaches the figure escaped exactly once.

Plotly reads a small HTML subset (``<a href>``, ``<b>``, ``<br>``, entities) in trace names,
category labels, tick texts, hover texts and templates, titles and annotations; so a raw ``<a`` or
an ``&`` that starts no entity of ours must appear in no string of ``fig.to_dict()``, and a
doubly escaped ``&amp;amp;`` neither (a group ``a & b`` must show as ``a & b``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from types import SimpleNamespace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from fairengine.data import Task, from_frame
from fairengine.methods import get_method
from fairengine.methods.base import RunResult
from fairengine.textsafe import plot_text

LINK = '<a href="https://example.com/h">h</a>'
BOLD = "<b>b</b> & co"
SENSITIVE = "<a href='https://example.com/s'>grp</a>"
TARGET = "y & <b>t</b>"
AMOUNT = "<b>amount</b> (€)"
NUMERIC = "<img src=x>"
CATEGORY = "<b>edu</b>"
LEVELS = ("<i>hs</i>", "uni & more")
GROUPS = (LINK, BOLD)

#: Markup and entities only user text could bring (the charts' own strings use <br>, <b>, <sup>).
_RAW = re.compile(r"<(a|img|i)\b|<b>(b|t|edu|amount)</b>|&(?!amp;|lt;|gt;)|&amp;(amp|lt|gt);")


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple) or (
        isinstance(value, np.ndarray) and value.dtype == object
    ):
        for item in value:
            yield from _strings(item)


def assert_plot_safe(fig: go.Figure, shown: Iterable[str] = ()) -> None:
    """No raw markup, stray ``&`` or double escape from user text in any string of the figure;
    each of ``shown`` is in it, escaped once."""
    texts = list(_strings(fig.to_dict()))
    bad = sorted({t for t in texts if _RAW.search(t)})
    assert bad == []
    joined = "\n".join(texts)
    for text in shown:
        assert plot_text(text) in joined, text


def _frame(n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    group = np.where(rng.random(n) < 0.5, LINK, BOLD)
    age = rng.integers(20, 60, n)
    score = age / 60 + (group == LINK) * 0.3 + rng.normal(0, 0.2, n)
    return pd.DataFrame(
        {
            "age": age,
            NUMERIC: rng.integers(10, 50, n),
            CATEGORY: rng.choice(LEVELS, n),
            SENSITIVE: group,
            TARGET: np.where(score > np.median(score), "yes", "no"),
            AMOUNT: score,
        }
    )


@pytest.fixture(scope="module")
def classification() -> Task:
    task = from_frame(_frame().drop(columns=AMOUNT), target=TARGET, sensitive=SENSITIVE)
    assert set(task.group_names) == set(GROUPS)
    return task


@pytest.fixture(scope="module")
def regression() -> Task:
    return from_frame(_frame().drop(columns=TARGET), target=AMOUNT, sensitive=SENSITIVE)


def _run(task: Task, method: str, **knobs: object) -> tuple[Task, Task, RunResult]:
    train, test = task.split()
    return train, test, get_method(method).run(train, test, **knobs)


def _sweep(method: str, task: Task, grid: dict) -> pd.DataFrame:
    from fairengine.frontier import sweep

    train, test = task.split()
    return sweep(method, train, test, grid).points


def test_data_and_compare_figures(classification: Task) -> None:
    from dashboard.components import cached, charts
    from fairengine.frontier.compare import comparison_table, mark_pareto
    from fairengine.metrics import task_group_table

    overview = cached.group_overview(classification, classification.fingerprint)
    assert_plot_safe(charts.group_sizes_figure(overview), GROUPS)
    assert_plot_safe(charts.group_rates_figure(overview, "classification"), GROUPS)

    _, test, result = _run(classification, "balanced_filtering")
    groups = task_group_table(test, result.model.metric_predictions(test.X), ci=0.95)
    assert_plot_safe(charts.group_metrics_figure(groups, "classification"), GROUPS)
    # A stored point's knobs and an unknown method's name are shown as they are.
    point = SimpleNamespace(
        method=SENSITIVE,
        point_id="p1",
        knobs={**result.knobs, "note": LINK},
        metrics=result.metrics,
    )
    table = mark_pareto(comparison_table([point]), "imbalance", "disclosivity")
    fig = charts.frontier_figure(table[table["split"] == "test"], "imbalance", "disclosivity", "p1")
    assert_plot_safe(fig, [SENSITIVE, LINK])


def test_balanced_filtering_figures(classification: Task) -> None:
    from dashboard.components import balanced_filtering_charts as bf
    from fairengine.methods.balanced_filtering import tradeoff_curves
    from fairengine.sweeps.balanced_filtering import tradeoff_points

    _, _, result = _run(classification, "balanced_filtering")
    art = result.artifacts
    for minus in (False, True):
        fig = bf.heatmap_figure(art["A"], art["base_rates"], art["group_names"], minus_base=minus)
        assert_plot_safe(fig, GROUPS)
    assert_plot_safe(bf.proportions_figure(result), GROUPS)
    points = tradeoff_points(classification, **bf.curve_args({}, bf.DEFAULT_CURVES[:1], 1)[0])
    assert_plot_safe(bf.tradeoff_figure(tradeoff_curves(points), points))


def test_maxent_figures(classification: Task) -> None:
    from dashboard.components import maxent_charts
    from dashboard.components.method_page import plane_figure

    _, _, result = _run(classification, "maxent")
    art = result.artifacts
    assert_plot_safe(maxent_charts.rates_figure(art["rates"], 0.8))
    assert_plot_safe(maxent_charts.group_outcomes_figure(art["group_rates"]), GROUPS)
    coordinates = list(art["marginals"]["coordinate"])
    assert any(CATEGORY in c for c in coordinates), coordinates
    assert_plot_safe(maxent_charts.marginals_figure(art["marginals"]), coordinates)
    points = _sweep("maxent", classification, {"C": [0.0, 0.5]})
    assert_plot_safe(plane_figure(get_method("maxent"), points, "C"))


def test_noisy_groups_figures(classification: Task) -> None:
    from dashboard.components import noisy_groups_charts

    _, _, result = _run(classification, "noisy_groups")
    for constraint in ("tpr", "eo", "dp"):
        fig = noisy_groups_charts.rates_figure(result.artifacts["group_rates"], constraint)
        assert_plot_safe(fig, GROUPS)
    points = _sweep("noisy_groups", classification, {"method": ["naive"], "noise": [0.1, 0.2]})
    assert_plot_safe(noisy_groups_charts.violation_vs_noise(points, 0.05))
    assert_plot_safe(noisy_groups_charts.error_vs_noise(points))
    assert_plot_safe(noisy_groups_charts.noisy_vs_true(points))


@pytest.mark.parametrize("grouping", ["all", "largest_vs_rest"])
def test_multiaccurate_proxy_figures(classification: Task, grouping: str) -> None:
    from dashboard.components import multiaccurate_proxy_charts as charts

    _, _, result = _run(classification, "multiaccurate_proxy", grouping=grouping)
    art, summary = result.artifacts, result.artifacts["summary"]
    tasks = list(summary["tasks"])
    assert TARGET in tasks and any(NUMERIC in t for t in tasks), tasks
    names = list(summary["group_names"])
    assert any(BOLD in n for n in names), names
    for split in ("proxy", "train", "test"):
        assert_plot_safe(charts.audit_heatmap(art["audit"], split, 0.05), [*names, *tasks])
    assert_plot_safe(charts.gaps_figure(art["group_gaps"]), names)
    if art["trace"] is not None:
        fig = charts.trace_figure(art["trace"], names, [summary["tolerance"]], None)
        assert_plot_safe(fig, names)
    metrics = result.metrics["test"]
    assert_plot_safe(charts.frontier_figure(None, metrics, result.knobs["proxy"]))
    assert_plot_safe(charts.quality_figure(None, metrics, result.knobs["proxy"]))


def test_fair_regression_figures(regression: Task) -> None:
    from dashboard.components import fair_regression_charts as charts

    _, _, result = _run(regression, "fair_regression")
    art = result.artifacts
    fig = charts.frontier_figure(result.metrics["test"], art["baselines"], None, "test")
    assert_plot_safe(fig)
    fig = charts.cdf_figure(art["group_cdfs"], art["ks"]["test"], "test", regression.target)
    assert_plot_safe(fig, [*GROUPS, AMOUNT])
    assert_plot_safe(charts.group_loss_figure(art["group_losses"], "test", 0.1), GROUPS)
