"""RobustFairClassifier: a linear classifier under rate constraints on noisy groups (Wang et al.
2020).

Every approach is a projected gradient descent–ascent on the hinge Lagrangian
f̃(θ) + Σ_c λ_c ψ̃_c(θ; adversary) with hinge-relaxed group rates:

* ``naive``: the constraints on the noisy groups Ĝ (problem 2);
* ``dro``: each noisy group's law replaced by an adversarial p̃_j in the TV ball of radius γ_j
  (Algorithm 2);
* ``soft``: group membership replaced by an adversarial assignment w(j | ŷ, y, Ĝ) consistent with
  the noise model P(G | Ĝ) (Algorithm 4);
* ``unconstrained``: no constraints.

An iterate is recorded every ``eval_every`` steps (never the initial θ = 0) with its 0-1 error and
its robust checks (``"margin"``, ``"paper"``, ``"exact"``; :func:`.game.make_evaluator`), on the
fitting rows and on ``eval_set`` when given; the best iterate is the lowest-error one passing the
check ``robust_eval`` (the paper's rule), else the least-violating one ("fallback"). The
adversaries, the λ rule, the checks and why the defaults are what they are: "Design notes" in
docs/methods/noisy_groups.md.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from fairengine.methods.noisy_groups.adversaries import make_adversary
from fairengine.methods.noisy_groups.game import (
    HingeGame,
    Record,
    group_block,
    is_feasible,
    lambda_player,
    make_evaluator,
    select_best,
    soft_joint_check,
)
from fairengine.methods.noisy_groups.knobs import (
    ADVERSARIES,
    KNOBS,
    LAMBDA_OPTIMIZERS,
    METHODS,
    ROBUST_EVALS,
)
from fairengine.methods.noisy_groups.noise import NoiseModel, estimate_noise
from fairengine.methods.params import Interval, StrOptions, knob_constraints, seed, validate_params
from fairengine.methods.sensitive import resolve_sensitive, sensitive_request
from fairengine.metrics.noisy_groups import constraint_list
from fairengine.solvers.descent_ascent import ThetaPlayer, descent_ascent

__all__ = ["ADVERSARIES", "LAMBDA_OPTIMIZERS", "METHODS", "ROBUST_EVALS", "RobustFairClassifier"]
#: Steps between recorded candidates (the code: 25 steps × 30 loops = 750).
EVAL_EVERY = 25


class RobustFairClassifier(ClassifierMixin, BaseEstimator):
    """Linear classifier with group rate constraints robust to noisy group labels.

    A scikit-learn estimator: the constructor stores its arguments verbatim, ``fit`` validates
    them against the ``noisy_groups`` knobs (:mod:`~fairengine.methods.noisy_groups.knobs`; the
    estimator accepts the whole mathematical domain of a numeric knob, the page's slider shows the
    useful part), ``clone`` / ``get_params`` / ``set_params`` work and an unfitted ``predict``
    raises ``NotFittedError``. ``fit(X, y, noisy_groups, aux_true, aux_noisy)`` takes the noisy
    groups (and the auxiliary sample) beside the labels; ``y`` is binary (any two labels; the
    larger one is the positive class, ``classes_[1]``).

    Parameters
    ----------
    method : {"naive", "dro", "soft", "unconstrained"}
    constraint : {"tpr", "eo", "dp"}
        Equality of opportunity, equalized odds or demographic parity (one-sided).
    slack : float
        α of the rate constraints.
    gamma : float or array, optional
        DRO TV radius γ_j; None = the safe radius estimated from the auxiliary sample.
    n_steps : int
        T gradient steps (full batch).
    learning_rate : float
        η_θ (Adam).
    random_state : int, RandomState or None
        Seeds the paper-adversary DRO evaluation's random p̃ (θ starts at 0); scikit-learn's
        convention (``check_random_state``): None draws a fresh seed.
    adversary_every : int
        DRO only: update p̃ every this many steps (1 = Algorithm 2 exactly).
    robust_eval : {"margin", "paper", "exact"}
        Robust 0-1 evaluation used for best-iterate selection (see the module docstring).
    beta : float
        Extra slack β of the hinge-relaxed constraints during training (α + β; the 0-1
        constraints of the selection keep α). The paper code uses 1.0 (naive, DRO) and 0 (soft).
    lambda_learning_rate : float
        η_λ (projected gradient ascent on λ, ||λ||₁ <= 1).
    adversary : {"paper", "exact"}
        The adversary's update (see the module docstring).
    adversary_learning_rate : float
        η_p̃ (DRO) and η_w (soft) of the paper adversary's Adam steps (Table 1: 0.01 is the middle
        of {0.001, 0.01, 0.1}); the exact DRO adversary's plain step uses ``learning_rate``.
    eval_every : int
        Steps between recorded candidate iterates.
    lambda_optimizer : {"auto", "adam", "gd"}
        The λ-ascent: Adam (the paper code's) or the plain projected step λ + η_λ·signal;
        ``"auto"``: Adam for soft assignments on the relaxed constraints, plain otherwise.
    lambda_signal : {"auto", "relaxed", "exact", "margin", "paper"}
        What λ ascends on: the hinge-relaxed constraints (``"relaxed"``, the paper code; with
        β = 0 they never turn negative, so λ sits on its bound) or a 0-1 robust check of the
        current iterate (the proxy Lagrangian of Cotter, Jiang & Sridharan 2019), so that the
        iterates follow the boundary of that check. ``"auto"``: soft assignments with an
        ``eval_set`` ascend on the exact worst case (``"exact"``), DRO with a noise model on its
        margin check, everything else on the relaxed constraints.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The labels (``predict`` returns them).
    group_classes_ : ndarray
        The group labels seen in fit (noisy, auxiliary and validation groups), coded 0..m-1.
    coef_, intercept_ : the selected iterate θ.
    robust_eval_ : str
        The robust check of the current selection (``robust_eval`` or the last :meth:`select`).
    selection_status_ : {"feasible", "fallback", "unconstrained"}
    n_features_in_, feature_names_in_ : as in scikit-learn.
    """

    _parameter_constraints: dict = knob_constraints(
        KNOBS,
        skip=(
            "noise",
            "gamma_rule",
            "beta_rule",
            "group_feature",
            "selection",
            "random_state",
            "tuning",
            "protocol",
        ),
        domains={
            "slack": (0.0, None, "left"),
            "gamma": (0.0, 1.0, "both"),
            "n_steps": (1, None, "left"),
            "learning_rate": (0.0, None, "neither"),
            "beta": (0.0, None, "left"),
            "lambda_learning_rate": (0.0, None, "neither"),
            "adversary_learning_rate": (0.0, None, "neither"),
        },
        extra={
            "gamma": [None, "array-like"],
            "random_state": ["random_state"],
            "adversary_every": [Interval(Integral, 1, None, closed="left")],
            "eval_every": [Interval(Integral, 1, None, closed="left")],
            "lambda_optimizer": [StrOptions(set(LAMBDA_OPTIMIZERS))],
            "lambda_signal": [StrOptions({"auto", "relaxed", *ROBUST_EVALS})],
        },
    )

    def __init__(
        self,
        method: str = "naive",
        constraint: str = "tpr",
        slack: float = 0.05,
        gamma=None,
        n_steps: int = 500,
        learning_rate: float = 0.01,
        random_state: int | None = 0,
        adversary_every: int = 1,
        robust_eval: str = "margin",
        beta: float = 0.0,
        lambda_learning_rate: float = 1.0,
        adversary: str = "paper",
        adversary_learning_rate: float = 0.01,
        eval_every: int = EVAL_EVERY,
        lambda_optimizer: str = "auto",
        lambda_signal: str = "auto",
    ) -> None:
        self.method = method
        self.constraint = constraint
        self.slack = slack
        self.gamma = gamma
        self.n_steps = n_steps
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.adversary_every = adversary_every
        self.robust_eval = robust_eval
        self.beta = beta
        self.lambda_learning_rate = lambda_learning_rate
        self.adversary = adversary
        self.adversary_learning_rate = adversary_learning_rate
        self.eval_every = eval_every
        self.lambda_optimizer = lambda_optimizer
        self.lambda_signal = lambda_signal

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # one-sided rate constraints of one positive class
        return tags

    # ------------------------------------------------------------------ prediction
    def decision_function(self, X) -> np.ndarray:
        """θ·x + b of the selected iterate (> 0 predicts ``classes_[1]``)."""
        check_is_fitted(self, "coef_")
        X = np.asarray(validate_data(self, X, reset=False), dtype=float)
        return X @ self.coef_ + self.intercept_

    def predict(self, X) -> np.ndarray:
        """``classes_[1]`` where θ·x + b > 0, else ``classes_[0]`` (a score of exactly 0 is
        negative, the paper's convention)."""
        positive = self.decision_function(X) > 0.0
        return self.classes_[positive.astype(np.int64)]

    # ------------------------------------------------------------------ fitting
    def _noise_model(self, aux_true, aux_noisy, m: int) -> NoiseModel | None:
        if aux_true is None or aux_noisy is None:
            return None
        g = np.searchsorted(self.group_classes_, np.asarray(aux_true))
        h = np.searchsorted(self.group_classes_, np.asarray(aux_noisy))
        return estimate_noise(g, h, m)

    def _signal_key(self, held_out: bool) -> str | None:
        """The 0-1 check λ ascends on (None: the hinge-relaxed constraints, the paper code's
        rule); ``lambda_signal="auto"``: soft assignments selected on held-out rows
        (``held_out``) ascend on the exact worst case over 𝒲(θ), DRO with a noise model on its
        margin check, the others on the relaxed constraints."""
        if self.method == "unconstrained" or self.lambda_signal == "relaxed":
            return None
        if self.lambda_signal == "auto":
            if self.method == "dro":
                return "margin" if self.noise_model_ is not None else None
            return "exact" if self.method == "soft" and held_out else None
        return self.lambda_signal

    def _labels(self, y) -> np.ndarray:
        """Set ``classes_`` and return y as 0/1 floats (binary targets only)."""
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type != "binary":
            raise ValueError(
                "Only binary classification is supported (one-sided rate constraints of one "
                f"positive class). The type of the target is {y_type}."
            )
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError(f"y needs 2 classes; got {len(self.classes_)} class.")
        return (y == self.classes_[-1]).astype(float)

    __metadata_request__fit = sensitive_request("noisy_groups")

    def fit(
        self,
        X,
        y,
        noisy_groups=None,
        aux_true=None,
        aux_noisy=None,
        *,
        eval_set=None,
        sensitive_features=None,
        group_columns=None,
    ):
        """Fit on (X, y, Ĝ), the observed (noisy) protected attribute Ĝ given as
        ``sensitive_features`` (``noisy_groups`` is its older name); ``aux_true``/``aux_noisy``:
        an auxiliary sample of true and noisy groups (noise model and safe γ).
        ``eval_set=(X_val, y_val, Ĝ_val)``: select the best iterate on this validation data
        instead of the training data (no true groups needed). ``group_columns``: the columns of
        X that encode the noisy group (its one-hot block), when the classifier reads it as a
        feature; the noise-corrected checks then rate each row under every noisy group it may
        carry (:func:`~fairengine.methods.noisy_groups.rates.corrected_violations`,
        ``yhat_by_group``) — without that they are biased in the classifier's favour.

        The fit is a projected gradient descent–ascent
        (:func:`fairengine.solvers.descent_ascent.descent_ascent`): θ, λ and the approach's
        adversary (:mod:`.adversaries`) as players, the candidates kept by a :class:`.Record`."""
        noisy_groups = resolve_sensitive(sensitive_features, noisy_groups, "noisy_groups")
        validate_params(self)
        X, y_raw = validate_data(self, X, y)
        X = np.asarray(X, dtype=float)
        y = self._labels(y_raw)
        self._seed = seed(self.random_state)
        noisy = self._group_codes(noisy_groups, len(y), (aux_true, aux_noisy), eval_set)
        self.noise_model_ = self._noise_model(aux_true, aux_noisy, self.n_groups_)
        self.group_block_ = group_block(X, noisy, self.n_groups_, group_columns)
        # the constraints (rate kind, noisy group); none for the unconstrained approach
        unconstrained = self.method == "unconstrained"
        pairs = [] if unconstrained else constraint_list(self.constraint, self.n_groups_)
        adversary = make_adversary(self, y, noisy, pairs)
        # with held-out rows, the in-sample margin is that of the held-out rows' size, so the
        # iterates follow the boundary the selection applies
        margin_rows = len(eval_set[1]) if eval_set is not None else None
        evaluate = make_evaluator(self, y, noisy, margin_rows)
        held, joint = self._held_out(eval_set, y, noisy)
        signal_key = self._signal_key(eval_set is not None)
        theta = ThetaPlayer(np.hstack([X, np.ones((len(y), 1))]), self.learning_rate)
        lam = lambda_player(self, len(pairs), signal_key)
        record = Record((self.eval_every, self.n_steps), y, evaluate, held, joint)
        descent_ascent(HingeGame(y, evaluate, signal_key), theta, lam, adversary, record)
        record.store(self)
        self.lambda_ = lam.lam
        self.select(self.robust_eval)
        return self

    def _group_codes(self, noisy_raw, n_rows: int, aux: tuple, eval_set) -> np.ndarray:
        """Set ``group_classes_`` (every group label seen: Ĝ, the auxiliary sample, the
        held-out Ĝ) and ``n_groups_``; return Ĝ as codes 0..m-1."""
        noisy_raw = np.asarray(noisy_raw)
        if len(noisy_raw) != n_rows:
            raise ValueError(f"noisy_groups has {len(noisy_raw)} entries for {n_rows} rows.")
        labels = [noisy_raw] + [np.asarray(a) for a in aux if a is not None]
        if eval_set is not None:
            labels.append(np.asarray(eval_set[2]))
        self.group_classes_ = np.unique(np.concatenate(labels))
        self.n_groups_ = len(self.group_classes_)
        return np.searchsorted(self.group_classes_, noisy_raw)

    def _held_out(self, eval_set, y: np.ndarray, noisy: np.ndarray) -> tuple:
        """(X̃_val, y_val, evaluate_val) of ``eval_set`` (None without one) and, for soft
        assignments, the check of fitted and held-out rows together (else None)."""
        if eval_set is None:
            return None, None
        X_val = np.asarray(validate_data(self, eval_set[0], reset=False), float)
        y_val = (np.asarray(eval_set[1]).ravel() == self.classes_[-1]).astype(float)
        noisy_val = np.searchsorted(self.group_classes_, np.asarray(eval_set[2]))
        held = (np.hstack([X_val, np.ones((len(y_val), 1))]), y_val)
        held += (make_evaluator(self, y_val, noisy_val),)
        joint = None
        if self.method == "soft":
            joint = soft_joint_check(self, np.append(y, y_val), np.append(noisy, noisy_val))
        return held, joint

    def robust_violations(self, X, y, noisy_groups) -> dict[str, np.ndarray]:
        """Constraint values (α included, > 0 = violated) of the selected iterate on other data
        (e.g. a validation split; noisy groups only), under every robust check:
        ``{"margin": ..., "paper": ..., "exact": ...}`` — the margin check, the paper's adversary
        (soft: the W table recorded with the selected iterate; DRO: 20 random p̃ around the
        data's noisy groups) and the exact worst case (over 𝒲(θ) with the fitted noise model /
        the TV ball of ``gamma_``)."""
        check_is_fitted(self, "coef_")
        yv = (np.asarray(y).ravel() == self.classes_[-1]).astype(float)
        noisy = np.searchsorted(self.group_classes_, np.asarray(noisy_groups))
        scores = self.decision_function(X)
        theta = np.append(self.coef_, self.intercept_)
        tables = self.candidate_tables_[self.best_index_]
        return make_evaluator(self, yv, noisy)(
            (scores > 0.0).astype(float), tables, theta=theta, scores=scores
        )

    def select(self, robust_eval: str | None = None) -> RobustFairClassifier:
        """(Re)choose the best iterate under ``robust_eval`` (None: the ``robust_eval``
        parameter) without refitting. Sets the fitted attributes ``coef_``, ``intercept_``,
        ``best_index_``, ``robust_eval_`` and ``selection_status_``; the constructor parameter
        ``robust_eval`` is never changed (so ``clone`` and ``get_params`` stay truthful)."""
        check_is_fitted(self, "candidates_")
        robust_eval = self.robust_eval if robust_eval is None else robust_eval
        if robust_eval not in ROBUST_EVALS:
            raise ValueError(f"robust_eval must be one of {ROBUST_EVALS}; got {robust_eval!r}")
        self.robust_eval_ = robust_eval
        on_validation = self.validation_errors_ is not None
        objective = self.validation_errors_ if on_validation else self.candidate_errors_
        viol = (
            self.validation_violations_by_eval_
            if on_validation
            else self.candidate_violations_by_eval_
        )[robust_eval]
        if self.method == "unconstrained":
            best, status = int(np.argmin(objective)), "unconstrained"
        else:
            # a candidate no more accurate than predicting one class meets the rate constraints
            # (nearly) trivially: never preferred over one that is (then "fallback" says none
            # of those passed)
            constant = self.constant_errors_[1 if on_validation else 0]
            pool = np.flatnonzero(np.asarray(objective) < constant)
            if len(pool) == 0:
                pool = np.arange(len(objective))
            best = int(pool[select_best(objective[pool], viol[pool])])
            status = "feasible" if is_feasible(viol[pool]).any() else "fallback"
        self.candidate_violations_ = viol
        self.best_index_ = best
        self.selection_status_ = status
        self.coef_ = self.candidates_[best][:-1].copy()
        self.intercept_ = float(self.candidates_[best][-1])
        return self
