"""Compare & export in a real browser: the shipped Adult frontiers, a click on a point, the
model file download, and the downloaded model predicting exactly as the cached one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from harness import exception_texts, screenshot, wait_for_app
from playwright.sync_api import Page, expect
from steps import choose, sweep

from fairengine.data import load_dataset
from fairengine.export import load_model, read_card, read_manifest
from fairengine.frontier import FrontierStore, task_key
from fairengine.frontier.demo import demo_root


def test_select_point_and_download_model(page: Page, app_server: str, tmp_path: Path) -> None:
    page.goto(app_server + "/compare?dataset=adult")
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Compare & export")).to_be_visible()
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    expect(chart).to_be_visible()
    legend = chart.inner_text()
    assert "Reweighing" in legend and "fairlearn ExponentiatedGradient" in legend
    screenshot(page, "compare-adult")

    # click one marker of the chart (plotly draws points as path.point in the scatter layers)
    markers = chart.locator("g.scatterlayer g.trace path.point")
    expect(markers.nth(9)).to_be_attached(timeout=60_000)
    before = page.url
    markers.nth(3).click(force=True)
    wait_for_app(page)
    page.wait_for_function("url => window.location.href !== url", arg=before, timeout=15_000)
    wait_for_app(page)
    point_id = page.url.split("point=")[1].split("&")[0]
    assert f"Point {point_id}" in page.locator('[data-testid="stMain"]').inner_text()
    screenshot(page, "compare-selected")

    with page.expect_download() as info:
        page.get_by_role("button", name="Download model file").click()
    path = tmp_path / "downloaded.fairmodel"
    info.value.save_as(path)
    manifest = read_manifest(path)
    assert manifest["metadata"]["method"] in ("reweighing", "fairlearn_eg")

    train, test = load_dataset("adult").split()
    cached = {
        p.point_id: p
        for p in FrontierStore(tmp_path / "none", read_only=(demo_root(),)).points(
            task_key(train, test)
        )
    }
    original = load_model(cached[point_id].path)
    downloaded = load_model(path)
    np.testing.assert_array_equal(downloaded.predict(test.X), original.predict(test.X))
    np.testing.assert_array_equal(downloaded.predict_score(test.X), original.predict_score(test.X))
    # The download carries a card built on download, whatever card the shipped demo file stored
    # when it was precomputed (most predate the "How to use this file" section).
    card = read_card(path)
    assert card is not None and "## How to use this file" in card
    assert f'load_model("adult-{manifest["metadata"]["method"]}-{point_id}.fairmodel")' in card
    assert exception_texts(page) == []


def test_sweep_on_a_new_task_keeps_the_method_and_notes_missing_axes(
    page: Page, fresh_app_server: str
) -> None:
    app_server = fresh_app_server  # "No frontier is cached" must not depend on earlier tests
    page.goto(app_server + "/compare?dataset=adult")  # the filter holds Adult's methods
    wait_for_app(page)
    expect(page.locator('[data-testid="stPlotlyChart"]').first).to_be_visible()
    page.get_by_role("link", name="Data", exact=True).click()
    wait_for_app(page)
    choose(page, "Dataset", "German credit")
    page.get_by_role("link", name="Compare & export").click()
    wait_for_app(page)
    main = page.locator('[data-testid="stMain"]')
    expect(main).to_contain_text("No frontier is cached")

    sweep(page, "Balanced filtering", "alpha", "0.1, 0.3")
    methods = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Methods")
    expect(methods).to_contain_text("Balanced filtering")  # not filtered away
    expect(page.locator('[data-testid="stPlotlyChart"]').first).to_be_visible()

    sweep(page, "Reweighing", "strength", "0, 1")
    expect(methods).to_contain_text("Reweighing")
    # the chart stays on the filter's plane; the method without those metrics gets a note
    expect(main).to_contain_text("Not on this plane")
    expect(main).to_contain_text("Reweighing")
    screenshot(page, "compare-note-missing-axes")
    assert exception_texts(page) == []


def test_add_to_comparison_from_a_method_page(page: Page, app_server: str) -> None:
    page.goto(app_server + "/maxent?dataset=german_credit")
    wait_for_app(page, timeout=120_000)
    page.get_by_role("button", name="Add to comparison").click()
    wait_for_app(page)
    expect(page.get_by_text("Added to the comparison")).to_be_visible()
    page.get_by_role("link", name="Open Compare & export").click()
    wait_for_app(page)
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    expect(chart).to_contain_text("Max-entropy debiasing", timeout=60_000)
    methods = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Methods")
    expect(methods).to_contain_text("Max-entropy debiasing")
    screenshot(page, "compare-added-from-maxent")
    assert exception_texts(page) == []
