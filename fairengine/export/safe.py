"""Reading untrusted model files: hard limits checked before anything is allocated.

Every reader here raises :class:`ModelFileError` (and nothing else) for a malformed, foreign or
forged input. The order of checks follows what an attacker controls cheaply:

1. the file size (``MAX_FILE_BYTES``), before reading it;
2. the zip's end-of-central-directory record, parsed by hand *before* :mod:`zipfile` builds one
   object per member: member count (``MAX_MEMBERS``), directory size (``MAX_DIRECTORY_BYTES``), no
   zip64, a central directory inside the file;
3. per member, from the central directory: no duplicate names, no encryption flag, only stored or
   deflated data, declared sizes within ``MAX_MEMBER_BYTES`` and all of them within
   ``MAX_TOTAL_BYTES``; reads are bounded by the declared size and must return exactly it;
4. JSON: size, nesting depth (``MAX_JSON_DEPTH``, counted before parsing), number literals
   (``MAX_NUMBER_CHARS``, no ``NaN`` / ``Infinity``, finite floats), no duplicate keys;
5. ``.npy``: the header is parsed alone; only plain numeric dtypes; the declared shape times the
   item size must equal the bytes present, so a huge declared shape is refused before allocation.

So a load holds the file, the inflated members (at most their declared sizes) and the arrays (a
copy of their bytes): a few times the declared content, and never more than about
``2 * MAX_TOTAL_BYTES + MAX_FILE_BYTES``.
"""

from __future__ import annotations

import io
import json
import re
import struct
import zipfile
from typing import Any

import numpy as np

#: Largest model file read at all (compressed bytes on disk).
MAX_FILE_BYTES = 256 * 2**20
#: Largest number of members in a model file's zip (real files hold a few dozen).
MAX_MEMBERS = 4096
#: Largest central directory: zipfile parses entries until its declared size is used up, whatever
#: the entry count says, so its size bounds the work too (a real entry takes under 256 bytes).
MAX_DIRECTORY_BYTES = MAX_MEMBERS * 256
#: Largest declared uncompressed size of one member, and of all of them together.
MAX_MEMBER_BYTES = 256 * 2**20
MAX_TOTAL_BYTES = 256 * 2**20
#: Largest JSON member (manifest, state) and its deepest nesting of objects / arrays.
MAX_JSON_BYTES = 64 * 2**20
MAX_JSON_DEPTH = 32
#: Longest number literal in JSON (int64 has 19 digits; floats print in at most ~24 chars).
MAX_NUMBER_CHARS = 40
#: Array dtypes a model file may hold (kinds: bool, signed / unsigned integer, float).
ARRAY_KINDS = frozenset("biuf")
MAX_ARRAY_NDIM = 8

_EOCD = struct.Struct("<4s4H2LH")
_EOCD_SIGNATURE = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


class ModelFileError(ValueError):
    """A model file that is not ours, is damaged or tampered with, or names an unknown type."""


# ----------------------------------------------------------------------------- zip


def _end_record(raw: bytes, label: str) -> tuple[int, int, int]:
    """(entries, central directory size, offset) from the end record, as :mod:`zipfile` finds it."""
    if len(raw) >= _EOCD.size and raw[-_EOCD.size : -_EOCD.size + 4] == _EOCD_SIGNATURE:
        start = len(raw) - _EOCD.size
    else:  # a trailing comment: zipfile takes the last signature in the final 64 KiB
        start = raw.rfind(_EOCD_SIGNATURE, max(0, len(raw) - 65_536 - _EOCD.size))
    if start < 0 or start + _EOCD.size > len(raw):
        raise ModelFileError(f"{label} is not a fairengine model file (not a zip archive).")
    _, disk, cd_disk, n_disk, n_total, cd_size, cd_offset, _ = _EOCD.unpack_from(raw, start)
    if (
        start >= 20
        and raw[start - 20 : start - 16] == _ZIP64_LOCATOR
        or 0xFFFF
        in (
            n_disk,
            n_total,
        )
        or 0xFFFFFFFF in (cd_size, cd_offset)
    ):
        raise ModelFileError(f"{label} is a zip64 archive; model files never are.")
    if disk or cd_disk or n_disk != n_total:
        raise ModelFileError(f"{label} is a multi-part zip archive; model files never are.")
    if n_total > MAX_MEMBERS:
        raise ModelFileError(
            f"{label} declares {n_total:,} members; a model file holds at most {MAX_MEMBERS:,}."
        )
    if cd_size > MAX_DIRECTORY_BYTES:
        raise ModelFileError(
            f"{label} has a zip directory of {cd_size:,} bytes; a model file's is at most "
            f"{MAX_DIRECTORY_BYTES:,}."
        )
    if cd_offset + cd_size > start:
        raise ModelFileError(f"{label} is damaged: its zip directory lies outside the file.")
    return n_total, cd_size, cd_offset


def check_infos(infos: list[zipfile.ZipInfo], label: str) -> dict[str, zipfile.ZipInfo]:
    """Name → info after the per-member checks (duplicates, encryption, method, sizes)."""
    by_name: dict[str, zipfile.ZipInfo] = {}
    total = 0
    for info in infos:
        if info.filename in by_name:
            raise ModelFileError(
                f"{label} holds two members named {info.filename!r}; zip tools disagree on which "
                "one counts, so model files never do."
            )
        by_name[info.filename] = info
        if info.flag_bits & 0x41:  # bit 0: encrypted, bit 6: strong encryption
            raise ModelFileError(f"{label} has an encrypted member {info.filename!r}.")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ModelFileError(
                f"{label} uses compression method {info.compress_type} for {info.filename!r}; "
                "model files are stored or deflated."
            )
        if info.file_size > MAX_MEMBER_BYTES:
            raise ModelFileError(
                f"{label} declares a member of {info.file_size:,} bytes ({info.filename!r}); the "
                f"limit is {MAX_MEMBER_BYTES:,}."
            )
        total += info.file_size
    if total > MAX_TOTAL_BYTES:
        raise ModelFileError(
            f"{label} declares {total:,} bytes of content; the limit is {MAX_TOTAL_BYTES:,}."
        )
    return by_name


def open_zip(raw: bytes, label: str) -> zipfile.ZipFile:
    """A :class:`zipfile.ZipFile` over ``raw`` once the end record passes the limits."""
    if len(raw) > MAX_FILE_BYTES:
        raise ModelFileError(f"{label} has {len(raw):,} bytes; the limit is {MAX_FILE_BYTES:,}.")
    entries, _, _ = _end_record(raw, label)
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile:
        raise ModelFileError(
            f"{label} is not a fairengine model file (not a zip archive)."
        ) from None
    except Exception as exc:  # noqa: BLE001  (any parser failure on hostile bytes)
        raise ModelFileError(f"{label} is damaged: {exc}") from None
    if len(archive.infolist()) != entries:
        archive.close()
        raise ModelFileError(f"{label} is damaged: its zip directory and end record disagree.")
    return archive


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, label: str) -> bytes:
    """The member's bytes, reading at most its declared size (+1 to detect more)."""
    try:
        with archive.open(info) as handle:
            data = handle.read(info.file_size + 1)
    except Exception as exc:  # noqa: BLE001  (zlib / CRC / header errors on hostile bytes)
        raise ModelFileError(f"{label} is damaged ({info.filename}): {exc}") from None
    if len(data) != info.file_size:
        raise ModelFileError(
            f"{label} is damaged: {info.filename} holds {len(data):,} bytes, not the "
            f"{info.file_size:,} its directory declares."
        )
    return data


# ----------------------------------------------------------------------------- JSON


def _reject_constant(name: str) -> Any:
    raise ValueError(f"the constant {name} is not allowed")


def _parse_int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise ValueError(f"an integer with {len(text)} digits")
    return int(text)


def _parse_float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise ValueError(f"a number literal of {len(text)} characters")
    value = float(text)
    if not np.isfinite(value):
        raise ValueError(f"the number {text} overflows")
    return value


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise ValueError(f"the key {dup!r} appears twice in one object")
    return result


def json_depth(raw: bytes) -> int:
    """Deepest nesting of ``[`` / ``{`` outside strings (linear, no recursion)."""
    skeleton = np.frombuffer(_STRING.sub(b'""', raw), dtype=np.uint8)
    steps = np.zeros(len(skeleton), dtype=np.int64)
    steps[(skeleton == ord("[")) | (skeleton == ord("{"))] = 1
    steps[(skeleton == ord("]")) | (skeleton == ord("}"))] = -1
    return int(np.cumsum(steps).max(initial=0))


def load_json(raw: bytes, what: str) -> Any:
    """Parse a JSON member within the limits; :class:`ModelFileError` naming ``what`` otherwise."""
    if len(raw) > MAX_JSON_BYTES:
        raise ModelFileError(f"{what} has {len(raw):,} bytes; the limit is {MAX_JSON_BYTES:,}.")
    depth = json_depth(raw)
    if depth > MAX_JSON_DEPTH:
        raise ModelFileError(f"{what} nests {depth} levels deep; the limit is {MAX_JSON_DEPTH}.")
    try:
        return json.loads(
            raw.decode("utf-8"),
            parse_constant=_reject_constant,
            parse_int=_parse_int,
            parse_float=_parse_float,
            object_pairs_hook=_no_duplicate_keys,
        )
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ModelFileError(f"{what} is not valid JSON for a model file: {exc}") from None


# ----------------------------------------------------------------------------- npy


def load_npy(data: bytes, what: str) -> np.ndarray:
    """An array from ``.npy`` bytes: header checked, size checked, then one copy of the data."""
    stream = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
        else:
            raise ValueError(f"unsupported .npy version {version}")
    except Exception as exc:  # noqa: BLE001  (numpy raises several types on bad headers)
        raise ModelFileError(f"{what} has an unreadable array header: {exc}") from None
    if dtype.kind not in ARRAY_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise ModelFileError(f"{what} has dtype {dtype}; model files hold plain numbers only.")
    if len(shape) > MAX_ARRAY_NDIM or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
    ):
        raise ModelFileError(f"{what} declares an invalid shape {shape!r}.")
    count = 1
    for n in shape:
        count *= n
    offset = stream.tell()
    if count * dtype.itemsize != len(data) - offset:
        raise ModelFileError(
            f"{what} declares shape {shape} of {dtype} ({count * dtype.itemsize:,} bytes) but "
            f"holds {len(data) - offset:,} bytes."
        )
    flat = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
    return flat.reshape(shape, order="F" if fortran else "C").copy()


__all__ = [
    "MAX_FILE_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_MEMBERS",
    "MAX_MEMBER_BYTES",
    "MAX_TOTAL_BYTES",
    "ModelFileError",
    "check_infos",
    "json_depth",
    "load_json",
    "load_npy",
    "open_zip",
    "read_member",
]
