"""Kafka wire messages to trace events, with ``kio``'s message schemas.

A request header is read by hand up to the correlation id (its layout is the same in
every version), then by kio with the header version the API's flexibility asks for; a
response header is the correlation id, plus tagged fields for flexible responses (except
ApiVersions, whose response header is always version 0).
"""

from __future__ import annotations

import dataclasses
import io
import struct
from typing import Any

from kio.index import load_request_schema, load_response_schema
from kio.schema.request_header.v1.header import RequestHeader as RequestHeaderV1
from kio.schema.request_header.v2.header import RequestHeader as RequestHeaderV2
from kio.serial import entity_reader, entity_writer

CONSUMER_GROUP_HEARTBEAT = 68
OFFSET_COMMIT = 8
METADATA = 3
FIND_COORDINATOR = 10
API_VERSIONS = 18

KNOWN_ERRORS = {0, -1, 22, 25, 27, 42, 69, 81, 82, 110, 111, 112, 113}
"""Error codes of the trace format (model.status.ErrorCode)."""


class Unsupported(Exception):
    """kio has no schema for this API version (the frame is forwarded untouched)."""


def request_key(frame: bytes) -> tuple[int, int, int]:
    """(api key, api version, correlation id) of a request frame (without its size)."""
    return struct.unpack_from(">hhi", frame, 0)


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
    body, _ = entity_reader(schema)(frame, offset)
    return body


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
