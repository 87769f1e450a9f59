"""The proxy tree's leaves in words (fairengine.methods.balanced_filtering.method.leaf_rules)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairengine.data.encoding import FeatureEncoder
from fairengine.methods.balanced_filtering.method import leaf_rules, split_words
from fairengine.methods.balanced_filtering.oblique import ObliqueTree


def _encoder() -> tuple[FeatureEncoder, pd.DataFrame]:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "capital-gain": rng.exponential(3000.0, 400),
            "age": rng.integers(17, 90, 400),
            "workclass": rng.choice(["Private", "State-gov", "Self-emp"], 400),
        }
    )
    return FeatureEncoder().fit(frame), frame


def _axis(encoder: FeatureEncoder, name: str, sign: float = 1.0) -> np.ndarray:
    coef = np.zeros(len(encoder.feature_names_out_))
    coef[list(encoder.feature_names_out_).index(name)] = sign
    return coef


def test_an_axis_split_reads_as_the_feature_and_its_threshold_in_the_tables_units() -> None:
    encoder, frame = _encoder()
    c = list(encoder.feature_names_out_).index("capital-gain")
    raw = 5095.5
    cut = (raw - encoder.center_[c]) / encoder.scale_[c]
    zero, one = split_words(_axis(encoder, "capital-gain")[None] * 2.0, [-2.0 * cut], encoder)
    assert (zero, one) == ("capital-gain ≤ 5095.5", "capital-gain > 5095.5")
    # the words say where the rows go: child 1 is exactly the rows above the threshold
    z = encoder.transform(frame)
    to_one = z @ (_axis(encoder, "capital-gain") * 2.0) - 2.0 * cut > 0
    np.testing.assert_array_equal(to_one, frame["capital-gain"].to_numpy() > raw)
    flipped = split_words(-_axis(encoder, "capital-gain")[None], [cut], encoder)
    assert flipped == ("capital-gain > 5095.5", "capital-gain ≤ 5095.5")


def test_a_category_split_and_an_oblique_split_say_what_they_are() -> None:
    encoder, _ = _encoder()
    zero, one = split_words(_axis(encoder, "workclass=Private")[None], [-0.5], encoder)
    assert (zero, one) == ("workclass ≠ Private", "workclass = Private")
    oblique = _axis(encoder, "age") * 3.0 + _axis(encoder, "capital-gain")
    zero, one = split_words(oblique[None], [0.0], encoder)
    assert zero.startswith("age ≤ ") and one.startswith("age > ")
    assert "(≈ oblique split: 75% of its weight)" in one


def test_leaf_rules_join_each_path_in_leaf_order_and_name_no_internal_codes() -> None:
    encoder, _ = _encoder()
    tree = ObliqueTree(n_features=len(encoder.feature_names_out_))
    zero, one = tree.split(0, _axis(encoder, "workclass=Private")[None], np.array([-0.5]))
    tree.split(one, _axis(encoder, "age")[None], np.array([0.0]))
    rules = leaf_rules(tree.arrays(), encoder)
    age = f"{encoder.center_[list(encoder.feature_names_out_).index('age')]:.6g}"
    assert rules == [
        "workclass ≠ Private",
        f"workclass = Private and age ≤ {age}",
        f"workclass = Private and age > {age}",
    ]
    assert not any("h=" in rule or "split " in rule for rule in rules)
