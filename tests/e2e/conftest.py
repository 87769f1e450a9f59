"""Fixtures for end-to-end tests: a live Streamlit server and headless Debian Chromium.

Every test under tests/e2e is marked ``e2e`` and put into the xdist group "browser", so with
``pytest -n 2 --dist loadgroup`` they all run on one worker, sharing one server and one browser.

Without /usr/bin/chromium (or the playwright package) the tests are skipped, unless the
environment variable CI is "true": then they fail, so CI can never skip them silently.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# harness.py sits next to this file; make it importable however pytest imports conftests
# (tests/ may or may not become a package) and the same way tools/screenshot.py does.
sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness
from harness import ARTIFACTS_DIR, screenshot

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

E2E_DIR = Path(__file__).resolve().parent
BROWSER_GROUP = "browser"


# Test modules import playwright at the top, so without the package they cannot even be
# imported. Then collect each of them as one item that skips (or, under CI=true, fails).
class _UnimportableE2EModule(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        yield _PrerequisitesMissing.from_parent(self, name="e2e-prerequisites")


class _PrerequisitesMissing(pytest.Item):
    def runtest(self) -> None:
        _skip_or_fail(harness.e2e_unavailable_reason() or "unknown reason")

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.name} (tests not importable)"


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.File | None:
    if not harness.playwright_available():
        return _UnimportableE2EModule.from_parent(parent, path=module_path)
    return None


def _skip_or_fail(reason: str) -> None:
    if harness.ci_requires_e2e():
        pytest.fail(f"end-to-end prerequisites missing and CI=true: {reason}", pytrace=False)
    pytest.skip(f"end-to-end tests skipped: {reason}")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # A conftest hook sees *all* collected items, so filter to the ones under tests/e2e.
    for item in items:
        if E2E_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)
            if not any(True for _ in item.iter_markers("xdist_group")):
                item.add_marker(pytest.mark.xdist_group(BROWSER_GROUP))


@pytest.fixture(scope="session")
def e2e_prerequisites() -> None:
    """Skip (or, when CI=true, fail) if Playwright or /usr/bin/chromium is missing."""
    reason = harness.e2e_unavailable_reason()
    if reason is not None:
        _skip_or_fail(reason)


def _worker_suffix() -> str:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return f"-{worker}" if worker else ""


@contextlib.contextmanager
def _served_app(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[str]:
    """Run `streamlit run` on $FAIRENGINE_E2E_APP or dashboard/app.py with FAIRENGINE_CACHE in
    a fresh temporary directory; yields its base URL and stops it afterwards."""
    cache_dir = tmp_path_factory.mktemp("fairengine-cache")
    log_path = ARTIFACTS_DIR / f"{name}{_worker_suffix()}.log"
    error = None
    try:
        server = harness.start_app_server(cache_dir=cache_dir, log_path=log_path)
    except harness.AppServerError as exc:
        error = str(exc)
    if error is not None:  # outside the except block: no chained traceback noise
        pytest.fail(error, pytrace=False)
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def app_server(e2e_prerequisites: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (http://127.0.0.1:PORT) of the app server the browser tests share."""
    with _served_app(tmp_path_factory, "streamlit-server") as url:
        yield url


@pytest.fixture
def fresh_app_server(
    e2e_prerequisites: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A server of its own with an empty cache, for a test whose assertions depend on what
    is not cached yet (the shared server's cache holds whatever earlier tests computed)."""
    with _served_app(tmp_path_factory, "streamlit-server-fresh") as url:
        yield url


@pytest.fixture(scope="session")
def browser(e2e_prerequisites: None) -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = harness.launch_browser(playwright)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh context and page; at teardown saves tests/artifacts/<test>-final.png and,
    if the page logged errors, tests/artifacts/<test>-console.log."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    context.set_default_timeout(30_000)
    page = context.new_page()
    console: list[str] = []
    page.on(
        "console",
        lambda msg: (
            console.append(f"[{msg.type}] {msg.text}") if msg.type in ("error", "warning") else None
        ),
    )
    page.on("pageerror", lambda err: console.append(f"[pageerror] {err}"))
    try:
        yield page
    finally:
        name = harness.safe_name(request.node.name)
        try:
            screenshot(page, f"{name}-final")
        except Exception as exc:  # never mask the test's own outcome
            sys.stderr.write(f"final screenshot of {name} failed: {exc}\n")
        if console:
            (ARTIFACTS_DIR / f"{name}-console.log").write_text("\n".join(console) + "\n")
        context.close()
