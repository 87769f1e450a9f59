"""Untrusted uploads: the cost of checking them, and of the hostile files that used to freeze,
exhaust or burn the server (built by ``tests/hostile_files.py``).

* ``json_scan_scaling``: seconds of :func:`fairengine.export.safe.json_depth` on an unterminated
  string of escaped quotes at doubling sizes (linear: ratio about 2 per doubling, and refused at
  once), against the regular expression it replaced (``"(?:[^"\\\\]|\\\\.)*"`` then ``sub``; its
  ratio is about 4 per doubling) on small sizes, and their ratio at the largest size both ran.
* ``hostile_uploads``: each hostile file loaded in a fresh interpreter as the outside-model audit
  or the comparison upload loads it: CPU seconds, growth of peak memory (``ru_maxrss``) and the
  outcome. The chain-tree pipelines are scored on as many rows as Adult; the last row is the
  worst pipeline the limits accept (trees at the depth limit whose depths add up to the limit).
* ``legit_tree_depths``: depth and nodes a row walks of unlimited scikit-learn trees and forests
  on bundled data, against the limits of :mod:`fairengine.models.trees`.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The check json_depth replaced (kept here as the reference it is measured against).
_OLD_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _best(function, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def json_scan_scaling(quick: bool) -> list[dict]:
    sys.path.insert(0, str(ROOT))
    from fairengine.export import safe
    from tests.hostile_files import escaped_quotes

    def scan(raw: bytes) -> None:
        with contextlib.suppress(safe.ModelFileError):
            safe.json_depth(raw)

    rows = []
    new_sizes = [2**k for k in range(18, 22 if quick else 25)]
    old_sizes = [2**k for k in range(11, 14 if quick else 16)]
    for label, sizes, run in (
        ("linear scan", new_sizes, scan),
        ("old regex", old_sizes, lambda raw: _OLD_STRING.sub(b'""', raw)),
    ):
        previous = None
        for size in sizes:
            raw = escaped_quotes(size)
            seconds = _best(lambda raw=raw, run=run: run(raw))
            rows.append(
                {
                    "what": f"{label}: {size // 1024:,} KiB of escaped quotes",
                    "value": round(seconds, 5),
                    "unit": "s",
                    "ratio": round(seconds / previous, 2) if previous else "",
                    "note": "time / time at half the size" if previous else "",
                }  # fmt: skip
            )
            previous = seconds
    size = old_sizes[-1]
    old = rows[len(new_sizes) + len(old_sizes) - 1]["value"]
    raw = escaped_quotes(size)
    new = _best(lambda: scan(raw))
    rows.append(
        {
            "what": f"old regex / linear scan at {size // 1024} KiB",
            "value": round(old / new, 1),
            "unit": "x",
            "note": f"old regex extrapolated to 8 MiB at x4 per doubling: "
            f"{old * 4 ** (23 - size.bit_length() + 1) / 3600:,.0f} h",
        }  # fmt: skip
    )
    return rows


_CHILD = """
import resource, sys, time, warnings
warnings.simplefilter("ignore")
from tests.hostile_files import pipeline_frame
from fairengine.audit.comparison import load_comparison
from fairengine.audit.sources import from_model_file
import skops.io, sklearn.ensemble  # imported before the baseline
what, path, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
raw = open(path, "rb").read()
task = pipeline_frame(rows)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.process_time()
try:
    load_comparison(raw) if what == "comparison" else from_model_file(task, raw, "upload")
    outcome = "accepted"
except Exception as exc:
    outcome = f"{type(exc).__name__}: {exc}"
cpu = time.process_time() - start
print(cpu, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024, outcome)
"""


def _child(what: str, raw: bytes, rows: int) -> tuple[float, float, str]:
    with tempfile.NamedTemporaryFile(suffix=".bin") as handle:
        handle.write(raw)
        handle.flush()
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, what, handle.name, str(rows)],
            capture_output=True, text=True, cwd=ROOT, timeout=3600, check=True,
        )  # fmt: skip
    cpu, grown, outcome = done.stdout.strip().splitlines()[-1].split(" ", 2)
    return float(cpu), float(grown), outcome


def hostile_uploads(quick: bool) -> list[dict]:
    sys.path.insert(0, str(ROOT))
    from fairengine.models import trees
    from tests.hostile_files import (
        chain_tree_pipeline,
        quote_bomb_comparison,
        quote_bomb_model,
        skops_bomb,
    )

    rows_scored = 2_000 if quick else 48_842
    worst = trees.MAX_PATH_NODES // trees.MAX_TREE_DEPTH
    cases = [
        ("model file, open string", "model", quote_bomb_model()),
        ("comparison, open string (120 kB)", "comparison", quote_bomb_comparison()),
        ("skops zip bomb (1 GiB schema)", "model", skops_bomb()),
        ("skops forest of 20 chains, depth 5,000", "model", chain_tree_pipeline("forest")),
        ("skops HGB of 20 chains, depth 5,000", "model", chain_tree_pipeline("hgb")),
        (
            f"skops forest of {worst} chains at the depth limit (accepted)",
            "model",
            chain_tree_pipeline("forest", depth=trees.MAX_TREE_DEPTH, n_trees=worst),
        ),
    ]
    out = []
    for label, what, raw in cases:
        cpu, grown, outcome = _child(what, raw, rows_scored)
        note = f"{len(raw):,} bytes, {rows_scored:,} rows; {outcome[:90]}"
        out.append({"what": f"{label}: CPU", "value": round(cpu, 3), "unit": "s", "note": note})
        out.append({"what": f"{label}: peak memory growth", "value": round(grown), "unit": "MB"})
    return out


def legit_tree_depths(quick: bool) -> list[dict]:
    import pandas as pd
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    from fairengine.data import load_dataset
    from fairengine.models import trees

    rows = []
    for name in ("german_credit",) if quick else ("adult", "default_credit"):
        task = load_dataset(name)
        X, y = pd.get_dummies(task.X).astype(float).to_numpy(), task.y
        single = DecisionTreeClassifier(random_state=0).fit(X, y).get_depth()
        forest = RandomForestClassifier(n_estimators=10 if quick else 100, random_state=0)
        depths = [e.get_depth() for e in forest.fit(X, y).estimators_]
        boosted = HistGradientBoostingClassifier(max_iter=200, early_stopping=False).fit(X, y)
        walked = sum(int(p[0].nodes["depth"].max()) for p in boosted._predictors)
        for what, value, limit in (
            ("decision tree, unlimited: depth", single, trees.MAX_TREE_DEPTH),
            (f"random forest of {len(depths)}: deepest tree", max(depths), trees.MAX_TREE_DEPTH),
            (f"random forest of {len(depths)}: nodes a row walks", sum(depths),
             trees.MAX_PATH_NODES),
            ("HistGradientBoosting, 200 iterations: nodes a row walks", walked,
             trees.MAX_PATH_NODES),
        ):  # fmt: skip
            rows.append(
                {"what": f"{name}: {what}", "value": value, "unit": "nodes",
                 "ratio": round(value / limit, 3), "note": f"share of the limit {limit:,}"}
            )  # fmt: skip
    return rows


def register(registry) -> None:
    registry.add(json_scan_scaling)
    registry.add(hostile_uploads)
    registry.add(legit_tree_depths)
