"""The randomised oblique tree of Algorithm 4 and the probabilities it routes rows with.

A node splits with a uniform mixture of halfspaces (Defs. 10-11, child 1 = the h = 1 side);
:mod:`.tree` grows it, :mod:`.model` applies it to new rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class ObliqueTree:
    """A randomised tree whose internal nodes split with a uniform mixture of halfspaces.

    Node v is internal when ``children[v] = (child0, child1)`` (else ``(-1, -1)``); its halfspaces
    are rows ``start[v] : start[v] + count[v]`` of ``coefs`` / ``intercepts``, and a point goes to
    child 1 with probability pbar_v(x) = mean_t 1[x . coef_t + b_t > 0]. Leaves are numbered by
    ``leaf_index`` (-1 for internal nodes). Nodes are stored parents first.
    """

    n_features: int
    children: list[tuple[int, int]] = field(default_factory=lambda: [(-1, -1)])
    start: list[int] = field(default_factory=lambda: [0])
    count: list[int] = field(default_factory=lambda: [0])
    depth: list[int] = field(default_factory=lambda: [0])
    blend: list[float] = field(default_factory=lambda: [1.0])
    share: list[float] = field(default_factory=lambda: [0.0])
    coefs: list[np.ndarray] = field(default_factory=list)
    intercepts: list[float] = field(default_factory=list)

    @property
    def leaves(self) -> list[int]:
        """Node ids of the leaves, in leaf-index order."""
        return [v for v, c in enumerate(self.children) if c[0] < 0]

    def split(
        self,
        node: int,
        coefs: np.ndarray,
        intercepts: np.ndarray,
        *,
        blend: float = 1.0,
        share: float = 0.0,
    ) -> tuple[int, int]:
        """Make ``node`` internal with the given halfspaces; return its (child0, child1)."""
        self.start[node], self.count[node] = len(self.intercepts), len(intercepts)
        self.blend[node], self.share[node] = float(blend), float(share)
        self.coefs.extend(np.atleast_2d(coefs))
        self.intercepts.extend(np.ravel(intercepts).tolist())
        ids = (len(self.children), len(self.children) + 1)
        self.children[node] = ids
        self.children += [(-1, -1)] * 2
        self.start += [0, 0]
        self.count += [0, 0]
        self.depth += [self.depth[node] + 1] * 2
        self.blend += [1.0, 1.0]
        self.share += [0.0, 0.0]
        return ids

    def arrays(self) -> dict[str, np.ndarray]:
        """The tree as plain arrays (for model files)."""
        d = self.n_features
        return {
            "children": np.asarray(self.children, dtype=np.int64).reshape(-1, 2),
            "start": np.asarray(self.start, dtype=np.int64),
            "count": np.asarray(self.count, dtype=np.int64),
            "blend": np.asarray(self.blend, dtype=float),
            "share": np.asarray(self.share, dtype=float),
            "coefs": np.asarray(self.coefs, dtype=float).reshape(-1, d),
            "intercepts": np.asarray(self.intercepts, dtype=float),
        }


def tree_leaf_weights(arrays: dict[str, np.ndarray], Z: np.ndarray) -> np.ndarray:
    """w_L(x) for every row of ``Z`` and every leaf: (rows, leaves), rows summing to 1."""
    return node_weights(arrays, Z)[:, arrays["children"][:, 0] < 0]


def node_weights(arrays: dict[str, np.ndarray], Z: np.ndarray) -> np.ndarray:
    """P(x reaches node v) for every row of ``Z`` and every node (rows, nodes)."""
    children, start, count = arrays["children"], arrays["start"], arrays["count"]
    coefs, intercepts = arrays["coefs"], arrays["intercepts"]
    n_nodes = len(children)
    node_weight = np.zeros((len(Z), n_nodes))
    node_weight[:, 0] = 1.0
    for v in range(n_nodes):
        c0, c1 = children[v]
        if c0 < 0:
            continue
        rows = slice(start[v], start[v] + count[v])
        p = arrays["blend"][v] * tree_node_probability(coefs[rows], intercepts[rows], Z)
        p = p + (1.0 - arrays["blend"][v]) * arrays["share"][v]
        node_weight[:, c1] = node_weight[:, v] * p
        node_weight[:, c0] = node_weight[:, v] * (1.0 - p)
    return node_weight


#: Rows per block of :func:`tree_node_probability` (no (n, #halfspaces) temporaries).
VOTE_BLOCK = 4096


def tree_node_probability(
    coefs: np.ndarray,
    intercepts: np.ndarray,
    X: np.ndarray,
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """pbar(x) = mean_t 1[x . coef_t + b_t > 0] on X, or on X[rows] without copying them.

    Repeated halfspaces (the game often replays the same best response) are evaluated once and
    counted with their multiplicity. Rows are evaluated in blocks of :data:`VOTE_BLOCK`: each
    row's scores and votes are its own, so the blocks give the rows' values unchanged while the
    (rows, halfspaces) tables stay small.
    """
    stacked = np.column_stack([np.atleast_2d(coefs), np.ravel(intercepts)])
    unique, counts = np.unique(stacked, axis=0, return_counts=True)
    directions, offsets, total = unique[:, :-1].T, unique[:, -1], counts.sum()
    n = len(X) if rows is None else len(rows)
    out = np.empty(n)
    for start in range(0, n, VOTE_BLOCK):
        block = slice(start, min(start + VOTE_BLOCK, n))
        part = X[block] if rows is None else X[rows[block]]
        votes = (part @ directions + offsets > 0).astype(float)
        out[block] = votes @ counts / total
    return out
