"""Every page on a fresh cache in a real browser: its charts appear without pressing a button.

One server (the session's, with an empty FAIRENGINE_CACHE), each page visited once: the method
pages on the default dataset (Adult) or, for fair regression, its paper dataset, served by the
runs ``fairengine precompute`` ships; Compare from the shipped frontiers. The seconds until the
charts showed are written to tests/artifacts/first-view.txt (timing is measured by
bench/bench_load.py, not asserted here).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from harness import ARTIFACTS_DIR, exception_texts, wait_for_app
from playwright.sync_api import Page, expect

from fairengine.export import read_manifest

#: (url path, query, charts the complete first view draws at least)
PAGES = (
    ("maxent", "dataset=adult", 3),
    ("balanced_filtering", "dataset=adult", 2),
    ("noisy_groups", "dataset=adult", 1),
    ("multiaccurate_proxy", "dataset=adult", 5),
    ("fair_regression", "dataset=law_school", 3),
    ("compare", "dataset=adult", 2),
)


def test_every_page_shows_its_charts_without_a_click(
    page: Page, app_server: str, tmp_path: Path
) -> None:
    seconds = []
    for path, query, charts in PAGES:
        start = time.monotonic()
        page.goto(f"{app_server}/{path}?{query}")
        wait_for_app(page, timeout=120_000)  # generous: the other xdist worker loads the cores
        chart = page.locator('[data-testid="stPlotlyChart"]')
        expect(chart.nth(charts - 1)).to_be_visible(timeout=120_000)
        seconds.append(f"{path}: {time.monotonic() - start:.1f} s")
        main = page.locator('[data-testid="stMain"]')
        assert "Knobs changed" not in main.inner_text(), path
        assert page.locator('[data-testid="stProgress"]').count() == 0, path  # nothing computes
        assert exception_texts(page) == [], path
        if path == "balanced_filtering":  # the model file is served as bytes cached per run
            wait_for_app(page, timeout=120_000)  # a rerun (URL sync) must not swap the button
            button = page.get_by_role("button", name=re.compile("model file")).first
            expect(button).to_be_enabled(timeout=120_000)
            with page.expect_download(timeout=120_000) as info:  # the other worker loads the cores
                button.click()
            saved = tmp_path / "filter.fairmodel"
            info.value.save_as(saved)
            assert read_manifest(saved)["metadata"]["method"] == "balanced_filtering"
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS_DIR / "first-view.txt").write_text("\n".join(seconds) + "\n")
