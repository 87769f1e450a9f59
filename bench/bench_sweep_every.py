"""Compare & export's "Sweep every method" on an uploaded table: every method's default
frontier, submitted as the page submits it (one job of one call per method on the dashboard's
job pool, two workers), timed from submit until every point is in the store."""

from __future__ import annotations

import tempfile
import time
from dataclasses import replace

from fairengine.data import load_dataset
from fairengine.frontier import FrontierStore, task_key

#: The issue's goal: every method's frontier on the plane within this many seconds, 2 cores.
GOAL_S = 30.0


def sweep_every_method(quick: bool) -> list[dict]:
    """Every method's default frontier of a 20,000-row upload (2,000 with --quick), 2 workers."""
    from dashboard.components.jobs import JobPool
    from dashboard.components.knob_sweep import every_method_calls, every_method_settings

    rows = 2_000 if quick else 20_000
    adult = load_dataset("adult")
    task = replace(adult, frame=adult.frame.iloc[:rows].reset_index(drop=True), name="upload")
    train, test = task.split()
    plans, skipped = every_method_settings(train, test)
    pool = JobPool(workers=2)
    try:
        with tempfile.TemporaryDirectory() as folder:
            store = FrontierStore(folder)
            calls = every_method_calls(plans, train, test, store)
            start = time.perf_counter()
            job = pool.submit_parts("bench", "every", "every", calls)
            job.future.result(timeout=1800)
            wall = time.perf_counter() - start
            tkey = task_key(train, test)
            stored = {m: len(store.points(tkey, m)) for m in plans}
    finally:
        pool.shutdown()
    missing = [m for m, settings in plans.items() if stored[m] != len(settings)]
    n_points = sum(len(s) for s in plans.values())
    note = (
        f"ratio: against the {GOAL_S:g} s goal; {len(plans)} methods, {n_points} points"
        + (f"; not run on the task: {', '.join(skipped)}" if skipped else "")
        + (f"; MISSING points of {', '.join(missing)}" if missing else "")
    )
    return [
        {
            "what": f"sweep every method ({rows:,}-row upload of adult, 2 workers)",
            "value": wall,
            "unit": "s",
            "ratio": wall / GOAL_S,
            "note": note,
        }
    ]


def register(registry) -> None:
    """Add this module's benchmarks to the harness (see bench/run.py)."""
    registry.add(sweep_every_method)
