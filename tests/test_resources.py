"""One resolver for the bundled files, in a clone and in an installed package."""

from __future__ import annotations

from pathlib import Path

import pytest

import fairengine
from fairengine import resources
from fairengine.data.registry import load_frame

REPO = Path(__file__).resolve().parents[1]


def test_clone_layout_is_the_repository_root() -> None:
    package = Path(fairengine.__file__).parent
    assert resources.bundle_root(package) == REPO
    assert resources.assets_dir(package) == REPO / "assets"
    assert resources.dashboard_app(package) == REPO / "dashboard" / "app.py"
    assert resources.dashboard_app().is_file() and resources.favicon().is_file()


def _installed_like(tmp_path: Path) -> Path:
    """site-packages/fairengine with its _bundle, and a decoy top-level assets/ beside it."""
    site = tmp_path / "site-packages"
    package = site / "fairengine"
    bundle = package / resources.BUNDLE
    (bundle / "assets" / "datasets").mkdir(parents=True)
    (bundle / "dashboard").mkdir()
    (bundle / "dashboard" / "app.py").write_text("# app\n")
    (site / "assets" / "datasets").mkdir(parents=True)  # another project's stray folder
    return package


def test_installed_layout_reads_the_bundle_not_site_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(resources.ASSETS_ENV, raising=False)
    package = _installed_like(tmp_path)
    bundle = package / resources.BUNDLE
    assert resources.bundle_root(package) == bundle
    assert resources.assets_dir(package) == bundle / "assets"
    assert resources.dashboard_app(package).read_text() == "# app\n"


def test_installed_layout_is_found_through_importlib_resources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = _installed_like(tmp_path)
    monkeypatch.setattr(resources, "_package_dir", lambda: package)
    assert resources.assets_dir() == package / resources.BUNDLE / "assets"
    assert resources.favicon() == package / resources.BUNDLE / "assets" / "favicon.png"


def test_environment_overrides_the_assets_in_both_layouts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(resources.ASSETS_ENV, str(tmp_path / "mine"))
    assert resources.assets_dir(_installed_like(tmp_path)) == tmp_path / "mine"
    assert resources.assets_dir() == tmp_path / "mine"
    assert resources.dashboard_app() == REPO / "dashboard" / "app.py"  # code is not overridden


def test_missing_data_file_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(resources.ASSETS_ENV, str(tmp_path))
    with pytest.raises(fairengine.DataError) as caught:
        load_frame("german_credit")
    message = str(caught.value)
    assert "not found at" in message and "Reinstall fairengine" in message
    assert "FAIRENGINE_ASSETS" in message


def test_every_reader_of_assets_goes_through_the_resolver() -> None:
    """No module builds the assets path from its own file location."""
    offenders = []
    for root in (REPO / "fairengine", REPO / "dashboard"):
        for path in root.rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if '"assets"' in text and path.name != "resources.py":
                offenders.append(str(path.relative_to(REPO)))
    assert offenders == []
