"""Reference method: fairlearn's ThresholdOptimizer (Hardt, Price, Srebro, NeurIPS 2016).

The rule reads the sensitive attribute at prediction time. Design notes:
docs/methods/threshold_optimizer.md.
"""

from __future__ import annotations

import functools
import time
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine.methods._knobs import C_KNOB
from fairengine.methods.base import RANDOMIZED_PREDICTIONS, Knob, Method, RunResult
from fairengine.methods.evidence import Check, Evidence, rate_tolerance
from fairengine.methods.evidence_fits import logistic_from_knob
from fairengine.methods.registry import register

if TYPE_CHECKING:  # fairlearn and scikit-learn load on a run, not for a cached sweep
    from fairengine.data import Task
    from fairengine.models.group_thresholds import GroupRule

#: The constraint knob's values → the fairness metric of the shared evaluation it equalizes.
CONSTRAINTS = {
    "demographic_parity": "dp_diff",
    "true_positive_rate_parity": "tpr_diff",
    "equalized_odds": "eo_diff",
}
#: The constraints in words, for labels and option lists.
CONSTRAINT_WORDS = {
    "demographic_parity": "demographic parity",
    "true_positive_rate_parity": "equal true-positive rates",
    "equalized_odds": "equalized odds",
}
OBJECTIVES = ("accuracy_score", "balanced_accuracy_score")
SENSITIVE_AT_PREDICTION = (
    "It reads the sensitive attribute at prediction time (each group has its own thresholds): "
    "a model file of it needs the sensitive column(s) in every table it predicts, which may be "
    "unlawful or unavailable where it would be used."
)


@functools.cache
def _score_column() -> type:
    """A fitted "estimator" whose prediction is the first column of X, so fairlearn post-processes
    precomputed scores (defined on first use: scikit-learn loads on a run)."""
    from sklearn.base import BaseEstimator

    class ScoreColumn(BaseEstimator):
        def fit(self, X: Any, y: Any, **kwargs: Any) -> Any:
            self.fitted_ = True
            return self

        def predict(self, X: Any) -> np.ndarray:
            return np.asarray(X, dtype=float)[:, 0]

    return ScoreColumn


def fit_rule(
    scores: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    n_groups: int,
    knobs: dict[str, Any],
    *,
    curves_key: tuple | None = None,
) -> tuple[GroupRule, list[int]]:
    """fairlearn's ThresholdOptimizer fitted on ``scores`` (P(y = 1) per training row) with the
    knobs ``constraint``, ``objective`` and ``tol`` (not used for equalized odds), and the
    group codes it could not fit: a group whose training rows all have one label keeps the
    plain rule score > 1/2. With ``curves_key`` (what identifies the scores) fairlearn's
    trade-off curves are computed once for every tolerance of a sweep (design notes)."""
    from fairengine.methods.fitted import fitted_once
    from fairengine.models.group_thresholds import GroupRule

    groups, y = np.asarray(groups), np.asarray(y, dtype=int)
    single = [g for g in range(n_groups) if len(np.unique(y[groups == g])) < 2]
    keep = ~np.isin(groups, single)
    if not keep.any():
        from fairengine.data import DataError

        raise DataError(
            "Every group's training rows have a single label: ThresholdOptimizer needs both "
            "labels in a group to choose its thresholds. Choose another target or sensitive "
            "column."
        )
    data = (np.asarray(scores, dtype=float)[keep].reshape(-1, 1), y[keep], groups[keep])
    tol = None if knobs["constraint"] == "equalized_odds" else float(knobs["tol"])
    curves = None
    if curves_key is not None and tol is not None:
        key = ("threshold_curves", *curves_key, knobs["constraint"], knobs["objective"])
        curves = fitted_once(key, lambda: _fairlearn_fit(data, knobs, tol)[1])
    if curves is None:
        interpolation, _ = _fairlearn_fit(data, knobs, tol)
    else:
        interpolation = _pick_on_curves(*curves, tol)
    return GroupRule.from_fairlearn(interpolation, n_groups), single


def _fairlearn_fit(data: tuple, knobs: dict[str, Any], tol: float | None) -> tuple[dict, Any]:
    """fairlearn's fit on (scores column, labels, groups): its interpolation per group, and its
    trade-off curves with the groups' shares of the rows (None for equalized odds)."""
    from fairlearn.postprocessing import ThresholdOptimizer

    X, y, groups = data
    optimizer = ThresholdOptimizer(
        estimator=_score_column()(),
        constraints=knobs["constraint"],
        objective=knobs["objective"],
        predict_method="predict",
        tol=tol if tol else None,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fairlearn warns about pandas internals
        optimizer.fit(X, y, sensitive_features=groups)
    curves = getattr(optimizer, "_tradeoff_curve", None)
    shares = None if curves is None else {v: np.sum(groups == v) / len(y) for v in curves}
    return optimizer.interpolated_thresholder_.interpolation_dict, (
        None if curves is None else (curves, shares)
    )


def _pick_on_curves(curves: dict, shares: dict, tol: float) -> dict:
    """The thresholds fairlearn's fit picks on its trade-off ``curves`` for tolerance ``tol``:
    the best weighted objective with equal constraint values (``tol`` 0) or within ``tol``."""
    import pandas as pd
    from fairlearn.postprocessing._relaxed_constraints import maximize_objective_with_tolerance
    from sklearn.utils import Bunch

    if not tol:
        overall = pd.concat([p * curves[v]["y"] for v, p in shares.items()], axis=1).sum(axis=1)
        indices = [overall.idxmax()] * len(shares)
    else:
        indices, _ = maximize_objective_with_tolerance(
            dataframes=list(curves.values()), weights=shares.values(), tol=tol
        )
    interpolation = {}
    for value, index in zip(curves, indices, strict=True):
        row = curves[value].iloc[index]
        interpolation[value] = Bunch(
            p0=row.p0, operation0=row.operation0, p1=row.p1, operation1=row.operation1
        )
    return interpolation


def group_values(task: Task) -> tuple[tuple[str, ...], ...]:
    """For each group code, the sensitive values of its first row (empty text if none)."""
    codes = np.asarray(task.groups)
    rows = []
    for code in range(task.n_groups):
        hits = np.flatnonzero(codes == code)
        if hits.size:
            row = task.frame.iloc[int(hits[0])]
            rows.append(tuple(str(row[c]).strip() for c in task.sensitive))
        else:
            rows.append(tuple("" for _ in task.sensitive))
    return tuple(rows)


def _run(
    train: Task,
    test: Task,
    *,
    constraint: str,
    objective: str,
    tol: float,
    C: float,
) -> RunResult:
    from fairengine.methods._linear import encode_train, fitted_logistic
    from fairengine.models.group_thresholds import GroupThresholdClassifier

    start = time.perf_counter()
    encoder, Z = encode_train(train)
    base = fitted_logistic(train, C)
    knobs = {"constraint": constraint, "objective": objective, "tol": tol, "C": C}
    scores = base.predict_proba(Z)[:, 1]
    rule, single = fit_rule(
        scores, train.y, train.groups, train.n_groups, knobs, curves_key=(train.fingerprint, C)
    )
    model = GroupThresholdClassifier(
        encoder,
        (np.asarray(base.coef_).ravel(), float(np.ravel(base.intercept_)[0])),
        train.sensitive,
        (train.group_names, group_values(train)),
        rule,
        train.merged_groups,
    )
    extra = {
        s: {c: part.frame[c] for c in train.sensitive}
        for s, part in (("train", train), ("test", test))
    }
    return RunResult(
        method="threshold_optimizer",
        knobs=knobs,
        metrics={"train": {}, "test": {}},  # filled by the shared evaluation (Method.run)
        model=model,
        artifacts={
            "extra_inputs": extra,
            "sensitive_at_prediction": SENSITIVE_AT_PREDICTION,
            "unfitted_groups": [train.group_names[g] for g in single],
        },
        elapsed=time.perf_counter() - start,
    )


def _fairness_metric(result: Any) -> str:
    return CONSTRAINTS.get(str(result.knobs.get("constraint")), "dp_diff")


def _label_tolerance(test: Task, name: str) -> float:
    """One sampling standard error of the rate the constraint compares: over a group's rows
    (:func:`rate_tolerance`) for demographic parity, over its positives (and negatives) for
    TPR parity and equalized odds, whose smallest group x label cell is smaller."""
    if name == "dp_diff":
        return rate_tolerance(test)
    cells = np.asarray(test.groups) * 2 + np.asarray(test.y)
    counts = np.bincount(cells, minlength=2 * test.n_groups)
    if name == "tpr_diff":
        counts = counts[1::2]
    counts = counts[counts > 0]
    return 0.5 / float(np.sqrt(max(int(counts.min()) if counts.size else 1, 1)))


def _promise(result: Any, train: Task, test: Task, baselines: Any) -> list[Check]:
    """The groups the fit had to leave out, and the constraint on the held-out test rows: its
    gap at most ``tol`` (0 for equalized odds) plus two sampling standard errors of the rate it
    compares (:func:`_label_tolerance`)."""
    checks = []
    unfitted = list(result.artifacts.get("unfitted_groups") or ())
    if unfitted:
        groups = ", ".join(map(repr, unfitted[:5]))
        sentence = (
            f"Group(s) {groups} have a single label in the training rows, so no fair thresholds "
            "could be chosen for them: they keep the plain rule (score above 1/2) and the "
            "constraint does not cover them."
        )
        checks.append(Check("unfitted_groups", "warn", sentence, {"groups": len(unfitted)}))
    name = _fairness_metric(result)
    value = result.metrics.get("test", {}).get(name)
    if value is None or not np.isfinite(value):
        return checks
    tol = 0.0 if name == "eo_diff" else float(result.knobs.get("tol", 0.0))
    bound = tol + 2 * _label_tolerance(test, name)
    words = {
        "dp_diff": "demographic parity difference",
        "tpr_diff": "true positive rate difference",
        "eo_diff": "equalized odds difference",
    }[name]
    found = f"On the test rows the {words} is {value:.4f}"
    noise = f"the constraint's {tol:g} plus sampling noise ({bound:.4f})"
    if value > bound:
        level = "fail"
        sentence = (
            f"{found}, above {noise}: the thresholds fitted on the training rows do not hold on "
            "new rows."
        )
    else:
        level, sentence = "ok", f"{found}, within {noise}."
    numbers = {"test_value": float(value), "tol": tol, "bound": bound}
    return [*checks, Check("held_out_constraint", level, sentence, numbers)]


#: The sweep of ``fairengine sweep`` and of the hosted demo (one grid).
GRID = {"tol": (0.0, 0.02, 0.05, 0.1, 0.2)}

THRESHOLD_OPTIMIZER = register(
    Method(
        name="threshold_optimizer",
        version="2",  # 2: baseline comparisons by paired tests on the test rows
        requirements=(SENSITIVE_AT_PREDICTION, RANDOMIZED_PREDICTIONS),
        title="fairlearn ThresholdOptimizer",
        seed=None,
        kinds=("classification",),
        knobs=(
            Knob(
                "constraint",
                "demographic_parity",
                choices=tuple(CONSTRAINTS),
                label="Fairness constraint",
                help="What the group thresholds equalize on the training rows.",
            ),
            Knob(
                "objective",
                "accuracy_score",
                choices=OBJECTIVES,
                label="Objective",
                help="What the thresholds maximise under the constraint.",
            ),
            Knob(
                "tol",
                0.0,
                0.0,
                0.5,
                0.01,
                label="Constraint tolerance",
                help="Largest gap allowed between groups (0 = equal); not used for equalized "
                "odds, which fairlearn enforces exactly.",
            ),
            C_KNOB,
        ),
        fairness_metric="dp_diff",
        performance_metric="error",
        run_function=_run,
        evidence=Evidence(
            learner=logistic_from_knob("C"),
            fairness_metric=_fairness_metric,
            promise=_promise,
            promise_checks=("held_out_constraint", "unfitted_groups"),
        ),
        description="Post-processing with fairlearn's ThresholdOptimizer: group-specific "
        "randomized thresholds on the unconstrained logistic regression's scores. "
        + SENSITIVE_AT_PREDICTION,
        reference="Hardt, Price, Srebro, NeurIPS 2016 (fairlearn)",
        sweep_grids={"cli": GRID, "demo": GRID},
        page=False,  # a reference: on the Compare page
    )
)
