"""The grid a knob's widget moves on, and a value's neighbours on it (one step down and up).

Design notes: docs/architecture.md, "Knob steps".
"""

from __future__ import annotations

import math
from typing import Any

from fairengine.methods.base import Knob

#: Step of a log-scale knob's slider, in powers of ten.
LOG_STEP = 0.05
#: Steps of a linear slider over its range when the knob declares none.
DEFAULT_STEPS = 100


def slider_step(knob: Knob) -> float | int:
    """The step of the knob's slider: its declared step, else :data:`DEFAULT_STEPS` over the
    range (integers: 1); for a log-scale knob, :data:`LOG_STEP` (of the exponent)."""
    if knob.log:
        return LOG_STEP
    if knob.integer:
        return int(knob.step or 1)
    if knob.step:
        return float(knob.step)
    return (float(knob.high or 0.0) - float(knob.low or 0.0)) / DEFAULT_STEPS


def log_value(exponent: float) -> float:
    """A log-scale knob's value at ``exponent`` as its slider reads it (3 significant digits,
    so that cache keys stay stable)."""
    return float(f"{10**exponent:.3g}")


def _decimals(step: float) -> int:
    """Decimals of ``step`` as written (what the browser's slider rounds its values to)."""
    text = repr(float(step))
    return 0 if "e" in text or "." not in text else len(text.split(".")[1].rstrip("0") or "")


def _on_grid(value: float, low: float, high: float, step: float) -> float:
    """The grid point ``low + k·step`` nearest to ``value`` (halves up), within the range."""
    if value >= high:
        return high
    if value <= low:
        return low
    k = math.floor((value - low) / step + 0.5 + 1e-9)
    return min(high, round(low + k * step, _decimals(step)))


def _slid(knob: Knob, value: Any, direction: int) -> Any:
    """The value the knob's slider sends after one step in ``direction`` (+1 or -1) from
    ``value``; None for a knob with no slider (unbounded: a number box)."""
    if knob.low is None or knob.high is None:
        return None
    step = slider_step(knob)
    if knob.log and knob.low > 0:
        low, high = math.log10(knob.low), math.log10(knob.high)
        exponent = _on_grid(math.log10(value) + direction * step, low, high, step)
        return knob.validate(min(max(log_value(exponent), knob.low), knob.high))
    if knob.integer:
        moved = _on_grid(int(value) + direction * step, int(knob.low), int(knob.high), step)
        return int(moved)
    return _on_grid(float(value) + direction * step, float(knob.low), float(knob.high), step)


def neighbours(knob: Knob, value: Any) -> tuple[Any, ...]:
    """The values one step of the knob's widget away from ``value``: the next choice up and
    down (a select box), the other state (a checkbox), one slider step up and down (a number
    on a bounded range, log-scale or not). Nothing beyond the range's ends, and never
    ``value`` itself; up first."""
    kind = knob.kind
    if kind == "bool":
        return (not bool(value),)
    if kind == "choice":
        options = list(knob.choices or ())
        if value not in options:
            return ()
        at = options.index(value)
        return tuple(options[i] for i in (at + 1, at - 1) if 0 <= i < len(options))
    found: list[Any] = []
    for direction in (1, -1):
        moved = _slid(knob, value, direction)
        if moved is not None and moved != value and moved not in found:
            found.append(moved)
    return tuple(found)


def slider_values(knob: Knob, start: Any) -> list[Any]:
    """Every value the knob's widget reaches from ``start`` by single steps (``start`` included),
    in increasing order; ``[start]`` for a knob with no slider or choices."""
    found = [start]
    pending = [start]
    while pending:
        for value in neighbours(knob, pending.pop()):
            if value not in found:
                found.append(value)
                pending.append(value)
    return sorted(found) if knob.kind not in ("bool", "choice") else found
