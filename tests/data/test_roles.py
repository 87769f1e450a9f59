"""The first guess of a new table's roles (fairengine.data.roles)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairengine.data import from_frame
from fairengine.data.roles import SENSITIVE_HINTS, guess_roles, hint_rank, name_parts
from tests.upload_tables import arrests_like


def test_arrests_like_table_guesses_the_outcome_and_colour_and_builds_a_task() -> None:
    frame = arrests_like()
    guess = guess_roles(frame)
    assert guess.target == "released" and guess.sensitive == ("colour",)
    assert guess.sentence() == (
        "Guessed the target 'released' (two values, named like an outcome) and the sensitive "
        "attribute 'colour' (named like a protected attribute; also 'sex', 'citizen'). Change "
        "them below."
    )
    task = from_frame(frame, target=guess.target, sensitive=list(guess.sensitive))
    assert task.kind == "classification" and task.n_groups == 2


def test_a_count_column_with_many_values_is_never_the_target() -> None:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "sex": rng.choice(["f", "m"], 500),
            "x": rng.normal(size=500),
            "outcome_count": rng.integers(0, 7, 500),  # named like an outcome, 7 values
        }
    )
    guess = guess_roles(frame)
    assert guess.target is None and guess.sensitive == ("sex",)
    assert "Choose the target: no column has two values" in guess.sentence()


def test_without_an_outcome_name_two_two_valued_columns_make_it_ask() -> None:
    frame = pd.DataFrame(
        {"flag": [0, 1] * 50, "race": ["a", "b", "c", "d"] * 25, "z": [1, 2] * 50, "n": range(100)}
    )
    guess = guess_roles(frame)
    assert guess.target is None and set(guess.target_candidates) == {"flag", "z"}
    assert "n" not in guess.target_candidates  # row numbers are never a candidate
    assert guess.sensitive == ("race",)
    assert "Choose the target: several columns have two values" in guess.sentence()


def test_a_single_two_valued_column_is_the_target_and_the_reason_says_so() -> None:
    frame = pd.DataFrame({"flag": [0, 1] * 50, "female": [0, 0, 1, 1] * 25, "v": range(100, 0, -1)})
    guess = guess_roles(frame)
    assert guess.target == "flag" and "the only column with two values" in guess.target_reason
    assert "'female' named like one" in guess.target_reason and guess.sensitive == ("female",)


def test_a_two_valued_protected_column_is_not_guessed_as_the_target() -> None:
    frame = pd.DataFrame({"gender": ["f", "m"] * 50, "score": np.arange(100.0)})
    guess = guess_roles(frame)
    assert guess.target is None and guess.sensitive == ("gender",)


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("Skin_Colour", "colour"),
        ("skin_tone", "skin"),
        ("skinColor", "color"),
        ("ETHNICITY", "ethnic"),
        ("national origin", "national"),
        ("citizenship", "citizen"),
        ("age_group", "age"),
        ("disabled", "disab"),
        ("marital-status", "marital"),
        ("Religion", "religion"),
    ],
)
def test_sensitive_hints_match_name_parts_case_insensitively(name: str, hint: str) -> None:
    assert hint_rank(name, SENSITIVE_HINTS) == SENSITIVE_HINTS.index(hint)


@pytest.mark.parametrize("name", ["agent", "page", "usage", "message", "sextant_id", "storage"])
def test_short_hints_match_whole_parts_only(name: str) -> None:
    assert hint_rank(name, SENSITIVE_HINTS) is None, name_parts(name)


def test_hinted_column_with_too_many_values_or_tiny_groups_is_passed_over() -> None:
    rng = np.random.default_rng(2)
    rows = 400
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, rows),  # named, but far too many values to be groups
            "race": ["rare"] * 3 + ["common"] * (rows - 3),  # a group too small to split
            "sex": rng.choice(["f", "m"], rows),
            "label": rng.choice(["yes", "no"], rows),
        }
    )
    guess = guess_roles(frame)
    assert guess.target == "label"
    assert guess.sensitive == ("sex",)  # race ranks first but cannot be split; sex can


def test_without_a_hint_the_sensitive_attribute_is_asked_with_few_valued_columns_first() -> None:
    frame = pd.DataFrame({"v": np.arange(120.0), "region": ["n", "s", "e"] * 40, "y": [0, 1] * 60})
    guess = guess_roles(frame)
    assert guess.target == "y" and guess.sensitive == ()
    assert guess.sensitive_candidates == ("region",)
    assert "no column is named like a protected attribute" in guess.sentence()


def test_nothing_fits_gives_no_guess_and_a_sentence_asking_to_choose() -> None:
    frame = pd.DataFrame({"a": np.arange(50.0), "b": np.arange(50.0) ** 2})
    guess = guess_roles(frame)
    assert guess.target is None and guess.sensitive == ()
    assert guess.sentence().count("Choose the") == 2


def test_sentence_quotes_names_with_the_given_function() -> None:
    guess = guess_roles(arrests_like(rows=300))
    assert "<released>" in guess.sentence(lambda name: f"<{name}>")
