"""Hostile and odd tables: each class of problem is a DataError or handled and noted."""

from __future__ import annotations

import gzip
import io
import zipfile
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from fairengine.data import DataError, from_frame, read_table
from fairengine.data.groups import group_keys


def table(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x": np.round(rng.normal(size=n), 3),
            "g": np.tile(["a", "b"], n // 2),
            "y": np.tile([0, 1, 1, 0], n // 4),
        }
    )


def csv_bytes(df: pd.DataFrame, **kwargs) -> bytes:
    return df.to_csv(index=False, **kwargs).encode()


# -- crashes that are now DataErrors or handled -------------------------------------------------


def test_cr_only_line_endings_are_read() -> None:
    df = table()
    back = read_table(csv_bytes(df, lineterminator="\r"))
    pd.testing.assert_frame_equal(back, df)


def test_header_longer_than_csv_field_limit() -> None:
    long_name = "h" * 200_000
    back = read_table(f"{long_name},y\n1,2\n3,4\n".encode())
    assert list(back.columns) == [long_name, "y"]


@pytest.mark.parametrize("role", ["feature", "sensitive"])
def test_list_and_struct_columns_are_refused(role: str) -> None:
    df = table()
    df["nested"] = [[1, 2] if i % 2 else {"k": i} for i in range(len(df))]
    kwargs = {"sensitive": "nested"} if role == "sensitive" else {"sensitive": "g"}
    with pytest.raises(DataError, match="'nested' holds nested values .* row 1"):
        from_frame(df, target="y", **kwargs)


def test_list_column_from_parquet_is_refused_by_name() -> None:
    df = table()
    df["tags"] = [["p", "q"]] * len(df)
    buffer = io.BytesIO()
    df.to_parquet(buffer)
    with pytest.raises(DataError, match="'tags' holds nested values"):
        from_frame(read_table(buffer.getvalue()), target="y", sensitive="g")


@pytest.mark.parametrize("value", [np.inf, -np.inf, 1e308, -1e300])
def test_extreme_feature_values_are_refused_with_row(value: float) -> None:
    df = table()
    df.loc[7, "x"] = value
    with pytest.raises(DataError, match=r"Feature 'x' .* row 8"):
        from_frame(df, target="y", sensitive="g")


def test_extreme_regression_target_is_refused() -> None:
    df = table().assign(y=lambda d: np.linspace(0, 1, len(d)))
    df.loc[3, "y"] = 1e308
    with pytest.raises(DataError, match="regression target 'y' has values as large as 1e"):
        from_frame(df, target="y", sensitive="g")


def test_decimal_and_bytes_columns_are_usable() -> None:
    from fairengine.methods import get_method

    df = table(200)
    df["amount"] = [Decimal(f"{v:.2f}") for v in np.linspace(0, 99, len(df))]
    df["code"] = [b"\xff\xfe" if i % 3 else b"ok" for i in range(len(df))]
    task = from_frame(df, target="y", sensitive="g")
    assert task.frame["amount"].dtype == float
    assert any("decimal" in note for note in task.notes)
    assert any("raw bytes" in note for note in task.notes)
    train, test = task.split()
    result = get_method("reweighing").run(train, test)
    assert np.isfinite(result.metrics["test"]["accuracy"])


# -- nothing changes silently ----------------------------------------------------------------


def test_trailing_delimiter_on_every_row_is_removed_and_noted() -> None:
    text = "x,g,y\n" + "".join(f"{i},{'ab'[i % 2]},{i % 3 % 2},\n" for i in range(40))
    back = read_table(text.encode())
    assert list(back.columns) == ["x", "g", "y"]
    assert back["x"].tolist() == list(range(40))
    assert any("end of every data row" in n for n in back.attrs["notes"])


def test_header_one_name_short_is_an_error() -> None:
    text = "g,y\n" + "".join(f"{i},{'ab'[i % 2]},{i % 2}\n" for i in range(40))
    with pytest.raises(DataError, match="header has 2 names but every data row has 3"):
        read_table(text.encode())


def test_ragged_row_is_an_error_with_its_line() -> None:
    lines = ["x,g,y"] + [f"{i},a,1" for i in range(10)]
    lines[6] = "5,a"
    with pytest.raises(DataError, match="line 7 has 2 fields but the header has 3"):
        read_table("\n".join(lines).encode())


def test_stray_latin1_byte_in_utf8_is_refused_with_offset() -> None:
    raw = "x,name,y\n1,café,0\n2,naïve,1\n".encode() + b"3,caf\xe9,1\n"
    with pytest.raises(DataError, match=r"mostly UTF-8 .* byte offset 35 \(line 4\)"):
        read_table(raw)


def test_shift_jis_is_refused_and_readable_with_its_encoding() -> None:
    df = pd.DataFrame({"名前": ["山田", "田中", "佐藤", "鈴木"] * 5, "y": [0, 1] * 10})
    raw = df.to_csv(index=False).encode("shift_jis")
    with pytest.raises(DataError, match="shift_jis"):
        read_table(raw)
    pd.testing.assert_frame_equal(read_table(raw, encoding="shift_jis"), df)


def test_windows_1252_is_still_read() -> None:
    df = pd.DataFrame({"city": ["Zürich", "Genève", "Köln", "Málaga"] * 3, "y": [0, 1, 1] * 4})
    pd.testing.assert_frame_equal(read_table(df.to_csv(index=False).encode("cp1252")), df)


def test_decimal_commas_are_numbers() -> None:
    df = table()
    text = df.to_csv(index=False, sep=";", decimal=",")
    back = read_table(text.encode())
    assert back["x"].dtype == float
    np.testing.assert_array_equal(back["x"].to_numpy(), df["x"].to_numpy())
    assert any("decimal commas" in n for n in back.attrs["notes"])


def test_parquet_index_is_kept_as_a_column() -> None:
    df = table().set_index(pd.Index([f"id{i}" for i in range(60)], name="person"))
    buffer = io.BytesIO()
    df.to_parquet(buffer)
    back = read_table(buffer.getvalue())
    assert back["person"].tolist() == list(df.index)
    assert any("index" in n for n in back.attrs["notes"])


def test_intersection_labels_cannot_collide() -> None:
    frame = pd.DataFrame({"a": ["x & y", "x"], "b": ["z", "y & z"]})
    keys = group_keys(frame, ["a", "b"])
    assert keys.nunique() == 2
    plain = pd.DataFrame({"a": ["f", "m"], "b": ["w", "b"]})
    assert group_keys(plain, ["a", "b"]).tolist() == ["f & w", "m & b"]  # unchanged names


# -- bounded resources ------------------------------------------------------------------------


def test_gzip_bomb_is_refused_while_streaming() -> None:
    bomb = gzip.compress(b"x,y\n" + b"1,2\n" * (2_000_000 // 4), compresslevel=9)
    with pytest.raises(DataError, match="uncompressed over 1 MB"):
        read_table(bomb, max_bytes=2**20)


def test_zip_with_one_table_is_read_and_bomb_refused() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("t.csv", table().to_csv(index=False))
    pd.testing.assert_frame_equal(read_table(buffer.getvalue()), table())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("t.csv", b"0" * 3 * 2**20)
    with pytest.raises(DataError, match="uncompressed"):
        read_table(buffer.getvalue(), max_bytes=2**20)


def test_parquet_declaring_too_many_rows_is_refused_before_reading(monkeypatch) -> None:
    from fairengine.data import io as data_io

    buffer = io.BytesIO()
    table(200).to_parquet(buffer)
    monkeypatch.setattr(data_io, "MAX_READ_ROWS", 100)
    with pytest.raises(DataError, match="declares 200 rows"):
        read_table(buffer.getvalue())


def test_too_many_columns_are_refused_quickly() -> None:
    header = ",".join(f"c{i}" for i in range(50_000))
    with pytest.raises(DataError, match="50,000 columns"):
        read_table((header + "\n" + ",".join(["1"] * 50_000) + "\n").encode())


# -- dead ends --------------------------------------------------------------------------------


def test_multiclass_target_one_vs_rest() -> None:
    df = table(100).assign(y=lambda d: np.tile(list("abcde"), 20))
    with pytest.raises(DataError, match="Choose which values count as positive") as info:
        from_frame(df, target="y", sensitive="g")
    assert "positive_label=[" in info.value.api_hint  # the API's way, apart from the words
    task = from_frame(df, target="y", sensitive="g", positive_label=["a", "c"])
    assert task.kind == "classification" and task.positive_values == ("a", "c")
    np.testing.assert_array_equal(task.y, df["y"].isin(["a", "c"]).to_numpy())
    train, test = task.split()
    assert train.positive_values == ("a", "c") and 0 < train.y.mean() < 1
    with pytest.raises(DataError, match="some but not all"):
        from_frame(df, target="y", sensitive="g", positive_label=list("abcde"))
    with pytest.raises(DataError, match="do not occur"):
        from_frame(df, target="y", sensitive="g", positive_label=["zz"])


def test_one_group_sensitive_is_an_error_not_a_swap() -> None:
    df = table().assign(g="only")
    with pytest.raises(DataError, match="single group"):
        from_frame(df, target="y", sensitive="g")


def test_split_with_more_strata_than_test_rows_does_not_crash() -> None:
    n = 300
    df = pd.DataFrame(
        {
            "g": np.repeat([f"g{i}" for i in range(30)], 10),
            "y": np.tile([0, 1], n // 2),
            "x": np.arange(n) % 7,
        }
    )
    task = from_frame(df, target="y", sensitive="g")
    train, test = task.split(test_size=0.05)  # 15 test rows, 30 groups: cannot stratify
    assert len(train.frame) + len(test.frame) == n and len(test.frame) == 15
