"""Dashboard under load, in a real browser (Playwright + /usr/bin/chromium).

``load_first_view``: a fresh cache, one visitor; seconds from opening each page until its charts
show (the method pages on Adult or, for fair regression, law school; Compare on Adult). The
runs shipped by ``fairengine precompute`` serve the method pages; a page that shows no chart
within the timeout (before this change: balanced filtering waited for a button) is reported as
such.

``load_seventh_visitor``: six visitors open pages that must compute (datasets without shipped
runs), all at once; then a seventh opens the Max-entropy page on Adult. Reported: seconds until
the seventh visitor's page is ready (its charts visible), seconds until the six have their
results, the server's peak memory (resident set of the server process and its children,
sampled with psutil every 0.25 s), and CPU seconds by process role (the Streamlit server, its
job-pool workers, the seventh visitor's browser, the six visitors' browsers, this bench) over
the seventh's wait and over the whole run; "server CPU per visitor" (the server's CPU seconds
over the run / 7) does not depend on what else the machine runs, unlike the seconds.

The seventh visitor's Chromium is its own browser instance at normal priority, and "ready"
means its charts are visible. The six computing visitors share a second Chromium instance.
The benchmark runs twice: once with every browser at the same priority, and once with the six
computing visitors' Chromium at nice +10 relative to the bench (every thread of its process
tree, re-applied every 0.25 s, since Chromium sets its own threads' priorities). The
second is the deployment's situation (visitors' browsers run on their own machines, not on the
server's 2 cores); the first is reported too, because here those browsers compete for the same
cores as the server and the seventh's browser. In both the seventh opens 3 s after the six,
while their own cold page loads (a fresh Chromium context each, ~3 CPU s) still run: on 2
cores they need 6–9 s before all six show their job. A third run (same priority) therefore
opens the seventh only once every one of the six pages shows its job (queued or running): six
sessions computing.

``load_seventh_visitor`` also reports, for the seventh's page, its renderer's main-thread
seconds (Chromium's CDP ``Performance.getMetrics``: task, script, layout, style), the websocket
frames it received and sent (a rerun request is one frame sent) and its requests; and, as an
extra variant, the same page opened with nobody computing, in a fresh browser context and then
in a second tab of that context (the cold visit's own cost, which ``load_first_view``'s single
tab does not pay).

Both run against the current checkout ("ours") and, with ``FAIRENGINE_BENCH_BEFORE=<commit>``,
also against that commit (extracted with ``git archive`` to a temporary folder, served with its
own ``.streamlit/config.toml``) as "before". ``--quick`` runs ours only.

One command: ``nice -n 5 python bench/run.py load_first_view load_seventh_visitor`` (about 10
minutes on a quiet 2-core machine; with ``FAIRENGINE_BENCH_BEFORE`` about twice that).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

#: (page, query, charts its complete first view draws)
FIRST_VIEW = (
    ("maxent", "dataset=adult", 3),
    ("balanced_filtering", "dataset=adult", 2),
    ("noisy_groups", "dataset=adult", 1),
    ("multiaccurate_proxy", "dataset=adult", 4),
    ("fair_regression", "dataset=law_school", 3),
    ("compare", "dataset=adult", 1),
)
#: nice increment (relative to the bench's own) of the six computing visitors' Chromium in the
#: second seventh-visitor run.
BUSY_BROWSER_NICE = 10
#: Six visitors whose pages compute (no shipped run for these tasks).
BUSY = (
    "noisy_groups?dataset=compas",
    "noisy_groups?dataset=german_credit",
    "maxent?dataset=german_credit",
    "multiaccurate_proxy?dataset=compas",
    "balanced_filtering?dataset=compas",
    "fair_regression?dataset=communities_crime",
)
SEVENTH = ("maxent", "dataset=adult", 3)
TIMEOUT_MS = 120_000
CHART = '[data-testid="stPlotlyChart"]'


@contextlib.contextmanager
def _checkout(commit: str | None) -> Iterator[Path]:
    """The repo root to serve: this checkout, or ``commit`` extracted to a temporary folder."""
    if commit is None:
        yield ROOT
        return
    with tempfile.TemporaryDirectory(prefix="fairengine-before-") as tmp:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        yield Path(tmp)


class _Usage:
    """Peak resident memory of the server's process tree and CPU seconds by process role,
    sampled in a thread every 0.25 s.

    Roles: ``server`` (the Streamlit process itself), ``workers`` (its children: the job pool),
    ``six`` (the six computing visitors' Chromium: the trees in :attr:`crowd_roots`),
    ``browser`` (every other Chromium process: the seventh visitor's, or the one visitor's of a
    first view), ``bench`` (this process and Playwright's driver). CPU seconds are the last
    value seen per process id, so processes that end between samples lose at most 0.25 s each.
    :meth:`mark` snapshots the totals so that a window's share can be reported.
    """

    ROLES = ("server", "workers", "browser", "six", "bench")

    def __init__(self, pid: int) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.me = psutil.Process()
        self.peak = 0
        self._cpu: dict[int, tuple[str, float]] = {}
        self.marks: dict[str, dict[str, float]] = {}
        #: Process trees of the six visitors' Chromium (role ``six``).
        self.crowd_roots: list[int] = []
        #: Whether to keep them at :data:`BUSY_BROWSER_NICE` more than this bench, thread by
        #: thread, at every sample.
        self.nice_crowd = False
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> int:
        import psutil

        total = 0
        try:
            server_tree = [self.root, *self.root.children(recursive=True)]
            mine = self.me.children(recursive=True)
        except psutil.Error:
            return 0
        server_pids = {p.pid for p in server_tree}
        for process in server_tree:
            with contextlib.suppress(psutil.Error):
                total += process.memory_info().rss
        roles = [(p, "server" if p.pid == self.root.pid else "workers") for p in server_tree]
        crowd = set()
        for pid in self.crowd_roots:
            with contextlib.suppress(psutil.Error):
                crowd |= {pid, *(c.pid for c in psutil.Process(pid).children(recursive=True))}
        for process in mine:
            if process.pid in server_pids:
                continue
            with contextlib.suppress(psutil.Error):
                chromium = "chrom" in process.name()
                role = "six" if process.pid in crowd else "browser" if chromium else "bench"
                roles.append((process, role))
        roles.append((self.me, "bench"))
        with self._lock:
            for process, role in roles:
                with contextlib.suppress(psutil.Error):
                    times = process.cpu_times()
                    self._cpu[process.pid] = (role, times.user + times.system)
        self._renice()
        return total

    def _renice(self) -> None:
        """Lower every thread of the :attr:`crowd_roots` trees to the bench's nice + 10 (when
        :attr:`nice_crowd`).

        Per thread, and again at every sample: Linux nice values belong to threads, and
        Chromium (running as root here) sets its own processes' and threads' priorities, e.g.
        a renderer back to 0, so starting it under ``nice`` is not enough."""
        import psutil

        if not self.nice_crowd:
            return
        target = min(19, os.getpriority(os.PRIO_PROCESS, 0) + BUSY_BROWSER_NICE)
        for pid in self.crowd_roots:
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(pid)
                for process in [root, *root.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        for thread in process.threads():
                            with contextlib.suppress(OSError):
                                if os.getpriority(os.PRIO_PROCESS, thread.id) < target:
                                    os.setpriority(os.PRIO_PROCESS, thread.id, target)

    def totals(self) -> dict[str, float]:
        with self._lock:
            out = dict.fromkeys(self.ROLES, 0.0)
            for role, seconds in self._cpu.values():
                out[role] += seconds
        return out

    def mark(self, name: str) -> None:
        self._sample()
        self.marks[name] = self.totals()

    def between(self, start: str, end: str) -> dict[str, float]:
        return {r: self.marks[end][r] - self.marks[start][r] for r in self.ROLES}

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._sample())
            time.sleep(0.25)

    def __enter__(self) -> _Usage:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()


def _cpu_text(cpu: dict[str, float], seconds: float) -> str:
    names = {"browser": "seventh's browser", "six": "six visitors' browsers"}
    parts = ", ".join(f"{names.get(role, role)} {cpu[role]:.1f}" for role in _Usage.ROLES)
    return f"CPU s in {seconds:.1f} s wall: {parts} (2 cores = {2 * seconds:.0f} CPU s)"


def _config_env(root: Path) -> dict[str, str]:
    """Environment variables that give a server of ``root`` that checkout's Streamlit config.

    The harness starts every server in this checkout, where Streamlit reads this checkout's
    ``.streamlit/config.toml``; a "before" commit must run with its own (e.g. without
    ``runner.postScriptGC = false``), so each option either file sets is passed as its
    ``STREAMLIT_*`` variable: ``root``'s value, else Streamlit's default.
    """
    import tomllib

    from streamlit import config

    def options(checkout: Path) -> dict[str, Any]:
        path = checkout / ".streamlit" / "config.toml"
        data = tomllib.loads(path.read_text()) if path.is_file() else {}
        return {
            f"{section}.{name}": value
            for section, values in data.items()
            if isinstance(values, dict)
            for name, value in values.items()
            if not isinstance(value, dict)
        }

    if root == ROOT:
        return {}
    theirs, template = options(root), config._config_options_template
    env = {}
    for key in set(options(ROOT)) | set(theirs):
        if key in template:
            value = theirs.get(key, template[key].default_val)
            if value is not None:
                env[template[key].env_var] = (
                    str(value).lower() if isinstance(value, bool) else str(value)
                )
    return env


@contextlib.contextmanager
def _server(root: Path) -> Iterator[Any]:
    import harness

    with tempfile.TemporaryDirectory(prefix="fairengine-bench-cache-") as cache:
        log = Path(cache) / "server.log"
        server = harness.start_app_server(
            root / "dashboard" / "app.py",
            cache_dir=Path(cache) / "cache",
            log_path=log,
            extra_env={"PYTHONPATH": str(root), **_config_env(root)},
        )
        try:
            yield server
        finally:
            server.stop()


def _until_charts(page: Any, count: int, timeout_ms: int = TIMEOUT_MS) -> float | None:
    """Seconds until ``count`` charts are visible, or None after ``timeout_ms``."""
    start = time.monotonic()
    try:
        page.locator(CHART).nth(count - 1).wait_for(state="visible", timeout=timeout_ms)
    except Exception:  # playwright TimeoutError: reported as "no chart"
        return None
    return time.monotonic() - start


def _first_view(root: Path, label: str) -> list[dict[str, Any]]:
    import harness
    from playwright.sync_api import sync_playwright

    rows = []
    with (
        _server(root) as server,
        _Usage(server.process.pid) as usage,
        sync_playwright() as playwright,
    ):
        browser = harness.launch_browser(playwright)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(server.url)  # the server's own first start is not part of a page's time
        harness.wait_for_app(page, timeout=TIMEOUT_MS)
        for path, query, charts in FIRST_VIEW:
            usage.mark("before")
            start = time.monotonic()
            page.goto(f"{server.url}/{path}?{query}")
            seconds = _until_charts(page, charts, timeout_ms=60_000)
            total = None if seconds is None else time.monotonic() - start
            with contextlib.suppress(Exception):  # the page's whole script, for its CPU seconds
                harness.wait_for_app(page, timeout=60_000)
            usage.mark("after")
            cpu = usage.between("before", "after")  # until the script ended (after the charts)
            rows.append(
                {
                    "what": f"{label}: first view of {path} ({query})",
                    "value": round(total, 2) if total is not None else float("nan"),
                    "unit": "s",
                    "note": (
                        "charts visible, fresh cache"
                        if total is not None
                        else "no chart within 60 s (waits for a button, or still computing)"
                    )
                    + f"; CPU s: server {cpu['server']:.2f}, browser {cpu['browser']:.2f}",
                }
            )
        browser.close()
    return rows


#: Chromium's per-renderer main-thread metrics (CDP ``Performance.getMetrics``), in seconds.
RENDERER_METRICS = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")


class _PageProbe:
    """What one page's renderer did until it was ready: CDP ``Performance`` metrics of its main
    thread, the websocket frames it received (count, kB) and sent (each rerun request is one),
    the requests it made, and its CSS animations still running at the end
    (``document.getAnimations()``, e.g. Streamlit's skeleton shimmer)."""

    def __init__(self, context: Any, page: Any) -> None:
        self.page = page
        self.cdp = context.new_cdp_session(page)
        self.cdp.send("Performance.enable")
        self.frames_in = self.bytes_in = self.frames_out = self.requests = 0
        page.on("websocket", self._on_websocket)
        page.on("requestfinished", self._on_request)

    def _on_request(self, _request: Any) -> None:
        self.requests += 1

    def _on_websocket(self, websocket: Any) -> None:
        websocket.on("framereceived", self._received)
        websocket.on("framesent", self._sent)

    def _received(self, payload: Any) -> None:
        self.frames_in += 1
        self.bytes_in += len(payload)

    def _sent(self, _payload: Any) -> None:
        self.frames_out += 1

    def text(self) -> str:
        try:
            metrics = {
                m["name"]: m["value"] for m in self.cdp.send("Performance.getMetrics")["metrics"]
            }
            animations = self.page.evaluate("document.getAnimations().length")
        except Exception:
            return "renderer metrics unavailable"
        main = ", ".join(
            f"{name.removesuffix('Duration').lower()} {metrics.get(name, 0.0):.2f}"
            for name in RENDERER_METRICS
        )
        return (
            f"renderer main thread s: {main}; websocket: {self.frames_in} frames in "
            f"({self.bytes_in / 1e3:.0f} kB), {self.frames_out} out; {self.requests} requests; "
            f"{animations} CSS animations running when ready"
        )


def _browser_pids() -> set[int]:
    import psutil

    return {p.pid for p in psutil.Process().children(recursive=True)}


#: What a computing page shows while its job is queued or runs (dashboard/components/runner.py).
JOB_SHOWN = 'button:has-text("Cancel")'


def _until_computing(pages: list[Any], timeout_s: float = 60.0) -> float | None:
    """Seconds until every page shows its pending job (None: not all within ``timeout_s``)."""
    t0 = time.monotonic()
    for page in pages:
        left = max(1.0, timeout_s - (time.monotonic() - t0))
        try:
            page.locator(JOB_SHOWN).first.wait_for(state="visible", timeout=left * 1000)
        except Exception:  # playwright TimeoutError (or a page that already finished)
            return None
    return time.monotonic() - t0


def _seventh(
    root: Path, label: str, busy_nice: bool, after_computing: bool = False
) -> list[dict[str, Any]]:
    """One run: six computing visitors, then the seventh; ``busy_nice`` runs the six visitors'
    Chromium at nice +10 (on a real deployment their browsers run on their own machines; here
    they share the server's 2 cores). The seventh visitor's browser always runs at normal
    priority, and it is a separate Chromium instance. The seventh opens 3 s after the six; with
    ``after_computing`` it opens once all six pages show their job (loaded, fit queued or
    running), so that their own first page loads are not inside the seventh's wait."""
    import harness
    import psutil
    from playwright.sync_api import sync_playwright

    with _server(root) as server, _Usage(server.process.pid) as usage, sync_playwright() as pw:
        browser = harness.launch_browser(pw)  # the seventh visitor's browser
        warm = browser.new_page()
        warm.goto(server.url)
        harness.wait_for_app(warm, timeout=TIMEOUT_MS)
        idle = usage._sample()
        before = _browser_pids()
        crowd = harness.launch_browser(pw)  # the six computing visitors' browser
        new = _browser_pids() - before  # its process tree: new processes with an old parent
        for pid in new:
            with contextlib.suppress(psutil.Error):
                if psutil.Process(pid).ppid() not in new:
                    usage.crowd_roots.append(pid)
        usage.nice_crowd = busy_nice
        usage._renice()
        busy = []
        usage.mark("start")
        start = time.monotonic()
        for path in BUSY:
            page = crowd.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            with contextlib.suppress(Exception):  # a slow server: counted as not finished below
                page.goto(f"{server.url}/{path}", wait_until="commit", timeout=TIMEOUT_MS)
            busy.append(page)
        if after_computing:
            computing = _until_computing(busy)
            label += ", seventh opens once the six show their job" + (
                "" if computing is None else f" ({computing:.1f} s after they opened)"
            )
        else:
            time.sleep(3.0)  # the six are computing
        seventh_context = browser.new_context(viewport={"width": 1400, "height": 1000})
        seventh = seventh_context.new_page()
        probe = _PageProbe(seventh_context, seventh)
        usage.mark("open")
        t0 = time.monotonic()
        try:  # a blocked server may not even answer the page request in time
            seventh.goto(
                f"{server.url}/{SEVENTH[0]}?{SEVENTH[1]}", wait_until="commit", timeout=TIMEOUT_MS
            )
            ready = _until_charts(seventh, SEVENTH[2])
        except Exception:  # playwright TimeoutError: reported as not ready
            ready = None
        ready_total = None if ready is None else time.monotonic() - t0
        usage.mark("ready")
        t_ready = time.monotonic()
        probe_text = probe.text()
        finished = []
        for page in busy:
            seconds = _until_charts(page, 1, timeout_ms=240_000)
            finished.append(None if seconds is None else time.monotonic() - start)
        usage.mark("done")
        t_done = time.monotonic()
        crowd.close()
        browser.close()
    done = [s for s in finished if s is not None]
    if busy_nice:
        label += ", six visitors' browsers at nice +10"
    to_ready = usage.between("open", "ready")
    whole = usage.between("start", "done")
    return [
        {
            "what": f"{label}: seventh visitor's page ready while six compute",
            "value": round(ready_total, 2) if ready_total is not None else float("nan"),
            "unit": "s",
            "note": f"{SEVENTH[0]}?{SEVENTH[1]}, charts visible; target < 5 s"
            + ("" if ready_total is not None else f"; not ready within {TIMEOUT_MS // 1000} s")
            + "; "
            + _cpu_text(to_ready, t_ready - t0)
            + "; "
            + probe_text,
        },
        {
            "what": f"{label}: the six computing visitors have a chart",
            "value": round(max(done), 2) if done else float("nan"),
            "unit": "s (slowest)",
            "note": "checked once the seventh is ready (an upper bound); "
            f"{len(done)}/6 within 240 s; each: "
            + ", ".join("-" if s is None else f"{s:.0f}" for s in finished),
        },
        {
            "what": f"{label}: server CPU per visitor",
            "value": round(whole["server"] / 7, 2),
            "unit": "CPU s",
            "note": "the Streamlit process's CPU seconds from the six opening until all seven "
            "have charts, divided by 7 (load-independent); " + _cpu_text(whole, t_done - start),
        },
        {
            "what": f"{label}: server memory (process tree)",
            "value": round(usage.peak / 2**20),
            "unit": "MiB peak",
            "note": f"idle after the first page {idle / 2**20:.0f} MiB",
        },
    ]


def _seventh_alone(root: Path, label: str) -> list[dict[str, Any]]:
    """The seventh visitor's page with nobody computing: a fresh browser context (what the
    seventh visitor of :func:`_seventh` gets: no HTTP or code cache, a new renderer), then the
    same page again in a new tab of that context (bundles cached). The difference is the cost
    of a cold visit that ``load_first_view`` (one tab navigating from page to page) does not
    see."""
    import harness
    from playwright.sync_api import sync_playwright

    rows = []
    with _server(root) as server, _Usage(server.process.pid) as usage, sync_playwright() as pw:
        browser = harness.launch_browser(pw)
        warm = browser.new_page()
        warm.goto(server.url)
        harness.wait_for_app(warm, timeout=TIMEOUT_MS)
        time.sleep(5.0)  # the background warm-up imports (dashboard/components/warmup.py)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        for visit in ("fresh browser context", "again, new tab of the same context"):
            page = context.new_page()
            probe = _PageProbe(context, page)
            usage.mark("open")
            start = time.monotonic()
            page.goto(f"{server.url}/{SEVENTH[0]}?{SEVENTH[1]}", wait_until="commit")
            ready = _until_charts(page, SEVENTH[2])
            seconds = None if ready is None else time.monotonic() - start
            usage.mark("ready")
            cpu = usage.between("open", "ready")
            rows.append(
                {
                    "what": f"{label}: seventh visitor's page alone (nobody computing), {visit}",
                    "value": round(seconds, 2) if seconds is not None else float("nan"),
                    "unit": "s",
                    "note": f"{SEVENTH[0]}?{SEVENTH[1]}, charts visible; CPU s: server "
                    f"{cpu['server']:.2f}, browser {cpu['browser']:.2f}; " + probe.text(),
                }
            )
            with contextlib.suppress(Exception):
                harness.wait_for_app(page, timeout=60_000)
        browser.close()
    return rows


def load_first_view(quick: bool) -> list[dict[str, Any]]:
    """Each page's first view on a fresh cache: seconds until its charts show."""
    rows = []
    before = None if quick else os.environ.get("FAIRENGINE_BENCH_BEFORE")
    if before:
        with _checkout(before) as root:
            rows += _first_view(root, f"before ({before[:8]})")
    rows += _first_view(ROOT, "ours")
    return rows


def load_seventh_visitor(quick: bool) -> list[dict[str, Any]]:
    """Six visitors computing at once; the seventh's page-ready time and server memory."""
    rows = []
    before = None if quick else os.environ.get("FAIRENGINE_BENCH_BEFORE")
    if before:
        with _checkout(before) as root:
            for busy_nice in (False, True):
                rows += _seventh(root, f"before ({before[:8]})", busy_nice)
            rows += _seventh_alone(root, f"before ({before[:8]})")
    for busy_nice in (False, True):
        rows += _seventh(ROOT, "ours", busy_nice)
    rows += _seventh(ROOT, "ours", False, after_computing=True)[:1]
    return rows + _seventh_alone(ROOT, "ours")


def register(registry) -> None:
    """Add this module's benchmarks to the harness (see bench/run.py)."""
    registry.add(load_first_view)
    registry.add(load_seventh_visitor)
