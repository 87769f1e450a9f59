"""Every CLI command, as a user runs it: a subprocess, its output and its exit status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fairengine.data import load_dataset
from fairengine.export import load_model, read_manifest


@pytest.fixture
def cli(tmp_path):
    env = {**os.environ, "FAIRENGINE_CACHE": str(tmp_path / "cache")}

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [sys.executable, "-m", "fairengine", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"exit {proc.returncode}: {proc.stderr}")
        return proc

    return run


def test_datasets(cli) -> None:
    text = cli("datasets").stdout
    for name in ("adult", "compas", "law_school", "communities_crime"):
        assert name in text
    rows = json.loads(cli("datasets", "--json").stdout)
    assert {r["name"]: r["rows"] for r in rows}["adult"] == 48_842


def test_methods_lists_every_registered_method_with_its_knobs(cli) -> None:
    from fairengine.methods import get_method, list_methods

    rows = json.loads(cli("methods", "--json").stdout)
    assert [r["name"] for r in rows] == list_methods()
    for row in rows:
        assert row["knobs"] == [k.name for k in get_method(row["name"]).knobs]
    assert "knobs: constraint, eps" in cli("methods").stdout


def test_run_json_and_model_file(cli, tmp_path: Path) -> None:
    out = tmp_path / "model.fairmodel"
    proc = cli("run", "reweighing", "--dataset", "german_credit", "--set", "strength=0.5",
               "--json", "--out", str(out))  # fmt: skip
    record = json.loads(proc.stdout)
    assert record["knobs"] == {"strength": 0.5, "C": 1.0}
    assert set(record["metrics"]) == {"train", "test"}
    assert read_manifest(out)["metadata"]["knobs"] == record["knobs"]
    assert out.with_suffix(".md").read_text().startswith("# Model card")


def test_sweep_is_cached_the_second_time(cli) -> None:
    args = ("sweep", "reweighing", "--dataset", "german_credit", "--grid",
            "strength=0,0.5,1", "--json")  # fmt: skip
    first = json.loads(cli(*args).stdout)
    second = json.loads(cli(*args).stdout)
    assert [r["cached"] for r in first] == [False] * 3
    assert [r["cached"] for r in second] == [True] * 3
    assert [r["metrics"] for r in first] == [r["metrics"] for r in second]
    assert all(set(r["pareto"]) == {"train", "test"} for r in first)
    assert any(r["pareto"]["test"] for r in first)


def test_sweep_on_a_dask_scheduler_equals_local(cli) -> None:
    distributed = pytest.importorskip("distributed")
    args = ("sweep", "reweighing", "--dataset", "german_credit", "--grid",
            "strength=0,0.5,1", "--json", "--no-cache")  # fmt: skip
    local = json.loads(cli(*args).stdout)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        remote = json.loads(
            cli(*args, "--backend", "dask", "--scheduler", cluster.scheduler_address).stdout
        )
    for record in (*local, *remote):
        record.pop("elapsed")
    assert remote == local
    proc = cli("sweep", "reweighing", "--dataset", "german_credit", "--grid", "strength=0",
               "--backend", "dask", check=False)  # fmt: skip
    assert proc.returncode == 2 and "--scheduler" in proc.stderr


def test_sweep_own_csv_and_export_point(cli, tmp_path: Path) -> None:
    frame = load_dataset("german_credit").frame
    data = tmp_path / "mine.csv"
    frame.to_csv(data, index=False)
    common = ("--data", str(data), "--target", "credit", "--sensitive", "sex")
    points = tmp_path / "points.csv"
    proc = cli("sweep", "reweighing", *common, "--grid", "strength=0,1", "--out", str(points))
    assert "point_id" in proc.stdout
    point_id = points.read_text().splitlines()[1].split(",")[0]
    out = tmp_path / "exported.fairmodel"
    cli("export", "reweighing", *common, "--point", point_id[:8], "--out", str(out))
    model = load_model(out)
    assert model.predict(frame.drop(columns=["credit", "sex"])).shape == (len(frame),)
    meta = read_manifest(out)["metadata"]
    assert meta["train"]["name"] == "mine"


def test_precompute_quick(cli, tmp_path: Path) -> None:
    out = tmp_path / "frontiers"
    proc = cli("precompute", "--out", str(out), "--methods", "reweighing", "--quick", "--json")
    written = json.loads(proc.stdout[proc.stdout.index("\n[") + 1 :])  # after the log lines
    assert written[0]["method"] == "reweighing" and written[0]["points"] == 2
    assert len(list(out.rglob("*.fairmodel"))) == 2
    # and the default run the method page opens on, complete with its artifacts
    assert written[1]["run"] and written[1]["task_key"] == written[0]["task_key"]
    files = list((out / "runs").rglob("*.fairrun"))
    # one method run, beside the unconstrained baseline fit kept per task for later runs
    assert len([p for p in files if not p.parent.name.startswith("@")]) == 1
    assert [p.parent.name for p in files if p.parent.name.startswith("@")] == ["@unconstrained"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "nope", "--dataset", "adult"), "Unknown method 'nope'"),
        (("run", "reweighing", "--dataset", "nope"), "Unknown dataset 'nope'"),
        (("run", "reweighing"), "exactly one of --dataset"),
        (("run", "reweighing", "--dataset", "adult", "--set", "strength=2"), "must be in"),
        (("run", "reweighing", "--dataset", "adult", "--set", "strength"), "KNOB=VALUE"),
        (("run", "reweighing", "--dataset", "law_school"), "classification"),
        (("sweep", "reweighing", "--dataset", "adult", "--grid", "strength="), "has no values"),
        (("run", "reweighing", "--dataset", "adult", "--sensitive", "zzz"), "Unknown sensitive"),
        (
            (
                "export",
                "reweighing",
                "--dataset",
                "german_credit",
                "--point",
                "ffff",
                "--out",
                "x.fairmodel",
            ),
            "no cached point",
        ),  # fmt: skip
    ],
)
def test_bad_arguments_exit_2_with_one_line(cli, args, message) -> None:
    proc = cli(*args, check=False)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_exported_model_predicts_like_the_run(cli, tmp_path: Path) -> None:
    out = tmp_path / "m.fairmodel"
    cli("run", "fairlearn_eg", "--dataset", "german_credit", "--set", "max_iter=10",
        "--out", str(out))  # fmt: skip
    _, test = load_dataset("german_credit").split()
    model = load_model(out)
    again = load_model(out)
    np.testing.assert_array_equal(model.predict(test.X), again.predict(test.X))


def test_run_carries_checks_and_baselines_everywhere(cli, tmp_path: Path) -> None:
    """JSON, text, the model file's metadata and its card all show the checks and baselines;
    a cached second run serves the same evidence."""
    out = tmp_path / "model.fairmodel"
    args = ("run", "reweighing", "--dataset", "german_credit", "--split-seed", "11")
    record = json.loads(cli(*args, "--json", "--out", str(out)).stdout)
    names = {c["name"] for c in record["checks"]}
    assert {"constant_predictions", "no_better_than_constant", "fairness_vs_unconstrained"} <= names
    assert all(c["level"] in ("ok", "warn", "fail") and c["sentence"] for c in record["checks"])
    baselines = record["baselines"]
    # german_credit: 70% good credit, so the constant predictor's test error is the minority share
    assert baselines["constant"]["test"]["error"] == pytest.approx(0.3, abs=0.01)
    assert baselines["unconstrained"]["test"]["error"] < baselines["constant"]["test"]["error"]
    assert read_manifest(out)["metadata"]["evidence"]["checks"] == record["checks"]
    card = out.with_suffix(".md").read_text()  # the card file: names as they are, unescaped
    assert "## Checks" in card and "## Baselines" in card and "no_better_than_constant" in card
    again = json.loads(cli(*args, "--json").stdout)
    assert again["cached"] and again["checks"] == record["checks"]
    text = cli(*args).stdout
    assert "checks:" in text and "baselines (same rows" in text
    assert any(line.strip().startswith(("OK", "WARN", "FAIL")) for line in text.splitlines())


def test_strict_exits_3_on_a_failed_check(cli) -> None:
    """Noisy groups' soft assignments at α = 0.02 on german_credit end at the all-positive
    classifier (see noisy_groups.method.trivial_message): the constant check fails, and
    --strict says so in the exit status; without --strict the same run exits 0."""
    args = ("run", "noisy_groups", "--dataset", "german_credit", "--split-seed", "11",
            "--set", "method=soft", "--set", "slack=0.02", "--json")  # fmt: skip
    plain = cli(*args)
    record = json.loads(plain.stdout)
    failed = {c["name"] for c in record["checks"] if c["level"] == "fail"}
    assert "constant_predictions" in failed
    strict = cli(*args, "--strict", check=False)
    assert strict.returncode == 3
    passing = cli("run", "reweighing", "--dataset", "german_credit", "--split-seed", "11",
                  "--strict")  # fmt: skip
    assert passing.returncode == 0


def test_sweep_json_carries_checks_per_point(cli) -> None:
    args = ("sweep", "fairlearn_eg", "--dataset", "german_credit", "--split-seed", "11",
            "--grid", "eps=0.02,0.1", "--set", "max_iter=10")  # fmt: skip
    records = json.loads(cli(*args, "--json").stdout)
    assert all(r["checks"] and r["baselines"]["learner"] for r in records)
    text = cli(*args).stdout
    assert text.count("checks:") == 2
