"""How the job pool's CPU priority settings share the cores with a busy neighbour.

A stand-in server (its own session, as ``streamlit run`` under a supervisor) holds a real
:class:`~dashboard.components.jobs.JobPool` of 2 workers with one priority setting, runs two
CPU-bound jobs of :data:`SECONDS` wall seconds each, and meanwhile runs "page scripts" in its
main thread at normal priority: a fixed amount of Python work every 0.4 s, timed. Next to it run
:data:`NEIGHBOURS` CPU-bound processes at normal priority (``while True: pass``), in a session
of their own (another user's work on the host), or, in one variant, started by the server (same
session).

In the last settings the page scripts run without a pause (a server whose pages compute all
the time: the case where jobs niced inside its group could starve). Reported per setting: the
CPU share each job got (CPU seconds / wall seconds; 1.0 = a whole core) and the page scripts'
median and 90th-percentile wall time against the same work on an idle machine (1.0 = no
slowdown).

Run: ``nice -n 5 python bench/run.py sched_options`` (about 4 minutes; ``--quick`` tries fewer
settings). The machine's other load changes the numbers: the report gives the load average.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SECONDS = 10.0
NEIGHBOURS = 2
#: (nice, own group, neighbours: None / "apart" (own session) / "inside" (server's session))
SETTINGS = (
    (10, False, None),
    (10, False, "apart"),
    (19, True, "apart"),
    (19, False, "apart"),
    (5, False, "apart"),
    (10, True, "apart"),
    (5, True, "apart"),
    (10, False, "inside"),
    (15, False, "apart"),
    (10, False, None, 0.0),
    (15, False, None, 0.0),
    (19, False, None, 0.0),
)
QUICK = ((10, False, None), (10, False, "apart"), (19, True, "apart"))

STAND_IN = """
import json, os, statistics, subprocess, sys, time
sys.path.insert(0, {root!r})
from dashboard.components.jobs import JobPool, Priority

def spin(seconds):
    import resource
    end = time.time() + seconds
    while time.time() < end:
        pass
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime

def page_work():
    start = time.perf_counter()
    sum(i * i for i in range(300_000))
    return time.perf_counter() - start

quiet = [page_work() for _ in range(5)]
pool = JobPool(workers=2, per_session=4, priority=Priority({nice}, {own}))
pool.submit("w", "warm", "warm", os.getpid).future.result(timeout=120)
neighbours = []
if {inside}:
    neighbours = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range({n})]
time.sleep(1.0)
jobs = [pool.submit("s%d" % i, "spin", "spin%d" % i, spin, {seconds}) for i in range(2)]
pages = []
while not all(job.done for job in jobs):
    pages.append(page_work())
    time.sleep({pause})
for process in neighbours:
    process.kill()
    process.wait()
cpu = [job.future.result(timeout=120) for job in jobs]
pool.shutdown()
print(json.dumps({{"cpu": cpu, "pages": pages, "quiet": quiet}}), flush=True)
"""


def _spinners(count: int) -> list[subprocess.Popen]:
    return [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        for _ in range(count)
    ]


def _stop(processes: list[subprocess.Popen]) -> list[float]:
    """Kill the neighbours; the CPU seconds each got."""
    from dashboard.components.job_state import process_cpu_seconds

    cpu = [process_cpu_seconds(process.pid) or 0.0 for process in processes]
    for process in processes:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()
    return cpu


def _one(nice: int, own: bool, neighbours: str | None, pause: float) -> dict[str, Any]:
    code = STAND_IN.format(
        pause=pause,
        root=str(ROOT),
        nice=nice,
        own=own,
        inside=neighbours == "inside",
        n=NEIGHBOURS,
        seconds=SECONDS,
    )
    apart = _spinners(NEIGHBOURS) if neighbours == "apart" else []
    start, cpu = time.monotonic(), []
    try:
        server = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=SECONDS * 6 + 120,
            start_new_session=True,
            check=True,
        )
    finally:
        cpu = _stop(apart)
    data = json.loads(server.stdout.strip().splitlines()[-1])
    data["neighbours"] = [c / (time.monotonic() - start) for c in cpu]
    return data


def _row(nice: int, own: bool, neighbours: str | None, pause: float = 0.4) -> dict[str, Any]:
    load = os.getloadavg()[0]
    data = _one(nice, own, neighbours, pause)
    quiet = statistics.median(data["quiet"])
    pages = sorted(p / quiet for p in data["pages"])
    p90 = pages[min(len(pages) - 1, int(0.9 * len(pages)))]
    share = [c / SECONDS for c in data["cpu"]]
    group = "a session of its own (autogroup at the same nice)" if own else "the server's session"
    where = {
        None: "no neighbour",
        "apart": f"{NEIGHBOURS} CPU-bound neighbours at nice 0 in their own session",
        "inside": f"{NEIGHBOURS} CPU-bound neighbours at nice 0 in the server's session",
    }[neighbours]
    pages_busy = "; the server's pages computing without a pause" if pause == 0 else ""
    neighbour = ""
    if data["neighbours"]:
        each = ", ".join(f"{c:.2f}" for c in data["neighbours"])
        neighbour = f"neighbours {each} of a core over their whole run; "
    return {
        "what": f"jobs at nice {nice} in {group}; {where}{pages_busy}: CPU share per job",
        "value": round(statistics.mean(share), 2),
        "unit": "cores",
        "note": (
            f"jobs {share[0]:.2f}, {share[1]:.2f} of a core over {SECONDS:.0f} s; page script "
            f"wall time vs idle: median {statistics.median(pages):.2f}x, p90 {p90:.2f}x "
            f"({len(pages)} runs); {neighbour}1-min load average at start {load:.2f}"
        ),
    }


def sched_options(quick: bool) -> list[dict[str, Any]]:
    """Job CPU share and page-script slowdown per priority setting, beside busy neighbours."""
    return [_row(*setting) for setting in (QUICK if quick else SETTINGS)]


def register(registry) -> None:
    """Add this module's benchmarks to the harness (see bench/run.py)."""
    registry.add(sched_options)
