"""BalancedFilter: the scikit-learn-style estimator of Deng et al. 2023 (DESIGN contract)."""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import (
    _check_feature_names,
    _check_n_features,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)
from threadpoolctl import threadpool_limits

from fairengine.data.encoding import FeatureEncoder
from fairengine.methods.balanced_filtering import knobs as knob_spec
from fairengine.methods.balanced_filtering.definitions import base_rates as _base_rates
from fairengine.methods.balanced_filtering.definitions import (
    uniform_target,
)
from fairengine.methods.balanced_filtering.model import ProxyFilter, soft_matrix
from fairengine.methods.balanced_filtering.proxies import (
    classifier_labels,
    fit_classifier_proxy,
    interpolated_weights,
    merge_rare_labels,
    naive_rho,
)
from fairengine.methods.balanced_filtering.sampling import sampling_probabilities
from fairengine.methods.balanced_filtering.selection import select_growth
from fairengine.methods.balanced_filtering.tree import GrowthSettings, grow_tree
from fairengine.methods.params import RANDOM_STATE, knob_constraints, seed, validate_params
from fairengine.methods.sensitive import sensitive_request

#: stop reasons of :func:`~fairengine.methods.balanced_filtering.tree.grow_tree` that mean the
#: tree reached the paper's stopping rule (dist(U, C(A)) < beta_stop); every other reason is an
#: early stop the page shows as a warning
CONVERGED = ("beta_stop", "in_hull", "held_out")


def growth_status(
    trace: list[dict],
    *,
    alpha: float,
    gamma: float,
    beta_stop: float,
    selection: dict | None = None,
) -> dict:
    """``{"code", "converged", "message"}`` from the last record of a growth trace."""
    last = trace[-1]
    code = str(last.get("stop", "beta_stop"))
    if selection is not None and code == "max_leaves":
        code = "held_out"
    dist, leaves = float(last["dist"]), int(last["n_leaves"])
    head = f"The tree stopped at {leaves} leaves with dist(U, C(A)) = {dist:.3f}"
    if code == "beta_stop":
        message = f"{head} < β_stop = {beta_stop:g} (the paper's stopping rule)."
    elif code == "in_hull":
        message = f"{head}: the target is in the hull of A (exact balance in-sample)."
    elif code == "no_progress":
        rejected = float(last.get("best_rejected", math.inf))
        nearest = (
            f"the best candidate reached {rejected:.3f}"
            if math.isfinite(rejected)
            else "no candidate stayed α-disclosive above the leaf-mass floor"
        )
        message = (
            f"{head}, above β_stop = {beta_stop:g}: no split of any leaf lowered it by the factor "
            f"1 − γ (needed ≤ {float(last['required']):.3f}; {nearest}). A smaller leaf floor "
            "(min_leaf_mass, min_leaf_rows: the defaults are the paper's, no mass floor), a "
            "smaller γ or a larger α let it grow further."
        )
    elif code == "no_splittable_leaf":
        message = (
            f"{head}, above β_stop = {beta_stop:g}: every leaf is at the depth cap or smaller "
            "than twice the leaf-mass floor."
        )
    elif code == "held_out":
        message = (
            f"{head}: the generalising protocol chose {leaves} leaves of at least "
            f"{float(selection['floor']):.1%} of the rows on held-out training rows (imbalance "
            f"{float(selection['held_out_imbalance']):.3f} there); more leaves balanced those "
            "rows less. The paper's protocol (protocol = paper) grows on to β_stop."
        )
    elif code == "max_leaves":
        message = f"{head}, above β_stop = {beta_stop:g}: the leaf cap was reached."
    else:  # alpha_zero
        message = (
            f"α = {alpha:g}: no split can keep every leaf at the base rates, so the proxy has one "
            "leaf and filtering keeps the base rates (paper Fig. 3, left)."
        )
    budget = last.get("budget")
    if budget is not None and budget < alpha - 1e-9:
        message += (
            f" [EXT budget ladder] The tree grown at the smaller budget {budget:g} ended nearer U "
            f"than the one grown at α = {alpha:g}, so it is the proxy kept."
        )
    return {"code": code, "converged": code in CONVERGED, "message": message}


class BalancedFilter(BaseEstimator):
    """Balanced filtering with a non-disclosive proxy (Deng et al. 2023, Algorithms 1-4).

    Learns a proxy zhat(x) from a labelled sample (x, z) and acceptance probabilities rho per
    proxy group, so that filtering a stream of unlabelled x with rho gives a sample whose
    z-distribution is (close to) the target, while zhat discloses little about z.

    Parameters
    ----------
    alpha : float
        α — disclosivity budget (Def. 5): every leaf's |P(z=k | leaf) - P(z=k)| <= α in-sample.
    gamma : float
        γ — progress factor (Lemma 3 Remark): a split is kept only if dist <= (1 - γ) dist.
    beta_stop : float
        β_stop — stop once dist(U, C(A)) < β_stop (paper experiments: 0.1).
    max_depth : int
        Maximum tree depth (paper: height 20, pitfall P9).
    relaxed : bool
        Relaxed (α, β) proxy: Σq = 1 dropped in Algorithm 1 and in the growth loop (§3.7).
    proxy : {"ab", "qp_dt", "qp_lr", "naive_dt", "naive_lr"}
        The (α, β) tree or a baseline (§3.9).
    random_state : int, RandomState or None
        Seed of the baseline classifiers and of :meth:`filter`'s default draws
        (``check_random_state`` conventions; an int is used as is).
    eta : float
        η — interpolation of the baselines (App. A.1.1); rho is kept from η = 0 (pitfall P11).
    epsilon, n_rounds, step, lambda_max, min_leaf_mass, max_yield :
        ε (game slack), T (game rounds), η₀ (auditor step), λ_max, smallest leaf share [EXT]
        (default 0: no mass floor, as the paper), max-yield tie-break [EXT]; see
        ``knobs.KNOBS``.
    budget_step : float
        [EXT] Budget ladder: the tree is also grown at α − step, α − 2·step, … > 0 and the one
        nearest the target kept (every such tree is α-disclosive); 0 (default, paper) turns it
        off.
    min_leaf_rows : int
        Smallest leaf in rows; the floor is max(min_leaf_rows, min_leaf_mass · n) for the tree's
        leaves and the baselines' predicted groups. Default 5: the paper sets no floor; 5 rows
        keep a leaf's row of A from being a single point (our choice). ``PAPER_SETTING`` is the
        paper's setting (the defaults with ``protocol = "paper"``); ``FLOOR_SETTING`` an earlier
        fixed-floor alternative [EXT].
    axis_splits : int
        [EXT] Single-feature threshold candidates tried per leaf next to the game's split.
    protocol : {"generalising", "paper"}
        [EXT] ``"generalising"`` (default): the leaf floor and the number of leaves of the
        (α, β) tree are chosen on a held-out share of the training rows (see
        :mod:`~fairengine.methods.balanced_filtering.selection`), so the test imbalance stays
        near the training one. ``"paper"``: the paper's setting, grown to β_stop with the
        knobs' floor only.
    target : array-like of shape (K,), optional
        τ, the target distribution (uniform U by default).

    Attributes
    ----------
    A_ : ndarray (l, K)
        Conditional distribution matrix P(z | leaf) on the training sample.
    r_hat_ : ndarray (l,)
        Leaf masses P(leaf).
    q_ : ndarray (l,)
        Share of each leaf among accepted points (Algorithm 1).
    rho_ : ndarray (l,)
        Acceptance probabilities, max 1.
    base_rates_ : ndarray (K,)
    n_leaves_ : int
    trace_ : list of dict
        Algorithm 4's dist and disclosivity per round (tree proxies); the last record says why
        the growth stopped (``stop``).
    selection_ : dict or None
        The generalising protocol's choice (leaf floor, number of leaves, held-out imbalance).
    status_ : dict
        ``code``, ``converged`` and ``message``: why the tree stopped (see
        :func:`growth_status`).
    model_ : ProxyFilter
        The exportable model (owns the feature encoder).

    Examples
    --------
    >>> bf = BalancedFilter(alpha=0.2).fit(X, z)  # doctest: +SKIP
    >>> kept = bf.filter(X_stream, random_state=1)  # doctest: +SKIP
    """

    #: one declaration per knob (knobs.KNOBS): the page's slider range is the estimator's range,
    #: except where the mathematical domain is wider (counts, radii and steps)
    _parameter_constraints: dict = knob_constraints(
        knob_spec.KNOBS,
        skip=("random_state",),
        domains={
            "max_depth": (1, None, "left"),
            "n_rounds": (1, None, "left"),
            "step": (0.0, None, "neither"),
            "lambda_max": (0.0, None, "neither"),
            "min_leaf_rows": (1, None, "left"),
            "axis_splits": (0, None, "left"),
        },
        extra={"random_state": RANDOM_STATE, "target": ["array-like", None]},
    )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True  # z, the sensitive group, is the "target"
        tags.input_tags.string = True  # raw tables: the encoder one-hot codes text columns
        return tags

    def _rows(self, X: Any, *, reset: bool) -> Any:
        """Check X (feature names / count against fit); tables stay tables for the encoder."""
        if isinstance(X, pd.DataFrame):
            _check_feature_names(self, X, reset=reset)
            _check_n_features(self, X, reset=reset)
            return X
        return validate_data(self, X, reset=reset)

    def __init__(
        self,
        alpha: float = 0.2,
        gamma: float = 0.1,
        beta_stop: float = 0.1,
        max_depth: int = 20,
        relaxed: bool = False,
        proxy: str = "ab",
        random_state: int = 0,
        *,
        eta: float = 0.0,
        epsilon: float = 0.01,
        n_rounds: int = 100,
        step: float = 1.0,
        lambda_max: float = 100.0,
        min_leaf_mass: float = 0.0,
        budget_step: float = 0.0,
        min_leaf_rows: int = 5,
        axis_splits: int = 0,
        max_yield: bool = True,
        protocol: str = "generalising",
        target: Any = None,
    ) -> None:
        self.alpha = alpha
        self.gamma = gamma
        self.beta_stop = beta_stop
        self.max_depth = max_depth
        self.relaxed = relaxed
        self.proxy = proxy
        self.random_state = random_state
        self.eta = eta
        self.epsilon = epsilon
        self.n_rounds = n_rounds
        self.step = step
        self.lambda_max = lambda_max
        self.min_leaf_mass = min_leaf_mass
        self.budget_step = budget_step
        self.min_leaf_rows = min_leaf_rows
        self.axis_splits = axis_splits
        self.max_yield = max_yield
        self.protocol = protocol
        self.target = target

    __metadata_request__fit = sensitive_request()

    def fit(
        self, X: pd.DataFrame | np.ndarray, sensitive_features: Any = None, group_names: Any = None
    ) -> BalancedFilter:
        """Learn the proxy and rho from features ``X`` (excluding the protected attribute and
        the target) and the protected attribute ``sensitive_features`` (z, the estimator's y:
        a missing one gets scikit-learn's y check)."""
        z = sensitive_features
        validate_params(self)
        params = {k: getattr(self, k) for k in knob_spec.KNOB_NAMES}
        params["random_state"] = seed(self.random_state)
        X, codes, labels = self._fit_input(X, z)
        n_groups = len(labels)
        self.group_names_ = [str(g) for g in (group_names if group_names is not None else labels)]
        tau = uniform_target(n_groups) if self.target is None else np.asarray(self.target, float)
        self.target_ = tau
        encoder = FeatureEncoder().fit(X)
        Z = encoder.transform(X)
        self.base_rates_ = _base_rates(codes, n_groups)
        self.trace_ = []
        fit_proxy = self._fit_tree if params["proxy"] == "ab" else self._fit_classifier
        arrays, kind, eta, weights = fit_proxy(Z, codes, tau, params)
        self.n_leaves_ = len(self.rho_)
        self.train_leaf_weights_ = weights
        self.model_ = ProxyFilter(
            encoder,
            kind,
            arrays,
            self.rho_,
            eta=eta,
            A=self.A_,
            r_hat=self.r_hat_,
            base_rates=self.base_rates_,
            group_names=self.group_names_,
        )
        return self

    def _fit_input(self, X: Any, z: Any) -> tuple[Any, np.ndarray, pd.Index]:
        """Checked rows, the group codes 0..k-1 of ``z`` and the group labels (k >= 2)."""
        if isinstance(X, pd.DataFrame):
            X = self._rows(X, reset=True)
            z = column_or_1d(z)
            check_consistent_length(X, z)
        else:
            X, z = validate_data(self, X, z)
        codes, labels = pd.factorize(pd.Series(np.asarray(z)), sort=True)
        if (codes < 0).any():
            raise ValueError("z contains missing values; drop or label those rows")
        if len(labels) < 2:
            raise ValueError("balanced filtering needs at least two groups in z; got 1 class")
        return X, codes, labels

    def _fit_tree(
        self, Z: np.ndarray, codes: np.ndarray, tau: np.ndarray, params: dict
    ) -> tuple[dict, str, float, np.ndarray]:
        """The (alpha, beta)-proxy tree (Algorithm 4): (arrays, "tree", eta 0, leaf weights)."""
        n_groups = len(self.base_rates_)
        # the knobs of the same names (the settings not knobs keep their defaults)
        settings = GrowthSettings(
            **{f.name: params[f.name] for f in fields(GrowthSettings) if f.name in params}
        )
        self.selection_ = None
        # single-threaded BLAS: sweeps parallelise over points (see methods/_linear.py)
        with threadpool_limits(limits=1, user_api="blas"):
            if params["protocol"] == "generalising" and params["alpha"] > 0:
                settings, self.selection_ = select_growth(
                    Z,
                    codes,
                    n_groups,
                    settings,
                    tau,
                    max_yield=params["max_yield"],
                    seed=params["random_state"],
                )
            tree, weights, self.trace_ = grow_tree(Z, codes, n_groups, settings, tau)
        self.status_ = growth_status(
            self.trace_,
            alpha=params["alpha"],
            gamma=params["gamma"],
            beta_stop=params["beta_stop"],
            selection=self.selection_,
        )
        self.A_, self.r_hat_ = soft_matrix(weights, codes, n_groups)
        self.q_, self.rho_ = sampling_probabilities(
            self.A_, self.r_hat_, tau, params["relaxed"], max_yield=params["max_yield"]
        )
        return tree.arrays(), "tree", 0.0, weights

    def _fit_classifier(
        self, Z: np.ndarray, codes: np.ndarray, tau: np.ndarray, params: dict
    ) -> tuple[dict, str, float, np.ndarray]:
        """A baseline classifier proxy: (arrays, "classifier", eta, soft leaf weights)."""
        n_groups = len(self.base_rates_)
        family, learner = params["proxy"].split("_")
        self.status_ = {"code": "baseline", "converged": True, "message": ""}
        arrays = fit_classifier_proxy(learner, Z, codes, n_groups, params["random_state"])
        eta = params["eta"]
        # the same floor as the tree's leaves: max(min_leaf_mass, min_leaf_rows / n)
        floor = max(params["min_leaf_mass"], max(params["min_leaf_rows"], 1) / len(codes))
        arrays = merge_rare_labels(arrays, classifier_labels(arrays, Z), n_groups, floor)
        labels_pred = classifier_labels(arrays, Z)
        # rho from the un-noised proxy (eta = 0), then A measured on the noised labels
        A0, r0 = soft_matrix(interpolated_weights(labels_pred, n_groups, 0.0), codes, n_groups)
        if family == "naive":
            self.rho_ = naive_rho(r0)
            live = r0 > 0
            self.q_ = np.where(live, 1.0 / live.sum(), 0.0)
        else:
            self.q_, self.rho_ = sampling_probabilities(
                A0, r0, tau, params["relaxed"], max_yield=params["max_yield"]
            )
        weights = interpolated_weights(labels_pred, n_groups, eta)
        self.A_, self.r_hat_ = soft_matrix(weights, codes, n_groups)
        return arrays, "classifier", eta, weights

    def leaf_weights(self, X: Any) -> np.ndarray:
        """P(zhat(x) = L) per row and leaf."""
        check_is_fitted(self, "model_")
        return self.model_.leaf_weights(self._rows(X, reset=False))

    def leaf(self, X: Any, random_state: int | None = None) -> np.ndarray:
        """A drawn proxy group (leaf index) per row (fresh randomness per row, pitfall P18)."""
        check_is_fitted(self, "model_")
        draws = seed(self.random_state if random_state is None else random_state)
        return self.model_.leaf(self._rows(X, reset=False), draws)

    def acceptance_probability(self, X: Any) -> np.ndarray:
        """pi(x) = sum_L w_L(x) rho_L."""
        check_is_fitted(self, "model_")
        return self.model_.predict_score(self._rows(X, reset=False))

    def filter(self, X: Any, random_state: int | None = None) -> Any:
        """Algorithm 2: the accepted rows of ``X`` (seeded Bernoulli(pi(x)) per row)."""
        check_is_fitted(self, "model_")
        draws = seed(self.random_state if random_state is None else random_state)
        return self.model_.filter(self._rows(X, reset=False), draws)
