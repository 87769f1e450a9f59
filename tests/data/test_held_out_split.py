"""fairengine.data.split.held_out_split: the one held-out splitter of a fit's rows."""

from __future__ import annotations

import numpy as np
import pytest

from fairengine.data.split import held_out_split


@pytest.mark.parametrize(("n_rows", "fraction"), [(1000, 0.25), (7, 0.25), (3, 0.01), (500, 0.5)])
def test_held_out_rows_partition_the_rows_in_the_asked_share(n_rows, fraction) -> None:
    kept, held = held_out_split(n_rows, fraction, np.random.default_rng(5))
    assert len(held) == max(1, int(fraction * n_rows))
    assert np.array_equal(np.sort(np.concatenate([kept, held])), np.arange(n_rows))
    assert np.all(np.diff(kept) > 0) and np.all(np.diff(held) > 0)  # sorted, no repeats


def test_the_draw_is_one_permutation_of_the_generator() -> None:
    """Seeded alike, the same rows; the generator is left where one permutation leaves it (the
    noisy-groups Method draws its auxiliary sample from it next)."""
    rng_a, rng_b = np.random.default_rng((11, 3)), np.random.default_rng((11, 3))
    kept, held = held_out_split(400, 0.25, rng_a)
    order = rng_b.permutation(400)
    assert np.array_equal(held, np.sort(order[:100])) and np.array_equal(kept, np.sort(order[100:]))
    assert rng_a.integers(1 << 30) == rng_b.integers(1 << 30)
    other = held_out_split(400, 0.25, np.random.default_rng((12, 3)))[1]
    assert not np.array_equal(held, other)
