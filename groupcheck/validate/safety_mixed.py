"""Safety mode on a ``mixed`` trace: a group whose members speak both protocols (KIP-848
"Online Migration": classic members in a consumer group, and the conversions between a
classic and a consumer group).

Each member is read by the checker of its own protocol — ConsumerGroupHeartbeat
exchanges by the consumer protocol's (``groupcheck.validate.safety``), JoinGroup,
SyncGroup, Heartbeat and LeaveGroup exchanges by the classic one's
(``groupcheck.validate.safety_classic``); an OffsetCommit goes to the checker of the
protocol its sender last spoke — so every check of either applies to its members. What
neither sees alone is a partition that one protocol's member may still be consuming while
the other protocol's member is given it (or reports owning it): that is
``Observed.NoDoubleOwnership`` across protocols, checked after every message. The
consumer protocol names partitions by topic id, the classic one by topic name; the
header's ``topic_names`` relates them (a model trace's topic ids are the names).

A cross-protocol hand-over is classified by its timing as a hand-over within one protocol
is (``groupcheck.validate.timing``): when the previous owner's last request is older than
its session timeout, the coordinator has removed it and the hand-over is a zombie window
(a violation only with ``--fail-on-zombie``), or after-expiry when that owner's process
is known dead; without timing, or within the session, it is a violation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from groupcheck.families import SAFETY
from groupcheck.validate.report import Finding, Report
from groupcheck.validate.safety import NO_DOUBLE_OWNERSHIP, Names, _Safety, trace_events
from groupcheck.validate.safety_classic import COMMIT_FENCED, _ClassicSafety
from groupcheck.validate.timing import (
    PREMATURE,
    UNCLASSIFIED,
    HandOver,
    TimingOptions,
    classify,
    premature_finding,
    report_handovers,
)
from model.actions import DeliverMessage
from model.classic.messages import JoinGroupRequest, SyncGroupResponse
from model.ids import Assignment, TopicPartition
from model.records import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Message,
    OffsetCommitRequest,
    OffsetCommitResponse,
)
from model.trace import TraceError, TraceHeader

CONSUMER, CLASSIC = "consumer", "classic"


@dataclass
class _MixedSafety:
    """One pass over a mixed trace: a checker per protocol sharing one report, and the
    cross-protocol ownership check."""

    file: str
    report: Report
    header: TraceHeader
    options: TimingOptions
    consumer: _Safety
    classic: _ClassicSafety
    protocol_of: dict[str, str] = field(default_factory=dict)
    """Trace client → the protocol of the group API it last used."""
    seen: set[tuple[str, str, TopicPartition]] = field(default_factory=set)
    """(consumer-protocol member, classic client, partition) overlaps already reported."""
    handovers: list[HandOver] = field(default_factory=list)
    """Cross-protocol hand-overs classified by their timing."""

    def on_event(self, n: int, ts: int | None, action: object) -> None:
        # The consumer checker sees every event: it keeps the quiet windows and the event
        # count, and a classic message only names its connection there.
        message = action.message if isinstance(action, DeliverMessage) else None
        if message is not None:
            self._route(n, ts, message)
        else:
            self.classic.on_event(n, action)
        self.consumer.on_event(n, ts, action)  # type: ignore[arg-type]
        if message is not None:
            self._cross_check(n, ts, message)

    def _route(self, n: int, ts: int | None, m: Message) -> None:
        body = m.body
        if isinstance(body, ConsumerGroupHeartbeatRequest | ConsumerGroupHeartbeatResponse):
            self.protocol_of[m.client] = CONSUMER
            return  # the consumer checker reads it (on_event)
        if isinstance(body, OffsetCommitRequest | OffsetCommitResponse):
            if self.protocol_of.get(m.client) != CLASSIC:
                return  # a consumer-protocol member's commit (or nobody's yet)
        else:
            self.protocol_of[m.client] = CLASSIC
        if m.to_coordinator:
            self.classic.on_request(n, m, ts)
        else:
            self.classic.on_response(n, m, ts)

    # ------------------------------------------------------------ ownership

    def _names(self, parts: Assignment) -> frozenset[TopicPartition]:
        """Consumer-protocol partitions (by topic id) by topic name."""
        ids = self.header.topic_names or {}
        return frozenset((ids.get(t, t), i) for t, i in parts)

    def _cross_check(self, n: int, ts: int | None, m: Message) -> None:
        """After a message: a partition held by a member of each protocol at once."""
        body = m.body
        gives = isinstance(
            body, ConsumerGroupHeartbeatResponse | SyncGroupResponse | JoinGroupRequest
        )
        if not gives:
            return
        for member_id, view in self.consumer.members.items():
            if self.protocol_of.get(view.client or member_id) == CLASSIC:
                continue
            mine = self._names(view.owns())
            if not mine:
                continue
            for name, other in sorted(self.classic.clients.items()):
                if self.protocol_of.get(name) != CLASSIC:
                    continue
                both = mine & other.consumes
                fresh = sorted(tp for tp in both if (member_id, name, tp) not in self.seen)
                if not fresh:
                    continue
                self.seen.update((member_id, name, tp) for tp in fresh)
                if m.client in (view.client, member_id):
                    # The consumer-protocol member took it from the classic client.
                    self._clash(n, ts, fresh, owner=name, to=member_id, classic_owner=True)
                else:
                    self._clash(n, ts, fresh, owner=member_id, to=name, classic_owner=False)

    def _clash(
        self,
        n: int,
        ts: int | None,
        parts: list[TopicPartition],
        *,
        owner: str,
        to: str,
        classic_owner: bool,
    ) -> None:
        """``parts`` reach ``to`` while ``owner`` (of the other protocol) may still consume
        them: classify each by its timing; what stays unclassified is a violation."""
        if classic_owner:
            c = self.classic.clients[owner]
            last_ts, last_line = c.last_heartbeat_ts, c.last_heartbeat_line
            session = (
                self.options.session_timeout_ms
                or c.session_timeout_ms
                or self.classic.timing.session_timeout_ms
            )
            dead = c.dead_holds
            why = f"{self.classic.name(owner)} (classic protocol: {c.why or 'it owns it'})"
            receiver = self.consumer._m(to) + " (consumer protocol)"
        else:
            v = self.consumer.members[owner]
            last_ts, last_line = v.last_heartbeat_ts, v.last_heartbeat_line
            session = self.consumer.timing.session_timeout_ms  # the consumer group's
            dead = self._names(v.dead_holds)
            why = f"{self.consumer._m(owner)} (consumer protocol) has not released it"
            receiver = self.classic.name(to) + " (classic protocol)"
        timing = self.consumer.timing
        unclassified: list[TopicPartition] = []
        premature: list[HandOver] = []
        for tp in parts:
            h = HandOver(
                n,
                self.classic.part(*tp),
                owner,
                to,
                ts,
                owner_dead=tp in dead,
                last_heartbeat_line=last_line,
                last_heartbeat_ts=last_ts,
            )
            classify(h, timing, None, None, session)
            self.handovers.append(h)
            if h.classification == UNCLASSIFIED:
                if not h.owner_dead:
                    unclassified.append(tp)
                continue
            if h.classification == PREMATURE:
                premature.append(h)
        if premature:
            self.report.violations.append(
                premature_finding(self.file, premature, self._name, timing.tolerance_ms)
            )
        if unclassified:
            topic, index = unclassified[0]
            self.report.violations.append(
                Finding(
                    self.file,
                    n,
                    NO_DOUBLE_OWNERSHIP.name,
                    f"{self.classic.part(topic, index)} reaches {receiver} while {why}",
                )
            )

    def _name(self, who: str) -> str:
        if who in self.classic.clients and self.protocol_of.get(who) == CLASSIC:
            return self.classic.name(who)
        return self.consumer._m(who)

    def finish(self) -> None:
        # Every hand-over of both protocols and across them, reported once.
        handovers = self.consumer.handovers + self.classic.handovers + self.handovers
        self.consumer.handovers = []
        self.consumer.finish()
        handovers.sort(key=lambda h: h.line)
        report_handovers(
            self.report,
            self.file,
            handovers,
            self._name,
            self.consumer.timing,
            self.options.fail_on_zombie,
            NO_DOUBLE_OWNERSHIP.name,
        )
        if self.classic.unchecked_commits:
            self.report.notes.append(
                f"{self.file}: {COMMIT_FENCED.name}: {self.classic.unchecked_commits} accepted "
                "offset commit(s) of classic members whose JoinGroup response the trace does "
                "not show were not checked"
            )


def validate_mixed_safety(
    file: str,
    header: TraceHeader,
    lines: Iterator[str],
    settle: int,
    timing: TimingOptions | None = None,
) -> Report:
    """Check a mixed trace whose header (line 1) has been read (``lines`` goes on from
    line 2): each protocol's checks on its members, and no partition held by members of
    both protocols at once."""
    report = Report(file, "safety")
    options = timing or TimingOptions()
    # Each protocol's session timeout: the consumer group's for its consumer-protocol
    # members (the header's consumer_session_timeout_ms), each classic member's own
    # JoinGroup SessionTimeoutMs, else the header's session_timeout_ms.
    consumer_header = header
    if header.consumer_session_timeout_ms is not None:
        consumer_header = replace(header, session_timeout_ms=header.consumer_session_timeout_ms)
    consumer = _Safety(file, report, settle, options, consumer_header)
    classic_timing = options.resolve(header)
    classic = _ClassicSafety(
        file, report, options=options, timing=classic_timing, names=Names(header)
    )
    report.protocol = "mixed"
    assert report.timing is not None
    report.timing["session_timeout_ms_by_protocol"] = {
        CONSUMER: consumer.timing.session_timeout_ms,
        CLASSIC: classic_timing.session_timeout_ms,
    }
    if (
        header.consumer_session_timeout_ms is None
        and header.session_timeout_ms is not None
        and options.session_timeout_ms is None
    ):
        report.notes.append(
            f"{file}: the header gives one session timeout ({header.session_timeout_ms} ms) "
            "and no consumer_session_timeout_ms: it is applied to the members of both "
            "protocols (a classic member's own JoinGroup SessionTimeoutMs first)"
        )
    run = _MixedSafety(file, report, header, options, consumer, classic)
    try:
        for n, ts, action in trace_events(lines, header):
            run.on_event(n, ts, action)
    except TraceError as e:
        report.error = f"{file}:{e}"
        return report
    run.finish()
    return report


SAFETY.register("mixed", validate_mixed_safety)
