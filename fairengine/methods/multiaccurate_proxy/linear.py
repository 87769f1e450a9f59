"""Algorithm 4 of Diana et al. 2022: the linear multiaccurate proxy, projected online gradient
descent against the auditor's best response, with the rows kept out of its game
(:mod:`~fairengine.methods.multiaccurate_proxy.held_out`) and its LP floor
(:mod:`~fairengine.methods.multiaccurate_proxy.floor`). Tags as in
:mod:`~fairengine.methods.multiaccurate_proxy.auditor`.
"""

from __future__ import annotations

import copy
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from fairengine.methods.multiaccurate_proxy.auditor import (
    Auditor,
    _as_2d,
    _auditor,
    _groups_to_fit,
    audit,
    class_tasks,
)
from fairengine.methods.multiaccurate_proxy.floor import _floor_lp
from fairengine.methods.multiaccurate_proxy.held_out import (
    _descending_chain,
    _held_out_certificate,
    _held_out_error,
    _project,
    _refit_start,
    _validation_split,
)
from fairengine.methods.multiaccurate_proxy.knobs import KNOBS
from fairengine.methods.params import (
    HasMethods,
    Interval,
    knob_constraints,
    seed,
    validate_params,
)
from fairengine.methods.sensitive import resolve_sensitive, sensitive_request
from fairengine.solvers.least_squares import LeastSquares

#: _ONE_THREAD [OURS]: the game loops do thousands of (n × d)·(d × few) products; multithreaded
#: BLAS gains nothing there and, on a loaded machine, oversubscription makes them slower, so
#: the fits run with one BLAS thread (numbers in bench/RESULTS.md).


#: Run outcomes of Algorithm 4 (``MultiaccurateProxy.status_``).
STATUSES = ("converged", "max_iter", "below_floor")


#: Knobs of the downstream pipeline and the page, not of a proxy estimator (its constructor
#: takes none of them, so its fit-time validation skips them).
_PIPELINE_KNOBS = (
    "task_mode",
    "constraint",
    "eps",
    "n_tasks",
    "max_rows",
    "grouping",
    "dl_learner",
    "dl_iter",
    "random_state",
)


class MultiaccurateProxy(BaseEstimator):
    """Linear multiaccurate proxy, Algorithm 4 (projected OGD vs the auditor's best response).

    A scikit-learn estimator (arguments stored verbatim, validated in :meth:`fit` from the
    ``multiaccurate_proxy`` knobs, ``clone`` / ``get_params`` / ``set_params``, ``NotFittedError``
    before fit, ``n_features_in_`` / ``feature_names_in_``). Its "target" is the group
    membership z; ``predict`` (= :meth:`predict_proba`) returns the real-valued proxy ẑ.

    Run separately for each group k [TEXT]. Learner: ẑ_k(x) = θ·[x, 1], online projected gradient
    descent on L(θ, λ) = MSE(θ) + λ·Σ_i (z_i − θ·x_i) 1[h(x_i) ≠ y_ij]/n, warm-started at OLS;
    output the average of the iterates [TEXT: "return an average over θ"]. Auditor: deterministic
    best response λ = σ·C on the most violated (h, j) [RECON]. With the spec's recommended
    changes [OURS, §3.1 REVIEW]: (1) tolerance ε_k = α·mean(z_k): λ = 0 when no violation exceeds
    ε_k; (2) the mean constraint Σẑ = Σz is enforced exactly after every step (then θ̄ satisfies
    it too), after the ℓ2-ball projection ‖θ‖ ≤ B.

    Geometry of the step [OURS, version 3]: the gradient is preconditioned by M⁻¹ with
    M = [X,1]ᵀ[X,1]/n, i.e. OGD in the empirical L2 metric of the proxy's values (mirror descent
    with the potential θᵀMθ/2). In that metric the MSE term is perfectly conditioned (Hessian 2I),
    the auditor's push moves ẑ by the projection of the error region onto span([X,1]), and the
    mean projection is the exact intercept shift ẑ ← ẑ + (Σz − Σẑ)/n. With plain Euclidean OGD
    on one-hot encoded data (Adult: 98 columns of very different scales) the step η₀/√t either
    barely moves the violations the auditor finds (η₀ ≤ 0.01: the trace stays flat) or makes
    the well-scaled directions oscillate (η₀ ≥ 0.1); the preconditioned step has one scale.
    ``learning_rate`` is η₀ of η_t = η₀/√t in this metric (default 0.05).

    α and what is returned [OURS; the paper: "stop early once the auditor's max violation on the
    training data is ≤ α"]: the game runs T rounds with the auditor always pushing (tolerance 0)
    — so its path θ_1 (the OLS start), …, θ_T and the average θ̄ is the same for every α, and one
    fit serves every α (:meth:`at_alpha`). Each candidate is judged by its max additive violation
    over *every* error region the auditor found during the run (a stricter certificate than
    the auditor's reply to that candidate alone). For α > 0 the returned proxy is the first
    kept candidate (in the order θ_1, …, θ_T, θ̄; see below) certified at ε_k = α·mean(z_k),
    else the last kept one; α = 0 returns the last kept one (the lowest α reached).

    Held-out rows [OURS]: a random ``validation`` share of the fit rows (default a quarter) is
    kept out of the game. The game's in-sample gains are partly the noise of its own rows fitted
    by the proxy (with ~100 encoded features and 2,000 rows, the auditor finds regions in that
    noise and the learner cancels them), and out of sample those steps *raise* the violation.
    So only a chain of candidates is kept: the OLS start, then each candidate whose violation is
    below every kept one's on the game's rows and, on the kept-out rows (over every region a
    fresh auditor finds there), by more than the standard error of a violation measured there
    (``kept_out_error_`` for the start; ``held_out.CHAIN_MARGIN``). Along the chain both fall, so a
    smaller α never gives a larger violation in sample or on the kept-out rows, and α acts
    exactly on ``alpha_range_`` = (the lowest α of a kept candidate, the α of the OLS start):
    above it the proxy is OLS, below it no kept candidate is certified. When no round lowers the
    kept-out violation by that much, the range is a single point: the OLS start, refitted on
    every fit row (``refitted_``), is served for every α. On the bundled data (Adult race and
    sex, COMPAS, Bank; 2,000 to all training rows; bench ``multiaccurate_proxy_rows``), no
    candidate of the game has, on average, a lower violation on other rows than the OLS start: least
    squares is already about as multiaccurate out of sample as this class gets (Claim 2's
    E[z|x] is a perfect proxy), and the game's in-sample gains are its own rows' noise. So on
    these data α usually has a single value, and the run says so.
    Why the always-pushing path: with the auditor's tolerance in the game, every α below what
    linear G reaches in T rounds ran the identical T rounds and returned the identical θ̄ (the
    tolerance never bites before the cap), and α above the OLS start stopped at round 1 — α was
    inert on most of its range. ``status_`` says which case holds:

    * ``"converged"``: the returned proxy is certified at ε_k on the fit rows;
    * ``"below_floor"``: no candidate is certified, and the LP floor of linear G over the audit
      vectors found (:func:`multiaccuracy_floor`, a *lower bound* on what any linear proxy can
      reach against them, so never above the returned proxy's value on them) exceeds ε_k;
    * ``"max_iter"``: no candidate certified, floor not proven above ε_k (more rounds or a
      larger C may help).

    Two groups that partition the data (z_1 = 1 − z_0, e.g. White vs non-White) are fitted
    once: 1 − ẑ_0 satisfies the mean and numerator constraints of group 1 exactly when ẑ_0 does
    for group 0 (complement symmetry), so θ_1 = e_intercept − θ_0, with the additive
    tolerance of the smaller group, ε = α·min_k mean(z_k) [OURS].

    ``fit(X, z, tasks=None)`` is Section 5 [TEXT + RECON]: a proxy for a whole class of labelling
    functions, multiaccurate over the auditor's class itself (:func:`class_tasks`).

    Parameters
    ----------
    alpha : float
        Target ratio violation α (fed in as the additive tolerance α·mean(z_k)).
    C : float
        Dual bound on the numerator multipliers (≳ the optimal dual norm).
    n_iter : int
        T, the maximum number of rounds of the game.
    learning_rate : float
        η_0 in η_t = η_0/√t (in the preconditioned metric, see above).
    auditor : {"linear", "tree"} or Auditor
    radius : float
        B, the radius of Θ.
    random_state : int, RandomState or None
        Seed of the tree auditor (scikit-learn's ``random_state`` conventions).
    auditor_depth : int
        Depth of the ``"tree"`` auditor.
    precondition : bool
        Use the M⁻¹ metric (default); False is the spec's plain Euclidean OGD.
    early_stop : bool
        Return the first certified candidate (default). False returns θ̄ after T rounds whatever
        α is (version 2's output, with ``precondition=False, learning_rate=0.01, validation=0``).
    validation : float
        Share of the fit rows kept out of the game to judge its candidates (0: none, every
        candidate whose in-sample violation falls is kept). Not used with a ``"finite"`` auditor.

    Attributes
    ----------
    coef_ : ndarray (K, d + 1)
        θ_k per group (last column: intercept): θ̄_k, or the certified iterate on early stop.
    trace_ : ndarray (K, T)
        The auditor's max additive violation of each iterate (NaN after the returned one).
    n_iter_ : ndarray (K,)
        Rounds up to the returned candidate (T for θ̄).
    violation_ : ndarray (K,)
        The auditor's max additive violation of the returned proxy on the fit rows.
    tolerance_ : ndarray (K,)
        ε_k (from ``alpha_``).
    alpha_ : float
        The α served: ``alpha``, or the lowest reached when ``alpha`` is 0.
    alpha_range_ : (float, float)
        The α on which the returned proxy changes (see above), ratio units.
    held_out_range_ : (float, float)
        The kept-out rows' violation (ratio units) at the two ends of ``alpha_range_`` (for a
        refitted start: that of the start fitted on the game's rows, which they judged).
    held_out_ratio_ : float
        The returned proxy's violation on the kept-out rows (ratio units; 0 without them).
    kept_out_error_ : float
        The standard error of the start's violation on the kept-out rows (ratio units): what a
        kept candidate's must fall by.
    refitted_ : bool
        Only the start was kept and rows were kept out: it was refitted on every fit row.
    n_alpha_steps_ : int
        Candidates kept (1: α has a single value).
    n_validation_ : int
        Rows kept out of the game.
    reached_ratio_ : float
        The returned proxy's α: max_k reached_k / mean(z_k) (ratio units).
    status_ : str
        The worst status over the groups (see above); ``status_by_group_`` per group.
    floor_, reached_ : ndarray (K,)
        Over the distinct audit vectors 1[h ≠ y_j] the auditor found during the run (every
        task's best response to every candidate): the LP floor of linear G (
        computed only when α is not certified, else NaN) and the returned θ's max additive
        violation on them (floor ≤ reached always). The floor is a lower bound on the floor
        over all of H: with fewer vectors than parameters it is ≈ 0 and proves nothing.
    """

    def __init__(
        self,
        alpha: float = 0.05,
        C: float = 10.0,
        n_iter: int = 200,
        learning_rate: float = 0.05,
        auditor: str = "linear",
        radius: float = 10.0,
        random_state: int = 0,
        auditor_depth: int = 2,
        precondition: bool = True,
        early_stop: bool = True,
        validation: float = 0.25,
    ) -> None:
        self.alpha, self.C, self.n_iter = alpha, C, n_iter
        self.learning_rate, self.auditor, self.radius = learning_rate, auditor, radius
        self.random_state, self.auditor_depth = random_state, auditor_depth
        self.precondition, self.early_stop = precondition, early_stop
        self.validation = validation

    _parameter_constraints: dict = knob_constraints(
        KNOBS,
        skip=("proxy", "tree_depth", *_PIPELINE_KNOBS),
        domains={
            "alpha": (0.0, None, "left"),
            "C": (0.0, None, "left"),
            "n_iter": (1, None, "left"),
            "learning_rate": (0.0, None, "neither"),
        },
        extra={
            "auditor": [HasMethods(["best"])],
            "radius": [Interval(Real, 0, None, closed="neither")],
            "random_state": ["random_state"],
            "auditor_depth": [Interval(Integral, 1, None, closed="left")],
            "precondition": ["boolean"],
            "early_stop": ["boolean"],
            "validation": [Interval(Real, 0, 1, closed="left")],
        },
    )

    __metadata_request__fit = sensitive_request("z")

    def fit(
        self,
        X: np.ndarray,
        z: np.ndarray | None = None,
        tasks: np.ndarray | None = None,
        *,
        sensitive_features: np.ndarray | None = None,
    ) -> MultiaccurateProxy:
        """Fit θ_k per group of the protected attribute ``sensitive_features`` (``z`` is its
        older name). ``tasks=None`` is the Section 5 mode (see :func:`class_tasks`)."""
        z = resolve_sensitive(
            sensitive_features, z, "z", required=False
        )  # z is its y: a missing z gets the y check
        validate_params(self)
        X, z = validate_data(self, X, z, multi_output=True, y_numeric=True)
        with threadpool_limits(limits=1, user_api="blas"):  # many small products: _ONE_THREAD
            return self._fit(X, z, tasks)

    def _fit(self, X: np.ndarray, z: np.ndarray, tasks: np.ndarray | None) -> MultiaccurateProxy:
        X = np.asarray(X, float)
        z = _as_2d(z)
        tasks = class_tasks(len(X)) if tasks is None else _as_2d(tasks)
        aud = _auditor(self.auditor, self.auditor_depth, seed(self.random_state))
        # a finite H is given by its labellings of these very rows: it cannot be split
        share = 0.0 if aud.kind == "finite" else self.validation
        game_rows, check_rows = _validation_split(len(X), share, seed(self.random_state))
        check = (X[check_rows], z[check_rows], tasks[check_rows])
        every_row = (np.column_stack([X, np.ones(len(X))]), z)
        X, z, tasks = X[game_rows], z[game_rows], tasks[game_rows]
        n = len(X)
        Xa = np.column_stack([X, np.ones(n)])
        fit_groups, scales = _groups_to_fit(z)
        metric = Xa.T @ Xa / n
        metric[np.diag_indices_from(metric)] += 1e-8 * np.trace(metric) / len(metric)
        inverse = np.linalg.inv(metric) if self.precondition else None
        paths = {}
        for k in fit_groups:
            path, trace, seen = self._game(Xa, X, z[:, k], tasks, aud, inverse)
            found = aud.best(X, z[:, k] - Xa @ path[-1], tasks)  # the average's own audit
            for j, (_, _, h) in enumerate(found):
                errors = np.abs(h - tasks[:, j])
                seen.setdefault(np.packbits(errors.astype(bool)).tobytes(), errors)
            vectors = np.array(list(seen.values()))
            region_x, region_z = vectors @ Xa / n, vectors @ z[:, k] / n
            paths[k] = {
                "path": path,
                "trace": np.array(trace + [max(abs(v) for v, _, _ in found)]),
                # every candidate's max additive violation over every error region found
                "audited": np.max(np.abs(region_z[:, None] - region_x @ path.T), axis=0),
                "held_out": _held_out_certificate(path, check, k, aud),  # (violations, z − ẑ)
                "regions": (region_x, region_z, Xa.sum(axis=0), float(z[:, k].sum())),
            }
        self.paths_, self.scales_ = paths, scales
        self.n_groups_ = z.shape[1]
        self.n_validation_ = int(len(check_rows))
        self._keep_chain(fit_groups, every_row)
        return self._select(self.alpha)

    def _keep_chain(self, fit_groups: list[int], every_row: tuple[np.ndarray, np.ndarray]) -> None:
        """The chain of kept candidates and α's range (see the class notes). When only the
        least-squares start is kept and rows were kept out of the game, the start is refitted
        on every fit row ``every_row`` = ([X, 1], z): the game's steps are not used, so the
        kept-out rows have done their job and the start is better fitted on all of them."""
        paths, scales = self.paths_, self.scales_
        scale = np.array([scales[k] for k in fit_groups])
        held = np.array([paths[k]["held_out"][0] for k in fit_groups])
        held = np.max(held / scale[:, None], axis=0) if held.size else np.zeros(0)
        residuals = np.array([paths[k].pop("held_out")[1] for k in fit_groups])
        residuals = residuals / scale[:, None, None]

        def ratios() -> np.ndarray:  # α of each candidate; it serves α iff every group's does
            audited = np.array([paths[k]["audited"] for k in fit_groups])
            return np.max(audited / scale[:, None], axis=0)

        ratio = ratios()
        self.kept_out_error_ = _held_out_error(residuals, 0)
        self._chain = (
            _descending_chain(ratio, held, residuals) if self.early_stop else [len(ratio) - 1]
        )
        self.refitted_ = self._chain == [0] and self.n_validation_ > 0
        if self.refitted_:
            for k in fit_groups:
                Xa, zk = every_row[0], every_row[1][:, k]
                _refit_start(paths[k], Xa, zk, self.radius, self.precondition)
            ratio = ratios()
        self._candidate_ratio = ratio
        self._candidate_held_out = held if held.size else np.zeros(len(ratio))
        held = self._candidate_held_out
        chosen = ratio[self._chain]
        # α acts on [lowest α of a kept candidate, α of the OLS start]: above, the proxy is OLS
        self.alpha_range_ = (float(chosen.min()), float(chosen[0]))
        self.held_out_range_ = (float(held[self._chain[-1]]), float(held[self._chain[0]]))
        self.n_alpha_steps_ = len(self._chain)

    def at_alpha(self, alpha: float) -> MultiaccurateProxy:
        """This fit's proxy for another α, without refitting: the game's path does not depend
        on α (see the class notes), only which candidate on it is returned."""
        check_is_fitted(self, "paths_")
        other = copy.copy(self)
        other.alpha = alpha
        return other._select(alpha)

    def lp_floor(self) -> np.ndarray:
        """Per group, the LP floor of linear G over the error regions found during the fit
        (:func:`multiaccuracy_floor`; computed on demand — ``floor_`` holds it only when α was
        not certified). Never above ``reached_``."""
        check_is_fitted(self, "paths_")
        groups = sorted(self.paths_)
        floors = {k: _floor_lp(*self.paths_[k]["regions"])[0] for k in groups}
        return np.array([floors.get(k, floors[groups[0]]) for k in range(self.n_groups_)])

    def _select(self, alpha: float) -> MultiaccurateProxy:
        """Pick the candidate for ``alpha`` and set the fitted attributes (see the class notes)."""
        ratio, chain = self._candidate_ratio, self._chain
        groups = sorted(self.paths_)
        # the kept candidates' violations fall along the chain, in sample and held out
        hits = [i for i in chain if ratio[i] <= alpha * (1 + 1e-9)] if alpha > 0 else []
        pick = hits[0] if hits else chain[-1]
        target = alpha if alpha > 0 else float(ratio[pick])
        out: dict[str, dict[int, object]] = {
            key: {} for key in ("coef", "trace", "floor", "reached", "viol", "rounds", "status")
        }
        for k in groups:
            entry = self.paths_[k]
            eps = target * self.scales_[k]
            reached = float(entry["audited"][pick])
            converged = reached <= eps * (1 + 1e-9)
            floor = np.nan if converged else _floor_lp(*entry["regions"])[0]
            rounds = min(pick + 1, self.n_iter)
            trace = entry["trace"][: self.n_iter].astype(float)
            trace[rounds:] = np.nan
            status = "converged" if converged else ("below_floor" if floor > eps else "max_iter")
            values = (entry["path"][pick], trace, floor, reached,
                      float(entry["trace"][pick]), rounds, status)  # fmt: skip
            for key, value in zip(out, values, strict=True):
                out[key][k] = value
        if len(groups) < self.n_groups_:  # complement symmetry: ẑ_1 = 1 − ẑ_0
            for key in out:
                out[key][1] = out[key][0]
            out["coef"][1] = -out["coef"][0]
            out["coef"][1][-1] += 1.0
        every = range(self.n_groups_)
        self.coef_ = np.array([out["coef"][k] for k in every])
        self.trace_ = np.array([out["trace"][k] for k in every], float)
        self.floor_ = np.array([out["floor"][k] for k in every], float)
        self.reached_ = np.array([out["reached"][k] for k in every], float)
        self.violation_ = np.array([out["viol"][k] for k in every], float)
        self.n_iter_ = np.array([out["rounds"][k] for k in every], int)
        scales = [self.scales_.get(k, self.scales_[groups[0]]) for k in every]
        self.tolerance_ = np.array([target * s for s in scales])
        self.alpha_ = target
        self.reached_ratio_ = float(self._candidate_ratio[pick])
        self.held_out_ratio_ = float(self._candidate_held_out[pick])
        self.status_by_group_ = [str(out["status"][k]) for k in every]
        self.status_ = max(self.status_by_group_, key=_severity)
        return self

    def _game(
        self,
        Xa: np.ndarray,
        X: np.ndarray,
        zk: np.ndarray,
        tasks: np.ndarray,
        aud: Auditor,
        inverse: np.ndarray | None,
    ) -> tuple[np.ndarray, list[float], dict[bytes, np.ndarray]]:
        """One group's game, T rounds: (the iterates θ_1..θ_T and their average θ̄ as rows,
        the auditor's max additive violation of each iterate, the audit vectors seen)."""
        n = len(zk)
        target = zk.sum()
        s = Xa.sum(axis=0)

        def project(theta: np.ndarray) -> np.ndarray:
            return _project(theta, self.radius, (s, target, n), inverse is not None)

        theta = project(LeastSquares(Xa, intercept=False, ridge=None).coef(zk))
        path: list[np.ndarray] = []
        trace: list[float] = []
        seen: dict[bytes, np.ndarray] = {}
        for t in range(1, self.n_iter + 1):
            g = Xa @ theta
            found = aud.best(X, zk - g, tasks)
            values = [abs(v) for v, _, _ in found]
            for j, (_, _, h) in enumerate(found):
                errors = np.abs(h - tasks[:, j])
                seen.setdefault(np.packbits(errors.astype(bool)).tobytes(), errors)
            trace.append(max(values))
            path.append(theta)
            j = int(np.argmax(values))
            viol, _, h = found[j]
            # the auditor always pushes (tolerance 0): the path is the same for every α
            grad = (2.0 / n) * (Xa.T @ (g - zk))
            if abs(viol) > 0:
                errors = np.abs(h - tasks[:, j])
                grad -= np.sign(viol) * self.C * (Xa.T @ errors) / n
            if inverse is not None:
                grad = inverse @ grad
            theta = project(theta - self.learning_rate / np.sqrt(t) * grad)
        path.append(np.mean(path, axis=0))
        return np.array(path), trace, seen

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """ẑ(x) (n, K): real-valued, may leave [0, 1] (clipping would break the guarantee)."""
        check_is_fitted(self, "coef_")
        X = np.asarray(validate_data(self, X, reset=False), float)
        return np.column_stack([X, np.ones(len(X))]) @ self.coef_.T

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
        return audit(X, z, self.predict_proba(X), tasks, self.auditor, **names)


def _severity(status: str) -> int:
    return STATUSES.index(status)
