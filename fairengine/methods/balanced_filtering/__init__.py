"""Balanced filtering via non-disclosive proxies (Deng, Diana, Kearns, Roth).

Public API (DESIGN contract): :func:`conditional_distribution_matrix`,
:func:`sampling_probabilities`, :func:`disclosivity`, :func:`imbalance`, :class:`BalancedFilter`;
plus :func:`hull_distance`, :func:`beta_min`, :func:`filter_rows`, the exportable
:class:`ProxyFilter` and :func:`tradeoff_curves`. Importing registers the method
``balanced_filtering``. The cached trade-off sweep over seeds is
:func:`fairengine.sweeps.balanced_filtering.tradeoff_points` (above the methods).
"""

from fairengine.methods.balanced_filtering.knobs import FLOOR_SETTING, PAPER_SETTING
from fairengine.methods.balanced_filtering.method import (
    ALPHA_GRID,
    BALANCED_FILTERING,
    ETA_GRID,
    run_filter,
)
from fairengine.methods.registry import lazy_attributes

#: Names imported from their submodule on first use, so that registering the method (a listing, a
#: cached sweep) does not load the algorithm and its libraries.
_LAZY = {
    "base_rates": "definitions",
    "beta_min": "definitions",
    "conditional_distribution_matrix": "definitions",
    "disclosivity": "definitions",
    "hull_distance": "definitions",
    "hull_projection": "definitions",
    "imbalance": "definitions",
    "uniform_target": "definitions",
    "BalancedFilter": "estimator",
    "ProxyFilter": "model",
    "acceptance_rate_of": "sampling",
    "filter_rows": "sampling",
    "filter_stream": "sampling",
    "filtered_distribution": "sampling",
    "sampling_probabilities": "sampling",
    "CURVES": "curves",
    "curve_grid": "curves",
    "tradeoff_curves": "curves",
}


__all__ = [
    "ALPHA_GRID",
    "BALANCED_FILTERING",
    "ETA_GRID",
    "FLOOR_SETTING",
    "PAPER_SETTING",
    "run_filter",
    *_LAZY,
]
__getattr__ = lazy_attributes(__name__, _LAZY)
