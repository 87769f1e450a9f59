"""The Max-entropy debiasing page in a real headless Chromium: charts, knobs, downloads."""

from __future__ import annotations

from harness import exception_texts, screenshot, wait_for_app
from playwright.sync_api import Page, expect


def test_maxent_page_on_german_credit(page: Page, app_server: str) -> None:
    page.goto(app_server + "/maxent?dataset=german_credit")
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Max-entropy debiasing")).to_be_visible()
    charts = page.locator('[data-testid="stPlotlyChart"]')
    expect(charts.nth(2)).to_be_visible(timeout=120_000)
    expect(charts).to_have_count(3, timeout=60_000)
    expect(page.get_by_text("KL(p* ‖ q)")).to_be_visible()
    expect(page.get_by_text("Download generated samples (CSV)")).to_be_visible()
    expect(page.get_by_text("Download model file")).to_be_visible()
    screenshot(page, "maxent-german", full_page=True)

    page.get_by_role("button", name="Sweep C").click()
    wait_for_app(page)
    expect(charts.nth(3)).to_be_visible(timeout=180_000)
    screenshot(page, "maxent-frontier", full_page=True)
    assert exception_texts(page) == []


def test_maxent_page_explains_unsupported_task(page: Page, app_server: str) -> None:
    page.goto(app_server + "/maxent?dataset=compas")
    wait_for_app(page)
    alert = page.locator('[data-testid="stAlert"]').filter(has_text="exactly two groups")
    expect(alert.first).to_be_visible(timeout=60_000)
    assert exception_texts(page) == []
