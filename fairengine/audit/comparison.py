"""Saved comparisons: the state of a comparison as a small JSON file a colleague can reopen,
holding no model and no code, validated on load and refused for other data.

The file's schema (every key, type and list size, checked before any use) is written with the
model files' schema checks (:mod:`fairengine.models.schema_rules`), which raise
:class:`~fairengine.export.safe.ModelFileError` naming the path of the first bad value. Design
notes: docs/howto/audit.md, "Saved comparisons".
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine.audit.core import CI_LEVEL, N_BOOT, AuditResult, table_records
from fairengine.data.errors import DataError
from fairengine.export.safe import MAX_JSON_BYTES, ModelFileError, load_json, read_regular
from fairengine.frontier.keys import method_version, task_key
from fairengine.methods.evidence import LEVELS
from fairengine.models import schema_rules
from fairengine.models.schema_rules import BOOL, INT, SCALAR, Check, list_of, obj, optional
from fairengine.textsafe import md_text

if TYPE_CHECKING:
    import pandas as pd

    from fairengine.data import Task

FORMAT, FORMAT_VERSION = "fairengine-comparison", 1


class ComparisonError(DataError):
    """A comparison file that is not valid, or was saved for other data."""


MAX_TEXT = 200_000  # characters of one string (a model card is a few thousand)
#: Most items of each list; a comparison file's size limit is every untrusted JSON file's.
MAX_POINTS, MAX_OUTSIDE, MAX_PINS, MAX_TASKS = 5_000, 50, 50, 8


def _bounded(check: Check, limit: int) -> Check:
    def run(value: Any, path: str) -> None:
        if isinstance(value, list) and len(value) > limit:
            raise ModelFileError(
                f"The comparison's {path} has {len(value):,} items (limit {limit:,})."
            )
        check(value, path)

    return run


def _text(value: Any, path: str) -> None:
    schema_rules.STR(value, path)
    if len(value) > MAX_TEXT:
        raise ModelFileError(f"The comparison's {path} is a text of {len(value):,} characters.")


_NUMBER = optional(schema_rules.NUM)
_NUMBERS = obj({}, extra=_NUMBER)
_SPLITS = obj({}, extra=_NUMBERS)
_CHECK = obj(
    {"name": _text, "level": schema_rules.one_of(*LEVELS), "sentence": _text, "numbers": _NUMBERS}
)
_CHECKS = optional(_bounded(list_of(_CHECK), 100))
_BASELINES = optional(
    obj({"learner": _text, "constant_label": _text, "unconstrained_label": _text,
         "constant": _SPLITS, "unconstrained": _SPLITS})
)  # fmt: skip
_ROW = obj({}, extra=SCALAR)
_ROWS = _bounded(list_of(_ROW), 20_000)
_CURVE_ROW = obj({"group": SCALAR, "threshold": _NUMBER}, extra=SCALAR)
_CURVE = optional(_bounded(list_of(_CURVE_ROW), 20_000))
_GROUP = obj({"name": _text, "rows": INT, "base_rate": _NUMBER})

TASK = obj({
    "key": _text, "name": _text, "kind": _text, "rows": INT, "train_rows": INT, "test_rows": INT,
    "target": _text, "positive_label": optional(_text), "sensitive": list_of(_text),
    "features": INT, "groups": _bounded(list_of(_GROUP), 200), "base_rate": _NUMBER,
    "train_fingerprint": _text, "test_fingerprint": _text, "notes": list_of(_text),
})  # fmt: skip
POINT = obj(
    {"point_id": _text, "method": _text, "knobs": obj({}, extra=SCALAR), "metrics": _SPLITS,
     "task": _text},
    {"pareto": obj({}, extra=BOOL), "cached": BOOL, "elapsed": _NUMBER, "checks": _CHECKS,
     "baselines": _BASELINES, "method_version": _text},
)  # fmt: skip
OUTSIDE = obj({
    "name": _text, "kind": _text, "threshold": _NUMBER, "metrics": _SPLITS, "groups": _ROWS,
    "curve": _CURVE, "checks": _CHECKS, "baselines": _BASELINES, "task_key": _text,
    "fairness_metric": _text, "performance_metric": _text, "source": _text,
    "notes": list_of(_text), "task": _text,
})  # fmt: skip
PIN = obj({"kind": _text, "id": _text, "method": _text, "groups": optional(_ROWS),
           "card": optional(_text)})  # fmt: skip
COMPARISON = obj({
    "format": _text, "format_version": INT, "created": _text, "versions": obj({}, extra=_text),
    "axes": list_of(_text, length=2), "tasks": _bounded(list_of(TASK), MAX_TASKS),
    "points": _bounded(list_of(POINT), MAX_POINTS),
    "outside": _bounded(list_of(OUTSIDE), MAX_OUTSIDE), "pins": _bounded(list_of(PIN), MAX_PINS),
}, {"reference": optional(_text), "tau": schema_rules.NUM})  # fmt: skip


def check_comparison(data: Any) -> None:
    """Raise ModelFileError unless ``data`` is a version-1 comparison whose points and pins refer
    to its own tasks and points, and whose outside models have their axes' test values."""
    from fairengine.metrics import undeclared

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ModelFileError("The file is not a fairengine comparison (wrong format tag).")
    if data.get("format_version") != FORMAT_VERSION:
        raise ModelFileError(
            f"The comparison has format version {str(data.get('format_version'))[:12]!r}; "
            "this fairengine reads version 1."
        )
    COMPARISON(data, "comparison")
    keys = {t["key"] for t in data["tasks"]}
    stray = [p["task"] for p in [*data["points"], *data["outside"]] if p["task"] not in keys]
    if stray or not keys:
        raise ModelFileError("The comparison's points refer to a task it does not describe.")
    # the axes reach the plane and the cost of fairness, which look up their direction
    names = [*data["axes"]]
    for outside in data["outside"]:
        names += [outside["performance_metric"], outside["fairness_metric"]]
    if unknown := undeclared(dict.fromkeys(names)):
        raise ModelFileError(
            f"The comparison names a metric this fairengine does not know: {unknown[0][:40]!r}. "
            "It was made by another version, or changed by hand."
        )
    for outside in data["outside"]:
        needed = (outside["performance_metric"], outside["fairness_metric"])
        if any(name not in outside["metrics"].get("test", {}) for name in needed):
            raise ModelFileError(
                f"The comparison's outside model {outside['name'][:40]!r} has no test-row "
                f"values of its own axes ({needed[0][:40]!r}, {needed[1][:40]!r})."
            )
    names = [o["name"] for o in data["outside"]]
    if len(set(names)) < len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise ModelFileError(
            f"The comparison names two outside models {twice[:40]!r}; each needs its own name."
        )
    known = {p["point_id"] for p in data["points"]} | set(names)
    unknown = [p["id"] for p in data["pins"] if p["id"] not in known]
    if unknown:
        raise ModelFileError(f"The comparison pins {unknown[0][:40]!r}, which it does not hold.")


def unique_names(names: Any) -> list[str]:
    """``names`` made distinct: a name already taken gets the first free suffix " (2)",
    " (3)", ... (a comparison and its pins know each outside model by its name)."""
    taken: set[str] = set()
    out = []
    for name in names:
        new, n = name, 1
        while new in taken:
            n += 1
            new = f"{name} ({n})"
        taken.add(new)
        out.append(new)
    return out


@dataclass
class Comparison:
    """What a comparison shows (see the module doc); everything JSON-able."""

    tasks: list[dict[str, Any]]
    axes: tuple[str, str]
    points: list[dict[str, Any]] = field(default_factory=list)
    outside: list[dict[str, Any]] = field(default_factory=list)
    pins: list[dict[str, Any]] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    created: str = ""
    #: The group the disparities are taken against (None: the largest) and the four-fifths
    #: rule's threshold τ.
    reference: str | None = None
    tau: float = 0.8

    def audits(self) -> list[AuditResult]:
        return [AuditResult.from_dict(a) for a in self.outside]

    def to_dict(self) -> dict[str, Any]:
        keys = ("created", "versions", "axes", "tasks", "points", "outside", "pins", "reference")
        data = {"format": FORMAT, "format_version": FORMAT_VERSION}
        data.update({k: getattr(self, k) for k in keys}, tau=self.tau)
        data.update(versions=dict(self.versions), axes=list(self.axes))
        return data


def versions() -> dict[str, str]:
    """The versions that reproduce a point: fairengine, Python and the numeric libraries."""
    import fairengine
    from fairengine.resources import package_versions

    found = {"fairengine": fairengine.__version__, "python": platform.python_version()}
    libraries = package_versions(("numpy", "pandas", "scikit-learn", "fairlearn", "scipy"))
    return {**found, **{k: v for k, v in libraries.items() if v is not None}}


def task_summary(task: Task, train: Task, test: Task) -> dict[str, Any]:
    """Rows, groups with their sizes and base rates, roles and fingerprints of a task."""
    codes = np.asarray(task.groups)
    y = np.asarray(task.y, dtype=float)
    groups = [
        {"name": name, "rows": int((codes == g).sum()), "base_rate": _mean(y[codes == g])}
        for g, name in enumerate(task.group_names)
    ]
    return {
        "key": task_key(train, test),
        "name": str(task.name),
        "kind": task.kind,
        "rows": len(task.frame),
        "train_rows": len(train.frame),
        "test_rows": len(test.frame),
        "target": str(task.target),
        "positive_label": None if task.positive_label is None else str(task.positive_label),
        "sensitive": [str(c) for c in task.sensitive],
        "features": len(task.features),
        "groups": groups,
        "base_rate": _mean(y),
        "train_fingerprint": train.fingerprint,
        "test_fingerprint": test.fingerprint,
        "notes": [str(n) for n in task.notes],
    }


def _mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if values.size else None


def build_comparison(
    task: Task,
    frontiers: Any = (),
    audits: Any = (),
    pins: Any = (),
    split: tuple[float, int] = (0.3, 0),
    *,
    reference: str | None = None,
    tau: float | None = None,
) -> Comparison:
    """A comparison on ``task`` (split as every method's run) of the frontiers' points (Frontier
    objects), the audited outside models (:class:`AuditResult`; a
    repeated name gets a suffix, :func:`unique_names`) and the pins (point ids or outside model
    names), each pin with its per-group table and card; a classifier's disparities (group
    tables, outside models' ratio metrics) against group ``reference`` (a group name; None: the
    largest) at the four-fifths threshold ``tau`` (None: 0.8)."""
    from fairengine.audit.core import PLANE, positional, referenced

    train, test = positional(task).split(test_size=split[0], random_state=split[1])
    summary = task_summary(task, train, test)
    frontiers = list(frontiers)
    points = [
        {**record, "task": summary["key"], "method_version": method_version(record["method"])}
        for f in frontiers
        for record in f.to_records()
    ]
    audits = list(audits)
    names = unique_names(a.name for a in audits)
    audits = [
        referenced(replace(a, name=n), reference, tau, train)
        for a, n in zip(audits, names, strict=True)
    ]
    outside = [{**a.to_dict(), "task": summary["key"]} for a in audits]
    disparity = {"reference": reference, "tau": tau}
    entries = [pin_entry(str(p), frontiers, audits, train, test, **disparity) for p in pins]
    return Comparison(
        tasks=[summary],
        axes=PLANE[task.kind],
        points=points,
        outside=outside,
        pins=entries,
        versions=versions(),
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        reference=reference,
        tau=0.8 if tau is None else float(tau),
    )


def with_disparities(
    comparison: Comparison, reference: str | None, tau: float | None
) -> Comparison:
    """``comparison`` with its saved group tables' disparities (outside models' and pins') and
    outside models' ratio metrics against group ``reference`` (None: the largest) at the
    four-fifths threshold ``tau`` (None: 0.8), from the rates it saved."""
    from fairengine import metrics
    from fairengine.audit.core import AuditResult, referenced, table_from_records, table_records

    outside = [
        {**referenced(AuditResult.from_dict(o), reference, tau).to_dict(), "task": o["task"]}
        for o in comparison.outside
    ]
    pins = []
    for pin in comparison.pins:
        if pin.get("groups") and "tpr_ratio" in pin["groups"][0]:
            table = metrics.disparities(
                table_from_records(pin["groups"]), reference or "largest", tau
            )
            pin = {**pin, "groups": table_records(table)}
        pins.append(pin)
    tau = 0.8 if tau is None else float(tau)
    return replace(comparison, outside=outside, pins=pins, reference=reference, tau=tau)


def pin_entry(
    pin: str,
    frontiers: list[Any],
    audits: list[AuditResult],
    train: Task,
    test: Task,
    *,
    reference: str | None = None,
    tau: float | None = None,
) -> dict[str, Any]:
    """``{"kind", "id", "method", "groups", "card"}`` of the point whose id starts with ``pin``
    or the outside model named ``pin`` (a point's disparities against group ``reference``, None:
    the largest, at the four-fifths threshold ``tau``)."""
    from fairengine.export import model_card
    from fairengine.methods import get_method

    keys = ("kind", "id", "method", "groups", "card")
    for result in audits:
        if result.name == pin:
            entry = ("outside", pin, "outside", table_records(result.groups), outside_card(result))
            return dict(zip(keys, entry, strict=True))
    for frontier in frontiers:
        for record in frontier.to_records():
            if record["point_id"].startswith(pin):
                result = frontier.run_result(record["point_id"], train, test)
                table = model_group_table(result.model, test, reference=reference, tau=tau)
                card = model_card(
                    result, train, test, method=get_method(result.method), group_table=table
                )
                groups = None if table is None else table_records(table)
                entry = ("point", record["point_id"], frontier.method, groups, card)
                return dict(zip(keys, entry, strict=True))
    raise DataError(f"No point or outside model {pin[:40]!r} to pin in this comparison.")


def model_group_table(
    model: Any, test: Task, *, reference: str | None = None, tau: float | None = None
) -> pd.DataFrame | None:
    """Per-group metrics with intervals (and a classifier's disparities against group
    ``reference``, None: the largest, at the four-fifths threshold ``tau``) of a predicting
    model on the test rows (it may read the sensitive columns too); None
    for a model that does not predict the target or cannot score the rows without inputs the
    table lacks."""
    from fairengine import metrics
    from fairengine.methods.evaluation import predicts

    if not predicts(model, test):
        return None
    try:
        pred = model.metric_predictions(test.frame.drop(columns=[test.target]))
    except (KeyError, ValueError):
        return None
    return metrics.task_group_table(
        test, pred, ci=CI_LEVEL, n_boot=N_BOOT, reference=reference, tau=tau
    )


def outside_card(result: AuditResult) -> str:
    """A short Markdown card of an audited outside model: source, threshold, metrics, checks."""
    lines = [f"# Outside model: {md_text(result.name)}", ""]
    lines += [f"- Source: {md_text(result.source or 'values given directly')}"]
    lines += [f"- Values: {result.kind}"]
    if result.threshold is not None:
        lines += [f"- Threshold: scores at or above {result.threshold:g} predict 1"]
    lines += ["", "## Metrics (test rows)", "", "| metric | value |", "|---|---|"]
    lines += [f"| {k} | {v:.4f} |" for k, v in result.metrics.get("test", {}).items()]
    lines += ["", "## Checks", ""]
    lines += [
        f"- **{c.level.upper()}** {md_text(c.name)}: {md_text(c.sentence)}" for c in result.checks
    ]
    lines += [f"- Note: {md_text(n)}" for n in result.notes]
    return "\n".join(lines) + "\n"


def save_comparison(comparison: Comparison, path: str | os.PathLike[str]) -> Path:
    """Write ``comparison`` as JSON (no NaN: missing numbers are null); returns the path."""
    text = json.dumps(comparison.to_dict(), indent=1, allow_nan=False, default=_json_default)
    if len(text.encode()) > MAX_JSON_BYTES:
        raise ComparisonError(
            f"The comparison is {len(text.encode()) // 2**20} MB, over the "
            f"{MAX_JSON_BYTES // 2**20} MB a comparison file may have: pin or keep fewer points."
        )
    Path(path).write_text(text, encoding="utf-8")
    return Path(path)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
        return None if isinstance(value, float) and not np.isfinite(value) else value
    raise TypeError(f"{type(value).__name__} is not JSON data")


def load_comparison(
    source: str | os.PathLike[str] | bytes, *, train: Task | None = None, test: Task | None = None
) -> Comparison:
    """A comparison file, validated (see the module doc); with ``train`` and ``test`` given,
    :class:`ComparisonError` unless the file was saved for that (train, test) pair."""
    try:
        raw = source if isinstance(source, bytes) else read_regular(Path(source), MAX_JSON_BYTES)
    except OSError as exc:
        name = Path(source).name
        raise ComparisonError(f"Cannot read {name!r}: {exc.strerror or exc}.") from None
    try:  # load_json refuses more than MAX_JSON_BYTES, as read_regular does
        data = load_json(raw, "The comparison file")
        check_comparison(data)
    except ModelFileError as exc:
        raise ComparisonError(
            str(exc).replace("The model file's", "The comparison file's")
        ) from None
    keys = ("tasks", "points", "outside", "pins", "versions", "created")
    comparison = Comparison(
        **{k: data[k] for k in keys},
        axes=tuple(data["axes"]),
        reference=data.get("reference"),
        tau=data.get("tau", 0.8),
    )
    key = None if train is None or test is None else task_key(train, test)
    if key is None or any(t["key"] == key for t in comparison.tasks):
        return comparison
    saved = comparison.tasks[0]
    raise ComparisonError(
        f"This comparison was saved for other data: its fingerprint is "
        f"{saved['train_fingerprint'][:12]} (table {saved['name']!r}, {saved['rows']:,} rows, "
        f"target {saved['target']!r}), the data loaded now has {train.fingerprint[:12]}. Load "
        "the same table with the same target, sensitive column(s) and split."
    )
