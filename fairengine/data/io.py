"""Reading user tables: CSV (delimiter and encoding detected) or Parquet, with readable errors.

Design notes: docs/howto/upload.md, "Reading a table".
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import re
import zipfile
import zlib
from collections import Counter
from pathlib import Path
from typing import IO

import pandas as pd

from fairengine.data.errors import DataError

#: Largest file ``read_table`` accepts by default (bytes), compressed or after decompression.
MAX_FILE_BYTES = 200 * 1024 * 1024
#: Most columns a table may have (each one is a model input; more is not a tabular fairness task).
MAX_COLUMNS = 10_000
#: Most rows read (the engine's row limit, :data:`fairengine.data.validate.MAX_ROWS`).
MAX_READ_ROWS = 2_000_000
#: Largest uncompressed Parquet data accepted (its metadata is checked before reading).
MAX_PARQUET_BYTES = 4 * MAX_FILE_BYTES
#: Missing-value tokens (besides an empty field).
NA_VALUES = ("?", "NA", "N/A", "nan", "NaN", "null", "NULL", "")

_DELIMITERS = ",;\t|"
_PARQUET_MAGIC = b"PAR1"
_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGIC = b"PK\x03\x04"
_CHUNK = 1 << 20
_DECIMAL_COMMA = re.compile(r"^[+-]?\d+(,\d+)?$")


def read_table(
    path_or_buffer: str | os.PathLike[str] | IO[bytes] | bytes,
    *,
    max_bytes: int = MAX_FILE_BYTES,
    encoding: str | None = None,
) -> pd.DataFrame:
    """Read a CSV or Parquet table into a DataFrame.

    The format is recognised from the content (Parquet magic bytes, gzip, zip), not from the file
    name. For CSV the encoding (UTF-8, UTF-16 with BOM, Windows-1252) and the delimiter
    (``, ; tab |``) are detected.

    Parameters
    ----------
    path_or_buffer : path, binary file-like or bytes
        The table to read.
    max_bytes : int
        Refuse files larger than this many bytes (default 200 MB), before and after
        decompression.
    encoding : str, optional
        The text encoding of a CSV file, when detection refuses it (e.g. ``"shift_jis"``).

    Raises
    ------
    DataError
        If the file is empty, too large, not parseable, in an unknown encoding, has rows that do
        not match the header, duplicate or empty column names, or no rows.
    """
    raw, label = _read_bytes(path_or_buffer, max_bytes)
    raw = _decompress(raw, label, max_bytes)
    if not raw.strip():
        raise DataError(
            f"{label} is empty. Upload a CSV or Parquet file with a header row and data."
        )
    notes: list[str] = []
    if raw[:4] == _PARQUET_MAGIC:
        frame = _read_parquet(raw, label, notes)
    else:
        frame = _read_csv(raw, label, encoding, notes)
    _check_columns(list(frame.columns), label)
    if frame.empty:
        raise DataError(f"{label} has a header but no data rows.")
    frame.attrs["notes"] = notes
    return frame


def _read_bytes(
    source: str | os.PathLike[str] | IO[bytes] | bytes, max_bytes: int
) -> tuple[bytes, str]:
    if isinstance(source, bytes | bytearray):
        data, label = bytes(source), "The uploaded file"
    elif isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise DataError(f"File '{path}' does not exist or is not a regular file.")
        size = path.stat().st_size
        if size > max_bytes:
            raise DataError(_too_large(f"File '{path.name}'", size, max_bytes))
        label = f"File '{path.name}'"
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    else:
        name = getattr(source, "name", None)
        label = f"File '{Path(str(name)).name}'" if name else "The uploaded file"
        data = source.read(max_bytes + 1)
        if isinstance(data, str):
            data = data.encode("utf-8")
    if len(data) > max_bytes:
        raise DataError(_too_large(label, len(data), max_bytes))
    return data, label


def _too_large(label: str, size: int, limit: int, what: str = "") -> str:
    shown = f"over {limit / 2**20:.0f} MB" if size > limit else f"{size / 2**20:.1f} MB"
    return (
        f"{label} is {what}{shown}, over the limit of {limit / 2**20:.0f} MB. "
        "Upload a sample of the rows or a compressed Parquet file."
    )


def _decompress(raw: bytes, label: str, max_bytes: int) -> bytes:
    """gzip or single-table zip content, streamed and refused once it passes ``max_bytes``."""
    if raw[:2] == _GZIP_MAGIC:
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
                return _read_limited(stream, label, max_bytes)
        except (OSError, EOFError, zlib.error) as exc:
            raise DataError(
                f"{label} looks gzip-compressed but cannot be decompressed: {exc}"
            ) from exc
    if raw[:4] == _ZIP_MAGIC:
        try:
            with zipfile.ZipFile(io.BytesIO(raw)) as archive:
                members = [
                    m
                    for m in archive.infolist()
                    if not m.is_dir() and not m.filename.startswith("__MACOSX/")
                ]
                if len(members) != 1:
                    raise DataError(
                        f"{label} is a zip archive with {len(members)} files; it must hold "
                        "exactly one CSV or Parquet table."
                    )
                if members[0].file_size > max_bytes:
                    raise DataError(
                        _too_large(label, members[0].file_size, max_bytes, "uncompressed ")
                    )
                with archive.open(members[0]) as stream:
                    return _read_limited(stream, label, max_bytes)
        except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError) as exc:
            raise DataError(f"{label} looks like a zip archive but cannot be read: {exc}") from exc
    return raw


def _read_limited(stream: IO[bytes], label: str, max_bytes: int) -> bytes:
    out = bytearray()
    while chunk := stream.read(_CHUNK):
        out += chunk
        if len(out) > max_bytes:
            raise DataError(_too_large(label, len(out), max_bytes, "uncompressed "))
    return bytes(out)


def _read_parquet(raw: bytes, label: str, notes: list[str]) -> pd.DataFrame:
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(io.BytesIO(raw))
        meta = parquet.metadata
        n_rows, n_columns = meta.num_rows, meta.num_columns
        size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    except Exception as exc:  # pyarrow raises many types for broken files
        raise DataError(f"{label} looks like Parquet but cannot be read: {exc}") from exc
    if n_rows > MAX_READ_ROWS:
        raise DataError(
            f"{label} declares {n_rows:,} rows, more than the limit of {MAX_READ_ROWS:,}. "
            "Upload a random sample of the rows."
        )
    if n_columns > MAX_COLUMNS:
        raise DataError(_too_many_columns(label, n_columns))
    if size > MAX_PARQUET_BYTES:
        raise DataError(
            f"{label} holds {size / 2**20:,.0f} MB of uncompressed data, over the limit of "
            f"{MAX_PARQUET_BYTES / 2**20:,.0f} MB. Upload a sample of the rows or fewer columns."
        )
    try:
        frame = parquet.read().to_pandas()
    except Exception as exc:
        raise DataError(f"{label} looks like Parquet but cannot be read: {exc}") from exc
    if not isinstance(frame.index, pd.RangeIndex) or frame.index.name is not None:
        names = [str(n) if n is not None else "index" for n in frame.index.names]
        frame = frame.reset_index()
        notes.append(
            f"The stored index ({', '.join(map(repr, names))}) was kept as ordinary column(s)."
        )
    return frame


def _too_many_columns(label: str, n: int) -> str:
    return (
        f"{label} has {n:,} columns, more than the limit of {MAX_COLUMNS:,}. Keep the columns "
        "you need (target, sensitive attributes and features) and upload again."
    )


def _decode(raw: bytes, label: str, encoding: str | None) -> tuple[str, str]:
    """The text and the codec that read it (``utf-8`` for UTF-8 with or without BOM)."""
    if encoding is not None:
        try:
            return raw.decode(encoding), encoding
        except LookupError as exc:
            raise DataError(f"Unknown encoding {encoding!r}.") from exc
        except UnicodeDecodeError as exc:
            raise DataError(
                f"{label} is not valid {encoding}: byte offset {exc.start} "
                f"({_line_of(raw, exc.start)}). Check the encoding."
            ) from exc
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return raw.decode("utf-16"), "utf-16"
        except UnicodeDecodeError as exc:
            raise DataError(f"{label} starts like UTF-16 but is not valid UTF-16.") from exc
    try:
        return raw.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError as exc:
        utf8_error = exc
    where = f"byte offset {utf8_error.start} ({_line_of(raw, utf8_error.start)})"
    if _has_utf8_sequences(raw):
        raise DataError(
            f"{label} is mostly UTF-8 but has an invalid byte at {where}. Re-save the file as "
            "UTF-8, or pass its encoding if it is not UTF-8."
        )
    offset = _multibyte_run(raw)
    if offset is None:
        try:
            return raw.decode("cp1252"), "cp1252"
        except UnicodeDecodeError as exc:
            offset = exc.start
    raise DataError(
        f"{label} is neither UTF-8 nor Western European text (non-ASCII bytes at byte offset "
        f"{offset}, {_line_of(raw, offset)}, as in Shift-JIS, GBK or another multi-byte "
        "encoding). Re-save it as UTF-8, or give its encoding (e.g. encoding='shift_jis')."
    )


def _line_of(raw: bytes, offset: int) -> str:
    line = raw.count(b"\n", 0, offset) + 1
    return f"line {line}"


def _has_utf8_sequences(raw: bytes) -> bool:
    """Whether the bytes hold well-formed multi-byte UTF-8 characters (a UTF-8 file)."""
    return re.search(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}", raw) is not None


def _multibyte_run(raw: bytes) -> int | None:
    """Offset of the first run of non-ASCII bytes when most of them come in runs.

    Western European text has isolated accented letters between ASCII ones; multi-byte
    encodings (Shift-JIS, GBK, EUC-KR, ...) have nearly every non-ASCII byte next to another.
    """
    high = [m.start() for m in re.finditer(rb"[\x80-\xff]", raw)]
    if len(high) < 4:
        return None
    runs = re.search(rb"[\x80-\xff]{2,}", raw)
    paired = sum(len(m.group()) for m in re.finditer(rb"[\x80-\xff]{2,}", raw))
    return runs.start() if runs is not None and paired > len(high) / 2 else None


def _sniff_delimiter(data: bytes) -> str:
    """The delimiter that splits the header and the first rows into the same number of fields.

    Candidates ``, ; tab |`` are scored by how many of the first rows have as many fields as the
    header (a trailing delimiter counted as matching), then by the number of columns;
    ``csv.Sniffer`` breaks ties. So decimal commas under a ``;`` header do not make ``,`` the
    delimiter.
    """
    sample = data[:65536].decode("utf-8", errors="ignore")
    lines = sample.splitlines()
    if len(data) > 65536 and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut by the sample
    lines = lines[:50]
    try:
        sniffed = csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        sniffed = ","
    best, best_score = sniffed, (-1.0, 0, False)
    for delimiter in _DELIMITERS:
        try:
            rows = list(csv.reader(lines, delimiter=delimiter))
        except csv.Error:
            continue
        rows = [r for r in rows if r]
        if not rows or len(rows[0]) < 2:
            continue
        h = len(rows[0])
        body = rows[1:] or rows
        matching = sum(len(r) == h or (len(r) == h + 1 and not r[-1].strip()) for r in body)
        score = (matching / len(body), h, delimiter == sniffed)
        if score > best_score:
            best, best_score = delimiter, score
    return best


def _read_csv(raw: bytes, label: str, encoding: str | None, notes: list[str]) -> pd.DataFrame:
    if encoding is None and raw[:2] not in (b"\xff\xfe", b"\xfe\xff") and b"\x00" in raw[:8192]:
        raise DataError(f"{label} is a binary file, not CSV or Parquet.")
    text, codec = _decode(raw, label, encoding)
    cr_only = "\n" not in text and "\r" in text  # old Mac line endings: CR only
    # Everything below reads UTF-8 bytes through streams (never a StringIO copy of the text,
    # which CPython stores at up to 4 bytes per character): the upload's own bytes when they
    # are UTF-8, else the text re-encoded once.
    if codec == "utf-8" and not cr_only:
        data = raw[3:] if raw[:3] == b"\xef\xbb\xbf" else raw
    else:
        data = (text.replace("\r", "\n") if cr_only else text).encode("utf-8")
    del text
    if csv.field_size_limit() < len(data) + 1:
        csv.field_size_limit(len(data) + 1)  # a long field is data, not an error
    delimiter = _sniff_delimiter(data)
    header = next(csv.reader(_lines(data), delimiter=delimiter), [])
    if len(header) > MAX_COLUMNS:
        raise DataError(_too_many_columns(label, len(header)))
    n_fields, note = _check_row_lengths(data, delimiter, header, label)
    header = header[:n_fields]
    if note:
        notes.append(note)
    _check_columns([h.strip() for h in header], label)
    try:
        frame = pd.read_csv(
            io.BytesIO(data),
            encoding="utf-8",
            sep=delimiter,
            skipinitialspace=True,
            na_values=list(NA_VALUES),
            keep_default_na=True,
            usecols=range(len(header)),
            index_col=False,
            nrows=MAX_READ_ROWS + 1,
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise DataError(
            f"{label} cannot be parsed as CSV with the delimiter {delimiter!r}: "
            f"{_parser_reason(exc)}. Check the file's quotes and delimiters, or save it again "
            "from a spreadsheet as CSV."
        ) from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    if len(frame) > MAX_READ_ROWS:
        raise DataError(
            f"{label} has more than {MAX_READ_ROWS:,} data rows (the limit). Upload a random "
            "sample of the rows."
        )
    if delimiter != ",":
        _decimal_commas(frame, notes)
    return frame


def _parser_reason(exc: Exception) -> str:
    """The CSV reader's complaint in words (its own text names its internals)."""
    text = str(exc)
    if match := re.search(r"EOF inside string starting at row (\d+)", text):
        return f"a quoted value that starts in row {match.group(1)} is never closed"
    if match := re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", text):
        expected, line, saw = match.groups()
        return f"line {line} has {saw} fields where {expected} were expected"
    reason = re.sub(r"^Error tokenizing data\.\s*(C error:\s*)?", "", text).strip().rstrip(".")
    return reason or "the reader stopped"


def _lines(data: bytes) -> IO[str]:
    """UTF-8 bytes as a text stream for ``csv.reader`` (decoded as it is read)."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline="")


def _check_row_lengths(
    data: bytes, delimiter: str, header: list[str], label: str
) -> tuple[int, str]:
    """The number of fields to read per row and a note (or ""); raise for mismatched rows."""
    reader = csv.reader(_lines(data), delimiter=delimiter)
    try:
        lengths = Counter(map(len, reader))
    except csv.Error as exc:
        raise DataError(f"{label} cannot be parsed as CSV: {exc}") from exc
    lengths[len(header)] -= 1  # the header row itself
    lengths.pop(0, None)  # blank lines are skipped
    found = {n for n, count in lengths.items() if count > 0}
    h = len(header)
    empty_last = bool(header) and not header[-1].strip()
    if found <= {h} and not (found and empty_last and _last_fields_empty(data, delimiter)):
        return h, ""
    if found == {h}:  # the header and every row end with a delimiter
        return h - 1, "Removed the empty last column: every line ends with a delimiter."
    if found == {h + 1} and _last_fields_empty(data, delimiter):
        return h, "Ignored the delimiter at the end of every data row."
    line, n = _first_mismatch(data, delimiter, h)
    if found == {h + 1}:
        raise DataError(
            f"{label}: the header has {h} names but every data row has {h + 1} fields, so one "
            f"column has no name (e.g. line {line}). Add the missing name to the header row."
        )
    bad = sum(count for k, count in lengths.items() if k != h)
    raise DataError(
        f"{label}: line {line} has {n} fields but the header has {h} names ({bad:,} row(s) do "
        "not match the header). Check the delimiters and quotes on those lines."
    )


def _last_fields_empty(data: bytes, delimiter: str) -> bool:
    reader = csv.reader(_lines(data), delimiter=delimiter)
    next(reader, None)
    return all(not row or not row[-1].strip() for row in reader)


def _first_mismatch(data: bytes, delimiter: str, h: int) -> tuple[int, int]:
    reader = csv.reader(_lines(data), delimiter=delimiter)
    next(reader, None)
    for row in reader:
        if row and len(row) != h:
            return reader.line_num, len(row)
    return 0, h


def _decimal_commas(frame: pd.DataFrame, notes: list[str]) -> None:
    converted = []
    for name in frame.columns:
        column = frame[name]
        if pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
            continue
        values = column.dropna()
        if values.empty or not all(isinstance(v, str) for v in values):
            continue
        strings = values.str.strip()
        if strings.str.contains(",").any() and strings.str.match(_DECIMAL_COMMA).all():
            frame[name] = pd.to_numeric(column.str.strip().str.replace(",", ".", regex=False))
            converted.append(name)
    if converted:
        notes.append(
            f"Read decimal commas (1,5 = 1.5) in column(s) {', '.join(map(repr, converted))}."
        )


def _check_columns(columns: list[object], label: str) -> None:
    names = [str(c) for c in columns]
    if len(names) > MAX_COLUMNS:
        raise DataError(_too_many_columns(label, len(names)))
    duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
    if duplicates:
        raise DataError(
            f"{label} has duplicate column names: {', '.join(map(repr, duplicates))}. "
            "Rename them so every column name is unique."
        )
    # The first column may have no name: R's write.csv and spreadsheets leave the header of the
    # row numbers empty; it is read as pandas names it ("Unnamed: 0") and is an identifier.
    blank = [i + 1 for i, name in enumerate(names) if not name.strip() and i > 0]
    if blank:
        raise DataError(
            f"{label} has columns without a name (position {', '.join(map(str, blank))}). "
            "Give every column a name in the header row."
        )
