"""Knob latency in a real browser: how long after moving a method page's main knob its new
result is drawn, on the bundled default data at the page's defaults.

A real Streamlit server (``tests/e2e/harness.py``, fresh cache folder) and Debian's headless
Chromium through Playwright. For each method page: open it, wait for its first result, then move
the main knob one step at a time with the keyboard. Each step is timed from the key press until
the page draws the new result: its metric values differ from the previous ones and the page no
longer says it is showing the previous result (no fixed settle wait is counted). When a fit
takes so long that the page asks for **Run**, the benchmark presses it at once and says so.

Three modes, each on a server of its own with a fresh cache folder (``$FAIRENGINE_BENCH_MODES``,
default all): *cold*, each step right after the previous result was drawn; *ready*, each step
once the server's processes have used no CPU for a second (the runs one knob step away that the
page computes ahead, :mod:`dashboard.components.prefetch`, are done; their CPU seconds are
reported as "computed ahead"); *fitted*, as cold but without the runs ``fairengine precompute``
ships (every slider position of a method's ``demo_knob`` on its opening data), so each step is
fitted as for an uploaded table. ``FAIRENGINE_PREFETCH=0`` gives the same without computing ahead.

CPU seconds are those of the server's whole process tree (the Streamlit server, the job pool's
forkserver and every fit process descended from it, running or reaped) over the step: the fit
plus the page's rerun (and what background jobs did meanwhile). They do not depend on what else
the machine runs, unlike the wall-clock times.

``knob_job_cpu`` measures the fit job alone, as the dashboard runs it (a fresh process,
:func:`~fairengine.frontier.runs.compute_and_store` at a moved knob): its CPU seconds on an
empty run store (everything fitted, as every job did before anything was reused across jobs) and
on the store that the job at the default knob filled (what is reused across jobs: the
unconstrained baseline fit, max-entropy's comparison rows).

Run: ``nice -n 5 python bench/run.py knob_latency knob_job_cpu`` (``--quick``: two steps per
page, one job per case).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STEP_TIMEOUT_S = 180.0
#: The job pool's worker nice level for the benchmark (``$FAIRENGINE_WORKER_NICE``, default 0
#: here): fit work is measured, not how the scheduler shares a busy host.
BENCH_NICE = os.environ.get("FAIRENGINE_WORKER_NICE", "0")
PREVIOUS = "Showing the previous result until the new one is ready."
RUNNING = '[data-testid="stApp"][data-test-script-state="running"]'
#: A step that draws metrics equal to the last ones counts as done once the page is idle with no
#: pending result; if its script run was too quick to be seen, after this many seconds.
EQUAL_WAIT_S = 5.0


@dataclass(frozen=True)
class KnobPage:
    """A method page, the link that opens it and the label of its main knob's slider."""

    name: str
    link: str
    knob: str
    slot: str


PAGES = (
    KnobPage(
        "balanced_filtering", "/balanced_filtering", "Disclosivity budget", "balanced_filtering"
    ),
    KnobPage("maxent", "/maxent", "Uniform weight in the prior", "maxent"),
    # α has a single value on the bundled data (no round of the proxy game beats least squares
    # held out), so the page draws no α slider: the downstream bound ε is the knob to move
    KnobPage(
        "multiaccurate_proxy",
        "/multiaccurate_proxy",
        "Downstream fairness bound",
        "multiaccurate_proxy",
    ),
    KnobPage("noisy_groups", "/noisy_groups", "Allowed rate gap", "noisy_groups"),
    # fair regression needs a regression task: the bundled law-school data
    KnobPage(
        "fair_regression",
        "/fair_regression?dataset=law_school",
        "Fairness slack",
        "fair_regression",
    ),
)


def _harness() -> Any:
    e2e = str(ROOT / "tests" / "e2e")
    if e2e not in sys.path:
        sys.path.insert(0, e2e)
    import harness

    return harness


def _processes() -> dict[int, tuple[int, int]]:
    """pid → (parent pid, user + system ticks including reaped children) of every process."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # fields[1]: the parent pid
        out[int(entry.name)] = (int(fields[1]), sum(int(v) for v in fields[11:15]))
    return out


def tree_cpu_seconds(root_pid: int) -> float:
    """User + system CPU seconds of ``root_pid`` and every live process descended from it (the
    job pool's forkserver and the fits it started, each in a process group of its own),
    including what each got from the children it reaped."""
    processes = _processes()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in processes.items():
        children.setdefault(parent, []).append(pid)
    total, todo = 0, [root_pid]
    while todo:
        pid = todo.pop()
        if pid in processes:
            total += processes[pid][1]
        todo += children.get(pid, [])
    return total / os.sysconf("SC_CLK_TCK")


def _metric_text(page: Any) -> str:
    values = page.locator('[data-testid="stMain"] [data-testid="stMetricValue"]')
    return "|".join(values.all_inner_texts())


def _main_text(page: Any) -> str:
    try:
        return page.locator('[data-testid="stMain"]').inner_text(timeout=2_000)
    except Exception:  # the page is being redrawn: try again at the next poll
        return ""


def _wait_result(page: Any, before: str, slot: str, harness: Any) -> tuple[bool, bool]:
    """Wait until the page draws a result whose metrics differ from ``before``, or settles on
    an equal one (its script ran and ended with no pending result; if the run was too quick to
    be seen, after :data:`EQUAL_WAIT_S`); press Run once if the page asks for it. Returns
    (changed, pressed_run)."""
    start = time.monotonic()
    pressed = seen_running = False
    while time.monotonic() < start + STEP_TIMEOUT_S:
        text = _main_text(page)
        metrics = _metric_text(page)
        pending = PREVIOUS in text or "Knobs changed" in text
        if metrics and metrics != before and not pending:
            return True, pressed
        running = page.locator(RUNNING).count() > 0
        seen_running = seen_running or running
        waited = time.monotonic() - start
        if metrics and not pending and not running and (seen_running or waited > EQUAL_WAIT_S):
            return False, pressed
        run = page.locator('[data-testid="stButton"] button:has-text("Run")')
        if not pressed and "Knobs changed" in text and run.count():
            run.first.click()
            pressed = True
        page.wait_for_timeout(40)
    harness.wait_for_app(page, timeout=60_000)
    return False, pressed


def _first_result(page: Any, url: str, harness: Any) -> str:
    page.goto(url)
    harness.wait_for_app(page, timeout=300_000)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        text = _main_text(page)
        metrics = _metric_text(page)
        if metrics and PREVIOUS not in text and "Press Run" not in text:
            harness.wait_for_app(page, timeout=300_000)
            return _metric_text(page)
        if "Press Run" in text:
            page.get_by_role("button", name="Run").first.click()
        page.wait_for_timeout(200)
    raise TimeoutError(f"No first result on {url}")


def _idle(server: Any, quiet: float = 0.05, every: float = 1.0, limit: float = 180.0) -> float:
    """Wait until the server's process tree used less than ``quiet`` CPU seconds in each of two
    windows of ``every`` seconds in a row (what it computes ahead is done), at most ``limit``
    seconds; returns the CPU seconds it used meanwhile."""
    start = last = tree_cpu_seconds(server.process.pid)
    quiet_windows, deadline = 0, time.monotonic() + limit
    while time.monotonic() < deadline and quiet_windows < 2:
        time.sleep(every)
        now = tree_cpu_seconds(server.process.pid)
        quiet_windows = quiet_windows + 1 if now - last < quiet else 0
        last = now
    return tree_cpu_seconds(server.process.pid) - start


def _step(page: Any, server: Any, spec: KnobPage, before: str, harness: Any) -> tuple:
    """One ArrowRight on the main knob: (seconds, CPU seconds, changed, pressed Run)."""
    thumb = (
        page.locator('[data-testid="stSlider"]')
        .filter(has_text=spec.knob)
        .get_by_role("slider")
        .first
    )
    thumb.focus()
    cpu0 = tree_cpu_seconds(server.process.pid)
    start = time.perf_counter()
    thumb.press("ArrowRight")
    changed, pressed = _wait_result(page, before, spec.slot, harness)
    seconds = time.perf_counter() - start
    return seconds, tree_cpu_seconds(server.process.pid) - cpu0, changed, pressed


def measure_page(
    page: Any, server: Any, spec: KnobPage, steps: int, mode: str, harness: Any
) -> list[tuple]:
    """Per step (seconds, CPU seconds, changed, pressed Run, CPU seconds spent ahead) for one
    page: each step right after the previous result was drawn (``mode`` "cold"), or once the
    server has been idle for a second ("ready": what it computed ahead is done)."""
    before = _first_result(page, server.url + spec.link, harness)
    samples = []
    for _ in range(steps):
        ahead = _idle(server) if mode == "ready" else 0.0
        samples.append((*_step(page, server, spec, before, harness), ahead))
        harness.wait_for_app(page, timeout=120_000)  # the page's last rerun (not timed)
        before = _metric_text(page)
    return samples


Row = dict[str, Any]


def _rows(spec: KnobPage, mode: str, samples: list) -> list[Row]:
    seconds = [s[0] for s in samples]
    cpus = [s[1] for s in samples]
    unchanged = sum(not s[2] for s in samples)
    pressed = sum(s[3] for s in samples)
    within = sum(s <= 1.0 for s in seconds)
    note = (
        f"{len(samples)} steps of '{spec.knob}', {within} within 1 s; "
        f"CPU s (median) {statistics.median(cpus):.2f}"
    )
    if mode == "ready":
        ahead = statistics.median(s[4] for s in samples)
        note += f"; computed ahead before each step: {ahead:.2f} CPU s (median)"
    if pressed:
        note += f"; Run pressed in {pressed}"
    if unchanged:
        note += f"; {unchanged} steps drew equal metrics (timed until the page settled)"
    what = f"{spec.name} ({mode})"
    return [
        {"what": f"{what}: knob → new result, median", "value": statistics.median(seconds),
         "unit": "s", "note": note},
        {"what": f"{what}: knob → new result, max", "value": max(seconds), "unit": "s"},
        {"what": f"{what}: server CPU per step, median", "value": statistics.median(cpus),
         "unit": "CPU s", "note": f"max {max(cpus):.2f}"},
    ]  # fmt: skip


def _pages() -> list[KnobPage]:
    only = [n for n in os.environ.get("FAIRENGINE_BENCH_PAGES", "").split(",") if n]
    return [spec for spec in PAGES if not only or spec.name in only]


def _assets_without_runs(folder: Path) -> Path:
    """A view of the bundled assets in ``folder`` (symbolic links) without the shipped runs:
    the server then fits every setting, as it does for an uploaded table."""
    from fairengine.resources import assets_dir

    source = assets_dir()
    view = folder / "assets"
    (view / "frontiers").mkdir(parents=True)
    for item in source.iterdir():
        if item.name != "frontiers":
            (view / item.name).symlink_to(item)
    for item in (source / "frontiers").iterdir():
        if item.name != "runs":
            (view / "frontiers" / item.name).symlink_to(item)
    return view


def _run_mode(playwright: Any, mode: str, steps: int, harness: Any) -> list[Row]:
    """Every page in ``mode`` on a server of its own with a fresh cache folder."""
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as cache:
        env = {"FAIRENGINE_WORKER_NICE": BENCH_NICE}
        if mode == "fitted":
            env["FAIRENGINE_ASSETS"] = str(_assets_without_runs(Path(cache) / "view"))
        server = harness.start_app_server(cache_dir=cache, timeout=180, extra_env=env)
        browser = harness.launch_browser(playwright)
        try:
            for spec in _pages():
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                context.set_default_timeout(120_000)
                samples = measure_page(context.new_page(), server, spec, steps, mode, harness)
                context.close()
                rows += _rows(spec, mode, samples)
                shown = ", ".join(f"{s[0]:.2f}s/{s[1]:.2f}cpu" for s in samples)
                print(f"   {spec.name} ({mode}): {shown}", flush=True)
        finally:
            browser.close()
            server.stop()
    return rows


def knob_latency(quick: bool) -> list[Row]:
    """Method pages: time from a main-knob step until the new result is drawn (browser), right
    after the previous result ("cold"), once the server is idle ("ready"), and cold without the
    shipped runs ("fitted")."""
    from playwright.sync_api import sync_playwright

    harness = _harness()
    if harness.e2e_unavailable_reason():
        raise RuntimeError(harness.e2e_unavailable_reason())
    steps = 2 if quick else 3
    prefetch = os.environ.get("FAIRENGINE_PREFETCH") or "default (4)"
    rows: list[Row] = [
        {"what": "1-min load average at start", "value": os.getloadavg()[0], "unit": "",
         "note": f"{os.cpu_count()} cores; workers at nice {BENCH_NICE}; "
                 f"FAIRENGINE_PREFETCH {prefetch}"}
    ]  # fmt: skip
    modes = os.environ.get("FAIRENGINE_BENCH_MODES", "cold,ready,fitted").split(",")
    with sync_playwright() as playwright:
        for mode in modes:
            rows += _run_mode(playwright, mode, steps, harness)
    rows.append({"what": "1-min load average at end", "value": os.getloadavg()[0], "unit": ""})
    return rows


#: (method, bundled dataset, main knob, default value, the value one step away).
JOB_CASES = (
    ("balanced_filtering", "adult", "alpha", 0.2, 0.25),
    ("maxent", "adult", "C", 0.5, 0.55),
    ("multiaccurate_proxy", "adult", "eps", 0.01, 0.0112),
    ("noisy_groups", "adult", "slack", 0.03, 0.04),
    ("fair_regression", "law_school", "eps", 0.05, 0.0562),
)
_JOB = """
import sys, time
from fairengine.data import load_dataset
from fairengine.frontier.runs import RunStore, compute_and_store
import fairengine.methods
name, dataset, knob, value, root = sys.argv[1:6]
train, test = load_dataset(dataset).split()
store = RunStore(root)
start = time.process_time()
compute_and_store(store, name, train, test, {knob: float(value)})
print(time.process_time() - start)
"""


def job_cpu(name: str, dataset: str, knob: str, value: float, root: str) -> float:
    """CPU seconds of one fit job in a fresh process, with the run store at ``root``."""
    out = subprocess.run(
        [sys.executable, "-c", _JOB, name, dataset, knob, str(value), root],
        cwd=ROOT, capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    return float(out.stdout.strip().splitlines()[-1])


def _fresh_store_job(name: str, dataset: str, knob: str, value: float) -> float:
    """A job on an empty run store: it fits everything and writes the run (and what it can
    reuse later), as every job did before anything was reused across jobs."""
    with tempfile.TemporaryDirectory() as root:
        return job_cpu(name, dataset, knob, value, root)


def knob_job_cpu(quick: bool) -> list[Row]:
    """One fit job at a moved main knob, fresh process: CPU s on an empty / a filled run store."""
    repeats = 1 if quick else 2
    rows: list[Row] = []
    for name, dataset, knob, default, moved in JOB_CASES:
        with tempfile.TemporaryDirectory() as root:
            job_cpu(name, dataset, knob, default, root)  # the page's first job fills the store
            plain = min(_fresh_store_job(name, dataset, knob, moved) for _ in range(repeats))
            stored = min(job_cpu(name, dataset, knob, moved, root) for _ in range(repeats))
        rows.append(
            {"what": f"{name}: job CPU at {knob} = {moved:g}, store filled", "value": stored,
             "unit": "CPU s", "ratio": stored / plain,
             "note": f"on an empty store {plain:.2f} CPU s; ratio: filled / empty; "
                     f"min of {repeats}"}
        )  # fmt: skip
    return rows


def spin(seconds: float) -> float:
    """CPU-bound work of about ``seconds`` of one core (a fit stand-in that needs no data)."""
    end = time.process_time() + seconds
    total = 0.0
    while time.process_time() < end:
        total += sum(i * i for i in range(2_000))
    return total


def _visitor_job(pool: Any, key: str, work: float, ahead: int) -> float:
    """Wall seconds of a visitor's job of ``work`` CPU seconds submitted while ``ahead``
    background jobs (each 4× longer) wait or run; they are cancelled afterwards."""
    from concurrent import futures

    background = [
        pool.submit_background("ahead", f"{key}.b{i}", spin, 4 * work) for i in range(ahead)
    ]
    if ahead:  # one background job is running when the visitor's arrives
        deadline = time.monotonic() + 30
        while not background[0].running_calls and time.monotonic() < deadline:
            time.sleep(0.01)
    start = time.perf_counter()
    job = pool.submit("visitor", "fit", key, spin, work)
    futures.wait([job.future])
    seconds = time.perf_counter() - start
    for other in background:
        pool.cancel(other)
    while pool.active():
        time.sleep(0.05)
    return seconds


def prefetch_delay(quick: bool) -> list[Row]:
    """A visitor's job alone and with background jobs (the page's runs computed ahead) queued
    and one running: wall seconds, on 1 worker (the background job is preempted) and 2."""
    from dashboard.components.jobs import JobPool, Priority

    work, repeats = (0.5, 3) if quick else (1.0, 5)
    rows: list[Row] = []
    for workers in (1, 2):
        pool = JobPool(workers=workers, priority=Priority(nice=int(BENCH_NICE)))
        try:
            _visitor_job(pool, "warm", 0.1, 0)  # the warm parent starts
            alone, beside = [], []
            for i in range(repeats):  # alternated, so the host's load drifts over both
                alone.append(_visitor_job(pool, f"a{workers}.{i}", work, 0))
                beside.append(_visitor_job(pool, f"b{workers}.{i}", work, 4))
        finally:
            pool.shutdown()
        a, b = statistics.median(alone), statistics.median(beside)
        rows.append(
            {"what": f"{workers} worker(s): visitor's job with 4 background jobs, median",
             "value": b, "unit": "s", "ratio": b / a,
             "note": f"alone {a:.2f} s (median of {repeats}, {work:g} CPU s of work); ratio: "
                     f"with / alone; 1-min load {os.getloadavg()[0]:.1f}"}
        )  # fmt: skip
    return rows


def register(registry: Any) -> None:
    registry.add(knob_latency)
    registry.add(knob_job_cpu)
    registry.add(prefetch_delay)
