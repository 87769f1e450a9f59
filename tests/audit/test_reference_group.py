"""An audit, a comparison and a saved comparison against a reference group the user picks and a
four-fifths threshold τ: the same numbers as the metrics computed with that reference."""

from __future__ import annotations

import numpy as np
import pytest

from fairengine import metrics
from fairengine.audit import audit
from fairengine.audit.comparison import (
    build_comparison,
    load_comparison,
    save_comparison,
    with_disparities,
)
from fairengine.audit.core import positional, referenced
from fairengine.data import load_dataset
from fairengine.data.task import from_frame


@pytest.fixture(scope="module")
def scored():
    """german_credit with groups sex × age group (four) and an outside model's scores."""
    base = load_dataset("german_credit")
    task = from_frame(base.frame, target="credit", sensitive=["sex", "age_group"],
                      positive_label="good")  # fmt: skip
    scores = np.clip(0.4 * task.y + 0.6 * np.random.default_rng(1).random(len(task.y)), 0, 1)
    return task, scores, audit(task, scores=scores, name="model")


@pytest.mark.parametrize("reference", ["female & 25+", "male & <25"])
def test_an_audit_against_a_chosen_group_is_the_metric_with_that_reference(scored, reference):
    task, scores, result = scored
    train, test = positional(task).split()
    again = referenced(result, None, None, train)  # the largest: what the audit stored
    for split in ("train", "test"):
        for name, value in result.metrics[split].items():
            assert again.metrics[split][name] == pytest.approx(value, abs=1e-12, nan_ok=True)
    chosen = referenced(result, reference, 0.9, train)
    code = list(task.group_names).index(reference)
    for split, part in (("train", train), ("test", test)):
        pred = (scores[part.frame.index] >= 0.5).astype(float)
        for rate in metrics.GROUP_RATES:
            want = metrics.METRICS[f"{rate}_ratio"](part.y, pred, part.groups, reference=code)
            got = chosen.metrics[split][f"{rate}_ratio"]
            assert got == pytest.approx(want, abs=1e-12, nan_ok=True), (split, rate)
    table = chosen.groups
    assert (table.loc[reference, [f"{r}_ratio" for r in ("fpr", "ppv")]] == 1.0).all()
    ratio = table["fpr_ratio"].drop(index="overall")
    folded = np.minimum(ratio, 1 / ratio)
    assert list(table["fpr_pass"].drop(index="overall")) == list(folded >= 0.9)
    nobody = referenced(result, "nobody", 0.9, train)  # no unseen test row in it: no ratios
    assert not any(k.endswith("_ratio") for k in nobody.metrics["test"])


def test_the_comparison_file_keeps_the_reference_and_a_saved_one_can_take_another(
    scored, tmp_path
) -> None:
    task, _, result = scored
    built = build_comparison(task, audits=[result], pins=["model"], reference="male & <25",
                             tau=0.9)  # fmt: skip
    path = save_comparison(built, tmp_path / "c.json")
    loaded = load_comparison(path)
    assert (loaded.reference, loaded.tau) == ("male & <25", 0.9)
    rows = {r["group"]: r for r in loaded.pins[0]["groups"]}
    assert rows["male & <25"]["tpr_ratio"] == 1.0
    other = with_disparities(loaded, "female & 25+", 0.8)
    direct = build_comparison(task, audits=[result], pins=["model"], reference="female & 25+")
    assert other.pins[0]["groups"] == direct.pins[0]["groups"]
    assert other.outside[0]["metrics"]["test"] == pytest.approx(
        direct.outside[0]["metrics"]["test"], nan_ok=True
    )
    assert (other.reference, other.tau) == ("female & 25+", 0.8)
