"""Reference method: fairlearn's ExponentiatedGradient (Agarwal et al., ICML 2018).

This wraps fairlearn itself, so every paper method can be compared with the field's standard tool
on the same chart. The fitted mixture is converted into a :class:`RandomizedClassifier`
(coefficients and weights), which exports without pickle.
"""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine.methods._knobs import C_KNOB
from fairengine.methods.base import RANDOMIZED_PREDICTIONS, Knob, Method, RunResult
from fairengine.methods.evidence import Evidence
from fairengine.methods.evidence_fits import logistic_from_knob
from fairengine.methods.registry import register

if TYPE_CHECKING:  # fairlearn and scikit-learn load on a run, not for a cached sweep
    from fairengine.data import Task

#: The constraint knob's values → fairlearn's moment class name (imported on a run).
CONSTRAINTS = {"demographic_parity": "DemographicParity", "equalized_odds": "EqualizedOdds"}


def _run(
    train: Task,
    test: Task,
    *,
    constraint: str,
    eps: float,
    max_iter: int,
    C: float,
) -> RunResult:
    from fairlearn import reductions
    from fairlearn.reductions import ExponentiatedGradient

    from fairengine.methods._linear import encode_train, logistic_regression
    from fairengine.models import RandomizedClassifier

    start = time.perf_counter()
    encoder, Z = encode_train(train)
    mitigator = ExponentiatedGradient(
        logistic_regression(C),
        constraints=getattr(reductions, CONSTRAINTS[constraint])(difference_bound=eps),
        eps=eps,
        max_iter=max_iter,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fairlearn warns about pandas internals and convergence
        mitigator.fit(Z, train.y, sensitive_features=train.groups)
    active = np.asarray(mitigator.weights_, dtype=float) > 0
    predictors = [p for p, keep in zip(mitigator.predictors_, active, strict=True) if keep]
    parts = [_linear_part(p, Z.shape[1]) for p in predictors]
    coefs, intercepts = np.vstack([c for c, _ in parts]), np.array([b for _, b in parts])
    model = RandomizedClassifier(encoder, coefs, intercepts, np.asarray(mitigator.weights_)[active])
    return RunResult(
        method="fairlearn_eg",
        knobs={"constraint": constraint, "eps": eps, "max_iter": max_iter, "C": C},
        metrics={"train": {}, "test": {}},  # filled by the shared evaluation (Method.run)
        model=model,
        artifacts={
            "n_components": int(active.sum()),
            "n_oracle_calls": len(mitigator.predictors_),
            "encoded_inputs": {"train": Z},  # scored by the shared evaluation, not re-encoded
        },
        elapsed=time.perf_counter() - start,
    )


def _linear_part(predictor: Any, n_features: int) -> tuple[np.ndarray, float]:
    """A fitted logistic regression's coefficients and intercept (fairlearn may fit one on a
    single class: then a constant classifier)."""
    classes = list(getattr(predictor, "classes_", [0, 1]))
    if len(classes) < 2:
        return np.zeros(n_features), 1.0 if classes == [1] else -1.0
    coef = np.asarray(predictor.coef_, dtype=float).ravel()
    return coef, float(np.ravel(predictor.intercept_)[0])


#: The sweep of ``fairengine sweep`` and of the hosted demo (one grid).
GRID = {"eps": (0.005, 0.01, 0.02, 0.05, 0.1)}

FAIRLEARN_EG = register(
    Method(
        name="fairlearn_eg",
        version="2",  # 2: baseline comparisons by paired tests on the test rows
        requirements=(RANDOMIZED_PREDICTIONS,),
        title="fairlearn ExponentiatedGradient",
        seed=None,
        kinds=("classification",),
        knobs=(
            Knob(
                "constraint",
                "demographic_parity",
                choices=tuple(CONSTRAINTS),
                label="Fairness constraint",
                help="Fairness constraint of the reduction.",
            ),
            Knob(
                "eps",
                0.02,
                0.001,
                0.5,
                None,
                log=True,
                label="Constraint bound ε",
                help="Constraint bound ε (difference bound and EG tolerance).",
            ),
            Knob(
                "max_iter",
                50,
                5,
                200,
                5,
                integer=True,
                label="Iterations T",
                demo_high=50,
                help="EG iterations.",
            ),
            C_KNOB,
        ),
        fairness_metric="dp_diff",
        performance_metric="error",
        run_function=_run,
        evidence=Evidence(learner=logistic_from_knob("C")),
        description="The field's standard tool: fairlearn's exponentiated-gradient reduction "
        "over logistic regressions, a randomized classifier.",
        reference="Agarwal, Beygelzimer, Dudík, Langford, Wallach, ICML 2018 (fairlearn)",
        sweep_grids={"cli": GRID, "demo": GRID},
        page=False,  # a reference: on the Compare page
    )
)
