"""The state schema of every model type, checked before a model is built from a file.

A model file's ``state.json`` and arrays are validated here against the schema of the type the
manifest names (:data:`SCHEMAS`): every key with its JSON type, every array with its dtype kind and
number of dimensions, nothing missing and nothing extra. Only then does ``from_state`` run; the
model it builds is then asked for one prediction on a synthetic row, so state whose shapes do not
fit together is refused too. Each check raises :class:`ModelFileError` naming the bad field.

The schemas live here, beside the loader, and not in the method packages: a test checks that real
files of every registered type pass, so a method that changes its state must update its schema.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairengine.export.safe import ModelFileError

Check = Callable[[Any, str], None]


def _fail(path: str, expected: str, value: Any) -> None:
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise ModelFileError(f"{_what(path)}: {path} should be {expected}, got {shown}.")


def _what(path: str) -> str:
    """ "The model file's state is invalid" for a path under ``state`` (or ``manifest``)."""
    root = _ROOT.split(path)[0]
    return f"The model file's {root} is invalid"


_ROOT = re.compile(r"[.\[]")


def NUM(value: Any, path: str) -> None:  # noqa: N802
    """A finite int or float (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
        _fail(path, "a finite number", value)


def INT(value: Any, path: str) -> None:  # noqa: N802
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= 2**63:
        _fail(path, "an integer", value)


def STR(value: Any, path: str) -> None:  # noqa: N802
    if not isinstance(value, str):
        _fail(path, "a string", value)


def BOOL(value: Any, path: str) -> None:  # noqa: N802
    if not isinstance(value, bool):
        _fail(path, "true or false", value)


def SCALAR(value: Any, path: str) -> None:  # noqa: N802
    """Any JSON scalar (null, bool, number, string)."""
    if value is not None and not isinstance(value, bool | int | float | str):
        _fail(path, "a JSON scalar", value)


def optional(check: Check) -> Check:
    def run(value: Any, path: str) -> None:
        if value is not None:
            check(value, path)

    return run


def one_of(*choices: str) -> Check:
    def run(value: Any, path: str) -> None:
        if value not in choices:
            _fail(path, "one of " + ", ".join(map(repr, choices)), value)

    return run


def either(*checks: Check) -> Check:
    def run(value: Any, path: str) -> None:
        for check in checks[:-1]:
            try:
                check(value, path)
                return
            except ModelFileError:
                continue
        checks[-1](value, path)

    return run


def list_of(item: Check, *, length: int | None = None) -> Check:
    def run(value: Any, path: str) -> None:
        if not isinstance(value, list):
            _fail(path, "a list", value)
        if length is not None and len(value) != length:
            _fail(path, f"a list of {length} items", value)
        for i, v in enumerate(value):
            item(v, f"{path}[{i}]")

    return run


def pair(first: Check, second: Check) -> Check:
    def run(value: Any, path: str) -> None:
        list_of(_any, length=2)(value, path)
        first(value[0], f"{path}[0]")
        second(value[1], f"{path}[1]")

    return run


def _any(value: Any, path: str) -> None:
    """Any JSON value (its size and depth are already limited by the reader)."""


def obj(required: Mapping[str, Check], optional_keys: Mapping[str, Check] | None = None,
        extra: Check | None = None) -> Check:  # fmt: skip
    """An object with exactly ``required`` keys, maybe ``optional_keys``, and (if ``extra`` is
    given) any other key whose value passes ``extra``."""
    optional_keys = optional_keys or {}

    def run(value: Any, path: str) -> None:
        if not isinstance(value, dict):
            _fail(path, "an object", value)
        missing = [k for k in required if k not in value]
        if missing:
            raise ModelFileError(f"{_what(path)}: {path} lacks {', '.join(missing)}.")
        for key, v in value.items():
            check = required.get(key) or optional_keys.get(key) or extra
            if check is None:
                raise ModelFileError(f"{_what(path)}: {path} has an unexpected key {key!r:.40}.")
            check(v, f"{path}.{key}")

    return run


# ----------------------------------------------------------------------------- arrays


@dataclass(frozen=True)
class ArraySpec:
    """An array a model type stores: dtype kinds (``"f"`` float, ``"i"`` / ``"u"`` integers,
    ``"b"`` bool) and the allowed numbers of dimensions."""

    kinds: str = "f"
    ndim: tuple[int, ...] = (1,)


FLOAT1 = ArraySpec("fiu", (1,))
FLOAT2 = ArraySpec("fiu", (2,))
INT1 = ArraySpec("iu", (1,))
NUMERIC = ArraySpec("fiub", (0, 1, 2, 3, 4))
BYTES = ArraySpec("u", (1,))


@dataclass(frozen=True)
class Schema:
    """A model type's state: the ``state.json`` check and its arrays (fixed names, and name
    patterns for families such as one array per component)."""

    state: Check
    arrays: Mapping[str, ArraySpec] = field(default_factory=dict)
    optional_arrays: Mapping[str, ArraySpec] = field(default_factory=dict)
    patterns: Mapping[str, ArraySpec] = field(default_factory=dict)

    def check(self, state: Any, arrays: Mapping[str, np.ndarray]) -> None:
        self.state(state, "state")
        missing = sorted(set(self.arrays) - set(arrays))
        if missing:
            raise ModelFileError(
                f"The model file's state is invalid: arrays {', '.join(missing)} are missing."
            )
        for name, array in arrays.items():
            spec = self.arrays.get(name) or self.optional_arrays.get(name)
            spec = spec or next(
                (s for p, s in self.patterns.items() if re.fullmatch(p, name)), None
            )
            if spec is None:
                raise ModelFileError(
                    f"The model file's state is invalid: unexpected array {name!r}."
                )
            if array.dtype.kind not in spec.kinds or array.ndim not in spec.ndim:
                raise ModelFileError(
                    f"The model file's state is invalid: array {name!r} is {array.dtype} with "
                    f"{array.ndim} dimension(s)."
                )


# ----------------------------------------------------------------------------- encoder


def _encoder(value: Any, path: str) -> None:
    obj(
        {
            "max_categories": INT,
            "scale": BOOL,
            "columns": list_of(STR),
            "numeric": list_of(STR),
            "categorical": list_of(pair(STR, list_of(STR))),
            "median": list_of(NUM),
            "center": list_of(NUM),
            "scale_values": list_of(NUM),
        },
        {"dropped": list_of(STR)},
    )(value, path)
    columns = set(value["columns"])
    n = len(value["numeric"])
    if not (len(value["median"]) == len(value["center"]) == len(value["scale_values"]) == n):
        _fail(f"{path}.median", f"{n} values (one per numeric column)", value["median"])
    if any(s == 0 for s in value["scale_values"]):
        _fail(f"{path}.scale_values", "non-zero", value["scale_values"])
    named = [*value["numeric"], *(c for c, _ in value["categorical"])]
    if len(set(named)) != len(named) or not set(named) <= columns:
        _fail(f"{path}.numeric", "distinct columns listed in columns", named)


ENCODER: Check = _encoder


def _state(**keys: Check) -> Check:
    return obj({"encoder": ENCODER, **keys})


SCHEMAS: dict[str, Schema] = {
    "linear_classifier": Schema(_state(intercept=NUM), {"coef": FLOAT1}),
    "randomized_classifier": Schema(
        _state(), {"coefs": FLOAT2, "intercepts": FLOAT1, "weights": FLOAT1}
    ),
    "multiaccurate_proxy": Schema(
        _state(proxy=STR, group_names=list_of(STR)),
        {"coefs": FLOAT2, "intercepts": FLOAT1, "weights": FLOAT1, "proxy_coef": FLOAT2},
        {"proxy_trees": ArraySpec("f", (4,))},
    ),
    "noisy_groups": Schema(
        obj(
            {"encoder": ENCODER, "intercept": NUM},
            {"knobs": optional(obj({}, extra=SCALAR)), "group_column": optional(STR)},
        ),
        {"coef": FLOAT1},
    ),
    "balanced_filter": Schema(
        _state(proxy=one_of("tree", "classifier"), eta=NUM, group_names=list_of(STR)),
        {"rho": FLOAT1, "A": FLOAT2, "r_hat": FLOAT1, "base_rates": FLOAT1},
        patterns={r"proxy_[A-Za-z0-9_]+": NUMERIC},
    ),
    "maxent": Schema(
        _state(
            domain=obj(
                {
                    "features": list_of(
                        obj(
                            {
                                "name": STR,
                                "role": STR,
                                "levels": list_of(STR),
                                "edges": list_of(NUM),
                            }
                        )  # fmt: skip
                    )
                }
            ),
            C=NUM,
            tau=NUM,
            prior=STR,
            n_bins=INT,
            n_iter=INT,
            classifier=STR,
            classifier_arrays=list_of(STR),
        ),
        {
            "lambda": FLOAT1,
            "theta": FLOAT1,
            "rows": ArraySpec("iu", (2,)),
            "weights": FLOAT1,
            "counts": FLOAT1,
        },
        patterns={r"clf_[A-Za-z0-9_]+": NUMERIC},
    ),
    "fair_regression": Schema(
        _state(
            constraint=STR,
            eps=either(NUM, list_of(NUM)),
            loss=STR,
            n_levels=INT,
            oracle=STR,
            base_estimator=optional(STR),
            max_iter=INT,
            random_state=optional(INT),
            mode=STR,
            y_min=NUM,
            y_max=NUM,
            group_labels=list_of(STR),
            components=list_of(
                obj(
                    {
                        "kind": one_of("linear", "trees", "estimator"),
                        "link": STR,
                        "arrays": list_of(STR),
                    }
                )  # fmt: skip
            ),
        ),
        {"weights": FLOAT1},
        {"base_estimator_skops": BYTES},
        patterns={r"f\d{1,6}_skops": BYTES, r"f\d{1,6}_[A-Za-z0-9_]+": NUMERIC},
    ),
}


def validate_state(model_type: str, state: Any, arrays: Mapping[str, np.ndarray]) -> None:
    """Raise :class:`ModelFileError` unless ``state`` and ``arrays`` fit ``model_type``'s schema."""
    schema = SCHEMAS.get(model_type)
    if schema is None:
        raise ModelFileError(f"The model type {model_type!r} has no state schema to check against.")
    schema.check(state, arrays)


def probe_frame(encoder_state: Mapping[str, Any]) -> Any:
    """One synthetic row for the encoder's columns: numeric medians, the first kept category,
    missing elsewhere (used to check that a rebuilt model predicts at all)."""
    import pandas as pd

    numeric = dict(zip(encoder_state["numeric"], encoder_state["median"], strict=True))
    categorical = {c: (cats[0] if cats else None) for c, cats in encoder_state["categorical"]}
    row = {c: numeric.get(c, categorical.get(c)) for c in encoder_state["columns"]}
    frame = pd.DataFrame([row])
    for c in encoder_state["columns"]:
        if c not in numeric:
            frame[c] = frame[c].astype(object)
    return frame
