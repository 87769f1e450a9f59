"""Open a running dashboard in headless Chromium and check that it serves the Data page.

Usage: python .ci/served_page.py URL

Used by .ci/package on the server that ``fairengine dashboard`` started from an installed wheel.
The browser, its options and the wait for the script to finish are the e2e harness's
(tests/e2e/harness.py). Prints the page's headings; exits 1 when the Data page's heading is
missing or the page shows an exception.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.harness import exception_texts, launch_browser, wait_for_app


def main(url: str) -> int:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_browser(playwright)
        try:
            page = browser.new_page()
            page.goto(url)
            wait_for_app(page, timeout=120_000)
            page.get_by_role("heading", name="Data").first.wait_for(timeout=60_000)
            headings = [h.strip() for h in page.locator("h1").all_inner_texts()]
            errors = exception_texts(page)
        finally:
            browser.close()
    print(f"headings: {headings}; exceptions: {len(errors)}")
    if "Data" not in headings or errors:
        print(f"error: the Data page was not served cleanly: {errors[:2]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
