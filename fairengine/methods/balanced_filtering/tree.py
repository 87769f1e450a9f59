"""Algorithm 4: grow the randomised oblique (alpha, beta)-proxy tree.

Design notes: ``docs/methods/balanced_filtering.md``."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from fairengine.methods.balanced_filtering.candidates import (
    axis_split_candidates,
    threshold_candidates,
)
from fairengine.methods.balanced_filtering.definitions import hull_projection
from fairengine.methods.balanced_filtering.game import SplitGame, play_split_game, split_cost
from fairengine.methods.balanced_filtering.oblique import ObliqueTree, tree_node_probability

_TOL = 1e-12


@dataclass
class GrowthSettings:
    """Algorithm 4 knobs (see :class:`BalancedFilter` for their meaning)."""

    alpha: float
    gamma: float = 0.1
    beta_stop: float = 0.1
    max_depth: int = 20
    relaxed: bool = False
    epsilon: float = 0.01
    n_rounds: int = 300
    lambda_max: float = 100.0
    step: float = 1.0
    min_leaf_mass: float = 0.0
    #: smallest leaf in rows (the floor is the larger of this and ``min_leaf_mass``); a floor
    #: of 30 samples is plausible, the paper sets no floor; the default 5 is the paper setting's
    min_leaf_rows: int = 5
    max_leaves: int = 64
    #: [EXT] the game runs on at most this many of a leaf's rows (seeded subsample); the split
    #: found is then evaluated, repaired and accepted on all rows
    max_game_rows: int = 8000
    #: [EXT] when no split of the game (Alg. 3) passes the progress rule, also try the game with
    #: the threshold-refitted best response and single halfspaces along the games' directions
    #: at up to ``n_cuts`` feasible thresholds each (tier 1 in :func:`grow_tree`)
    wide_search: bool = True
    #: relaxed variant only: the (1 - gamma) progress rule on the hull distance ("hull"), on the
    #: cone distance ("relaxed"), or both trees grown and the one with the
    #: smaller final hull distance kept ("best", [EXT]); see :func:`grow_tree`
    progress: str = "best"
    n_cuts: int = 32
    #: [EXT] also grow at the budgets alpha - step, alpha - 2 step, ... > 0 and keep the tree
    #: nearest U (see :func:`budget_ladder`); 0 grows at alpha only (paper, default)
    budget_step: float = 0.0
    #: [EXT] also offer single-feature thresholds as split candidates (see
    #: :func:`.candidates.axis_candidates`); the ``axis_splits`` best of them per leaf (by a cheap
    #: bound) get the exact hull distance
    axis_splits: int = 0


def _repair(row: np.ndarray, child: np.ndarray, rates: np.ndarray, alpha: float) -> float:
    """Largest t in [0, 1] with |t child + (1 - t) row - r|_inf <= alpha.

    [EXT] Mixing the split with an x-independent split of the same mass moves both children
    linearly toward the parent row; this keeps every accepted leaf alpha-disclosive in-sample
    even when the game's averaged split overshoots the constraints slightly.
    """
    base, move = row - rates, child - row
    t = 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(move > _TOL, (alpha - base) / move, np.inf)
        down = np.where(move < -_TOL, (-alpha - base) / move, np.inf)
    t = min(t, float(np.min(up)), float(np.min(down)))
    return max(t, 0.0)


@dataclass(frozen=True)
class Problem:
    """What every split search of one growth shares: the data, the group rates and the budgets."""

    X: np.ndarray
    z: np.ndarray
    onehot: np.ndarray
    rates: np.ndarray
    target: np.ndarray
    settings: GrowthSettings
    #: smallest leaf mass (share of the rows) a split may leave
    min_mass: float
    #: the budget the game and the threshold/axis candidates aim for (alpha - epsilon)
    alpha_eff: float

    @property
    def n(self) -> int:
        return len(self.X)


@dataclass(frozen=True)
class Round:
    """The leaves at the start of one round and the distance the progress rule compares with."""

    rows: np.ndarray
    masses: np.ndarray
    point: np.ndarray
    #: position in :func:`_evaluate_split`'s result the rule reads (0 hull, 2 cone distance)
    key: int
    #: the current distance of that kind
    ref: float


@dataclass(frozen=True)
class Leaf:
    """One splittable leaf in one round: its weights, its live rows and its game."""

    j: int
    node: int
    w: np.ndarray
    live: np.ndarray
    game_rows: np.ndarray
    game: SplitGame
    X: np.ndarray
    onehot: np.ndarray

    # The live-row views are taken when used, not stored: a copy of X per leaf would raise the
    # fit's peak memory (soft weights leave most rows live in every leaf).
    @property
    def Xl(self) -> np.ndarray:
        return self.X[self.live]

    @property
    def wl(self) -> np.ndarray:
        return self.w[self.live]

    @property
    def onehot_l(self) -> np.ndarray:
        return self.onehot[self.live]


@dataclass(frozen=True)
class _Split:
    """A candidate split that passed the progress rule, with its distances and blend."""

    found: tuple[float, float, float]
    leaf: Leaf
    coefs: np.ndarray
    intercepts: np.ndarray
    pbar: np.ndarray


def _game_split(
    problem: Problem, leaf: Leaf, refit: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Algorithm 3 on the leaf's (sub)sample: (coefs, intercepts, pbar on the live rows)."""
    settings, rows = problem.settings, leaf.game_rows
    hyps, _ = play_split_game(
        problem.X[rows],
        problem.z[rows],
        leaf.w[rows],
        leaf.game,
        n_rounds=settings.n_rounds,
        lambda_max=settings.lambda_max,
        step=settings.step,
        refit_intercept=refit,
    )
    coefs = np.array([h.coef for h in hyps])
    intercepts = np.array([h.intercept for h in hyps])
    live_rows = np.nonzero(leaf.live)[0]
    return coefs, intercepts, tree_node_probability(coefs, intercepts, problem.X, live_rows)


def _evaluate_split(
    problem: Problem, state: Round, leaf: Leaf, pbar: np.ndarray
) -> tuple[float, float, float] | None:
    """(hull distance, blend t, cone distance or hull distance when not ``relaxed``) after
    splitting the leaf with pbar, or None if the split is not allowed."""
    n, rates, alpha, target = problem.n, problem.rates, problem.settings.alpha, problem.target
    rows, j, mass = state.rows, leaf.j, state.masses[leaf.j]
    wl = leaf.wl
    mass1 = float(wl @ pbar) / n
    mass0 = mass - mass1
    if min(mass0, mass1) < problem.min_mass:
        return None
    row1 = (wl * pbar) @ leaf.onehot_l / (mass1 * n)
    row0 = (rows[j] * mass - row1 * mass1) / mass0
    t = min(_repair(rows[j], row1, rates, alpha), _repair(rows[j], row0, rates, alpha))
    if t <= _TOL:
        return None
    row1 = t * row1 + (1 - t) * rows[j]
    row0 = t * row0 + (1 - t) * rows[j]
    new_rows = np.vstack([np.delete(rows, j, axis=0), row0, row1])
    hull = hull_projection(new_rows, target)[2]
    relaxed = problem.settings.relaxed
    return hull, t, hull_projection(new_rows, target, relaxed=True)[2] if relaxed else hull


def budget_ladder(alpha: float, step: float) -> list[float]:
    """[EXT] The budgets :func:`grow_tree` tries: alpha, alpha - step, alpha - 2 step, ... > 0
    (why: "Design notes" in docs/methods/balanced_filtering.md)."""
    n = int(np.floor(alpha / step + 1e-9)) if step > 0 else 0
    ladder = [round(alpha - k * step, 10) for k in range(n + 1)]
    return [b for b in ladder if b > 1e-9]


def grow_tree(
    X: np.ndarray,
    z: np.ndarray,
    n_groups: int,
    settings: GrowthSettings,
    target: np.ndarray,
) -> tuple[ObliqueTree, np.ndarray, list[dict]]:
    """Algorithm 4 on encoded features ``X`` and group codes ``z``.

    Returns the tree, the training leaf weights (rows, leaves) and the trace (one record per
    round: n_leaves, dist, stop_dist, disclosivity)."""
    if settings.budget_step > 0 and settings.alpha > settings.budget_step:
        runs = []
        for budget in budget_ladder(settings.alpha, settings.budget_step):
            run = grow_tree(
                X, z, n_groups, replace(settings, alpha=budget, budget_step=0.0), target
            )
            run[2][-1]["budget"] = budget
            runs.append(run)
        return min(runs, key=lambda run: run[2][-1]["dist"])  # the largest budget on ties
    if settings.relaxed and settings.progress == "best":
        runs = [
            grow_tree(X, z, n_groups, replace(settings, progress=rule), target)
            for rule in ("hull", "relaxed")
        ]
        return min(runs, key=lambda run: run[2][-1]["dist"])  # hull first on ties
    n = len(X)
    problem = Problem(
        X=X,
        z=z,
        onehot=np.eye(n_groups)[z],
        rates=np.bincount(z, minlength=n_groups) / n,
        target=target,
        settings=settings,
        min_mass=max(settings.min_leaf_mass, max(settings.min_leaf_rows, 1) / n),
        alpha_eff=max(settings.alpha - settings.epsilon, 0.0),
    )
    return _grow(problem)


def _grow(problem: Problem) -> tuple[ObliqueTree, np.ndarray, list[dict]]:
    """Algorithm 4 at one budget with one progress rule (see :func:`grow_tree`)."""
    settings, X = problem.settings, problem.X
    tree = ObliqueTree(X.shape[1])
    weights = [np.ones(problem.n)]  # per leaf, in tree.leaves order
    trace: list[dict] = []
    axis_cache: dict = {}  # node -> AxisCandidates (depend only on the leaf's weights)
    while True:
        state, record = _round_state(problem, weights)
        trace.append(record)
        stop = _stop_reason(problem, len(weights), record["stop_dist"])
        if stop:
            trace[-1]["stop"] = stop
            break
        leaves = _splittable_leaves(problem, state, tree, weights)
        best, rejected = _search(problem, state, leaves, axis_cache)
        if best is None:
            trace[-1]["stop"] = "no_progress" if leaves else "no_splittable_leaf"
            trace[-1]["best_rejected"] = float(rejected)
            trace[-1]["required"] = (1.0 - settings.gamma) * state.ref
            break
        t, leaf = best.found[1], best.leaf
        share = float(best.pbar @ weights[leaf.j][leaf.live]) / weights[leaf.j][leaf.live].sum()
        tree.split(leaf.node, best.coefs, best.intercepts, blend=t, share=share)
        w = weights.pop(leaf.j)
        p_full = t * tree_node_probability(best.coefs, best.intercepts, X) + (1.0 - t) * share
        weights += [w * (1.0 - p_full), w * p_full]
    leaf_weights = np.column_stack(weights)
    return tree, leaf_weights, trace


def _round_state(problem: Problem, weights: list[np.ndarray]) -> tuple[Round, dict]:
    """The leaves' group rows, the projection point and the round's trace record."""
    settings, n = problem.settings, problem.n
    masses = np.array([w.sum() for w in weights]) / n
    rows = np.array([w @ problem.onehot for w in weights]) / (masses[:, None] * n)
    _, point, stop_dist = hull_projection(rows, problem.target, relaxed=settings.relaxed)
    dist = hull_projection(rows, problem.target)[2] if settings.relaxed else stop_dist
    record = {
        "n_leaves": len(weights),
        "dist": dist,
        "stop_dist": stop_dist,
        "disclosivity": float(np.max(np.abs(rows - problem.rates))),
    }
    # progress and choice by the hull distance, or by the cone distance (relaxed)
    cone_progress = settings.relaxed and settings.progress == "relaxed"
    key, ref = (2, stop_dist) if cone_progress else (0, dist)
    return Round(rows=rows, masses=masses, point=point, key=key, ref=ref), record


def _stop_reason(problem: Problem, n_leaves: int, stop_dist: float) -> str | None:
    """Why growth stops before searching a split this round, or None to go on."""
    settings = problem.settings
    if stop_dist < settings.beta_stop or stop_dist <= _TOL:
        return "beta_stop" if stop_dist < settings.beta_stop else "in_hull"
    if n_leaves >= settings.max_leaves:
        return "max_leaves"
    if settings.alpha <= 0:  # every child must equal its parent: no split can progress
        return "alpha_zero"
    return None


def _splittable_leaves(
    problem: Problem, state: Round, tree: ObliqueTree, weights: list[np.ndarray]
) -> list[Leaf]:
    """The leaves below the depth limit and heavy enough to split, each with its game."""
    settings, X, rates, target = problem.settings, problem.X, problem.rates, problem.target
    leaves = []
    for j, node in enumerate(tree.leaves):
        if tree.depth[node] >= settings.max_depth or state.masses[j] < 2 * problem.min_mass:
            continue
        w = weights[j]
        live = w > _TOL
        rows_live = np.nonzero(live)[0]
        game_rows = rows_live
        if len(rows_live) > settings.max_game_rows:  # [EXT] play on a seeded subsample
            rng = np.random.default_rng(node)
            game_rows = np.sort(rng.choice(rows_live, settings.max_game_rows, replace=False))
        row = state.rows[j]
        game = SplitGame(row, rates, split_cost(row, state.point, target), problem.alpha_eff)
        leaves.append(Leaf(j, node, w, live, game_rows, game, X, problem.onehot))
    return leaves


def _search(
    problem: Problem, state: Round, leaves: list[Leaf], axis_cache: dict
) -> tuple[_Split | None, float]:
    """The accepted split nearest U, and the nearest candidate the (1 - gamma) rule rejected.

    Tier 0: the game's averaged split with the paired-regression best response (Alg. 3);
    tier 1 [EXT], only when no tier-0 split passes: the game with the threshold-refitted
    best response, and single halfspaces along both games' directions at every feasible
    threshold. Tiering keeps the paper's splits wherever they pass the progress rule.
    """
    settings, key = problem.settings, state.key
    bound = (1.0 - settings.gamma) * state.ref
    best: _Split | None = None
    rejected = np.inf
    games: dict = {}
    tiers = ((False,), (True, None)) if settings.wide_search else ((False,),)
    for tier in tiers:
        for leaf in leaves:
            for refit in tier:
                for coefs, intercepts, pbar in _candidates(
                    problem, state, leaf, refit, games, axis_cache
                ):
                    found = _evaluate_split(problem, state, leaf, pbar)
                    if found is None:
                        continue
                    if found[key] > bound:
                        rejected = min(rejected, found[key])
                        continue
                    if best is None or found[key] < best.found[key]:
                        best = _Split(found, leaf, coefs, intercepts, pbar)
        if best is not None:
            break
    return best, rejected


def _candidates(
    problem: Problem,
    state: Round,
    leaf: Leaf,
    refit: bool | None,
    games: dict,
    axis_cache: dict,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """One leaf's candidate splits for one search step, as (coefs, intercepts, pbar).

    ``refit`` False: the game's split (and the axis splits when asked); True: the game with the
    refitted best response and thresholds along its directions; None: thresholds along the
    directions of the ``refit=False`` game. ``games`` caches each leaf's games by (j, refit).
    """
    if refit is None:  # thresholds along the tier-0 directions
        return threshold_candidates(problem, leaf, games[(leaf.j, False)][0])
    if (leaf.j, refit) not in games:
        games[(leaf.j, refit)] = _game_split(problem, leaf, refit)
    coefs, intercepts, pbar = games[(leaf.j, refit)]
    candidates = [(coefs, intercepts, pbar)]
    if refit is False and problem.settings.axis_splits > 0:
        candidates += axis_split_candidates(problem, state, leaf, axis_cache)
    if refit is not False:
        candidates += threshold_candidates(problem, leaf, coefs)
    return candidates
