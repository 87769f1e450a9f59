"""The one rule for putting untrusted text into Markdown: it shows as the same characters, and
nothing else.

Design notes: docs/architecture.md, "Untrusted text in Markdown".
"""

from __future__ import annotations

import html
import json
import re
import string

__all__ = [
    "WORD_JOINER", "html_text", "md_code", "md_file_text", "md_text", "plot_text", "script_json"
]  # fmt: skip

#: Invisible, zero-width and not a line-break opportunity: it splits ``https://``, ``www.``,
#: ``@host`` and ``:name:`` without a visible change.
WORD_JOINER = "\u2060"

_PUNCTUATION = frozenset(string.punctuation)  # exactly CommonMark's "ASCII punctuation"
#: Line breaks and control characters (C0, DEL, C1, Unicode line and paragraph separators).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_WWW = re.compile(r"(www)(\\\.)", re.IGNORECASE)


def _char(char: str) -> str:
    if char not in _PUNCTUATION:
        return char
    if char in ":@":
        return "\\" + char + WORD_JOINER
    return "\\" + char


def md_text(value: object) -> str:
    """``value`` as Markdown that renders as its own characters (``str(value)``), inline.

    Any object is accepted (``None`` gives ``"None"``, like an f-string). See the module
    docstring for what is escaped and why.
    """
    text = _CONTROL.sub(" ", str(value))
    escaped = "".join(map(_char, text))
    return _WWW.sub(lambda m: m.group(1) + WORD_JOINER + m.group(2), escaped)


def md_file_text(value: object) -> str:
    """``value`` for a Markdown *file* read as text (a downloaded model card): verbatim on one
    line. Control characters become spaces and ``|`` is written ``\\|`` (so it cannot end a
    table cell); nothing else is escaped, so the file shows no backslashes or invisible
    characters. Not for Markdown a page renders (Streamlit, GitHub): use :func:`md_text`.
    """
    return _CONTROL.sub(" ", str(value)).replace("|", "\\|")


def md_code(value: object) -> str:
    """``value`` as an inline code span: shown verbatim in code type, whatever it holds.

    Nothing is interpreted inside a code span (no escapes either), so the span is fenced with
    one backtick more than the longest run of backticks in the text, and padded with a space
    when the text starts or ends with a backtick or a space. Not for GitHub table cells, where
    a ``|`` ends the cell even inside a code span: use :func:`md_text` there.
    """
    text = _CONTROL.sub(" ", str(value))
    if not text.strip():
        return md_text(text)
    runs = [len(run) for run in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    if text[0] in "` " or text[-1] in "` ":
        text = f" {text} "
    return f"{fence}{text}{fence}"


def plot_text(value: object) -> str:
    """``value`` for a Plotly label, legend entry or hover text: shown as its own characters.

    Plotly reads a small HTML subset in these strings (``<b>``, ``<a href>``, ``<br>``, …) and
    decodes entities; escaping ``&``, ``<`` and ``>`` keeps every tag and entity literal.
    """
    return html.escape(str(value), quote=False)


def html_text(value: object) -> str:
    """``value`` as HTML text or a quoted attribute value: shown as its own characters.

    ``&``, ``<``, ``>`` and both quotes become entities, so no tag, comment, entity or attribute
    can start in it, in element content or inside ``'…'`` / ``"…"`` attribute values. Not for
    unquoted attributes, URLs (``href``, ``src``) or ``<script>`` / ``<style>`` content.
    """
    return html.escape(str(value), quote=True)


_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                   "\u2029": "\\u2029"}  # fmt: skip


def script_json(value: object) -> str:
    """``value`` as JSON to put inside an HTML ``<script>`` element (a JavaScript literal).

    The HTML parser ends a script at ``</script`` and treats ``<!--`` specially whatever the
    JavaScript around them means, so ``<``, ``>`` and ``&`` are written as ``\\u`` escapes (the
    same characters to JavaScript), and so are the two line separators JavaScript once read as
    line breaks.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return "".join(_SCRIPT_ESCAPES.get(char, char) for char in text)
