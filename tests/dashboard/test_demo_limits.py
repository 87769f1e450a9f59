"""Demo mode (``FAIRENGINE_DEMO=1``) on every method page: sliders offer only the knobs' demo
ranges, a deep link beyond them does not start a fit beyond them, and every sweep is capped."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.components.deploy import DEMO_MAX_SWEEP_POINTS, demo_knobs, demo_thin
from fairengine.methods import get_method, list_methods

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")

#: page → (method, dataset, a deep link beyond the demo ranges)
PAGES = {
    "noisy_groups": (
        "noisy_groups",
        "german_credit",
        {"n_steps": "2000", "tuning": "grid", "method": "naive"},
    ),
    "maxent": ("maxent", "german_credit", {"n_samples": "50000", "n_bins": "10"}),
    "fair_regression": ("fair_regression", "law_school", {"n_levels": "100"}),
    "multiaccurate_proxy": (
        "multiaccurate_proxy",
        "german_credit",
        {"max_rows": "50000", "n_tasks": "10", "n_iter": "2000"},
    ),
    "balanced_filtering": ("balanced_filtering", "german_credit", {"n_rounds": "2000"}),
}
#: the page's run slot (``runner.run_panel``'s first argument)
SLOTS = {name: name for name in PAGES}


@pytest.fixture(autouse=True)
def demo(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAIRENGINE_DEMO", "1")
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "600")
    monkeypatch.setenv("FAIRENGINE_CHEAP_SECONDS", "1e9")


def test_every_capped_knob_has_a_default_inside_its_demo_range() -> None:
    capped = []
    for name in list_methods():
        for knob in get_method(name).knobs:
            demo = knob.for_demo()
            assert demo.default == knob.default, (name, knob.name)
            if knob.demo_high is not None:
                assert knob.low <= knob.demo_high < knob.high, (name, knob.name)
                capped.append(f"{name}.{knob.name} ≤ {knob.demo_high:g} (of {knob.high:g})")
            if knob.demo_choices is not None:
                assert set(knob.demo_choices) < set(knob.choices), (name, knob.name)
                capped.append(f"{name}.{knob.name} ∈ {knob.demo_choices}")
    print("demo caps:", "; ".join(capped))
    work = {"n_steps", "max_rows", "n_samples", "n_rounds", "n_iter", "max_iter", "dl_iter"}
    assert work <= {entry.split(".")[1].split(" ")[0] for entry in capped}


def test_demo_values_are_lowered_and_named() -> None:
    method = get_method("noisy_groups")
    limited, changed = demo_knobs(method.knobs, {"n_steps": 2000, "tuning": "grid", "noise": 0.3})
    assert limited == {"n_steps": 500, "tuning": "none", "noise": 0.3}
    assert len(changed) == 2 and "2000 → 500" in changed[0]
    # one rule for every sweep: thinned evenly, ends kept, to the points per sweep
    assert demo_thin((0.005, 0.01, 0.02, 0.03, 0.05, 1.0), per_value=6) == (0.005, 0.02, 0.03, 1.0)
    kept = demo_thin(range(DEMO_MAX_SWEEP_POINTS + 5))
    assert len(kept) == DEMO_MAX_SWEEP_POINTS and kept[-1] == DEMO_MAX_SWEEP_POINTS + 4
    assert list(kept) == sorted(set(kept)) and kept[0] == 0
    assert demo_thin(range(DEMO_MAX_SWEEP_POINTS)) == tuple(range(DEMO_MAX_SWEEP_POINTS))


def _open(page: str) -> AppTest:
    _, dataset, link = PAGES[page]
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"dataset": dataset, **link})
    at.switch_page(f"views/{page}.py").run()  # the link opens the method page directly
    assert not at.exception
    return at


@pytest.mark.parametrize("page", list(PAGES))
def test_page_offers_demo_ranges_clamps_its_link_and_caps_its_sweeps(page: str) -> None:
    method_name, _, link = PAGES[page]
    method = get_method(method_name)
    at = _open(page)
    # every slider of a capped knob stops at the demo's largest value
    checked = []
    for slider in at.slider:
        name = str(slider.key).rsplit(".", 1)[-1]
        knob = next((k for k in method.knobs if k.name == name), None)
        if knob is not None and knob.demo_high is not None:
            assert slider.max <= knob.demo_high, (page, name, slider.max)
            checked.append(f"{name} max {slider.max}")
    for box in at.selectbox:
        name = str(box.key).rsplit(".", 1)[-1]
        knob = next((k for k in method.knobs if k.name == name), None)
        if knob is not None and knob.demo_choices is not None:
            assert set(box.options) <= {str(c) for c in knob.demo_choices}, (page, name)
            checked.append(f"{name} options {box.options}")
    # the link's values beyond the demo range were lowered, with a notice
    notices = [w.value for w in at.warning if "beyond what this demo runs" in w.value]
    assert len(notices) >= 1, (page, [w.value for w in at.warning])
    # and the fit shown ran within the demo ranges
    result = at.session_state[f"runner.state.{SLOTS[page]}"]["result"]
    for name in link:
        knob = method.knob(name)
        assert knob.demo_value(result.knobs[name]) == result.knobs[name], (page, name)
    print(f"{page}: {', '.join(checked)}; link notices: {len(notices)}")
    _sweeps_are_capped(page, at)


def _sweeps_are_capped(page: str, at: AppTest) -> None:
    """A sweep button is offered only for at most the demo's points; otherwise the page says
    why (balanced filtering's default curves over five splits are 110 points)."""
    texts = [c.value for c in at.caption] + [w.value for w in at.warning]
    sweeps = [b for b in at.button if str(b.key).startswith("runner.sweep.")]
    over = [t for t in texts if f"at most {DEMO_MAX_SWEEP_POINTS} points per sweep" in t]
    points = [t for t in texts if "points, run in the shared worker pool" in t]
    for text in points:
        assert int(text.split(" points")[0]) <= DEMO_MAX_SWEEP_POINTS, (page, text)
    assert sweeps or over, page
    if page == "multiaccurate_proxy":  # 6 proxies × 6 ε = 36 points: ε thinned to 4
        assert any("the sweep uses 4 of the 6 ε values" in t for t in texts)
    if page == "balanced_filtering":  # 2 curves × 11 α × 5 splits: refused, in words
        assert over and not sweeps
        at.number_input(key="w.bf.seeds").set_value(1).run()
        sweeps = [b for b in at.button if str(b.key).startswith("runner.sweep.")]
        assert sweeps  # 22 points: offered
    print(f"{page}: {points or over}")
