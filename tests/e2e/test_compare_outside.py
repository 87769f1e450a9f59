"""Your model and the report in a real browser: upload a table that holds a model's scores,
compute a small frontier, put the model on the plane by its column, download the report and
open it from disk with every network request blocked."""

from __future__ import annotations

import math
from pathlib import Path

from harness import ARTIFACTS_DIR, exception_texts, screenshot, wait_for_app
from playwright.sync_api import Page, expect
from test_compare_page import _choose, _sweep

NAME = "prod <model>"


def _table(path: Path) -> Path:
    """Applicants with a made-up model's score (a logistic of income and hours)."""
    rows = ["income;gender;hours;score;approved"]
    for i in range(400):
        income, hours = 1000 + 37 * i % 900, 20 + i % 30
        score = 1 / (1 + math.exp(-((income - 1450) / 300 + (hours - 35) / 10)))
        approved = "yes" if (i * 7919) % 100 < 100 * score else "no"
        rows.append(f"{income};{'f' if i % 3 else 'm'};{hours};{score:.3f};{approved}")
    path.write_text("\n".join(rows))
    return path


def _add_by_column(page: Page) -> None:
    details = page.locator("details").filter(has_text="Your model").first
    if details.get_attribute("open") is None:
        details.locator("summary").click()
    name = details.locator('[data-testid="stTextInput"]').filter(has_text="Name on the plane")
    name.locator("input").fill(NAME)
    name.locator("input").press("Enter")
    wait_for_app(page)
    _choose(page, "Column holding", "score")
    page.get_by_role("button", name="Add to the plane").click()
    wait_for_app(page, timeout=120_000)


def _upload_and_sweep(page: Page, app_server: str, tmp_path: Path) -> None:
    page.goto(app_server + "/")
    wait_for_app(page)
    page.get_by_text("Upload a file").click()
    wait_for_app(page)
    uploader = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    uploader.set_input_files(str(_table(tmp_path / "applicants.csv")))
    wait_for_app(page)
    page.get_by_role("link", name="Compare & export").click()
    wait_for_app(page)
    _sweep(page, "Reweighing", "strength", "0, 1")


def _upload_to(page: Page, label: str, path: Path) -> None:
    box = page.locator('[data-testid="stFileUploader"]').filter(has_text=label).first
    box.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    wait_for_app(page)
    page.get_by_role("button", name="Add to the plane").click()
    wait_for_app(page, timeout=120_000)


def test_outside_model_by_file_and_by_model_file(
    page: Page, app_server: str, tmp_path: Path
) -> None:
    _upload_and_sweep(page, app_server, tmp_path)
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    main = page.locator('[data-testid="stMain"]')
    with page.expect_download() as info:  # a method's model file: route (c) uploads it back
        page.get_by_role("button", name="Download model file").click()
    model = tmp_path / "point.fairmodel"
    info.value.save_as(model)

    details = page.locator("details").filter(has_text="Your model").first
    details.locator("summary").click()
    page.get_by_text("A predictions file").click()
    wait_for_app(page)
    rows = ["row,p", *(f"{i},{0.3 + 0.4 * (i % 2)}" for i in range(400))]
    (tmp_path / "preds.csv").write_text("\n".join(rows))
    _upload_to(page, "Predictions file", tmp_path / "preds.csv")
    expect(main).to_contain_text("scores from column 'p' of a predictions file keyed by 'row'")
    expect(chart).to_contain_text("my model")
    expect(main).to_contain_text("Per group on the test rows")
    screenshot(page, "compare-outside-file")

    page.get_by_text("A model file").click()
    wait_for_app(page)
    _upload_to(page, "Model file", model)
    expect(main).to_contain_text("from model file 'point.fairmodel'")
    expect(chart).to_contain_text("my model")
    expect(main).to_contain_text("Per group on the test rows")
    screenshot(page, "compare-outside-model-file")
    assert exception_texts(page) == []


def test_outside_model_on_the_plane_and_report_offline(
    page: Page, app_server: str, tmp_path: Path
) -> None:
    _upload_and_sweep(page, app_server, tmp_path)
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    expect(chart).to_be_visible()

    _add_by_column(page)
    main = page.locator('[data-testid="stMain"]')
    # the score column leaves every method's features: the frontier fitted with it is set aside
    expect(main).to_contain_text("no longer a feature of any method")
    expect(main).to_contain_text("No frontier is cached")
    _sweep(page, "Reweighing", "strength", "0, 1")  # fitted again without it
    expect(chart).to_contain_text(NAME)  # the labelled point (and its legend entry)
    expect(main).to_contain_text("What would it cost to be fairer?")
    expect(main).to_contain_text(f"Your model: {NAME}")
    expect(main).to_contain_text("Per group on the test rows")  # its group table
    curve = page.locator('[data-testid="stPlotlyChart"]').filter(
        has_text="True and false positive rate per group"
    )
    expect(curve).to_be_visible()  # its per-group threshold chart (scores)
    screenshot(page, "compare-outside-model")

    page.get_by_role("button", name="Prepare the report").click()
    wait_for_app(page, timeout=120_000)
    with page.expect_download() as info:
        page.get_by_role("button", name="Download report").click()
    report = tmp_path / "report.html"
    info.value.save_as(report)
    assert exception_texts(page) == []

    offline = page.context.browser.new_context(viewport={"width": 1400, "height": 1000})
    blocked: list[str] = []

    def only_files(route) -> None:
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    offline.route("**/*", only_files)
    view = offline.new_page()
    try:
        view.goto(report.as_uri())
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
        assert blocked == []  # the report asked for nothing outside itself
    finally:
        offline.close()
