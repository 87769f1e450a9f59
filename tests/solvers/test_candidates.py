"""The one candidate recorder of the game loops: what it keeps, and what it does not keep twice."""

from __future__ import annotations

import numpy as np

from fairengine.solvers.candidates import CandidateRecorder
from fairengine.solvers.expgrad import Response, keep_response, pool_matrix, response_pool


def test_a_pool_keeps_each_distinct_response_once_with_its_numbers_stacked() -> None:
    rng = np.random.default_rng(0)
    pool = response_pool()
    responses = [Response(float(v), rng.normal(size=3)) for v in rng.normal(size=20)]
    indices = [keep_response(pool, r, scale=2.0) for r in responses]  # past the first buffer
    assert indices == list(range(20)) and pool.candidates == responses
    again = Response(responses[7].objective + 1e-14, responses[7].constraints + 1e-14)
    assert keep_response(pool, again, scale=2.0) == 7 and len(pool) == 20
    objective, g = pool_matrix(pool)
    np.testing.assert_array_equal(objective, [r.objective / 2.0 for r in responses])
    np.testing.assert_array_equal(g, np.vstack([r.constraints for r in responses]))
    assert g.flags.c_contiguous  # what the LP and the Lagrangians read


def test_without_a_tie_every_candidate_is_kept_with_its_step() -> None:
    recorder = CandidateRecorder(3, 10)
    theta = np.zeros(2)
    for t in range(1, 11):
        if recorder.due(t):
            recorder.add(t, theta, None, np.zeros(0), [])  # the same θ each time: kept anyway
    assert recorder.step == [3, 6, 9, 10] and len(recorder.theta) == 4
    assert recorder.theta[0] is not theta
