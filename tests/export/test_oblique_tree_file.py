"""A balanced filter's (alpha, beta) tree proxy is checked when its model file loads: a forged
tree (a node that loops back, halfspace runs that overlap, leaves that do not match the filter's)
is refused in words before a model is built."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from fairengine.data import load_dataset
from fairengine.export import ModelFileError, load_model, model_bytes
from fairengine.methods import get_method
from tests.export.hostile import forge, members_of


@pytest.fixture(scope="module")
def tree_filter() -> dict[str, bytes]:
    train, test = load_dataset("german_credit").split(random_state=0)
    model = get_method("balanced_filtering").run(train, test, alpha=0.3, n_rounds=30).model
    members = members_of(model_bytes(model))
    assert json.loads(members["state.json"])["proxy"] == "tree"
    return members


def _array(members: dict[str, bytes], name: str) -> np.ndarray:
    return np.load(io.BytesIO(members[f"arrays/{name}.npy"]), allow_pickle=False)


def _with(members: dict[str, bytes], name: str, value: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, value, allow_pickle=False)
    return forge({**members, f"arrays/{name}.npy": buffer.getvalue()})


def test_the_real_tree_loads(tree_filter) -> None:
    assert load_model(forge(tree_filter)).predict_score is not None


def test_a_node_that_points_back_to_its_parent_is_refused(tree_filter) -> None:
    children = _array(tree_filter, "proxy_children").copy()
    inner = np.flatnonzero(children[:, 0] >= 0)
    assert inner.size, "the fitted tree has an inner node"
    children[inner[-1], 0] = inner[-1]  # its own child: a loop
    with pytest.raises(ModelFileError, match="proxy_\\* do not fit together"):
        load_model(_with(tree_filter, "proxy_children", children))


def test_overlapping_halfspace_runs_are_refused(tree_filter) -> None:
    children = _array(tree_filter, "proxy_children")
    start = _array(tree_filter, "proxy_start").copy()
    count = _array(tree_filter, "proxy_count")
    inner = np.flatnonzero(children[:, 0] >= 0)
    if inner.size < 2:
        count = count.copy()
        count[inner[0]] += 1  # one run past the last halfspace
        forged = _with(tree_filter, "proxy_count", count)
    else:
        start[inner[1]] = start[inner[0]]  # two inner nodes vote with the same halfspaces
        forged = _with(tree_filter, "proxy_start", start)
    with pytest.raises(ModelFileError, match="runs past the last halfspace or overlapping"):
        load_model(forged)


def test_a_leaf_count_that_does_not_match_the_filter_is_refused(tree_filter) -> None:
    children = _array(tree_filter, "proxy_children").copy()
    leaves = np.flatnonzero(children[:, 0] < 0)
    parent = np.flatnonzero(children[:, 0] >= 0)[0]
    children[parent] = -1  # an inner node made a leaf: fewer leaves than values of rho
    forged = _with(tree_filter, "proxy_children", children)
    with pytest.raises(ModelFileError, match="leaves for .* values of rho|do not fit together"):
        load_model(forged)
    assert leaves.size > 1
