"""A fitted Algorithm 4 proxy as data, kept in the run store (:func:`stored_proxy`), so that a
fresh process reuses the proxy an earlier one fitted instead of replaying its game: its fit depends
on neither α nor a downstream knob. An entry is used only when its checksums hold and
:func:`valid_state` accepts its shapes and types (design notes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from fairengine.data import Task
    from fairengine.methods.multiaccurate_proxy.linear import MultiaccurateProxy

#: Bumped when the stored state's layout changes (older entries are then never read).
STATE_FORMAT = 1
#: The constructor parameters of the proxy, stored as plain values.
_PARAMS = (
    "alpha", "C", "n_iter", "learning_rate", "auditor", "radius", "random_state",
    "auditor_depth", "precondition", "early_stop", "validation",
)  # fmt: skip
#: What the fit leaves besides the parameters (the rest is set by ``_select`` from these).
_FITTED = (
    "n_features_in_", "paths_", "scales_", "n_groups_", "n_validation_", "kept_out_error_",
    "_chain", "refitted_", "_candidate_ratio", "_candidate_held_out", "alpha_range_",
    "held_out_range_", "n_alpha_steps_",
)  # fmt: skip


def proxy_state(proxy: MultiaccurateProxy, seconds: float) -> dict[str, Any]:
    """The fitted state of ``proxy`` (whose fit took ``seconds``) as plain data."""
    state = {name: getattr(proxy, name) for name in (*_PARAMS, *_FITTED)}
    state["paths_"] = {
        int(k): {**vars(entry), "regions": tuple(entry.regions)}
        for k, entry in proxy.paths_.items()
    }
    state["scales_"] = {int(k): float(v) for k, v in proxy.scales_.items()}
    state["_chain"] = [int(i) for i in proxy._chain]
    return {"format": STATE_FORMAT, "seconds": float(seconds), "state": state}


def _float_array(value: Any, shape: tuple[int | None, ...]) -> bool:
    """A float64 array of ``shape`` (None: any length on that axis)."""
    if not isinstance(value, np.ndarray) or value.dtype != np.float64 or value.ndim != len(shape):
        return False
    return all(want is None or got == want for got, want in zip(value.shape, shape, strict=True))


def _valid_path(entry: Any, width: int, length: int) -> bool:
    """One group's stored game: its path of ``length`` candidates of ``width`` coefficients,
    their trace and audited violations, and the error regions found."""
    if not isinstance(entry, dict) or set(entry) != {"path", "trace", "audited", "regions"}:
        return False
    regions = entry["regions"]
    return (
        _float_array(entry["path"], (length, width))
        and bool(np.all(np.isfinite(entry["path"])))
        and _float_array(entry["trace"], (length,))
        and _float_array(entry["audited"], (length,))
        and isinstance(regions, tuple)
        and len(regions) == 4
        and _float_array(regions[0], (None, width))
        and _float_array(regions[1], (len(regions[0]),))
        and _float_array(regions[2], (width,))
        and isinstance(regions[3], float)
    )


def valid_state(value: Any) -> bool:
    """Whether a stored entry is a proxy state of this format with consistent shapes and types
    (the run file's checksums were verified before; this refuses an entry of another layout)."""
    if not isinstance(value, dict) or value.get("format") != STATE_FORMAT:
        return False
    state = value.get("state")
    if not isinstance(state, dict) or set(state) != {*_PARAMS, *_FITTED}:
        return False
    counts = (state["n_features_in_"], state["n_groups_"], state["n_validation_"])
    if not isinstance(value.get("seconds"), float) or not all(type(c) is int for c in counts):
        return False
    ratio, chain = state["_candidate_ratio"], state["_chain"]
    length = len(ratio) if isinstance(ratio, np.ndarray) else -1
    paths, scales = state["paths_"], state["scales_"]
    return (
        _float_array(ratio, (length,))
        and _float_array(state["_candidate_held_out"], (length,))
        and isinstance(chain, list)
        and bool(chain)
        and all(isinstance(i, int) and 0 <= i < length for i in chain)
        and isinstance(paths, dict)
        and bool(paths)
        and isinstance(scales, dict)
        and set(scales) == set(paths)
        and all(isinstance(s, float) and s > 0 for s in scales.values())
        and all(_valid_path(e, state["n_features_in_"] + 1, length) for e in paths.values())
    )


def proxy_from_state(value: dict[str, Any]) -> tuple[MultiaccurateProxy, float]:
    """(the proxy a :func:`valid_state` entry describes, selected at its own α, the seconds its
    fit took). Raises ``ValueError`` or ``TypeError`` for parameters the proxy refuses."""
    from fairengine.methods.multiaccurate_proxy.linear import GroupPath, MultiaccurateProxy
    from fairengine.methods.params import validate_params

    state = value["state"]
    proxy = MultiaccurateProxy(**{name: state[name] for name in _PARAMS})
    validate_params(proxy)
    for name in _FITTED:
        setattr(proxy, name, state[name])
    if not isinstance(proxy.auditor, str) or proxy.n_groups_ < 2:
        raise ValueError("A stored proxy names an auditor object or has fewer than two groups.")
    proxy.paths_ = {k: GroupPath(**entry) for k, entry in state["paths_"].items()}
    return proxy._select(proxy.alpha), value["seconds"]


def stored_proxy(
    train: Task, test: Task, key: tuple, fit: Callable[[], tuple[Any, float]]
) -> tuple[Any, float]:
    """(the proxy of ``key`` on these rows, the seconds its fit took): read from the run store
    (inside :func:`~fairengine.methods.evidence.stored_fits`) when it holds an entry that
    :func:`valid_state` accepts and :func:`proxy_from_state` can build, else ``fit()`` (then
    kept there)."""
    from fairengine.methods import get_method
    from fairengine.methods.evidence import stored_table

    version = get_method("multiaccurate_proxy").version
    full_key = ("multiaccurate_proxy.proxy", version, STATE_FORMAT, *key)
    found: list[tuple[Any, float]] = []

    def compute() -> dict[str, Any]:
        found.append(fit())
        return proxy_state(*found[-1])

    def usable(value: Any) -> bool:
        if not valid_state(value):
            return False
        try:
            found.append(proxy_from_state(value))
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):
            return False
        return True

    stored_table(train, test, full_key, compute, usable)
    return found[-1]
