"""Client conformance (``validate --mode client``) on the stored captures of the real broker
and the real Java consumer (Kafka 4.4.0, kafka-clients 4.4.0; docs/kafka.md). Each capture
carries the client events its run reported (``Subscription``, ``Callback``, ``Close``,
``PollStall``, ``Crash``; docs/trace-format.md, "Client events"), which ``groupcheck kafka
run`` merged in. No broker is started. docs/fidelity.md, "Client conformance with
kafka-clients 4.4", explains each difference the notes count."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from groupcheck.validate.client_events import merge_client_events
from groupcheck.validate.client_mode import DIVERGENCE, EXPLAINED, NO_CLIENT_EVENTS, validate_client
from model.trace import parse_event

pytestmark = pytest.mark.kafka

CAPTURES = Path(__file__).parent / "captures"

REPLAYED = {
    # capture: members replayed, heartbeat requests and callbacks compared, the explained
    # differences the notes count (client_mode.EXPLAINED; docs/fidelity.md CC1-CC4)
    "broker-restart": (2, 35, 7, {"leave-fields": 2, "unrecorded-failure": 2}),
    "consumer-commit-during-revocation": (2, 21, 4, {"leave-fields": 2,
                                                     "close-before-callback": 1}),
    "consumer-crash": (3, 62, 12, {"leave-fields": 2}),
    "consumer-fenced": (3, 85, 19, {"leave-fields": 3, "unrecorded-failure": 1}),
    "consumer-join-leave": (5, 162, 29, {"leave-fields": 5}),
    "consumer-partitions-added": (2, 28, 9, {"leave-fields": 2}),
    "consumer-poll-timeout": (2, 51, 13, {"leave-fields": 3}),
    "consumer-regex": (2, 61, 10, {"leave-fields": 2, "partial-resolution": 4}),
    "consumer-static-restart": (3, 50, 10, {"leave-fields": 3}),
    "consumer-subscription-change": (2, 41, 14, {"leave-fields": 2}),
    "f1": (4, 68, 17, {"leave-fields": 4, "unrecorded-failure": 1}),
    "migration-downgrade": (1, 17, 6, {"leave-fields": 1}),
    "migration-upgrade": (1, 18, 5, {"leave-fields": 1}),
}  # fmt: skip
"""Captures with consumer-protocol members: every one replays without a divergence."""

CLASSIC = ("classic-cooperative", "classic-eager")


def _lines(name: str) -> list[str]:
    return (CAPTURES / f"{name}.ndjson").read_text(encoding="utf-8").splitlines()


def test_every_capture_is_listed() -> None:
    assert {p.stem for p in CAPTURES.glob("*.ndjson")} == {*REPLAYED, *CLASSIC}


@pytest.mark.parametrize("name", sorted(REPLAYED))
def test_the_model_client_sends_and_calls_back_as_kafka_clients_did(name: str) -> None:
    report = validate_client(f"{name}.ndjson", _lines(name))
    assert report.error is None
    assert report.violations == []
    assert report.reasons == []
    assert report.result == "ok"
    members, requests, callbacks, explained = REPLAYED[name]
    replayed = (
        f"{members} member(s) replayed: {requests} heartbeat request(s) and {callbacks} "
        "callback(s) compared"
    )
    assert replayed in report.notes, report.notes
    counted = {
        kind: int(m.group(1))
        for note in report.notes
        for kind, text in EXPLAINED.items()
        if (m := re.fullmatch(rf"explained: (\d+) {re.escape(text)}", note))
    }
    assert counted == explained


@pytest.mark.parametrize("name", CLASSIC)
def test_a_classic_capture_is_inconclusive(name: str) -> None:
    report = validate_client(f"{name}.ndjson", _lines(name))
    assert report.result == "inconclusive"
    assert "consumer-protocol members" in report.reasons[0]


def test_a_capture_without_client_events_is_inconclusive_never_ok() -> None:
    lines = _lines("f1")
    lines = [lines[0]] + [x for x in lines[1:] if not json.loads(x)["source"].startswith("client")]
    report = validate_client("f1.ndjson", lines)
    assert report.result == "inconclusive"
    assert report.reasons == [NO_CLIENT_EVENTS]


def _first(lines: list[str], pred: object) -> int:
    return next(i for i, line in enumerate(lines) if i > 0 and pred(json.loads(line)))  # type: ignore[operator]


def test_a_request_the_model_would_not_send_is_a_divergence_naming_field_and_rule() -> None:
    lines = _lines("consumer-join-leave")
    # The first acknowledgement (TopicPartitions after the first assignment): report less.
    i = _first(
        lines,
        lambda e: (
            e["kind"] == "DeliverMessage"
            and e["payload"]["direction"] == "request"
            and e["payload"]["body"]["MemberEpoch"] > 0
            and e["payload"]["body"].get("TopicPartitions")
        ),
    )
    e = json.loads(lines[i])
    e["payload"]["body"]["TopicPartitions"][0]["Partitions"] = [0]
    lines[i] = json.dumps(e)
    report = validate_client("x.ndjson", lines)
    [finding] = report.violations
    assert finding.property == DIVERGENCE
    assert finding.line == i + 1
    assert "TopicPartitions: the model's client sends [foo-0, foo-1, foo-2, foo-3, foo-4, " in (
        finding.message
    )
    assert "the capture [foo-0]" in finding.message
    assert "HeartbeatState.buildRequestData" in finding.message


def test_a_callback_the_model_would_not_run_is_a_divergence() -> None:
    lines = _lines("consumer-join-leave")
    i = _first(
        lines,
        lambda e: e["kind"] == "Callback" and e["payload"]["callback"] == "onPartitionsRevoked",
    )
    e = json.loads(lines[i])
    e["payload"]["partitions"][0]["Partitions"] = [0]
    lines[i] = json.dumps(e)
    report = validate_client("x.ndjson", lines)
    [finding] = report.violations
    assert finding.line == i + 1
    assert "callback: the model's client runs onPartitionsRevoked([foo-3, foo-4, foo-5])" in (
        finding.message
    )
    assert "the capture onPartitionsRevoked([foo-0])" in finding.message


def test_merge_places_each_client_event_by_time_and_names_its_member() -> None:
    header = {
        "format": "groupcheck-trace", "version": 2, "protocol": "consumer",
        "topics": {"foo": 2}, "topic_names": {"T": "foo"}, "clients": {"M": "c1"},
    }  # fmt: skip
    request = {
        "seq": 1, "ts": 100, "source": "network", "kind": "DeliverMessage",
        "payload": {"client": "M", "incarnation": 0, "connection": 0, "direction": "request",
                    "api": "ConsumerGroupHeartbeat",
                    "body": {"MemberId": "M", "MemberEpoch": 0, "RebalanceTimeoutMs": 1000,
                             "SubscribedTopicNames": ["foo"], "TopicPartitions": []}},
    }  # fmt: skip
    lines = [json.dumps(header), json.dumps(request)]
    events = {
        "c1": [
            {"ts": 10, "event": "ready", "library": "kafka-clients 4.4.0"},
            {"ts": 50, "client": "c1", "event": "created", "protocol": "consumer"},
            {"ts": 90, "client": "c1", "event": "subscribed", "topics": ["foo"]},
            {"ts": 150, "client": "c1", "event": "member", "member_id": "M", "epoch": 1},
            {"ts": 160, "client": "c1", "event": "assigned", "partitions": ["foo-1", "foo-0"]},
            {"ts": 900, "client": "c1", "event": "callback_end", "callback": "assigned"},
            {"ts": 990, "client": "c1", "event": "closed", "leave": "leave"},
        ]
    }
    out = merge_client_events(lines, events)
    kinds = [(json.loads(x)["kind"], json.loads(x)["ts"]) for x in out[1:]]
    assert kinds == [
        ("Subscription", 90),
        ("DeliverMessage", 100),
        ("Callback", 160),
        ("Callback", 900),
        ("Close", 990),
    ]
    start = json.loads(out[3])
    assert start["source"] == "client:M"
    assert start["payload"] == {
        "client": "M",
        "callback": "onPartitionsAssigned",
        "phase": "start",
        "partitions": [{"TopicId": "T", "Partitions": [0, 1]}],
    }
    for n, line in enumerate(out[1:], 2):
        parse_event(line, n)  # every line is a trace event the reader takes


# librdkafka: the client profile (docs/fidelity.md, "librdkafka in client mode")

LIBRDKAFKA = CAPTURES / "librdkafka"


def _gz_lines(name: str) -> list[str]:
    import gzip

    with gzip.open(LIBRDKAFKA / f"{name}.ndjson.gz", "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def _rk_counts(notes: list[str]) -> dict[str, int]:
    out = {}
    for note in notes:
        found = re.match(r"librdkafka (RK\d): (\d+) ", note)
        if found:
            out[found.group(1)] = int(found.group(2))
    return out


def test_librdkafka_members_conform_with_the_documented_differences_admitted() -> None:
    """batching-1000 (51 librdkafka 2.16.0 members): the header names librdkafka, so the
    profile is chosen from it; every difference from the Java client is one of RK1-RK5."""
    lines = _gz_lines("batching-1000")
    report = validate_client("batching-1000.ndjson", lines)
    assert report.error is None
    assert report.reasons == []
    assert report.violations == []
    assert any(n.startswith("client profile librdkafka") for n in report.notes)
    counts = _rk_counts(report.notes)
    assert counts["RK1"] > 50
    assert counts["RK2"] > 0
    assert counts["RK3"] > 0
    assert counts["RK5"] == 1


def test_librdkafka_judged_as_the_java_client_diverges_at_the_empty_regex() -> None:
    report = validate_client("batching-1000.ndjson", _gz_lines("batching-1000"), profile="java")
    assert len(report.violations) == 51  # every member, at its join
    assert all("SubscribedTopicRegex" in f.message for f in report.violations)
    assert not _rk_counts(report.notes)


def test_a_difference_outside_the_librdkafka_rules_is_still_a_violation() -> None:
    """A regex other than '' in a join is not RK1: it is reported."""
    lines = _gz_lines("batching-1000")
    n = next(i for i, x in enumerate(lines) if '"SubscribedTopicRegex": ""' in x)
    lines[n] = lines[n].replace('"SubscribedTopicRegex": ""', '"SubscribedTopicRegex": "fo.*"')
    report = validate_client("batching-1000.ndjson", lines)
    assert [f.line for f in report.violations] == [n + 1]
    assert "SubscribedTopicRegex" in report.violations[0].message


def test_librdkafka_leave_before_its_release_callback_is_not_admitted() -> None:
    """batching-0, run 1: at the final close, m24 and m36 sent their leave heartbeat
    before the application's release callback (onPartitionsRevoked) ran — a difference no
    rule admits (docs/fidelity.md RK6, open): client mode reports it."""
    report = validate_client("batching-0.ndjson", _gz_lines("batching-0"))
    assert len(report.violations) == 2
    for finding in report.violations:
        assert "MemberEpoch -1" in finding.message
        assert "PREPARE_LEAVING" in finding.message
    assert sorted(f.message.split(" ")[1] for f in report.violations) == ["(m24):", "(m36):"]


def test_the_profile_is_taken_from_the_header() -> None:
    from groupcheck.validate.client_mode import client_profile
    from model.trace import TraceHeader

    def header(clients: str) -> TraceHeader:
        return TraceHeader(
            "consumer", (), implementation={"name": "Apache Kafka", "clients": clients}
        )

    assert client_profile(header("librdkafka 2.16.0")) == "librdkafka"
    assert client_profile(header("kafka-clients 4.4.0")) == "java"
    assert client_profile(header("kafka-clients 4.4.0, librdkafka 2.16.0")) == "java"
    assert client_profile(header("kafka-clients 4.4.0"), "librdkafka") == "librdkafka"


# batching-0, loaded run 2: m38's onPartitionsRevoked([foo-79]) (line 1160) is
# stamped in the millisecond of the response that carried its new assignment (line 1168)
# and sorted before it: the merge writes a client event before the first line stamped
# later, while the proxy writes an exchange once every earlier request is answered.
LOADED_2 = "batching-0-loaded-2"
M38_CALLBACK, M38_RESPONSE = 1160, 1168


def _explained_counts(notes: list[str]) -> dict[str, int]:
    return {
        kind: int(m.group(1))
        for note in notes
        for kind, text in EXPLAINED.items()
        if (m := re.fullmatch(rf"explained: (\d+) {re.escape(text)}", note))
    }


def _m38_callback_and_response(lines: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    callback, response = json.loads(lines[M38_CALLBACK - 1]), json.loads(lines[M38_RESPONSE - 1])
    assert callback["kind"] == "Callback"
    assert callback["payload"]["callback"] == "onPartitionsRevoked"
    assert response["payload"]["direction"] == "response"
    assert response["payload"]["client"] == callback["payload"]["client"]
    assert response["ts"] == callback["ts"]
    return callback, response


def test_a_callback_is_judged_after_the_response_of_its_millisecond() -> None:
    """The replay takes the same-millisecond response first (docs/fidelity.md CC7): m38
    then conforms up to its close, where its leave heartbeat goes out before its release
    callback — RK6, the one finding, which batching-0 declares."""
    lines = _gz_lines(LOADED_2)
    _m38_callback_and_response(lines)
    report = validate_client(f"{LOADED_2}.ndjson", lines)
    assert report.error is None
    assert report.reasons == []
    [finding] = report.violations
    assert finding.line == 1849
    assert "(m38): the client sends a heartbeat (MemberEpoch -1)" in finding.message
    assert "it is PREPARE_LEAVING, running onPartitionsRevoked" in finding.message
    assert _explained_counts(report.notes)["same-millisecond-callback"] == 1
    assert "51 member(s) replayed: 691 heartbeat request(s) and 170 callback(s) compared" in (
        report.notes
    )


def test_a_callback_stamped_before_its_response_is_still_a_divergence() -> None:
    """One millisecond earlier than the response, the callback cannot have followed it:
    the divergence in the order of the timestamps is reported."""
    lines = _gz_lines(LOADED_2)
    _, response = _m38_callback_and_response(lines)
    response["ts"] += 1
    lines[M38_RESPONSE - 1] = json.dumps(response)
    report = validate_client(f"{LOADED_2}.ndjson", lines)
    [first] = report.violations  # m38's replay stops there: its close is not reached
    assert first.line == M38_CALLBACK
    assert (
        "the client runs onPartitionsRevoked([foo-79]) where the model's client runs no "
        "callback (it is STABLE)" in first.message
    )
    assert "same-millisecond-callback" not in _explained_counts(report.notes)


def test_a_callback_its_response_does_not_call_for_is_still_a_divergence() -> None:
    """Taken after the response, a callback with other partitions than those the response
    revokes diverges too: the divergence in the order sorted is reported."""
    lines = _gz_lines(LOADED_2)
    callback, _ = _m38_callback_and_response(lines)
    callback["payload"]["partitions"][0]["Partitions"] = [78]
    lines[M38_CALLBACK - 1] = json.dumps(callback)
    report = validate_client(f"{LOADED_2}.ndjson", lines)
    [first] = report.violations
    assert first.line == M38_CALLBACK
    assert "onPartitionsRevoked([foo-78]) where the model's client runs no callback" in (
        first.message
    )
    assert "same-millisecond-callback" not in _explained_counts(report.notes)


def test_an_acknowledgement_after_its_callback_in_one_millisecond() -> None:
    """batching-1000 (run 2026-12-07): m5's acknowledgement (line 951) and the revocation
    callback that let it go out share a millisecond, with the response to the
    acknowledgement written between them; the callback is taken first (CC7) and every member
    conforms. Moving the callbacks a millisecond later leaves the divergence."""
    lines = _gz_lines("batching-1000-ack")
    report = validate_client("batching-1000-ack.ndjson", lines)
    assert report.violations == [], [v.message for v in report.violations]
    assert report.result == "ok"
    late = []
    for n, text in enumerate(lines, 1):
        if n in (953, 954, 955, 956):
            e = json.loads(text)
            e["ts"] += 1
            late.append(json.dumps(e))
        else:
            late.append(text)
    moved = validate_client("batching-1000-ack.ndjson", late)
    assert [v.line for v in moved.violations] == [951]
