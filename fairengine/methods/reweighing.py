"""Reference method: Kamiran-Calders reweighing, with a strength knob.

Kamiran & Calders, "Data preprocessing techniques for classification without discrimination",
KAIS 2012: weight each (group, label) cell by P(g) P(y) / P(g, y), so that group and label are
independent under the weights, then fit a logistic regression with those weights.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from fairengine.methods._knobs import C_KNOB
from fairengine.methods.base import Knob, Method, RunResult
from fairengine.methods.evidence import Evidence
from fairengine.methods.evidence_fits import logistic_from_knob
from fairengine.methods.registry import register

if TYPE_CHECKING:  # the learner (scikit-learn) loads on a run, not for a cached sweep
    from fairengine.data import Task


def reweighing_weights(groups: np.ndarray, y: np.ndarray, strength: float = 1.0) -> np.ndarray:
    """Per-row weights (1 - s) + s P(g) P(y) / P(g, y), normalised to mean 1.

    ``strength`` s = 0 gives unit weights (the unconstrained model), s = 1 Kamiran-Calders.
    """
    groups = np.asarray(groups, dtype=np.int64)
    y = np.asarray(y, dtype=np.int64)
    n = len(y)
    cell = groups * 2 + y
    p_cell = np.bincount(cell, minlength=2 * (groups.max() + 1)) / n
    p_group = np.bincount(groups) / n
    p_label = np.bincount(y, minlength=2) / n
    kc = p_group[groups] * p_label[y] / p_cell[cell]
    weights = (1.0 - strength) + strength * kc
    return weights / weights.mean()


def _run(train: Task, test: Task, *, strength: float, C: float) -> RunResult:
    from fairengine.methods._linear import encode_train, logistic_regression
    from fairengine.models import LinearClassifier

    start = time.perf_counter()
    encoder, Z = encode_train(train)
    weights = reweighing_weights(train.groups, train.y, strength)
    estimator = logistic_regression(C).fit(Z, train.y, sample_weight=weights)
    model = LinearClassifier.from_sklearn(encoder, estimator)
    return RunResult(
        method="reweighing",
        knobs={"strength": strength, "C": C},
        metrics={"train": {}, "test": {}},  # filled by the shared evaluation (Method.run)
        model=model,
        # the fitted matrix, scored by the shared evaluation instead of encoding train again
        artifacts={"weights_by_cell": _cell_table(train, weights), "encoded_inputs": {"train": Z}},
        elapsed=time.perf_counter() - start,
    )


def _cell_table(task: Task, weights: np.ndarray) -> dict[str, list]:
    rows = {"group": [], "label": [], "weight": []}
    for g, name in enumerate(task.group_names):
        for label in (0, 1):
            mask = (task.groups == g) & (task.y == label)
            if mask.any():
                rows["group"].append(name)
                rows["label"].append(label)
                rows["weight"].append(float(weights[mask][0]))
    return rows


#: The sweep of ``fairengine sweep`` and of the hosted demo (one grid).
GRID = {"strength": tuple(round(0.1 * i, 1) for i in range(11))}

REWEIGHING = register(
    Method(
        name="reweighing",
        version="2",  # 2: baseline comparisons by paired tests on the test rows
        title="Reweighing (Kamiran-Calders)",
        seed=None,
        kinds=("classification",),
        knobs=(
            Knob(
                "strength",
                1.0,
                0.0,
                1.0,
                0.05,
                label="Reweighing strength",
                help="0: unit weights (unconstrained); 1: Kamiran-Calders weights.",
            ),
            C_KNOB,
        ),
        fairness_metric="dp_diff",
        performance_metric="error",
        run_function=_run,
        evidence=Evidence(learner=logistic_from_knob("C")),
        description="Pre-processing reference: reweigh (group, label) cells so that group and "
        "label are independent, then fit a logistic regression.",
        reference="Kamiran & Calders, KAIS 2012",
        sweep_grids={"cli": GRID, "demo": GRID},
        page=False,  # a reference: on the Compare page
    )
)
