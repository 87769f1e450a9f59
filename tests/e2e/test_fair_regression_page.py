"""The Fair regression page in a real headless Chromium: charts, sweep, download."""

from __future__ import annotations

from harness import exception_texts, screenshot, wait_for_app
from playwright.sync_api import Page, expect


def test_fair_regression_page_on_law_school(page: Page, app_server: str) -> None:
    page.goto(app_server + "/fair_regression?dataset=law_school")
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Fair regression")).to_be_visible()
    charts = page.locator('[data-testid="stPlotlyChart"]')
    expect(charts.nth(2)).to_be_visible(timeout=120_000)
    expect(charts).to_have_count(3, timeout=60_000)
    expect(page.get_by_text("SP disparity (test)")).to_be_visible()
    expect(page.get_by_text("Download model file (randomized predictor)")).to_be_visible()
    screenshot(page, "fair-regression-law", full_page=True)

    page.get_by_role("button", name="Sweep ε").click()
    wait_for_app(page)
    expect(page.get_by_text("convex envelope (train)").first).to_be_visible(timeout=180_000)
    screenshot(page, "fair-regression-frontier", full_page=True)
    assert exception_texts(page) == []


def test_fair_regression_page_explains_classification_task(page: Page, app_server: str) -> None:
    page.goto(app_server + "/fair_regression?dataset=german_credit")
    wait_for_app(page)
    alert = page.locator('[data-testid="stAlert"]').filter(has_text="real-valued target")
    expect(alert.first).to_be_visible(timeout=60_000)
    assert exception_texts(page) == []
