"""Auditing an outside model and writing the report (:mod:`fairengine.audit`,
:mod:`fairengine.report`).

* ``audit``: a scikit-learn pipeline (one-hot + logistic regression, trained on other rows) saved
  with skops and audited on Adult (German credit with ``--quick``) through the model-file route:
  load with the trusted-type checks, predict, score with intervals and the threshold curve, the
  baselines; then ThresholdOptimizer on its scores; the cost table against a reweighing and a
  ThresholdOptimizer frontier; a saved comparison (write, validated read) and the HTML report.
  The rows give each step's seconds, the outside model's and the post-processed point, and the
  report's size.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path


def _pipeline(task, path: Path) -> None:
    import skops.io as sio
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    table = task.frame.drop(columns=[task.target])
    numeric = list(table.select_dtypes("number").columns)
    text = [c for c in table.columns if c not in numeric]
    model = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), text), (StandardScaler(), numeric)
        ),
        LogisticRegression(max_iter=500),
    )
    half = len(table) // 2
    sio.dump(model.fit(table.iloc[:half], task.frame[task.target].iloc[:half]), path)


def audit(quick: bool) -> list[dict]:
    """Audit a skops pipeline, post-process it, cost table, saved comparison and report"""
    from fairengine.audit import audit, cost_of_fairness, from_model_file, postprocess
    from fairengine.audit.comparison import build_comparison, load_comparison, save_comparison
    from fairengine.data import load_dataset
    from fairengine.frontier import sweep
    from fairengine.report import build_report

    task = load_dataset("german_credit" if quick else "adult")
    rows, seconds = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.skops"
        _pipeline(task, path)
        start = time.perf_counter()
        outside = from_model_file(task, path)
        result = audit(outside, name="pipeline")
        seconds["load, predict and audit the skops pipeline"] = time.perf_counter() - start
        start = time.perf_counter()
        post = postprocess(result, outside.task)
        seconds["ThresholdOptimizer on its scores"] = time.perf_counter() - start
        train, test = outside.task.split()
        frontiers = [
            sweep("reweighing", train, test, {"strength": [0.0, 0.5, 1.0]}),
            sweep("threshold_optimizer", train, test, {"tol": [0.0, 0.05, 0.1]}),
        ]
        start = time.perf_counter()
        cost = cost_of_fairness(result, frontiers)
        seconds["cost table"] = time.perf_counter() - start
        start = time.perf_counter()
        comparison = build_comparison(outside.task, frontiers, [result, post], ["pipeline"])
        saved = save_comparison(comparison, Path(tmp) / "c.json")
        load_comparison(saved, train=train, test=test)
        seconds["comparison: build (pins, cards), save, validated load"] = (
            time.perf_counter() - start
        )
        start = time.perf_counter()
        page = build_report(comparison)
        seconds["HTML report"] = time.perf_counter() - start
        size = saved.stat().st_size
    rows += [{"what": what, "value": round(v, 3), "unit": "s"} for what, v in seconds.items()]
    for label, item in (("outside model", result), ("after ThresholdOptimizer", post)):
        error, dp = item.point()
        value = f"{error:.4f} / {dp:.4f}"
        note = f"{task.name}, {len(test.frame):,} test rows"
        rows.append({"what": f"{label}: test error / dp_diff", "value": value, "note": note,
                     "unit": ""})  # fmt: skip
    rows.append({"what": "fairer points found (cost table)", "value": len(cost), "unit": "rows"})
    note = f"plotly.js embedded; comparison file {size:,} bytes"
    mb = round(len(page.encode()) / 2**20, 2)
    rows.append({"what": "report size", "value": mb, "unit": "MB", "note": note})
    return rows


def register(registry) -> None:
    registry.add(audit)
