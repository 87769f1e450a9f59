"""The code-metrics tool measures what the project's size limits talk about."""

import ast
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    path = ROOT / "tools" / "code_metrics.py"
    spec = importlib.util.spec_from_file_location("code_metrics", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["code_metrics"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_parameters_skip_self_and_count_star_arguments():
    tool = _tool()
    tree = ast.parse("class A:\n    def f(self, a, b=1, *args, c, **kw):\n        return a\n")
    method = tree.body[0].body[0]
    assert tool._parameter_count(method) == 5


def test_function_lines_and_nested_names(tmp_path):
    tool = _tool()
    source = "def outer(x):\n    def inner(y):\n        return y\n\n    return inner(x)\n"
    functions = tool._functions(ROOT / "tools" / "x.py", ast.parse(source))
    sizes = {f.name: (f.line, f.lines, f.parameters) for f in functions}
    assert sizes == {"outer": (1, 5, 1), "outer.inner": (2, 2, 1)}


def test_report_lists_offenders_of_each_limit():
    data = _tool().report()
    assert data["files"] > 50 and data["lines"] > 10_000
    for row in data["functions_over_lines"]:
        assert row["lines"] > 80
    for row in data["complexity_over_limit"]:
        assert row["score"] > 10 and (ROOT / row["path"]).is_file()


def test_estimator_hyperparameters_are_listed_apart_from_the_parameter_limit(tmp_path):
    tool = _tool()
    source = (
        "from sklearn.base import BaseEstimator\n"
        "class Base(BaseEstimator):\n    pass\n"
        "class Est(Base):\n"
        "    def __init__(self, a=1, b=2, c=3, d=4, e=5, f=6, g=7, h=8, i=9):\n        pass\n"
        "class Plain:\n"
        "    def __init__(self, a=1, b=2, c=3, d=4, e=5, f=6, g=7, h=8, i=9):\n        pass\n"
    )
    tree = ast.parse(source)
    assert tool.estimator_classes(tool._class_bases(tree)) == {"Base", "Est"}
    path = tmp_path / "m.py"
    path.write_text(source)
    tool_root, tool.ROOT = tool.ROOT, tmp_path
    try:
        _, functions = tool.measure_sizes([path])
    finally:
        tool.ROOT = tool_root
    flags = {f.name: (f.parameters, f.hyperparameters) for f in functions}
    assert flags == {"Est.__init__": (9, True), "Plain.__init__": (9, False)}


def test_report_keeps_estimator_inits_out_of_the_parameter_offenders():
    data = _tool().report()
    over = {row["name"] for row in data["functions_over_parameters"]}
    inits = {row["name"] for row in data["estimator_hyperparameters"]}
    assert "BalancedFilter.__init__" in inits and not over & inits


def test_shared_files_count_values_not_docstrings_and_skip_the_methods_own_places():
    tool = _tool()
    source = '"""Mentions "maxent" in words."""\nTABLE = {"maxent": 1}\n'
    assert tool._string_values(source) == {"maxent"}
    assert "Mentions" not in " ".join(tool._string_values(source))
    found = tool.shared_files(("fairlearn_eg", "maxent", "not_a_method"))
    # a method that reuses the shared linear model is named by the registry and the docs only
    assert found["fairlearn_eg"] == ["fairengine/methods/registry.py", "mkdocs.yml"]
    assert "fairengine/methods/registry.py" in found["maxent"]
    assert not any(path.startswith("fairengine/methods/maxent/") for path in found["maxent"])
    assert found["not_a_method"] == []
    print({name: len(paths) for name, paths in found.items()})


def test_keyword_only_parameters_of_public_functions_are_not_limited(tmp_path):
    tool = _tool()
    source = (
        "def public(a, b, *, c=1, d=2, e=3, f=4, g=5, h=6, i=7):\n    pass\n"
        "def _private(a, b, *, c=1, d=2, e=3, f=4, g=5, h=6, i=7):\n    pass\n"
        "def positional(a, b, c, d, e, f, g, h, i):\n    pass\n"
        "class _Hidden:\n    def method(self, *, a, b, c, d, e, f, g, h, i):\n        pass\n"
    )
    functions = tool._functions(ROOT / "tools" / "x.py", ast.parse(source))
    sizes = {f.name: (f.parameters, f.keyword_only, f.limited) for f in functions}
    assert sizes == {
        "public": (9, 7, 2),
        "_private": (9, 0, 9),
        "positional": (9, 0, 9),
        "_Hidden.method": (9, 0, 9),
    }


def test_report_lists_keyword_only_signatures_apart_from_the_parameter_offenders():
    data = _tool().report()
    over = {(row["path"], row["name"]) for row in data["functions_over_parameters"]}
    apart = {(row["path"], row["name"]) for row in data["keyword_only_signatures"]}
    assert ("fairengine/data/task.py", "from_frame") in apart and not over & apart
    for row in data["functions_over_parameters"]:
        assert row["parameters"] - row["keyword_only"] > 8
