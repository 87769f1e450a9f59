"""Untrusted byte streams are checked in linear time and within fixed memory: JSON strings and
nesting (one scan), special files and oversized files (refused before reading), skops archives
(read as model files are before skops sees them), tree ensembles (depth and size bounded before
anything predicts) and forged parameters that would predict NaN.

The time bounds are wide on purpose: each hostile input is large enough that the quadratic
check it replaces would take hours, so seconds separate the two without flakiness.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairengine.audit.comparison import ComparisonError, load_comparison
from fairengine.audit.sources import from_model_file
from fairengine.data.errors import DataError
from fairengine.export import ModelFileError, load_model, safe
from fairengine.models import schemas, trees
from tests.export.hostile import forge, members_of, real_files
from tests.hostile_files import (
    chain_tree_pipeline,
    escaped_quotes,
    pipeline_frame,
    quote_bomb_comparison,
    quote_bomb_model,
    skops_bomb,
)

#: CPU seconds a refusal may take: generous, against hours for the quadratic checks.
BOUND = 10.0
_ROOT = Path(__file__).resolve().parents[2]


def _refused_quickly(call, error, match: str) -> None:
    start = time.process_time()
    with pytest.raises(error, match=match):
        call()
    assert time.process_time() - start < BOUND


# ----------------------------------------------------------------------------- JSON scan


def _depth(value) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


_TRICKY = st.text(alphabet='ab"\\[]{}\n\u00e9', max_size=6)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63) | _TRICKY,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TRICKY, inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(value=_JSON, block=st.integers(1, 9))
def test_the_scan_counts_nesting_as_the_parser_reads_it(value, block) -> None:
    """Strings full of quotes, backslashes and brackets, cut into blocks anywhere."""
    raw = json.dumps(value, ensure_ascii=False).encode()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(safe, "_DEPTH_BLOCK", block)
        assert safe.json_depth(raw) == _depth(value)
    if _depth(value) <= safe.MAX_JSON_DEPTH:
        assert safe.load_json(raw, "x") == value


@pytest.mark.parametrize(
    "raw",
    [
        escaped_quotes(8 * 2**20),  # the quadratic regex: days
        b'"' + b"\\" * (8 * 2**20),
        b'["' + b'\\\\\\"[{' * (2**20),
        b'{"a": "b", "c": "' + b"[" * (8 * 2**20),
    ],
    ids=["escaped quotes", "backslashes", "escape runs and brackets", "brackets in a string"],
)
def test_an_unterminated_string_is_refused_at_once(raw) -> None:
    _refused_quickly(lambda: safe.load_json(raw, "The file"), ModelFileError, "never closed")


def test_brackets_inside_strings_are_not_nesting() -> None:
    raw = json.dumps({"a": "[" * 100_000 + '"\\' * 1000, "b": ["{" * 5000]}).encode()
    assert safe.json_depth(raw) == 2 and safe.load_json(raw, "x")["b"] == ["{" * 5000]


def test_a_tiny_model_file_with_an_open_string_is_refused_at_once() -> None:
    raw = quote_bomb_model(4 * 2**20)  # a few KB on disk; the manifest inflates to 4 MiB
    assert len(raw) < 16_000
    _refused_quickly(lambda: load_model(raw), ModelFileError, "never closed")


def test_a_comparison_with_an_open_string_is_refused_at_once(tmp_path) -> None:
    raw = quote_bomb_comparison(8 * 2**20)
    _refused_quickly(lambda: load_comparison(raw), ComparisonError, "never closed")
    path = tmp_path / "c.json"
    path.write_bytes(raw)
    _refused_quickly(lambda: load_comparison(path), ComparisonError, "never closed")


def test_json_too_large_to_hold_as_objects_is_refused_before_parsing() -> None:
    raw = b"[" + b"[]," * (safe.MAX_JSON_BYTES // 3) + b"[]]"  # some 30 times its size parsed
    _refused_quickly(lambda: safe.load_json(raw, "The file"), ModelFileError, "the limit is")


# ----------------------------------------------------------------------------- special files


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def test_devices_and_pipes_are_refused_before_reading(fifo) -> None:
    for path in (Path("/dev/zero"), fifo):  # reading either would never end (or block)
        with pytest.raises(ModelFileError, match="not a regular file"):
            load_model(path)
        with pytest.raises(ComparisonError, match="not a regular file"):
            load_comparison(path)
        with pytest.raises(DataError, match="not a regular file"):
            from_model_file(pipeline_frame(50), path)


def test_an_oversized_file_is_refused_by_its_size(tmp_path, monkeypatch) -> None:
    big = tmp_path / "big.fairmodel"
    with big.open("wb") as handle:
        handle.truncate(safe.MAX_FILE_BYTES + 1)
    with pytest.raises(ModelFileError, match="the limit is"):
        load_model(big)
    with pytest.raises(OSError, match="the limit is 10"):
        safe.read_regular(big, 10)
    assert safe.read_regular(big, safe.MAX_FILE_BYTES + 1)[:4] == b"\0" * 4


# ----------------------------------------------------------------------------- skops


@pytest.fixture(scope="module")
def bomb_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bomb") / "bomb.skops"
    path.write_bytes(skops_bomb())
    return path


_PEAK = """
import resource, sys
from fairengine.audit.sources import from_model_file
from fairengine.data.errors import DataError
from tests.hostile_files import pipeline_frame
import skops.io, sklearn.ensemble  # imported before the baseline
task = pipeline_frame(200)
raw = open(sys.argv[1], "rb").read()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    from_model_file(task, raw, "upload.skops")
    print("loaded")
except DataError as exc:
    print(exc)
print(before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def test_a_skops_zip_bomb_is_refused_without_inflating_it(bomb_path) -> None:
    """About 1 MB on disk, 1 GiB of schema inflated: refused by its declared sizes, in a child
    process whose peak memory grows by a small fraction of the bomb."""
    assert bomb_path.stat().st_size < 1.5 * 2**20
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(bomb_path)],
        capture_output=True, text=True, cwd=_ROOT, timeout=300, check=True,
        env={**os.environ, "PYTHONPATH": str(_ROOT)},
    )  # fmt: skip
    message, peaks = done.stdout.strip().splitlines()[-2:]
    before, after = (int(v) * 1024 for v in peaks.split())
    assert "schema.json" in message and "the limit is" in message
    assert after - before < 100 * 2**20


def test_a_bomb_within_the_member_limit_is_refused_by_its_schema_size() -> None:
    raw = skops_bomb(inflated=64 * 2**20)  # under the member limit, over the schema limit
    _refused_quickly(
        lambda: from_model_file(pipeline_frame(50), raw, "x.skops"), DataError, "schema.json"
    )


@pytest.mark.parametrize(
    ("schema", "match"),
    [(b"[" * 100 + b"]" * 100, "nesting 100 levels"), (escaped_quotes(8 * 2**20), "never closed")],
)
def test_a_skops_schema_too_deep_or_never_closed_is_refused_before_skops(schema, match) -> None:
    import skops.io as sio

    from tests.hostile_files import deflated_zip, small_pipeline

    with zipfile.ZipFile(io.BytesIO(sio.dumps(small_pipeline()))) as real:
        members = {n: real.read(n) for n in real.namelist()}
    raw = deflated_zip({**members, "schema.json": schema})
    _refused_quickly(lambda: from_model_file(pipeline_frame(50), raw, "x.skops"), DataError, match)


@pytest.mark.parametrize("kind", ["forest", "hgb"])
def test_chain_shaped_trees_are_refused_before_predicting(kind) -> None:
    raw = chain_tree_pipeline(kind, depth=5_000, n_trees=20)
    task = pipeline_frame(2_000)
    _refused_quickly(
        lambda: from_model_file(task, raw, "x.skops"),
        DataError,
        f"deeper than {trees.MAX_TREE_DEPTH}",
    )


@pytest.mark.parametrize("kind", ["forest", "hgb"])
def test_many_shallow_chains_are_refused_by_the_nodes_a_row_walks(kind, monkeypatch) -> None:
    monkeypatch.setattr(trees, "MAX_PATH_NODES", 1_000)
    raw = chain_tree_pipeline(kind, depth=100, n_trees=12)  # each within the depth limit
    task = pipeline_frame(200)
    _refused_quickly(lambda: from_model_file(task, raw, "x.skops"), DataError, "row walks")


@pytest.mark.parametrize("kind", ["forest", "hgb"])
def test_chains_within_the_limits_load_and_predict(kind) -> None:
    """The same construction below the limits is an honest (if odd) model: it loads."""
    outside = from_model_file(pipeline_frame(200), chain_tree_pipeline(kind, depth=50, n_trees=3))
    assert np.all(np.isfinite(outside.values))


def test_the_codec_refuses_a_chain_past_the_depth_limit() -> None:
    def chain(depth: int) -> dict[str, np.ndarray]:
        inner = np.arange(0, 2 * depth, 2)
        left, right = np.full(2 * depth + 1, -1), np.full(2 * depth + 1, -1)
        left[inner], right[inner] = inner + 1, inner + 2
        return {"left": left, "right": right}

    assert trees.check_structure(**chain(trees.MAX_TREE_DEPTH)).tolist() == [trees.MAX_TREE_DEPTH]
    start = time.process_time()
    with pytest.raises(ValueError, match="deeper than"):
        trees.check_structure(**chain(2_000_000))
    assert time.process_time() - start < BOUND


# ----------------------------------------------------------------------------- forged numbers


@pytest.mark.parametrize("model_type", sorted(real_files()))
def test_forged_parameters_that_overflow_are_refused(model_type) -> None:
    """Every float array of a real file of each type set to huge numbers of both signs: the
    file is refused, or the model it rebuilds predicts finite numbers."""
    members = members_of(real_files()[model_type].read_bytes())
    encoder = json.loads(members["state.json"])["encoder"]
    for name in sorted(n for n in members if n.startswith("arrays/")):
        array = np.load(io.BytesIO(members[name]))
        if array.dtype.kind != "f" or not array.size:
            continue
        for big in (1e308, 1e200):
            forged = array.copy()
            forged.flat[:] = big * np.where(np.arange(forged.size) % 2, -1, 1)
            buffer = io.BytesIO()
            np.save(buffer, forged)
            try:
                model = load_model(forge({**members, name: buffer.getvalue()}))
            except ModelFileError:
                continue
            probe = schemas.probe_frame(encoder).assign(**getattr(model, "probe_inputs", dict)())
            with np.errstate(all="ignore"):
                assert np.all(np.isfinite(np.asarray(model.predict_score(probe), dtype=float)))
