"""The schema of a comparison file: every key, type and list size, checked before any use.

Built from the model files' schema checks (:mod:`fairengine.models.schemas`), which raise
:class:`~fairengine.export.safe.ModelFileError` naming the path of the first bad value.
"""

from __future__ import annotations

from typing import Any

from fairengine.export.safe import ModelFileError
from fairengine.methods.evidence import LEVELS
from fairengine.models.schema_rules import (
    BOOL,
    INT,
    NUM,
    SCALAR,
    STR,
    Check,
    list_of,
    obj,
    one_of,
    optional,
)

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
    STR(value, path)
    if len(value) > MAX_TEXT:
        raise ModelFileError(f"The comparison's {path} is a text of {len(value):,} characters.")


_NUMBER = optional(NUM)
_NUMBERS = obj({}, extra=_NUMBER)
_SPLITS = obj({}, extra=_NUMBERS)
_CHECK = obj({"name": _text, "level": one_of(*LEVELS), "sentence": _text, "numbers": _NUMBERS})
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
}, {"reference": optional(_text), "tau": NUM})  # fmt: skip


def check_comparison(data: Any) -> None:
    """Raise ModelFileError unless ``data`` is a version-1 comparison whose points and pins refer
    to its own tasks and points, and whose outside models have their axes' test values."""
    from fairengine.metrics import undeclared

    if not isinstance(data, dict) or data.get("format") != "fairengine-comparison":
        raise ModelFileError("The file is not a fairengine comparison (wrong format tag).")
    if data.get("format_version") != 1:
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
