"""Cached engine calls of the max-entropy debiasing page (the page itself computes nothing)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.components.cached import model_file  # noqa: F401  (one definition)
from fairengine.data import Task
from fairengine.frontier import sweep
from fairengine.methods.base import RunResult

#: C values of the page's frontier sweep.
C_GRID = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)


@st.cache_data(show_spinner=False, max_entries=16)
def samples_csv(_result: RunResult, key: str) -> bytes:
    """The generated samples as CSV bytes."""
    del key
    return _result.artifacts["samples"].to_csv(index=False).encode()


def rate_warnings(result: RunResult) -> list:
    """The run's warnings on the generated data's rates (its ``data_rates_vs_tau`` check: one
    rule, in :mod:`fairengine.methods.maxent.checks`)."""
    return [c for c in result.checks if c.name == "data_rates_vs_tau" and c.level != "ok"]


def frontier_over_c(train: Task, test: Task, knobs: dict, store, progress=None) -> pd.DataFrame:
    """Test-split points of a sweep over C with the other knobs fixed (cached in ``store``)."""
    grid = {**{k: [v] for k, v in knobs.items() if k != "C"}, "C": list(C_GRID)}
    frontier = sweep("maxent", train, test, grid, store=store, progress=progress)
    points = frontier.points
    return points[points["split"] == "test"].reset_index(drop=True)
