"""A report built by ``fairengine report`` from a hostile comparison, opened from disk in
Chromium: no script of the comparison runs, no request leaves the file, and every hostile name
shows as its own characters (no ``<img>``, no link, no script created from it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from hostile_text import EVIL_HOST, HOSTILE  # noqa: E402

#: Each one raises ``window.__pwned`` (and renames the page) if it ever runs as script.
RUNS = "window.__pwned=(window.__pwned||0)+1;document.title='PWNED'"
SCRIPTS: tuple[str, ...] = (
    f'<img src=x onerror="{RUNS}">',
    f"<script>{RUNS}</script>",
    f"</script><script>{RUNS}</script><!--",
    f"<svg onload=\"{RUNS}\"></svg><iframe src='javascript:{RUNS}'></iframe>",
    f'<a href="javascript:{RUNS}">click me</a> [md link](javascript:{RUNS})',
    f"![planted](https://{EVIL_HOST}/planted.png) <img src=https://{EVIL_HOST}/i.png>",
    f"<link rel=stylesheet href=https://{EVIL_HOST}/s.css><style>@import 'https://{EVIL_HOST}/x'",
)


def _hostile(i: int) -> str:
    texts = (*SCRIPTS, *HOSTILE)
    return texts[i % len(texts)] + f" #{i}"


def _hostile_comparison() -> dict:
    """A comparison saved by the engine, then given hostile names wherever the schema takes
    free text: the outside model, the table, groups, columns, knob values, checks, cards,
    versions, pins (metric names must be ones fairengine declares: a file naming another is
    refused at load, tests/dashboard/test_hostile_names.py)."""
    from fairengine.audit import audit
    from fairengine.audit.comparison import build_comparison
    from fairengine.data import load_dataset
    from fairengine.frontier import sweep

    task = load_dataset("german_credit")
    scores = np.clip(0.35 * task.y + 0.65 * np.random.default_rng(0).random(len(task.y)), 0, 1)
    outside = audit(task, scores=scores, name="outside")
    train, test = task.split()
    frontier = sweep("reweighing", train, test, {"strength": [0.0, 1.0]})
    pin = frontier.points["point_id"].iloc[0]
    data = build_comparison(task, [frontier], [outside], ["outside", pin]).to_dict()
    for item in [*data["points"], *data["outside"]]:
        for check in item.get("checks") or ():
            check["sentence"] = SCRIPTS[0] + _hostile(2) + check["sentence"]
    for i, item in enumerate(data["points"]):
        item["knobs"] = {**item["knobs"], "strength": _hostile(3 + i)}
    data["outside"][0]["name"] = _hostile(5)
    for row in data["outside"][0].get("groups") or ():
        row["group"] = _hostile(6)
    for row in data["outside"][0].get("curve") or ():
        row["group"] = _hostile(7)
    data["pins"][0]["id"] = _hostile(5)
    for j, pin_entry in enumerate(data["pins"]):
        pin_entry["card"] = _hostile(8 + j)
    task_entry = data["tasks"][0]
    task_entry.update(name=_hostile(10), target=_hostile(11), sensitive=[_hostile(12)])
    for k, group in enumerate(task_entry["groups"]):
        group["name"] = _hostile(13 + k)
    data["versions"] = {**data["versions"], _hostile(15): _hostile(16)}
    data["created"] = _hostile(17)
    return data


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile-report")
    comparison = folder / "comparison.json"
    comparison.write_text(json.dumps(_hostile_comparison()), encoding="utf-8")
    out = folder / "report.html"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "fairengine", "report", "--comparison", str(comparison), "-o",
         str(out), "--title", _hostile(18)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


def open_report(page: Page, path: Path) -> list[str]:
    """Open ``path`` from disk with every request that is not a file recorded and refused;
    returns those requests' URLs."""
    outside: list[str] = []

    def refuse(route) -> None:
        outside.append(route.request.url)
        route.abort()

    page.route(lambda url: not url.startswith("file:"), refuse)
    page.on("request", lambda r: None if r.url.startswith("file:") else outside.append(r.url))
    page.add_init_script("window.__pwned = 0;")
    page.goto(path.as_uri(), wait_until="load")
    page.wait_for_timeout(1000)  # a late onerror or a lazy request would land by now
    return outside


def test_the_hostile_report_runs_no_script_and_sends_no_request(page: Page, report: Path) -> None:
    outside = open_report(page, report)
    assert page.evaluate("window.__pwned") == 0
    assert page.title() == _hostile(18)  # the title as its own characters, not renamed
    assert outside == []
    created = page.evaluate(
        """() => ({
            img: document.querySelectorAll('img').length,
            iframe: document.querySelectorAll('iframe').length,
            link: document.querySelectorAll('link').length,
            a: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
            svgOnload: document.querySelectorAll('svg[onload]').length,
            scripts: document.querySelectorAll('script').length,
        })"""
    )
    assert created["img"] == created["iframe"] == created["link"] == created["svgOnload"] == 0
    assert not [h for h in created["a"] if "javascript" in h or EVIL_HOST in h], created["a"]
    # plotly.js in the head and one drawing script per figure: none from the comparison
    assert created["scripts"] == 1 + page.evaluate("document.querySelectorAll('.plot').length")
    page.wait_for_function("document.querySelectorAll('.plot .main-svg').length >= 2")
    text = page.inner_text("body")
    for hostile in (SCRIPTS[0], SCRIPTS[2], SCRIPTS[5]):
        assert hostile in text  # shown as its own characters
    # the figures hold the hostile names as text too (legend, axis titles)
    svg_text = page.evaluate("[...document.querySelectorAll('.plot svg')].map(s => s.textContent)")
    assert any("#5" in s for s in svg_text) and any("<img" in s for s in svg_text)
