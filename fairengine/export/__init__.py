"""Model export: ``save_model``, ``load_model``, ``model_card`` (no pickle anywhere).

Model classes are resolved lazily by type name
(:func:`fairengine.methods.registry.resolve_model_type`, imported when a file is read or
written): importing this package imports no method module, nor fairlearn.
"""

from fairengine.export.cards import model_card, result_metadata, task_schema
from fairengine.export.files import (
    SUFFIX,
    ModelFileError,
    load_model,
    model_bytes,
    read_card,
    read_manifest,
    save_model,
    verify_model,
)

__all__ = [
    "SUFFIX",
    "ModelFileError",
    "load_model",
    "model_bytes",
    "model_card",
    "read_card",
    "read_manifest",
    "result_metadata",
    "save_model",
    "task_schema",
    "verify_model",
]
