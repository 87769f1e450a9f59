"""Strings a visitor could put into a link, a file name, a column name or a cell, each holding
Markdown, HTML, KaTeX, Streamlit directives or autolinks. Shared by the unit, AppTest and browser
tests of :mod:`fairengine.textsafe`."""

from __future__ import annotations

#: The outside host every hostile link and image points at: no request may ever reach it.
EVIL_HOST = "example.com"

#: A column name / group value / query value that tries every construct at once.
KITCHEN_SINK = (
    "![x](https://example.com/a.png) [click](https://example.com/p) $x^2$ :red[boom] ~~s~~ "
    "_i_ <b>b</b> www.example.com"
)

HOSTILE: tuple[str, ...] = (
    KITCHEN_SINK,
    "https://example.com/x a@example.com WWW.Example.org mailto:a@b.co xmpp:a@b.co",
    ":smile: :material/home: :+1: :streamlit: $$x$$ \\(x\\) `code` ``x``",
    "# head\n- item\n> quote\n1. one\n***\n<img src=https://example.com/i.png>",
    "&amp; &#60;b&#62; <https://example.com> [a][r]\n\n[r]: https://example.com/ref",
    "**bold** *em* __u__ ~single~ | pipe | \\ back",
    "`a`b``c` trailing `",
    ":blue-badge[x] :small[y] :violet-background[z] :orange[o]",
    "<script>alert(1)</script><a href='https://example.com'>a</a>",
    "[x]: https://example.com/def\n[x]",
)


def shown(markdown: str) -> str:
    """The characters a reader sees of Markdown whose untrusted parts went through ``md_text``:
    backslash escapes resolved, word joiners dropped (the Markdown around them is kept)."""
    import re

    from fairengine.textsafe import WORD_JOINER

    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace(WORD_JOINER, "")
