"""The proxy tree's leaves in words: each split as a feature and a threshold in the table's units.

Design notes: ``docs/methods/balanced_filtering.md``."""

from __future__ import annotations

import numpy as np

from fairengine.data.encoding import FeatureEncoder

#: Features whose weight is below this share of the largest one are not counted as used.
_NEGLIGIBLE = 1e-3


def split_words(
    coefs: np.ndarray, intercepts: np.ndarray, encoder: FeatureEncoder
) -> tuple[str, str]:
    """(child 0, child 1) of one split with halfspaces ``coefs`` (T, d) and ``intercepts``."""
    coefs = np.atleast_2d(np.asarray(coefs, dtype=float))
    norms = np.linalg.norm(coefs, axis=1)
    norms = np.where(norms > 0, norms, 1.0)
    w = (coefs / norms[:, None]).mean(axis=0)
    b = float((np.asarray(intercepts, dtype=float) / norms).mean())
    c = int(np.argmax(np.abs(w)))
    if w[c] == 0:
        return "all rows", "no rows"
    used = int((np.abs(w) > _NEGLIGIBLE * abs(w[c])).sum())
    names = list(encoder.feature_names_out_)
    n_numeric = len(encoder.numeric_)
    cut = -b / w[c]  # in encoded units
    if c < n_numeric:
        raw = float(encoder.center_[c] + encoder.scale_[c] * cut)
        above, below = f"{names[c]} > {raw:.6g}", f"{names[c]} ≤ {raw:.6g}"
    else:
        column, _, value = names[c].partition("=")
        above, below = f"{column} = {value}", f"{column} ≠ {value}"
    one, zero = (above, below) if w[c] > 0 else (below, above)
    mark = ""
    if used > 1:
        mark = f" (≈ oblique split: {abs(w[c]) / np.abs(w).sum():.0%} of its weight)"
    elif len(np.unique(np.round(np.asarray(intercepts) / norms, 9))) > 1:
        mark = f" (≈, mean of {len(coefs)} thresholds)"
    return zero + mark, one + mark


def leaf_rules(arrays: dict[str, np.ndarray], encoder: FeatureEncoder) -> list[str]:
    """The path of every leaf (in leaf order) as its splits in words joined by ``and``."""
    children = np.asarray(arrays["children"]).reshape(-1, 2)
    start, count = np.asarray(arrays["start"]), np.asarray(arrays["count"])
    coefs, intercepts = np.asarray(arrays["coefs"]), np.asarray(arrays["intercepts"])
    paths: dict[int, list[str]] = {0: []}
    for v, (c0, c1) in enumerate(children):  # parents come before their children
        if c0 < 0:
            continue
        rows = slice(int(start[v]), int(start[v]) + int(count[v]))
        zero, one = split_words(coefs[rows], intercepts[rows], encoder)
        paths[int(c0)] = [*paths[v], zero]
        paths[int(c1)] = [*paths[v], one]
    leaves = [v for v, (c0, _) in enumerate(children) if c0 < 0]
    return [" and ".join(paths[v]) or "all rows" for v in leaves]
