"""Escaping for text, DOT and HTML: every string that comes from a trace (member ids,
client ids, topic names) passes through here before it reaches a terminal, a label or a
page.

Two things are done to such a string. It is made **visible** (:func:`visible`): a
character that prints as nothing or as something else — a control character such as ESC
(``\\x1b``, which a terminal obeys), a format character such as the right-to-left
override U+202E or the zero-width space U+200B (which make one id look like another), a
line or paragraph separator, a space other than U+0020, a surrogate, a private-use or
unassigned code point — is written as its escape (``\\x1b``, ``\\u202e``,
``\\U000e0001``). And an id is **cut** (:func:`shown`) to :data:`MAX_NAME` characters with
"…": a trace may carry a 10 MB member id, and text and pictures name it many times. The
fullest form shown anywhere is a tooltip, cut to :data:`MAX_TOOLTIP` characters.
"""

from __future__ import annotations

import html
from collections.abc import Collection

from model.ids import TopicPartition, format_partitions

MAX_NAME = 64
"""Ids (member, client, instance, topic names) longer than this are cut in text and labels."""

MAX_LABEL = 24
"""Lane heads of the sequence chart are cut shorter (the tooltip shows more)."""

MAX_TOOLTIP = 4096
"""The most of an id a tooltip shows: the one place a long id is shown at length."""


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` with every non-printable character (``str.isprintable``: categories Cc,
    Cf, Cs, Co, Cn, Zl, Zp, and Zs other than the space) written as its escape, so that
    what is shown is what the text holds, and nothing in it moves a terminal's cursor,
    turns text around or breaks an XML document."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in text)


def visible_lines(text: str) -> str:
    """:func:`visible` for each line of a text of several lines (the line breaks stay)."""
    return "\n".join(visible(line) for line in text.split("\n"))


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (no escaping)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown(text: str, limit: int = MAX_NAME) -> str:
    """An id as text and labels show it: cut to ``limit`` characters, then visible."""
    return visible(cut(text, limit))


def short(text: str, limit: int = MAX_LABEL) -> str:
    """A label: ``text`` cut to ``limit`` characters with an ellipsis, and visible."""
    return shown(text, limit)


def tooltip(text: str) -> str:
    """The fullest form of a name a picture shows: cut to :data:`MAX_TOOLTIP`, visible."""
    return shown(text, MAX_TOOLTIP)


def partitions(parts: Collection[TopicPartition]) -> str:
    """``[foo-0, foo-1]`` (``model.ids.format_partitions``) with every topic name shown
    as :func:`name` shows it."""
    return format_partitions(parts, {topic: shown(topic) for topic, _ in parts})


def dot_quote(text: str) -> str:
    """A DOT double-quoted string literal for ``text``: backslashes, quotes and line breaks
    are escaped, so nothing in ``text`` can end the string or start a statement, and every
    other non-printable character is made visible."""
    out = visible_lines(text.replace("\r", ""))
    out = out.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{out}"'


def html_text(text: str) -> str:
    """``text`` escaped for HTML element content and attribute values (also used inside
    graphviz HTML-like labels); non-printable characters but line breaks made visible."""
    return html.escape(visible_lines(text), quote=True)
