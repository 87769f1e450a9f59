"""Text a user reads about the methods speaks to users: no internal references.

Every registered method's title and description and every knob's label and help (what the
dashboard's widgets and ``fairengine run --help`` show), and the pages' "How to read this page"
texts, must not cite the internal specification ("spec §3.1", "§7.19", "[EXT]", "pitfall P11"),
issue numbers, source files or module paths: a user has none of them. The paper's own names
(its α, Algorithm 1, Theorem 4.5) are fine.
"""

from __future__ import annotations

import re

import pytest

from fairengine.methods import get_method, list_methods

#: Internal references a user cannot follow.
INTERNAL = re.compile(
    r"§|\bspecs?\b|\[EXT\]|\bpitfall\b|\bissue\s*#?\d+|\bseed \d{3}\b|\w\.py\b|\bfairengine\.\w",
    re.IGNORECASE,
)


def _method_texts() -> list[tuple[str, str]]:
    """(where, text) of every user-facing text of every registered method and knob."""
    texts = []
    for name in list_methods():
        method = get_method(name)
        texts += [(f"{name}.title", method.title), (f"{name}.description", method.description)]
        for knob in method.knobs:
            texts += [
                (f"{name}.{knob.name}.label", knob.display_label),
                (f"{name}.{knob.name}.help", knob.help),
            ]
    return texts


def test_the_pattern_catches_internal_references() -> None:
    for text in ("see spec §3.1", "(§7.19)", "[EXT] tie-break", "pitfall P11", "issue 18",
                 "fairengine.methods.maxent", "in method.py"):  # fmt: skip
        assert INTERNAL.search(text), text
    for text in ("the paper's α", "Algorithm 1", "Theorem 4.5", "specific rows", "Appendix B"):
        assert not INTERNAL.search(text), text


def test_method_and_knob_texts_have_no_internal_references() -> None:
    texts = _method_texts()
    assert len(texts) > 2 * len(list_methods())  # every method has knobs with help
    assert all(help_text for where, help_text in texts if where.endswith(".help")), (
        "every knob says what it does"
    )
    found = [f"{where}: {text!r}" for where, text in texts if INTERNAL.search(text)]
    assert not found, "internal references in user text:\n" + "\n".join(found)


def test_page_help_has_no_internal_references() -> None:
    pytest.importorskip("streamlit")
    from dashboard.components.method_page import reading_guide

    guides = {name: reading_guide(name) for name in list_methods()}
    found = [name for name, text in guides.items() if INTERNAL.search(text)]
    assert not found, found
