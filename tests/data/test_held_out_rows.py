"""A fit's own validation split (``held_out_rows``): per stratum or one permutation, seeded,
never empty."""

import numpy as np
import pytest

from fairengine.data.split import held_out_rows


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_each_stratum_gives_its_share_and_keeps_a_row(seed: int) -> None:
    strata = np.repeat([0, 1, 2], [40, 10, 1])
    kept, held = held_out_rows(strata, 0.25, seed)
    assert np.array_equal(np.sort(np.concatenate([kept, held])), np.arange(len(strata)))
    assert np.all(np.diff(kept) > 0) and np.all(np.diff(held) > 0)
    assert np.bincount(strata[held], minlength=3).tolist() == [10, 2, 0]  # the lone row stays
    again = held_out_rows(strata, 0.25, np.random.default_rng(seed))  # a seed or its generator
    assert np.array_equal(held, again[1])


def test_another_seed_holds_out_other_rows() -> None:
    strata = np.zeros(200, dtype=int)
    first, second = held_out_rows(strata, 0.3, 0)[1], held_out_rows(strata, 0.3, 1)[1]
    assert len(first) == len(second) == 60 and not np.array_equal(first, second)


@pytest.mark.parametrize(("n_rows", "share"), [(1000, 0.25), (7, 0.25), (3, 0.01), (500, 0.5)])
def test_a_row_count_holds_out_its_share_of_all_rows(n_rows, share) -> None:
    kept, held = held_out_rows(n_rows, share, np.random.default_rng(5))
    assert len(held) == max(1, int(share * n_rows))
    assert np.array_equal(np.sort(np.concatenate([kept, held])), np.arange(n_rows))
    assert np.all(np.diff(kept) > 0) and np.all(np.diff(held) > 0)  # sorted, no repeats


def test_a_row_count_draws_one_permutation_of_the_generator() -> None:
    """Seeded alike, the same rows; the generator is left where one permutation leaves it (the
    noisy-groups Method draws its auxiliary sample from it next)."""
    rng_a, rng_b = np.random.default_rng((11, 3)), np.random.default_rng((11, 3))
    kept, held = held_out_rows(400, 0.25, rng_a)
    order = rng_b.permutation(400)
    assert np.array_equal(held, np.sort(order[:100])) and np.array_equal(kept, np.sort(order[100:]))
    assert rng_a.integers(1 << 30) == rng_b.integers(1 << 30)
    other = held_out_rows(400, 0.25, np.random.default_rng((12, 3)))[1]
    assert not np.array_equal(held, other)
