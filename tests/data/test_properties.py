"""Property test: from_frame returns a valid Task or raises DataError, never anything else."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairengine.data import DataError, Task, from_frame

_VALUES = {
    "int": st.integers(-5, 5),
    "float": st.floats(allow_nan=True, allow_infinity=True, width=32),
    "small_str": st.sampled_from(["a", "b", "c", " a", ""]),
    "bool": st.booleans(),
    "none_or_str": st.one_of(st.none(), st.sampled_from(["x", "y"])),
}


@st.composite
def frames_and_roles(draw: st.DrawFn) -> tuple[pd.DataFrame, dict]:
    n_rows = draw(st.integers(0, 60))
    n_cols = draw(st.integers(1, 5))
    names = draw(
        st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"]), min_size=n_cols, max_size=n_cols)
    )
    columns = {}
    for i in range(len(names)):
        kind = draw(st.sampled_from(sorted(_VALUES)))
        values = draw(st.lists(_VALUES[kind], min_size=n_rows, max_size=n_rows))
        columns[i] = values
    df = pd.DataFrame(columns)
    df.columns = names  # may contain duplicates on purpose
    pool = [*names, "zz"]
    roles = {
        "target": draw(st.sampled_from(pool)),
        "sensitive": draw(st.lists(st.sampled_from(pool), min_size=0, max_size=2)),
        "features": draw(st.one_of(st.none(), st.lists(st.sampled_from(pool), max_size=3))),
        "kind": draw(st.sampled_from([None, "classification", "regression"])),
        "drop_missing": draw(st.booleans()),
        "merge_small_groups": draw(st.booleans()),
        "min_group_size": draw(st.sampled_from([None, 1, 2])),
    }
    return df, roles


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames_and_roles())
def test_from_frame_valid_task_or_data_error(case: tuple[pd.DataFrame, dict]) -> None:
    df, roles = case
    try:
        task = from_frame(df, **roles)
    except DataError as exc:
        assert str(exc)
        return
    assert isinstance(task, Task)
    assert task.kind in ("classification", "regression")
    assert len(task.frame) > 0
    assert task.n_groups >= 2
    y = task.y
    assert len(y) == len(task.frame)
    if task.kind == "classification":
        assert set(np.unique(y)) <= {0, 1}
        assert len(np.unique(y)) == 2
    else:
        assert np.isfinite(y).all()
    assert task.groups.min() >= 0
    assert task.groups.max() < task.n_groups
    assert task.target not in task.features
    assert len(task.fingerprint) == 64
