"""The method contract: knobs declared once; `run` fits on train and scores train and test."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the command line imports KnobError without loading pandas
    from fairengine.data import Task
    from fairengine.methods.evidence import Baselines, Check, Evidence
    from fairengine.metrics.registry import MetricInfo

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
    by_name = {knob.name: knob for knob in knobs}
    for name, labels in words.items():
        choices = set(by_name[name].choices or ())
        if not set(labels) <= choices:
            raise ValueError(f"Words for unknown choices of {name!r}: {set(labels) - choices}")
    return tuple(
        replace(knob, choice_labels=tuple(words[knob.name].items())) if knob.name in words else knob
        for knob in knobs
    )


def with_advanced(knobs: tuple[Knob, ...], names: tuple[str, ...]) -> tuple[Knob, ...]:
    """``knobs`` with the named ones marked :attr:`Knob.advanced` (every name must exist)."""
    unknown = set(names) - {knob.name for knob in knobs}
    if unknown:
        raise ValueError(f"Unknown knobs marked advanced: {sorted(unknown)}")
    return tuple(replace(knob, advanced=True) if knob.name in names else knob for knob in knobs)


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
    advanced : bool
        A knob most people leave at its default: pages show it in an "Advanced" expander.
    only_with : (knob name, value) pair, optional
        The knob counts only when another knob has this value (θ's share only with θ =
        custom): pages show its widget only then.
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
    advanced: bool = False
    only_with: tuple[str, Any] | None = None

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
            if not isinstance(value, str):
                return bool(value)
            if value.strip().lower() in ("1", "true", "yes", "on"):
                return True
            if value.strip().lower() in ("0", "false", "no", "off"):
                return False
            raise KnobError(f"Knob {self.name!r} must be true or false; got {value!r}.")
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
#: A precondition on the task: returns None, or raises :class:`fairengine.data.DataError` saying
#: in plain words what is wrong and what to do.
TaskCheck = Callable[["Task"], None]
#: The knob grid of one sweep: ``{knob name: values}``.
Grid = Mapping[str, tuple[Any, ...]]

#: How a message names the target a task kind needs.
KIND_WORDS = {
    "classification": "a binary target (classification)",
    "regression": "a real-valued target (regression)",
}

#: The named sweep grids every consumer asks for: the dashboard page's sweep, the default of
#: ``fairengine sweep`` and the hosted demo's ``fairengine precompute``.
GRID_NAMES: tuple[str, ...] = ("page", "cli", "demo")
#: The requirement of a method whose model draws its predictions (:attr:`Method.requirements`).
RANDOMIZED_PREDICTIONS = (
    "Its predictions are randomized: two identical rows can get different decisions (its "
    "fairness and error hold on average), so each decision must be drawn with a recorded seed."
)


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
    #: The title of the paper it implements (the About page lists every method that has one).
    paper: str = ""
    #: Bump when the method's results change: cached points of older versions stop being served.
    version: str = "1"
    #: Named knob grids (one definition each): ``"page"`` the method page's sweep, ``"cli"`` what
    #: ``fairengine sweep`` runs without ``--grid``, ``"demo"`` what ``fairengine precompute``
    #: sweeps for the hosted demo (see :attr:`demo_grid`), and any further grid a page draws.
    sweep_grids: Mapping[str, Grid] = field(default_factory=dict, hash=False, compare=False)
    #: Preconditions on the task beyond its kind (:meth:`check` runs them).
    task_checks: tuple[TaskCheck, ...] = field(default=(), hash=False, compare=False)
    #: Whether the dashboard has a page for it (its own view ``dashboard/views/<name>.py``, else a
    #: generated one); False: the Compare page only.
    page: bool = True
    #: The hosted demo's grid is swept ...
    #: ... on these (dataset, sensitive columns or None for the dataset's default) pairs.
    demo_tasks: tuple[tuple[str, tuple[str, ...] | None], ...] = (("adult", None),)
    #: ... over these train/test splits (``task.split(random_state=s)``; 0 is the default split).
    demo_seeds: tuple[int, ...] = (0,)
    #: Its base learner, extra metrics and promise checks (:mod:`fairengine.methods.evidence`);
    #: None: logistic regression and the generic checks only.
    evidence: Evidence | None = field(default=None, hash=False, compare=False)
    #: The knob a visitor moves most, whose neighbours the page computes first (None: none).
    main_knob: str | None = None
    #: A knob whose every slider position ``fairengine precompute`` ships as a run on the
    #: default dataset (the other knobs at their defaults), for a slow fit. None: the default run.
    demo_knob: str | None = None
    #: What using its model demands beyond the feature columns, one plain sentence each (e.g.
    #: :data:`RANDOMIZED_PREDICTIONS`); a report recommending the method states them.
    requirements: tuple[str, ...] = field(default=(), hash=False, compare=False)
    #: What a result promises, in plain words, built from the result (its page shows it under
    #: the numbers). None: the method states no guarantee of its own.
    guarantee: Callable[[RunResult], str] | None = field(default=None, hash=False, compare=False)
    #: Its own model types: type name → the module whose import registers the class
    #: (:func:`fairengine.models.register_model`); only a declared module is ever imported for a
    #: file. Named after the method (or a prefix of its name): loading a file imports it only.
    model_types: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    #: Its own metrics (:class:`fairengine.metrics.MetricInfo`, ``module`` a full module path),
    #: declared in :mod:`fairengine.metrics.registry` when the method registers.
    metrics: tuple[MetricInfo, ...] = field(default=(), hash=False, compare=False)

    @property
    def demo_grid(self) -> Grid:
        """The grid ``fairengine precompute`` sweeps for the hosted demo (empty: none)."""
        return self.sweep_grids.get("demo", {})

    def grid(self, name: str) -> Grid:
        """The sweep grid called ``name``; :class:`KnobError` naming the declared ones otherwise."""
        try:
            return self.sweep_grids[name]
        except KeyError:
            declared = ", ".join(self.sweep_grids) or "none"
            raise KnobError(
                f"Method {self.name!r} declares no {name!r} sweep grid (it declares: {declared})."
            ) from None

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

    def check(self, task: Task) -> None:
        """Raise :class:`fairengine.data.DataError` when the method cannot run on ``task``: the
        wrong kind of target, or one of its :attr:`task_checks` fails (each says in plain words
        what is wrong and what to do). Pages, the runner, sweeps and ``run`` all ask this."""
        if task.kind not in self.kinds:
            from fairengine.data import DataError

            needed = " or ".join(KIND_WORDS.get(kind, kind) for kind in self.kinds)
            raise DataError(
                f"{self.title} needs {needed}, but the target {task.target!r} makes this a "
                f"{task.kind} task. Choose another target (on the Data page, or --target), or "
                "another method."
            )
        for check in self.task_checks:
            check(task)

    def promise_held(self, result: RunResult) -> bool:
        """Whether ``result`` kept the method's promise on its test rows: none of its promise
        checks (``evidence.promise_checks``) is at level fail (a warn leaves it held)."""
        names = set(self.evidence.promise_checks) if self.evidence else set()
        return not any(c.level == "fail" and c.name in names for c in result.checks)

    def run(self, train: Task, test: Task, **knobs: Any) -> RunResult:
        """Fit on ``train`` with the given knobs, score on train and test by the one shared
        evaluation (:func:`~fairengine.methods.evaluation.evaluate_result`) and attach the
        evidence (:func:`~fairengine.methods.evidence.attach_evidence`). BLAS runs on
        :data:`BLAS_THREADS` thread(s), as in a sweep's workers, so every run computes alike."""
        from threadpoolctl import threadpool_limits

        from fairengine.methods.evaluation import evaluate_result
        from fairengine.methods.evidence import attach_evidence

        self.check(train)
        values = self.validate_knobs(knobs)
        with threadpool_limits(limits=BLAS_THREADS, user_api="blas"):
            result = evaluate_result(self.run_function(train, test, **values), train, test)
            return attach_evidence(result, train, test, method=self)


def stored_result(
    method: Method,
    knobs: Mapping[str, Any],
    metrics_: Mapping[str, Mapping[str, float]],
    model: Any,
    train: Task,
    test: Task,
) -> RunResult:
    """A :class:`RunResult` of ``method`` rebuilt from a stored point (its model and metrics, no
    artifacts) with its evidence attached, for runs stored before results carried checks (the
    checks that need artifacts are absent)."""
    from fairengine.methods.evidence import attach_evidence

    result = RunResult(
        method.name,
        dict(knobs),
        {split: dict(values) for split, values in metrics_.items()},
        model,
    )
    return attach_evidence(result, train, test, method)
