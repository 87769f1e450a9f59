"""Reading untrusted model files: hard limits checked before anything is allocated.

Design notes: docs/howto/export.md, "Limits of the readers".
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import math
import os
import stat
import struct
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairengine.models.schema_rules import ModelFileError

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
#: Largest JSON member (manifest, state, run) or JSON file (comparison, points), and its deepest
#: nesting of objects / arrays. Parsed JSON can take some 30 times its bytes as Python objects
#: (``[[],[],…]``: a list per 3 bytes), and a JSON member deflates a thousandfold, so this
#: bounds the memory of a tiny file too.
MAX_JSON_BYTES = 16 * 2**20
MAX_JSON_DEPTH = 32
#: Deepest nesting of a skops archive's schema.json: skops nests a few levels per estimator, so
#: pipelines of column transformers of pipelines go deeper than a model file's JSON.
MAX_SKOPS_SCHEMA_DEPTH = 64
#: Longest number literal in JSON (int64 has 19 digits; floats print in at most ~24 chars).
MAX_NUMBER_CHARS = 40
#: Array dtypes a model file may hold (kinds: bool, signed / unsigned integer, float).
ARRAY_KINDS = frozenset("biuf")
MAX_ARRAY_NDIM = 8

_EOCD = struct.Struct("<4s4H2LH")
_EOCD_SIGNATURE = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_CENTRAL = struct.Struct("<4s6H3L5H2L")
_CENTRAL_SIGNATURE = b"PK\x01\x02"
_LOCAL = struct.Struct("<4s5H3L2H")
_LOCAL_SIGNATURE = b"PK\x03\x04"
_DESCRIPTOR_SIGNATURE = b"PK\x07\x08"
_DESCRIPTOR_FLAG = 0x08
_UTF8_FLAG = 0x800
#: Bytes of JSON whose nesting is counted at a time.
_DEPTH_BLOCK = 1 << 16
#: Compressed bytes handed to zlib at a time (the output is capped separately).
_INFLATE_CHUNK = 1 << 16


def read_regular(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of the regular file at ``path``. Anything else (a device such as ``/dev/zero``,
    a pipe, a folder) or more than ``max_bytes`` bytes raises :class:`OSError` whose
    ``strerror`` says why in words: both are checked with ``fstat`` on the opened file before
    reading, and at most ``max_bytes + 1`` bytes are read, so a file that grows meanwhile is
    refused too. Opened non-blocking, so a pipe swapped in cannot block the reader."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "it is not a regular file (a device, pipe or folder)")
        if info.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"it has {info.st_size:,} bytes; the limit is {max_bytes:,}")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise OSError(errno.EFBIG, f"it has more than {max_bytes:,} bytes (the limit)")
        return data
    finally:
        os.close(fd)


def _end_record(raw: bytes, label: str) -> tuple[int, int, int]:
    """(entries, central directory size, offset) from the end record, which must close the file
    (a trailing comment only as long as the record declares) and sit right after the directory."""
    if len(raw) >= _EOCD.size and raw[-_EOCD.size : -_EOCD.size + 4] == _EOCD_SIGNATURE:
        start = len(raw) - _EOCD.size
    else:  # a trailing comment: zipfile takes the last signature in the final 64 KiB
        start = raw.rfind(_EOCD_SIGNATURE, max(0, len(raw) - 65_536 - _EOCD.size))
    if start < 0 or start + _EOCD.size > len(raw):
        raise ModelFileError(f"{label} is not a fairengine model file (not a zip archive).")
    _, disk, cd_disk, n_disk, n_total, cd_size, cd_offset, comment = _EOCD.unpack_from(raw, start)
    if (
        start >= 20
        and raw[start - 20 : start - 16] == _ZIP64_LOCATOR
        or 0xFFFF in (n_disk, n_total)
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
    if cd_offset + cd_size != start or start + _EOCD.size + comment != len(raw):
        raise ModelFileError(
            f"{label} is damaged: its zip end record does not close the file right after its "
            "directory (data was inserted or appended)."
        )
    return n_total, cd_size, cd_offset


@dataclass(frozen=True)
class Member:
    """One zip member as the central directory declares it, once its local header agrees.

    ``data_offset`` is where its compressed bytes start; ``end`` is where its record ends (after
    the compressed bytes and any data descriptor). The attribute names follow
    :class:`zipfile.ZipInfo`."""

    filename: str
    flag_bits: int
    compress_type: int
    CRC: int
    compress_size: int
    file_size: int
    header_offset: int
    data_offset: int
    end: int


@dataclass
class Archive:
    """A zip archive parsed by hand (:func:`open_zip`): its members, and the bytes they are read
    from by :func:`read_member`. Nothing of :mod:`zipfile` reads a model file."""

    raw: bytes
    members: list[Member]

    def infolist(self) -> list[Member]:
        return list(self.members)

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.members = []


def _member(raw: bytes, name: bytes, fields: tuple, cd_offset: int, label: str) -> Member:
    """The member of one central entry after its local header (and data descriptor) agree."""
    _, _, _, flags, method, _, _, crc, csize, size, _, _, _, disk, _, _, offset = fields
    try:  # as zipfile decodes names: UTF-8 when flagged, else code page 437
        text = name.decode("utf-8" if flags & _UTF8_FLAG else "cp437")
    except UnicodeDecodeError:
        raise ModelFileError(f"{label} is damaged: a member's name is not valid text.") from None
    if disk:
        raise ModelFileError(f"{label} is a multi-part zip archive; model files never are.")
    if offset + _LOCAL.size > cd_offset or raw[offset : offset + 4] != _LOCAL_SIGNATURE:
        raise ModelFileError(f"{label} is damaged: no local header for {text!r}.")
    local = _LOCAL.unpack_from(raw, offset)
    l_flags, l_method, l_crc, l_csize, l_size, name_len, extra_len = (
        local[i] for i in (2, 3, 6, 7, 8, 9, 10)
    )
    data_offset = offset + _LOCAL.size + name_len + extra_len
    descriptor = bool(flags & _DESCRIPTOR_FLAG)
    sizes = (l_crc, l_csize, l_size)
    if (
        raw[offset + _LOCAL.size : offset + _LOCAL.size + name_len] != name
        or (l_flags, l_method) != (flags, method)
        or (sizes != (crc, csize, size) and not (descriptor and sizes == (0, 0, 0)))
    ):
        raise ModelFileError(
            f"{label} is damaged: the local header of {text!r} disagrees with the zip directory "
            "(name, flags, method, CRC or sizes)."
        )
    if method == 0 and csize != size:
        raise ModelFileError(f"{label} is damaged: the stored member {text!r} has two sizes.")
    end = data_offset + csize
    if descriptor:  # it must repeat the directory's CRC and sizes
        end += 4 if raw[end : end + 4] == _DESCRIPTOR_SIGNATURE else 0
        if end + 12 > len(raw) or struct.unpack_from("<3L", raw, end) != (crc, csize, size):
            raise ModelFileError(
                f"{label} is damaged: the data descriptor of {text!r} disagrees with the zip "
                "directory."
            )
        end += 12
    if end > cd_offset:
        raise ModelFileError(f"{label} is damaged: member {text!r} runs into the zip directory.")
    return Member(text, flags, method, crc, csize, size, offset, data_offset, end)


def open_zip(raw: bytes, label: str) -> Archive:
    """The archive in ``raw`` once its structure passes: the end record within the limits, every
    central entry matching its local header (name, flags, method, CRC, sizes) and any data
    descriptor, and no two members' records overlapping."""
    if len(raw) > MAX_FILE_BYTES:
        raise ModelFileError(f"{label} has {len(raw):,} bytes; the limit is {MAX_FILE_BYTES:,}.")
    raw = bytes(raw)
    entries, cd_size, cd_offset = _end_record(raw, label)
    central, at, stop = [], cd_offset, cd_offset + cd_size
    for _ in range(entries):  # (name bytes, fields) of each entry; they must fill the directory
        if at + _CENTRAL.size > stop or raw[at : at + 4] != _CENTRAL_SIGNATURE:
            raise ModelFileError(f"{label} is damaged: its zip directory is truncated.")
        fields = _CENTRAL.unpack_from(raw, at)
        name_len, extra_len, comment_len = fields[10:13]
        central.append((raw[at + _CENTRAL.size : at + _CENTRAL.size + name_len], fields))
        at += _CENTRAL.size + name_len + extra_len + comment_len
    if at != stop:
        raise ModelFileError(f"{label} is damaged: its zip directory and end record disagree.")
    members = [_member(raw, name, fields, cd_offset, label) for name, fields in central]
    spans = sorted((m.header_offset, m.end, m.filename) for m in members)
    for (_, end, name), (start, _, other) in zip(spans, spans[1:], strict=False):
        if end > start:
            raise ModelFileError(
                f"{label} is damaged: members {name!r} and {other!r} overlap in the file."
            )
    return Archive(raw, members)


def check_infos(infos: list[Member], label: str) -> dict[str, Member]:
    """Name → member after the per-member checks (duplicates, encryption, method, sizes)."""
    by_name: dict[str, Member] = {}
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


def _inflate(data: memoryview, size: int) -> tuple[bytes, bool]:
    """Raw-deflate ``data`` into at most ``size`` + 1 bytes: (output, whether the stream ended
    exactly at the end of ``data``). The output never grows past the cap, whatever the stream
    says, so a member costs its declared size at most."""
    inflater = zlib.decompressobj(-15)
    pieces: list[bytes] = []
    produced = 0
    for lo in range(0, max(len(data), 1), _INFLATE_CHUNK):
        chunk: bytes | memoryview = data[lo : lo + _INFLATE_CHUNK]
        while chunk:
            piece = inflater.decompress(chunk, size + 1 - produced)  # max_length >= 1
            pieces.append(piece)
            produced += len(piece)
            if produced > size or inflater.eof:
                break
            chunk = inflater.unconsumed_tail
        if produced > size or inflater.eof:
            break
    whole = inflater.eof and not inflater.unused_data and lo + _INFLATE_CHUNK >= len(data)
    return b"".join(pieces), whole


def read_member(archive: Archive, info: Member, label: str) -> bytes:
    """The member's bytes: at most its declared size is ever produced, and the bytes read must
    fill exactly its declared compressed size, inflate to exactly its declared size and match
    its CRC-32."""
    data = memoryview(archive.raw)[info.data_offset : info.data_offset + info.compress_size]
    try:
        if info.compress_type == zipfile.ZIP_STORED:
            out, whole = bytes(data), True
        else:
            out, whole = _inflate(data, info.file_size)
    except zlib.error as exc:
        raise ModelFileError(f"{label} is damaged ({info.filename}): {exc}") from None
    if len(out) != info.file_size or not whole:
        more = "more than" if len(out) > info.file_size else f"{len(out):,} bytes, not"
        raise ModelFileError(
            f"{label} is damaged: {info.filename} inflates to {more} the {info.file_size:,} "
            f"bytes its directory declares (or its compressed size is wrong)."
        )
    if zlib.crc32(out) != info.CRC:
        raise ModelFileError(f"{label} is damaged: {info.filename} fails its CRC-32.")
    return out


def check_skops(raw: bytes, label: str) -> None:
    """Raise :class:`ModelFileError` unless ``raw`` is a skops archive skops may then read: its
    zip passes :func:`open_zip` and :func:`check_infos`, every member inflates to exactly its
    declared size and CRC (one at a time, nothing kept), and its ``schema.json`` has at most
    ``MAX_JSON_BYTES`` (declared, checked before inflating), closed strings and at most
    ``MAX_SKOPS_SCHEMA_DEPTH`` levels (:func:`json_depth`). skops reads the same members, so
    what it inflates and parses is bounded by these declared sizes."""
    with open_zip(raw, label) as archive:
        infos = check_infos(archive.infolist(), label)
        schema = infos.get("schema.json")
        if schema is None:
            raise ModelFileError(f"{label} is not a skops file (it has no schema.json).")
        if schema.file_size > MAX_JSON_BYTES:
            raise ModelFileError(
                f"{label} has a schema.json of {schema.file_size:,} bytes; the limit is "
                f"{MAX_JSON_BYTES:,}."
            )
        for info in infos.values():
            data = read_member(archive, info, label)
            if info is schema:
                depth = json_depth(data, f"{label} (its schema.json)")
                if depth > MAX_SKOPS_SCHEMA_DEPTH:
                    raise ModelFileError(
                        f"{label} has a schema.json nesting {depth} levels deep; the limit is "
                        f"{MAX_SKOPS_SCHEMA_DEPTH}."
                    )


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


def json_depth(raw: bytes, what: str = "The text") -> int:
    """Deepest nesting of ``[`` / ``{`` outside strings, in one linear pass with no recursion
    (vectorised, ``_DEPTH_BLOCK`` bytes at a time, so its working memory stays small whatever
    the size). A ``"`` ends a string unless an odd run of backslashes precedes it, as JSON reads
    it; a string still open at the end raises :class:`ModelFileError` at once."""
    data = np.frombuffer(raw, dtype=np.uint8)
    deepest = level = 0
    inside = odd_run = False  # in a string; an odd run of backslashes ends the previous block
    for lo in range(0, len(data), _DEPTH_BLOCK):
        block = data[lo : lo + _DEPTH_BLOCK]
        at = np.arange(len(block), dtype=np.int32)
        last_other = np.where(block == ord("\\"), np.int32(-1), at)  # -1: a run from the start
        np.maximum.accumulate(last_other, out=last_other)
        run = at - last_other  # backslashes up to here
        if odd_run:
            run[last_other < 0] += 1
        escaped = np.empty(len(block), dtype=bool)
        escaped[0] = odd_run
        escaped[1:] = run[:-1] % 2 == 1
        quotes = np.cumsum((block == ord('"')) & ~escaped, dtype=np.int32)
        outside = quotes % 2 == int(inside)
        steps = ((block == ord("[")) | (block == ord("{"))).astype(np.int8)
        steps -= (block == ord("]")) | (block == ord("}"))
        steps *= outside
        running = np.cumsum(steps, dtype=np.int32)
        deepest = max(deepest, level + int(running.max(initial=0)))
        level, inside, odd_run = level + int(running[-1]), not outside[-1], bool(run[-1] % 2)
    if inside:
        raise ModelFileError(f"{what} is not valid JSON: a string is never closed.")
    return deepest


def load_json(raw: bytes, what: str) -> Any:
    """Parse a JSON member within the limits; :class:`ModelFileError` naming ``what`` otherwise."""
    if len(raw) > MAX_JSON_BYTES:
        raise ModelFileError(f"{what} has {len(raw):,} bytes; the limit is {MAX_JSON_BYTES:,}.")
    depth = json_depth(raw, what)
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


@dataclass(frozen=True)
class ManifestRules:
    """What a manifest must say: its format tag and version, its schema (a callable that raises
    :class:`ModelFileError`) and how its writer serialised it for ``manifest_sha256``."""

    fmt: str
    version: int
    kind: str
    schema: Callable[[Any, str], None]
    dumps: Callable[[Any], bytes]
    error: type[ModelFileError] = ModelFileError
    advice: str = ""


def check_manifest(raw: bytes, label: str, rules: ManifestRules) -> dict[str, Any]:
    """The verified manifest: format tag, version, schema and ``manifest_sha256`` (the SHA-256
    of the rest), in that order, each refused in words with ``rules.error``."""
    manifest = load_json(raw, f"{label}'s manifest")
    if not isinstance(manifest, dict) or manifest.get("format") != rules.fmt:
        raise rules.error(f"{label} is not a fairengine {rules.kind} file (wrong format tag).")
    if manifest.get("format_version") != rules.version:
        raise rules.error(
            f"{label} has format version {str(manifest.get('format_version'))[:20]!r}; this "
            f"fairengine reads version {rules.version}.{rules.advice}"
        )
    rules.schema(manifest, "manifest")
    claimed = manifest.pop("manifest_sha256")
    if claimed != hashlib.sha256(rules.dumps(manifest)).hexdigest():
        raise rules.error(f"{label} failed its checksum: the manifest was modified.")
    manifest["manifest_sha256"] = claimed
    return manifest


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
    except Exception as exc:
        raise ModelFileError(f"{what} has an unreadable array header: {exc}") from None
    if dtype.kind not in ARRAY_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise ModelFileError(f"{what} has dtype {dtype}; model files hold plain numbers only.")
    if len(shape) > MAX_ARRAY_NDIM or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
    ):
        raise ModelFileError(f"{what} declares an invalid shape {shape!r}.")
    count = math.prod(shape)
    offset = stream.tell()
    if count * dtype.itemsize != len(data) - offset:
        raise ModelFileError(
            f"{what} declares shape {shape} of {dtype} ({count * dtype.itemsize:,} bytes) but "
            f"holds {len(data) - offset:,} bytes."
        )
    flat = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
    return flat.reshape(shape, order="F" if fortran else "C").copy()
