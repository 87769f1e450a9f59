"""Build hook: the wheel carries the repository's ``assets/`` (bundled datasets with their
licences and PROVENANCE, the precomputed demo frontiers, the favicon), ``dashboard/`` and the
Streamlit settings as package data in the private folder ``fairengine/_bundle``.

The source trees stay where a clone uses them (``streamlit run dashboard/app.py``); they are
copied at build time, so no top-level ``dashboard`` or ``assets`` package is installed into
site-packages. ``fairengine.resources`` finds them in either layout. Everything else about the
package is declared in ``pyproject.toml``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
BUNDLE = Path("fairengine") / "_bundle"
#: Source (relative to the repository root) → target inside the bundle.
TREES = {"assets": "assets", "dashboard": "dashboard", ".streamlit": ".streamlit"}
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", "secrets.toml")


class BuildWithBundle(build_py):
    """``build_py`` that also copies the bundled trees into ``fairengine/_bundle``."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):  # an editable install reads the clone itself
            return
        for source, target in TREES.items():
            origin = ROOT / source
            if not origin.is_dir():
                raise FileNotFoundError(f"{origin} is missing: the package needs it as data.")
            destination = Path(self.build_lib) / BUNDLE / target
            shutil.rmtree(destination, ignore_errors=True)
            shutil.copytree(origin, destination, ignore=SKIPPED)


setup(cmdclass={"build_py": BuildWithBundle})
