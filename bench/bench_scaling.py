"""Scaling of every method: time, exponent, peak memory and result size per fit.

Adult resampled (with replacement, seeded) to 1×, 4× and 16× its rows, and a wide table (Adult
plus 100 numeric columns, 113 features) at 1×. Each fit runs in its own process, so one fit's
memory never inflates the next: the worker loads and splits the data, encodes the training rows
once with :class:`~fairengine.data.FeatureEncoder` to know the *encoded matrix* size, then runs
``Method.run`` under :mod:`tracemalloc` (peak = the largest traced allocation total during the
run, numpy buffers included) and pickles the ``RunResult``.

Columns: the fit's CPU time (``time.process_time`` of the worker: the machine is shared, so
wall time mostly measures the neighbours; traced run, so slightly above an untraced one; BLAS
on one thread), exponent k of CPU time ∝ rowsᵏ between consecutive sizes,
peak traced memory and its ratio to the encoded training matrix, and
the pickled result size.

16× (547k training rows) runs only for the methods named in :data:`AT_16X` (the ones with a
linearity target; the others' 16× fits take minutes each on this shared 2-core
machine). ``FAIRENGINE_SCALING_ROOT=/path/to/checkout`` measures another checkout's code with
this same driver (how the "before" rows were measured: a ``git archive`` of main).

Run ``python bench/bench_scaling.py --worker METHOD FACTOR [wide]`` for one fit's JSON line.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Knobs per method: defaults (fair regression on Adult's income as a 0/1 real target).
METHODS: dict[str, dict] = {
    "reweighing": {},
    "fairlearn_eg": {},
    "balanced_filtering": {},
    "maxent": {},
    "fair_regression": {},
    "noisy_groups": {},
    "multiaccurate_proxy": {},
}
FACTORS = (1, 4, 16)
AT_16X = ("maxent", "fair_regression")
WIDE = ("maxent", "reweighing")
EXTRA_COLUMNS = 100
TIMEOUT = 900


def _tasks(method: str, factor: int, wide: bool):
    import numpy as np

    from fairengine.data import from_frame, load_dataset

    frame = load_dataset("adult", sensitive="sex").frame.copy()
    rng = np.random.default_rng(18)
    if wide:
        base = frame["age"].to_numpy(float)
        for j in range(EXTRA_COLUMNS):
            noise = rng.normal(scale=5.0 + j % 7, size=len(frame))
            frame[f"x{j:03d}"] = np.round(base * (1 + j % 3) + noise).astype(int)
    if factor > 1:
        frame = frame.iloc[rng.choice(len(frame), factor * len(frame), replace=True)]
        frame = frame.reset_index(drop=True)
    if method == "fair_regression":
        frame["income"] = (frame["income"].astype(str) == ">50K").astype(float)
        task = from_frame(frame, target="income", sensitive=["sex"], kind="regression",
                          name="adult")  # fmt: skip
    else:
        task = from_frame(frame, target="income", sensitive=["sex"], name="adult",
                          positive_label=">50K")  # fmt: skip
    return task.split(random_state=0)


def worker(method: str, factor: int, wide: bool) -> dict:
    """One fit, measured (runs in a fresh process)."""
    from fairengine.data import FeatureEncoder
    from fairengine.methods import get_method

    train, test = _tasks(method, factor, wide)
    encoded = FeatureEncoder().fit(train.X).transform(train.X)
    matrix = encoded.nbytes
    del encoded
    tracemalloc.start()
    start, cpu = time.perf_counter(), time.process_time()
    result = get_method(method).run(train, test, **METHODS[method])
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    size = len(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    return {
        "method": method, "factor": factor, "wide": wide, "rows": len(train.y),
        "columns": len(train.features), "seconds": seconds, "cpu": cpu, "peak": peak,
        "matrix": matrix, "result": size,
    }  # fmt: skip


def measure(method: str, factor: int, wide: bool = False) -> dict | None:
    root = Path(os.environ.get("FAIRENGINE_SCALING_ROOT", ROOT))
    env = {**os.environ, "PYTHONPATH": str(root)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", method, str(factor)]
    if wide:
        cmd.append("wide")
    try:
        out = subprocess.run(
            cmd, env=env, cwd=root, capture_output=True, text=True, timeout=TIMEOUT, check=True
        )
    except (subprocess.TimeoutExpired, subprocess.CalledProcessError) as exc:
        print(f"{method} {factor}x{' wide' if wide else ''}: failed ({exc})", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def scaling(quick: bool) -> list[dict]:
    """Time, exponent, peak memory / encoded matrix, result size: 1×, 4× (16×) Adult, wide."""

    rows: list[dict] = []
    only = os.environ.get("FAIRENGINE_SCALING_METHODS")
    methods = only.split(",") if only else list(METHODS)
    label = os.environ.get("FAIRENGINE_SCALING_LABEL", "")
    for method in methods:
        factors = (1,) if quick else tuple(f for f in FACTORS if f < 16 or method in AT_16X)
        previous = None
        for factor in factors:
            m = measure(method, factor)
            if m is None:
                rows.append({"what": f"{label}{method} {factor}x: failed", "value": float("nan"),
                             "unit": "s"})  # fmt: skip
                break
            rows.append(_row(label, m, _exponent_text(m, previous)))
            previous = m
        if method in WIDE and not quick:
            m = measure(method, 1, wide=True)
            if m is not None:
                rows.append(_row(label, m, ""))
    return rows


def _exponent_text(m: dict, previous: dict | None) -> str:
    """ ", k = … vs Fx": the time exponent between this measurement and the previous factor."""
    if previous is None:
        return ""
    ratio = m["cpu"] / previous["cpu"]
    k = math.log(ratio) / math.log(m["factor"] / previous["factor"])
    return f", k = {k:.2f} vs {previous['factor']}x"


def _row(label: str, m: dict, k: str) -> dict:
    table = f"wide ({m['columns']} columns)" if m["wide"] else f"{m['factor']}x"
    return {
        "what": f"{label}{m['method']} {table}: fit CPU time",
        "value": round(m["cpu"], 2),
        "unit": "s",
        "ratio": round(m["peak"] / m["matrix"], 2),
        "note": f"{m['rows']:,} train rows{k}; wall {m['seconds']:.1f} s; "
        f"peak {m['peak'] / 2**20:.0f} MB = ratio x encoded "
        f"matrix {m['matrix'] / 2**20:.0f} MB; result pickles to {m['result'] / 2**20:.2f} MB",
    }


def register(registry) -> None:
    registry.add(scaling)


#: Each measurement is also appended here (one JSON line per fit, keyed by the measured
#: checkout), so an interrupted run loses nothing and the table can be rebuilt (``--table``).
LOG_DIR = Path(os.environ.get("FAIRENGINE_SCALING_LOG", "/tmp/fairengine_scaling"))
#: Lines "METHOD FACTOR [wide]" in ``skip`` (any checkout) or ``skip-<checkout folder>`` are
#: skipped (the worker exits with status 3): how a long run is trimmed while it runs.
SKIP = "skip"


def _key(method: str, factor: int, wide: bool) -> str:
    return f"{method} {factor}{' wide' if wide else ''}"


def _log_path(root: Path) -> Path:
    return LOG_DIR / f"{root.resolve().name}.jsonl"


def logged(root: Path) -> dict[str, dict]:
    """The measurements logged for a checkout, by "METHOD FACTOR [wide]" (the last one wins)."""
    path = _log_path(root)
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text().splitlines():
        m = json.loads(line)
        out[_key(m["method"], m["factor"], m["wide"])] = m
    return out


def table(root: Path, label: str) -> list[dict]:
    """Rows of the logged measurements of a checkout, in the benchmark's order."""
    found = logged(root)
    rows: list[dict] = []

    for method in METHODS:
        previous = None
        for factor in FACTORS:
            m = found.get(_key(method, factor, False))
            if m is None:
                continue
            rows.append(_row(label, m, _exponent_text(m, previous)))
            previous = m
        m = found.get(_key(method, 1, True))
        if m is not None:
            rows.append(_row(label, m, ""))
    return rows


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "--worker":
        root = Path(os.environ.get("PYTHONPATH", str(ROOT)).split(os.pathsep)[0])
        sys.path.insert(0, str(root))
        method, factor, wide = sys.argv[2], int(sys.argv[3]), "wide" in sys.argv[4:]
        for skip in (LOG_DIR / SKIP, LOG_DIR / f"{SKIP}-{root.resolve().name}"):
            if skip.exists() and _key(method, factor, wide) in skip.read_text().splitlines():
                raise SystemExit(3)
        measured = worker(method, factor, wide)
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        with _log_path(root).open("a") as log:
            log.write(json.dumps(measured) + "\n")
        print(json.dumps(measured))
    elif len(sys.argv) >= 3 and sys.argv[1] == "--table":
        for row in table(Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else ""):
            print(row)
    else:
        raise SystemExit("usage: bench_scaling.py --worker METHOD FACTOR [wide] | --table ROOT")
