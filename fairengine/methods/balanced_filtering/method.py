"""The ``balanced_filtering`` Method: knobs, run, demo grid (DESIGN contract), and the proxy
tree's leaves in words (each split as a feature and a threshold in the table's units)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine.methods.balanced_filtering.checks import EVIDENCE
from fairengine.methods.balanced_filtering.knobs import KNOBS
from fairengine.methods.base import RANDOMIZED_PREDICTIONS, Method, RunResult
from fairengine.methods.registry import register

if TYPE_CHECKING:  # for annotations: the algorithm loads on a run
    import pandas as pd

    from fairengine.data import Task
    from fairengine.data.encoding import FeatureEncoder
    from fairengine.methods.balanced_filtering.estimator import BalancedFilter

#: alpha grid of the paper's protocol (App. A.1.2): 0 to 1 in steps of 0.05
ALPHA_GRID = tuple(round(0.05 * i, 2) for i in range(21))
#: eta grid of the interpolation procedure (App. A.1.1)
ETA_GRID = tuple(round(0.1 * i, 1) for i in range(11))
#: alpha grid of the page's curves and the shipped demo frontiers (every other point of
#: ALPHA_GRID: the page draws them from the store instead of computing them)
DEMO_ALPHAS = ALPHA_GRID[::2]
#: train/test splits (``task.split(random_state=s)``) of the shipped demo frontiers: the page's
#: default curves are the mean over these with 95% t-bands
DEMO_SEEDS = (0, 1, 2, 3, 4)
#: more groups than this make the matrices unreadable and the game slow
MAX_GROUPS = 20
#: The page's curves of the tree proxies over α and ``fairengine sweep``'s default (the alphas
#: of the shipped demo frontiers, so the default curves on Adult (race) are read, not computed);
#: the baselines' η grid of the page is the ``"baselines"`` grid.
ALPHA_SWEEP = {"alpha": DEMO_ALPHAS}


def check_groups(task: Task) -> None:
    """Raise :class:`~fairengine.data.DataError` unless the task has 2 to :data:`MAX_GROUPS`
    sensitive groups."""
    from fairengine.data import DataError

    n_groups = len(task.group_names)
    if not 2 <= n_groups <= MAX_GROUPS:
        raise DataError(
            f"Balanced filtering needs 2 to {MAX_GROUPS} sensitive groups, but "
            f"{', '.join(task.sensitive)} has {n_groups}. Choose another sensitive attribute on "
            "the Data page, or merge rare groups."
        )


def run_filter(train: Task, test: Task, *, target: Any = None, **knobs: Any) -> RunResult:
    """Fit a :class:`BalancedFilter` on ``train`` (features exclude z and y) and score both splits.

    ``target`` is the distribution tau over ``train.group_names`` (uniform by default).
    """
    import pandas as pd

    from fairengine.methods.balanced_filtering.estimator import BalancedFilter
    from fairengine.methods.balanced_filtering.model import task_split_metrics

    check_groups(train)
    start = time.perf_counter()
    z_train = np.asarray(train.groups, dtype=np.int64)
    estimator = BalancedFilter(**knobs, target=target)
    estimator.fit(train.X, z_train, group_names=list(train.group_names))
    elapsed = time.perf_counter() - start
    model = estimator.model_
    tau = estimator.target_
    metrics, artifacts = {}, {}
    for split, task in (("train", train), ("test", test)):
        metrics[split], tables = task_split_metrics(model, task, tau)
        for name in ("proportions_before", "proportions_after", "A", "filtered_counts", "r_hat"):
            artifacts[f"{name}_{split}"] = tables[name]
    status = dict(estimator.status_)
    empty = [split for split in ("train", "test") if not metrics[split]["acceptance_rate"] > 0]
    if empty:  # q sits on leaves no row of that split reaches: an empty filtered sample
        status["empty_splits"] = empty
        status["message"] = (
            status["message"] + f" No {' or '.join(empty)} row is accepted: ρ is positive only "
            "on leaves that split never reaches (tiny leaves fitted to the training rows), so "
            "its filtered sample is empty and its imbalance undefined (NaN). A larger smallest "
            "leaf (in rows or as a share of rows) avoids it."
        ).strip()
    artifacts.update(
        {
            "A": estimator.A_,
            "r_hat": estimator.r_hat_,
            "q": estimator.q_,
            "rho": estimator.rho_,
            "base_rates": estimator.base_rates_,
            "proportions_before": artifacts["proportions_before_train"],
            "proportions_after": artifacts["proportions_after_train"],
            "target": tau,
            "group_names": list(train.group_names),
            "leaves": leaf_table(estimator),
            "trace": pd.DataFrame(estimator.trace_),
            "status": status,
        }
    )
    return RunResult(
        method="balanced_filtering",
        knobs=dict(knobs),
        metrics=metrics,
        model=model,
        artifacts=artifacts,
        elapsed=elapsed,
    )


def leaf_table(estimator: BalancedFilter) -> pd.DataFrame:
    """One row per leaf: its rule in words (the splits' features and thresholds), its expected
    number of training rows (the soft leaf weights summed, rounded to whole rows), r_hat, q, rho."""
    import pandas as pd

    model = estimator.model_
    if model.proxy == "tree":
        rules = leaf_rules(model.arrays, model.encoder)
    else:
        rules = [f"predicted {g}" for g in estimator.group_names_]
    weights = estimator.train_leaf_weights_
    return pd.DataFrame(
        {
            "leaf": np.arange(estimator.n_leaves_),
            "rule": rules,
            "training rows (expected)": np.rint(weights.sum(axis=0)).astype(np.int64),
            "r_hat": estimator.r_hat_,
            "q": estimator.q_,
            "rho": estimator.rho_,
        }
    )


#: Features whose weight is below this share of the largest one are not counted as used.
_NEGLIGIBLE = 1e-3


def split_words(
    coefs: np.ndarray, intercepts: np.ndarray, encoder: FeatureEncoder
) -> tuple[str, str]:
    """(child 0, child 1) of one split with halfspaces ``coefs`` (T, d) and ``intercepts``."""
    coefs = np.atleast_2d(np.asarray(coefs, dtype=float))
    norms = np.linalg.norm(coefs, axis=1)
    norms = np.where(norms > 0, norms, 1.0)
    w = (coefs / norms[:, None]).mean(axis=0)
    b = float((np.asarray(intercepts, dtype=float) / norms).mean())
    c = int(np.argmax(np.abs(w)))
    if w[c] == 0:
        return "all rows", "no rows"
    used = int((np.abs(w) > _NEGLIGIBLE * abs(w[c])).sum())
    names = list(encoder.feature_names_out_)
    n_numeric = len(encoder.numeric_)
    cut = -b / w[c]  # in encoded units
    if c < n_numeric:
        raw = float(encoder.center_[c] + encoder.scale_[c] * cut)
        above, below = f"{names[c]} > {raw:.6g}", f"{names[c]} ≤ {raw:.6g}"
    else:
        column, _, value = names[c].partition("=")
        above, below = f"{column} = {value}", f"{column} ≠ {value}"
    one, zero = (above, below) if w[c] > 0 else (below, above)
    mark = ""
    if used > 1:
        mark = f" (≈ oblique split: {abs(w[c]) / np.abs(w).sum():.0%} of its weight)"
    elif len(np.unique(np.round(np.asarray(intercepts) / norms, 9))) > 1:
        mark = f" (≈, mean of {len(coefs)} thresholds)"
    return zero + mark, one + mark


def leaf_rules(arrays: dict[str, np.ndarray], encoder: FeatureEncoder) -> list[str]:
    """The path of every leaf (in leaf order) as its splits in words joined by ``and``."""
    children = np.asarray(arrays["children"]).reshape(-1, 2)
    start, count = np.asarray(arrays["start"]), np.asarray(arrays["count"])
    coefs, intercepts = np.asarray(arrays["coefs"]), np.asarray(arrays["intercepts"])
    paths: dict[int, list[str]] = {0: []}
    for v, (c0, c1) in enumerate(children):  # parents come before their children
        if c0 < 0:
            continue
        rows = slice(int(start[v]), int(start[v]) + int(count[v]))
        zero, one = split_words(coefs[rows], intercepts[rows], encoder)
        paths[int(c0)] = [*paths[v], zero]
        paths[int(c1)] = [*paths[v], one]
    leaves = [v for v, (c0, _) in enumerate(children) if c0 < 0]
    return [" and ".join(paths[v]) or "all rows" for v in leaves]


BALANCED_FILTERING = register(
    Method(
        name="balanced_filtering",
        title="Balanced filtering",
        seed="000",
        kinds=("classification", "regression"),
        knobs=KNOBS,
        fairness_metric="disclosivity",
        performance_metric="imbalance",
        run_function=run_filter,
        description="Learn a proxy for the sensitive attribute that reveals at most α about it, "
        "and per-proxy-group acceptance probabilities ρ, so that filtering unlabelled candidates "
        "yields a group-balanced sample. The label y is never used.",
        reference="Deng, Diana, Kearns & Roth, arXiv 2023",
        paper="Balanced Filtering via Non-Disclosive Proxies",
        model_types={"balanced_filter": "fairengine.methods.balanced_filtering.model"},
        version="6",  # what each version changed: CHANGELOG.md
        requirements=(RANDOMIZED_PREDICTIONS,),
        sweep_grids={
            "page": ALPHA_SWEEP,
            "cli": ALPHA_SWEEP,
            "demo": {"proxy": ("ab",), "relaxed": (False, True), "alpha": DEMO_ALPHAS},
            "baselines": {"eta": (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)},
        },
        task_checks=(check_groups,),
        demo_tasks=(("adult", ("race",)),),
        demo_seeds=DEMO_SEEDS,
        evidence=EVIDENCE,
        main_knob="alpha",
        demo_knob="alpha",
    )
)
