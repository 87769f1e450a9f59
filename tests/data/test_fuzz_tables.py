"""Fuzzing user tables: every generated table is refused with a DataError, or accepted
with every value exactly as written (nothing silently changed), and the accepted task splits and
encodes to finite numbers.

Tables vary in encoding, delimiter, line endings, compression, quoting-heavy text (delimiters,
quotes, " & ", non-ASCII), extreme numbers, degenerate groups and targets, and structural damage
(ragged rows, a short header, a delimiter at the end of every row). Derandomised, so a failure
reproduces.
"""

from __future__ import annotations

import csv
import gzip
import io
from decimal import Decimal

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairengine.data import DataError, FeatureEncoder, from_frame, read_table

FUZZ = settings(
    max_examples=120,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Text that cannot be read as a number, a boolean or a missing-value token: it starts with one
# of these letters and does not end in a space.
_FIRST = "qzéüжß名"
_REST = "abcxyz 0123456789,;|\t\"'&éüñøжß名前Ω€-_."


@st.composite
def text_values(draw: st.DrawFn) -> str:
    body = draw(st.text(_REST, max_size=8)).rstrip()
    return draw(st.sampled_from(_FIRST)) + body


@st.composite
def tables(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(20, 48))
    n_groups = draw(st.sampled_from([2, 3, 2, 3, 1, 2, 3, 2]))
    labels = draw(st.lists(text_values(), min_size=n_groups, max_size=n_groups, unique=True))
    if draw(st.integers(0, 3)) == 3:  # " & " inside group names
        labels = [f"{label} & x" if i == 0 else label for i, label in enumerate(labels)]
    small = draw(st.integers(0, 5)) == 5 and n_groups > 1  # a group below the minimum size
    sizes = [3] + [n - 3] if small and n_groups == 2 else None
    cycled = np.array(labels, dtype=object)[np.arange(n) % n_groups]
    groups = np.repeat(labels, sizes) if sizes else cycled
    target_kind = draw(st.sampled_from(["int", "text", "int", "constant", "text", "int", "text"]))
    y = np.arange(n) % 2 if target_kind != "constant" else np.zeros(n, dtype=int)
    columns: dict[str, object] = {
        "g": list(groups),
        "y": list(y) if target_kind != "text" else [["no", "yes"][v] for v in y],
    }
    extreme = st.sampled_from([np.inf, -np.inf, 1e308, -1e200, 2e15])
    for j in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["float", "int", "text", "missing"]))
        if kind == "float":
            values = draw(
                st.lists(
                    st.floats(-1e12, 1e12, allow_nan=False, allow_infinity=False, width=64),
                    min_size=n,
                    max_size=n,
                )
            )
            if draw(st.integers(0, 9)) == 9:
                values[draw(st.integers(0, n - 1))] = draw(extreme)
        elif kind == "int":
            values = draw(st.lists(st.integers(-(10**12), 10**12), min_size=n, max_size=n))
        elif kind == "missing":
            values = [float(v) if i % 3 else np.nan for i, v in enumerate(range(n))]
        else:
            values = draw(st.lists(text_values(), min_size=n, max_size=n))
        columns[f"c{j}"] = values
    names = list(columns)
    order = draw(st.permutations(names))
    return pd.DataFrame({name: columns[name] for name in order})


def encode(df: pd.DataFrame, draw: st.DrawFn) -> tuple[bytes, str | None]:
    """The table as a file; the second item names the damage done to it (None: intact)."""
    delimiter = draw(st.sampled_from([",", ";", "\t", "|"]))
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator=newline)
    rows = [list(df.columns)] + [
        ["" if _missing(v) else repr(v) if isinstance(v, float) else str(v) for v in row]
        for row in df.itertuples(index=False)
    ]
    damage = draw(st.sampled_from([None, None, None, None, "trailing", "ragged", "short_header"]))
    if damage == "ragged":
        rows[draw(st.integers(1, len(rows) - 1))].pop()
    elif damage == "short_header":
        rows[0] = rows[0][1:]
    for row in rows:
        writer.writerow(row + ([""] if damage == "trailing" and row is not rows[0] else []))
    text = buffer.getvalue()
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "cp1252", "shift_jis"]))
    try:
        raw = text.encode(encoding)
    except UnicodeEncodeError:
        raw = text.encode("utf-8")
    if draw(st.booleans()):
        raw = gzip.compress(raw)
    return raw, damage


OUTCOMES: list[tuple[str, object, str]] = []


def _missing(value: object) -> bool:
    return isinstance(value, float) and np.isnan(value)


def assert_same_values(task_frame: pd.DataFrame, original: pd.DataFrame) -> None:
    assert len(task_frame) == len(original)
    for name in task_frame.columns:
        got, want = task_frame[name], original[name]
        if pd.api.types.is_numeric_dtype(got) and not pd.api.types.is_bool_dtype(got):
            np.testing.assert_array_equal(
                got.to_numpy(dtype=float), np.asarray(want, dtype=float), err_msg=name
            )
        else:
            assert [str(v) for v in got] == [str(v) for v in want], name


def check_accepted(task) -> None:
    train, test = task.split()
    encoder = FeatureEncoder().fit(train.X)
    for part in (train, test):
        out = encoder.transform(part.X)
        assert out.shape == (len(part.frame), len(encoder.feature_names_out_))
        assert np.isfinite(out).all()


@FUZZ
@given(df=tables(), data=st.data())
def test_csv_uploads_are_refused_or_read_exactly(df: pd.DataFrame, data: st.DataObject) -> None:
    raw, damage = encode(df, data.draw)
    try:
        frame = read_table(raw)
        task = from_frame(frame, target="y", sensitive="g")
    except DataError as exc:
        assert str(exc)  # a message, never an empty one
        OUTCOMES.append(("refused", damage, str(exc)[:90]))
        return
    OUTCOMES.append(("accepted", damage, ""))
    assert damage in (None, "trailing"), f"damaged file ({damage}) accepted"
    assert_same_values(task.frame, df)
    check_accepted(task)


@st.composite
def odd_frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(20, 40))
    frame = pd.DataFrame({"g": np.tile(["a", "b"], n)[:n], "y": np.arange(n) % 2})
    odd = {
        "decimal": [Decimal(i) / 4 for i in range(n)],
        "bytes": [bytes([0xFF, i % 256]) for i in range(n)],
        "nested": [[i, i + 1] for i in range(n)],
        "struct": [{"k": i} for i in range(n)],
        "nullable": pd.array([None if i % 5 == 0 else i for i in range(n)], dtype="Int64"),
        "category": pd.Categorical(["u", "v", "w"] * n)[:n],
        "bool": np.arange(n) % 3 == 0,
        "huge": np.linspace(-1e300, 1e300, n),
        "tiny": np.linspace(-1e-300, 1e-300, n),
        "datetime": pd.date_range("2020-01-01", periods=n, freq="D"),
    }
    for name in draw(st.lists(st.sampled_from(sorted(odd)), min_size=1, max_size=4, unique=True)):
        frame[name] = odd[name]
    if draw(st.booleans()):
        frame = frame.rename(columns={"g": "y", "y": "g"})  # the sensitive column is binary
    return frame


@FUZZ
@given(df=odd_frames())
def test_odd_dtypes_are_refused_or_usable(df: pd.DataFrame) -> None:
    try:
        task = from_frame(df, target="y", sensitive="g")
    except DataError as exc:
        assert str(exc)
        return
    check_accepted(task)
