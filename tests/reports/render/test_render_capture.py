"""Pictures of a capture: topic names and client ids instead of ids, partition labels
never cut before their number and never alike, and a time axis for timed traces."""

from __future__ import annotations

import json

from groupcheck.render import build
from reports.render.dot import partition_labels, sequence_dot, timeline_dot

T0 = 1_700_000_000_000
# Two topic ids alike in their first 30 characters: cutting them makes them the same.
ORDERS = "4b1e2c5d-0000-0000-0000-00000000000a"
PAYMENTS = "4b1e2c5d-0000-0000-0000-00000000000b"
A, B = "hslzNhKUSqahYAQlgpBTkg", "tceBsSzSQTC/icpto9hlvg"


def hb(member: str, body: dict[str, object], request: bool, ms: int) -> str:
    return json.dumps(
        {
            "seq": 0,
            "ts": T0 + ms,
            "source": "network",
            "kind": "DeliverMessage",
            "payload": {
                "client": member,
                "incarnation": 0,
                "connection": 0,
                "direction": "request" if request else "response",
                "api": "ConsumerGroupHeartbeat",
                "body": body,
            },
        }
    )


def parts(*ps: int) -> list[dict[str, object]]:
    return [{"TopicId": ORDERS, "Partitions": list(ps)}, {"TopicId": PAYMENTS, "Partitions": [0]}]


def capture() -> list[str]:
    header = {
        "format": "groupcheck-trace",
        "version": 2,
        "protocol": "consumer",
        "topics": {"orders": 4, "payments": 1},
        "session_timeout_ms": 4000,
        "topic_names": {ORDERS: "orders", PAYMENTS: "payments"},
        "clients": {A: "consumer-1", B: "consumer-2"},
    }
    ok = {"ErrorCode": 0, "HeartbeatIntervalMs": 250}
    return [
        json.dumps(header),
        hb(A, {"MemberId": A, "MemberEpoch": 0, "RebalanceTimeoutMs": 300000}, True, 0),
        hb(
            A,
            {**ok, "MemberId": A, "MemberEpoch": 1, "Assignment": {"TopicPartitions": parts(3)}},
            False,
            5,
        ),
        hb(
            A,
            {
                "MemberId": A,
                "MemberEpoch": 1,
                "RebalanceTimeoutMs": -1,
                "TopicPartitions": parts(3),
            },
            True,
            1000,
        ),
        hb(A, {**ok, "MemberId": A, "MemberEpoch": 1}, False, 1005),
        hb(B, {"MemberId": B, "MemberEpoch": 0, "RebalanceTimeoutMs": 300000}, True, 1300),
        # consumer-1's partitions go to consumer-2 0.4 s after its last heartbeat
        hb(
            B,
            {**ok, "MemberId": B, "MemberEpoch": 2, "Assignment": {"TopicPartitions": parts(3)}},
            False,
            1400,
        ),
    ]


def test_a_capture_is_drawn_with_names_unique_labels_and_a_time_axis() -> None:
    view, text, _ = build("capture.ndjson", capture())
    assert view.lanes == ["coordinator", "consumer-1", "consumer-2"]
    assert view.partitions == [("orders", 3), ("payments", 0)]
    timeline = timeline_dot(view)
    assert "<td>orders-3</td>" in timeline
    assert "<td>payments-0</td>" in timeline
    assert "+0.40 s" not in timeline  # times are since the first event …
    assert "+1.40 s" in timeline  # … the hand-over's
    assert "+1.00 s" in timeline  # … and the owner's last heartbeat
    sequence = sequence_dot(view)
    assert "7. +1.40 s" in sequence  # numbered by trace line, as validate cites it
    assert (
        "double assignment: consumer-1 alive, no session expiry, 0.40 s after its last "
        "heartbeat (line 4)" in (sequence)
    )
    assert A not in sequence + timeline
    assert ORDERS not in sequence + timeline
    assert "Observed.NoHandOverBeforeExpiry" in text
    assert (
        "double assignment: orders-3, payments-0 are given to consumer-2 while consumer-1, "
        "alive, has not released them" in text
    )


def test_partition_labels_keep_the_number_and_stay_unique() -> None:
    labels = partition_labels([(ORDERS, 12), (PAYMENTS, 12), ("x" * 60, 3), ("foo", 0)])
    assert labels[("foo", 0)] == "foo-0"
    assert labels[("x" * 60, 3)].endswith("-3")
    assert len(labels[("x" * 60, 3)]) <= 24
    assert labels[(ORDERS, 12)] == f"{ORDERS}-12"  # alike once cut: written in full
    assert labels[(PAYMENTS, 12)] == f"{PAYMENTS}-12"
    assert len(set(labels.values())) == 4
