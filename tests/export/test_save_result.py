"""``save_model(result, path, train=, test=)`` writes the same complete file and card as the
CLI's ``export``, so ``fairengine predict`` reads the raw table with it."""

from __future__ import annotations

import json
import re
import shlex
import zipfile

import pandas as pd
import pytest

from fairengine.cli import main
from fairengine.data import load_dataset
from fairengine.export import read_manifest, save_model
from fairengine.methods import get_method


def _manifest(path) -> dict:
    manifest = dict(read_manifest(path))
    for stamp in ("created", "manifest_sha256"):  # the time, and a hash over it
        manifest.pop(stamp)
    manifest["metadata"] = dict(manifest["metadata"])
    manifest["metadata"].pop("elapsed_seconds")
    return manifest


def _members(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {n: archive.read(n) for n in archive.namelist() if n != "manifest.json"}


#: The method whose title heads the cards (the run's, passed as every caller does).
METHOD = get_method("reweighing")


@pytest.fixture(scope="module")
def run():
    task = load_dataset("german_credit")
    train, test = task.split(random_state=0)
    return task, train, test, get_method("reweighing").run(train, test, strength=1.0)


def test_python_export_equals_the_cli_export(run, tmp_path, capsys):
    task, train, test, result = run
    py = save_model(
        result, tmp_path / "py" / "model.fairmodel", train=train, test=test, method=METHOD
    )
    cli = tmp_path / "cli" / "model.fairmodel"
    cli.parent.mkdir()
    argv = ["export", "reweighing", "--dataset", "german_credit", "--set", "strength=1.0"]
    assert main([*argv, "--out", str(cli), "--no-cache"]) == 0
    a, b = _manifest(py), _manifest(cli)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert a["metadata"]["train"]["target"] == task.target
    assert a["metadata"]["train"]["sensitive"] == list(task.sensitive)
    # the same card, inside the file (its checksum above) and beside it
    assert py.with_suffix(".md").read_text() == _members(py)["card.md"].decode()
    assert py.with_suffix(".md").read_text() == cli.with_suffix(".md").read_text()


def test_fairengine_predict_reads_the_raw_table_with_the_python_file(run, tmp_path, capsys):
    task, train, test, result = run
    path = save_model(result, tmp_path / "model.fairmodel", train=train, test=test, method=METHOD)
    raw = tmp_path / "raw.csv"
    task.frame.to_csv(raw, index=False)  # target and sensitive columns included
    out = tmp_path / "pred.csv"
    assert main(["predict", str(path), "--data", str(raw), "--out", str(out)]) == 0
    predictions = pd.read_csv(out)
    assert len(predictions) == len(task.frame)
    expected = result.model.predict(task.X)
    assert (predictions.iloc[:, -1].to_numpy() == expected).all()


def test_a_result_without_its_tasks_is_refused(run, tmp_path):
    *_, result = run
    with pytest.raises(TypeError, match="train=... and test="):
        save_model(result, tmp_path / "model.fairmodel")


def _code_blocks(card: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block of a Markdown card."""
    return re.findall(r"^```(\w*)\n(.*?)^```", card, flags=re.S | re.M)


def test_every_command_of_the_card_runs_as_printed(run, tmp_path, monkeypatch, capsys):
    task, train, test, result = run
    path = save_model(result, tmp_path / "model.fairmodel", train=train, test=test, method=METHOD)
    task.frame.head(50).to_csv(tmp_path / "new_rows.csv", index=False)  # the card's input name
    monkeypatch.chdir(tmp_path)
    blocks = _code_blocks(path.with_suffix(".md").read_text())
    shell = [line for lang, body in blocks if not lang for line in body.splitlines()]
    commands = [shlex.split(line) for line in shell if line.startswith("fairengine ")]
    assert [c[1] for c in commands] == ["inspect", "predict"]
    for command in commands:
        assert main(command[1:]) == 0, " ".join(command)
    assert len(pd.read_csv(tmp_path / "predictions.csv")) == 50
    python = [body for lang, body in blocks if lang == "python"]
    assert len(python) == 1
    namespace: dict = {}
    exec(compile(python[0], "card", "exec"), namespace)  # the card's own example
    assert len(namespace["predictions"]) == 50 and len(namespace["scores"]) == 50


def test_the_card_file_is_plain_text_and_the_page_card_stays_escaped(run, tmp_path) -> None:
    """One card builder, two renderings: the ``.md`` file beside a model shows the data's names
    verbatim (no backslash escapes, no invisible word joiners) and counts as integers; the card
    for a page that renders Markdown keeps every name escaped."""
    from fairengine.audit.comparison import model_group_table
    from fairengine.export import model_card
    from fairengine.textsafe import WORD_JOINER

    _, train, test, result = run
    file_card = save_model(
        result, tmp_path / "m.fairmodel", train=train, test=test, method=METHOD
    ).with_suffix(".md")
    groups = model_group_table(result.model, test)
    for card in (
        file_card.read_text(),
        model_card(result, train, test, method=METHOD, group_table=groups, for_file=True),
    ):
        assert "\\" not in card and WORD_JOINER not in card
        assert "duration_months" in card  # a feature name with "_", verbatim
    sizes = {g: str(int(groups.loc[g, "n"])) for g in ("female", "male", "overall")}
    page = model_card(result, train, test, method=METHOD, group_table=groups)
    assert "duration\\_months" in page  # the page's card: names escaped for Markdown
    for card in (
        model_card(result, train, test, method=METHOD, group_table=groups, for_file=True),
        page,
    ):
        rows = re.findall(r"^\| (female|male|overall) \| (\S+) \|", card, flags=re.M)
        assert dict(rows) == sizes  # the count column: 93, not 93.0000
