"""fairengine: explore fairness-accuracy trade-offs with five recent fair-ML algorithms.

The engine is pure Python (no Streamlit); the dashboard in ``dashboard/`` sits on top of it.
"""

from typing import Any

from fairengine.data import DataError, DatasetInfo, list_datasets, load_dataset

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
    if name in ("FeatureEncoder", "Task", "from_frame", "read_table"):  # lazy: see fairengine.data
        import fairengine.data

        return getattr(fairengine.data, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
