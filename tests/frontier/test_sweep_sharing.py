"""A sweep's shared parts (the encoding, the base model, the baselines' scores, the reference's
bootstrap values) computed once per task give the same frontier points, checks and intervals
included, as every point computed on its own."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from fairengine import metrics
from fairengine.data import load_dataset
from fairengine.frontier import sweep
from fairengine.frontier.sweep import expand_grid
from fairengine.lru import LRU
from fairengine.methods import fitted

from .run_equality import assert_same

#: Grids that move knobs the shared parts must not depend on, and knobs they must (noisy
#: groups' true-group violation reads the constraint and the slack).
GRIDS = {
    "reweighing": {"strength": [0.0, 0.6, 1.0], "C": [1.0, 0.5]},
    "threshold_optimizer": {"tol": [0.0, 0.05, 0.2]},
    "multiaccurate_proxy": {"proxy": ["multiaccurate", "thresholded"], "eps": [0.02, 0.1]},
    "noisy_groups": [
        {"method": "naive", "noise": 0.2, "n_steps": 40},
        {"method": "dro", "noise": 0.2, "n_steps": 40},
        {"method": "naive", "noise": 0.2, "n_steps": 40, "slack": 0.1},
        {"method": "naive", "noise": 0.2, "n_steps": 40, "constraint": "dp"},
    ],
}


def _points(frontier) -> list[dict]:
    """Each point as the frontier records it, but for what depends on its neighbours (Pareto)
    or on the clock."""
    return [
        {k: v for k, v in record.items() if k not in ("elapsed", "cached", "pareto")}
        for record in frontier.to_records()
    ]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("method", sorted(GRIDS))
def test_shared_parts_leave_every_point_identical(
    method: str, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    german = load_dataset("german_credit")
    rows = np.random.default_rng(seed).permutation(len(german.frame))[:700]
    task = replace(german, frame=german.frame.iloc[np.sort(rows)].reset_index(drop=True))
    train, test = task.split(random_state=seed)
    monkeypatch.setattr(fitted, "_FITS", LRU(fitted._FITS.size))
    shared = _points(sweep(method, train, test, GRIDS[method]))

    monkeypatch.setattr(fitted, "_FITS", LRU(0))  # nothing kept: each point on its own
    alone = [_points(sweep(method, train, test, [p]))[0] for p in expand_grid(GRIDS[method])]

    assert [p["checks"] for p in shared] and all(p["baselines"] for p in shared)
    assert_same(shared, alone, f"{method}, seed {seed}")


@pytest.mark.parametrize("name", ["german_credit", "adult"])
def test_a_subset_carries_the_rows_groups_and_targets(name: str) -> None:
    task = load_dataset(name)
    rows = np.random.default_rng(3).choice(len(task.frame), 400, replace=True)
    task.y, task.groups  # noqa: B018  (computed, so the subset takes them at the rows)
    carried = task.subset(rows)
    recomputed = replace(task, frame=task.frame.iloc[rows], notes=())
    assert_same(carried.y, recomputed.y, "y")
    assert_same(carried.groups, recomputed.groups, "groups")
    assert_same(carried.group_labels, recomputed.group_labels, "group labels")
    bare = task.subset(rows, columns=())
    assert bare.frame.shape == (len(rows), 0)
    inner = np.arange(0, len(rows), 7)
    assert_same(bare.subset(inner).y, task.y[rows[inner]], "y of a subset of the subset")
    assert_same(bare.subset(inner).groups, task.groups[rows[inner]], "its groups")


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16])
@pytest.mark.parametrize("seed", [0, 1])
def test_integer_group_codes_give_the_same_table_as_any_labels(dtype, seed: int) -> None:
    rng = np.random.default_rng(seed)
    codes = rng.choice(np.array([0, 3, 7], dtype=dtype), 500)  # not every code present
    y, p = rng.integers(0, 2, 500), rng.random(500)
    weights = np.where(codes == 3, 0.0, rng.random(500)) if seed else None  # a 0-weight group
    fast = metrics.audit_rates(y, p, codes, sample_weight=weights)
    general = metrics.audit_rates(y, p, pd.Series(codes), sample_weight=weights)
    assert_same(fast, general, f"{dtype.__name__}")
    assert list(fast.index) == sorted({int(c) for c in codes if seed == 0 or c != 3})
