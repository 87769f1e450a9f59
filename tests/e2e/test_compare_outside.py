"""Your model and the report in a real browser: upload a table that holds a model's scores,
compute a small frontier, put the model on the plane by its column, download the report and
open it from disk with every network request blocked."""

from __future__ import annotations

from pathlib import Path

from harness import ARTIFACTS_DIR, exception_texts, screenshot
from playwright.sync_api import Page, expect
from steps import add_outside, download_report, offline_report, sweep, upload_and_sweep

NAME = "prod <model>"


def test_outside_model_by_file_and_by_model_file(
    page: Page, app_server: str, tmp_path: Path
) -> None:
    upload_and_sweep(page, app_server, tmp_path)
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    main = page.locator('[data-testid="stMain"]')
    with page.expect_download() as info:  # a method's model file: route (c) uploads it back
        page.get_by_role("button", name="Download model file").click()
    model = tmp_path / "point.fairmodel"
    info.value.save_as(model)

    rows = ["row,p", *(f"{i},{0.3 + 0.4 * (i % 2)}" for i in range(400))]
    (tmp_path / "preds.csv").write_text("\n".join(rows))
    add_outside(page, "A predictions file", path=tmp_path / "preds.csv")
    expect(main).to_contain_text("scores from column 'p' of a predictions file keyed by 'row'")
    expect(chart).to_contain_text("my model")
    expect(main).to_contain_text("Per group on the test rows")
    screenshot(page, "compare-outside-file")

    add_outside(page, "A model file", path=model)
    expect(main).to_contain_text("from model file 'point.fairmodel'")
    expect(chart).to_contain_text("my model")
    expect(main).to_contain_text("Per group on the test rows")
    screenshot(page, "compare-outside-model-file")
    assert exception_texts(page) == []


def test_outside_model_on_the_plane_and_report_offline(
    page: Page, app_server: str, tmp_path: Path
) -> None:
    upload_and_sweep(page, app_server, tmp_path)
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    expect(chart).to_be_visible()

    add_outside(page, "A column of the table", name=NAME, column="score")
    main = page.locator('[data-testid="stMain"]')
    # the score column leaves every method's features: the frontier fitted with it is set aside
    expect(main).to_contain_text("no longer a feature of any method")
    expect(main).to_contain_text("No frontier is cached")
    sweep(page, "Reweighing", "strength", "0, 1")  # fitted again without it
    expect(chart).to_contain_text(NAME)  # the labelled point (and its legend entry)
    expect(main).to_contain_text("What would it cost to be fairer?")
    expect(main).to_contain_text(f"Your model: {NAME}")
    expect(main).to_contain_text("Per group on the test rows")  # its group table
    curve = page.locator('[data-testid="stPlotlyChart"]').filter(
        has_text="True and false positive rate per group"
    )
    expect(curve).to_be_visible()  # its per-group threshold chart (scores)
    screenshot(page, "compare-outside-model")

    report = download_report(page, tmp_path)
    assert exception_texts(page) == []

    with offline_report(page, report) as view:
        plane = view.locator("#plane")
        expect(plane.locator(".main-svg").first).to_be_attached(timeout=30_000)
        expect(plane).to_contain_text(NAME)  # drawn by the embedded plotly, offline
        expect(view.get_by_role("heading", name="Pinned points")).to_be_visible()
        pins = view.locator(".pin")
        assert pins.count() >= 2  # the selected point and the outside model
        expect(view.locator("body")).to_contain_text(f"outside · {NAME}")
        # the chosen method point's model card travels with its pin
        expect(view.locator(".pin .card").filter(has_text="Model card:").first).to_be_attached()
        view.screenshot(path=str(ARTIFACTS_DIR / "report-offline.png"), full_page=True)
