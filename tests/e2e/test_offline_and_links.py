"""Offline and shareable, in a real browser: every request the pages make stays on the host, and a
method page's link restores its knobs."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

from harness import exception_texts, wait_for_app
from playwright.sync_api import Page, expect

#: The pages a visitor opens first; the method page runs a fit on a small dataset.
PAGES = (
    "/",
    "/maxent?dataset=german_credit",
    "/balanced_filtering?dataset=german_credit",
    "/compare?dataset=german_credit",
    "/about",
)


def _local(url: str, base: str) -> bool:
    parsed = urlparse(url)
    return parsed.scheme in ("data", "blob", "about") or url.startswith(base)


def test_no_request_leaves_the_host(page: Page, app_server: str) -> None:
    requests: list[str] = []
    page.context.on("request", lambda request: requests.append(request.url))
    for path in PAGES:
        page.goto(app_server + path)
        wait_for_app(page, timeout=120_000)
        expect(page.locator('[data-testid="stSidebarNav"]')).to_be_visible()
        page.wait_for_timeout(500)  # icons, fonts and the favicon load after the first paint
        assert exception_texts(page) == [], path
    assert len(requests) > 10  # the recorder saw the app's own traffic
    outside = sorted({url for url in requests if not _local(url, app_server)})
    assert outside == [], f"requests left the host: {outside}"


def test_method_page_link_restores_knobs(page: Page, app_server: str) -> None:
    page.goto(app_server + "/maxent?dataset=german_credit&C=0.8&classifier=gnb")
    wait_for_app(page, timeout=120_000)
    charts = page.locator('[data-testid="stPlotlyChart"]')
    expect(charts.first).to_be_visible(timeout=120_000)
    slider = page.get_by_role("slider", name="Uniform weight in the prior C").first
    expect(slider).to_have_value("0.8")
    expect(page.get_by_role("combobox", name="Downstream classifier")).to_have_value("gnb")
    # The page writes its view back: task and non-default knobs, so the address is the link.
    query = parse_qs(urlparse(page.url).query)
    assert query["dataset"] == ["german_credit"] and query["C"] == ["0.8"]
    assert query["classifier"] == ["gnb"] and "tau" not in query
    expect(page.get_by_text("How to read this page")).to_be_visible()
    assert exception_texts(page) == []


def test_reload_after_upload_says_the_table_is_gone_and_offers_upload(
    page: Page, app_server: str, tmp_path: Path
) -> None:
    rows = ["income;gender;hours;approved"]
    rows += [
        f"{1000 + 37 * i % 900};{'fm'[i % 2]};{20 + i % 30};{'yn'[i % 3 > 0]}" for i in range(120)
    ]
    path = tmp_path / "applicants.csv"
    path.write_text("\n".join(rows))
    page.goto(app_server + "/")
    wait_for_app(page)
    page.get_by_text("Upload a file").click()
    wait_for_app(page)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    wait_for_app(page)
    expect(page.locator('[data-testid="stSidebar"]')).to_contain_text("applicants")
    query = parse_qs(urlparse(page.url).query)
    assert query["source"] == ["upload"] and query["dataset"] == ["applicants"]

    page.reload()
    wait_for_app(page)
    alert = page.locator('[data-testid="stAlert"]').filter(has_text="uploaded table (applicants)")
    expect(alert.first).to_be_visible()
    expect(page.locator('[data-testid="stFileUploaderDropzoneInput"]')).to_be_attached()
    expect(page.locator('[data-testid="stSidebar"]')).to_contain_text("No valid task")
    assert exception_texts(page) == []
