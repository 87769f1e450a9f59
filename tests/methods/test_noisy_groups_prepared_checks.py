"""noisy_groups: the robust checks prepared once per fit (the TV-ball samples' mass on each
rate's base, the flip-matrix inverse and the estimated base counts computed before the first
iterate) give every iterate the values a plain per-iterate evaluation gives, so a fit keeps its
multipliers' signal, its candidates and its chosen iterate.

The plain evaluations below are written out here, independently of the prepared ones: the paper
code's sampled DRO check and the noise-corrected rates, recomputed in full at every call."""

from __future__ import annotations

import numpy as np
import pytest

from fairengine.data import load_dataset
from fairengine.data.encoding import FeatureEncoder
from fairengine.methods.noisy_groups import RobustFairClassifier, add_group_noise, game
from fairengine.metrics import RATE_FAMILIES, RATE_SIGN, rate_base


def _gap(kind: str, y, yhat, rate: float, slack: float) -> float:
    base = rate_base(kind, y)
    overall = float((base * yhat).sum()) / float(base.sum()) if base.sum() > 0 else 0.0
    return RATE_SIGN[kind] * (overall - rate) - slack


class PlainSampled:
    """The paper code's DRO check: the worst rate over each group's sampled p̃, from scratch."""

    def __init__(self, y, constraint, samples) -> None:
        self.y, self.constraint, self.samples = np.asarray(y, float), constraint, samples

    def __call__(self, yhat, slack):
        yhat, out = np.asarray(yhat, float), []
        for kind in RATE_FAMILIES[self.constraint]:
            for sample in self.samples:
                base = rate_base(kind, self.y)
                num, den = sample @ (base * yhat), sample @ base
                rates = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
                worst = rates.min() if RATE_SIGN[kind] > 0 else rates.max()
                out.append(_gap(kind, self.y, yhat, float(worst), slack))
        return np.asarray(out)


class PlainCorrected:
    """Noise-corrected true-group rates through the inverse flip matrix, from scratch."""

    def __init__(self, y, noisy, constraint, flip) -> None:
        self.y, self.noisy = np.asarray(y, float), np.asarray(noisy, np.int64)
        self.constraint, self.flip = constraint, np.asarray(flip, float)

    def __call__(self, yhat, slack, z=0.0, yhat_by_group=None):
        yhat, m = np.asarray(yhat, float), self.flip.shape[0]
        inv, out = np.linalg.pinv(self.flip), []
        for kind in RATE_FAMILIES[self.constraint]:
            for j in range(m):
                base = rate_base(kind, self.y)
                member = yhat if yhat_by_group is None else self.flip[:, j] @ yhat_by_group
                b = inv @ np.bincount(self.noisy, weights=base, minlength=m)
                t = inv @ np.bincount(self.noisy, weights=base * member, minlength=m)
                if b[j] <= 0.5:
                    out.append(-slack)
                    continue
                rate = min(max(t[j] / b[j], 0.0), 1.0)
                resid = np.bincount(self.noisy, weights=base * (member - rate) ** 2, minlength=m)
                se = float(np.sqrt(inv[j] ** 2 @ resid)) / b[j]
                out.append(_gap(kind, self.y, yhat, rate, slack) + z * se)
        return np.asarray(out), None


@pytest.fixture(scope="module")
def adult():
    """Adult rows, sex as the group (the page's default task), encoded once."""
    task = load_dataset("adult")
    return task, FeatureEncoder().fit(task.X).transform(task.X)


def _fit(adult, split: int, method: str) -> RobustFairClassifier:
    """3,000 rows of one split at noise 0.1 (a fifth as the auxiliary sample, soft assignments
    selecting on 1,000 more held out): the page's defaults but T = 60, a candidate every 10."""
    task, z = adult
    rows = np.random.default_rng(split).permutation(len(task.y))
    fit, held = rows[:3000], rows[3000:4000]
    noisy = add_group_noise(task.groups, 0.1, split)
    aux = fit[:600]
    clf = RobustFairClassifier(method=method, slack=0.03, n_steps=60, eval_every=10, beta=1.0)
    eval_set = (z[held], task.y[held], noisy[held]) if method == "soft" else None
    return clf.fit(z[fit], task.y[fit], noisy[fit], task.groups[aux], noisy[aux],
                   eval_set=eval_set)  # fmt: skip


@pytest.mark.parametrize("method", ["dro", "soft"])
@pytest.mark.parametrize("split", [0, 1])
def test_prepared_checks_fit_as_plain_per_iterate_checks(adult, monkeypatch, split, method):
    prepared = _fit(adult, split, method)
    monkeypatch.setattr(game, "SampledCheck", PlainSampled)
    monkeypatch.setattr(game, "CorrectedRates", PlainCorrected)
    plain = _fit(adult, split, method)
    # the checks steer λ (DRO's margin signal) and choose the iterate: same candidates, checks
    # and choice
    np.testing.assert_allclose(prepared.candidates_, plain.candidates_, rtol=0, atol=1e-12)
    for key, viol in plain.candidate_violations_by_eval_.items():
        np.testing.assert_allclose(
            prepared.candidate_violations_by_eval_[key], viol, rtol=0, atol=1e-12
        )
    if method == "soft":
        np.testing.assert_allclose(
            prepared.validation_violations_by_eval_["margin"],
            plain.validation_violations_by_eval_["margin"], rtol=0, atol=1e-12,
        )  # fmt: skip
    assert prepared.best_index_ == plain.best_index_
    assert prepared.selection_status_ == plain.selection_status_
    # the fits are not trivial: their checks moved λ and the candidates differ
    assert np.ptp(prepared.candidate_errors_) > 0
    print(f"{method} split {split}: best {prepared.best_index_}, "
          f"status {prepared.selection_status_}")  # fmt: skip
