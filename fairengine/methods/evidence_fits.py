"""The unconstrained baseline of a result's evidence: its learner and its fit, fitted once.

Design notes: docs/architecture.md, "The unconstrained baseline".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from fairengine.methods.fitted import fitted_once

if TYPE_CHECKING:
    from fairengine.data import Task


@dataclass(frozen=True)
class Learner:
    """A method's unconstrained base learner: a label, a cache key and a fit.

    ``fit_predict(train, test)`` fits on the training rows and returns the predictions on train
    and test (0/1 labels, or P(ŷ = 1) for a classifier; values for a regressor)."""

    label: str
    key: tuple
    fit_predict: Callable[[Task, Task], tuple[np.ndarray, np.ndarray]]


class FitStore(Protocol):
    """Where unconstrained fits outlive the process (the run store's ``fits`` entries)."""

    def get_fit(
        self, train: Task, test: Task, key: tuple
    ) -> tuple[np.ndarray, np.ndarray] | None: ...

    def put_fit(
        self, train: Task, test: Task, key: tuple, value: tuple[np.ndarray, np.ndarray]
    ) -> None: ...

    def get_table(self, train: Task, test: Task, key: tuple) -> dict | None: ...

    def put_table(self, train: Task, test: Task, key: tuple, value: dict) -> None: ...


_FIT_STORE: ContextVar[FitStore | None] = ContextVar("fairengine_fit_store", default=None)


@contextmanager
def stored_fits(store: FitStore | None) -> Iterator[None]:
    """Within the block, unconstrained fits are also read from and kept in ``store``: a fit in
    a fresh process (a dashboard job) reuses the one an earlier process stored for the same
    rows and learner instead of refitting it. ``None`` leaves things as they are."""
    token = _FIT_STORE.set(store)
    try:
        yield
    finally:
        _FIT_STORE.reset(token)


def stored_table(
    train: Task, test: Task, key: tuple, compute: Callable[[], dict], valid: Callable[[Any], bool]
) -> dict:
    """``compute()``: a table of a run that depends on the rows and on ``key`` only (never on
    the knob being moved), read from the :func:`stored_fits` store when it holds an entry of
    these rows and ``key`` that ``valid`` accepts, else computed and kept there."""
    store = _FIT_STORE.get()
    if store is not None:
        value = store.get_table(train, test, key)
        if value is not None and valid(value):
            return value
    value = compute()
    if store is not None:
        store.put_table(train, test, key, value)
    return value


def unconstrained_predictions(
    learner: Learner, train: Task, test: Task
) -> tuple[np.ndarray, np.ndarray]:
    """The learner's (train, test) predictions, fitted once per (train, test, learner key):
    kept in this process and, inside :func:`stored_fits`, in its store."""
    store = _FIT_STORE.get()

    def fit() -> tuple[np.ndarray, np.ndarray]:
        value = store.get_fit(train, test, learner.key) if store is not None else None
        if value is None:
            value = learner.fit_predict(train, test)
            if store is not None:
                store.put_fit(train, test, learner.key, value)
        return value

    return fitted_once(("predictions", train.fingerprint, test.fingerprint, *learner.key), fit)


def logistic_learner(C: float = 1.0) -> Learner:
    """The engine's logistic regression (:mod:`fairengine.methods._linear`) on the task's
    encoded features: the base learner of most classifiers here."""

    def fit_predict(train: Task, test: Task) -> tuple[np.ndarray, np.ndarray]:
        from fairengine.methods._linear import encode_train, fitted_logistic

        encoder, Z = encode_train(train)
        if len(np.unique(train.y)) < 2:
            constant = np.full(len(train.y), float(train.y[0]))
            return constant, np.full(len(test.y), float(train.y[0]))
        fitted = fitted_logistic(train, C)
        return fitted.predict(Z).astype(float), fitted.predict(encoder.transform(test.X)).astype(
            float
        )

    return Learner(f"logistic regression (C = {C:g})", ("logistic", float(C)), fit_predict)


def default_learner(result: Any, train: Task) -> Learner:
    """Logistic regression with C = 1 (methods whose knobs do not set the learner)."""
    return logistic_learner(1.0)


def logistic_from_knob(name: str = "C") -> Callable[[Any, Task], Learner]:
    """A learner hook: logistic regression with the run's knob ``name`` as C."""
    return lambda result, train: logistic_learner(float(result.knobs.get(name, 1.0)))
