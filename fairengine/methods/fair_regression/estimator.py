"""FairRegressor: fair regression by reductions (Agarwal et al. 2019, Algorithms 1–2)."""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, has_fit_parameter, validate_data
from threadpoolctl import threadpool_limits

from fairengine import metrics
from fairengine.methods.fair_regression.game import play_parity_game
from fairengine.methods.fair_regression.knobs import KNOBS
from fairengine.methods.fair_regression.learners import Component
from fairengine.methods.fair_regression.losses import bins, representatives
from fairengine.methods.fair_regression.reductions import (
    LR_WEIGHTS,
    GroupLossReduction,
    ParityReduction,
)
from fairengine.methods.params import (
    HasMethods,
    Interval,
    StrOptions,
    generator,
    knob_constraints,
    seed,
    validate_params,
)
from fairengine.methods.sensitive import resolve_sensitive, sensitive_request
from fairengine.solvers.expgrad import ACCURACY_MUL, GameResult, solve_game

MODES = ("practical", "paper")
#: B = 1/max(ε, this) in practical mode: B = 1/ε is undefined at ε = 0.
MIN_EPS_FOR_BOUND = 0.005
#: Default B of bounded group loss, fairlearn's 1/eps with its default eps = 0.01.
BGL_BOUND = 100.0


class FairRegressor(RegressorMixin, BaseEstimator):
    """Randomized regressor Q minimising loss under statistical parity or bounded group loss.

    A scikit-learn estimator (parameters validated in :meth:`fit` against the method's knobs,
    with wider domains for ε, N and T); ``fit(X, y, sensitive_features)``.

    Parameters
    ----------
    constraint : {"statistical_parity", "bounded_group_loss"}
        SP: |γ_{a,z}(Q)| ≤ ε for all a, z (problem (3)); BGL: E[ℓ | A = a] ≤ ζ (problem (4)).
    eps : float or array of shape (n_groups,)
        ε^ (SP slack, KS units) or ζ^ (BGL bound, in units of ℓ: (y−u)²/2 for square loss).
    loss : {"square", "absolute", "logistic"}
        ℓ of Examples 1–2 on targets scaled to [0, 1].
    n_levels : int
        N, the grid size; α = 1/N (§4.1). Unused by BGL.
    oracle : {"ls", "lr", "cs"}
        Best response for SP (§3.3): least squares on U_i, logistic regression on two weighted
        copies (``loss="logistic"`` only in the paper, allowed for all), or the cost-sensitive
        hinge LP (linear only; n ≲ 2000).
    base_estimator : {"linear", "gradient_boosting"} or scikit-learn regressor
        The class F: exact weighted least squares, scikit-learn's ``GradientBoostingRegressor``
        with :data:`GB_PARAMS`, or any regressor whose ``fit`` takes ``sample_weight`` (for the
        LS oracle and the square-loss BGL oracle only; see docs/methods/fair_regression.md).
    max_iter : int
        T, the iteration cap.
    random_state : int, RandomState, Generator or None
        Seed of the learners and the default seed of :meth:`predict` (an integer seeds
        :func:`numpy.random.default_rng`, see :func:`fairengine.methods.params.generator`).
    mode : {"practical", "paper"}
        ``"practical"``: B = 1/ε, η_0 = 2/B, auto ν, shrink schedule, LP step (SP: the authors'
        loop, :mod:`~fairengine.methods.fair_regression.game`). ``"paper"``: Algorithm 1/2 with
        η = ν/(8B) (SP) or ν/(2B) (BGL), uniform average.
    bound : float, optional
        B (defaults: 1/max(ε, 0.005) for SP, 100 for BGL). Practical SP: on the authors' scale
        (objective cost^/m, m = mean |c|).
    nu : float, optional
        ν (default automatic; practical SP: on the augmented, weight-normalised rows, §3.2).
    lr_weights : {"corrected", "paper"}
        LR copy weight W_{i,2}: σ(C(2U_i − 1)) ([spec erratum] §3.3c) or the paper's U_i.

    Attributes
    ----------
    predictors_ : list of Component
        The support f_t of Q (each maps encoded features to [0, 1]).
    weights_ : ndarray
        q_t ≥ 0, Σ q_t = 1.
    y_min_, y_max_ : float
        Target scaling y' = (y − y_min)/(y_max − y_min) (identity when y ⊂ [0, 1]).
    n_groups_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.
    game_ : GameResult
        Gap, iterations, oracle calls.
    constant_objective_ : float
        Loss (loss_α for SP) of the best constant on the grid, always feasible.
    objective_scale_ : float
        m = mean |c(Y_i, z)| of the SP game's units; 1 for BGL.
    status_ : {"converged", "not_converged", "infeasible"}
        BGL "infeasible" = the paper's null (Algorithm 2 after gap ≤ ν).
    message_ : str
        A readable summary of ``status_``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); a = (X[:, 0] > 0).astype(int)
    >>> y = np.clip(0.5 + 0.2 * X[:, 0] + 0.05 * rng.normal(size=200), 0, 1)
    >>> q = FairRegressor(eps=0.05, n_levels=10, max_iter=20).fit(X, y, a)
    >>> q.predict(X[:3]).shape
    (3,)
    """

    def __init__(
        self,
        constraint: str = "statistical_parity",
        eps: float = 0.05,
        loss: str = "square",
        n_levels: int = 40,
        oracle: str = "ls",
        base_estimator: str = "linear",
        max_iter: int = 50,
        random_state: int | None = 0,
        *,
        mode: str = "practical",
        bound: float | None = None,
        nu: float | None = None,
        lr_weights: str = "corrected",
    ) -> None:  # scikit-learn contract: store the arguments verbatim, validate in fit
        self.constraint = constraint
        self.eps = eps
        self.loss = loss
        self.n_levels = n_levels
        self.oracle = oracle
        self.base_estimator = base_estimator
        self.max_iter = max_iter
        self.random_state = random_state
        self.mode = mode
        self.bound = bound
        self.nu = nu
        self.lr_weights = lr_weights

    _parameter_constraints: dict = knob_constraints(
        KNOBS,
        rename={"loss_function": "loss"},
        domains={
            "eps": (0.0, None, "left"),
            "n_levels": (2, None, "left"),
            "max_iter": (1, None, "left"),
        },
        extra={
            "eps": ["array-like"],
            "base_estimator": [HasMethods(["fit", "predict"])],
            "random_state": ["random_state"],
            "mode": [StrOptions(set(MODES))],
            "bound": [Interval(Real, 0, None, closed="neither"), None],
            "nu": [Interval(Real, 0, None, closed="left"), None],
            "lr_weights": [StrOptions(set(LR_WEIGHTS))],
        },
    )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # predict draws f_t ~ Q per row: seeded, but a row's draw depends on its position
        tags.non_deterministic = True
        return tags

    # -- fitting ---------------------------------------------------------------------------------
    def _check(self) -> None:
        validate_params(self)
        if np.any(np.asarray(self.eps, float) < 0):
            raise ValueError("eps must be non-negative")
        base = self.base_estimator
        if self.oracle == "cs" and not (isinstance(base, str) and base == "linear"):
            raise ValueError("the cost-sensitive oracle (cs) is linear only")
        if isinstance(base, str):
            return
        if not has_fit_parameter(base, "sample_weight"):
            raise ValueError(
                f"base_estimator {type(base).__name__} does not accept sample_weight in fit; the "
                "reductions reweight the rows at every oracle call."
            )
        if self.oracle != "ls" and self.constraint == "statistical_parity":
            raise ValueError(
                f"oracle={self.oracle!r} needs base_estimator 'linear' or 'gradient_boosting'; a "
                "scikit-learn regressor serves the least-squares oracle (oracle='ls')."
            )
        if self.constraint == "bounded_group_loss" and self.loss != "square":
            raise ValueError(
                f"bounded group loss with loss={self.loss!r} needs base_estimator 'linear' or "
                "'gradient_boosting'; a scikit-learn regressor serves the square loss."
            )

    def scale(self, y: Any) -> np.ndarray:
        """y' = (y − y_min)/(y_max − y_min): the [0, 1] scale every loss and ε is on."""
        return (np.asarray(y, float) - self.y_min_) / (self.y_max_ - self.y_min_)

    __metadata_request__fit = sensitive_request()

    def fit(self, X: Any, y: Any, sensitive_features: Any = None) -> FairRegressor:
        """Run Algorithm 1 (SP) or 2 (BGL) on rows X, targets y and the protected attribute
        ``sensitive_features``."""
        groups = resolve_sensitive(sensitive_features, None, "sensitive_features")
        self._check()
        Z, y = validate_data(self, X, y, y_numeric=True, ensure_min_features=0)
        Z, y = np.asarray(Z, float), np.asarray(y, float).ravel()
        groups = np.asarray(groups)
        if groups.shape[:1] != y.shape:
            raise ValueError(f"groups has {len(groups)} rows, X and y have {len(y)}")
        self.group_labels_, codes = np.unique(np.asarray(groups), return_inverse=True)
        self.n_groups_ = len(self.group_labels_)
        if self.n_groups_ < 2:
            raise ValueError("groups must contain at least two distinct values")
        lo, hi = float(y.min()), float(y.max())
        self.y_min_, self.y_max_ = (0.0, 1.0) if lo >= 0 and hi <= 1 else (lo, max(hi, lo + 1e-12))
        target = np.clip(self.scale(y), 0.0, 1.0)
        n = len(y)
        parity = self.constraint == "statistical_parity"
        if parity:
            problem: Any = ParityReduction(
                Z,
                target,
                codes,
                self.eps,
                loss=self.loss,
                n_levels=int(self.n_levels),
                oracle=self.oracle,
                base=self.base_estimator,
                lr_weights=self.lr_weights,
                random_state=seed(self.random_state),
            )
            bound = self.bound or 1.0 / max(float(np.min(self.eps)), MIN_EPS_FOR_BOUND)
            rho = 8.0
        else:
            problem = GroupLossReduction(
                Z,
                target,
                codes,
                self.eps,
                loss=self.loss,
                base=self.base_estimator,
                random_state=seed(self.random_state),
            )
            bound = self.bound or BGL_BOUND
            rho = 2.0

        def auto_nu(first) -> float:
            f0 = first.payload.predict(Z)
            return float(ACCURACY_MUL * np.std(np.abs(f0 - target)) / np.sqrt(n))

        nu: Any = self.nu if self.nu is not None else auto_nu
        eta = None
        if self.mode == "paper":
            if self.nu is None:
                raise ValueError("mode='paper' needs an explicit nu (ν)")
            eta = float(self.nu) / (rho * bound)
        # single-threaded BLAS: the solves are small, and sweeps parallelise over points
        with threadpool_limits(limits=1, user_api="blas"):
            if self.mode == "practical" and parity:
                game = play_parity_game(problem, bound=bound, nu=self.nu, max_iter=self.max_iter)
            else:
                initial = (problem.best_constant(),) if parity else ()
                game = solve_game(
                    problem.best_response,
                    problem.constraint,
                    bound=bound,
                    nu=nu,
                    max_iter=int(self.max_iter),
                    mode=self.mode,
                    eta=eta,
                    initial=initial,
                )
        self.game_: GameResult = game
        self.predictors_: list[Component] = [r.payload for r in game.responses]
        self.weights_ = np.asarray(game.weights, float)
        self.n_iter_ = int(game.n_iter)
        self._set_status(problem)
        self.constant_objective_ = problem.best_constant().objective if parity else float("nan")
        self.objective_scale_ = problem.objective_scale() if parity else 1.0
        return self

    def _set_status(self, problem: Any) -> None:
        game = self.game_
        violation = float(np.max(game.constraints()))
        self.violation_ = violation
        tolerance = (1 + 2 * game.nu) / game.bound
        if self.constraint == "bounded_group_loss" and violation > tolerance:
            losses = (game.constraints() + problem.zeta).round(4).tolist()
            if game.converged:
                self.status_ = "infeasible"
                self.message_ = (
                    f"The loss bound ζ = {self.eps} cannot be met: the best randomized predictor "
                    f"still has group losses {losses} (Algorithm 2 returns null). Raise ζ."
                )
            else:
                self.status_ = "not_converged"
                self.message_ = (
                    f"Not converged after {game.n_iter} iterations; the best predictor found has "
                    f"group losses {losses}, above ζ = {self.eps}. The bound may be infeasible; "
                    "raise ζ or max_iter."
                )
            return
        self.status_ = "converged" if game.converged else "not_converged"
        self.message_ = (
            f"{'Converged' if game.converged else 'Stopped'} after {game.n_iter} iterations "
            f"(duality gap {game.gap:.2g}, ν = {game.nu:.2g}, {game.n_oracle_calls} oracle calls)."
        )

    # -- prediction ------------------------------------------------------------------------------
    def _encoded(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "predictors_")
        if not hasattr(self, "n_features_in_"):  # rebuilt from a model file: arrays only
            return np.asarray(X, float)
        return np.asarray(validate_data(self, X, reset=False, ensure_min_features=0), float)

    def component_predictions(self, X: Any) -> np.ndarray:
        """(n, T) predictions of every f_t on the [0, 1] scale; SP: the bin representatives
        ⌊f⌋_α + α/2 (1 at the top bin), the points ℓ_α scores."""
        Z = self._encoded(X)
        values = np.column_stack([f.predict(Z) for f in self.predictors_])
        if self.constraint == "statistical_parity":
            n = int(self.n_levels)
            values = representatives(n)[bins(values, n)]
        return values

    def predict(self, X: Any, random_state: int | None = None) -> np.ndarray:
        """Randomized predictions: per row draw f_t ~ Q and output f_t(x) on the target's scale.

        Never the averaged prediction Σ q_t f_t(x), which has no parity guarantee (§3.5).
        """
        values = self.component_predictions(X)
        rng = generator(self.random_state if random_state is None else random_state)
        pick = rng.choice(len(self.weights_), size=len(values), p=self.weights_)
        chosen = values[np.arange(len(values)), pick]
        return self.y_min_ + (self.y_max_ - self.y_min_) * chosen

    def predict_cdf(self, X: Any, thresholds: Any) -> np.ndarray:
        """Exact P_Q(Q(x) ≤ t) per row and threshold t (target scale), shape (n, len(t))."""
        values = self.y_min_ + (self.y_max_ - self.y_min_) * self.component_predictions(X)
        t = np.asarray(thresholds, float).ravel()
        below = values[:, :, None] <= t[None, None, :]
        return np.einsum("itk,t->ik", below, self.weights_)

    # -- exact evaluation of the mixture ---------------------------------------------------------
    def group_cdfs(
        self,
        X: Any,
        groups: Any,
        thresholds: Any = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Exact mixture CDFs (thresholds, group_cdfs, overall_cdf) on the target's scale.

        F_a(t) = Σ_t q_t P̂[f_t ≤ t | a], laid out as
        :func:`fairengine.metrics.prediction_cdfs`.
        """
        values = self.y_min_ + (self.y_max_ - self.y_min_) * self.component_predictions(X)
        t = np.unique(values) if thresholds is None else np.sort(np.asarray(thresholds, float))
        groups = np.asarray(groups)
        group_cdf, overall = 0.0, 0.0
        for q, column in zip(self.weights_, values.T, strict=True):
            _, g, o = metrics.prediction_cdfs(column, groups, thresholds=t)
            group_cdf, overall = group_cdf + q * g, overall + q * o
        return t, np.asarray(group_cdf), np.asarray(overall)

    def ks_disparity(self, X: Any, groups: Any) -> float:
        """Exact KS statistical-parity disparity of Q (the ``sp_ks`` metric of the mixture)."""
        _, g, o = self.group_cdfs(X, groups)
        return metrics.ks_distance_from_cdfs(g, o)
