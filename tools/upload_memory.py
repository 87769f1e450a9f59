"""Memory of the dashboard's server after visitors upload a large table and close their tabs.

Starts ``streamlit run`` (the app of ``--app``, default this clone's), has ``--sessions``
browser sessions each upload a ``--megabytes`` CSV on the Data page, closes them, and prints the
server process's resident memory (psutil) before the uploads, after them, and at times after
the tabs closed; at the end a new visitor opens the app (which lets Streamlit expire what it
keeps of closed sessions) and the memory is read once more. Run once, by hand (minutes):

    PYTHONPATH=$PWD python tools/upload_memory.py --sessions 2 --megabytes 100
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
import harness


def big_csv(path: Path, megabytes: int) -> Path:
    """A table of about ``megabytes`` MB: numbers, a sensitive column and a label."""
    if path.exists() and path.stat().st_size >= megabytes * 2**20:
        return path
    line = "{i},{a},{b:.4f},{c},{g},{y}\n"
    with path.open("w") as out:
        out.write("id,age,score,hours,sex,label\n")
        i = 0
        while out.tell() < megabytes * 2**20:
            rows = [
                line.format(
                    i=i + k,
                    a=18 + (i + k) % 60,
                    b=((i + k) * 7919 % 1000) / 1000,
                    c=(i + k) % 50,
                    g="f" if (i + k) % 3 else "m",
                    y="yes" if (i + k) * 31 % 7 < 3 else "no",
                )
                for k in range(10_000)
            ]
            out.write("".join(rows))
            i += 10_000
    return path


def rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--app", default=None)
    parser.add_argument("--sessions", type=int, default=2)
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--after", type=float, nargs="+", default=[10, 150])
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    table = big_csv(
        Path(tempfile.gettempdir()) / f"fairengine-big-{args.megabytes}.csv", args.megabytes
    )
    cache = tempfile.mkdtemp(prefix="fairengine-bench-cache-")
    with (
        harness.running_app(args.app, cache_dir=cache, timeout=120) as server,
        sync_playwright() as p,
    ):
        pid = server.process.pid
        browser = harness.launch_browser(p)
        contexts = []
        first = browser.new_page()
        first.goto(server.url + "/")
        harness.wait_for_app(first, timeout=300_000)
        first.context.close()
        time.sleep(5)
        print(f"server RSS before uploads: {rss_mb(pid):,.0f} MB", flush=True)
        for _ in range(args.sessions):
            context = browser.new_context()
            page = context.new_page()
            page.goto(server.url + "/")
            harness.wait_for_app(page, timeout=300_000)
            page.get_by_text("Upload a file").click()
            harness.wait_for_app(page)
            uploader = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
            uploader.set_input_files(str(table))
            page.wait_for_timeout(2000)
            harness.wait_for_app(page, timeout=600_000)
            contexts.append(context)
        print(
            f"server RSS with {args.sessions} sessions after uploading: {rss_mb(pid):,.0f} MB",
            flush=True,
        )
        for context in contexts:
            context.close()
        closed = time.time()
        for at in args.after:
            time.sleep(max(0.0, closed + at - time.time()))
            print(f"server RSS {at:.0f} s after the tabs closed: {rss_mb(pid):,.0f} MB", flush=True)
        page = browser.new_page()
        page.goto(server.url + "/")
        harness.wait_for_app(page, timeout=300_000)
        time.sleep(5)
        print(f"server RSS after a new visitor's page: {rss_mb(pid):,.0f} MB", flush=True)
        browser.close()


if __name__ == "__main__":
    main()
