"""Seed 000: balanced filtering via non-disclosive proxies (Deng, Diana, Kearns, Roth).

Public API (DESIGN contract): :func:`conditional_distribution_matrix`,
:func:`sampling_probabilities`, :func:`disclosivity`, :func:`imbalance`, :class:`BalancedFilter`;
plus :func:`hull_distance`, :func:`beta_min`, :func:`filter_rows`, the exportable
:class:`ProxyFilter` and :func:`tradeoff_curves`. Importing registers the method
``balanced_filtering``. The cached trade-off sweep over seeds is
:func:`fairengine.sweeps.balanced_filtering.tradeoff_points` (above the methods).
"""

from fairengine.methods.balanced_filtering.definitions import (
    base_rates,
    beta_min,
    conditional_distribution_matrix,
    disclosivity,
    hull_distance,
    hull_projection,
    imbalance,
    uniform_target,
)
from fairengine.methods.balanced_filtering.estimator import BalancedFilter
from fairengine.methods.balanced_filtering.knobs import FLOOR_SETTING, PAPER_SETTING
from fairengine.methods.balanced_filtering.method import (
    ALPHA_GRID,
    BALANCED_FILTERING,
    ETA_GRID,
    run_filter,
)
from fairengine.methods.balanced_filtering.model import ProxyFilter
from fairengine.methods.balanced_filtering.sampling import (
    acceptance_rate_of,
    filter_rows,
    filter_stream,
    filtered_distribution,
    sampling_probabilities,
)

__all__ = [
    "ALPHA_GRID",
    "BALANCED_FILTERING",
    "ETA_GRID",
    "FLOOR_SETTING",
    "PAPER_SETTING",
    "BalancedFilter",
    "ProxyFilter",
    "acceptance_rate_of",
    "base_rates",
    "beta_min",
    "conditional_distribution_matrix",
    "disclosivity",
    "filter_rows",
    "filter_stream",
    "filtered_distribution",
    "hull_distance",
    "hull_projection",
    "imbalance",
    "run_filter",
    "sampling_probabilities",
    "uniform_target",
]

from fairengine.methods.balanced_filtering.frontier import (  # noqa: E402
    CURVES,
    curve_grid,
    tradeoff_curves,
)

__all__ += ["CURVES", "curve_grid", "tradeoff_curves"]
