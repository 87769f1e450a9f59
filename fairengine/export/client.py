"""Using a model file on new data: the input schema, column checks, chunked batch prediction
(what ``fairengine predict`` and ``fairengine inspect`` run).

Design notes: docs/howto/export.md, "Batch prediction".
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from fairengine.export.files import load_model, read_manifest
from fairengine.models.columns import (
    InputSchema,
    SchemaError,
    check_columns,
    ignored_note,
)
from fairengine.models.schema_rules import ModelFileError

CHUNK_ROWS = 50_000


def check_types(schema: InputSchema, frame: pd.DataFrame, first_row: int = 0) -> None:
    """Raise :class:`SchemaError` naming numeric columns that hold non-numeric values."""
    bad = []
    for col in schema.numeric:
        values = frame[col]
        if pd.api.types.is_bool_dtype(values) or not (
            pd.api.types.is_numeric_dtype(values) or values.isna().all()
        ):
            parsed = pd.to_numeric(values, errors="coerce")
            wrong = parsed.isna() & values.notna()
            if wrong.any() or pd.api.types.is_bool_dtype(values):
                where = int(np.argmax(wrong.to_numpy())) if wrong.any() else 0
                bad.append(
                    f"{col} (expects numbers; row {first_row + where + 1} has "
                    f"{str(values.iloc[where])[:30]!r})"
                )
    if bad:
        raise SchemaError("Mistyped column(s): " + "; ".join(bad))


# ----------------------------------------------------------------------------- reading


def _sniff_csv(path: Path) -> tuple[str, str]:
    """(encoding, delimiter) of a CSV file from its first 64 KiB."""
    with path.open("rb") as handle:
        head = handle.read(65_536)
    encoding = "utf-8-sig"
    try:
        text = head.decode(encoding)
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not merely a character cut at the sample's end
            encoding = "cp1252"
        text = head.decode(encoding, errors="ignore")
    header = text.splitlines()[0] if text else ""
    delimiter = max(",;\t|", key=header.count)
    return encoding, delimiter


def read_chunks(
    path: str | os.PathLike[str], schema: InputSchema, chunk_rows: int = CHUNK_ROWS
) -> tuple[list[str], Iterator[pd.DataFrame]]:
    """The file's column names and an iterator over its chunks (CSV or Parquet, by content)."""
    path = Path(path)
    if not path.is_file():
        raise SchemaError(f"Data file '{path}' does not exist.")
    with path.open("rb") as handle:
        magic = handle.read(4)
    if magic == b"PAR1":
        import pyarrow.parquet as pq

        try:
            parquet = pq.ParquetFile(path)
        except Exception as exc:
            raise SchemaError(f"Data file '{path.name}' is not readable Parquet: {exc}") from None
        columns = list(parquet.schema_arrow.names)
        batches = (b.to_pandas() for b in parquet.iter_batches(batch_size=chunk_rows))
        return columns, batches
    encoding, delimiter = _sniff_csv(path)
    text = set(schema.text)
    options = {"sep": delimiter, "encoding": encoding}
    try:
        columns = [str(c) for c in pd.read_csv(path, nrows=0, **options).columns]
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise SchemaError(f"Data file '{path.name}' is not a readable CSV: {exc}") from None
    dtype = {c: object for c in columns if c in text}  # categories as written, e.g. "01"
    return columns, pd.read_csv(
        path, chunksize=chunk_rows, dtype=dtype, keep_default_na=True, **options
    )


# ----------------------------------------------------------------------------- predicting


def predict_file(
    model_path: str | os.PathLike[str],
    data_path: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    proba: bool = False,
    id_columns: Sequence[str] = (),
    allow_extra: bool = False,
    random_state: int = 0,
    chunk_rows: int = CHUNK_ROWS,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
) -> int:
    """Predict every row of ``data_path`` into ``out`` (CSV, or Parquet for a ``.parquet``
    suffix; CSV on ``stdout`` without ``out``); returns the number of rows written. Columns the
    model was trained with but does not read (target, sensitive attribute(s)) are ignored with a
    note on ``stderr`` (:func:`check_columns`).

    ``proba`` (add the probability of 1, or the expected value), ``id_columns`` (input columns
    copied to the output), ``allow_extra`` (ignore unknown columns), ``random_state`` (seed of a
    randomized model's draws) and ``chunk_rows`` (rows read at a time).

    Raises
    ------
    ModelFileError
        For a bad model file.
    SchemaError
        For input that does not match the model's schema.
    """
    model = load_model(model_path)
    schema = model.input_schema  # load_model reads it from the manifest
    score_name = "probability" if model.kind == "classification" else "expected_prediction"
    columns, chunks = read_chunks(data_path, schema, chunk_rows)
    ignored = check_columns(schema, columns, id_columns=id_columns, allow_extra=allow_extra)
    if ignored:
        print(ignored_note(schema, ignored), file=stderr or sys.stderr)
    sink = _Sink(out, stdout)
    rows = 0
    try:
        for i, chunk in enumerate(chunks):
            check_types(schema, chunk, first_row=rows)
            seed = int(np.random.SeedSequence([random_state, i]).generate_state(1)[0])
            frame = chunk[schema.features]
            result = chunk[list(id_columns)].reset_index(drop=True)
            result["prediction"] = model.predict(frame, random_state=seed)
            if proba:
                result[score_name] = model.predict_score(frame)
            sink.write(result, header=i == 0)
            rows += len(result)
        sink.finish(empty=rows == 0, columns=[*id_columns, "prediction"])
    except (ValueError, pd.errors.ParserError) as exc:
        if isinstance(exc, SchemaError | ModelFileError):
            raise
        raise SchemaError(f"Cannot predict row {rows + 1} onwards: {exc}") from None
    finally:
        sink.close()
    return rows


class _Sink:
    """Where :func:`predict_file` writes: a temporary file beside ``out`` (CSV, or Parquet for a
    ``.parquet`` suffix) renamed onto it once every row is written, or CSV on ``stdout``."""

    def __init__(self, out: str | os.PathLike[str] | None, stdout: IO[str] | None) -> None:
        self.target = None if out is None else Path(out)
        self.parquet = self.target is not None and self.target.suffix.lower() in (".parquet", ".pq")
        self.stdout = stdout
        self.tmp: Path | None = None
        self.writer: Any = None
        if self.target is not None:
            self.target.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(
                dir=self.target.parent, prefix=f".{self.target.name}.", suffix=".tmp"
            )
            os.close(fd)
            self.tmp = Path(name)

    def write(self, result: pd.DataFrame, *, header: bool) -> None:
        if self.parquet:
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(result, preserve_index=False)
            self.writer = self.writer or pq.ParquetWriter(self.tmp, table.schema)
            self.writer.write_table(table)
        elif self.tmp is not None:
            result.to_csv(self.tmp, mode="a", header=header, index=False)
        else:
            result.to_csv(self.stdout or sys.stdout, header=header, index=False)

    def finish(self, *, empty: bool, columns: list[str]) -> None:
        """Close the file and move it onto ``out`` (a CSV of no rows still gets its header)."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        if self.tmp is not None:
            if empty and not self.parquet:
                pd.DataFrame(columns=columns).to_csv(self.tmp, index=False)
            os.replace(self.tmp, self.target)

    def close(self) -> None:
        """Release what is still open and remove a temporary file left by a failure."""
        if self.writer is not None:
            self.writer.close()
        if self.tmp is not None and self.tmp.exists():
            self.tmp.unlink()


def describe(model_path: str | os.PathLike[str]) -> dict[str, Any]:
    """What ``fairengine inspect`` prints: the verified manifest, the input schema, the metrics
    and the checks that passed (checksums, state schema, one probe prediction)."""
    manifest = read_manifest(model_path)
    model = load_model(model_path)  # every checksum, the state schema and a probe prediction
    schema = model.input_schema
    meta = manifest.get("metadata") or {}
    return {
        "file": str(model_path),
        "format": f"{manifest['format']} v{manifest['format_version']}",
        "model_type": manifest["model_type"],
        "randomized": bool(getattr(type(model), "randomized", False)),
        "kind": model.kind,
        "engine_version": manifest["engine_version"],
        "created": manifest["created"],
        "method": meta.get("method"),
        "knobs": meta.get("knobs", {}),
        "schema": {
            "numeric": schema.numeric,
            "text": schema.text,
            "not_needed": schema.known,
            "dropped_identifier_columns": list(getattr(model.encoder, "dropped_", [])),
            "training_dtypes": schema.dtypes,
        },
        "metrics": meta.get("metrics", {}),
        "checksums": {"verified": sorted(manifest["checksums"]), "status": "ok"},
    }
