"""The bundled dataset registry and the vendored Parquet files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fairengine.data import DataError, list_datasets, load_dataset
from fairengine.data.registry import DATASETS, assets_dir, load_frame

NAMES = list(DATASETS)
#: Shapes of the vendored files (rows from shared/datasets/README.md after the documented drops).
SHAPES = {
    "adult": (48_842, 15),
    "compas": (6_172, 16),
    "bank_marketing": (45_203, 17),
    "german_credit": (1_000, 23),
    "default_credit": (30_000, 24),
    "law_school": (21_789, 6),
    "communities_crime": (1_993, 102),
}


def test_registry_names_match_the_public_contract() -> None:
    assert [info.name for info in list_datasets()] == list(SHAPES) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_file_shape_and_registry_rows(name: str) -> None:
    info = DATASETS[name]
    frame = load_frame(name)
    assert frame.shape == SHAPES[name]
    assert info.rows == len(frame)
    assert (assets_dir() / "datasets" / info.filename).stat().st_size < 2_000_000


@pytest.mark.parametrize("name", NAMES)
def test_roles_exist_and_are_complete(name: str) -> None:
    info = DATASETS[name]
    frame = load_frame(name)
    assert info.target == info.target_options[0]
    assert info.sensitive[0] == info.sensitive_options[0]
    for col in (*info.target_options, *info.sensitive_options):
        assert col in frame.columns, col
        assert not frame[col].isna().any(), f"missing values in {name}.{col}"
    for col in info.sensitive_options:
        assert 2 <= frame[col].nunique() <= 30, col
        assert not pd.api.types.is_numeric_dtype(frame[col]), col
    for role, leaked in info.leaks.items():
        assert role in frame.columns and set(leaked) <= set(frame.columns)


@pytest.mark.parametrize("name", NAMES)
def test_kind_and_positive_labels(name: str) -> None:
    info = DATASETS[name]
    frame = load_frame(name)
    assert info.kind_of(info.target) == info.kind
    if info.kind == "classification":
        assert info.positive_label == info.positive_labels[info.target]
    else:
        assert info.positive_label is None
        assert pd.api.types.is_float_dtype(frame[info.target])
    for target, positive in info.positive_labels.items():
        values = set(frame[target].unique())
        assert len(values) == 2 and positive in values, (target, values)


def test_expected_values() -> None:
    adult = load_frame("adult")
    assert set(adult["income"]) == {"<=50K", ">50K"}
    assert adult["race"].nunique() == 5
    assert not adult.map(lambda v: isinstance(v, str) and (v != v.strip() or v == "?")).any().any()
    credit = load_frame("default_credit")
    assert (credit["sex"] == "female").sum() == 18_112
    assert credit["education"].value_counts().to_dict() == {
        "university": 14_030,
        "graduate school": 10_585,
        "high school/other": 5_385,
    }
    german = load_frame("german_credit")
    assert (german["sex"] == "female").sum() == 310
    assert not german.astype(str).apply(lambda c: c.str.fullmatch(r"A\d+")).any().any()
    law = load_frame("law_school")
    assert law["ugpa_scaled"].between(0.0, 1.0).all()
    assert {"ugpa", "UGPA"}.isdisjoint(law.columns), "raw GPA would leak the target"
    crime = load_frame("communities_crime")
    numeric = crime.select_dtypes("number")
    assert numeric.shape[1] == 100 and numeric.min().min() >= 0 and numeric.max().max() <= 1
    assert (crime["majority_white"] == "yes").sum() == 1_571
    assert all(c == c.lower() and " " not in c for c in crime.columns)


def test_compas_has_no_personal_identifiers() -> None:
    frame = load_frame("compas")
    forbidden = {"id", "name", "first", "last", "dob", "c_jail_in", "c_jail_out"}
    assert forbidden.isdisjoint(frame.columns)
    assert not [c for c in frame.columns if c.endswith(("_id", "_date", "case_number", "_desc"))]
    assert set(frame["c_charge_degree"]) == {"felony", "misdemeanor"}
    assert frame["length_of_stay"].min() >= 0


def test_provenance_mentions_every_dataset() -> None:
    text = (assets_dir() / "datasets" / "PROVENANCE.md").read_text(encoding="utf-8")
    for name in NAMES:
        assert f"## {name}" in text, name


def test_load_frame_returns_a_copy() -> None:
    first = load_frame("german_credit")
    first.loc[:, "age"] = -1
    assert (load_frame("german_credit")["age"] > 0).all()


def test_unknown_dataset_lists_valid_names() -> None:
    with pytest.raises(DataError, match="adult.*communities_crime"):
        load_frame("mnist")
    with pytest.raises(DataError, match="Unknown dataset"):
        load_dataset("mnist")


def test_assets_dir_env_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FAIRENGINE_ASSETS", str(tmp_path))
    assert assets_dir() == tmp_path
    with pytest.raises(DataError, match="not found"):
        load_frame("adult")


@pytest.mark.parametrize("name", NAMES)
def test_load_dataset_defaults(name: str) -> None:
    info = DATASETS[name]
    task = load_dataset(name)
    assert task.name == name
    assert task.kind == info.kind
    assert task.target == info.target
    assert task.sensitive == info.sensitive
    assert task.n_groups >= 2
    assert len(task.frame) == info.rows
    if info.kind == "classification":
        assert task.positive_label == info.positive_label
        assert 0 < task.y.mean() < 1
    for role in (info.target, *info.sensitive):
        assert set(info.leaks.get(role, ())).isdisjoint(task.features)


def test_load_dataset_non_default_target_uses_its_positive_label() -> None:
    task = load_dataset("law_school", target="bar_pass", sensitive=["race", "sex"])
    assert task.kind == "classification"
    assert task.positive_label == "pass"
    assert task.n_groups == 4
    compas = load_dataset("compas", target="is_recid", sensitive="sex")
    assert compas.positive_label == 1
    assert {"two_year_recid", "is_violent_recid"}.isdisjoint(compas.features)


def test_load_dataset_explicit_features_are_kept() -> None:
    task = load_dataset("german_credit", features=["age", "personal_status"])
    assert task.features == ("age", "personal_status")
