"""One factory per exportable model type: (model, X) on small data.

Every model type in ``fairengine.models.model_types()`` must have an entry here; a test checks
that, so each new method adds its model to the round-trip and tamper tests.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from fairengine.data import Task, from_frame, load_dataset
from fairengine.methods import get_method
from fairengine.models import Model


def _german() -> tuple[Task, Task]:
    return load_dataset("german_credit").split(random_state=3)


def _run(method: str, **knobs) -> tuple[Model, pd.DataFrame]:
    train, test = _german()
    return get_method(method).run(train, test, **knobs).model, test.X


def _with_sensitive(method: str, **knobs) -> tuple[Model, pd.DataFrame]:
    """A model that reads the sensitive column at prediction time: X keeps it."""
    train, test = _german()
    model = get_method(method).run(train, test, **knobs).model
    return model, test.frame.drop(columns=[test.target])


def _fair_regression() -> tuple[Model, pd.DataFrame]:
    frame = load_dataset("law_school").frame.sample(600, random_state=0)
    train, test = from_frame(
        frame, target="ugpa_scaled", sensitive=["race"], kind="regression"
    ).split(random_state=3)
    result = get_method("fair_regression").run(
        train, test, eps=0.05, n_levels=20, base_estimator="gradient_boosting", max_iter=5
    )
    return result.model, test.X


FACTORIES: dict[str, Callable[[], tuple[Model, pd.DataFrame]]] = {
    "linear_classifier": lambda: _run("reweighing", strength=0.5),
    "randomized_classifier": lambda: _run("fairlearn_eg", eps=0.05, max_iter=15),
    "maxent": lambda: _run("maxent", n_samples=1000),
    "balanced_filter": lambda: _run("balanced_filtering", alpha=0.3, n_rounds=30),
    "fair_regression": _fair_regression,
    "noisy_groups": lambda: _run("noisy_groups", n_steps=40, noise=0.2),  # method knob: soft
    "multiaccurate_proxy": lambda: _run("multiaccurate_proxy", max_rows=300, n_iter=20, dl_iter=3),
    "group_threshold_classifier": lambda: _with_sensitive("threshold_optimizer", tol=0.05),
}


def _fair_regression_linear() -> tuple[Model, pd.DataFrame]:
    frame = load_dataset("law_school").frame.sample(400, random_state=0)
    train, test = from_frame(
        frame, target="ugpa_scaled", sensitive=["race"], kind="regression"
    ).split(random_state=3)
    result = get_method("fair_regression").run(train, test, eps=0.05, n_levels=20, max_iter=5)
    return result.model, test.X


#: Further variants whose arrays differ from the factory of their type (other proxies, stored
#: classifiers or components), so the array-level tests reach every family of arrays.
VARIANTS: dict[str, Callable[[], tuple[Model, pd.DataFrame]]] = {
    "balanced_filter/qp_dt": lambda: _run("balanced_filtering", proxy="qp_dt"),
    "balanced_filter/naive_lr": lambda: _run("balanced_filtering", proxy="naive_lr"),
    "maxent/gnb": lambda: _run("maxent", n_samples=1000, classifier="gnb"),
    "multiaccurate_proxy/tree": lambda: _run(
        "multiaccurate_proxy", proxy="multiaccurate_tree", max_rows=300, n_iter=10, dl_iter=3
    ),
    "fair_regression/linear": _fair_regression_linear,
}
