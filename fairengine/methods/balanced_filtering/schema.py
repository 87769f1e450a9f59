"""The balanced filter's file state: the leaves' acceptance probabilities and its proxy (the
oblique (alpha, beta) tree or a stored classifier).

Checked by :func:`fairengine.export.files.validate_state` before the model is built
(the vocabulary: :mod:`fairengine.models.schema_rules`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from fairengine.models.schema_rules import (
    FINITE,
    NON_NEGATIVE,
    NUMERIC,
    PROBABILITY,
    STR,
    Dims,
    Group,
    Schema,
    arr,
    index_of,
    invalid,
    list_of,
    num_within,
    one_of,
    tree_nodes,
    within,
)
from fairengine.models.schemas import encoder_dims, with_encoder


def _oblique_tree(arrays: Mapping[str, np.ndarray], dims: Dims) -> None:
    """The (alpha, beta) tree: a tree whose leaves are the filter's leaves, each inner node
    voting with its own disjoint run of halfspaces."""
    from fairengine.models import trees

    children = arrays["children"]
    trees.check_structure(children[:, 0], children[:, 1])
    inner = children[:, 0] >= 0
    if int((~inner).sum()) != dims["n_leaves"]:
        raise ValueError(f"{int((~inner).sum())} leaves for {dims['n_leaves']} values of rho")
    start, stop = arrays["start"][inner], arrays["start"][inner] + arrays["count"][inner]
    order = np.argsort(start, kind="stable")
    if np.any(stop > dims["n_halfspaces"]) or np.any(stop[order][:-1] > start[order][1:]):
        raise ValueError("halfspace runs past the last halfspace or overlapping")


_TREE_PROXY = Group(
    "proxy_",
    {
        "children": arr("iu", "n_nodes", 2),
        "start": arr("iu", "n_nodes", rules=(NON_NEGATIVE,)),
        "count": arr("iu", "n_nodes", rules=(NON_NEGATIVE,)),
        "blend": arr("fiu", "n_nodes", rules=(PROBABILITY,)),
        "share": arr("fiu", "n_nodes", rules=(PROBABILITY,)),
        "coefs": arr("fiu", "n_halfspaces", "n_features", rules=(FINITE,)),
        "intercepts": arr("fiu", "n_halfspaces", rules=(FINITE,)),
    },
    (_oblique_tree,),
)


def _classifier_proxy(arrays: Mapping[str, np.ndarray], dims: Dims) -> None:
    """A classifier proxy's labels (after ``label_map``) index the filter's leaves."""
    labels = dims["n_labels"] if "label_map" in arrays else dims["n_leaves"]
    if "coef" in arrays and len(arrays["coef"]) > labels:
        raise ValueError(f"{len(arrays['coef'])} classes for {labels} groups")
    if "label" in arrays and index_of("n")(arrays["label"], {"n": labels}):
        raise ValueError(f"node labels outside 0 … {labels - 1}")


_PROXY_KIND = {"kind": arr("iu", rules=(within(0, 1),))}
_LABEL_MAP = {"label_map": arr("iu", "n_labels", rules=(index_of("n_leaves"),))}
_CLASSIFIER_PROXIES = {
    0: Group(
        "proxy_",
        {
            **_PROXY_KIND,
            "coef": arr("fiu", "n_classes", "n_features", rules=(FINITE,)),
            "intercept": arr("fiu", "n_classes", rules=(FINITE,)),
            **_LABEL_MAP,
        },
        (_classifier_proxy,),
        frozenset({"label_map"}),
    ),
    1: Group(
        "proxy_",
        {
            **tree_nodes("n_features").specs,
            **_PROXY_KIND,
            "label": arr("iu", "n_nodes"),
            **_LABEL_MAP,
        },
        (*tree_nodes("n_features").checks, _classifier_proxy),
        frozenset({"label_map"}),
    ),
}


def _filter_groups(state: Any, arrays: Mapping[str, np.ndarray]) -> list[Group]:
    if state["proxy"] == "tree":
        return [_TREE_PROXY]
    kind = arrays.get("proxy_kind")
    if kind is None or kind.ndim != 0 or int(kind) not in _CLASSIFIER_PROXIES:
        raise invalid("array 'proxy_kind' should be 0 or 1")
    return [_CLASSIFIER_PROXIES[int(kind)]]


SCHEMA = Schema(
    with_encoder(
        proxy=one_of("tree", "classifier"), eta=num_within(0.0, 1.0), group_names=list_of(STR)
    ),
    {
        "rho": arr("fiu", "n_leaves", rules=(PROBABILITY,)),
        "A": arr("fiu", "n_leaves", "n_groups", rules=(FINITE,)),
        "r_hat": arr("fiu", "n_leaves", rules=(FINITE,)),
        "base_rates": arr("fiu", "n_groups", rules=(FINITE,)),
    },
    patterns={r"proxy_[A-Za-z0-9_]+": NUMERIC},
    dims=encoder_dims,
    groups=_filter_groups,
)
