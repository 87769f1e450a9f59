"""Forged scikit-learn estimators inside model files (the skops payloads of fair regression).

skops trusts every scikit-learn estimator, and scikit-learn checks only the dtypes and shapes of
a tree's arrays on loading, while its C code walks children and reads features without bounds
checks. Each forged file below keeps a valid zip and recomputed checksums, so only the
estimator check of :mod:`fairengine.models.skops_codec` stands between it and a crash or a hang
at the probe prediction. Loads run in a child process with a timeout; times are printed.
"""

from __future__ import annotations

import copy
import io
import zipfile
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import skops.io as sio
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.svm import SVR
from sklearn.tree import DecisionTreeRegressor, ExtraTreeRegressor

from fairengine.export import ModelFileError, load_model, model_bytes
from fairengine.models import skops_codec
from tests.export.hostile import forge, members_of, time_loads_in_child

TREE_TYPES = {
    "DecisionTreeRegressor": lambda: DecisionTreeRegressor(max_depth=4, random_state=0),
    "ExtraTreeRegressor": lambda: ExtraTreeRegressor(max_depth=4, random_state=0),
    "RandomForestRegressor": lambda: RandomForestRegressor(3, max_depth=3, random_state=0),
    "ExtraTreesRegressor": lambda: ExtraTreesRegressor(3, max_depth=3, random_state=0),
    "GradientBoostingRegressor": lambda: GradientBoostingRegressor(n_estimators=3, max_depth=2),
    "HistGradientBoostingRegressor": lambda: HistGradientBoostingRegressor(max_iter=3),
}
#: Generous: a refused or loaded file takes milliseconds (printed); a cycle would never end.
WELL_UNDER = 1.0


@pytest.fixture(scope="module")
def base() -> dict[str, Any]:
    """A fair_regression model file whose components are stored estimators, and its matrix."""
    from fairengine.data import from_frame, load_dataset
    from fairengine.data.encoding import FeatureEncoder
    from fairengine.methods.fair_regression import FairRegressor
    from fairengine.methods.fair_regression.model import FairRegressionModel

    frame = load_dataset("law_school").frame.sample(300, random_state=0)
    task = from_frame(frame, target="ugpa_scaled", sensitive=["race"], kind="regression")
    encoder = FeatureEncoder().fit(task.X)
    Z = encoder.transform(task.X)
    regressor = FairRegressor(
        eps=0.05, n_levels=10, base_estimator=DecisionTreeRegressor(max_depth=3), max_iter=2
    ).fit(Z, task.y, task.groups)
    raw = model_bytes(FairRegressionModel(encoder, regressor))
    slot = next(n for n in sorted(members_of(raw)) if n.endswith("_skops.npy") and "/f" in n)
    y = (task.y - task.y.min()) / (task.y.max() - task.y.min())
    return {"raw": raw, "slot": slot, "Z": Z, "y": y, "X": task.X}


def _with_payload(base: dict[str, Any], payload: bytes) -> bytes:
    """The base file with ``payload`` (skops bytes) as its first stored component."""
    buffer = io.BytesIO()
    np.save(buffer, np.frombuffer(payload, dtype=np.uint8), allow_pickle=False)
    return forge({**members_of(base["raw"]), base["slot"]: buffer.getvalue()})


def _first_tree(estimator: Any) -> Any:
    """The first ``Tree`` or ``TreePredictor`` of a fitted estimator."""
    if hasattr(estimator, "_predictors"):
        return estimator._predictors[0][0]
    inner = getattr(estimator, "estimators_", None)
    inner = estimator if inner is None else np.ravel(inner)[0]
    return inner.tree_


def _nodes(tree: Any) -> tuple[np.ndarray, dict[str, str]]:
    """A writable copy of a tree's node records and the names of its fields."""
    if hasattr(tree, "nodes"):  # HistGradientBoosting's TreePredictor
        return tree.nodes.copy(), {
            "left": "left", "right": "right", "feature": "feature_idx",
            "threshold": "num_threshold", "leaf": "is_leaf",
        }  # fmt: skip
    return tree.__getstate__()["nodes"].copy(), {
        "left": "left_child", "right": "right_child", "feature": "feature",
        "threshold": "threshold", "leaf": "",
    }  # fmt: skip


def _set_nodes(tree: Any, nodes: np.ndarray) -> None:
    if hasattr(tree, "nodes"):
        tree.nodes = nodes
    else:
        tree.__setstate__({**tree.__getstate__(), "nodes": nodes})


def _inner(nodes: np.ndarray, f: dict[str, str]) -> np.ndarray:
    leaf = nodes[f["leaf"]] != 0 if f["leaf"] else nodes[f["left"]] == -1
    return np.flatnonzero(~leaf)


def _edits(n_features: int) -> dict[str, Callable[[np.ndarray, dict[str, str]], None]]:
    """Node edits of the hostile classes, on the root unless said otherwise (in place)."""

    def put(value: Any, *fields: str, node: int = 0) -> Callable:
        def edit(nodes: np.ndarray, f: dict[str, str]) -> None:
            for field in fields:
                nodes[f[field]][_inner(nodes, f)[node]] = value

        return edit

    def share(nodes: np.ndarray, f: dict[str, str]) -> None:
        nodes[f["right"]][0] = nodes[f["left"]][0]

    far = 2**31 - 1  # offsets of gigabytes: without the check, a segmentation fault
    return {
        "cycle: the root's right child is the root": put(0, "right"),
        "cycle: the last inner node's right child is the root": put(0, "right", node=-1),
        "two parents: the root's right child is its left child": share,
        "child index just past the last node": put(1_000, "left"),
        "children far out of range": put(far, "left", "right"),
        "feature index just out of range": put(n_features + 7, "feature"),
        "feature index far out of range": put(far, "feature"),
        "negative feature index": put(-3, "feature"),
        "threshold NaN": put(np.nan, "threshold"),
        "threshold -inf": put(-np.inf, "threshold"),
    }


def _forged_nodes(make: Callable[[], Any], base: dict[str, Any]) -> dict[str, bytes]:
    fitted = make().fit(base["Z"], base["y"])
    files = {"intact": _with_payload(base, sio.dumps(fitted))}
    for label, edit in _edits(base["Z"].shape[1]).items():
        estimator = copy.deepcopy(fitted)
        tree = _first_tree(estimator)
        nodes, fields = _nodes(tree)
        edit(nodes, fields)
        _set_nodes(tree, nodes)
        files[label] = _with_payload(base, sio.dumps(estimator))
    return files


def _swapped_arrays(make: Callable[[], Any], base: dict[str, Any]) -> dict[str, bytes]:
    """The first tree's node array swapped with every other array of the skops payload."""
    payload = sio.dumps(make().fit(base["Z"], base["y"]))
    with zipfile.ZipFile(io.BytesIO(payload)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    arrays = [n for n in members if n.endswith(".npy")]
    first = next(n for n in arrays if np.load(io.BytesIO(members[n])).dtype.names)
    files = {}
    for other in (n for n in arrays if n != first):
        swapped = {**members, first: members[other], other: members[first]}
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name, data in swapped.items():
                archive.writestr(name, data)
        files[f"nodes <-> {other}"] = _with_payload(base, buffer.getvalue())
    return files


def _report(rows: list[dict]) -> None:
    for row in rows:
        print(f"{row['label']}: {row['seconds'] * 1000:.1f} ms, {row['outcome'][:110]}")


def test_forged_tree_nodes_are_refused_quickly(base) -> None:
    """Cycles, shared children, out-of-range children or features and non-finite thresholds in
    the first tree of every stored tree type are refused, each in well under a second."""
    files = {
        f"{kind} | {label}": raw
        for kind, make in TREE_TYPES.items()
        for label, raw in _forged_nodes(make, base).items()
    }
    rows = time_loads_in_child(files, per_file=5)
    _report(rows)
    for row in rows:
        if row["label"].endswith("| intact"):
            assert row["outcome"] == "loaded", row
        else:
            assert "is not a valid tree" in row["outcome"], row
    assert max(row["seconds"] for row in rows) < WELL_UNDER


def test_swapped_estimator_arrays_are_refused_or_load_quickly(base) -> None:
    """A tree's node array swapped with each other array of the payload: scikit-learn's own
    ``Tree.__setstate__`` refuses a node or value array of the wrong dtype or shape; the shared
    tree check refuses node arrays of the right dtype that do not fit; nothing escapes."""
    files = {
        f"{kind} | {label}": raw
        for kind, make in TREE_TYPES.items()
        for label, raw in _swapped_arrays(make, base).items()
    }
    rows = time_loads_in_child(files, per_file=5)
    _report(rows)
    assert {row["label"].split(" | ")[0] for row in rows} == set(TREE_TYPES)
    assert all(r["outcome"] == "loaded" or r["outcome"].startswith("refused") for r in rows)
    assert max(row["seconds"] for row in rows) < WELL_UNDER
    by_sklearn = {
        r["label"].split(" | ")[0] for r in rows if "array from the pickle" in r["outcome"]
    }
    assert by_sklearn == set(TREE_TYPES) - {"HistGradientBoostingRegressor"}  # Tree's own check


def test_scikit_learn_refuses_a_tree_whose_arrays_do_not_match(base) -> None:
    """What scikit-learn checks by itself on loading: ``Tree.__setstate__`` refuses values of
    another shape than (nodes, outputs, classes); the node contents it leaves unchecked."""
    tree = DecisionTreeRegressor(max_depth=2).fit(base["Z"], base["y"])
    state = tree.tree_.__getstate__()
    with pytest.raises(ValueError, match="Wrong shape for value array"):
        tree.tree_.__setstate__({**state, "values": state["values"][:-1]})
    nodes = state["nodes"].copy()
    nodes["right_child"][0] = 0
    tree.tree_.__setstate__({**state, "nodes": nodes})  # a cycle is accepted by scikit-learn
    with pytest.raises(ValueError, match="is not a valid tree: a child index before its parent"):
        skops_codec.check(tree)


def test_linear_coefficients_must_fit_the_features(base) -> None:
    """A stored linear estimator whose coef_ / intercept_ do not fit its n_features_in_ (or are
    not finite) is refused before it predicts."""
    n = base["Z"].shape[1]
    forged = {
        "coef_ too long": lambda m: setattr(m, "coef_", np.ones(n + 3)),
        "coef_ as a wrong matrix": lambda m: setattr(m, "coef_", np.ones((2, n - 1))),
        "coef_ NaN": lambda m: m.coef_.__setitem__(0, np.nan),
        "intercept_ of three targets": lambda m: setattr(m, "intercept_", np.ones(3)),
        "n_features_in_ changed": lambda m: setattr(m, "n_features_in_", n + 1),
    }
    files = {}
    for make in (LinearRegression, Ridge):
        fitted = make().fit(base["Z"], base["y"])
        files[f"{make.__name__} intact"] = _with_payload(base, sio.dumps(fitted))
        for label, edit in forged.items():
            estimator = copy.deepcopy(fitted)
            edit(estimator)
            files[f"{make.__name__} {label}"] = _with_payload(base, sio.dumps(estimator))
    rows = time_loads_in_child(files, per_file=5)
    _report(rows)
    for row in rows:
        expected = "loaded" if row["label"].endswith("intact") else "refused"
        assert row["outcome"].startswith(expected), row


def test_unreviewed_estimator_types_are_refused_at_export_and_at_load(base) -> None:
    """An estimator whose stored arrays fairengine cannot check (here libsvm's SVR) is refused
    when exported, and a file holding one anyway is refused when loaded."""
    svr = SVR().fit(base["Z"][:100], base["y"][:100])
    with pytest.raises(skops_codec.ExportRefused, match="SVR .*cannot check"):
        skops_codec.dump(svr)
    with pytest.raises(ModelFileError, match="SVR .*cannot check"):
        load_model(_with_payload(base, sio.dumps(svr)))


def test_intact_stored_estimators_round_trip(base) -> None:
    """Every reviewed tree type stores and loads through the codec, predicting as before."""
    for kind, make in TREE_TYPES.items():
        fitted = make().fit(base["Z"], base["y"])
        loaded = skops_codec.load(skops_codec.dump(fitted))
        np.testing.assert_array_equal(loaded.predict(base["Z"]), fitted.predict(base["Z"]), kind)
