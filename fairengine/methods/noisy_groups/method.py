"""The ``noisy_groups`` Method: add group noise, fit one approach, score true and noisy groups.

Train and test groups are both flipped at rate ``noise`` (the paper's generator); a random 20% of
the fitting rows serves as the auxiliary sample with true and noisy groups (noise model, γ).
Metrics per split: ``noisy_violation`` (on Ĝ), ``true_violation`` (on G) and ``robust_violation``
(the exact worst case over the noise model, a certificate), each the largest one-sided
rate-constraint value minus the slack α (paper App. F.1). Soft assignments choose their best
iterate on 25% of the training rows held out (noisy groups only; ``selection="auto"``), the other
approaches on the training rows. Why each default is what it is: "Design notes" in
docs/methods/noisy_groups.md.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine import metrics
from fairengine.methods.base import Method, RunResult
from fairengine.methods.noisy_groups.checks import EVIDENCE, guarantee
from fairengine.methods.noisy_groups.knobs import (
    BETA_GRID,
    KNOBS,
    METRICS,
    PAPER_PROTOCOL,
    SWEEP_GRIDS,
    VALIDATION_FRACTION,
)
from fairengine.methods.noisy_groups.noise import add_group_noise, estimate_noise
from fairengine.methods.noisy_groups.report import (
    empirical_tvs,
    group_rates,
    noise_se,
    status_message,
    theorem1_table,
    trivial_message,
    tuning_table,
)
from fairengine.methods.registry import register
from fairengine.metrics.noisy_groups import constraint_list

if TYPE_CHECKING:  # for annotations: the algorithm loads on a run
    import pandas as pd

    from fairengine.data import Task
    from fairengine.methods.noisy_groups.estimator import RobustFairClassifier

AUX_FRACTION = 0.2
#: The paper code's ``constraints_slack`` per approach (beta_rule="code").
CODE_BETA = {"naive": 1.0, "dro": 1.0, "soft": 0.0, "unconstrained": 0.0}
#: Column of the noisy group when it is a feature (``group_feature="noisy"``).
NOISY_COLUMN = "noisy_group"


def noisy_group_columns(encoder: Any, column: str | None) -> list[int] | None:
    """The encoded columns of the feature ``column`` (the noisy group's one-hot block); None
    when the noisy group is no feature (``column`` None)."""
    names = [str(c) for c in encoder.get_feature_names_out()]
    return (
        None if column is None else [i for i, c in enumerate(names) if c.startswith(f"{column}=")]
    )


def with_noisy_group(X: pd.DataFrame, group_names: Any, noisy: Any) -> pd.DataFrame:
    """``X`` (a DataFrame) with the noisy group as the feature column :data:`NOISY_COLUMN`
    (each row's group name, from codes ``noisy`` 0..m-1 into ``group_names``)."""
    names = np.asarray([str(g) for g in group_names], dtype=object)
    return X.assign(**{NOISY_COLUMN: names[np.asarray(noisy)]})


#: Above this many training rows DRO updates p̃ every 10 steps (exact projection costs O(n)).
DRO_FULL_ROWS = 5000
#: Approaches whose ``selection="auto"`` holds rows out for the best iterate.
HELD_OUT_METHODS = ("soft",)
#: ``selection="auto"`` holds rows out only if, in the held-out share, every noisy group has at
#: least this many rows of each constrained rate's base (positives for TPR, negatives for FPR):
#: a rate over 100 rows has a standard error of at most 0.05 (= 0.5/√100, the paper's α on Adult).
MIN_HELD_OUT_BASE = 100


def held_out_base(y, noisy, constraint: str, n_groups: int) -> float:
    """Expected smallest count, over noisy groups and the constraint's rates, of base rows in a
    :data:`VALIDATION_FRACTION` share of the rows (``y`` 0/1, ``noisy`` codes 0..n_groups-1)."""
    y, noisy = np.asarray(y, dtype=float), np.asarray(noisy, dtype=np.int64)
    counts = [
        float(np.bincount(noisy, weights=metrics.rate_base(kind, y), minlength=n_groups)[j])
        for kind, j in constraint_list(constraint, n_groups)
    ]
    return VALIDATION_FRACTION * min(counts) if counts else 0.0


def resolve_selection(selection: str, method: str, held_out_rows: float = float("inf")) -> str:
    """The selection data of ``selection`` for ``method``: ``"auto"`` is ``"validation"`` for soft
    assignments when ``held_out_rows`` (:func:`held_out_base`) reaches
    :data:`MIN_HELD_OUT_BASE`, else ``"train"`` (and always ``"train"`` for the other approaches;
    why the floor: "Design notes" in docs/methods/noisy_groups.md)."""
    if selection == "auto":
        enough = held_out_rows >= MIN_HELD_OUT_BASE
        return "validation" if method in HELD_OUT_METHODS and enough else "train"
    return selection


def _fit_beta(
    make, fit, beta: float, beta_rule: str, method: str = "naive"
) -> tuple[RobustFairClassifier, float]:
    """Fit at a fixed β or choose β by ``beta_rule`` (see the module docstring)."""
    from fairengine.methods.noisy_groups.estimator import select_best

    if beta_rule in ("fixed", "code"):
        b = CODE_BETA[method] if beta_rule == "code" else beta
        return fit(make(b)), b
    fits = []
    for b in BETA_GRID:
        clf = fit(make(b))
        fits.append((clf, b))
        if beta_rule == "paper_relaxed" and clf.candidate_relaxed_[clf.best_index_] <= 1e-12:
            return clf, b
    if beta_rule == "paper_relaxed":  # none met the relaxed constraints: the largest β
        return fits[-1]
    objective, viol = [], []
    for clf, _ in fits:
        on_val = clf.validation_errors_ is not None
        errors = clf.validation_errors_ if on_val else clf.candidate_errors_
        objective.append(errors[clf.best_index_])
        viol.append(np.max(clf.candidate_violations_[clf.best_index_]))
    return fits[select_best(objective, np.asarray(viol)[:, None])]


#: The learning-rate knobs, in the order of a setting of the tuning grid (``tuning.SOFT_GRID``).
RATE_KNOBS = ("learning_rate", "lambda_learning_rate", "adversary_learning_rate")


@dataclass
class _Prepared:
    """One run's data after the noise and the row split: what every fit and the scoring read."""

    names: np.ndarray
    noisy_train: np.ndarray
    noisy_test: np.ndarray
    x_train: pd.DataFrame
    x_test: pd.DataFrame
    encoder: Any
    group_column: str | None
    fit_rows: np.ndarray
    val_rows: np.ndarray | None
    held_out: bool
    selection_used: str
    aux: np.ndarray
    aux_model: Any
    z_fit: Any = None
    z_val: Any = None
    eval_set: tuple | None = None


def _tuned(knobs: Mapping[str, Any]) -> bool:
    """Whether the run fits the paper's learning-rate grid (soft assignments only)."""
    return knobs["tuning"] == "grid" and knobs["method"] == "soft"


def _prepare(train: Task, test: Task, knobs: Mapping[str, Any]) -> _Prepared:
    """Noisy groups on both splits, the encoded features, the row split and the noise model."""
    from fairengine.data.encoding import FeatureEncoder

    seed_ = knobs["random_state"]
    names = np.asarray([str(g) for g in train.group_names], dtype=object)
    noisy_train = add_group_noise(train.groups, knobs["noise"], seed_)
    noisy_test = add_group_noise(test.groups, knobs["noise"], seed_ + 1)
    x_train, x_test = train.X, test.X
    if knobs["group_feature"] == "noisy":
        x_train = with_noisy_group(x_train, names, noisy_train)
        x_test = with_noisy_group(x_test, names, noisy_test)
    encoder = FeatureEncoder().fit(x_train)
    # the row split: its own stream (with the noise generator's seed, choice() would draw exactly
    # the flipped rows); fitting rows, held-out rows (or None), the auxiliary sample's rows
    rng = np.random.default_rng((int(seed_), 3))
    n = len(train.y)
    fit_rows, val_rows = np.arange(n), None
    base_rows = held_out_base(train.y, noisy_train, knobs["constraint"], train.n_groups)
    selection_used = resolve_selection(knobs["selection"], knobs["method"], base_rows)
    if selection_used == "validation" or _tuned(knobs):
        from fairengine.data.split import held_out_rows  # pandas: loaded on a run only

        fit_rows, val_rows = held_out_rows(n, VALIDATION_FRACTION, rng)
    aux = rng.choice(fit_rows, size=max(1, int(AUX_FRACTION * len(fit_rows))), replace=False)
    prep = _Prepared(
        names,
        noisy_train,
        noisy_test,
        x_train,
        x_test,
        encoder,
        NOISY_COLUMN if knobs["group_feature"] == "noisy" else None,
        fit_rows,
        val_rows,
        selection_used == "validation",
        selection_used,
        aux,
        estimate_noise(train.groups[aux], noisy_train[aux], len(names)),  # codes 0..m-1
    )
    z_train = encoder.transform(x_train)  # z_test after the fit: not alive at its peak
    prep.z_fit = z_train
    if val_rows is not None:  # split once and drop the full matrix (re-encoded after the fits)
        prep.z_fit, prep.z_val = z_train[fit_rows], z_train[val_rows]
        if prep.held_out:
            prep.eval_set = (prep.z_val, train.y[val_rows], noisy_train[val_rows])
    return prep


def _estimator(
    prep: _Prepared, knobs: Mapping[str, Any], beta: float, rates: tuple | None = None
) -> RobustFairClassifier:
    """The estimator of one fit at β ``beta`` and learning rates ``rates`` (None: the knobs')."""
    from fairengine.methods.noisy_groups.estimator import RobustFairClassifier

    rates = rates or tuple(knobs[k] for k in RATE_KNOBS)
    gamma = knobs["gamma"]
    if gamma <= 0:  # None = the safe radius
        gamma = prep.aux_model.gamma_paper if knobs["gamma_rule"] == "paper" else None
    return RobustFairClassifier(
        method=knobs["method"],
        constraint=knobs["constraint"],
        slack=knobs["slack"],
        gamma=gamma,
        n_steps=knobs["n_steps"],
        learning_rate=rates[0],
        random_state=knobs["random_state"],
        adversary_every=1 if len(prep.fit_rows) <= DRO_FULL_ROWS else 10,
        robust_eval=knobs["robust_eval"],
        adversary=knobs["adversary"],
        beta=beta,
        lambda_learning_rate=rates[1],
        adversary_learning_rate=rates[2],
        # the paper's grid protocol keeps the paper code's λ rule (on the relaxed constraints);
        # picking a setting by the exact check on top of the exact-check λ rule kept
        # near-trivial classifiers (an error just below that of predicting all negatives)
        lambda_signal="relaxed" if _tuned(knobs) else "auto",
    )


@dataclass
class _Fitted:
    """The chosen fit, its β and, with the paper's grid, what the grid chose."""

    clf: RobustFairClassifier
    beta_used: float
    tuning: pd.DataFrame | None = None
    tuned_setting: tuple | None = None
    tuning_status: str | None = None


def _fit_all(train: Task, prep: _Prepared, knobs: Mapping[str, Any]) -> _Fitted:
    """Every fit the knobs ask for (β rule, learning-rate grid) and the chosen one."""
    from fairengine.methods.noisy_groups.tuning import SOFT_GRID, choose

    def fit(clf: RobustFairClassifier) -> RobustFairClassifier:
        return clf.fit(
            prep.z_fit,  # every training row (no copy) or the fitting rows (copied once)
            train.y[prep.fit_rows],
            prep.noisy_train[prep.fit_rows],
            aux_true=train.groups[prep.aux],
            aux_noisy=prep.noisy_train[prep.aux],
            eval_set=prep.eval_set,
            group_columns=noisy_group_columns(prep.encoder, prep.group_column),
        )

    rule = (knobs["beta"], knobs["beta_rule"], knobs["method"])
    if not _tuned(knobs):
        return _Fitted(*_fit_beta(lambda b: _estimator(prep, knobs, b), fit, *rule))
    fits = [
        _fit_beta(lambda b, r=rates: _estimator(prep, knobs, b, r), fit, *rule)
        for rates in SOFT_GRID
    ]
    val = prep.val_rows
    res = choose(
        [f[0] for f in fits],
        SOFT_GRID,
        prep.z_val,
        train.y[val],
        prep.noisy_train[val],
        check="exact",
    )
    chosen = SOFT_GRID.index(res.setting)
    return _Fitted(*fits[chosen], tuning_table(res, chosen), res.setting, res.status)


def _run(train: Task, test: Task, **knobs: Any) -> RunResult:
    """The Method's run: ``knobs`` is the Method's validated mapping of every knob
    (:meth:`~fairengine.methods.base.Method.validate_knobs`), read as one mapping below."""
    from threadpoolctl import threadpool_limits

    from fairengine.methods.noisy_groups.model import RobustFairModel

    start = time.perf_counter()
    knobs = dict(knobs) | (PAPER_PROTOCOL if knobs["protocol"] == "paper" else {})
    prep = _prepare(train, test, knobs)
    with threadpool_limits(limits=1, user_api="blas"):
        fitted = _fit_all(train, prep, knobs)
    z_train = prep.z_fit
    if prep.val_rows is not None:
        prep.eval_set = prep.z_fit = prep.z_val = None
        z_train = prep.encoder.transform(prep.x_train)
    elapsed = time.perf_counter() - start
    clf = fitted.clf
    model = RobustFairModel(prep.encoder, clf.coef_, clf.intercept_, knobs, prep.group_column)
    z_test = prep.encoder.transform(prep.x_test)
    scored = _score(clf, knobs, prep, ((train, z_train), (test, z_test)))
    artifacts = _artifacts(clf, knobs, prep, fitted, scored, train.y)
    artifacts["empirical_tv"] = empirical_tvs(test.groups, prep.noisy_test, len(prep.names))
    artifacts["bound"] = theorem1_table(
        test.y,
        clf.predict(z_test),
        test.groups,
        prep.noisy_test,
        knobs["constraint"],
        knobs["slack"],
        prep.names,
    )
    if prep.group_column is not None:  # the shared evaluation scores the model on what it reads
        artifacts["extra_inputs"] = {
            split: {NOISY_COLUMN: x[NOISY_COLUMN].to_numpy()}
            for split, x in (("train", prep.x_train), ("test", prep.x_test))
        }
    return RunResult("noisy_groups", knobs, scored.metrics, model, artifacts, elapsed)


@dataclass
class _Scored:
    """The method's own metrics per split, the group-rate rows and the trivial-classifier note."""

    metrics: dict[str, dict[str, float]]
    rows: list[dict[str, Any]]
    trivial: str | None


def _score(clf: RobustFairClassifier, knobs: Mapping[str, Any], prep: _Prepared, splits) -> _Scored:
    """Score ``clf`` on ``splits`` ((train task, encoded rows), (test task, encoded rows))."""
    method, constraint, slack = knobs["method"], knobs["constraint"], knobs["slack"]
    options = {"constraint": constraint, "slack": slack}
    scored = _Scored({}, [], None)
    for split, (task, z), noisy in zip(
        ("train", "test"), splits, (prep.noisy_train, prep.noisy_test), strict=True
    ):
        pred = clf.predict(z)
        if split == "train":
            scored.trivial = trivial_message(method, pred, clf.classes_)
        scored.metrics[split] = {  # error & co. come from the shared evaluation (Method.run)
            "noisy_violation": metrics.noisy_violation(task.y, pred, noisy, **options),
            "true_violation": metrics.true_violation(task.y, pred, task.groups, **options),
            "robust_violation": metrics.robust_violation(
                method, task.y, pred, noisy, constraint, slack, clf.noise_model_ or prep.aux_model
            ),
        }
        for j, name in enumerate(prep.names):
            for label, g in (("true", task.groups), ("noisy", noisy)):
                mask = g == j
                scored.rows.append(
                    {"split": split, "groups": label, "group": name, "size": int(mask.sum())}
                    | group_rates(task.y, pred, mask)
                )
    return scored


def _artifacts(
    clf, knobs: Mapping[str, Any], prep: _Prepared, fitted: _Fitted, scored: _Scored, y_train
) -> dict[str, Any]:
    """The run's artifacts: noise model, candidates, selection status and tuning."""
    import pandas as pd

    nm = clf.noise_model_
    method = knobs["method"]
    rows = prep.val_rows if prep.held_out else prep.fit_rows
    artifacts: dict[str, Any] = {
        "group_rates": pd.DataFrame(scored.rows),
        "noise_model": nm.M if nm is not None else None,
        "gamma_safe": nm.gamma_safe if nm is not None else None,
        "gamma_paper": nm.gamma_paper if nm is not None else None,
        "gamma_used": getattr(clf, "gamma_", None),
        "candidate_errors": clf.candidate_errors_,
        "candidate_violations": clf.candidate_violations_.max(axis=1),
        "best_index": clf.best_index_,
        "best_step": int(clf.candidate_steps_[clf.best_index_]),
        "adversary_violation": float(np.max(clf.candidate_violations_[clf.best_index_])),
        "status": clf.selection_status_,
        "status_message": status_message(clf, knobs["robust_eval"])
        + (
            f" (selection=auto: too few rows for a held-out check — under {MIN_HELD_OUT_BASE} "
            "base rows of some noisy group in 25% of the training rows.)"
            if knobs["selection"] == "auto" and method in HELD_OUT_METHODS and not prep.held_out
            else ""
        ),
        "selection_used": prep.selection_used,  # auto resolved: "validation" or "train"
        "noise_se": noise_se(
            method,
            y_train[rows],
            prep.noisy_train[rows],
            knobs["constraint"],
            nm or prep.aux_model,
        ),
        "trivial_message": scored.trivial,  # None, or why every training row gets one class
        "tuning": fitted.tuning,
        "tuned_setting": fitted.tuned_setting,
        "beta_used": fitted.beta_used,
    }
    if fitted.tuning_status == "fallback":
        from fairengine.methods.noisy_groups.tuning import SOFT_GRID

        artifacts["status"] = "fallback"
        artifacts["status_message"] = (
            f"No learning-rate setting (of {len(SOFT_GRID)}) met the exact worst-case check on "
            "the validation rows; the least-violating one (by rank) was kept, so the "
            "constraints may not hold against every assignment consistent with the noise model. "
            + artifacts["status_message"]
        )
    return artifacts


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
        paper="Robust Optimization for Fairness with Noisy Protected Groups",
        model_types={"noisy_groups": "fairengine.methods.noisy_groups.model"},
        metrics=METRICS,
        version="12",  # what each version changed: CHANGELOG.md
        sweep_grids=SWEEP_GRIDS,
        demo_tasks=(("adult", ("race",)),),
        evidence=EVIDENCE,
        main_knob="slack",
        demo_knob="slack",
        guarantee=guarantee,
    )
)
