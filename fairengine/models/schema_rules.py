"""The vocabulary model-file schemas are written in (:mod:`fairengine.models.schemas`).

JSON checks (``NUM``, ``STR``, :func:`obj`, :func:`list_of`, ...) take a value and its path and
raise :class:`ModelFileError` naming the bad field; :class:`ArraySpec` gives an array's dtype
kinds, its shape in named dimensions and rules on its values; a :class:`Group` is a family of
arrays the state declares; a :class:`Schema` is one model type's whole state.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairengine.models import trees

Check = Callable[[Any, str], None]


class ModelFileError(ValueError):
    """A model file that is not ours, is damaged or tampered with, or names an unknown type."""


def fail(path: str, expected: str, value: Any) -> None:
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise ModelFileError(f"{_what(path)}: {path} should be {expected}, got {shown}.")


def _what(path: str) -> str:
    """ "The model file's state is invalid" for a path under ``state`` (or ``manifest``)."""
    root = _ROOT.split(path)[0]
    return f"The model file's {root} is invalid"


_ROOT = re.compile(r"[.\[]")


def _typed(expected: str, ok: Callable[[Any], bool]) -> Check:
    """The check that ``ok(value)`` holds; otherwise the value ``should be {expected}``."""

    def run(value: Any, path: str) -> None:
        if not ok(value):
            fail(path, expected, value)

    return run


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: A finite int or float (not a bool).
NUM = _typed("a finite number", lambda v: (_is_int(v) or isinstance(v, float)) and np.isfinite(v))
INT = _typed("an integer", lambda v: _is_int(v) and abs(v) < 2**63)
STR = _typed("a string", lambda v: isinstance(v, str))
BOOL = _typed("true or false", lambda v: isinstance(v, bool))
#: Any JSON scalar (null, bool, number, string).
SCALAR = _typed("a JSON scalar", lambda v: v is None or isinstance(v, bool | int | float | str))


def optional(check: Check) -> Check:
    def run(value: Any, path: str) -> None:
        if value is not None:
            check(value, path)

    return run


def one_of(*choices: str) -> Check:
    def run(value: Any, path: str) -> None:
        if value not in choices:
            fail(path, "one of " + ", ".join(map(repr, choices)), value)

    return run


def either(*checks: Check) -> Check:
    def run(value: Any, path: str) -> None:
        for check in checks[:-1]:
            try:
                check(value, path)
                return
            except ModelFileError:
                continue
        checks[-1](value, path)

    return run


def list_of(item: Check, *, length: int | None = None) -> Check:
    def run(value: Any, path: str) -> None:
        if not isinstance(value, list):
            fail(path, "a list", value)
        if length is not None and len(value) != length:
            fail(path, f"a list of {length} items", value)
        for i, v in enumerate(value):
            item(v, f"{path}[{i}]")

    return run


def pair(first: Check, second: Check) -> Check:
    def run(value: Any, path: str) -> None:
        list_of(_any, length=2)(value, path)
        first(value[0], f"{path}[0]")
        second(value[1], f"{path}[1]")

    return run


def _any(value: Any, path: str) -> None:
    """Any JSON value (its size and depth are already limited by the reader)."""


def obj(
    required: Mapping[str, Check],
    optional_keys: Mapping[str, Check] | None = None,
    extra: Check | None = None,
) -> Check:
    """An object with exactly ``required`` keys, maybe ``optional_keys``, and (if ``extra`` is
    given) any other key whose value passes ``extra``."""
    optional_keys = optional_keys or {}

    def run(value: Any, path: str) -> None:
        if not isinstance(value, dict):
            fail(path, "an object", value)
        missing = [k for k in required if k not in value]
        if missing:
            raise ModelFileError(f"{_what(path)}: {path} lacks {', '.join(missing)}.")
        for key, v in value.items():
            check = required.get(key) or optional_keys.get(key) or extra
            if check is None:
                raise ModelFileError(f"{_what(path)}: {path} has an unexpected key {key!r:.40}.")
            check(v, f"{path}.{key}")

    return run


Dims = dict[str, int]
#: A rule on an array's values: None if it holds, else what is wrong ("values outside [0, 1]").
Rule = Callable[[np.ndarray, Mapping[str, int]], "str | None"]


@dataclass(frozen=True)
class ArraySpec:
    """An array a model type stores: dtype kinds (``"f"`` float, ``"i"`` / ``"u"`` integers,
    ``"b"`` bool), the allowed numbers of dimensions, and optionally its shape in named
    dimensions (``("n_leaves", "n_groups")``, or fixed sizes) and rules on its values.

    A named dimension is bound by the state (:attr:`Schema.dims`, e.g. ``n_features``, the
    encoder's output width) or by the first array that uses it; every other use must agree."""

    kinds: str = "f"
    ndim: tuple[int, ...] = (1,)
    shape: tuple[str | int, ...] | None = None
    rules: tuple[Rule, ...] = ()


def arr(kinds: str, *shape: str | int, rules: tuple[Rule, ...] = ()) -> ArraySpec:
    """An array of ``kinds`` with this shape (named dimensions) and value rules."""
    return ArraySpec(kinds, (len(shape),), tuple(shape), rules)


#: Largest magnitude of a stored number under a value rule: trained parameters are modest, and
#: larger ones only overflow a model's sums of products into infinity or NaN.
MAX_PARAM = 1e100


def _finite(a: np.ndarray, dims: Mapping[str, int]) -> str | None:
    if not np.all(np.isfinite(a)):
        return "values that are not finite numbers"
    if np.any((a > MAX_PARAM) | (a < -MAX_PARAM)):
        return f"values beyond ±{MAX_PARAM:g}, whose predictions overflow"
    return None


def within(low: float, high: float) -> Rule:
    """Finite values in [low, high] and within ±:data:`MAX_PARAM`."""

    def rule(a: np.ndarray, dims: Mapping[str, int]) -> str | None:
        if not np.all(np.isfinite(a)) or np.any((a < low) | (a > high)):
            return f"values outside [{low:g}, {high:g}]"
        return _finite(a, dims)

    return rule


def index_of(dim: str) -> Rule:
    """Whole numbers in 0 … dims[dim] - 1 (positions along a named dimension)."""

    def rule(a: np.ndarray, dims: Mapping[str, int]) -> str | None:
        if not np.array_equal(a, np.round(a)) or np.any((a < 0) | (a >= dims[dim])):
            return f"values that are not positions below {dim} = {dims[dim]}"
        return None

    return rule


def _positive_sum(a: np.ndarray, dims: Mapping[str, int]) -> str | None:
    return None if a.sum() > 0 else "weights that sum to zero"


FINITE: Rule = _finite
NON_NEGATIVE = within(0.0, np.inf)
PROBABILITY = within(0.0, 1.0)
WEIGHTS = (NON_NEGATIVE, _positive_sum)

NUMERIC = ArraySpec("fiub", (0, 1, 2, 3, 4))
BYTES = ArraySpec("u", (1,))


def invalid(message: str) -> ModelFileError:
    return ModelFileError(f"The model file's state is invalid: {message}.")


def check_arrays(
    specs: Mapping[str, ArraySpec], arrays: Mapping[str, np.ndarray], dims: Dims, prefix: str = ""
) -> None:
    """Each present array ``prefix + name`` against its spec: dtype, shape (binding named
    dimensions into ``dims``), then its value rules."""
    for name, spec in specs.items():
        array = arrays.get(prefix + name)
        if array is None:
            continue
        full = prefix + name
        if array.dtype.kind not in spec.kinds or array.ndim not in spec.ndim:
            raise invalid(f"array {full!r} is {array.dtype} with {array.ndim} dimension(s)")
        for axis, want in enumerate(spec.shape or ()):
            got = array.shape[axis]
            if isinstance(want, str):
                want = dims.setdefault(want, got)
            if got != want:
                raise invalid(
                    f"array {full!r} has shape {array.shape}; axis {axis} should be "
                    f"{spec.shape[axis]} = {want}"  # type: ignore[index]
                )
        for rule in spec.rules:
            problem = rule(array, dims)
            if problem:
                raise invalid(f"array {full!r} holds {problem}")


@dataclass(frozen=True)
class Group:
    """A family of arrays named ``prefix + key`` (a model's component, its proxy, its stored
    classifier): exactly these keys, their specs with their own named dimensions (on top of the
    schema's), and structural checks run once they fit (e.g. a tree's nodes)."""

    prefix: str
    specs: Mapping[str, ArraySpec]
    checks: tuple[Callable[[Mapping[str, np.ndarray], Dims], None], ...] = ()
    optional: frozenset[str] = frozenset()

    def check(self, arrays: Mapping[str, np.ndarray], dims: Dims) -> None:
        present = {n[len(self.prefix) :] for n in arrays if n.startswith(self.prefix)}
        required = set(self.specs) - self.optional
        wrong = sorted((required - present) | (present - set(self.specs)))
        if wrong:
            raise invalid(
                f"arrays {', '.join(self.prefix + k for k in wrong)} are missing or unexpected"
            )
        local = dict(dims)
        check_arrays(self.specs, arrays, local, self.prefix)
        own = {k: arrays[self.prefix + k] for k in present}
        for check in self.checks:
            try:
                check(own, local)
            except ValueError as exc:
                raise invalid(f"the arrays {self.prefix}* do not fit together ({exc})") from None


def tree_nodes(n_features: str, **extra: ArraySpec) -> Group:
    """The shared tree codec's node arrays (:mod:`fairengine.models.trees`) under no prefix yet:
    use :func:`with_prefix`. ``n_features``: the named dimension the nodes' features index."""
    specs = {k: arr("iu", "n_nodes") for k in ("left", "right", "feature")}
    specs = {**specs, "threshold": arr("fiu", "n_nodes"), **extra}
    return Group(
        "", specs, (lambda arrays, dims: trees.check_arrays(dict(arrays), dims[n_features]),)
    )


def with_prefix(group: Group, prefix: str) -> Group:
    return Group(prefix, group.specs, group.checks, group.optional)


@dataclass(frozen=True)
class Schema:
    """A model type's state: the ``state.json`` check; its arrays (fixed names, and name
    patterns for families such as one array per component), each with its dtype, shape in named
    dimensions and value rules; ``dims`` binds dimensions from the state (e.g. the encoder's
    output width); ``groups`` gives the families the state declares (a component's arrays, a
    proxy's), each checked as a :class:`Group`; ``checks`` are further rules across state and
    arrays. Everything runs before the model is built, so a model is only ever built from arrays
    whose shapes and values fit together."""

    state: Check
    arrays: Mapping[str, ArraySpec] = field(default_factory=dict)
    optional_arrays: Mapping[str, ArraySpec] = field(default_factory=dict)
    patterns: Mapping[str, ArraySpec] = field(default_factory=dict)
    dims: Callable[[Any], Dims] | None = None
    groups: Callable[[Any, Mapping[str, np.ndarray]], list[Group]] | None = None
    checks: tuple[Callable[[Any, Mapping[str, np.ndarray], Dims], None], ...] = ()

    def check(self, state: Any, arrays: Mapping[str, np.ndarray]) -> None:
        self.state(state, "state")
        missing = sorted(set(self.arrays) - set(arrays))
        if missing:
            raise invalid(f"arrays {', '.join(missing)} are missing")
        for name, array in arrays.items():
            spec = self.arrays.get(name) or self.optional_arrays.get(name)
            spec = spec or next(
                (s for p, s in self.patterns.items() if re.fullmatch(p, name)), None
            )
            if spec is None:
                raise invalid(f"unexpected array {name!r}")
            if array.dtype.kind not in spec.kinds or array.ndim not in spec.ndim:
                raise invalid(f"array {name!r} is {array.dtype} with {array.ndim} dimension(s)")
        dims = self.dims(state) if self.dims else {}
        check_arrays({**self.arrays, **self.optional_arrays}, arrays, dims)
        for group in self.groups(state, arrays) if self.groups else []:
            group.check(arrays, dims)
        for check in self.checks:
            check(state, arrays, dims)


def _ranged(check: Check, low: float, high: float, expected: str) -> Check:
    """``check``, then ``low <= value <= high``; otherwise the value ``should be {expected}``."""

    def run(value: Any, path: str) -> None:
        check(value, path)
        if not low <= value <= high:
            fail(path, expected, value)

    return run


def bounded_int(low: int, high: int) -> Check:
    return _ranged(INT, low, high, f"an integer in {low} … {high:,}")


def num_within(low: float, high: float) -> Check:
    return _ranged(NUM, low, high, f"a number in [{low:g}, {high:g}]")


nonneg_int = _ranged(INT, 0, math.inf, "a non-negative integer")
