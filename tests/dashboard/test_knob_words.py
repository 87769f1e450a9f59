"""Choice knobs and Theorem 1's bound in words."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard.components.noisy_groups_charts import VACUOUS, bound_table
from fairengine.methods import get_method
from fairengine.methods.base import Knob, with_choice_labels


def test_every_noisy_groups_choice_has_words_and_keeps_its_value() -> None:
    method = get_method("noisy_groups")
    choice_knobs = [k for k in method.knobs if k.choices]
    assert choice_knobs
    for knob in choice_knobs:
        words = [knob.choice_label(c) for c in knob.choices]
        assert len(set(words)) == len(words), knob.name  # no two options read the same
        assert all("_" not in w for w in words), knob.name
        assert dict(knob.choice_labels).keys() == set(knob.choices), knob.name
        assert knob.validate(knob.choices[-1]) == knob.choices[-1]  # the API's values stay
    knob = method.knob("robust_eval")
    assert knob.choice_label("margin") == "held-out margin check"
    assert method.knob("gamma_rule").choice_label("paper") == "paper's rule"
    assert method.knob("constraint").choice_label("tpr").startswith("true-positive rate")


def test_words_for_a_value_that_is_not_a_choice_are_refused() -> None:
    knobs = (Knob("mode", "a", choices=("a", "b")),)
    assert with_choice_labels(knobs, {"mode": {"a": "first"}})[0].choice_label("b") == "b"
    with pytest.raises(ValueError, match="unknown choices"):
        with_choice_labels(knobs, {"mode": {"c": "third"}})


def test_a_bound_of_one_or_more_on_a_rate_is_called_vacuous() -> None:
    bound = pd.DataFrame(
        {
            "rate": ["tpr", "tpr", "ppr"],
            "group": ["a", "b", "a"],
            "true_violation": [0.01, 0.02, 0.0],
            "noisy_violation": [0.0, 0.01, 0.0],
            "tv": [0.1, 0.4, 0.2],
            "bound": [0.31234, 3.26, 1.0],
        }
    )
    table = bound_table(bound)
    assert list(table["Theorem 1 bound"]) == ["0.3123", VACUOUS, VACUOUS]
    assert VACUOUS == "vacuous (≥ 1): says nothing for this data"
    assert list(table["rate"]) == ["true-positive rate", "true-positive rate", "selection rate"]
    assert np.allclose(table["TV(p_j, p̂_j)"], [0.1, 0.4, 0.2])
