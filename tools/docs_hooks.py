"""MkDocs hooks of the documentation site (``mkdocs.yml``: ``hooks: [tools/docs_hooks.py]``).

The parts of the site that would drift if written by hand are generated from the code at build
time:

* ``<!-- knobs: NAME -->`` in a page becomes the table of method ``NAME``'s knobs, read from
  its :class:`~fairengine.methods.base.Knob` declarations (:func:`knob_table`);
* ``<!-- page-guide: NAME -->`` becomes the "How to read this page" text that the dashboard
  shows on method ``NAME``'s page (:func:`page_guide`), so the guide and the page say the same;
* ``<!-- methods -->`` becomes the table of every registered method (:func:`methods_table`);
* ``<!-- datasets -->`` becomes the table of the bundled datasets (:func:`datasets_table`);
* ``<!-- metrics -->`` becomes the table of every reported metric, from
  :data:`fairengine.metrics.REGISTRY` (:func:`metrics_table`);
* the API reference pages ``reference/<area>.md`` are written from the package tree: every
  public module (no part of its name starts with ``_``) is listed on the page of the area it
  belongs to, and a module outside the known areas on ``reference/other.md``
  (:func:`reference_pages`), so a new module is documented without editing the site.

Text read from the code is escaped with :func:`fairengine.textsafe.md_text` (the site enables
``pymdownx.escapeall`` so that every backslash escape reads as the character itself).
"""

from __future__ import annotations

import pkgutil
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the checkout's package, not an installed copy
    sys.path.insert(0, str(ROOT))

from fairengine.methods import Knob, Method, get_method, list_methods  # noqa: E402
from fairengine.methods.registry import METHOD_MODULES  # noqa: E402
from fairengine.textsafe import md_code, md_text  # noqa: E402

#: Reference page -> (title, module prefixes it holds, one line on what the area is).
AREAS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "package": ("fairengine", ("fairengine",), "The package's top level."),
    "data": ("Data", ("fairengine.data",), "Datasets, uploads, roles, the task, the encoder."),
    "metrics": ("Metrics", ("fairengine.metrics",), "One definition of every reported metric."),
    "methods": (
        "Method contract",
        (
            "fairengine.methods.base",
            "fairengine.methods.registry",
            "fairengine.methods.evidence",
            "fairengine.methods.evaluation",
            "fairengine.methods.params",
            "fairengine.methods",
        ),
        "Knobs, methods, the registry, the shared evaluation and the evidence of every result.",
    ),
    "reference_methods": (
        "Reference methods",
        (
            "fairengine.methods.reweighing",
            "fairengine.methods.fairlearn_eg",
            "fairengine.methods.threshold_optimizer",
        ),
        "The reference methods every result is compared with.",
    ),
    "balanced_filtering": (
        "Balanced filtering",
        ("fairengine.methods.balanced_filtering",),
        "Balanced filtering via non-disclosive proxies.",
    ),
    "maxent": (
        "Max-entropy debiasing",
        ("fairengine.methods.maxent",),
        "Maximum-entropy data debiasing.",
    ),
    "fair_regression": (
        "Fair regression",
        ("fairengine.methods.fair_regression",),
        "Fair regression by reductions.",
    ),
    "noisy_groups": (
        "Noisy protected groups",
        ("fairengine.methods.noisy_groups",),
        "Robust fairness with noisy protected groups.",
    ),
    "multiaccurate_proxy": (
        "Multiaccurate proxies",
        ("fairengine.methods.multiaccurate_proxy",),
        "Multiaccurate proxies for downstream fairness.",
    ),
    "solvers": ("Solvers", ("fairengine.solvers",), "Shared optimisation pieces."),
    "frontier": (
        "Frontier and sweeps",
        ("fairengine.frontier", "fairengine.sweeps"),
        "Knob sweeps, Pareto sets, the on-disk stores; method-specific sweeps.",
    ),
    "models": ("Models", ("fairengine.models",), "Exportable model types."),
    "export": ("Export", ("fairengine.export",), "Model files, cards and the file client."),
    "audit": (
        "Audit and report",
        ("fairengine.audit", "fairengine.report"),
        "An outside model on the plane, what it would cost to be fairer, saved comparisons and "
        "the one-file HTML report.",
    ),
    "cli": (
        "Command line",
        (
            "fairengine.cli",
            "fairengine.cli.main",
            "fairengine.cli.shared",
            "fairengine.cli.cache",
            "fairengine.cli.audit",
            "fairengine.cli.dashboard",
        ),
        "The `fairengine` command.",
    ),
    "textsafe": ("Text safety", ("fairengine.textsafe",), "The escaping rule for user text."),
}
OTHER = ("other", ("Other modules", (), "Public modules outside the areas above."))

KNOB_MARK = re.compile(r"<!--\s*knobs:\s*([A-Za-z0-9_]+)\s*-->")
PAGE_GUIDE_MARK = re.compile(r"<!--\s*page-guide:\s*([A-Za-z0-9_]+)\s*-->")
#: The dashboard's "How to read this page" texts, read without importing Streamlit.
GUIDES = ROOT / "dashboard" / "guides"
METHODS_MARK = "<!-- methods -->"
METRICS_MARK = "<!-- metrics -->"
DATASETS_MARK = "<!-- datasets -->"


def public_modules(package: str = "fairengine") -> list[str]:
    """Every importable public module of ``package`` (itself included), sorted by name."""
    root = __import__(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
        parts = info.name.split(".")
        if any(part.startswith("_") for part in parts[1:]):
            continue
        names.append(info.name)
    return sorted(names)


def is_package(module: str) -> bool:
    """True when ``module`` is a package (a folder with ``__init__.py``) in the checkout."""
    return (ROOT / module.replace(".", "/") / "__init__.py").is_file()


def area_of(module: str) -> str:
    """The reference page ``module`` belongs to: the area with the longest matching prefix."""
    best, length = OTHER[0], -1
    for page, (_, prefixes, _) in AREAS.items():
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".")
            if prefix == "fairengine":  # the top-level page holds only the package itself
                matches = module == prefix
            if matches and len(prefix) > length:
                best, length = page, len(prefix)
    parts = module.split(".")
    if best == "methods" and len(parts) > 2 and parts[2] in METHOD_MODULES:
        return "reference_methods"  # a registered method without an area of its own
    return best


def module_block(module: str) -> str:
    """The mkdocstrings block of one module: a package shows its docstring only (its names are
    documented in its submodules, and many are loaded lazily), a module its public members."""
    if is_package(module):
        return f"::: {module}\n    options:\n      members: false\n"
    return f"::: {module}\n"


def reference_pages(modules: Iterable[str]) -> dict[str, str]:
    """Reference page name -> its Markdown, for every area that holds a module."""
    grouped: dict[str, list[str]] = {}
    for module in modules:
        grouped.setdefault(area_of(module), []).append(module)
    pages = {}
    for page, (title, _, about) in [*AREAS.items(), OTHER]:
        members = grouped.get(page, [])
        if page == OTHER[0] and not members:
            members_text = "Every public module belongs to one of the areas above.\n"
        else:
            members_text = "\n".join(module_block(m) for m in members)
        pages[page] = f"# {title}\n\n{about}\n\n{members_text}"
    return pages


def _range(knob: Knob) -> str:
    if knob.kind == "choice":
        return ", ".join(md_code(str(c)) for c in knob.choices or ())
    if knob.kind == "bool":
        return "true / false"
    low = "−∞" if knob.low is None else f"{knob.low:g}"
    high = "∞" if knob.high is None else f"{knob.high:g}"
    scale = ", log scale" if knob.log else ""
    return f"{low} … {high}{scale}"


def _demo(knob: Knob) -> str:
    """What a shared hosted demo offers of ``knob``, when less than the full range."""
    if knob.demo_high is not None:
        return f"; hosted demo ≤ {knob.demo_high:g}"
    if knob.demo_choices is not None:
        return "; hosted demo: " + ", ".join(md_code(str(c)) for c in knob.demo_choices)
    return ""


def knob_rows(method: Method) -> list[tuple[str, str, str, str]]:
    """One row per knob of ``method``: name and label, default, values (with the hosted demo's
    limit), and what it does."""
    return [
        (
            f"{md_code(knob.name)}<br>{md_text(knob.display_label)}",
            md_code(str(knob.default)),
            f"{knob.kind}: {_range(knob)}{_demo(knob)}",
            md_text(knob.help),
        )
        for knob in method.knobs
    ]


def knob_table(name: str) -> str:
    """The Markdown table of method ``name``'s knobs (every knob, in declaration order)."""
    method = get_method(name)
    head = "| knob | default | values | what it does |\n|---|---|---|---|\n"
    body = "".join("| " + " | ".join(row) + " |\n" for row in knob_rows(method))
    return head + body


def methods_table() -> str:
    """The Markdown table of every registered method with its version and guide page."""
    head = "| method | version | task kinds | plane | paper | guide |\n|---|---|---|---|---|---|\n"
    rows = []
    for name in list_methods():
        m = get_method(name)
        plane = f"{md_code(m.performance_metric)} × {md_code(m.fairness_metric)}"
        kinds = ", ".join(m.kinds)
        guide = f"[{md_text(m.title)}]({guide_page(name)})"
        rows.append(
            f"| {md_code(name)} | {m.version} | {kinds} | {plane} | {md_text(m.reference)} "
            f"| {guide} |\n"
        )
    return head + "".join(rows)


def metrics_table() -> str:
    """The Markdown table of every metric name a result may report: its direction, unit, task
    kinds, definition and the function computing it."""
    from fairengine.methods import list_methods
    from fairengine.metrics import REGISTRY

    list_methods()  # the methods declare their own metrics when they register
    head = "| metric | better | unit | task kinds | definition |\n|---|---|---|---|---|\n"
    rows = [
        f"| {md_code(name)}<br>{md_text(info.label)} | "
        f"{'lower' if info.lower_is_better else 'higher'} | {md_text(info.unit)} | "
        f"{', '.join(info.kinds)} | {md_text(info.definition)} "
        f"(`{info.module_path}.{name}`) |\n"
        for name, info in REGISTRY.items()
    ]
    return head + "".join(rows)


def datasets_table() -> str:
    """The Markdown table of the bundled datasets: size, kind, targets, sensitive columns,
    source and licence (defaults first)."""
    from fairengine.data import list_datasets

    head = (
        "| name | rows | kind | target | sensitive (default first) | source | licence |\n"
        "|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for info in list_datasets():
        targets = ", ".join(md_code(t) for t in info.target_options)
        sensitive = ", ".join(md_code(c) for c in info.sensitive_options)
        rows.append(
            f"| {md_code(info.name)} | {info.rows:,} | {info.kind} | {targets} | {sensitive} "
            f"| {md_text(info.source)} | {md_text(info.licence)} |\n"
        )
    return head + "".join(rows)


def page_guides() -> dict[str, str]:
    """Method name -> the reading guide of its dashboard page (``dashboard/guides/<name>.md``)."""
    guides = {p.stem: p.read_text(encoding="utf-8").strip() for p in sorted(GUIDES.glob("*.md"))}
    if not guides:
        raise LookupError(f"No reading guide in {GUIDES}.")
    return guides


def page_guide(name: str) -> str:
    """The reading guide of method ``name``'s page, without its opening question (each guide
    states the question in its own words)."""
    text = page_guides()[name]
    paragraphs = text.split("\n\n")
    if paragraphs[0].startswith("**The question.**"):
        paragraphs = paragraphs[1:]
    return "\n\n".join(paragraphs)


def guide_page(name: str) -> str:
    """The guide page of method ``name``, relative to ``docs/methods/``."""
    return f"{name}.md"


def expand(markdown: str) -> str:
    """``markdown`` with its knob, page-guide, method, dataset and metric marks replaced by the
    generated text."""
    text = KNOB_MARK.sub(lambda m: knob_table(m.group(1)), markdown)
    text = PAGE_GUIDE_MARK.sub(lambda m: page_guide(m.group(1)), text)
    if METHODS_MARK in text:
        text = text.replace(METHODS_MARK, methods_table())
    if DATASETS_MARK in text:
        text = text.replace(DATASETS_MARK, datasets_table())
    if METRICS_MARK in text:
        text = text.replace(METRICS_MARK, metrics_table())
    return text


# ---- MkDocs event hooks ------------------------------------------------------------------------


def on_files(files: Any, config: Any) -> Any:
    """Add the generated API reference pages (``reference/<area>.md``)."""
    from mkdocs.structure.files import File

    for page, text in reference_pages(public_modules()).items():
        files.append(File.generated(config, f"reference/{page}.md", content=text))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Expand the generated tables in every page."""
    return expand(markdown)
