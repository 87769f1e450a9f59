"""The ``noisy_groups`` Method: add group noise, fit one approach, score true and noisy groups.

Train and test groups are both flipped at rate ``noise`` (the paper's generator); a random 20% of
the training rows serves as the auxiliary sample with true and noisy groups (noise model, safe γ).
Metrics (train and test): ``error``, ``noisy_violation`` (on Ĝ) and ``true_violation`` (on G), both
the max one-sided rate-constraint violation including the slack α (paper App. F.1).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from fairengine import metrics
from fairengine.data import Task
from fairengine.data.encoding import FeatureEncoder
from fairengine.methods.base import Knob, Method, RunResult
from fairengine.methods.noisy_groups.estimator import METHODS, RobustFairClassifier
from fairengine.methods.noisy_groups.model import RobustFairModel
from fairengine.methods.noisy_groups.noise import add_group_noise
from fairengine.methods.noisy_groups.rates import CONSTRAINTS
from fairengine.methods.registry import register

AUX_FRACTION = 0.2
#: Above this many training rows DRO updates p̃ every 10 steps (exact projection costs O(n)).
DRO_FULL_ROWS = 5000

KNOBS = (
    Knob("method", "soft", choices=METHODS, help="naive (constraints on Ĝ), DRO (TV ball, "
         "Algorithm 2), soft group assignments (Algorithm 4) or unconstrained."),
    Knob("constraint", "tpr", choices=CONSTRAINTS, help="Equality of opportunity (tpr), "
         "equalized odds (eo) or demographic parity (dp); one-sided, with slack α."),
    Knob("noise", 0.3, 0.0, 0.9, 0.05, help="Fraction of rows whose group is flipped to another "
         "group uniformly at random (Sec. 7)."),
    Knob("slack", 0.05, 0.0, 0.5, 0.01, help="α — allowed rate gap (0.05 on Adult)."),
    Knob("gamma", 0.0, 0.0, 1.0, 0.01, help="γ — DRO TV radius; 0 = the safe radius "
         "max(P(Ĝ≠j|G=j), P(G≠j|Ĝ=j)) estimated from the auxiliary sample."),
    Knob("n_steps", 200, 10, 2000, 10, integer=True, help="T — full-batch gradient steps "
         "(the paper: 750)."),
    Knob("learning_rate", 0.05, 1e-3, 1.0, None, log=True, help="η_θ (Adam) and η_p̃."),
    Knob("random_state", 0, 0, 10_000, 1, integer=True, help="Seed of the noise and the "
         "auxiliary sample."),
)  # fmt: skip


def _run(
    train: Task,
    test: Task,
    *,
    method: str,
    constraint: str,
    noise: float,
    slack: float,
    gamma: float,
    n_steps: int,
    learning_rate: float,
    random_state: int,
) -> RunResult:
    start = time.perf_counter()
    encoder = FeatureEncoder().fit(train.X)
    z_train, z_test = encoder.transform(train.X), encoder.transform(test.X)
    noisy_train = add_group_noise(train.groups, noise, random_state)
    noisy_test = add_group_noise(test.groups, noise, random_state + 1)
    rng = np.random.default_rng(random_state)
    aux = rng.choice(len(train.y), size=max(1, int(AUX_FRACTION * len(train.y))), replace=False)
    with threadpool_limits(limits=1, user_api="blas"):
        clf = RobustFairClassifier(
            method=method,
            constraint=constraint,
            slack=slack,
            gamma=gamma if gamma > 0 else None,
            n_steps=n_steps,
            learning_rate=learning_rate,
            random_state=random_state,
            adversary_every=1 if len(train.y) <= DRO_FULL_ROWS else 10,
        )
        clf.fit(
            z_train, train.y, noisy_train, aux_true=train.groups[aux], aux_noisy=noisy_train[aux]
        )
    elapsed = time.perf_counter() - start
    knobs = {
        "method": method,
        "constraint": constraint,
        "noise": noise,
        "slack": slack,
        "gamma": gamma,
        "n_steps": n_steps,
        "learning_rate": learning_rate,
        "random_state": random_state,
    }
    model = RobustFairModel(encoder, clf.coef_, clf.intercept_, knobs)
    options = {"constraint": constraint, "slack": slack}
    result_metrics, rows = {}, []
    names = [str(g) for g in train.group_names]
    for split, z, task, noisy in (
        ("train", z_train, train, noisy_train),
        ("test", z_test, test, noisy_test),
    ):
        pred = clf.predict(z)
        result_metrics[split] = {
            "error": metrics.error(task.y, pred),
            "noisy_violation": metrics.noisy_violation(task.y, pred, noisy, **options),
            "true_violation": metrics.true_violation(task.y, pred, task.groups, **options),
        }
        for j, name in enumerate(names):
            for label, g in (("true", task.groups), ("noisy", noisy)):
                mask = g == j
                pos = mask & (task.y == 1)
                rows.append(
                    {
                        "split": split,
                        "groups": label,
                        "group": name,
                        "size": int(mask.sum()),
                        "tpr": float(pred[pos].mean()) if pos.any() else float("nan"),
                        "ppr": float(pred[mask].mean()) if mask.any() else float("nan"),
                    }
                )
    nm = clf.noise_model_
    artifacts: dict[str, Any] = {
        "group_rates": pd.DataFrame(rows),
        "noise_model": nm.M if nm is not None else None,
        "gamma_safe": nm.gamma_safe if nm is not None else None,
        "gamma_paper": nm.gamma_paper if nm is not None else None,
        "gamma_used": getattr(clf, "gamma_", None),
        "candidate_errors": clf.candidate_errors_,
        "candidate_violations": clf.candidate_violations_.max(axis=1),
        "best_index": clf.best_index_,
    }
    return RunResult("noisy_groups", knobs, result_metrics, model, artifacts, elapsed)


NOISY_GROUPS = register(
    Method(
        name="noisy_groups",
        title="Noisy protected groups",
        seed="003",
        kinds=("classification",),
        knobs=KNOBS,
        fairness_metric="true_violation",
        performance_metric="error",
        run_function=_run,
        description="In-processing: a linear classifier trained by gradient descent–ascent "
        "under rate constraints on noisy group labels — naive, distributionally robust (TV "
        "ball) or soft group assignments — scored on the true groups.",
        reference="Wang, Guo, Narasimhan, Cotter, Gupta & Jordan, NeurIPS 2020",
        demo_grid={"noise": (0.1, 0.3), "method": METHODS},
        demo_tasks=(("adult", ("race",)),),
    )
)
