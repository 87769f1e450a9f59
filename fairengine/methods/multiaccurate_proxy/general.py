"""Algorithm 2 of Diana et al. 2022: a multiaccurate proxy over a general class G (regression
trees or linear functions), a game between a least-squares Learner and a Follow-the-Perturbed-
Leader Auditor; the pickle-free storage of its tree plays; what both proxy games share
(:class:`ProxyGame`) and the comparison proxies (:class:`BaselineProxy`). Tags as in
:mod:`~fairengine.methods.multiaccurate_proxy.auditor`.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils import check_consistent_length
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from fairengine.methods.multiaccurate_proxy.auditor import (
    Auditor,
    as_2d,
    audit,
    class_tasks,
    groups_to_fit,
    make_auditor,
)
from fairengine.methods.multiaccurate_proxy.knobs import KNOBS, PIPELINE_KNOBS
from fairengine.methods.params import (
    HasMethods,
    Interval,
    StrOptions,
    generator,
    knob_constraints,
    seed,
    validate_params,
)
from fairengine.methods.sensitive import sensitive_request
from fairengine.models import trees as tree_codec
from fairengine.solvers.least_squares import LeastSquares

LEARNERS = ("tree", "linear")


def _tree_arrays(tree: DecisionTreeRegressor, size: int, shift: float) -> np.ndarray:
    """A fitted regression tree as a (5, size) array: feature, threshold, left, right, value
    (value + ``shift``; unused slots are leaves of value 0) — exportable without pickle. The
    fields come from the shared codec :mod:`fairengine.models.trees`."""
    a = tree_codec.tree_arrays(tree)
    m = len(a["left"])
    out = np.zeros((5, size))
    out[2:4] = -1.0
    out[0, :m] = np.maximum(a["feature"], 0)
    out[1, :m] = a["threshold"]
    out[2, :m] = a["left"]
    out[3, :m] = a["right"]
    out[4, :m] = a["value"][:, 0] + shift
    return out


def predict_trees(X: np.ndarray, packed: np.ndarray) -> np.ndarray:
    """Mean prediction of trees stored by :func:`_tree_arrays`, shape (T, 5, size) → (n,),
    walked by the shared codec exactly as scikit-learn's ``predict`` (float32 features)."""
    X = np.asarray(X, float)
    if packed.size == 0:
        return np.zeros(len(X))
    n_trees, _, size = packed.shape
    offsets = (np.arange(n_trees) * size)[:, None]
    left, right = packed[:, 2].astype(np.int64), packed[:, 3].astype(np.int64)
    forest = {
        "roots": offsets.ravel(),
        "left": np.where(left >= 0, left + offsets, -1).ravel(),
        "right": np.where(right >= 0, right + offsets, -1).ravel(),
        "feature": packed[:, 0].astype(np.int64).ravel(),
        "threshold": packed[:, 1].ravel(),
        "value": packed[:, 4].ravel(),
    }
    return tree_codec.leaf_values(forest, X)[:, :, 0].mean(axis=1)


class ProxyGame(BaseEstimator):
    """What both proxy games share: ``fit``'s checks, ẑ and its audit. ``predict`` =
    :meth:`predict_proba` = ẑ (n, K), real-valued: it may leave [0, 1] (clipping would break the
    guarantee); no scikit-learn mixin, as ẑ is a soft group membership, judged by :func:`audit`
    rather than R²."""

    __metadata_request__fit = sensitive_request()

    def fit(
        self,
        X: np.ndarray,
        sensitive_features: np.ndarray | None = None,
        tasks: np.ndarray | None = None,
    ) -> ProxyGame:
        """Fit ẑ_k per group of the protected attribute ``sensitive_features`` (n,) or (n, K) (its
        y: a missing one gets the y check). ``tasks=None`` is the Section 5 mode (see
        :func:`class_tasks`)."""
        validate_params(self)
        X, z = validate_data(self, X, sensitive_features, multi_output=True, y_numeric=True)
        if tasks is not None:
            check_consistent_length(X, tasks)
        with threadpool_limits(limits=1, user_api="blas"):  # many small products
            X = np.asarray(X, float)
            return self._fit(X, as_2d(z), class_tasks(len(X)) if tasks is None else as_2d(tasks))

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """ẑ(x) (n, K): the linear part ``coef_`` plus the mean of the tree plays ``trees_``."""
        check_is_fitted(self, "coef_")
        X = np.asarray(validate_data(self, X, reset=False), float)
        linear = np.column_stack([X, np.ones(len(X))]) @ self.coef_.T
        if not hasattr(self, "trees_"):
            return linear
        return linear + np.column_stack([predict_trees(X, t) for t in self.trees_])

    def predict(self, X: np.ndarray) -> np.ndarray:
        """ẑ(x), as :meth:`predict_proba` (the proxy is a regression of z on x)."""
        return self.predict_proba(X)

    def audit(
        self,
        X: np.ndarray,
        z: np.ndarray,
        tasks: np.ndarray,
        **names: list[str] | None,
    ) -> pd.DataFrame:
        """:func:`audit` of this proxy's ẑ on rows ``X`` with true groups ``z``."""
        return audit(X, z, self.predict_proba(X), tasks, self.auditor, **names)


class GeneralMultiaccurateProxy(ProxyGame):
    """Multiaccurate proxy over a general class G, Algorithm 2 of Diana et al. 2022: per group,
    a zero-sum game between a least-squares Learner over G (depth-``max_depth`` regression trees
    or linear functions) and an Auditor playing Follow the Perturbed Leader over the error
    regions {h ≠ y_j}; the output is the average of the Learner's T plays. The round, the
    tolerance as a payoff offset, the mean constraint and the warm start: "Design notes" in
    ``docs/methods/multiaccurate_proxy.md``.

    Parameters
    ----------
    alpha : float
        Target ratio violation α (the additive tolerance α·mean(z_k) as a payoff offset).
    C : float
        Bound on the Auditor's multiplier.
    n_iter : int
        T, the rounds of the game.
    learner : {"tree", "linear"}
        The class G.
    max_depth : int
        Depth of the regression trees (the ``tree_depth`` knob).
    n_samples : int
        W, the perturbed leaders drawn per round.
    noise : float
        The FTPL scale 1/η_F, in units of 1/n per point.
    C0 : float
        Bound on the mean constraint's multiplier (without ``mean_projection``).
    mean_projection : bool
        Shift each play by a constant so Σg = Σz (default); else a perturbed λ_0.
    auditor : {"linear", "tree"} or Auditor
    auditor_depth : int
        Depth of the ``"tree"`` auditor.
    random_state : int, RandomState or None
        Seed of the perturbations and the trees.

    Attributes
    ----------
    coef_ : ndarray (K, d + 1)
        Average of the linear plays (zero for trees except the intercept of a complement).
    trees_ : ndarray (K, T, 5, size)
        The T tree plays per group (empty for ``learner="linear"``); ẑ_k = [x,1]·coef_k +
        mean_t tree_{k,t}(x).
    trace_ : ndarray (K, T)
        Max additive violation of the current average found by the deterministic auditor.
    """

    def __init__(
        self,
        alpha: float = 0.05,
        C: float = 10.0,
        n_iter: int = 100,
        learner: str = "tree",
        max_depth: int = 3,
        n_samples: int = 1,
        noise: float = 1.0,
        C0: float = 10.0,
        mean_projection: bool = True,
        auditor: str | Auditor = "linear",
        auditor_depth: int = 2,
        random_state: int | np.random.RandomState | None = 0,
    ) -> None:
        self.alpha, self.C, self.n_iter, self.learner = alpha, C, n_iter, learner
        self.max_depth, self.n_samples, self.noise, self.C0 = max_depth, n_samples, noise, C0
        self.mean_projection, self.auditor = mean_projection, auditor
        self.auditor_depth, self.random_state = auditor_depth, random_state

    _parameter_constraints: dict = knob_constraints(
        KNOBS,
        rename={"tree_depth": "max_depth"},
        skip=("proxy", "learning_rate", *PIPELINE_KNOBS),
        domains={
            "alpha": (0.0, None, "left"),
            "C": (0.0, None, "left"),
            "n_iter": (1, None, "left"),
            "max_depth": (1, None, "left"),
        },
        extra={
            "auditor": [HasMethods(["best", "csc"])],
            "learner": [StrOptions(set(LEARNERS))],
            "n_samples": [Interval(Integral, 1, None, closed="left")],
            "noise": [Interval(Real, 0, None, closed="neither")],
            "C0": [Interval(Real, 0, None, closed="left")],
            "mean_projection": ["boolean"],
            "auditor_depth": [Interval(Integral, 1, None, closed="left")],
            "random_state": ["random_state"],
        },
    )

    def _erm(self, X: np.ndarray, target: np.ndarray, rng: np.random.Generator):
        if self.learner == "linear":
            ls = LeastSquares(X, ridge=None)  # exact minimum-norm ERM
            theta = ls.coef(target)
            return theta, ls.design @ theta
        tree = DecisionTreeRegressor(
            max_depth=self.max_depth, random_state=int(rng.integers(2**31))
        ).fit(X, target)
        return tree, tree.predict(X)

    def _fit(self, X: np.ndarray, z: np.ndarray, tasks: np.ndarray) -> GeneralMultiaccurateProxy:
        rng = generator(self.random_state)  # an int seeds default_rng directly
        aud = make_auditor(self.auditor, self.auditor_depth, seed(self.random_state))
        fit_groups, scales = groups_to_fit(z)
        coefs, trees, traces = {}, {}, {}
        for k in fit_groups:
            game = self._game(X, z[:, k], tasks, aud, rng, self.alpha * scales[k])
            coefs[k], trees[k], traces[k] = game
        if len(fit_groups) < z.shape[1]:  # complement symmetry: ẑ_1 = 1 − ẑ_0
            coefs[1] = -coefs[0]
            coefs[1][-1] += 1.0
            flipped = trees[0].copy()
            flipped[:, 4] *= -1.0
            trees[1] = flipped
            traces[1] = traces[0]
        self.coef_ = np.array([coefs[k] for k in range(z.shape[1])])
        self.trees_ = np.array([trees[k] for k in range(z.shape[1])])
        self.trace_ = np.array([traces[k] for k in range(z.shape[1])])
        return self

    def _game(
        self,
        X: np.ndarray,
        zk: np.ndarray,
        tasks: np.ndarray,
        aud: Auditor,
        rng: np.random.Generator,
        eps: float,
    ) -> tuple[np.ndarray, np.ndarray, list[float]]:
        """One group's game, T rounds at additive tolerance ``eps``: (the average linear play,
        the tree plays (T, 5, size), the auditor's max additive violation of each average)."""
        n, m = tasks.shape
        size = 2 ** (self.max_depth + 1) - 1
        flip = 1.0 - 2.0 * tasks
        scale = self.noise / n
        ccum, bcum, v0 = np.zeros((n, m)), np.zeros(m), 0.0
        avg = np.zeros(n)
        theta_sum = np.zeros(X.shape[1] + 1)
        plays, trace = [], []
        for t in range(1, self.n_iter + 1):
            u = self._auditor_push(X, tasks, aud, rng, t, (ccum, bcum, eps))
            if not self.mean_projection:
                q = float(np.clip(0.5 + self.C0 * v0 / scale, 0.0, 1.0))
                u += n * self.C0 * (2 * q - 1) / zk.sum()
            model, g = self._erm(X, zk - u / 2, rng)
            shift = (zk.sum() - g.sum()) / n if self.mean_projection else 0.0
            g = g + shift
            if self.learner == "linear":
                model = model.copy()
                model[-1] += shift
                theta_sum += model
            else:
                plays.append(_tree_arrays(model, size, shift))
            resid = zk - g
            ccum += resid[:, None] * flip / n
            bcum += resid @ tasks / n
            v0 += g.sum() / zk.sum() - 1.0
            avg += (g - avg) / t
            found = aud.best(X, zk - avg, tasks)
            trace.append(max(abs(v) for v, _, _ in found))
        played = np.array(plays) if plays else np.zeros((0, 5, size))
        return theta_sum / self.n_iter, played, trace

    def _auditor_push(
        self,
        X: np.ndarray,
        tasks: np.ndarray,
        aud: Auditor,
        rng: np.random.Generator,
        t: int,
        state: tuple[np.ndarray, np.ndarray, float],
    ) -> np.ndarray:
        """Round ``t``'s Auditor: u (n,), minus the mean of the ``n_samples`` perturbed leaders'
        λ·1[h ≠ y_j] (FTPL over every task and sign; the null action λ = 0 scores −ξ'), from
        ``state`` = (Ccum, Bcum, ε_k). Round 1 is the warm start: no push, ERM(z)."""
        ccum, bcum, eps = state
        n, m = tasks.shape
        scale = self.noise / n
        u = np.zeros(n)
        # every (sample, task, sign) CSC of the round at once: one regression for all
        actions = [(j, sigma) for j in range(m) for sigma in (1, -1)] * self.n_samples
        xi = rng.uniform(0, scale, (n, len(actions)))
        diffs = np.column_stack([-sg * ccum[:, j] for j, sg in actions]) + xi
        fitted = aud.fit_costs(X, diffs) if aud.kind == "linear" else None
        for w in range(self.n_samples if t > 1 else 0):
            best_score, best_action = -rng.uniform(0, scale), None  # null action
            for a in range(w * 2 * m, (w + 1) * 2 * m):
                j, sigma = actions[a]
                pre = None if fitted is None else fitted[:, a]
                h = aud.csc(X, diffs[:, a], pre)
                score = (
                    sigma * (bcum[j] + h @ ccum[:, j])
                    - h @ xi[:, a]
                    - rng.uniform(0, scale)
                    - (t - 1) * eps
                )
                if score > best_score:
                    best_score, best_action = score, (sigma, j, h)
            if best_action is not None:
                sigma, j, h = best_action
                u -= sigma * self.C * np.abs(h - tasks[:, j]) / self.n_samples
        return u


#: The comparison proxies :class:`BaselineProxy` fits (``"true"`` is the caller's: it needs z).
BASELINES = ("regression", "thresholded", "constant")


class BaselineProxy(BaseEstimator):
    """Comparison proxies [OURS]: ``"regression"`` (logistic-regression probabilities ≈ E[z_k | x],
    one model per group), ``"thresholded"`` (1[P̂(z_k = 1 | x) > 0.5]) or ``"constant"``
    (ẑ_k ≡ mean(z_k)); the ``"true"`` proxy needs z and is the caller's. The interface of
    :class:`MultiaccurateProxy`; ``kind`` is validated in :meth:`fit`, ``random_state`` is handed to
    the logistic regressions.

    Attributes
    ----------
    mean_ : ndarray (K,)
        mean(z_k) on the fit rows.
    models_ : list
        Per group, the fitted ``LogisticRegression`` or, when z_k is constant on the fit rows,
        that constant (a float).
    """

    _parameter_constraints: dict = {
        "kind": [StrOptions(set(BASELINES))],
        "random_state": ["random_state"],
    }

    def __init__(
        self, kind: str = "regression", random_state: int | np.random.RandomState | None = 0
    ) -> None:
        self.kind, self.random_state = kind, random_state

    __metadata_request__fit = sensitive_request()

    def fit(self, X: np.ndarray, sensitive_features: np.ndarray | None = None) -> BaselineProxy:
        """Fit one model per group column of the protected attribute ``sensitive_features``
        (n,) or (n, K) (its y: a missing one gets the y check)."""
        validate_params(self)
        X, z = validate_data(self, X, sensitive_features, multi_output=True, y_numeric=True)
        z = as_2d(z)
        self.mean_ = z.mean(axis=0)
        self.models_ = []
        if self.kind in ("regression", "thresholded"):
            state = seed(self.random_state)
            for k in range(z.shape[1]):
                if z[:, k].min() == z[:, k].max():
                    self.models_.append(float(z[0, k]))
                else:
                    model = LogisticRegression(max_iter=500, C=1.0, random_state=state)
                    self.models_.append(model.fit(X, z[:, k].astype(int)))
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """ẑ(x) (n, K)."""
        check_is_fitted(self, "mean_")
        X = validate_data(self, X, reset=False)
        n = len(X)
        if self.kind == "constant":
            return np.tile(self.mean_, (n, 1))
        cols = [
            np.full(n, m) if isinstance(m, float) else m.predict_proba(X)[:, 1]
            for m in self.models_
        ]
        p = np.column_stack(cols)
        return (p > 0.5).astype(float) if self.kind == "thresholded" else p

    def predict(self, X: np.ndarray) -> np.ndarray:
        """ẑ(x), as :meth:`predict_proba`."""
        return self.predict_proba(X)
