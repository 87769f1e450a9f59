"""MaxEntDebiaser: the fair maximum-entropy distribution p* of a dataset (Celis et al. 2020,
§3-4)."""

from __future__ import annotations

from dataclasses import replace
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.utils.metadata_routing import UNUSED
from sklearn.utils.validation import check_is_fitted

from fairengine.data import Task
from fairengine.data.row_keys import RowIndex, unique_rows
from fairengine.methods.maxent.domain import (
    CodedPoints,
    Domain,
    code_dtype,
    domain_from_task,
    readable_rows,
)
from fairengine.methods.maxent.knobs import KNOBS
from fairengine.methods.maxent.oracle import DualOracle, DualState, solve_dual
from fairengine.methods.maxent.reweighting import prior_weights, target_marginals
from fairengine.methods.params import (
    Interval,
    StrOptions,
    generator,
    knob_constraints,
    validate_params,
)
from fairengine.methods.sensitive import resolve_sensitive


def distinct_rows(
    codes: np.ndarray, weights: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows S of ``codes`` (lexicographic order), each one's summed weight and its count
    (S is a set); one 1-D sort of mixed-radix keys (:mod:`fairengine.data.row_keys`)."""
    rows, inverse, counts = unique_rows(np.asarray(codes, dtype=np.int64), sizes)
    summed = np.bincount(inverse, weights=weights, minlength=len(rows))
    return rows, summed, counts.astype(float)


def _compact_counts(counts: np.ndarray) -> np.ndarray:
    """Row counts (whole numbers) in the smallest unsigned integer type that holds them."""
    counts = np.asarray(counts)
    top = int(counts.max(initial=0))
    if not np.array_equal(counts, np.round(counts)) or counts.min(initial=0) < 0:
        return counts.astype(float)  # not counts: kept as given
    return counts.astype(np.min_scalar_type(top))


def group_rates(joint: np.ndarray) -> tuple[float, float]:
    """(RR, SR for y = 1) of a 2x2 table joint[y, z] = P(Y=y, Z=z) (Defs. 2.1, 2.2; min/max)."""
    share = joint.sum(axis=0)
    rr = float(share.min() / share.max()) if share.max() > 0 else 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        outcome = joint[1] / share
    sr = float(outcome.min() / outcome.max()) if np.nanmax(outcome) > 0 else 1.0
    return rr, sr


def _row_codes(data: pd.DataFrame | np.ndarray, domain: Domain, sensitive: Any) -> np.ndarray:
    """Level codes (n, F) of readable rows or codes, the protected column from ``sensitive``
    when given (and checked against the rows' own protected column, its older place)."""
    protected = domain.features[domain.index("protected")]
    if isinstance(data, pd.DataFrame):
        if sensitive is not None and protected.name not in data:
            data = data.assign(**{protected.name: np.asarray(sensitive)})
        codes = domain.codes(data)
    else:
        codes = np.asarray(data)
        if codes.ndim != 2 or codes.shape[1] != len(domain.features):
            raise ValueError(f"Level codes need shape (n, {len(domain.features)}).")
    if sensitive is not None:
        given = protected.codes(pd.Series(np.asarray(sensitive)))
        if len(given) != len(codes):
            raise ValueError(f"sensitive_features has {len(given)} values for {len(codes)} rows.")
        column = codes[:, domain.index("protected")]
        resolve_sensitive(
            given, column, protected.name, where=f"in the rows' column {protected.name!r}"
        )
    return codes


class MaxEntDebiaser(DensityMixin, BaseEstimator):
    """The max-entropy distribution closest (in KL) to a fair prior with prescribed marginals.

    Parameters
    ----------
    C : float
        C — prior weight of the uniform distribution, in [0, 1] (Eq. 1).
    tau : float
        τ — representation rate of Algorithm 1's weights, in (0, 1] (§3.1).
    prior : {"reweighted", "empirical"}
        q_C^w (Algorithm 1 weights) or q_C^d (empirical frequencies; Appendix B).
    target_marginals : {"reweighted", "balanced", "data"}, float or array
        θ: θ^w, θ^b, θ^d, a protected share P(Z=1) in (0, 1), or an explicit vector (§3.2).
    n_bins : int
        Bins per numeric column when discretising (§2.1).
    tol : float
        Largest allowed marginal error |E_{p*}[α] − θ|.
    max_iter : int
        Trust-region iterations.
    warm_start : ndarray, optional
        Initial λ (ignored if its length does not match d; a bool means none).

    Attributes
    ----------
    domain_ : Domain
    rows_ : ndarray (M, F)
        Distinct data rows S as level codes, in the smallest unsigned integer type that holds
        them (lossless; a wide table's rows stay a few MB).
    weights_ : ndarray (M,)
        Prior weights w on ``rows_``.
    counts_ : ndarray (M,)
        Copies of each distinct row in the data, in the smallest unsigned integer type.
    theta_ : ndarray (d,)
    lambda_ : ndarray (d,)
        λ*.
    pi_ : float
        Share of p*'s mass from the uniform component.
    expected_marginals_ : ndarray (d,)
        E_{p*}[α] (equals θ up to ``tol``).
    kl_to_prior_ : float
        KL(p* || q_C) = −h(λ*).
    representation_rate_, statistical_rate_ : float
        Exact rates of p*.
    n_iter_ : int
    n_features_in_ : int
        Columns of the domain (features, protected attribute, label).
    feature_names_in_ : ndarray of str

    Examples
    --------
    >>> from fairengine.data import load_dataset
    >>> task = load_dataset("german_credit")
    >>> model = MaxEntDebiaser(C=0.5).fit(task)
    >>> round(model.representation_rate_, 6)
    1.0
    """

    def __init__(
        self,
        C: float = 0.5,
        tau: float = 1.0,
        prior: str = "reweighted",
        target_marginals: Any = "reweighted",
        n_bins: int = 4,
        tol: float = 1e-9,
        max_iter: int = 200,
        warm_start: np.ndarray | None = None,
    ) -> None:
        self.C = C
        self.tau = tau
        self.prior = prior
        self.target_marginals = target_marginals
        self.n_bins = n_bins
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start

    _parameter_constraints: dict = knob_constraints(
        KNOBS,
        skip=("theta", "protected_share", "n_samples", "classifier", "domain", "n_sample_sets"),
        domains={"tau": (0.0, 1.0, "right"), "n_bins": (2, None, "left")},
        extra={
            "target_marginals": [
                StrOptions({t for t in ("reweighted", "balanced", "data")}),
                Interval(Real, 0, 1, closed="neither"),
                "array-like",
            ],
            "tol": [Interval(Real, 0, None, closed="neither")],
            "max_iter": [Interval(Integral, 1, None, closed="left")],
            "warm_start": ["array-like", None, "boolean"],  # False/True = no initial λ
        },
    )

    # the rows are data, not metadata; the protected attribute is routed as sensitive_features
    __metadata_request__fit = {"sensitive_features": True, "data": UNUSED}

    def fit(
        self,
        data: Task | pd.DataFrame | np.ndarray,
        domain: Domain | None = None,
        *,
        sensitive_features: Any = None,
    ) -> MaxEntDebiaser:
        """Discretise, reweight, build θ and solve the dual.

        Parameters
        ----------
        data : Task, DataFrame or ndarray
            A Task, readable rows whose columns are those of ``domain``, or their level codes
            (n, F) from ``domain.codes`` (a run codes its training rows once).
        domain : Domain, optional
            Required with a DataFrame or codes; built from the Task (``n_bins``) otherwise.
        sensitive_features : array-like, optional
            The protected attribute, one raw value per row: fills the domain's protected column
            when the rows lack it; when they hold it, both must agree.
        """
        validate_params(self)
        if isinstance(data, Task):
            domain = domain or domain_from_task(data, self.n_bins)
            data = readable_rows(data, domain)
        if domain is None:
            raise ValueError("Pass a Task, or a DataFrame (or level codes) with its Domain.")
        self.domain_ = domain
        self._set_features(domain)
        codes = _row_codes(data, domain, sensitive_features)
        z = codes[:, domain.index("protected")]
        y = codes[:, domain.index("label")]
        theta = self._theta(CodedPoints(domain, codes), z, y)  # no (n, d) matrix
        row_weights = prior_weights(z, y, self.tau, self.prior)
        rows, self.weights_, counts = distinct_rows(codes, row_weights, domain.sizes)
        self.rows_ = rows.astype(code_dtype(domain))
        self.counts_ = _compact_counts(counts)
        self.theta_ = theta
        oracle = self._oracle(theta)
        warm = None if isinstance(self.warm_start, bool) else self.warm_start
        solution = solve_dual(oracle, warm, tol=self.tol, max_iter=self.max_iter)
        self.lambda_ = solution.lam
        self.n_iter_ = solution.n_iter
        self._set_state(oracle(self.lambda_, hessian=False))
        return self

    def restore(
        self,
        domain: Domain,
        *,
        rows: np.ndarray,
        weights: np.ndarray,
        counts: np.ndarray,
        theta: np.ndarray,
        lam: np.ndarray,
        n_iter: int = 0,
    ) -> MaxEntDebiaser:
        """Set the fitted state from stored arrays (model files), recomputing the rest exactly."""
        self.domain_ = domain
        self._set_features(domain)
        rows = np.asarray(rows, dtype=np.int64).reshape(-1, len(domain.features))
        self.rows_ = rows.astype(code_dtype(domain))
        self.weights_ = np.asarray(weights, dtype=float)
        self.counts_ = _compact_counts(counts)
        self.theta_ = np.asarray(theta, dtype=float)
        self.lambda_ = np.asarray(lam, dtype=float)
        self.n_iter_ = n_iter
        self._set_state(self._oracle(self.theta_)(self.lambda_, hessian=False))
        return self

    def _set_features(self, domain: Domain) -> None:
        self.feature_names_in_ = np.asarray(list(domain.features), dtype=object)
        self.n_features_in_ = len(self.feature_names_in_)

    def _theta(self, points: CodedPoints, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        target, share = self.target_marginals, 0.5
        if not isinstance(target, str):
            values = np.atleast_1d(np.asarray(target, dtype=float))
            if values.size != 1:  # an explicit vector θ
                if values.shape != (points.shape[1],):
                    raise ValueError(
                        f"target_marginals needs {points.shape[1]} values, got {values.size}."
                    )
                return values
            target, share = "custom", float(values[0])
        protected = self.domain_.coordinate("protected")
        return target_marginals(
            points, z, y, target=target, tau=self.tau, protected=protected, protected_share=share
        )

    def _oracle(self, theta: np.ndarray, C: float | None = None) -> DualOracle:
        return DualOracle(
            self.domain_.sizes,
            self.domain_.encode(self.rows_, dtype=np.uint8),  # 0/1: 1 byte a coordinate
            self.weights_,
            self.C if C is None else C,
            theta,
            codes=self.rows_,  # the Hessian from contingency tables where faster
        )

    def _set_state(self, state: DualState) -> None:
        self.dual_value_ = state.value
        self.kl_to_prior_ = max(-state.value, 0.0)  # KL(p* || q_C) = −h(λ*)
        state = replace(state, hess=None, means=None)  # r, ρ, π: what sampling needs
        self._state = state
        self._prior_state = None
        self.pi_ = state.pi
        self.log_normaliser_ = state.log_g
        self.expected_marginals_ = state.grad + self.theta_
        self.joint_ = self._joint(state)
        self.representation_rate_, self.statistical_rate_ = group_rates(self.joint_)

    def _joint(self, state: DualState) -> np.ndarray:
        """Exact P(Y=y, Z=z) of p_λ as joint[y, z]."""
        iy, iz = self.domain_.index("label"), self.domain_.index("protected")
        joint = state.pi * np.outer(state.rho[iy], state.rho[iz])
        cells = 2 * self.rows_[:, iy] + self.rows_[:, iz]
        joint += (1 - state.pi) * np.bincount(cells, weights=state.r, minlength=4).reshape(2, 2)
        return joint

    def prior_joint(self) -> np.ndarray:
        """Exact P(Y=y, Z=z) of the prior q_C (λ = 0)."""
        return self._joint(self._dual_state(prior=True))

    def _dual_state(self, prior: bool = False) -> DualState:
        """The oracle's state at λ* (or at λ = 0, the prior q_C), recomputed exactly after
        unpickling (the states are not pickled: a result keeps only what predicts and samples)."""
        name = "_prior_state" if prior else "_state"
        state = getattr(self, name, None)
        if state is None:
            lam = np.zeros(self.domain_.d) if prior else self.lambda_
            state = self._oracle(self.theta_)(lam, hessian=False)
            state.hess, state.means = None, None
            setattr(self, name, state)
        return state

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        return {k: v for k, v in state.items() if k not in ("_state", "_prior_state")}

    # ------------------------------------------------------------------ the learned distribution
    def log_probability(self, rows: pd.DataFrame | np.ndarray) -> np.ndarray:
        """log p*(α) = log q(α) + <λ*, α> − log g_q(λ*) of readable rows or level codes (§3.5)."""
        codes = self._codes(rows)
        log_q = self._log_prior(codes)
        return log_q + self.domain_.encode(codes) @ self.lambda_ - self.log_normaliser_

    def probability(self, rows: pd.DataFrame | np.ndarray) -> np.ndarray:
        """Exact p*(α) of each row (readable rows or level codes)."""
        return np.exp(self.log_probability(rows))

    def score(self, rows: pd.DataFrame | np.ndarray, y: Any = None) -> float:
        """Mean log p*(α) of the rows (readable rows or level codes); −inf off p*'s support."""
        return float(np.mean(self.log_probability(rows)))

    def _codes(self, rows: pd.DataFrame | np.ndarray) -> np.ndarray:
        check_is_fitted(self, "lambda_")
        if isinstance(rows, pd.DataFrame):
            return self.domain_.codes(rows)
        return np.asarray(rows, dtype=np.int64).reshape(-1, len(self.domain_.features))

    def _log_prior(self, codes: np.ndarray) -> np.ndarray:
        index = RowIndex(self.rows_, self.domain_.sizes).find(codes)
        w = np.where(index >= 0, self.weights_[np.maximum(index, 0)], 0.0)
        with np.errstate(divide="ignore"):
            log_u = np.log(self.C) - self.domain_.log_size if self.C > 0 else -np.inf
            log_w = np.log1p(-self.C) + np.log(w) if self.C < 1 else np.full(len(w), -np.inf)
        return np.logaddexp(log_u, log_w)

    def sample_codes(self, n: int, random_state: Any = 0, *, prior: bool = False) -> np.ndarray:
        """n exact draws from p* (or the prior q_C) as level codes: the mixture sampler (§3.4b)."""
        check_is_fitted(self, "lambda_")
        state = self._dual_state(prior)
        rng = generator(random_state)
        n_uniform = int(rng.binomial(n, min(max(state.pi, 0.0), 1.0)))
        uniform = np.column_stack([rng.choice(len(p), size=n_uniform, p=p) for p in state.rho])
        if n > n_uniform:
            data = self.rows_[rng.choice(len(self.rows_), size=n - n_uniform, p=state.r)]
        else:
            data = np.zeros((0, len(state.rho)), dtype=np.int64)
        codes = np.vstack([uniform.astype(np.int64), data])
        return codes[rng.permutation(n)]

    def sample(self, n: int, random_state: Any = 0) -> pd.DataFrame:
        """n synthetic, debiased rows drawn exactly from p*, decoded to readable levels."""
        check_is_fitted(self, "lambda_")
        return self.domain_.decode(self.sample_codes(n, random_state))
