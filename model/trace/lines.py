"""Lines of a UTF-8 text from its bytes, with a bound on a line's length.

Python's text files read a line however long it is: ``/dev/zero`` or a file of one endless
line fills memory before the first line is handed out, and a decoding error surfaces ahead
of the line it is on. :func:`text_lines` splits the bytes itself: a line longer than
:data:`MAX_LINE_BYTES` is refused as soon as that many bytes have been read without a line
break, and a byte that is not UTF-8 is reported at its own line and (byte) column. The
memory it holds is one chunk plus at most one line, whatever the length of the text.

A byte-order mark (``EF BB BF``) at the very start is skipped: some editors on Windows
write one, and it carries no meaning in UTF-8. Lines end at ``\\n``; a ``\\r`` before it
stays on the line, where JSON reads it as white space.

Pure (no I/O): the bytes come from any iterable of chunks; ``groupcheck`` opens the files.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from model.trace.codec import TraceError

MAX_LINE_BYTES = 16 * 2**20
"""The longest line read, in bytes without its line break (16 MiB): far more than any
event needs (a heartbeat naming thousands of partitions takes a few hundred KiB)."""

BOM = b"\xef\xbb\xbf"
"""UTF-8's byte-order mark, skipped at the start of a text."""


def _size(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit % 2**20 == 0 else f"{limit} bytes"


def _decode(data: bytes, first_line: int) -> str:
    """``data`` (whole lines, the first of which is ``first_line``) as text, or a
    :class:`TraceError` at the line and 1-based byte column of the first invalid byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = first_line + data.count(b"\n", 0, e.start)
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise TraceError(line, column, f"not UTF-8: {e.reason}") from None


def decode_utf8(data: bytes) -> str:
    """A whole text: ``data`` decoded as UTF-8 without a leading byte-order mark, or a
    :class:`TraceError` naming the line and byte column of the first invalid byte."""
    return _decode(data[len(BOM) :] if data.startswith(BOM) else data, 1)


def text_lines(chunks: Iterable[bytes], max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[str]:
    """The lines (without their ``\\n``) of the UTF-8 text whose bytes ``chunks`` hold, in
    order; a last line without a line break is a line too, an empty text has none.

    Raises :class:`TraceError` for a line longer than ``max_line_bytes`` (its line number
    and no column: nothing after its first ``max_line_bytes`` bytes is read) and for a byte
    that is not UTF-8 (line number and byte column). Lines are decoded a block at a time
    (the complete lines of a chunk), so the lines before an error in the same block are
    not handed out.
    """
    pending: list[bytes] = []  # the start of the line being read: no "\n" in these
    pending_size = 0
    line = 1  # the number of the first line not handed out yet
    for chunk in _without_bom(chunks):
        # A chunk larger than a line may be is taken in slices, so that every line of a
        # slice but the one it continues is shorter than the limit.
        step = max_line_bytes if len(chunk) > max_line_bytes else len(chunk) or 1
        for at in range(0, len(chunk), step):
            data = chunk[at : at + step] if step < len(chunk) else chunk
            end = data.rfind(b"\n")
            if end < 0:
                pending_size += len(data)
                if pending_size > max_line_bytes:
                    raise TraceError(line, None, f"line longer than {_size(max_line_bytes)}")
                pending.append(data)
                continue
            if pending_size + data.find(b"\n") > max_line_bytes:
                raise TraceError(line, None, f"line longer than {_size(max_line_bytes)}")
            if pending:
                pending.append(data[:end])
                block = b"".join(pending)
                pending.clear()
            else:
                block = data[:end]
            rest = data[end + 1 :]
            pending_size = len(rest)
            if rest:
                pending.append(rest)
            lines = _decode(block, line).split("\n")
            line += len(lines)
            yield from lines
    if pending:
        yield _decode(b"".join(pending), line)


def _without_bom(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The non-empty ``chunks``, without a byte-order mark at the start of the first."""
    head = b""
    it = iter(chunks)
    for chunk in it:
        head += chunk
        if len(head) >= len(BOM) or not BOM.startswith(head):
            break
    if head:
        yield head[len(BOM) :] if head.startswith(BOM) else head
    for chunk in it:
        if chunk:
            yield chunk
