"""The columns a model read from a file takes: its :class:`InputSchema` and the one rule for a
table's columns (:func:`check_columns`), applied by a loaded model's ``predict``
(:meth:`fairengine.models.base.Model.check_input`) and by ``fairengine predict``
(:mod:`fairengine.export.client`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fairengine.models.base import Model


class SchemaError(ValueError):
    """Input columns that do not match the model's schema (names every offending column)."""


#: How to proceed with unknown columns, by caller: the command line, or Python.
CLI_HINT = "pass them through with --id-columns, or ignore them with --allow-extra"
API_HINT = "select the model's columns first, e.g. model.predict(frame[model.features])"
#: Why a column the model does not read is known, in the note that says it was ignored.
_IGNORED = (
    (("target", "sensitive"), "column(s) the model was trained with as target/sensitive"),
    (("unused",), "training column(s) this model does not read"),
    (("dropped",), "identifier-like column(s) dropped in training"),
)


class IgnoredColumnsWarning(UserWarning):
    """A loaded model ignored columns it was trained with but does not read (target, sensitive
    attribute(s), ...); the message names them."""


@dataclass(frozen=True)
class InputSchema:
    """The columns a model file reads: numeric and text features, and the columns the model
    knows but does not need, each with its role (``roles``): the training data's ``target`` and
    ``sensitive`` column(s), ``unused`` training features and ``dropped`` identifier-like
    columns. ``recorded`` is False for a file that does not record its training columns (the
    target and sensitive names are then unknown)."""

    numeric: list[str]
    text: list[str]
    known: list[str] = field(default_factory=list)
    dtypes: dict[str, str] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    recorded: bool = True

    @property
    def features(self) -> list[str]:
        return [*self.numeric, *self.text]


def input_schema(model: Model, manifest: dict[str, Any] | None = None) -> InputSchema:
    """The columns ``model`` reads, with the training schema from its manifest if given."""
    encoder = model.encoder
    features = list(model.features)
    numeric = [c for c in features if c in set(encoder.numeric_)]
    train = ((manifest or {}).get("metadata") or {}).get("train") or {}
    dtypes = {str(k): str(v) for k, v in (train.get("dtypes") or {}).items()}
    if not encoder.numeric_ and not encoder.categorical_ and dtypes:  # pass-through encoders
        numeric = [c for c in features if dtypes.get(c, "").startswith(("int", "float", "uint"))]
    text = [c for c in features if c not in numeric]
    roles: dict[str, str] = {}
    for role, names in (
        ("dropped", getattr(encoder, "dropped_", [])),
        ("unused", train.get("features") or []),
        ("sensitive", train.get("sensitive") or []),
        ("target", [train.get("target")]),
    ):  # later roles win: a column is named by its most telling role
        roles.update({str(c): role for c in names if c is not None and str(c) not in features})
    known = list(roles)
    recorded = "target" in train and "sensitive" in train
    return InputSchema(numeric, text, known, dtypes, roles, recorded)


def check_columns(
    schema: InputSchema,
    columns: Sequence[str],
    *,
    id_columns: Sequence[str] = (),
    allow_extra: bool = False,
    hint: str = CLI_HINT,
) -> list[str]:
    """The columns of ``columns`` the model knows but does not read (to ignore, see
    :func:`ignored_note`); raises :class:`SchemaError` naming missing columns, unknown extra
    columns (``hint`` says what to do) and id columns that are not in the input.

    This is the one rule for input columns: ``fairengine predict`` and a loaded model's
    ``predict`` (:meth:`fairengine.models.base.Model.check_input`) both apply it."""
    columns = [str(c) for c in columns]
    problems = []
    missing = [c for c in schema.features if c not in columns]
    if missing:
        problems.append(f"missing column(s) the model needs: {', '.join(missing)}")
    absent_ids = [c for c in id_columns if c not in columns]
    if absent_ids:
        problems.append(f"--id-columns not in the input: {', '.join(absent_ids)}")
    allowed = {*schema.features, *schema.roles, *id_columns}
    extra = [c for c in columns if c not in allowed]
    if extra and not allow_extra:
        unrecorded = (
            ""
            if schema.recorded
            else "; this model file does not record which columns were its target and sensitive "
            "attribute(s), so they count as unknown too"
        )
        problems.append(
            f"extra column(s) the model does not know: {', '.join(extra)} ({hint}{unrecorded})"
        )
    if problems:
        raise SchemaError("The input does not match the model's schema: " + "; ".join(problems))
    ignored = set(id_columns)
    return [c for c in columns if c in schema.roles and c not in ignored]


def ignored_note(schema: InputSchema, ignored: Sequence[str]) -> str:
    """One sentence naming the ignored columns by role ("" for none)."""
    parts = []
    for roles, words in _IGNORED:
        names = [c for c in ignored if schema.roles.get(c) in roles]
        if len(roles) > 1:  # several roles: each column says its own
            names = [f"{c} ({schema.roles[c]})" for c in names]
        if names:
            parts.append(f"ignored {words}: {', '.join(names)}")
    return ("Note: " + "; ".join(parts) + ".") if parts else ""
