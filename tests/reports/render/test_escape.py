"""``reports.escape``: one way of showing a trace's strings on a terminal, in text,
in DOT and in HTML."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groupcheck.cli import printable
from model.actions import Subscribe
from reports.casestudy import describe_action
from reports.escape import (
    MAX_NAME,
    dot_quote,
    html_text,
    partitions,
    shown,
    tooltip,
    visible,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("member-1 ü 成員", "member-1 ü 成員"),
        ("A\x1b[2J", "A\\x1b[2J"),  # ESC: a terminal would clear the screen
        ("evil\u202egnp.exe", "evil\\u202egnp.exe"),  # right-to-left override
        ("A\u200bB", "A\\u200bB"),  # zero-width space
        ("a\u2028b\u2029c\x85d", "a\\u2028b\\u2029c\\x85d"),  # line, paragraph, NEL
        ("tag\U000e0041", "tag\\U000e0041"),  # a tag character (Cf)
        ("no\u00a0break", "no\\xa0break"),  # a space that is not U+0020
        ("\ufeffbom", "\\ufeffbom"),
    ],
)
def test_visible(text: str, expected: str) -> None:
    assert visible(text) == expected
    assert printable(text) == expected  # the CLI's error lines use the same function


@given(st.text())
def test_visible_output_is_printable_and_stable(text: str) -> None:
    out = visible(text)
    assert out.isprintable()
    assert visible(out) == out


def test_long_names_are_cut_everywhere() -> None:
    huge = "M" * 10_000_000
    assert shown(huge) == "M" * (MAX_NAME - 1) + "…"
    assert len(tooltip(huge)) == 4096
    assert shown("x\x1b" * 100).startswith("x\\x1bx\\x1b")
    assert partitions(frozenset({(huge, 0), ("foo", 1)})) == f"[{'M' * 63}…-0, foo-1]"
    line = describe_action(Subscribe(huge))
    assert len(line) < 100


def test_dot_and_html_escape_non_printables_but_keep_line_breaks() -> None:
    assert dot_quote('a"\x1b\nb') == '"a\\"\\\\x1b\\nb"'
    assert html_text("<a>\x1b\nb\u202e") == "&lt;a&gt;\\x1b\nb\\u202e"
