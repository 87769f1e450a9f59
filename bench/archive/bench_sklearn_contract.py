"""scikit-learn citizenship, before and after: the shared tree codec against the former copies'
float64 walk, and the import footprint of ``fairengine.export`` before and after it stopped
importing every method.

* ``tree_codec_agreement``: rows where a tree walk disagrees with ``GradientBoostingRegressor`` /
  ``DecisionTreeRegressor.predict`` on Law School (real rows, plus rows placed on and one float64
  ulp either side of every threshold): the float64 walk of the former copies vs the shared codec.
* ``export_import_footprint``: modules of ``fairengine.methods`` / ``fairlearn`` loaded by
  ``import fairengine.export`` (before this issue it imported ``fairengine.methods``, i.e. all of
  them) and the import time.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.tree import DecisionTreeRegressor

from fairengine.data import load_dataset
from fairengine.data.encoding import FeatureEncoder
from fairengine.models import trees

ROOT = Path(__file__).resolve().parents[1]


def _float64_walk(tree, X: np.ndarray) -> np.ndarray:
    """The former copies' walk: float64 features against float64 thresholds."""
    node = np.zeros(len(X), dtype=np.int64)
    for _ in range(tree.max_depth + 1):
        inner = tree.children_left[node] >= 0
        left = X[np.arange(len(X)), np.maximum(tree.feature[node], 0)] <= tree.threshold[node]
        step = np.where(left, tree.children_left[node], tree.children_right[node])
        node = np.where(inner, step, node)
    return tree.value[node, 0, 0]


def _probes(X: np.ndarray, tree) -> np.ndarray:
    inner = tree.children_left >= 0
    feats, thr = tree.feature[inner], tree.threshold[inner]
    probe = np.repeat(X[:1], 3 * len(thr), axis=0)
    for i, (f, t) in enumerate(zip(feats, thr, strict=True)):
        probe[3 * i : 3 * i + 3, f] = [np.nextafter(t, -np.inf), t, np.nextafter(t, np.inf)]
    return probe


def tree_codec_agreement(quick: bool) -> list[dict]:
    task = load_dataset("law_school")
    X = FeatureEncoder().fit_transform(task.X)
    y = np.asarray(task.y, float)
    if quick:
        X, y = X[:3000], y[:3000]
    rows = []
    single = DecisionTreeRegressor(max_depth=10, random_state=0).fit(X, y)
    gb = GradientBoostingRegressor(n_estimators=50, max_depth=3, random_state=0).fit(X, y)
    for name, model, tree_list in (
        ("decision tree (depth 10)", single, [single]),
        ("gradient boosting (50 trees)", gb, [e[0] for e in gb.estimators_]),
    ):
        probes = np.vstack([_probes(X, t.tree_) for t in tree_list])
        for label, data in (("real rows", X), ("on/next to every split", probes)):
            truth = [t.predict(data) for t in tree_list]
            old = [_float64_walk(t.tree_, data) for t in tree_list]
            arrays = trees.forest_arrays(tree_list)
            new = trees.leaf_values(arrays, data)[:, :, 0].T
            bad_old = int(np.sum(np.any(np.array(old) != np.array(truth), axis=0)))
            bad_new = int(np.sum(np.any(new != np.array(truth), axis=0)))
            rows.append({"what": f"{name}, {label}: rows", "value": len(data), "unit": "rows"})
            rows.append({
                "what": f"{name}, {label}: float64 walk (former copies) ≠ scikit-learn",
                "value": bad_old, "unit": "rows",
            })  # fmt: skip
            rows.append({
                "what": f"{name}, {label}: shared codec ≠ scikit-learn",
                "value": bad_new, "unit": "rows",
            })  # fmt: skip
        del model
    return rows


def _imports(statement: str) -> tuple[int, int, float]:
    code = (
        "import sys, time; t = time.perf_counter(); "
        + statement
        + "; dt = time.perf_counter() - t;"
        "m = [k for k in sys.modules if k.startswith('fairengine.methods.')];"
        "f = [k for k in sys.modules if k.split('.')[0] == 'fairlearn'];"
        "print(len(m), len(f), dt)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return int(out[0]), int(out[1]), float(out[2])


def export_import_footprint(quick: bool) -> list[dict]:
    rows = []
    for label, statement in (
        ("before (export imported fairengine.methods)", "import fairengine.methods"),
        ("after: import fairengine.export", "import fairengine.export"),
    ):
        best = min((_imports(statement) for _ in range(1 if quick else 3)), key=lambda r: r[2])
        rows += [
            {"what": f"{label}: fairengine.methods.* modules", "value": best[0], "unit": "modules"},
            {"what": f"{label}: fairlearn modules", "value": best[1], "unit": "modules"},
            {"what": f"{label}: import time", "value": round(best[2], 3), "unit": "s"},
        ]
    return rows


def register(registry) -> None:
    registry.add(tree_codec_agreement)
    registry.add(export_import_footprint)
