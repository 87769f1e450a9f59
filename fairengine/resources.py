"""What this installation holds: where fairengine's bundled files are (datasets, demo frontiers,
the favicon, the dashboard), in an installed wheel (``fairengine/_bundle``) or a clone (its
root), ``$FAIRENGINE_ASSETS`` overriding the assets folder; and the installed packages'
versions. Design notes: docs/architecture.md, "Bundled files"."""

from __future__ import annotations

from collections.abc import Iterable
from importlib import metadata, resources
from pathlib import Path

from fairengine import settings

#: The package-data folder of an installed fairengine that holds ``assets/`` and ``dashboard/``.
BUNDLE = "_bundle"
ASSETS_ENV = "FAIRENGINE_ASSETS"


def _package_dir() -> Path:
    return Path(str(resources.files("fairengine")))


def bundle_root(package: Path | None = None) -> Path:
    """The folder holding ``assets/`` and ``dashboard/``.

    Parameters
    ----------
    package : Path, optional
        The ``fairengine`` package folder (default: the imported one). Its ``_bundle`` folder when
        that exists (an installed wheel), else its parent (the root of a clone).
    """
    package = _package_dir() if package is None else Path(package)
    installed = package / BUNDLE
    return installed if installed.is_dir() else package.parent


def assets_dir(package: Path | None = None) -> Path:
    """Folder holding ``datasets/``, ``frontiers/`` and ``favicon.png``: ``$FAIRENGINE_ASSETS``,
    else the bundled one (:func:`bundle_root`)."""
    env = settings.current().assets
    return Path(env) if env else bundle_root(package) / "assets"


def favicon() -> Path:
    """The dashboard's page icon (always the bundled one: ``$FAIRENGINE_ASSETS`` holds data)."""
    return bundle_root() / "assets" / "favicon.png"


def dashboard_app(package: Path | None = None) -> Path:
    """The Streamlit script of the dashboard (``dashboard/app.py`` in the bundle root)."""
    return bundle_root(package) / "dashboard" / "app.py"


def package_versions(names: Iterable[str]) -> dict[str, str | None]:
    """The installed version of each distribution in ``names`` (None: not installed)."""
    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found
