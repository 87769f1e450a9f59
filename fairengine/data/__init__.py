"""Data layer: bundled datasets, reading and validating user tables, the Task, feature encoding."""

from fairengine.data.encoding import FeatureEncoder
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
