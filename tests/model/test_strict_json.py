"""Strict JSON: what Python's json module accepts silently is an error with a position."""

from __future__ import annotations

import pytest

from model.trace.strict_json import JsonTextError, loads


@pytest.mark.parametrize(
    ("text", "where", "reason"),
    [
        ('{"a": 1, "b": {"c": [1, {"a": 2, "a": 3}]}}', (1, 34), "key 'a' given twice"),
        ('{"kind": "x",\n "kind": "y"}', (2, 2), "key 'kind' given twice"),
        ("1" * 5001, (1, 1), "more than 4300 digits"),
        ('{"x": NaN}', (1, 7), "NaN is not JSON"),
        ('["\\ud800"]', (1, 3), "lone surrogate"),
        ('"\\udc00"', (1, 2), "lone surrogate"),
        ("\ufeff{}", (1, 1), "byte-order mark"),
        ("[" * 100_000, (1, 1), "nested too deeply"),
        ('{"a": 1} x', (1, 9), "extra data"),
    ],
)
def test_rejected_with_position(text: str, where: tuple[int, int], reason: str) -> None:
    with pytest.raises(JsonTextError) as info:
        loads(text)
    assert (info.value.line, info.value.column) == where
    assert reason in info.value.reason


def test_valid_text_is_read() -> None:
    assert loads('{"a": [1, "\\ud800\\udc00", "\\\\ud800"], "b": {"a": 1}}') == {
        "a": [1, "\U00010000", "\\ud800"],
        "b": {"a": 1},
    }
