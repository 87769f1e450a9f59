"""Identifier, leakage and role rules on real public tables (tests/data/real_tables/), each rule
shown firing on some tables and leaving others alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairengine.data import from_frame, list_datasets, load_dataset, read_table
from fairengine.data.identifiers import find_identifiers, identifier
from fairengine.data.leakage import MAX_ROWS, find_leaks
from fairengine.data.roles import OUTCOME_HINTS, SENSITIVE_HINTS, guess_roles, hint_rank

TABLES = Path(__file__).parent / "real_tables"


def table(name: str) -> pd.DataFrame:
    return read_table(TABLES / f"{name}.csv")


# -- identifiers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "target", "sensitive", "expected"),
    [
        ("participation", "lfp", "foreign", {"Unnamed: 0": True}),  # R's empty header, gaps
        ("mroz", "work", "city", {"Unnamed: 0": True}),
        ("wage1", "wage", "female", {"Unnamed: 0": True}),  # pandas index 0..525
        ("respiratory", "outcome", "sex", {"Unnamed: 0": True, "id": False}),  # panel person id
        ("treatment", "re78", "ethn", {"Unnamed: 0": True}),
        ("recid", "cens", "black", {}),  # no index column: nothing fires
    ],
)
def test_identifiers_of_real_tables_are_left_out_of_the_features_with_a_note(
    name: str, target: str, sensitive: str, expected: dict[str, bool]
) -> None:
    frame = table(name)
    found = {f.column: f.certain for f in find_identifiers(frame, frame.columns)}
    assert found == expected
    task = from_frame(frame, target=target, sensitive=sensitive)
    assert set(task.identifiers) == set(expected)
    assert not set(expected) & set(task.features)
    for column in expected:
        assert any(
            note.startswith(f"Column {column!r}") and "Left out" in note for note in task.notes
        )
    # every other column is still a feature (constant columns aside)
    others = set(frame.columns) - {target, sensitive} - set(expected)
    assert others == set(task.features)


def test_the_panel_id_is_a_warning_with_its_repetition_in_words() -> None:
    found = identifier(table("respiratory")["id"])
    assert found is not None and not found.certain
    assert "56 values over 444 rows" in found.reason
    assert "keep it if it is a real feature" in found.sentence()
    # the visit number and the centre repeat too, but are not named like identifiers
    assert identifier(table("respiratory")["visit"]) is None
    assert identifier(table("respiratory")["center"]) is None


def test_a_kept_identifier_is_a_feature_and_the_note_says_so() -> None:
    frame = table("respiratory")
    task = from_frame(frame, target="outcome", sensitive="sex", keep=("id",))
    assert "id" in task.features and task.identifiers == ("Unnamed: 0",)
    assert any("'id'" in note and "It is a feature, as chosen" in note for note in task.notes)


@pytest.mark.parametrize("info", list_datasets(), ids=lambda i: i.name)
def test_no_identifier_or_leak_fires_on_the_bundled_datasets(info) -> None:
    for target in info.target_options:
        task = load_dataset(info.name, target=target)
        assert task.identifiers == () and task.leaks == (), (target, task.notes)


@pytest.mark.parametrize(
    ("values", "name", "fires"),
    [
        (np.arange(1, 301), "X", True),  # R's name for an empty header read back
        (np.arange(1, 301) * 3, "X", False),  # a real variable called X: spread, not row numbers
        (np.arange(0, 600, 2), "rownames", True),
        (np.arange(1, 301), "...1", True),  # readr
        (np.arange(5, 305), "t", True),  # distinct, rising with the rows: row numbers
        (np.arange(300) * 1000 + 7, "amount", False),  # distinct but spread: a quantity
        (np.linspace(0, 1, 300), "score", False),  # distinct floats
        (np.arange(300) % 5, "code", False),  # named like an id but a category
        (np.arange(300) % 60, "hhid", None),  # a household id, 5 rows each: a warning
        (np.arange(300) // 2, "persnum", None),  # a person id, 2 rows each: a warning
        (np.arange(300) * 7 % 1000, "paid", False),  # ends like "id" but an amount
        (np.arange(300) % 40, "number_of_rooms", False),  # a count, not a number that names
        (np.arange(300) % 40, "num_employees", False),
        (np.arange(300) % 40, "case_no", None),
        (np.arange(300) % 40, "person number 2", None),
        ([f"c{i}" for i in range(300)], "anything", True),  # text unique per row
    ],
)
def test_identifier_rule_on_single_columns(values, name: str, fires: bool | None) -> None:
    """``fires``: True certain, None a warning (named like an id, repeated), False nothing."""
    found = identifier(pd.Series(values), name)
    if fires is None:
        assert found is not None and not found.certain, found
    else:
        assert (found is not None and found.certain) == fires, found


# -- leakage --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "target", "sensitive", "leaks"),
    [
        ("mroz", "work", "city", ("hoursw", "hearnw")),
        ("recid", "cens", "black", ("durat", "ldurat")),
        ("wage1", "wage", "female", ("lwage",)),  # regression: an exact function of the target
        ("treatment", "u74", "ethn", ("re75",)),  # the table's u74 is coded from re75
        ("participation", "lfp", "foreign", ()),
        ("respiratory", "outcome", "sex", ()),
        ("treatment", "re78", "ethn", ()),  # regression without a leak
        ("wage1", "female", "nonwhite", ()),
    ],
)
def test_leaks_of_real_tables_are_named_in_the_notes(name, target, sensitive, leaks) -> None:
    task = from_frame(table(name), target=target, sensitive=sensitive)
    assert task.leaks == leaks
    for column in leaks:
        assert any(f"Column {column!r} alone predicts the target" in n for n in task.notes)
    train, test = task.split(random_state=1)
    assert train.leaks == test.leaks == leaks  # kept by the split, for the result checks


def test_a_left_out_leak_is_no_longer_a_feature_nor_a_leak() -> None:
    task = from_frame(table("mroz"), target="work", sensitive="city", leave_out=("hoursw",))
    assert "hoursw" not in task.features and task.leaks == ("hearnw",)


def test_leak_detection_reads_a_bounded_sample_of_a_large_table() -> None:
    rng = np.random.default_rng(0)
    n = 3 * MAX_ROWS
    y = rng.integers(0, 2, n)
    frame = pd.DataFrame(
        {
            "copy": np.where(y == 1, "yes", "no"),
            "noise": rng.normal(size=n),
            "weak": y + rng.normal(0, 1.5, n),
        }
    )
    assert [
        leak.column for leak in find_leaks(frame, list(frame.columns), y, "classification")
    ] == ["copy"]
    # the sample is seeded: the same answer with the same numbers every time
    assert find_leaks(frame, ["copy"], y, "classification") == find_leaks(
        frame, ["copy"], y, "classification"
    )


# -- role guess -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "target", "sensitive"),
    [
        ("participation", "lfp", ("foreign",)),
        ("respiratory", "outcome", ("sex",)),
        ("wage1", "wage", ("nonwhite",)),
        ("treatment", None, ("ethn",)),  # four two-valued columns, none named like an outcome
        ("recid", None, ("black",)),
        ("mroz", None, ()),  # income and the wages are all named like outcomes; nothing protected
    ],
)
def test_role_guess_on_real_tables_is_right_or_asks(name, target, sensitive) -> None:
    frame = table(name)
    guess = guess_roles(frame)
    assert guess.target == target and guess.sensitive == sensitive, guess.sentence()
    identifiers = {f.column for f in find_identifiers(frame, frame.columns)}
    assert not identifiers & set(guess.target_candidates)
    for column in guess.target_candidates:
        assert hint_rank(column, SENSITIVE_HINTS) is None
    for column in guess.sensitive_candidates:
        assert hint_rank(column, OUTCOME_HINTS) is None
    if target is None:
        assert "Choose the target" in guess.sentence() and guess.target_candidates
    if not sensitive:
        assert "Choose the sensitive attribute" in guess.sentence()
    if guess.target is not None and guess.sensitive:
        from_frame(frame, target=guess.target, sensitive=list(guess.sensitive))  # a valid task


def test_asked_candidates_come_first_and_are_the_plausible_columns() -> None:
    guess = guess_roles(table("mroz"))
    assert guess.target_candidates[:3] == ("income", "wageh", "wagew")
    assert {"work", "city"} <= set(guess.target_candidates)
    assert guess.sensitive_candidates == ("work", "city")
    guess = guess_roles(table("recid"))
    assert "cens" in guess.target_candidates and "black" not in guess.target_candidates


def test_a_near_constant_two_valued_column_is_never_the_target() -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {"hschool": np.where(rng.random(600) < 0.984, 1, 0), "female": rng.integers(0, 2, 600)}
    )
    frame.loc[:9, "hschool"] = 0  # still under the 5 % a value of a target needs
    guess = guess_roles(frame)
    assert guess.target is None and "hschool" not in guess.target_candidates


@pytest.mark.parametrize(
    "name", ["afam", "black", "white", "nwhite", "nonwhite", "minority", "hispan", "hispanic",
             "female", "male", "ethn", "foreign", "Race", "gender"],
)  # fmt: skip
def test_indicator_style_protected_names_are_sensitive_candidates(name: str) -> None:
    frame = pd.DataFrame(
        {name: [0, 1] * 100, "deny": [0, 0, 1, 1] * 50, "x": np.arange(200.0) ** 2}
    )
    guess = guess_roles(frame)
    assert guess.sensitive == (name,) and guess.target == "deny"


@pytest.mark.parametrize("outcome", ["deny", "denied", "approve", "approved", "reject", "ui"])
def test_an_outcome_named_column_is_the_target_and_never_the_sensitive_attribute(outcome) -> None:
    frame = pd.DataFrame(
        {"black": [0, 1] * 100, outcome: [1, 1, 0, 0] * 50, "married": [0, 0, 0, 1] * 50}
    )
    guess = guess_roles(frame)
    assert guess.target == outcome and guess.sensitive == ("black",)
    assert outcome not in guess.sensitive_candidates
