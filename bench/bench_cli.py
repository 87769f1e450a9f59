"""Start-up of the command line: CPU time of whole ``fairengine`` processes.

Measured: ``python -c pass`` (the interpreter's start), ``fairengine datasets``, and a fully cached
3-point ``fairengine sweep reweighing --dataset german_credit`` (its store filled by a first run
in a temporary folder), each the median CPU time (user + system, of the child process) over a few
runs. The same commands also run on a baseline revision of the engine (default ``cf319c0``, the
last revision before the lazy imports; ``FAIRENGINE_CLI_BASELINE`` sets another), extracted with
``git archive`` into a temporary folder and run on this checkout's datasets, so the table shows
before and after side by side. Store keys are identical in both, so both read the same points.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = os.environ.get("FAIRENGINE_CLI_BASELINE", "cf319c0")
SWEEP = ("sweep", "reweighing", "--dataset", "german_credit", "--grid", "strength=0,0.5,1")
HEAVY = ("sklearn", "fairlearn", "pandas", "scipy", "pyarrow")
_PROBE = (
    "import runpy, sys\n"
    "sys.argv = ['fairengine', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('fairengine', run_name='__main__', alter_sys=True)\n"
    "except SystemExit:\n"
    "    pass\n"
    f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))),"
    " file=sys.stderr)\n"
)


def _cpu(command: list[str], *, cwd: Path, env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one child process running ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _median_cpu(command: list[str], repeats: int, *, cwd: Path, env: dict[str, str]) -> float:
    return statistics.median(_cpu(command, cwd=cwd, env=env) for _ in range(repeats))


def _heavy(args: tuple[str, ...], *, cwd: Path, env: dict[str, str]) -> str:
    """The heavy libraries a command imports (by running it once more under a probe)."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    return proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "none"


def _baseline_tree(folder: Path) -> Path | None:
    """The baseline revision's ``fairengine`` package, extracted under ``folder``."""
    archive = subprocess.run(
        ["git", "archive", BASELINE, "fairengine"], cwd=ROOT, capture_output=True
    )
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def cli_startup(quick: bool) -> list[dict]:
    """CPU time of `fairengine datasets` and of a fully cached 3-point sweep, before and after."""
    repeats = 3 if quick else 7
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="fairengine-cli-bench-") as tmp:
        store = Path(tmp) / "store"
        env = {
            **os.environ,
            "FAIRENGINE_CACHE": str(store),
            "FAIRENGINE_ASSETS": str(ROOT / "assets"),
            "PYTHONDONTWRITEBYTECODE": "",
        }
        trees = {"after": ROOT}
        baseline = _baseline_tree(_mkdir(Path(tmp) / "baseline"))
        if baseline is not None:
            trees = {"before": baseline, **trees}
        fairengine = [sys.executable, "-m", "fairengine"]
        # Fill the store (and this checkout's task-key memo) once; compile both trees' bytecode.
        subprocess.run([*fairengine, *SWEEP], cwd=ROOT, env=env, check=True, capture_output=True)
        for tree in trees.values():
            subprocess.run([*fairengine, *SWEEP], cwd=tree, env=env, check=True,
                           capture_output=True)  # fmt: skip
        start = _median_cpu([sys.executable, "-c", "pass"], repeats, cwd=ROOT, env=env)
        rows.append({"what": "python -c pass (interpreter start)", "value": start, "unit": "s CPU"})
        for label, args in (("fairengine datasets", ("datasets",)),
                            ("cached 3-point sweep", SWEEP)):  # fmt: skip
            measured = {
                name: _median_cpu([*fairengine, *args], repeats, cwd=tree, env=env)
                for name, tree in trees.items()
            }
            before = measured.get("before")
            for name, value in measured.items():
                heavy = _heavy(args, cwd=trees[name], env=env)
                where = f"git {BASELINE}" if name == "before" else "this checkout"
                rows.append(
                    {
                        "what": f"{label}, {name} ({where})",
                        "value": value,
                        "unit": "s CPU",
                        "ratio": None if before is None or name == "before" else before / value,
                        "note": f"{value - start:.3f} s beyond the interpreter's start; median of "
                        f"{repeats} runs; heavy imports: {heavy}"
                        + ("; ratio = before / after" if name == "after" and before else ""),
                    }
                )
    return rows


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def register(registry) -> None:
    registry.add(cli_startup)
