"""fairengine: explore fairness-accuracy trade-offs with five recent fair-ML algorithms.

The engine is pure Python (no Streamlit); the dashboard in ``dashboard/`` sits on top of it.
"""

from typing import Any

from fairengine.data import (
    DataError,
    DatasetInfo,
    Task,
    from_frame,
    list_datasets,
    load_dataset,
    read_table,
)

__version__ = "0.1.0"

__all__ = [
    "DataError",
    "DatasetInfo",
    "FeatureEncoder",
    "Task",
    "__version__",
    "from_frame",
    "list_datasets",
    "load_dataset",
    "read_table",
]


def __getattr__(name: str) -> Any:
    if name == "FeatureEncoder":  # lazy: scikit-learn loads on first use, not for a listing
        from fairengine.data.encoding import FeatureEncoder

        return FeatureEncoder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
