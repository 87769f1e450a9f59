"""The documentation site covers the code: a guide per registered method, every knob in the
generated tables, every public module in the API reference, and nothing fetched at build time.

The strict build itself runs in CI (``.ci/docs``); these tests check the generators and the
site's sources without MkDocs."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from fairengine.methods import get_method, list_methods

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "tools" / "docs_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = _hooks()


def _cells(row: str) -> list[str]:
    """The cells of one Markdown table row (escaped pipes stay inside their cell)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


@pytest.mark.parametrize("name", list_methods())
def test_every_method_has_a_guide_with_its_generated_knob_table(name):
    page = DOCS / "methods" / hooks.guide_page(name)
    assert page.is_file(), f"method {name!r} has no guide page {page.relative_to(ROOT)}"
    text = page.read_text(encoding="utf-8")
    assert f"<!-- knobs: {name} -->" in text, f"{page.name} does not show {name}'s knob table"
    assert f"methods/{page.name}" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", list_methods())
def test_knob_table_has_one_row_per_knob_with_its_default(name):
    method = get_method(name)
    lines = hooks.knob_table(name).strip().splitlines()
    header, rows = _cells(lines[0]), lines[2:]
    assert len(rows) == len(method.knobs)
    for knob, row in zip(method.knobs, rows, strict=True):
        cells = _cells(row)
        assert len(cells) == len(header), f"{name}.{knob.name}: a pipe in a cell broke the row"
        assert cells[0].startswith(f"`{knob.name}`<br>")
        assert cells[1] == f"`{knob.default}`"
        assert cells[2].startswith(knob.kind)
        if knob.kind == "choice":
            assert all(f"`{c}`" in cells[2] for c in knob.choices)
        if knob.demo_high is not None:
            assert f"hosted demo ≤ {knob.demo_high:g}" in cells[2]


def test_knob_marks_in_the_guides_expand_to_tables():
    text = hooks.expand("before\n<!-- knobs: reweighing -->\nafter <!-- methods -->")
    assert "<!--" not in text
    assert "| `strength`<br>" in text
    for name in list_methods():
        assert f"| `{name}` |" in text


def test_metrics_table_lists_every_registered_metric():
    from fairengine.metrics import REGISTRY

    table = hooks.metrics_table()
    assert len(table.strip().splitlines()) == 2 + len(REGISTRY)
    for name in REGISTRY:
        assert f"| `{name}`<br>" in table


def test_every_public_module_is_on_exactly_one_reference_page():
    modules = hooks.public_modules()
    assert "fairengine.methods.maxent.debiaser" in modules
    assert not [m for m in modules if any(p.startswith("_") for p in m.split(".")[1:])]
    pages = hooks.reference_pages(modules)
    listed = [m for text in pages.values() for m in re.findall(r"^::: (\S+)$", text, re.M)]
    assert sorted(listed) == sorted(modules)
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in pages:
        assert f"reference/{page}.md" in nav


def test_site_needs_no_network_at_build_or_read_time():
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["theme"]["font"] is False  # Material would load web fonts otherwise
    assert config["strict"] is True
    assert "extra" not in config or "analytics" not in (config["extra"] or {})
    plugin_names = {p if isinstance(p, str) else next(iter(p)) for p in config["plugins"]}
    assert not plugin_names & {"social", "privacy", "git-revision-date-localized"}
    for path in DOCS.rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=\"https?:", text), path


def test_changelog_page_includes_the_repository_changelog():
    assert '--8<-- "CHANGELOG.md"' in (DOCS / "changelog.md").read_text(encoding="utf-8")
    assert (ROOT / "CHANGELOG.md").is_file()


def test_datasets_table_lists_every_bundled_dataset():
    from fairengine.data import list_datasets

    table = hooks.datasets_table()
    names = [info.name for info in list_datasets()]
    assert len(table.strip().splitlines()) == 2 + len(names)
    for name in names:
        assert f"| `{name}` |" in table


def _environment_variables(*folders: str) -> set[str]:
    found = set()
    for folder in folders:
        for path in (ROOT / folder).rglob("*.py"):
            found |= set(re.findall(r"FAIRENGINE_[A-Z_]*[A-Z]", path.read_text(encoding="utf-8")))
    return found


def test_deploy_guide_documents_every_environment_variable_the_app_reads():
    documented = (DOCS / "howto" / "deploy.md").read_text(encoding="utf-8")
    from dataclasses import fields

    from fairengine.settings import PREFIX, Settings

    read = {PREFIX + field.name.upper() for field in fields(Settings)}
    assert "FAIRENGINE_DEMO" in read and "FAIRENGINE_CACHE" in read
    read |= _environment_variables("fairengine", "dashboard")
    missing = sorted(name for name in read if f"`{name}`" not in documented)
    assert not missing, f"docs/howto/deploy.md does not document {missing}"


def test_sphinx_roles_in_docstrings_become_code_spans():
    pytest.importorskip("griffe")
    spec = importlib.util.spec_from_file_location("roles", ROOT / "tools" / "griffe_roles.py")
    roles = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(roles)
    text = "See :func:`~fairengine.metrics.dp_diff` and :class:`fairengine.Task`, not :smile:`x`."
    assert roles.plain_roles(text) == "See `dp_diff` and `fairengine.Task`, not :smile:`x`."


def test_every_python_example_in_the_docs_compiles():
    blocks = []
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        blocks += [(path.name, b) for b in re.findall(r"```python\n(.*?)```", text, flags=re.S)]
    assert len(blocks) >= 7
    for name, block in blocks:
        compile(block, f"docs {name}", "exec")


@pytest.mark.parametrize("name", list_methods())
def test_a_method_with_a_page_shows_the_pages_reading_guide(name):
    if not (ROOT / "dashboard" / "views" / f"{name}.py").is_file():
        pytest.skip(f"{name} has no page of its own")
    guides = hooks.page_guides()
    assert name in guides, f"dashboard/guides/{name}.md: no reading guide"
    text = (DOCS / "methods" / hooks.guide_page(name)).read_text(encoding="utf-8")
    assert f"<!-- page-guide: {name} -->" in text
    expanded = hooks.expand(f"<!-- page-guide: {name} -->")
    assert "**The question.**" not in expanded and expanded.strip()
