"""Evidence attached to every result: baselines on the same rows and checks in plain words.

Design notes: docs/architecture.md, "Evidence of a result".
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine import metrics
from fairengine.methods.evidence_fits import default_learner, unconstrained_predictions
from fairengine.methods.fitted import fitted_once

if TYPE_CHECKING:
    from fairengine.data import Task
    from fairengine.methods.base import Method, RunResult
    from fairengine.methods.evidence_fits import Learner

LEVELS = ("ok", "warn", "fail")


@dataclass(frozen=True)
class Check:
    """One verdict on a result: which part held or did not, in words and numbers.

    Attributes
    ----------
    name : str
        Stable identifier (``"constant_predictions"``, ``"held_out_constraint"``...).
    level : {"ok", "warn", "fail"}
    sentence : str
        One sentence for people: what was checked and what was found.
    numbers : dict
        The values the sentence is about (floats, JSON-able).
    """

    name: str
    level: str
    sentence: str
    numbers: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"Check level must be one of {LEVELS}; got {self.level!r}.")

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "level": self.level,
            "sentence": self.sentence,
            "numbers": {k: _plain(v) for k, v in self.numbers.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Check:
        numbers = {str(k): _number(v) for k, v in dict(data.get("numbers") or {}).items()}
        return cls(str(data["name"]), str(data["level"]), str(data["sentence"]), numbers)


@dataclass(frozen=True)
class Baselines:
    """Reference results on the same rows, scored by the same evaluation.

    Attributes
    ----------
    learner : str
        The unconstrained model, in words ("logistic regression (C = 1)").
    constant : dict
        ``{"train": {metric: value}, "test": {...}}`` of the constant reference.
    unconstrained : dict
        The same for the unconstrained reference.
    constant_label, unconstrained_label : str
        What each reference is, for a legend ("always 0", "keep every row"...).
    constant_value : float
        The constant predictor's prediction (NaN for a filter's references, and for baselines
        read back from a file: the checks that need it are computed with the fresh ones).
    """

    learner: str
    constant: dict[str, dict[str, float]]
    unconstrained: dict[str, dict[str, float]]
    constant_label: str = "constant predictor"
    unconstrained_label: str = "unconstrained model"
    constant_value: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        return {
            "learner": self.learner,
            "constant_label": self.constant_label,
            "unconstrained_label": self.unconstrained_label,
            "constant": _plain_splits(self.constant),
            "unconstrained": _plain_splits(self.unconstrained),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Baselines:
        return cls(
            learner=str(data["learner"]),
            constant=_number_splits(data.get("constant") or {}),
            unconstrained=_number_splits(data.get("unconstrained") or {}),
            constant_label=str(data.get("constant_label", "constant predictor")),
            unconstrained_label=str(data.get("unconstrained_label", "unconstrained model")),
        )


@dataclass(frozen=True)
class Evidence:
    """What a method declares for its evidence (``Method.evidence``); every part optional.

    Attributes
    ----------
    learner : callable (result, train) -> Learner
        The unconstrained model of the method's base learner (default: logistic regression).
    extra_metrics : callable (result, task, train, predictions) -> dict
        Method-specific metrics of any prediction vector on ``task`` (e.g. the true-group
        violation with the run's constraint and slack), so the baselines carry the method's
        fairness metric too. It reads ``task.y`` and ``task.groups`` only (on the bootstrap's
        resamples ``task`` has no columns).
    extra_metrics_knobs : tuple of str, optional
        The knobs of the run ``extra_metrics`` reads (besides the rows, the training rows and
        the predictions): the baselines' values are then computed once for the points of a
        sweep that agree on them. None: it may read anything of the run; nothing is shared.
    fairness_metric : callable (result) -> str
        The fairness metric the run was meant to improve, when it depends on the knobs.
    promise : callable (result, train, test, baselines) -> list of Check
        The method's own promise checked on the test rows, plus its convergence.
    filter_baselines : callable (result, train, test) -> Baselines
        For a filter: its reference results.
    promise_checks : tuple of str
        The names of the checks among ``promise``'s that judge whether the promise held (none
        failed: :meth:`~fairengine.methods.base.Method.promise_held`); the others are context.
    """

    learner: Callable[[Any, Task], Learner] | None = None
    extra_metrics: Callable[[Any, Task, Task, np.ndarray], dict[str, float]] | None = None
    extra_metrics_knobs: tuple[str, ...] | None = None
    fairness_metric: Callable[[Any], str] | None = None
    promise: Callable[[Any, Task, Task, Baselines | None], list[Check]] | None = None
    filter_baselines: Callable[[Any, Task, Task], Baselines] | None = None
    promise_checks: tuple[str, ...] = ()


# -- scoring ------------------------------------------------------------------------------------


def score(result: Any, spec: Evidence, task: Task, train: Task, pred: np.ndarray) -> dict:
    """Shared metrics of ``pred`` on ``task`` plus the method's extra metrics."""
    from fairengine.methods.evaluation import task_metrics

    values = task_metrics(task, np.asarray(pred, dtype=float))
    if spec.extra_metrics is not None:
        values.update(spec.extra_metrics(result, task, train, np.asarray(pred, dtype=float)))
    return values


def predictor_baselines(result: Any, spec: Evidence, train: Task, test: Task) -> Baselines:
    """The constant predictor and the unconstrained base learner, on train and test: scored
    once per rows and learner (and the knobs the method's own metrics read), shared by every
    point of a sweep."""
    y = np.asarray(train.y, dtype=float)
    if train.kind == "classification":  # the constant predictor fitted on the training rows
        value = float(np.mean(y) > 0.5)
        constant_label = f"always {int(value)} (the training majority class)"
    else:
        value = float(np.mean(y))
        constant_label = f"always {value:.4g} (the training mean)"
    learner = (spec.learner or default_learner)(result, train)

    def scores() -> tuple[dict, dict]:
        fitted = unconstrained_predictions(learner, train, test)
        constant, unconstrained = {}, {}
        for split, task, pred in (("train", train, fitted[0]), ("test", test, fitted[1])):
            constant[split] = score(result, spec, task, train, np.full(len(task.y), value))
            unconstrained[split] = score(result, spec, task, train, pred)
        return constant, unconstrained

    reads = _extra_reads(result, spec, train)
    if reads is None:
        constant, unconstrained = scores()
    else:
        key = ("baseline scores", train.fingerprint, test.fingerprint, *learner.key, *reads)
        constant, unconstrained = fitted_once(key, scores)
    return Baselines(
        learner=learner.label,
        constant={split: dict(values) for split, values in constant.items()},
        unconstrained={split: dict(values) for split, values in unconstrained.items()},
        constant_label=constant_label,
        unconstrained_label=f"unconstrained {learner.label}",
        constant_value=value,
    )


# -- generic checks -----------------------------------------------------------------------------

#: Below this share of one predicted class a classifier is nearly constant.
NEAR_CONSTANT_SHARE = 0.02
#: Groups with at least this share of the rows count for "too few for a group to show one".
SHOWING_GROUP_SHARE = 0.05
#: Significance of the paired tests that decide "better" or "worse" (one-sided for McNemar,
#: the two-sided interval's level 1 − this for the paired bootstrap).
SIGNIFICANCE = 0.05


def near_constant(pred: np.ndarray, groups: np.ndarray | None = None) -> tuple[bool, dict]:
    """Whether classifier predictions ``pred`` (P(ŷ = 1) per row) are nearly constant: under
    :data:`NEAR_CONSTANT_SHARE` of the rows get the rarer class, or fewer than it takes for the
    smallest group (of those with :data:`SHOWING_GROUP_SHARE` of the rows or more) to show one
    of them on average, so its rates cannot differ from 0 or 1."""
    pred = np.asarray(pred, dtype=float)
    n = max(len(pred), 1)
    minority = float(min(pred.sum(), n - pred.sum()))
    smallest = n
    if groups is not None and len(groups):
        counts = np.bincount(np.asarray(groups, dtype=np.int64))
        counts = counts[counts >= SHOWING_GROUP_SHARE * n]
        smallest = int(counts.min()) if counts.size else n
    numbers = {
        "minority_share": minority / n,
        "minority_rows": minority,
        "rows_to_show_one_in_smallest_group": n / max(smallest, 1),
    }
    return minority / n < NEAR_CONSTANT_SHARE or minority < n / max(smallest, 1), numbers


def constant_check(pred: np.ndarray, kind: str, groups: np.ndarray | None = None) -> Check:
    """Whether the test predictions are (nearly) all the same (see :func:`near_constant`)."""
    pred = np.asarray(pred, dtype=float)
    if kind != "classification":
        numbers = {"prediction_std": float(np.std(pred))}
        if numbers["prediction_std"] < 1e-9:
            sentence = "The model predicts the same value for every test row."
            return Check("constant_predictions", "fail", sentence, numbers)
        return Check("constant_predictions", "ok", "Predictions vary across test rows.", numbers)
    nearly, numbers = near_constant(pred, groups)
    numbers["score_std"] = float(np.std(pred))
    share = numbers["minority_share"]
    if share == 0.0 or (numbers["minority_rows"] < 1 and numbers["score_std"] < 0.01):
        level = "fail"
        sentence = (
            f"The model predicts {int(round(float(np.mean(pred))))} for every test row: it is "
            "a constant classifier and ignores the features."
        )
    elif nearly:
        level = "warn"
        sentence = (
            f"Only {share:.2%} of the test rows ({numbers['minority_rows']:.0f}) get the "
            f"rarer prediction (under {NEAR_CONSTANT_SHARE:.0%}, or too few for the smallest "
            "group to show one): the model is nearly a constant classifier, so its group "
            "rates say little. A weaker constraint or more informative features give it "
            "room to separate the classes."
        )
    else:
        level, sentence = "ok", f"Predictions vary: the rarer one covers {share:.1%} of test rows."
    return Check("constant_predictions", level, sentence, numbers)


def paired_error_test(
    y: np.ndarray, pred: np.ndarray, reference: np.ndarray, kind: str
) -> tuple[float, float]:
    """One-sided p-values that ``pred`` has a smaller / larger test error (loss) than
    ``reference`` on the same rows: McNemar's mid-p on the discordant rows for a classifier
    (expected errors for a randomized one), a paired z-test of the squared-error differences
    for a regressor."""
    y, pred, reference = (np.asarray(a, dtype=float) for a in (y, pred, reference))
    if kind == "classification":
        own, other = np.abs(y - pred), np.abs(y - reference)
        only_own = int(round(float(np.sum(own * (1 - other)))))
        only_other = int(round(float(np.sum(other * (1 - own)))))
        return metrics.mcnemar_midp(only_own, only_other)
    from scipy.stats import norm  # lazy: loading the checks needs no scipy

    diff = (y - pred) ** 2 - (y - reference) ** 2
    se = float(np.std(diff, ddof=1) / math.sqrt(len(diff))) if len(diff) > 1 else 0.0
    if se == 0.0:
        mean = float(np.mean(diff)) if len(diff) else 0.0
        return (0.0, 1.0) if mean < 0 else ((1.0, 0.0) if mean > 0 else (1.0, 1.0))
    z = float(np.mean(diff)) / se
    return float(norm.cdf(z)), float(norm.sf(z))


def constant_error_check(
    result: Any, test: Task, baselines: Baselines, pred: np.ndarray
) -> Check | None:
    """Whether the model beats the constant predictor on the test rows, by a paired test on
    the same rows (:func:`paired_error_test`): ok when it is significantly better, fail when
    it is significantly worse or makes exactly the constant's errors, warn otherwise."""
    name = "error" if test.kind == "classification" else "loss"
    model = _finite(result.metrics.get("test", {}).get(name))
    const = _finite(baselines.constant.get("test", {}).get(name))
    value = _finite(baselines.constant_value)
    if model is None or const is None or value is None:
        return None
    p_better, p_worse = paired_error_test(test.y, pred, np.full(len(test.y), value), test.kind)
    numbers = {
        f"test_{name}": model,
        f"constant_{name}": const,
        "p_better": p_better,
        "p_worse": p_worse,
        "significance": SIGNIFICANCE,
    }
    words = "error" if name == "error" else "loss"
    test_words = "McNemar mid-p" if test.kind == "classification" else "paired z-test p"
    versus = f"Test {words} {model:.4f} against {const:.4f} for the {baselines.constant_label}"
    if p_better < SIGNIFICANCE:
        level = "ok"
        sentence = f"{versus}: better on the same rows ({test_words} = {p_better:.2g})."
    elif p_worse < SIGNIFICANCE or (p_worse >= 1.0 and p_better >= 1.0):
        how = "worse" if p_worse < SIGNIFICANCE else "the same errors"
        level = "fail"
        sentence = (
            f"{versus}: {how} on the same rows ({test_words} = {min(p_worse, 1.0):.2g}); the "
            "model is no better than predicting one value."
        )
    else:
        level = "warn"
        sentence = (
            f"{versus}: not clearly better on the same rows ({test_words} = {p_better:.2g} ≥ "
            f"{SIGNIFICANCE:g}). More training rows or more informative features may separate "
            "it from the constant."
        )
    return Check("no_better_than_constant", level, sentence, numbers)


def leak_check(result: Any, train: Task, test: Task) -> Check | None:
    """Whether a feature that alone predicts the target (``Task.leaks``) is among the result's
    inputs: failed when the result is almost perfect on the test rows (accuracy, or R² from its
    loss, at least the thresholds of :mod:`fairengine.data.leakage`), a warning otherwise; None
    when no such column is a feature."""
    from fairengine.data.leakage import MIN_R2, MIN_SHARE

    leaked = [c for c in train.leaks if c in train.features]
    if not leaked:
        return None
    values = result.metrics.get("test", {})
    names = ", ".join(map(repr, leaked))
    which = f"{'the feature' if len(leaked) == 1 else 'each of the features'} {names}"
    if test.kind == "classification":
        error = _finite(values.get("error"))
        score = _finite(values.get("accuracy")) if error is None else 1 - error
        label, key, threshold = "test accuracy", "test_accuracy", MIN_SHARE
    else:
        loss, spread = _finite(values.get("loss")), float(np.var(test.y))
        score = None if loss is None or spread <= 0 else 1 - loss / spread
        label, key, threshold = "test R² from its loss", "test_r2", MIN_R2
    found = "no test score" if score is None else f"{label} {score:.3f}"
    numbers = {} if score is None else {key: score}
    if score is not None and score >= threshold:
        level = "fail"
        sentence = (
            f"The result is almost perfect ({found}) while {which} alone predicts the target "
            f"{train.target!r}: the score measures the leak, not the method."
        )
    else:
        level = "warn"
        sentence = (
            f"Among the inputs, {which} alone predicts the target {train.target!r} ({found}): "
            "the result may rest on the leak."
        )
    return Check("leaked_feature", level, f"{sentence} Leave {names} out of the features.", numbers)


def rate_tolerance(task: Task) -> float:
    """0.5/√n of the smallest group on ``task``: one standard error of a rate at p = 1/2."""
    counts = np.bincount(np.asarray(task.groups, dtype=np.int64))
    counts = counts[counts > 0]
    return 0.5 / math.sqrt(max(int(counts.min()) if counts.size else 1, 1))


def fairness_check(
    name: str,
    model: float | None,
    reference: float | None,
    interval: tuple[float, float],
    label: str,
    noise: float = 0.0,
) -> Check | None:
    """Whether the run changed fairness metric ``name`` against the unconstrained model, from
    the paired bootstrap ``interval`` of (run − reference) (:func:`fairness_interval`): fail
    when it shows it worse, ok when better (by the interval or the point values only), else a
    warning saying whether the reference is within ``noise`` (nothing measurable to remove)."""
    if model is None or reference is None:
        return None
    lower = metrics.is_lower_better(name)
    low, high = interval if lower else (-interval[1], -interval[0])  # positive = worse
    words = metrics.metric_label(name).lower() if name in metrics.REGISTRY else name
    numbers = {
        "test_value": model,
        "unconstrained_value": reference,
        "worse_by_low": low,
        "worse_by_high": high,
        "level": 1 - SIGNIFICANCE,
    }
    versus = f"On the test rows the {words} is {model:.4f} against {reference:.4f} for the {label}"
    spread = (
        f"(paired bootstrap {1 - SIGNIFICANCE:.0%} interval of how much worse: "
        f"{low:+.4f} to {high:+.4f})"
    )
    if low > 0:
        level = "fail"
        found = f"worse on the same rows {spread}; the method made the metric it targets worse."
    elif high < 0:
        level, found = "ok", f"better on the same rows {spread}."
    elif (model - reference if lower else reference - model) < 0:
        level, found = "ok", f"better, by less than these rows can confirm {spread}."
    elif lower and reference <= noise:
        level = "warn"
        found = (
            f"no measurable improvement {spread}. The unconstrained model shows no disparity "
            f"beyond sampling noise ({reference:.4f} ≤ {noise:.4f}, two standard errors of a "
            "rate in the smallest group): there is nothing measurable to remove, and the "
            "unconstrained model may serve as well."
        )
    else:
        level = "warn"
        found = (
            f"no measurable improvement {spread}. A stronger setting of the method's fairness "
            "knob may move it."
        )
    return Check("fairness_vs_unconstrained", level, f"{versus}: {found}", numbers)


def fairness_interval(
    result: Any,
    spec: Evidence,
    name: str,
    test: Task,
    train: Task,
    pred: np.ndarray,
    reference: np.ndarray,
) -> tuple[float, float]:
    """Paired bootstrap interval of fairness metric ``name`` of ``pred`` minus that of
    ``reference`` on the same resampled test rows (:func:`~fairengine.metrics.
    paired_bootstrap_ci`); the reference's values are shared by the points of a sweep (design
    notes: docs/architecture.md, "Evidence of a result")."""
    reads = _extra_reads(result, spec, train)
    if spec.extra_metrics is not None and name in spec.extra_metrics(result, test, train, pred):
        # the test rows without columns (what a method's own metric reads), its y and groups
        # computed once and carried to every subset the bootstrap takes
        test.y, test.groups  # noqa: B018
        narrow = test.subset(np.arange(len(test.frame)), columns=())

        def value(rows: np.ndarray, p: np.ndarray) -> float:
            return float(spec.extra_metrics(result, narrow.subset(rows), train, p[rows])[name])
    else:
        reads = ()

        def value(rows: np.ndarray, p: np.ndarray) -> float:
            return float(metrics.METRICS[name](test.y[rows], p[rows], test.groups[rows]))

    def reference_values() -> dict[bytes, float]:
        values: dict[bytes, float] = {}

        def keep(rows: np.ndarray) -> float:
            values[_digest(rows)] = value(rows, reference)
            return 0.0

        metrics.paired_bootstrap_ci(keep, test.groups)
        return values

    shared: dict[bytes, float] = {}
    if reads is not None:
        digests = (_digest(a) for a in (test.y, test.groups, reference))
        shared = fitted_once(("bootstrap reference", name, *reads, *digests), reference_values)

    def difference(rows: np.ndarray) -> float:
        ref = shared.get(_digest(rows))
        return value(rows, pred) - (value(rows, reference) if ref is None else ref)

    return metrics.paired_bootstrap_ci(difference, test.groups)


def _extra_reads(result: Any, spec: Evidence, train: Task) -> tuple | None:
    """What ``spec.extra_metrics`` reads besides the rows and predictions, as a cache key: the
    training rows and the knobs ``spec.extra_metrics_knobs`` names; None when unknown."""
    if spec.extra_metrics is None:
        return ()
    if spec.extra_metrics_knobs is None:
        return None
    function = f"{spec.extra_metrics.__module__}.{spec.extra_metrics.__qualname__}"
    knobs = tuple((k, repr(result.knobs.get(k))) for k in spec.extra_metrics_knobs)
    return (function, train.fingerprint, *knobs)


def _digest(values: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(values).tobytes(), digest_size=16).digest()


def check_allowance(result: Any, name: str) -> float:
    """The sampling allowance check ``name`` of ``result`` derived from the rows it judged (its
    ``allowance`` number; 0 without the check or when it is not finite)."""
    found = next((c for c in result.checks if c.name == name), None)
    allowance = 0.0 if found is None else float(found.numbers.get("allowance", 0.0))
    return allowance if math.isfinite(allowance) else 0.0


# -- attaching ------------------------------------------------------------------------------------


def attach_evidence(result: RunResult, train: Task, test: Task, method: Method) -> RunResult:
    """Compute ``result.baselines`` and ``result.checks`` of ``method``'s run from the run and its
    rows (in place; returns ``result``). Idempotent: recomputing replaces what was there."""
    from fairengine.methods.evaluation import predictions_on_test, predicts

    spec = method.evidence or Evidence()
    checks: list[Check | None] = []
    baselines: Baselines | None = None
    if predicts(result.model, train):
        baselines = predictor_baselines(result, spec, train, test)
        pred = predictions_on_test(result, test)
        checks.append(constant_check(pred, test.kind, test.groups))
        checks.append(constant_error_check(result, test, baselines, pred))
        checks.extend(_fairness_checks(result, spec, method, train, test, baselines, pred))
    elif spec.filter_baselines is not None:
        baselines = spec.filter_baselines(result, train, test)
    if spec.promise is not None:
        checks.extend(spec.promise(result, train, test, baselines))
    checks.append(leak_check(result, train, test))
    result.baselines = baselines
    result.checks = tuple(c for c in checks if c is not None)
    return result


def _fairness_checks(
    result: Any,
    spec: Evidence,
    method: Method,
    train: Task,
    test: Task,
    baselines: Baselines,
    pred: np.ndarray,
) -> list[Check | None]:
    """The fairness comparison with the unconstrained reference on the same test rows, or, when
    that reference is itself (nearly) constant on a classification task, a warning that the
    comparison is skipped (it would say nothing)."""
    learner = (spec.learner or default_learner)(result, train)
    reference = np.asarray(unconstrained_predictions(learner, train, test)[1], dtype=float)
    label = baselines.unconstrained_label
    nearly, numbers = near_constant(reference, test.groups)
    if test.kind == "classification" and nearly:
        sentence = (
            f"The {label} itself gives the rarer prediction to only "
            f"{numbers['minority_share']:.2%} of the test rows: this learner finds too little "
            "signal in these features to separate the classes, constrained or not, so the "
            "fairness comparison with it is skipped. More informative features or another "
            "learner are needed before a fairness method can help."
        )
        return [Check("baseline_constant", "warn", sentence, numbers)]
    fm = spec.fairness_metric(result) if spec.fairness_metric else method.fairness_metric
    # the run's value computed as the baselines' are (full test rows), else its own report
    extra = spec.extra_metrics(result, test, train, pred) if spec.extra_metrics else {}
    model_value = _finite(extra.get(fm, result.metrics.get("test", {}).get(fm)))
    ref_value = _finite(baselines.unconstrained["test"].get(fm))
    if model_value is None or ref_value is None:
        return []
    interval = fairness_interval(result, spec, fm, test, train, pred, reference)
    noise = 2 * rate_tolerance(test)
    return [fairness_check(fm, model_value, ref_value, interval, label, noise)]


def qualify_status(artifacts: dict, key: str, check: Check | None, *, where: str = "") -> None:
    """Make a status sentence in ``artifacts[key]`` carry the held-out check: the method's own
    words are kept under ``key + "_fit"`` and, when ``check`` is not ok, its sentence is added.
    Idempotent (the sentence is rebuilt from the kept words each time)."""
    container = artifacts.get(where) if where else artifacts
    if not isinstance(container, dict) or key not in container:
        return
    original = container.setdefault(f"{key}_fit", container[key])
    if check is None or check.level == "ok":
        container[key] = original
        return
    container[key] = f"{original} Held-out check: {check.sentence}".strip()


def evidence_dict(result: Any) -> dict[str, Any]:
    """``{"checks": [...], "baselines": {...} or None}``: the result's evidence as JSON-able
    data (what the CLI prints and model files carry)."""
    baselines = getattr(result, "baselines", None)
    return {
        "checks": [c.to_dict() for c in getattr(result, "checks", ()) or ()],
        "baselines": None if baselines is None else baselines.to_dict(),
    }


def evidence_from_dict(
    data: Mapping[str, Any] | None,
) -> tuple[tuple[Check, ...], Baselines | None]:
    """The inverse of :func:`evidence_dict` (missing parts are empty)."""
    data = data or {}
    checks = tuple(Check.from_dict(c) for c in data.get("checks") or ())
    raw = data.get("baselines")
    return checks, (Baselines.from_dict(raw) if raw else None)


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _plain(value: Any) -> Any:
    number = _finite(value)
    if number is None and value is not None and not isinstance(value, (int, float, np.generic)):
        return value
    return number


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def _plain_splits(splits: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, Any]]:
    return {s: {k: _plain(v) for k, v in values.items()} for s, values in splits.items()}


def _number_splits(splits: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    return {str(s): {str(k): _number(v) for k, v in dict(v).items()} for s, v in splits.items()}
