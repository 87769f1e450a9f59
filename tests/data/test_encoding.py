"""The shared feature encoder."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from fairengine.data import FeatureEncoder


def test_fit_on_train_only_and_unseen_categories() -> None:
    train = pd.DataFrame({"n": [1.0, 2.0, 3.0, np.nan], "c": ["a", "b", "a", None]})
    test = pd.DataFrame({"n": [10.0, np.nan], "c": ["z", "b"]})
    enc = FeatureEncoder().fit(train)
    assert enc.feature_names_out_ == ["n", "c=a", "c=b", "c=__missing__", "c=__other__"]
    out = enc.transform(test)
    filled = np.array([1.0, 2.0, 3.0, 2.0])  # median 2 imputes the training NaN
    np.testing.assert_allclose(out[0, 0], (10.0 - filled.mean()) / filled.std())
    np.testing.assert_allclose(out[1, 0], (2.0 - filled.mean()) / filled.std())
    np.testing.assert_array_equal(out[:, 1:], [[0, 0, 0, 1], [0, 1, 0, 0]])
    train_out = enc.transform(train)
    np.testing.assert_allclose(train_out[:, 0].mean(), 0.0, atol=1e-12)
    np.testing.assert_array_equal(train_out[:, 1:].sum(axis=1), 1.0)


def test_rare_categories_share_other_column() -> None:
    train = pd.DataFrame({"c": list("aaabbc")})
    enc = FeatureEncoder(max_categories=2).fit(train)
    assert enc.categorical_["c"] == ["a", "b"]
    assert enc.transform(pd.DataFrame({"c": ["c"]})).tolist() == [[0.0, 0.0, 1.0]]


def test_state_round_trips_through_json() -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "n": rng.normal(size=50),
            "z": rng.choice(list("pqr"), 50),
            "a": rng.choice(list("xy"), 50),
        }
    )
    enc = FeatureEncoder().fit(df)
    clone = FeatureEncoder.from_dict(json.loads(json.dumps(enc.to_dict(), sort_keys=True)))
    np.testing.assert_array_equal(clone.transform(df), enc.transform(df))
    assert clone.feature_names_out_ == enc.feature_names_out_
