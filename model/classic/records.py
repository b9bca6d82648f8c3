"""Frozen state records of the classic protocol: the coordinator's classic group and its
members, the classic consumer processes, and the system state that holds them.

Field names follow Kafka's ``ClassicGroup`` / ``ClassicGroupMember`` and the consumer's
``AbstractCoordinator`` / ``ConsumerCoordinator`` in snake case. The network
(``model.records.Message``) and the offset records (``model.records.CommittedOffset``)
are the consumer protocol's.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.classic.messages import (
    NO_GENERATION,
    UNKNOWN_MEMBER_ID,
    ClassicSubscription,
    JoinGroupResponseMember,
)
from model.ids import EMPTY, Assignment, FrozenMap, TopicPartition
from model.records import CommittedOffset, Message, Record, TopicMetadata, hash_once
from model.status import ClassicClientStatus, ClassicGroupStatus, ErrorCode

# --------------------------------------------------------------------------- coordinator

NO_ISSUED_IDS: FrozenMap[str, int] = FrozenMap()


@dataclass(frozen=True, slots=True)
class ReplyTo:
    """Where the coordinator answers a request it holds back (a JoinGroup until the join
    phase completes, a SyncGroup until the leader's assignment arrives): the client
    process and its connection (``ClassicGroupMember.awaitingJoinFuture`` /
    ``awaitingSyncFuture``)."""

    client: str
    incarnation: int
    connection: int


@dataclass(frozen=True, slots=True)
class ClassicMember:
    """A member of a classic group as the coordinator stores it (``ClassicGroupMember``):
    its protocols (assignor names in preference order) with the subscription it sent,
    the assignment of the last completed SyncGroup phase, and the JoinGroup or SyncGroup
    request the coordinator holds, if any."""

    member_id: str
    instance_id: str | None
    protocols: tuple[str, ...]
    subscription: ClassicSubscription
    rebalance_timeout_ms: int
    assignment: Assignment = EMPTY
    awaiting_join: ReplyTo | None = None
    awaiting_sync: ReplyTo | None = None
    process: ReplyTo | None = None
    """Ghost bookkeeping, not a field of Kafka's member: the client process whose JoinGroup
    created this member id (its connection aside), so the model's timers know whether
    the member's process still runs."""

    def matches(self, protocols: tuple[str, ...], subscription: ClassicSubscription) -> bool:
        """Whether a JoinGroup carries the same protocols and metadata
        (``ClassicGroupMember.matches``)."""
        return self.protocols == protocols and self.subscription == subscription


@dataclass(frozen=True, slots=True)
class ClassicGroup(Record):
    """The coordinator's classic group (``ClassicGroup``).

    ``pending_members`` are member ids handed out with MEMBER_ID_REQUIRED whose second
    JoinGroup has not arrived (KIP-394), with the connection the id went to (model
    bookkeeping for the pending member's session timer); ``pending_sync`` the members
    the SyncGroup phase
    still waits for (KAFKA-12890); ``issued_member_ids`` counts the member ids handed to
    each client id, so generated ids are deterministic (Kafka appends a UUID)."""

    status: ClassicGroupStatus
    generation_id: int
    protocol_name: str | None
    leader_id: str | None
    members: FrozenMap[str, ClassicMember]
    committed_offsets: FrozenMap[TopicPartition, CommittedOffset]
    pending_members: FrozenMap[str, ReplyTo] = FrozenMap()  # noqa: RUF009 - immutable
    pending_sync: frozenset[str] = frozenset()
    issued_member_ids: FrozenMap[str, int] = NO_ISSUED_IDS
    deletions: int = 0
    """Ghost bookkeeping, not a field of Kafka's group: how often a group of this id was
    deleted (its incarnation), so that properties can tell the groups before and after a
    deletion apart."""

    def static_member_id(self, instance_id: str) -> str | None:
        """The member id holding ``instance_id`` (``ClassicGroup.staticMemberId``)."""
        for member in self.members.values():
            if member.instance_id == instance_id:
                return member.member_id
        return None


def new_classic_group() -> ClassicGroup:
    """An empty group at generation 0."""
    return ClassicGroup(
        status=ClassicGroupStatus.EMPTY,
        generation_id=0,
        protocol_name=None,
        leader_id=None,
        members=FrozenMap(),
        committed_offsets=FrozenMap(),
    )


# --------------------------------------------------------------------------- clients


@dataclass(frozen=True, slots=True)
class ClassicClient(Record):
    """A consumer process speaking the classic protocol (``AbstractCoordinator`` /
    ``ConsumerCoordinator``).

    ``owned`` is what the application is consuming (``SubscriptionState.assignedPartitions``);
    ``assigned`` and ``assigned_generation`` the last assignment received and its generation,
    which the eager ``sticky`` assignor reports in its user data (KIP-341).
    ``group_request`` names the JoinGroup (``join``) or SyncGroup (``sync``) request in
    flight; ``join_members`` is what the leader's JoinGroup response listed, kept until it
    sends its SyncGroup.
    """

    name: str
    instance_id: str | None
    incarnation: int
    alive: bool
    status: ClassicClientStatus
    assignors: tuple[str, ...]
    kip429: bool
    """False: byte code older than KIP-429 (Kafka ≤ 2.3): it knows only the EAGER protocol
    and, as leader, assigns without reading owned partitions."""
    subscription: frozenset[str]
    member_id: str = UNKNOWN_MEMBER_ID
    generation_id: int = NO_GENERATION
    protocol_name: str | None = None
    leader: bool = False
    join_members: tuple[JoinGroupResponseMember, ...] | None = None
    owned: Assignment = EMPTY
    assigned: Assignment = EMPTY
    assigned_generation: int = NO_GENERATION
    rejoin_needed: bool = True
    assignment_stale: bool = False
    """The leader assigned on metadata that has changed since (``assignmentSnapshot`` no
    longer matches ``metadataSnapshot``): it rejoins once STABLE."""
    needs_join_prepare: bool = True
    group_request: str | None = None
    heartbeat_in_flight: bool = False
    heartbeat_generation: int = NO_GENERATION
    """The generation the heartbeat in flight was sent at
    (``CoordinatorResponseHandler.sentGeneration``)."""
    commit_in_flight: bool = False
    connection: int = 0
    bounced: int = 0
    """How many rolling bounces (``Bounce``) this client went through."""
    fatal_error: ErrorCode | None = None
    stalled: bool = False
    """The application thread hangs before sending its SyncGroup (``StallAssignment``):
    only the heartbeat thread still talks to the coordinator."""
    expired: bool = False
    """Ghost bookkeeping, not a field of Kafka's client: a coordinator timer removed this
    live client's member and it has not heard so; it may still consume (a zombie)."""


# --------------------------------------------------------------------------- the system


@dataclass(frozen=True, slots=True)
class ClassicState(Record):
    """The whole system under the classic protocol: the coordinator's group, the cluster
    metadata, the consumer processes and the network; ``perturbations`` counts the
    perturbation actions taken so far. The same field names as ``model.records.State``."""

    group: ClassicGroup
    topics: FrozenMap[str, TopicMetadata]
    clients: tuple[ClassicClient, ...]
    network: tuple[Message, ...]
    perturbations: int = 0
    topic_generation: int = 0
    coordinator_loading: bool = False

    def client(self, name: str) -> ClassicClient:
        """The client called ``name``."""
        for c in self.clients:
            if c.name == name:
                return c
        raise KeyError(name)


hash_once(ClassicGroup, ClassicClient, ClassicState)
