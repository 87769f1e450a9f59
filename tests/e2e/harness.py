"""Shared end-to-end harness: start the Streamlit app, launch headless Chromium, wait for runs.

Used by ``tests/e2e/conftest.py`` (pytest fixtures) and ``tools/screenshot.py`` (README
screenshot), so the server-start, browser-launch and wait logic lives in exactly one place.
Playwright is imported lazily so that importing this module never fails where it is missing.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Playwright

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS_DIR = REPO_ROOT / "tests" / "artifacts"
DEFAULT_APP = "dashboard/app.py"
APP_ENV_VAR = "FAIRENGINE_E2E_APP"

# FAIRENGINE_E2E_CHROMIUM overrides the browser binary (e.g. on a non-Debian dev machine).
CHROMIUM_PATH = os.environ.get("FAIRENGINE_E2E_CHROMIUM") or "/usr/bin/chromium"
# --no-sandbox: Chromium refuses to start as root with its sandbox (CI containers run as root).
# --disable-dev-shm-usage: containers often have a tiny /dev/shm; use /tmp instead.
# The rest stop background traffic to Google services (no network here) and first-run UI.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
]

HEALTH_TIMEOUT_S = 60.0
# Selectors rendered by Streamlit 1.67 (checked in streamlit/static/static/js/index.*.js).
# stApp carries data-test-script-state ("initial" | "running" | "notRunning" | "rerunRequested" |
# "stopRequested" | "compilationError") and data-test-connection-state ("CONNECTED", ...).
APP_SELECTOR = '[data-testid="stApp"]'
CONNECTED_SELECTOR = '[data-testid="stApp"][data-test-connection-state="CONNECTED"]'
SCRIPT_DONE_SELECTOR = (
    '[data-testid="stApp"]:is([data-test-script-state="notRunning"],'
    '[data-test-script-state="compilationError"])'
)
RUNNING_ICON_SELECTOR = '[data-testid="stStatusWidgetRunningIcon"]'
STATUS_WIDGET_SELECTOR = '[data-testid="stStatusWidget"]'
MAIN_SELECTOR = '[data-testid="stMain"], [data-testid="stAppViewContainer"]'
SIDEBAR_SELECTOR = '[data-testid="stSidebar"]'
EXCEPTION_SELECTOR = '[data-testid="stException"]'


class AppServerError(RuntimeError):
    """The Streamlit server died or never became healthy; the message has its log tail."""


def chromium_available(path: str = CHROMIUM_PATH) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def playwright_available() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


def ci_requires_e2e() -> bool:
    """True when CI=true: missing browser prerequisites must fail, never skip."""
    return os.environ.get("CI", "").strip().lower() == "true"


def e2e_unavailable_reason() -> str | None:
    """Why end-to-end tests cannot run here, or None when they can."""
    if not playwright_available():
        return "Python package 'playwright' is not installed (pip install -r requirements-dev.txt)"
    if not chromium_available():
        return f"{CHROMIUM_PATH} not found (Debian: apt-get install -y chromium)"
    return None


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1 (the OS picks it; tiny reuse race accepted)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def safe_name(name: str) -> str:
    """A file-name-safe version of a test or screenshot name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "unnamed"


def tail(path: Path, lines: int = 60) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"<could not read {path}: {exc}>"
    return "\n".join(text.splitlines()[-lines:])


def resolve_app(app: str | os.PathLike[str] | None = None) -> Path:
    """The app script: explicit argument, else $FAIRENGINE_E2E_APP, else dashboard/app.py."""
    chosen = Path(app or os.environ.get(APP_ENV_VAR) or DEFAULT_APP)
    return chosen if chosen.is_absolute() else REPO_ROOT / chosen


@dataclass
class AppServer:
    """A running ``streamlit run`` subprocess."""

    process: subprocess.Popen[bytes]
    port: int
    log_path: Path
    app_path: Path
    url: str = field(init=False)

    def __post_init__(self) -> None:
        self.url = f"http://127.0.0.1:{self.port}"

    def log_tail(self, lines: int = 60) -> str:
        return tail(self.log_path, lines)

    def wait_healthy(self, timeout: float = HEALTH_TIMEOUT_S) -> None:
        """Poll /_stcore/health until it answers "ok"; raise AppServerError otherwise."""
        health = f"{self.url}/_stcore/health"
        deadline = time.monotonic() + timeout
        last_error = "no answer yet"
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code is not None:
                raise AppServerError(
                    f"Streamlit server exited early with code {code} (app {self.app_path}).\n"
                    f"--- tail of {self.log_path} ---\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(health, timeout=2) as response:
                    body = response.read().decode("utf-8", "replace").strip()
                if body == "ok":
                    return
                last_error = f"health answered {body!r}"
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as exc:
                last_error = repr(exc)
            time.sleep(0.25)
        raise AppServerError(
            f"Streamlit server not healthy after {timeout:.0f} s at {health} ({last_error}).\n"
            f"--- tail of {self.log_path} ---\n{self.log_tail()}"
        )

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM the server's process group, SIGKILL it after `grace` seconds."""
        if self.process.poll() is not None:
            return
        pgid = self.process.pid  # started with start_new_session=True: pgid == pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        try:
            self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
            self.process.wait(timeout=grace)


def start_app_server(
    app: str | os.PathLike[str] | None = None,
    *,
    cache_dir: str | os.PathLike[str],
    log_path: Path | None = None,
    port: int | None = None,
    timeout: float = HEALTH_TIMEOUT_S,
    extra_env: dict[str, str] | None = None,
) -> AppServer:
    """Start ``streamlit run APP`` from the repo root and wait until it is healthy.

    FAIRENGINE_CACHE points at `cache_dir`; stdout and stderr go to `log_path`
    (default tests/artifacts/streamlit-server.log). On failure the process is stopped and
    AppServerError carries the tail of the log.
    """
    app_path = resolve_app(app)
    if not app_path.is_file():
        raise AppServerError(f"app script not found: {app_path}")
    port = port or free_port()
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    log_path = log_path or ARTIFACTS_DIR / "streamlit-server.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(
        {
            "FAIRENGINE_CACHE": str(cache_dir),
            "PYTHONUNBUFFERED": "1",
            "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
        }
    )
    env.update(extra_env or {})
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(app_path),
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
        # .streamlit/config.toml redacts errors for users ("none"); tests want the real message.
        "--client.showErrorDetails", "full",
    ]  # fmt: skip
    with open(log_path, "wb") as log:
        log.write(f"$ {' '.join(cmd)}\n".encode())
        log.flush()
        process = subprocess.Popen(
            cmd,
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # own process group: teardown also reaps any workers
        )
    server = AppServer(process=process, port=port, log_path=log_path, app_path=app_path)
    try:
        server.wait_healthy(timeout)
    except BaseException:
        server.stop(grace=5)
        raise
    return server


@contextlib.contextmanager
def running_app(app: str | os.PathLike[str] | None = None, **kwargs: Any) -> Iterator[AppServer]:
    """Context manager around start_app_server / AppServer.stop."""
    server = start_app_server(app, **kwargs)
    try:
        yield server
    finally:
        server.stop()


def launch_browser(playwright: Playwright, *, headless: bool = True) -> Browser:
    """Debian's Chromium through Playwright (``playwright install`` cannot download here)."""
    return playwright.chromium.launch(
        executable_path=CHROMIUM_PATH, headless=headless, args=CHROMIUM_ARGS
    )


def wait_for_app(page: Page, timeout: float = 60_000, settle_ms: int = 250) -> None:
    """Wait until Streamlit has connected and finished running the script.

    Waits for stApp to be CONNECTED with script state notRunning (or compilationError),
    no "Running..." status icon, and the main block visible. It then waits `settle_ms` and
    checks again, so a rerun that a click has only just triggered is not mistaken for
    "finished" (the frontend flips to "running" only once the server answers).
    """
    deadline = time.monotonic() + timeout / 1000
    stable_checks = 0
    while True:
        remaining = max(1.0, (deadline - time.monotonic()) * 1000)
        page.wait_for_selector(CONNECTED_SELECTOR, state="attached", timeout=remaining)
        page.wait_for_selector(SCRIPT_DONE_SELECTOR, state="attached", timeout=remaining)
        page.wait_for_selector(RUNNING_ICON_SELECTOR, state="detached", timeout=remaining)
        page.locator(MAIN_SELECTOR).first.wait_for(state="visible", timeout=remaining)
        if stable_checks >= 1:
            return
        stable_checks += 1
        page.wait_for_timeout(settle_ms)


def exception_texts(page: Page) -> list[str]:
    """Text of every Streamlit exception box on the page (empty when there is none)."""
    return [text.strip() for text in page.locator(EXCEPTION_SELECTOR).all_inner_texts()]


def screenshot(page: Page, name: str, *, full_page: bool = False) -> Path:
    """Save tests/artifacts/NAME.png and return its path."""
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS_DIR / f"{safe_name(name)}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
