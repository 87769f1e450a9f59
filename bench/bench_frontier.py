"""Frontier benchmarks: parallel sweeps, the FrontierStore cache, Pareto masks."""

from __future__ import annotations

import statistics
import tempfile
import time
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from fairengine.data import load_dataset
from fairengine.export import result_metadata
from fairengine.frontier import FrontierStore, pareto_mask, sweep

STRENGTHS = [0.0, 0.25, 0.5, 0.75, 1.0]
#: A cached point must load in under this fraction of the time it took to compute.
CACHE_TARGET = 0.1


def _split(quick: bool):
    # Quick mode: german_credit (1,000 rows) instead of adult (48,842).
    return load_dataset("german_credit" if quick else "adult").split()


def _timed(function, *args, **kwargs) -> tuple[float, Any]:
    start = time.perf_counter()
    value = function(*args, **kwargs)
    return time.perf_counter() - start, value


def _best(repeats: int, function, *args, **kwargs) -> tuple[float, Any]:
    """Shortest of ``repeats`` timings (the least disturbed by other work) and the last value."""
    runs = [_timed(function, *args, **kwargs) for _ in range(repeats)]
    return min(t for t, _ in runs), runs[-1][1]


def _same(a, b) -> bool:
    columns = ["point_id", "split", *a.knob_names, *a.metric_names]
    return a.points[columns].equals(b.points[columns])


def sweep_parallel(quick: bool) -> list[dict]:
    """Reweighing over strength 0..1 (5 points), n_jobs=1 vs n_jobs=2 (loky), no store."""
    train, test = _split(quick)
    grid = {"strength": STRENGTHS}
    sweep("reweighing", train, test, {"strength": [0.0]})  # warm imports and data caches
    repeats = 3 if quick else 2
    serial_s, serial = _best(repeats, sweep, "reweighing", train, test, grid, n_jobs=1)
    with threadpool_limits(1):  # what each loky worker gets on a 2-core machine
        single_s, single = _best(repeats, sweep, "reweighing", train, test, grid, n_jobs=1)
    first_s, first = _timed(sweep, "reweighing", train, test, grid, n_jobs=2)
    warm_s, warm = _best(repeats, sweep, "reweighing", train, test, grid, n_jobs=2)
    identical = all(_same(serial, other) for other in (single, first, warm))
    data = f"{train.name}, {len(train.frame):,} train rows"
    return [
        {"what": f"sweep n_jobs=1 ({data})", "value": serial_s, "unit": "s"},
        {
            "what": "sweep n_jobs=1, BLAS/OpenMP limited to 1 thread",
            "value": single_s,
            "unit": "s",
            "ratio": serial_s / single_s,
            "note": "speed-up vs default threads",
        },
        {
            "what": "sweep n_jobs=2, first call (starts the worker pool)",
            "value": first_s,
            "unit": "s",
            "ratio": serial_s / first_s,
            "note": "speed-up vs n_jobs=1",
        },
        {
            "what": "sweep n_jobs=2, warm worker pool",
            "value": warm_s,
            "unit": "s",
            "ratio": serial_s / warm_s,
            "note": f"speed-up vs n_jobs=1; {single_s / warm_s:.2f} vs 1-thread n_jobs=1"
            + ("" if identical else "; POINTS DIFFER"),
        },
    ]


def sweep_cache(quick: bool) -> list[dict]:
    """Cold sweep into an empty FrontierStore vs the same sweep served from it."""
    train, test = _split(quick)
    grid = {"strength": STRENGTHS}
    sweep("reweighing", train, test, {"strength": [0.0]})  # warm imports and data caches
    repeats = 3 if quick else 2
    with tempfile.TemporaryDirectory(prefix="fairengine-bench-") as root:
        store = FrontierStore(root)

        def cold_sweep():
            store.clear()
            return sweep("reweighing", train, test, grid, store=store)

        cold_s, cold = _best(repeats, cold_sweep)
        cached_s, cached = _best(3, sweep, "reweighing", train, test, grid, store=store)
        assert cached.points["cached"].all() and _same(cold, cached)

        # Per point: verified lookup + model load, against the fit it replaces.
        loads, computes, writes = [], [], []
        for point_id in cold.points["point_id"].unique():
            result = cold.result(point_id)
            load_s, point = _timed(store.get, cold.task_key, "reweighing", result.knobs)
            model_s, _ = _timed(point.model)
            loads.append(load_s + model_s)
            computes.append(result.elapsed)
            meta = result_metadata(result, train, test)
            writes.append(_timed(store.put, cold.task_key, result, meta)[0])
    worst = max(load / compute for load, compute in zip(loads, computes, strict=True))
    verdict = "ok" if worst < CACHE_TARGET else f"FAIL: must be < {CACHE_TARGET}"
    return [
        {
            "what": f"cold sweep, 5 points ({train.name}), writes the store",
            "value": cold_s,
            "unit": "s",
        },
        {
            "what": "cached sweep, same grid",
            "value": cached_s,
            "unit": "s",
            "ratio": cold_s / cached_s,
            "note": "cold / cached",
        },
        {
            "what": "per point: fit (RunResult.elapsed), mean",
            "value": statistics.mean(computes),
            "unit": "s",
        },
        {
            "what": "per point: cached get + model load, mean",
            "value": 1e3 * statistics.mean(loads),
            "unit": "ms",
            "ratio": worst,
            "note": f"worst load / fit; {verdict}",
        },
        {
            "what": "per point: store write (put), mean",
            "value": 1e3 * statistics.mean(writes),
            "unit": "ms",
        },
    ]


def _brute_force(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    le = (x[None, :] <= x[:, None]) & (y[None, :] <= y[:, None])
    lt = (x[None, :] < x[:, None]) | (y[None, :] < y[:, None])
    return ~(le & lt).any(axis=1)


def pareto(quick: bool) -> list[dict]:
    """pareto_mask (sort-based) on random points, against an O(n^2) vectorised brute force."""
    rng = np.random.default_rng(0)
    n_large = 100_000 if quick else 1_000_000
    x, y = rng.random(n_large), rng.random(n_large)
    large_s = min(_timed(pareto_mask, x, y)[0] for _ in range(3))
    n_small = 3_000
    xs, ys = rng.random(n_small), rng.random(n_small)
    small_s = min(_timed(pareto_mask, xs, ys)[0] for _ in range(5))
    brute_s, brute = _timed(_brute_force, xs, ys)
    assert (brute == pareto_mask(xs, ys)).all()
    return [
        {"what": f"pareto_mask, {n_large:,} points", "value": 1e3 * large_s, "unit": "ms"},
        {
            "what": f"pareto_mask, {n_small:,} points",
            "value": 1e3 * small_s,
            "unit": "ms",
            "ratio": brute_s / small_s,
            "note": "speed-up vs O(n^2) brute force",
        },
    ]


def register(registry) -> None:
    """Add this module's benchmarks to the harness (see bench/run.py)."""
    registry.add(sweep_parallel)
    registry.add(sweep_cache)
    registry.add(pareto)
