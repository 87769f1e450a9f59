"""The method contract: knobs declared once; `run` fits on train and scores train and test."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the command line imports KnobError without loading pandas
    from fairengine.data import Task
    from fairengine.methods.evidence import Baselines, Check, Evidence

#: BLAS threads of one run: what joblib's loky workers get on this 2-core target when a sweep
#: uses both cores (cpu_count // n_jobs); the fits are many small products.
BLAS_THREADS = 1


class KnobError(ValueError):
    """A knob value outside its declared range, of the wrong type, or an unknown knob."""


def with_choice_labels(
    knobs: tuple[Knob, ...], words: Mapping[str, Mapping[Any, str]]
) -> tuple[Knob, ...]:
    """``knobs`` with the words for their choices (``{knob name: {choice: words}}``); every
    named knob must exist and every worded value must be one of its choices."""
    from dataclasses import replace

    by_name = {knob.name: knob for knob in knobs}
    for name, labels in words.items():
        choices = set(by_name[name].choices or ())
        if not set(labels) <= choices:
            raise ValueError(f"Words for unknown choices of {name!r}: {set(labels) - choices}")
    return tuple(
        replace(knob, choice_labels=tuple(words[knob.name].items())) if knob.name in words else knob
        for knob in knobs
    )


@dataclass(frozen=True)
class Knob:
    """One tunable parameter of a method, declared once for validation and for sliders.

    Attributes
    ----------
    name : str
        The paper's name (``alpha``, ``eps``, ``C``...).
    default : float, int, str or bool
    low, high : float, optional
        Inclusive range for numeric knobs.
    step : float, optional
        Slider step.
    log : bool
        Sweep and slide on a log scale.
    help : str
        One line with the paper symbol and what it does.
    choices : tuple, optional
        Allowed values for a categorical knob.
    integer : bool
        Numeric knob that takes integer values.
    label : str
        Words for people with the paper's symbol ("Disclosivity budget α"); shown on widgets.
        Defaults to the name with underscores as spaces (see :attr:`display_label`).
    demo_high : float, optional
        Largest value a shared hosted demo offers (the knobs that set how much work one fit
        does: rounds, iterations, rows, samples, grid sizes); None = :attr:`high`.
    demo_choices : tuple, optional
        The choices a shared hosted demo offers (e.g. without a 6× slower protocol); None = all.
    choice_labels : tuple of (choice, words) pairs
        Words for people for a choice knob's values ("held-out margin check" for ``margin``);
        shown on widgets (see :meth:`choice_label`), the value itself stays the API's.
    """

    name: str
    default: Any
    low: float | None = None
    high: float | None = None
    step: float | None = None
    log: bool = False
    help: str = ""
    choices: tuple[Any, ...] | None = None
    integer: bool = False
    label: str = ""
    demo_high: float | None = None
    demo_choices: tuple[Any, ...] | None = None
    choice_labels: tuple[tuple[Any, str], ...] = ()

    def choice_label(self, value: Any) -> str:
        """A choice's words for people: its declared label, else the value with underscores
        as spaces."""
        for choice, words in self.choice_labels:
            if str(choice) == str(value):
                return words
        return str(value).replace("_", " ")

    @property
    def display_label(self) -> str:
        """The label a person reads: :attr:`label`, else the name in words."""
        return self.label or self.name.replace("_", " ").capitalize()

    def for_demo(self) -> Knob:
        """This knob as a shared hosted demo offers it: its range up to :attr:`demo_high`, its
        choices :attr:`demo_choices`, its default inside both."""
        from dataclasses import replace

        if self.demo_high is None and self.demo_choices is None:
            return self
        high = self.high if self.demo_high is None else min(self.high or math.inf, self.demo_high)
        choices = self.choices if self.demo_choices is None else self.demo_choices
        limited = replace(self, high=high, choices=choices, demo_high=None, demo_choices=None)
        return replace(limited, default=limited.demo_value(self.default))

    def demo_value(self, value: Any) -> Any:
        """``value`` brought into the demo range: a number above :attr:`demo_high` lowered to
        it, a choice outside :attr:`demo_choices` replaced by the first demo choice."""
        if self.demo_choices is not None and value not in self.demo_choices:
            return self.default if self.default in self.demo_choices else self.demo_choices[0]
        numeric = not isinstance(value, bool | str)
        if self.demo_high is not None and numeric and value > self.demo_high:
            return int(self.demo_high) if self.integer else float(self.demo_high)
        return value

    @property
    def kind(self) -> str:
        if self.choices is not None:
            return "choice"
        if isinstance(self.default, bool):
            return "bool"
        return "int" if self.integer else "float"

    def validate(self, value: Any) -> Any:
        """Coerce ``value`` to the knob's type and check its range; raise :class:`KnobError`."""
        kind = self.kind
        if kind == "choice":
            for choice in self.choices or ():
                if str(value) == str(choice):
                    return choice
            raise KnobError(
                f"Knob {self.name!r} must be one of {', '.join(map(str, self.choices or ()))}; "
                f"got {value!r}."
            )
        if kind == "bool":
            if isinstance(value, str):
                lowered = value.strip().lower()
                if lowered in ("1", "true", "yes", "on"):
                    return True
                if lowered in ("0", "false", "no", "off"):
                    return False
                raise KnobError(f"Knob {self.name!r} must be true or false; got {value!r}.")
            return bool(value)
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise KnobError(f"Knob {self.name!r} must be a number; got {value!r}.") from None
        if math.isnan(number):
            raise KnobError(f"Knob {self.name!r} must be a number; got NaN.")
        if kind == "int":
            if number != round(number):
                raise KnobError(f"Knob {self.name!r} must be an integer; got {value!r}.")
            number = int(round(number))
        if (self.low is not None and number < self.low) or (
            self.high is not None and number > self.high
        ):
            raise KnobError(
                f"Knob {self.name!r} must be in [{self.low}, {self.high}]; got {value!r}."
            )
        return number


@dataclass
class RunResult:
    """What one run of a method produced.

    Attributes
    ----------
    method : str
    knobs : dict
        Every knob's value (defaults filled in).
    metrics : dict
        ``{"train": {name: float}, "test": {name: float}}`` with names from
        :mod:`fairengine.metrics`.
    model : object
        The fitted, exportable model (see :mod:`fairengine.export`).
    artifacts : dict
        Arrays and tables the method's page plots.
    elapsed : float
        Fit time in seconds.
    baselines : Baselines or None
        The constant and the unconstrained reference on the same rows
        (:mod:`fairengine.methods.evidence`); None until evidence is attached.
    checks : tuple of Check
        Verdicts on the result in plain words (level ok / warn / fail), each method's promise
        checked on the test rows; empty until evidence is attached.
    """

    method: str
    knobs: dict[str, Any]
    metrics: dict[str, dict[str, float]]
    model: Any
    artifacts: dict[str, Any] = field(default_factory=dict)
    elapsed: float = 0.0
    baselines: Baselines | None = None
    checks: tuple[Check, ...] = ()


RunFunction = Callable[..., RunResult]


@dataclass(frozen=True)
class Method:
    """A fairness method as the engine, the CLI and the dashboard see it."""

    name: str
    title: str
    seed: str | None
    kinds: tuple[str, ...]
    knobs: tuple[Knob, ...]
    fairness_metric: str
    performance_metric: str
    run_function: RunFunction
    description: str = ""
    reference: str = ""
    #: Bump when the method's results change: cached points of older versions stop being served.
    version: str = "1"
    #: Knob grid that ``fairengine precompute`` sweeps for the hosted demo ...
    demo_grid: dict[str, tuple[Any, ...]] = field(default_factory=dict, hash=False, compare=False)
    #: ... on these (dataset, sensitive columns or None for the dataset's default) pairs.
    demo_tasks: tuple[tuple[str, tuple[str, ...] | None], ...] = (("adult", None),)
    #: ... over these train/test splits (``task.split(random_state=s)``; 0 is the default split).
    demo_seeds: tuple[int, ...] = (0,)
    #: Its base learner, extra metrics and promise checks (:mod:`fairengine.methods.evidence`);
    #: None: logistic regression and the generic checks only.
    evidence: Evidence | None = field(default=None, hash=False, compare=False)

    def knob(self, name: str) -> Knob:
        for knob in self.knobs:
            if knob.name == name:
                return knob
        raise KnobError(
            f"Method {self.name!r} has no knob {name!r}; its knobs are "
            f"{', '.join(k.name for k in self.knobs)}."
        )

    def defaults(self) -> dict[str, Any]:
        return {k.name: k.default for k in self.knobs}

    def validate_knobs(self, knobs: Mapping[str, Any]) -> dict[str, Any]:
        """Every knob's value: the given ones validated, the others at their defaults."""
        values = self.defaults()
        for name, value in knobs.items():
            values[name] = self.knob(name).validate(value)
        return values

    def check_task(self, task: Task) -> None:
        if task.kind not in self.kinds:
            from fairengine.data import DataError

            raise DataError(
                f"Method {self.title!r} works on {' or '.join(self.kinds)} tasks, but the target "
                f"{task.target!r} makes this a {task.kind} task. Choose another target or method."
            )

    def run(self, train: Task, test: Task, **knobs: Any) -> RunResult:
        """Fit on ``train`` with the given knobs and score on train and test.

        Every predicting model is scored by the one shared evaluation
        (:func:`fairengine.methods.evaluation.evaluate_result`) on top of the method's own
        metrics. BLAS runs on :data:`BLAS_THREADS` thread(s), as in a sweep's loky workers, so a
        direct run (dashboard, ``fairengine run``, ``n_jobs=1`` sweeps) computes the same way
        and is not slowed by threads competing for the few cores.

        The result then carries its evidence: baselines on the same rows and checks
        (:func:`fairengine.methods.evidence.attach_evidence`)."""
        from threadpoolctl import threadpool_limits

        from fairengine.methods.evaluation import evaluate_result
        from fairengine.methods.evidence import attach_evidence

        self.check_task(train)
        values = self.validate_knobs(knobs)
        with threadpool_limits(limits=BLAS_THREADS, user_api="blas"):
            result = evaluate_result(self.run_function(train, test, **values), train, test)
            return attach_evidence(result, train, test, method=self)
