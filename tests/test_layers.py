"""The layers import only downward and no modules import each other in a loop.

Every ``import`` of the engine and the dashboard counts, inside functions too (a run-time import
is still a dependency); imports under ``if TYPE_CHECKING:`` count for the layers but not for the
cycles (they never run). The order, bottom to top, is the one docs/architecture.md draws.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Bottom to top; a module belongs to the longest prefix that names it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("fairengine.textsafe", "fairengine.resources", "fairengine.settings", "fairengine.lru"),
    ("fairengine", "fairengine.data"),  # the package's face imports the data layer only
    ("fairengine.metrics",),
    ("fairengine.solvers", "fairengine.models"),
    ("fairengine.methods",),
    ("fairengine.export",),
    ("fairengine.frontier",),
    ("fairengine.sweeps", "fairengine.audit"),
    ("fairengine.report",),
    ("fairengine.cli", "fairengine.__main__"),
    ("dashboard",),
)

#: Import cycles allowed: none.
KNOWN_CYCLES: set[frozenset[str]] = set()


#: Private names still imported across modules (importer, imported) -> names; nothing may be added.
KNOWN_PRIVATE: dict[tuple[str, str], set[str]] = {}


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for package in ("fairengine", "dashboard"):
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


MODULES = _modules()


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The modules of this tree that ``node`` imports (a name from a package that is a module
    of its own counts as that module)."""
    if isinstance(node, ast.Import):
        pairs = [(alias.name, None) for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            package = package[: len(package) - node.level + 1]
            base = ".".join([*package, base] if base else package)
        pairs = [(base, alias.name) for alias in node.names]
    out = set()
    for base, name in pairs:
        if name and f"{base}.{name}" in MODULES:
            out.add(f"{base}.{name}")
            continue
        while base and base not in MODULES:
            base = base.rpartition(".")[0]
        if base:
            out.add(base)
    return out - {module}


def _type_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:``."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            ids.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return ids


@cache
def _imports() -> dict[tuple[str, str], bool]:
    """(importer, imported) -> whether some import of it runs (not only for type checkers)."""
    edges: dict[tuple[str, str], bool] = {}
    for module, (path, is_package) in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        type_only = _type_only(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _targets(module, is_package, node):
                    runs = edges.get((module, target), False) or id(node) not in type_only
                    edges[(module, target)] = runs
    return edges


def _private_imports() -> dict[tuple[str, str], set[str]]:
    """(importer, imported) -> the ``_names`` the importer takes from another module."""
    found: dict[tuple[str, str], set[str]] = {}
    for module, (path, is_package) in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    private = alias.name.startswith("_") and not alias.name.startswith("__")
                    for target in _targets(module, is_package, node) if private else ():
                        if target not in (module, f"{node.module}.{alias.name}"):
                            found.setdefault((module, target), set()).add(alias.name)
    return found


def layer_of(module: str) -> int:
    best = (-1, -1)
    for level, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best[1]:
                best = (level, len(prefix))
    return best[0]


def _cycles(edges: dict[tuple[str, str], bool]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, list[str]] = {m: [] for m in MODULES}
    for (a, b), runs in edges.items():
        if runs:
            graph[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(graph[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_every_module_has_a_layer() -> None:
    assert [m for m in MODULES if layer_of(m) < 0] == []


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = sorted(
        f"{a} (layer {layer_of(a)}) imports {b} (layer {layer_of(b)})"
        for a, b in _imports()
        if layer_of(b) > layer_of(a)
    )
    assert upward == []


def test_no_import_cycles() -> None:
    new = [sorted(c) for c in _cycles(_imports()) if c not in KNOWN_CYCLES]
    assert new == []


def test_no_new_private_names_are_imported_across_modules() -> None:
    new = {
        pair: sorted(names - KNOWN_PRIVATE.get(pair, set()))
        for pair, names in _private_imports().items()
        if names - KNOWN_PRIVATE.get(pair, set())
    }
    assert new == {}


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ({("a.x", "a.y"): True, ("a.y", "a.x"): True}, [{"a.x", "a.y"}]),
        ({("a.x", "a.y"): True, ("a.y", "a.x"): False}, []),  # a type-only import closes no loop
        (
            {("a.x", "a.y"): True, ("a.y", "a.z"): True, ("a.z", "a.x"): True},
            [{"a.x", "a.y", "a.z"}],
        ),
    ],
)
def test_the_cycle_finder_finds_loops(monkeypatch, edges, expected) -> None:
    monkeypatch.setattr(
        "tests.test_layers.MODULES", {m: (Path(), False) for m in ("a.x", "a.y", "a.z")}
    )
    assert [set(c) for c in _cycles(edges)] == expected


def test_run_time_imports_inside_functions_are_read() -> None:
    """The metric registry once reached up to the method registry from inside a function: that
    import must show as an edge, and would be upward."""
    tree = ast.parse("def f():\n    from fairengine.methods.registry import load_builtin\n")
    node = tree.body[0].body[0]
    targets = _targets("fairengine.metrics.registry", False, node)
    assert targets == {"fairengine.methods.registry"}
    assert layer_of("fairengine.methods.registry") > layer_of("fairengine.metrics.registry")
