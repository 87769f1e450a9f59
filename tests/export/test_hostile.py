"""Hostile model files: every malformed, foreign or forged file raises ModelFileError, cheaply.

One test per class of attack on exported model files (on real shipped model files, with checksums
recomputed
where the attack needs it), a tracemalloc bound on memory, and a hypothesis fuzz test that mutates
real files of every model type and asserts that only ModelFileError ever escapes.
"""

from __future__ import annotations

import io
import json
import struct
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairengine.export import ModelFileError, load_model, model_bytes, read_manifest, safe
from fairengine.methods.registry import model_type_names
from tests.export.factories import FACTORIES, VARIANTS
from tests.export.hostile import (
    deflated,
    forge,
    lying_zip,
    members_of,
    npy_bytes,
    peak_rss_in_child,
    permuted_files,
    raw_zip,
    real_files,
    time_loads_in_child,
    zip_bytes,
)

FILES = real_files()


@pytest.fixture(scope="module")
def linear() -> bytes:
    return FILES["linear_classifier"].read_bytes()


def test_real_files_cover_every_model_type() -> None:
    assert set(FILES) == model_type_names()
    for path in FILES.values():
        load_model(path)  # the schemas accept real state of every type


def _refused(raw: bytes, match: str) -> None:
    with pytest.raises(ModelFileError, match=match):
        load_model(raw)


# ----------------------------------------------------------------------------- zip container


def test_encrypted_flag_is_refused(linear) -> None:
    raw = bytearray(linear)
    central = raw.index(b"PK\x01\x02")  # first central-directory entry; flags at offset 8
    raw[central + 8] |= 0x01
    _refused(bytes(raw), "local header of 'manifest.json' disagrees")
    raw[6] |= 0x01  # its local header (flags at offset 6) says so too
    _refused(bytes(raw), "encrypted")


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_duplicate_member_names_are_refused(linear) -> None:
    members = members_of(linear)
    items = list(members.items())
    forged = [*items, ("state.json", b'{"other": "copy"}')]  # unzip shows the first copy
    _refused(zip_bytes(forged), "two members named 'state.json'")


def test_many_members_are_refused_before_parsing() -> None:
    raw = zip_bytes([(f"arrays/a{i}.npy", b"") for i in range(20_000)], deflate=False)
    assert len(raw) < 3 * 2**20
    tracemalloc.start()
    try:
        _refused(raw, "declares 20,000 members")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * 2**20  # nothing is built per member


def test_a_directory_larger_than_its_count_says_is_refused() -> None:
    raw = bytearray(zip_bytes([(f"arrays/a{i}.npy", b"") for i in range(30_000)], deflate=False))
    end = raw.rindex(b"PK\x05\x06")
    struct.pack_into("<HH", raw, end + 8, 1, 1)  # "one member", but a 1.8 MB directory
    forged = bytes(raw)
    tracemalloc.start()
    try:
        _refused(forged, r"zip directory of 1,878,890 bytes; a model file.s is at most")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20


def test_declared_sizes_beyond_the_limits_are_refused(linear, monkeypatch) -> None:
    monkeypatch.setattr(safe, "MAX_TOTAL_BYTES", 5_000)
    _refused(linear, "bytes of content; the limit is 5,000")
    monkeypatch.setattr(safe, "MAX_MEMBER_BYTES", 1_000)
    _refused(linear, "declares a member of")


def test_zip_bomb_is_refused_without_inflating(monkeypatch) -> None:
    monkeypatch.setattr(safe, "MAX_MEMBER_BYTES", 16 * 2**20)  # as the 256 MiB limit, cheaper
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", b"{}")
        with archive.open("state.json", "w") as handle:  # 20 MiB of zeros, ~20 kB on disk
            block = bytes(2**20)
            for _ in range(20):
                handle.write(block)
    raw = buffer.getvalue()
    assert len(raw) < 2**20
    tracemalloc.start()
    try:
        _refused(raw, "declares a member of 20,971,520 bytes")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * len(raw)


def test_a_member_longer_than_declared_is_refused(linear) -> None:
    raw = bytearray(zip_bytes(members_of(linear), deflate=False))
    central = raw.index(b"PK\x01\x02")  # first entry: uncompressed size at offset 24
    size = struct.unpack_from("<L", raw, central + 24)[0]
    struct.pack_into("<L", raw, central + 24, size - 10)
    _refused(bytes(raw), "damaged")


def test_end_record_pointing_outside_the_file_is_refused(linear) -> None:
    raw = bytearray(linear)
    end = raw.rindex(b"PK\x05\x06")
    struct.pack_into("<L", raw, end + 16, len(raw) * 4)  # central directory offset
    _refused(bytes(raw), "outside the file|not a zip")


# ----------------------------------------------------------------------------- JSON


def _manifest_text(raw: bytes) -> str:
    return members_of(raw)["manifest.json"].decode()


def test_huge_integer_in_the_manifest_is_refused(linear) -> None:
    text = _manifest_text(linear).replace('"format_version": 1', '"format_version": 1' + "0" * 5000)
    _refused(forge(members_of(linear), raw_manifest=text.encode()), "5001 digits")


def test_deeply_nested_manifest_is_refused(linear) -> None:
    text = _manifest_text(linear)
    nested = "[" * 100_000 + "]" * 100_000
    text = text.replace('"metadata": {', f'"metadata": {{"deep": {nested}, ', 1)
    _refused(forge(members_of(linear), raw_manifest=text.encode()), "nests 100002 levels deep")


@pytest.mark.parametrize(
    ("value", "match"),
    [("Infinity", "constant Infinity"), ("NaN", "constant NaN"), ("1e999", "overflows")],
)
def test_non_finite_numbers_are_refused(linear, value, match) -> None:
    members = members_of(linear)
    state = json.loads(members["state.json"])
    text = json.dumps({**state, "intercept": "X"}).replace('"X"', value)
    members["state.json"] = text.encode()
    _refused(forge(members), match)


def test_duplicate_json_keys_are_refused(linear) -> None:
    members = members_of(linear)
    members["state.json"] = members["state.json"].replace(
        b'"intercept"', b'"intercept": 5.0, "intercept"', 1
    )
    _refused(forge(members), "appears twice")


def test_infinity_in_an_integer_field_is_refused() -> None:
    members = members_of(FILES["maxent"].read_bytes())
    text = members["state.json"].decode()
    members["state.json"] = text.replace('"n_bins": ', '"n_bins": -Infinity, "x": ', 1).encode()
    _refused(forge(members), "Infinity")
    state = json.loads(text)
    members["state.json"] = json.dumps({**state, "n_bins": 4.5}).encode()
    _refused(forge(members), r"state.n_bins should be an integer")


# ----------------------------------------------------------------------------- arrays


@pytest.mark.parametrize(
    ("array", "match"),
    [
        (npy_bytes("<f8", (10**12,)), "declares shape"),
        (npy_bytes("<f8", (2**40, 2**40, 2**40)), "declares shape"),
        (npy_bytes("<f8", (-1,)), "invalid shape"),
        (npy_bytes("|O", (1,), b"\x80\x04N."), "plain numbers"),
        (npy_bytes("<c16", (1,), bytes(16)), "plain numbers"),
        (npy_bytes([("a", "<f8")], (1,), bytes(8)), "plain numbers"),
        (b"\x93NUMPY\x01\x00\xff\xff" + b"{" * 70_000, "unreadable array header"),
        (npy_bytes("<f8", (1,)) + b"\x00" * 9, "holds 9 bytes"),
    ],
)
def test_forged_arrays_are_refused_before_allocation(linear, array, match) -> None:
    members = members_of(linear)
    members["arrays/coef.npy"] = array
    tracemalloc.start()
    try:
        _refused(forge(members), match)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 * 2**20


# ----------------------------------------------------------------------------- state schema


def _with_state(raw: bytes, change) -> bytes:
    members = members_of(raw)
    state = json.loads(members["state.json"])
    change(state)
    members["state.json"] = json.dumps(state).encode()
    return forge(members)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda s: s.pop("intercept"), "state lacks intercept"),
        (lambda s: s.update(extra=1), "unexpected key 'extra'"),
        (lambda s: s.update(intercept="0.5"), "intercept should be a finite number"),
        (lambda s: s["encoder"].update(columns=[1, 2]), r"columns\[0\] should be a string"),
        (lambda s: s["encoder"].update(median=[]), "one per numeric column"),
        (lambda s: s["encoder"]["categorical"].append(["age", ["x"]]), "distinct columns"),
    ],
)
def test_state_outside_the_schema_is_refused(linear, change, match) -> None:
    _refused(_with_state(linear, change), match)


def test_state_whose_shapes_do_not_fit_is_refused(linear) -> None:
    members = members_of(linear)
    buffer = io.BytesIO()
    np.save(buffer, np.zeros(3))  # the encoder makes ~100 features
    members["arrays/coef.npy"] = buffer.getvalue()
    _refused(forge(members), r"array .coef. has shape \(3,\); axis 0 should be n_features = ")


def test_type_confusion_is_refused(linear) -> None:
    # noisy_groups stores a linear classifier plus optional fields: that state is valid for it
    for other in sorted(model_type_names() - {"linear_classifier", "noisy_groups"}):
        manifest = read_manifest(linear)
        manifest["model_type"] = other
        with pytest.raises(ModelFileError, match="state is invalid"):
            load_model(forge(members_of(linear), manifest))


@pytest.mark.parametrize(
    "name", ["wsgiref.simple_server", "fairengine.methods.maxent.model", "maxent_planted", "os"]
)
def test_a_type_no_method_declares_is_refused_and_nothing_it_names_is_imported(
    linear, name
) -> None:
    """A file chooses among declared types only: a module path or a name sharing a method's
    first word is an unknown type, and the module it names is never imported."""
    import sys

    assert "wsgiref.simple_server" not in sys.modules
    manifest = read_manifest(linear)
    manifest["model_type"] = name
    with pytest.raises(ModelFileError, match="unknown model type"):
        load_model(forge(members_of(linear), manifest))
    assert "wsgiref.simple_server" not in sys.modules


def test_missing_state_is_refused(linear) -> None:
    members = members_of(linear)
    del members["state.json"]
    _refused(forge(members), "no state.json")


# ----------------------------------------------------------------------------- memory


@pytest.mark.parametrize("model_type", sorted(FILES))
def test_memory_of_a_real_load_is_bounded(model_type) -> None:
    """Peak traced memory under 10x the declared content (plus a fixed 256 KiB for the probe
    row's DataFrame); maxent's file is the largest (~2.6 MiB of arrays)."""
    raw = FILES[model_type].read_bytes()
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        declared = sum(info.file_size for info in archive.infolist())
    load_model(raw)  # imports outside the measurement
    tracemalloc.start()
    try:
        load_model(raw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * declared + 2**18, (peak, declared)


# ----------------------------------------------------------------------------- fuzz

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
_DTYPES = ["<f8", "<f4", "<i8", "|u1", "|b1", "<c16", "<U2", "|S2"]


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


def _replace(value, path, new):
    if not path:
        return new
    head, *rest = path
    copy = dict(value) if isinstance(value, dict) else list(value)
    if new is _DELETE and not rest:
        del copy[head]
        return copy
    copy[head] = _replace(value[head], rest, new)
    return copy


_DELETE = object()


def _mutate(raw: bytes, data) -> bytes:
    kind = data.draw(st.sampled_from(["flip", "truncate", "state", "array", "manifest"]))
    if kind == "flip":
        out = bytearray(raw)
        for _ in range(data.draw(st.integers(1, 4))):
            out[data.draw(st.integers(0, len(raw) - 1))] ^= data.draw(st.integers(1, 255))
        return bytes(out)
    if kind == "truncate":
        return raw[: data.draw(st.integers(0, len(raw) - 1))]
    members = members_of(raw)
    if kind == "manifest":
        manifest = read_manifest(raw)
        field = data.draw(st.sampled_from(["model_type", "format_version", "metadata", "created"]))
        manifest[field] = data.draw(st.sampled_from(sorted(model_type_names())) | _JSON)
        return forge(members, manifest)
    if kind == "state":
        state = json.loads(members["state.json"])
        path = data.draw(st.sampled_from(list(_paths(state))))
        new = _DELETE if path and data.draw(st.booleans()) else data.draw(_JSON)
        members["state.json"] = json.dumps(_replace(state, path, new)).encode()
        return forge(members)
    names = sorted(n for n in members if n.startswith("arrays/"))
    name = data.draw(st.sampled_from(names))
    if data.draw(st.booleans()):
        del members[name]
    else:
        dtype = np.dtype(data.draw(st.sampled_from(_DTYPES)))
        shape = tuple(data.draw(st.lists(st.integers(0, 4), max_size=3)))
        buffer = io.BytesIO()
        np.save(buffer, np.zeros(shape, dtype=dtype))
        members[name] = buffer.getvalue()
    return forge(members)


@pytest.mark.parametrize("model_type", sorted(FILES))
@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_fuzzed_real_files_raise_only_model_file_error(model_type, data) -> None:
    raw = _mutate(FILES[model_type].read_bytes(), data)
    try:
        model = load_model(raw)
    except ModelFileError:
        return
    assert model.features  # an intact or equivalent file: it loaded and predicts a probe row


def test_stored_scikit_learn_estimators_get_the_same_limits() -> None:
    """A fair_regression model with a scikit-learn base learner keeps it as skops bytes (a zip):
    a forged payload is refused by the zip limits before skops reads it."""
    from sklearn.linear_model import Ridge

    from fairengine.data import from_frame, load_dataset
    from fairengine.data.encoding import FeatureEncoder
    from fairengine.export import model_bytes
    from fairengine.methods.fair_regression import FairRegressor
    from fairengine.methods.fair_regression.model import FairRegressionModel

    frame = load_dataset("law_school").frame.sample(300, random_state=0)
    task = from_frame(frame, target="ugpa_scaled", sensitive=["race"], kind="regression")
    encoder = FeatureEncoder().fit(task.X)
    regressor = FairRegressor(eps=0.05, n_levels=10, base_estimator=Ridge(), max_iter=3)
    regressor.fit(encoder.transform(task.X), task.y, task.groups)
    raw = model_bytes(FairRegressionModel(encoder, regressor))
    load_model(raw)
    members = members_of(raw)
    many = zip_bytes([(f"x{i}", b"") for i in range(5_000)], deflate=False)
    for payload, match in ((many, "declares 5,000 members"), (b"garbage" * 9, "not a zip")):
        buffer = io.BytesIO()
        np.save(buffer, np.frombuffer(payload, dtype=np.uint8))
        members["arrays/base_estimator_skops.npy"] = buffer.getvalue()
        _refused(forge(members), f"stored estimator base_estimator_skops .*{match}")


# ----------------------------------------------------------------------------- lying zip sizes


def test_a_zip_that_lies_about_its_sizes_is_refused_before_inflating(linear) -> None:
    """state.json's central directory and local header agree on its true size and CRC, but its
    stream inflates to 1 GiB: reading stops at the declared size, in a child whose whole peak
    resident memory (interpreter and imports included) stays under 200 MB."""
    raw = lying_zip(linear, 2**30)
    assert len(raw) < 8 * 2**20
    peak, outcome = peak_rss_in_child(raw)
    print(
        f"lying zip ({len(raw) / 2**20:.1f} MB inflating to 1 GiB): peak RSS {peak / 2**20:.0f} MiB"
    )
    assert outcome.startswith("refused:") and "inflates to more than" in outcome, outcome
    assert peak < 200 * 2**20


def _entries(raw: bytes) -> list[dict]:
    return [
        {"name": name, "data": zlib.compress(plain)[2:-4], "plain": plain}
        for name, plain in members_of(raw).items()
    ]


def _traced_refusal(raw: bytes, match: str) -> int:
    tracemalloc.start()
    try:
        _refused(raw, match)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_an_honest_raw_zip_loads(linear) -> None:
    """The hand-written zips of these tests are read like zipfile's own."""
    load_model(raw_zip(_entries(linear)))


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"central": {"size": 10}}, "local header of 'state.json' disagrees"),
        ({"local": {"csize": 3}}, "local header of 'state.json' disagrees"),
        ({"local": {"crc": 1}}, "local header of 'state.json' disagrees"),
        ({"local": {"name": b"state.jsoN"}}, "local header of 'state.json' disagrees"),
        ({"local": {"method": 0}}, "local header of 'state.json' disagrees"),
        ({"central": {"size": 10}, "local": {"size": 10}}, "inflates to more than the 10 bytes"),
        ({"central": {"crc": 7}, "local": {"crc": 7}}, "state.json fails its CRC-32"),
        ({"central": {"size": 10**6}, "local": {"size": 10**6}}, "inflates to .* not the"),
    ],
)
def test_headers_and_bytes_that_disagree_are_refused(linear, change, match) -> None:
    entries = _entries(linear)
    state = next(e for e in entries if e["name"] == "state.json")
    state.update(change)
    assert _traced_refusal(raw_zip(entries), match) < 2 * 2**20


def test_a_compressed_size_that_lies_is_refused(linear) -> None:
    entries = _entries(linear)
    state = next(e for e in entries if e["name"] == "state.json")
    csize = len(state["data"])
    for wrong in (csize - 5, csize + 5):  # the stream ends after / before the declared bytes
        state["central"] = state["local"] = {"csize": wrong}
        _refused(raw_zip(entries), "its compressed size is wrong|disagrees|damaged")


def test_a_data_descriptor_that_disagrees_is_refused(linear) -> None:
    entries = _entries(linear)
    state = next(e for e in entries if e["name"] == "state.json")
    crc, size = zlib.crc32(state["plain"]), len(state["plain"])
    state["central"] = {"flags": 0x08}
    state["local"] = {"flags": 0x08, "crc": 0, "csize": 0, "size": 0}
    truth = struct.pack("<4s3L", b"PK\x07\x08", crc, len(state["data"]), size)
    state["after"] = truth
    load_model(raw_zip(entries))  # a descriptor that agrees is read as zipfile reads it
    state["after"] = struct.pack("<4s3L", b"PK\x07\x08", crc, len(state["data"]), size + 1)
    _refused(raw_zip(entries), "data descriptor of 'state.json' disagrees")


def test_overlapping_members_are_refused(linear) -> None:
    """A member stored inside another member's bytes (two names for one record)."""
    inner = raw_zip([{"name": "card.md", "data": b"hello", "method": 0}])
    inner_record = inner[: inner.index(b"PK\x01\x02")]
    entries = _entries(linear)
    first = {"name": "arrays/x.npy", "data": inner_record, "method": 0}
    pointer = {
        "name": "card.md",
        "data": b"hello",
        "method": 0,
        "no_local": True,
        "central": {"offset": 30 + len("arrays/x.npy")},
    }
    _refused(raw_zip([first, pointer, *entries]), "overlap")


def test_bytes_around_the_zip_are_refused(linear) -> None:
    _refused(b"junk" + linear, "does not close the file|damaged|local header")
    _refused(linear + b"junk", "not a zip|does not close the file")


def test_a_bomb_within_the_declared_sizes_costs_the_declared_size(linear) -> None:
    """A member that declares its true 64 MiB (within the limits) is inflated, and costs about
    its declared size: the peak stays within a few times that."""
    members = members_of(linear)
    declared = 64 * 2**20
    entries = [
        {"name": n, "data": zlib.compress(d)[2:-4], "plain": d}
        for n, d in members.items()
        if n != "state.json"
    ]
    plain = bytes(declared)
    entries.append({"name": "state.json", "data": deflated(declared), "plain": plain})
    raw = raw_zip(entries)
    del plain
    peak, outcome = peak_rss_in_child(raw)
    print(
        f"bomb within limits (64 MiB declared, {len(raw) / 2**10:.0f} kB): "
        f"peak RSS {peak / 2**20:.0f} MiB"
    )
    assert outcome.startswith("refused:"), outcome
    assert peak < 3 * declared + 100 * 2**20


# ----------------------------------------------------------------------------- arrays that misfit


def _permutation_cases() -> list[str]:
    return sorted(FACTORIES) + sorted(VARIANTS)


@pytest.mark.parametrize("case", _permutation_cases())
def test_arrays_permuted_among_themselves_are_refused_or_load_quickly(case) -> None:
    """Every pair of a real model's arrays swapped (and random permutations), checksums
    recomputed: each file is refused or loads, in well under the 5 s safety bound (CPU time of
    the load alone, in a child killed if a load never ends)."""
    model, _ = {**FACTORIES, **VARIANTS}[case]()
    files = permuted_files(model_bytes(model))
    if not files:
        pytest.skip(f"{case} stores one array: nothing to permute")
    rows = time_loads_in_child(files, per_file=5.0)
    escaped = [r for r in rows if r["outcome"].startswith("ESCAPED")]
    assert not escaped, escaped[:3]
    worst = max(rows, key=lambda r: r["seconds"])
    refused = sum(r["outcome"].startswith("refused") for r in rows)
    print(f"{case}: {len(rows)} files, {refused} refused, slowest {worst['seconds']:.3f} s "
          f"({worst['label']}: {worst['outcome'][:80]})")  # fmt: skip
    assert refused > 0
    assert worst["seconds"] < 5.0, worst


def _with_arrays(raw: bytes, **changes: np.ndarray) -> bytes:
    members = members_of(raw)
    for name, array in changes.items():
        buffer = io.BytesIO()
        np.save(buffer, array)
        members[f"arrays/{name}.npy"] = buffer.getvalue()
    return forge(members)


def _array(raw: bytes, name: str) -> np.ndarray:
    return np.load(io.BytesIO(members_of(raw)[f"arrays/{name}.npy"]))


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda a: {"clf_left": a["clf_feature"]}, "do not fit together"),  # cycles
        (lambda a: {"clf_left": np.where(a["clf_left"] > 0, 0, -1)}, "before its parent"),
        (lambda a: {"clf_right": np.where(a["clf_left"] > 0, a["clf_left"], -1)}, "two parents"),
        (lambda a: {"clf_right": np.where(a["clf_left"] > 0, 10**9, -1)}, "past the last node"),
        (lambda a: {"clf_feature": np.where(a["clf_left"] > 0, 10**6, -2)}, "tests a feature"),
        (lambda a: {"clf_threshold": np.full(len(a["clf_left"]), np.nan)}, "finite"),
        (lambda a: {"clf_prob": a["clf_prob"] + 2}, r"outside \[0, 1\]"),
        (lambda a: {"rows": a["rows"] + 50}, "codes outside their feature's levels"),
        (lambda a: {"lambda": a["lambda"][:-1]}, "axis 0 should be d ="),
        (lambda a: {"weights": -a["weights"]}, "outside"),
    ],
)
def test_maxent_arrays_that_do_not_fit_are_refused(change, match) -> None:
    raw = FILES["maxent"].read_bytes()
    names = ["clf_left", "clf_right", "clf_feature", "clf_threshold", "clf_prob", "rows"]
    arrays = {n: _array(raw, n) for n in [*names, "lambda", "weights"]}
    _refused(_with_arrays(raw, **change(arrays)), match)


def test_a_maxent_domain_beyond_the_limits_is_refused() -> None:
    raw = FILES["maxent"].read_bytes()

    def wide(state):
        state["domain"]["features"][0]["levels"] = [str(i) for i in range(9000)]
        state["domain"]["features"][0]["edges"] = []

    _refused(_with_state(raw, wide), "at most 8,192 coordinates")
