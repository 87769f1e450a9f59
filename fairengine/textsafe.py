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
    """``value`` (any object, as ``str(value)``) as Markdown that renders as its own characters,
    inline."""
    text = _CONTROL.sub(" ", str(value))
    escaped = "".join(map(_char, text))
    return _WWW.sub(lambda m: m.group(1) + WORD_JOINER + m.group(2), escaped)


def md_file_text(value: object) -> str:
    """``value`` for a Markdown *file* read as text (a downloaded model card): verbatim on one
    line, ``|`` escaped; not for Markdown a page renders (use :func:`md_text`)."""
    return _CONTROL.sub(" ", str(value)).replace("|", "\\|")


def md_code(value: object) -> str:
    """``value`` as an inline code span: shown verbatim in code type, whatever it holds (not for
    GitHub table cells: use :func:`md_text` there)."""
    text = _CONTROL.sub(" ", str(value))
    if not text.strip():
        return md_text(text)
    runs = [len(run) for run in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    if text[0] in "` " or text[-1] in "` ":
        text = f" {text} "
    return f"{fence}{text}{fence}"


def plot_text(value: object) -> str:
    """``value`` for a Plotly label, legend entry or hover text: shown as its own characters."""
    return html.escape(str(value), quote=False)


def html_text(value: object) -> str:
    """``value`` as HTML text or a quoted attribute value: shown as its own characters (not for
    unquoted attributes, URLs or ``<script>`` / ``<style>`` content)."""
    return html.escape(str(value), quote=True)


_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                   "\u2029": "\\u2029"}  # fmt: skip


def script_json(value: object) -> str:
    """``value`` as JSON to put inside an HTML ``<script>`` element (a JavaScript literal), with
    ``<``, ``>``, ``&`` and the line separators as ``\\u`` escapes."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return "".join(_SCRIPT_ESCAPES.get(char, char) for char in text)
