"""A griffe extension for the documentation site (``mkdocs.yml``): the docstrings use Sphinx
cross-reference roles (``:func:`~fairengine.metrics.dp_diff```), which Markdown would show as
typed. Each role becomes a code span with the name a reader would see in Sphinx (the last part
when the target starts with ``~``)."""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension

ROLE = re.compile(r":(?:py:)?(?:func|class|mod|data|meth|attr|exc|obj|const):`(~?)([^`]+)`")


def plain_roles(text: str) -> str:
    """``text`` with every Sphinx cross-reference role replaced by a code span."""

    def span(match: re.Match[str]) -> str:
        short, target = match.group(1), match.group(2)
        return f"`{target.rsplit('.', 1)[-1] if short else target}`"

    return ROLE.sub(span, text)


class SphinxRoles(Extension):
    """Rewrite the roles in every docstring before mkdocstrings parses it."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = plain_roles(obj.docstring.value)
