"""Exportable models returned by the methods (state as JSON + arrays, no pickle).

The linear models are imported on first use (they need SciPy), so that reading a model file's
manifest (a cached frontier point) stays light.
"""

from typing import Any

from fairengine.models.base import Model, register_model

__all__ = ["LinearClassifier", "Model", "RandomizedClassifier", "register_model"]


def __getattr__(name: str) -> Any:
    if name in ("LinearClassifier", "RandomizedClassifier"):
        from fairengine.models import linear

        return getattr(linear, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
