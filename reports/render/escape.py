"""Escaping for DOT and HTML: every string that comes from a trace (member ids, client ids,
topic names) passes through here before it reaches a label."""

from __future__ import annotations

import html

MAX_LABEL = 24
"""Longer names are shortened in labels (the full name stays in the tooltip)."""


def short(text: str, limit: int = MAX_LABEL) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dot_quote(text: str) -> str:
    """A DOT double-quoted string literal for ``text``: backslashes, quotes and line breaks
    are escaped, so nothing in ``text`` can end the string or start a statement."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "").replace("\n", "\\n")
    return f'"{out}"'


def html_text(text: str) -> str:
    """``text`` escaped for HTML element content and attribute values (also used inside
    graphviz HTML-like labels)."""
    return html.escape(text, quote=True)
