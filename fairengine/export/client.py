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
from fairengine.models.columns import InputSchema, SchemaError, check_columns, ignored_note
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


def read_chunks(
    path: str | os.PathLike[str], schema: InputSchema, chunk_rows: int = CHUNK_ROWS
) -> tuple[list[str], Iterator[pd.DataFrame]]:
    """The file's column names and an iterator over its chunks (CSV or Parquet, by content)."""
    path = Path(path)
    if not path.is_file():
        raise SchemaError(f"Data file '{path}' does not exist.")
    with path.open("rb") as handle:
        head = handle.read(65_536)
    if head[:4] == b"PAR1":
        import pyarrow.parquet as pq

        try:
            parquet = pq.ParquetFile(path)
        except Exception as exc:
            raise SchemaError(f"Data file '{path.name}' is not readable Parquet: {exc}") from None
        columns = list(parquet.schema_arrow.names)
        batches = (b.to_pandas() for b in parquet.iter_batches(batch_size=chunk_rows))
        return columns, batches
    encoding = "utf-8-sig"  # and the delimiter: sniffed from the first 64 KiB
    try:
        sample = head.decode(encoding)
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not merely a character cut at the sample's end
            encoding = "cp1252"
        sample = head.decode(encoding, errors="ignore")
    header = sample.splitlines()[0] if sample else ""
    options = {"sep": max(",;\t|", key=header.count), "encoding": encoding}
    text = set(schema.text)
    try:
        columns = [str(c) for c in pd.read_csv(path, nrows=0, **options).columns]
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise SchemaError(f"Data file '{path.name}' is not a readable CSV: {exc}") from None
    dtype = {c: object for c in columns if c in text}  # categories as written, e.g. "01"
    return columns, pd.read_csv(
        path, chunksize=chunk_rows, dtype=dtype, keep_default_na=True, **options
    )


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
    rows = 0

    def predicted() -> Iterator[pd.DataFrame]:
        nonlocal rows
        for i, chunk in enumerate(chunks):
            check_types(schema, chunk, first_row=rows)
            seed = int(np.random.SeedSequence([random_state, i]).generate_state(1)[0])
            frame = chunk[schema.features]
            result = chunk[list(id_columns)].reset_index(drop=True)
            result["prediction"] = model.predict(frame, random_state=seed)
            if proba:
                result[score_name] = model.predict_score(frame)
            yield result
            rows += len(result)

    try:
        _write(predicted(), out, stdout, columns=[*id_columns, "prediction"])
    except (ValueError, pd.errors.ParserError) as exc:
        if isinstance(exc, SchemaError | ModelFileError):
            raise
        raise SchemaError(f"Cannot predict row {rows + 1} onwards: {exc}") from None
    return rows


def _write(
    frames: Iterator[pd.DataFrame],
    out: str | os.PathLike[str] | None,
    stdout: IO[str] | None,
    columns: list[str],
) -> None:
    """Write the frames as CSV on ``stdout`` without ``out``; else into a temporary file beside
    ``out`` (CSV, or Parquet for a ``.parquet`` suffix) renamed onto it once every row is
    written (a CSV of no rows still gets its header)."""
    if out is None:
        for i, frame in enumerate(frames):
            frame.to_csv(stdout or sys.stdout, header=i == 0, index=False)
        return
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    tmp, writer, written = Path(name), None, 0
    parquet = target.suffix.lower() in (".parquet", ".pq")
    try:
        for i, frame in enumerate(frames):
            if parquet:
                import pyarrow as pa
                import pyarrow.parquet as pq

                table = pa.Table.from_pandas(frame, preserve_index=False)
                writer = writer or pq.ParquetWriter(tmp, table.schema)
                writer.write_table(table)
            else:
                frame.to_csv(tmp, mode="a", header=i == 0, index=False)
            written += len(frame)
        if writer is not None:
            writer.close()
            writer = None
        if written == 0 and not parquet:
            pd.DataFrame(columns=columns).to_csv(tmp, index=False)
        os.replace(tmp, target)
    finally:
        if writer is not None:
            writer.close()
        tmp.unlink(missing_ok=True)


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
