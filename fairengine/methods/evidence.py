"""Evidence attached to every result: baselines on the same rows and checks in plain words.

Every method reports what it optimised, on the rows it optimised on. This module adds what a
user needs to judge that result, computed the same way for every method:

* :class:`Baselines` — the constant predictor (the training majority class, or the training mean
  for regression) and the *unconstrained* model of the method's own base learner, fitted on the
  training rows and scored by the shared evaluation (:func:`~fairengine.methods.evaluation.
  task_metrics`) on train and test. A filter (``predicts_target = False``) gets the references
  that make sense for a filter instead: keep every row (the unfiltered pool) and the filter that
  reads the sensitive attribute itself (fully disclosive, balanced by construction).
* :class:`Check` — a small typed verdict: ``name``, ``level`` ("ok", "warn", "fail"), one
  sentence for people and the numbers behind it. The generic checks below apply to every
  predicting result; each method adds its own promise, checked on the held-out test rows, through
  its :class:`Evidence` declaration (``Method.evidence``).

:func:`attach_evidence` computes both from ``(result, train, test)`` and is idempotent: it
replaces what was there. :meth:`Method.run <fairengine.methods.base.Method.run>` calls it after
the shared evaluation; a page or the CLI can call it on a stored run that lacks it. The
unconstrained fit is cached in-process per (train, test, learner), so a sweep fits it once, and,
inside :func:`stored_fits`, in a store on disk (the run store), so a fresh process does not
refit it either (:mod:`fairengine.methods.evidence_fits`; its names are importable from here).

Tolerances are sampling tolerances on the test rows (a binomial standard error for error rates,
0.5/√n of the smallest group for a rate gap), so a check does not fire on noise alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine import metrics
from fairengine.methods.evidence_fits import Learner as Learner
from fairengine.methods.evidence_fits import default_learner, unconstrained_predictions
from fairengine.methods.evidence_fits import logistic_from_knob as logistic_from_knob
from fairengine.methods.evidence_fits import logistic_learner as logistic_learner
from fairengine.methods.evidence_fits import stored_fits as stored_fits
from fairengine.methods.evidence_fits import stored_table as stored_table

if TYPE_CHECKING:
    from fairengine.data import Task
    from fairengine.methods.base import Method, RunResult

LEVELS = ("ok", "warn", "fail")
SPLITS = ("train", "test")


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
    """

    learner: str
    constant: dict[str, dict[str, float]]
    unconstrained: dict[str, dict[str, float]]
    constant_label: str = "constant predictor"
    unconstrained_label: str = "unconstrained model"

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
        fairness metric too.
    fairness_metric : callable (result) -> str
        The fairness metric the run was meant to improve, when it depends on the knobs.
    promise : callable (result, train, test, baselines) -> list of Check
        The method's own promise checked on the test rows, plus its convergence.
    filter_baselines : callable (result, train, test) -> Baselines
        For a filter: its reference results.
    """

    learner: Callable[[Any, Task], Learner] | None = None
    extra_metrics: Callable[[Any, Task, Task, np.ndarray], dict[str, float]] | None = None
    fairness_metric: Callable[[Any], str] | None = None
    promise: Callable[[Any, Task, Task, Baselines | None], list[Check]] | None = None
    filter_baselines: Callable[[Any, Task, Task], Baselines] | None = None


# -- scoring ------------------------------------------------------------------------------------


def constant_prediction(train: Task) -> tuple[float, str]:
    """The constant predictor fitted on the training rows and its label."""
    y = np.asarray(train.y, dtype=float)
    if train.kind == "classification":
        value = float(np.mean(y) > 0.5)
        return value, f"always {int(value)} (the training majority class)"
    value = float(np.mean(y))
    return value, f"always {value:.4g} (the training mean)"


def score(result: Any, spec: Evidence, task: Task, train: Task, pred: np.ndarray) -> dict:
    """Shared metrics of ``pred`` on ``task`` plus the method's extra metrics."""
    from fairengine.methods.evaluation import task_metrics

    values = task_metrics(task, np.asarray(pred, dtype=float))
    if spec.extra_metrics is not None:
        values.update(spec.extra_metrics(result, task, train, np.asarray(pred, dtype=float)))
    return values


def predictor_baselines(result: Any, spec: Evidence, train: Task, test: Task) -> Baselines:
    """The constant predictor and the unconstrained base learner, on train and test."""
    value, constant_label = constant_prediction(train)
    learner = (spec.learner or default_learner)(result, train)
    fitted = unconstrained_predictions(learner, train, test)
    constant, unconstrained = {}, {}
    for split, task, pred in (("train", train, fitted[0]), ("test", test, fitted[1])):
        constant[split] = score(result, spec, task, train, np.full(len(task.y), value))
        unconstrained[split] = score(result, spec, task, train, pred)
    return Baselines(
        learner=learner.label,
        constant=constant,
        unconstrained=unconstrained,
        constant_label=constant_label,
        unconstrained_label=f"unconstrained {learner.label}",
    )


# -- generic checks -----------------------------------------------------------------------------


def constant_check(pred: np.ndarray, kind: str) -> Check:
    """Whether the test predictions are (nearly) all the same."""
    pred = np.asarray(pred, dtype=float)
    if kind == "classification":
        hard = pred >= 0.5
        share = float(max(hard.mean(), 1 - hard.mean()))
        spread = float(np.std(pred))
        numbers = {"share_identical": share, "score_std": spread}
        if share >= 1.0 and spread < 0.01:
            label = int(round(float(np.mean(hard))))
            return Check(
                "constant_predictions", "fail",
                f"The model predicts {label} for every test row: it is a constant classifier "
                "and ignores the features.", numbers,
            )  # fmt: skip
        if share >= 0.99:
            return Check(
                "constant_predictions", "warn",
                f"The model gives the same prediction to {share:.1%} of the test rows: it is "
                "nearly a constant classifier.", numbers,
            )  # fmt: skip
        return Check("constant_predictions", "ok",
                     f"Predictions vary: the most common one covers {share:.1%} of test rows.",
                     numbers)  # fmt: skip
    spread = float(np.std(pred))
    numbers = {"prediction_std": spread}
    if spread < 1e-9:
        return Check(
            "constant_predictions",
            "fail",
            "The model predicts the same value for every test row.",
            numbers,
        )
    return Check("constant_predictions", "ok", "Predictions vary across test rows.", numbers)


def constant_error_check(result: Any, test: Task, baselines: Baselines) -> Check | None:
    """Whether the model beats the constant predictor on test, beyond sampling noise."""
    name = "error" if test.kind == "classification" else "loss"
    model = _finite(result.metrics.get("test", {}).get(name))
    const = _finite(baselines.constant.get("test", {}).get(name))
    if model is None or const is None:
        return None
    n = max(len(test.y), 1)
    if test.kind == "classification":
        se = math.sqrt(max(const * (1 - const), 1e-12) / n)
    else:  # standard error of the constant's mean squared error
        y = np.asarray(test.y, dtype=float)
        se = float(np.std((y - y.mean()) ** 2) / math.sqrt(n))
    numbers = {f"test_{name}": model, f"constant_{name}": const, "standard_error": se}
    words = "error" if name == "error" else "loss"
    if model >= const:
        return Check(
            "no_better_than_constant", "fail",
            f"Test {words} {model:.4f} is no better than the constant predictor's {const:.4f} "
            f"({baselines.constant_label}).", numbers,
        )  # fmt: skip
    if model > const - 2 * se:
        return Check(
            "no_better_than_constant", "warn",
            f"Test {words} {model:.4f} is below the constant predictor's {const:.4f} by less "
            f"than two standard errors ({2 * se:.4f}): not clearly better.", numbers,
        )  # fmt: skip
    return Check("no_better_than_constant", "ok",
                 f"Test {words} {model:.4f} beats the constant predictor's {const:.4f}.",
                 numbers)  # fmt: skip


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
    perfect = score is not None and score >= threshold
    if perfect:
        return Check(
            "leaked_feature", "fail",
            f"The result is almost perfect ({found}) while {which} alone predicts the target "
            f"{train.target!r}: the score measures the leak, not the method. Leave {names} out "
            "of the features.", numbers,
        )  # fmt: skip
    return Check(
        "leaked_feature", "warn",
        f"Among the inputs, {which} alone predicts the target {train.target!r} ({found}): the "
        f"result may rest on the leak. Leave {names} out of the features.", numbers,
    )  # fmt: skip


def rate_tolerance(task: Task) -> float:
    """0.5/√n of the smallest group on ``task``: one standard error of a rate at p = 1/2."""
    counts = np.bincount(np.asarray(task.groups, dtype=np.int64))
    counts = counts[counts > 0]
    return 0.5 / math.sqrt(max(int(counts.min()) if counts.size else 1, 1))


def fairness_check(
    name: str, model: float | None, reference: float | None, tol: float, label: str
) -> Check | None:
    """Whether the run improved fairness metric ``name`` over the unconstrained model."""
    if model is None or reference is None:
        return None
    lower = metrics.is_lower_better(name)
    worse_by = (model - reference) if lower else (reference - model)
    words = metrics.metric_label(name).lower() if name in metrics.REGISTRY else name
    numbers = {"test_value": model, "unconstrained_value": reference, "tolerance": tol}
    if worse_by > tol:
        return Check(
            "fairness_vs_unconstrained", "fail",
            f"On the test rows the {words} is {model:.4f}, worse than {reference:.4f} for the "
            f"{label}: the method made the metric it targets worse.", numbers,
        )  # fmt: skip
    if worse_by > -1e-3:
        return Check(
            "fairness_vs_unconstrained", "warn",
            f"On the test rows the {words} is {model:.4f} against {reference:.4f} for the "
            f"{label}: no measurable improvement.", numbers,
        )  # fmt: skip
    return Check("fairness_vs_unconstrained", "ok",
                 f"On the test rows the {words} is {model:.4f}, better than {reference:.4f} for "
                 f"the {label}.", numbers)  # fmt: skip


# -- attaching ------------------------------------------------------------------------------------


def attach_evidence(
    result: RunResult, train: Task, test: Task, method: Method | None = None
) -> RunResult:
    """Compute ``result.baselines`` and ``result.checks`` from the run and its rows (in place;
    returns ``result``). Idempotent: recomputing replaces what was there."""
    from fairengine.methods.evaluation import model_inputs, predicts

    if method is None:
        from fairengine.methods.registry import get_method

        try:
            method = get_method(result.method)
        except ValueError:
            return result
    spec = method.evidence or Evidence()
    checks: list[Check] = []
    baselines: Baselines | None = None
    if predicts(result.model, train):
        baselines = predictor_baselines(result, spec, train, test)
        pred = np.asarray(
            result.model.metric_predictions(model_inputs(result, "test", test)), dtype=float
        )
        checks.append(constant_check(pred, test.kind))
        checks.append(constant_error_check(result, test, baselines))
        fm = spec.fairness_metric(result) if spec.fairness_metric else method.fairness_metric
        model_value = _model_fairness(result, spec, test, train, pred, fm)
        checks.append(
            fairness_check(
                fm, model_value, _finite(baselines.unconstrained["test"].get(fm)),
                rate_tolerance(test), baselines.unconstrained_label,
            )
        )  # fmt: skip
    elif spec.filter_baselines is not None:
        baselines = spec.filter_baselines(result, train, test)
    if spec.promise is not None:
        checks.extend(spec.promise(result, train, test, baselines))
    checks.append(leak_check(result, train, test))
    result.baselines = baselines
    result.checks = tuple(c for c in checks if c is not None)
    return result


def _model_fairness(
    result: Any, spec: Evidence, test: Task, train: Task, pred: np.ndarray, name: str
) -> float | None:
    """The run's test value of fairness metric ``name``, computed as the baselines' are (on the
    full test rows), falling back to the run's own reported value."""
    if spec.extra_metrics is not None:
        extra = spec.extra_metrics(result, test, train, pred)
        if name in extra:
            return _finite(extra[name])
    return _finite(result.metrics.get("test", {}).get(name))


def worst_level(checks: Sequence[Check]) -> str:
    """The most severe level among ``checks`` ("ok" when there are none)."""
    levels = [c.level for c in checks]
    for level in ("fail", "warn"):
        if level in levels:
            return level
    return "ok"


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


def stored_result(
    method: str,
    knobs: Mapping[str, Any],
    metrics_: Mapping[str, Mapping[str, float]],
    model: Any,
    train: Task,
    test: Task,
) -> RunResult:
    """A :class:`RunResult` rebuilt from a stored point (its model and metrics, no artifacts)
    with its evidence attached: for runs stored before results carried checks. Checks that need
    the run's artifacts (convergence) are absent; the rest are computed as for a fresh run."""
    from fairengine.methods.base import RunResult

    result = RunResult(
        method,
        dict(knobs),
        {split: dict(values) for split, values in metrics_.items()},
        model,
    )
    return attach_evidence(result, train, test)
