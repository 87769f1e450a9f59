"""Exportable models returned by the methods (state as JSON + arrays, no pickle)."""

from fairengine.models.base import Model, model_types, register_model
from fairengine.models.linear import LinearClassifier, RandomizedClassifier

__all__ = ["LinearClassifier", "Model", "RandomizedClassifier", "model_types", "register_model"]
