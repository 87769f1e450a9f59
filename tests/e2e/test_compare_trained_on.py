"""Audit on unseen rows in a real browser: download the engine's train and test row ids from the
"Your model" panel, say the model was trained on some ids, and see the test rows it saw left
out."""

from __future__ import annotations

import csv
from pathlib import Path

from harness import exception_texts, screenshot, wait_for_app
from playwright.sync_api import Page, expect
from steps import opened, upload, upload_and_sweep


def test_download_the_split_ids_and_audit_on_the_rows_the_model_never_saw(
    page: Page, app_server: str, tmp_path: Path
) -> None:
    upload_and_sweep(page, app_server, tmp_path)
    main = page.locator('[data-testid="stMain"]')
    opened(page, "Your model")
    with page.expect_download() as info:
        page.get_by_role("button", name="Download the train and test row ids").click()
    ids = tmp_path / "split.csv"
    info.value.save_as(ids)
    rows = list(csv.DictReader(ids.open()))
    assert len(rows) == 400 and set(rows[0]) == {"row", "part"}
    test_rows = [int(r["row"]) for r in rows if r["part"] == "test"]

    page.get_by_text("A predictions file").click()
    wait_for_app(page)
    preds = tmp_path / "preds.csv"
    preds.write_text("\n".join(["row,p", *(f"{i},{0.3 + 0.4 * (i % 2)}" for i in range(400))]))
    upload(page, preds, "Predictions file")
    page.get_by_text("These ids (a file)").click()
    wait_for_app(page)
    trained = tmp_path / "trained.csv"  # trained on the first 200 rows, as in production
    trained.write_text("\n".join(["row", *map(str, range(200))]))
    upload(page, trained, "Ids of the rows it was trained on")
    page.get_by_role("button", name="Add to the plane").click()
    wait_for_app(page, timeout=120_000)
    seen = sum(r < 200 for r in test_rows)
    expect(main).to_contain_text(
        f"{seen} of the {len(test_rows)} test rows are among the rows the model was trained on"
    )
    expect(page.locator('[data-testid="stPlotlyChart"]').first).to_contain_text("my model")
    screenshot(page, "compare-outside-trained-on-ids")

    upload(page, ids, "Ids of the rows it was trained on")  # the split file: its train rows
    expect(main).not_to_contain_text("are among the rows the model was trained on")
    expect(main).to_contain_text("unseen rows")  # the check held: scored on unseen rows only
    assert exception_texts(page) == []
