"""The command line starts at once. A listing and a fully cached sweep import none of
the heavy libraries (which modules are loaded is checked, never how long it takes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("sklearn", "fairlearn", "pandas", "scipy", "pyarrow")
LIGHT_REWEIGHING = (
    "_knobs",
    "base",
    "evidence",
    "evidence_fits",
    "fitted",
    "registry",
    "reweighing",
)
_WRAPPER = """
import json, runpy, sys
sys.argv = ["fairengine", *sys.argv[1:]]
try:
    runpy.run_module("fairengine", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    status = exc.code
loaded = sorted({m.split(".")[0] for m in sys.modules} & set(%r))
methods = sorted(m for m in sys.modules if m.startswith("fairengine.methods."))
print("\\nLOADED " + json.dumps({"heavy": loaded, "methods": methods, "status": status}),
      file=sys.stderr)
""" % (HEAVY,)  # noqa: UP031


@pytest.fixture
def cli(tmp_path):
    env = {**os.environ, "FAIRENGINE_CACHE": str(tmp_path / "cache")}

    def run(*args: str) -> tuple[str, dict]:
        proc = subprocess.run(
            [sys.executable, "-c", _WRAPPER, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        report = json.loads(proc.stderr.rpartition("\nLOADED ")[2])
        assert report["status"] in (0, None), proc.stderr
        return proc.stdout, report

    return run


def test_listing_imports_no_heavy_library(cli) -> None:
    stdout, report = cli("datasets")
    assert "german_credit" in stdout
    assert report["heavy"] == []
    assert set(report["methods"]) <= {"fairengine.methods.base", "fairengine.methods.registry"}


def test_cached_sweep_reads_the_store_without_sklearn_fairlearn_or_pandas(
    cli, tmp_path: Path
) -> None:
    args = ("sweep", "reweighing", "--dataset", "german_credit", "--grid", "strength=0,1")
    first, report = cli(*args, "--json")
    assert {"sklearn", "pandas"} <= set(report["heavy"])  # the points were computed
    second, report = cli(*args, "--json")
    assert report["heavy"] == []
    # the method's declaration, not its learner (fairengine.methods._linear)
    assert report["methods"] == [f"fairengine.methods.{m}" for m in LIGHT_REWEIGHING]
    computed, cached = json.loads(first), json.loads(second)
    assert [r["cached"] for r in computed] == [False, False]
    assert [r["cached"] for r in cached] == [True, True]
    for record in computed:
        record["cached"] = True
    assert cached == computed  # same ids, knobs, metrics, Pareto flags and fit times

    table, report = cli(*args, "--out", str(tmp_path / "points.csv"))
    assert report["heavy"] == []
    header, *rows = table.splitlines()[:3]
    assert header.split() == ["point_id", "split", "strength", "error", "dp_diff", "pareto",
                              "cached"]  # fmt: skip
    assert rows[0].split()[:2] == [computed[0]["point_id"], "train"]
    assert float(rows[0].split()[3]) == round(computed[0]["metrics"]["train"]["error"], 6)
    lines = (tmp_path / "points.csv").read_text().splitlines()
    assert len(lines) == 1 + 2 * 2 and lines[1].startswith(computed[0]["point_id"] + ",train,")


def test_cached_sweep_falls_back_when_a_point_or_the_task_differs(cli, tmp_path: Path) -> None:
    args = ("sweep", "reweighing", "--dataset", "german_credit", "--json")
    cli(*args, "--grid", "strength=0,1")
    # a point not yet in the store: the whole sweep runs the full path, computing only it
    out, report = cli(*args, "--grid", "strength=0,0.5")
    assert [r["cached"] for r in json.loads(out)] == [True, False]
    assert "sklearn" in report["heavy"]
    # another split is another task: nothing is served from the first task's points
    out, report = cli(*args, "--grid", "strength=0", "--split-seed", "1")
    assert [r["cached"] for r in json.loads(out)] == [False]
    memo = json.loads((tmp_path / "cache" / "task_keys.json").read_text())
    assert len(memo) == 2 and len(set(memo.values())) == 2
    # a damaged entry is a miss (the store drops it), so the point is recomputed
    entry = next((tmp_path / "cache").rglob("*.fairmodel"))
    entry.write_bytes(b"not a model file")
    out, report = cli(*args, "--grid", "strength=0,0.5,1")
    assert [r["cached"] for r in json.loads(out)].count(False) == 1


def test_every_method_registers_without_its_algorithm() -> None:
    """Every declaration (name, version, knobs) loads without scikit-learn, fairlearn,
    SciPy or pandas, so a cached sweep of any method stays light; the algorithm's names still
    resolve from the package on first use."""
    code = (
        "import json, sys\n"
        "from fairengine.methods import get_method, list_methods\n"
        "names = list_methods()\n"
        "versions = {n: get_method(n).version for n in names}\n"
        f"heavy = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))\n"
        "import fairengine.methods.noisy_groups as ng, fairengine.methods.maxent as me\n"
        "print(json.dumps([names, heavy, ng.RobustFairClassifier.__name__,"
        " me.solve_dual.__name__]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names, heavy, estimator, solver = json.loads(proc.stdout)
    from fairengine.methods.registry import METHOD_MODULES

    assert len(names) == len(METHOD_MODULES) and heavy == []
    assert (estimator, solver) == ("RobustFairClassifier", "solve_dual")
