"""Size and complexity of the code base: modules, functions, parameters, cyclomatic complexity.

Usage::

    python tools/code_metrics.py                 # summary and the worst offenders
    python tools/code_metrics.py --check         # exit 1 when a limit is exceeded
    python tools/code_metrics.py --json out.json # every measure, machine-readable

Limits (the project's standards): no module over 500 lines, no function over 80 lines or 8
parameters, cyclomatic complexity (ruff's C901, McCabe) at most 10. Lines of a module are all
physical lines; lines of a function run from its ``def`` (decorators excluded) to its last line.
``self`` and ``cls`` do not count as parameters; ``*args`` and ``**kwargs`` count as one each.
Complexity comes from ``ruff check --select C901`` so it matches what the linter reports.

Estimator hyperparameters are reported in their own category, not under the parameter limit: the
``__init__`` of a scikit-learn estimator (a class deriving from ``BaseEstimator``, directly or
through another class of the project) must take every hyperparameter as an explicit keyword
argument, because ``get_params``/``set_params``, ``clone`` and grid searches read them from its
signature. Folding them into an options object would break that contract, so the tool lists these
signatures separately (``estimator_hyperparameters``) where a reader still sees how many there are.

Keyword-only parameters of a public function (no part of its qualified name private) are explicit
settings a caller names one by one, as scikit-learn's and fairlearn's public functions take them,
rather than an options object or a ``**settings`` bag; they are reported (``keyword_only``, and
the functions whose signature is long only through them under ``keyword_only_signatures``) but not
counted against the parameter limit.

Shared files per method: the files outside a method's own places (its package or module under
``fairengine/methods/``, its view, its chart module, its sweep module) that name it as a value —
a string constant (not a docstring) equal to the name or its module path, or its guide page in
``mkdocs.yml``'s navigation. Each is a registry entry or a special case someone adding a method
writes. A built-in method's own places naming another method (a baseline it compares with) are
its own code, not shared files. The same count is printed for the methods defined only in a test
(:data:`TEST_ONLY_METHODS`): the shared files adding such a method takes.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("fairengine", "dashboard")
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
MAX_PARAMETERS = 8
MAX_COMPLEXITY = 10


@dataclass(frozen=True)
class FunctionSize:
    """One function or method: where it is, how long it is and how many parameters it takes."""

    path: str
    name: str
    line: int
    lines: int
    parameters: int
    hyperparameters: bool = False  # the __init__ of a scikit-learn estimator
    keyword_only: int = 0  # keyword-only parameters of a public function (not limited)

    @property
    def limited(self) -> int:
        """The parameters the limit counts: all but a public function's keyword-only ones."""
        return self.parameters - self.keyword_only


def _parameter_count(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    count = len([n for n in names if n not in ("self", "cls")])
    return count + (args.vararg is not None) + (args.kwarg is not None)


def _is_public(qualified: str) -> bool:
    """No part of the qualified name is private (dunder methods such as ``__init__`` are not)."""
    return not any(p.startswith("_") and not p.endswith("__") for p in qualified.split("."))


def _functions(path: Path, tree: ast.AST) -> list[FunctionSize]:
    rel = str(path.relative_to(ROOT))
    found: list[FunctionSize] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                keyword_only = len(child.args.kwonlyargs) if _is_public(name) else 0
                found.append(
                    FunctionSize(
                        rel, name, child.lineno, lines, _parameter_count(child), False, keyword_only
                    )
                )
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def _class_bases(tree: ast.AST) -> dict[str, set[str]]:
    """Each class defined in ``tree`` and the names of its direct bases (last dotted part)."""
    bases: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            names = {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases}
            bases.setdefault(node.name, set()).update(names)
    return bases


def estimator_classes(bases: dict[str, set[str]]) -> set[str]:
    """Classes deriving from scikit-learn's ``BaseEstimator``, directly or through others."""
    found = {"BaseEstimator"}
    grew = True
    while grew:
        new = {name for name, parents in bases.items() if parents & found} - found
        found |= new
        grew = bool(new)
    return found - {"BaseEstimator"}


def _mark_hyperparameters(
    functions: list[FunctionSize], estimators: set[str]
) -> list[FunctionSize]:
    def is_estimator_init(f: FunctionSize) -> bool:
        parts = f.name.split(".")
        return len(parts) >= 2 and parts[-1] == "__init__" and parts[-2] in estimators

    return [replace(f, hyperparameters=True) if is_estimator_init(f) else f for f in functions]


def python_files(packages: tuple[str, ...] = PACKAGES) -> list[Path]:
    """The Python source files of the given top-level folders, sorted."""
    return sorted(p for pkg in packages for p in (ROOT / pkg).rglob("*.py"))


def measure_sizes(files: list[Path]) -> tuple[dict[str, int], list[FunctionSize]]:
    """Lines per module and the size of every function in ``files``."""
    modules: dict[str, int] = {}
    functions: list[FunctionSize] = []
    bases: dict[str, set[str]] = {}
    for path in files:
        text = path.read_text(encoding="utf-8")
        modules[str(path.relative_to(ROOT))] = len(text.splitlines())
        tree = ast.parse(text, filename=str(path))
        functions.extend(_functions(path, tree))
        for name, parents in _class_bases(tree).items():
            bases.setdefault(name, set()).update(parents)
    return modules, _mark_hyperparameters(functions, estimator_classes(bases))


_C901 = re.compile(r"`(?P<name>[^`]+)` is too complex \((?P<score>\d+) > \d+\)")


def measure_complexity(packages: tuple[str, ...] = PACKAGES) -> list[dict[str, object]]:
    """Functions whose McCabe complexity exceeds ``MAX_COMPLEXITY``, as ruff reports them."""
    cmd = [
        sys.executable,
        "-m",
        "ruff",
        "check",
        "--select",
        "C901",
        "--config",
        f"lint.mccabe.max-complexity={MAX_COMPLEXITY}",
        "--output-format",
        "json",
        "--exit-zero",
        *packages,
    ]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    rows = []
    for item in json.loads(out or "[]"):
        match = _C901.search(item["message"])
        if match:
            path = str(Path(item["filename"]).resolve().relative_to(ROOT))
            line = item["location"]["row"]
            rows.append(
                {"path": path, "name": match["name"], "line": line, "score": int(match["score"])}
            )
    return sorted(rows, key=lambda r: -int(r["score"]))


def _own_places(name: str) -> tuple[str, ...]:
    return (
        f"fairengine/methods/{name}/",
        f"fairengine/methods/{name}.py",
        f"fairengine/sweeps/{name}.py",
        f"dashboard/views/{name}.py",
        f"dashboard/components/{name}_charts.py",
    )


def _string_values(text: str) -> set[str]:
    """The string constants of a module that are values (not docstrings)."""
    tree = ast.parse(text)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and id(node) not in docstrings
    }  # fmt: skip


def shared_files(names: tuple[str, ...], packages: tuple[str, ...] = PACKAGES) -> dict[str, list]:
    """Per method name: the shared files that name it (see the module docstring). A file among
    the own places of a built-in method (one naming another method as its baseline) is that
    method's own code, not a shared file."""
    values = {str(p.relative_to(ROOT)): _string_values(p.read_text(encoding="utf-8"))
              for p in python_files(packages)}  # fmt: skip
    mkdocs = ROOT / "mkdocs.yml"
    nav = mkdocs.read_text(encoding="utf-8") if mkdocs.is_file() else ""
    methods_code = tuple(place for m in _method_names() for place in _own_places(m))
    found: dict[str, list] = {}
    for name in names:
        own = (*_own_places(name), *methods_code)
        module = f"fairengine.methods.{name}"
        found[name] = sorted(
            path
            for path, strings in values.items()
            if not path.startswith(own)
            and any(v in (name, module) or v.startswith(module + ".") for v in strings)
        ) + (["mkdocs.yml"] if f"methods/{name}.md" in nav else [])
    return found


def _method_names() -> tuple[str, ...]:
    """The built-in methods (the registry's module list, read without importing the engine)."""
    tree = ast.parse((ROOT / "fairengine/methods/registry.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "METHOD_MODULES":
            return tuple(ast.literal_eval(node.value))
    return ()


#: Tests that define a method of their own (registered at run time, never in the engine): how
#: many shared files adding a method needs, measured on one that exists nowhere else.
TEST_ONLY_METHODS = ("tests/dashboard/test_added_method.py",)


def test_only_methods() -> dict[str, str]:
    """The name of each test-only method (its module's ``NAME``) → the test defining it."""
    found = {}
    for rel in TEST_ONLY_METHODS:
        tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == [
                "NAME"
            ]:
                found[ast.literal_eval(node.value)] = rel
    return found


def report(packages: tuple[str, ...] = PACKAGES) -> dict[str, object]:
    """Every measure and every limit exceeded."""
    files = python_files(packages)
    modules, functions = measure_sizes(files)
    complex_functions = measure_complexity(packages)
    long_modules = {p: n for p, n in modules.items() if n > MAX_MODULE_LINES}
    long_functions = [f for f in functions if f.lines > MAX_FUNCTION_LINES]
    many_parameters = [f for f in functions if f.limited > MAX_PARAMETERS and not f.hyperparameters]
    estimator_inits = [f for f in functions if f.hyperparameters]
    keyword_only = [
        f
        for f in functions
        if f.parameters > MAX_PARAMETERS and f.limited <= MAX_PARAMETERS and not f.hyperparameters
    ]
    return {
        "files": len(files),
        "lines": sum(modules.values()),
        "functions": len(functions),
        "modules_over_limit": dict(sorted(long_modules.items(), key=lambda kv: -kv[1])),
        "functions_over_lines": [asdict(f) for f in sorted(long_functions, key=lambda f: -f.lines)],
        "functions_over_parameters": [
            asdict(f) for f in sorted(many_parameters, key=lambda f: -f.limited)
        ],
        "keyword_only": sum(f.keyword_only for f in functions),
        "keyword_only_signatures": [
            asdict(f) for f in sorted(keyword_only, key=lambda f: -f.parameters)
        ],
        "complexity_over_limit": complex_functions,
        "estimator_hyperparameters": [
            asdict(f) for f in sorted(estimator_inits, key=lambda f: -f.parameters)
        ],
        "shared_files_per_method": shared_files(_method_names(), packages),
        "shared_files_per_test_only_method": shared_files(tuple(test_only_methods()), packages),
    }


def _print_summary(data: dict[str, object], top: int) -> None:
    print(f"{data['files']} files, {data['lines']} lines, {data['functions']} functions")
    sections = [
        ("modules over", MAX_MODULE_LINES, "lines", data["modules_over_limit"]),
        ("functions over", MAX_FUNCTION_LINES, "lines", data["functions_over_lines"]),
        ("functions over", MAX_PARAMETERS, "parameters", data["functions_over_parameters"]),
        ("complexity over", MAX_COMPLEXITY, "(C901)", data["complexity_over_limit"]),
    ]
    shared = data["shared_files_per_method"]
    print("\nshared files that name a method (where a method is registered or special-cased):")
    for name, paths in shared.items():
        print(f"  {len(paths):5d}  {name}: {', '.join(paths)}")
    where = test_only_methods()
    for name, paths in data["shared_files_per_test_only_method"].items():
        listed = f": {', '.join(paths)}" if paths else ""
        print(f"  {len(paths):5d}  {name} (a method defined only in {where[name]}){listed}")
    for title, limit, unit, items in sections:
        print(f"\n{title} {limit} {unit}: {len(items)}")
        rows = list(items.items()) if isinstance(items, dict) else items
        for row in rows[:top]:
            if isinstance(row, tuple):
                print(f"  {row[1]:5d}  {row[0]}")
            else:
                limited = row.get("parameters", 0) - row.get("keyword_only", 0)
                value = row.get("lines") if unit == "lines" else limited
                value = row["score"] if unit == "(C901)" else value
                print(f"  {value:5d}  {row['path']}:{row['line']} {row['name']}")
    inits = data["estimator_hyperparameters"]
    print(
        f"\nestimator hyperparameters (scikit-learn __init__, explicit by contract, "
        f"not limited): {len(inits)}"
    )
    for row in inits[:top]:
        print(f"  {row['parameters']:5d}  {row['path']}:{row['line']} {row['name']}")
    signatures = data["keyword_only_signatures"]
    print(
        f"\nkeyword-only parameters of public functions (explicit, not limited): "
        f"{data['keyword_only']}; signatures over {MAX_PARAMETERS} only through them: "
        f"{len(signatures)} (parameters, of which keyword-only)"
    )
    for row in signatures[:top]:
        where = f"{row['path']}:{row['line']} {row['name']}"
        print(f"  {row['parameters']:5d}  ({row['keyword_only']} keyword-only)  {where}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a limit is exceeded")
    parser.add_argument("--json", type=Path, help="write every measure to this JSON file")
    parser.add_argument("--top", type=int, default=15, help="offenders listed per section")
    args = parser.parse_args(argv)
    data = report()
    _print_summary(data, args.top)
    if args.json:
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    over = [k for k, v in data.items() if k.endswith("limit") or k.startswith("functions_over")]
    exceeded = any(data[k] for k in over)
    return 1 if (args.check and exceeded) else 0


if __name__ == "__main__":
    raise SystemExit(main())
