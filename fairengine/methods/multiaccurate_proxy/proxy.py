"""Multiaccurate proxies (Diana et al. 2022): the α-proxy audit, Algorithms 4 and 2, Section 5, the
LP
floor of linear G, and the comparison proxies.

Diana, Gill, Kearns, Kenthapadi, Roth & Sharifi-Malvajerdi, "Multiaccurate Proxies for Downstream
Fairness", FAccT 2022. The seed text is truncated and its math stripped; the formulas below follow
``shared/specs/004_multiaccurate_proxies.md`` and carry its tags: [TEXT] stated in the paper,
[RECON] reconstructed by the spec, [OURS] a fairengine design choice.

Contents: :class:`Auditor` (CSC(H) heuristics), :func:`audit` (Definition 1),
:class:`MultiaccurateProxy` (Algorithm 4, linear G, with an additive tolerance and a mean
constraint),
:class:`GeneralMultiaccurateProxy` (Algorithm 2, FTPL auditor + least-squares trees),
:func:`class_tasks` (Section 5: a proxy for a whole class of labelling functions),
:func:`multiaccuracy_floor` (LP floor of linear G [OURS]), :class:`BaselineProxy`.

Notation: ``X`` (n, d) encoded features, ``z`` (n, K) true 0/1 group memberships, ``tasks``
(n, m) 0/1 labels of m downstream tasks, ``zhat`` (n, K) real-valued proxy.
"""

from __future__ import annotations

import copy
from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy.optimize import linprog
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn.utils import check_consistent_length
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from fairengine.methods.multiaccurate_proxy.held_out import (
    _descending_chain,
    _held_out_certificate,
    _held_out_error,
    _project,
    _refit_start,
    _validation_split,
)
from fairengine.methods.multiaccurate_proxy.knobs import (  # noqa: F401 (PROXIES: re-export)
    AUDITORS,
    KNOBS,
    PROXIES,
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
from fairengine.metrics import proxy_accuracy, proxy_auc, proxy_mse
from fairengine.models import trees as tree_codec
from fairengine.solvers.least_squares import LeastSquares
from fairengine.solvers.oracles import best_intercept

#: _ONE_THREAD [OURS]: the game loops do thousands of (n × d)·(d × few) products; multithreaded
#: BLAS gains nothing there and, on a loaded machine, oversubscription made them ~3× slower
#: (measured on 2 shared cores), so the fits run with one BLAS thread.


def group_error_rate(weights: np.ndarray, errors: np.ndarray) -> float:
    """Claim 1 [RECON]: Pr[h ≠ y | z_k = 1] = E[z_k e] / E[z_k]; defined for real weights too.

    Examples
    --------
    >>> group_error_rate(np.array([0.9, 0.6, 0.1]), np.array([0.0, 1.0, 0.0]))
    0.375
    """
    weights = np.asarray(weights, float)
    total = weights.sum()
    return float(weights @ np.asarray(errors, float) / total) if total > 0 else float("nan")


def ratio_violation(z: np.ndarray, zhat: np.ndarray, errors: np.ndarray) -> float:
    """Definition 1 [RECON]: |γ_k(z) − γ_k(ẑ)| for one group and one error vector."""
    return abs(group_error_rate(z, errors) - group_error_rate(zhat, errors))


def _as_2d(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, float)
    return a[:, None] if a.ndim == 1 else a


class Auditor:
    """Heuristic CSC(H) best response over error regions {x : h(x) ≠ y_j}.

    For residual r = z_k − ẑ_k the additive violation of h on task j is
    viol_j(h) = b_j + Σ_i h_i c_ij with b_j = Σ r_i y_ij / n and c_ij = r_i (1 − 2 y_ij) / n
    [RECON, Eq. (7)]. For each sign σ the auditor maximises σ·viol_j with

    * ``"linear"`` [OURS]: the Kearns et al. regression heuristic — a least-squares
      fit of c_j on x (pseudo-inverse cached once) — followed by the exact best threshold of the
      fitted score (:func:`~fairengine.solvers.oracles.best_intercept`), so halfspaces;
    * ``"tree"`` [OURS]: a weighted depth-``depth`` decision tree on the reduction
      label 1[cost < 0], weight |cost|.

    * ``"finite"`` [OURS, for tests and small problems]: exact brute force over
      the columns of ``candidates`` (n, |H|), a finite H given by its labellings.

    The constants h ≡ 0 and h ≡ 1 are always candidates (the best-threshold step includes them).
    The result is a lower bound on the true maximum over H (heuristic oracle), exact for
    ``"finite"``.

    Not a scikit-learn estimator, deliberately: it has no ``fit`` and learns nothing from data
    that a later ``predict`` would use. It is a stateless best-response *oracle* (its only state
    is a cache of the least-squares factorisation of the last X it saw) that the proxies call
    once per round with a new residual, and that they take as their ``auditor`` parameter
    (an :class:`Auditor` instance or its ``kind`` string). Its arguments are therefore checked
    at construction, where a wrong ``kind`` or a ``"finite"`` auditor without candidates is an
    immediate error.
    """

    def __init__(
        self,
        kind: str = "linear",
        depth: int = 2,
        random_state: int = 0,
        candidates: np.ndarray | None = None,
    ) -> None:
        if kind not in (*AUDITORS, "finite"):
            raise ValueError(f"auditor must be one of {AUDITORS}; got {kind!r}")
        if kind == "finite" and candidates is None:
            raise ValueError("the 'finite' auditor needs candidates (n, |H|)")
        self.kind, self.depth, self.random_state = kind, depth, random_state
        self.candidates = candidates
        self._least_squares: LeastSquares | None = None
        self._X: np.ndarray | None = None

    def _design(self, X: np.ndarray) -> LeastSquares:
        """The least-squares kernel on [X, 1] (slightly ridged Gram, factorised once), cached
        per X."""
        if self._X is not X or self._least_squares is None:
            self._X = X
            self._least_squares = LeastSquares(X, ridge=1e-8)
        return self._least_squares

    def csc(
        self,
        X: np.ndarray,
        diff: np.ndarray,
        fitted: np.ndarray | None = None,
        order: np.ndarray | None = None,
    ) -> np.ndarray:
        """CSC(H) heuristic: h ∈ {0,1}^n (approximately) minimising Σ_i h_i ``diff``_i.

        ``fitted`` (the regression fit of ``diff`` on [x, 1]) may be passed in when the caller
        already has it (one matrix product for many cost vectors), and with it ``order``, the
        descending order of −``fitted`` (the linear auditor's score)."""
        n = len(diff)
        ones = np.ones(n)
        if self.kind == "finite":
            pool = np.column_stack([self.candidates, np.zeros(n), ones])
            return pool[:, int(np.argmin(diff @ pool))].astype(float)
        if self.kind == "linear":
            score = -(fitted if fitted is not None else self._fit(X, diff[:, None])[:, 0])
            return (score + best_intercept(score, ones, diff, order) > 0).astype(float)
        label = (diff < 0).astype(int)
        if label.min() == label.max():
            h = label.astype(float)
        else:
            tree = DecisionTreeClassifier(max_depth=self.depth, random_state=self.random_state)
            h = tree.fit(X, label, sample_weight=np.abs(diff) * n).predict(X).astype(float)
        return min((h, np.zeros(n), ones), key=lambda c: float(c @ diff))

    def _fit(self, X: np.ndarray, costs: np.ndarray) -> np.ndarray:
        """Least-squares fit of each cost column on [x, 1] (the regression heuristic)."""
        return self._design(X).fitted(costs)

    def best(self, X: np.ndarray, r: np.ndarray, tasks: np.ndarray) -> list[tuple]:
        """Per task j: (signed viol, σ, h) of the most violated error region found."""
        n = len(r)
        tasks = _as_2d(tasks)
        cost = r[:, None] * (1.0 - 2.0 * tasks) / n
        base = r @ tasks / n
        fitted = self._fit(X, cost) if self.kind == "linear" else None
        out = []
        for j in range(tasks.shape[1]):
            best = (0.0, 1, np.zeros(n))
            # one sort per task: the score of σ = −1 is minus that of σ = +1
            ascending = None if fitted is None else np.argsort(fitted[:, j], kind="stable")
            for sigma in (1, -1):
                diff = -sigma * cost[:, j]  # CSC cost of labelling 1 (maximise σ·viol)
                pre = None if fitted is None else -sigma * fitted[:, j]
                order = (
                    None if ascending is None else (ascending if sigma == -1 else ascending[::-1])
                )
                h = self.csc(X, diff, pre, order)
                viol = float(base[j] + h @ cost[:, j])
                if abs(viol) > abs(best[0]):
                    best = (viol, sigma, h)
            out.append(best)
        return out


def audit(
    X: np.ndarray,
    z: np.ndarray,
    zhat: np.ndarray,
    tasks: np.ndarray,
    auditor: str | Auditor = "linear",
    group_names: list[str] | None = None,
    task_names: list[str] | None = None,
) -> pd.DataFrame:
    """The α-proxy audit (Definition 1, in-sample): one row per (group, task).

    Columns: ``additive`` (max |Σ(z−ẑ)1[h≠y]|/n found), ``true_rate`` / ``proxy_rate`` (γ_k of
    that h from z and from ẑ), ``violation`` (their absolute gap, the ratio violation), and
    ``mean_gap`` (Σẑ/Σz − 1). The maximum over h is a heuristic lower bound.
    """
    z, zhat, tasks = _as_2d(z), _as_2d(zhat), _as_2d(tasks)
    aud = auditor if isinstance(auditor, Auditor) else Auditor(auditor)
    group_names = group_names or [str(k) for k in range(z.shape[1])]
    task_names = task_names or [f"task{j}" for j in range(tasks.shape[1])]
    rows = []
    for k in range(z.shape[1]):
        found = aud.best(X, z[:, k] - zhat[:, k], tasks)
        for j, (viol, _, h) in enumerate(found):
            # check both constants too, in ratio units (the auditor maximises additive units)
            best = None
            for cand in (h, np.zeros(len(h)), np.ones(len(h))):
                err = np.abs(cand - tasks[:, j])
                t, p = group_error_rate(z[:, k], err), group_error_rate(zhat[:, k], err)
                # an empty proxy group (Σẑ_k ≤ 0) has no rate: count it as the worst gap, 1
                gap = abs(t - p) if zhat[:, k].sum() > 0 else 1.0
                if best is None or gap > best[2]:
                    best = (t, p, gap)
            total = z[:, k].sum()
            rows.append(
                {
                    "group": group_names[k],
                    "task": task_names[j],
                    "additive": abs(viol),
                    "true_rate": best[0],
                    "proxy_rate": best[1],
                    "violation": best[2],
                    "mean_gap": zhat[:, k].sum() / total - 1 if total > 0 else np.nan,
                }
            )
    return pd.DataFrame(rows)


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
    every fit row (``refitted_``), is served for every α. Measured on the bundled data (Adult
    race and sex, COMPAS, Bank; 2,000 to all training rows, split seeds 421–430), no candidate
    of the game has, on average, a lower violation on other rows than the OLS start: least
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
        with threadpool_limits(limits=1, user_api="blas"):  # many small products: see _ONE_THREAD
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


def proxy_quality(z: np.ndarray, zhat: np.ndarray) -> dict[str, float]:
    """How well ẑ_k *predicts* z_k [OURS]: accuracy of 1[ẑ > 0.5], AUC of ẑ
    and mean squared error — the quantities a classification proxy optimises, which the paper
    argues are not what downstream fairness needs — and ``share``, the fraction with ẑ > 0.5
    (a thresholded proxy that labels almost nobody acts like the constant proxy)."""
    z, zhat = np.asarray(z, float), np.asarray(zhat, float)
    return {
        "accuracy": proxy_accuracy(z, zhat),
        "auc": proxy_auc(z, zhat),
        "mse": proxy_mse(z, zhat),
        "share": float(np.mean(zhat > 0.5)),
    }


def class_tasks(n: int) -> np.ndarray:
    """Section 5 [TEXT + RECON]: no task labels, one all-zero column.

    With f ≡ 0 the error region of h is {h(x) = 1}, so the numerator constraints become plain
    multiaccuracy Σ_i (z_i − ẑ_i) c(x_i) = 0 over the auditor's class C. The paper needs
    C = H ⊕ F (error regions of every h ∈ H against every f ∈ F); [OURS] a depth-d tree auditor
    stands in for H ⊕ F (an XOR of two depth-⌊d/2⌋ trees is a depth-d tree; with halfspaces it
    is a heuristic), and the halfspace auditor gives C = H, i.e. F ∋ f ≡ 0 and statistical-parity
    multiaccuracy.
    """
    return np.zeros((n, 1))


def _auditor(auditor: str | Auditor, depth: int, random_state: int) -> Auditor:
    if isinstance(auditor, Auditor):
        return auditor
    return Auditor(auditor, depth=depth, random_state=random_state)


def _groups_to_fit(z: np.ndarray) -> tuple[list[int], dict[int, float]]:
    """Groups to learn and their tolerance per unit of α: ε_k = α·mean(z_k);
    a complementary pair (z_0 + z_1 ≡ 1) learns group 0 only, at the tighter tolerance."""
    means = z.mean(axis=0)
    if z.shape[1] == 2 and np.allclose(z.sum(axis=1), 1.0):
        return [0], {0: float(means.min())}
    return list(range(z.shape[1])), {k: float(means[k]) for k in range(z.shape[1])}


def multiaccuracy_floor(
    X: np.ndarray,
    z: np.ndarray,
    vectors: np.ndarray,
) -> tuple[float, np.ndarray]:
    """The feasibility floor of linear G [OURS]: the LP

    min_θ max_a |a·(z − [X, 1]θ)|/n  s.t.  Σ_i [x_i, 1]·θ = Σ_i z_i

    over the audit vectors ``vectors`` (rows a ∈ {0,1}^n, e.g. a = 1[h ≠ y_j] for a finite H).
    Returns (the minimal max additive violation, θ). No linear proxy does better on these
    vectors; Algorithm 4 with a large C approaches it.
    """
    X, z = np.asarray(X, float), np.asarray(z, float)
    n = len(X)
    Xa = np.column_stack([X, np.ones(n)])
    A = np.asarray(vectors, float)
    return _floor_lp(A @ Xa / n, A @ z / n, Xa.sum(axis=0), float(z.sum()))


def _floor_lp(
    region_x: np.ndarray, region_z: np.ndarray, s: np.ndarray, total: float
) -> tuple[float, np.ndarray]:
    """:func:`multiaccuracy_floor` from the regions' moments: min_θ max_a |b_a − M_a·θ| s.t.
    s·θ = total, with M = A[X, 1]/n, b = Az/n, s = Σ_i [x_i, 1]."""
    d = region_x.shape[1]
    # variables (θ, t): minimise t with ±(b − Mθ) ≤ t
    c = np.append(np.zeros(d), 1.0)
    ones = np.ones((len(region_x), 1))
    a_ub = np.vstack([np.hstack([-region_x, -ones]), np.hstack([region_x, -ones])])
    b_ub = np.concatenate([-region_z, region_z])
    a_eq = np.append(s, 0.0)[None, :]
    bounds = [(None, None)] * d + [(0, None)]
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[total], bounds=bounds, method="highs")
    if res.status != 0:
        raise ValueError(f"floor LP failed: {res.message}")
    return float(res.x[-1]), res.x[:d]


# ---------------------------------------------------------------- Algorithm 2 (general G)

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


class GeneralMultiaccurateProxy(BaseEstimator):
    """Multiaccurate proxy over a general class G, Algorithm 2 [RECON].

    A scikit-learn estimator, like :class:`MultiaccurateProxy` (arguments stored verbatim,
    validated in :meth:`fit` from the ``multiaccurate_proxy`` knobs — ``alpha``, ``C``,
    ``n_iter``, ``auditor`` and ``max_depth`` (the ``tree_depth`` knob) — ``clone`` /
    ``get_params`` / ``set_params``, ``NotFittedError`` before fit, ``n_features_in_`` /
    ``feature_names_in_``, ``random_state`` through :func:`~sklearn.utils.check_random_state`
    conventions: an integer seeds the same draws as before). No mixin [OURS]: the "target" is the
    group membership z (n, K) and ``predict`` (= :meth:`predict_proba`) returns the real-valued
    proxy ẑ, which may leave [0, 1] — not class labels (ClassifierMixin), and R² (RegressorMixin's
    ``score``) is not what a proxy is judged by (:func:`audit`, :func:`proxy_quality`).

    A zero-sum game per group k between a Learner (ERM(G) = least squares over G, here
    depth-``max_depth`` regression trees or linear functions) who best responds to the Auditor's
    empirical mixture, and an Auditor who plays Follow the Perturbed Leader over the error regions
    {h ≠ y_j} (h ∈ H via the CSC heuristic of :class:`Auditor`) [TEXT: "the Learner approximately
    best responds to the mixed strategy of the Auditor – who plays Follow the Perturbed Leader"].
    Output: the uniform average of the Learner's T plays, ``E_{g~p̂}[g]`` [TEXT].

    Round t [RECON]: for each of W samples, for every task j and sign σ,
    draw ξ ~ U[0, noise/n]^n and ξ' ~ U[0, noise/n], solve CSC(H) with label-1 costs
    −σ·Ccum_j + ξ, and score the action by its perturbed cumulative payoff
    σ·(Bcum_j + h·Ccum_j) − h·ξ − ξ' − (t−1)·ε_k; the null action (λ = 0) scores −ξ'_0
    [OURS: the tolerance ε_k = α·mean(z_k) as a payoff offset]. The best
    action of each sample gets λ = σ·C (or 0). The Learner fits G to z̃ = z − u/2 with
    u_i = n·λ̄_0/Σz − Σ λ̂_{h,j} 1[h(x_i) ≠ y_ij] (since (z−g)² + u·g = (g − z̃)² + const).

    Mean constraint: ``mean_projection=True`` [OURS, the Algorithm 2 analogue of
    Algorithm 4's mean constraint] shifts each play by a constant so Σ g = Σ z (trees + constants
    and linear G are
    closed under shifts); otherwise λ_0 = C_0·(2q^t − 1) with q^t = clip(1/2 + C_0·V0·n/noise, 0, 1)
    (the spec's single uniform perturbation of the payoff difference, same noise scale).

    ``noise`` is the FTPL scale 1/η_F in units of 1/n per point [OURS: the costs are normalised
    by 1/n]. Round 1 is a warm start [OURS, as Algorithm 4's OLS start]: the Auditor has no
    history, so the Learner plays the unconstrained ERM(z). ``fit(X, z, tasks=None)`` is the
    Section 5 mode (:func:`class_tasks`).
    A complementary pair of groups is fitted once (ẑ_1 = 1 − ẑ_0, as in Algorithm 4).

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
        skip=("proxy", "learning_rate", *_PIPELINE_KNOBS),
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

    __metadata_request__fit = sensitive_request("z")

    def fit(
        self,
        X: np.ndarray,
        z: np.ndarray | None = None,
        tasks: np.ndarray | None = None,
        *,
        sensitive_features: np.ndarray | None = None,
    ) -> GeneralMultiaccurateProxy:
        """Fit ẑ_k per group of the protected attribute ``sensitive_features`` (``z`` is its
        older name). ``tasks=None`` is the Section 5 mode (see :func:`class_tasks`)."""
        z = resolve_sensitive(
            sensitive_features, z, "z", required=False
        )  # z is its y: a missing z gets the y check
        validate_params(self)
        X, z = validate_data(self, X, z, multi_output=True, y_numeric=True)
        if tasks is not None:
            check_consistent_length(X, tasks)
        with threadpool_limits(limits=1, user_api="blas"):  # many small products: see _ONE_THREAD
            return self._fit(X, z, tasks)

    def _fit(
        self,
        X: np.ndarray,
        z: np.ndarray,
        tasks: np.ndarray | None,
    ) -> GeneralMultiaccurateProxy:
        X = np.asarray(X, float)
        z = _as_2d(z)
        tasks = class_tasks(len(X)) if tasks is None else _as_2d(tasks)
        n, m = tasks.shape
        rng = generator(self.random_state)  # an int seeds default_rng directly, as before
        aud = _auditor(self.auditor, self.auditor_depth, seed(self.random_state))
        size = 2 ** (self.max_depth + 1) - 1
        fit_groups, scales = _groups_to_fit(z)
        eps_all = {k: self.alpha * v for k, v in scales.items()}
        flip = 1.0 - 2.0 * tasks
        scale = self.noise / n
        coefs, trees, traces = {}, {}, {}
        for k in fit_groups:
            zk, eps = z[:, k], eps_all[k]
            ccum, bcum, v0 = np.zeros((n, m)), np.zeros(m), 0.0
            avg = np.zeros(n)
            theta_sum = np.zeros(X.shape[1] + 1)
            plays, trace = [], []
            for t in range(1, self.n_iter + 1):
                u = np.zeros(n)
                # every (sample, task, sign) CSC of the round at once: one regression for all
                actions = [(j, sigma) for j in range(m) for sigma in (1, -1)] * self.n_samples
                xi = rng.uniform(0, scale, (n, len(actions)))
                diffs = np.column_stack([-sg * ccum[:, j] for j, sg in actions]) + xi
                fitted = aud._fit(X, diffs) if aud.kind == "linear" else None
                for w in range(self.n_samples if t > 1 else 0):  # t = 1: warm start, ERM(z)
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
            coefs[k] = theta_sum / self.n_iter
            trees[k] = np.array(plays) if plays else np.zeros((0, 5, size))
            traces[k] = trace
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

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """ẑ(x) (n, K): the average of the Learner's plays (may leave [0, 1])."""
        check_is_fitted(self, "coef_")
        X = np.asarray(validate_data(self, X, reset=False), float)
        linear = np.column_stack([X, np.ones(len(X))]) @ self.coef_.T
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
        return audit(X, z, self.predict_proba(X), tasks, self.auditor, **names)


# ---------------------------------------------------------------- comparison proxies


#: The comparison proxies :class:`BaselineProxy` fits (``"true"`` is the caller's: it needs z).
BASELINES = ("regression", "thresholded", "constant")


class BaselineProxy(BaseEstimator):
    """Comparison proxies [OURS].

    * ``"regression"``: logistic-regression probabilities ≈ E[z_k | x] (one model per group);
    * ``"thresholded"``: the classification proxy 1[P̂(z_k = 1 | x) > 0.5];
    * ``"constant"``: ẑ_k ≡ mean(z_k).
    (``"true"`` needs z at prediction time and is handled by the caller.)

    A scikit-learn estimator with the interface of :class:`MultiaccurateProxy` (``fit(X, z)``,
    ``predict`` = :meth:`predict_proba` = ẑ (n, K), no mixin for the same reason: a soft group
    membership, not labels, judged by :func:`audit` rather than R²); ``kind`` is validated in
    :meth:`fit`. ``random_state`` is handed to the logistic regressions (lbfgs is deterministic,
    so it changes nothing today; kept for solvers that draw).

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

    __metadata_request__fit = sensitive_request("z")

    def fit(
        self,
        X: np.ndarray,
        z: np.ndarray | None = None,
        *,
        sensitive_features: np.ndarray | None = None,
    ) -> BaselineProxy:
        """Fit one model per group column of the protected attribute ``sensitive_features``
        (n,) or (n, K) (``z`` is its older name)."""
        z = resolve_sensitive(
            sensitive_features, z, "z", required=False
        )  # z is its y: a missing z gets the y check
        validate_params(self)
        X, z = validate_data(self, X, z, multi_output=True, y_numeric=True)
        z = _as_2d(z)
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
