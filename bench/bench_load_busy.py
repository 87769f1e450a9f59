"""Time to a first frontier for a fresh upload, on a quiet machine and beside busy neighbours.

A real Streamlit server (``tests/e2e/harness.py``, its own session as under a supervisor) and a
headless Chromium (Playwright, ``/usr/bin/chromium``): the visitor uploads a 20,000-row table
built from the bundled Adult data (``income`` as the last column, so the Data page opens on a
binary task with ``sex`` as the sensitive attribute), opens Compare & export through the
sidebar, opens "Compute a frontier" and presses **Run sweep** with the panel's defaults (its
first method and knob, the default grid). Reported: seconds from the press until the frontier
chart is visible (and the upload's seconds), once on the machine as it is ("quiet") and once
with :data:`NEIGHBOURS` CPU-bound processes at normal priority (``while True: pass``, in a
session of their own, as another user's work on the host), with the ratio busy / quiet (the
goal is at most 2). Also reported: the job pool's CPU seconds (the server's child processes)
and the neighbours' over the sweep.

Runs against the current checkout ("ours") and, with ``FAIRENGINE_BENCH_BEFORE=<commit>``,
against that commit too ("before"; a sweep that shows no frontier within
:data:`FRONTIER_WAIT_S` is reported as such). The machine's other load changes the numbers: the
report gives the load average at the start of each run.

One command: ``FAIRENGINE_BENCH_BEFORE=<commit> nice -n 5 python bench/run.py
load_busy_first_frontier`` (5–15 minutes on a 2-core machine).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import bench_load  # noqa: E402 - the bench folder is put on the path just above

ROWS = 20_000
NEIGHBOURS = 2
FRONTIER_WAIT_S = 420
CHART = bench_load.CHART


def upload_table(folder: Path) -> Path:
    """A 20,000-row CSV from the bundled Adult data, its binary target as the last column."""
    from fairengine.data import load_dataset

    frame = load_dataset("adult").frame.sample(n=ROWS, random_state=0)
    columns = [c for c in frame.columns if c != "income"] + ["income"]
    path = folder / "applicants_20k.csv"
    frame[columns].to_csv(path, index=False)
    return path


def _neighbours() -> list[subprocess.Popen]:
    return [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        for _ in range(NEIGHBOURS)
    ]


def _stop(processes: list[subprocess.Popen]) -> float:
    """Kill the neighbours (by pid); their CPU seconds."""
    from dashboard.components.job_state import process_cpu_seconds

    cpu = sum(process_cpu_seconds(p.pid) or 0.0 for p in processes)
    for process in processes:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()
    return cpu


def _open_compare_and_sweep(page: Any, table: Path) -> float:
    """Upload ``table`` on the Data page, open Compare & export, press Run sweep; seconds the
    upload took until its page was idle."""
    import harness

    start = time.monotonic()
    page.get_by_text("Upload a file").click()
    harness.wait_for_app(page, timeout=bench_load.TIMEOUT_MS)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(table))
    harness.wait_for_app(page, timeout=bench_load.TIMEOUT_MS)
    uploaded = time.monotonic() - start
    page.get_by_role("link", name="Compare & export").click()
    harness.wait_for_app(page, timeout=bench_load.TIMEOUT_MS)
    details = page.locator("details").filter(has_text="Compute a frontier").first
    if details.get_attribute("open") is None:
        details.locator("summary").click()
    harness.wait_for_app(page, timeout=bench_load.TIMEOUT_MS)
    page.get_by_role("button", name="Run sweep").click()
    return uploaded


def _page_words(page: Any, limit: int = 240) -> str:
    """The page's notices and progress texts (what a visitor reads while waiting)."""
    try:
        texts = page.locator(
            '[data-testid="stAlert"], [data-testid="stProgress"]'
        ).all_inner_texts()
    except Exception:
        return ""
    return " | ".join(" ".join(t.split()) for t in texts)[:limit]


def _first_frontier(root: Path, label: str, busy: bool) -> dict[str, Any]:
    import harness
    from playwright.sync_api import sync_playwright

    neighbours: list[subprocess.Popen] = []
    with (
        tempfile.TemporaryDirectory(prefix="fairengine-bench-upload-") as folder,
        bench_load._server(root) as server,
        bench_load._Usage(server.process.pid) as usage,
        sync_playwright() as playwright,
    ):
        table = upload_table(Path(folder))
        browser = harness.launch_browser(playwright)
        try:
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.goto(server.url)
            harness.wait_for_app(page, timeout=bench_load.TIMEOUT_MS)
            if busy:
                neighbours = _neighbours()
                time.sleep(2.0)
            load = os.getloadavg()[0]
            uploaded = _open_compare_and_sweep(page, table)
            usage.mark("pressed")
            seconds = bench_load._until_charts(page, 1, timeout_ms=FRONTIER_WAIT_S * 1000)
            usage.mark("shown")
            said = "" if seconds is not None else _page_words(page)
        finally:
            neighbour_cpu = _stop(neighbours)
            browser.close()
    workers = usage.between("pressed", "shown")["workers"]
    where = f"{NEIGHBOURS} CPU-bound neighbours at normal priority" if busy else "no neighbour"
    shown = (
        "frontier chart visible" if seconds is not None else f"no frontier in {FRONTIER_WAIT_S} s"
    )
    return {
        "what": f"{label}: first frontier on Compare, fresh {ROWS:,}-row upload, {where}",
        "value": round(seconds, 1) if seconds is not None else float("nan"),
        "unit": "s",
        "note": (
            f"{shown} after pressing Run sweep (Compare's defaults); upload {uploaded:.1f} s; job "
            f"pool CPU {workers:.1f} s"
            + (f", neighbours {neighbour_cpu:.0f} CPU s in all" if busy else "")
            + f"; 1-min load average at start {load:.2f}"
            + (f"; the page said: {said}" if said else "")
        ),
    }


def _pair(root: Path, label: str) -> list[dict[str, Any]]:
    quiet = _first_frontier(root, label, busy=False)
    busy = _first_frontier(root, label, busy=True)
    ratio = busy["value"] / quiet["value"] if quiet["value"] == quiet["value"] else float("nan")
    summary = {
        "what": f"{label}: first frontier, busy / quiet",
        "value": round(ratio, 2) if ratio == ratio else float("nan"),
        "unit": "x",
        "note": "goal: at most 2x",
    }
    return [quiet, busy, summary]


def load_busy_first_frontier(quick: bool) -> list[dict[str, Any]]:
    """Seconds to a first frontier for a fresh upload, quiet and beside busy neighbours."""
    rows = []
    before = None if quick else os.environ.get("FAIRENGINE_BENCH_BEFORE")
    if before:
        with bench_load._checkout(before) as root:
            rows += _pair(root, f"before ({before[:8]})")
    return rows + _pair(bench_load.ROOT, "ours")


def register(registry) -> None:
    """Add this module's benchmarks to the harness (see bench/run.py)."""
    registry.add(load_busy_first_frontier)
