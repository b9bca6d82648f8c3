"""Exchanges the coordinator may have handled in either order.

A capture writes each exchange — a ConsumerGroupHeartbeat request and its response — in
the order the proxy forwarded the requests (``groupcheck/capture/proxy.py``). That is the
order the coordinator received them only up to the resolution of the clock and the
broker's network threads: against Kafka 4.4, a leave and another member's heartbeat
forwarded in the same millisecond on two connections were handled leave first (the
heartbeat's response gave it the partitions the leave released) though the heartbeat went
out first; and with 50 members on two cores a revocation acknowledged 2 ms after another
member's heartbeat went out was handled first, that heartbeat being given the released
partitions. The coordinator handled each exchange at some moment between its request's
``ts`` and its response's, so two exchanges whose intervals overlap may have been handled
in either order.

Safety mode must not claim a violation that another admissible order explains (a
violation is claimed only when certain, as the hand-over bounds already favour the
coordinator: docs/trace-format.md). :func:`releases_first` therefore moves a request that
only releases partitions — a leave (member epoch −1 or −2), or a heartbeat whose
``TopicPartitions`` claim nothing the member was not given or did not report before (the
acknowledgement of a revocation) — ahead of the other members' exchanges just before it
in the file that it overlaps, so that a partition released concurrently with its
hand-over is released first. Such a request claims nothing, so handling it earlier makes
no partition owned twice. Everything else keeps its place; events without timestamps
(model traces) pass through untouched."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from model.actions import Action, DeliverMessage
from model.ids import EMPTY, Assignment
from model.records import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse

Event = tuple[int, int | None, Action]
"""(line, ts, action), as ``groupcheck.validate.safety.trace_events`` yields them."""


@dataclass
class _Exchange:
    """A heartbeat request and its response, handled between ``start`` and ``end``."""

    events: list[Event]
    start: int
    end: int
    releases: bool
    """Its request only releases partitions (module docstring)."""
    client: str


@dataclass
class _Holdings:
    """What each member was last given and last reported, in file order."""

    given: dict[str, Assignment] = field(default_factory=dict)
    reported: dict[str, Assignment] = field(default_factory=dict)

    def releases_only(self, body: ConsumerGroupHeartbeatRequest, answer: Action) -> bool:
        """Whether the exchange claims nothing: a leave, or a request whose partitions the
        member was all given or reported before, answered with no partition it did not
        hold (a response that gives partitions is never moved)."""
        if body.member_epoch < 0:
            return True
        if body.topic_partitions is None or body.member_epoch == 0:
            return False
        member = body.member_id
        held = self.given.get(member, EMPTY) | self.reported.get(member, EMPTY)
        assert isinstance(answer, DeliverMessage)
        response = answer.message.body
        assert isinstance(response, ConsumerGroupHeartbeatResponse)
        gives = response.assignment is not None and not response.assignment <= held
        return body.topic_partitions <= held and not gives

    def note(self, action: Action) -> None:
        if not isinstance(action, DeliverMessage):
            return
        body = action.message.body
        if isinstance(body, ConsumerGroupHeartbeatRequest) and body.topic_partitions is not None:
            self.reported[body.member_id] = body.topic_partitions
        elif isinstance(body, ConsumerGroupHeartbeatResponse) and body.assignment is not None:
            self.given[body.member_id or action.message.client] = body.assignment


def _request(action: Action) -> ConsumerGroupHeartbeatRequest | None:
    if isinstance(action, DeliverMessage) and action.message.to_coordinator:
        body = action.message.body
        if isinstance(body, ConsumerGroupHeartbeatRequest):
            return body
    return None


def _answers(request: Action, action: Action) -> bool:
    """Whether ``action`` is the response to the request ``request`` (same client and
    connection, a heartbeat response)."""
    if not isinstance(action, DeliverMessage) or action.message.to_coordinator:
        return False
    assert isinstance(request, DeliverMessage)
    return (
        isinstance(action.message.body, ConsumerGroupHeartbeatResponse)
        and action.message.client == request.message.client
        and action.message.connection == request.message.connection
    )


def _client_event(event: Event) -> _Exchange | None:
    """A timed event of one client process other than a message (a client event, a crash):
    a unit that a release of another member may pass."""
    action, ts = event[2], event[1]
    client = getattr(action, "client", None)
    if isinstance(action, DeliverMessage) or ts is None or not isinstance(client, str):
        return None
    return _Exchange([event], ts, ts, False, client)


def _units(events: Iterable[Event]) -> Iterator[_Exchange | Event]:
    """The events grouped: a timed heartbeat request with the response right after it is
    one exchange (another client's own events may stand between them: a capture places
    them by time); a timed event of one client is a unit of its own; anything else stands
    alone."""
    holdings = _Holdings()
    held: Event | None = None
    for event in events:
        if event[1] is None and held is None:  # untimed (a model trace's): as it comes
            holdings.note(event[2])
            yield event
            continue
        solo = _client_event(event)
        if solo is not None and (held is None or _client_of(held) != solo.client):
            yield solo
            continue
        if held is not None:
            body = _request(held[2])
            start, end = held[1], event[1]
            if (
                body is not None
                and start is not None
                and end is not None
                and _answers(held[2], event[2])
            ):
                assert isinstance(held[2], DeliverMessage)
                releases = holdings.releases_only(body, event[2])
                holdings.note(held[2])
                holdings.note(event[2])
                yield _Exchange([held, event], start, end, releases, held[2].message.client)
                held = None
                continue
            holdings.note(held[2])
            yield held
            held = None
        if _request(event[2]) is not None and event[1] is not None:
            held = event
        else:
            holdings.note(event[2])
            yield event
    if held is not None:
        yield held


def _client_of(event: Event) -> str | None:
    action = event[2]
    return action.message.client if isinstance(action, DeliverMessage) else None


def _may_precede(release: _Exchange, other: _Exchange) -> bool:
    """Whether the coordinator may have handled ``release`` before ``other``: another
    member's exchange (a connection's requests are handled in order) whose interval
    overlaps it. (Moving a release ahead of another changes nothing either claims.)"""
    return other.client != release.client and other.end >= release.start


def releases_first(events: Iterable[Event]) -> Iterator[Event]:
    """``events`` with each release moved ahead of the other members' exchanges right
    before it that it overlaps in time (module docstring). The buffer holds only
    exchanges a later request could still overlap: bounded by time, not by the trace."""
    buffer: list[_Exchange] = []
    for unit in _units(events):
        # A client's own event passes nothing: it stays behind what came before it.
        if not isinstance(unit, _Exchange):
            yield from (e for x in buffer for e in x.events)
            buffer = []
            yield unit
            continue
        if unit.releases:
            at = len(buffer)
            while at > 0 and _may_precede(unit, buffer[at - 1]):
                at -= 1
            buffer.insert(at, unit)
        else:
            buffer.append(unit)
        # An exchange no later request can overlap leaves the buffer (requests come in the
        # order they were forwarded, so a later one starts no earlier than this one).
        while buffer and buffer[0].end < unit.start:
            yield from buffer.pop(0).events
    yield from (e for x in buffer for e in x.events)
