"""Auditing an outside model: its values scored by the shared evaluation on the methods' test rows,
with per-group intervals, baselines, the honest-results checks that apply and, for scores, the
per-group threshold curve.

Design notes: docs/howto/audit.md, "How an audit scores a model".
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fairengine import metrics
from fairengine.audit.overlap import TrainedOn, trained_on_rows, unseen_test_rows
from fairengine.audit.sources import Outside, checked_values
from fairengine.data.errors import DataError
from fairengine.frontier.keys import task_key
from fairengine.frontier.result import plain_value
from fairengine.methods import evidence
from fairengine.methods.evidence import SIGNIFICANCE, Baselines, Check, Evidence
from fairengine.methods.evidence_fits import default_learner, unconstrained_predictions

if TYPE_CHECKING:
    from fairengine.data import Task

#: The plane every predicting method shares: (performance, fairness) per task kind.
PLANE = {"classification": ("error", "dp_diff"), "regression": ("loss", "sp_ks")}
#: Thresholds of the per-group threshold curve.
CURVE_THRESHOLDS = np.round(np.linspace(0.0, 1.0, 51), 4)
#: Bootstrap resamples and level of the per-group intervals.
N_BOOT, CI_LEVEL = 200, 0.95


@dataclass
class AuditResult:
    """An outside model scored like every method's point.

    Attributes
    ----------
    name : str
        The label on the plane (user text: escape it where it is shown).
    kind : {"predictions", "scores", "probabilities"}
    threshold : float or None
        Scores at or above it predict 1 (scores only).
    metrics : dict
        ``{"train": {...}, "test": {...}}``: the shared evaluation's metrics.
    groups : pandas.DataFrame
        Per-group metrics on the test rows with ``<col>_low`` / ``<col>_high`` intervals.
    curve : pandas.DataFrame or None
        Scores only: per (group, threshold) the selection rate, TPR and FPR on the test rows,
        and per threshold (group ``"overall"``) the error and the fairness metric.
    checks : tuple of Check
    baselines : Baselines
    task_key : str
        :func:`fairengine.frontier.task_key` of the (train, test) pair it was scored on.
    fairness_metric, performance_metric : str
    source : str
        Where the values came from, in words.
    notes : tuple of str
    """

    name: str
    kind: str
    threshold: float | None
    metrics: dict[str, dict[str, float]]
    groups: pd.DataFrame
    curve: pd.DataFrame | None
    checks: tuple[Check, ...]
    baselines: Baselines | None
    task_key: str
    fairness_metric: str
    performance_metric: str
    source: str = ""
    notes: tuple[str, ...] = ()
    #: The values on the train and test rows (not saved): for post-processing the scores.
    values: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    #: Which rows the model was trained on (not saved): a post-processed point keeps it.
    trained_on: TrainedOn = field(default_factory=TrainedOn, repr=False)

    def point(self, split: str = "test") -> tuple[float, float]:
        """(performance, fairness) on ``split``: the audited point on the plane."""
        values = self.metrics[split]
        return values[self.performance_metric], values[self.fairness_metric]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able (floats, None for NaN): everything but the raw values."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.repr}
        data.update(
            metrics={s: {k: plain_value(v) for k, v in m.items()} for s, m in self.metrics.items()},
            groups=table_records(self.groups),
            curve=None if self.curve is None else table_records(self.curve, index=False),
            checks=[c.to_dict() for c in self.checks],
            baselines=None if self.baselines is None else self.baselines.to_dict(),
            notes=list(self.notes),
        )
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AuditResult:
        """The inverse of :meth:`to_dict` (validate ``data`` first: see
        :mod:`fairengine.audit.comparison`)."""
        texts = ("name", "kind", "task_key", "fairness_metric", "performance_metric")
        return cls(
            **{k: str(data[k]) for k in texts},
            source=str(data.get("source", "")),
            threshold=None if data.get("threshold") is None else float(data["threshold"]),
            metrics={
                s: {k: math.nan if v is None else float(v) for k, v in m.items()}
                for s, m in data["metrics"].items()
            },
            groups=table_from_records(data["groups"]),
            curve=None if data.get("curve") is None else pd.DataFrame(data["curve"]),
            checks=tuple(Check.from_dict(c) for c in data.get("checks") or ()),
            baselines=Baselines.from_dict(data["baselines"]) if data.get("baselines") else None,
            notes=tuple(str(n) for n in data.get("notes") or ()),
        )


def table_records(table: pd.DataFrame, *, index: bool = True) -> list[dict[str, Any]]:
    """A table as JSON-able records (the index as ``"group"`` when ``index``)."""
    frame = table.reset_index() if index else table
    return [{str(k): plain_value(v) for k, v in row.items()} for row in frame.to_dict("records")]


def table_from_records(records: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(records)
    return frame.set_index("group") if "group" in frame.columns else frame


def positional(task: Task) -> Task:
    """The task with its rows numbered 0..n-1 (same content, same fingerprint and split)."""
    return replace(task, frame=task.frame.reset_index(drop=True))


def audit(
    data: Task | Outside,
    *,
    predictions: Any = None,
    scores: Any = None,
    threshold: float = 0.5,
    name: str = "outside model",
    test_size: float = 0.3,
    random_state: int = 0,
    trained_on: str | Iterable[Any] = "unknown",
    id_values: pd.Series | None = None,
) -> AuditResult:
    """Score an outside model's values the way every method is scored, on the test rows it
    never saw.

    Parameters
    ----------
    data : Task or Outside
        The task every method runs on (without the model's own prediction column), given with
        exactly one of ``predictions`` and ``scores``; or the values one of the three routes
        produced on its task (:mod:`fairengine.audit.sources`), given with neither.
    predictions, scores : array-like or Series
        Hard predictions, or scores P(y = 1) in [0, 1] (classification). One value per row of
        ``task.frame`` in its order, or a Series indexed like it.
    threshold : float
        Scores at or above it predict 1.
    name : str
        The label of the model's point.
    test_size, random_state : float, int
        The split every method's run uses (``task.split``); the defaults are the engine's.
    trained_on : {"unknown", "none", "engine"} or iterable of ids
        Which rows the model was trained on: not said (the result then warns that it holds only
        if the model never saw the test rows), none of this table's, the engine's training rows
        (:func:`fairengine.data.split_ids`), or these ids; test rows among them are left out
        with a note (:mod:`fairengine.audit.overlap`).
    id_values : pandas.Series, optional
        The table's id column (indexed like the table the task was built from) that the ids of
        ``trained_on`` refer to; default: row numbers (0 = the first data row).

    Raises
    ------
    DataError
        Values of the wrong length, type or range, ids that match no row, or too few unseen test
        rows, in words.
    """
    if isinstance(data, Outside) and predictions is None and scores is None:
        task, values, kind, notes = data.task, data.values, data.kind, data.task.notes
    elif isinstance(data, Outside) or (predictions is None) == (scores is None):
        raise ValueError(
            "Give exactly one of predictions= or scores= with a task (none with an Outside)."
        )
    else:
        kind = "predictions" if scores is None else "scores"
        task, notes = data, ()
        values = checked_values(task, predictions if scores is None else scores, kind)
    trained = trained_on_rows(task, trained_on, id_values=id_values)
    split = (test_size, random_state)
    result = audit_values(task, values, kind, threshold, name, split, trained=trained)
    result.source = data.source if isinstance(data, Outside) else ""
    result.notes = (*notes, *result.notes)
    return result


def audit_values(
    task: Task,
    values: np.ndarray,
    kind: str,
    threshold: float | None,
    name: str,
    split: tuple[float, int] = (0.3, 0),
    *,
    trained: TrainedOn | None = None,
) -> AuditResult:
    """:func:`audit` of values already checked by :func:`~fairengine.audit.sources.
    checked_values` (one float per row of ``task``), on the test rows the model never saw
    (``trained``: :func:`~fairengine.audit.overlap.trained_on_rows`; default: not said).

    Metrics, baselines, checks and curves are on the unseen test rows; ``task_key`` and
    ``values`` stay those of the whole split (the plane the point is drawn on)."""
    from fairengine.methods.evaluation import task_metrics

    if kind == "scores" and not (threshold is not None and 0.0 <= float(threshold) <= 1.0):
        raise ValueError(f"The threshold must be between 0 and 1; got {threshold!r}.")
    trained = trained or TrainedOn()
    train, whole_test = positional(task).split(test_size=split[0], random_state=split[1])
    raw = {"train": values[train.frame.index], "test": values[whole_test.frame.index]}
    keep, unseen, notes = unseen_test_rows(trained, whole_test, np.asarray(train.frame.index))
    test = whole_test if keep.all() else whole_test.subset(np.flatnonzero(keep))
    cut = float(threshold) if kind == "scores" else None
    scores = raw["test"][keep] if kind == "scores" else None
    pred = {"train": _predicted(raw["train"], cut), "test": _predicted(raw["test"][keep], cut)}
    result = AuditResult(
        name=str(name),
        kind=kind,
        threshold=cut,
        metrics={s: task_metrics(part, pred[s]) for s, part in (("train", train), ("test", test))},
        groups=metrics.task_group_table(
            test, pred["test"], scores=scores, ci=CI_LEVEL, n_boot=N_BOOT
        ),
        curve=None if scores is None else threshold_curve(test, scores),
        checks=(),
        baselines=None,
        task_key=task_key(train, whole_test),
        performance_metric=PLANE[task.kind][0],
        fairness_metric=PLANE[task.kind][1],
        notes=notes,
        values=raw,
        trained_on=trained,
    )
    result.baselines = evidence.predictor_baselines(None, Evidence(), train, test)
    result.checks = (unseen, *outside_checks(result, pred["test"], test, train))
    return result


def referenced(
    result: AuditResult, reference: str | None, tau: float | None, train: Task | None = None
) -> AuditResult:
    """``result`` against group ``reference`` (a group name; None: the largest) at the
    four-fifths threshold ``tau`` (None: 0.8): its group table's disparity columns and its
    ``<rate>_ratio`` metrics, on the test rows from that table and on the ``train`` rows from
    the kept values (without them, or with a ``reference`` that has no train row, the train
    ratios are left out)."""
    if result.groups.empty or "tpr_ratio" not in result.groups:
        return result  # a regression audit: no disparities
    if reference is not None and reference not in set(result.groups.index[:-1]):
        # none of its unseen test rows is in that group: no ratio to it
        kept = {
            s: {k: v for k, v in m.items() if not k.endswith("_ratio")}
            for s, m in result.metrics.items()
        }
        ratios = [c for c in result.groups if c.endswith(("_diff", "_ratio", "_pass"))]
        return replace(result, groups=result.groups.drop(columns=ratios), metrics=kept)
    groups = metrics.disparities(result.groups, reference or "largest", tau)
    values = {**result.metrics, "test": {**result.metrics["test"], **metrics.table_ratios(groups)}}
    raw = result.values.get("train")
    present = () if train is None else {train.group_names[z] for z in np.unique(train.groups)}
    if (
        raw is not None
        and train is not None
        and len(raw) == len(train.y)
        and (reference is None or reference in present)
    ):
        pred = _predicted(raw, result.threshold)
        table = metrics.task_group_table(train, pred, reference=reference, tau=tau)
        values["train"] = {**values.get("train", {}), **metrics.table_ratios(table)}
    elif reference is not None and "train" in values:
        values["train"] = {k: v for k, v in values["train"].items() if not k.endswith("_ratio")}
    return replace(result, groups=groups, metrics=values)


def _predicted(values: np.ndarray, threshold: float | None) -> np.ndarray:
    return values if threshold is None else (values >= threshold).astype(float)


def threshold_curve(test: Task, scores: np.ndarray) -> pd.DataFrame:
    """Per group and threshold t (scores ≥ t predict 1): selection rate, TPR and FPR on the test
    rows; for group ``"overall"`` also the error and the demographic parity difference."""
    y, codes = np.asarray(test.y), np.asarray(test.groups)
    shown = ["selection_rate", "tpr", "fpr"]
    rows = []
    for t in CURVE_THRESHOLDS:
        hard = (scores >= t).astype(float)
        by_group = metrics.audit_rates(y, hard, codes).reindex(range(len(test.group_names)))
        overall = metrics.audit_rates(y, hard, None).iloc[0]
        for code, group in enumerate(test.group_names):
            rows.append({"threshold": float(t), "group": group, **by_group.loc[code, shown]})
        rows.append(
            {
                "threshold": float(t),
                "group": "overall",
                **overall[shown],
                "error": metrics.error(y, hard),
                "dp_diff": metrics.dp_diff(y, hard, codes),
            }
        )
    return pd.DataFrame(rows)


def postprocess(
    result: AuditResult,
    task: Task,
    knobs: dict[str, Any] | None = None,
    split: tuple[float, int] = (0.3, 0),
) -> AuditResult:
    """The outside model of ``result`` (scores) post-processed by fairlearn's ThresholdOptimizer
    with the ``threshold_optimizer`` method's knobs (``constraint``, ``objective``, ``tol``):
    the rule fitted on its training-row scores (the method's own fit), audited on the same rows.
    Like that method it reads the sensitive attribute at prediction time; the notes say so."""
    from fairengine.methods.threshold_optimizer import (
        CONSTRAINT_WORDS,
        SENSITIVE_AT_PREDICTION,
        THRESHOLD_OPTIMIZER,
        fit_rule,
    )
    from fairengine.models.group_thresholds import apply_rule

    if result.kind != "scores" or "train" not in result.values:
        raise DataError("Post-processing needs the outside model's scores (not hard predictions).")
    asked = {k: v for k, v in (knobs or {}).items() if k != "C"}
    values = THRESHOLD_OPTIMIZER.validate_knobs(asked)
    train, test = positional(task).split(test_size=split[0], random_state=split[1])
    if task_key(train, test) != result.task_key:
        raise DataError("The task is not the one the outside model was audited on.")
    rule, single = fit_rule(result.values["train"], train.y, train.groups, train.n_groups, values)
    probabilities = np.empty(len(task.frame))
    for part_name, part in (("train", train), ("test", test)):
        probabilities[part.frame.index] = apply_rule(rule, result.values[part_name], part.groups)
    name = f"{result.name} + ThresholdOptimizer ({CONSTRAINT_WORDS[values['constraint']]})"
    trained = result.trained_on
    post = audit_values(task, probabilities, "probabilities", None, name, split, trained=trained)
    post.source = f"{result.source}, post-processed"
    unfitted = [
        f"Group {train.group_names[g]!r} has a single label in the training rows: it "
        "keeps the plain threshold 1/2."
        for g in single
    ]
    post.notes = (*result.notes, SENSITIVE_AT_PREDICTION, *unfitted)
    return post


def outside_checks(
    result: AuditResult, pred: np.ndarray, test: Task, train: Task
) -> tuple[Check, ...]:
    """The honest-results checks that apply to a model fairengine did not fit: constant
    predictions, beating the constant predictor, and how it compares with the unconstrained
    reference fitted here on error and on the fairness metric, each by a paired test on the
    same test rows."""
    learner = default_learner(None, train)
    reference = np.asarray(unconstrained_predictions(learner, train, test)[1], dtype=float)
    checks = [
        evidence.constant_check(pred, test.kind),
        evidence.constant_error_check(result, test, result.baselines, pred),
        _vs_reference(result, result.performance_metric, test, train, pred, reference),
        _vs_reference(result, result.fairness_metric, test, train, pred, reference),
    ]
    return tuple(c for c in checks if c is not None)


def _vs_reference(
    result: AuditResult, name: str, test: Task, train: Task, pred: np.ndarray, ref: np.ndarray
) -> Check | None:
    """A warning when the outside model is worse on metric ``name`` than the unconstrained
    reference on the same rows: for the performance metric by McNemar's test (a paired z-test
    for a regressor), for the fairness metric when the paired bootstrap interval of the
    difference lies wholly on the worse side. None when either value is missing or not finite."""
    label = result.baselines.unconstrained_label
    values = (result.metrics["test"].get(name), result.baselines.unconstrained["test"].get(name))
    if not all(v is not None and math.isfinite(v) for v in values):
        return None
    numbers = {"test_value": float(values[0]), "reference_value": float(values[1])}
    if name == result.performance_metric:
        p_better, p_worse = evidence.paired_error_test(test.y, pred, ref, test.kind)
        numbers.update(p_better=p_better, p_worse=p_worse, significance=SIGNIFICANCE)
        worse, detail = p_worse < SIGNIFICANCE, f"paired test, p = {p_worse:.2g}"
        ok_detail, advice = "", "; a simple model on the same features does better"
    elif name in metrics.METRICS:
        low, high = evidence.fairness_interval(None, Evidence(), name, test, train, pred, ref)
        if not metrics.is_lower_better(name):
            low, high = -high, -low  # positive = worse
        numbers.update(worse_by_low=low, worse_by_high=high, level=1 - SIGNIFICANCE)
        detail = (
            f"paired bootstrap {1 - SIGNIFICANCE:.0%} interval of how much worse: "
            f"{low:+.4f} to {high:+.4f}"
        )
        worse, ok_detail, advice = low > 0, f" ({detail})", ""
    else:
        return None
    versus = (
        f"On the test rows its {metrics.metric_label(name).lower()} is {numbers['test_value']:.4f}"
        f" against {numbers['reference_value']:.4f} for the {label}"
    )
    if worse:
        sentence = (
            f"{versus} fitted on the same training rows: worse on the same rows ({detail}){advice}."
        )
        return Check(f"{name}_vs_reference", "warn", sentence, numbers)
    return Check(f"{name}_vs_reference", "ok", f"{versus}{ok_detail}.", numbers)
