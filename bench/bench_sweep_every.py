"""Compare & export's "Sweep every method" on an uploaded table: every method's default
frontier, submitted as the page submits it (one job of one call per method on the dashboard's
job pool, two workers), timed from submit until every point is in the store.

Each method's call also reports the CPU seconds and wall seconds of its own process, so the
rows say where the time goes even on a shared machine (where the total wall measures the
neighbours as much as the work): the total CPU over 2 cores bounds the wall on 2 free cores.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import replace
from typing import Any

from fairengine.data import load_dataset
from fairengine.frontier import FrontierStore, task_key

#: The issue's goal: every method's frontier on the plane within this many seconds, 2 cores.
GOAL_S = 30.0
#: Total CPU seconds of all jobs that 2 free cores run within the goal, with room left for the
#: job processes' starts and for two workers not finishing together.
CPU_GOAL_S = 50.0


def timed(function: Any, *args: Any, **kwargs: Any) -> dict[str, float]:
    """Run one pool call in its job process; its CPU and wall seconds there."""
    cpu, wall = time.process_time(), time.perf_counter()
    function(*args, **kwargs)
    return {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall}


def sweep_every_method(quick: bool) -> list[dict]:
    """Every method's default frontier of a 20,000-row upload (2,000 with --quick), 2 workers."""
    import cloudpickle

    from dashboard.components.jobs import JobPool
    from dashboard.components.knob_sweep import every_method_calls, every_method_settings

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # job processes lack bench/
    rows = 2_000 if quick else 20_000
    adult = load_dataset("adult")
    task = replace(adult, frame=adult.frame.iloc[:rows].reset_index(drop=True), name="upload")
    train, test = task.split()
    plans, skipped = every_method_settings(train, test)
    pool = JobPool(workers=2)
    load = os.getloadavg()[0]
    try:
        with tempfile.TemporaryDirectory() as folder:
            store = FrontierStore(folder)
            calls = [
                (timed, (f, *a), k) for f, a, k in every_method_calls(plans, train, test, store)
            ]
            start = time.perf_counter()
            job = pool.submit_parts("bench", "every", "every", calls)
            times = job.future.result(timeout=1800)
            wall = time.perf_counter() - start
            tkey = task_key(train, test)
            stored = {m: len(store.points(tkey, m)) for m in plans}
    finally:
        pool.shutdown()
    missing = [m for m, settings in plans.items() if stored[m] != len(settings)]
    cpu = sum(t["cpu"] for t in times)
    out = [
        {
            "what": f"{method}: {len(plans[method])} points, CPU s in its job process",
            "value": round(t["cpu"], 2),
            "unit": "CPU s",
            "note": f"wall {t['wall']:.1f} s",
        }
        for method, t in zip(plans, times, strict=True)
    ]
    n_points = sum(len(s) for s in plans.values())
    note = (
        f"ratio: against the {GOAL_S:g} s goal; {len(plans)} methods, {n_points} points; "
        f"1-min load {load:.1f} at start, {os.getloadavg()[0]:.1f} at end"
        + (f"; not run on the task: {', '.join(skipped)}" if skipped else "")
        + (f"; MISSING points of {', '.join(missing)}" if missing else "")
    )
    what = f"{rows:,}-row upload of adult, 2 workers"
    return [
        *out,
        {
            "what": f"sweep every method, CPU s of all jobs ({what})",
            "value": round(cpu, 2),
            "unit": "CPU s",
            "ratio": cpu / CPU_GOAL_S,
            "note": f"ratio: against {CPU_GOAL_S:g} CPU s (within {GOAL_S:g} s on 2 free cores)",
        },
        {
            "what": f"sweep every method ({what})",
            "value": wall,
            "unit": "s",
            "ratio": wall / GOAL_S,
            "note": note,
        },
    ]


def register(registry) -> None:
    """Add this module's benchmarks to the harness (see bench/run.py)."""
    registry.add(sweep_every_method)
