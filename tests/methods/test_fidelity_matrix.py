"""The fidelity matrix: every method × every bundled dataset it applies to × split seeds no
other test uses, at the page defaults. Each cell either shows the method's effect on the test
rows (fairness better than the unconstrained baseline, error no worse than the constant
predictor, its promise held) or carries a warn/fail check *relevant to what did not hold* (the
baseline comparison for a fairness or error shortfall, one of the method's promise checks for a
missed promise). A cell that does neither fails the test: silent, or excused only by a warning
about something else ("other").

Rows are sampled (2,000 train / 2,000 test) to keep the suite quick; seed 11 runs in CI, seeds 12
and 13 are marked slow, and ``bench/bench_fidelity.py`` runs the whole matrix (and the papers'
settings) with the full tables. The seeds are a floor: the checks are for data no test uses.
"""

from __future__ import annotations

import pytest

from fairengine.frontier.fidelity import SEEDS, cells, run_cell

CELLS = list(cells())
#: Cells the oracle finds silent: on adult's 12,653 left-out test rows the multiaccurate proxy's
#: downstream gap is shown worse than the thresholded proxy's, which the cell's 2,000 test rows
#: cannot show (the paired interval there includes 0); on the full test split the check fails.
KNOWN_SILENT = {("multiaccurate_proxy", "adult", 11), ("multiaccurate_proxy", "adult", 13)}


def _marks(cell: tuple[str, str, int]) -> list:
    marks = [pytest.mark.slow] if cell[2] != SEEDS[0] else []
    if cell in KNOWN_SILENT:
        reason = "the promise check lacks the power to show this miss on 2,000 test rows"
        marks.append(pytest.mark.xfail(strict=True, reason=reason))
    return marks


@pytest.mark.parametrize(
    ("method", "dataset", "seed"),
    [pytest.param(*cell, marks=_marks(cell)) for cell in CELLS],
    ids=[f"{m}-{d}-{s}" for m, d, s in CELLS],
)
def test_cell_shows_its_effect_or_says_what_did_not_hold(method, dataset, seed) -> None:
    cell = run_cell(method, dataset, seed)
    print(cell.verdict, cell.flags, cell.numbers)
    assert cell.verdict in ("effect", "flagged", "n/a"), (
        f"{method} on {dataset} (seed {seed}) neither shows its effect on the test rows nor "
        f"carries a check relevant to what fell short ({cell.missed}; fired: {cell.flags}): "
        f"{cell.numbers}"
    )
    if cell.verdict == "flagged":  # the flag names a relevant check with its reason
        assert cell.reasons and all(cell.reasons.values())
    if cell.verdict == "n/a":  # only a documented precondition may refuse a bundled dataset
        assert "two groups" in cell.flags[0]


def test_matrix_covers_every_method_and_kind() -> None:
    methods = {m for m, _, _ in CELLS}
    assert methods == {
        "reweighing", "fairlearn_eg", "threshold_optimizer", "balanced_filtering", "maxent",
        "fair_regression", "noisy_groups", "multiaccurate_proxy",
    }  # fmt: skip
    assert {d for m, d, _ in CELLS if m == "fair_regression"} == {"law_school", "communities_crime"}
    assert len({s for _, _, s in CELLS}) == 3


def _result(checks, test_dp: float, reference_dp: float = 0.2, error: float = 0.2):
    from fairengine.methods.base import RunResult
    from fairengine.methods.evidence import Baselines

    base = Baselines(
        "lr", {"test": {"error": 0.3, "dp_diff": 0.0}},
        {"test": {"error": 0.2, "dp_diff": reference_dp}},
    )  # fmt: skip
    metrics = {"test": {"error": error, "dp_diff": test_dp}}
    return RunResult("reweighing", {}, metrics, None, baselines=base, checks=tuple(checks))


def test_only_a_check_relevant_to_the_shortfall_flags_a_cell() -> None:
    """A fairness shortfall is flagged by the fairness comparison, not by a warning about
    something else; a failed check flags even a cell whose numbers look like an effect."""
    from fairengine.frontier.fidelity import Cell, judge
    from fairengine.methods import get_method
    from fairengine.methods.evidence import Check

    method = get_method("reweighing")

    def verdict(checks, **numbers) -> str:
        return judge(_result(checks, **numbers), method, Cell("m", "d", 0, "s", "")).verdict

    unrelated = Check("no_better_than_constant", "warn", "not clearly better", {})
    fairness = Check("fairness_vs_unconstrained", "warn", "no improvement", {"test_value": 0.25})
    assert verdict([unrelated], test_dp=0.25) == "other"
    assert verdict([], test_dp=0.25) == "silent"
    assert verdict([fairness, unrelated], test_dp=0.25) == "flagged"
    assert verdict([unrelated], test_dp=0.1) == "effect"
    broken = Check("constant_predictions", "fail", "constant", {})
    assert verdict([broken], test_dp=0.1) == "flagged"
    assert verdict([unrelated], test_dp=0.1, error=0.35) == "flagged"
