"""A method's own validation split (``held_out_rows``): per stratum, seeded, never empty."""

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
    again = held_out_rows(strata, 0.25, seed)
    assert np.array_equal(held, again[1])


def test_another_seed_holds_out_other_rows() -> None:
    strata = np.zeros(200, dtype=int)
    first, second = held_out_rows(strata, 0.3, 0)[1], held_out_rows(strata, 0.3, 1)[1]
    assert len(first) == len(second) == 60 and not np.array_equal(first, second)
