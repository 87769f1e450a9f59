"""A comparison as one self-contained HTML file: no server, no outside request, prints cleanly.

Design notes: docs/howto/audit.md, "The HTML report".
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Any

from fairengine import metrics
from fairengine.audit.core import AuditResult
from fairengine.audit.cost import cost_of_fairness, worst_level
from fairengine.frontier.compare import knob_label
from fairengine.methods import get_method, list_methods
from fairengine.textsafe import html_text as _e
from fairengine.textsafe import plot_text, script_json

if TYPE_CHECKING:
    from fairengine.audit.comparison import Comparison

_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:72rem;
color:#1f2328;line-height:1.45;padding:0 1rem}
h1{font-size:1.6rem}h2{font-size:1.25rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem;
margin-top:2rem}h3{font-size:1.05rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.85rem}
th,td{border:1px solid #d0d7de;padding:.2rem .45rem;text-align:right}
th:first-child,td:first-child{text-align:left}
.pin{border:1px solid #d0d7de;border-radius:6px;padding:.6rem;margin:.8rem 0;overflow-x:auto}
.card{font-size:.85rem;background:#f6f8fa;padding:.5rem;max-height:36rem;overflow:auto}
.card pre{white-space:pre-wrap}
.ok{color:#1a7f37}.warn{color:#9a6700}.fail{color:#cf222e;font-weight:600}
.muted{color:#59636e;font-size:.85rem}
@media print{body{margin:0;max-width:none}.pin,table,figure,.plot{break-inside:avoid}
.card{max-height:none;overflow:visible}h2{break-after:avoid}}
"""
_CONFIG = {"displaylogo": False, "responsive": True}
_METHOD_COLORS = ("#0969da", "#1a7f37", "#8250df", "#bf3989", "#9a6700", "#0550ae", "#116329")
#: Each outside model's own (symbol, colour) on the plane, so several are told apart.
_OUTSIDE_MARKERS = (
    ("diamond", "#cf222e"), ("square", "#fb8500"), ("triangle-up", "#6e40c9"),
    ("pentagon", "#0a3069"), ("hexagon", "#7d4e00"), ("star-diamond", "#a40e26"),
)  # fmt: skip
_OUTSIDE_LINE = {"color": "#1f2328", "width": 1}
_GREY = "#59636e"


#: The Markdown a model card is written in: headings, paragraphs, "- " lists, pipe tables,
#: fenced code blocks, and inline ``**bold**``, code spans and backslash escapes.
_INLINE = re.compile(r"\\([!-/:-@\[-`{-~])|(`+)|\*\*")
_BACKTICKS = re.compile("`+")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def _inline_html(text: str) -> str:
    """One line of card Markdown as HTML: every character of the text escaped, only ``**``,
    code spans and backslash escapes read as Markdown."""
    out, bold, at = [], False, 0
    for match in _INLINE.finditer(text):
        if match.start() < at:
            continue
        out.append(_e(text[at : match.start()]))
        at = match.end()
        if match.group(1):
            out.append(_e(match.group(1)))
        elif match.group(2):
            fence = match.group(2)
            runs = _BACKTICKS.finditer(text, at)
            close = next((run for run in runs if len(run.group()) == len(fence)), None)
            if close is None:
                out.append(_e(fence))
                continue
            code = text[at : close.start()]
            code = code[1:-1] if len(code) > 1 and code[0] == code[-1] == " " else code
            out.append(f"<code>{_e(code)}</code>")
            at = close.end()
        else:
            out.append("</b>" if bold else "<b>")
            bold = not bold
    out.append(_e(text[at:]))
    return "".join(out) + ("</b>" if bold else "")


def _card_html(card: str) -> str:
    """A model card (the Markdown subset :mod:`fairengine.export.cards` writes) as HTML."""
    blocks, lines, i = [], card.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            end = next(
                (j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines)
            )
            blocks.append(f"<pre><code>{_e(chr(10).join(lines[i + 1 : end]))}</code></pre>")
            i = end + 1
            continue
        marker = next((m for m in ("|", "- ") if line.startswith(m)), None)
        end = i + 1
        while marker and end < len(lines) and lines[end].startswith(marker):
            end += 1
        if marker == "|":
            rows = [_CELL_SPLIT.split(x.strip().strip("|")) for x in lines[i:end]]
            rows = [rows[0], *(r for r in rows[1:] if not set("".join(r)) <= set("-: "))]
            cells = [[_inline_html(c.strip()) for c in row] for row in rows]
            blocks.append(_table(cells[0], cells[1:]))
        elif marker:
            items = "".join(f"<li>{_inline_html(x[2:])}</li>" for x in lines[i:end])
            blocks.append(f"<ul>{items}</ul>")
        elif line.startswith("#"):
            level = min(len(line) - len(line.lstrip("#")) + 2, 6)
            blocks.append(f"<h{level:d}>{_inline_html(line.lstrip('#').strip())}</h{level:d}>")
        elif line.strip():
            blocks.append(f"<p>{_inline_html(line)}</p>")
        i = end
    return "".join(blocks)


def _num(value: Any, digits: int = 4) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "–"
    return f"{number:.{digits}f}" if math.isfinite(number) else "–"


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """An HTML table; cells are already escaped HTML."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _data_section(task: dict[str, Any]) -> str:
    positive = f" (1 = {_e(task['positive_label'])})" if task.get("positive_label") else ""
    rows = [[_e(g["name"]), f"{g['rows']:,}", _num(g["base_rate"], 3)] for g in task["groups"]]
    notes = "".join(f"<li>{_e(n)}</li>" for n in task.get("notes") or ())
    return (
        "<h2>Data</h2>"
        f"<p>Table <b>{_e(task['name'])}</b>: {task['rows']:,} rows ({task['train_rows']:,} "
        f"training, {task['test_rows']:,} test), {task['features']:,} feature columns, a "
        f"{_e(task['kind'])} task. Target <code>{_e(task['target'])}</code>{positive}; "
        f"sensitive {', '.join(f'<code>{_e(s)}</code>' for s in task['sensitive'])}. Base rate "
        f"overall {_num(task['base_rate'], 3)}. Fingerprint "
        f"<code>{_e(task['train_fingerprint'][:16])}</code>.</p>"
        + _table(["group", "rows", "base rate"], rows)
        + (f"<ul class='muted'>{notes}</ul>" if notes else "")
    )


def _baselines(comparison: Comparison) -> dict[str, Any] | None:
    for item in [*comparison.outside, *comparison.points]:
        if item.get("baselines"):
            return item["baselines"]
    return None


def _plane_figure(comparison: Comparison, go: Any) -> str:
    x, y = comparison.axes
    fig = go.Figure()
    by_method: dict[str, list[dict]] = {}
    for point in comparison.points:
        by_method.setdefault(point["method"], []).append(point)
    for i, (method, points) in enumerate(by_method.items()):
        _add_method(fig, method, points, (x, y), _METHOD_COLORS[i % len(_METHOD_COLORS)])
    baselines = _baselines(comparison)
    for which, symbol in (("constant", "x"), ("unconstrained", "star")) if baselines else ():
        values, label = baselines[which].get("test", {}), baselines[f"{which}_label"]
        name = plot_text(f"{label} ({_num(values.get(x), 3)}, {_num(values.get(y), 3)})")
        marker = {"symbol": symbol, "size": 13, "color": _GREY}
        point = [(values.get(x), values.get(y))]
        _add_points(fig, point, name, hovertext=[plot_text(label)], marker=marker)
    for i, outside in enumerate(comparison.outside):
        symbol, color = _OUTSIDE_MARKERS[i % len(_OUTSIDE_MARKERS)]
        marker = {"symbol": symbol, "size": 15, "color": color, "line": _OUTSIDE_LINE}
        name, values = outside["name"], outside["metrics"]["test"]
        point, hover = [(values.get(x), values.get(y))], [plot_text(name)]
        _add_points(fig, point, plot_text(f"outside: {name}"), hovertext=hover, marker=marker)
    shown = [
        *(p["metrics"]["test"] for p in comparison.points),
        *(o["metrics"]["test"] for o in comparison.outside),
    ]
    fig.update_layout(
        xaxis=_axis(x, shown),
        yaxis=_axis(y, shown),
        legend={"orientation": "h", "yanchor": "top", "y": -0.15, "x": 0},
        height=600,
        margin={"l": 60, "r": 20, "t": 30, "b": 50},
        template="plotly_white",
    )
    return (
        "<h2>The plane</h2><p class='muted'>Every method's test-row points (its frontier as a "
        "line), the baselines, and the outside models.</p>" + _figure_html(fig, "plane")
    )


def _axis(metric: str, shown: list[dict]) -> dict[str, Any]:
    """The axis of ``metric``, its range around the methods' and outside models' points (8%
    margin each side), so a baseline far away (a constant predictor at zero unfairness) does not
    squeeze them into a corner; the baselines' coordinates are in their legend entries."""
    values = [v.get(metric) for v in shown]
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    low, high = (min(finite), max(finite)) if finite else (0.0, 0.0)
    margin = 0.08 * (high - low) if high > low else max(abs(high) * 0.05, 0.01)
    return {
        "title": plot_text(f"{metrics.metric_label(metric)} (test rows)"),
        "range": [low - margin, high + margin] if finite else None,
        "automargin": True,
    }


def _add_method(fig: Any, method: str, points: list[dict], axes: tuple, color: str) -> None:
    x, y = axes
    rows = [(p["metrics"]["test"].get(x), p["metrics"]["test"].get(y), p) for p in points]
    rows = [r for r in rows if r[0] is not None and r[1] is not None]
    if not rows:
        return
    hover = [plot_text(f"{p['point_id']}: {knob_label(p['knobs'])}") for *_, p in rows]
    marker = {"color": color, "size": 8, "opacity": 0.6}
    _add_points(fig, rows, plot_text(method), hovertext=hover, marker=marker, legendgroup=method)
    front = sorted((r for r in rows if (r[2].get("pareto") or {}).get("test")), key=lambda r: r[0])
    if front:
        line = {"color": color, "width": 2}
        name = plot_text(f"{method} frontier")
        _add_points(fig, front, name, mode="lines", line=line, legendgroup=method, showlegend=False)


def _add_points(fig: Any, rows: list[tuple], name: str, **style: Any) -> None:
    """One scatter trace (markers unless ``mode`` says otherwise) through the (x, y, ...) rows;
    ``name`` and any ``hovertext``: made safe for Plotly by the caller (:func:`plot_text`)."""
    style.setdefault("mode", "markers")
    fig.add_scatter(x=[r[0] for r in rows], y=[r[1] for r in rows], name=name, **style)


def _figure_html(fig: Any, name: str) -> str:
    """The figure as a ``<div>`` and the script that draws it (plotly.js is in the head)."""
    spec = json.loads(fig.to_json())  # plotly's encoder turns arrays and dates into JSON
    draw = ", ".join(script_json(v) for v in (name, spec["data"], spec.get("layout", {}), _CONFIG))
    return (
        f"<div class='plot'><div id='{_e(name)}'></div>"
        f"<script type='text/javascript'>Plotly.newPlot({draw});</script></div>"
    )


def _cost_rows(comparison: Comparison, outside: dict[str, Any]) -> Any:
    return cost_of_fairness(AuditResult.from_dict(outside), [comparison.points])


def _reading(comparison: Comparison) -> str:
    """A few plain sentences: each outside model against the reference and its cheapest
    fairer point, and how many points carry a warning or a failed check."""
    x, y = comparison.axes
    xl, yl = _e(metrics.metric_label(x).lower()), _e(metrics.metric_label(y).lower())
    sentences = []
    baselines = _baselines(comparison)
    for outside in comparison.outside:
        values = outside["metrics"]["test"]
        sentences.append(
            f"The outside model “{_e(outside['name'])}”, on the test rows: {xl} "
            f"{_num(values.get(x))}, {yl} {_num(values.get(y))}."
        )
        cost = _cost_rows(comparison, outside)
        if len(cost):
            sentences += _recommendation(cost.iloc[0], xl, yl)
        else:
            sentences.append(f"No point of the compared methods has a better {yl}.")
    if baselines:
        ref = baselines["unconstrained"].get("test", {})
        sentences.append(
            f"For reference, the {_e(baselines['unconstrained_label'])} fitted on the same "
            f"rows: {xl} {_num(ref.get(x))}, {yl} {_num(ref.get(y))}."
        )
    flagged = sum(
        any(c.get("level") != "ok" for c in p.get("checks") or ()) for p in comparison.points
    )
    sentences.append(
        f"{flagged} of {len(comparison.points)} method points carry a warning or a failed "
        "check (listed below); a point is a claim about these test rows only."
    )
    return "<h2>Reading</h2><p>" + " ".join(sentences) + "</p>"


def _recommendation(best: Any, xl: str, yl: str) -> list[str]:
    """The cheapest fairer point in words: what it gains, what it costs, and what using its
    method requires (the method's declared :attr:`~fairengine.methods.base.Method.requirements`)."""
    try:
        method = get_method(str(best["method"]))
    except ValueError:  # a comparison saved with a method this installation lacks
        method = None
    title = _e(method.title) if method is not None else _e(best["method"])
    cost = float(best["error_cost"])
    trade = (
        f"its {xl} is worse by {cost:.4f}: fairer decisions at the price of {cost:.4f} in {xl}"
        if cost > 0
        else f"its {xl} is no worse (it changes by {cost:+.4f}): fairer at no price in {xl}"
    )
    sentences = [
        f"The cheapest fairer point found is {title} ({_e(best['knobs'])}): its {yl} is "
        f"{_num(best['fairness'])}, better by {_num(best['fairness_gain'])} than the outside "
        f"model's, and {trade}.",
    ]
    requirements = method.requirements if method is not None else ()
    if requirements:
        sentences.append(f"Before adopting it, note what {title} requires:")
        sentences += [_e(r) for r in requirements]
    elif method is not None:
        sentences.append(f"{title} declares no requirement beyond the feature columns.")
    return sentences


_COST_HEADERS = [
    "method", "point", "knobs", "fairness", "error", "fairer by", "error cost", "checks",
]  # fmt: skip


def _cost_section(comparison: Comparison) -> str:
    parts = []
    for outside in comparison.outside:
        cost = _cost_rows(comparison, outside)
        rows = [
            [*map(_e, (r.method, r.point_id, r.knobs)), _num(r.fairness), _num(r.performance)]
            + [_num(r.fairness_gain), f"{r.error_cost:+.4f}", _e(r.checks)]
            for r in cost.itertuples()
        ]
        table = _table(_COST_HEADERS, rows) if rows else "<p>No compared point is fairer.</p>"
        parts.append(f"<h3>{_e(outside['name'])}</h3>{table}")
    return "<h2>What would it cost to be fairer?</h2>" + "".join(parts) if parts else ""


def _group_table(records: list[dict[str, Any]] | None, disparity: tuple = (None, 0.8)) -> str:
    """A pinned point's groups: its rates with bootstrap intervals, then (classification) each
    audit rate's ratio to the reference group with the four-fifths verdict."""
    if not records:
        return "<p class='muted'>No per-group table for this point.</p>"
    shown = ("accuracy", *metrics.GROUP_RATES, "auc", "brier", "mean_target", "mean_prediction")
    rates = [c for c in (*shown, "mse", "mae") if c in records[0]]
    rows = []
    for r in records:
        cells = [_e(r.get("group")), f"{int(r.get('n') or 0):,}"]
        for c in rates:
            low, high = r.get(c + "_low"), r.get(c + "_high")
            interval = f"<br><span class='muted'>[{_num(low, 3)}, {_num(high, 3)}]</span>"
            cells.append(_num(r.get(c), 3) + (interval if low is not None else ""))
        rows.append(cells)
    table = _table(["group", "rows", *[_e(_column_label(c)) for c in rates]], rows)
    return table + _disparity_table(records, *disparity)


def _column_label(name: str) -> str:
    """A group-table column's label: the registry's for audit rates and score measures."""
    info = metrics.GROUP_RATES.get(name) or metrics.GROUP_SCORE_MEASURES.get(name)
    return info.label if info is not None else metrics.metric_label(name).replace("_", " ")


def _verdict(passed: bool | None) -> str:
    if passed is None:
        return "–"
    return "<span class='ok'>pass</span>" if passed else "<span class='fail'>fail</span>"


def _disparity_table(records: list[dict[str, Any]], reference: str | None, tau: float) -> str:
    """Each audit rate's ratio to the reference group (``reference``, or the largest when None)
    and whether it passes the four-fifths rule at threshold ``tau`` (τ ≤ ratio ≤ 1/τ)."""
    rates = [c for c in metrics.GROUP_RATES if c + "_ratio" in records[0]]
    groups = [r for r in records if r.get("group") != "overall"]
    if not rates or not groups:
        return ""
    names = [r.get("group") for r in groups]
    chosen = reference is not None and reference in names
    if not chosen:
        shares = [float(r.get("share") or 0) for r in groups]
        reference = names[metrics.reference_index(names, shares)]
    rows = [
        [_e(r.get("group"))]
        + [f"{_num(r.get(c + '_ratio'), 3)} {_verdict(r.get(c + '_pass'))}" for c in rates]
        for r in groups
    ]
    how = "chosen for this comparison" if chosen else "the largest"
    return (
        f"<p class='muted'>Ratio of each group's rate to the reference group <b>{_e(reference)}"
        f"</b> ({how}) and the four-fifths rule at τ = {tau:.2f}: a group passes when the ratio "
        f"lies between {tau:.2f} and {1 / tau:.2f}.</p>"
        + _table(["group", *[_e(f"{_column_label(c)} ratio") for c in rates]], rows)
    )


def _checks_html(checks: list[dict[str, Any]] | None) -> str:
    if not checks:
        return "<p class='muted'>No checks stored.</p>"
    items = "".join(
        f"<li><span class='{_e(c['level'])}'>{_e(c['level'].upper())}</span> "
        f"{_e(c['sentence'])}</li>"
        for c in checks
        if c.get("level") in ("ok", "warn", "fail")
    )
    return f"<ul>{items}</ul>"


def _pins_section(comparison: Comparison) -> str:
    if not comparison.pins:
        return ""
    points = {p["point_id"]: p for p in comparison.points}
    outside = {o["name"]: o for o in comparison.outside}
    x, y = comparison.axes
    disparity = (comparison.reference, comparison.tau)
    columns = []
    for pin in comparison.pins:
        item = points.get(pin["id"]) or outside.get(pin["id"]) or {}
        values = (item.get("metrics") or {}).get("test", {})
        title = f"{_e(pin['method'])} · {_e(pin['id'])}"
        knobs = _e(knob_label(item["knobs"])) if item.get("knobs") else ""
        card = _card_html(pin.get("card") or "No card.")
        columns.append(
            f"<div class='pin'><h3>{title}</h3><p class='muted'>{knobs}</p>"
            f"<p>{_e(metrics.metric_label(x))}: <b>{_num(values.get(x))}</b> · "
            f"{_e(metrics.metric_label(y))}: <b>{_num(values.get(y))}</b></p>"
            f"{_group_table(pin.get('groups'), disparity)}"
            f"<h4>Checks</h4>{_checks_html(item.get('checks'))}"
            f"<h4>Card</h4><div class='card'>{card}</div></div>"
        )
    return "<h2>Pinned points</h2><div class='pins'>" + "".join(columns) + "</div>"


def _curve_section(comparison: Comparison, go: Any) -> str:
    parts = []
    for i, outside in enumerate(comparison.outside):
        curve = outside.get("curve")
        if not curve:
            continue
        fig = go.Figure()
        groups = list(dict.fromkeys(r["group"] for r in curve))
        for group in groups:
            rows = [r for r in curve if r["group"] == group]
            for rate, dash in (("tpr", "solid"), ("fpr", "dot")):
                points = [(r["threshold"], r.get(rate)) for r in rows]
                name, line = plot_text(f"{group}: {rate.upper()}"), {"dash": dash}
                _add_points(fig, points, name, mode="lines", line=line)
        if outside.get("threshold") is not None:
            fig.add_vline(x=outside["threshold"], line_dash="dash", line_color=_GREY)
        fig.update_layout(
            xaxis_title="threshold (scores at or above it predict 1)",
            yaxis_title="rate on the test rows",
            height=380,
            template="plotly_white",
            margin={"l": 60, "r": 20, "t": 30, "b": 50},
        )
        parts.append(f"<h3>{_e(outside['name'])}</h3>{_figure_html(fig, f'curve{i}')}")
    return "<h2>Threshold curves per group</h2>" + "".join(parts) if parts else ""


def _reproduce_section(comparison: Comparison) -> str:
    x, y = comparison.axes
    rows = []
    for p in comparison.points:
        test = p["metrics"].get("test", {})
        worst = worst_level(p.get("checks")) or "–"
        text = (p["method"], p.get("method_version", ""), p["point_id"], knob_label(p["knobs"]))
        verdict = f"<span class='{_e(worst)}'>{_e(worst)}</span>"
        rows.append([*map(_e, text), _num(test.get(x)), _num(test.get(y)), verdict])
    headers = ["method", "version", "point", "knobs", _e(x), _e(y), "checks"]
    versions = ", ".join(f"{_e(k)} {_e(v)}" for k, v in comparison.versions.items())
    return (
        "<h2>Reproduce every point</h2><p>Each point is one run of its method with these knobs "
        "on the split above (test share and seed as saved), by these versions: "
        f"{versions}.</p>" + _table(headers, rows)
    )


def build_report(comparison: Comparison, *, title: str = "fairengine comparison") -> str:
    """The comparison as one self-contained HTML document (see the module doc)."""
    try:
        import plotly.graph_objects as go
        from plotly.offline import get_plotlyjs
    except ImportError:  # pragma: no cover - plotly ships with the dashboard
        raise ImportError(
            "Writing a report needs plotly (a dashboard dependency): pip install plotly"
        ) from None
    list_methods()  # the methods' own metrics (their labels on the plane) join the registry
    task = comparison.tasks[0]
    version = comparison.versions.get("fairengine", "")
    made = f"<p class='muted'>Made {_e(comparison.created)} · fairengine {_e(version)}</p>"
    body = (
        f"<h1>{_e(title)}</h1>{made}{_data_section(task)}{_reading(comparison)}"
        f"{_plane_figure(comparison, go)}{_cost_section(comparison)}{_pins_section(comparison)}"
        f"{_curve_section(comparison, go)}{_reproduce_section(comparison)}"
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{_e(title)}</title><style>{_STYLE}</style>"
        f"<script type='text/javascript'>{get_plotlyjs()}</script></head>"
        f"<body>{body}</body></html>"
    )
