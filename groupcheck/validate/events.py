"""A whole trace read into memory, for the modes that replay it out of file order
(coordinator and client mode): its header and every event decoded."""

from __future__ import annotations

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
