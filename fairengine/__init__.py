"""fairengine: explore fairness-accuracy trade-offs with five recent fair-ML algorithms.

The engine is pure Python (no Streamlit); the dashboard in ``dashboard/`` sits on top of it.
"""

from fairengine.data import (
    DataError,
    DatasetInfo,
    FeatureEncoder,
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
