"""Helpers for the hostile-file tests: real model files of every type, and forging tools.

``real_files()`` picks the smallest shipped demo model file of each model type (no fitting), so
the fuzz and hostile-class tests run on real state of every type at almost no cost.
``forge(members)`` rebuilds a zip whose manifest checksums are recomputed, as a deliberate forger
would, so the tests reach the checks behind the checksums.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from pathlib import Path

from fairengine.data.registry import assets_dir
from fairengine.export.files import _dumps

_ROOT = Path(__file__).resolve().parents[2]


def real_files() -> dict[str, Path]:
    """Model type → the smallest shipped demo model file of that type."""
    best: dict[str, Path] = {}
    for path in sorted((assets_dir() / "frontiers").glob("*/*/*.fairmodel")):
        with zipfile.ZipFile(path) as archive:
            model_type = json.loads(archive.read("manifest.json"))["model_type"]
        if model_type not in best or path.stat().st_size < best[model_type].stat().st_size:
            best[model_type] = path
    return best


def members_of(raw: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def zip_bytes(
    members: dict[str, bytes] | list[tuple[str, bytes]], *, deflate: bool = True
) -> bytes:
    items = members.items() if isinstance(members, dict) else members
    buffer = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(buffer, "w", compression=method) as archive:
        for name, data in items:
            archive.writestr(name, data)
    return buffer.getvalue()


def forge(
    members: dict[str, bytes], manifest: dict | None = None, *, raw_manifest: bytes | None = None
) -> bytes:
    """A zip of ``members`` with the manifest's checksums recomputed (``raw_manifest`` overrides
    the manifest bytes entirely)."""
    members = dict(members)
    if raw_manifest is None:
        manifest = dict(manifest or json.loads(members["manifest.json"]))
        manifest.pop("manifest_sha256", None)
        manifest["checksums"] = {
            n: hashlib.sha256(d).hexdigest()
            for n, d in sorted(members.items())
            if n != "manifest.json"
        }
        manifest["manifest_sha256"] = hashlib.sha256(_dumps(manifest)).hexdigest()
        raw_manifest = json.dumps(manifest).encode()
    members["manifest.json"] = raw_manifest
    return zip_bytes(members)


def npy_bytes(descr: str, shape: tuple, payload: bytes = b"") -> bytes:
    """A ``.npy`` file with a hand-written header (any declared shape / dtype)."""
    header = f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': {shape!r}, }}"
    header = header + " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + payload


# ----------------------------------------------------------------------------- arrays permuted


def permuted_files(raw: bytes, *, n_random: int = 5, seed: int = 0) -> dict[str, bytes]:
    """Every pair of ``raw``'s arrays swapped, and ``n_random`` random permutations of all of
    them, each with the checksums recomputed (each array stays a valid ``.npy`` on its own)."""
    members = members_of(raw)
    names = sorted(n for n in members if n.startswith("arrays/"))
    out: dict[str, bytes] = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            swapped = {**members, a: members[b], b: members[a]}
            out[f"swap {a[7:-4]} <-> {b[7:-4]}"] = forge(swapped)
    rng = random.Random(seed)
    for k in range(n_random if len(names) > 2 else 0):
        order = names[:]
        rng.shuffle(order)
        forged = {**members, **{a: members[b] for a, b in zip(names, order, strict=True)}}
        out[f"permutation {k}"] = forge(forged)
    return out


def time_loads(directory: Path) -> list[dict]:
    """Load every file in ``directory``: name, outcome (``loaded`` or ``refused: …``; anything
    else escaping is reported as ``ESCAPED …``) and seconds of CPU time."""
    from fairengine.export import ModelFileError, load_model
    from fairengine.methods.registry import model_type_names, resolve_model_type

    # imports (scikit-learn, pandas, every method, skops) outside the timings
    for name in model_type_names():
        resolve_model_type(name)
    import skops.io  # noqa: F401  (imported by the first stored estimator otherwise)

    rows = []
    for path in sorted(directory.iterdir()):
        start = time.process_time()
        try:
            load_model(path)
            outcome = "loaded"
        except ModelFileError as exc:
            outcome = f"refused: {str(exc)[:160]}"
        except Exception as exc:
            outcome = f"ESCAPED {type(exc).__name__}: {str(exc)[:160]}"
        rows.append({"file": path.name, "outcome": outcome, "seconds": time.process_time() - start})
    return rows


def time_loads_in_child(files: dict[str, bytes], *, per_file: float) -> list[dict]:
    """:func:`time_loads` of ``files`` in a fresh interpreter, killed after ``per_file`` seconds
    per file (plus start-up), so a load that never ends fails the caller instead of hanging it.
    Each row also names its file's label."""
    with tempfile.TemporaryDirectory() as tmp:
        labels = {}
        for i, (label, raw) in enumerate(files.items()):
            name = f"{i:04d}.fairmodel"
            (Path(tmp) / name).write_bytes(raw)
            labels[name] = label
        code = (
            "import json, sys\nfrom pathlib import Path\n"
            "from tests.export.hostile import time_loads\n"
            "print(json.dumps(time_loads(Path(sys.argv[1]))))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, tmp],
            capture_output=True,
            text=True,
            timeout=30 + per_file * len(files),
            cwd=_ROOT,
            env={**os.environ, "PYTHONPATH": str(_ROOT)},
            check=True,
        )
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    return [{**row, "label": labels[row["file"]]} for row in rows]


# ----------------------------------------------------------------------------- lying zips


def raw_zip(entries: list[dict]) -> bytes:
    """A zip written field by field: each entry gives ``name`` and ``data`` (the bytes stored,
    already compressed for ``method`` 8), and may override what the central directory
    (``central``: ``crc``, ``csize``, ``size``, ``flags``, ``method``, ``name``, ``offset``) and
    the local header (``local``: the same keys) declare (``no_local``: write no local record, only
    the central entry; ``after``: bytes written after the data, e.g. a data descriptor); by
    default both tell the truth about ``plain`` (the uncompressed bytes, for CRC and size)."""
    body, central = bytearray(), bytearray()
    for entry in entries:
        name, data = entry["name"].encode(), entry["data"]
        plain = entry.get("plain", data)
        truth = {
            "crc": zlib.crc32(plain),
            "csize": len(data),
            "size": entry.get("size", len(plain)),
            "flags": 0,
            "method": entry.get("method", 8),
            "name": name,
        }
        c = {**truth, **entry.get("central", {})}
        lo = {**truth, **entry.get("local", {})}
        offset = c.get("offset", len(body))
        if entry.get("no_local"):  # a central entry pointing into another member's record
            central += struct.pack(
                "<4s6H3L5H2L", b"PK\x01\x02", 20, 20, c["flags"], c["method"], 0, 0, c["crc"],
                c["csize"], c["size"], len(c["name"]), 0, 0, 0, 0, 0, offset,
            ) + c["name"]  # fmt: skip
            continue
        body += struct.pack(
            "<4s5H3L2H", b"PK\x03\x04", 20, lo["flags"], lo["method"], 0, 0, lo["crc"],
            lo["csize"], lo["size"], len(lo["name"]), 0,
        ) + lo["name"] + data + entry.get("after", b"")  # fmt: skip
        central += struct.pack(
            "<4s6H3L5H2L", b"PK\x01\x02", 20, 20, c["flags"], c["method"], 0, 0, c["crc"],
            c["csize"], c["size"], len(c["name"]), 0, 0, 0, 0, 0, offset,
        ) + c["name"]  # fmt: skip
    end = struct.pack(
        "<4s4H2LH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), len(body), 0
    )
    return bytes(body + central + end)


@functools.lru_cache(maxsize=4)
def deflated(size: int, byte: bytes = b"\0", block: int = 1 << 20) -> bytes:
    """A raw deflate stream of ``size`` copies of ``byte`` (built a block at a time)."""
    packer = zlib.compressobj(1, zlib.DEFLATED, -15)
    chunk = byte * block
    parts = [packer.compress(chunk) for _ in range(size // block)]
    parts.append(packer.compress(byte * (size % block)))
    return b"".join([*parts, packer.flush()])


def lying_zip(real: bytes, inflated: int, member: str = "state.json") -> bytes:
    """``real``'s members in a zip whose ``member`` holds a stream inflating to ``inflated``
    bytes while its central directory and local header both declare its true (small) size and
    CRC: only reading past the declared size finds the lie."""
    members = members_of(real)
    entries = []
    for name, plain in members.items():
        data = deflated(inflated) if name == member else _raw_deflate(plain)
        entries.append({"name": name, "data": data, "plain": plain})
    return raw_zip(entries)


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush()


def peak_rss_in_child(raw: bytes) -> tuple[int, str]:
    """(peak resident memory in bytes, outcome) of ``load_model(raw)`` in a fresh interpreter,
    imports included: ``VmHWM`` of the child's own address space (Linux), else ``ru_maxrss``
    (which Linux carries over from the parent across ``exec``, so it may read high)."""
    code = (
        "import resource, sys\nfrom fairengine.export import ModelFileError, load_model\n"
        "try:\n    load_model(sys.argv[1]); outcome = 'loaded'\n"
        "except ModelFileError as exc:\n    outcome = 'refused: ' + str(exc)[:200]\n"
        "try:\n    status = open('/proc/self/status').read().split('VmHWM:')[1]\n"
        "    peak = int(status.split()[0]) * 1024\n"
        "except (OSError, IndexError):\n"
        "    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024\n"
        "print(peak)\nprint(outcome)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "file.fairmodel"
        path.write_bytes(raw)
        done = subprocess.run(
            [sys.executable, "-c", code, str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=_ROOT,
            env={**os.environ, "PYTHONPATH": str(_ROOT)},
            check=True,
        )
    peak, outcome = done.stdout.strip().split("\n", 1)
    return int(peak), outcome
