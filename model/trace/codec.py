"""Encode model actions as trace events with Kafka's field names, and decode them back.

Line 1 is the header::

    {"format": "groupcheck-trace", "version": 2, "protocol": "consumer",
     "topics": {"foo": 2}, "config": "TINY"}

then one event per line::

    {"seq": 3, "ts": null, "source": "network", "kind": "DeliverMessage",
     "payload": {"client": "A", "incarnation": 0, "connection": 0,
                 "direction": "request", "api": "ConsumerGroupHeartbeat",
                 "body": {"MemberId": "A", "MemberEpoch": 0, ...}}}

``kind`` is the model's action vocabulary; request and response bodies use the field names
of Kafka's messages: ``ConsumerGroupHeartbeatRequest`` and ``OffsetCommitRequest`` (and
their responses) for the consumer protocol (KIP-848); ``JoinGroupRequest``,
``SyncGroupRequest``, ``HeartbeatRequest``, ``LeaveGroupRequest`` and
``OffsetCommitRequest`` (and their responses) for the classic protocol, whose JoinGroup
metadata is a ``ConsumerProtocolSubscription``. Decoding is strict: unknown kinds, fields
or types raise :class:`TraceError` naming the line, the column and the reason.

Writers write version 2 (:data:`VERSION`), and version 3 for a ``mixed`` trace (a group
whose members speak both protocols, KIP-848 "Online Migration": :func:`version_for`);
version 1 files, which know the consumer protocol only, are still read, and a classic API
or event kind in one is an error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, NoReturn

from model import system
from model.actions import ACTIONS_BY_KIND, Action, CreateTopic, DeliverMessage, LoseMessage
from model.classic.messages import (
    NO_GENERATION,
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
from model.config import Config
from model.ids import EMPTY, Assignment, FrozenMap
from model.path import Path
from model.records import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Message,
    OffsetCommitRequest,
    OffsetCommitResponse,
)
from model.settings import config_to_mapping
from model.status import ConfigError, ErrorCode
from model.trace.strict_json import JsonTextError, raw_decode

FORMAT = "groupcheck-trace"
VERSION = 2
"""The version writers write for a trace of one protocol."""
MIXED_VERSION = 3
"""The version writers write for a ``mixed`` trace."""
VERSIONS = (1, 2, 3)
"""The versions this module reads: 1 (the consumer protocol only), 2 (also the classic
protocol's APIs and event kinds) and 3 (also ``mixed`` traces, both protocols' APIs)."""
PROTOCOLS: dict[int, tuple[str, ...]] = {
    1: ("consumer",),
    2: ("consumer", "classic"),
    3: ("consumer", "classic", "mixed"),
}
"""The header's ``protocol`` values each version allows."""
CONSUMER_APIS = ("ConsumerGroupHeartbeat", "OffsetCommit")
"""The message APIs of a ``consumer`` (KIP-848) trace."""
CLASSIC_APIS = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit")
"""The message APIs of a ``classic`` trace (offset commits carry the generation)."""
MIXED_APIS = ("ConsumerGroupHeartbeat", *CLASSIC_APIS)
"""The message APIs of a ``mixed`` trace: a member speaks one protocol or the other."""
APIS: dict[str, tuple[str, ...]] = {
    "consumer": CONSUMER_APIS,
    "classic": CLASSIC_APIS,
    "mixed": MIXED_APIS,
}
"""Per header ``protocol``, the APIs its messages may use."""
CLASSIC_KINDS = frozenset({"SendJoinGroup", "SendSyncGroup", "Bounce", "StallAssignment"})
CLIENT_EVENT_KINDS = frozenset({"Callback", "Subscription", "Unsubscribe", "Close", "PollStall"})
"""Event kinds that are not model actions: what a client process's application saw and did
(:class:`ClientEvent`, below; docs/trace-format.md, "Client events")."""
"""Event kinds version 2 added (the classic protocol's actions); a version 1 file has none."""
PROTOCOL_TYPE = "consumer"
"""A consumer's JoinGroup ``ProtocolType`` (``ConsumerProtocol.PROTOCOL_TYPE``)."""
MAX_INT = 2**31 - 1
MIN_INT = -(2**31)
MAX_INT64 = 2**63 - 1
MIN_INT64 = -(2**63)


def version_for(protocol: str) -> int:
    """The version a writer writes for a trace of ``protocol``: the oldest that has it
    among those writers write (2, or 3 for ``mixed``)."""
    return MIXED_VERSION if protocol == "mixed" else VERSION


class TraceError(ConfigError):
    """A malformed trace: ``line`` and ``column`` are 1-based; ``column`` is None where
    no column means anything (a line too long to read to its end)."""

    def __init__(self, line: int, column: int | None, reason: str) -> None:
        where = f"{line}" if column is None else f"{line}:{column}"
        super().__init__(f"{where}: {reason}")
        self.line, self.column, self.reason = line, column, reason


@dataclass(frozen=True, slots=True)
class TraceHeader:
    """The first line of a trace."""

    protocol: str
    topics: Mapping[str, int]
    config: str | None = None
    settings: Mapping[str, Any] | None = None
    """The model config the trace was made under (``model.settings.config_to_mapping``),
    when a model run wrote it."""
    mutant: str | None = None
    """The mutant whose rules the run used (``groupcheck mutants``)."""
    rules: Mapping[str, str] | None = None
    """Rules from a file the run used: ``file``, ``name``, ``sha256``."""
    version: int = VERSION
    """The format version the file declares (:data:`VERSIONS`)."""
    session_timeout_ms: int | None = None
    """The session timeout the coordinator applies (KIP-848: the group's
    ``group.consumer.session.timeout.ms``; classic: the members' ``SessionTimeoutMs``), when
    known; wall-clock milliseconds, like the events' ``ts``."""
    rebalance_timeout_ms: int | None = None
    """The rebalance timeout (``RebalanceTimeoutMs`` of the members' requests), when known."""
    heartbeat_interval_ms: int | None = None
    """The heartbeat interval the coordinator asks for (``HeartbeatIntervalMs``), when known."""
    topic_names: Mapping[str, str] | None = None
    """Topic id → topic name, for traces that name partitions by topic id (captures)."""
    clients: Mapping[str, str] | None = None
    """A message's ``client`` → the ``client.id`` the client process sent (captures)."""
    implementation: Mapping[str, str] | None = None
    """What produced a capture (``groupcheck kafka run``): ``name``, ``version``,
    ``commit`` of the broker, ``clients`` (the client libraries)."""
    assignment_interval_ms: int | None = None
    """KIP-1263's assignment interval the coordinator applies to the group (the group's
    ``consumer.assignment.interval.ms``, else the broker's
    ``group.consumer.assignment.interval.ms``; 0: batching off), when known; it is not on
    the wire."""
    consumer_session_timeout_ms: int | None = None
    """A mixed trace: the consumer group's session timeout
    (``group.consumer.session.timeout.ms``, not on the wire), which applies to its
    consumer-protocol members; ``session_timeout_ms`` is then the classic members' (their
    JoinGroup's ``SessionTimeoutMs``, each member's own where the trace shows it;
    ``ConsumerGroupMember`` vs ``ClassicMemberMetadata.sessionTimeoutMs``)."""


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One event: sequence number, optional timestamp (ms), source, kind, payload."""

    seq: int
    ts: int | None
    source: str
    kind: str
    payload: Mapping[str, Any]


# --------------------------------------------------------------------------- encoding


def _partitions(parts: Assignment) -> list[dict[str, Any]]:
    by_topic: dict[str, list[int]] = {}
    for topic, p in sorted(parts):
        by_topic.setdefault(topic, []).append(p)
    return [{"TopicId": t, "Partitions": ps} for t, ps in by_topic.items()]


def _body(body: object) -> tuple[str, dict[str, Any]]:
    if isinstance(body, ConsumerGroupHeartbeatRequest):
        out: dict[str, Any] = {"MemberId": body.member_id, "MemberEpoch": body.member_epoch}
        if body.instance_id is not None:
            out["InstanceId"] = body.instance_id
        out["RebalanceTimeoutMs"] = body.rebalance_timeout_ms
        if body.subscribed_topic_names is not None:
            out["SubscribedTopicNames"] = sorted(body.subscribed_topic_names)
        if body.subscribed_topic_regex is not None:
            out["SubscribedTopicRegex"] = body.subscribed_topic_regex
        if body.rack_id is not None:
            out["RackId"] = body.rack_id
        if body.server_assignor is not None:
            out["ServerAssignor"] = body.server_assignor
        if body.topic_partitions is not None:
            out["TopicPartitions"] = _partitions(body.topic_partitions)
        return "ConsumerGroupHeartbeat", out
    if isinstance(body, ConsumerGroupHeartbeatResponse):
        out = {
            "ErrorCode": int(body.error_code),
            "MemberId": body.member_id,
            "MemberEpoch": body.member_epoch,
            "HeartbeatIntervalMs": body.heartbeat_interval_ms,
        }
        if body.assignment is not None:
            out["Assignment"] = {"TopicPartitions": _partitions(body.assignment)}
        return "ConsumerGroupHeartbeat", out
    if isinstance(body, OffsetCommitRequest):
        return "OffsetCommit", {
            "MemberId": body.member_id,
            "GenerationIdOrMemberEpoch": body.generation_id_or_member_epoch,
            "Topics": _partitions(body.topics),
        }
    if isinstance(body, OffsetCommitResponse):
        return "OffsetCommit", {
            "ErrorCode": int(body.error_code),
            "Topics": _partitions(body.topics),
        }
    return _classic_body(body)


def _subscription(sub: ClassicSubscription) -> dict[str, Any]:
    """JoinGroup metadata (``ConsumerProtocolSubscription``): ``UserData`` holds the
    previous assignment the eager ``sticky`` assignor encodes there (KIP-341), as
    partitions."""
    return {
        "Topics": sorted(sub.topics),
        "OwnedPartitions": _partitions(sub.owned_partitions),
        "GenerationId": sub.generation_id,
        "UserData": _partitions(sub.user_data),
    }


def _classic_body(body: object) -> tuple[str, dict[str, Any]]:
    """A classic body with the field names of ``JoinGroupRequest``, ``SyncGroupRequest``,
    ``HeartbeatRequest``, ``LeaveGroupRequest`` and their responses."""
    out: dict[str, Any]
    if isinstance(body, JoinGroupRequest):
        out = {"MemberId": body.member_id}
        if body.instance_id is not None:
            out["GroupInstanceId"] = body.instance_id
        metadata = _subscription(body.subscription)
        out["ProtocolType"] = PROTOCOL_TYPE
        # The model sends one subscription for every protocol; Kafka encodes it once per
        # protocol (``ConsumerCoordinator.metadata``), and so does the trace.
        out["Protocols"] = [{"Name": name, "Metadata": metadata} for name in body.protocols]
        out["RebalanceTimeoutMs"] = body.rebalance_timeout_ms
        out["SessionTimeoutMs"] = body.session_timeout_ms
        return "JoinGroup", out
    if isinstance(body, JoinGroupResponse):
        out = {"ErrorCode": int(body.error_code), "GenerationId": body.generation_id}
        if body.protocol_name is not None:
            out["ProtocolName"] = body.protocol_name
        out["Leader"] = body.leader
        out["MemberId"] = body.member_id
        out["Members"] = [_join_member(m) for m in body.members]
        return "JoinGroup", out
    if isinstance(body, SyncGroupRequest):
        out = {"MemberId": body.member_id, "GenerationId": body.generation_id}
        if body.instance_id is not None:
            out["GroupInstanceId"] = body.instance_id
        if body.protocol_name is not None:
            out["ProtocolName"] = body.protocol_name
        out["Assignments"] = [
            {"MemberId": member, "Assignment": _partitions(parts)}
            for member, parts in body.assignments.items()
        ]
        return "SyncGroup", out
    if isinstance(body, SyncGroupResponse):
        out = {"ErrorCode": int(body.error_code)}
        if body.protocol_name is not None:
            out["ProtocolName"] = body.protocol_name
        out["Assignment"] = _partitions(body.assignment)
        return "SyncGroup", out
    if isinstance(body, HeartbeatRequest):
        out = {"MemberId": body.member_id, "GenerationId": body.generation_id}
        if body.instance_id is not None:
            out["GroupInstanceId"] = body.instance_id
        return "Heartbeat", out
    if isinstance(body, HeartbeatResponse):
        return "Heartbeat", {"ErrorCode": int(body.error_code)}
    if isinstance(body, LeaveGroupRequest):
        member: dict[str, Any] = {"MemberId": body.member_id}
        if body.instance_id is not None:
            member["GroupInstanceId"] = body.instance_id
        return "LeaveGroup", {"Members": [member]}
    assert isinstance(body, LeaveGroupResponse), type(body)
    return "LeaveGroup", {"ErrorCode": int(body.error_code)}


def _join_member(m: JoinGroupResponseMember) -> dict[str, Any]:
    """A member of the leader's JoinGroup response (``JoinGroupResponseMember``)."""
    out: dict[str, Any] = {"MemberId": m.member_id}
    if m.instance_id is not None:
        out["GroupInstanceId"] = m.instance_id
    out["Metadata"] = _subscription(m.subscription)
    return out


def encode_action(action: Action) -> tuple[str, dict[str, Any]]:
    """The event source and payload of an action."""
    if isinstance(action, DeliverMessage | LoseMessage):
        m = action.message
        api, body = _body(m.body)
        return "network", {
            "client": m.client,
            "incarnation": m.incarnation,
            "connection": m.connection,
            "direction": "request" if m.to_coordinator else "response",
            "api": api,
            "body": body,
        }
    payload = {}
    for f in fields(action):
        value = getattr(action, f.name)
        if value is None and f.name == "partitions":  # CreateTopic's count, when unknown
            continue
        payload[f.name] = list(value) if isinstance(value, tuple) else value
    source = f"client:{payload['client']}" if "client" in payload else "coordinator"
    return source, payload


def path_lines(
    path: Path,
    config_name: str | None = None,
    *,
    mutant: str | None = None,
    rules: Mapping[str, str] | None = None,
    timestamps: Sequence[int] | None = None,
) -> Iterator[str]:
    """The NDJSON lines of a model path: header, then one event per action. The header
    carries the whole config (``settings``) and the rules change the run used (a
    ``mutant``'s name, or ``rules`` from a file), so the trace replays under them.
    ``timestamps`` (milliseconds, one per action) fill the events' ``ts``: a timed run's."""
    header: dict[str, Any] = {
        "format": FORMAT,
        "version": version_for(path.config.protocol),
        "protocol": path.config.protocol,
        "topics": dict(path.config.topics),
        "config": config_name or path.config.name,
        "settings": config_to_mapping(path.config),
    }
    if mutant is not None:
        header["mutant"] = mutant
    if rules is not None:
        header["rules"] = {k: str(rules[k]) for k in sorted(_RULES_FIELDS)}
    yield json.dumps(header, sort_keys=True)
    if timestamps is not None and len(timestamps) != len(path.actions):
        raise ValueError("one timestamp per action")
    for seq, action in enumerate(path.actions, 1):
        source, payload = encode_action(action)
        ts = None if timestamps is None else timestamps[seq - 1]
        event = {"seq": seq, "ts": ts, "source": source, "kind": action.kind, "payload": payload}
        yield json.dumps(event, sort_keys=True)


# --------------------------------------------------------------------------- decoding


_BLANK = frozenset(" \t\r")
"""JSON's white space that may begin a line (a line holds no ``\n``)."""


def _load(line: str, n: int) -> dict[str, Any]:
    """One line as a JSON object, read strictly (``strict_json``: a key given twice, NaN,
    an integer of more than 4,300 digits or an escaped lone surrogate is an error at its
    column)."""
    start = len(line) - len(line.lstrip(" \t\r")) if line[:1] in _BLANK else 0
    try:
        value, end = raw_decode(line, start)
    except JsonTextError as e:
        raise TraceError(n, e.column, e.reason) from None
    if end < len(line) and not line[end:].isspace():
        raise TraceError(n, end + 1, "not JSON: Extra data")
    if not isinstance(value, dict):
        raise TraceError(n, 1, f"expected a JSON object, got {type(value).__name__}")
    return value


def _brief(value: object, limit: int = 40) -> str:
    """``value`` as a message shows it: at most ``limit`` characters."""
    text = repr(value) if isinstance(value, dict) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _col(line: str, key: str) -> int:
    i = line.find(f'"{key}"')
    return i + 1 if i >= 0 else 1


_MISSING = object()
TIMING_FIELDS = ("session_timeout_ms", "rebalance_timeout_ms", "heartbeat_interval_ms")
"""The header's optional timing fields (milliseconds, > 0): the group's session timeout,
the members' rebalance timeout and the heartbeat interval the coordinator asks for."""
_HEADER_FIELDS = frozenset(
    {"format", "version", "protocol", "topics", "config", "settings", "mutant", "rules"}
    | set(TIMING_FIELDS)
    | {"topic_names", "clients", "implementation", "assignment_interval_ms"}
    | {"consumer_session_timeout_ms"}
)
_RULES_FIELDS = frozenset({"file", "name", "sha256"})
_EVENT_FIELDS = frozenset({"seq", "ts", "source", "kind", "payload", "state"})
_MESSAGE_FIELDS = frozenset({"client", "incarnation", "connection", "direction", "api", "body"})
_PARTITIONS_FIELDS = frozenset({"TopicId", "Partitions"})
_HEARTBEAT_REQUEST_FIELDS = frozenset(
    {
        "MemberId",
        "MemberEpoch",
        "InstanceId",
        "SubscribedTopicRegex",
        "RackId",
        "RebalanceTimeoutMs",
        "SubscribedTopicNames",
        "ServerAssignor",
        "TopicPartitions",
    }
)
_HEARTBEAT_RESPONSE_FIELDS = frozenset(
    {"ErrorCode", "MemberId", "MemberEpoch", "HeartbeatIntervalMs", "Assignment"}
)
_COMMIT_REQUEST_FIELDS = frozenset({"MemberId", "GenerationIdOrMemberEpoch", "Topics"})
_COMMIT_RESPONSE_FIELDS = frozenset({"ErrorCode", "Topics"})
_JOIN_REQUEST_FIELDS = frozenset(
    {
        "MemberId",
        "GroupInstanceId",
        "ProtocolType",
        "Protocols",
        "RebalanceTimeoutMs",
        "SessionTimeoutMs",
    }
)
_JOIN_PROTOCOL_FIELDS = frozenset({"Name", "Metadata"})
_SUBSCRIPTION_FIELDS = frozenset({"Topics", "OwnedPartitions", "GenerationId", "UserData"})
_JOIN_RESPONSE_FIELDS = frozenset(
    {"ErrorCode", "GenerationId", "ProtocolName", "Leader", "MemberId", "Members"}
)
_JOIN_MEMBER_FIELDS = frozenset({"MemberId", "GroupInstanceId", "Metadata"})
_SYNC_REQUEST_FIELDS = frozenset(
    {"MemberId", "GenerationId", "GroupInstanceId", "ProtocolName", "Assignments"}
)
_SYNC_ASSIGNMENT_FIELDS = frozenset({"MemberId", "Assignment"})
_SYNC_RESPONSE_FIELDS = frozenset({"ErrorCode", "ProtocolName", "Assignment"})
_HEARTBEAT_FIELDS = frozenset({"MemberId", "GenerationId", "GroupInstanceId"})
_ERROR_ONLY_FIELDS = frozenset({"ErrorCode"})
_LEAVE_REQUEST_FIELDS = frozenset({"Members"})
_LEAVE_MEMBER_FIELDS = frozenset({"MemberId", "GroupInstanceId"})
_ERROR_CODES = {int(code.value): code for code in ErrorCode}
_PAYLOAD_FIELDS = {
    kind: (names, frozenset(names))
    for kind, cls in ACTIONS_BY_KIND.items()
    for names in [tuple(f.name for f in fields(cls))]
}
"""Per event kind other than a message: the action's fields, in order and as a set."""


def _get(
    obj: Mapping[str, Any],
    key: str,
    kind: type | tuple[type, ...],
    line: str,
    n: int,
    optional: bool = False,
    int64: bool = False,
    within: str | None = None,
) -> Any:
    """``obj[key]``, checked to be of ``kind`` (an int in the int32 range, or int64); an
    absent or null ``optional`` field is None. A missing field is an error at the column
    of ``within``, the key of the object that lacks it (else at column 1)."""
    value = number = obj.get(key, _MISSING)
    # The common cases first: a str, list or dict; an int in range (no bool: type, not
    # isinstance). Anything else, and every error, is sorted out below.
    if type(value) is kind and (
        kind is not int
        or (MIN_INT <= number <= MAX_INT if not int64 else MIN_INT64 <= number <= MAX_INT64)
    ):
        return value
    if value is _MISSING:
        if optional:
            return None
        column = 1 if within is None else _col(line, within)
        raise TraceError(n, column, f"missing field {key!r}")
    if value is None and optional:
        return None
    if type(value) is int:  # the common case first (a bool is no int here: type, not isinstance)
        if kind is not int and (isinstance(kind, type) or int not in kind):
            _wrong_type(key, kind, value, line, n)
        low, high = (MIN_INT64, MAX_INT64) if int64 else (MIN_INT, MAX_INT)
        if not low <= value <= high:
            width = "int64" if int64 else "int32"
            raise TraceError(
                n, _col(line, key), f"field {key!r} out of the {width} range: {_brief(value)}"
            )
        return value
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        _wrong_type(key, kind, value, line, n)
    return value


def _wrong_type(key: str, kind: type | tuple[type, ...], value: Any, line: str, n: int) -> NoReturn:
    name = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
    raise TraceError(n, _col(line, key), f"field {key!r} must be {name}, got {value!r:.40}")


def _unknown(
    obj: Mapping[str, Any], allowed: frozenset[str], line: str, n: int, where: str
) -> None:
    if allowed.issuperset(obj):  # the common case, without building a set
        return
    extra = set(obj) - allowed
    if extra:
        key = sorted(extra)[0]
        raise TraceError(n, _col(line, key), f"unknown field {key!r:.60} in {where}")


def parse_header(line: str, n: int = 1) -> TraceHeader:
    """Parse and check the header line."""
    obj = _load(line, n)
    _unknown(obj, _HEADER_FIELDS, line, n, "header")
    if _get(obj, "format", str, line, n) != FORMAT:
        raise TraceError(n, _col(line, "format"), f"not a {FORMAT} file: {obj['format']!r:.40}")
    version = _get(obj, "version", int, line, n)
    if version not in VERSIONS:
        reads = " and ".join(str(v) for v in VERSIONS)
        raise TraceError(
            n, _col(line, "version"), f"unsupported version {_brief(version)}; this reads {reads}"
        )
    protocol = _get(obj, "protocol", str, line, n)
    if protocol not in PROTOCOLS[version]:
        if any(protocol in allowed for allowed in PROTOCOLS.values()):
            needs = version_for(protocol)
            reason = f"protocol {protocol!r} needs version {needs}; the header says {version}"
        else:
            reason = f"unsupported protocol {protocol!r:.40}"
        raise TraceError(n, _col(line, "protocol"), reason)
    topics = _get(obj, "topics", dict, line, n)
    for name, count in topics.items():
        if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= MAX_INT:
            raise TraceError(n, _col(line, name), f"topic {name!r:.40} needs a partition count")
    rules = _get(obj, "rules", dict, line, n, optional=True)
    if rules is not None:
        _unknown(rules, _RULES_FIELDS, line, n, "rules")
        for key in sorted(_RULES_FIELDS):
            _get(rules, key, str, line, n)
    timing: dict[str, int | None] = {}
    for key in TIMING_FIELDS:
        value = _get(obj, key, int, line, n, optional=True)
        if value is not None and value <= 0:
            raise TraceError(n, _col(line, key), f"{key} must be > 0, got {value}")
        timing[key] = value
    consumer_session = _get(obj, "consumer_session_timeout_ms", int, line, n, optional=True)
    if consumer_session is not None and consumer_session <= 0:
        raise TraceError(
            n,
            _col(line, "consumer_session_timeout_ms"),
            f"consumer_session_timeout_ms must be > 0, got {consumer_session}",
        )
    if consumer_session is not None and protocol != "mixed":
        raise TraceError(
            n,
            _col(line, "consumer_session_timeout_ms"),
            "consumer_session_timeout_ms belongs to a mixed trace",
        )
    interval = _get(obj, "assignment_interval_ms", int, line, n, optional=True)
    if interval is not None and not 0 <= interval <= MAX_INT:
        raise TraceError(
            n, _col(line, "assignment_interval_ms"), f"assignment_interval_ms < 0: {interval}"
        )
    names: dict[str, dict[str, str] | None] = {}
    for key in ("topic_names", "clients", "implementation"):
        value = _get(obj, key, dict, line, n, optional=True)
        if value is not None:
            for k, v in value.items():
                if not isinstance(v, str):
                    raise TraceError(n, _col(line, k), f"{key}: {k!r:.40} needs a string")
        names[key] = value
    return TraceHeader(
        protocol,
        dict(topics),
        _get(obj, "config", str, line, n, optional=True),
        settings=_get(obj, "settings", dict, line, n, optional=True),
        mutant=_get(obj, "mutant", str, line, n, optional=True),
        rules=rules,
        version=version,
        session_timeout_ms=timing["session_timeout_ms"],
        rebalance_timeout_ms=timing["rebalance_timeout_ms"],
        heartbeat_interval_ms=timing["heartbeat_interval_ms"],
        topic_names=names["topic_names"],
        clients=names["clients"],
        implementation=names["implementation"],
        assignment_interval_ms=interval,
        consumer_session_timeout_ms=consumer_session,
    )


def parse_event(line: str, n: int) -> TraceEvent:
    """Parse and check one event line (its payload is checked by ``decode_action``)."""
    obj = _load(line, n)
    _unknown(obj, _EVENT_FIELDS, line, n, "event")
    seq = _get(obj, "seq", int, line, n, int64=True)
    ts = _get(obj, "ts", int, line, n, optional=True, int64=True)  # e.g. Unix epoch ms
    source = _get(obj, "source", str, line, n)
    kind = _get(obj, "kind", str, line, n)
    if kind not in ACTIONS_BY_KIND and kind not in CLIENT_EVENT_KINDS:
        raise TraceError(n, _col(line, "kind"), f"unknown event kind {kind!r:.60}")
    payload = _get(obj, "payload", dict, line, n)
    return TraceEvent(seq, ts, source, kind, payload)


def _parts(value: Any, line: str, n: int, key: str) -> Assignment:
    if not isinstance(value, list):
        raise TraceError(n, _col(line, key), f"{key} must be a list of {{TopicId, Partitions}}")
    out: set[tuple[str, int]] = set()
    for item in value:
        if not isinstance(item, dict):
            raise TraceError(n, _col(line, key), f"{key} entries must be objects")
        _unknown(item, _PARTITIONS_FIELDS, line, n, key)
        topic = _get(item, "TopicId", str, line, n)
        parts = _get(item, "Partitions", list, line, n)
        for p in parts:
            if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p <= MAX_INT:
                raise TraceError(n, _col(line, "Partitions"), f"bad partition index {p!r:.20}")
            out.add((topic, p))
    return frozenset(out)


def _error_code(value: int, line: str, n: int) -> ErrorCode:
    code = _ERROR_CODES.get(value)
    if code is None:
        raise TraceError(n, _col(line, "ErrorCode"), f"unknown error code {_brief(value)}")
    return code


def _decode_body(api: str, direction: str, b: Mapping[str, Any], line: str, n: int) -> Any:
    if api == "ConsumerGroupHeartbeat" and direction == "request":
        _unknown(b, _HEARTBEAT_REQUEST_FIELDS, line, n, "body")
        names = _get(b, "SubscribedTopicNames", list, line, n, optional=True)
        if names is not None and not all(isinstance(t, str) for t in names):
            raise TraceError(n, _col(line, "SubscribedTopicNames"), "topic names must be strings")
        owned = b.get("TopicPartitions")
        return ConsumerGroupHeartbeatRequest(
            member_id=_get(b, "MemberId", str, line, n),
            member_epoch=_get(b, "MemberEpoch", int, line, n),
            instance_id=_get(b, "InstanceId", str, line, n, optional=True),
            rebalance_timeout_ms=_get(b, "RebalanceTimeoutMs", int, line, n, optional=True) or -1,
            subscribed_topic_names=frozenset(names) if names is not None else None,
            subscribed_topic_regex=_get(b, "SubscribedTopicRegex", str, line, n, optional=True),
            rack_id=_get(b, "RackId", str, line, n, optional=True),
            server_assignor=_get(b, "ServerAssignor", str, line, n, optional=True),
            topic_partitions=(
                _parts(owned, line, n, "TopicPartitions") if owned is not None else None
            ),
        )
    if api == "ConsumerGroupHeartbeat":
        _unknown(b, _HEARTBEAT_RESPONSE_FIELDS, line, n, "body")
        assignment = _get(b, "Assignment", dict, line, n, optional=True)
        return ConsumerGroupHeartbeatResponse(
            error_code=_error_code(_get(b, "ErrorCode", int, line, n), line, n),
            member_id=_get(b, "MemberId", str, line, n, optional=True),
            member_epoch=_get(b, "MemberEpoch", int, line, n),
            heartbeat_interval_ms=_get(b, "HeartbeatIntervalMs", int, line, n),
            assignment=(
                _parts(assignment.get("TopicPartitions", []), line, n, "Assignment")
                if assignment is not None
                else None
            ),
        )
    if api != "OffsetCommit":
        return _CLASSIC_DECODERS[api, direction == "request"](b, line, n)
    if direction == "request":
        _unknown(b, _COMMIT_REQUEST_FIELDS, line, n, "body")
        return OffsetCommitRequest(
            member_id=_get(b, "MemberId", str, line, n),
            generation_id_or_member_epoch=_get(b, "GenerationIdOrMemberEpoch", int, line, n),
            topics=_parts(b.get("Topics", []), line, n, "Topics"),
        )
    _unknown(b, _COMMIT_RESPONSE_FIELDS, line, n, "body")
    return OffsetCommitResponse(
        error_code=_error_code(_get(b, "ErrorCode", int, line, n), line, n),
        topics=_parts(b.get("Topics", []), line, n, "Topics"),
    )


def _nth_col(line: str, key: str, k: int) -> int:
    """The column of the ``k``-th (0-based) occurrence of ``"key"`` in ``line`` (else of
    the first)."""
    i = -1
    for _ in range(k + 1):
        i = line.find(f'"{key}"', i + 1)
        if i < 0:
            return _col(line, key)
    return i + 1


def _objects(
    b: Mapping[str, Any], key: str, allowed: frozenset[str], line: str, n: int
) -> list[Mapping[str, Any]]:
    """The list of objects under ``key`` (required), each with only ``allowed`` fields."""
    items: list[Mapping[str, Any]] = _get(b, key, list, line, n, within="body")
    for item in items:
        if not isinstance(item, dict):
            raise TraceError(n, _col(line, key), f"{key} entries must be objects")
        _unknown(item, allowed, line, n, key)
    return items


def _decode_subscription(meta: Mapping[str, Any], line: str, n: int) -> ClassicSubscription:
    """JoinGroup metadata (``ConsumerProtocolSubscription``): ``Topics`` is required; the
    fields later versions added default as in Kafka when absent (``OwnedPartitions`` v1
    and ``UserData``: none; ``GenerationId`` v2: -1)."""
    _unknown(meta, _SUBSCRIPTION_FIELDS, line, n, "Metadata")
    topics = _get(meta, "Topics", list, line, n, within="Metadata")
    if not all(isinstance(t, str) for t in topics):
        raise TraceError(n, _col(line, "Topics"), "Topics must be a list of topic names")
    owned = meta.get("OwnedPartitions")
    generation = _get(meta, "GenerationId", int, line, n, optional=True)
    user_data = meta.get("UserData")
    return ClassicSubscription(
        topics=frozenset(topics),
        owned_partitions=(
            _parts(owned, line, n, "OwnedPartitions") if owned is not None else EMPTY
        ),
        generation_id=NO_GENERATION if generation is None else generation,
        user_data=_parts(user_data, line, n, "UserData") if user_data is not None else EMPTY,
    )


def _decode_join_request(b: Mapping[str, Any], line: str, n: int) -> JoinGroupRequest:
    """``JoinGroupRequest``: every protocol must carry the same metadata, as the model's
    consumer (and Kafka's, for the built-in assignors) sends."""
    _unknown(b, _JOIN_REQUEST_FIELDS, line, n, "body")
    member_id = _get(b, "MemberId", str, line, n, within="body")
    instance_id = _get(b, "GroupInstanceId", str, line, n, optional=True)
    protocol_type = _get(b, "ProtocolType", str, line, n, within="body")
    if protocol_type != PROTOCOL_TYPE:
        raise TraceError(
            n,
            _col(line, "ProtocolType"),
            f"ProtocolType must be {PROTOCOL_TYPE!r}, got {protocol_type!r:.40}",
        )
    protocols = _objects(b, "Protocols", _JOIN_PROTOCOL_FIELDS, line, n)
    if not protocols:
        raise TraceError(n, _col(line, "Protocols"), "Protocols must name at least one assignor")
    names: list[str] = []
    subscription: ClassicSubscription | None = None
    for i, item in enumerate(protocols):
        names.append(_get(item, "Name", str, line, n, within="Protocols"))
        metadata = _decode_subscription(
            _get(item, "Metadata", dict, line, n, within="Protocols"), line, n
        )
        if subscription is None:
            subscription = metadata
        elif metadata != subscription:
            raise TraceError(
                n,
                _nth_col(line, "Metadata", i),
                f"protocol {names[-1]!r:.40} carries other Metadata than {names[0]!r:.40}; "
                "a consumer sends one subscription for every protocol",
            )
    assert subscription is not None
    return JoinGroupRequest(
        member_id=member_id,
        instance_id=instance_id,
        protocols=tuple(names),
        subscription=subscription,
        rebalance_timeout_ms=_get(b, "RebalanceTimeoutMs", int, line, n, within="body"),
        session_timeout_ms=_get(b, "SessionTimeoutMs", int, line, n, within="body"),
    )


def _decode_join_response(b: Mapping[str, Any], line: str, n: int) -> JoinGroupResponse:
    """``JoinGroupResponse``; ``Members`` is empty but for the leader."""
    _unknown(b, _JOIN_RESPONSE_FIELDS, line, n, "body")
    members = tuple(
        JoinGroupResponseMember(
            member_id=_get(m, "MemberId", str, line, n, within="Members"),
            instance_id=_get(m, "GroupInstanceId", str, line, n, optional=True),
            subscription=_decode_subscription(
                _get(m, "Metadata", dict, line, n, within="Members"), line, n
            ),
        )
        for m in _objects(b, "Members", _JOIN_MEMBER_FIELDS, line, n)
    )
    return JoinGroupResponse(
        error_code=_error_code(_get(b, "ErrorCode", int, line, n, within="body"), line, n),
        generation_id=_get(b, "GenerationId", int, line, n, within="body"),
        protocol_name=_get(b, "ProtocolName", str, line, n, optional=True),
        leader=_get(b, "Leader", str, line, n, within="body"),
        member_id=_get(b, "MemberId", str, line, n, within="body"),
        members=members,
    )


def _decode_sync_request(b: Mapping[str, Any], line: str, n: int) -> SyncGroupRequest:
    """``SyncGroupRequest``: the leader's ``Assignments`` name each member once."""
    _unknown(b, _SYNC_REQUEST_FIELDS, line, n, "body")
    assignments: dict[str, Assignment] = {}
    for item in _objects(b, "Assignments", _SYNC_ASSIGNMENT_FIELDS, line, n):
        member = _get(item, "MemberId", str, line, n, within="Assignments")
        if member in assignments:
            raise TraceError(
                n, _col(line, "Assignments"), f"Assignments names member {member!r:.40} twice"
            )
        parts = _get(item, "Assignment", list, line, n, within="Assignments")
        assignments[member] = _parts(parts, line, n, "Assignment")
    return SyncGroupRequest(
        member_id=_get(b, "MemberId", str, line, n, within="body"),
        generation_id=_get(b, "GenerationId", int, line, n, within="body"),
        instance_id=_get(b, "GroupInstanceId", str, line, n, optional=True),
        protocol_name=_get(b, "ProtocolName", str, line, n, optional=True),
        assignments=FrozenMap(assignments),
    )


def _decode_sync_response(b: Mapping[str, Any], line: str, n: int) -> SyncGroupResponse:
    """``SyncGroupResponse``: the member's assignment (``ConsumerProtocolAssignment``), as
    partitions."""
    _unknown(b, _SYNC_RESPONSE_FIELDS, line, n, "body")
    parts = _get(b, "Assignment", list, line, n, within="body")
    return SyncGroupResponse(
        error_code=_error_code(_get(b, "ErrorCode", int, line, n, within="body"), line, n),
        protocol_name=_get(b, "ProtocolName", str, line, n, optional=True),
        assignment=_parts(parts, line, n, "Assignment"),
    )


def _decode_heartbeat_request(b: Mapping[str, Any], line: str, n: int) -> HeartbeatRequest:
    """``HeartbeatRequest`` (the classic protocol's)."""
    _unknown(b, _HEARTBEAT_FIELDS, line, n, "body")
    return HeartbeatRequest(
        member_id=_get(b, "MemberId", str, line, n, within="body"),
        generation_id=_get(b, "GenerationId", int, line, n, within="body"),
        instance_id=_get(b, "GroupInstanceId", str, line, n, optional=True),
    )


def _decode_heartbeat_response(b: Mapping[str, Any], line: str, n: int) -> HeartbeatResponse:
    """``HeartbeatResponse``: an error code."""
    _unknown(b, _ERROR_ONLY_FIELDS, line, n, "body")
    return HeartbeatResponse(
        _error_code(_get(b, "ErrorCode", int, line, n, within="body"), line, n)
    )


def _decode_leave_request(b: Mapping[str, Any], line: str, n: int) -> LeaveGroupRequest:
    """``LeaveGroupRequest`` v3+: a consumer names one member, itself."""
    _unknown(b, _LEAVE_REQUEST_FIELDS, line, n, "body")
    members = _objects(b, "Members", _LEAVE_MEMBER_FIELDS, line, n)
    if len(members) != 1:
        raise TraceError(
            n,
            _col(line, "Members"),
            f"Members must name exactly one member (a consumer leaves alone), got {len(members)}",
        )
    (member,) = members
    return LeaveGroupRequest(
        member_id=_get(member, "MemberId", str, line, n, within="Members"),
        instance_id=_get(member, "GroupInstanceId", str, line, n, optional=True),
    )


def _decode_leave_response(b: Mapping[str, Any], line: str, n: int) -> LeaveGroupResponse:
    """``LeaveGroupResponse``, the member's error flattened into the top-level one."""
    _unknown(b, _ERROR_ONLY_FIELDS, line, n, "body")
    return LeaveGroupResponse(
        _error_code(_get(b, "ErrorCode", int, line, n, within="body"), line, n)
    )


_CLASSIC_DECODERS: dict[tuple[str, bool], Callable[[Mapping[str, Any], str, int], Any]] = {
    ("JoinGroup", True): _decode_join_request,
    ("JoinGroup", False): _decode_join_response,
    ("SyncGroup", True): _decode_sync_request,
    ("SyncGroup", False): _decode_sync_response,
    ("Heartbeat", True): _decode_heartbeat_request,
    ("Heartbeat", False): _decode_heartbeat_response,
    ("LeaveGroup", True): _decode_leave_request,
    ("LeaveGroup", False): _decode_leave_response,
}
"""Per classic API and direction (request: True), its body decoder."""


_ALL_APIS = frozenset(api for apis in APIS.values() for api in apis)


def _check_api(api: str, header: TraceHeader | None, line: str, n: int) -> None:
    """``api`` must be one the header's version and protocol allow (any known api
    without a header)."""
    if header is None or api in APIS[header.protocol]:
        if api in _ALL_APIS:
            return
        raise TraceError(n, _col(line, "api"), f"unsupported api {api!r:.40}")
    if api not in _ALL_APIS:
        reason = f"unsupported api {api!r:.40}"
    elif header.version == 1:
        reason = (
            f"api {api!r} is not in trace format version 1 (the consumer protocol only); "
            f"a classic trace is version {VERSION} with protocol 'classic'"
        )
    else:
        reason = f"api {api!r} is not an api of the header's protocol {header.protocol!r}"
    raise TraceError(n, _col(line, "api"), reason)


def decode_action(
    event: TraceEvent, line: str, n: int, header: TraceHeader | None = None
) -> Action:
    """The model action an event records. With the file's ``header``, the event must be
    one its version and protocol allow (a version 1 file has no classic API or event
    kind; a message's api must be of the header's protocol). A client event
    (:data:`CLIENT_EVENT_KINDS`) is a :class:`ClientEvent`."""
    if event.kind in CLIENT_EVENT_KINDS:
        return decode_client_event(event, line, n)
    cls = ACTIONS_BY_KIND[event.kind]
    p = event.payload
    if header is not None and header.version == 1 and event.kind in CLASSIC_KINDS:
        raise TraceError(
            n,
            _col(line, "kind"),
            f"event kind {event.kind!r} is not in trace format version 1 (the consumer "
            f"protocol only); a classic trace is version {VERSION}",
        )
    if cls in (DeliverMessage, LoseMessage):
        _unknown(p, _MESSAGE_FIELDS, line, n, "payload")
        direction = _get(p, "direction", str, line, n)
        api = _get(p, "api", str, line, n)
        if direction not in ("request", "response"):
            raise TraceError(n, _col(line, "direction"), "direction must be request or response")
        _check_api(api, header, line, n)
        body = _decode_body(api, direction, _get(p, "body", dict, line, n), line, n)
        message = Message(
            client=_get(p, "client", str, line, n),
            incarnation=_get(p, "incarnation", int, line, n),
            connection=_get(p, "connection", int, line, n),
            to_coordinator=direction == "request",
            body=body,
        )
        return cls(message)
    names, allowed = _PAYLOAD_FIELDS[event.kind]
    _unknown(p, allowed, line, n, "payload")
    args: dict[str, Any] = {}
    for name in names:
        value = p.get(name)
        if name == "topics":
            if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
                raise TraceError(n, _col(line, "topics"), "topics must be a list of names")
            args[name] = tuple(value)
        elif name == "partitions":  # CreateTopic's count: optional (older traces lack it)
            count = _get(p, name, int, line, n, optional=True)
            if count is not None and count < 1:
                raise TraceError(n, _col(line, name), "partitions must be at least 1")
            args[name] = count
        else:
            args[name] = _get(p, name, str, line, n)
    return cls(**args)


def read_path(config: Config, lines: Iterable[str]) -> Path:
    """Decode a model trace back into a path of ``config`` (every action must be enabled
    where it is taken)."""
    it = iter(lines)
    first = next(it, None)
    if first is None:
        raise TraceError(1, 1, "empty trace: no header line")
    header = parse_header(first, 1)
    if dict(header.topics) != dict(config.topics):
        topics = _brief(dict(header.topics), 200)
        raise TraceError(1, 1, f"trace topics {topics} differ from the config's")
    if header.protocol != config.protocol:
        raise TraceError(
            1,
            _col(first, "protocol"),
            f"trace protocol {header.protocol!r} differs from the config's {config.protocol!r}",
        )
    state = system.initial(config)
    actions: list[Action] = []
    for n, line in enumerate(it, 2):
        if not line.strip():
            continue
        event = parse_event(line, n)
        action = decode_action(event, line, n, header)
        if isinstance(action, CreateTopic) and action.partitions is None:
            # A trace written before CreateTopic carried its count: the config's.
            count = dict(config.absent_topics).get(action.topic)
            action = replace(action, partitions=count)
        if action not in system.enabled(state, config):
            raise TraceError(n, 1, f"{event.kind} is not enabled here")
        state = system.step(state, action, config)
        actions.append(action)
    return Path(config, tuple(actions))


# Client events: what a client process's application saw and did, as trace events.
#
# They are not model actions (the model has no step "the application's callback started"):
# a wire capture records messages, and a runner that also drives the client processes
# (``groupcheck kafka run``) adds what each process reported — its rebalance callbacks
# with their partitions, its ``subscribe()``, ``close()`` and poll stalls — so that client
# conformance (``groupcheck validate --mode client``) can judge the callbacks and knows when
# the application did what. Their vocabulary follows the model's where it has one
# (``Config.callback_steps``' callbacks ``onPartitionsRevoked``/``Assigned``/``Lost``,
# ``Subscribe``/``ChangeSubscription``, ``Leave``/``TemporaryLeave``, ``PollTimerExpires``);
# a process's crash is the model's ``Crash`` action itself. docs/trace-format.md, "Client
# events".
#
# Every mode but client mode reads past them: :func:`decode_client_event` returns a
# :class:`ClientEvent`, an ``Action`` no model step takes and no other mode looks at.

CALLBACKS = ("onPartitionsRevoked", "onPartitionsAssigned", "onPartitionsLost")
"""The ``ConsumerRebalanceListener`` methods a ``Callback`` event names."""
PHASES = ("start", "end")
LEAVE_KINDS = ("default", "leave", "remain")
"""``close()``'s group membership operation (``CloseOptions.GroupMembershipOperation``):
``leave`` (epoch -1), ``remain`` (a static member leaves for a while, epoch -2), or
``default`` (-1 for a dynamic member, -2 for a static one)."""

_FIELDS: Mapping[str, tuple[frozenset[str], frozenset[str]]] = {
    # kind: (required, allowed)
    "Callback": (
        frozenset({"client", "callback", "phase", "partitions"}),
        frozenset({"client", "callback", "phase", "partitions"}),
    ),
    "Subscription": (frozenset({"client"}), frozenset({"client", "topics", "pattern"})),
    "Unsubscribe": (frozenset({"client"}), frozenset({"client"})),
    "Close": (frozenset({"client", "leave", "phase"}), frozenset({"client", "leave", "phase"})),
    "PollStall": (frozenset({"client", "phase"}), frozenset({"client", "phase", "ms"})),
}
assert set(_FIELDS) == CLIENT_EVENT_KINDS


@dataclass(frozen=True, slots=True)
class ClientEvent(Action):
    """One client event (module docstring). ``client`` is the member id of the process
    (a capture's message ``client``); the other fields are those of its ``event`` kind:

    - ``Callback``: ``callback`` (:data:`CALLBACKS`), ``phase`` (``start``: the listener
      method was entered; ``end``: it returned) and ``partitions`` (its argument);
    - ``Subscription``: ``topics`` (``subscribe(topics)``) or ``pattern``
      (``subscribe(SubscriptionPattern)``, sent as ``SubscribedTopicRegex``);
    - ``Unsubscribe``: ``unsubscribe()`` returned;
    - ``Close``: ``leave`` (:data:`LEAVE_KINDS`), ``phase`` (``start``: ``close()`` was
      called; ``end``: it returned);
    - ``PollStall``: ``phase`` (``start``: the application stops polling, for ``ms``;
      ``end``: it polls again)."""

    event: str
    client: str
    callback: str | None = None
    phase: str | None = None
    partitions: Assignment | None = None
    topics: tuple[str, ...] | None = None
    pattern: str | None = None
    leave: str | None = None
    ms: int | None = None

    @property
    def kind(self) -> str:
        """The event kind (``Callback``, ``Subscription`` …), as written in the trace."""
        return self.event


def _choice(p: Mapping[str, Any], key: str, allowed: tuple[str, ...], line: str, n: int) -> str:
    value: str = _get(p, key, str, line, n)
    if value not in allowed:
        raise TraceError(n, _col(line, key), f"{key} must be one of {', '.join(allowed)}")
    return value


def decode_client_event(event: TraceEvent, line: str, n: int) -> ClientEvent:
    """The :class:`ClientEvent` a line of a client event kind records (its payload
    checked: the kind's fields only, each of its type)."""
    kind = event.kind
    required, allowed = _FIELDS[kind]
    p = event.payload
    _unknown(p, allowed, line, n, "payload")
    for key in sorted(required):
        if key not in p:
            raise TraceError(n, _col(line, "payload"), f"{kind} needs {key!r}")
    if not event.source.startswith("client:"):
        raise TraceError(n, _col(line, "source"), f"a {kind} event's source is client:NAME")
    client = _get(p, "client", str, line, n)
    if kind == "Callback":
        return ClientEvent(
            kind,
            client,
            callback=_choice(p, "callback", CALLBACKS, line, n),
            phase=_choice(p, "phase", PHASES, line, n),
            partitions=_parts(p["partitions"], line, n, "partitions"),
        )
    if kind == "Subscription":
        topics = p.get("topics")
        pattern = _get(p, "pattern", str, line, n, optional=True)
        if (topics is None) == (pattern is None):
            raise TraceError(n, _col(line, "payload"), "Subscription needs topics or pattern")
        if topics is not None and (
            not isinstance(topics, list) or not all(isinstance(t, str) for t in topics)
        ):
            raise TraceError(n, _col(line, "topics"), "topics must be a list of names")
        return ClientEvent(
            kind, client, topics=tuple(topics) if topics is not None else None, pattern=pattern
        )
    if kind == "Close":
        return ClientEvent(
            kind,
            client,
            leave=_choice(p, "leave", LEAVE_KINDS, line, n),
            phase=_choice(p, "phase", PHASES, line, n),
        )
    if kind == "PollStall":
        ms = _get(p, "ms", int, line, n, optional=True)
        if ms is not None and not 0 <= ms <= MAX_INT:
            raise TraceError(n, _col(line, "ms"), "ms must be ≥ 0")
        return ClientEvent(kind, client, phase=_choice(p, "phase", PHASES, line, n), ms=ms)
    return ClientEvent(kind, client)  # Unsubscribe
