"""pareto_mask against an O(n^2) brute force, with ties, duplicates, NaN and maximised axes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairengine.frontier import pareto_mask

DIRECTIONS = [(True, True), (True, False), (False, True), (False, False)]


def brute_force(x, y, minimize=(True, True)) -> np.ndarray:
    """Definition: dominated if another point is <= on both (minimised) axes and < on one."""
    sx = 1.0 if minimize[0] else -1.0
    sy = 1.0 if minimize[1] else -1.0
    n = len(x)
    mask = np.zeros(n, dtype=bool)
    for i in range(n):
        if math.isnan(x[i]) or math.isnan(y[i]):
            continue
        dominated = False
        for j in range(n):
            if j == i or math.isnan(x[j]) or math.isnan(y[j]):
                continue
            xi, yi, xj, yj = sx * x[i], sy * y[i], sx * x[j], sy * y[j]
            if xj <= xi and yj <= yi and (xj < xi or yj < yi):
                dominated = True
                break
        mask[i] = not dominated
    return mask


@pytest.mark.parametrize("minimize", DIRECTIONS)
@pytest.mark.parametrize("seed", range(40))
def test_matches_brute_force_on_random_data_with_ties_and_nan(seed, minimize):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    # Few distinct values: many ties on one axis and exact duplicates.
    x = rng.integers(0, 6, n).astype(float)
    y = rng.integers(0, 6, n).astype(float)
    x[rng.random(n) < 0.1] = np.nan
    y[rng.random(n) < 0.1] = np.nan
    got = pareto_mask(x, y, minimize=minimize)
    np.testing.assert_array_equal(got, brute_force(x, y, minimize))


@pytest.mark.parametrize("seed", range(10))
def test_matches_brute_force_on_continuous_data(seed):
    rng = np.random.default_rng(100 + seed)
    x, y = rng.random(300), rng.random(300)
    np.testing.assert_array_equal(pareto_mask(x, y), brute_force(x, y))


values = st.one_of(
    st.integers(-3, 3).map(float),
    st.floats(allow_nan=True, allow_infinity=True, width=32),
)


@settings(max_examples=300, deadline=None)
@given(
    points=st.lists(st.tuples(values, values), max_size=40),
    minimize=st.sampled_from(DIRECTIONS),
)
def test_property_matches_brute_force(points, minimize):
    x = np.array([p[0] for p in points], dtype=float)
    y = np.array([p[1] for p in points], dtype=float)
    np.testing.assert_array_equal(pareto_mask(x, y, minimize=minimize), brute_force(x, y, minimize))


def test_exact_duplicates_are_both_on_the_front():
    mask = pareto_mask([0.1, 0.1, 0.2, 0.3], [0.5, 0.5, 0.4, 0.6])
    assert mask.tolist() == [True, True, True, False]


def test_tie_on_one_axis_keeps_only_the_better_point():
    assert pareto_mask([0.1, 0.1], [0.5, 0.4]).tolist() == [False, True]
    assert pareto_mask([0.2, 0.1], [0.5, 0.5]).tolist() == [False, True]


def test_nan_points_are_never_on_the_front_and_dominate_nothing():
    mask = pareto_mask([np.nan, 0.5, 0.2], [0.0, 0.5, np.nan])
    assert mask.tolist() == [False, True, False]
    assert not pareto_mask([np.nan], [np.nan]).any()


def test_maximised_axis_flips_the_direction():
    # accuracy is maximised: the point with higher accuracy and lower gap dominates.
    gap = [0.1, 0.2, 0.05]
    accuracy = [0.8, 0.9, 0.7]
    assert pareto_mask(gap, accuracy, minimize=(True, False)).tolist() == [True, True, True]
    assert pareto_mask(gap, accuracy, minimize=(True, True)).tolist() == [False, False, True]


def test_infinite_values_are_ordinary_points():
    assert pareto_mask([0.0], [np.inf]).tolist() == [True]
    assert pareto_mask([0.0, 1.0], [np.inf, np.inf]).tolist() == [True, False]


def test_empty_and_bad_shapes():
    assert pareto_mask([], []).shape == (0,)
    with pytest.raises(ValueError, match="equal length"):
        pareto_mask([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="pair"):
        pareto_mask([1.0], [1.0], minimize=(True,))


def test_returns_bool_array_in_input_order():
    x = np.array([3.0, 1.0, 2.0])
    y = np.array([1.0, 3.0, 2.0])
    mask = pareto_mask(x, y)
    assert mask.dtype == bool
    assert mask.tolist() == [True, True, True]
    assert pareto_mask(x[::-1], y[::-1]).tolist() == mask[::-1].tolist()
