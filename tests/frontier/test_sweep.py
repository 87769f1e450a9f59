"""sweep and Frontier: grid order, caching, parallel and dask backends, progress, models."""

from __future__ import annotations

import dataclasses
import json
import logging
import sys

import numpy as np
import pandas as pd
import pytest

from fairengine.data import from_frame, load_dataset
from fairengine.frontier import Frontier, FrontierStore, expand_grid, pareto_mask, sweep
from fairengine.methods import KnobError, get_method

GRID = {"strength": [0.0, 0.5, 1.0], "C": [0.1, 1.0]}


@pytest.fixture(scope="module")
def split():
    return load_dataset("german_credit").split()


@pytest.fixture(scope="module")
def local(split):
    """The reference: a serial sweep without a store."""
    return sweep("reweighing", *split, GRID)


def same_points(a: Frontier, b: Frontier) -> None:
    """Identical ids, knobs, metrics and Pareto flags (exact floats)."""
    columns = ["point_id", "split", *a.knob_names, *a.metric_names, "pareto"]
    pd.testing.assert_frame_equal(a.points[columns], b.points[columns], check_exact=True)


# ------------------------------------------------------------------------------ the grid


def test_expand_grid_is_the_cartesian_product_in_order():
    assert expand_grid({"a": [1, 2], "b": ["x", "y"]}) == [
        {"a": 1, "b": "x"},
        {"a": 1, "b": "y"},
        {"a": 2, "b": "x"},
        {"a": 2, "b": "y"},
    ]
    assert expand_grid({"a": 3, "b": "xy"}) == [{"a": 3, "b": "xy"}]
    assert expand_grid([{"a": 2}, {"a": 1, "b": 0}]) == [{"a": 2}, {"a": 1, "b": 0}]
    assert expand_grid({}) == [{}]
    with pytest.raises(ValueError, match="'a' has no values"):
        expand_grid({"a": []})


def test_points_follow_grid_order_with_defaults_filled(split, local):
    points = local.points
    assert list(points.columns[:4]) == ["point_id", "split", "strength", "C"]
    assert points["split"].tolist() == ["train", "test"] * 6
    settings = points.loc[points["split"] == "test", ["strength", "C"]]
    assert list(settings.itertuples(index=False, name=None)) == [
        (s, c) for s in GRID["strength"] for c in GRID["C"]
    ]
    assert len(local) == 6 and points["point_id"].str.len().eq(12).all()
    assert not points["cached"].any() and (points["elapsed"] > 0).all()

    single = sweep("reweighing", *split, [{"strength": 0.25}])
    assert single.points[["strength", "C"]].iloc[0].tolist() == [0.25, 1.0]


def test_equal_settings_run_once(split):
    frontier = sweep("reweighing", *split, {"strength": [0.5, "0.5", 0.5]})
    assert len(frontier) == 1 and len(frontier.points) == 2


def test_bad_knob_raises_before_anything_runs(split):
    calls = []
    base = get_method("reweighing")

    def counting(train, test, **knobs):
        calls.append(knobs)
        return base.run_function(train, test, **knobs)

    method = dataclasses.replace(base, name="counting_reweighing", run_function=counting)
    with pytest.raises(KnobError, match="strength"):
        sweep(method, *split, {"strength": [0.0, 0.5, 1.5]})
    with pytest.raises(KnobError, match="no knob 'gamma'"):
        sweep(method, *split, [{"strength": 0.0}, {"gamma": 1.0}])
    assert calls == []
    frontier = sweep(method, *split, {"strength": [0.0]})
    assert len(calls) == 1 and frontier.method == "counting_reweighing"


# ------------------------------------------------------------------------------- caching


def test_second_sweep_is_served_from_the_store(tmp_path, split, local):
    store = FrontierStore(tmp_path)
    cold = sweep("reweighing", *split, GRID, store=store)
    same_points(cold, local)
    assert not cold.points["cached"].any()
    warm = sweep("reweighing", *split, GRID, store=store)
    assert warm.points["cached"].all()
    same_points(warm, cold)
    pd.testing.assert_series_equal(warm.points["elapsed"], cold.points["elapsed"])
    assert warm.result(warm.points["point_id"].iloc[0]) is None
    assert len(store.points(cold.task_key)) == 6


def test_a_method_object_is_never_looked_up_by_name(tmp_path, monkeypatch):
    import importlib

    from fairengine.frontier import backends
    from fairengine.methods import registry

    sweep_module = importlib.import_module("fairengine.frontier.sweep")
    method, callers = get_method("reweighing"), []

    def counting(name):
        callers.append(sys._getframe(1).f_globals["__name__"])
        return method

    for module in (registry, sweep_module, backends):
        monkeypatch.setattr(module, "get_method", counting)
    # rows no other test fitted: the baseline fits go through the run store too
    train, test = load_dataset("german_credit").split(random_state=5)
    store = FrontierStore(tmp_path)
    cold = sweep(method, train, test, GRID, store=store)
    warm = sweep(method, train, test, GRID, store=store)
    # the model card (export) still asks the registry for the method's title
    assert {c for c in callers if not c.startswith("fairengine.export")} == set()
    assert warm.points["cached"].all() and not cold.points["cached"].any()
    same_points(warm, cold)


def test_progress_counts_every_point_including_cached(tmp_path, split):
    store = FrontierStore(tmp_path)
    sweep("reweighing", *split, {"strength": [0.0, 1.0]}, store=store)
    calls = []
    frontier = sweep(
        "reweighing",
        *split,
        {"strength": [0.0, 0.5, 1.0]},
        store=store,
        progress=lambda done, total, point: calls.append((done, total, point)),
    )
    assert [(done, total) for done, total, _ in calls] == [(1, 3), (2, 3), (3, 3)]
    assert [p["cached"] for _, _, p in calls] == [True, True, False]  # cached ones first
    assert [p["strength"] for _, _, p in calls] == [0.0, 1.0, 0.5]
    assert {p["point_id"] for _, _, p in calls} == set(frontier.points["point_id"])
    assert frontier.points["cached"].tolist() == [True, True, False, False, True, True]


def test_unwritable_store_does_not_fail_the_sweep(tmp_path, split, local, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the store wants a directory")
    with caplog.at_level(logging.WARNING, logger="fairengine.frontier"):
        frontier = sweep("reweighing", *split, GRID, store=FrontierStore(blocker))
    same_points(frontier, local)
    assert any("Could not store" in r.getMessage() for r in caplog.records)


# ------------------------------------------------------------------------------ backends


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_parallel_sweep_equals_serial(split, local, backend):
    calls = []
    parallel = sweep(
        "reweighing",
        *split,
        GRID,
        n_jobs=2,
        backend=backend,
        progress=lambda done, total, point: calls.append(done),
    )
    same_points(parallel, local)
    assert calls == list(range(1, 7))


def test_backend_arguments_are_checked(split):
    with pytest.raises(ValueError, match="Unknown backend"):
        sweep("reweighing", *split, {"strength": [0.0]}, backend="mpi")
    with pytest.raises(ValueError, match="scheduler"):
        sweep("reweighing", *split, {"strength": [0.0]}, scheduler="tcp://127.0.0.1:1")


def test_dask_without_a_client_says_what_to_do(split):
    with pytest.raises(ValueError, match="dask.distributed cluster"):
        sweep("reweighing", *split, {"strength": [0.0]}, backend="dask")


def test_dask_local_cluster_equals_local_sweep(tmp_path, split, local):
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        calls = []
        frontier = sweep(
            "reweighing",
            *split,
            GRID,
            backend="dask",
            scheduler=client,
            store=FrontierStore(tmp_path),
            progress=lambda done, total, point: calls.append(done),
        )
        same_points(frontier, local)
        assert calls == list(range(1, 7))
        assert not frontier.points["cached"].any()
        # None: the current default client (the one opened above).
        same_points(sweep("reweighing", *split, GRID, backend="dask"), local)
        # An address: the sweep opens its own client and closes it afterwards.
        address = cluster.scheduler_address
        same_points(sweep("reweighing", *split, GRID, backend="dask", scheduler=address), local)


def test_dask_scheduler_address_without_a_default_client(split, local):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        with pytest.raises(ValueError):
            distributed.default_client()  # nothing to fall back on: the address must suffice
        frontier = sweep(
            "reweighing", *split, GRID, backend="dask", scheduler=cluster.scheduler_address
        )
        same_points(frontier, local)


# ------------------------------------------------------------------------------ Frontier


def test_pareto_column_is_per_split_on_the_method_axes(local):
    assert local.axes == ("dp_diff", "error")
    for split_name, part in local.points.groupby("split"):
        expected = pareto_mask(part["dp_diff"], part["error"])
        assert part["pareto"].tolist() == expected.tolist(), split_name
    assert local.points["pareto"].any()


def test_with_axes_recomputes_pareto_on_other_metrics(local):
    other = local.with_axes("eo_diff", "accuracy")  # accuracy is maximised
    assert other.axes == ("eo_diff", "accuracy") and local.axes == ("dp_diff", "error")
    for _, part in other.points.groupby("split"):
        expected = pareto_mask(part["eo_diff"], part["accuracy"], minimize=(True, False))
        assert part["pareto"].tolist() == expected.tolist()
    with pytest.raises(KeyError, match="not a metric"):
        local.with_axes("dp_diff", "strength")


def test_model_and_result_of_computed_and_cached_points(tmp_path, split):
    train, test = split
    store = FrontierStore(tmp_path)
    cold = sweep("reweighing", train, test, GRID, store=store)
    warm = sweep("reweighing", train, test, GRID, store=store)
    for point_id in cold.points["point_id"].unique():
        result = cold.result(point_id)
        assert result is not None and result.method == "reweighing"
        assert cold.model(point_id) is result.model
        expected = result.model.predict_score(test.X)
        np.testing.assert_array_equal(warm.model(point_id).predict_score(test.X), expected)
    with pytest.raises(KeyError, match="No point 'nope'"):
        cold.model("nope")
    with pytest.raises(KeyError, match="No point"):
        cold.result("nope")


def test_model_without_store_or_memory_is_a_clear_key_error(tmp_path, split):
    store = FrontierStore(tmp_path)
    sweep("reweighing", *split, {"strength": [0.0]}, store=store)
    warm = sweep("reweighing", *split, {"strength": [0.0]}, store=store)
    point_id = warm.points["point_id"].iloc[0]
    store.clear()
    with pytest.raises(KeyError, match="not available"):
        warm.model(point_id)


def test_to_records_and_json(local):
    records = local.to_records()
    assert len(records) == len(local)
    first = records[0]
    assert first["knobs"] == {"strength": 0.0, "C": 0.1}
    assert set(first["metrics"]) == {"train", "test"} and set(first["pareto"]) == {"train", "test"}
    row = local.points.iloc[1]  # the first point's test row
    assert first["metrics"]["test"]["error"] == row["error"]
    document = json.loads(local.to_json())
    assert document["method"] == "reweighing" and document["axes"] == ["dp_diff", "error"]
    assert document["points"] == json.loads(json.dumps(records))


def _records_match_the_table(frontier: Frontier) -> None:
    """Every record of ``to_records`` says what the frontier's table says (NaN as None)."""
    records = frontier.to_records()
    assert [r["point_id"] for r in records] == list(dict.fromkeys(frontier.points["point_id"]))
    by_id = {r["point_id"]: r for r in records}
    for row in frontier.points.to_dict(orient="records"):
        record = by_id[row["point_id"]]
        assert record["knobs"] == {k: row[k] for k in frontier.knob_names}
        assert record["pareto"][row["split"]] is bool(row["pareto"])
        assert (record["cached"], record["elapsed"]) == (row["cached"], row["elapsed"])
        for name in frontier.metric_names:
            value = record["metrics"][row["split"]][name]
            assert value == row[name] if value is not None else np.isnan(row[name])


def test_records_match_the_table_on_every_axes() -> None:
    """``to_records`` builds its records through ``plain_records`` (the pandas-free path of the
    cached command line), not from the table: the two views must still agree, Pareto flags
    included, on the frontier's axes and after ``with_axes``."""
    from fairengine.frontier.result import PointRecord

    nan = float("nan")
    records = [
        PointRecord("a" * 12, {"s": 0.0, "k": 1}, {"train": {"error": 0.2, "dp_diff": 0.1},
                    "test": {"error": 0.3, "dp_diff": 0.05}}, True, 1.5),
        PointRecord("b" * 12, {"s": 0.5, "k": 2}, {"train": {"error": 0.25, "dp_diff": 0.01},
                    "test": {"error": 0.31, "dp_diff": nan}}, True, 0.5),
        PointRecord("c" * 12, {"s": 1.0, "k": 3}, {"train": {"error": 0.2, "dp_diff": 0.2,
                    "accuracy": 0.8}, "test": {"error": 0.29, "dp_diff": 0.04}}, False, 2.0),
    ]  # fmt: skip
    flagged = 0
    for axes in (("dp_diff", "error"), ("dp_diff", "accuracy"), ("eo_diff", "error")):
        frontier = Frontier.from_records("m", "t" * 64, records, axes, ["s", "k"])
        _records_match_the_table(frontier)
        _records_match_the_table(frontier.with_axes("error", "dp_diff"))
        flagged += int(frontier.points["pareto"].sum())
    assert flagged  # the flags compared are not all False


def test_fairlearn_eg_small_sweep_round_trips_through_the_store(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame(
        {
            "x1": rng.normal(size=n),
            "x2": rng.normal(size=n),
            "group": rng.choice(["a", "b"], size=n),
        }
    )
    frame["label"] = frame["x1"] + 0.8 * (frame["group"] == "a") + rng.normal(size=n) > 0.5
    train, test = from_frame(frame, target="label", sensitive="group").split()
    store = FrontierStore(tmp_path)
    grid = {"eps": [0.05, 0.2], "max_iter": [10]}
    cold = sweep("fairlearn_eg", train, test, grid, store=store)
    warm = sweep("fairlearn_eg", train, test, grid, store=store)
    assert warm.points["cached"].all()
    same_points(warm, cold)
    for point_id in cold.points["point_id"].unique():
        expected = cold.result(point_id).model.predict_score(test.X)
        np.testing.assert_array_equal(warm.model(point_id).predict_score(test.X), expected)


def test_misspelt_worker_keyword_is_an_error(split) -> None:
    """The worker settings are explicit keywords: a misspelt one is an error, not ignored."""
    train, test = split
    grid = {"strength": [0.0, 1.0]}
    by_thread = sweep("reweighing", train, test, grid, n_jobs=1, backend="threading")
    same_points(by_thread, sweep("reweighing", train, test, grid))
    with pytest.raises(TypeError):
        sweep("reweighing", train, test, grid, n_job=2)
