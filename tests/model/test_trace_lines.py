"""The bounded line reader (``model.trace.lines``): lines of UTF-8 text from chunks of
bytes, a line at most ``MAX_LINE_BYTES`` long, errors at their line and column."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.trace import TraceError
from model.trace.lines import MAX_LINE_BYTES, decode_utf8, text_lines


def _chunks(data: bytes, sizes: list[int]) -> Iterator[bytes]:
    at = 0
    for size in itertools.cycle(sizes):
        if at >= len(data):
            return
        yield data[at : at + size]
        at += size


@given(
    st.lists(
        st.text(
            st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=12
        ),
        max_size=8,
    ),
    st.booleans(),
    st.booleans(),
    st.lists(st.integers(1, 9), min_size=1, max_size=4),
)
def test_lines_whatever_the_chunks(
    lines: list[str], last_break: bool, bom: bool, sizes: list[int]
) -> None:
    """The same lines as ``str.split`` whatever the chunk sizes: multi-byte characters and
    the byte-order mark may be split across chunks."""
    text = "\n".join(lines) + ("\n" if last_break and lines else "")
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    # One byte-order mark at the start is dropped, be it the one added or the text's own.
    expected = (text if bom else text.removeprefix("\ufeff")).split("\n")
    if expected[-1] == "" and (text.endswith("\n") or len(expected) == 1):
        expected.pop()
    assert list(text_lines(_chunks(data, sizes), max_line_bytes=48)) == expected


def test_an_endless_line_is_refused_after_the_limit() -> None:
    """``/dev/zero``: the reader stops after the limit, it does not read on."""
    read = 0

    def zeros() -> Iterator[bytes]:
        nonlocal read
        while True:
            read += 1000
            yield bytes(1000)

    with pytest.raises(TraceError) as info:
        next(text_lines(zeros(), max_line_bytes=10_000))
    assert str(info.value) == "1: line longer than 10000 bytes"
    assert info.value.column is None
    assert read == 11_000
    lines = text_lines([b"ok\n", b"x" * (MAX_LINE_BYTES + 1)])
    assert next(lines) == "ok"
    with pytest.raises(TraceError, match=r"^2: line longer than 16 MiB$"):
        next(lines)


@pytest.mark.parametrize("size", [1, 3, 4096])
def test_a_line_just_within_the_limit_is_read(size: int) -> None:
    data = b"a" * 64 + b"\n" + b"b" * 64
    assert list(text_lines(_chunks(data, [size]), max_line_bytes=64)) == ["a" * 64, "b" * 64]
    with pytest.raises(TraceError, match=r"^2: line longer"):
        list(text_lines(_chunks(data + b"b", [size]), max_line_bytes=64))


@pytest.mark.parametrize("size", [1, 2, 5, 4096])
def test_invalid_utf8_at_its_line_and_byte_column(size: int) -> None:
    data = "{}\nné\n".encode() + b"ab\xff\n"
    with pytest.raises(TraceError) as info:
        list(text_lines(_chunks(data, [size])))
    assert (info.value.line, info.value.column) == (3, 3)
    assert info.value.reason.startswith("not UTF-8: invalid start byte")
    with pytest.raises(TraceError) as info:
        list(text_lines(_chunks(b"\xef\xbb\xbfx\xc3", [size])))  # cut short, after a BOM
    assert (info.value.line, info.value.column) == (1, 2)


def test_decode_utf8_of_a_whole_text() -> None:
    assert decode_utf8(b"\xef\xbb\xbf{}\n") == "{}\n"
    with pytest.raises(TraceError) as info:
        decode_utf8(b'{\n  "a": "\xed\xa0\x80"\n}')  # an encoded surrogate is not UTF-8
    assert (info.value.line, info.value.column) == (2, 9)
