"""Coordinator mode: replay each captured request through the model's coordinator and
compare its response with the captured one, field by field.

A wire capture of the consumer protocol (KIP-848) holds every ConsumerGroupHeartbeat the
coordinator processed, in order, with its response. This mode rebuilds the group from
them: an empty group (at the epoch layout the first join shows, ``kip-848`` or
``kafka-4.3``, or the one ``--epoch-layout`` names), each request handled by
``model.consumer.coordinator.handle_consumer_group_heartbeat`` in the order the proxy forwarded it.
The assignor is the implementation's: whenever the model computes a target assignment,
it installs the one the capture shows for that group epoch — for each member, what it was
given at that member epoch, up to the first response that takes a partition away again
(a revocation towards the next target). With the session timeout known (header or
``--session-timeout-ms``) a member silent for longer than it is expired
(``model.consumer.coordinator.session_timeout``) before the next request is handled.

The first response whose error code, member epoch, assignment or heartbeat interval
differs from the model's is reported (``Coordinator.Divergence``) with the model's
response and the Kafka rule that decides that field; the replay stops there, since the
group states no longer agree. Offset commits are not replayed (a note counts them).
Classic and mixed captures go to ``groupcheck.validate.mixed_coordinator`` (each family's
replay is its ``groupcheck.families.COORDINATOR`` facet).
"""

from __future__ import annotations

import itertools
import re
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import IO, Any

from groupcheck.families import COORDINATOR, CoordinatorFacet
from groupcheck.validate.coordinator_common import (
    _differences,
    _gate,
    _interval,
    _kafka_rules,
    answers_any,
)
from groupcheck.validate.events import Events, read_trace
from groupcheck.validate.report import Finding, Report
from groupcheck.validate.safety import Names
from groupcheck.validate.timing import TimingOptions
from model.actions import (
    AddPartitions,
    AssignmentIntervalElapses,
    CreateTopic,
    DeliverMessage,
    LoseMessage,
    RebalanceTimeout,
    SessionTimeout,
)
from model.config import ClientSpec, Config
from model.consumer.coordinator import (
    handle_consumer_group_heartbeat,
    on_metadata_change,
    rebalance_timeout,
    regex_matches,
    regexes_in_use,
    session_timeout,
)
from model.consumer.target import compute_target_assignment
from model.ids import Assignment, FrozenMap
from model.records import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Group,
    OffsetCommitRequest,
    TopicMetadata,
)
from model.status import ErrorCode
from model.trace import TraceError, TraceHeader, decode_action, parse_event, parse_header
from model.versions import DEFAULT_KAFKA_VERSION

REGEX_BATCH_REFRESH_MIN_INTERVAL_MS = 10_000
"""``GroupMetadataManager.REGEX_BATCH_REFRESH_MIN_INTERVAL_MS``: no regex resolution
starts within this long of the last one."""
REGEX_REFRESH_INTERVAL_MS = 600_000
"""``group.consumer.regex.refresh.interval.ms``'s default (``GroupCoordinatorConfig``)."""

DIVERGENCE = "Coordinator.Divergence"
"""The finding of coordinator mode."""

RULES = {
    "ErrorCode": (
        "GroupMetadataManager.consumerGroupHeartbeat: a request is refused only by its "
        "validation (throwIfConsumerGroupHeartbeatRequestIsInvalid) or by the member checks "
        "(UNKNOWN_MEMBER_ID for a member id the group does not know, FENCED_MEMBER_EPOCH for "
        "an epoch other than the member's or its previous one; KIP-848 Member Epoch)"
    ),
    "MemberEpoch": (
        "CurrentAssignmentBuilder (KIP-848 Reconciliation): a member moves to the target "
        "assignment epoch as soon as it has no partition left to revoke — a joining member "
        "at once, even while partitions of its target are still unreleased — and otherwise "
        "keeps its epoch"
    ),
    "Assignment": (
        "CurrentAssignmentBuilder and GroupMetadataManager.consumerGroupHeartbeat: the "
        "assignment is the member's target without the partitions it must revoke or that "
        "other members have not released yet, and it is sent on a join (MemberEpoch 0), a "
        "full request, or whenever it changed"
    ),
    "HeartbeatIntervalMs": (
        "GroupMetadataManager.consumerGroupHeartbeat: every response carries the group's "
        "group.consumer.heartbeat.interval.ms"
    ),
}
"""Per compared field, the Kafka rule the model follows there."""


class _Targets:
    """Group epoch → member → the target the capture shows for it (module docstring),
    built a response at a time in file order. ``consulted``: the epochs the replay has read
    (a streaming replay reads them before the whole trace is read); ``stale``: the first
    line that changed the target of a consulted epoch (the replay used less than the
    capture shows)."""

    def __init__(self) -> None:
        self.targets: dict[int, dict[str, Assignment]] = {}
        self.closed: set[tuple[int, str]] = set()
        self.current: dict[str, Assignment] = {}
        self.consulted: set[int] = set()
        self.stale: int | None = None

    def add(self, line: int, action: object) -> None:
        if not isinstance(action, DeliverMessage | LoseMessage):
            return  # a lost response still shows what the coordinator answered
        b = action.message.body
        if not isinstance(b, ConsumerGroupHeartbeatResponse):
            return
        if b.error_code is not ErrorCode.NONE or b.member_epoch <= 0 or not b.member_id:
            return
        if b.assignment is not None:
            self.current[b.member_id] = b.assignment
        assignment = self.current.get(b.member_id)  # none sent: the same as before
        if assignment is None:
            return
        key = (b.member_epoch, b.member_id)
        if key in self.closed:
            return
        at = self.targets.setdefault(b.member_epoch, {})
        before = at.get(b.member_id)
        if before is not None and not assignment >= before:
            self.closed.add(key)  # a revocation towards the next target
            return
        if before != assignment and b.member_epoch in self.consulted and self.stale is None:
            self.stale = line
        at[b.member_id] = assignment


def _targets(events: list[tuple[int, int | None, object]]) -> dict[int, dict[str, Assignment]]:
    """Group epoch → member → the target the capture shows for it (module docstring)."""
    built = _Targets()
    for n, _, action in events:
        built.add(n, action)
    return built.targets


def _layout(events: list[tuple[int, int | None, object]], asked: str, header: TraceHeader) -> str:
    """The epoch layout: ``asked``; for ``auto`` the one of the Apache Kafka version the
    header names (``model.versions``: 4.3 and later ``kafka-4.3``, KAFKA-20268), else the
    one the first join shows (a first member at epoch 2: ``kafka-4.3``, whose groups start
    at epoch 1)."""
    if asked != "auto":
        return asked
    rules = _kafka_rules(header)
    if rules is not None:
        return rules.epoch_layout
    for _, _, action in events:
        if isinstance(action, DeliverMessage):
            b = action.message.body
            if isinstance(b, ConsumerGroupHeartbeatResponse) and b.error_code is ErrorCode.NONE:
                return "kafka-4.3" if b.member_epoch == 2 else "kip-848"
    return "kip-848"


def _uncertain(
    fields: list[str], join: bool, guessed: set[tuple[int, str]], epoch: int
) -> list[str]:
    """The differing ``fields`` that depend on a target the capture does not show (some
    member's at the current group epoch): the assignment, and the member epoch unless the
    request was a join (a joining member owns nothing to revoke, so it moves to the target
    epoch whatever its target)."""
    if not any(e == epoch for e, _ in guessed):
        return []
    depends = {"Assignment"} if join else {"Assignment", "MemberEpoch"}
    return [f for f in fields if f in depends]


def _regexes(group: Group) -> frozenset[str]:
    """The regular expressions the group's members subscribe with; an empty one is none
    (``GroupMetadataManager.isNotEmpty``: librdkafka sends ``""``)."""
    return frozenset(r for r in regexes_in_use(group) if r)


def _resolve(group: Group, topics: Mapping[str, TopicMetadata]) -> Group:
    """The coordinator's resolution of the group's regular expressions against the topics
    (``handleRegularExpressionsResult``: the group epoch is bumped when one changed)."""
    used = sorted(_regexes(group))
    resolved = FrozenMap((r, regex_matches(r, topics)) for r in used)
    changed = any(group.resolved_regexes.get(r) != resolved[r] for r in used)
    epoch = group.group_epoch + 1 if changed else group.group_epoch
    return replace(group, resolved_regexes=resolved, group_epoch=epoch)


def _shown(resp: ConsumerGroupHeartbeatResponse, names: Names) -> str:
    parts = [f"ErrorCode {resp.error_code.name} ({int(resp.error_code)})"]
    parts.append(f"MemberEpoch {resp.member_epoch}")
    if resp.assignment is None:
        parts.append("no Assignment")
    else:
        given = ", ".join(names.partition(t, i) for t, i in sorted(resp.assignment))
        parts.append(f"Assignment [{given}]")
    parts.append(f"HeartbeatIntervalMs {resp.heartbeat_interval_ms}")
    return ", ".join(parts)


def _config(
    header: TraceHeader, layout: str, options: TimingOptions, interval: int | None
) -> Config:
    """The replay's config: the rules of the Kafka version the header names
    (``model.versions.kafka_rules``; the newest known one when it names none), with the
    epoch layout and the interval this replay found."""
    rules = _kafka_rules(header)
    topics = tuple(sorted(header.topics.items())) or (("-", 1),)
    return Config(
        name="capture",
        topics=topics,
        clients=(ClientSpec("capture", tuple(n for n, _ in topics)),),
        kafka_version=rules.version if rules is not None else DEFAULT_KAFKA_VERSION,
        epoch_layout=layout,  # type: ignore[arg-type]
        heartbeat_interval_ms=_heartbeat_interval(header, options) or 5000,
        max_partitions_per_topic=max([4, *(n for _, n in topics)]),
        assignment_interval_ms=interval or 0,
        max_assignment_interval_ms=max(15000, interval or 0),
        # Unknown version: no realignment (it shows only after a group emptied).
        realign_empty_group=rules is not None and rules.realign_empty_group,
    )


MAX_REORDERINGS = 8
"""How many other orders of overlapping exchanges a divergence is checked against."""
MAX_MOVES = 16
"""How many exchanges one replay may take out of the proxy's order."""
MAX_REPLAYS = 64
"""How many replays in other orders one validation may make."""


def _swap(
    events: list[tuple[int, int | None, object]], line: int, other: int
) -> tuple[tuple[int, int], ...]:
    """The move that puts the request of ``other`` on the other side of ``line``'s."""
    order = [e[0] for e in events]
    if order.index(other) > order.index(line):
        return ((other, line),)  # ``other`` just before ``line``
    return ((line, other),)  # ``line`` just before ``other``


def _intervals(events: list[tuple[int, int | None, object]]) -> dict[int, tuple[str, int, int]]:
    """Line of each timed heartbeat request → (its client, its ts, its response's ts):
    when the coordinator handled it."""
    pending: dict[tuple[str, int], tuple[int, int]] = {}
    out: dict[int, tuple[str, int, int]] = {}
    for n, ts, action in events:
        if not isinstance(action, DeliverMessage) or ts is None:
            continue
        message = action.message
        key = (message.client, message.connection)
        if isinstance(message.body, ConsumerGroupHeartbeatRequest):
            pending[key] = (n, ts)
        elif isinstance(message.body, ConsumerGroupHeartbeatResponse) and key in pending:
            line, start = pending.pop(key)
            out[line] = (message.client, start, ts)
    return out


def _overlapping(intervals: dict[int, tuple[str, int, int]], line: int) -> list[int]:
    """The lines of other members' heartbeat exchanges that overlap in time the one at
    ``line``: the coordinator may have handled them before or after it."""
    if line not in intervals:
        return []
    client, start, end = intervals[line]
    found = [
        other
        for other, (c, s, e) in intervals.items()
        if c != client and s <= end and start <= e and other != line
    ]
    # Those written after it first (the nearest first): the likeliest to have been
    # handled before it.
    return sorted(o for o in found if o > line) + sorted(
        (o for o in found if o < line), reverse=True
    )


def _join_ranks(events: list[tuple[int, int | None, object]]) -> dict[int, int]:
    """Line of each join request (``MemberEpoch`` 0) → the member epoch its response
    carries (the group's epoch when the coordinator handled it)."""
    pending: dict[tuple[str, int], int] = {}
    ranks: dict[int, int] = {}
    for n, _, action in events:
        if not isinstance(action, DeliverMessage):
            continue
        message = action.message
        key = (message.client, message.connection)
        body = message.body
        if isinstance(body, ConsumerGroupHeartbeatRequest):
            if body.member_epoch == 0:
                pending[key] = n
            else:
                pending.pop(key, None)
        elif isinstance(body, ConsumerGroupHeartbeatResponse) and key in pending:
            ranks[pending.pop(key)] = body.member_epoch
    return ranks


def _join_order(
    events: list[tuple[int, int | None, object]],
    shown: Mapping[int, Mapping[str, Assignment]] | None = None,
) -> dict[int, tuple[int, bool]]:
    """Line of each join request → (the epoch its response carries, whether the capture
    shows its member given no partitions at that epoch): the order in which the
    coordinator handled joins. The group epoch never decreases; among joins answered with
    the same epoch (the gate held the next target back) the one that computed the target
    came first, and the capture shows it in that target with partitions. ``shown``: the
    capture's targets (those of ``events`` when not given)."""
    if shown is None:
        shown = _targets(events)
    joiners = {
        n: a.message.body.member_id
        for n, _, a in events
        if isinstance(a, DeliverMessage)
        and isinstance(a.message.body, ConsumerGroupHeartbeatRequest)
        and a.message.body.member_epoch == 0
    }
    return {
        n: (epoch, not shown.get(epoch, {}).get(joiners.get(n, "")))
        for n, epoch in _join_ranks(events).items()
    }


def _joins_in_epoch_order(
    events: list[tuple[int, int | None, object]],
    rank: Mapping[int, tuple[int, bool]],
    answers: Mapping[int, tuple[int | None, ConsumerGroupHeartbeatResponse]],
) -> list[tuple[int, int | None, object]]:
    """``events`` with each join request (line in ``rank``: the epoch its response
    carries) delayed to just after the last earlier-placed join of a lower epoch, when it
    sits before it and its own response came after that one was forwarded — the group
    epoch never decreases, so that is the order the coordinator took them in. Other events
    keep their order; a join is only ever delayed, never moved before its request."""
    order = list(events)
    position = {e[0]: i for i, e in enumerate(order)}
    by_epoch = sorted(rank, key=lambda line: (rank[line], position[line]))
    for before, line in itertools.pairwise(by_epoch):
        if rank[line] <= rank[before]:
            continue
        at, after = position[line], position[before]
        answered = answers.get(line, (None, None))[0]
        if at > after or answered is None or (order[after][1] or 0) > answered:
            continue
        taken = order.pop(at)
        order.insert(after, taken)  # the list moved left by one: just after ``before``
        position = {e[0]: i for i, e in enumerate(order)}
    return order


def _shows_layout(action: object) -> bool:
    """Whether the event is one :func:`_layout` reads the layout from."""
    return (
        isinstance(action, DeliverMessage)
        and isinstance(action.message.body, ConsumerGroupHeartbeatResponse)
        and action.message.body.error_code is ErrorCode.NONE
    )


def _answers_within(
    events: list[tuple[int, int | None, object]], last: bool
) -> dict[int, tuple[int | None, ConsumerGroupHeartbeatResponse]]:
    """``_answers`` of one segment of a streamed timed trace; :class:`_Fallback` when a
    request in it, in this order, is left awaiting a response and the segment is not the
    ``last`` (the whole replay would pair it with one of a later segment)."""
    pending = 0
    for _, _, action in events:
        if not isinstance(action, DeliverMessage | LoseMessage):
            continue
        m = action.message
        if (
            m.to_coordinator
            and isinstance(action, DeliverMessage)
            and not isinstance(m.body, OffsetCommitRequest)
        ):
            pending += 1
    found = _answers(events)
    if not last and len(answers_any(events, (ConsumerGroupHeartbeatResponse,))) != pending:
        raise _Fallback
    return found


def _answers(
    events: list[tuple[int, int | None, object]],
) -> dict[int, tuple[int | None, ConsumerGroupHeartbeatResponse]]:
    """Request line → the time and body of the captured ConsumerGroupHeartbeat response to
    it (``answers_any``)."""
    found = answers_any(events, (ConsumerGroupHeartbeatResponse,))
    return {
        n: (ts, body)
        for n, (ts, body) in found.items()
        if isinstance(body, ConsumerGroupHeartbeatResponse)
    }


WINDOW = 10_000
"""How many events a streaming replay reads ahead of the one it handles: the capture's
targets of an epoch (the responses at that epoch, shown after the request that computed
it) are read that far ahead. A target the capture changes further on makes the replay
inconclusive (``_Front``), never a verdict on less than the capture shows."""


DECODED = 4096
"""How many decoded lines a streaming replay remembers (``_Front.decoded``)."""
DECODED_LINE = 4096
"""The longest line (characters) it remembers: at most 16 MiB of keys in all."""
MEMO = 4096
"""How many handled requests a replay remembers (``_replay``'s ``memo``)."""
_SEQ = re.compile(r'\{"seq": (?:0|[1-9][0-9]{0,17}), ')
_TS = re.compile(r'"ts": (0|[1-9][0-9]{0,17}), ')
"""A line's ``ts`` just after its ``seq``, when a JSON integer within int64."""
"""A line's beginning up to its ``seq``'s value, when that is a JSON integer the codec
takes (no sign, no leading zero, within int64): the rest of the line alone decides
whether it is well formed and what it records."""


class _Fallback(Exception):
    """The trace needs the replay of the whole decoded trace (a topic created during it;
    timestamps on some events only; a timed trace's order the stream cannot follow, or a
    divergence there that other orders might explain)."""


class _Front:
    """The events of a trace, decoded one line at a time and handed out :data:`WINDOW`
    events behind the line read last; what the replay needs from further on (the
    capture's targets, the topics subscribed by name) is gathered as lines are read.
    Memory: the window, the targets (per group epoch and member) and the members' and
    topics' names — not the events handed out. A timed trace's events are ordered a
    segment at a time (``_timed``, ``_order``). Raises :class:`_Fallback` at a CreateTopic,
    which the streaming replay does not take, at timestamps on some events only, and where
    a timed trace's order is not the whole replay's segment by segment."""

    def __init__(self, header: TraceHeader, lines: Iterator[str], window: int = WINDOW) -> None:
        self.header = header
        self.lines = lines
        self.window = window
        self.buffer: deque[tuple[int, int | None, object]] = deque()
        self.built = _Targets()
        self.wanted: dict[str, int] = {}
        self.events = 0
        self.last_line = 0
        self.line = 1
        self.done = False
        self.last_action: object = None
        self.retained: dict[str, int] = {}
        """What the replay held when it ended, per kind (``_replay``): the requests
        awaiting their responses, the members' last heartbeats, the targets' entries …"""
        self.decoded: dict[str, tuple[int | None, object]] = {}
        """A line's text after its ``seq`` (and its ``ts``, when a plain integer) → its
        ``ts`` and action (a steady group's heartbeats differ only there), at most
        :data:`DECODED` of them."""
        self.peak = 0
        """The most events held at once (the window, or more while the layout is looked
        for)."""
        self.timed: bool | None = None
        """Whether the events have timestamps (the first one decides; a trace that mixes
        them raises :class:`_Fallback`)."""
        self.pending: list[tuple[int, int | None, object]] = []
        """A timed trace's events since the last quiet point, in file order."""
        self.closed: deque[tuple[int, list[tuple[int, int | None, object]]]] = deque()
        """Segments ended by a quiet point, not ordered yet: (events read when it ended,
        its events), ordered once the window past them is read (their joins' order reads
        the capture's targets that far ahead)."""
        self.segments: deque[list[Any]] = deque()
        """Per ordered segment in the buffer or being handed out: [events not handed out
        yet, its answers, its exchanges' intervals]."""
        self.waiting: dict[tuple[str, int, int], int] = {}
        """Requests awaiting their response per connection (``answers_any``'s queues)."""
        self.in_flight: set[tuple[str, int]] = set()
        """Heartbeat requests awaiting their response (``_intervals``'s and
        ``_join_ranks``'s pending)."""
        self.last_ts = 0
        """The latest timestamp read."""
        self.filed = _Targets()
        """A timed trace's targets built in file order (``_join_order``'s); ``built`` is
        then built in the replay's order, as segments are ordered."""
        self.unordered = 0
        """How many events the closed segments hold."""
        self.max_rank: tuple[int, bool] | None = None
        """The highest join rank (``_join_order``) of the segments ordered so far."""

    def _read(self) -> bool:
        """Read and decode the next event into the buffer; False at the end."""
        for text in self.lines:
            self.line += 1
            if not text.strip():
                continue
            n = self.line
            seq = _SEQ.match(text) if len(text) <= DECODED_LINE else None
            stamp = _TS.match(text, seq.end()) if seq is not None else None
            # The key leaves out a timestamp the line states as a plain integer (a timed
            # trace's lines differ there too); the rest decides what the line records.
            key = (
                text[stamp.end() :]
                if stamp is not None
                else (text[seq.end() :] if seq is not None else None)
            )
            known = self.decoded.get(key) if key is not None else None
            action: object
            if known is None:
                event = parse_event(text, n)
                action = decode_action(event, text, n, self.header)
                if isinstance(action, CreateTopic):
                    raise _Fallback
                ts = event.ts
                if key is not None and (
                    stamp is None or (str(ts) == stamp.group(1) and '"ts"' not in key)
                ):
                    if len(self.decoded) >= DECODED:
                        self.decoded.clear()
                    self.decoded[key] = (ts, action)
            else:
                ts, action = known
                if stamp is not None:
                    ts = int(stamp.group(1))
            if self.timed is None:
                self.timed = ts is not None
            if self.timed != (ts is not None):
                raise _Fallback  # some events timed, some not: replayed whole
            (self.filed if ts is not None else self.built).add(n, action)
            if isinstance(action, DeliverMessage):
                body = action.message.body
                if isinstance(body, ConsumerGroupHeartbeatRequest) and body.subscribed_topic_names:
                    for topic in body.subscribed_topic_names:
                        self.wanted.setdefault(topic, n)
            self.events += 1
            self.last_line = n
            self.last_action = action
            if ts is None:
                self.buffer.append((n, None, action))
            else:
                self._timed(n, ts, action)
            self.peak = max(self.peak, len(self.buffer) + self.unordered + len(self.pending))
            return True
        self.done = True
        if self.timed:
            self._close()
            self._order(everything=True)
        return False

    def _timed(self, n: int, ts: int, action: object) -> None:
        """Take a timed event: a quiet point before it (no request awaiting its response,
        its ts after every earlier one) ends the segment, which no reordering of the whole
        replay crosses (``_replay``: the sort by ts, the joins' order, the answers, the
        overlapping exchanges all stay within it)."""
        if self.pending and not self.waiting and not self.in_flight and ts > self.last_ts:
            self._close()
        self.last_ts = max(self.last_ts, ts)
        if isinstance(action, DeliverMessage | LoseMessage):
            m = action.message
            body = m.body
            key = (m.client, m.incarnation, m.connection)
            if m.to_coordinator:
                if isinstance(action, DeliverMessage) and not isinstance(body, OffsetCommitRequest):
                    self.waiting[key] = self.waiting.get(key, 0) + 1
            elif isinstance(body, ConsumerGroupHeartbeatResponse) and self.waiting.get(key):
                self.waiting[key] -= 1
                if not self.waiting[key]:
                    del self.waiting[key]
            if isinstance(action, DeliverMessage):
                short = (m.client, m.connection)
                if isinstance(body, ConsumerGroupHeartbeatRequest):
                    self.in_flight.add(short)
                elif isinstance(body, ConsumerGroupHeartbeatResponse):
                    self.in_flight.discard(short)
        self.pending.append((n, ts, action))
        self._order(everything=False)

    def _close(self) -> None:
        if self.pending:
            self.closed.append((self.events, self.pending))
            self.unordered += len(self.pending)
            self.pending = []

    def _order(self, *, everything: bool) -> None:
        """Order the closed segments the window has been read past (all of them at the
        end) as the whole replay orders the trace, and put them in the buffer."""
        while self.closed and (everything or self.events - self.closed[0][0] >= self.window):
            _, events = self.closed.popleft()
            self.unordered -= len(events)
            # The targets read now, in file order as the whole replay's join order reads
            # them: one changed later makes the stream give way to the whole replay.
            self.filed.consulted.update(_join_ranks(events).values())
            rank = _join_order(events, shown=self.filed.targets)
            if rank:
                # The whole replay pairs joins across the trace in the order of their
                # ranks: the same pairs only while no segment's rank goes below an
                # earlier one's.
                if self.max_rank is not None and min(rank.values()) < self.max_rank:
                    raise _Fallback
                self.max_rank = max(rank.values())
            intervals = _intervals(events)  # in file order, as the whole replay's
            events.sort(key=lambda e: (e[1], rank.get(e[0], (0, False)), e[0]))
            last = self.done and not self.closed  # a request may await its answer
            sorted_answers = _answers_within(events, last)
            events = _joins_in_epoch_order(events, rank, sorted_answers)
            answers = _answers_within(events, last)
            for n, _, action in events:
                self.built.add(n, action)  # in the replay's order, as the whole replay's
            self.segments.append([len(events), answers, intervals])
            self.buffer.extend(events)

    def answer(self, line: int) -> tuple[int | None, ConsumerGroupHeartbeatResponse] | None:
        """The captured response to the request at ``line`` (a timed trace's; it is in
        the request's segment)."""
        for _, answers, _ in self.segments:
            if line in answers:
                found: tuple[int | None, ConsumerGroupHeartbeatResponse] = answers[line]
                return found
        return None

    def overlapping(self, line: int) -> list[int]:
        """``_overlapping`` of the request at ``line``, within its segment."""
        for _, _, intervals in self.segments:
            if line in intervals:
                return _overlapping(intervals, line)
        return []

    def __iter__(self) -> Iterator[tuple[int, int | None, object]]:
        while True:
            while not self.done and len(self.buffer) <= self.window:
                self._read()
            if self.segments and self.segments[0][0] == 0:
                self.segments.popleft()  # handed out, and its last event handled
            if not self.buffer:
                return
            if self.segments:
                self.segments[0][0] -= 1
            yield self.buffer.popleft()

    def until(self, found: Callable[[object], bool]) -> list[tuple[int, int | None, object]]:
        """The events read so far, read on until one is ``found`` or the trace ends."""
        if self.timed:
            # The first one in the replay's order: the responses keep their (ts, line)
            # order, and a segment is read whole before it is known which comes first.
            while not any(found(a) for _, _, a in self.buffer) and not any(
                found(a) for _, seg in self.closed for _, _, a in seg
            ):
                if not self._read():
                    break
            held = [*self.buffer, *(e for _, seg in self.closed for e in seg), *self.pending]
            return sorted(held, key=lambda e: (e[1] or 0, e[0]))
        if not any(found(a) for _, _, a in self.buffer):
            while self._read() and not found(self.last_action):
                pass
        return list(self.buffer)

    def drain(self) -> None:
        """Read (and check) the rest of the trace, handing nothing out."""
        self.buffer.clear()
        self.segments.clear()
        while self._read():
            self.buffer.clear()
            self.segments.clear()
        self.buffer.clear()
        self.segments.clear()


def _copied(lines: Iterator[str], spool: IO[bytes]) -> Iterator[str]:
    """The lines, each also written to ``spool`` as it is read."""
    for text in lines:
        spool.write(text.encode("utf-8", "surrogatepass") + b"\n")
        yield text


def _again(spool: IO[bytes], rest: Iterator[str]) -> Iterator[str]:
    """The lines written to ``spool``, then those not read yet."""
    spool.seek(0)
    for raw in spool:
        yield raw[:-1].decode("utf-8", "surrogatepass")
    yield from rest


def validate_coordinator(
    file: str,
    lines: Iterable[str],
    timing: TimingOptions | None = None,
    epoch_layout: str = "auto",
    all_divergences: bool = False,
    assignment_interval_ms: int | None = None,
    moves: tuple[tuple[int, int], ...] = (),
    _tries: list[int] | None = None,
    _reached: list[int] | None = None,
    _whole: bool = False,
) -> Report:
    """Replay a consumer capture's requests through the model's coordinator; the first
    response that differs is a :data:`DIVERGENCE` finding (``all_divergences``: the replay
    goes on, and later differences are notes — the states may have drifted apart).

    A divergence at an exchange that overlaps in time other members' exchanges is claimed
    only if every order of them the timestamps admit diverges too: the replay is run again
    with each overlapping request moved to the other side of the diverging one
    (``moves``: (line, before line) pairs applied after the time order), and if one of
    those gets further the replay goes on in that order (a capture conforms when some
    order the timestamps admit agrees), with a note; at most :data:`MAX_MOVES` moves and
    :data:`MAX_REPLAYS` replays in all, beyond which a divergence there is inconclusive.

    A consumer trace is streamed: memory bounded by :data:`WINDOW` events, not by the
    trace's length (``_stream``) — one with timestamps cut at its quiet points, which no
    reordering crosses. It is replayed whole (from a copy of its lines) when the stream
    cannot follow that replay exactly, above all at a divergence where other orders are
    tried: they replay it from its first line."""
    report = Report(file, "coordinator")
    if not moves and _tries is None and _reached is None and not _whole:
        # Streamed when it can be (``_stream``); else replayed whole, from a copy of the
        # lines read so far (on disk: a sequence of lines is read again as it is).
        source = iter(lines)
        with tempfile.TemporaryFile() as spool:
            first = source if isinstance(lines, Sequence) else _copied(source, spool)
            try:
                streamed = _stream(
                    file, first, timing, epoch_layout, all_divergences, assignment_interval_ms
                )
            except TraceError as e:
                report.error = f"{file}:{e}"
                return report
            except _Fallback:
                streamed = None
            if streamed is not None:
                return streamed
            return validate_coordinator(
                file,
                lines if isinstance(lines, Sequence) else _again(spool, source),
                timing,
                epoch_layout,
                all_divergences,
                assignment_interval_ms,
                _whole=True,
            )
    try:
        # Decoded once: equal events (a steady group's heartbeats) share one object, and
        # the replays in other orders reuse them rather than the file's text.
        header, events = read_trace(lines, shared=True)
    except TraceError as e:
        report.error = f"{file}:{e}"
        return report
    report.events = len(events)
    return COORDINATOR.named(header.protocol).replay(
        file,
        header,
        events,
        report,
        timing,
        all_divergences,
        epoch_layout=epoch_layout,
        assignment_interval_ms=assignment_interval_ms,
        moves=moves,
        _tries=_tries,
        _reached=_reached,
    )


def _replay_consumer(
    file: str,
    header: TraceHeader,
    events: Events,
    report: Report,
    timing: TimingOptions | None,
    all_divergences: bool,
    *,
    epoch_layout: str,
    assignment_interval_ms: int | None,
    moves: tuple[tuple[int, int], ...],
    _tries: list[int] | None,
    _reached: list[int] | None,
) -> Report:
    """The consumer family's coordinator replay of a decoded trace
    (``groupcheck.families.COORDINATOR``): what the replay needs that the trace does not
    give, else :func:`_replay`."""
    missing = _missing(header, events, timing or TimingOptions())
    if missing:
        report.reasons.append(
            "the replay needs what the trace does not give: " + "; ".join(missing)
        )
        return report
    return _replay(
        file,
        header,
        events,
        report,
        timing=timing,
        epoch_layout=epoch_layout,
        all_divergences=all_divergences,
        assignment_interval_ms=assignment_interval_ms,
        moves=moves,
        _tries=_tries,
        _reached=_reached,
    )


def _stream(
    file: str,
    lines: Iterator[str],
    timing: TimingOptions | None,
    epoch_layout: str,
    all_divergences: bool,
    assignment_interval_ms: int | None,
    window: int = WINDOW,
    fronts: list[_Front] | None = None,
) -> Report | None:
    """The replay of a consumer trace, streamed (``_Front``): memory bounded by the
    window, not by the trace's length. Without timestamps no two exchanges are known to
    overlap, so no other order is ever tried and no event is moved; with them the events
    are ordered a segment at a time, between quiet points, as the whole replay orders
    them. The replay is the one of the whole decoded trace, with the capture's targets
    read :data:`WINDOW` events ahead. None for a classic trace (the caller replays it
    whole). ``_Fallback`` where the stream cannot follow the whole replay (``_Front``; a
    timed trace's divergence that other orders might explain; a timed trace's target
    changed after the replay took it). ``window``: how far ahead it reads; ``fronts``
    receives the reader, for a look at what it held."""
    first = next(lines, None)
    if first is None:
        raise TraceError(1, 1, "empty trace: no header line")
    header = parse_header(first)
    if not COORDINATOR.named(header.protocol).streamed:
        return None
    options = timing or TimingOptions()
    report = Report(file, "coordinator")
    front = _Front(header, lines, window)
    if fronts is not None:  # for a look at what it held (tests)
        fronts.append(front)
    missing_interval = _heartbeat_interval(header, options) is None
    if not missing_interval:
        try:
            _replay(
                file,
                header,
                [],
                report,
                timing=timing,
                epoch_layout=epoch_layout,
                all_divergences=all_divergences,
                assignment_interval_ms=assignment_interval_ms,
                _front=front,
            )
        except (TraceError, _Fallback):
            raise
        except Exception:
            front.drain()
            if not _missing_topics(header, front.wanted, set()):
                raise  # a fault of the replay, not a trace it cannot take
    front.drain()
    missing = _missing_interval(header, options) + _missing_topics(header, front.wanted, set())
    if missing:
        report = Report(file, "coordinator", events=front.events)
        report.reasons.append(
            "the replay needs what the trace does not give: " + "; ".join(missing)
        )
        return report
    report.events = front.events
    if front.timed and (front.built.stale is not None or front.filed.stale is not None):
        raise _Fallback  # the whole replay reads every target whole: the same verdict
    if front.built.stale is not None:
        # The replay took a target of an epoch before the capture showed all of it: what
        # it found from there on is no verdict.
        report.reasons.append(
            f"line {front.built.stale} shows more of a target the replay had already "
            f"taken, more than {WINDOW} events after the request that computed it "
            "(the streaming replay reads that far ahead): no verdict from there on"
        )
        for finding in report.violations:
            report.reasons.append(
                f"line {finding.line}: {finding.message} (a divergence after a target the "
                "replay could not see whole: no verdict)"
            )
        report.violations.clear()
    return report


def _missing(header: TraceHeader, events: Events, options: TimingOptions) -> list[str]:
    """What the replay of a consumer trace needs and neither the header nor an option
    gives: the heartbeat interval (every response's ``HeartbeatIntervalMs`` is compared
    with it), and the partition count of each topic a request subscribes to by name."""
    created = {a.topic for _, _, a in events if isinstance(a, CreateTopic)}
    wanted: dict[str, int] = {}
    for n, _, action in events:
        if isinstance(action, DeliverMessage):
            body = action.message.body
            if isinstance(body, ConsumerGroupHeartbeatRequest) and body.subscribed_topic_names:
                for topic in body.subscribed_topic_names:
                    wanted.setdefault(topic, n)
    return _missing_interval(header, options) + _missing_topics(header, wanted, created)


def _missing_interval(header: TraceHeader, options: TimingOptions) -> list[str]:
    if _heartbeat_interval(header, options) is None:
        return [
            "the heartbeat interval (the header's heartbeat_interval_ms, or "
            "--heartbeat-interval-ms)"
        ]
    return []


def _missing_topics(header: TraceHeader, wanted: Mapping[str, int], created: set[str]) -> list[str]:
    """The topics subscribed by name (first line of each in ``wanted``) whose partition
    count neither the header nor a CreateTopic event (``created``) gives."""
    known = set(header.topics) | created
    names = {v: k for k, v in (header.topic_names or {}).items()}
    unknown = sorted(
        (n, t) for t, n in wanted.items() if t not in known and names.get(t, t) not in known
    )
    if not unknown:
        return []
    shown = ", ".join(f"{t!r:.60} (line {n})" for n, t in unknown[:5])
    more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
    return [
        f"the partition count of the subscribed topics {shown}{more} (the header's "
        "topics, or a CreateTopic event)"
    ]


def _heartbeat_interval(header: TraceHeader, options: TimingOptions) -> int | None:
    """The heartbeat interval the coordinator asks for: the option, the header's, a model
    trace's ``settings``; None when unknown."""
    settings = header.settings or {}
    from_settings = settings.get("heartbeat_interval_ms")
    return (
        options.heartbeat_interval_ms
        or header.heartbeat_interval_ms
        or (from_settings if isinstance(from_settings, int) else None)
    )


def _replay(
    file: str,
    header: TraceHeader,
    events: Events,
    report: Report,
    timing: TimingOptions | None = None,
    epoch_layout: str = "auto",
    all_divergences: bool = False,
    assignment_interval_ms: int | None = None,
    moves: tuple[tuple[int, int], ...] = (),
    _tries: list[int] | None = None,
    _reached: list[int] | None = None,
    _explore: bool = True,
    _front: _Front | None = None,
) -> Report:
    """The replay of a consumer trace's decoded ``events`` (:func:`validate_coordinator`);
    ``_explore`` False: no other order is tried at a divergence (a probe);
    ``_tries`` counts the replays in other orders made so far, ``_reached`` receives the
    line where this order stopped (past every line when it did not); ``_front``: the
    events streamed from it (``events`` is then empty, and has no timestamps to order
    by), the capture's targets read ahead."""
    tries = _tries if _tries is not None else [0]
    options = timing or TimingOptions()
    trace = (header, tuple(events))
    intervals = _intervals(events)
    if events and all(ts is not None for _, ts, _ in events):
        # The proxy writes an exchange when its response arrives, so two members' requests
        # in flight at once may be written in the other order than the coordinator took
        # them; each event's ts is when the proxy forwarded it (to the broker, for a
        # request), which orders them as the broker received them. A connection's events
        # keep their order (a response's ts is not before its request's; ties go by line).
        # Joins forwarded in the same millisecond were taken in an order the timestamps
        # cannot tell; the group epoch never decreases, so the join answered with the
        # lower epoch was handled first (against Kafka 4.4: four librdkafka members'
        # joins in one millisecond, answered with epochs 7, 9, 6 and 8 in file order).
        # Joins answered with the same epoch came while the gate held the target back,
        # but the one that computed it came first: the member the capture shows in the
        # target of that epoch with partitions (six joins in one burst, all answered 6,
        # against Kafka 4.4: the second in the file is the one given partitions at 6).
        rank = _join_order(events)
        events.sort(key=lambda e: (e[1], rank.get(e[0], (0, False)), e[0]))
        # Beyond one millisecond too: the broker takes requests of different connections in
        # no fixed order, so a join whose response carries a higher epoch than a join
        # forwarded after it was handled after that one (against Kafka 4.4: m18's join
        # forwarded 1-2 ms before three others, all answered 38 ms later, with epoch 22
        # after their 19, 20 and 21). It is moved to just after it, when that is still
        # before its own response.
        events = _joins_in_epoch_order(events, rank, _answers(events))
    for moved, before in moves:
        taken = next(e for e in events if e[0] == moved)
        events.remove(taken)
        events.insert(next(i for i, e in enumerate(events) if e[0] == before), taken)
    names = Names(header)
    if _front is None:
        layout = _layout(events, epoch_layout, header)
        targets = _targets(events)
    else:
        ahead = _front
        if epoch_layout == "auto" and _kafka_rules(header) is None:
            layout = _layout(ahead.until(_shows_layout), epoch_layout, header)
        else:
            layout = _layout([], epoch_layout, header)
        targets = ahead.built.targets

    guessed: set[tuple[int, str]] = set()
    """(group epoch, member) whose target the capture does not show: the previous one kept."""
    computing = [False]
    """Whether the request being handled computed a new target."""

    def captured_target(group: Group, topics: Mapping[str, TopicMetadata], assignor: str) -> Group:
        computing[0] = True
        if _front is not None:
            _front.built.consulted.add(group.group_epoch)
        shown = targets.get(group.group_epoch, {})
        guessed.update((group.group_epoch, m) for m in group.members if m not in shown)
        # A target the capture does not show: the model's own assignor's (still a guess,
        # so a difference that depends on it gives no verdict).
        own = compute_target_assignment(group, topics, assignor).target_assignment
        target = FrozenMap(
            (m, shown[m] if m in shown else own.get(m, frozenset())) for m in group.members
        )
        return replace(group, assignment_epoch=group.group_epoch, target_assignment=target)

    interval, interval_source = _interval(header, assignment_interval_ms)
    answers = _answers(events)
    config = _config(header, layout, options, interval)
    config = replace(config, rules=replace(config.rules, compute_target_assignment=captured_target))
    start = 1 if layout == "kafka-4.3" else 0
    group = Group(start, start, FrozenMap(), FrozenMap(), FrozenMap(), FrozenMap())
    ids = {name: topic_id for topic_id, name in (header.topic_names or {}).items()}
    created = {a.topic for _, _, a in events if isinstance(a, CreateTopic)}
    counts = dict(header.topics)
    topics = FrozenMap(
        (name, TopicMetadata(ids.get(name, name), count))
        for name, count in counts.items()
        if name not in created  # a topic created during the capture is absent at first
    )
    metadata_at: tuple[int | None, str] | None = None
    """The time and topic of the last metadata event (one image: one bump)."""
    regex_refreshed: tuple[int, int] | None = None
    """When the coordinator last resolved the group's regular expressions: between two ts."""
    pending_resolution: tuple[int, int] | None = None
    """A resolution that may have started (the 10 s gate is ambiguous on the capture's
    clock): the next request decides, by the captured response."""
    new_topics = False
    """A topic was created since then (``lastMetadataImageWithNewTopics``)."""
    resolutions = 0
    resolved = options.resolve(header)
    session = resolved.session_timeout_ms
    last_seen: dict[str, int] = {}
    # Per connection (client, incarnation, connection), the model's responses not yet
    # delivered, oldest first: a connection answers its requests in order.
    expected: dict[tuple[str, int, int], deque[tuple[int, ConsumerGroupHeartbeatResponse]]] = {}
    commits = compared = expiries = 0
    joins: dict[int, bool] = {}  # request line → whether it is a join (MemberEpoch 0)
    last: tuple[int, int] | None = None
    """The last computation of a target: between its request's and its response's ts."""
    deferrable: list[int] = []
    """The interval unknown: request lines whose new target a positive interval could
    have deferred (a target had been computed before)."""
    deferred = 0

    memo: list[Any] = [None, {}]
    """The topics, and (group, request) → (group, response) of requests handled with
    them that computed no target: handling is a pure function of those."""

    def handle(
        group: Group, req: ConsumerGroupHeartbeatRequest
    ) -> tuple[Group, ConsumerGroupHeartbeatResponse, bool, set[tuple[int, str]]]:
        if memo[0] is not topics:
            memo[0], memo[1] = topics, {}
        known = memo[1].get((group, req))
        if known is not None:
            return known[0], known[1], False, set()
        computing[0] = False
        before = set(guessed)
        out, response = handle_consumer_group_heartbeat(group, topics, req, config)
        added = guessed - before
        guessed.difference_update(added)
        if not computing[0]:
            # No target computed: the answer is the model's alone, the same for the same
            # group and request (a steady group's heartbeats).
            if len(memo[1]) >= MEMO:
                memo[1].clear()
            memo[1][(group, req)] = (out, response)
        return out, response, computing[0], added

    def batched(
        group: Group,
        body: ConsumerGroupHeartbeatRequest,
        n: int,
        ts: int | None,
        answered: tuple[int | None, ConsumerGroupHeartbeatResponse] | None,
    ) -> tuple[tuple[Group, ConsumerGroupHeartbeatResponse, bool, set[tuple[int, str]]], str, bool]:
        """Handle a request behind KIP-1263's gate on the capture's clock; an ambiguous
        gate is decided by the captured response when only one outcome agrees with it.
        Also says whether the gate held a new target back."""
        gate = _gate(group, interval, last, ts, answered[0] if answered else None)
        if gate != "ambiguous":
            if gate == "elapsed":
                group = replace(group, assignment_interval_elapsed=True)
            return handle(group, body), gate, gate == "waiting"
        assert last is not None
        assert ts is not None
        assert interval is not None
        yes = handle(replace(group, assignment_interval_elapsed=True), body)
        no = handle(group, body)
        agree = [
            branch
            for branch in (yes, no)
            if answered is not None and not _differences(branch[1], answered[1])
        ]
        if yes[:3] == no[:3]:
            chosen = no
        elif len(agree) == 1:
            chosen = agree[0]
            report.notes.append(
                f"{file}: line {n}: the timestamps cannot tell whether the assignment "
                f"interval ({interval} ms) had passed since the last target computation "
                f"(between ts {last[0]} and {last[1]}; this request handled from ts "
                f"{ts}): the captured response agrees with it having "
                + ("passed" if chosen is yes else "not passed")
            )
        else:  # neither (or both): the rule on the requests' times
            chosen = yes if ts >= last[0] + interval else no
        return chosen, gate, chosen is no

    diverged = False
    later: list[str] = []
    changed: set[int] = set()
    """Request lines whose handling moved the group epoch or the assignment epoch."""
    released: dict[int, frozenset[tuple[str, int]]] = {}
    """Request line → the partitions its member gave up in it."""
    withheld: dict[int, set[str]] = {}
    """Request line → the members that held what its member's target had and it was not
    given (their releases decide it)."""
    stop: int | None = None
    """The line where the replay first diverged or could judge no further."""
    order = intervals.keys()
    """Whether two exchanges may have been taken in the other order: then what each
    request released, withheld or moved is kept for choosing which orders to try."""
    for n, ts, action in events if _front is None else _front:
        if isinstance(action, AssignmentIntervalElapses):  # a model trace's logical time
            group = replace(group, assignment_interval_elapsed=True)
            continue
        if isinstance(action, AddPartitions | CreateTopic):
            # An administrator's change, at the time the runner saw it done: the coordinator
            # learns it from the metadata image (onMetadataUpdate) and bumps the group epoch
            # of a group subscribed to the topic at its next heartbeat (the metadata hash,
            # KIP-1101); events of one topic at one ts are one image, one bump.
            name = action.topic
            same = ts is not None and metadata_at == (ts, name)
            if isinstance(action, CreateTopic):
                count = action.partitions or counts.get(name, 1)  # the event's, when given
                meta = TopicMetadata(ids.get(name, name), count)
                new_topics = True
            else:
                old = topics[name] if name in topics else TopicMetadata(ids.get(name, name), 0)
                meta = replace(old, partitions=old.partitions + 1)
            topics = FrozenMap({**topics.as_dict(), name: meta})
            if not same:
                group = on_metadata_change(group, name)
            metadata_at = (ts, name)
            continue
        if not isinstance(
            action, DeliverMessage | LoseMessage | SessionTimeout | RebalanceTimeout
        ) and not hasattr(action, "client"):
            # A step of the coordinator's own (a deleted or recreated topic, a failover, an
            # offloaded assignor run …): a model trace's, which this replay does not take.
            report.reasons.append(
                f"line {n}: {type(action).__name__} changes the coordinator's state "
                "and is not replayed: no verdict from there on"
            )
            stop = n
            break
        if isinstance(action, SessionTimeout):  # a model trace shows its timers
            group = session_timeout(group, action.member_id, config)
            expiries += 1
        elif isinstance(action, RebalanceTimeout):
            group = rebalance_timeout(group, action.member_id, config)
            expiries += 1
        if isinstance(action, LoseMessage) and isinstance(
            action.message.body, ConsumerGroupHeartbeatResponse
        ):
            lost = action.message
            queue = expected.get((lost.client, lost.incarnation, lost.connection))
            if queue:
                joins.pop(queue.popleft()[0], None)  # the oldest response there is lost
        if not isinstance(action, DeliverMessage):
            continue
        m, body = action.message, action.message.body
        if isinstance(body, OffsetCommitRequest):
            commits += 1
        if isinstance(body, ConsumerGroupHeartbeatRequest):
            if session is not None and ts is not None:
                for member_id, seen in sorted(last_seen.items()):
                    if ts > seen + session and member_id in group.members:
                        group = session_timeout(group, member_id, config)
                        expiries += 1
                        del last_seen[member_id]
            if not group.members and config.realign_empty_group:
                last = None  # KAFKA-20442: an emptied group's AssignmentTimestamp is 0
            answered = answers.get(n) if _front is None else _front.answer(n)
            candidates = [(group, False)]
            if pending_resolution is not None:  # resolved before this request, or not
                candidates.insert(0, (_resolve(group, topics), True))
            outcomes = [(batched(g, body, n, ts, answered), r) for g, r in candidates]
            pick = outcomes[-1]
            if len(outcomes) == 2 and outcomes[0][0][0][:3] != outcomes[1][0][0][:3]:
                agree = [
                    o
                    for o in outcomes
                    if answered is not None and not _differences(o[0][0][1], answered[1])
                ]
                assert pending_resolution is not None
                if len(agree) == 1:
                    pick = agree[0]
                    report.notes.append(
                        f"{file}: line {n}: the timestamps cannot tell whether the previous "
                        "request (handled between ts "
                        f"{pending_resolution[0]} and {pending_resolution[1]}) came 10 s after "
                        "the last regular-expression resolution and started another: the "
                        "captured response agrees with it having "
                        + ("landed before this request" if pick[1] else "not started yet")
                    )
            (chosen, _, waited), resolved_now = pick
            if resolved_now:
                assert pending_resolution is not None
                regex_refreshed, new_topics = pending_resolution, False
                resolutions += 1
            pending_resolution = None
            before_epochs = (group.group_epoch, group.assignment_epoch)
            had = group.members.get(body.member_id)
            group, response, computed, added = chosen
            now = group.members.get(body.member_id)
            if had is not None and order:  # what this request released (freed for others)
                gone = had.assigned_partitions | had.partitions_pending_revocation
                if now is not None:
                    gone = gone - now.assigned_partitions - now.partitions_pending_revocation
                if gone:
                    released[n] = gone
            if (group.group_epoch, group.assignment_epoch) != before_epochs and order:
                changed.add(n)
            member = group.members.get(body.member_id)
            if member is not None and order:  # who holds what its target has that it was not given
                missing = (
                    group.target_assignment.get(body.member_id, frozenset())
                    - member.assigned_partitions
                )
                if missing:
                    withheld[n] = {
                        mid
                        for mid, other in group.members.items()
                        if mid != body.member_id
                        and missing
                        & (other.assigned_partitions | other.partitions_pending_revocation)
                    }
            guessed.update(added)
            if ts is not None and _regexes(group):
                # GroupMetadataManager.maybeUpdateRegularExpressions: a resolution starts
                # when none started in the last 10 s (REGEX_BATCH_REFRESH_MIN_INTERVAL_MS)
                # and a regex is new or gone, a topic was created since the last one, or
                # the refresh interval passed; it runs on the executor, and its result
                # (handleRegularExpressionsResult: a bump when it changed) lands before the
                # next request here. Its time is known to lie between this request's ts and
                # its response's.
                used = _regexes(group)
                until = answered[0] if answered and answered[0] is not None else ts
                if (
                    regex_refreshed is None
                    or ts > regex_refreshed[1] + REGEX_BATCH_REFRESH_MIN_INTERVAL_MS
                ):
                    due = "due"
                elif until <= regex_refreshed[0] + REGEX_BATCH_REFRESH_MIN_INTERVAL_MS:
                    due = "not"
                else:
                    due = "ambiguous"
                wanted = (
                    frozenset(group.resolved_regexes) != used
                    or new_topics
                    or regex_refreshed is None
                    or ts > regex_refreshed[0] + REGEX_REFRESH_INTERVAL_MS
                )
                if wanted and due == "due":
                    group = _resolve(group, topics)
                    regex_refreshed, new_topics = (ts, until), False
                    resolutions += 1
                elif wanted and due == "ambiguous":
                    pending_resolution = (ts, until)
            if computed:
                if last is not None and interval is None:
                    deferrable.append(n)
                if ts is not None:
                    last = (ts, answered[0] if answered and answered[0] is not None else ts)
            elif waited:
                deferred += group.group_epoch > group.assignment_epoch
            joins[n] = body.member_epoch == 0
            expected.setdefault((m.client, m.incarnation, m.connection), deque()).append(
                (n, response)
            )
            if ts is not None and response.member_id:
                last_seen[response.member_id] = ts
        elif isinstance(body, ConsumerGroupHeartbeatResponse) and expected.get(
            (m.client, m.incarnation, m.connection)
        ):
            request_line, model = expected[(m.client, m.incarnation, m.connection)].popleft()
            compared += 1
            fields = _differences(model, body)
            join = joins.pop(request_line)
            if diverged:
                if fields:  # --all-divergences: what follows, for what it is worth
                    later.append(
                        f"line {n} ({names.member(body.member_id or m.client)}): "
                        f"{', '.join(fields)}: the model's coordinator answers "
                        f"{_shown(model, names)}; the capture has {_shown(body, names)}"
                    )
                continue
            uncertain = _uncertain(fields, join, guessed, group.assignment_epoch)
            if uncertain:
                unsure = [
                    names.member(g) for e, g in sorted(guessed) if e == group.assignment_epoch
                ]
                report.reasons.append(
                    f"the response at line {n} differs from the model's in "
                    f"{', '.join(uncertain)}, which depend on targets the capture does not "
                    f"show at group epoch {group.assignment_epoch} (of "
                    f"{', '.join(unsure)}; the replay took the model's assignor's)"
                )
                fields = [f for f in fields if f not in uncertain]
                if not fields:
                    report.reasons[-1] += ": no verdict from there on"
                    diverged = True
                    stop = n if stop is None else stop
            unknown = [f for f in fields if f in ("MemberEpoch", "Assignment")]
            if fields and unknown and deferrable and interval is None:
                report.reasons.append(
                    f"the response at line {n} differs from the model's in {', '.join(fields)}; "
                    "the coordinator's assignment interval (KIP-1263 batching, KAFKA-20291; "
                    "not on the wire) is unknown and the model computed new targets at once "
                    f"(at the requests of line {', '.join(map(str, deferrable[:5]))}"
                    f"{' …' if len(deferrable) > 5 else ''}), which a coordinator with a "
                    "positive interval defers to the first heartbeat after it (give the "
                    "header's assignment_interval_ms or --assignment-interval-ms): no "
                    "verdict from there on"
                )
                fields = []
                diverged = True
                stop = n if stop is None else stop
            if _front is None:
                overlapping = _overlapping(intervals, request_line) if fields else []
            elif fields and _front.overlapping(request_line):
                # Other orders would be tried, each replayed from the first line: the
                # streaming replay does not keep the lines for that.
                raise _Fallback
            else:
                overlapping = []
            # First those of the members still holding a partition the capture shows given
            # (its release may have come first), then those that moved the group's epochs:
            # their order is what decides.
            holders = withheld.get(request_line, set())
            # ... and those that released what the model gave and Kafka did not (their
            # release may have come after).
            extra = (
                (model.assignment or frozenset()) - (body.assignment or frozenset())
                if "Assignment" in fields
                else frozenset()
            )
            overlapping.sort(
                key=lambda o: (
                    intervals[o][0] not in holders and not (released.get(o, frozenset()) & extra),
                    o not in changed,
                )
            )
            if overlapping and (len(moves) >= MAX_MOVES or tries[0] >= MAX_REPLAYS):
                report.reasons.append(
                    f"the response at line {n} differs from the model's in {', '.join(fields)}; "
                    f"its exchange (line {request_line}) overlaps in time "
                    f"{len(overlapping)} other member exchange(s), and the replay has spent "
                    f"its budget of other orders ({MAX_MOVES} moves, {MAX_REPLAYS} replays): "
                    "no verdict from there on"
                )
                fields = []
                diverged = True
                stop = n if stop is None else stop
                overlapping = []
            # Each other order is first replayed up to its own first divergence (no further
            # reordering), and the one that gets furthest is then replayed in full.
            best: tuple[int, tuple[tuple[int, int], ...], int] | None = None
            for o in overlapping[:MAX_REORDERINGS] if _explore else ():
                if tries[0] >= MAX_REPLAYS:
                    break
                if any({a, b} == {request_line, o} for a, b in moves):
                    continue  # that pair was taken out of order already
                tries[0] += 1
                reached: list[int] = []
                tried = (*moves, *_swap(events, request_line, o))
                _replay(
                    file,
                    header,
                    list(trace[1]),
                    Report(file, "coordinator"),
                    timing=timing,
                    epoch_layout=epoch_layout,
                    all_divergences=False,
                    assignment_interval_ms=assignment_interval_ms,
                    moves=tried,
                    _tries=tries,
                    _reached=reached,
                    _explore=False,
                )
                if reached and reached[-1] > n and (best is None or reached[-1] > best[0]):
                    best = (reached[-1], tried, o)
            if best is not None:
                # The coordinator took these two in the other order than the proxy
                # forwarded them: the replay goes on in that order.
                alternative = Report(file, "coordinator")
                alternative.events = report.events
                _replay(
                    file,
                    header,
                    list(trace[1]),
                    alternative,
                    timing=timing,
                    epoch_layout=epoch_layout,
                    all_divergences=all_divergences,
                    assignment_interval_ms=assignment_interval_ms,
                    moves=best[1],
                    _tries=tries,
                    _reached=_reached,
                )
                alternative.notes.insert(
                    0,
                    f"{file}: the exchanges at lines {request_line} and {best[2]} overlap in "
                    "time; replayed in the proxy's order the response at line "
                    f"{n} differs in {', '.join(fields)}, in the other order it agrees: "
                    "the replay takes that order",
                )
                return alternative
            if overlapping:
                report.notes.append(
                    f"{file}: the exchange at line {request_line} overlaps in time "
                    f"{len(overlapping)} other member exchange(s); the replay with "
                    f"{min(len(overlapping), MAX_REORDERINGS)} of them on its other side "
                    "diverges there or earlier too"
                )
            if fields:
                rules = "; ".join(f"{f}: {RULES[f]}" for f in fields)
                report.violations.append(
                    Finding(
                        file,
                        n,
                        DIVERGENCE,
                        f"the response to the request at line {request_line} "
                        f"({names.member(body.member_id or m.client)}) differs in "
                        f"{', '.join(fields)}: the model's coordinator answers "
                        f"{_shown(model, names)}; the capture has {_shown(body, names)}. "
                        f"Kafka's rule — {rules}",
                    )
                )
                diverged = True
                stop = n if stop is None else stop
            if diverged:
                report.notes.append(
                    f"{file}: the first divergence at line {n} ({compared} responses "
                    "compared); " + ("the replay goes on" if all_divergences else "replay stopped")
                )
                if not all_divergences:
                    break
    if _front is not None:
        _front.retained = {
            "awaiting_response": sum(len(q) for q in expected.values()),
            "joins": len(joins),
            "last_seen": len(last_seen),
            "released": len(released),
            "withheld": len(withheld),
            "changed": len(changed),
            "guessed": len(guessed),
            "target_entries": sum(len(t) for t in targets.values()),
            "memo": len(memo[1]),
            "decoded": len(_front.decoded),
            "segments": len(_front.segments),
            "in_flight": len(_front.waiting) + len(_front.in_flight),
        }
    if not diverged:
        report.notes.append(
            f"{file}: {compared} responses compared, all as the model's coordinator answers"
        )
    for text in later:
        report.notes.append(
            f"{file}: after the first divergence (the replayed group may differ from the "
            f"implementation's from there on), {text}"
        )
    report.notes.append(
        f"{file}: epoch layout {layout}; targets taken from the capture; "
        + (
            f"assignment interval {interval} ms ({interval_source}"
            + (f"; {deferred} new target(s) deferred by it); " if interval else "); ")
            if interval is not None
            else "assignment interval unknown (new targets computed at once); "
        )
        + ("empty groups realigned (KAFKA-20442); " if config.realign_empty_group else "")
        + (
            f"{expiries} expiries applied (session timeout {session} ms)"
            if session is not None
            else f"{expiries} expiries applied (no session timeout known: only the trace's "
            "SessionTimeout and RebalanceTimeout events)"
        )
        + (f"; {commits} offset commit(s) not replayed" if commits else "")
    )
    if compared == 0 and not report.violations:
        report.reasons.append("no ConsumerGroupHeartbeat response to compare")
    if _reached is not None:  # how far this order got: a stop, or past every line
        _reached.append(stop if stop is not None else max((e[0] for e in events), default=0) + 1)
    return report


COORDINATOR.register("consumer", CoordinatorFacet(replay=_replay_consumer, streamed=True))
