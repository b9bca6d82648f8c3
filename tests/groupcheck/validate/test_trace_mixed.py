"""Mixed traces (trace format version 3): a group whose members speak both protocols
(KIP-848 "Online Migration"), read by the codec and checked by safety mode
(``groupcheck.validate.safety_mixed``) — each protocol's checks on its members, and no
partition held by a member of each protocol at once."""

from __future__ import annotations

import json

import pytest

from groupcheck.validate import validate_safety
from model.actions import DeliverMessage
from model.classic.messages import (
    ClassicSubscription,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from model.records import (
    Body,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Message,
)
from model.status import ErrorCode
from model.trace import FORMAT, TraceError, encode_action, parse_header

OK = ErrorCode.NONE
FOO = frozenset({"foo"})
P0, P1 = ("foo", 0), ("foo", 1)


def _header(version: int = 3, **extra: object) -> str:
    obj = {"format": FORMAT, "version": version, "protocol": "mixed", "topics": {"foo": 2}}
    return json.dumps({**obj, **extra})


def _event(seq: int, client: str, request: bool, body: Body, ts: int | None = None) -> str:
    source, payload = encode_action(DeliverMessage(Message(client, 0, 0, request, body)))
    return json.dumps(
        {"seq": seq, "ts": ts, "source": source, "kind": "DeliverMessage", "payload": payload}
    )


def _join(owned: frozenset[tuple[str, int]], member: str = "a1") -> JoinGroupRequest:
    sub = ClassicSubscription(FOO, owned_partitions=owned)
    return JoinGroupRequest(member, None, ("cooperative-sticky",), sub, 300000, 45000)


def _migration(premature: bool) -> list[str]:
    """A classic cooperative member ``A`` holds foo-0 and foo-1; a consumer-protocol member
    ``B`` joins the (now consumer) group; ``A`` is told to rejoin, revokes foo-1 (its
    SyncGroup gives it foo-0 only), and ``B`` gets foo-1 — after that SyncGroup, or
    (``premature``) before it."""
    exchanges: list[tuple[str, Body, Body]] = [
        ("A", _join(frozenset(), ""), JoinGroupResponse(OK, 1, "cooperative-sticky", "a1", "a1")),
        ("A", SyncGroupRequest("a1", 1, None, "cooperative-sticky"),
         SyncGroupResponse(OK, "cooperative-sticky", frozenset({P0, P1}))),
        ("B", ConsumerGroupHeartbeatRequest("b1", 0, None, 300000, FOO, None, frozenset()),
         ConsumerGroupHeartbeatResponse(OK, "b1", 2, 5000, frozenset())),
        ("A", HeartbeatRequest("a1", 1, None), HeartbeatResponse(ErrorCode.REBALANCE_IN_PROGRESS)),
        ("A", _join(frozenset({P0, P1})),
         JoinGroupResponse(OK, 2, "cooperative-sticky", "", "a1")),
        ("A", SyncGroupRequest("a1", 2, None, "cooperative-sticky"),
         SyncGroupResponse(OK, "cooperative-sticky", frozenset({P0}))),
        ("B", ConsumerGroupHeartbeatRequest("b1", 2, topic_partitions=frozenset()),
         ConsumerGroupHeartbeatResponse(OK, "b1", 2, 5000, frozenset({P1}))),
        ("B", ConsumerGroupHeartbeatRequest("b1", 2, topic_partitions=frozenset({P1})),
         ConsumerGroupHeartbeatResponse(OK, "b1", 2, 5000, None)),
    ]  # fmt: skip
    if premature:  # B is given foo-1 before A's SyncGroup took it away
        exchanges[5], exchanges[6] = exchanges[6], exchanges[5]
    lines = [_header()]
    for client, req, resp in exchanges:
        lines.append(_event(len(lines), client, True, req))
        lines.append(_event(len(lines), client, False, resp))
    return lines


def test_a_migration_that_revokes_first_is_ok() -> None:
    report = validate_safety("t", _migration(premature=False), settle=2)
    assert report.error is None
    assert report.protocol == "mixed"
    assert report.violations == []
    assert report.result == "ok"


def test_a_partition_given_to_the_consumer_member_before_the_classic_one_revoked_it() -> None:
    report = validate_safety("t", _migration(premature=True), settle=2)
    assert report.error is None
    (finding,) = report.violations
    assert finding.property == "Observed.NoDoubleOwnership"
    assert finding.line == 13  # B's heartbeat response giving foo-1
    assert finding.message == (
        "foo-1 reaches b1 (consumer protocol) while a1 (classic protocol: its JoinGroup at "
        "line 10 reported owning it)"
    )


def test_each_protocol_keeps_its_own_checks_in_a_mixed_trace() -> None:
    """A classic member's generation going back is still Observed.GenerationMonotone."""
    lines = _migration(premature=False)
    back = JoinGroupResponse(OK, 1, "cooperative-sticky", "", "a1")
    lines.append(_event(len(lines), "A", True, _join(frozenset({P0}))))
    lines.append(_event(len(lines), "A", False, back))
    report = validate_safety("t", lines, settle=2)
    assert [v.property for v in report.violations] == ["Observed.GenerationMonotone"]


def test_mixed_needs_version_3_and_both_protocols_apis_are_read() -> None:
    assert parse_header(_header()).protocol == "mixed"
    with pytest.raises(TraceError, match="protocol 'mixed' needs version 3; the header says 2"):
        parse_header(_header(version=2))
    classic_in_consumer = _migration(False)[1:2]
    consumer_header = json.dumps(
        {"format": FORMAT, "version": 2, "protocol": "consumer", "topics": {"foo": 2}}
    )
    report = validate_safety("t", [consumer_header, *classic_in_consumer])
    assert report.error is not None
    assert "not an api of the header's protocol 'consumer'" in report.error


def test_a_partition_given_to_the_classic_member_while_the_consumer_one_holds_it() -> None:
    lines = _migration(premature=False)
    both = SyncGroupResponse(OK, "cooperative-sticky", frozenset({P0, P1}))
    lines.append(_event(len(lines), "A", True, SyncGroupRequest("a1", 2, None, None)))
    lines.append(_event(len(lines), "A", False, both))
    report = validate_safety("t", lines, settle=2)
    (finding,) = report.violations
    assert (finding.property, finding.line) == ("Observed.NoDoubleOwnership", 19)
    assert finding.message == (
        "foo-1 reaches a1 (classic protocol) while b1 (consumer protocol) has not released it"
    )


def test_the_schema_takes_mixed_traces_from_version_3_only() -> None:
    from pathlib import Path

    from jsonschema import Draft202012Validator

    schema = Path(__file__).resolve().parents[3] / "docs" / "trace-format.schema.json"
    validator = Draft202012Validator(json.loads(schema.read_text(encoding="utf-8")))
    lines = _migration(premature=False)
    for line in lines:
        assert validator.is_valid(json.loads(line)), line
    assert not validator.is_valid(json.loads(_header(version=2)))
    assert validator.is_valid(json.loads(_header(consumer_session_timeout_ms=4000)))
    consumer = {**json.loads(_header(consumer_session_timeout_ms=4000)), "protocol": "consumer"}
    assert not validator.is_valid(consumer)


@pytest.mark.parametrize("preset", ["MIGRATION_UPGRADE", "MIGRATION_ROUNDTRIP", "MIXED_STATIC"])
def test_the_models_mixed_walks_pass_safety_mode(preset: str) -> None:
    """Seeded walks of the mixed presets, written as traces (version 3): safety mode finds
    nothing, and partitions do move between a classic and a consumer-protocol member (so
    the cross-protocol check had hand-overs to judge)."""
    from tracelines import progress_walk

    from model.presets import PRESETS
    from model.trace import decode_action, parse_event, path_lines

    moved = 0
    for seed in range(25):
        lines = list(path_lines(progress_walk(PRESETS[preset], seed, 150, True, "stop")))
        header = parse_header(lines[0])
        assert header.version == 3
        report = validate_safety("t", lines, settle=5)
        assert report.error is None
        assert report.violations == [], (seed, report.violations)
        given: dict[tuple[str, int], str] = {}
        for n, line in enumerate(lines[1:], 2):
            action = decode_action(parse_event(line, n), line, n, header)
            if not isinstance(action, DeliverMessage):
                continue
            body = action.message.body
            parts = getattr(body, "assignment", None) if not action.message.to_coordinator else None
            kind = "consumer" if isinstance(body, ConsumerGroupHeartbeatResponse) else "classic"
            for tp in parts or ():
                moved += given.get(tp, kind) != kind
                given[tp] = kind
    assert moved > 0


def _handed_after_the_consumer_session(**header: object) -> list[str]:
    """Eight events: consumer-protocol member b1 owns foo-0 and foo-1 (its last heartbeat
    at ts 100) and goes silent; classic member a1 joins with SessionTimeoutMs 6000 and is
    given both at ts 4500 — after b1's session of 4 s (the consumer group's), before 6 s."""
    sub = ClassicSubscription(FOO, owned_partitions=frozenset())
    exchanges: list[tuple[str, Body, Body, int]] = [
        ("B", ConsumerGroupHeartbeatRequest("b1", 0, None, 300000, FOO, None, frozenset()),
         ConsumerGroupHeartbeatResponse(OK, "b1", 1, 1000, frozenset({P0, P1})), 0),
        ("B", ConsumerGroupHeartbeatRequest("b1", 1, topic_partitions=frozenset({P0, P1})),
         ConsumerGroupHeartbeatResponse(OK, "b1", 1, 1000, None), 100),
        ("A", JoinGroupRequest("", None, ("cooperative-sticky",), sub, 300000, 6000),
         JoinGroupResponse(OK, 2, "cooperative-sticky", "a1", "a1"), 4200),
        ("A", SyncGroupRequest("a1", 2, None, "cooperative-sticky"),
         SyncGroupResponse(OK, "cooperative-sticky", frozenset({P0, P1})), 4400),
    ]  # fmt: skip
    lines = [_header(**header)]
    for client, req, resp, ts in exchanges:
        lines.append(_event(len(lines), client, True, req, ts))
        lines.append(_event(len(lines), client, False, resp, ts + 100))
    return lines


def test_each_protocol_has_its_own_session_timeout() -> None:
    """The consumer group's session timeout (4 s) applies to b1, the classic member's own
    (its JoinGroup's 6 s) to a1: with both in the header, b1's partitions handed on after
    4 s are a zombie window (b1 was not told), not a premature hand-over."""
    both = _handed_after_the_consumer_session(
        session_timeout_ms=6000, consumer_session_timeout_ms=4000
    )
    report = validate_safety("t", both, settle=2)
    assert report.error is None, report.error
    assert report.violations == []
    assert [h["classification"] for h in report.handovers] == ["zombie-window"] * 2
    assert report.timing is not None
    assert report.timing["session_timeout_ms_by_protocol"] == {"consumer": 4000, "classic": 6000}
    # One session timeout for both (older captures): the classic members' 6 s is applied to
    # b1, and the hand-over looks premature — which is why the header keeps both; a note
    # says the header gives only one.
    one = _handed_after_the_consumer_session(session_timeout_ms=6000)
    report = validate_safety("t", one, settle=2)
    assert [v.property for v in report.violations] == ["Observed.NoHandOverBeforeExpiry"]
    assert any("one session timeout" in n for n in report.notes)


def test_consumer_session_timeout_belongs_to_a_mixed_header() -> None:
    header = json.dumps(
        {"format": FORMAT, "version": 2, "protocol": "consumer", "topics": {"foo": 2},
         "consumer_session_timeout_ms": 4000}
    )  # fmt: skip
    with pytest.raises(TraceError, match="consumer_session_timeout_ms belongs to a mixed trace"):
        parse_header(header)
    assert parse_header(_header(consumer_session_timeout_ms=4000)).consumer_session_timeout_ms == (
        4000
    )
