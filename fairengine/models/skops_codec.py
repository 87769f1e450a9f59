"""scikit-learn estimators that have no array codec, stored through skops (never pickle).

A model file keeps such an estimator as the bytes of ``skops.io.dumps`` in a uint8 array
(``np.save(..., allow_pickle=False)`` as every other array). Export is refused, with a message,
for anything that is not a scikit-learn estimator or whose skops dump holds a type outside
skops' default trusted set plus :data:`TRUSTED_TYPES`; loading passes the same explicit list, so
skops refuses a file that names any other type.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Types trusted on top of skops' defaults (scikit-learn estimators, NumPy, builtins): the tree
#: structures of scikit-learn's tree ensembles. Extend deliberately, one reviewed type at a time.
TRUSTED_TYPES: tuple[str, ...] = (
    "sklearn.tree._tree.Tree",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
)


class ExportRefused(TypeError):
    """An estimator that fairengine will not write into a model file."""


def is_sklearn(estimator: Any) -> bool:
    return type(estimator).__module__.split(".")[0] == "sklearn"


def dump(estimator: Any) -> np.ndarray:
    """The skops bytes of ``estimator`` as a uint8 array; raises :class:`ExportRefused`."""
    import skops.io as sio

    name = f"{type(estimator).__module__}.{type(estimator).__qualname__}"
    if not is_sklearn(estimator):
        raise ExportRefused(
            f"Cannot export a {name}: model files store array codecs and scikit-learn estimators "
            "(through skops) only, never pickles. Use a scikit-learn estimator."
        )
    try:
        data = sio.dumps(estimator)
    except Exception as exc:  # skops cannot represent it
        raise ExportRefused(f"Cannot export a {name}: skops cannot store it ({exc}).") from exc
    untrusted = sorted(set(sio.get_untrusted_types(data=data)) - set(TRUSTED_TYPES))
    if untrusted:
        raise ExportRefused(
            f"Cannot export a {name}: it contains types outside fairengine's trusted list "
            f"({', '.join(untrusted)}); model files never hold code that loading would run."
        )
    return np.frombuffer(data, dtype=np.uint8).copy()


def load(array: np.ndarray) -> Any:
    """The estimator stored by :func:`dump`; a type outside the trusted list raises ValueError."""
    import skops.io as sio
    from skops.io.exceptions import UntrustedTypesFoundException

    try:
        return sio.loads(np.asarray(array, dtype=np.uint8).tobytes(), trusted=list(TRUSTED_TYPES))
    except UntrustedTypesFoundException as exc:
        raise ValueError(f"the stored estimator holds untrusted types: {exc}") from exc
