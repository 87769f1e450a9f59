"""Run fairengine's benchmarks and record their results in bench/RESULTS.md.

Usage::

    python bench/run.py                  # every benchmark
    python bench/run.py NAME [NAME ...]  # some benchmarks (a benchmark or a module name)
    python bench/run.py --quick          # small data, for a smoke run
    python bench/run.py --list           # what is there

Benchmark modules are the ``bench/bench_*.py`` files next to this one. Each defines
``register(registry)``, which calls ``registry.add(function)`` once per benchmark. A benchmark is a
function ``f(quick: bool) -> list[dict]`` returning rows with keys ``what``, ``value``, ``unit``
and optionally ``ratio`` (against a stated reference) and ``note``. A recorded run is appended as a
dated section, then ``tools/results_index.py`` files it under History and refreshes the current
table of each benchmark.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import importlib.util
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
RESULTS = BENCH_DIR / "RESULTS.md"
PACKAGES = (
    "numpy",
    "pandas",
    "scikit-learn",
    "scipy",
    "fairlearn",
    "joblib",
    "dask",
    "distributed",
)
Row = dict[str, Any]
BenchFunction = Callable[[bool], list[Row]]

# Run from a checkout without installing the package.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@dataclass(frozen=True)
class Benchmark:
    """One registered benchmark."""

    name: str
    module: str
    function: BenchFunction
    description: str


class Registry:
    """Benchmarks by name, filled by each module's ``register(registry)``."""

    def __init__(self) -> None:
        self.benchmarks: dict[str, Benchmark] = {}
        self._module = ""

    def add(self, function: BenchFunction, *, name: str | None = None) -> BenchFunction:
        """Register ``function`` under its name (or ``name``); its docstring describes it."""
        name = name or function.__name__
        if name in self.benchmarks:
            raise ValueError(f"Benchmark {name!r} is registered twice.")
        doc = (function.__doc__ or "").strip().splitlines()
        self.benchmarks[name] = Benchmark(name, self._module, function, doc[0] if doc else "")
        return function

    def discover(self, directory: Path = BENCH_DIR) -> Registry:
        """Import every ``bench_*.py`` in ``directory`` and let it register its benchmarks."""
        for path in sorted(directory.glob("bench_*.py")):
            spec = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = module
            spec.loader.exec_module(module)
            if not hasattr(module, "register"):
                raise AttributeError(f"{path.name} defines no register(registry) function.")
            self._module = path.stem.removeprefix("bench_")
            module.register(self)
        return self

    def select(self, names: Sequence[str]) -> list[Benchmark]:
        """The benchmarks named (by benchmark name or module name); all when ``names`` is empty."""
        if not names:
            return list(self.benchmarks.values())
        chosen: dict[str, Benchmark] = {}
        for name in names:
            matches = [b for b in self.benchmarks.values() if name in (b.name, b.module)]
            if not matches:
                known = ", ".join(
                    sorted({*self.benchmarks, *(b.module for b in self.benchmarks.values())})
                )
                raise SystemExit(f"Unknown benchmark {name!r}. Known: {known}.")
            chosen.update((b.name, b) for b in matches)
        return list(chosen.values())


# -------------------------------------------------------------------------------- machine


def _cpu_name() -> str:
    name = platform.processor()
    if name and name not in ("x86_64", "aarch64", "arm64", "i386"):
        return name
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return name or platform.machine()


def _ram_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except (OSError, ValueError, IndexError):
        pass
    return None


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _git_revision() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True
        )
    except OSError:
        return "unknown"
    revision = out.stdout.strip() or "unknown"
    return revision + ("+changes" if dirty.stdout.strip() else "")


def machine() -> dict[str, str]:
    """Where and with what the benchmarks ran."""
    import fairengine

    ram = _ram_gib()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return {
        "load": f"{load:.2f}",
        "cpu": _cpu_name(),
        "cores": str(os.cpu_count()),
        "ram": f"{ram:.1f} GiB" if ram is not None else "unknown",
        "os": platform.platform(),
        "python": platform.python_version(),
        "packages": ", ".join(f"{p} {_version(p)}" for p in PACKAGES),
        "fairengine": f"{fairengine.__version__} (git {_git_revision()})",
    }


# -------------------------------------------------------------------------------- output


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    return str(value)


def _table(rows: list[Row]) -> list[str]:
    lines = ["| benchmark | what | value | unit | ratio | note |", "|---|---|---:|---|---:|---|"]
    for row in rows:
        cells = [row["name"], row["what"], _fmt(row["value"]), row["unit"]]
        cells += [_fmt(row.get("ratio")), row.get("note", "")]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return lines


def _print(rows: list[Row]) -> None:
    widths = [max(len(str(r["name"])) for r in rows), max(len(str(r["what"])) for r in rows)]
    for row in rows:
        ratio = f"  ratio {_fmt(row['ratio'])}" if row.get("ratio") is not None else ""
        note = f"  ({row['note']})" if row.get("note") else ""
        print(
            f"{row['name']:<{widths[0]}}  {row['what']:<{widths[1]}}  "
            f"{_fmt(row['value']):>10} {row['unit']}{ratio}{note}"
        )


def record(rows: list[Row], info: dict[str, str], command: str, path: Path = RESULTS) -> None:
    """Append a dated section with the machine and the rows to ``path``."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "",
        f"## {stamp} — `{command}`",
        "",
        f"- Machine: {info['cpu']}, {info['cores']} cores, {info['ram']} RAM ({info['os']}); "
        f"1-min load average at start {info['load']}",
        f"- Python {info['python']}; {info['packages']}",
        f"- fairengine {info['fairengine']}",
        "",
        *_table(rows),
        "",
    ]
    if not path.exists():
        path.write_text("# Benchmark results\n\nAppended by `python bench/run.py`; newest last.\n")
    with path.open("a") as handle:
        handle.write("\n".join(lines))


def rebuild_index(registry: Registry, path: Path = RESULTS) -> None:
    """Refresh the current results and sort the history of ``path`` (tools/results_index.py)."""
    spec = importlib.util.spec_from_file_location(
        "results_index", ROOT / "tools" / "results_index.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.rebuild(
        path, {b.name: module.describe(b.function) for b in registry.benchmarks.values()}
    )


def run(benchmarks: Sequence[Benchmark], *, quick: bool) -> list[Row]:
    """Run benchmarks in order and return their rows (each tagged with its benchmark's name)."""
    rows: list[Row] = []
    for bench in benchmarks:
        print(f"-- {bench.name}: {bench.description}", flush=True)
        start = time.perf_counter()
        produced = bench.function(quick)
        for row in produced:
            missing = {"what", "value", "unit"} - set(row)
            if missing:
                raise ValueError(f"Benchmark {bench.name} returned a row without {missing}.")
            rows.append({"name": bench.name, **row})
        _print(rows[-len(produced) :] if produced else [])
        print(f"   ({time.perf_counter() - start:.1f} s)", flush=True)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="benchmarks or modules to run")
    parser.add_argument("--quick", action="store_true", help="small data, for a smoke run")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--no-record", action="store_true", help=f"do not append to {RESULTS.name}")
    args = parser.parse_args(argv)
    registry = Registry().discover()
    if args.list:
        for bench in registry.benchmarks.values():
            print(f"{bench.name:<24} [{bench.module}] {bench.description}")
        return 0
    chosen = registry.select(args.names)
    info = machine()
    print(f"{info['cpu']}, {info['cores']} cores, {info['ram']}; Python {info['python']}")
    rows = run(chosen, quick=args.quick)
    if rows and not args.no_record:
        command = " ".join(
            ["python bench/run.py", *args.names, *(["--quick"] if args.quick else [])]
        )
        record(rows, info, command)
        rebuild_index(registry)
        print(f"recorded in {RESULTS.relative_to(ROOT)} (current results and history)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
