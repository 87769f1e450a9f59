"""The app starts from a clean clone with only the runtime requirements (what Streamlit Community
Cloud does: clone the repository, ``pip install -r requirements.txt``, ``streamlit run``).

Pragmatic version: this machine has the dev requirements installed too, so the check clones the
committed HEAD into a temporary directory and runs the app there (Streamlit's AppTest, the Data
page on the default dataset) in a fresh interpreter in which

* every installed package that ``requirements.txt`` does not pull in (its requirements and
  theirs, transitively) is made unimportable -- the dev tools and anything else on this machine;
  libraries that import optional packages opportunistically then see them missing, as on a fresh
  deployment -- and
* ``fairengine`` must come from the clone (not from an installed copy).

It therefore also catches files the app needs but git does not track (the clone lacks them).
Uncommitted changes are not seen: it checks what a deployment would get.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _names(requirements: Path) -> set[str]:
    names = set()
    for line in requirements.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.add(re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0].lower().replace("_", "-"))
    return names


RUNNER = textwrap.dedent(
    """
    import importlib.abc, importlib.metadata as md, json, os, re, sys

    def norm(name):
        return name.lower().replace("_", "-")

    def closure(names):
        seen, todo = set(), list(names)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            try:
                requires = md.requires(name) or []
            except md.PackageNotFoundError:
                continue
            for req in requires:
                if "extra ==" not in req:
                    todo.append(norm(re.split(r"[<>=!~\\[; (]", req, maxsplit=1)[0]))
        return seen

    allowed = closure(set(sys.argv[1].split(",")) | {"streamlit"})
    dists = md.packages_distributions()  # top-level module -> distributions
    # Everything installed here that requirements.txt does not pull in becomes unimportable
    # (the dev tools, and whatever else this machine has); fairengine must come from the clone.
    blocked = {
        module for module, owners in dists.items()
        if module != "fairengine" and not {norm(d) for d in owners} & allowed
    } - set(sys.modules)

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in blocked:
                raise ModuleNotFoundError(f"{name} is not in requirements.txt", name=name)
            return None

    sys.meta_path.insert(0, Block())
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(os.path.abspath("dashboard/app.py"), default_timeout=180)
    at.run()
    import fairengine
    print(json.dumps({
        "blocked": len(blocked),
        "exceptions": [str(e.value) for e in at.exception],
        "titles": [t.value for t in at.title],
        "metrics": {m.label: m.value for m in at.metric},
        "fairengine": fairengine.__file__,
    }))
    """
)


def test_app_starts_from_a_clean_clone_with_runtime_requirements_only(tmp_path: Path) -> None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "--quiet", "--depth", "1", f"file://{REPO}", str(clone)],
        check=True,
        timeout=120,
    )
    runtime = _names(clone / "requirements.txt")
    dev_only = _names(clone / "requirements-dev.txt") - runtime
    assert "streamlit" in runtime and "pytest" in dev_only
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "FAIR"))
    }
    env["FAIRENGINE_CACHE"] = str(tmp_path / "cache")
    proc = subprocess.run(
        [sys.executable, "-I", "-c", RUNNER, ",".join(sorted(runtime))],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["exceptions"] == []
    assert report["titles"] == ["Data"]
    assert report["metrics"]["Rows"] == "48,842"  # the default dataset, read from the clone
    assert report["blocked"] > 0  # the dev tools at least were made unimportable
    assert Path(report["fairengine"]).resolve().is_relative_to(clone.resolve())
