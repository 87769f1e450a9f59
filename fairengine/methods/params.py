"""Parameter validation of the estimators, derived from the methods' knobs (one declaration
per parameter), with scikit-learn's conventions; and :func:`generator`.

Design notes: docs/architecture.md, "Parameter validation of the estimators".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from fairengine.methods.base import Knob

#: (low, high, closed) of an estimator parameter's mathematical domain; None = unbounded.
Domain = tuple[float | None, float | None, str]

_CLOSED = ("left", "right", "both", "neither")


class InvalidParameterError(ValueError, TypeError):
    """A constructor parameter of an estimator has a value its constraints do not allow.

    Both a ``ValueError`` and a ``TypeError``, as scikit-learn's error of the same name."""


class Interval:
    """Numbers of one kind (``Integral`` or ``Real``) between two bounds (None = unbounded)."""

    def __init__(self, type: type, left: float | None, right: float | None, *, closed: str):
        if type not in (Integral, Real) or closed not in _CLOSED:
            raise ValueError(f"Interval needs type Integral or Real and closed in {_CLOSED}.")
        if left is not None and right is not None and right < left:
            raise ValueError(f"Interval bounds in the wrong order: {left} > {right}.")
        self.type, self.left, self.right, self.closed = type, left, right, closed

    def is_satisfied_by(self, value: Any) -> bool:
        if not isinstance(value, self.type) or (
            not isinstance(value, Integral) and np.isnan(value)
        ):
            return False
        low_ok = self.left is None or (
            value >= self.left if self.closed in ("left", "both") else value > self.left
        )
        high_ok = self.right is None or (
            value <= self.right if self.closed in ("right", "both") else value < self.right
        )
        return bool(low_ok and high_ok)

    def __str__(self) -> str:
        real = self.type is not Integral
        low = "-inf" if self.left is None else float(self.left) if real else self.left
        high = "inf" if self.right is None else float(self.right) if real else self.right
        opening = "[" if self.closed in ("left", "both") else "("
        closing = "]" if self.closed in ("right", "both") else ")"
        kind = "a float" if real else "an int"
        return f"{kind} in the range {opening}{low}, {high}{closing}"


class Options:
    """One of a finite set of values of one type."""

    def __init__(self, type: type, options: Iterable[Any]):
        self.type, self.options = type, set(options)

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, self.type) and value in self.options

    def __str__(self) -> str:
        listed = ", ".join(repr(o) for o in sorted(self.options, key=repr))
        return f"a {self.type.__name__} among {{{listed}}}"


class StrOptions(Options):
    """One of a finite set of strings."""

    def __init__(self, options: Iterable[str]):
        super().__init__(str, options)


class HasMethods:
    """Any object with these methods (e.g. a scikit-learn learner: ``fit`` and ``predict``)."""

    def __init__(self, methods: Iterable[str]):
        self.methods = list(methods)

    def is_satisfied_by(self, value: Any) -> bool:
        return all(callable(getattr(value, name, None)) for name in self.methods)

    def __str__(self) -> str:
        names = [repr(name) for name in self.methods]
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        return f"an object implementing {listed}"


class _Predicate:
    """A named test: the constraints spelled as strings (``"boolean"``...) and None."""

    def __init__(self, description: str, test: Any):
        self.description, self.test = description, test

    def is_satisfied_by(self, value: Any) -> bool:
        return bool(self.test(value))

    def __str__(self) -> str:
        return self.description


def _array_like(value: Any) -> bool:
    shaped = hasattr(value, "__len__") or hasattr(value, "shape") or hasattr(value, "__array__")
    return shaped and not np.isscalar(value)


_NAMED = {
    "boolean": _Predicate("a bool", lambda v: isinstance(v, bool | np.bool_)),
    "array-like": _Predicate("an array-like", _array_like),
}
_NONE = _Predicate("None", lambda v: v is None)
_SEEDS = [
    Interval(Integral, 0, 2**32 - 1, closed="both"),
    _Predicate(
        "an instance of 'numpy.random.RandomState'",
        lambda v: isinstance(v, np.random.RandomState),
    ),
    _NONE,
]


def _expand(constraint: Any) -> list[Any]:
    if constraint is None:
        return [_NONE]
    if constraint == "random_state":
        return _SEEDS
    if isinstance(constraint, str):
        if constraint not in _NAMED:
            raise ValueError(f"Unknown parameter constraint {constraint!r}.")
        return [_NAMED[constraint]]
    if not hasattr(constraint, "is_satisfied_by"):
        raise ValueError(f"Unknown parameter constraint {constraint!r}.")
    return [constraint]


def validate_params(estimator: Any) -> None:
    """Check every constructor parameter against ``estimator._parameter_constraints``.

    A parameter without an entry, or whose entry is ``"no_validation"``, is not checked.

    Raises
    ------
    InvalidParameterError
        Naming the parameter, the estimator, what is allowed and the value given.
    """
    constraints = type(estimator)._parameter_constraints
    caller = type(estimator).__name__
    for name, value in estimator.get_params(deep=False).items():
        allowed = constraints.get(name, "no_validation")
        if isinstance(allowed, str) and allowed == "no_validation":
            continue
        expanded = [c for constraint in allowed for c in _expand(constraint)]
        if any(c.is_satisfied_by(value) for c in expanded):
            continue
        words = [str(c) for c in expanded]
        text = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be {text}. Got {value!r} instead."
        )


def knob_constraint(knob: Knob, domain: Domain | None = None) -> list[Any]:
    """The constraint list of one knob (see the module notes)."""
    kind = knob.kind
    if kind == "choice":
        choices = tuple(knob.choices or ())
        if all(isinstance(c, str) for c in choices):
            return [StrOptions(set(choices))]
        return [Options(type(choices[0]), set(choices))]
    if kind == "bool":
        return ["boolean"]
    low, high, closed = domain if domain is not None else (knob.low, knob.high, "both")
    number = Integral if kind == "int" else Real
    return [Interval(number, low, high, closed=closed)]


def knob_constraints(
    knobs: Iterable[Knob],
    *,
    rename: Mapping[str, str] | None = None,
    domains: Mapping[str, Domain] | None = None,
    skip: Iterable[str] = (),
    extra: Mapping[str, list[Any]] | None = None,
) -> dict[str, list[Any]]:
    """``_parameter_constraints`` of an estimator from its method's knobs.

    Parameters
    ----------
    knobs : iterable of Knob
    rename : mapping, optional
        Knob name → estimator parameter name (e.g. ``loss_function`` → ``loss``).
    domains : mapping, optional
        Estimator parameter name → (low, high, closed), a wider domain than the slider's.
    skip : iterable of str
        Knob names that are not estimator parameters (data handling, the page's row budget...).
    extra : mapping, optional
        Constraints of estimator parameters without a knob, or that accept more than the knob
        (e.g. an estimator object besides the string shortcuts); they are added to the knob's.
    """
    rename, domains, extra = dict(rename or {}), dict(domains or {}), dict(extra or {})
    skipped = set(skip)
    out: dict[str, list[Any]] = {}
    for knob in knobs:
        if knob.name in skipped:
            continue
        name = rename.get(knob.name, knob.name)
        out[name] = knob_constraint(knob, domains.get(name)) + list(extra.pop(name, []))
    out.update(extra)
    return out


def generator(random_state: Any) -> np.random.Generator:
    """A NumPy Generator from a ``random_state`` parameter (int, None, RandomState, Generator).

    Integers seed :func:`numpy.random.default_rng` directly, so an integer seed gives the same
    draws as before the estimators followed scikit-learn's conventions; a
    :class:`~numpy.random.RandomState` (what :func:`sklearn.utils.check_random_state` returns)
    seeds a Generator from one draw of it; None draws fresh entropy.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, Integral):
        return np.random.default_rng(None if random_state is None else int(random_state))
    state = check_random_state(random_state)
    return np.random.default_rng(int(state.randint(np.iinfo(np.int32).max)))


def seed(random_state: Any) -> int:
    """An integer seed for a scikit-learn learner from a ``random_state`` parameter (ints pass)."""
    if isinstance(random_state, Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


RANDOM_STATE: list[Any] = ["random_state"]
