"""Algorithm 4 of Diana et al. 2022: the linear multiaccurate proxy, projected online gradient
descent against the auditor's best response; the rows kept out of its game [OURS] (each
candidate's certificate there, the chain of kept candidates, the refit of a lone least-squares
start) and the LP floor of linear G [OURS], reported when α is out of reach. Tags as in
:mod:`~fairengine.methods.multiaccurate_proxy.auditor`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy.optimize import linprog
from sklearn.utils.validation import check_is_fitted

from fairengine.data.split import held_out_rows
from fairengine.methods.multiaccurate_proxy.auditor import (
    Auditor,
    groups_to_fit,
    make_auditor,
    note_regions,
)
from fairengine.methods.multiaccurate_proxy.general import ProxyGame
from fairengine.methods.multiaccurate_proxy.knobs import KNOBS, PIPELINE_KNOBS
from fairengine.methods.params import HasMethods, Interval, knob_constraints, seed
from fairengine.solvers.least_squares import LeastSquares

#: Run outcomes of Algorithm 4 (``MultiaccurateProxy.status_``), from best to worst.
STATUSES = ("converged", "max_iter", "below_floor")


@dataclass
class GroupPath:
    """One group's game, the fitted state :meth:`MultiaccurateProxy.at_alpha` selects from.

    Attributes
    ----------
    path : ndarray (T + 1, d + 1)
        The candidates θ_1 (the least-squares start), …, θ_T and their average θ̄.
    trace : ndarray (T + 1,)
        The auditor's max additive violation of each candidate.
    audited : ndarray (T + 1,)
        Each candidate's max additive violation over every error region found in the game.
    regions : tuple
        (M = A[X, 1]/n, b = Az/n, Σ_i [x_i, 1], Σz) of the audit vectors A found: the LP floor's
        data (:func:`floor_lp`).
    """

    path: np.ndarray
    trace: np.ndarray
    audited: np.ndarray
    regions: tuple


class MultiaccurateProxy(ProxyGame):
    """Linear multiaccurate proxy, Algorithm 4 of Diana et al. 2022: projected online gradient
    descent on ẑ_k(x) = θ·[x, 1] against the auditor's best response over the error regions
    {h ≠ y_j}, warm-started at least squares, run once per group (a complementary pair once).

    The game's path does not depend on α: one fit serves every α (:meth:`at_alpha`), which picks
    the first kept candidate certified at ε_k = α·mean(z_k) (α = 0: the lowest reached). A
    ``validation`` share of the rows is kept out of the game; only candidates that also lower the
    violation there by more than its sampling error are kept; when none does, least squares on
    every row is served and α has a single value. Why: "Design notes" in
    ``docs/methods/multiaccurate_proxy.md``.

    Parameters
    ----------
    alpha : float
        Target ratio violation α (fed in as the additive tolerance α·mean(z_k)).
    C : float
        Dual bound on the numerator multipliers (≳ the optimal dual norm).
    n_iter : int
        T, the maximum number of rounds of the game.
    learning_rate : float
        η_0 in η_t = η_0/√t (in the preconditioned metric, see the design notes).
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
        The auditor's max additive violation of each iterate of the game (every round; the
        returned candidate is round ``n_iter_``, or θ̄ after them).
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
        The worst of :data:`STATUSES` over the groups (design notes); ``status_by_group_`` per
        group.
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
        skip=("proxy", "tree_depth", *PIPELINE_KNOBS),
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

    def _fit(self, X: np.ndarray, z: np.ndarray, tasks: np.ndarray) -> MultiaccurateProxy:
        aud = make_auditor(self.auditor, self.auditor_depth, seed(self.random_state))
        # a finite H is given by its labellings of these very rows: it cannot be split
        share = 0.0 if aud.kind == "finite" else self.validation
        game_rows, check_rows = held_out_rows(np.zeros(len(X)), share, seed(self.random_state))
        check = (X[check_rows], z[check_rows], tasks[check_rows])
        every_row = (np.column_stack([X, np.ones(len(X))]), z)
        X, z, tasks = X[game_rows], z[game_rows], tasks[game_rows]
        n = len(X)
        Xa = np.column_stack([X, np.ones(n)])
        fit_groups, scales = groups_to_fit(z)
        metric = Xa.T @ Xa / n
        metric[np.diag_indices_from(metric)] += 1e-8 * np.trace(metric) / len(metric)
        inverse = np.linalg.inv(metric) if self.precondition else None
        paths, held_out = {}, {}
        for k in fit_groups:
            path, trace, seen = self._game(Xa, X, z[:, k], tasks, aud, inverse)
            found = aud.best(X, z[:, k] - Xa @ path[-1], tasks)  # the average's own audit
            note_regions(seen, found, tasks)
            vectors = np.array(list(seen.values()))
            region_x, region_z = vectors @ Xa / n, vectors @ z[:, k] / n
            paths[k] = GroupPath(
                path=path,
                trace=np.array(trace + [max(abs(v) for v, _, _ in found)]),
                # every candidate's max additive violation over every error region found
                audited=np.max(np.abs(region_z[:, None] - region_x @ path.T), axis=0),
                regions=(region_x, region_z, Xa.sum(axis=0), float(z[:, k].sum())),
            )
            held_out[k] = held_out_certificate(path, check, k, aud)  # (violations, z − ẑ)
        self.paths_, self.scales_ = paths, scales
        self.n_groups_ = z.shape[1]
        self.n_validation_ = int(len(check_rows))
        self._keep_chain(fit_groups, every_row, held_out)
        return self._select(self.alpha)

    def _keep_chain(
        self,
        fit_groups: list[int],
        every_row: tuple[np.ndarray, np.ndarray],
        held_out: dict[int, tuple[np.ndarray, np.ndarray]],
    ) -> None:
        """The chain of kept candidates and α's range from each group's ``held_out`` certificate;
        a lone least-squares start is refitted on every fit row ``every_row`` = ([X, 1], z)."""
        paths, scales = self.paths_, self.scales_
        scale = np.array([scales[k] for k in fit_groups])
        held = np.array([held_out[k][0] for k in fit_groups])
        held = np.max(held / scale[:, None], axis=0) if held.size else np.zeros(0)
        residuals = np.array([held_out[k][1] for k in fit_groups])
        residuals = residuals / scale[:, None, None]

        def ratios() -> np.ndarray:  # α of each candidate; it serves α iff every group's does
            audited = np.array([paths[k].audited for k in fit_groups])
            return np.max(audited / scale[:, None], axis=0)

        ratio = ratios()
        self.kept_out_error_ = held_out_error(residuals, 0)
        self._chain = (
            descending_chain(ratio, held, residuals) if self.early_stop else [len(ratio) - 1]
        )
        self.refitted_ = self._chain == [0] and self.n_validation_ > 0
        if self.refitted_:
            for k in fit_groups:
                Xa, zk = every_row[0], every_row[1][:, k]
                refit_start(paths[k], Xa, zk, self.radius, self.precondition)
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
        floors = {k: floor_lp(*self.paths_[k].regions)[0] for k in groups}
        return np.array([floors.get(k, floors[groups[0]]) for k in range(self.n_groups_)])

    def _select(self, alpha: float) -> MultiaccurateProxy:
        """Pick the candidate for ``alpha`` and set the fitted attributes (see the class notes)."""
        ratio, chain = self._candidate_ratio, self._chain
        groups = sorted(self.paths_)
        # the kept candidates' violations fall along the chain, in sample and held out
        hits = [i for i in chain if ratio[i] <= alpha * (1 + 1e-9)] if alpha > 0 else []
        pick = hits[0] if hits else chain[-1]
        target = alpha if alpha > 0 else float(ratio[pick])
        picked = {}  # per fitted group: (θ, trace, floor, reached, violation, status)
        for k in groups:
            entry = self.paths_[k]
            eps = target * self.scales_[k]
            reached = float(entry.audited[pick])
            converged = reached <= eps * (1 + 1e-9)
            floor = np.nan if converged else floor_lp(*entry.regions)[0]
            status = "converged" if converged else ("below_floor" if floor > eps else "max_iter")
            trace = entry.trace[: self.n_iter].astype(float)
            picked[k] = (entry.path[pick], trace, floor, reached, float(entry.trace[pick]), status)
        # a complementary pair: group 1 reads group 0's game, with ẑ_1 = 1 − ẑ_0
        every = [picked.get(k, picked[groups[0]]) for k in range(self.n_groups_)]
        coef, trace, floor, reached, violation, status = zip(*every, strict=True)
        self.coef_ = np.array(coef)
        if len(groups) < self.n_groups_:
            self.coef_[1] = -self.coef_[0]
            self.coef_[1][-1] += 1.0
        self.trace_ = np.array(trace, float)
        self.floor_ = np.array(floor, float)
        self.reached_ = np.array(reached, float)
        self.violation_ = np.array(violation, float)
        self.n_iter_ = np.full(self.n_groups_, min(pick + 1, self.n_iter))
        scales = [self.scales_.get(k, self.scales_[groups[0]]) for k in range(self.n_groups_)]
        self.tolerance_ = np.array([target * s for s in scales])
        self.alpha_ = target
        self.reached_ratio_ = float(self._candidate_ratio[pick])
        self.held_out_ratio_ = float(self._candidate_held_out[pick])
        self.status_by_group_ = list(status)
        self.status_ = max(self.status_by_group_, key=STATUSES.index)
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
            return project_theta(theta, self.radius, (s, target, n), inverse is not None)

        theta = project(LeastSquares(Xa, intercept=False, ridge=None).coef(zk))
        path: list[np.ndarray] = []
        trace: list[float] = []
        seen: dict[bytes, np.ndarray] = {}
        for t in range(1, self.n_iter + 1):
            g = Xa @ theta
            found = aud.best(X, zk - g, tasks)
            values = [abs(v) for v, _, _ in found]
            note_regions(seen, found, tasks)
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


def project_theta(
    theta: np.ndarray, radius: float, mean: tuple[np.ndarray, float, int], metric: bool
) -> np.ndarray:
    """θ projected on the ℓ2 ball ‖θ‖ ≤ ``radius``, then on the mean constraint Σẑ = Σz
    (``mean`` = (Σ_i [x_i, 1], Σz, n)): in the preconditioned ``metric``, by shifting the
    intercept; else the Euclidean projection."""
    s, target, n = mean
    norm = np.linalg.norm(theta)
    if norm > radius:
        theta = theta * (radius / norm)
    if metric:
        theta = theta.copy()
        theta[-1] += (target - s @ theta) / n
        return theta
    return theta - ((s @ theta - target) / (s @ s)) * s


def refit_start(entry: Any, Xa: np.ndarray, zk: np.ndarray, radius: float, metric: bool) -> None:
    """Replace the least-squares start of one group's path ``entry`` by least squares on the
    rows ``Xa`` = [X, 1] (every fit row), and its in-sample value over the error regions found
    (on the game's rows) by that of the refit."""
    theta = LeastSquares(Xa, intercept=False, ridge=None).coef(zk)
    theta = project_theta(theta, radius, (Xa.sum(axis=0), float(zk.sum()), len(zk)), metric)
    entry.path = entry.path.copy()
    entry.path[0] = theta
    region_x, region_z = entry.regions[:2]
    entry.audited = entry.audited.copy()
    entry.audited[0] = float(np.max(np.abs(region_z - region_x @ theta)))


def held_out_certificate(
    path: np.ndarray, check: tuple[np.ndarray, np.ndarray, np.ndarray], k: int, aud: Any
) -> tuple[np.ndarray, np.ndarray]:
    """(each candidate's max additive violation on the held-out rows ``check`` = (X, z, tasks), over
    every error region a fresh auditor finds there against any candidate; each candidate's residuals
    z_k − ẑ_k there, (rows, candidates)), both empty without held-out rows."""
    X, z, tasks = check
    if len(X) == 0:
        return np.zeros(0), np.zeros((0, len(path)))
    n = len(X)
    Xa = np.column_stack([X, np.ones(n)])
    values = Xa @ path.T
    own = type(aud)(aud.kind, depth=aud.depth, random_state=aud.random_state)
    seen: dict[bytes, np.ndarray] = {}
    for theta in path:
        note_regions(seen, own.best(X, z[:, k] - Xa @ theta, tasks), tasks)
    vectors = np.array(list(seen.values()))
    violations = np.max(np.abs((vectors @ z[:, k])[:, None] - vectors @ values), axis=0) / n
    return violations, z[:, k][:, None] - values


#: How many standard errors of the held-out violation a candidate's must fall below the last
#: kept one's to be kept [OURS] (:func:`held_out_error`).
CHAIN_MARGIN = 1.0


def held_out_error(residuals: np.ndarray, i: int) -> float:
    """Standard error of candidate ``i``'s violation on the held-out rows, at most
    sqrt(mean((z − ẑ_i)²)/n) for any one region [OURS], the largest over the fitted groups of
    ``residuals`` (groups, rows, candidates) in ratio units (design notes)."""
    if residuals.size == 0:
        return 0.0
    return float(np.sqrt(np.max(np.mean(residuals[:, :, i] ** 2, axis=1)) / residuals.shape[1]))


def descending_chain(
    in_sample: np.ndarray, held_out: np.ndarray, residuals: np.ndarray | None = None
) -> list[int]:
    """The candidates kept, in path order: the start, then each candidate whose violation is
    below every kept one's in sample and, on the held-out rows, by more than ``CHAIN_MARGIN``
    standard errors of the last kept one's (:func:`held_out_error` of ``residuals``) [OURS]."""
    residuals = np.zeros((0, 0, 0)) if residuals is None else residuals
    chain = [0]
    for i in range(1, len(in_sample)):
        last = chain[-1]
        margin = CHAIN_MARGIN * held_out_error(residuals, last)
        lower_held = held_out.size == 0 or held_out[i] < held_out[last] - margin
        if in_sample[i] < in_sample[last] and lower_held:
            chain.append(i)
    return chain


def multiaccuracy_floor(
    X: np.ndarray,
    z: np.ndarray,
    vectors: np.ndarray,
) -> tuple[float, np.ndarray]:
    """The feasibility floor of linear G [OURS]: min_θ max_a |a·(z − [X, 1]θ)|/n s.t.
    Σ_i [x_i, 1]·θ = Σ_i z_i over the audit vectors ``vectors`` (rows a ∈ {0,1}^n). Returns (that
    minimal max additive violation, θ): no linear proxy does better on these vectors."""
    X, z = np.asarray(X, float), np.asarray(z, float)
    n = len(X)
    Xa = np.column_stack([X, np.ones(n)])
    A = np.asarray(vectors, float)
    return floor_lp(A @ Xa / n, A @ z / n, Xa.sum(axis=0), float(z.sum()))


def floor_lp(
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
