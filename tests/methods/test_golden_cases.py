"""Every method's recorded numbers, lean results, the max-entropy row keys, and a command line
that lists without the heavy imports.

The goldens (``tests/methods/golden_cases.py`` says what they guard) catch any change of a
method's metrics or plotted tables that was meant to leave results alone; a deliberate change
comes with a new ``Method.version`` and rewrites that method's entries only. No assertion
depends on time (timing lives in ``bench/bench_scaling.py``).
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fairengine.data.row_keys import RowCounts, unique_rows
from fairengine.methods import get_method
from tests.methods.golden_cases import (
    CASES,
    GOLDEN,
    ROUNDING,
    SEARCHED,
    SEARCHED_KEYS,
    flatten,
    method_name,
    splits,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data():
    return {dataset: splits(dataset) for dataset in ("adult", "law_school")}


@pytest.fixture(scope="module")
def results(data):
    out = {}
    for case, (dataset, knobs) in CASES.items():
        train, test = data[dataset]
        out[case] = get_method(method_name(case)).run(train, test, **knobs)
    return out


@pytest.fixture(scope="module")
def golden():
    with np.load(GOLDEN) as stored:
        return {k: stored[k] for k in stored.files}


@pytest.mark.parametrize("case", list(CASES))
def test_results_match_the_recorded_goldens(case, results, golden) -> None:
    got = flatten(results[case])
    expected = {k.split("/", 1)[1]: v for k, v in golden.items() if k.split("/", 1)[0] == case}
    assert set(got) == set(expected), case
    for key, value in expected.items():
        bounds = SEARCHED if key in SEARCHED_KEYS else ROUNDING
        np.testing.assert_allclose(got[key], value, **bounds, err_msg=f"{case} {key}")


@pytest.mark.parametrize("case", list(CASES))
def test_results_are_lean(case, results, data) -> None:
    """A result pickles to a bounded size per training row (2,800 here; Adult's 34k rows stay
    under 5 MB): no training matrix, cost matrix or encoded copy is kept."""
    result = results[case]
    dataset = CASES[case][0]
    rows = len(data[dataset][0].y)
    size = len(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    assert size <= 200_000 + 120 * rows, (case, size)
    assert "encoded_inputs" not in result.artifacts
    model = result.model
    if hasattr(model, "regressor"):
        assert not hasattr(model.regressor, "problem_")


def test_fair_regression_keeps_the_summaries_the_problem_gave(results) -> None:
    regressor = results["fair_regression"].model.regressor
    assert np.isfinite(regressor.constant_objective_) and regressor.objective_scale_ > 0
    assert regressor.game_.objective() <= regressor.constant_objective_ + 1e-9


def test_fair_regression_cdf_table_is_thinned_but_keeps_the_ks_point(results) -> None:
    art = results["fair_regression_bgl"].artifacts
    table, ks = art["group_cdfs"], art["ks"]["test"]
    assert table.groupby(["split", "group"]).size().max() <= 500
    at = table[(table["split"] == "test") & (table["threshold"] == ks["threshold"])]
    assert ks["group"] in set(at["group"]) and "overall" in set(at["group"])


def test_row_keys_match_numpy_unique_on_real_codes(data) -> None:
    """Mixed-radix keys give np.unique(axis=0)'s rows, inverse and counts, also when the
    domain needs several words (wide tables)."""
    from fairengine.methods.maxent.domain import domain_from_task, readable_rows

    train, _ = data["adult"]
    domain = domain_from_task(train, 4)
    codes = domain.codes(readable_rows(train, domain))
    wide = np.hstack([codes] * 8)  # Π sizes ≫ 2⁶²: several words
    for table, sizes in ((codes, domain.sizes), (wide, np.tile(domain.sizes, 8))):
        rows, inverse, counts = np.unique(table, axis=0, return_inverse=True, return_counts=True)
        got = unique_rows(table, sizes)
        np.testing.assert_array_equal(got[0], rows)
        np.testing.assert_array_equal(got[1], inverse.ravel())
        np.testing.assert_array_equal(got[2], counts)
        lookup = RowCounts(table, sizes).lookup(np.vstack([rows[:20], rows[:3] * 0 + 99]))
        np.testing.assert_array_equal(lookup, np.r_[counts[:20], 0, 0, 0])


def _imported(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return set(out.stdout.split())


def test_dataset_listing_imports_no_sklearn_fairlearn_or_method() -> None:
    mods = _imported(
        "import contextlib, io\nfrom fairengine.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()): main(['datasets'])"
    )
    heavy = {m for m in mods if m.split(".")[0] in ("sklearn", "fairlearn", "scipy", "pandas")}
    methods = {m for m in mods if m.startswith("fairengine.methods.") and m.count(".") >= 2}
    assert not heavy, sorted(heavy)[:5]
    assert methods <= {"fairengine.methods.base", "fairengine.methods.registry"}, sorted(methods)
