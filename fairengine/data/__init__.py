"""Data layer: bundled datasets, reading and validating user tables, the Task, feature encoding."""

from typing import Any

from fairengine.data.errors import DataError
from fairengine.data.registry import DatasetInfo, list_datasets, load_dataset

#: Names imported from their module on first use: the Task and the readers need pandas, the
#: encoder scikit-learn; listing the bundled datasets needs neither.
_LAZY = {
    "FeatureEncoder": "fairengine.data.encoding",
    "read_table": "fairengine.data.io",
    "Task": "fairengine.data.task",
    "from_frame": "fairengine.data.task",
    "split_ids": "fairengine.data.split",
}

__all__ = [
    "DataError",
    "DatasetInfo",
    "FeatureEncoder",
    "Task",
    "from_frame",
    "list_datasets",
    "load_dataset",
    "read_table",
    "split_ids",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
