"""Every kind of bad input raises DataError with a message naming the problem."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest

from fairengine.data import DataError, from_frame, read_table


def frame(n: int = 100) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "g": np.tile(["a", "b"], n // 2),
            "y": np.tile([0, 1, 1, 0], n // 4),
        }
    )


#: Bad roles and tables for from_frame: (change to the frame, arguments, expected message part).
BAD_ROLES = [
    (None, {"target": "nope", "sensitive": "g"}, "Unknown target column 'nope'"),
    (None, {"target": "y", "sensitive": "zzz"}, "Unknown sensitive column 'zzz'"),
    (None, {"target": "y", "sensitive": "g", "features": ["q"]}, "Unknown feature column 'q'"),
    (None, {"target": "g", "sensitive": "g"}, "both the target and a sensitive"),
    (None, {"target": "y", "sensitive": "g", "features": ["y"]}, "cannot also be a feature"),
    (lambda d: d.assign(y=1), {"target": "y", "sensitive": "g"}, "'y' is constant"),
    (lambda d: d.assign(g="a"), {"target": "y", "sensitive": "g"}, "single group"),
    (
        lambda d: d.assign(y=np.arange(len(d)) % 3),
        {"target": "y", "sensitive": "g"},
        "has 3 values: 0, 1, 2;",
    ),
    (
        lambda d: d.assign(y=np.arange(len(d)) % 9),
        {"target": "y", "sensitive": "g", "kind": "classification"},
        "has 9 values: 0, 1, 2, 3, 4, 5, …;",
    ),
    (
        lambda d: d.assign(y=d["y"].astype(float).where(d.index > 2)),
        {"target": "y", "sensitive": "g"},
        "option to drop rows with a missing target",
    ),
    (
        lambda d: d.assign(y=np.where(d.index < 50, "p", "q")),
        {"target": "y", "sensitive": "g", "kind": "regression"},
        "not numeric",
    ),
    (
        lambda d: d.assign(g=np.arange(len(d)).astype(str)),
        {"target": "y", "sensitive": "g"},
        "100 distinct values",
    ),
    (
        lambda d: d.assign(g=np.arange(len(d)) * 1.5),
        {"target": "y", "sensitive": "g"},
        "bin it",
    ),
    (
        lambda d: d.assign(y=d["y"].astype(float).where(d.index > 2)),
        {"target": "y", "sensitive": "g"},
        "3 row",
    ),
    (
        lambda d: d.assign(g=np.where(d.index < 4, "rare", "common")),
        {"target": "y", "sensitive": "g"},
        "fewer than 10 rows",
    ),
    (lambda d: d.iloc[:0], {"target": "y", "sensitive": "g"}, "empty"),
    (lambda d: d[["y", "g"]], {"target": "y", "sensitive": "g"}, "No usable feature"),
    (None, {"target": "y", "sensitive": "g", "kind": "ranking"}, "Unknown task kind"),
]


@pytest.mark.parametrize(("change", "kwargs", "pattern"), BAD_ROLES)
def test_from_frame_errors(change, kwargs, pattern) -> None:
    df = frame() if change is None else change(frame())
    with pytest.raises(DataError, match=pattern):
        from_frame(df, **kwargs)


def test_duplicate_columns() -> None:
    df = frame()
    df.columns = ["x", "x", "y"]
    with pytest.raises(DataError, match="Duplicate column names: 'x'"):
        from_frame(df, target="y", sensitive="x")


def test_row_limit_names_the_limit() -> None:
    with pytest.raises(DataError, match="limit of 50"):
        from_frame(frame(), target="y", sensitive="g", max_rows=50)


def test_read_table_csv_sniffs_delimiter_and_encoding() -> None:
    text = "name;score;group\nJosé;1,5;a\nZoë;2;b\n".encode("cp1252")
    df = read_table(text)
    assert list(df.columns) == ["name", "score", "group"]
    assert df.loc[0, "name"] == "José"


def test_read_table_parquet_round_trip(tmp_path) -> None:
    path = tmp_path / "t.bin"
    frame().to_parquet(path)
    pd.testing.assert_frame_equal(read_table(path), frame())


def test_read_table_gzip_csv() -> None:
    import gzip

    raw = gzip.compress(b"a,b\n1,2\n3,4\n")
    assert read_table(io.BytesIO(raw)).shape == (2, 2)


#: Bad files for read_table: (bytes, expected message part).
BAD_FILES = [
    (b"", "empty"),
    (b"   \n\n", "empty"),
    (b"a,b,a\n1,2,3\n", "duplicate column names: 'a'"),
    (b"a,b\n", "no data rows"),
    (b'a,b\n1,"2\n', "cannot be parsed"),
    (b"PAR1garbagegarbage", "cannot be read"),
    (b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x00", "binary file"),
    (b"a,,c\n1,2,3\n", "without a name"),
]


@pytest.mark.parametrize(("payload", "pattern"), BAD_FILES)
def test_read_table_errors(payload: bytes, pattern: str) -> None:
    with pytest.raises(DataError, match=pattern):
        read_table(payload)


def test_read_table_size_limit(tmp_path) -> None:
    path = tmp_path / "big.csv"
    path.write_bytes(b"a,b\n" + b"1,2\n" * 1000)
    with pytest.raises(DataError, match="over the limit"):
        read_table(path, max_bytes=100)
    with pytest.raises(DataError, match="does not exist"):
        read_table(tmp_path / "missing.csv")


#: What a browser user must never read in a message: code, calls (``name(`` but not a plural
#: ``column(s)``), arguments, list literals.
_API_WORDS = re.compile(r"from_frame|read_table|\w\((?!s\))|\(\)|=\[|\w=\S|`|\[\.\.\.\]")


def _raised(call) -> DataError:
    with pytest.raises(DataError) as info:
        call()
    return info.value


def test_messages_for_bad_inputs_are_plain_words_with_consistent_value_lists() -> None:
    errors = [
        _raised(lambda c=change, k=kwargs: from_frame(frame() if c is None else c(frame()), **k))
        for change, kwargs, _ in BAD_ROLES
    ] + [_raised(lambda p=payload: read_table(p)) for payload, _ in BAD_FILES]
    for error in errors:
        message = str(error)
        assert not _API_WORDS.search(message), message
        assert "Traceback" not in message and message.rstrip().endswith("."), message
        for count, listed in re.findall(r"(\d+) values: ([^;]*)", message):
            values = listed.split(", ")
            if values[-1] == "…":
                assert len(values) - 1 < int(count), message  # an ellipsis stands for the rest
            else:
                assert len(values) == int(count), message  # no ellipsis: every value listed
    hinted = [e for e in errors if e.api_hint]
    assert hinted and all("In the Python API" in " ".join(e.__notes__) for e in hinted)


@pytest.mark.parametrize("n", [2, 3, 6, 7, 25])
def test_values_in_words_lists_all_values_or_ends_with_an_ellipsis(n: int) -> None:
    from fairengine.data.validate import values_in_words

    text = values_in_words([str(v) for v in range(n)][::-1] * 2)
    count, listed = text.split(" values: ")
    assert int(count) == n and listed.startswith("0, 1")
    assert listed.endswith(", …") == (n > 6) and len(listed.split(", ")) == min(n, 6) + (n > 6)
