"""Knob widgets come from Method.knobs and return the declared defaults untouched."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _app(method_name: str) -> None:
    import streamlit as st

    from dashboard.components.knobs import knob_panel
    from fairengine.methods import get_method

    method = get_method(method_name)
    st.session_state["values"] = method.validate_knobs(
        knob_panel(method, key_prefix=f"k.{method_name}")
    )


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


def _demo_app(method_name: str) -> None:
    import streamlit as st

    from dashboard.components.knobs import knob_panel
    from fairengine.methods import get_method

    method = get_method(method_name)
    st.session_state["values"] = method.validate_knobs(
        knob_panel(method, key_prefix=f"k.{method_name}")
    )


def test_demo_mode_sliders_and_links_stay_in_the_demo_ranges(monkeypatch) -> None:
    """With FAIRENGINE_DEMO=1 every widget of a capped knob offers its demo range only, and a
    link's value beyond it is lowered (with a notice): what the page fits stays inside."""
    from fairengine.methods import get_method, list_methods

    monkeypatch.setenv("FAIRENGINE_DEMO", "1")
    for name in list_methods():
        method = get_method(name)
        capped = [k for k in method.knobs if k.demo_high is not None or k.demo_choices]
        if not capped:
            continue
        at = AppTest.from_function(_demo_app, args=(name,), default_timeout=30)
        for knob in capped:  # the largest value of the full range, or a choice outside the demo
            at.query_params[knob.name] = str(
                knob.high if knob.demo_high is not None else knob.choices[-1]
            )
        at.run()
        assert not at.exception
        for knob in capped:
            value = at.session_state["values"][knob.name]
            assert knob.demo_value(value) == value, (name, knob.name, value)
            if knob.demo_high is not None:
                assert at.slider(key=f"k.{name}.{knob.name}").max <= knob.demo_high
            else:
                assert at.selectbox(key=f"k.{name}.{knob.name}").options == list(
                    map(str, knob.demo_choices)
                )
        lowered = [w.value for w in at.warning if "beyond what this demo runs" in w.value]
        assert len(lowered) == len(capped), (name, lowered)
        print(name, "; ".join(w.split(";")[0] for w in lowered))
