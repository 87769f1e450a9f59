"""Parts of a run fitted once per process: the cache under the methods' shared parts (the
encoding, the logistic base model, a post-processor's curves) and the evidence's unconstrained
baseline (a leaf: it imports only the cache helper)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fairengine.lru import LRU

_FITS: LRU[Any] = LRU(16)


def fitted_once(key: tuple, compute: Callable[[], Any]) -> Any:
    """``compute()``, kept in this process under ``key`` (the few most recent keys): a part of
    a run that does not depend on the knob a sweep moves — the encoding, a base model, a
    post-processor's curves — is fitted once and reused by every point. ``key`` names the rows
    (a task's ``fingerprint``) and everything else the value depends on; callers must not
    change what it returns."""
    return _FITS.compute(key, compute)
