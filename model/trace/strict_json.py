"""Strict JSON text: RFC 8259 values with the checks Python's ``json`` module leaves out.

``json.loads`` accepts an object with a key given twice (the last one wins), the
constants ``NaN``/``Infinity``, escaped lone surrogates (``"\\ud800"``, a string no UTF-8
output can hold), and raises a bare ``ValueError`` with no position for an integer of more
than 4,300 digits. Traces, grids and config files are input a person may have written by
hand or a program may have mangled, so each of these is an error here, reported with its
line and column: :class:`JsonTextError`.

Pure functions of the text (no I/O); the trace codec calls :func:`raw_decode` once per line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

MAX_INT_DIGITS = 4300
"""Python refuses to convert longer digit strings to ``int`` (``sys.int_info``)."""


class JsonTextError(ValueError):
    """Text that is not strict JSON: ``line`` and ``column`` are 1-based in the text."""

    def __init__(self, line: int, column: int, reason: str) -> None:
        super().__init__(f"{line}:{column}: {reason}")
        self.line, self.column, self.reason = line, column, reason


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


def _constant(name: str) -> Any:
    raise _Constant(name)


class _Constant(Exception):
    def __init__(self, name: str) -> None:
        self.name = name


_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_constant)
_RAW: Callable[[str, int], tuple[Any, int]] = _DECODER.raw_decode
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONG_DIGITS = re.compile(rf"\d{{{MAX_INT_DIGITS + 1},}}")


def _where(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def raw_decode(text: str, start: int = 0) -> tuple[Any, int]:
    """Decode one JSON value starting at ``start`` (after optional white space); returns
    the value and the offset just after it, like ``json.JSONDecoder.raw_decode``."""
    try:
        value, end = _RAW(text, start)
    except json.JSONDecodeError as e:
        raise JsonTextError(e.lineno, e.colno, f"not JSON: {e.msg}") from None
    except RecursionError:
        raise JsonTextError(*_where(text, start), "JSON nested too deeply") from None
    except _DuplicateKey as e:
        offset = _duplicate_offset(text, start, e.key)
        raise JsonTextError(*_where(text, offset), f"key {e.key!r:.60} given twice") from None
    except _Constant as e:
        offset = text.find(e.name, start)
        raise JsonTextError(*_where(text, max(offset, 0)), f"{e.name} is not JSON") from None
    except ValueError:  # an integer too long for int()
        match = _LONG_DIGITS.search(text, start)
        offset = match.start() if match else start
        raise JsonTextError(
            *_where(text, offset), f"number with more than {MAX_INT_DIGITS} digits"
        ) from None
    if "\\u" in text:
        _check_surrogates(text, start, end)
    return value, end


def loads(text: str) -> Any:
    """The one JSON value ``text`` holds (white space around it allowed)."""
    if text.startswith("\ufeff"):
        raise JsonTextError(1, 1, "starts with a byte-order mark (U+FEFF); remove it")
    value, end = raw_decode(text, len(text) - len(text.lstrip()))
    if end < len(text) and not text[end:].isspace():
        raise JsonTextError(*_where(text, end), "not JSON: extra data after the value")
    return value


def _check_surrogates(text: str, start: int, end: int) -> None:
    """Reject an escaped high surrogate not followed by an escaped low one, and a low one
    on its own: such a string cannot be written as UTF-8."""
    expect_low_at = -1
    for match in _SURROGATE_ESCAPE.finditer(text, start, end):
        at = match.start()
        backslashes = at - len(text[:at].rstrip("\\"))
        if backslashes % 2:  # "\\ud800" is a backslash followed by the letters ud800
            continue
        high = match.group()[3].lower() in "89ab"
        if high:
            if expect_low_at >= 0:
                break
            expect_low_at = match.end()
        elif at == expect_low_at:
            expect_low_at = -1
        else:
            raise JsonTextError(*_where(text, at), "lone surrogate escape (not Unicode text)")
    if expect_low_at >= 0:
        raise JsonTextError(*_where(text, expect_low_at - 6), "lone surrogate escape")


def _duplicate_offset(text: str, start: int, key: str) -> int:
    """Where the second occurrence of ``key`` begins in the object that repeats it (the
    decoder found it, so ``text`` is valid JSON up to there and a small scanner will do)."""
    objects: list[set[str] | None] = []  # per open container: its keys, None for an array
    expect_key = False
    i, n = start, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            keys = objects[-1] if objects else None
            if expect_key and keys is not None:
                name = json.loads(text[i : j + 1])
                if name == key and name in keys:
                    return i
                keys.add(name)
            expect_key = False
            i = j + 1
            continue
        if ch == "{":
            objects.append(set())
            expect_key = True
        elif ch == "[":
            objects.append(None)
        elif ch in "}]":
            objects.pop()
        elif ch == ",":
            expect_key = bool(objects) and objects[-1] is not None
        i += 1
    return start
