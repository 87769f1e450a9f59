"""What a 21-point sweep adds to the parent process (target: "≤ 300 MB for any method").

For each method, a fresh process builds the Adult split of :mod:`bench_scaling` (1×), takes its
resident set size (RSS, psutil) after a full garbage collection, runs
:func:`fairengine.frontier.sweep` over 21 values of the method's main knob (``store=None``,
``n_jobs`` from ``FAIRENGINE_SWEEP_JOBS``, default 2: the points run in loky workers and the
parent keeps the :class:`~fairengine.frontier.Frontier` with every point's result, as the CLI
and the dashboard do), samples the parent's RSS every 0.1 s meanwhile, and reports

- *retained*: RSS after the sweep (frontier still referenced, after a collection) minus before,
- *peak*: the largest RSS sampled during the sweep minus before,
- the pickled size of the frontier's results (what the frontier holds).

``FAIRENGINE_SWEEP_METHODS=a,b`` restricts the methods; ``--quick`` runs 5 points.
Run ``python bench/bench_sweep_memory.py --worker METHOD POINTS`` for one JSON line.
"""

from __future__ import annotations

import gc
import json
import os
import pickle
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

#: The main knob of each method and its range (21 points by default).
GRIDS: dict[str, tuple[str, str, float, float]] = {
    "reweighing": ("strength", "lin", 0.0, 1.0),
    "fairlearn_eg": ("eps", "geom", 0.005, 0.5),
    "balanced_filtering": ("alpha", "lin", 0.0, 1.0),
    "maxent": ("C", "lin", 0.0, 1.0),
    "fair_regression": ("eps", "geom", 0.005, 1.0),
    "noisy_groups": ("noise", "lin", 0.0, 0.5),
    "multiaccurate_proxy": ("alpha", "geom", 0.01, 0.5),
}
LIMIT_MB = 300.0
TIMEOUT = 1800


def _values(method: str, points: int) -> list[float]:
    _, scale, low, high = GRIDS[method]
    space = np.geomspace if scale == "geom" else np.linspace
    return [round(float(v), 6) for v in space(low, high, points)]


def worker(method: str, points: int) -> dict:
    import psutil
    from bench_scaling import _tasks

    from fairengine.frontier import sweep

    process = psutil.Process()
    train, test = _tasks(method, 1, False)
    gc.collect()
    before = process.memory_info().rss
    peak = [before]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], process.memory_info().rss)
            time.sleep(0.1)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    knob = GRIDS[method][0]
    jobs = int(os.environ.get("FAIRENGINE_SWEEP_JOBS", "2"))
    start = time.perf_counter()
    frontier = sweep(method, train, test, {knob: _values(method, points)}, n_jobs=jobs)
    seconds = time.perf_counter() - start
    done.set()
    thread.join()
    gc.collect()
    after = process.memory_info().rss
    held = len(pickle.dumps(frontier, protocol=pickle.HIGHEST_PROTOCOL))
    return {
        "method": method, "points": points, "jobs": jobs, "seconds": seconds,
        "retained": (after - before) / 2**20, "peak": (max(peak[0], after) - before) / 2**20,
        "held": held / 2**20, "n": len(frontier.points) if hasattr(frontier, "points") else None,
    }  # fmt: skip


def measure(method: str, points: int) -> dict | None:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", method, str(points)]
    try:
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT,
                             check=True)  # fmt: skip
    except (subprocess.TimeoutExpired, subprocess.CalledProcessError) as exc:
        print(f"{method}: failed ({exc}; {getattr(exc, 'stderr', '')[-500:]})", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def sweep_memory(quick: bool) -> list[dict]:
    """Parent memory retained / peak over a 21-point sweep of each method on Adult."""
    points = 5 if quick else 21
    chosen = os.environ.get("FAIRENGINE_SWEEP_METHODS")
    methods = chosen.split(",") if chosen else list(GRIDS)
    rows = []
    for method in methods:
        got = measure(method, points)
        if got is None:
            rows.append({"what": f"{method}: {points}-point sweep failed", "value": float("nan"),
                         "unit": "MB"})  # fmt: skip
            continue
        knob, _, low, high = GRIDS[method]
        rows.append({
            "what": f"{method}: {points}-point sweep of {knob} in [{low}, {high}], memory the "
            "parent keeps", "value": round(got["retained"], 1), "unit": "MB",
            "ratio": round(got["retained"] / LIMIT_MB, 3),
            "note": f"ratio = retained / the {LIMIT_MB:.0f} MB limit; peak during the "
            f"sweep +{got['peak']:.1f} MB; the frontier (every point's result) pickles to "
            f"{got['held']:.2f} MB; n_jobs={got['jobs']}, wall {got['seconds']:.0f} s; Adult 1x",
        })  # fmt: skip
    return rows


def register(registry) -> None:
    registry.add(sweep_memory)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        print(json.dumps(worker(sys.argv[2], int(sys.argv[3]))))
    else:
        print(__doc__)
