"""Kafka wire messages to trace events, with ``kio``'s message schemas.

The consumer protocol's ConsumerGroupHeartbeat names partitions by topic id; the classic
group APIs (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) by topic name, inside the opaque
``Metadata`` and ``Assignment`` bytes, which are the consumer protocol's
``ConsumerProtocolSubscription`` and ``ConsumerProtocolAssignment``: an int16 version, then
that version's fields (decoded here with kio's schemas of those messages).

A request header is read by hand up to the correlation id (its layout is the same in
every version), then by kio with the header version the API's flexibility asks for; a
response header is the correlation id, plus tagged fields for flexible responses (except
ApiVersions, whose response header is always version 0).
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import struct
from typing import Any

from kio.index import load_request_schema, load_response_schema
from kio.schema.request_header.v1.header import RequestHeader as RequestHeaderV1
from kio.schema.request_header.v2.header import RequestHeader as RequestHeaderV2
from kio.serial import entity_reader, entity_writer

CONSUMER_GROUP_HEARTBEAT = 68
OFFSET_COMMIT = 8
JOIN_GROUP = 11
HEARTBEAT = 12
LEAVE_GROUP = 13
SYNC_GROUP = 14
CLASSIC_APIS = (JOIN_GROUP, SYNC_GROUP, HEARTBEAT, LEAVE_GROUP)
"""The classic protocol's group APIs."""
METADATA = 3
FIND_COORDINATOR = 10
API_VERSIONS = 18

KNOWN_ERRORS = {0, -1, 22, 23, 25, 27, 42, 69, 79, 81, 82, 110, 111, 112, 113}
"""Error codes of the trace format (model.status.ErrorCode)."""


class Unsupported(Exception):
    """kio has no schema for this API version (the frame is forwarded untouched)."""


def request_key(frame: bytes) -> tuple[int, int, int]:
    """(api key, api version, correlation id) of a request frame (without its size)."""
    return struct.unpack_from(">hhi", frame, 0)


def request_client_id(frame: bytes) -> str | None:
    """The ``ClientId`` of a request frame's header: a nullable int16-length string right
    after the correlation id, in every request header version (``RequestHeader.json``:
    it is not a compact string even in flexible versions); None when null or cut short."""
    if len(frame) < 10:
        return None
    (size,) = struct.unpack_from(">h", frame, 8)
    if size < 0 or len(frame) < 10 + size:
        return None
    return frame[10 : 10 + size].decode("utf-8", "replace")


def _request_types(api_key: int, version: int) -> tuple[Any, Any]:
    try:
        schema = load_request_schema(api_key, version)
    except Exception as e:  # kio raises its own index errors for unknown keys/versions
        raise Unsupported(f"api {api_key} v{version}: {e}") from None
    header = RequestHeaderV2 if schema.__flexible__ else RequestHeaderV1
    return header, schema


def read_request(frame: bytes) -> tuple[Any, Any]:
    """The (header, body) of a request frame."""
    api_key, version, _ = request_key(frame)
    header_type, schema = _request_types(api_key, version)
    header, size = entity_reader(header_type)(frame, 0)
    body, _ = entity_reader(schema)(frame, size)
    return header, body


def _response_header_size(api_key: int, version: int, frame: bytes) -> tuple[Any, int]:
    try:
        schema = load_response_schema(api_key, version)
    except Exception as e:
        raise Unsupported(f"api {api_key} v{version}: {e}") from None
    if schema.__flexible__ and api_key != API_VERSIONS:
        # correlation id, then an empty tagged-field section (one varint 0)
        tagged = frame[4]
        if tagged != 0:
            raise Unsupported("response header with tagged fields")
        return schema, 5
    return schema, 4


def read_response(api_key: int, version: int, frame: bytes) -> Any:
    """The body of a response frame."""
    schema, offset = _response_header_size(api_key, version, frame)
    try:
        body, _ = entity_reader(schema)(frame, offset)
    except Exception:
        if api_key != SYNC_GROUP:
            raise
        return _sync_response_null_assignment(version, frame, offset)
    return body


@dataclasses.dataclass(frozen=True)
class NullableSyncGroupResponse:
    """A SyncGroup response read without kio (:func:`_sync_response_null_assignment`)."""

    error_code: int
    protocol_name: str | None
    assignment: bytes


def _uvarint(frame: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = frame[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _sync_response_null_assignment(
    version: int, frame: bytes, pos: int
) -> NullableSyncGroupResponse:
    """A SyncGroup response whose ``Assignment`` is null. The schema
    (``SyncGroupResponse.json``) makes it non-nullable, and kio refuses a null, but
    librdkafka's mock coordinator answers an error with a null assignment; read it by
    hand, the null as no assignment (what the consumer makes of it)."""
    if version >= 1:
        pos += 4  # ThrottleTimeMs
    (error,) = struct.unpack_from(">h", frame, pos)
    pos += 2
    name: str | None = None
    if version >= 4:  # flexible: compact strings and bytes, length + 1 (0: null)
        if version >= 5:
            for field_index in range(2):  # ProtocolType, ProtocolName
                n, pos = _uvarint(frame, pos)
                if n and field_index == 1:
                    name = frame[pos : pos + n - 1].decode()
                pos += max(n - 1, 0)
        n, pos = _uvarint(frame, pos)
        raw = frame[pos : pos + n - 1] if n else b""
    else:
        (n,) = struct.unpack_from(">i", frame, pos)
        raw = frame[pos + 4 : pos + 4 + n] if n >= 0 else b""
    return NullableSyncGroupResponse(error, name, raw)


def write_response(api_key: int, version: int, frame: bytes, body: Any) -> bytes:
    """The frame with its body replaced by ``body`` (header kept)."""
    schema, offset = _response_header_size(api_key, version, frame)
    out = io.BytesIO()
    out.write(frame[:offset])
    entity_writer(schema)(out, body)
    return out.getvalue()


def rewrite_addresses(api_key: int, body: Any, address: Any) -> Any:
    """Metadata brokers and FindCoordinator coordinators pointed at ``address(host, port)
    -> (host, port)``."""
    if api_key == METADATA:
        brokers = tuple(
            dataclasses.replace(b, host=h, port=type(b.port)(p))
            for b in body.brokers
            for h, p in [address(b.host, int(b.port))]
        )
        return dataclasses.replace(body, brokers=brokers)
    if api_key == FIND_COORDINATOR:
        if hasattr(body, "coordinators") and body.coordinators:
            coords = tuple(
                dataclasses.replace(c, host=h, port=type(c.port)(p))
                for c in body.coordinators
                for h, p in [address(c.host, int(c.port))]
            )
            body = dataclasses.replace(body, coordinators=coords)
        if getattr(body, "host", None):
            h, p = address(body.host, int(body.port))
            body = dataclasses.replace(body, host=h, port=type(body.port)(p))
        return body
    return body


def _code(error: Any) -> int:
    return int(error.value if hasattr(error, "value") else error)


def topic_ids(metadata: Any) -> dict[str, str]:
    """Topic name → topic id (as a string) from a Metadata response."""
    out = {}
    for t in getattr(metadata, "topics", ()) or ():
        topic_id = getattr(t, "topic_id", None)
        if t.name and topic_id is not None and int(topic_id) != 0:
            out[str(t.name)] = str(topic_id)
    return out


def partition_counts(metadata: Any) -> dict[str, int]:
    """Topic name → its number of partitions, from a Metadata response."""
    out = {}
    for t in getattr(metadata, "topics", ()) or ():
        if t.name and _code(t.error_code) == 0:
            out[str(t.name)] = len(t.partitions)
    return out


def _parts_of(topics: Any, names: dict[str, str]) -> list[dict[str, Any]]:
    out = []
    for t in topics or ():
        topic_id = getattr(t, "topic_id", None)
        name = str(topic_id) if topic_id is not None else str(getattr(t, "name", ""))
        name = names.get(name, name)  # a topic name becomes its id when Metadata told it
        parts = getattr(t, "partitions", ())
        indexes = sorted(int(getattr(p, "partition_index", p)) for p in parts)
        out.append({"TopicId": name, "Partitions": indexes})
    return sorted(out, key=lambda x: x["TopicId"])


def heartbeat_request_body(req: Any, names: dict[str, str]) -> dict[str, Any]:
    """A ConsumerGroupHeartbeat request in the trace format's field names."""
    out: dict[str, Any] = {"MemberId": req.member_id, "MemberEpoch": int(req.member_epoch)}
    if req.instance_id is not None:
        out["InstanceId"] = req.instance_id
    timeout = req.rebalance_timeout
    out["RebalanceTimeoutMs"] = int(timeout.total_seconds() * 1000) if timeout is not None else -1
    if req.subscribed_topic_names is not None:
        out["SubscribedTopicNames"] = sorted(req.subscribed_topic_names)
    regex = getattr(req, "subscribed_topic_regex", None)  # version 1 and later
    if regex is not None:
        out["SubscribedTopicRegex"] = regex
    rack = getattr(req, "rack_id", None)
    if rack is not None:
        out["RackId"] = rack
    if req.server_assignor is not None:
        out["ServerAssignor"] = req.server_assignor
    if req.topic_partitions is not None:
        out["TopicPartitions"] = _parts_of(req.topic_partitions, names)
    return out


def heartbeat_response_body(resp: Any, names: dict[str, str]) -> dict[str, Any]:
    """A ConsumerGroupHeartbeat response in the trace format's field names."""
    interval = resp.heartbeat_interval
    out: dict[str, Any] = {
        "ErrorCode": _code(resp.error_code),
        "MemberId": resp.member_id,
        "MemberEpoch": int(resp.member_epoch),
        "HeartbeatIntervalMs": int(interval.total_seconds() * 1000) if interval is not None else 0,
    }
    if out["MemberId"] is None:
        del out["MemberId"]
    if resp.assignment is not None:
        out["Assignment"] = {"TopicPartitions": _parts_of(resp.assignment.topic_partitions, names)}
    return out


def commit_request_body(req: Any, names: dict[str, str]) -> dict[str, Any]:
    """An OffsetCommit request (v9+: the member epoch in GenerationIdOrMemberEpoch)."""
    return {
        "MemberId": req.member_id,
        "GenerationIdOrMemberEpoch": int(req.generation_id_or_member_epoch),
        "Topics": _parts_of(req.topics, names),
    }


def commit_response_body(resp: Any, names: dict[str, str]) -> dict[str, Any]:
    """An OffsetCommit response: the first partition error stands for the request."""
    error = 0
    topics = []
    for t in resp.topics:
        parts = []
        for p in t.partitions:
            code = _code(p.error_code)
            error = error or code
            parts.append(int(p.partition_index))
        topic_id = getattr(t, "topic_id", None)
        name = str(topic_id) if topic_id is not None else str(t.name)
        topics.append({"TopicId": names.get(name, name), "Partitions": sorted(parts)})
    return {"ErrorCode": error, "Topics": sorted(topics, key=lambda x: x["TopicId"])}


# The classic protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup).

_SUBSCRIPTION_VERSIONS = 3
"""The highest ``ConsumerProtocolSubscription`` version kio has a schema for."""
_ASSIGNMENT_VERSIONS = 3
"""The highest ``ConsumerProtocolAssignment`` version kio has a schema for."""


def _versioned(raw: bytes, message: str, highest: int) -> Any:
    """Read a consumer-protocol message (an int16 version, then that version's fields).

    A version above ``highest`` is read as ``highest``: later versions only add fields at
    the end (Kafka's ``ConsumerProtocol`` reads them the same way)."""
    if len(raw) < 2:
        raise ValueError(f"{message}: {len(raw)} bytes, no version")
    (version,) = struct.unpack_from(">h", raw, 0)
    if version < 0:
        raise ValueError(f"{message}: negative version {version}")
    module = importlib.import_module(f"kio.schema.{message}.v{min(version, highest)}")
    schema = getattr(module, "".join(w.title() for w in message.split("_")))
    body, _ = entity_reader(schema)(raw, 2)
    return body


def _named_parts(topics: Any) -> list[dict[str, Any]]:
    """``TopicPartition`` entries (a topic name and partition indexes) as trace partitions,
    by topic name; a topic named twice is merged."""
    merged: dict[str, set[int]] = {}
    for t in topics or ():
        merged.setdefault(str(t.topic), set()).update(int(p) for p in t.partitions)
    return [
        {"TopicId": name, "Partitions": sorted(parts)} for name, parts in sorted(merged.items())
    ]


def subscription(raw: bytes) -> dict[str, Any]:
    """JoinGroup ``Metadata`` bytes (``ConsumerProtocolSubscription``) as the trace's
    ``Metadata``: ``Topics``, ``OwnedPartitions`` (version 1 and later) and
    ``GenerationId`` (version 2 and later). ``UserData`` is the assignor's own bytes, whose
    format the protocol does not fix, and ``RackId`` has no field in the trace: neither
    is written."""
    body = _versioned(raw, "consumer_protocol_subscription", _SUBSCRIPTION_VERSIONS)
    out: dict[str, Any] = {"Topics": sorted({str(t) for t in body.topics})}
    owned = getattr(body, "owned_partitions", None)
    if owned is not None:
        out["OwnedPartitions"] = _named_parts(owned)
    generation = getattr(body, "generation_id", None)
    if generation is not None:
        out["GenerationId"] = int(generation)
    return out


def assignment(raw: bytes) -> list[dict[str, Any]]:
    """SyncGroup ``Assignment`` bytes (``ConsumerProtocolAssignment``) as partitions. No
    bytes at all is no assignment (a coordinator answers a member the leader gave nothing
    with an empty one); ``UserData`` is not written."""
    if not raw:
        return []
    body = _versioned(raw, "consumer_protocol_assignment", _ASSIGNMENT_VERSIONS)
    return _named_parts(body.assigned_partitions)


def _ms(value: Any) -> int:
    """A kio ``timedelta`` field in milliseconds."""
    return int(value.total_seconds() * 1000)


def join_request_body(req: Any) -> dict[str, Any]:
    """A JoinGroup request (``JoinGroupRequest``): each protocol's ``Metadata`` decoded.
    Version 0 has no rebalance timeout: the coordinator uses the session timeout."""
    out: dict[str, Any] = {"MemberId": req.member_id}
    instance = getattr(req, "group_instance_id", None)
    if instance is not None:
        out["GroupInstanceId"] = instance
    out["ProtocolType"] = req.protocol_type
    out["Protocols"] = [
        {"Name": p.name, "Metadata": subscription(p.metadata)} for p in req.protocols
    ]
    rebalance = getattr(req, "rebalance_timeout", None)
    out["RebalanceTimeoutMs"] = _ms(rebalance if rebalance is not None else req.session_timeout)
    out["SessionTimeoutMs"] = _ms(req.session_timeout)
    return out


def join_response_body(resp: Any) -> dict[str, Any]:
    """A JoinGroup response (``JoinGroupResponse``): the leader's ``Members`` with their
    ``Metadata`` decoded."""
    out: dict[str, Any] = {
        "ErrorCode": _code(resp.error_code),
        "GenerationId": int(resp.generation_id),
    }
    if resp.protocol_name is not None:
        out["ProtocolName"] = resp.protocol_name
    out["Leader"] = resp.leader
    out["MemberId"] = resp.member_id
    members = []
    for m in resp.members:
        member: dict[str, Any] = {"MemberId": m.member_id}
        instance = getattr(m, "group_instance_id", None)
        if instance is not None:
            member["GroupInstanceId"] = instance
        member["Metadata"] = subscription(m.metadata)
        members.append(member)
    out["Members"] = members
    return out


def sync_request_body(req: Any) -> dict[str, Any]:
    """A SyncGroup request (``SyncGroupRequest``): the leader's ``Assignments`` decoded."""
    out: dict[str, Any] = {"MemberId": req.member_id, "GenerationId": int(req.generation_id)}
    instance = getattr(req, "group_instance_id", None)
    if instance is not None:
        out["GroupInstanceId"] = instance
    name = getattr(req, "protocol_name", None)
    if name is not None:
        out["ProtocolName"] = name
    out["Assignments"] = [
        {"MemberId": a.member_id, "Assignment": assignment(a.assignment)} for a in req.assignments
    ]
    return out


def sync_response_body(resp: Any) -> dict[str, Any]:
    """A SyncGroup response (``SyncGroupResponse``): the member's assignment decoded."""
    out: dict[str, Any] = {"ErrorCode": _code(resp.error_code)}
    name = getattr(resp, "protocol_name", None)
    if name is not None:
        out["ProtocolName"] = name
    out["Assignment"] = assignment(resp.assignment)
    return out


def classic_heartbeat_request_body(req: Any) -> dict[str, Any]:
    """A Heartbeat request (``HeartbeatRequest``, the classic protocol's)."""
    out: dict[str, Any] = {"MemberId": req.member_id, "GenerationId": int(req.generation_id)}
    instance = getattr(req, "group_instance_id", None)
    if instance is not None:
        out["GroupInstanceId"] = instance
    return out


def error_only_body(resp: Any) -> dict[str, Any]:
    """A Heartbeat response (``HeartbeatResponse``): its error code."""
    return {"ErrorCode": _code(resp.error_code)}


def leave_request_body(req: Any) -> dict[str, Any]:
    """A LeaveGroup request (``LeaveGroupRequest``): versions 0 to 2 name one member
    (``MemberId``), version 3 and later a list (``Members``), which a consumer fills with
    itself alone; a request naming more (an admin client removing members) is refused."""
    members = getattr(req, "members", None)
    if members is None:
        return {"Members": [{"MemberId": req.member_id}]}
    if len(members) != 1:
        raise ValueError(f"LeaveGroup naming {len(members)} members (not a consumer's)")
    (m,) = members
    member: dict[str, Any] = {"MemberId": m.member_id}
    if m.group_instance_id is not None:
        member["GroupInstanceId"] = m.group_instance_id
    return {"Members": [member]}


def leave_response_body(resp: Any) -> dict[str, Any]:
    """A LeaveGroup response (``LeaveGroupResponse``): the request's error, else (version
    3 and later) the one member's own."""
    error = _code(resp.error_code)
    for m in getattr(resp, "members", ()) or ():
        error = error or _code(m.error_code)
    return {"ErrorCode": error}


def leave_member(req: Any) -> str:
    """The member a consumer's LeaveGroup request names."""
    members = getattr(req, "members", None)
    if members is None:
        return str(req.member_id)
    return str(members[0].member_id) if members else ""
