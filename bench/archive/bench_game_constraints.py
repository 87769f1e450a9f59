"""The exponentiated-gradient games before / after the constraint objects.

``eg_before_after`` times the same real fits with the engine of a base commit (``BASE``, main
before the refactor: unpacked with ``git archive`` into a temporary folder) and with this
checkout, each in its own subprocess (single BLAS thread; before and after alternate, best of
``REPEATS`` rounds each, so a load change on the shared machine hits both), and checks the two
give the same predictions:

* fair regression, statistical parity, practical loop (law school, 2,000 rows, N = 40, ε = 0.05);
* fair regression, bounded group loss, practical (same rows, ζ = 0.0046);
* proxy-fair classifier, equal error, paired-regression learner (adult, 3,000 rows, race).

``ratio`` = before / after seconds (> 1: faster now).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: main before the refactor.
BASE = "6c228ae"
REPEATS = 3

_SCRIPT = r"""
import json, sys, time
import numpy as np
from threadpoolctl import threadpool_limits
from fairengine.data import from_frame, load_dataset
from fairengine.methods.fair_regression import FairRegressor
from fairengine.data.encoding import FeatureEncoder
from fairengine.methods.multiaccurate_proxy import ProxyFairClassifier

quick, repeats = sys.argv[1] == "1", int(sys.argv[2])
task = load_dataset("law_school")
frame = task.frame.sample(600 if quick else 2000, random_state=4)
small = from_frame(frame, target=task.target, sensitive=list(task.sensitive),
                   kind="regression", name=task.name)
train, test = small.split(test_size=0.5, random_state=4)
z = FeatureEncoder().fit_transform(train.X)
y, a = np.asarray(train.y, float), np.asarray(train.groups)
adult = load_dataset("adult", sensitive=["race"])
rows = adult.frame.sample(800 if quick else 3000, random_state=0).index
sub = adult.subset(np.flatnonzero(adult.frame.index.isin(rows)))
x = FeatureEncoder().fit_transform(sub.X)
labels, codes = np.unique(np.asarray(sub.groups), return_inverse=True)
soft, yc = np.eye(len(labels))[codes], np.asarray(sub.y, float)
def mean_prediction(q):
    q.fit(z, y, a)
    return q.component_predictions(z) @ q.weights_
fits = {
    "fair regression SP practical": lambda: mean_prediction(FairRegressor(eps=0.05, n_levels=40)),
    "fair regression BGL practical": lambda: mean_prediction(FairRegressor(
        constraint="bounded_group_loss", eps=0.0046, max_iter=50)),
    "proxy-fair classifier (equal error)": lambda: ProxyFairClassifier(eps=0.02, max_iter=30)
        .fit(x, yc, soft).predict_score(x),
}
out = {}
with threadpool_limits(limits=1, user_api="blas"):
    for name, fit in fits.items():
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            pred = np.asarray(fit(), float)
            best = min(best, time.perf_counter() - start)
        out[name] = {"seconds": best, "pred": pred.ravel().tolist()}
print(json.dumps(out))
"""


def _run(tree: Path, quick: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), FAIRENGINE_ASSETS=str(ROOT / "assets"),
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, "1" if quick else "0", "1" if quick else "2"],
        cwd=tree, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def _best(rounds: list[dict]) -> dict:
    """Per fit: the fastest round's seconds, the first round's predictions."""
    return {
        name: {"seconds": min(r[name]["seconds"] for r in rounds), "pred": rounds[0][name]["pred"]}
        for name in rounds[0]
    }


def eg_before_after(quick: bool) -> list[dict]:
    """Seconds per fit with main before the refactor and now; max abs Δ prediction in the note."""
    import numpy as np

    archive = subprocess.run(["git", "-C", str(ROOT), "archive", BASE, "fairengine"],
                             capture_output=True, check=True).stdout  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        runs: dict[str, list[dict]] = {"before": [], "after": []}
        for _ in range(1 if quick else REPEATS):
            runs["before"].append(_run(Path(tmp), quick))
            runs["after"].append(_run(ROOT, quick))
    before, after = (_best(runs[key]) for key in ("before", "after"))
    rows = []
    for name, new in after.items():
        old = before[name]
        diff = float(np.max(np.abs(np.subtract(old["pred"], new["pred"]))))
        rows.append({"what": f"{name}: before (main {BASE})", "value": round(old["seconds"], 3),
                     "unit": "s"})  # fmt: skip
        rows.append(
            {
                "what": f"{name}: after (constraint objects, one pool, one LS kernel)",
                "value": round(new["seconds"], 3),
                "unit": "s",
                "ratio": round(old["seconds"] / new["seconds"], 2),
                "note": f"before/after; max abs Δ prediction = {diff:.1e}",
            }
        )
    return rows


def register(registry) -> None:
    registry.add(eg_before_after)
