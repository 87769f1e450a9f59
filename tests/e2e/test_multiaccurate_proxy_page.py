"""The Multiaccurate proxies page in a real headless Chromium: charts and the proxy download."""

from __future__ import annotations

from harness import exception_texts, screenshot, wait_for_app
from playwright.sync_api import Page, expect


def test_multiaccurate_proxy_page_on_german_credit(page: Page, app_server: str) -> None:
    page.goto(app_server + "/multiaccurate_proxy?dataset=german_credit")
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Multiaccurate proxies")).to_be_visible()
    charts = page.locator('[data-testid="stPlotlyChart"]')
    # heatmap, group gaps, Algorithm-4 trace, frontiers, accuracy vs multiaccuracy
    expect(charts.nth(4)).to_be_visible(timeout=120_000)
    expect(charts).to_have_count(5, timeout=60_000)
    expect(page.get_by_text("True-group violation (test)")).to_be_visible()
    held_out = page.get_by_text("Multiaccuracy violation, held-out (test rows)", exact=True)
    expect(held_out).to_be_visible()
    # the default α is the lowest the linear proxy reaches on these rows: certified; here it is
    # a single value, said in words instead of a slider that would do nothing
    expect(page.get_by_text("the lowest it reaches on these rows").first).to_be_visible()
    expect(page.get_by_text("a single value on these rows").first).to_be_visible()
    expect(page.get_by_text("Download model file (downstream classifier + proxy)")).to_be_visible()
    screenshot(page, "multiaccurate-proxy-german", full_page=True)
    assert exception_texts(page) == []
