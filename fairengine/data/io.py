"""Reading user tables: CSV (delimiter and encoding sniffed) or Parquet, with readable errors."""

from __future__ import annotations

import csv
import gzip
import io
import os
from collections import Counter
from pathlib import Path
from typing import IO

import pandas as pd

from fairengine.data.errors import DataError

#: Largest file ``read_table`` accepts by default (bytes). The dashboard's upload cap is the same.
MAX_FILE_BYTES = 200 * 1024 * 1024

_ENCODINGS = ("utf-8-sig", "cp1252", "latin-1")
_DELIMITERS = ",;\t|"
_PARQUET_MAGIC = b"PAR1"
_GZIP_MAGIC = b"\x1f\x8b"


def read_table(
    path_or_buffer: str | os.PathLike[str] | IO[bytes] | bytes,
    *,
    max_bytes: int = MAX_FILE_BYTES,
) -> pd.DataFrame:
    """Read a CSV or Parquet table into a DataFrame.

    The format is recognised from the content (Parquet magic bytes, gzip), not from the file name.
    For CSV the encoding (UTF-8, Windows-1252, Latin-1) and the delimiter (``, ; tab |``) are
    sniffed.

    Parameters
    ----------
    path_or_buffer : path, binary file-like or bytes
        The table to read.
    max_bytes : int
        Refuse files larger than this many bytes (default 200 MB).

    Raises
    ------
    DataError
        If the file is empty, too large, not parseable, has duplicate or empty column names, or
        has no rows.
    """
    raw, label = _read_bytes(path_or_buffer, max_bytes)
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DataError(
                f"{label} looks gzip-compressed but cannot be decompressed: {exc}"
            ) from exc
        if len(raw) > max_bytes:
            raise DataError(_too_large(label, len(raw), max_bytes))
    if not raw.strip():
        raise DataError(
            f"{label} is empty. Upload a CSV or Parquet file with a header row and data."
        )
    frame = _read_parquet(raw, label) if raw[:4] == _PARQUET_MAGIC else _read_csv(raw, label)
    _check_columns(list(frame.columns), label)
    if frame.empty:
        raise DataError(f"{label} has a header but no data rows.")
    return frame


def _read_bytes(
    source: str | os.PathLike[str] | IO[bytes] | bytes, max_bytes: int
) -> tuple[bytes, str]:
    if isinstance(source, bytes | bytearray):
        data, label = bytes(source), "The uploaded file"
    elif isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise DataError(f"File '{path}' does not exist.")
        size = path.stat().st_size
        if size > max_bytes:
            raise DataError(_too_large(f"File '{path.name}'", size, max_bytes))
        data, label = path.read_bytes(), f"File '{path.name}'"
    else:
        name = getattr(source, "name", None)
        label = f"File '{Path(str(name)).name}'" if name else "The uploaded file"
        data = source.read(max_bytes + 1)
        if isinstance(data, str):
            data = data.encode("utf-8")
    if len(data) > max_bytes:
        raise DataError(_too_large(label, len(data), max_bytes))
    return data, label


def _too_large(label: str, size: int, limit: int) -> str:
    return (
        f"{label} is {size / 2**20:.1f} MB, over the limit of {limit / 2**20:.0f} MB. "
        "Upload a sample of the rows or a compressed Parquet file."
    )


def _read_parquet(raw: bytes, label: str) -> pd.DataFrame:
    try:
        return pd.read_parquet(io.BytesIO(raw))
    except Exception as exc:  # pyarrow raises many types for broken files
        raise DataError(f"{label} looks like Parquet but cannot be read: {exc}") from exc


def _decode(raw: bytes, label: str) -> str:
    for encoding in _ENCODINGS:
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise DataError(f"{label} is not text in a known encoding (UTF-8, Windows-1252, Latin-1).")


def _sniff_delimiter(text: str) -> str:
    sample = text[:65536]
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        first = sample.splitlines()[0] if sample.splitlines() else ""
        counts = {d: first.count(d) for d in _DELIMITERS}
        best = max(counts, key=lambda d: counts[d])
        return best if counts[best] > 0 else ","


def _read_csv(raw: bytes, label: str) -> pd.DataFrame:
    if b"\x00" in raw[:8192]:
        raise DataError(f"{label} is a binary file, not CSV or Parquet.")
    text = _decode(raw, label)
    delimiter = _sniff_delimiter(text)
    header = next(csv.reader(io.StringIO(text), delimiter=delimiter), [])
    _check_columns([h.strip() for h in header], label)
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            sep=delimiter,
            skipinitialspace=True,
            na_values=["?", "NA", "N/A", "nan", "NaN", "null", "NULL", ""],
            keep_default_na=True,
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise DataError(
            f"{label} cannot be parsed as CSV (delimiter {delimiter!r}): {exc}"
        ) from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _check_columns(columns: list[object], label: str) -> None:
    names = [str(c) for c in columns]
    duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
    if duplicates:
        raise DataError(
            f"{label} has duplicate column names: {', '.join(map(repr, duplicates))}. "
            "Rename them so every column name is unique."
        )
    blank = [i + 1 for i, name in enumerate(names) if not name.strip()]
    if blank:
        raise DataError(
            f"{label} has columns without a name (position {', '.join(map(str, blank))}). "
            "Give every column a name in the header row."
        )
