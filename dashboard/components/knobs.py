"""Widgets for a method's knobs, built from the one declaration in ``Method.knobs``.

In demo mode (:func:`dashboard.components.deploy.limits`) every widget offers only the knob's
demo range (``Knob.for_demo``), and a link's value beyond it is lowered to it with a notice."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

from dashboard.components.deploy import limits
from dashboard.components.state import task_params
from fairengine.data import Task
from fairengine.methods.base import Knob, KnobError, Method
from fairengine.methods.knob_steps import LOG_STEP, log_value, slider_step
from fairengine.textsafe import md_text


def url_value(knob: Knob, key: str) -> Any:
    """The knob's value from the page's link (``?alpha=0.3``), read once per widget and kept, so
    every rerun draws the widget with the same default; None if absent or invalid. An invalid
    value, or one lowered to the demo's range, is named in a note that :func:`knob_widget`
    shows for as long as the widget keeps the link's value (a page may rerun itself at once)."""
    seed_key = f"_url_seed.{key}"
    if seed_key not in st.session_state:
        raw = st.query_params.get(knob.name)
        note = None
        try:
            value = None if raw is None else knob.validate(raw)
        except KnobError as exc:
            value = None
            note = f"The link's value for {knob.display_label} was ignored: {md_text(exc)}"
        if value is not None and limits().demo and knob.demo_value(value) != value:
            lowered = knob.demo_value(value)
            note = (
                f"The link's {knob.display_label} = {md_text(value)} is beyond what this demo "
                f"runs; using {md_text(lowered)}. Install fairengine locally for the full range."
            )
            value = lowered
        st.session_state[seed_key] = value
        # the note holds while the widget shows the value it speaks of
        st.session_state[f"_url_note.{key}"] = (note, knob.default if value is None else value)
    return st.session_state[seed_key]


def _link_note(key: str, chosen: Any) -> Any:
    """Show the link's note about this widget while it still holds the link's value."""
    note, at = st.session_state.get(f"_url_note.{key}") or (None, None)
    if note and chosen == at:
        st.warning(note)
    return chosen


def knob_widget(knob: Knob, *, key: str, value: Any = None, url: bool = False) -> Any:
    """One widget for one knob: a select box for choices, a checkbox for flags, a slider for a
    bounded number (log-scale knobs slide over their exponent), else a number input.

    Labelled with the knob's words and paper symbol, with its declared help. With ``url`` the
    first value comes from the page's link when it names the knob (see :func:`share_knobs`).
    In demo mode it offers the knob's demo range only.
    """
    linked = url_value(knob, key) if url else None
    value = linked if linked is not None else (knob.default if value is None else value)
    if limits().demo:  # the demo's range: the slider stops there
        value, knob = knob.demo_value(value), knob.for_demo()
    label = knob.display_label
    if knob.kind == "choice":
        options = list(knob.choices or ())
        chosen = st.selectbox(
            label,
            options,
            index=options.index(value),
            format_func=knob.choice_label,  # words, same values
            help=knob.help,
            key=key,
        )
    elif knob.kind == "bool":
        chosen = st.checkbox(label, value=bool(value), help=knob.help, key=key)
    elif knob.low is None or knob.high is None:
        chosen = st.number_input(label, value=value, help=knob.help, key=key)
    elif knob.log and knob.low > 0:
        low, high, start = (math.log10(v) for v in (knob.low, knob.high, value))
        exponent = st.slider(
            f"{label} (log10)", low, high, start, LOG_STEP, help=knob.help, key=key
        )
        chosen = log_value(exponent)
        st.caption(f"{label} = {chosen:g}")
        chosen = knob.validate(min(max(chosen, knob.low), knob.high))
    else:
        cast = int if knob.integer else float
        low, high, value, step = (cast(v) for v in (knob.low, knob.high, value, slider_step(knob)))
        chosen = st.slider(label, low, high, value, step=step, help=knob.help, key=key)
    drawn_knobs()[knob.name] = (knob, chosen)  # what a one-step move of this widget sends
    return _link_note(key, chosen) if url else chosen


def drawn_knobs() -> dict[str, tuple[Knob, Any]]:
    """The knobs this session's page drew since :mod:`.prefetch` last read them: name → (the
    knob as its widget drew it, with the page's range and step; the widget's value)."""
    return st.session_state.setdefault("_drawn_knobs", {})


def knob_panel(
    method: Method,
    *,
    key_prefix: str,
    columns: int = 3,
    skip: tuple[str, ...] = (),
    advanced_extra: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Widgets for every knob of ``method`` but ``skip``, keyed ``{key_prefix}.{knob name}``:
    the main ones in ``columns`` columns (in declaration order), the :attr:`Knob.advanced` ones
    in an "Advanced" expander (where ``advanced_extra`` draws the page's own settings too), a
    :attr:`Knob.only_with` one only when it counts; returns the chosen values."""
    main = [k for k in method.knobs if not k.advanced and k.name not in skip]
    advanced = [k for k in method.knobs if k.advanced and k.name not in skip]
    values: dict[str, Any] = {}
    if main:
        per = -(-len(main) // columns)  # ceiling: the first columns hold one more
        chunks = [main[i : i + per] for i in range(0, len(main), per)]
        for column, chunk in zip(st.columns(columns), chunks, strict=False):
            with column:
                _widgets(chunk, values, key_prefix)
    if advanced or advanced_extra is not None:
        with st.expander("Advanced"):
            _widgets(advanced, values, key_prefix)
            if advanced_extra is not None:
                advanced_extra()
    return values


def _widgets(knobs: list[Knob], values: dict[str, Any], key_prefix: str) -> None:
    """A widget for each knob into ``values``; a knob that counts only with another knob's value
    (:attr:`Knob.only_with`) only while that knob has it."""
    for knob in knobs:
        if knob.only_with is not None:
            other, needed = knob.only_with
            if str(values.get(other)) != str(needed):
                continue
        values[knob.name] = knob_widget(knob, key=f"{key_prefix}.{knob.name}", url=True)


def share_knobs(method: Method, values: Mapping[str, Any], task: Task) -> None:
    """Put the task and the knobs that differ from their defaults into the address bar, so the
    view is a link: opening it restores the task (``init_from_query_params``) and the knobs
    (:func:`url_value`)."""
    params: dict[str, Any] = dict(task_params(task))
    for knob in method.knobs:
        if knob.name in values and values[knob.name] != knob.default:
            params[knob.name] = str(values[knob.name])
    st.query_params.from_dict(params)
