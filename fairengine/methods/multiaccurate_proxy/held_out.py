"""Algorithm 4's rows kept out of the game [OURS] (split by
:func:`fairengine.data.split.held_out_rows`): each candidate's certificate on those rows, the
chain of kept candidates (each must beat the last kept one there by more than the sampling error
of a violation measured there), and the refit of the least-squares start on every fit row when
only the start is kept. Used by
:class:`~fairengine.methods.multiaccurate_proxy.linear.MultiaccurateProxy`."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairengine.methods.multiaccurate_proxy.auditor import note_regions
from fairengine.solvers.least_squares import LeastSquares


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
    """(each candidate's max additive violation on the held-out rows ``check`` = (X, z, tasks),
    over every error region a fresh auditor finds there against any candidate; each candidate's
    residuals z_k − ẑ_k on those rows, (rows, candidates)), both empty without held-out rows.
    The game never saw these rows, so a fall along the path here is not noise of the game's own
    rows fitted by the proxy."""
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
    """Standard error of candidate ``i``'s violation on the held-out rows: for any one region,
    that of the mean of 1[region]·(z − ẑ_i), at most sqrt(mean((z − ẑ_i)²)/n) [OURS].
    ``residuals`` (groups, rows, candidates) holds each fitted group's (z_k − ẑ_k)/mean(z_k) on
    those rows (ratio units); the largest over the groups. A fall smaller than this is what
    another draw of the rows would undo (a margin on the paired difference alone is too small:
    bench ``multiaccurate_proxy_held_out``)."""
    if residuals.size == 0:
        return 0.0
    return float(np.sqrt(np.max(np.mean(residuals[:, :, i] ** 2, axis=1)) / residuals.shape[1]))


def descending_chain(
    in_sample: np.ndarray, held_out: np.ndarray, residuals: np.ndarray | None = None
) -> list[int]:
    """The candidates kept, in path order: the start, then each candidate whose violation is
    below every kept one's in sample and, on the held-out rows, by more than ``CHAIN_MARGIN``
    standard errors of the last kept one's (:func:`held_out_error` of ``residuals``) [OURS]:
    a fall smaller than that is within what another draw of those rows would undo. Along the
    chain both fall, so a smaller α (a later kept candidate) never gives a larger violation on
    either."""
    residuals = np.zeros((0, 0, 0)) if residuals is None else residuals
    chain = [0]
    for i in range(1, len(in_sample)):
        last = chain[-1]
        margin = CHAIN_MARGIN * held_out_error(residuals, last)
        lower_held = held_out.size == 0 or held_out[i] < held_out[last] - margin
        if in_sample[i] < in_sample[last] and lower_held:
            chain.append(i)
    return chain
