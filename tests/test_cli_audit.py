"""``fairengine audit`` and ``fairengine report`` as a user runs them: each route, the errors in
words (exit status 2), a saved comparison and its report."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairengine.data import load_dataset


@pytest.fixture
def cli(tmp_path):
    env = {**os.environ, "FAIRENGINE_CACHE": str(tmp_path / "cache")}

    def run(*args: str, status: int = 0) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [sys.executable, "-m", "fairengine", *map(str, args)],
            capture_output=True, text=True, env=env, timeout=600,
        )  # fmt: skip
        assert proc.returncode == status, proc.stderr
        return proc

    return run


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A table with an id and a score column, a predictions file, and a skops pipeline."""
    import skops.io as sio
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    root = tmp_path_factory.mktemp("audit")
    frame = load_dataset("german_credit").frame.copy()
    numeric = ["duration_months", "credit_amount", "age", "installment_rate"]
    model = make_pipeline(StandardScaler(), LogisticRegression()).fit(
        frame[numeric], frame["credit"]
    )
    scores = model.predict_proba(frame[numeric])[:, list(model.classes_).index("good")]
    ids = [f"L{i}" for i in range(len(frame))]
    frame.assign(score=scores).to_csv(root / "table.csv", index=False)
    production = (frame["age"] > 30).astype(int)  # a cruder model "in production"
    frame.assign(score=scores, prod=production).to_csv(root / "two.csv", index=False)
    frame.assign(loan_id=ids).to_csv(root / "with_id.csv", index=False)
    frame.to_csv(root / "plain.csv", index=False)
    preds = pd.DataFrame({"loan_id": ids, "p": (scores >= 0.5).astype(int)})
    preds.iloc[::-1].to_csv(root / "preds.csv", index=False)
    preds.iloc[5:].to_csv(root / "short.csv", index=False)
    sio.dump(model, root / "model.skops")
    return root, scores


def _data(root: Path, name: str = "table.csv") -> list[str]:
    return ["--data", str(root / name), "--target", "credit", "--sensitive", "sex"]


def test_each_route_gives_the_same_point(cli, files) -> None:
    root, _ = files
    column = json.loads(cli("audit", *_data(root), "--predictions-column", "score",
                            "--json").stdout)  # fmt: skip
    keyed = ["--predictions", root / "preds.csv", "--id-column", "loan_id", "--json"]
    by_id = json.loads(cli("audit", *_data(root, "with_id.csv"), *keyed).stdout)
    model = json.loads(cli("audit", *_data(root, "plain.csv"), "--model", root / "model.skops",
                           "--json").stdout)  # fmt: skip
    assert column["kind"] == model["kind"] == "scores" and by_id["kind"] == "predictions"
    for result in (by_id, model):
        assert result["metrics"]["test"] == pytest.approx(column["metrics"]["test"])
    assert column["task_key"] == by_id["task_key"] == model["task_key"]
    assert any("'score'" in note for note in column["notes"])
    assert {c["name"] for c in column["checks"]} >= {"constant_predictions"}
    assert column["groups"][0]["selection_rate_low"] <= column["groups"][0]["selection_rate"]


def test_threshold_and_text_output(cli, files) -> None:
    root, scores = files
    text = cli("audit", *_data(root), "--predictions-column", "score", "--threshold", "0.8",
               "--name", "bank v2").stdout  # fmt: skip
    assert "bank v2: scores from column 'score', threshold 0.8" in text
    assert "checks:" in text and "per group" in text and "female" in text


@pytest.mark.parametrize(
    ("table", "args", "words"),
    [
        ("table.csv", ["--name", "a"], "at least one of"),
        ("table.csv", ["--predictions-column", "score", "--name", "a", "--name", "b"],
         "at most one name per model"),
        ("table.csv", ["--predictions-column", "score", "--model", "x.skops"], "x.skops"),
        ("with_id.csv", ["--predictions", "{root}/preds.csv"], "--id-column"),
        ("with_id.csv", ["--predictions", "{root}/short.csv", "--id-column", "loan_id"],
         "have no prediction"),
        ("plain.csv", ["--predictions", "{root}/preds.csv", "--id-column", "loan_id"],
         "No id of the predictions file matches"),
        ("table.csv", ["--predictions-column", "credit"], "is the target"),
        ("table.csv", ["--predictions-column", "score", "--values", "predictions"],
         "0/1, true/false"),
        ("table.csv", ["--model", "{root}/preds.csv"], "never loaded"),
        ("plain.csv", ["--model", "/dev/zero"], "not a regular file"),
        ("table.csv", ["--predictions-column", "score", "--frontier", "/dev/zero"],
         "not a regular file"),
    ],
)  # fmt: skip
def test_errors_are_one_line_with_status_2(cli, files, table, args, words) -> None:
    root, _ = files
    args = [a.format(root=root) for a in args]
    proc = cli("audit", *_data(root, table), *args, status=2)
    assert words in proc.stderr and "Traceback" not in proc.stderr


def test_saved_comparison_and_reports(cli, files, tmp_path) -> None:
    root, _ = files
    points = tmp_path / "points.json"
    cli("sweep", "reweighing", *_data(root, "plain.csv"), "--grid", "strength=0,0.5,1",
        "--out", points)  # fmt: skip
    saved, page = tmp_path / "cmp.json", tmp_path / "audit.html"
    out = cli(
        "audit",
        *_data(root, "plain.csv"),
        "--model",
        root / "model.skops",
        "--frontier",
        points,
        "--save-comparison",
        saved,
        "--report",
        page,
    ).stdout
    assert "what it would cost to be fairer" in out  # fmt: skip
    comparison = json.loads(saved.read_text())
    assert {p["id"] for p in comparison["pins"]} >= {"outside model"}
    again = tmp_path / "again.html"
    cli("report", "--comparison", saved, *_data(root, "plain.csv"), "-o", again)
    assert "Plotly.newPlot" in again.read_text() and "outside model" in again.read_text()
    other = cli("report", "--comparison", saved, "--dataset", "german_credit", "--sensitive",
                "age_group", "-o", tmp_path / "x.html", status=2)  # fmt: skip
    assert "saved for other data" in other.stderr
    zero = cli("report", "--comparison", "/dev/zero", *_data(root, "plain.csv"), "-o",
               tmp_path / "z.html", status=2)  # fmt: skip
    assert "not a regular file" in zero.stderr and "Traceback" not in zero.stderr
    direct = tmp_path / "direct.html"
    cli("report", "--frontier", points, *_data(root, "plain.csv"), "-o", direct)
    assert "reweighing" in direct.read_text() and np.isfinite(len(direct.read_text()))


def _figures(page: str) -> dict[str, tuple[list, dict]]:
    """Each ``Plotly.newPlot(name, data, layout, config)`` of a report: name -> (data, layout)."""
    calls = re.findall(r"Plotly\.newPlot\((.*?)\);</script>", page)
    return {args[0]: (args[1], args[2]) for args in (json.loads(f"[{c}]") for c in calls)}


def test_the_report_reads_like_an_audit(cli, files, tmp_path) -> None:
    """``fairengine report`` from a saved comparison: cards as HTML, the recommended threshold
    optimizer's requirements in the reading, the group table with ratios to the reference
    group and the four-fifths verdict, and a plane with no text on it, fitted to its points."""
    from html import unescape

    from fairengine.methods import get_method

    root, _ = files
    points, saved, page = tmp_path / "t.json", tmp_path / "cmp.json", tmp_path / "r.html"
    cli("sweep", "threshold_optimizer", *_data(root, "plain.csv"), "--grid", "tol=0,0.05",
        "--out", points)  # fmt: skip
    cli("audit", *_data(root, "plain.csv"), "--model", root / "model.skops", "--frontier",
        points, "--save-comparison", saved)  # fmt: skip
    cli("report", "--comparison", saved, *_data(root, "plain.csv"), "-o", page)
    html = page.read_text()
    text = unescape(re.sub(r"<[^>]+>", " ", html.split("<body>")[1]))
    reading = text.split("Reading", 1)[1].split("The plane", 1)[0]
    method = get_method("threshold_optimizer")
    assert "cheapest fairer point found is " + method.title in reading
    assert all(" ".join(r.split()) in " ".join(reading.split()) for r in method.requirements)
    assert "sensitive attribute at prediction time" in reading and "randomized" in reading
    assert re.search(r"worse by [0-9.]+: fairer decisions at the price of|no worse", reading)
    cards = re.findall(r"<h4>Card</h4><div class='card'>(.*?)</div></div>", html, flags=re.S)
    assert len(cards) == 2 and all("<table>" in c and "<h3>" in c for c in cards)
    assert all("**" not in c and "|---|" not in c and "\\_" not in c for c in cards)
    for ratio in ("False positive rate ratio", "Precision (PPV) ratio", "Selection rate ratio"):
        assert ratio in text
    assert "four-fifths rule" in text and " pass" in text
    assert re.search(r"reference group\s+(female|male)\s+\(the largest\)", text)
    data, layout = _figures(html)["plane"]
    assert not any("text" in trace.get("mode", "") for trace in data)
    for axis, key in (("xaxis", "x"), ("yaxis", "y")):
        shown = [v for t in data if t.get("marker", {}).get("symbol") not in ("x", "star")
                 for v in t[key] if v is not None]  # fmt: skip
        low, high = layout[axis]["range"]
        span = max(shown) - min(shown)
        assert low <= min(shown) and high >= max(shown)
        assert high - low <= 1.2 * span + 0.03, (axis, low, high, min(shown), max(shown))


def test_two_models_in_one_comparison_and_report(cli, files, tmp_path) -> None:
    """A candidate and the model in production: both audited on the same split, both in one
    comparison and one report; each as if audited alone, and a repeated name is suffixed."""
    root, _ = files
    saved, page = tmp_path / "two.json", tmp_path / "two.html"
    text = cli(
        "audit", *_data(root, "two.csv"), "--predictions-column", "score", "--name",
        "<b>candidate</b>", "--predictions-column", "prod", "--name", "production",
        "--save-comparison", saved, "--report", page,
    ).stdout  # fmt: skip
    assert "<b>candidate</b>: scores from column 'score'" in text
    assert "production: predictions from column 'prod'" in text
    alone = json.loads(cli("audit", *_data(root), "--predictions-column", "score",
                           "--json").stdout)  # fmt: skip
    both = json.loads(saved.read_text())["outside"]
    assert [r["name"] for r in both] == ["<b>candidate</b>", "production"]
    assert [r["kind"] for r in both] == ["scores", "predictions"]
    assert both[0]["task_key"] == both[1]["task_key"] == alone["task_key"]
    assert both[0]["metrics"]["test"] == pytest.approx(alone["metrics"]["test"])
    assert both[0]["metrics"]["test"] != pytest.approx(both[1]["metrics"]["test"])
    pins = {p["id"] for p in json.loads(saved.read_text())["pins"]}
    assert pins >= {"<b>candidate</b>", "production"}
    html = page.read_text()
    assert "&lt;b&gt;candidate&lt;/b&gt;" in html and "<b>candidate</b>" not in html
    assert html.count("production") >= 2  # on the plane and in its own section
    data, _ = _figures(html)["plane"]
    outside = [t for t in data if t.get("name", "").startswith("outside: ")]
    assert len(outside) == 2  # each its own legend entry, marker shape and colour
    assert len({(t["marker"]["symbol"], t["marker"]["color"]) for t in outside}) == 2
    twice = json.loads(cli(
        "audit", *_data(root, "two.csv"), "--predictions-column", "score", "--name", "bank",
        "--predictions-column", "prod", "--name", "bank", "--json",
    ).stdout)  # fmt: skip
    assert [r["name"] for r in twice] == ["bank", "bank (2)"]


def test_reference_group_and_tau_drive_the_audit_and_the_report(cli, files, tmp_path) -> None:
    """``--reference-group`` / ``--tau``: the group table's ratios are to the chosen group (1
    for it), the ratio metrics equal the metric computed with that reference on the test rows,
    the verdict follows τ, and the report (written directly, or later from the saved
    comparison with another reference) names the chosen group and τ."""
    from html import unescape

    from fairengine import metrics
    from fairengine.audit.core import positional

    root, scores = files
    saved, page = tmp_path / "ref.json", tmp_path / "ref.html"
    args = ["audit", *_data(root), "--predictions-column", "score", "--json"]
    default = json.loads(cli(*args).stdout)
    out = cli(*args, "--reference-group", "female", "--tau", "0.95", "--save-comparison", saved,
              "--report", page).stdout  # fmt: skip
    chosen = json.loads(out[out.index("{") :])
    groups = {r["group"]: r for r in chosen["groups"]}
    assert groups["female"]["fpr_ratio"] == groups["female"]["ppv_ratio"] == 1.0
    assert {r["group"]: r["fpr_ratio"] for r in default["groups"]}["male"] == 1.0  # the largest
    assert groups["male"]["fpr_ratio"] != 1.0
    task = load_dataset("german_credit")
    test = positional(task).split(test_size=0.3, random_state=0)[1]
    pred = (scores[test.frame.index] >= 0.5).astype(float)
    female = list(test.group_names).index("female")
    for name in ("fpr_ratio", "ppv_ratio", "selection_rate_ratio"):
        want = metrics.METRICS[name](test.y, pred, test.groups, reference=female)
        assert chosen["metrics"]["test"][name] == pytest.approx(want, abs=1e-12)
        ratio = groups["male"][name]
        assert groups["male"][name.removesuffix("_ratio") + "_pass"] == (
            min(ratio, 1 / ratio) >= 0.95
        )
    text = unescape(re.sub(r"<[^>]+>", " ", page.read_text()))
    assert re.search(r"reference group\s+female\s+\(chosen for this comparison\)", text)
    assert "τ = 0.95" in text and "between 0.95 and 1.05" in text
    again = tmp_path / "again.html"
    cli("report", "--comparison", saved, "--reference-group", "male", "-o", again)
    text = unescape(re.sub(r"<[^>]+>", " ", again.read_text()))
    assert re.search(r"reference group\s+male\s+\(chosen for this comparison\)", text)
    assert "τ = 0.80" in text
    wrong = cli(*args, "--reference-group", "other", status=2).stderr
    assert "'other' is not a group of this table" in wrong and "'female'" in wrong
