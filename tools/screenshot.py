"""Take the README screenshot of the dashboard in headless Chromium.

    python tools/screenshot.py              # the Compare page on Adult -> docs/screenshot.png
    python tools/screenshot.py --path / --wait-for "" --out docs/data.png

Starts ``streamlit run dashboard/app.py`` on a free localhost port (FAIRENGINE_CACHE in a fresh
temporary directory unless --cache-dir is given), opens the path, waits until Streamlit has
finished running, and writes a PNG. Uses the same harness as the end-to-end tests
(tests/e2e/harness.py). Exits non-zero if the page shows a Streamlit exception.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
import harness

README_PATH = "/compare?dataset=adult"
CHART = '[data-testid="stPlotlyChart"]'


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--path",
        default=README_PATH,
        help=f"URL path and query to open (default {README_PATH!r}: the README shot, several "
        "methods' shipped frontiers on one plane)",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("docs/screenshot.png"), help="PNG to write"
    )
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=1100)
    parser.add_argument(
        "--app",
        default=None,
        help=f"app script (default ${harness.APP_ENV_VAR} or dashboard/app.py)",
    )
    parser.add_argument(
        "--cache-dir", type=Path, default=None, help="FAIRENGINE_CACHE (default: a fresh temp dir)"
    )
    parser.add_argument(
        "--wait-for", default=CHART, help="CSS selector that must be visible before the shot"
    )
    parser.add_argument(
        "--scroll-to", default=None, help="CSS selector to scroll into view before the shot"
    )
    parser.add_argument(
        "--delay-ms", type=int, default=1000, help="extra wait for charts to finish drawing"
    )
    parser.add_argument("--timeout-s", type=float, default=120.0, help="wait for the app run")
    parser.add_argument("--full-page", action="store_true", help="capture the whole page")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    reason = harness.e2e_unavailable_reason()
    if reason is not None:
        print(f"error: {reason}", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    out = args.out if args.out.is_absolute() else harness.REPO_ROOT / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    path = args.path if args.path.startswith("/") else "/" + args.path
    log_path = harness.ARTIFACTS_DIR / "screenshot-server.log"

    with tempfile.TemporaryDirectory(prefix="fairengine-cache-") as tmp:
        cache_dir = args.cache_dir or Path(tmp)
        try:
            server_cm = harness.running_app(args.app, cache_dir=cache_dir, log_path=log_path)
            with server_cm as server, sync_playwright() as playwright:
                browser = harness.launch_browser(playwright)
                try:
                    page = browser.new_page(viewport={"width": args.width, "height": args.height})
                    page.goto(server.url + path)
                    harness.wait_for_app(page, timeout=args.timeout_s * 1000)
                    if args.wait_for:
                        page.locator(args.wait_for).first.wait_for(
                            state="visible", timeout=args.timeout_s * 1000
                        )
                        harness.wait_for_app(page, timeout=args.timeout_s * 1000)
                    if args.scroll_to:
                        target = page.locator(args.scroll_to).first
                        target.scroll_into_view_if_needed()
                    page.wait_for_timeout(args.delay_ms)
                    errors = harness.exception_texts(page)
                    page.screenshot(path=str(out), full_page=args.full_page)
                finally:
                    browser.close()
        except harness.AppServerError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1

    shown = out.relative_to(harness.REPO_ROOT) if out.is_relative_to(harness.REPO_ROOT) else out
    print(f"wrote {shown}")
    if errors:
        message = "\n\n".join(errors)
        print(f"error: the page shows a Streamlit exception:\n{message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
