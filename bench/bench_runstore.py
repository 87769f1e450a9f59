"""The run cache's file format: run files (checksummed JSON + ``.npy`` + model files) against the
gzip pickles the cache used to hold.

* ``runstore``: for each default run shipped in ``assets/frontiers/runs`` (``--quick``: three of
  them), the bytes of its run file and the time to write it (encode + atomic write through
  :meth:`RunStore.put`) and to read it back (:meth:`RunStore.get`: checks of the folders, the
  file's checksums and key, then decoding, model file included), best of several repeats. The
  reference is the old format, made here from the same in-memory run: ``gzip`` of
  ``pickle.dumps((key, run))``, written to a file, then read and unpickled (these bytes come from
  this process, never from disk). Ratios are new / old.
"""

from __future__ import annotations

import gzip
import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _best(function: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def _shipped() -> list[tuple[Path, str, Any]]:
    """(file, key, run) of every shipped run, smallest file last."""
    sys.path.insert(0, str(ROOT))
    from fairengine.frontier.demo import demo_root
    from fairengine.frontier.runcodec import decode_run, stored_key

    found = []
    for path in sorted((demo_root() / "runs").rglob("*.fairrun")):
        raw = path.read_bytes()
        key = stored_key(raw)
        found.append((path, key, decode_run(raw, key)))
    return sorted(found, key=lambda item: -item[0].stat().st_size)


def runstore(quick: bool) -> list[dict]:
    """Run files vs gzip pickles: bytes, write and read time per shipped run."""
    from fairengine.frontier.runs import RunStore, run_key

    repeats = 3 if quick else 7
    runs = _shipped()
    runs = runs[:1] + runs[-2:] if quick else runs
    rows: list[dict] = []
    totals = {"new": 0, "old": 0}
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(tmp)
        for path, key, run in runs:
            tkey = path.parent.parent.name  # the store layout keeps the task key's prefix
            label = f"{run.method} ({tkey[:8]})"
            old_path = Path(tmp) / f"{key[:32]}.run.gz"

            def write_old(run: Any = run, key: str = key, old_path: Path = old_path) -> None:
                old_path.write_bytes(gzip.compress(pickle.dumps((key, run), protocol=5), mtime=0))

            def read_old(old_path: Path = old_path) -> Any:
                return pickle.loads(gzip.decompress(old_path.read_bytes()))

            # keyed by the run's own knobs under the task-key prefix (the same for put and get)
            new_write = _best(lambda run=run, tkey=tkey: store.put(tkey, run), repeats)
            new_path = store.path(tkey, run.method, run_key(tkey, run.method, run.knobs))
            new_read = _best(lambda tkey=tkey, run=run: _get(store, tkey, run), repeats)
            old_write, old_read = _best(write_old, repeats), _best(read_old, repeats)
            new_bytes, old_bytes = new_path.stat().st_size, old_path.stat().st_size
            totals["new"] += new_bytes
            totals["old"] += old_bytes
            rows += [
                _row(f"{label}: bytes", new_bytes, "B", new_bytes / old_bytes, old_bytes, "B"),
                _row(
                    f"{label}: write",
                    new_write * 1e3,
                    "ms",
                    new_write / old_write,
                    old_write * 1e3,
                    "ms",
                ),  # fmt: skip
                _row(
                    f"{label}: read (verified)",
                    new_read * 1e3,
                    "ms",
                    new_read / old_read,
                    old_read * 1e3,
                    "ms",
                ),  # fmt: skip
            ]
    rows.append(
        _row(
            f"all {len(runs)} runs: bytes",
            totals["new"],
            "B",
            totals["new"] / totals["old"],
            totals["old"],
            "B",
        )  # fmt: skip
    )
    return rows


def _get(store: Any, tkey: str, run: Any) -> Any:
    result = store.get(tkey, run.method, run.knobs)
    if result is None:
        raise RuntimeError(f"the {run.method} run written by the bench did not read back")
    return result


def _row(what: str, value: float, unit: str, ratio: float, old: float, old_unit: str) -> dict:
    return {
        "what": what,
        "value": round(value, 2),
        "unit": unit,
        "ratio": round(ratio, 2),
        "note": f"new / old; the old gzip pickle: {old:,.2f} {old_unit}",
    }


def register(registry: Any) -> None:
    registry.add(runstore)
