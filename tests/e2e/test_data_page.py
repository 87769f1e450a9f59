"""The Data page in a real headless Chromium: bundled data, switching dataset, uploads."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

from harness import exception_texts, screenshot, wait_for_app
from playwright.sync_api import Page, expect
from steps import upload_table


def metric(page: Page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def choose(page: Page, label: str, option: str) -> None:
    """Open the selectbox labelled ``label`` and click the option containing ``option``."""
    page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first.click()
    page.get_by_role("option").filter(has_text=option).first.click()
    wait_for_app(page)


def sidebar(page: Page) -> str:
    return page.locator('[data-testid="stSidebar"]').inner_text()


def test_bundled_dataset_and_switch(page: Page, app_server: str) -> None:
    page.goto(app_server + "/")
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Data")).to_be_visible()
    assert metric(page, "Rows") == "48,842"
    assert "adult" in sidebar(page)
    expect(page.locator('[data-testid="stPlotlyChart"]')).to_have_count(2, timeout=60_000)
    screenshot(page, "data-adult")

    choose(page, "Dataset", "COMPAS recidivism")
    assert metric(page, "Rows") == "6,172"
    assert "compas" in sidebar(page)
    assert "dataset=compas" in page.url
    screenshot(page, "data-compas")
    assert exception_texts(page) == []


def test_link_opens_dataset(page: Page, app_server: str) -> None:
    page.goto(app_server + "/?dataset=german_credit")
    wait_for_app(page)
    assert metric(page, "Rows") == "1,000"
    assert "german_credit" in sidebar(page)


def test_upload_good_csv(page: Page, app_server: str, tmp_path: Path) -> None:
    rows = ["income;gender;hours;approved"]
    rows += [
        f"{1000 + 37 * i % 900};{'f' if i % 3 else 'm'};{20 + i % 30};{'yes' if i % 4 else 'no'}"
        for i in range(200)
    ]
    path = tmp_path / "applicants.csv"
    path.write_text("\n".join(rows))
    upload_table(page, app_server, path)
    expect(page.locator('[data-testid="stMetric"]').filter(has_text="Rows").first).to_be_visible()
    assert metric(page, "Rows") == "200"
    assert metric(page, "Groups") == "2"
    expect(page.locator('[data-testid="stSidebar"]')).to_contain_text("applicants")
    screenshot(page, "data-upload-good")
    assert exception_texts(page) == []


def test_upload_malformed_csv_shows_readable_error(
    page: Page, app_server: str, tmp_path: Path
) -> None:
    path = tmp_path / "broken.csv"
    path.write_text("a,b,a\n1,2,3\n4,5,6\n")
    upload_table(page, app_server, path)
    alert = page.locator('[data-testid="stAlert"]').filter(has_text="duplicate column names")
    expect(alert.first).to_be_visible()
    expect(page.locator('[data-testid="stSidebar"]')).to_contain_text("No valid task")
    screenshot(page, "data-upload-malformed")
    assert exception_texts(page) == []


def test_upload_multiclass_target_one_vs_rest(page: Page, app_server: str, tmp_path: Path) -> None:
    rows = ["age,gender,grade"]
    rows += [f"{20 + i % 40},{'f' if i % 3 else 'm'},{'ABCDE'[i % 5]}" for i in range(150)]
    path = tmp_path / "grades.csv"
    path.write_text("\n".join(rows))
    upload_table(page, app_server, path)
    # no two-valued column but the group's: the page asks for the target, with no error box
    expect(page.get_by_text("Choose the target, the column to predict")).to_be_visible()
    expect(page.locator('[data-testid="stAlertContentError"]')).to_have_count(0)
    choose(page, "Target (what to predict)", "grade")
    alert = page.locator('[data-testid="stAlert"]').filter(has_text="A, B, C, D, E;")
    expect(alert.first).to_be_visible()
    assert "has 5 values: A, B" in alert.first.inner_text().replace("\u2060", "")
    expect(alert.first).not_to_contain_text("from_frame")
    wait_for_app(page)
    page.get_by_text("More roles").click()
    wait_for_app(page)
    box = page.locator('[data-testid="stMultiSelect"]').filter(has_text="one-vs-rest")
    option = page.get_by_role("option", name="A", exact=True)
    for _ in range(3):  # the box can rerender under the first click; open it until it lists A
        box.first.locator("input").click()
        try:
            expect(option).to_be_visible(timeout=10_000)
            break
        except AssertionError:
            page.keyboard.press("Escape")
    option.click()
    page.keyboard.press("Escape")
    wait_for_app(page)
    expect(page.locator('[data-testid="stMetric"]').filter(has_text="P(grade = A)")).to_be_visible(
        timeout=60_000
    )
    assert metric(page, "P(grade = A)") == "0.200"
    screenshot(page, "data-upload-one-vs-rest")
    assert exception_texts(page) == []


def test_first_upload_opens_on_guessed_roles_and_a_reload_asks_for_the_file(
    page: Page, app_server: str, tmp_path: Path
) -> None:
    """An arrests-like table (binary outcome not last, a 0-6 count last, a colour column): the
    page opens on a valid task with no error, says what it guessed, and the address names the
    upload; a reload says the upload must be given again and loads no other data."""
    from tests.upload_tables import arrests_like

    frame = arrests_like(rows=3000)
    assert list(frame.columns)[-1] == "checks" and frame["checks"].nunique() == 7
    path = tmp_path / "arrests.csv"
    frame.to_csv(path, index=False)
    upload_table(page, app_server, path)
    expect(page.locator('[data-testid="stSidebar"]')).to_contain_text("arrests", timeout=60_000)
    expect(page.locator('[data-testid="stAlertContentError"]')).to_have_count(0)
    guessed = page.locator('[data-testid="stAlert"]').filter(has_text="Guessed the target")
    expect(guessed).to_have_text(
        "Guessed the target 'released' (two values, named like an outcome) and the sensitive "
        "attribute 'colour' (named like a protected attribute; also 'sex', 'citizen'). Change "
        "them below."
    )
    assert metric(page, "Rows") == "3,000" and metric(page, "Groups") == "2"
    expect(
        page.locator('[data-testid="stMetric"]').filter(has_text="P(released = Yes)")
    ).to_be_visible()
    query = parse_qs(urlparse(page.url).query)
    assert query == {
        "data": ["upload"],
        "name": ["arrests.csv"],
        "target": ["released"],
        "sensitive": ["colour"],
    }
    screenshot(page, "data-first-upload-guess")
    assert exception_texts(page) == []

    page.reload()
    wait_for_app(page)
    message = page.locator('[data-testid="stAlert"]').filter(has_text="This link refers to")
    expect(message).to_have_text(
        "This link refers to an uploaded table (arrests.csv), which is not kept on the server. "
        "Upload it again to continue."
    )
    expect(page.locator('[data-testid="stFileUploaderDropzoneInput"]')).to_be_attached()
    expect(page.locator('[data-testid="stSidebar"]')).to_contain_text("No valid task")
    expect(page.locator('[data-testid="stMetric"]')).to_have_count(0)  # Adult was not loaded
    assert "adult" not in sidebar(page) and "dataset" not in parse_qs(urlparse(page.url).query)
    assert parse_qs(urlparse(page.url).query)["name"] == ["arrests.csv"]
    screenshot(page, "data-upload-link-reloaded")
    assert exception_texts(page) == []
