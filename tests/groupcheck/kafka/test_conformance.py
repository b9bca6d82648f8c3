"""The stored captures of the real broker (Kafka 4.4.0, its Java consumer) in safety mode
and in coordinator mode: each capture's observations checked against the observed
properties (``groupcheck validate --mode safety``, as ``groupcheck kafka run`` does), and
its requests replayed through the model's coordinator (``--mode coordinator``), give the
verdicts docs/fidelity.md lists ("Conformance with Kafka 4.4 captures"). No broker is
started: the captures are read from ``tests/groupcheck/kafka/captures/``. Each header carries the
broker's ``assignment_interval_ms`` and the topics' partition counts at the start; the
administrator's changes are in the file as ``CreateTopic`` / ``AddPartitions`` events."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from groupcheck.validate.coordinator_mode import validate_coordinator
from groupcheck.validate.files import validate_path
from groupcheck.validate.report import Report
from groupcheck.validate.timing import TimingOptions

pytestmark = pytest.mark.kafka

CAPTURES = Path(__file__).parent / "captures"

INTERVAL_MS = 1000
"""``group.consumer.assignment.interval.ms`` of the broker the captures come from: Kafka's
default (the scenarios set no other), which each header's ``assignment_interval_ms`` holds."""

AGREE = {
    # capture: responses compared, lines where the timestamps could not tell whether the
    # assignment interval had passed (K1: the outcome the captured response shows is taken)
    "broker-restart": (35, [18]),
    "consumer-crash": (62, []),
    "consumer-fenced": (85, [27]),
    "consumer-join-leave": (162, []),
    "consumer-partitions-added": (28, [18]),
    "consumer-poll-timeout": (51, [18]),
    "consumer-regex": (61, []),
    "consumer-static-restart": (50, []),
    "consumer-subscription-change": (41, [18]),
    "f1": (68, []),
    # c1 never reaches the target it revokes towards (its callback outlasts c2's stay): the
    # capture does not show c1's target at group epoch 3; the model's assignor's agrees.
    "consumer-commit-during-revocation": (21, []),
}
"""Captures whose every response the model's coordinator gives as Kafka did."""

CLASSIC_AGREE = {
    # capture: responses compared (JoinGroup, SyncGroup, Heartbeat, LeaveGroup and, in a
    # mixed capture, ConsumerGroupHeartbeat), the conversions the replay makes
    "classic-cooperative": (97, []),
    "classic-eager": (84, []),
    "migration-downgrade": (51, ["consumer", "classic"]),
    "migration-upgrade": (65, ["consumer"]),
}
"""Classic and mixed captures replayed through ``model.migration.system`` (K7)."""

ADMIN = {
    # capture: the administrator's events it carries, the first divergence without them
    "consumer-partitions-added": (["AddPartitions"] * 4, 47),  # 2 → 6 partitions, one call
    "consumer-regex": (["CreateTopic"], 111),
}
"""Captures of a metadata change (K3)."""

SETTLE, SETTLE_MS = 20, 2500
"""Safety mode's convergence options (``groupcheck.kafka.run.validate_capture``: a quiet
window outlasts the assignment interval and two heartbeats)."""

F1 = (124, "Observed.NoDoubleOwnership", "c2 reports owning foo-3 while c3 has not released it")
"""The expected finding F1 (docs/findings.md): the one safety violation of the captures."""

HANDOVERS = {
    # capture: the classification of each hand-over of a partition its owner had not
    # released (the others have none)
    "classic-cooperative": ["after-expiry-owner-dead"] * 2,
    "classic-eager": ["after-expiry-owner-dead"] * 2,
    "consumer-crash": ["after-expiry-owner-dead"] * 2,
    "consumer-fenced": ["zombie-window"] * 2,
}


def _names() -> list[str]:
    return sorted(p.stem for p in CAPTURES.glob("*.ndjson"))


def _lines(name: str) -> list[str]:
    return (CAPTURES / f"{name}.ndjson").read_text(encoding="utf-8").splitlines()


def _replay(name: str, lines: list[str] | None = None, **kw: object) -> Report:
    return validate_coordinator(name, lines or _lines(name), **kw)  # type: ignore[arg-type]


def _ok(report: Report) -> None:
    assert report.error is None, report.error
    assert report.violations == [], [v.message for v in report.violations]
    assert report.reasons == [], report.reasons
    assert any("all as the model's coordinator answers" in n for n in report.notes), report.notes


def _without_interval(lines: list[str]) -> list[str]:
    header = json.loads(lines[0])
    del header["assignment_interval_ms"]
    return [json.dumps(header), *lines[1:]]


def test_every_capture_is_listed() -> None:
    listed = {*AGREE, *CLASSIC_AGREE}
    assert set(_names()) == listed
    for name in listed:
        header = json.loads(_lines(name)[0])
        assert header["assignment_interval_ms"] == INTERVAL_MS
        assert header["implementation"]["version"] == "4.4.0"


UNSETTLED = {
    # capture: its longest quiet window with members in the group (the scenario closed its
    # consumers 1.93 s after the group settled: shorter than SETTLE_MS; the scenario now
    # waits longer before closing, this capture predates that)
    "consumer-commit-during-revocation": "lines 23-43, 21 events, 1.93 s",
}
"""Consumer captures none of whose quiet windows was long enough to check convergence:
inconclusive, not ok."""


@pytest.mark.parametrize("name", _names())
def test_safety(name: str) -> None:
    """Safety mode with the header's timing, as the runner validates a capture: ok, but
    for F1 and for a capture whose convergence was never checked (inconclusive); every
    hand-over of an unreleased partition classified as the scenario makes it (a crashed
    owner's after its session expired, a fenced one's in a zombie window)."""
    path = CAPTURES / f"{name}.ndjson"
    report = validate_path(str(path), "safety", SETTLE, timing=TimingOptions(settle_ms=SETTLE_MS))
    assert report.error is None, report.error
    found = [(v.line, v.property, v.message) for v in report.violations]
    assert found == ([F1] if name == "f1" else [])
    if name in UNSETTLED:
        (reason,) = report.reasons
        assert "no quiet window was long enough" in reason
        assert UNSETTLED[name] in reason
        assert report.result == "inconclusive"
    else:
        assert report.reasons == [], report.reasons
        assert report.result == ("violation" if name == "f1" else "ok")
    if report.protocol in ("consumer", "mixed"):
        assert report.convergence is not None
        assert report.convergence["checked"] == (name not in UNSETTLED)
        assert (report.convergence["windows_checked"] > 0) == (name not in UNSETTLED)
    else:
        assert report.convergence is None  # classic: there is no convergence check
    classes = [str(h["classification"]) for h in report.handovers]
    assert classes == HANDOVERS.get(name, [])
    assert len(report.zombie_windows) == classes.count("zombie-window")


@pytest.mark.parametrize("name", sorted(AGREE))
def test_the_model_answers_as_kafka(name: str) -> None:
    report = _replay(name)
    _ok(report)
    compared, unclear = AGREE[name]
    assert any(f": {compared} responses compared," in n for n in report.notes), report.notes
    lines = [
        int(m.group(1))
        for n in report.notes
        if (m := re.search(r": line (\d+): the timestamps cannot tell whether the assignment", n))
    ]
    assert lines == unclear
    assert any("the header's assignment_interval_ms" in n for n in report.notes), report.notes


@pytest.mark.parametrize("name", sorted(ADMIN))
def test_the_metadata_change_is_in_the_capture(name: str) -> None:
    kinds, line = ADMIN[name]
    events = [json.loads(x) for x in _lines(name)[1:]]
    assert [e["kind"] for e in events if e["source"] == "admin"] == kinds
    # Without it the replayed group is not bumped: the first divergence is Kafka's bump.
    lines = [x for x in _lines(name) if json.loads(x).get("source") != "admin"]
    report = _replay(name, lines)
    assert [v.line for v in report.violations] == [line]
    assert "MemberEpoch" in report.violations[0].message


def test_a_corrupted_response_is_a_divergence() -> None:
    lines = _lines("consumer-join-leave")
    i = next(
        i
        for i, x in enumerate(lines)
        if i > 0
        and (e := json.loads(x))["kind"] == "DeliverMessage"
        and e["payload"]["direction"] == "response"
        and (e["payload"]["body"].get("Assignment") or {}).get("TopicPartitions")
    )
    e = json.loads(lines[i])
    e["payload"]["body"]["Assignment"]["TopicPartitions"][0]["Partitions"] = [0]
    lines[i] = json.dumps(e)
    report = _replay("consumer-join-leave", lines)
    [finding] = report.violations
    assert finding.property == "Coordinator.Divergence"
    assert finding.line == i + 1
    assert "differs in Assignment" in finding.message


def test_batching_decides_the_crash_capture() -> None:
    """KAFKA-20291: c1's join (line 6), 28 ms after c2's, finds a target computed at once
    and gets the stale one (epoch 2, nothing); without the interval the replay does not
    guess."""
    assert any("7 new target(s) deferred" in n for n in _replay("consumer-crash").notes)
    lines = _without_interval(_lines("consumer-crash"))
    report = _replay("consumer-crash", lines)
    assert report.violations == []
    [reason] = report.reasons
    assert reason.startswith("the response at line 7 differs from the model's in MemberEpoch;")
    assert "the coordinator's assignment interval" in reason
    assert "is unknown" in reason
    # The option is the header's field's equal.
    _ok(_replay("consumer-crash", lines, assignment_interval_ms=INTERVAL_MS))
    # With batching off, Kafka's answer is not the model's: the comparison is not loosened.
    off = _replay("consumer-crash", assignment_interval_ms=0)
    assert [(v.line, v.property) for v in off.violations] == [(7, "Coordinator.Divergence")]
    # c1's and c2's joins overlap in time (the first join took 263 ms): the divergence is
    # claimed only because the other order diverges as well.
    assert any(
        "overlaps in time 1 other member exchange(s)" in n and "diverges there or earlier" in n
        for n in off.notes
    )


def test_an_unshown_target_is_the_model_assignors() -> None:
    """The capture does not show c1's target at group epoch 3; the replay takes the model's
    own assignor's, and notes that it was not shown."""
    report = _replay("consumer-commit-during-revocation")
    _ok(report)


@pytest.mark.parametrize("name", sorted(CLASSIC_AGREE))
def test_classic_and_mixed_answer_as_kafka(name: str) -> None:
    report = _replay(name)
    _ok(report)
    compared, conversions = CLASSIC_AGREE[name]
    assert any(f": {compared} responses compared," in n for n in report.notes), report.notes
    [summary] = [n for n in report.notes if "replayed through model.migration.system" in n]
    assert re.findall(r"the group became a (\w+) group", summary) == conversions


def _corrupt(name: str, api: str, change: object, nth: int = 0) -> tuple[list[str], int]:
    """The capture with the ``nth`` response of ``api`` changed by ``change`` (a function
    of the body); the line changed (1-based)."""
    lines = _lines(name)
    found = [
        i
        for i, x in enumerate(lines)
        if i > 0
        and (e := json.loads(x))["kind"] == "DeliverMessage"
        and e["payload"]["direction"] == "response"
        and e["payload"]["api"] == api
        and e["payload"]["body"].get("ErrorCode") == 0
    ]
    i = found[nth]
    e = json.loads(lines[i])
    change(e["payload"]["body"])  # type: ignore[operator]
    lines[i] = json.dumps(e)
    return lines, i + 1


@pytest.mark.parametrize(
    ("name", "api", "field", "nth"),
    [
        ("classic-eager", "JoinGroup", "GenerationId", 1),
        ("classic-cooperative", "SyncGroup", "Assignment", 2),
        ("classic-eager", "Heartbeat", "ErrorCode", 3),
        ("migration-upgrade", "JoinGroup", "GenerationId", 4),
        ("migration-downgrade", "SyncGroup", "Assignment", 3),
    ],
)
def test_a_corrupted_classic_response_is_a_divergence(
    name: str, api: str, field: str, nth: int
) -> None:
    def change(body: dict[str, object]) -> None:
        if field == "GenerationId":
            body["GenerationId"] = int(body["GenerationId"]) + 7  # type: ignore[call-overload]
        elif field == "Assignment":
            body["Assignment"] = [{"TopicId": "foo", "Partitions": [0, 1, 2, 3, 4, 5]}]
        else:
            body["ErrorCode"] = 27

    lines, line = _corrupt(name, api, change, nth)
    report = _replay(name, lines)
    [finding] = report.violations
    assert finding.property == "Coordinator.Divergence"
    assert finding.line == line
    assert f"differs in {field}" in finding.message


def test_a_leader_by_hash_order_is_taken_but_not_any_leader() -> None:
    """The downgraded group's leader is Kafka's pick by hash order: the replay takes the
    captured one when it is a member, and reports one that is not."""
    report = _replay("migration-downgrade")
    assert any("Kafka's choice by hash order" in n for n in report.notes), report.notes

    def change(body: dict[str, object]) -> None:
        body["Leader"] = "not-a-member"

    lines, line = _corrupt("migration-downgrade", "JoinGroup", change, 4)
    report = _replay("migration-downgrade", lines)
    [finding] = report.violations
    assert finding.line == line
    assert "Leader" in finding.message


def test_a_kafka_4_2_capture_conforms_with_4_2_rules() -> None:
    """A capture from a Kafka 4.2.0 broker (kafka-clients 4.2.0, consumer-join-leave) is
    replayed with 4.2's rules — its header names the version: KIP-848's epoch layout, no
    batching — and conforms; declared 4.4.0, the same requests get 4.4's answers, which
    differ from what the 4.2 broker said (docs/fidelity.md, "Version-dependent rules")."""
    path = CAPTURES / "kafka-4.2.0" / "consumer-join-leave.ndjson"
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert header["implementation"]["version"] == "4.2.0"
    assert header["assignment_interval_ms"] == 0
    _ok(validate_coordinator("4.2", lines))
    header["implementation"]["version"] = "4.4.0"
    header["assignment_interval_ms"] = 1000
    as_44 = validate_coordinator("4.4", [json.dumps(header), *lines[1:]])
    assert as_44.violations, as_44.reasons


def _librdkafka(name: str) -> list[str]:
    import gzip

    with gzip.open(CAPTURES / "librdkafka" / f"{name}.ndjson.gz", "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def test_overlapping_joins_go_in_the_order_of_their_epochs() -> None:
    """batching-0 (librdkafka, 50 members): m18's join (line 375), forwarded 1-2 ms before
    three other joins and answered with a higher epoch than theirs, was handled after them;
    replayed in the forwarding order the model answers it at once (epoch 19, Kafka 22)."""
    lines = _librdkafka("batching-0")
    report = validate_coordinator("batching-0", lines)
    assert report.violations == [], [v.message for v in report.violations]
    # Further on, a target the capture does not show decides (K6): no verdict, not ok.
    [reason] = report.reasons
    assert "targets the capture does not show" in reason
    assert "the replay took the model's assignor's" in reason


def test_a_join_is_only_delayed_within_its_exchange() -> None:
    """``_joins_in_epoch_order`` moves a join after a lower-epoch join forwarded later only
    while its own response had not come; never before its request."""
    from groupcheck.validate.coordinator_mode import _joins_in_epoch_order
    from model.records import ConsumerGroupHeartbeatResponse
    from model.status import ErrorCode

    def answer(epoch: int) -> ConsumerGroupHeartbeatResponse:
        return ConsumerGroupHeartbeatResponse(ErrorCode.NONE, "m", epoch, 500)

    events: list[tuple[int, int | None, object]] = [
        (1, 100, "join a"),
        (2, 101, "heartbeat"),
        (3, 102, "join b"),
    ]
    rank = {1: (8, False), 3: (7, False)}  # a answered 8, b 7: b was handled first
    moved = _joins_in_epoch_order(events, rank, {1: (140, answer(8)), 3: (140, answer(7))})
    assert [e[0] for e in moved] == [2, 3, 1]
    # a's response came before b was forwarded: a cannot have been handled after b.
    kept = _joins_in_epoch_order(events, rank, {1: (101, answer(8)), 3: (140, answer(7))})
    assert kept == events
    # In epoch order already: nothing moves.
    assert _joins_in_epoch_order(events, {1: (7, False), 3: (8, False)}, {}) == events


def test_the_other_order_of_two_overlapping_exchanges_is_taken() -> None:
    """batching-1000 (librdkafka, 50 members, a loaded machine): m34's full heartbeat (line
    859) and 8k44's (line 851) were forwarded in the same millisecond, right at the end of
    the assignment interval; Kafka answered m34 at the old epoch (14) and 8k44 with the new
    target (51), so it took m34's first. In the proxy's order the model computes the target
    at 8k44's and answers m34 at 51; in the other order every response agrees."""
    lines = _librdkafka("batching-1000-reorder")
    report = validate_coordinator("batching-1000-reorder", lines)
    _ok(report)
    taken = [n for n in report.notes if "in the other order it agrees" in n]
    assert len(taken) == 1
    assert "lines 859 and 851" in taken[0]
    assert "the response at line 860 differs in MemberEpoch" in taken[0]


def test_same_epoch_joins_the_one_given_partitions_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """batching-5000 (a prefix): six joins in one burst, all answered at epoch 6, the gate
    holding the next target back; the second in the file is the one epoch 6's target gives
    partitions, so its join computed that target. Replayed first, every response agrees;
    ordered by epoch alone, the first join computes the target and the second is answered
    without its partitions."""
    import groupcheck.validate.coordinator_mode as cm

    lines = _librdkafka("batching-5000-joins")
    _ok(validate_coordinator("batching-5000-joins", lines))
    monkeypatch.setattr(cm, "MAX_REPLAYS", 0)  # no other order tried either
    monkeypatch.setattr(
        cm,
        "_join_order",
        lambda events, shown=None: {n: (e, False) for n, e in cm._join_ranks(events).items()},
    )
    report = validate_coordinator("batching-5000-joins", lines)
    assert report.violations == []
    assert any("the response at line 190 differs" in r for r in report.reasons), report.reasons


def test_a_release_handled_first_is_found_among_many_overlapping() -> None:
    """batching-5000 (a prefix; 50 librdkafka members): m45's full heartbeat (line 2305)
    overlaps 33 other exchanges; Kafka gave it foo-66 and foo-67 at once, so it had already
    handled the acknowledgement (line 2321, the same millisecond) of the member revoking
    them. The replay tries first the exchanges of the members holding what was withheld,
    and takes that order."""
    report = validate_coordinator("batching-5000-release", _librdkafka("batching-5000-release"))
    _ok(report)
    [taken] = [n for n in report.notes if "in the other order it agrees" in n]
    assert "lines 2305 and 2321" in taken
    assert "the response at line 2310 differs in Assignment" in taken


def test_a_release_handled_after_is_found_among_the_overlapping() -> None:
    """batching-1000 (a prefix, run 2026-12-07): Kafka answered m43's heartbeat (line 875)
    without foo-30 and foo-61, still unreleased for it; the acknowledgement that released
    them (line 871) was forwarded before it but handled after. The replay tries first the
    exchanges that released what the model gave and Kafka did not, and takes that order."""
    lines = _librdkafka("batching-1000-late-release")
    report = validate_coordinator("batching-1000-late-release", lines)
    _ok(report)
    [taken] = [n for n in report.notes if "in the other order it agrees" in n]
    assert "lines 875 and 871" in taken
    assert "the response at line 876 differs in Assignment" in taken
