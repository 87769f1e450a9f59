"""Steps the end-to-end tests share: pick in a select box, upload a table on the Data page, sweep
one knob on Compare & export, put an outside model on the plane, and read a downloaded report
from disk with every network request blocked."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from harness import wait_for_app

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page


def choose(page: Page, label: str, option: str, *, typed: bool = False) -> None:
    """Pick ``option`` in the select box ``label`` (``typed``: by typing it first, for a long
    list of options that is drawn only in part); retried, since a rerun that lands between the
    steps closes the drop-down."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    for attempt in range(3):
        wait_for_app(page)
        box.click()
        if typed:
            page.keyboard.type(option)
        try:
            page.get_by_role("option").filter(has_text=option).first.click(timeout=10_000)
            break
        except Exception:
            page.keyboard.press("Escape")
            if attempt == 2:
                raise
    wait_for_app(page)


def opened(page: Page, title: str) -> Locator:
    """The expander whose title holds ``title``, opened."""
    details = page.locator("details").filter(has_text=title).first
    if details.get_attribute("open") is None:
        details.locator("summary").click()
        wait_for_app(page)
    return details


def fill(scope: Page | Locator, label: str, text: str) -> None:
    """Type ``text`` into the text input ``label`` and press Enter."""
    box = scope.locator('[data-testid="stTextInput"]').filter(has_text=label).first
    box.locator("input").fill(text)
    box.locator("input").press("Enter")


def upload(page: Page, path: Path, label: str = "") -> None:
    """Give ``path`` to the file uploader labelled ``label`` (the first one without a label)."""
    boxes = page.locator('[data-testid="stFileUploader"]')
    box = (boxes.filter(has_text=label) if label else boxes).first
    box.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    wait_for_app(page, timeout=120_000)


def upload_table(page: Page, app_server: str, path: Path) -> None:
    """Open the Data page and upload the table at ``path``."""
    page.goto(app_server + "/")
    wait_for_app(page)
    page.get_by_text("Upload a file").click()
    wait_for_app(page)
    upload(page, path)


def sweep(page: Page, method: str, knob: str, values: str) -> None:
    """On Compare & export, sweep ``knob`` of ``method`` over ``values`` (comma-separated)."""
    details = opened(page, "Compute a frontier")
    details.locator('[data-testid="stSelectbox"]').first.wait_for()
    choose(page, "Method", method)
    choose(page, "Knob to sweep", knob)
    fill(page, "comma-separated", values)
    wait_for_app(page)
    page.get_by_role("button", name="Run sweep").click()
    wait_for_app(page, timeout=120_000)


def scored_applicants(path: Path) -> Path:
    """400 applicants with a made-up model's score (a logistic of income and hours)."""
    rows = ["income;gender;hours;score;approved"]
    for i in range(400):
        income, hours = 1000 + 37 * i % 900, 20 + i % 30
        score = 1 / (1 + math.exp(-((income - 1450) / 300 + (hours - 35) / 10)))
        approved = "yes" if (i * 7919) % 100 < 100 * score else "no"
        rows.append(f"{income};{'f' if i % 3 else 'm'};{hours};{score:.3f};{approved}")
    path.write_text("\n".join(rows))
    return path


def upload_and_sweep(page: Page, app_server: str, tmp_path: Path) -> None:
    """Upload :func:`scored_applicants`, open Compare & export and sweep Reweighing's strength."""
    upload_table(page, app_server, scored_applicants(tmp_path / "applicants.csv"))
    page.get_by_role("link", name="Compare & export").click()
    wait_for_app(page)
    sweep(page, "Reweighing", "strength", "0, 1")


def add_outside(
    page: Page,
    route: str,
    *,
    name: str = "",
    column: str = "",
    path: Path | None = None,
    trained: str = "",
) -> None:
    """Put an outside model on the plane from the "Your models" panel: its predictions come
    from ``route`` (a ``column`` of the table, or a file at ``path``), under ``name`` (the
    default when empty), trained on the rows ``trained`` says (the page's default when empty)."""
    details = opened(page, "Your model")
    if name:
        fill(details, "Name on the plane", name)
        wait_for_app(page)
    details.get_by_text(route).click()
    wait_for_app(page)
    if trained:
        details.get_by_text(trained).click()
        wait_for_app(page)
    if column:
        choose(page, "Column holding", column)
    if path is not None:
        label = "Model file" if route == "A model file" else "Predictions file"
        upload(page, path, label)
    page.get_by_role("button", name="Add to the plane").click()
    wait_for_app(page, timeout=120_000)


def download_report(page: Page, folder: Path) -> Path:
    """Prepare the Compare page's report and download it into ``folder``."""
    page.get_by_role("button", name="Prepare the report").click()
    wait_for_app(page, timeout=120_000)
    with page.expect_download() as info:
        page.get_by_role("button", name="Download report").click()
    info.value.save_as(folder / "report.html")
    return folder / "report.html"


@contextlib.contextmanager
def offline_report(page: Page, report: Path) -> Iterator[Page]:
    """The report at ``report`` opened from disk in a new browser context that blocks every
    request but ``file:`` ones; on leaving, asserts that the report asked for nothing else."""
    context = page.context.browser.new_context(viewport={"width": 1400, "height": 1000})
    blocked: list[str] = []

    def only_files(route) -> None:
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", only_files)
    view = context.new_page()
    try:
        view.goto(report.as_uri())
        yield view
        assert blocked == []  # the report asked for nothing outside itself
    finally:
        context.close()
