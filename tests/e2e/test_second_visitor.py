"""A second visitor's page answers normally while a first one uploads hostile files on Compare.

Each hostile file is read in a job of the pool (its own process, processor-time and memory
limits, Cancel), never in the server's script thread, so the server's health endpoint and
another visitor's page answer as usual meanwhile; the first visitor gets a message in words.

The server here is this module's own: a file's job may use 20 processor seconds and 1.5 GB, so
the hostile files reach those limits quickly where they are not refused at once.
"""

from __future__ import annotations

import io
import re
import threading
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import exception_texts, running_app, wait_for_app
from playwright.sync_api import Page, expect

#: Generous bounds (seconds): the health endpoint's slowest answer, a page's first render.
HEALTH_BOUND, PAGE_BOUND = 10.0, 90.0
JOB_LIMITS = {"FAIRENGINE_FILE_CPU_SECONDS": "20", "FAIRENGINE_JOB_MEMORY_MB": "1536"}


# -- hostile files -------------------------------------------------------------------------------


def escaped_quotes(n: int) -> bytes:
    """An unterminated JSON string of ``n`` escaped quotes: ``{"a":"\\"\\"\\"...`` (a nesting
    check that rescans the string from each quote takes hours on it)."""
    return b'{"a":"' + b'\\"' * n


def quotes_model_file(n: int = 400_000) -> bytes:
    """A .fairmodel (zip) whose manifest is :func:`escaped_quotes`: a few KB on disk."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("manifest.json", escaped_quotes(n))
        archive.writestr("state.json", b"{}")
    return buffer.getvalue()


def big_skops_file(path: Path, megabytes: int = 2048) -> Path:
    """A .skops (zip) whose schema.json unpacks to ``megabytes`` MB of spaces (a few MB)."""
    block = b" " * 2**20
    archive = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1)
    with archive, archive.open("schema.json", "w", force_zip64=True) as member:
        for _ in range(megabytes):
            member.write(block)
    return path


# -- the second visitor ----------------------------------------------------------------------------


class HealthProbe:
    """Asks the health endpoint every 0.25 s in a thread; the slowest answer seen (seconds)."""

    def __init__(self, url: str) -> None:
        self.url, self.slowest, self.answers = url + "/_stcore/health", 0.0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            start = time.perf_counter()
            try:
                with urllib.request.urlopen(self.url, timeout=600) as answer:
                    answer.read()
                self.answers += 1
            except OSError:
                pass
            self.slowest = max(self.slowest, time.perf_counter() - start)
            self._stop.wait(0.25)

    def __enter__(self) -> HealthProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=700)


def second_visitor_seconds(browser, url: str) -> float:
    """Seconds a fresh visitor's Data page takes to render."""
    context = browser.new_context()
    try:
        page = context.new_page()
        start = time.perf_counter()
        page.goto(url + "/")
        wait_for_app(page, timeout=PAGE_BOUND * 2000)
        expect(page.locator('[data-testid="stMain"]')).to_contain_text("Dataset")
        return time.perf_counter() - start
    finally:
        context.close()


# -- fixtures --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    """A server of its own (the job limits below), visited with the session's browser (one
    Playwright per process: a second one inside the first's event loop is refused)."""
    cache = tmp_path_factory.mktemp("fairengine-cache")
    with running_app(cache_dir=cache, extra_env=JOB_LIMITS) as server:
        yield server.url, browser


def _compare(browser, url: str) -> Page:
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.goto(url + "/compare")
    wait_for_app(page, timeout=180_000)
    return page


def _expand(page: Page, title: str):
    details = page.locator("details").filter(has_text=title).first
    if details.get_attribute("open") is None:
        details.locator("summary").click()
        wait_for_app(page)
    return details


def _attack(page: Page, box: str, path: Path, add: bool) -> None:
    """Upload ``path`` to the uploader labelled ``box`` (and press "Add to the plane")."""
    uploader = page.locator('[data-testid="stFileUploader"]').filter(has_text=box).first
    uploader.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    wait_for_app(page, timeout=120_000)
    if add:
        page.get_by_role("button", name="Add to the plane").click()


def _watched(browser, url: str, page: Page, words: str | re.Pattern) -> tuple[float, float]:
    """While the first visitor's job runs: the slowest health answer and a second visitor's
    page render; then wait for the first visitor's error in words (``words``)."""
    errors = page.locator('[data-testid="stAlertContentError"]').filter(has_text=words)
    with HealthProbe(url) as probe:
        render = second_visitor_seconds(browser, url)
        expect(errors.first).to_be_visible(timeout=240_000)
    print(f"first visitor's message: {errors.first.inner_text()}")
    print(f"health: {probe.answers} answers, slowest {probe.slowest:.2f} s; page {render:.1f} s")
    return probe.slowest, render


def test_hostile_model_files_do_not_hold_up_a_second_visitor(served, tmp_path: Path) -> None:
    url, browser = served
    page = _compare(browser, url)
    details = _expand(page, "Your model")
    details.get_by_text("A model file").click()
    wait_for_app(page)
    quotes = tmp_path / "quotes.fairmodel"
    quotes.write_bytes(quotes_model_file())
    print(f"escaped-quotes model file: {quotes.stat().st_size:,} bytes")
    _attack(page, "Model file", quotes, add=True)
    slowest, render = _watched(browser, url, page, "could not be added")
    assert slowest < HEALTH_BOUND and render < PAGE_BOUND

    bomb = big_skops_file(tmp_path / "big.skops")
    print(f"skops file: {bomb.stat().st_size:,} bytes")
    _attack(page, "Model file", bomb, add=True)
    slowest, render = _watched(browser, url, page, re.compile(r"big\.skops|out of memory"))
    assert slowest < HEALTH_BOUND and render < PAGE_BOUND
    assert exception_texts(page) == []
    page.context.close()


def test_a_hostile_comparison_is_read_in_a_job_that_cancel_stops(served, tmp_path: Path) -> None:
    url, browser = served
    page = _compare(browser, url)
    _expand(page, "Open a saved comparison")
    comparison = tmp_path / "comparison.json"
    comparison.write_bytes(escaped_quotes(600_000))
    print(f"escaped-quotes comparison: {comparison.stat().st_size:,} bytes")
    _attack(page, "Open a saved comparison", comparison, add=False)
    cancel = page.get_by_role("button", name="Cancel")
    refused = page.locator('[data-testid="stAlertContentError"]').filter(has_text="cannot be")
    expect(cancel.or_(refused.first)).to_be_visible(timeout=120_000)
    if cancel.is_visible():  # still reading: the visitor stops it
        with HealthProbe(url) as probe:
            render = second_visitor_seconds(browser, url)
        print(f"health slowest {probe.slowest:.2f} s, page {render:.1f} s while it is read")
        assert probe.slowest < HEALTH_BOUND and render < PAGE_BOUND
        cancel.click()
        expect(page.locator('[data-testid="stMain"]')).to_contain_text(
            "Opening the comparison: cancelled", timeout=60_000
        )
    assert exception_texts(page) == []
    page.context.close()
