"""Sweeps that fit shared parts once: the threshold optimizer's tolerance frontier against
OxonFair's group-threshold frontier on the same rows.

Each side runs in a fresh process (imports and data loaded first, not timed), so the timed
part starts with no fit in memory: fairengine's 5-point ``sweep`` (encoding, logistic
regression, fairlearn's trade-off curves, the baselines, the shared evaluation), and OxonFair's
``FairPredictor`` on the same encoded rows (its logistic regression fit included), its frontier
computed once and each tolerance picked on it (``recompute=False``). OxonFair is a bench-only
dependency (``pip install oxonfair``); without it the bench says so and times fairengine only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

TOLERANCES = [0.0, 0.02, 0.05, 0.1, 0.2]
ROOT = Path(__file__).resolve().parents[1]


def _split(dataset: str):
    from fairengine.data import load_dataset

    return load_dataset(dataset).split()


def _fairengine(dataset: str) -> dict[str, Any]:
    from fairengine.frontier import sweep

    train, test = _split(dataset)
    sweep("threshold_optimizer", *_split("german_credit"), {"tol": [0.0]})  # imports only
    start = time.process_time()
    frontier = sweep("threshold_optimizer", train, test, {"tol": TOLERANCES})
    cpu = time.process_time() - start
    points = frontier.points.query("split == 'test'")
    return {"cpu": cpu, "errors": [float(e) for e in points["error"]], "rows": len(train.frame)}


def _oxonfair(dataset: str) -> dict[str, Any]:
    from oxonfair import FairPredictor
    from oxonfair import group_metrics as gm
    from sklearn.linear_model import LogisticRegression

    from fairengine.data.encoding import FeatureEncoder
    from fairengine.methods._linear import MAX_ITER

    train, test = _split(dataset)
    start = time.process_time()
    encoder = FeatureEncoder().fit(train.X)
    Z, Z_test = encoder.transform(train.X), encoder.transform(test.X)
    model = LogisticRegression(max_iter=MAX_ITER).fit(Z, train.y)
    fair = FairPredictor(model, {"data": Z, "target": train.y, "groups": train.groups})
    errors = []
    for i, tol in enumerate(TOLERANCES):
        fair.fit(gm.accuracy, gm.demographic_parity, tol, recompute=i == 0)
        test_data = {"data": Z_test, "target": test.y, "groups": test.groups}
        pred = np.asarray(fair.predict(test_data))
        errors.append(float(np.mean(pred != test.y)))
    return {"cpu": time.process_time() - start, "errors": errors, "rows": len(train.frame)}


def _in_fresh_process(side: str, dataset: str) -> dict[str, Any] | None:
    """One side's numbers from a fresh interpreter; None when it cannot run (no OxonFair)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.run(
        [sys.executable, __file__, side, dataset],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if proc.returncode != 0:
        if side == "oxonfair" and "No module named 'oxonfair'" in proc.stderr:
            return None
        raise RuntimeError(f"{side} side failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def threshold_frontier_vs_oxonfair(quick: bool) -> list[dict]:
    """The threshold optimizer's 5-point tolerance frontier (CPU s, fresh process) vs OxonFair."""
    dataset = "german_credit" if quick else "adult"
    ours = _in_fresh_process("fairengine", dataset)
    theirs = _in_fresh_process("oxonfair", dataset)
    where = f"{dataset}, {ours['rows']:,} train rows, tol {TOLERANCES}"
    if theirs is None:
        note = "OxonFair is not installed (pip install oxonfair): fairengine only"
        return [
            {
                "what": f"fairengine sweep ({where})",
                "value": ours["cpu"],
                "unit": "CPU s",
                "note": note,
            }
        ]
    rows = [
        {
            "what": f"fairengine sweep ({where})",
            "value": ours["cpu"],
            "unit": "CPU s",
            "ratio": ours["cpu"] / theirs["cpu"],
            "note": "ratio: fairengine / OxonFair (goal <= 1)",
        },
        {"what": "OxonFair frontier (LR fit included)", "value": theirs["cpu"], "unit": "CPU s"},
    ]
    for tol, a, b in zip(TOLERANCES, ours["errors"], theirs["errors"], strict=True):
        rows.append(
            {
                "what": f"test error at tol {tol:g}: fairengine (OxonFair {b:.4f})",
                "value": a,
                "unit": "error",
                "note": f"difference {a - b:+.4f}",
            }
        )
    return rows


def register(registry) -> None:
    """Add this module's benchmarks to the harness (see bench/run.py)."""
    registry.add(threshold_frontier_vs_oxonfair)


if __name__ == "__main__":  # one side, in a fresh process
    side, name = sys.argv[1], sys.argv[2]
    print(json.dumps((_fairengine if side == "fairengine" else _oxonfair)(name)))
