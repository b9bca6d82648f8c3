"""Coordinator mode: replay each captured request through the model's coordinator and
compare its response with the captured one, field by field.

A wire capture of the consumer protocol (KIP-848) holds every ConsumerGroupHeartbeat the
coordinator processed, in order, with its response. This mode rebuilds the group from
them: an empty group (at the epoch layout the first join shows, ``kip-848`` or
``kafka-4.3``, or the one ``--epoch-layout`` names), each request handled by
``model.coordinator.handle_consumer_group_heartbeat`` in the order the proxy forwarded it.
The assignor is the implementation's: whenever the model computes a target assignment,
it installs the one the capture shows for that group epoch — for each member, what it was
given at that member epoch, up to the first response that takes a partition away again
(a revocation towards the next target). With the session timeout known (header or
``--session-timeout-ms``) a member silent for longer than it is expired
(``model.coordinator.session_timeout``) before the next request is handled.

The first response whose error code, member epoch, assignment or heartbeat interval
differs from the model's is reported (``Coordinator.Divergence``) with the model's
response and the Kafka rule that decides that field; the replay stops there, since the
group states no longer agree. Offset commits are not replayed (a note counts them).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import replace

from groupcheck.validate.report import Finding, Report
from groupcheck.validate.safety import Names
from groupcheck.validate.timing import TimingOptions
from model.actions import DeliverMessage, LoseMessage, RebalanceTimeout, SessionTimeout
from model.config import ClientSpec, Config
from model.coordinator import (
    handle_consumer_group_heartbeat,
    rebalance_timeout,
    session_timeout,
)
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


def _targets(events: list[tuple[int, int | None, object]]) -> dict[int, dict[str, Assignment]]:
    """Group epoch → member → the target the capture shows for it (module docstring)."""
    targets: dict[int, dict[str, Assignment]] = {}
    closed: set[tuple[int, str]] = set()
    current: dict[str, Assignment] = {}
    for _, _, action in events:
        if not isinstance(action, DeliverMessage | LoseMessage):
            continue  # a lost response still shows what the coordinator answered
        b = action.message.body
        if not isinstance(b, ConsumerGroupHeartbeatResponse):
            continue
        if b.error_code is not ErrorCode.NONE or b.member_epoch <= 0 or not b.member_id:
            continue
        if b.assignment is not None:
            current[b.member_id] = b.assignment
        assignment = current.get(b.member_id)  # none sent: the same as before
        if assignment is None:
            continue
        key = (b.member_epoch, b.member_id)
        if key in closed:
            continue
        at = targets.setdefault(b.member_epoch, {})
        before = at.get(b.member_id)
        if before is not None and not assignment >= before:
            closed.add(key)  # a revocation towards the next target
            continue
        at[b.member_id] = assignment
    return targets


def _layout(events: list[tuple[int, int | None, object]], asked: str) -> str:
    """The epoch layout: ``asked``, or for ``auto`` the one the first join shows (a first
    member at epoch 2: ``kafka-4.3``, whose groups start at epoch 1)."""
    if asked != "auto":
        return asked
    for _, _, action in events:
        if isinstance(action, DeliverMessage):
            b = action.message.body
            if isinstance(b, ConsumerGroupHeartbeatResponse) and b.error_code is ErrorCode.NONE:
                return "kafka-4.3" if b.member_epoch == 2 else "kip-848"
    return "kip-848"


def _differences(
    expected: ConsumerGroupHeartbeatResponse, captured: ConsumerGroupHeartbeatResponse
) -> list[str]:
    fields = []
    if expected.error_code is not captured.error_code:
        fields.append("ErrorCode")
    if expected.member_epoch != captured.member_epoch:
        fields.append("MemberEpoch")
    if expected.assignment != captured.assignment:
        fields.append("Assignment")
    if expected.heartbeat_interval_ms != captured.heartbeat_interval_ms:
        fields.append("HeartbeatIntervalMs")
    return fields


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


def _config(header: TraceHeader, layout: str, options: TimingOptions) -> Config:
    topics = tuple(sorted(header.topics.items())) or (("-", 1),)
    return Config(
        name="capture",
        topics=topics,
        clients=(ClientSpec("capture", tuple(n for n, _ in topics)),),
        epoch_layout=layout,  # type: ignore[arg-type]
        heartbeat_interval_ms=options.heartbeat_interval_ms or header.heartbeat_interval_ms or 5000,
        max_partitions_per_topic=max([4, *(n for _, n in topics)]),
    )


def validate_coordinator(
    file: str,
    lines: Iterable[str],
    timing: TimingOptions | None = None,
    epoch_layout: str = "auto",
    all_divergences: bool = False,
) -> Report:
    """Replay a consumer capture's requests through the model's coordinator; the first
    response that differs is a :data:`DIVERGENCE` finding (``all_divergences``: the replay
    goes on, and later differences are notes — the states may have drifted apart)."""
    report = Report(file, "coordinator")
    options = timing or TimingOptions()
    it = iter(lines)
    events: list[tuple[int, int | None, object]] = []
    try:
        first = next(it, None)
        if first is None:
            raise TraceError(1, 1, "empty trace: no header line")
        header = parse_header(first)
        if header.protocol != "consumer":
            raise TraceError(
                1, 1, "coordinator mode replays consumer-protocol (KIP-848) traces only"
            )
        for n, line in enumerate(it, 2):
            if not line.strip():
                continue
            event = parse_event(line, n)
            events.append((n, event.ts, decode_action(event, line, n, header)))
    except TraceError as e:
        report.error = f"{file}:{e}"
        return report
    report.events = len(events)
    names = Names(header)
    layout = _layout(events, epoch_layout)
    targets = _targets(events)

    guessed: set[tuple[int, str]] = set()
    """(group epoch, member) whose target the capture does not show: the previous one kept."""

    def captured_target(group: Group, topics: Mapping[str, TopicMetadata], _: str) -> Group:
        shown = targets.get(group.group_epoch, {})
        guessed.update((group.group_epoch, m) for m in group.members if m not in shown)
        target = FrozenMap(
            (m, shown.get(m, group.target_assignment.get(m, frozenset()))) for m in group.members
        )
        return replace(group, assignment_epoch=group.group_epoch, target_assignment=target)

    config = _config(header, layout, options)
    config = replace(config, rules=replace(config.rules, compute_target_assignment=captured_target))
    start = 1 if layout == "kafka-4.3" else 0
    group = Group(start, start, FrozenMap(), FrozenMap(), FrozenMap(), FrozenMap())
    ids = {name: topic_id for topic_id, name in (header.topic_names or {}).items()}
    topics = FrozenMap(
        (name, TopicMetadata(ids.get(name, name), count)) for name, count in header.topics.items()
    )
    resolved = options.resolve(header)
    session = resolved.session_timeout_ms
    last_seen: dict[str, int] = {}
    # Per connection (client, incarnation, connection), the model's responses not yet
    # delivered, oldest first: a connection answers its requests in order.
    expected: dict[tuple[str, int, int], deque[tuple[int, ConsumerGroupHeartbeatResponse]]] = {}
    commits = compared = expiries = 0
    joins: dict[int, bool] = {}  # request line → whether it is a join (MemberEpoch 0)
    diverged = False
    later: list[str] = []
    for n, ts, action in events:
        if not isinstance(
            action, DeliverMessage | LoseMessage | SessionTimeout | RebalanceTimeout
        ) and not hasattr(action, "client"):
            # A step of the coordinator's own (a metadata change, a failover, an offloaded
            # assignor run …): a model trace's, which this replay does not take.
            report.reasons.append(
                f"line {n}: {type(action).__name__} changes the coordinator's state "
                "and is not replayed: no verdict from there on"
            )
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
                queue.popleft()  # the oldest response on that connection is lost
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
            group, response = handle_consumer_group_heartbeat(group, topics, body, config)
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
            if diverged:
                if fields:  # --all-divergences: what follows, for what it is worth
                    later.append(
                        f"line {n} ({names.member(body.member_id or m.client)}): "
                        f"{', '.join(fields)}: the model's coordinator answers "
                        f"{_shown(model, names)}; the capture has {_shown(body, names)}"
                    )
                continue
            uncertain = _uncertain(fields, joins[request_line], guessed, group.assignment_epoch)
            if uncertain:
                unsure = [
                    names.member(g) for e, g in sorted(guessed) if e == group.assignment_epoch
                ]
                report.reasons.append(
                    f"the response at line {n} differs from the model's in "
                    f"{', '.join(uncertain)}, which depend on targets the capture does not "
                    f"show at group epoch {group.assignment_epoch} (of "
                    f"{', '.join(unsure)}; the replay kept the previous ones)"
                )
                fields = [f for f in fields if f not in uncertain]
                if not fields:
                    report.reasons[-1] += ": no verdict from there on"
                    diverged = True
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
            if diverged:
                report.notes.append(
                    f"{file}: the first divergence at line {n} ({compared} responses "
                    "compared); " + ("the replay goes on" if all_divergences else "replay stopped")
                )
                if not all_divergences:
                    break
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
            f"{expiries} expiries applied (session timeout {session} ms)"
            if session is not None
            else f"{expiries} expiries applied (no session timeout known: only the trace's "
            "SessionTimeout and RebalanceTimeout events)"
        )
        + (f"; {commits} offset commit(s) not replayed" if commits else "")
    )
    if compared == 0 and not report.violations:
        report.reasons.append("no ConsumerGroupHeartbeat response to compare")
    return report
