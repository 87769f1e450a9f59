"""Package attributes imported from their submodule on first use (PEP 562), so that registering a
method (a listing, a cached sweep) does not load its algorithm and libraries (issue 18)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``name`` is read from the submodule
    ``table[name]`` when first asked for; any other name raises :class:`AttributeError`."""

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module hook's name
        if name in table:
            return getattr(importlib.import_module(f"{package}.{table[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
