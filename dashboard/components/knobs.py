"""Widgets for a method's knobs, built from the one declaration in ``Method.knobs``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import streamlit as st

from fairengine.methods.base import Knob, Method


def knob_widget(knob: Knob, *, key: str, value: Any = None) -> Any:
    """One widget for one knob: a select box for choices, a checkbox for flags, a slider for a
    bounded number (log-scale knobs slide over their exponent), else a number input."""
    value = knob.default if value is None else value
    label = knob.name
    if knob.kind == "choice":
        options = list(knob.choices or ())
        return st.selectbox(label, options, index=options.index(value), help=knob.help, key=key)
    if knob.kind == "bool":
        return st.checkbox(label, value=bool(value), help=knob.help, key=key)
    if knob.low is None or knob.high is None:
        return st.number_input(label, value=value, help=knob.help, key=key)
    if knob.log and knob.low > 0:
        exponent = st.slider(
            f"{label} (log10)",
            min_value=math.log10(knob.low),
            max_value=math.log10(knob.high),
            value=math.log10(value),
            step=0.05,
            help=knob.help,
            key=key,
        )
        chosen = float(f"{10**exponent:.3g}")  # 3 significant digits: stable cache keys
        st.caption(f"{label} = {chosen:g}")
        return knob.validate(min(max(chosen, knob.low), knob.high))
    if knob.integer:
        step = int(knob.step or 1)
        return st.slider(
            label, int(knob.low), int(knob.high), int(value), step=step, help=knob.help, key=key
        )
    step = float(knob.step) if knob.step else (knob.high - knob.low) / 100
    return st.slider(
        label, float(knob.low), float(knob.high), float(value), step=step, help=knob.help, key=key
    )


def knob_widgets(method: Method, *, key_prefix: str, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """A widget for every knob of ``method`` except ``skip``; returns the chosen values."""
    return {
        knob.name: knob_widget(knob, key=f"{key_prefix}.{method.name}.{knob.name}")
        for knob in method.knobs
        if knob.name not in skip
    }


def knob_columns(
    method: Method, layout: Sequence[Sequence[str]], *, key_prefix: str
) -> dict[str, Any]:
    """Widgets for the named knobs laid out in columns (one inner sequence per column), keyed
    ``{key_prefix}.{knob name}``; returns the chosen values."""
    values: dict[str, Any] = {}
    for column, names in zip(st.columns(len(layout)), layout, strict=True):
        with column:
            for name in names:
                values[name] = knob_widget(method.knob(name), key=f"{key_prefix}.{name}")
    return values
