"""Static result tables (dashboard/components/tables.py): what the method pages draw instead of
``st.dataframe`` on a first view."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dashboard.components.tables import markdown_table
from fairengine.frontier.runcodec import decode_run, stored_key

ROOT = Path(__file__).resolve().parents[2]


def _rows(text: str) -> list[list[str]]:
    """Cells of a Markdown table (escaped pipes kept inside their cell)."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|"):
            continue
        cells = line.strip().strip("|").replace("\\|", "\0").split("|")
        rows.append([c.strip().replace("\0", "\\|") for c in cells])
    return rows


def test_numbers_are_rounded_and_text_cannot_break_the_table() -> None:
    frame = pd.DataFrame(
        {"name": ["a|b", "$x$ *y*"], "n": [17172, 3], "rate": [-0.000012, 1234.56789]},
        index=pd.Index(["first", "second"], name="row"),
    )
    rows = _rows(markdown_table(frame))
    assert rows[0] == ["row", "name", "n", "rate"]
    assert rows[1] == ["---", "---", "---:", "---:"]  # numbers right-aligned
    assert rows[2] == ["first", "a\\|b", "17,172", "0"]  # no "-0"
    assert rows[3] == ["second", "\\$x\\$ \\*y\\*", "3", "1234.5679"]  # no math, no emphasis
    assert all(len(r) == 4 for r in rows)


def test_hostile_names_and_values_stay_text_in_their_cells() -> None:
    from fairengine.textsafe import md_text
    from tests.hostile_text import HOSTILE

    values = list(reversed(HOSTILE))
    frame = pd.DataFrame({name: [value] for name, value in zip(HOSTILE, values, strict=True)})
    rows = _rows(markdown_table(frame))
    assert len(rows) == 3 and all(len(r) == len(HOSTILE) for r in rows)
    assert rows[0] == [md_text(name) for name in HOSTILE]
    assert rows[2] == [md_text(value) for value in reversed(HOSTILE)]


def test_default_index_left_out_and_long_tables_say_what_is_cut() -> None:
    text = markdown_table(pd.DataFrame({"v": np.arange(70.0)}), max_rows=5)
    rows = _rows(text)
    assert rows[0] == ["v"] and len(rows) == 2 + 5
    assert text.endswith("… and 65 more rows.")


def test_a_shipped_maxent_result_table_keeps_every_row_and_value() -> None:
    """The Max-entropy page's before/after table on Adult (the run ``precompute`` ships)."""
    path = next((ROOT / "assets" / "frontiers" / "runs").glob("*/maxent/*.fairrun"))
    raw = path.read_bytes()
    result = decode_run(raw, stored_key(raw))
    rates = result.artifacts["rates"]
    rows = _rows(markdown_table(rates))
    assert [r[0] for r in rows[2:]] == [str(i) for i in rates.index]
    shown = np.array([[np.nan if c == "–" else float(c) for c in r[1:]] for r in rows[2:]])
    assert np.isnan(shown).any()  # the raw row has no exact rates: shown as "–"
    np.testing.assert_allclose(shown, rates.to_numpy(dtype=float), atol=5e-5)  # NaN == NaN
