"""The feature encoder equals a second implementation (kept frozen in ``_legacy_encoder.py``)
bit for bit on the bundled data. What it guards: model files and shipped
frontiers depend on the encoder's outputs, so any change to them must be deliberate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairengine.data import FeatureEncoder, load_dataset
from fairengine.data.registry import DATASETS
from tests.data._legacy_encoder import FeatureEncoder as LegacyEncoder


@pytest.mark.parametrize("name", list(DATASETS))
def test_identical_to_legacy_encoder_on_bundled_data(name: str) -> None:
    task = load_dataset(name)
    X = task.X.iloc[:3000]
    train, test = X.iloc[::2], X.iloc[1::2]
    new, old = FeatureEncoder().fit(train), LegacyEncoder().fit(train)
    assert new.feature_names_out_ == old.feature_names_out_
    state = new.to_dict()
    assert state.pop("dropped") == []  # no identifier-like column in the bundled data
    assert state == old.to_dict()
    for part in (train, test):
        a, b = new.transform(part), old.transform(part)
        assert a.dtype == b.dtype and a.shape == b.shape and a.flags.c_contiguous
        np.testing.assert_array_equal(a, b)


def test_identical_on_mixed_dtypes_with_missing_values() -> None:
    rng = np.random.default_rng(3)
    n = 500
    frame = pd.DataFrame(
        {
            "f": np.where(rng.random(n) < 0.1, np.nan, rng.normal(1e3, 7.0, n)),
            "i": rng.integers(-5, 50, n),
            "nullable": pd.array(
                np.where(rng.random(n) < 0.2, None, rng.integers(0, 9, n)), dtype="Int64"
            ),
            "c": rng.choice(["a", "b", None, "d"], n),
            "b": rng.random(n) < 0.3,
            "many": [f"v{k}" for k in rng.integers(0, 80, n)],
            "const": 1.5,
        }
    )
    new, old = FeatureEncoder().fit(frame), LegacyEncoder().fit(frame.astype({"nullable": float}))
    assert new.to_dict()["center"] == old.to_dict()["center"]
    np.testing.assert_array_equal(
        new.transform(frame), old.transform(frame.astype({"nullable": float}))
    )


def test_decimal_and_bytes_columns() -> None:
    from decimal import Decimal

    frame = pd.DataFrame(
        {
            "d": [Decimal("1.5"), Decimal("2.25"), None, Decimal("-3")],
            "raw": [b"ok", b"\xff\xfe", None, b"ok"],
        }
    )
    enc = FeatureEncoder().fit(frame)
    assert enc.numeric_ == ["d"]  # decimals are numbers, not 4 categories
    out = enc.transform(frame)
    assert np.isfinite(out).all() and out.shape == (4, 1 + 3 + 1)
    assert "raw=\\xff\\xfe" in enc.feature_names_out_
