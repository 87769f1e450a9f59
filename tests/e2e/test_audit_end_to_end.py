"""The audit an analyst runs, in a real browser: upload a table, sweep every method in one
action, add two outside models (model files made by the engine), choose a reference group that
is not the largest, read the false positive rate and precision ratios to it with the
four-fifths verdict on the plane and in the group tables, download the report and find all of
it in the file opened from disk with every network request blocked."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
from harness import exception_texts, screenshot, wait_for_app
from playwright.sync_api import Page, expect
from steps import add_outside, choose, download_report, offline_report, upload_table

from fairengine.data.task import from_frame
from fairengine.export import save_model
from fairengine.methods import get_method

RACES = ("White", "White", "White", "Black", "Black", "Asian")  # three groups, White largest
MODELS = ("production <v1>", "candidate")


def _table(path: Path) -> pd.DataFrame:
    """300 applicants in three groups; approval depends on income, hours and the group."""
    rows = []
    for i in range(300):
        income, hours, race = 1000 + 37 * i % 900, 20 + i % 30, RACES[(i * 7) % 6]
        shift = 0.4 if race == "White" else -0.3
        score = 1 / (1 + math.exp(-((income - 1450) / 300 + (hours - 35) / 10 + shift)))
        approved = "yes" if (i * 7919) % 100 < 100 * score else "no"
        rows.append({"income": income, "race": race, "hours": hours, "approved": approved})
    frame = pd.DataFrame(rows)
    frame.to_csv(path, index=False)
    return frame


def _model_files(frame: pd.DataFrame, folder: Path) -> list[Path]:
    """Two models of the same table made by the engine on its own training rows: reweighing
    at strength 0 (in production) and at strength 1 (the candidate)."""
    task = from_frame(frame, target="approved", sensitive="race", positive_label="yes")
    train, test = task.split()
    paths = []
    for strength, name in zip((0.0, 1.0), ("production", "candidate"), strict=True):
        result = get_method("reweighing").run(train, test, strength=strength)
        paths.append(
            save_model(
                result,
                folder / f"{name}.fairmodel",
                train=train,
                test=test,
                method=get_method(result.method),
            )
        )
    return paths


def _offline_text(page: Page, report: Path) -> str:
    """The report's text as Chromium shows it from disk, every non-file request blocked."""
    with offline_report(page, report) as view:
        plane = view.locator("#plane")
        expect(plane.locator(".main-svg").first).to_be_attached(timeout=30_000)
        for name in MODELS:  # each its own legend entry, drawn by the embedded plotly
            expect(plane).to_contain_text(f"outside: {name}")
        return " ".join(view.locator("body").inner_text().split())


def test_the_audit_an_analyst_runs_end_to_end(page: Page, app_server: str, tmp_path: Path) -> None:
    frame = _table(tmp_path / "applicants.csv")
    files = _model_files(frame, tmp_path)
    upload_table(page, app_server, tmp_path / "applicants.csv")
    page.get_by_role("link", name="Compare & export").click()
    wait_for_app(page)
    main = page.locator('[data-testid="stMain"]')
    chart = page.locator('[data-testid="stPlotlyChart"]').first

    page.get_by_role("button", name="Sweep every method").click()  # the one action
    wait_for_app(page, timeout=600_000)
    expect(chart).to_be_visible(timeout=600_000)
    expect(main).not_to_contain_text("Sweeping every method", timeout=600_000)  # all done
    expect(chart).to_contain_text("Reweighing")
    for name, path in zip(MODELS, files, strict=True):
        add_outside(
            page, "A model file", name=name, path=path, trained="The engine's training rows"
        )
        expect(main).to_contain_text(f"from model file '{path.name}'", timeout=120_000)
    for name in MODELS:
        expect(chart).to_contain_text(name)

    reference = page.locator('[data-testid="stSelectbox"]').filter(has_text="Reference group")
    largest = r"- combobox: /race = White \(\d+ test rows, the largest\)/"
    expect(reference).to_match_aria_snapshot(largest)
    choose(page, "Reference group", "race = Black")
    expect(reference).to_match_aria_snapshot(r"- combobox: /race = Black \(\d+ test rows\)/")
    for label in ("False positive rate ratio", "Precision (PPV) ratio"):
        choose(page, "y axis", label, typed=True)
        expect(main).to_contain_text("Ratios to the reference group Black")
        expect(main).to_contain_text(f"{label} to the reference group: ")  # "n of m points pass"
        expect(chart).to_contain_text("τ = 0.80")  # the four-fifths line on the plane
        # the selected point's value on this axis and its verdict
        verdict = rf"The selected point (passes|fails) τ = 0\.80 on {re.escape(label)}"
        expect(main).to_contain_text(re.compile(verdict + r"[^(]* \([01]\.\d{4}\)"))
        for name in MODELS:
            expect(chart).to_contain_text(name)
        screenshot(page, f"audit-e2e-{label.split()[0].lower()}")
    verdicts = page.locator('[data-testid="stTable"]').filter(has_text="False positive rate ratio")
    expect(verdicts.first).to_contain_text("Precision (PPV) ratio")  # the selected point's table
    expect(verdicts.first).to_contain_text("Black")
    expect(verdicts.first).to_contain_text("1.000 pass")  # the reference group itself
    expect(main).to_contain_text("Four-fifths rule at τ = 0.80: a group passes")

    report = download_report(page, tmp_path)
    assert exception_texts(page) == []

    text = _offline_text(page, report)
    for name in MODELS:
        assert f"outside · {name}" in text  # each pinned with its group table
    assert "reference group Black (chosen for this comparison)" in text
    assert "four-fifths rule at τ = 0.80" in text
    assert "False positive rate ratio" in text and "Precision (PPV) ratio" in text
    assert " pass" in text or " fail" in text
