"""Multiaccurate proxies' fitted Algorithm 4 proxy kept in the run store: a later job (another
process, another ε or α) reuses it with a result identical to a fresh fit, and only an intact,
well-formed entry is ever served (a damaged or forged one is refitted)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairengine.data import load_dataset
from fairengine.frontier import task_key
from fairengine.frontier.runs import TABLES_METHOD, RunStore, compute_and_store
from fairengine.methods import fitted, get_method
from fairengine.methods.multiaccurate_proxy import pipeline

from .run_equality import assert_same

FIRST = {"eps": 0.01}
MOVED = {"eps": 0.02, "alpha": 0.3}


@pytest.fixture(scope="module", params=[0, 1], ids=["split0", "split1"])
def split(request):
    return load_dataset("german_credit").split(random_state=request.param)


@pytest.fixture(scope="module")
def one_split():
    return load_dataset("german_credit").split()


@pytest.fixture
def fits(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """The knobs of every Algorithm 4 proxy actually fitted (not served by a cache)."""
    computed: list[dict] = []
    real = pipeline.fit_proxy

    def counting(X, z, tasks, knobs):
        if knobs["proxy"] == "multiaccurate":
            computed.append(dict(knobs))
        return real(X, z, tasks, knobs)

    monkeypatch.setattr(pipeline, "fit_proxy", counting)
    _fresh_process()
    return computed


def _fresh_process() -> None:
    """What a new job process starts with: no proxy, encoder or baseline fit in memory."""
    pipeline._PROXY_CACHE.clear()
    fitted._FITS.clear()


def _run(store: RunStore | None, train, test, knobs: dict):
    _fresh_process()
    return compute_and_store(store, "multiaccurate_proxy", train, test, knobs)


def _shown(result) -> dict:
    """Everything of a run but its timing (the proxy's fit seconds included: a stored proxy
    reports the seconds its fit took then)."""
    summary = {k: v for k, v in result.artifacts["summary"].items() if k != "proxy_seconds"}
    fields = ("method", "knobs", "metrics", "baselines", "checks", "model")
    return {
        **{f: getattr(result, f) for f in fields},
        "artifacts": {**result.artifacts, "summary": summary},
    }


def _proxy_files(store: RunStore, train, test) -> list[Path]:
    folder = store.path(task_key(train, test), TABLES_METHOD, "x").parent
    return sorted(folder.glob("*.fairrun"))


def test_a_later_job_reuses_the_stored_proxy_with_an_identical_result(
    tmp_path: Path, split, fits: list
) -> None:
    train, test = split
    store = RunStore(tmp_path)
    _run(store, train, test, FIRST)
    assert len(fits) == 1
    assert len(_proxy_files(store, train, test)) == 1
    moved = _run(store, train, test, MOVED)  # another process, another ε and α
    assert len(fits) == 1  # served from the store: the game was not replayed
    plain = _run(None, train, test, MOVED)  # nothing stored at all: a fresh fit
    assert len(fits) == 2
    assert_same(_shown(moved), _shown(plain))
    assert moved.metrics != _run(store, train, test, FIRST).metrics  # ε still acts


def test_a_damaged_proxy_file_is_refused_and_refitted(
    tmp_path: Path, split, fits: list, caplog: pytest.LogCaptureFixture
) -> None:
    train, test = split
    store = RunStore(tmp_path)
    _run(store, train, test, FIRST)
    (path,) = _proxy_files(store, train, test)
    raw = bytearray(path.read_bytes())
    raw[raw.index(b"arrays/") + 200] ^= 0xFF  # a byte inside a stored array's member
    path.write_bytes(bytes(raw))
    again = _run(store, train, test, MOVED)
    assert len(fits) == 2  # refitted, not served from the damaged file
    assert "Skipping unreadable run" in caplog.text
    assert_same(_shown(again), _shown(_run(None, train, test, MOVED)))
    _run(store, train, test, MOVED)  # the entry was rewritten whole: served again
    assert len(fits) == 3  # (the plain run above refits: it has no store)


def _entry_key(train, test) -> tuple:
    """The store key of the default knobs' proxy (as :func:`pipeline.stored_proxy` builds it)."""
    knobs = {**get_method("multiaccurate_proxy").validate_knobs(FIRST), "alpha": 0.0}
    version = get_method("multiaccurate_proxy").version
    key = tuple(knobs[k] for k in pipeline.PROXY_KNOBS)
    return ("multiaccurate_proxy.proxy", version, pipeline.STATE_FORMAT, *key)


@pytest.mark.parametrize(
    "forge",
    [
        lambda s: s["state"]["paths_"][0].update(path=s["state"]["paths_"][0]["path"][:, :3]),
        lambda s: s["state"].update(_chain=[10**6]),
        lambda s: s["state"]["paths_"][0]["path"].__setitem__((0, 0), np.nan),
        lambda s: s["state"].update(n_iter="many"),
        lambda s: s["state"].update(auditor="nonsense"),
        lambda s: s.update(format=pipeline.STATE_FORMAT + 1),
        lambda s: s["state"].pop("scales_"),
    ],
    ids=["shape", "chain", "nan", "param-type", "auditor", "format", "missing"],
)
def test_a_forged_state_with_valid_checksums_is_refitted(
    tmp_path: Path, one_split, fits: list, forge
) -> None:
    """An entry whose file is intact (written through the store) but whose state is not one a
    fit leaves is never served."""
    train, test = one_split
    store = RunStore(tmp_path)
    _run(store, train, test, FIRST)
    key = _entry_key(train, test)
    value = store.get_table(train, test, key)
    assert value is not None and pipeline.valid_state(value)  # the key is the one used
    forge(value)
    store.put_table(train, test, key, value)
    again = _run(store, train, test, MOVED)
    assert len(fits) == 2
    assert_same(_shown(again), _shown(_run(None, train, test, MOVED)))


def test_the_state_round_trips_at_every_alpha(tmp_path: Path, split) -> None:
    train, test = split
    knobs = get_method("multiaccurate_proxy").validate_knobs({})
    pl_rows, _, _, _, onehot, _ = pipeline.split_rows(train, test, knobs)
    pl = pipeline.data_part(train, train, pl_rows, onehot, knobs["n_tasks"])
    proxy = pipeline.fit_proxy(pl["X"], pl["z"], pl["tasks"], knobs)
    value = pipeline.proxy_state(proxy, 1.5)
    store = RunStore(tmp_path)  # through a run file, as a later process reads it
    store.put_table(train, test, ("k",), value)
    read = store.get_table(train, test, ("k",))
    assert read is not None and pipeline.valid_state(read)
    restored, seconds = pipeline.proxy_from_state(read)
    assert seconds == 1.5
    low, high = proxy.alpha_range_
    for alpha in (0.0, low, (low + high) / 2, high, 2 * high):
        a, b = proxy.at_alpha(alpha), restored.at_alpha(alpha)
        np.testing.assert_array_equal(a.coef_, b.coef_)
        np.testing.assert_array_equal(a.predict_proba(pl["X"]), b.predict_proba(pl["X"]))
        assert (a.status_, a.alpha_, a.reached_ratio_) == (b.status_, b.alpha_, b.reached_ratio_)
