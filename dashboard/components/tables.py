"""Small result tables drawn as static Markdown tables instead of ``st.dataframe``.

``st.dataframe``'s interactive grid makes a first visit fetch and compile its code even inside a
collapsed expander; a few-row table says the same as plain Markdown. Tables a visitor sorts or
scrolls stay ``st.dataframe``.
"""

from __future__ import annotations

import math
import numbers

import pandas as pd
import streamlit as st

from fairengine.textsafe import md_text

#: Rows drawn at most (a longer table says how many it leaves out).
MAX_ROWS = 60


def _cell(value: object, digits: int) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isnan(number):
            return "–"
        if math.isinf(number) or abs(number) >= 1e9:
            return f"{number:g}"
        text = f"{round(number, digits) + 0.0:.{digits}f}"  # + 0.0: no "-0"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return "" if value is None else md_text(value)  # a column name or value: shown as text


def markdown_table(
    frame: pd.DataFrame, *, index: bool = True, digits: int = 4, max_rows: int = MAX_ROWS
) -> str:
    """``frame`` as a GitHub-flavoured Markdown table (numbers rounded to ``digits`` decimals,
    text cells and headers shown as text by :func:`~fairengine.textsafe.md_text`, at most
    ``max_rows`` rows; a default 0, 1, … index is left out)."""
    index = index and not isinstance(frame.index, pd.RangeIndex)
    columns = [_cell(c, digits) for c in frame.columns]
    head = ([_cell(frame.index.name or "", digits)] if index else []) + columns
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    align = (["---"] if index else []) + ["---:" if n else "---" for n in numeric]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    for label, row in zip(frame.index[:max_rows], frame.itertuples(index=False), strict=False):
        cells = ([_cell(label, digits)] if index else []) + [_cell(v, digits) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    if len(frame) > max_rows:
        text += f"\n\n… and {len(frame) - max_rows:,} more rows."
    return text


def static_table(frame: pd.DataFrame, *, index: bool = True, digits: int = 4) -> None:
    """Draw :func:`markdown_table` (``st.markdown``: no grid, no Arrow code in the browser)."""
    st.markdown(markdown_table(frame, index=index, digits=digits))
