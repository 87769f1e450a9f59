"""Saved comparisons (round trip, tampering, other data) and the one-file HTML report."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import numpy as np
import pytest

from fairengine.audit import audit
from fairengine.audit.comparison import (
    ComparisonError,
    build_comparison,
    load_comparison,
    save_comparison,
)
from fairengine.data import load_dataset
from fairengine.frontier import sweep

HOSTILE = '<img src=x onerror="alert(1)"> & https://evil.example/x'


@pytest.fixture(scope="module")
def parts():
    task = load_dataset("german_credit")
    rng = np.random.default_rng(0)
    scores = np.clip(0.35 * task.y + 0.65 * rng.random(len(task.y)), 0, 1)
    outside = audit(task, scores=scores, name=HOSTILE)
    train, test = task.split()
    frontiers = [
        sweep("reweighing", train, test, {"strength": [0.0, 1.0]}),
        sweep("threshold_optimizer", train, test, {"tol": [0.0, 0.1]}),
    ]
    pin = frontiers[1].points["point_id"].iloc[0]
    comparison = build_comparison(task, frontiers, [outside], [HOSTILE, pin])
    return task, comparison, pin


def test_round_trip_keeps_points_pins_and_versions(parts, tmp_path) -> None:
    task, comparison, pin = parts
    path = save_comparison(comparison, tmp_path / "c.json")
    back = load_comparison(path, train=task.split()[0], test=task.split()[1])
    assert back.to_dict() == json.loads(path.read_text())
    assert [p["id"] for p in back.pins] == [HOSTILE, pin]
    assert len(back.points) == 4 and back.versions["fairengine"]
    assert back.audits()[0].metrics["test"] == pytest.approx(comparison.audits()[0].metrics["test"])
    card = back.pins[1]["card"]
    assert "sensitive attribute at prediction time" in card and back.pins[1]["groups"]


def test_several_outside_models_keep_their_order_and_distinct_names(parts, tmp_path) -> None:
    task, comparison, _ = parts
    first = comparison.audits()[0]
    built = build_comparison(task, [], [first, first, first], [f"{HOSTILE} (2)"])
    names = [o["name"] for o in built.outside]
    assert names == [HOSTILE, f"{HOSTILE} (2)", f"{HOSTILE} (3)"]
    back = load_comparison(save_comparison(built, tmp_path / "c.json"))
    assert [a.name for a in back.audits()] == names and back.pins[0]["id"] == names[1]


def test_other_data_is_refused_with_its_fingerprint(parts, tmp_path) -> None:
    _, comparison, _ = parts
    path = save_comparison(comparison, tmp_path / "c.json")
    other = load_dataset("german_credit", sensitive="age_group")
    with pytest.raises(ComparisonError, match="saved for other data"):
        load_comparison(path, train=other.split()[0], test=other.split()[1])


def _tampered(data: dict, how: str) -> dict:
    if how == "type":
        data["points"][0]["metrics"]["test"]["error"] = "0.1"
    elif how == "key":
        data["points"][0]["run"] = "import os"
    elif how == "pin":
        data["pins"][0]["id"] = "nothing"
    elif how == "many":
        data["pins"] = data["pins"] * 30
    elif how == "format":
        data["format"] = "pickle"
    elif how == "twice":
        data["outside"] = data["outside"] * 2
    return data


@pytest.mark.parametrize("how", ["type", "key", "pin", "many", "format", "twice"])
def test_tampered_files_are_refused(parts, tmp_path, how) -> None:
    _, comparison, _ = parts
    data = _tampered(json.loads(json.dumps(comparison.to_dict())), how)
    with pytest.raises(ComparisonError):
        load_comparison(json.dumps(data).encode())


def test_oversized_and_deep_files_are_refused(tmp_path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(17 * 2**20)
    with pytest.raises(ComparisonError, match="the limit is 16,777,216"):
        load_comparison(big)
    with pytest.raises(ComparisonError, match="the limit is 16,777,216"):  # an upload: the same
        load_comparison(big.read_bytes())
    with pytest.raises(ComparisonError):
        load_comparison(b"[" * 100 + b"]" * 100)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_report_is_self_contained_and_escapes_user_text(parts) -> None:
    from fairengine.report import build_report

    _, comparison, pin = parts
    page = build_report(comparison, title="Credit <review>")
    parser = _Tags()
    parser.feed(page)
    parser.close()
    names = [tag for tag, _ in parser.tags]
    assert names[:2] == ["html", "head"] and "body" in names
    for tag, attrs in parser.tags:
        for key in ("src", "href"):
            assert not str(attrs.get(key, "")).startswith(("http:", "https:", "//")), (tag, attrs)
        assert tag not in ("link", "iframe", "img"), tag  # nothing fetched, no user tag
    assert all(not attrs.get("src") for tag, attrs in parser.tags if tag == "script")
    assert "Plotly.newPlot" in page and len(page) > 1_000_000  # plotly.js embedded
    assert 'id="plane"' in page or "id='plane'" in page
    assert "@media print" in page
    text = "".join(parser.text)
    assert HOSTILE in text  # shown as its own characters ...
    assert '<img src=x onerror="alert(1)">' not in page  # ... never as markup
    assert pin in text and "Pinned points" in text and "Model card" in text
    assert "Credit <review>" in text and "Reproduce every point" in text
    assert "What would it cost to be fairer?" in text
