"""Knob widgets come from Method.knobs and return the declared defaults untouched."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _app(method_name: str) -> None:
    import streamlit as st

    from dashboard.components.knobs import knob_widgets
    from fairengine.methods import get_method

    st.session_state["values"] = knob_widgets(get_method(method_name), key_prefix="k")


def test_widgets_return_defaults_for_every_method() -> None:
    from fairengine.methods import get_method, list_methods

    for name in list_methods():
        at = AppTest.from_function(_app, args=(name,), default_timeout=30)
        at.run()
        assert not at.exception
        assert at.session_state["values"] == get_method(name).defaults()


def test_slider_ranges_are_the_declared_ranges() -> None:
    at = AppTest.from_function(_app, args=("reweighing",), default_timeout=30)
    at.run()
    strength = at.slider(key="k.reweighing.strength")
    assert (strength.min, strength.max, strength.step) == (0.0, 1.0, 0.05)
    strength.set_value(0.35).run()
    assert at.session_state["values"]["strength"] == 0.35
    c = at.slider(key="k.reweighing.C")
    assert (c.min, c.max) == (-3.0, 3.0)  # log10 of the declared [1e-3, 1e3]
    c.set_value(1.0).run()
    assert at.session_state["values"]["C"] == 10.0
