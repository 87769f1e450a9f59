"""Algorithms 1 and 2: sampling probabilities rho and filtering with them."""

from __future__ import annotations

import numpy as np

from fairengine.methods.balanced_filtering.definitions import checked_target, hull_projection
from fairengine.solvers import max_yield_weights


def sampling_probabilities(
    A: np.ndarray,
    r_hat: np.ndarray,
    target: np.ndarray | None = None,
    relaxed: bool = False,
    *,
    max_yield: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1: q = argmin ||qA - U|| (q stochastic, or q >= 0 if ``relaxed``), rho = q / r_hat
    scaled to max 1.

    Parameters
    ----------
    A : ndarray of shape (l, K)
        Conditional distribution matrix, rows P(z | proxy = j).
    r_hat : ndarray of shape (l,)
        Proxy-group masses P(proxy = j). Rows with r_hat = 0 are dropped and get rho = 0.
    target : ndarray of shape (K,), optional
        tau, the target distribution (uniform U by default; footnote in §4 of the paper).
    relaxed : bool
        Drop sum q = 1 (Section 5 item 3): q = NNLS(A^T, U).
    max_yield : bool
        [EXT] Among optimal q, pick the one with the largest acceptance rate (LP
        tie-break); for ``relaxed`` the LP uses the normalised cone point qA / sum q.

    Returns
    -------
    q : ndarray of shape (l,)
        Share of each proxy group among accepted points (stochastic, except the raw NNLS
        solution when ``relaxed`` and not ``max_yield``).
    rho : ndarray of shape (l,)
        Acceptance probabilities in [0, 1] with max 1.

    Examples
    --------
    >>> q, rho = sampling_probabilities(np.array([[0.9, 0.1], [0.3, 0.7]]), np.array([0.5, 0.5]))
    >>> q.round(4).tolist(), rho.round(4).tolist()
    ([0.3333, 0.6667], [0.5, 1.0])
    """
    A = np.atleast_2d(np.asarray(A, dtype=float))
    r_hat = np.asarray(r_hat, dtype=float).ravel()
    tau = checked_target(target, A.shape[1])
    live = r_hat > 0
    q = np.zeros(len(A))
    q_live, point, _ = hull_projection(A[live], tau, relaxed=relaxed)
    if max_yield and q_live.sum() > 0:
        best = max_yield_weights(A[live], r_hat[live], point / q_live.sum())
        if best is not None:
            q_live = best
    q[live] = q_live
    rho = np.zeros(len(A))
    rho[live] = q_live / r_hat[live]
    top = rho.max()
    rho = rho / top if top > 0 else np.ones(len(A))
    return q, rho


def filtered_distribution(A: np.ndarray, r_hat: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """Expected z-distribution of accepted points: sum_j r_hat_j rho_j A_j / sum_j r_hat_j rho_j
    (Lemma 2 proof)."""
    mass = np.asarray(r_hat, float) * np.asarray(rho, float)
    return mass @ np.asarray(A, float) / mass.sum()


def acceptance_rate_of(r_hat: np.ndarray, rho: np.ndarray) -> float:
    """Expected share of candidates kept, sum_j r_hat_j rho_j (= sum(q) / C)."""
    return float(np.dot(r_hat, rho))


def filter_rows(
    leaf_weights: np.ndarray,
    rho: np.ndarray,
    random_state: int | np.random.Generator | None = 0,
) -> np.ndarray:
    """Algorithm 2: accept each row with probability pi(x) = sum_L w_L(x) rho_L (seeded).

    Drawing the leaf with probabilities w_L(x) and then accepting with rho_L is the same
    Bernoulli(pi(x)); fresh randomness per row (pitfall P18).

    Returns
    -------
    ndarray of bool, one flag per row.
    """
    pi = np.clip(np.asarray(leaf_weights, float) @ np.asarray(rho, float), 0.0, 1.0)
    rng = np.random.default_rng(random_state)
    return rng.random(len(pi)) < pi


def filter_stream(stream, leaf_weights_of, rho: np.ndarray, random_state=0):
    """Algorithm 2 on a stream: yield the chunks of ``stream`` (frames or arrays) that are kept.

    ``leaf_weights_of(chunk)`` gives the chunk's (rows, leaves) membership matrix.
    """
    rng = np.random.default_rng(random_state)
    for chunk in stream:
        keep = filter_rows(leaf_weights_of(chunk), rho, rng)
        yield chunk[keep] if not hasattr(chunk, "iloc") else chunk.iloc[np.nonzero(keep)[0]]
