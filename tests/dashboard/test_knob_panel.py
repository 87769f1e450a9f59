"""The generic knob panel: every knob of a method gets a widget (the advanced ones in the
"Advanced" expander), and a page's sweep is the method's declared grid."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

PAGE_METHODS = ("balanced_filtering", "maxent", "fair_regression", "noisy_groups",
                "multiaccurate_proxy")  # fmt: skip


def _panel(method_name: str) -> None:
    import streamlit as st

    from dashboard.components.knobs import knob_panel
    from fairengine.methods import get_method

    st.session_state["values"] = knob_panel(get_method(method_name), key_prefix="k")


def _widget_keys(node) -> set[str]:
    keys = set()
    for kind in ("slider", "selectbox", "checkbox", "number_input"):
        keys |= {str(w.key) for w in node.get(kind)}
    return keys


@pytest.mark.parametrize("name", PAGE_METHODS)
def test_every_knob_has_a_widget_and_advanced_ones_sit_in_the_expander(name: str) -> None:
    from fairengine.methods import get_method

    method = get_method(name)
    at = AppTest.from_function(_panel, args=(name,), default_timeout=30)
    at.run()
    assert not at.exception
    shown = [k for k in method.knobs if k.only_with is None]
    assert _widget_keys(at) == {f"k.{k.name}" for k in shown}
    advanced = {f"k.{k.name}" for k in shown if k.advanced}
    if advanced:
        expander = next(e for e in at.expander if e.label == "Advanced")
        assert _widget_keys(expander) == advanced
    else:
        assert not [e for e in at.expander if e.label == "Advanced"]
    # the values are the declared defaults (a knob not shown keeps its default in validation)
    assert method.validate_knobs(at.session_state["values"]) == method.defaults()
    print(f"{name}: {len(shown) - len(advanced)} main, {len(advanced)} advanced knobs")


def test_a_knob_that_counts_only_with_another_value_appears_with_it() -> None:
    at = AppTest.from_function(_panel, args=("maxent",), default_timeout=30)
    at.run()
    assert "k.protected_share" not in _widget_keys(at)
    at.selectbox(key="k.theta").set_value("custom").run()
    assert at.slider(key="k.protected_share").value == 0.5
    assert at.session_state["values"]["protected_share"] == 0.5


@pytest.mark.parametrize("name", PAGE_METHODS)
def test_the_page_sweep_request_is_the_declared_grid(name: str) -> None:
    """The grid a page submits is the method's ``"page"`` grid, the other knobs fixed."""
    from dashboard.components.grid_sweep import GridSweep, sweep_request
    from fairengine.methods import get_method

    method = get_method(name)
    knobs = method.defaults()
    grid = method.grid("page")
    request = sweep_request(method, knobs, GridSweep(axis=next(iter(grid)), what="x"))
    for knob, values in grid.items():
        assert request[knob] == list(values)
    for knob, value in knobs.items():
        if knob not in grid:
            assert request[knob] == [value]
