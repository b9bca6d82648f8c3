"""The classic group APIs' requests and responses, with Kafka's field names in snake case
(``JoinGroupRequest`` v5+, ``SyncGroupRequest``, ``HeartbeatRequest``, ``LeaveGroupRequest``
v3+, and the consumer protocol's ``ConsumerProtocolSubscription`` carried as JoinGroup
metadata). Offset commits use ``model.records.OffsetCommitRequest``, whose
``generation_id_or_member_epoch`` carries the generation.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.ids import EMPTY, Assignment, FrozenMap
from model.status import ErrorCode

NO_ASSIGNMENTS: FrozenMap[str, Assignment] = FrozenMap()
"""A follower's SyncGroup: no assignments."""

UNKNOWN_MEMBER_ID = ""
"""The member id of a first JoinGroup (``JoinGroupRequest.UNKNOWN_MEMBER_ID``)."""

NO_GENERATION = -1
"""``AbstractCoordinator.Generation.NO_GENERATION``'s generation id."""


@dataclass(frozen=True, slots=True)
class ClassicSubscription:
    """The JoinGroup metadata of a consumer (``ConsumerProtocolSubscription``): its topics,
    the partitions it still owns (``OwnedPartitions``, KIP-429; empty for an eager member,
    which revoked everything before joining), in ``user_data`` the previous assignment the
    eager ``sticky`` assignor encodes in its user data (KIP-341), and the generation of
    the claims (-1 when unknown): the member's current generation under COOPERATIVE
    (``GenerationId``, KIP-792), the generation the user data's assignment came from under
    EAGER (the ``StickyAssignor`` user data's generation, KIP-341)."""

    topics: frozenset[str]
    owned_partitions: Assignment = EMPTY
    generation_id: int = NO_GENERATION
    user_data: Assignment = EMPTY


@dataclass(frozen=True, slots=True)
class JoinGroupRequest:
    """JoinGroup: ``protocols`` are the consumer's assignor names in preference order
    (``JoinGroupRequestProtocol.Name``), every one with the same subscription.
    ``require_known_member_id`` is false only for a JoinGroup before version 4, from a
    client older than KIP-394 (``JoinGroupRequest.requiresKnownMemberId``); the model's
    clients send version 4 or later."""

    member_id: str
    instance_id: str | None
    protocols: tuple[str, ...]
    subscription: ClassicSubscription
    rebalance_timeout_ms: int
    session_timeout_ms: int
    require_known_member_id: bool = True


@dataclass(frozen=True, slots=True)
class JoinGroupResponseMember:
    """A member as the leader's JoinGroup response lists it."""

    member_id: str
    instance_id: str | None
    subscription: ClassicSubscription


@dataclass(frozen=True, slots=True)
class JoinGroupResponse:
    """JoinGroup response: the generation, the selected protocol (assignor), the leader and,
    for the leader only, every member with its subscription."""

    error_code: ErrorCode
    generation_id: int
    protocol_name: str | None
    leader: str
    member_id: str
    members: tuple[JoinGroupResponseMember, ...] = ()


@dataclass(frozen=True, slots=True)
class SyncGroupRequest:
    """SyncGroup: the leader sends every member's assignment; followers send none."""

    member_id: str
    generation_id: int
    instance_id: str | None
    protocol_name: str | None
    assignments: FrozenMap[str, Assignment] = NO_ASSIGNMENTS


@dataclass(frozen=True, slots=True)
class SyncGroupResponse:
    """SyncGroup response: the member's assignment in the generation."""

    error_code: ErrorCode
    protocol_name: str | None
    assignment: Assignment = EMPTY


@dataclass(frozen=True, slots=True)
class HeartbeatRequest:
    """Heartbeat of a classic member (``HeartbeatRequest``)."""

    member_id: str
    generation_id: int
    instance_id: str | None


@dataclass(frozen=True, slots=True)
class HeartbeatResponse:
    """Heartbeat response: only an error code."""

    error_code: ErrorCode


@dataclass(frozen=True, slots=True)
class LeaveGroupRequest:
    """LeaveGroup for one member (``LeaveGroupRequest`` v3+ carries a list of members; a
    consumer sends only itself)."""

    member_id: str
    instance_id: str | None


@dataclass(frozen=True, slots=True)
class LeaveGroupResponse:
    """LeaveGroup response (the member's own error, flattened)."""

    error_code: ErrorCode


ClassicRequest = JoinGroupRequest | SyncGroupRequest | HeartbeatRequest | LeaveGroupRequest
ClassicResponse = JoinGroupResponse | SyncGroupResponse | HeartbeatResponse | LeaveGroupResponse
ClassicBody = ClassicRequest | ClassicResponse

JOIN = "join"
SYNC = "sync"
CLASSIC_HEARTBEAT = "classic_heartbeat"
LEAVE = "leave"


def classic_api(body: object) -> str | None:
    """The api of a classic body (``join``, ``sync``, ``classic_heartbeat``, ``leave``), or
    None for another body."""
    return classic_api_of(type(body))


def classic_api_of(kind: type) -> str | None:
    """The api of a classic body class (``classic_api``), or None for another class."""
    if issubclass(kind, JoinGroupRequest | JoinGroupResponse):
        return JOIN
    if issubclass(kind, SyncGroupRequest | SyncGroupResponse):
        return SYNC
    if issubclass(kind, HeartbeatRequest | HeartbeatResponse):
        return CLASSIC_HEARTBEAT
    if issubclass(kind, LeaveGroupRequest | LeaveGroupResponse):
        return LEAVE
    return None
