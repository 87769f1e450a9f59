"""Compare & export's sweeps into the store, with progress: "Sweep every method" (each method's
default grid) and the "Compute a frontier" panel (one knob of any method)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from dashboard.components import runner
from dashboard.components.deploy import demo_knobs, demo_thin, limits
from dashboard.components.jobs import discard
from dashboard.components.knobs import knob_widget
from fairengine.data import DataError, Task
from fairengine.frontier import FrontierStore, sweep, task_key
from fairengine.frontier.sweep import expand_grid, sweep_settings
from fairengine.methods import get_method, list_methods
from fairengine.methods.base import Knob, KnobError
from fairengine.methods.registry import portable
from fairengine.textsafe import md_text


def default_values(knob: Knob, demo: tuple | None) -> str:
    """A sensible comma-separated grid for a knob: its demo grid, else 5 points over its range."""
    if demo:
        values = list(demo)
    elif knob.choices is not None:
        values = list(knob.choices)
    elif knob.low is not None and knob.high is not None:
        if knob.log and knob.low > 0:
            values = np.geomspace(knob.low, knob.high, 5).tolist()
        else:
            values = np.linspace(knob.low, knob.high, 5).tolist()
        if knob.integer:
            values = sorted({int(round(v)) for v in values})
    else:
        values = [knob.default]
    return ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in values)


def _demo_settings(method, settings: list[dict]) -> list[dict]:
    """The sweep's settings within the knobs' demo ranges (duplicates dropped), with a notice
    when a typed value was lowered."""
    limited, changed = [], []
    for setting in settings:
        knobs, words = demo_knobs(method.knobs, setting)
        changed += [w for w in words if w not in changed]
        if knobs not in limited:
            limited.append(knobs)
    runner.demo_notice(changed)
    return limited


def render_knob_sweep(train: Task, test: Task, store) -> None:
    """Expander to sweep one knob of any method that supports the task, into ``store``."""
    names = [n for n in list_methods() if train.kind in get_method(n).kinds]
    with st.expander("Compute a frontier", expanded=False):
        if not names:
            st.caption(f"No method supports {md_text(train.kind)} tasks yet.")
            return
        c1, c2 = st.columns(2)
        name = c1.selectbox(
            "Method", names, format_func=lambda n: get_method(n).title, key="run_method"
        )
        method = get_method(name)
        if method.description:  # e.g. a post-processing method's need for the sensitive column
            st.caption(md_text(method.description))
        sweepable = [k.name for k in method.knobs]
        first = sweepable.index(next(iter(method.demo_grid), sweepable[0]))
        knob_name = c2.selectbox("Knob to sweep", sweepable, index=first, key=f"run_knob_{name}")
        knob = method.knob(knob_name)
        demo = limits().demo
        values_text = st.text_input(
            f"Values of {md_text(knob_name)} (comma-separated)",
            value=default_values(
                knob.for_demo() if demo else knob,
                None if demo and knob.demo_high is not None else method.demo_grid.get(knob_name),
            ),
            help=knob.help,
            key=f"run_values_{name}_{knob_name}",
        )
        fixed: dict = {}
        if len(method.knobs) > 1:
            st.caption("The other knobs, fixed for the whole sweep:")
            columns = st.columns(min(3, len(method.knobs) - 1))
            others = [k for k in method.knobs if k.name != knob_name]
            for i, other in enumerate(others):
                with columns[i % len(columns)]:
                    fixed[other.name] = knob_widget(other, key=f"run_fixed.{name}.{other.name}")
        values = [v.strip() for v in values_text.split(",") if v.strip()]
        grid = {knob_name: list(demo_thin(values, knob_name)), **{k: [v] for k, v in fixed.items()}}
        try:
            settings = [method.validate_knobs(combo) for combo in expand_grid(grid)]
            method.check(train)
        except (KnobError, DataError) as exc:
            st.error(md_text(exc))
            return
        if demo:
            settings = _demo_settings(method, settings)
        sweep_key = f"{task_key(train, test)}{name}{[sorted(k.items()) for k in settings]}"
        done = runner.sweep_panel(
            "compare",
            f"Sweeping {knob_name} of {method.title}",
            sweep_key,
            sweep,
            name,
            train,
            test,
            settings,
            store=store,
            button="Run sweep",
            n_points=len(settings),
        )
        if done and st.session_state.get("runner.compare.shown") != sweep_key:
            st.session_state["runner.compare.shown"] = sweep_key
            st.rerun()  # the page read the store before this sweep filled it


def every_method_settings(train: Task, test: Task) -> tuple[dict[str, list[dict]], dict[str, str]]:
    """Each method's default sweep on this task (its ``page`` grid, else its ``cli`` grid; in
    demo mode within the demo's knob ranges and points per sweep), by method name; and the
    methods that cannot run on the task, by title, with the reason in words."""
    plans: dict[str, list[dict]] = {}
    skipped: dict[str, str] = {}
    demo = limits().demo
    for name in list_methods():
        method = get_method(name)
        grid = method.sweep_grids.get("page") or method.sweep_grids.get("cli")
        if train.kind not in method.kinds or not grid:
            continue
        try:
            settings = sweep_settings(method, train, test, grid)
        except (KnobError, DataError) as exc:
            skipped[method.title] = str(exc)
            continue
        if demo:
            settings = _demo_settings(method, settings)
        plans[name] = list(demo_thin(settings))
    return plans, skipped


def render_sweep_every_method(train: Task, test: Task, store: FrontierStore) -> None:
    """The Sweep every method button: each method's default sweep as one job of the shared
    worker pool (one call per method, so a method's points share its fitted parts: encoding,
    base model, baselines; run on every idle worker), with one progress bar; the page reruns
    to draw the filled plane."""
    plans, skipped = every_method_settings(train, test)
    if not plans:
        return
    sweep_key = f"every{task_key(train, test)}{sorted((n, repr(s)) for n, s in plans.items())}"
    parts = [
        (discard, (sweep, portable(get_method(name)), train, test, settings), {"store": store})
        for name, settings in plans.items()
    ]
    done = runner.sweep_panel(
        "compare_every",
        "Sweeping every method",
        sweep_key,
        sweep,
        button="Sweep every method",
        n_points=sum(len(s) for s in plans.values()),
        parts=parts,
    )
    if skipped:
        st.caption(
            "Not swept on this task: "
            + "; ".join(f"**{md_text(t)}**: {md_text(why)}" for t, why in skipped.items())
        )
    if done and st.session_state.get("runner.compare_every.shown") != sweep_key:
        st.session_state["runner.compare_every.shown"] = sweep_key
        st.rerun()  # the page read the store before this sweep filled it
