"""The ``fair_regression`` Method: ``run`` = fit Q, score it and the baselines.

Every metric is an exact expectation over Q from the per-predictor values, never from one
sampled or the averaged prediction: ``scaled_loss``, ``sp_ks`` (from the mixture CDF) and
``scaled_max_group_loss`` on targets scaled to [0, 1]; the shared evaluation adds ``loss`` and
``max_group_loss`` in the target's units.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine import metrics
from fairengine.lru import LRU
from fairengine.methods.base import RANDOMIZED_PREDICTIONS, KnobError, Method, RunResult
from fairengine.methods.fair_regression.checks import EVIDENCE
from fairengine.methods.fair_regression.knobs import KNOBS
from fairengine.methods.registry import register

if TYPE_CHECKING:  # for annotations: the algorithm loads on a run
    import pandas as pd

    from fairengine.data import Task
    from fairengine.data.encoding import FeatureEncoder
    from fairengine.methods.fair_regression.baselines import SEO
    from fairengine.methods.fair_regression.estimator import FairRegressor

#: The CS oracle's LP has n·N rows; the paper ran it on ≤ 2,000 examples only.
CS_MAX_ROWS = 2000
SEED = 0
#: Baseline rows per (train, test, loss, learner): independent of ε, N and T (see _baselines).
_BASELINES: LRU[tuple[list[dict], list[dict]]] = LRU(16)

#: ε grid of the frontier over ε of the page and of ``fairengine sweep`` (log-spaced).
EPS_GRID = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 1.0)
#: The sweep over ε (the other knobs fixed).
EPS_SWEEP = {"eps": EPS_GRID}


def _run(train: Task, test: Task, **knobs: Any) -> RunResult:
    """Fit Q with the validated ``knobs``, score it and the baselines on train and test."""
    import pandas as pd

    from fairengine.methods.fair_regression.model import FairRegressionModel

    loss, base_estimator = knobs["loss_function"], knobs["base_estimator"]
    if knobs["oracle"] == "cs" and (
        base_estimator != "linear" or train.frame.shape[0] > CS_MAX_ROWS
    ):
        raise KnobError(
            f"The cost-sensitive oracle (cs) solves an LP with n·N rows; it is linear only and "
            f"limited to {CS_MAX_ROWS:,} training rows. Use the LS or LR oracle."
        )
    start = time.perf_counter()
    encoder, z_train, regressor = _fit(train, knobs)
    elapsed = time.perf_counter() - start
    # the baselines' fits need the training rows only: before z_test exists
    fitted = _fit_baselines(regressor, z_train, train, test, loss, base_estimator)
    z_test = encoder.transform(test.X)  # after the fits: not alive during their peaks
    names = [str(g) for g in train.group_names]
    splits = {"train": (z_train, train), "test": (z_test, test)}
    scores, cdfs, ks, group_rows = _split_tables(regressor, splits, names)
    baseline_rows, baseline_groups = _baselines(
        regressor, splits, loss, base_estimator, names, fitted
    )
    game = regressor.game_
    summary = {
        "status": regressor.status_,
        "message": regressor.message_,
        "gap": game.gap,
        "nu": game.nu,
        "bound": game.bound,
        "n_iter": game.n_iter,
        "n_oracle_calls": game.n_oracle_calls,
        "support": len(regressor.weights_),
        "violation": regressor.violation_,
        "y_min": regressor.y_min_,
        "y_max": regressor.y_max_,
    }
    artifacts: dict[str, Any] = {
        "group_cdfs": cdfs,
        "ks": ks,
        "group_losses": pd.DataFrame(group_rows + baseline_groups),
        "baselines": pd.DataFrame(baseline_rows),
        "gaps": np.asarray(game.gaps),
        # the fit's matrices, scored by the shared evaluation (then dropped from the result)
        "encoded_inputs": {"train": z_train, "test": z_test},
        "weights": regressor.weights_,
        "summary": summary,
    }
    model = FairRegressionModel(encoder, regressor)
    knobs = {knob.name: knobs[knob.name] for knob in KNOBS}
    return RunResult("fair_regression", knobs, scores, model, artifacts, elapsed)


def _fit(train: Task, knobs: dict[str, Any]) -> tuple[FeatureEncoder, np.ndarray, FairRegressor]:
    """The encoder, the encoded training rows and Q fitted on them."""
    from fairengine.data.encoding import FeatureEncoder
    from fairengine.methods.fair_regression.estimator import FairRegressor

    encoder = FeatureEncoder().fit(train.X)
    z_train = encoder.transform(train.X)
    regressor = FairRegressor(
        constraint=knobs["constraint"],
        eps=knobs["eps"],
        loss=knobs["loss_function"],
        n_levels=knobs["n_levels"],
        oracle=knobs["oracle"],
        base_estimator=knobs["base_estimator"],
        max_iter=knobs["max_iter"],
        random_state=SEED,
    ).fit(z_train, train.y, train.groups)
    return encoder, z_train, regressor


def _split_tables(
    regressor: FairRegressor, splits: dict[str, tuple[np.ndarray, Task]], names: list[str]
) -> tuple[dict[str, dict[str, float]], pd.DataFrame, dict[str, Any], list[dict]]:
    """Q's metrics per split, its group CDFs, its KS points and its per-group loss rows."""
    import pandas as pd

    n_groups = len(names)
    scores, group_rows, cdfs, ks = {}, [], [], {}
    for split, (z, task) in splits.items():
        target = np.clip(regressor.scale(task.y), 0.0, 1.0)
        values, q = regressor.component_predictions(z), regressor.weights_
        ks_value = regressor.ks_disparity(z, task.groups)
        scores[split], group = scaled_metrics(
            values, q, target, task.groups, regressor.loss, n_groups, ks_value
        )
        table, ks[split] = cdf_table(regressor, z, task.groups, names)
        cdfs.append(table.assign(split=split))
        group_rows += [
            {"split": split, "model": "fair", "group": names[a], "loss": group[a]}
            for a in range(n_groups)
        ]
    return scores, pd.concat(cdfs, ignore_index=True), ks, group_rows


def _baseline_key(train: Task, test: Task, loss: str, base_estimator: Any) -> tuple | None:
    """The LRU key of a task's baselines; None for an estimator object (no stable key)."""
    if not isinstance(base_estimator, str):
        return None
    return (train.fingerprint, test.fingerprint, loss, base_estimator)


def _fit_baselines(
    regressor: FairRegressor,
    z_train: np.ndarray,
    train: Task,
    test: Task,
    loss: str,
    base_estimator: Any,
) -> tuple[Any, SEO | None] | None:
    """The unconstrained fit and SEO on the training rows, or None when the task's baseline
    rows are cached already."""
    from fairengine.methods.fair_regression.baselines import SEO, unconstrained

    if _baseline_key(train, test, loss, base_estimator) in _BASELINES:
        return None
    y_train = np.clip(regressor.scale(train.y), 0, 1)
    base = unconstrained(z_train, y_train, train.groups, loss=loss, base=base_estimator)
    seo = SEO().fit(z_train, y_train, train.groups) if loss == "square" else None
    return base, seo


def _baselines(
    regressor: FairRegressor,
    splits: dict[str, tuple[np.ndarray, Task]],
    loss: str,
    base_estimator: Any,
    names: list[str],
    fitted: tuple[Any, SEO | None] | None = None,
) -> tuple[list[dict], list[dict]]:
    """Rows (baseline metrics, baseline group losses) of the unconstrained fit and SEO
    (``fitted`` by :func:`_fit_baselines`, or fitted here).

    They depend on the data, the loss and the learner only, not on ε, N or T, so a sweep
    computes them once per task (an LRU of small tables). Only string learners are
    cached (an estimator object has no stable key)."""
    train, test = splits["train"][1], splits["test"][1]
    key = _baseline_key(train, test, loss, base_estimator)
    cacheable = key is not None
    if cacheable and key in _BASELINES:
        rows, groups = _BASELINES.get(key)
        return [dict(r) for r in rows], [dict(g) for g in groups]
    n_groups = len(names)
    if fitted is None:
        fitted = _fit_baselines(regressor, splits["train"][0], train, test, loss, base_estimator)
    base, seo = fitted  # type: ignore[misc]
    rows, groups = [], []
    for split, (z, task) in splits.items():
        y = np.clip(regressor.scale(task.y), 0, 1)
        preds = {"unconstrained": base.predict(z)}
        if seo is not None:
            preds["seo"] = seo.predict(z, task.groups)
        for name, pred in preds.items():
            ks_value = metrics.sp_ks(None, pred, task.groups)
            values, group = scaled_metrics(
                pred[:, None], np.ones(1), y, task.groups, loss, n_groups, ks_value
            )
            rows.append({"baseline": name, "split": split, **values})
            groups += [
                {"split": split, "model": name, "group": names[a], "loss": group[a]}
                for a in range(n_groups)
            ]
    if cacheable:
        _BASELINES.put(key, ([dict(r) for r in rows], [dict(g) for g in groups]))
    return rows, groups


#: Thresholds kept in the plotted CDF table (a BGL or unbinned mixture has one
#: threshold per distinct prediction, i.e. per row; the KS point itself is always kept).
MAX_CDF_POINTS = 500


def scaled_metrics(
    values: np.ndarray,
    q: np.ndarray,
    y: np.ndarray,
    codes: np.ndarray,
    loss: str,
    n_groups: int,
    sp_ks: float,
) -> tuple[dict[str, float], np.ndarray]:
    """``scaled_loss``, ``sp_ks``, ``scaled_max_group_loss`` of the mixture ``q`` over the
    predictors' ``values`` (n, T) on one split (the method's own metrics, on the [0, 1]-scaled
    target ``y``; the shared evaluation adds ``loss`` / ``max_group_loss`` in the target's
    units), and the group losses; ``sp_ks`` is computed by the caller (exact for Q)."""
    group = metrics.scaled_group_losses(values, q, y, codes, loss, n_groups)
    return {
        "scaled_loss": metrics.scaled_loss(values, q, y, codes, loss),
        "sp_ks": sp_ks,
        "scaled_max_group_loss": metrics.scaled_max_group_loss(group, codes),
    }, group


def cdf_table(
    regressor: FairRegressor, Z: np.ndarray, codes: np.ndarray, names: list[str]
) -> tuple[pd.DataFrame, dict[str, object]]:
    """Long table (group, threshold, cdf) of the exact mixture CDFs with an ``overall`` row per
    threshold, and where the KS gap is attained (group, threshold, gap).

    The KS point is computed on every distinct threshold; the table (for the chart only) keeps
    at most :data:`MAX_CDF_POINTS` of them, evenly spread in rank plus the KS point, so a
    result stays small however many rows a split has."""
    import pandas as pd

    t, group_cdf, overall = regressor.group_cdfs(Z, codes)
    diff = np.abs(group_cdf - overall)
    a, j = np.unravel_index(int(np.argmax(diff)), diff.shape)
    shown = _thin(len(t), int(j))
    frames = [
        pd.DataFrame({"group": name, "threshold": t[shown], "cdf": group_cdf[g][shown]})
        for g, name in enumerate(names)
        if g < len(group_cdf)
    ]
    frames.append(pd.DataFrame({"group": "overall", "threshold": t[shown], "cdf": overall[shown]}))
    ks = {
        "group": names[a],
        "threshold": float(t[j]),
        "gap": float(diff[a, j]),
        "group_cdf": float(group_cdf[a, j]),
        "overall_cdf": float(overall[j]),
    }
    return pd.concat(frames, ignore_index=True), ks


def _thin(n: int, keep: int) -> np.ndarray:
    """At most :data:`MAX_CDF_POINTS` threshold positions of ``n``, evenly spread, with ``keep``."""
    if n <= MAX_CDF_POINTS:
        return np.arange(n)
    spread = np.linspace(0, n - 1, MAX_CDF_POINTS - 1).round().astype(int)
    return np.union1d(spread, [keep])


FAIR_REGRESSION = register(
    Method(
        name="fair_regression",
        title="Fair regression",
        seed="002",
        kinds=("regression",),
        knobs=KNOBS,
        fairness_metric="sp_ks",
        performance_metric="loss",
        run_function=_run,
        description="In-processing: a randomized regressor from exponentiated gradient over "
        "Lagrange multipliers, each round one call to an ordinary regression learner, under "
        "statistical parity of the prediction CDFs or bounded group loss.",
        reference="Agarwal, Dudík & Wu, ICML 2019",
        paper="Fair Regression: Quantitative Definitions and Reduction-based Algorithms",
        model_types={"fair_regression": "fairengine.methods.fair_regression.model"},
        version="5",  # 5: held-out disparity against ε plus the KS null quantile; paired checks
        requirements=(RANDOMIZED_PREDICTIONS,),
        sweep_grids={
            "page": EPS_SWEEP,
            "cli": EPS_SWEEP,
            "demo": {"eps": (0.01, 0.02, 0.04, 0.08, 0.15, 1.0), "n_levels": (20,)},
        },
        demo_tasks=(("law_school", None),),
        evidence=EVIDENCE,
        main_knob="eps",
        demo_knob="eps",
    )
)
