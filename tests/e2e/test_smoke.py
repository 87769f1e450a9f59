"""Smoke test: the dashboard loads in a real browser and renders without a Streamlit exception."""

from __future__ import annotations

from harness import SIDEBAR_SELECTOR, exception_texts, screenshot, wait_for_app
from playwright.sync_api import Page, expect


def test_app_loads_without_exception(page: Page, app_server: str) -> None:
    page.goto(app_server + "/")
    wait_for_app(page)
    screenshot(page, "smoke-home")

    assert page.title().strip(), "the page has no title"
    expect(page.locator(SIDEBAR_SELECTOR)).to_be_visible()
    expect(page.locator('[data-testid="stMainBlockContainer"]')).not_to_be_empty()
    assert exception_texts(page) == [], "Streamlit rendered an exception"
