"""The escaping rule for untrusted text in Markdown (fairengine.textsafe).

The browser test (tests/e2e/test_hostile_text.py) checks the rendering in Streamlit's own
Markdown; these tests check the properties that rendering rests on, for any text: the escaped
form decodes (as CommonMark decodes escapes) to exactly the input, every ASCII punctuation
character in it is escaped, and none of the patterns that the renderers turn into links, emoji
or icons in the *decoded* text can match."""

from __future__ import annotations

import html
import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairengine.textsafe import WORD_JOINER, md_code, md_text, plot_text
from tests.hostile_text import HOSTILE, KITCHEN_SINK

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")

# What GitHub's autolink-literal transform (mdast-util-gfm-autolink-literal, used by GitHub and
# Streamlit's remark-gfm) and the emoji / Material icon plugins look for in the parsed text.
_TRIGGERS = {
    "url": re.compile(r"https?://", re.IGNORECASE),
    "www": re.compile(r"www(?=\.)", re.IGNORECASE),
    "email": re.compile(r"[-.\w+]+@[-\w]+(?:\.[-\w]+)+"),
    "protocol": re.compile(r"(?:mailto|xmpp):[-.\w+]", re.IGNORECASE),
    "shortcode": re.compile(r":[+\w-]+:"),
    "icon": re.compile(r":material/"),
    "directive": re.compile(r":[A-Za-z][\w-]*\["),
}

#: Text with the characters that matter over-represented, plus any Unicode.
_TEXT = st.text(
    st.one_of(
        st.sampled_from(list(string.punctuation) + ["w", "W", "h", "t", "p", "s", " ", "\n"]),
        st.characters(),
    ),
    max_size=80,
) | st.sampled_from(HOSTILE)


def _decode(markdown: str) -> str:
    """What CommonMark shows for text made only of characters and backslash escapes."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def _unescaped_punctuation(markdown: str) -> list[str]:
    """ASCII punctuation characters not preceded by an escaping backslash."""
    found, i = [], 0
    while i < len(markdown):
        if markdown[i] == "\\" and i + 1 < len(markdown) and markdown[i + 1] in string.punctuation:
            i += 2
            continue
        if markdown[i] in string.punctuation:
            found.append(markdown[i])
        i += 1
    return found


@given(_TEXT)
def test_escaped_text_shows_exactly_the_input(text: str) -> None:
    shown = _decode(md_text(text))
    assert shown.replace(WORD_JOINER, "") == _CONTROL.sub(" ", text).replace(WORD_JOINER, "")


@given(_TEXT)
def test_every_punctuation_character_is_escaped_and_the_text_stays_inline(text: str) -> None:
    escaped = md_text(text)
    assert _unescaped_punctuation(escaped) == []
    assert not _CONTROL.search(escaped)  # no line break: no block can start


@given(_TEXT)
def test_no_autolink_emoji_icon_or_directive_forms_in_the_decoded_text(text: str) -> None:
    decoded = _decode(md_text(text))
    for name, pattern in _TRIGGERS.items():
        assert not pattern.search(decoded), (name, text)


@pytest.mark.parametrize("text", HOSTILE)
def test_known_hostile_strings(text: str) -> None:
    escaped = md_text(text)
    assert _unescaped_punctuation(escaped) == [] and "\n" not in escaped
    decoded = _decode(escaped)
    assert decoded.replace(WORD_JOINER, "") == text.replace("\n", " ")
    assert not any(pattern.search(decoded) for pattern in _TRIGGERS.values())


def test_kitchen_sink_escaped_form() -> None:
    j = WORD_JOINER
    assert md_text(KITCHEN_SINK).startswith(
        f"\\!\\[x\\]\\(https\\:{j}\\/\\/example\\.com\\/a\\.png\\) \\[click\\]"
    )
    assert md_text(KITCHEN_SINK).endswith(f"\\<b\\>b\\<\\/b\\> www{j}\\.example\\.com")


def test_escaping_examples() -> None:
    assert md_text("a_b") == "a\\_b"
    assert md_text("$5") == "\\$5"
    assert md_text("x: y") == f"x\\:{WORD_JOINER} y"
    assert md_text("www.example.org") == f"www{WORD_JOINER}\\.example\\.org"
    assert md_text("a@b.c") == f"a\\@{WORD_JOINER}b\\.c"
    assert md_text(None) == "None" and md_text(3.5) == "3\\.5"
    assert md_text("Ünïcødé ünd 名前") == "Ünïcødé ünd 名前"  # letters are left alone


def _code_span_content(span: str) -> str:
    """The text CommonMark shows for an inline code span (one fence each side)."""
    fence = re.match(r"`+", span).group()
    assert span.endswith(fence) and len(span) > 2 * len(fence)
    inner = span[len(fence) : -len(fence)]
    # The closing fence is the first run of exactly that many backticks.
    assert len(fence) not in {len(run) for run in re.findall(r"`+", inner)}
    if inner.startswith(" ") and inner.endswith(" ") and inner.strip(" "):
        inner = inner[1:-1]
    return inner


@given(_TEXT.filter(lambda t: t.strip() != ""))
def test_code_span_shows_the_input_verbatim(text: str) -> None:
    span = md_code(text)
    flat = _CONTROL.sub(" ", text)
    if not flat.strip():
        assert span == md_text(text)
    else:
        assert _code_span_content(span) == flat


def test_code_span_examples() -> None:
    assert md_code("age") == "`age`"
    assert md_code("a`b") == "``a`b``"
    assert md_code("`x`") == "`` `x` ``"
    assert md_code(" ") == " "


@given(_TEXT)
def test_plot_text_keeps_tags_and_entities_literal(text: str) -> None:
    label = plot_text(text)
    assert "<" not in label and ">" not in label
    assert html.unescape(label) == text
