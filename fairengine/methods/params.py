"""scikit-learn parameter validation derived from the methods'
:class:`~fairengine.methods.base.Knob` declarations, so a method's knobs, its estimator's
``fit``-time validation and its page sliders read one declaration per parameter.

A knob's *type and choices* always come from the knob. Its *range* is the slider's range unless
the estimator passes a wider mathematical ``domain`` for that parameter (sliders show the useful
part of a domain, e.g. N ∈ [10, 100], while the estimator accepts any N ≥ 2): the override names
only the bounds, never the type, so the two cannot drift apart on what kind of value is valid.

Also :func:`generator`, the one conversion of a ``random_state`` parameter into a NumPy
:class:`~numpy.random.Generator` used by the estimators of this package.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, Options, StrOptions

from fairengine.methods.base import Knob

#: (low, high, closed) of an estimator parameter's mathematical domain; None = unbounded.
Domain = tuple[float | None, float | None, str]


def knob_constraint(knob: Knob, domain: Domain | None = None) -> list[Any]:
    """The scikit-learn constraint list of one knob (see the module notes)."""
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
