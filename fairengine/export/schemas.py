"""The state schema of every model type, checked before a model is built from a file.

A model file's ``state.json`` and arrays are validated here against the schema of the type the
manifest names (:data:`SCHEMAS`): every key with its JSON type, every array with its dtype kind,
its shape in named dimensions (``{"coef": ("n_features",)}``, bound by the state or by the first
array using them) and rules on its values (finite, probabilities, indices in range), the
families of arrays the state declares (a component's, a proxy's, a stored classifier's), and
the structure of every tree (:func:`fairengine.models.trees.check_arrays`: children after their
parent, one parent each, features in range), nothing missing and nothing extra. So a model is
only built from arrays that fit together, and building it and predicting the synthetic probe row
costs time and memory bounded by the declared sizes. Each check raises :class:`ModelFileError`
naming the bad field. The checks, array specs, groups and :class:`Schema` itself are defined in
:mod:`fairengine.export.schema_rules`; this module holds the schemas written with them.

The schemas live here, beside the loader, and not in the method packages: a test checks that real
files of every registered type pass, so a method that changes its state must update its schema.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from fairengine.export.safe import ModelFileError
from fairengine.export.schema_rules import (
    BOOL,
    BYTES,
    FINITE,
    INT,
    NON_NEGATIVE,
    NUM,
    NUMERIC,
    PROBABILITY,
    SCALAR,
    STR,
    WEIGHTS,
    Check,
    Dims,
    Group,
    Schema,
    arr,
    bounded_int,
    either,
    fail,
    index_of,
    invalid,
    list_of,
    nonneg_int,
    num_within,
    obj,
    one_of,
    optional,
    pair,
    tree_nodes,
    with_prefix,
    within,
)


def _encoder(value: Any, path: str) -> None:
    obj(
        {
            "max_categories": INT,
            "scale": BOOL,
            "columns": list_of(STR),
            "numeric": list_of(STR),
            "categorical": list_of(pair(STR, list_of(STR))),
            "median": list_of(NUM),
            "center": list_of(NUM),
            "scale_values": list_of(NUM),
        },
        {"dropped": list_of(STR)},
    )(value, path)
    columns = set(value["columns"])
    n = len(value["numeric"])
    if not (len(value["median"]) == len(value["center"]) == len(value["scale_values"]) == n):
        fail(f"{path}.median", f"{n} values (one per numeric column)", value["median"])
    if any(s == 0 for s in value["scale_values"]):
        fail(f"{path}.scale_values", "non-zero", value["scale_values"])
    named = [*value["numeric"], *(c for c, _ in value["categorical"])]
    if len(set(named)) != len(named) or not set(named) <= columns:
        fail(f"{path}.numeric", "distinct columns listed in columns", named)


ENCODER: Check = _encoder


def encoded_width(encoder: Mapping[str, Any]) -> int:
    """Columns the encoder's ``transform`` outputs: one per numeric column, and per categorical
    column one per kept category plus one for "other"."""
    return len(encoder["numeric"]) + sum(len(cats) + 1 for _, cats in encoder["categorical"])


def _encoder_dims(state: Mapping[str, Any]) -> Dims:
    width = encoded_width(state["encoder"])
    return {"n_features": width, "n_features_1": width + 1}


def _state(**keys: Check) -> Check:
    return obj({"encoder": ENCODER, **keys})


# --- linear models and mixtures of them

_LINEAR = {"coef": arr("fiu", "n_features", rules=(FINITE,))}
_MIXTURE = {
    "coefs": arr("fiu", "n_components", "n_features", rules=(FINITE,)),
    "intercepts": arr("fiu", "n_components", rules=(FINITE,)),
    "weights": arr("fiu", "n_components", rules=WEIGHTS),
}


def _packed_trees(state: Any, arrays: Mapping[str, np.ndarray], dims: Dims) -> None:
    """The multiaccurate proxy's regression trees (K, T, 5, size): rows feature, threshold,
    left, right, value of each tree, each a tree of the shared codec."""
    packed = arrays.get("proxy_trees")
    if packed is None or packed.size == 0:
        return
    from fairengine.models import trees

    k, t, _, size = packed.shape
    try:
        if not np.all(np.isfinite(packed)):
            raise ValueError("values that are not finite numbers")
        for tree in packed.reshape(k * t, 5, size):
            node = {"feature": tree[0], "threshold": tree[1], "left": tree[2], "right": tree[3]}
            trees.check_arrays({**node, "value": tree[4]}, dims["n_features"])
    except ValueError as exc:
        raise invalid(f"the arrays proxy_trees do not fit together ({exc})") from None


# --- balanced filter

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
)


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
    ),  # fmt: skip
}


def _filter_groups(state: Any, arrays: Mapping[str, np.ndarray]) -> list[Group]:
    if state["proxy"] == "tree":
        return [_TREE_PROXY]
    kind = arrays.get("proxy_kind")
    if kind is None or kind.ndim != 0 or int(kind) not in _CLASSIFIER_PROXIES:
        raise invalid("array 'proxy_kind' should be 0 or 1")
    return [_CLASSIFIER_PROXIES[int(kind)]]


# --- max-entropy

#: Largest domain a max-entropy model file may describe: coordinates d (rebuilding the model
#: holds a d x d table), cells of the padded (features x largest level count) layout, and cells of
#: the reference-coded stored rows (rows x d bytes). Real domains are far smaller (at most ~9
#: levels per categorical column).
MAX_MAXENT_COORDINATES = 8192
MAX_MAXENT_LEVEL_CELLS = 1 << 24
MAX_MAXENT_ROW_CELLS = 1 << 28


def _domain(value: Any, path: str) -> None:
    feature = obj(
        {
            "name": STR,
            "role": one_of("feature", "label", "protected"),
            "levels": list_of(STR),
            "edges": list_of(NUM),
        }
    )
    obj({"features": list_of(feature)})(value, path)
    features = value["features"]
    for i, f in enumerate(features):
        edges, n = f["edges"], len(f["levels"])
        where = f"{path}.features[{i}]"
        if n < 1 or (edges and (len(edges) != n - 1 or np.any(np.diff(edges) <= 0))):
            fail(where, "levels and increasing inner bin edges (one fewer)", f)
        if f["role"] != "feature" and n != 2:
            fail(where, "a binary label or protected attribute", f)
    roles = [f["role"] for f in features]
    if roles.count("label") != 1 or roles.count("protected") != 1:
        fail(f"{path}.features", "one label and one protected attribute", roles)
    sizes = [len(f["levels"]) for f in features]
    d = sum(sizes) - len(sizes)
    if d > MAX_MAXENT_COORDINATES or len(sizes) * max(sizes) > MAX_MAXENT_LEVEL_CELLS:
        fail(path, f"at most {MAX_MAXENT_COORDINATES:,} coordinates", d)


def _maxent_dims(state: Any) -> Dims:
    features = state["domain"]["features"]
    sizes = [len(f["levels"]) for f in features]
    model = [len(f["levels"]) - 1 for f in features if f["role"] == "feature"]
    return {"d": sum(sizes) - len(sizes), "d_model": sum(model), "n_domain_features": len(sizes)}


def _maxent_rows(state: Any, arrays: Mapping[str, np.ndarray], dims: Dims) -> None:
    """Each stored row's codes are levels of their feature; the coded rows fit the limit."""
    rows = arrays["rows"]
    sizes = np.array([len(f["levels"]) for f in state["domain"]["features"]], dtype=np.int64)
    if rows.size and (rows.min() < 0 or np.any(rows.max(axis=0) >= sizes)):
        raise invalid("array 'rows' holds codes outside their feature's levels")
    if len(rows) * dims["d"] > MAX_MAXENT_ROW_CELLS:
        raise invalid(f"array 'rows' codes {len(rows) * dims['d']:,} cells; the limit is "
                       f"{MAX_MAXENT_ROW_CELLS:,}")  # fmt: skip


_MAXENT_TREE = with_prefix(
    tree_nodes("d_model", prob=arr("fiu", "n_nodes", rules=(PROBABILITY,))), "clf_"
)
_MAXENT_CLASSIFIERS = {
    "tree": _MAXENT_TREE,
    "small_tree": _MAXENT_TREE,
    "logistic": Group(
        "clf_",
        {
            "coef": arr("fiu", "d_model", rules=(FINITE,)),
            "intercept": arr("fiu", 1, rules=(FINITE,)),
        },
    ),
    "gnb": Group(
        "clf_",
        {
            "mean": arr("fiu", 2, "d_model", rules=(FINITE,)),
            "var": arr("fiu", 2, "d_model", rules=(within(1e-300, np.inf),)),
            "log_prior": arr("fiu", 2, rules=(within(-np.inf, 0.0), FINITE)),
        },
    ),
    "constant": Group("clf_", {"constant": arr("fiu", 1, rules=(PROBABILITY,))}),
}


def _maxent_groups(state: Any, arrays: Mapping[str, np.ndarray]) -> list[Group]:
    names = state["classifier_arrays"]
    kind = "constant" if names == ["constant"] else state["classifier"]
    group = _MAXENT_CLASSIFIERS.get(kind)
    if group is None or sorted(names) != sorted(group.specs):
        raise invalid(f"classifier {kind!r} with arrays {names}"[:200])
    return [group]


# --- fair regression

_COMPONENTS = {
    "linear": {
        "coef": arr("fiu", "n_features", rules=(FINITE,)),
        "intercept": arr("fiu", 1, rules=(FINITE,)),
    },
    "trees": {
        **tree_nodes("n_features").specs,
        "roots": arr("iu", "n_trees"),
        "value": arr("fiu", "n_nodes", rules=(FINITE,)),
        "learning_rate": arr("fiu", 1, rules=(FINITE,)),
        "offset": arr("fiu", 1, rules=(FINITE,)),
    },
    "estimator": {},
}


def _regression_groups(state: Any, arrays: Mapping[str, np.ndarray]) -> list[Group]:
    groups = []
    for t, component in enumerate(state["components"]):
        kind, names = component["kind"], component["arrays"]
        specs = _COMPONENTS[kind]
        if sorted(names) != sorted(specs):
            raise invalid(f"component {t} of kind {kind!r} lists arrays {names}"[:200])
        if kind == "estimator":
            specs = {"skops": BYTES}
        checks = tree_nodes("n_features").checks if kind == "trees" else ()
        groups.append(Group(f"f{t}_", specs, checks))
    stray = [n for n in arrays if re.fullmatch(r"f\d+_.*", n)]
    stray = [n for n in stray if int(n[1 : n.index("_")]) >= len(groups)]
    if stray:
        raise invalid(f"arrays {', '.join(stray[:5])} belong to no component")
    return groups


def _regression_checks(state: Any, arrays: Mapping[str, np.ndarray], dims: Dims) -> None:
    if state["y_min"] > state["y_max"]:
        fail("state.y_min", "at most y_max", state["y_min"])
    if state["base_estimator"] is None and "base_estimator_skops" not in arrays:
        raise invalid("the stored base estimator is missing")


def _signs(a: np.ndarray, dims: Mapping[str, int]) -> str | None:
    return None if np.all(np.isin(a, (-1.0, 1.0))) else "values other than -1 and 1"


_GROUP_RULE = {
    **{f"rule_{k}": arr("fiu", "n_groups", rules=(PROBABILITY,)) for k in ("p0", "p1")},
    **{f"rule_{k}": arr("fiu", "n_groups", rules=(_signs,)) for k in ("op0", "op1")},
    **{f"rule_{k}": arr("fiu", "n_groups", rules=(within(-1.0, 2.0),)) for k in ("t0", "t1")},
    **{f"rule_{k}": arr("fiu", "n_groups", rules=(PROBABILITY,)) for k in ("p_ignore", "constant")},
}


SCHEMAS: dict[str, Schema] = {
    "linear_classifier": Schema(_state(intercept=NUM), _LINEAR, dims=_encoder_dims),
    "randomized_classifier": Schema(_state(), _MIXTURE, dims=_encoder_dims),
    "multiaccurate_proxy": Schema(
        _state(proxy=STR, group_names=list_of(STR)),
        {**_MIXTURE, "proxy_coef": arr("fiu", "n_proxies", "n_features_1", rules=(FINITE,))},
        {"proxy_trees": arr("fiu", "n_proxies", "n_trees", 5, "size")},
        dims=_encoder_dims,
        checks=(_packed_trees,),
    ),
    "group_threshold_classifier": Schema(
        _state(
            intercept=NUM,
            sensitive=list_of(STR),
            group_names=list_of(STR),
            group_values=list_of(list_of(STR)),
            merged_groups=list_of(STR),
        ),
        {**_LINEAR, **_GROUP_RULE},
        dims=lambda state: {**_encoder_dims(state), "n_groups": len(state["group_names"])},
    ),
    "noisy_groups": Schema(
        obj(
            {"encoder": ENCODER, "intercept": NUM},
            {"knobs": optional(obj({}, extra=SCALAR)), "group_column": optional(STR)},
        ),
        _LINEAR,
        dims=_encoder_dims,
    ),
    "balanced_filter": Schema(
        _state(
            proxy=one_of("tree", "classifier"), eta=num_within(0.0, 1.0), group_names=list_of(STR)
        ),
        {
            "rho": arr("fiu", "n_leaves", rules=(PROBABILITY,)),
            "A": arr("fiu", "n_leaves", "n_groups", rules=(FINITE,)),
            "r_hat": arr("fiu", "n_leaves", rules=(FINITE,)),
            "base_rates": arr("fiu", "n_groups", rules=(FINITE,)),
        },
        patterns={r"proxy_[A-Za-z0-9_]+": NUMERIC},
        dims=_encoder_dims,
        groups=_filter_groups,
    ),
    "maxent": Schema(
        _state(
            domain=_domain,
            C=num_within(0.0, 1.0),
            tau=NUM,
            prior=STR,
            n_bins=nonneg_int,
            n_iter=nonneg_int,
            classifier=one_of(*sorted(_MAXENT_CLASSIFIERS.keys() - {"constant"})),
            classifier_arrays=list_of(STR),
        ),
        {
            "lambda": arr("fiu", "d", rules=(FINITE,)),
            "theta": arr("fiu", "d", rules=(PROBABILITY,)),
            "rows": arr("iu", "n_rows", "n_domain_features"),
            "weights": arr("fiu", "n_rows", rules=WEIGHTS),
            "counts": arr("fiu", "n_rows", rules=(NON_NEGATIVE,)),
        },
        patterns={r"clf_[A-Za-z0-9_]+": NUMERIC},
        dims=_maxent_dims,
        groups=_maxent_groups,
        checks=(_maxent_rows,),
    ),
    "fair_regression": Schema(
        _state(
            constraint=one_of("statistical_parity", "bounded_group_loss"),
            eps=either(NUM, list_of(NUM)),
            loss=STR,
            n_levels=bounded_int(1, 100_000),
            oracle=STR,
            base_estimator=optional(STR),
            max_iter=INT,
            random_state=optional(INT),
            mode=STR,
            y_min=NUM,
            y_max=NUM,
            group_labels=list_of(STR),
            components=list_of(
                obj(
                    {
                        "kind": one_of("linear", "trees", "estimator"),
                        "link": one_of("identity", "logit"),
                        "arrays": list_of(STR),
                    }
                )  # fmt: skip
            ),
        ),
        {"weights": arr("fiu", "n_components", rules=WEIGHTS)},
        {"base_estimator_skops": BYTES},
        patterns={r"f\d{1,6}_skops": BYTES, r"f\d{1,6}_[A-Za-z0-9_]+": NUMERIC},
        dims=lambda state: {**_encoder_dims(state), "n_components": len(state["components"])},
        groups=_regression_groups,
        checks=(_regression_checks,),
    ),
}


def validate_state(model_type: str, state: Any, arrays: Mapping[str, np.ndarray]) -> None:
    """Raise :class:`ModelFileError` unless ``state`` and ``arrays`` fit ``model_type``'s schema."""
    schema = SCHEMAS.get(model_type)
    if schema is None:
        raise ModelFileError(f"The model type {model_type!r} has no state schema to check against.")
    try:
        schema.check(state, arrays)
    except ModelFileError:
        raise
    except (KeyError, IndexError, TypeError, ValueError) as exc:  # a rule meeting odd state
        raise invalid(f"its arrays do not fit its state ({type(exc).__name__}: {exc})") from None


def probe_frame(encoder_state: Mapping[str, Any]) -> Any:
    """One synthetic row for the encoder's columns: numeric medians, the first kept category,
    missing elsewhere (used to check that a rebuilt model predicts at all)."""
    import pandas as pd

    numeric = dict(zip(encoder_state["numeric"], encoder_state["median"], strict=True))
    categorical = {c: (cats[0] if cats else None) for c, cats in encoder_state["categorical"]}
    row = {c: numeric.get(c, categorical.get(c)) for c in encoder_state["columns"]}
    frame = pd.DataFrame([row])
    for c in encoder_state["columns"]:
        if c not in numeric:
            frame[c] = frame[c].astype(object)
    return frame
