"""The Balanced filtering page in a real headless Chromium: the filter fits on opening (in the
worker pool, no button), a knob change keeps the charts, and Run updates them."""

from __future__ import annotations

import re

from harness import exception_texts, screenshot, wait_for_app
from playwright.sync_api import Page, expect


def test_run_filter_shows_heatmap_and_proportions(page: Page, app_server: str) -> None:
    page.goto(app_server + "/balanced_filtering?dataset=german_credit")
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Balanced filtering")).to_be_visible()
    expect(page.locator('[data-testid="stPlotlyChart"]').first).to_be_visible(timeout=120_000)
    expect(page.locator('[data-testid="stPlotlyChart"]')).to_have_count(2, timeout=60_000)
    metric = page.locator('[data-testid="stMetric"]').filter(has_text="Proxy leaves").first
    assert int(metric.locator('[data-testid="stMetricValue"]').inner_text()) >= 1
    expect(page.get_by_text("Download filter (model file)")).to_be_visible()
    screenshot(page, "balanced-filtering-german", full_page=True)
    assert exception_texts(page) == []

    # a change of α redoes this quick fit live (in the worker pool); the charts stay up
    alpha = page.locator('[data-testid="stSlider"]').filter(has_text="Disclosivity budget")
    thumb = alpha.get_by_role("slider").first
    thumb.focus()
    thumb.press("ArrowLeft")
    wait_for_app(page, timeout=120_000)
    expect(page.locator('[data-testid="stPlotlyChart"]')).to_have_count(2, timeout=120_000)
    expect(page.get_by_text("0.15", exact=True).first).to_be_visible()  # step 0.05
    metric = page.locator('[data-testid="stMetric"]').filter(has_text="Disclosivity").first
    # the new fit (budget 0.15) replaces the old one once the worker is done
    within = re.compile(r"^0\.(0\d\d|1[0-4]\d|150)$")
    expect(metric.locator('[data-testid="stMetricValue"]')).to_have_text(within, timeout=120_000)
    assert "Knobs changed" not in page.locator('[data-testid="stMain"]').inner_text()
    assert exception_texts(page) == []


def test_adult_race_opens_on_the_shipped_curves(page: Page, app_server: str) -> None:
    """On the paper's task the page opens on the trade-off curves (train and test,
    95% bands over the shipped splits) without any click."""
    page.goto(app_server + "/balanced_filtering?dataset=adult&sensitive=race")
    wait_for_app(page, timeout=120_000)
    chart = page.locator('[data-testid="stPlotlyChart"]')
    expect(chart.first).to_be_visible(timeout=120_000)
    expect(chart.first).to_contain_text("(α, β) proxy")
    expect(page.get_by_role("button", name="Compute curves")).to_be_disabled()
    screenshot(page, "balanced-filtering-adult-race-curves", full_page=True)
    assert exception_texts(page) == []
