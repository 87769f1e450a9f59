"""Rebuild bench/RESULTS.md: a current table per benchmark on top, every recorded run below.

``python bench/run.py`` appends a dated section (``## <date> UTC — <command>``) for each run. This
script keeps the file readable: it parses those dated sections, sorts them newest first under
"History" (each section's lines unchanged), and regenerates "Current results" from them, one
subsection per benchmark registered in ``bench/run.py`` with the rows of its latest section. The
part above "History" is always regenerated, so edit notes inside a dated section, never above it.

Usage::

    python tools/results_index.py            # rewrite bench/RESULTS.md in place
    python tools/results_index.py --check    # exit 1 if the file is not up to date
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "RESULTS.md"
TABLE_HEADER = "| benchmark | what | value | unit | ratio | note |"
TABLE_RULE = "|---|---|---:|---|---:|---|"
DATED = re.compile(r"^## (\d{4}-\d\d-\d\d \d\d:\d\d) UTC\b")
ANCHOR = re.compile(r'^<a id="run-[0-9a-z-]+"></a>$')
COMMIT = (
    re.compile(r"\(git ([0-9a-f]{7,}(?:\+changes)?)\)"),
    re.compile(r"\b((?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40})\b"),
)
LOAD = (
    re.compile(r"load average(?: at start)? ([0-9.]+(?: → [0-9.]+)?)"),
    re.compile(r"\bload ([0-9.]+[–-][0-9.]+)"),
)
META_PREFIXES = ("- Machine:", "- Python ", "- fairengine ")
READING_CHARS = 220
EARLIER_RUNS = 3
HISTORY_INTRO = (
    "Every recorded run, newest first, as written at the time. Notes were written when the file "
    'was kept oldest first: "the section above" in a note means an earlier run (now below).'
)

INTRO = """\
# Benchmark results

How to run the benchmarks: [`README.md`](README.md) (`python bench/run.py NAME ...`; `--list`
shows what is registered). Each run appends a dated section, and
[`tools/results_index.py`](../tools/results_index.py) then rebuilds this file: **Current
results** (generated: one subsection per registered benchmark with the rows of its latest run)
and **History** (every recorded run, newest first, as it was written).

Columns: `value` and `unit` are the measurement; `ratio` compares it with the reference the
`note` names (a speed-up, a paper's number, a budget such as "seconds / 30 s", or a before/after
pair); an empty ratio means the row has no reference. Timings depend on the machine's load: "load"
is the 1-min load average at the run's start as its section gives it (a shared 2-core host: read
wall-clock times with it)."""


class Section:
    """One dated section of the history, its lines as written.

    A plain class, not a dataclass: ``bench/run.py`` loads this file by path, without registering
    it as a module, and dataclasses need their module registered."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.anchor = ""
        self.rows: dict[str, list[str]] = {}

    @property
    def date(self) -> str:
        return DATED.match(self.lines[0]).group(1)

    @property
    def title(self) -> str:
        return self.lines[0].removeprefix("## ")


def split_history(text: str) -> tuple[list[str], list[Section]]:
    """The lines before the first dated section, and every dated section (anchors dropped)."""
    head: list[str] = []
    sections: list[Section] = []
    for line in text.splitlines():
        if ANCHOR.match(line):
            continue
        if DATED.match(line):
            sections.append(Section([line]))
        elif sections:
            sections[-1].lines.append(line)
        else:
            head.append(line)
    for section in sections:
        while section.lines and not section.lines[-1].strip():
            section.lines.pop()
        section.rows = _standard_rows(section.lines)
    return head, sections


def chronological_lines(text: str) -> list[str]:
    """The lines of every dated section, oldest run first (where a later row supersedes an
    earlier one, read in this order); all lines as they are when ``text`` has no dated section."""
    _, sections = split_history(text)
    if not sections:
        return text.splitlines()
    ordered = sorted(sections, key=lambda s: s.date)
    return [line for section in ordered for line in section.lines]


def _standard_rows(lines: list[str]) -> dict[str, list[str]]:
    """Rows of the section's ``run.py`` tables, by benchmark name (the first cell)."""
    rows: dict[str, list[str]] = {}
    in_table = False
    for line in lines:
        if line.strip() == TABLE_HEADER:
            in_table = True
        elif in_table and line.startswith("|"):
            if line.strip() != TABLE_RULE:
                rows.setdefault(line.split("|")[1].strip(), []).append(line)
        else:
            in_table = False
    return rows


def newest_first(sections: list[Section]) -> list[Section]:
    """Sections sorted by date, newest first; runs of the same minute keep their order."""
    ordered = sorted(sections, key=lambda s: s.date, reverse=True)
    seen: dict[str, int] = {}
    for section in ordered:
        base = "run-" + re.sub(r"[^0-9]+", "-", section.date).strip("-")
        seen[base] = seen.get(base, 0) + 1
        section.anchor = base if seen[base] == 1 else f"{base}-{seen[base]}"
    return ordered


def _mentions(section: Section, name: str) -> bool:
    return name in section.rows or re.search(rf"\b{re.escape(name)}\b", section.title) is not None


def _commit(section: Section) -> str:
    body = "\n".join(section.lines)
    for pattern in COMMIT:
        found = pattern.search(body)
        if found:
            return found.group(1)
    return "not stated"


def _load(section: Section) -> str:
    body = "\n".join(section.lines)
    for pattern in LOAD:
        found = pattern.search(body)
        if found:
            return found.group(1)
    return "not stated"


def _notes(section: Section) -> list[str]:
    """The section's free text: not the title, machine lines or tables."""
    notes: list[str] = []
    in_meta = False
    for line in section.lines[1:]:
        # A machine bullet may wrap onto indented lines; those are not notes either.
        in_meta = line.startswith(META_PREFIXES) or (in_meta and line.startswith(" "))
        if line.strip() and not in_meta and not line.startswith("|"):
            notes.append(line)
    return notes


def reading(section: Section) -> str:
    """A one-line reading of the section's notes: their first sentence (shortened)."""
    prose = [line.strip() for line in _notes(section) if not line.startswith("#")]
    if not prose:
        return ""
    sentences = re.split(r"(?<=\.)\s+", " ".join(prose))
    # "Notes on the run above (...)." only introduces the notes; the reading is what follows.
    telling = [s for s in sentences if not s.startswith(("Notes ", "Notes:"))]
    sentence = (telling or sentences)[0].removeprefix("- ")
    if len(sentence) > READING_CHARS:
        sentence = sentence[:READING_CHARS].rsplit(" ", 1)[0] + " …"
    return sentence


def overview(benchmarks: dict[str, str], sections: list[Section]) -> list[str]:
    """One line per benchmark: the date of its latest run (``sections`` newest first)."""
    lines = ["| benchmark | latest run | commit | load |", "|---|---|---|---|"]
    for name in benchmarks:
        latest = next((s for s in sections if _mentions(s, name)), None)
        if latest is None:
            lines.append(f"| [`{name}`](#{name}) | not yet recorded |  |  |")
        else:
            when = f"[{latest.date} UTC](#{latest.anchor})"
            lines.append(f"| [`{name}`](#{name}) | {when} | {_commit(latest)} | {_load(latest)} |")
    return [*lines, ""]


def current_entry(name: str, description: str, sections: list[Section]) -> list[str]:
    """The "Current results" subsection of one benchmark (``sections`` newest first)."""
    lines = [f"### `{name}`", ""]
    if description:
        lines += [description, ""]
    runs = [s for s in sections if _mentions(s, name)]
    if not runs:
        return [*lines, "Not yet recorded.", ""]
    latest = runs[0]
    lines.append(
        f"Latest run: [{latest.title}](#{latest.anchor}); commit {_commit(latest)}; "
        f"load {_load(latest)}."
    )
    lines.append("")
    if name in latest.rows:
        lines += [TABLE_HEADER, TABLE_RULE, *latest.rows[name], ""]
    else:
        lines += _tables(latest.lines) or ["Its results are in the run's notes below.", ""]
    text = reading(latest)
    if text:
        lines += [f"Reading (from [the run's notes](#{latest.anchor})): {text}", ""]
    if len(runs) > 1:
        earlier = ", ".join(f"[{s.date}](#{s.anchor})" for s in runs[1 : 1 + EARLIER_RUNS])
        more = f" and {len(runs) - 1 - EARLIER_RUNS} more" if len(runs) > 1 + EARLIER_RUNS else ""
        lines += [f"Earlier runs: {earlier}{more}.", ""]
    return lines


def _tables(lines: list[str]) -> list[str]:
    """Every markdown table of a hand-written section, each followed by a blank line."""
    out: list[str] = []
    for line in lines:
        if line.startswith("|"):
            out.append(line)
        elif out and out[-1]:
            out.append("")
    return out + [""] if out and out[-1] else out


def unregistered(sections: list[Section], names: Sequence[str]) -> list[str]:
    """Benchmarks with recorded rows that ``bench/run.py`` no longer registers."""
    latest: dict[str, Section] = {}
    for section in sections:
        for name in section.rows:
            if name not in names and name not in latest:
                latest[name] = section
    if not latest:
        return []
    lines = [
        "### Recorded, no longer registered",
        "",
        "Rows under these names are in the History; `bench/run.py` no longer has them. One-off "
        "before/after benchmarks are kept in [`archive/`](archive/README.md), which says what "
        "each measured.",
        "",
    ]
    lines += [f"- `{n}`: latest [{s.date} UTC](#{s.anchor})" for n, s in sorted(latest.items())]
    return [*lines, ""]


def render(text: str, benchmarks: dict[str, str]) -> str:
    """The whole file rebuilt from ``text``; ``benchmarks`` maps each registered name to its
    description, in registry order."""
    _, sections = split_history(text)
    sections = newest_first(sections)
    out = [INTRO, "", "## Current results", ""]
    out += [
        "<!-- Generated by tools/results_index.py from the History below: edit there. -->",
        "",
    ]
    out += overview(benchmarks, sections)
    for name, description in benchmarks.items():
        out += current_entry(name, description, sections)
    out += unregistered(sections, list(benchmarks))
    out += ["## History", "", HISTORY_INTRO, ""]
    for section in sections:
        out += [f'<a id="{section.anchor}"></a>', "", *section.lines, ""]
    return "\n".join(out).rstrip("\n") + "\n"


def registered_benchmarks() -> dict[str, str]:
    """Every benchmark ``bench/run.py`` registers, name → description, in registry order."""
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_run", module)
    spec.loader.exec_module(module)
    registry = module.Registry().discover()
    return {b.name: describe(b.function) for b in registry.benchmarks.values()}


def describe(function: object) -> str:
    """The first paragraph of a benchmark's docstring, on one line."""
    doc = (getattr(function, "__doc__", None) or "").strip()
    return " ".join(doc.split("\n\n")[0].split())


def rebuild(path: Path = RESULTS, benchmarks: dict[str, str] | None = None) -> bool:
    """Rewrite ``path`` with current results and sorted history; True if it changed."""
    old = path.read_text(encoding="utf-8")
    new = render(old, benchmarks if benchmarks is not None else registered_benchmarks())
    if new != old:
        path.write_text(new, encoding="utf-8")
    return new != old


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is not current")
    parser.add_argument("path", nargs="?", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.check:
        old = args.path.read_text(encoding="utf-8")
        current = render(old, registered_benchmarks()) == old
        print(f"{args.path.name} is {'current' if current else 'out of date: run this script'}.")
        return 0 if current else 1
    changed = rebuild(args.path)
    print(f"{args.path.name} {'rewritten' if changed else 'already current'}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
