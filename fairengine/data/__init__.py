"""Data layer: bundled datasets, reading and validating user tables, the Task, feature encoding.

``FeatureEncoder`` is imported on first use (it needs scikit-learn; a listing of the datasets
does not).
"""

from typing import Any

from fairengine.data.errors import DataError
from fairengine.data.io import read_table
from fairengine.data.registry import DatasetInfo, list_datasets, load_dataset
from fairengine.data.task import Task, from_frame

__all__ = [
    "DataError",
    "DatasetInfo",
    "FeatureEncoder",
    "Task",
    "from_frame",
    "list_datasets",
    "load_dataset",
    "read_table",
]


def __getattr__(name: str) -> Any:
    if name == "FeatureEncoder":
        from fairengine.data.encoding import FeatureEncoder

        return FeatureEncoder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
