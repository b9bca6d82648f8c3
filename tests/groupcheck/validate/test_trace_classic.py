"""The trace format's classic group APIs (version 2): JoinGroup, SyncGroup, Heartbeat and
LeaveGroup bodies round-trip with Kafka's field names, version 1 files are still read and
may not hold them, malformed classic bodies are errors at their line and column, and both
validation modes read classic traces (docs/trace-format.md)."""

from __future__ import annotations

import dataclasses
import json
import random
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path as FsPath
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from groupcheck.validate import validate_conformance, validate_safety
from groupcheck.validate.safety_classic import CLASSIC_OBSERVED_CHECKS
from groupcheck.validate.safety_mode import observed_text
from model import system
from model.actions import (
    ACTIONS_BY_KIND,
    Action,
    Bounce,
    DeliverMessage,
    LoseMessage,
    SendJoinGroup,
    SendSyncGroup,
    StallAssignment,
)
from model.classic.messages import (
    ClassicSubscription,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    JoinGroupResponseMember,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from model.classic.presets import CLASSIC, CLASSIC_COOPERATIVE
from model.config import Config
from model.ids import FrozenMap
from model.path import Path
from model.presets import TINY, preset
from model.records import Body, Message, OffsetCommitRequest, OffsetCommitResponse
from model.status import ErrorCode
from model.trace import (
    FORMAT,
    VERSION,
    TraceError,
    decode_action,
    encode_action,
    parse_event,
    parse_header,
    path_lines,
    read_path,
)
from model.trace.codec import CLASSIC_KINDS

ROOT = FsPath(__file__).resolve().parents[3]
SCHEMA = ROOT / "docs" / "trace-format.schema.json"

WALKS = 20
STEPS = 60


def walk(config: Config, seed: int, steps: int = STEPS) -> Path:
    """A seeded random walk of ``config`` (any enabled action)."""
    rng, state, actions = random.Random(seed), system.initial(config), []
    for _ in range(steps):
        enabled = system.enabled(state, config)
        if not enabled:
            break
        action = enabled[rng.randrange(len(enabled))]
        actions.append(action)
        state = system.step(state, action, config)
    return Path(config, tuple(actions))


@cache
def walks(name: str) -> tuple[Path, ...]:
    """The seeded walks of the classic preset ``name``."""
    return tuple(walk(preset(name), seed) for seed in range(WALKS))


CLASSIC_NAMES = [c.name for c in CLASSIC]


# --------------------------------------------------------------------------- round trip


@pytest.mark.parametrize("name", CLASSIC_NAMES)
def test_classic_walks_round_trip(name: str) -> None:
    config = preset(name)
    for path in walks(name):
        lines = list(path_lines(path))
        header = json.loads(lines[0])
        assert (header["version"], header["protocol"]) == (VERSION, "classic") == (2, "classic")
        assert len(lines) == len(path.actions) + 1
        assert read_path(config, lines).actions == path.actions


def _messages() -> Iterator[tuple[Message, str]]:
    """Every message of the classic walks, with its trace api."""
    for name in CLASSIC_NAMES:
        for path in walks(name):
            for action in path.actions:
                if isinstance(action, DeliverMessage | LoseMessage):
                    yield action.message, encode_action(action)[1]["api"]


def test_the_walks_cover_every_classic_api() -> None:
    """The round trip above is not vacuous: every classic request and the responses the
    model's clients read appear in the walks, under Kafka's API names."""
    seen = {(api, m.to_coordinator) for m, api in _messages()}
    for api in ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit"):
        assert (api, True) in seen, api
    for api in ("JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit"):
        assert (api, False) in seen, api
    kinds = {a.kind for name in CLASSIC_NAMES for p in walks(name) for a in p.actions}
    assert {"SendJoinGroup", "SendSyncGroup", "Bounce"} <= kinds


SUB = ClassicSubscription(
    topics=frozenset({"foo", "bar"}),
    owned_partitions=frozenset({("foo", 1)}),
    generation_id=4,
    user_data=frozenset({("foo", 1), ("bar", 0)}),
)
BODIES: list[tuple[Body, str]] = [
    (
        JoinGroupRequest("", None, ("range",), ClassicSubscription(frozenset({"foo"})), 1, 2),
        "JoinGroup",
    ),
    (
        JoinGroupRequest("A.m1", "a", ("cooperative-sticky", "range"), SUB, 300000, 45000),
        "JoinGroup",
    ),
    (JoinGroupResponse(ErrorCode.MEMBER_ID_REQUIRED, -1, None, "", "A.m2"), "JoinGroup"),
    (JoinGroupResponse(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, -1, None, "", "A.m1"), "JoinGroup"),
    (
        JoinGroupResponse(
            ErrorCode.NONE,
            5,
            "range",
            "B.m1",
            "B.m1",
            (
                JoinGroupResponseMember("B.m1", None, SUB),
                JoinGroupResponseMember("A.m1", "a", ClassicSubscription(frozenset({"foo"}))),
            ),
        ),
        "JoinGroup",
    ),
    (SyncGroupRequest("A.m1", 5, None, None), "SyncGroup"),
    (
        SyncGroupRequest(
            "B.m1",
            5,
            "b",
            "range",
            FrozenMap({"B.m1": frozenset({("foo", 0)}), "A.m1": frozenset()}),
        ),
        "SyncGroup",
    ),
    (SyncGroupResponse(ErrorCode.REBALANCE_IN_PROGRESS, None), "SyncGroup"),
    (SyncGroupResponse(ErrorCode.NONE, "range", frozenset({("foo", 0), ("bar", 2)})), "SyncGroup"),
    (HeartbeatRequest("A.m1", 5, None), "Heartbeat"),
    (HeartbeatRequest("A.m1", 5, "a"), "Heartbeat"),
    (HeartbeatResponse(ErrorCode.FENCED_INSTANCE_ID), "Heartbeat"),
    (LeaveGroupRequest("A.m1", None), "LeaveGroup"),
    (LeaveGroupRequest("A.m1", "a"), "LeaveGroup"),
    (LeaveGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID), "LeaveGroup"),
    (OffsetCommitRequest("A.m1", 5, frozenset({("foo", 0)})), "OffsetCommit"),
    (OffsetCommitResponse(ErrorCode.ILLEGAL_GENERATION, frozenset()), "OffsetCommit"),
]
REQUESTS = (
    JoinGroupRequest,
    SyncGroupRequest,
    HeartbeatRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
)


def _line(action: Action, seq: int = 1) -> str:
    source, payload = encode_action(action)
    event = {"seq": seq, "ts": None, "source": source, "kind": action.kind, "payload": payload}
    return json.dumps(event, sort_keys=True)


def classic_header(version: int = VERSION, protocol: str = "classic") -> str:
    return json.dumps(
        {"format": FORMAT, "version": version, "protocol": protocol, "topics": {"foo": 2}}
    )


HEADER = parse_header(classic_header())


@pytest.mark.parametrize(("body", "api"), BODIES, ids=lambda x: type(x).__name__)
def test_every_classic_body_round_trips(body: Body, api: str) -> None:
    message = Message("A", 1, 2, isinstance(body, REQUESTS), body)
    for action in (DeliverMessage(message), LoseMessage(message)):
        line = _line(action)
        assert json.loads(line)["payload"]["api"] == api
        assert decode_action(parse_event(line, 2), line, 2, HEADER) == action
        assert _schema().is_valid(json.loads(line)), line


@pytest.mark.parametrize("kind", sorted(CLASSIC_KINDS))
def test_every_classic_action_kind_decodes(kind: str) -> None:
    action = ACTIONS_BY_KIND[kind]("A")  # type: ignore[call-arg]
    line = _line(action)
    assert json.loads(line)["payload"] == {"client": "A"}
    assert decode_action(parse_event(line, 2), line, 2, HEADER) == action
    assert _schema().is_valid(json.loads(line))


def test_join_group_writes_kafka_field_names_and_metadata_per_protocol() -> None:
    body = JoinGroupRequest("A.m1", "a", ("cooperative-sticky", "range"), SUB, 300000, 45000)
    payload = encode_action(DeliverMessage(Message("A", 0, 0, True, body)))[1]
    written = payload["body"]
    assert written["ProtocolType"] == "consumer"
    assert written["GroupInstanceId"] == "a"
    assert [p["Name"] for p in written["Protocols"]] == ["cooperative-sticky", "range"]
    metadata = {
        "Topics": ["bar", "foo"],
        "OwnedPartitions": [{"TopicId": "foo", "Partitions": [1]}],
        "GenerationId": 4,
        "UserData": [
            {"TopicId": "bar", "Partitions": [0]},
            {"TopicId": "foo", "Partitions": [1]},
        ],
    }
    assert [p["Metadata"] for p in written["Protocols"]] == [metadata, metadata]
    leave = encode_action(DeliverMessage(Message("A", 0, 0, True, LeaveGroupRequest("A.m1", None))))
    assert leave[1]["body"] == {"Members": [{"MemberId": "A.m1"}]}


def test_absent_subscription_fields_take_kafka_defaults() -> None:
    """``ConsumerProtocolSubscription`` v0 has only Topics (and UserData)."""
    body = {
        "MemberId": "",
        "ProtocolType": "consumer",
        "Protocols": [{"Name": "range", "Metadata": {"Topics": ["foo"], "UserData": None}}],
        "RebalanceTimeoutMs": 1,
        "SessionTimeoutMs": 2,
    }
    line = _message_line("JoinGroup", "request", body)
    action = decode_action(parse_event(line, 2), line, 2, HEADER)
    assert isinstance(action, DeliverMessage)
    assert action.message.body == JoinGroupRequest(
        "", None, ("range",), ClassicSubscription(frozenset({"foo"})), 1, 2
    )


# --------------------------------------------------------------------------- versions


def test_version_1_consumer_traces_are_still_read() -> None:
    path = walk(TINY, 3)
    lines = list(path_lines(path))
    header = json.loads(lines[0])
    assert header["version"] == 2
    header["version"] = 1
    lines[0] = json.dumps(header)
    assert parse_header(lines[0]).version == 1
    assert read_path(TINY, lines).actions == path.actions


def _message_line(
    api: str, direction: str, body: dict[str, Any], kind: str = "DeliverMessage"
) -> str:
    payload = {
        "client": "A",
        "incarnation": 0,
        "connection": 0,
        "direction": direction,
        "api": api,
        "body": body,
    }
    return json.dumps({"seq": 1, "ts": None, "source": "network", "kind": kind, "payload": payload})


def _decode_error(header_line: str, line: str) -> TraceError:
    header = parse_header(header_line)
    with pytest.raises(TraceError) as info:
        decode_action(parse_event(line, 2), line, 2, header)
    return info.value


HEARTBEAT_LINE = _message_line("Heartbeat", "request", {"MemberId": "A.m1", "GenerationId": 1})


def test_a_version_1_file_with_a_classic_api_is_an_error_at_its_api() -> None:
    error = _decode_error(classic_header(1, "consumer"), HEARTBEAT_LINE)
    assert (error.line, error.column) == (2, HEARTBEAT_LINE.index('"api"') + 1)
    assert "not in trace format version 1" in error.reason
    # ... and the same line reads in a version 2 classic file.
    assert isinstance(
        decode_action(parse_event(HEARTBEAT_LINE, 2), HEARTBEAT_LINE, 2, HEADER), DeliverMessage
    )


@pytest.mark.parametrize(
    "action", [SendJoinGroup("A"), SendSyncGroup("A"), Bounce("A"), StallAssignment("A")]
)
def test_a_version_1_file_with_a_classic_event_kind_is_an_error_at_its_kind(action: Action) -> None:
    line = _line(action)
    error = _decode_error(classic_header(1, "consumer"), line)
    assert (error.line, error.column) == (2, line.index('"kind"') + 1)
    assert action.kind in error.reason
    assert "version 1" in error.reason


def test_a_version_1_header_cannot_say_classic() -> None:
    line = classic_header(1, "classic")
    with pytest.raises(TraceError) as info:
        parse_header(line)
    assert (info.value.line, info.value.column) == (1, line.index('"protocol"') + 1)
    assert "needs version 2" in info.value.reason
    assert not _schema().is_valid(json.loads(line))
    assert _schema().is_valid(json.loads(classic_header()))


def test_an_api_of_the_other_protocol_is_an_error() -> None:
    error = _decode_error(classic_header(2, "consumer"), HEARTBEAT_LINE)
    assert "not an api of the header's protocol 'consumer'" in error.reason
    consumer = _message_line(
        "ConsumerGroupHeartbeat", "request", {"MemberId": "A", "MemberEpoch": 0}
    )
    error = _decode_error(classic_header(), consumer)
    assert (error.line, error.column) == (2, consumer.index('"api"') + 1)
    assert "'classic'" in error.reason


def test_read_path_refuses_a_header_of_the_other_protocol() -> None:
    lines = list(path_lines(walks("CLASSIC_COOPERATIVE")[0]))
    header = json.loads(lines[0])
    header["protocol"] = "consumer"
    lines[0] = json.dumps(header)
    with pytest.raises(TraceError) as info:
        read_path(CLASSIC_COOPERATIVE, lines)
    assert info.value.line == 1
    assert "differs from the config's 'classic'" in info.value.reason


# --------------------------------------------------------------------------- malformed


def _join(**changes: Any) -> dict[str, Any]:
    meta = {"Topics": ["foo"], "OwnedPartitions": [], "GenerationId": -1, "UserData": []}
    body: dict[str, Any] = {
        "MemberId": "A.m1",
        "ProtocolType": "consumer",
        "Protocols": [{"Name": "range", "Metadata": meta}],
        "RebalanceTimeoutMs": 300000,
        "SessionTimeoutMs": 45000,
    }
    body.update(changes)
    return body


META = {"Topics": ["foo"], "OwnedPartitions": [], "GenerationId": -1, "UserData": []}
OTHER_META = {**META, "OwnedPartitions": [{"TopicId": "foo", "Partitions": [0]}]}

MALFORMED: list[tuple[str, str, str, str]] = [
    # (line, the key whose column the error names, a part of the reason, why)
    (
        _message_line("JoinGroup", "request", _join(Generation=1)),
        "Generation",
        "unknown field 'Generation' in body",
        "unknown body field",
    ),
    (
        _message_line(
            "JoinGroup",
            "request",
            _join(Protocols=[{"Name": "range", "Metadata": {**META, "RackId": "r"}}]),
        ),
        "RackId",
        "unknown field 'RackId' in Metadata",
        "unknown subscription field",
    ),
    (
        _message_line(
            "JoinGroup",
            "request",
            _join(Protocols=[{"Name": "range", "Metadata": META, "Weight": 1}]),
        ),
        "Weight",
        "unknown field 'Weight' in Protocols",
        "unknown protocol field",
    ),
    (
        _message_line(
            "JoinGroup",
            "request",
            _join(
                Protocols=[
                    {"Name": "cooperative-sticky", "Metadata": META},
                    {"Name": "range", "Metadata": OTHER_META},
                ]
            ),
        ),
        "Metadata#2",
        "protocol 'range' carries other Metadata than 'cooperative-sticky'",
        "mismatched per-protocol metadata",
    ),
    (
        _message_line("JoinGroup", "request", _join(ProtocolType="connect")),
        "ProtocolType",
        "ProtocolType must be 'consumer'",
        "another protocol type",
    ),
    (
        _message_line("JoinGroup", "request", _join(Protocols=[])),
        "Protocols",
        "at least one assignor",
        "no protocols",
    ),
    (
        _message_line("JoinGroup", "request", _join(SessionTimeoutMs="45000")),
        "SessionTimeoutMs",
        "'SessionTimeoutMs' must be int",
        "wrong type",
    ),
    (
        _message_line("JoinGroup", "request", _join(RebalanceTimeoutMs=2**31)),
        "RebalanceTimeoutMs",
        "out of the int32 range",
        "int32 overflow",
    ),
    (
        _message_line(
            "JoinGroup",
            "request",
            _join(Protocols=[{"Name": "range", "Metadata": {**META, "Topics": ["foo", 3]}}]),
        ),
        "Topics",
        "Topics must be a list of topic names",
        "a topic name that is no string",
    ),
    (
        _message_line(
            "JoinGroup",
            "response",
            {
                "ErrorCode": 0,
                "GenerationId": 1,
                "Leader": "A.m1",
                "MemberId": "A.m1",
                "Members": [{"MemberId": "A.m1"}],
            },
        ),
        "Members",
        "missing field 'Metadata'",
        "a member without metadata",
    ),
    (
        _message_line(
            "JoinGroup",
            "response",
            {"ErrorCode": 0, "GenerationId": True, "Leader": "", "MemberId": "A.m1", "Members": []},
        ),
        "GenerationId",
        "'GenerationId' must be int",
        "a bool is no int",
    ),
    (
        _message_line(
            "SyncGroup",
            "request",
            {
                "MemberId": "A.m1",
                "GenerationId": 1,
                "Assignments": [
                    {"MemberId": "A.m1", "Assignment": []},
                    {"MemberId": "A.m1", "Assignment": []},
                ],
            },
        ),
        "Assignments",
        "names member 'A.m1' twice",
        "a member assigned twice",
    ),
    (
        _message_line(
            "SyncGroup",
            "response",
            {"ErrorCode": 0, "Assignment": [{"TopicId": "foo", "Partitions": [-1]}]},
        ),
        "Partitions",
        "bad partition index -1",
        "a negative partition",
    ),
    (
        _message_line("SyncGroup", "response", {"ErrorCode": 0}),
        "body",
        "missing field 'Assignment'",
        "a response without its assignment",
    ),
    (
        _message_line("Heartbeat", "response", {"ErrorCode": 9999}),
        "ErrorCode",
        "unknown error code 9999",
        "an unknown error code",
    ),
    (
        _message_line(
            "Heartbeat", "request", {"MemberId": "A.m1", "GenerationId": 1, "MemberEpoch": 1}
        ),
        "MemberEpoch",
        "unknown field 'MemberEpoch' in body",
        "a consumer-protocol field in a classic body",
    ),
    (
        _message_line(
            "LeaveGroup", "request", {"Members": [{"MemberId": "A.m1"}, {"MemberId": "B.m1"}]}
        ),
        "Members",
        "exactly one member",
        "two members leaving in one request",
    ),
    (
        _message_line(
            "LeaveGroup", "request", {"Members": [{"MemberId": "A.m1", "Reason": "bye"}]}
        ),
        "Reason",
        "unknown field 'Reason' in Members",
        "an unknown member field",
    ),
]


def _column(line: str, key: str) -> int:
    if key.endswith("#2"):
        first = line.index(f'"{key[:-2]}"')
        return line.index(f'"{key[:-2]}"', first + 1) + 1
    return line.index(f'"{key}"') + 1


@pytest.mark.parametrize(("line", "key", "reason", "why"), MALFORMED, ids=[m[3] for m in MALFORMED])
def test_malformed_classic_bodies_are_errors_at_their_column(
    line: str, key: str, reason: str, why: str
) -> None:
    error = _decode_error(classic_header(), line)
    assert error.line == 2
    assert error.column == _column(line, key), (why, error)
    assert reason in error.reason, (why, error.reason)
    assert "\n" not in str(error)
    # The same line, as the first event of a trace, is malformed for read_path too.
    with pytest.raises(TraceError):
        read_path(CLASSIC_COOPERATIVE, [classic_header(), line])


SCHEMA_CHECKABLE = [
    m
    for m in MALFORMED
    if m[3]
    not in {"mismatched per-protocol metadata", "a member assigned twice", "an unknown error code"}
]


@pytest.mark.parametrize(
    ("line", "key", "reason", "why"), SCHEMA_CHECKABLE, ids=[m[3] for m in SCHEMA_CHECKABLE]
)
def test_the_schema_rejects_the_malformed_bodies_it_can_see(
    line: str, key: str, reason: str, why: str
) -> None:
    """What the codec refuses in one line, the schema refuses too (except what JSON Schema
    cannot say: equal metadata, unique members, known error codes)."""
    assert not _schema().is_valid(json.loads(line)), why


@cache
def _schema() -> Draft202012Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@pytest.mark.parametrize("name", CLASSIC_NAMES)
def test_classic_model_traces_match_the_json_schema(name: str) -> None:
    validator = _schema()
    for path in walks(name)[:5]:
        for line in path_lines(path):
            errors = [e.message for e in validator.iter_errors(json.loads(line))]
            assert not errors, (line, errors)


# --------------------------------------------------------------------------- conformance


def _groupcheck(*args: str) -> subprocess.CompletedProcess[str]:
    """``groupcheck ARGS`` as a user runs it (the virtualenv's entry point)."""
    script = FsPath(sys.executable).parent / "groupcheck"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "groupcheck"]
    return subprocess.run([*command, *args], capture_output=True, text=True, cwd=ROOT, check=False)


def test_cli_conformance_replays_a_classic_walk(tmp_path: FsPath) -> None:
    path = walk(CLASSIC_COOPERATIVE, 11, 80)
    assert any(a.kind == "SendSyncGroup" for a in path.actions)
    trace = tmp_path / "cooperative.ndjson"
    trace.write_text("\n".join(path_lines(path)) + "\n")
    proc = _groupcheck("validate", "--mode", "conformance", "--json", str(trace))
    assert proc.returncode in (0, 3), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["result"] in ("ok", "inconclusive")
    assert doc["events"] == len(path.actions)
    assert doc["violations"] == []
    assert doc["errors"] == []


@pytest.fixture(scope="module")
def upgrade_counterexample() -> Path:
    from tests.counterexamples import upgrade_one_bounce

    return upgrade_one_bounce()[0]


def test_cli_conformance_reports_the_upgrade_counterexample(
    upgrade_counterexample: Path, tmp_path: FsPath
) -> None:
    trace = tmp_path / "upgrade.ndjson"
    trace.write_text("\n".join(path_lines(upgrade_counterexample)) + "\n")
    proc = _groupcheck("validate", "--mode", "conformance", "--json", str(trace))
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["result"] == "violation"
    properties = {v["property"] for v in doc["violations"]}
    assert "Conformance" not in properties  # the model takes every event: a property fails
    assert properties
    assert doc["violations"][0]["line"] == len(upgrade_counterexample.actions) + 1


# --------------------------------------------------------------------------- safety


def _extended(path: Path, steps: int) -> Path:
    """``path`` followed by up to ``steps`` progress actions (the first enabled each time)."""
    config, state = path.config, system.initial(path.config)
    for action in path.actions:
        state = system.step(state, action, config)
    actions = list(path.actions)
    for _ in range(steps):
        enabled = [a for a in system.enabled(state, config) if not a.PERTURBATION]
        if not enabled:
            break
        actions.append(enabled[0])
        state = system.step(state, enabled[0], config)
    return Path(config, tuple(actions))


def test_safety_finds_the_upgrade_double_ownership(
    upgrade_counterexample: Path, tmp_path: FsPath
) -> None:
    """The counterexample ends at the leader's SyncGroup; once its responses are read, the
    partition the bounced member still owns is handed to the leader."""
    path = _extended(upgrade_counterexample, 40)
    trace = tmp_path / "upgrade-tail.ndjson"
    trace.write_text("\n".join(path_lines(path)) + "\n")
    proc = _groupcheck("validate", "--mode", "safety", "--json", str(trace))
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    (finding,) = doc["violations"]
    assert finding["property"] == "Observed.NoDoubleOwnership"
    assert "is given to A.m1 while B.m2 may still be consuming it" in finding["message"]
    assert "reported owning it" in finding["message"]
    assert finding["line"] > len(upgrade_counterexample.actions) + 1


@pytest.mark.parametrize("name", CLASSIC_NAMES)
def test_safety_reports_nothing_where_the_model_violates_nothing(name: str) -> None:
    """On walks whose replay violates no model property, the Observed.* checks of a classic
    trace find nothing (they are not stricter than the model)."""
    checked = 0
    for path in walks(name):
        lines = list(path_lines(path))
        if validate_conformance("t", lines).result != "ok":
            continue
        report = validate_safety("t", lines)
        assert report.result == "ok", (report.violations, report.error)
        assert report.events == len(path.actions)
        checked += 1
    assert checked >= WALKS // 2


def test_safety_with_commits_timers_and_lost_messages() -> None:
    """More perturbations, auto-commits and live timers: still no finding on walks the
    model finds correct, and OffsetCommits are checked."""
    config = dataclasses.replace(
        CLASSIC_COOPERATIVE,
        name="CLASSIC_COOPERATIVE_BUSY",
        perturbations=frozenset(
            {"Subscribe", "Leave", "Crash", "LoseMessage", "AbandonRequest", "AddPartitions"}
        ),
        max_perturbations=4,
        auto_commit=True,
        live_timers=True,
    )
    commits = 0
    for seed in range(30):
        path = walk(config, seed, 80)
        lines = list(path_lines(path))
        assert read_path(config, lines).actions == path.actions
        if validate_conformance("t", lines, config).result != "ok":
            continue
        report = validate_safety("t", lines)
        assert report.violations == [], report.violations
        assert report.notes == []  # every accepted commit's generation is known: checked
        commits += sum('"api": "OffsetCommit", "body": {"ErrorCode": 0' in line for line in lines)
    assert commits > 0


# Hand-written classic traces: the checks fire where they should, and only there.


def msg(client: str, api: str, body: dict[str, Any], request: bool, connection: int = 0) -> str:
    payload = {
        "client": client,
        "incarnation": 0,
        "connection": connection,
        "direction": "request" if request else "response",
        "api": api,
        "body": body,
    }
    return json.dumps(
        {"seq": 0, "ts": None, "source": "network", "kind": "DeliverMessage", "payload": payload}
    )


def ev(kind: str, payload: dict[str, object]) -> str:
    return json.dumps({"seq": 0, "ts": None, "source": "x", "kind": kind, "payload": payload})


def parts(*ps: int) -> list[dict[str, object]]:
    return [{"TopicId": "foo", "Partitions": list(ps)}] if ps else []


def join_req(client: str, member: str, owned: list[dict[str, object]], generation: int = -1) -> str:
    meta = {"Topics": ["foo"], "OwnedPartitions": owned, "GenerationId": generation, "UserData": []}
    body = {
        "MemberId": member,
        "ProtocolType": "consumer",
        "Protocols": [{"Name": "cooperative-sticky", "Metadata": meta}],
        "RebalanceTimeoutMs": 300000,
        "SessionTimeoutMs": 45000,
    }
    return msg(client, "JoinGroup", body, True)


def join_resp(client: str, member: str, generation: int, error: int = 0) -> str:
    body = {
        "ErrorCode": error,
        "GenerationId": generation,
        "ProtocolName": "cooperative-sticky",
        "Leader": member,
        "MemberId": member,
        "Members": [],
    }
    return msg(client, "JoinGroup", body, False)


def sync_resp(client: str, assignment: list[dict[str, object]], connection: int = 0) -> str:
    return msg(client, "SyncGroup", {"ErrorCode": 0, "Assignment": assignment}, False, connection)


def commit(client: str, member: str, generation: int, error: int | None) -> list[str]:
    lines = [
        msg(
            client,
            "OffsetCommit",
            {"MemberId": member, "GenerationIdOrMemberEpoch": generation, "Topics": parts(0)},
            True,
        )
    ]
    if error is not None:
        lines.append(msg(client, "OffsetCommit", {"ErrorCode": error, "Topics": parts(0)}, False))
    return lines


def properties(lines: list[str]) -> list[tuple[int, str]]:
    report = validate_safety("t", [classic_header(), *lines])
    assert report.error is None, report.error
    return [(v.line, v.property) for v in report.violations]


A_OWNS_0_1 = [join_req("A", "", parts()), join_resp("A", "A.m1", 1), sync_resp("A", parts(0, 1))]


def test_an_eager_member_that_has_not_rejoined_still_consumes() -> None:
    lines = [
        *A_OWNS_0_1,
        join_req("B", "", parts()),
        join_resp("B", "B.m1", 2),
        sync_resp("B", parts(1)),
    ]
    assert properties(lines) == [(7, "Observed.NoDoubleOwnership")]
    report = validate_safety("t", [classic_header(), *lines])
    assert (
        "foo-1 is given to B.m1 while A.m1 may still be consuming it"
        in report.violations[0].message
    )
    assert "given it at line 4" in report.violations[0].message


def test_a_member_that_rejoined_owning_nothing_released_everything() -> None:
    lines = [
        *A_OWNS_0_1,
        join_req("A", "A.m1", parts()),  # eager: revoked everything before rejoining
        join_req("B", "", parts()),
        join_resp("B", "B.m1", 2),
        sync_resp("B", parts(1)),
    ]
    assert properties(lines) == []


def test_a_cooperative_member_reporting_a_partition_still_consumes_it() -> None:
    lines = [
        *A_OWNS_0_1,
        join_req("A", "A.m1", parts(0, 1), 1),
        join_req("B", "", parts()),
        join_resp("B", "B.m1", 2),
        sync_resp("B", parts(1)),  # line 8: A reported owning foo-1 at line 5
        join_resp("A", "A.m1", 2),
        sync_resp("A", parts(0)),
    ]
    assert properties(lines) == [(8, "Observed.NoDoubleOwnership")]
    # A reads its SyncGroup response (revoking foo-1) before B reads its own: the
    # coordinator sent both at once, so foo-1 still moved within generation 2 (KIP-429:
    # a cooperative assignor keeps it back for the next rebalance).
    swapped = [*lines[:4], join_resp("A", "A.m1", 2), sync_resp("A", parts(0)), *lines[4:7]]
    assert properties(swapped) == [(10, "Observed.NoDoubleOwnership")]
    report = validate_safety("t", [classic_header(), *swapped])
    assert "its JoinGroup at line 5 of this rebalance (generation 2) reported owning it" in (
        report.violations[0].message
    )
    # Given in the next rebalance, after A rejoined without it: no finding.
    later = [
        *swapped[:6],
        join_req("A", "A.m1", parts(0), 2),
        join_req("B", "", parts()),
        join_resp("A", "A.m1", 3),
        join_resp("B", "B.m1", 3),
        sync_resp("B", parts(1)),
        sync_resp("A", parts(0)),
    ]
    assert properties(later) == []


@pytest.mark.parametrize(
    "stop",
    [
        ev("Crash", {"client": "A"}),
        ev("Leave", {"client": "A"}),
        ev("Bounce", {"client": "A"}),
        ev("StallAssignment", {"client": "A"}),
        msg("A", "LeaveGroup", {"Members": [{"MemberId": "A.m1"}]}, True),
        msg("A", "Heartbeat", {"ErrorCode": 82}, False),  # FENCED_INSTANCE_ID: fatal
    ],
    ids=["Crash", "Leave", "Bounce", "StallAssignment", "LeaveGroup", "fatal-error"],
)
def test_a_client_that_stopped_consumes_nothing(stop: str) -> None:
    lines = [
        *A_OWNS_0_1,
        stop,
        join_req("B", "", parts()),
        join_resp("B", "B.m1", 2),
        sync_resp("B", parts(1)),
    ]
    assert properties(lines) == []


def test_a_response_on_a_closed_connection_is_read_by_nobody() -> None:
    lines = [
        join_req("A", "", parts()),
        join_resp("A", "A.m1", 1),
        ev("RequestTimeout", {"client": "A"}),
        sync_resp("A", parts(0, 1)),  # on connection 0, closed: A does not take it
        join_req("B", "", parts()),
        join_resp("B", "B.m1", 2),
        sync_resp("B", parts(1)),
    ]
    assert properties(lines) == []
    reopened = [*lines[:3], sync_resp("A", parts(0, 1), connection=1), *lines[4:]]
    assert properties(reopened) == [(8, "Observed.NoDoubleOwnership")]


def test_generation_monotone() -> None:
    lines = [join_resp("A", "A.m1", 3), join_resp("A", "A.m1", 4), join_resp("A", "A.m1", 2)]
    assert properties(lines) == [(4, "Observed.GenerationMonotone")]
    assert properties([join_resp("A", "A.m1", 3), join_resp("A", "A.m1", -1, error=27)]) == []


def test_commit_fenced_by_generation() -> None:
    base = [join_resp("A", "A.m1", 2)]
    assert properties([*base, *commit("A", "A.m1", 2, 0)]) == []
    assert properties([*base, *commit("A", "A.m1", 1, 22)]) == []  # refused: ILLEGAL_GENERATION
    assert properties([*base, *commit("A", "A.m1", 1, 0)]) == [(4, "Observed.CommitFenced")]
    # The response answers the oldest commit on its connection.
    lines = [*base, *commit("A", "A.m1", 2, None), *commit("A", "A.m1", 1, None)]
    ok = msg("A", "OffsetCommit", {"ErrorCode": 0, "Topics": parts(0)}, False)
    refused = msg("A", "OffsetCommit", {"ErrorCode": 22, "Topics": parts(0)}, False)
    assert properties([*lines, ok, refused]) == []
    assert properties([*lines, refused, ok]) == [(6, "Observed.CommitFenced")]


def test_commit_fenced_after_removal() -> None:
    lines = [
        join_resp("A", "A.m1", 2),
        ev("SessionTimeout", {"member_id": "A.m1"}),
        *commit("A", "A.m1", 2, 0),
    ]
    assert properties(lines) == [(5, "Observed.CommitFenced")]
    report = validate_safety("t", [classic_header(), *lines])
    assert "removed the member at line 3" in report.violations[0].message
    rejoined = [*lines[:2], join_resp("A", "A.m1", 3), *commit("A", "A.m1", 3, 0)]
    assert properties(rejoined) == []


def test_a_commit_of_an_unknown_generation_is_noted_not_checked() -> None:
    report = validate_safety("t", [classic_header(), *commit("A", "A.m1", 7, 0)])
    assert report.result == "ok"
    assert len(report.notes) == 1
    assert "not checked" in report.notes[0]


def test_observed_text_names_the_classic_checks() -> None:
    for check in CLASSIC_OBSERVED_CHECKS:
        description, reference = observed_text(check.name)
        assert description
        assert reference
    assert observed_text("Observed.CommitFenced")[0].startswith("An offset commit is accepted")


def test_cli_safety_refuses_a_version_1_file_with_classic_apis(tmp_path: FsPath) -> None:
    trace = tmp_path / "old.ndjson"
    trace.write_text(classic_header(1, "consumer") + "\n" + HEARTBEAT_LINE + "\n")
    proc = _groupcheck("validate", "--mode", "safety", str(trace))
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    column = HEARTBEAT_LINE.index('"api"') + 1
    assert f"{trace}:2:{column}: api 'Heartbeat' is not in trace format version 1" in line
    assert "Traceback" not in proc.stderr
