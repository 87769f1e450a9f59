"""Task construction, roles, groups, fingerprint and split."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairengine.data import DataError, from_frame
from fairengine.data.groups import MERGED_GROUP


def make_frame(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["female", "male"], size=n, p=[0.4, 0.6])
    race = rng.choice(["a", "b", "c"], size=n)
    x = rng.normal(size=n)
    label = np.where(x + (sex == "male") * 0.5 + rng.normal(size=n) > 0.3, "yes", "no")
    return pd.DataFrame(
        {
            "x": x,
            "cat": rng.choice(["u", "v", "w"], size=n),
            "sex": sex,
            "race": race,
            "label": label,
            "amount": rng.gamma(2.0, 3.0, size=n),
        }
    )


def test_classification_roles_and_codes() -> None:
    df = make_frame()
    task = from_frame(df, target="label", sensitive="sex")
    assert task.kind == "classification"
    assert task.positive_label == "yes"
    assert task.sensitive == ("sex",)
    assert set(task.features) == {"x", "cat", "race", "amount"}
    assert list(task.X.columns) == list(task.features)
    np.testing.assert_array_equal(task.y, (df["label"] == "yes").astype(int))
    assert task.group_names == ("female", "male")
    np.testing.assert_array_equal(task.groups, (df["sex"] == "male").astype(int))


def test_intersectional_groups() -> None:
    task = from_frame(make_frame(), target="label", sensitive=["sex", "race"])
    assert len(task.group_names) == 6
    assert "female & a" in task.group_names
    labels = task.group_labels.to_numpy()
    assert all(task.group_names[c] == lab for c, lab in zip(task.groups, labels, strict=True))


def test_regression_inferred_and_overridable() -> None:
    df = make_frame()
    task = from_frame(df, target="amount", sensitive="sex")
    assert task.kind == "regression"
    assert task.y.dtype == np.float64
    assert task.positive_label is None
    with pytest.raises(DataError, match="not numeric"):
        from_frame(df, target="cat", sensitive="sex", kind="regression")


def test_positive_label_default_and_override() -> None:
    df = make_frame()
    df["label"] = np.where(df["label"] == "yes", "approved_x", "rejected_x")
    rare = df["label"].value_counts().index[-1]
    assert from_frame(df, target="label", sensitive="sex").positive_label == rare
    task = from_frame(df, target="label", sensitive="sex", positive_label="rejected_x")
    np.testing.assert_array_equal(task.y, (df["label"] == "rejected_x").astype(int))
    with pytest.raises(DataError, match="does not occur"):
        from_frame(df, target="label", sensitive="sex", positive_label="maybe")


def test_fingerprint_depends_on_content_and_roles() -> None:
    df = make_frame()
    a = from_frame(df, target="label", sensitive="sex")
    assert a.fingerprint == from_frame(df.copy(), target="label", sensitive="sex").fingerprint
    assert a.fingerprint != from_frame(df, target="label", sensitive="race").fingerprint
    changed = df.copy()
    changed.loc[0, "x"] += 1.0
    assert a.fingerprint != from_frame(changed, target="label", sensitive="sex").fingerprint


def test_split_is_stratified_and_keeps_codes() -> None:
    task = from_frame(make_frame(2000), target="label", sensitive=["sex", "race"])
    train, test = task.split(test_size=0.3, random_state=1)
    assert len(train.frame) + len(test.frame) == len(task.frame)
    assert not set(train.frame.index) & set(test.frame.index)
    assert train.group_names == test.group_names == task.group_names
    for part in (train, test):
        for g in range(task.n_groups):
            full_rate = task.y[task.groups == g].mean()
            assert part.y[part.groups == g].mean() == pytest.approx(full_rate, abs=0.05)
    again, _ = task.split(test_size=0.3, random_state=1)
    assert again.fingerprint == train.fingerprint


def test_merge_small_groups() -> None:
    df = make_frame(300)
    df.loc[:4, "race"] = "tiny"
    with pytest.raises(DataError, match="'tiny' \\(5 rows\\)"):
        from_frame(df, target="label", sensitive="race")
    with pytest.raises(DataError, match="even merged"):
        from_frame(df, target="label", sensitive="race", merge_small_groups=True)
    df.loc[5:11, "race"] = "small"
    task = from_frame(df, target="label", sensitive="race", merge_small_groups=True)
    assert MERGED_GROUP in task.group_names
    assert "tiny" not in task.group_names
    assert (task.groups == task.group_names.index(MERGED_GROUP)).sum() == 12


def test_missing_values_dropped_on_request() -> None:
    df = make_frame()
    df.loc[[3, 7], "sex"] = None
    with pytest.raises(DataError, match="2 row"):
        from_frame(df, target="label", sensitive="sex")
    task = from_frame(df, target="label", sensitive="sex", drop_missing=True)
    assert len(task.frame) == len(df) - 2
    assert any("Dropped 2" in note for note in task.notes)


def test_constant_feature_is_dropped_with_a_note() -> None:
    df = make_frame()
    df["const"] = 7
    task = from_frame(df, target="label", sensitive="sex")
    assert "const" not in task.features
    assert any("const" in note for note in task.notes)


def test_from_frame_refuses_a_misspelt_keyword() -> None:
    """The table settings are explicit keywords: a misspelt one is an error, not ignored."""
    df = make_frame()
    task = from_frame(df, target="label", sensitive="sex", name="credit", max_rows=10_000)
    assert task.name == "credit"
    with pytest.raises(TypeError):
        from_frame(df, target="label", sensitive="sex", drop_mising=True)


def test_group_label_names_each_column_with_its_value() -> None:
    from fairengine.data.groups import group_label

    one = from_frame(make_frame(), target="label", sensitive="sex")
    assert [group_label(one.sensitive, g) for g in one.group_names] == [
        "sex = female",
        "sex = male",
    ]
    two = from_frame(make_frame(), target="label", sensitive=["sex", "race"])
    assert group_label(two.sensitive, "female & a") == "sex = female & race = a"
    assert group_label(two.sensitive, MERGED_GROUP) == MERGED_GROUP
    assert group_label(("afam",), "no") == "afam = no"
