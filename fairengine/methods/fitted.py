"""Parts of a run fitted once per process: the cache under the methods' shared parts (the
encoding, the logistic base model, a post-processor's curves) and the evidence's unconstrained
baseline (a leaf: it imports nothing of the engine)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

_FITS: OrderedDict[tuple, Any] = OrderedDict()
_FITS_SIZE = 16


def fitted_once(key: tuple, compute: Callable[[], Any]) -> Any:
    """``compute()``, kept in this process under ``key`` (the few most recent keys): a part of
    a run that does not depend on the knob a sweep moves — the encoding, a base model, a
    post-processor's curves — is fitted once and reused by every point. ``key`` names the rows
    (a task's ``fingerprint``) and everything else the value depends on; callers must not
    change what it returns."""
    if key in _FITS:
        _FITS.move_to_end(key)
        return _FITS[key]
    value = compute()
    _FITS[key] = value
    while len(_FITS) > _FITS_SIZE:
        _FITS.popitem(last=False)
    return value
