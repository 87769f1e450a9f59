"""bench/RESULTS.md rebuilt by tools/results_index.py: nothing lost, every benchmark current."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


index = _load("results_index", ROOT / "tools" / "results_index.py")
bench_run = _load("bench_run_for_index", ROOT / "bench" / "run.py")

ROWS_A = [{"name": "alpha_bench", "what": "fit", "value": 1.5, "unit": "s"}]
ROWS_B = [{"name": "beta_bench", "what": "load", "value": 2.0, "unit": "s", "note": "x"}]
INFO = {
    "cpu": "Test CPU",
    "cores": "2",
    "ram": "1.0 GiB",
    "os": "Linux",
    "load": "0.50",
    "python": "3.11",
    "packages": "numpy 2",
    "fairengine": "0.1.0 (git abc1234)",
}
APPEND_LOG_COMMIT = "3854bd6"
BENCHES = {"alpha_bench": "Alpha.", "beta_bench": "Beta.", "never_run": "Never run."}


@pytest.fixture(scope="module")
def registered() -> dict[str, str]:
    return index.registered_benchmarks()


def _history_lines(text: str) -> Counter:
    """Every non-blank line from the first dated section on, read without the parser under test
    (the History's own intro and anchors left out)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if index.DATED.match(line))
    added = {index.HISTORY_INTRO}
    return Counter(
        line
        for line in lines[start:]
        if line.strip() and line not in added and not index.ANCHOR.match(line)
    )


def _git_show(spec: str) -> str:
    try:
        out = subprocess.run(["git", "show", spec], cwd=ROOT, capture_output=True, text=True)
    except OSError:
        out = None
    if out is None or out.returncode != 0:
        pytest.skip(f"git show {spec} is not available here")
    return out.stdout


def test_shipped_file_is_current(registered):
    text = (ROOT / "bench" / "RESULTS.md").read_text(encoding="utf-8")
    assert index.render(text, registered) == text, (
        "bench/RESULTS.md is out of date: run python tools/results_index.py"
    )


def test_the_append_log_it_replaced_is_kept_whole(registered):
    """The last append-only RESULTS.md: every line of its runs is in today's History."""
    before = _git_show(f"{APPEND_LOG_COMMIT}:bench/RESULTS.md")
    text = (ROOT / "bench" / "RESULTS.md").read_text(encoding="utf-8")
    kept, wanted = _history_lines(text), _history_lines(before)
    assert not wanted - kept, list((wanted - kept).elements())[:5]
    assert index.render(before, registered) == index.render(
        index.render(before, registered), registered
    )
    print(f"{sum(wanted.values())} lines of the append log, all kept")


def test_every_registered_benchmark_has_a_current_entry(registered):
    text = (ROOT / "bench" / "RESULTS.md").read_text(encoding="utf-8")
    current = text[text.index("\n## Current results\n") : text.index("\n## History\n")]
    assert len(registered) > 50
    for name in registered:
        assert f"\n### `{name}`\n" in current, name


def test_appended_runs_go_to_history_newest_first_and_nothing_is_lost(tmp_path):
    path = tmp_path / "RESULTS.md"
    bench_run.record(ROWS_A, INFO, "python bench/run.py alpha_bench", path)
    assert index.rebuild(path, BENCHES)
    assert not index.rebuild(path, BENCHES), "a second run must change nothing"
    older = re.sub(r"^## \S+ \S+ UTC", "## 2000-01-01 00:00 UTC", path.read_text(), flags=re.M)
    path.write_text(older)
    newer_a = [{**ROWS_A[0], "value": 1.25}]
    bench_run.record(ROWS_B + newer_a, INFO, "python bench/run.py beta_bench alpha_bench", path)
    appended = path.read_text(encoding="utf-8")
    index.rebuild(path, BENCHES)
    text = path.read_text(encoding="utf-8")
    assert _history_lines(text) == _history_lines(appended)
    _, sections = index.split_history(text)
    assert [s.date for s in sections][-1] == "2000-01-01 00:00" and len(sections) == 2
    current = text[: text.index("\n## History\n")]
    assert "| alpha_bench | fit | 1.25 | s |" in current
    assert "| alpha_bench | fit | 1.5 | s |" not in current
    assert "| beta_bench | load | 2 | s |  | x |" in current
    never = current[current.index("### `never_run`") :]
    assert never.split("\n### ")[0].count("Not yet recorded.") == 1
    assert not index.rebuild(path, BENCHES)


def test_latest_section_wins_and_gives_commit_load_and_reading(tmp_path):
    old = _section("2026-01-01 10:00", "1.00", "aaaaaaa", "| alpha_bench | fit | 9 | s |  |  |")
    new = _section("2026-02-01 10:00", "3.50", "bbbbbbb", "| alpha_bench | fit | 2 | s |  |  |")
    text = "# Benchmark results\n\n" + new + "\nNotes on it. Fits got faster.\n\n" + old
    out = index.render(text, BENCHES)
    entry = out[out.index("### `alpha_bench`") : out.index("### `beta_bench`")]
    assert "| alpha_bench | fit | 2 | s |" in entry and "| fit | 9 |" not in entry
    assert "commit bbbbbbb" in entry and "load 3.50." in entry
    assert "Fits got faster." in entry and "(#run-2026-02-01-10-00)" in entry
    assert '<a id="run-2026-02-01-10-00"></a>' in out
    assert index.render(out, BENCHES) == out


def _section(date: str, load: str, commit: str, row: str) -> str:
    return "\n".join(
        [
            f"## {date} UTC — `python bench/run.py alpha_bench`",
            "",
            f"- Machine: CPU, 2 cores, 1 GiB RAM (Linux); 1-min load average at start {load}",
            "- Python 3.11; numpy 2",
            f"- fairengine 0.1.0 (git {commit})",
            "",
            index.TABLE_HEADER,
            index.TABLE_RULE,
            row,
            "",
        ]
    )


def test_run_py_files_a_recorded_run_under_history(tmp_path):
    def alpha_bench(quick: bool) -> list[dict]:
        """Alpha."""
        return []

    registry = bench_run.Registry()
    registry.add(alpha_bench)
    path = tmp_path / "RESULTS.md"
    bench_run.record(ROWS_A, INFO, "python bench/run.py alpha_bench", path)
    bench_run.rebuild_index(registry, path)
    text = path.read_text(encoding="utf-8")
    current, history = text.split("\n## History\n")
    assert "| alpha_bench | fit | 1.5 | s |" in current and "Alpha." in current
    assert "- fairengine 0.1.0 (git abc1234)" in history
    assert index.render(text, {"alpha_bench": "Alpha."}) == text


def test_hand_written_section_shows_its_own_table_and_earlier_runs_are_linked():
    standard = _section(
        "2026-01-01 10:00", "1.00", "aaaaaaa", "| alpha_bench | fit | 9 | s |  |  |"
    )
    custom = "\n".join(
        [
            "## 2026-03-01 09:00 UTC — `alpha_bench` beside a reference (commit ccccccc1)",
            "",
            "Fits on the same rows as the reference. Ours wins.",
            "",
            "| side | error |",
            "|---|---:|",
            "| ours | 0.10 |",
            "",
        ]
    )
    out = index.render("# Benchmark results\n\n" + standard + "\n" + custom, BENCHES)
    entry = out[out.index("### `alpha_bench`") : out.index("### `beta_bench`")]
    assert "| ours | 0.10 |" in entry and "| fit | 9 |" not in entry
    assert "commit ccccccc1" in entry and "load not stated" in entry
    assert "Fits on the same rows as the reference." in entry
    assert "Earlier runs: [2026-01-01 10:00](#run-2026-01-01-10-00)." in entry


def test_run_py_and_the_noisy_groups_bench_load_the_tool_in_a_fresh_process(tmp_path):
    """Both load tools/results_index.py by path; this runs that in an interpreter of its own."""
    path = tmp_path / "RESULTS.md"
    path.write_text(_section("2026-01-01 10:00", "1.0", "aaaaaaa", "| alpha_bench | fit | 9 | s |"))
    script = (
        "import importlib.util, sys; from pathlib import Path\n"
        f"spec = importlib.util.spec_from_file_location('r', {str(ROOT / 'bench' / 'run.py')!r})\n"
        "run = sys.modules['r'] = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(run)\n"
        f"run.rebuild_index(run.Registry(), Path({str(path)!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "\n## History\n" in path.read_text(encoding="utf-8")


def test_chronological_lines_put_the_newest_run_last_whatever_the_file_order():
    old = _section("2026-01-01 10:00", "1.0", "aaaaaaa", "| alpha_bench | fit | 9 | s |  |  |")
    new = _section("2026-02-01 10:00", "1.0", "bbbbbbb", "| alpha_bench | fit | 2 | s |  |  |")
    for text in (old + new, index.render(old + new, BENCHES)):
        rows = [line for line in index.chronological_lines(text) if "| alpha_bench |" in line]
        assert rows == [
            "| alpha_bench | fit | 9 | s |  |  |",
            "| alpha_bench | fit | 2 | s |  |  |",
        ]
