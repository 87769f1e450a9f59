"""Hostile untrusted files, built on demand: the inputs a visitor could upload (a model file, a
skops pipeline, a saved comparison) to freeze the server's interpreter, exhaust its memory or
burn its CPU. Shared by the engine's tests, the browser tests and ``bench/bench_untrusted.py``.

* :func:`escaped_quotes`, :func:`quote_bomb_model`, :func:`quote_bomb_comparison`: JSON with a
  string that never closes, made of escaped quotes (``"\\"\\"\\"…``): a regular expression that
  looks for the end of each string from each quote rescans the rest every time (quadratic).
* :func:`skops_bomb`: a skops archive of about 1 MB whose ``schema.json`` inflates to 1 GiB.
* :func:`chain_tree_pipeline`: a skops pipeline whose trees are chains (every row walks every
  node), small on disk and long to predict with.
* :func:`write_hostile_files`: all of them written into a folder, for browser tests.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

import numpy as np


def escaped_quotes(n_bytes: int) -> bytes:
    """``n_bytes`` of an unterminated JSON string of escaped quotes: ``"`` then ``\\"``…"""
    return b'"' + b'\\"' * ((n_bytes - 1) // 2)


def deflated_zip(members: dict[str, bytes] | list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    items = members.items() if isinstance(members, dict) else members
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        for name, data in items:
            out.writestr(name, data)
    return buffer.getvalue()


def quote_bomb_model(n_bytes: int = 120_000) -> bytes:
    """A ``.fairmodel`` of a few hundred bytes: its manifest opens a string of ``n_bytes`` of
    escaped quotes that never closes."""
    manifest = b'{"format": "fairengine-model", "model_type": ' + escaped_quotes(n_bytes)
    return deflated_zip({"manifest.json": manifest, "state.json": b"{}"})


def quote_bomb_comparison(n_bytes: int = 120_000) -> bytes:
    """A comparison file of ``n_bytes`` whose first axis opens a string that never closes."""
    head = b'{"format": "fairengine-comparison", "format_version": 1, "axes": ['
    return head + escaped_quotes(n_bytes - len(head))


def small_pipeline(kind: str = "forest", n_trees: int = 3) -> Any:
    """A fitted scikit-learn pipeline on two columns ``a``, ``b`` (a tree ensemble at its end)."""
    import pandas as pd
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    y = (X["a"] + 0.3 * rng.normal(size=200) > 0).astype(int)
    model = (
        RandomForestClassifier(n_estimators=n_trees, max_depth=3, random_state=0)
        if kind == "forest"
        else HistGradientBoostingClassifier(max_iter=n_trees, max_depth=3, early_stopping=False)
    )
    return Pipeline([("scale", StandardScaler()), ("model", model)]).fit(X, y)


def skops_bomb(inflated: int = 2**30) -> bytes:
    """A skops archive of a real small pipeline whose ``schema.json`` is replaced by JSON of
    ``inflated`` bytes (one long string of spaces), deflated to about ``inflated / 1000``
    bytes; its sizes are declared honestly, so zip readers inflate all of it."""
    import skops.io as sio

    with zipfile.ZipFile(io.BytesIO(sio.dumps(small_pipeline()))) as real:
        others = [(n, real.read(n)) for n in real.namelist() if n != "schema.json"]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        with out.open("schema.json", "w") as member:
            member.write(b'{"__class__": "Pipeline", "padding": "')
            chunk = b" " * 2**20
            for _ in range(inflated // len(chunk)):
                member.write(chunk)
            member.write(b'"}')
        for name, data in others:
            out.writestr(name, data)
    return buffer.getvalue()


def _chain_tree(tree: Any, depth: int) -> Any:
    """A new ``Tree`` like ``tree`` whose nodes are a chain of ``depth`` tests that every row
    passes to the right (a leaf on the left of each), ending in a leaf."""
    from sklearn.tree._tree import Tree

    state = tree.__getstate__()
    nodes = np.zeros(2 * depth + 1, dtype=state["nodes"].dtype)
    inner = np.arange(0, 2 * depth, 2)
    nodes["left_child"], nodes["right_child"] = -1, -1
    nodes["left_child"][inner], nodes["right_child"][inner] = inner + 1, inner + 2
    nodes["feature"][inner] = 0
    nodes["threshold"][inner] = -1e300  # every row goes right, down the whole chain
    nodes["threshold"][nodes["left_child"] == -1] = -2.0  # scikit-learn's leaf marker
    nodes["feature"][nodes["left_child"] == -1] = -2
    nodes["n_node_samples"], nodes["weighted_n_node_samples"] = 2, 2.0
    values = np.full((len(nodes), *state["values"].shape[1:]), 0.5)
    chain = Tree(tree.n_features, np.asarray(tree.n_classes, dtype=np.intp), tree.n_outputs)
    chain.__setstate__(
        {**state, "max_depth": depth, "node_count": len(nodes), "nodes": nodes, "values": values}
    )
    return chain


def _chain_predictor(predictor: Any, depth: int) -> None:
    """The same chain for a HistGradientBoosting ``TreePredictor``."""
    nodes = np.zeros(2 * depth + 1, dtype=predictor.nodes.dtype)
    inner = np.arange(0, 2 * depth, 2)
    nodes["is_leaf"] = 1
    nodes["is_leaf"][inner] = 0
    nodes["left"][inner], nodes["right"][inner] = inner + 1, inner + 2
    nodes["num_threshold"][inner] = -1e300
    nodes["depth"] = np.arange(len(nodes)) // 2 + (np.arange(len(nodes)) % 2)
    nodes["count"] = 2
    predictor.nodes = nodes


def chain_tree_pipeline(kind: str = "forest", *, depth: int = 5_000, n_trees: int = 20) -> bytes:
    """A skops file (members deflated, as an attacker would ship it) of a pipeline whose
    ``n_trees`` trees (``kind``: ``"forest"`` or ``"hgb"``) are chains of ``depth`` tests every
    row walks to the end; otherwise an intact, trusted-types-only pipeline."""
    import skops.io as sio

    pipeline = small_pipeline(kind, n_trees)
    model = pipeline[-1]
    if kind == "forest":
        for estimator in model.estimators_:
            estimator.tree_ = _chain_tree(estimator.tree_, depth)
    else:
        for (predictor,) in model._predictors:
            _chain_predictor(predictor, depth)
    with zipfile.ZipFile(io.BytesIO(sio.dumps(pipeline))) as stored:
        return deflated_zip([(n, stored.read(n)) for n in stored.namelist()])


def pipeline_frame(n_rows: int = 2_000) -> Any:
    """A task with the two columns the pipelines above read (``a``, ``b``) and a 0/1 target,
    ``n_rows`` rows, two groups: what an outside-model audit scores them on."""
    import pandas as pd

    from fairengine.data import from_frame

    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "a": rng.normal(size=n_rows),
            "b": rng.normal(size=n_rows),
            "group": rng.choice(["x", "y"], size=n_rows),
            "label": rng.integers(0, 2, size=n_rows),
        }
    )
    return from_frame(frame, target="label", sensitive="group")


def write_hostile_files(folder: Any) -> dict[str, Any]:
    """Every hostile upload above written into ``folder`` (a path) under the name a visitor
    would upload it with: name -> path. For browser tests that upload each one in turn."""
    from pathlib import Path

    files = {
        "open-string.fairmodel": quote_bomb_model(),
        "open-string-comparison.json": quote_bomb_comparison(),
        "zip-bomb.skops": skops_bomb(),
        "chain-forest.skops": chain_tree_pipeline("forest"),
        "chain-hgb.skops": chain_tree_pipeline("hgb"),
    }
    paths = {}
    for name, raw in files.items():
        paths[name] = Path(folder) / name
        paths[name].write_bytes(raw)
    return paths
