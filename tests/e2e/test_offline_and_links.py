"""Offline and shareable, in a real browser: every request the pages make stays on the host, and a
method page's link restores its knobs."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from harness import exception_texts, wait_for_app
from playwright.sync_api import Page, expect
from steps import upload_table

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


def test_every_deep_link_opens_its_page_without_console_errors(page: Page, app_server: str) -> None:
    page.goto(app_server + "/")
    wait_for_app(page, timeout=120_000)
    links = page.locator('[data-testid="stSidebarNav"] a').evaluate_all(
        "links => links.map(a => new URL(a.href).pathname)"
    )
    paths = sorted({path for path in links if path != "/"})
    assert {"/compare", "/about", "/maxent"} <= set(paths)
    query = "dataset=german_credit&sensitive=sex&sensitive=age"
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    for link, path in [*((p, p) for p in paths), ("/?page=compare&", "/compare")]:
        page.goto(f"{app_server}{link}{'' if '?' in link else '?'}{query}")
        wait_for_app(page, timeout=120_000)
        opened = urlparse(page.url)
        assert opened.path == path, link
        shown = parse_qs(opened.query)
        assert shown["dataset"] == ["german_credit"] and shown["sensitive"] == ["sex", "age"]
        assert "page" not in shown and exception_texts(page) == [], link
    assert errors == []


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
    upload_table(page, app_server, path)
    expect(page.locator('[data-testid="stSidebar"]')).to_contain_text("applicants")
    query = parse_qs(urlparse(page.url).query)
    assert query["data"] == ["upload"] and query["name"] == ["applicants.csv"]
    assert "dataset" not in query

    page.reload()
    wait_for_app(page)
    alerts = page.locator('[data-testid="stAlert"]')
    alert = alerts.filter(has_text="uploaded table (applicants.csv)")
    expect(alert.first).to_be_visible()
    expect(page.locator('[data-testid="stFileUploaderDropzoneInput"]')).to_be_attached()
    expect(page.locator('[data-testid="stSidebar"]')).to_contain_text("No valid task")
    assert exception_texts(page) == []


# --- Hostile links and uploads: text stays text ------------------------------------------------


def _shown_text(page: Page) -> str:
    """Visible text of the page, word joiners dropped and white space collapsed."""
    text = page.locator('[data-testid="stApp"]').inner_text().replace("\u2060", "")
    return " ".join(text.split())


def _foreign_links(page: Page, base: str) -> list[str]:
    """Every <a href> and <img src> (HTML or SVG) that does not point at the app itself."""
    found = page.evaluate(  # 'a' also matches SVG <a> (Plotly's links), 'image' SVG images
        """() => [...document.querySelectorAll('a, img, image')].map(e => e.getAttribute('href')
            || e.getAttribute('src') || e.getAttribute('xlink:href')
            || e.getAttributeNS('http://www.w3.org/1999/xlink', 'href') || '')"""
    )
    relative = [u for u in found if u and not urlparse(u).scheme and not urlparse(u).netloc]
    return [u for u in found if u and u not in relative and not _local(u, base)]


def _check_page(page: Page, base: str, expected: list[str], where: str) -> int:
    """The page shows each of ``expected`` literally, has no element linking outside and no
    unescaped construct (e.g. rendered emphasis of the hostile text); returns the checks made."""
    assert _foreign_links(page, base) == [], where
    shown = _shown_text(page)
    for text in expected:
        assert " ".join(text.split()) in shown, (where, text)
    for tag in ("del", "em", ".katex"):  # ~~s~~, _i_ / _x_ / _t_, $x^2$ / $x$ / $z$ rendered
        rendered = page.locator(f'[data-testid="stApp"] {tag}').all_inner_texts()
        assert not {t.strip() for t in rendered} & {"s", "i", "x", "t", "z", "x2"}, (where, tag)
    assert exception_texts(page) == [], where
    return len(expected)


def _plot_text(page: Page, groups: list[str], where: str) -> bool:
    """Once every Plotly chart on the page has drawn: no chart holds a link, no group's tag is
    rendered and no label shows an entity (escaped twice); True when every group name shows as
    its characters."""
    charts = page.locator('[data-testid="stPlotlyChart"]')
    for i in range(charts.count()):
        charts.nth(i).locator("svg.main-svg").first.wait_for(state="attached", timeout=60_000)
    svg = '[data-testid="stPlotlyChart"] svg'
    assert page.locator(f"{svg} a").count() == 0, where
    # Streamlit's theme sets titles in bold; the groups' <b>g1</b> and <b>b</b> must stay text
    bold = page.locator(f'{svg} tspan[style*="bold"]').all_text_contents()
    assert not {t.strip() for t in bold} & {"g1", "b"}, (where, bold)
    texts = page.locator(f"{svg} text").all_text_contents()
    shown = " ".join(" ".join(texts).split())
    assert not re.search(r"&(amp|lt|gt|#\d+);", shown), (where, shown)
    return all(" ".join(g.split()) in shown for g in groups)


def _hostile_upload(tmp_path: Path) -> tuple[Path, list[str]]:
    import pandas as pd

    from tests.hostile_text import KITCHEN_SINK

    groups = [
        '<b>g1</b> [a](https://example.com/g) _x_ <a href="https://example.com/h">h</a>',
        ":red[g2] $x$ www.example.com <b>b</b> & co",
    ]
    rows = 160
    frame = pd.DataFrame(
        {
            "age": [20 + i % 40 for i in range(rows)],
            "hours": [10 + (7 * i) % 30 for i in range(rows)],
            KITCHEN_SINK: [groups[i % 2] for i in range(rows)],
            "`y` $z$": [("yes", "no")[(i // 2) % 3 > 0] for i in range(rows)],
        }
    )
    path = tmp_path / "[f](www.example.com) _t_ $x$ :red[n].csv"
    frame.to_csv(path, index=False)
    return path, [KITCHEN_SINK, *groups]


def test_hostile_links_and_upload_stay_text(page: Page, app_server: str, tmp_path: Path) -> None:
    """Links whose values, and an upload whose file, column and group names hold Markdown, HTML,
    KaTeX, directives and autolinks: every page shows them literally, nothing links or loads
    from outside, and the downloaded model card holds them escaped."""
    from urllib.parse import quote

    from fairengine.textsafe import md_code, md_file_text
    from tests.hostile_text import KITCHEN_SINK

    requests: list[str] = []
    page.context.on("request", lambda request: requests.append(request.url))
    hostile = quote(KITCHEN_SINK)
    checks = 0
    links = {
        f"/?data=upload&name={hostile}": [f"uploaded table ({KITCHEN_SINK})"],
        f"/?dataset={hostile}": [f"Unknown dataset {KITCHEN_SINK!r}"],
        f"/maxent?dataset=german_credit&tau={hostile}": [KITCHEN_SINK, "was ignored"],
        f"/compare?dataset=german_credit&target={hostile}": [KITCHEN_SINK, "roles are not valid"],
        f"/compare?dataset=german_credit&sensitive={hostile}": [KITCHEN_SINK],
    }
    for path, expected in links.items():
        page.goto(app_server + path)
        wait_for_app(page, timeout=120_000)
        checks += _check_page(page, app_server, expected, path)

    upload, names = _hostile_upload(tmp_path)
    upload_table(page, app_server, upload)
    # no column is named like a protected attribute, so the page asks: the group column is chosen
    box = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Sensitive attribute")
    box.first.locator("input").fill(KITCHEN_SINK[:12])
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    wait_for_app(page)
    expect(page.locator('[data-testid="stSidebar"]')).to_contain_text("Current task")
    checks += _check_page(page, app_server, [*names, upload.stem], "data page")
    plotted = {"Data"} if _plot_text(page, names[1:], "data page") else set()

    nav = page.locator('[data-testid="stSidebarNav"] a')
    titles = [t.strip().splitlines()[-1] for t in nav.all_inner_texts()]  # after the icon name
    added = False
    for i, title in enumerate(titles):
        nav.nth(i).click()
        wait_for_app(page, timeout=120_000)
        adder = page.get_by_role("button", name="Add to comparison")
        if title not in ("Data", "Compare & export", "About"):
            # The page's fit runs in the worker pool: its result brings the button and the
            # charts; a method that refuses this task says why in an error instead.
            refused = page.locator('[data-testid="stAlertContentError"]')
            adder.or_(refused).first.wait_for(timeout=90_000)
            wait_for_app(page)
            if not added and adder.count():
                adder.click()
                wait_for_app(page)
                added = True
        checks += _check_page(page, app_server, [KITCHEN_SINK], title)
        if _plot_text(page, names[1:], title):
            plotted.add(title)
    assert added, "no method page offered 'Add to comparison' for the hostile upload"
    # the pages whose charts label every group: each name shows as its characters
    assert {"Data", "Balanced filtering"} <= plotted, plotted

    nav.nth(titles.index("Compare & export")).click()
    wait_for_app(page, timeout=120_000)
    assert _plot_text(page, names[1:], "Compare & export")  # the chosen point's group chart
    with page.expect_download() as info:
        page.get_by_role("button", name="Download model card").click()
    card = Path(info.value.path()).read_text(encoding="utf-8")
    # the card file is text to read: names as they are, no escapes, no invisible characters
    assert md_code(KITCHEN_SINK) in card  # the sensitive column, in a code span
    for group in names[1:]:
        assert md_file_text(group) in card, group
    assert "\u2060" not in card
    checks += 1 + len(names)

    outside = sorted({url for url in requests if not _local(url, app_server)})
    print(
        f"{len(requests)} requests seen, {checks} hostile-text checks, outside: {outside}, "
        f"charts showing every group literally: {sorted(plotted)}"
    )
    assert len(requests) > 10 and outside == []
