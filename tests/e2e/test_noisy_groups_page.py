"""The Noisy groups page in a real headless Chromium: charts, download, noise sweep."""

from __future__ import annotations

from harness import exception_texts, screenshot, wait_for_app
from playwright.sync_api import Page, expect


def test_noisy_groups_page_on_german_credit(page: Page, app_server: str) -> None:
    page.goto(app_server + "/noisy_groups?dataset=german_credit")
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Noisy protected groups")).to_be_visible()
    charts = page.locator('[data-testid="stPlotlyChart"]')
    expect(charts.first).to_be_visible(timeout=120_000)
    expect(charts).to_have_count(1, timeout=60_000)
    expect(page.get_by_text("True-group violation (test)")).to_be_visible()
    expect(page.get_by_text("Worst-case violation (test)")).to_be_visible()
    expect(page.get_by_text("Per-group true positive rate (test)").first).to_be_visible()
    expect(page.get_by_text("Download model file (linear classifier)")).to_be_visible()
    # the held-out checks sit at the top of the result: on german_credit (300 test rows) the
    # default run is not clearly better than the constant predictor on the same rows (McNemar),
    # a warning box drawn above the metrics
    warned = page.locator('[data-testid="stAlert"]').filter(has_text="Check warning")
    expect(warned.first).to_be_visible()
    expect(
        page.locator('[data-testid="stAlert"]').filter(
            has_text="not clearly better on the same rows"
        )
    ).to_be_visible()
    metric = page.get_by_text("Error (test)", exact=True)
    assert warned.first.bounding_box()["y"] < metric.bounding_box()["y"]
    expect(page.get_by_text("Baselines on the same test rows")).to_be_visible()
    screenshot(page, "noisy-groups-german", full_page=True)

    page.get_by_role("button", name="Sweep noise level").click()
    wait_for_app(page)
    expect(charts).to_have_count(4, timeout=180_000)
    expect(page.get_by_text("True-group violation vs noise (test)").first).to_be_visible(
        timeout=60_000
    )
    screenshot(page, "noisy-groups-sweep", full_page=True)
    assert exception_texts(page) == []
