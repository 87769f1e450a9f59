"""``sensitive_features=`` in every estimator's ``fit``, through scikit-learn's metadata routing.

Each estimator takes the protected attribute as ``sensitive_features`` (some still accept an
older argument name as an alias; the others take it positionally after X, or X and y). With
routing enabled, ``cross_validate`` with ``GroupKFold`` gives the splitter the CV ids and each
fold's ``fit`` its rows of the protected attribute: checked on real bundled data whose CV ids
differ from the protected attribute, by refitting every fold with the true attribute under the
older name (or positionally) and comparing a fitted attribute that depends on it (and that
differs when the CV ids are taken instead).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.model_selection import GroupKFold, cross_validate

from fairengine.data import load_dataset
from fairengine.data.encoding import FeatureEncoder
from fairengine.methods import list_methods
from fairengine.methods.balanced_filtering import BalancedFilter
from fairengine.methods.fair_regression import FairRegressor
from fairengine.methods.maxent import MaxEntDebiaser
from fairengine.methods.maxent.domain import domain_from_task, readable_rows
from fairengine.methods.multiaccurate_proxy import (
    BaselineProxy,
    GeneralMultiaccurateProxy,
    MultiaccurateProxy,
)
from fairengine.methods.multiaccurate_proxy.downstream import ProxyFairClassifier
from fairengine.methods.noisy_groups import RobustFairClassifier

ROWS = 400
#: Methods that run fairlearn's or the textbook's algorithm and have no estimator of their own.
REFERENCE_METHODS = {"reweighing", "fairlearn_eg", "threshold_optimizer"}


#: A ``Case.alias`` for an estimator without an older name: the attribute is passed positionally.
POSITIONAL = "<positional>"


@dataclass(frozen=True)
class Case:
    """One estimator: how to build it, its data, its older name for the protected attribute and
    the fitted attributes that depend on that attribute."""

    method: str
    make: Callable[[], Any]
    data: str  # "classification", "regression" or "maxent"
    alias: str | None  # the older keyword (None: a column of the rows; POSITIONAL: no alias)
    fitted: tuple[str, ...]
    soft: bool = False  # the protected attribute as one-hot group weights


CASES = [
    Case("balanced_filtering", lambda: BalancedFilter(proxy="naive_dt", max_depth=3), "balanced",
         POSITIONAL, ("group_names_", "base_rates_", "rho_")),
    Case("maxent", lambda: MaxEntDebiaser(C=0.5, n_bins=3), "maxent", None,
         ("joint_", "theta_", "lambda_")),
    Case("fair_regression", lambda: FairRegressor(eps=0.1, n_levels=8, max_iter=10), "regression",
         POSITIONAL, ("group_labels_", "weights_")),
    Case("noisy_groups", lambda: RobustFairClassifier(n_steps=20), "classification",
         "noisy_groups", ("group_classes_", "coef_")),
    Case("multiaccurate_proxy", lambda: ProxyFairClassifier(max_iter=5), "classification",
         POSITIONAL, ("weights_", "coefs_"), soft=True),
    Case("multiaccurate_proxy", lambda: MultiaccurateProxy(n_iter=10), "proxy", POSITIONAL,
         ("scales_",), soft=True),
    Case("multiaccurate_proxy", lambda: GeneralMultiaccurateProxy(n_iter=5), "proxy", POSITIONAL,
         ("coef_", "trace_"), soft=True),
    Case("multiaccurate_proxy", lambda: BaselineProxy(), "proxy", POSITIONAL, ("mean_",),
         soft=True),
]  # fmt: skip
IDS = [type(c.make()).__name__ for c in CASES]


@pytest.fixture(scope="module")
def datasets() -> dict[str, dict[str, Any]]:
    """Small real samples: (X, y, protected attribute, CV ids) per kind of estimator."""
    rng = np.random.default_rng(0)
    out = {}
    for kind, name in (("classification", "german_credit"), ("regression", "communities_crime")):
        task = load_dataset(name)
        idx = np.sort(rng.choice(len(task.frame), ROWS, replace=False))
        rows = task.X.iloc[idx].reset_index(drop=True)
        X = FeatureEncoder().fit(rows).transform(rows)
        s = np.asarray(task.group_names, dtype=object)[task.groups[idx]]
        out[kind] = {"X": X, "y": np.asarray(task.y)[idx], "s": s, "rows": rows}
    german = load_dataset("german_credit")
    idx = np.sort(rng.choice(len(german.frame), ROWS, replace=False))
    domain = domain_from_task(german, n_bins=3)
    rows = readable_rows(german, domain).iloc[idx].reset_index(drop=True)
    protected = domain.features[domain.index("protected")].name
    out["maxent"] = {
        "X": rows.drop(columns=[protected]),
        "y": None,
        "s": rows[protected].to_numpy(),
        "domain": domain,
    }
    clf = out["classification"]
    out["balanced"] = {"X": clf["rows"], "y": None, "s": clf["s"]}
    out["proxy"] = {"X": clf["X"], "y": None, "s": clf["s"]}
    for data in out.values():  # CV ids that are not the protected attribute: 4 random ids
        data["ids"] = np.random.default_rng(1).integers(0, 4, ROWS)
    return out


def _attribute(case: Case, values: Any) -> Any:
    """The protected attribute as ``case``'s estimator takes it (one-hot weights if soft)."""
    if not case.soft:
        return values
    labels, codes = np.unique(np.asarray(values).astype(str), return_inverse=True)
    return np.eye(len(labels))[codes]


def _fit(case: Case, data: dict[str, Any], rows: np.ndarray, values: Any, *, old: bool) -> Any:
    """A fresh estimator fitted on ``rows`` with ``values`` as the protected attribute, passed
    under the older name (``old``) or as ``sensitive_features``."""
    est = case.make()
    X = data["X"].iloc[rows] if isinstance(data["X"], pd.DataFrame) else data["X"][rows]
    args = [X] if data["y"] is None else [X, data["y"][rows]]
    kwargs = {"domain": data["domain"]} if "domain" in data else {}
    attribute = _attribute(case, np.asarray(values)[rows])
    if not old:
        return est.fit(*args, sensitive_features=attribute, **kwargs)
    if case.alias is None:  # the protected attribute as a column of the rows
        protected = data["domain"].features[data["domain"].index("protected")].name
        return est.fit(X.assign(**{protected: attribute}), **kwargs)
    if case.alias == POSITIONAL:
        return est.fit(*args, attribute, **kwargs)
    return est.fit(*args, **{case.alias: attribute}, **kwargs)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and len(a) and not np.isscalar(a[0]):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    left, right = np.asarray(a), np.asarray(b)
    return left.shape == right.shape and bool(np.array_equal(left, right))


def _fitted(case: Case, est: Any) -> dict[str, Any]:
    return {name: getattr(est, name) for name in case.fitted}


def test_every_method_estimator_is_covered() -> None:
    """A method added to the registry with its own estimator must be added here."""
    assert {c.method for c in CASES} == set(list_methods()) - REFERENCE_METHODS


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_sensitive_features_keyword_is_the_older_name(case: Case, datasets) -> None:
    """Without routing, ``fit(..., sensitive_features=s)`` fits exactly as the older name."""
    data = datasets[case.data]
    rows = np.arange(ROWS)
    new = _fit(case, data, rows, data["s"], old=False)
    old = _fit(case, data, rows, data["s"], old=True)
    for name, value in _fitted(case, new).items():
        assert _same(value, getattr(old, name)), name


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cross_validate_routes_sensitive_features_not_cv_groups(case: Case, datasets) -> None:
    """GroupKFold's ids go to the splitter only; each fold fits on its rows of the protected
    attribute (as a refit under the older name on the same rows shows), never on the ids."""
    data = datasets[case.data]
    params = {"groups": data["ids"], "sensitive_features": _attribute(case, data["s"])}
    with sklearn.config_context(enable_metadata_routing=True):
        est = case.make()
        if "domain" in data:
            est = est.set_fit_request(domain=True)
            params["domain"] = data["domain"]
        found = cross_validate(
            est, data["X"], data["y"], cv=GroupKFold(n_splits=3), params=params,
            scoring=lambda *_: 0.0, return_estimator=True, return_indices=True,
        )  # fmt: skip
    folds = list(zip(found["estimator"], found["indices"]["train"], strict=True))
    assert len(folds) == 3
    for fold, train in folds:
        held_out = np.setdiff1d(np.arange(ROWS), train)
        assert not set(data["ids"][train]) & set(data["ids"][held_out])  # GroupKFold's split
        expected = _fit(case, data, train, data["s"], old=True)
        for name, value in _fitted(case, fold).items():
            assert _same(value, getattr(expected, name)), f"fold differs in {name}"
    fold, train = folds[0]
    try:  # the check can fail: a fit on the CV ids gives other fitted values (or no fit)
        confused = _fitted(case, _fit(case, data, train, data["ids"], old=True))
    except (ValueError, TypeError):
        return
    assert not all(_same(v, confused[k]) for k, v in _fitted(case, fold).items())


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_both_names_with_different_values_is_an_error(case: Case, datasets) -> None:
    data = datasets[case.data]
    est = case.make()
    if case.alias == POSITIONAL:  # Python itself refuses an argument given twice
        return
    if case.alias is None:
        domain = data["domain"]
        protected = domain.features[domain.index("protected")].name
        X = data["X"].assign(**{protected: data["s"]})
        other = np.roll(data["s"], 1)
        with pytest.raises(ValueError, match="twice with different values"):
            est.fit(X, domain=data["domain"], sensitive_features=other)
        return
    args = [data["X"]] if data["y"] is None else [data["X"], data["y"]]
    s = _attribute(case, data["s"])
    with pytest.raises(ValueError, match="twice with different values.*sensitive_features="):
        est.fit(*args, **{case.alias: s, "sensitive_features": s[::-1]})


def test_cv_groups_cannot_be_requested_as_the_protected_attribute() -> None:
    """The older names are not metadata: ``set_fit_request(groups=True)`` is refused, so the CV
    ids can never be routed into ``fit`` as the protected attribute."""
    with sklearn.config_context(enable_metadata_routing=True):
        routing = FairRegressor().get_metadata_routing()
        assert routing.consumes("fit", {"groups", "sensitive_features"}) == {"sensitive_features"}
        with pytest.raises(TypeError):
            FairRegressor().set_fit_request(groups=True)


def test_missing_protected_attribute_says_what_to_pass(datasets) -> None:
    data = datasets["regression"]
    with pytest.raises(TypeError, match="pass sensitive_features="):
        FairRegressor().fit(data["X"], data["y"])
