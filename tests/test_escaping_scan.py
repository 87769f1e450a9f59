"""No text reaches Markdown or the HTML report without the escaping helpers: a static scan.

Every argument the dashboard hands to something Streamlit renders as Markdown (``st.markdown``,
``st.caption``, the alerts, titles and headers, ``st.write``, ``st.table`` cells, widget labels,
``help=`` texts, radio options and captions, tab and expander titles) and every value formatted
into an f-string of :mod:`fairengine.report` must be *provably safe*:

* a literal, or a number (a numeric format spec such as ``:.3f``, ``:d`` or ``:,``, which a
  string refuses; ``len(…)``, ``int(…)``, a comparison), or
* the result of an escaping helper of :mod:`fairengine.textsafe` (``md_text`` / ``md_code`` for
  Markdown; ``html_text`` / ``script_json`` for the report), or
* text the engine declares in code (:data:`DECLARED_ATTRIBUTES`: a method's ``title`` and
  ``reference``, a knob's ``help``, a metric's ``label``; each written by the engine's authors
  as a literal, never read from data), or a page's reading guide (:data:`AUTHORED_TEXT`: Markdown
  files of the dashboard's authors), or
* built only from safe parts: an f-string, ``+``, a conditional, ``sep.join(…)``, a list,
  tuple or comprehension of safe items, an item of a safe container, a local variable whose
  every assignment is safe (``a, b = f()`` follows item b of what ``f`` returns), a parameter
  every call in the module passes safe text to, a module-level constant (also one imported from
  another project module) holding a literal, a project function whose every ``return`` is safe,
  or a value read from ``st.session_state`` under a key the dashboard only ever stores safe text
  under.

Anything else (any other attribute, such as a result's name or a task's kind, a dict value, an
exception, a method of another object) is reported with its file and line: wrap it in the
helper where it is inserted. There is no allowlist of expressions.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

MARKDOWN_HELPERS = frozenset({"md_text", "md_code"})
HTML_HELPERS = frozenset({"html_text", "script_json"})
#: Calls whose positional arguments (and ``body=``) Streamlit renders as Markdown.
MARKDOWN_CALLS = frozenset(
    {"markdown", "caption", "warning", "error", "info", "success", "write", "title", "header",
     "subheader", "toast", "table"}
)  # fmt: skip
#: Widgets whose label (first argument or ``label=``) is rendered as Markdown.
LABELLED = frozenset(
    {"button", "download_button", "checkbox", "toggle", "radio", "selectbox", "multiselect",
     "slider", "select_slider", "text_input", "number_input", "text_area", "file_uploader",
     "metric", "expander", "popover", "link_button", "form_submit_button", "page_link",
     "color_picker", "date_input", "time_input", "pills", "segmented_control", "tabs",
     "spinner", "status", "dialog", "progress"}
)  # fmt: skip
#: Keyword arguments rendered as Markdown wherever they appear in a Streamlit call.
MARKDOWN_KEYWORDS = frozenset({"help", "body", "captions"})
#: Widgets whose options are rendered as Markdown.
MARKDOWN_OPTIONS = frozenset({"radio", "pills", "segmented_control"})
#: Attributes that hold text declared in the engine's code (Markdown written by its authors, as
#: string literals of method, knob, metric, dataset and page declarations), never data: the
#: scan lets them through where they are read (``method.title``, ``knob.help``).
DECLARED_ATTRIBUTES = frozenset(
    {"title", "reference", "description", "help", "label", "display_label", "explained",
     "definition", "what", "note"}
)  # fmt: skip
#: Format types (and the thousands separators) that a string refuses: the value is a number.
#: Functions of libraries that return the library's own code (plotly.js for the report's
#: ``<script>``), never text from data.
LIBRARY_CODE = frozenset({"get_plotlyjs"})
#: Functions that return Markdown the project's authors wrote in files of the repository
#: (``dashboard/guides/*.md``: the pages' reading guides), never text from data.
AUTHORED_TEXT = frozenset({"guide_text"})
NUMERIC_FORMATS = frozenset("bcdeEfFgGnoxX%,_")
NUMERIC_BUILTINS = frozenset(
    {"len", "int", "float", "round", "abs", "sum", "bool", "isinstance", "divmod"}
)
#: Methods of a string that keep it safe when the string is (``x.lower()`` of escaped text).
STRING_METHODS = frozenset(
    {"lower", "upper", "strip", "rstrip", "lstrip", "title", "capitalize", "format", "replace"}
)


def _numeric_spec(spec: ast.expr | None) -> bool:
    if not isinstance(spec, ast.JoinedStr) or not spec.values:
        return False
    last = spec.values[-1]
    return isinstance(last, ast.Constant) and str(last.value)[-1:] in NUMERIC_FORMATS


def _function_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


@dataclass
class Module:
    """One parsed source file and what the scan knows of its names."""

    path: Path
    tree: ast.Module
    helpers: frozenset[str]
    #: Local names bound to the escaping helpers (``from fairengine.textsafe import md_text``,
    #: also under another name).
    sanitizers: set[str] = field(default_factory=set)
    constants: dict[str, ast.expr] = field(default_factory=dict)
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    parents: dict[ast.AST, ast.AST] = field(default_factory=dict)

    @classmethod
    def parse(cls, path: Path, helpers: frozenset[str]) -> Module:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        module = cls(path, tree, helpers)
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                module.parents[child] = node
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    local = alias.asname or alias.name
                    if node.module == "fairengine.textsafe" and alias.name in helpers:
                        module.sanitizers.add(local)
                    module.imported[local] = (node.module, alias.name)
            if isinstance(node, ast.FunctionDef):
                module.functions.setdefault(node.name, node)
        for node in tree.body:
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        module.constants[target.id] = node.value
        return module

    def scope(self, node: ast.AST) -> ast.AST:
        """The function (or module) ``node`` sits in."""
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, ast.FunctionDef | ast.Lambda):
                return node
        return self.tree


class Checker:
    """Decides whether an expression is provably safe text (see the module docstring)."""

    def __init__(self, module: Module) -> None:
        self.module = module

    #: Nodes being checked, shared by every checker: a cycle (recursion, ``x = x + …``, a
    #: session-state value stored from its own read) adds nothing unsafe, so it counts as safe.
    _busy: set[object] = set()

    def _with(self, module: Module | None) -> Checker:
        return self if module is None or module is self.module else Checker(module)

    def safe(self, node: ast.expr | None) -> bool:
        if node is None or isinstance(node, ast.Constant | ast.Compare):
            return True
        key = ("node", id(node))
        if key in self._busy:
            return True
        self._busy.add(key)
        try:
            return self._safe(node)
        finally:
            self._busy.discard(key)

    def _safe(self, node: ast.expr) -> bool:
        if isinstance(node, ast.JoinedStr):
            return all(self.safe(v) for v in node.values)
        if isinstance(node, ast.FormattedValue):
            return _numeric_spec(node.format_spec) or self.safe(node.value)
        if isinstance(node, ast.BinOp):
            return self.safe(node.left) and self.safe(node.right)
        if isinstance(node, ast.UnaryOp):
            return isinstance(node.op, ast.Not | ast.USub | ast.UAdd) or self.safe(node.operand)
        if isinstance(node, ast.BoolOp):
            return all(self.safe(v) for v in node.values)
        if isinstance(node, ast.IfExp):
            return self.safe(node.body) and self.safe(node.orelse)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            return all(self.safe(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(self.safe(v) for v in node.values)
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            return self.safe(node.elt)
        if isinstance(node, ast.DictComp):
            return self.safe(node.value)
        if isinstance(node, ast.Subscript):
            written = _session_writes(node, self.module)
            if written is not None:
                return all(self._with(m).safe(v) for m, v in written)
            return self.safe(node.value)
        if isinstance(node, ast.Starred):
            return self.safe(node.value)
        if isinstance(node, ast.NamedExpr):
            return self.safe(node.value)
        if isinstance(node, ast.Call):
            return self._safe_call(node)
        if isinstance(node, ast.Name):
            return self._safe_name(node)
        if isinstance(node, ast.Attribute):
            return node.attr in DECLARED_ATTRIBUTES
        return False  # an attribute, a lambda, an await …: not provably constant text

    def safe_item(self, node: ast.expr, index: int) -> bool:
        """Whether item ``index`` of the sequence ``node`` is safe (``a, b = f()`` binds b to
        item 1 of every tuple ``f`` returns)."""
        if isinstance(node, ast.Tuple | ast.List):
            elts = node.elts
            return index >= len(elts) or self.safe(elts[index])
        if isinstance(node, ast.BoolOp):
            return all(self.safe_item(v, index) for v in node.values)
        if isinstance(node, ast.IfExp):
            return self.safe_item(node.body, index) and self.safe_item(node.orelse, index)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            found = _function(self.module, node.func.id)
            if found is not None:
                module, function = found
                checker = self if module is self.module else Checker(module)
                own = checker.own_returns(function)
                return bool(own) and all(checker.safe_item(r.value, index) for r in own)
        written = _session_writes(node, self.module)
        if written is not None:
            return all(self._with(m).safe_item(v, index) for m, v in written)
        return self.safe(node)

    def own_returns(self, function: ast.FunctionDef) -> list[ast.Return]:
        found = [n for n in ast.walk(function) if isinstance(n, ast.Return)]
        return [r for r in found if self.module.scope(r) is function and r.value is not None]

    def _safe_call(self, node: ast.Call) -> bool:
        name = _function_name(node)
        func = node.func
        written = _session_writes(node, self.module)
        if written is not None:
            return all(self._with(m).safe(v) for m, v in written)
        if isinstance(func, ast.Name) and func.id in self.module.sanitizers:
            return True
        if isinstance(func, ast.Name) and func.id in NUMERIC_BUILTINS:
            return True
        if isinstance(func, ast.Name) and func.id in (
            "str",
            "list",
            "tuple",
            "sorted",
            "reversed",
            "min",
            "max",
        ):
            return all(self.safe(a) for a in node.args)
        if isinstance(func, ast.Name) and func.id in ("map", "filter") and node.args:
            helper = node.args[0]
            mapped = isinstance(helper, ast.Name) and helper.id in self.module.sanitizers
            return mapped or (func.id == "filter" and self.safe(node.args[1]))
        if isinstance(func, ast.Name) and func.id in ("enumerate", "zip"):
            return all(self.safe(a) for a in node.args)
        if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2:
            attribute = node.args[1]
            declared = (
                isinstance(attribute, ast.Constant) and attribute.value in DECLARED_ATTRIBUTES
            )
            return declared and all(self.safe(a) for a in node.args[2:])
        if isinstance(func, ast.Name) and func.id in LIBRARY_CODE | AUTHORED_TEXT:
            return True
        if isinstance(func, ast.Attribute) and name == "join":
            return self.safe(func.value) and all(self.safe(a) for a in node.args)
        if isinstance(func, ast.Attribute) and name in ("items", "keys", "values"):
            return self.safe(func.value)
        if isinstance(func, ast.Attribute) and name in STRING_METHODS:
            return self.safe(func.value) and all(self.safe(a) for a in node.args)
        if isinstance(func, ast.Name):
            found = _function(self.module, func.id)
            if found is not None:
                module, function = found
                checker = self if module is self.module else Checker(module)
                return checker._safe_returns(function)
        return False

    def _safe_returns(self, function: ast.FunctionDef) -> bool:
        own = self.own_returns(function)
        return bool(own) and all(self.safe(r.value) for r in own)

    def _safe_name(self, node: ast.Name) -> bool:
        scope = self.module.scope(node)
        bound = list(self._bindings(scope, node.id))
        if not bound and scope is not self.module.tree:
            scope = self.module.tree
            bound = list(self._bindings(scope, node.id))
        if bound:
            return all(self._safe_binding(b, scope) for b in bound)
        if node.id in self.module.imported:
            return _imported_constant(*self.module.imported[node.id])
        return node.id in dir(builtins) and node.id in ("True", "False", "None")

    def _bindings(self, scope: ast.AST, name: str) -> Iterator[ast.AST]:
        """Every place ``name`` is bound in ``scope`` (not in nested functions)."""
        if isinstance(scope, ast.FunctionDef | ast.Lambda):
            for arg in [*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs]:
                if arg.arg == name:
                    yield arg
        for node in ast.walk(scope):
            if self.module.scope(node) is not scope and not isinstance(node, ast.comprehension):
                continue
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                yield node
            if (  # items.append(x), items.extend(xs), items.insert(i, x): bind x too
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("append", "extend", "insert")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == name
            ):
                yield node

    def _safe_binding(self, binding: ast.AST, scope: ast.AST) -> bool:
        if isinstance(binding, ast.arg):
            return self._safe_parameter(binding, scope)
        if isinstance(binding, ast.Call):
            return all(self.safe(a) for a in binding.args[-1:])
        node: ast.AST = binding
        while node in self.module.parents:  # up through tuple targets to the statement
            parent = self.module.parents[node]
            if isinstance(parent, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
                return self.safe(parent.value)
            if isinstance(parent, ast.For | ast.comprehension) and node is parent.target:
                return self.safe(parent.iter)
            if _enumerate_count(parent, node, self.module.parents):
                return True  # the i of ``for i, x in enumerate(...)``: a number
            if not isinstance(parent, ast.Tuple | ast.List | ast.Starred):
                return False  # with … as, except … as, match: not text we know
            zipped = _zipped_argument(parent, node, self.module.parents)
            if zipped is not None:
                return self.safe(zipped)
            statement = self.module.parents.get(parent)
            if isinstance(statement, ast.Assign) and parent in statement.targets:
                index = next(i for i, e in enumerate(parent.elts) if e is node)
                return self.safe_item(statement.value, index)  # a, b = f(): the item of b
            node = parent
        return False

    def _safe_parameter(self, arg: ast.arg, function: ast.AST) -> bool:
        """A parameter is safe when every call of its function in the module passes safe text
        (or leaves it at a safe default)."""
        if not isinstance(function, ast.FunctionDef):
            return False
        positional = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
        calls = [
            n
            for n in ast.walk(self.module.tree)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id == function.name
        ]
        if not calls:
            return False
        for call in calls:
            passed = {k.arg: k.value for k in call.keywords if k.arg}
            if any(isinstance(a, ast.Starred) for a in call.args):
                return False
            passed.update(zip(positional, call.args, strict=False))
            value = passed.get(arg.arg)
            if value is None:
                value = _default(function, arg.arg)
            if not self.safe(value):
                return False
        return True


def _function(module: Module, name: str) -> tuple[Module, ast.FunctionDef] | None:
    """The function ``name`` called in ``module``: its own, or one imported from the project."""
    if name in module.functions:
        return module, module.functions[name]
    if name in module.imported:
        source, original = module.imported[name]
        path = _project_path(source)
        if path is not None:
            parsed = _parsed(path, module.helpers)
            if original in parsed.functions:
                return parsed, parsed.functions[original]
    return None


def _parsed(path: Path, helpers: frozenset[str]) -> Module:
    key = (path, helpers)
    if key not in _PARSED:
        _PARSED[key] = Module.parse(path, helpers)
    return _PARSED[key]


def _state_key(node: ast.expr) -> tuple[str, str] | None:
    """A session-state key as ("exact", text) or, for an f-string, ("prefix", its literal
    start)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return ("exact", node.value)
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if isinstance(first, ast.Constant) and str(first.value):
            return ("prefix", str(first.value))
    return None


def _read_key(node: ast.expr) -> tuple[str, str] | None:
    """The key ``node`` reads from ``st.session_state`` (``st.session_state[k]``, ``.get(k)``,
    ``.pop(k)``), or None when it reads nothing from it."""
    if isinstance(node, ast.Subscript):
        holder, key = node.value, node.slice
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("get", "pop")
        and node.args
    ):
        holder, key = node.func.value, node.args[0]
    else:
        return None
    if not (isinstance(holder, ast.Attribute) and holder.attr == "session_state"):
        return None
    return _state_key(key) or ("unknown", "")


def _session_writes(node: ast.expr, module: Module) -> list[tuple[Module | None, ast.expr]] | None:
    """For a read of ``st.session_state``: every value the dashboard (and ``module``) stores
    under that key, with the module that stores it, plus the read's default; None for any other
    node. A key the scan cannot name, that nothing stores, or that a widget owns (its value is
    what the visitor typed or chose) gets a value that is never safe."""
    key = _read_key(node)
    if key is None:
        return None
    unknown: list[tuple[Module | None, ast.expr]] = [
        (None, ast.Attribute(value=node, attr="<not stored as text by the dashboard>"))
    ]
    if key[0] == "unknown":
        return unknown
    modules = {p: _parsed(p, MARKDOWN_HELPERS) for p in dashboard_files()}
    modules[module.path] = module
    found: list[tuple[Module | None, ast.expr]] = []
    for source in modules.values():
        for statement in ast.walk(source.tree):
            if isinstance(statement, ast.Call) and any(
                k.arg == "key" and _state_key(k.value) == key for k in statement.keywords
            ):
                return unknown  # a widget's key
            if isinstance(statement, ast.Assign):
                found += [
                    (source, statement.value)
                    for target in statement.targets
                    if isinstance(target, ast.Subscript)
                    and isinstance(target.value, ast.Attribute)
                    and target.value.attr == "session_state"
                    and _state_key(target.slice) == key
                ]
    if not found:
        return unknown
    if isinstance(node, ast.Call) and len(node.args) > 1:
        found.append((None, node.args[1]))
    return found


def _zipped_argument(
    target: ast.AST, node: ast.AST, parents: dict[ast.AST, ast.AST]
) -> ast.expr | None:
    """For ``x`` in ``for a, x in zip(as, xs)``: the argument it comes from (``xs``)."""
    loop = parents.get(target)
    if not (
        isinstance(target, ast.Tuple)
        and isinstance(loop, ast.For | ast.comprehension)
        and loop.target is target
        and isinstance(loop.iter, ast.Call)
        and _function_name(loop.iter) == "zip"
    ):
        return None
    index = next(i for i, e in enumerate(target.elts) if e is node)
    return loop.iter.args[index] if index < len(loop.iter.args) else None


def _enumerate_count(target: ast.AST, node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    loop = parents.get(target)
    return (
        isinstance(target, ast.Tuple)
        and bool(target.elts)
        and target.elts[0] is node
        and isinstance(loop, ast.For | ast.comprehension)
        and loop.target is target
        and isinstance(loop.iter, ast.Call)
        and _function_name(loop.iter) == "enumerate"
    )


def _default(function: ast.FunctionDef, name: str) -> ast.expr | None:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in positional[::-1]], args.defaults[::-1], strict=False))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)})
    return defaults.get(name)


def _project_path(module: str) -> Path | None:
    parts = module.split(".")
    if parts[0] not in ("fairengine", "dashboard"):
        return None
    base = ROOT.joinpath(*parts)
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    return path if path.is_file() else None


_PARSED: dict[tuple[Path, frozenset[str]], Module] = {}


_LITERAL_NODES = (ast.Constant, ast.JoinedStr, ast.Tuple, ast.List, ast.Dict, ast.BinOp,
                  ast.UnaryOp, ast.expr_context, ast.operator, ast.unaryop)  # fmt: skip


def _imported_constant(module: str, name: str) -> bool:
    """Whether ``module.name`` (a project module) is a module-level literal string or number."""
    path = _project_path(module)
    if path is None:
        return False
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return all(isinstance(n, _LITERAL_NODES) for n in ast.walk(node.value))
    return False


# -- the sinks ------------------------------------------------------------------------------------


def _markdown_arguments(call: ast.Call) -> Iterator[ast.expr]:
    """The arguments of a Streamlit call that are rendered as Markdown."""
    name = _function_name(call)
    if name in MARKDOWN_CALLS:
        yield from call.args
    elif name == "progress" and len(call.args) > 1:
        yield call.args[1]  # st.progress(value, text)
    elif name in LABELLED and name != "progress" and call.args:
        yield call.args[0]
    for keyword in call.keywords:
        if (
            keyword.arg in MARKDOWN_KEYWORDS
            or (keyword.arg == "label" and (name in LABELLED or name in MARKDOWN_CALLS))
            or (keyword.arg == "text" and name in ("progress", "spinner"))
            or (keyword.arg == "options" and name in MARKDOWN_OPTIONS)
        ):
            yield keyword.value
    if name in MARKDOWN_OPTIONS and len(call.args) > 1:
        yield call.args[1]


def _streamlit_call(call: ast.Call) -> bool:
    """A call on ``st``, a column, container or tab (not ``handle.write`` of a file)."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    receiver = func.value
    while isinstance(receiver, ast.Attribute | ast.Subscript | ast.Call):
        receiver = receiver.value if not isinstance(receiver, ast.Call) else receiver.func
    return not (
        isinstance(receiver, ast.Name)
        and receiver.id in ("handle", "file", "out", "f", "os", "logger", "logging")
    )


def _unsafe_parts(checker: Checker, node: ast.expr) -> Iterator[ast.expr]:
    """The smallest parts of ``node`` that make it unsafe (a value in an f-string, a side of a
    ``+``), so a finding names what to escape."""
    if checker.safe(node):
        return
    if isinstance(node, ast.JoinedStr):
        for value in node.values:
            yield from _unsafe_parts(checker, value)
    elif isinstance(node, ast.FormattedValue):
        yield node.value
    elif isinstance(node, ast.BinOp):
        yield from _unsafe_parts(checker, node.left)
        yield from _unsafe_parts(checker, node.right)
    elif isinstance(node, ast.IfExp):
        yield from _unsafe_parts(checker, node.body)
        yield from _unsafe_parts(checker, node.orelse)
    elif isinstance(node, ast.Dict | ast.List | ast.Tuple):
        for item in node.values if isinstance(node, ast.Dict) else node.elts:
            yield from _unsafe_parts(checker, item)
    else:
        yield node


def markdown_findings(path: Path) -> list[str]:
    """Each Markdown argument in ``path`` that is not provably safe, as ``file:line: code``."""
    module = Module.parse(path, MARKDOWN_HELPERS)
    checker = Checker(module)
    found = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Call) and _streamlit_call(node):
            for argument in _markdown_arguments(node):
                found += [_where(path, part) for part in _unsafe_parts(checker, argument)]
    return found


def html_findings(path: Path) -> list[str]:
    """Each value formatted into an f-string of ``path`` that is not provably safe HTML."""
    module = Module.parse(path, HTML_HELPERS)
    checker = Checker(module)
    found = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.JoinedStr) and not _escaped_here(module, node):
            found += [_where(path, part) for part in _unsafe_parts(checker, node)]
    return found


def _escaped_here(module: Module, node: ast.AST) -> bool:
    """Whether ``node`` sits in the argument of an escaping helper (``html_text(f"…")``, or
    ``plot_text(f"…")`` for a figure's text), or inside another f-string (checked with it)."""
    escapers = module.sanitizers | {"plot_text"}
    while node in module.parents:
        node = module.parents[node]
        if isinstance(node, ast.FormattedValue):
            return True
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in escapers:
            return True
    return False


def _where(path: Path, node: ast.expr) -> str:
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    return f"{shown}:{node.lineno}: {ast.unparse(node)}"


def dashboard_files() -> list[Path]:
    return sorted((ROOT / "dashboard").rglob("*.py"))


REPORT = ROOT / "fairengine" / "report.py"


# -- the tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", dashboard_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_dashboard_markdown_is_escaped(path: Path) -> None:
    assert markdown_findings(path) == []


def test_report_html_is_escaped() -> None:
    assert html_findings(REPORT) == []


PAGE = """
import streamlit as st
from fairengine.textsafe import md_text

TITLE = "Compare"
result = load()
name = result.name
count = len(result.rows)
st.title(TITLE)
st.caption(f"{md_text(name)}: {count:,} rows, {result.share:.1%} kept")
st.caption(f"Model {name}")
st.warning(str(result.error))
cols = st.columns(2)
cols[0].metric(result.metric, 1.0, help=md_text(result.help_text))
st.table({"knob": list(result.knobs), "value": [md_text(v) for v in result.knobs.values()]})
st.button(f"Open {result.source}", help="Opens it.")
st.session_state["note"] = f"Saved {name}"
st.info(st.session_state.get("note"))


def sentence(label):
    return f"{label} failed"


st.error(sentence(name))
st.text_input("Name", key="typed")
st.caption(st.session_state["typed"])
"""
REPORT_CODE = """
from fairengine.textsafe import html_text as _e


def cell(value):
    return f"<td>{value}</td>"


def row(record):
    return "<tr>" + cell(_e(record["name"])) + cell(record["group"]) + f"<td>{record['n']:,}</td>"
"""


def test_the_scan_finds_unescaped_text_and_passes_escaped_text(tmp_path: Path) -> None:
    """The scan is real: each unescaped value of a small page (and report) is reported, and
    nothing that is escaped or a number."""
    page = tmp_path / "page.py"
    page.write_text(PAGE, encoding="utf-8")
    found = {line.split(": ", 1)[1] for line in markdown_findings(page)}
    assert found == {
        "name",  # f"Model {name}"
        "str(result.error)",
        "result.metric",
        "list(result.knobs)",
        "result.source",
        "st.session_state.get('note')",  # stored unescaped under that key
        "sentence(name)",  # a local function returning its unescaped parameter
        "st.session_state['typed']",  # a widget's value
    }, found
    report = tmp_path / "report.py"
    report.write_text(REPORT_CODE, encoding="utf-8")
    assert [f.split(": ", 1)[1] for f in html_findings(report)] == ["value"]
