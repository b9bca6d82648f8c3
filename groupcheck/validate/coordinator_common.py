"""What the consumer protocol's coordinator replay (``groupcheck.validate.coordinator_mode``)
and the classic protocol's (``groupcheck.validate.mixed_coordinator``) share: the rules a
trace's Kafka version runs, its assignment interval, how a divergence is described and
when a replay waits for an answer."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from model.actions import (
    DeliverMessage,
    LoseMessage,
)
from model.records import (
    ConsumerGroupHeartbeatResponse,
    Group,
    OffsetCommitRequest,
)
from model.trace import TraceHeader
from model.versions import KafkaRules, kafka_rules, parse_version


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


def _gate(
    group: Group,
    interval: int | None,
    last: tuple[int, int] | None,
    ts: int | None,
    answered_ts: int | None,
) -> str:
    """KIP-1263's batching gate on the capture's clock (``GroupMetadataManager``
    ``canComputeNextTargetAssignment``, KAFKA-20291: a new target only when none was
    computed, the interval is 0, or now ≥ the last computation + the interval; no timer).
    The coordinator's clock is known only to lie between a request's and its response's
    timestamps, so: ``"open"`` (no gate applies), ``"elapsed"`` (the interval has
    certainly passed), ``"waiting"`` (certainly not), or ``"ambiguous"``."""
    if (
        not interval
        or ts is None
        or last is None
        or group.assignment_timestamp == 0
        or group.assignment_interval_elapsed
    ):
        return "open"
    first, final = last
    if ts >= final + interval:
        return "elapsed"
    end = answered_ts if answered_ts is not None else ts
    if end < first + interval:
        return "waiting"
    return "ambiguous"


def _kafka_rules(header: TraceHeader) -> KafkaRules | None:
    """The rules of the Apache Kafka version the header's ``implementation`` names
    (``model.versions``; None when it names none): rules that changed between versions
    follow it."""
    implementation = header.implementation or {}
    if implementation.get("name") != "Apache Kafka":
        return None
    number = parse_version(str(implementation.get("version", "")))
    return kafka_rules(number) if number is not None else None


def _interval(header: TraceHeader, asked: int | None) -> tuple[int | None, str]:
    """KIP-1263's assignment interval and where it comes from: the option, the header's
    ``assignment_interval_ms``, a model trace's ``settings``, else unknown (None)."""
    if asked is not None:
        return asked, "--assignment-interval-ms"
    if header.assignment_interval_ms is not None:
        return header.assignment_interval_ms, "the header's assignment_interval_ms"
    settings = header.settings or {}
    group = settings.get("group_assignment_interval_ms", -1)
    broker = settings.get("assignment_interval_ms")
    if isinstance(group, int) and group != -1:
        return group, "the header's settings"
    if isinstance(broker, int):
        return broker, "the header's settings"
    if header.settings is not None:
        return 0, "the header's settings"
    rules = _kafka_rules(header)
    if rules is not None and not rules.assignment_batching:
        return 0, f"Kafka {rules.version}, which has no assignment batching (KAFKA-20291: 4.3+)"
    return None, "unknown"


def answers_any(
    events: Iterable[tuple[int, int | None, object]], answers: tuple[type, ...]
) -> dict[int, tuple[int | None, object]]:
    """Request line → the time and body of the captured response to it, for responses of
    the ``answers`` types (a connection answers its requests in order; offset commits are
    left out)."""
    waiting: dict[tuple[str, int, int], deque[int]] = {}
    out: dict[int, tuple[int | None, object]] = {}
    for n, ts, action in events:
        if not isinstance(action, DeliverMessage | LoseMessage):
            continue
        m = action.message
        key = (m.client, m.incarnation, m.connection)
        if m.to_coordinator:
            if isinstance(action, DeliverMessage) and not isinstance(m.body, OffsetCommitRequest):
                waiting.setdefault(key, deque()).append(n)
        elif isinstance(m.body, answers) and waiting.get(key):
            out[waiting[key].popleft()] = (ts, m.body)
    return out
