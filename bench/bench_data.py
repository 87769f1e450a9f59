"""Data-layer benchmarks: reading the largest accepted uploads and refusing hostile
ones (time and peak memory, each in a fresh process), and the feature encoder on very wide tables
and its peak memory (before = the former encoder frozen in tests/data/_legacy_encoder.py)."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
from fairengine.data import DataError, from_frame, read_table
def hwm():  # this process's peak RSS in kB (VmHWM: reset by exec, unlike ru_maxrss)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
base = hwm()
start = time.perf_counter()
try:
    frame = read_table({path!r})
    outcome = f"accepted {{frame.shape[0]:,}} x {{frame.shape[1]:,}}"
    if {roles!r}:
        task = from_frame(frame, target="y", sensitive="g")
        outcome += f", task of {{len(task.frame):,}} rows"
except DataError as exc:
    outcome = "refused: " + str(exc)[:70]
elapsed = time.perf_counter() - start
peak = hwm()
print(json.dumps({{"s": elapsed, "peak_mb": peak / 1024, "extra_mb": (peak - base) / 1024,
                  "outcome": outcome}}))
"""


def _measure(path: Path, roles: bool) -> dict:
    code = _CHILD.format(root=str(ROOT), path=str(path), roles=roles)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=1800
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _csv_of_size(target_bytes: int, n_rows: int) -> bytes:
    """A CSV of ``n_rows`` rows padded with a text column to about ``target_bytes``."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n_rows),
            "income": np.round(rng.lognormal(10, 1, n_rows), 2),
            "score": rng.normal(size=n_rows).round(6),
            "city": rng.choice(["Zürich", "Köln", "Málaga", "Lyon", "Porto"], n_rows),
            "g": rng.choice(["f", "m"], n_rows),
            "y": rng.integers(0, 2, n_rows),
        }
    )
    width = max(0, target_bytes // n_rows - len(frame.head(1000).to_csv(index=False)) // 1000)
    codes = rng.integers(0, 26**4, n_rows)
    frame.insert(5, "note", [f"{c:08d}".ljust(width - 1, "x") for c in codes] if width else "")
    return frame.to_csv(index=False).encode()


def uploads(quick: bool) -> list[dict]:
    """Largest accepted uploads and hostile ones: wall time and peak RSS of a fresh process."""
    from fairengine.data.io import MAX_FILE_BYTES, MAX_READ_ROWS

    size = 20 * 2**20 if quick else MAX_FILE_BYTES - 2**20
    cases: dict[str, tuple[bytes, bool]] = {}
    big = _csv_of_size(size, 200_000 if quick else MAX_READ_ROWS)
    while len(big) > MAX_FILE_BYTES:
        big = big[: big.rfind(b"\n", 0, MAX_FILE_BYTES) + 1]
    n_big = big.count(b"\n") - 1
    cases[f"CSV {len(big) / 2**20:.0f} MB, {n_big:,} rows (+ task)"] = (big, True)
    cases[f"gzip CSV {len(big) / 2**20:.0f} MB inside (+ task)"] = (gzip.compress(big, 6), True)
    del big
    bomb = gzip.compress(b"0" * (4 * 2**30 if not quick else 2**30), 9)
    cases[f"gzip bomb {len(bomb) / 2**20:.1f} MB -> {4 if not quick else 1} GB"] = (bomb, False)
    buffer = io.BytesIO()
    n = 10**8 if not quick else 10**7
    pd.DataFrame({"a": np.zeros(n, dtype=np.int8)}).to_parquet(buffer, compression="zstd")
    cases[f"Parquet {len(buffer.getvalue()) / 2**20:.1f} MB declaring {n:,} rows"] = (
        buffer.getvalue(),
        False,
    )
    header = ",".join(f"c{i}" for i in range(50_000))
    wide = (header + "\n" + "\n".join([",".join(["1"] * 50_000)] * 20) + "\n").encode()
    cases["CSV with 50,000 columns"] = (wide, False)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (payload, roles) in cases.items():
            path = Path(tmp) / "upload.bin"
            path.write_bytes(payload)
            result = _measure(path, roles)
            note = f"{result['outcome']}; peak RSS {result['peak_mb']:.0f} MB"
            rows.append({"what": f"{name}: time", "value": result["s"], "unit": "s", "note": note})
            rows.append(
                {
                    "what": f"{name}: memory above imports",
                    "value": result["extra_mb"],
                    "unit": "MB",
                    "note": f"file {len(payload) / 2**20:.1f} MB",
                }
            )
    return rows


def _wide_frame(n_rows: int, n_columns: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    numeric = pd.DataFrame(
        rng.normal(size=(n_rows, n_columns - n_columns // 10)),
        columns=[f"n{i}" for i in range(n_columns - n_columns // 10)],
    )
    text = pd.DataFrame(
        {f"t{i}": rng.choice(["a", "b", "c", "d"], n_rows) for i in range(n_columns // 10)}
    )
    return pd.concat([numeric, text], axis=1)


def _fit_transform_seconds(cls, frame: pd.DataFrame) -> float:
    start = time.perf_counter()
    cls().fit(frame).transform(frame)
    return time.perf_counter() - start


def encoder_columns(quick: bool) -> list[dict]:
    """FeatureEncoder fit + transform on wide tables (200 rows; 90 % numeric, 10 % text)."""
    sys.path.insert(0, str(ROOT))
    from fairengine.data import FeatureEncoder
    from tests.data._legacy_encoder import FeatureEncoder as Legacy

    rows = []
    before = [1000, 2500] if quick else [2500, 5000, 10_000]
    after = [1000, 2500] if quick else [2500, 5000, 10_000, 20_000, 50_000]
    for k in sorted(set(before) | set(after)):
        frame = _wide_frame(200, k)
        new = _fit_transform_seconds(FeatureEncoder, frame) if k in after else None
        old = _fit_transform_seconds(Legacy, frame) if k in before else None
        if old is not None:
            rows.append({"what": f"{k:,} columns: former encoder", "value": old, "unit": "s"})
        if new is not None:
            rows.append(
                {
                    "what": f"{k:,} columns: encoder",
                    "value": new,
                    "unit": "s",
                    "ratio": None if old is None else old / new,
                    "note": "ratio = former / now" if old is not None else "",
                }
            )
    rows.append(
        {
            "what": "earlier measurement, former encoder",
            "value": 141.0,
            "unit": "s",
            "note": "20,000 columns: 141 s; 50,000: killed after 4 minutes",
        }
    )
    return rows


def encoder_memory(quick: bool) -> list[dict]:
    """Peak memory of transform relative to its output (tracemalloc), former vs now."""
    sys.path.insert(0, str(ROOT))
    from fairengine.data import FeatureEncoder, load_dataset
    from tests.data._legacy_encoder import FeatureEncoder as Legacy

    X = load_dataset("german_credit" if quick else "adult").X
    rows = []
    for label, cls in (("former encoder", Legacy), ("encoder", FeatureEncoder)):
        encoder = cls().fit(X)
        tracemalloc.start()
        out = encoder.transform(X)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rows.append(
            {
                "what": f"transform peak / output, {label}",
                "value": peak / out.nbytes,
                "unit": "x",
                "note": f"output {out.shape[0]:,} x {out.shape[1]} = {out.nbytes / 2**20:.0f} MB",
            }
        )
    return rows


def register(registry) -> None:
    """Add this module's benchmarks to the harness (see bench/run.py)."""
    registry.add(uploads)
    registry.add(encoder_columns)
    registry.add(encoder_memory)
