"""Reading a trace's events: :func:`read_trace`, a whole trace read into memory, for the
modes that replay it out of file order (coordinator and client mode): its header and every
event decoded; :class:`EventReader`, one event line at a time with a bounded memo, for the
modes that stream (safety and conformance)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from model.actions import Action
from model.trace import TraceError, TraceHeader, decode_action, parse_event, parse_header

Events = list[tuple[int, int | None, object]]
"""(line, ts, decoded action) of every event, in file order."""


def read_trace(lines: Iterable[str], shared: bool = False) -> tuple[TraceHeader, Events]:
    """The header and the events of a trace; ``TraceError`` at the first malformed line.
    ``shared``: equal decoded actions are one object (they are immutable), so that a long
    trace of a steady group — the same heartbeats again and again — holds each once."""
    it = iter(lines)
    first = next(it, None)
    if first is None:
        raise TraceError(1, 1, "empty trace: no header line")
    header = parse_header(first)
    events: Events = []
    seen: dict[Action, Action] = {}
    for n, line in enumerate(it, 2):
        if not line.strip():
            continue
        event = parse_event(line, n)
        action = decode_action(event, line, n, header)
        if shared:
            action = seen.setdefault(action, action)
        events.append((n, event.ts, action))
    return header, events


_INT = r"-?(?:0|[1-9][0-9]{0,17})"
"""A JSON integer of at most 18 digits: always within int64, as ``seq`` and ``ts`` must be."""
_SEQ_TS_FIRST = re.compile(rf'\{{"seq": ({_INT}), "ts": (null|{_INT}), ')
"""The start of an event line whose first fields are ``seq`` and ``ts``, as
``json.dumps`` writes them in that order (``bench/bench_validate.py``, model runs)."""
_SORTED_TAIL_AT = ', "seq": '
_SORTED_TAIL = re.compile(
    rf', "seq": ({_INT}), "source": ("(?:[^"\\\\\x00-\x1f]|\\\\["\\\\/bfnrt])*"), '
    rf'"ts": (null|{_INT})\}}'
)
"""The end of an event line written with sorted keys (a capture's, ``path_lines``'):
``seq``, ``source`` (a string without ``\\u`` escapes) and ``ts`` last."""
MEMO_CHARS = 4 * 2**20
"""The most characters of line text :class:`EventReader` keeps for its memo."""
MEMO_LINE_CHARS = 4096
"""Longer lines are decoded every time, never kept."""


class EventReader:
    """Decodes the event lines of one trace (its ``header`` read) into (``ts``, kind,
    action), with a bounded memo: a trace of a steady group repeats the same events again
    and again, its lines differing only in ``seq`` and ``ts``.

    A line is looked up by its text without those two values — only where they are
    top-level fields that the line's text shows unambiguously (:data:`_SEQ_TS_FIRST`,
    :data:`_SORTED_TAIL`) and whose values are JSON integers within int64 or ``null``, so
    that two lines of one key differ in nothing ``parse_event`` and ``decode_action``
    check but those values. Every other line, and the first of each key, goes through
    ``parse_event`` and ``decode_action``: a malformed line raises the very ``TraceError``
    it always did (only a line that decoded cleanly is kept). Decoded actions are
    immutable, so lines of one key share one action object. The memo holds at most
    :data:`MEMO_CHARS` characters of keys and is emptied when full: memory stays bounded
    whatever the trace's length."""

    def __init__(self, header: TraceHeader) -> None:
        self.header = header
        self._memo: dict[object, tuple[str, Action]] = {}
        self._chars = 0

    def decode(self, line: str, n: int) -> tuple[int | None, str, Action]:
        """``ts``, kind and action of the event on line ``n`` (not blank); ``TraceError``
        when it is malformed, as ``parse_event`` and ``decode_action`` report it."""
        key: object = None
        ts_text = ""
        if len(line) <= MEMO_LINE_CHARS:
            m = _SEQ_TS_FIRST.match(line)
            if m is not None:
                key, ts_text = line[m.end() :], m.group(2)
            else:
                at = line.rfind(_SORTED_TAIL_AT)
                t = _SORTED_TAIL.fullmatch(line, at) if at >= 0 else None
                if t is not None:
                    key, ts_text = (line[:at], t.group(2)), t.group(3)
            if key is not None:
                hit = self._memo.get(key)
                if hit is not None:
                    return (None if ts_text == "null" else int(ts_text)), hit[0], hit[1]
        event = parse_event(line, n)
        action = decode_action(event, line, n, self.header)
        if key is not None:
            if self._chars + len(line) > MEMO_CHARS:
                self._memo.clear()
                self._chars = 0
            self._memo[key] = (event.kind, action)
            self._chars += len(line)
        return event.ts, event.kind, action
