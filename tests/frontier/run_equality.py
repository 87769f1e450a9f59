"""Exact equality of two runs, field by field (types, dtypes, NaN in the same places)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd

from fairengine.export.files import load_model, model_bytes
from fairengine.models.base import Model


def assert_same(a: Any, b: Any, where: str = "run") -> None:
    """Raise AssertionError naming the first place where ``a`` and ``b`` differ."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True, obj=where)
        assert a.attrs == b.attrs, where
    elif isinstance(a, pd.Series):
        pd.testing.assert_series_equal(a, b, check_exact=True, obj=where)
    elif isinstance(a, pd.Index):
        pd.testing.assert_index_equal(a, b, exact=True, obj=where)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a.dtype}{a.shape}"
        if a.dtype == object:  # item by item (NaN is not equal to itself there)
            assert_same(a.ravel().tolist(), b.ravel().tolist(), where)
        else:
            np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, Model):
        # as a model file keeps it (a model may normalise its state when rebuilt)
        state_a, arrays_a = load_model(model_bytes(a)).get_state()
        state_b, arrays_b = b.get_state()
        assert state_a == state_b, f"{where}: model states differ"
        assert_same(arrays_a, arrays_b, f"{where}.arrays")
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} != {list(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), f"{where}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    elif dataclasses.is_dataclass(a):
        for field in dataclasses.fields(a):
            assert_same(getattr(a, field.name), getattr(b, field.name), f"{where}.{field.name}")
    elif isinstance(a, float | np.floating) and math.isnan(a):
        assert math.isnan(b), f"{where}: {a!r} != {b!r}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"
