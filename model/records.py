"""Frozen state records: the coordinator's group and members, the clients, the messages.

Every record is a value (``@dataclass(frozen=True, slots=True)``); a step builds new
records and leaves the old ones untouched. Field names follow KIP-848 and the Kafka
records (``ConsumerGroupMemberMetadataValue``, ``ConsumerGroupCurrentMemberAssignmentValue``,
``ConsumerGroupTargetAssignmentMetadataValue``) in snake case.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from model.classic.messages import ClassicBody, classic_api_of
from model.ids import EMPTY, Assignment, FrozenMap, TopicPartition

# Search speed (model/speed.py), re-exported here where the model's files import them.
from model.speed import Record as Record  # noqa: PLC0414
from model.speed import hash_once as hash_once  # noqa: PLC0414
from model.speed import replace as replace  # noqa: PLC0414
from model.speed import same_value as same_value  # noqa: PLC0414
from model.status import ClientStatus, ErrorCode, MemberState

LEAVE_GROUP_MEMBER_EPOCH = -1
"""Member epoch of a leave heartbeat (KIP-848 "Leaving the group")."""

LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
"""Member epoch of a static member's temporary leave (KIP-848 "Static Membership")."""


# --------------------------------------------------------------------------- coordinator


NO_ASSIGNMENT_EPOCHS: FrozenMap[TopicPartition, int] = FrozenMap()
NO_RESOLVED_REGEXES: FrozenMap[str, frozenset[str]] = FrozenMap()
"""The KIP-1251 assignment epochs of a member whose coordinator does not record them."""
NO_STATIC_MEMBERS: FrozenMap[str, str] = FrozenMap()
"""The static-member index of a group without static members."""

Holder = tuple[str, str | None]
"""Who held a (partition, assignment epoch) pair: a member id and its static instance id
(None for a dynamic member)."""

NO_ASSIGNMENT_HISTORY: FrozenMap[tuple[TopicPartition, int], frozenset[Holder]] = FrozenMap()
"""The assignment history of a group whose coordinator records no assignment epochs."""


@dataclass(frozen=True, slots=True)
class ClassicMemberMetadata:
    """What a consumer group keeps of a member that speaks the classic protocol
    (``ConsumerGroupMemberMetadataValue.ClassicMemberMetadata``): its supported protocols
    (assignor names, in preference order) and, as ghost bookkeeping for the model's timers,
    the client process (name, incarnation) whose JoinGroup made it a member."""

    supported_protocols: tuple[str, ...]
    process: tuple[str, int] | None = None


@dataclass(frozen=True, slots=True)
class Member(Record):
    """A member as the group coordinator stores it (``ConsumerGroupMember``).

    ``assigned_partitions`` excludes ``partitions_pending_revocation``; together they are
    what the coordinator believes the member may still own. ``rebalance_timer_epoch`` is
    the member epoch the revocation (rebalance) timer was armed with, or ``None``
    (``GroupMetadataManager.scheduleConsumerGroupRebalanceTimeout``).
    """

    member_id: str
    instance_id: str | None
    member_epoch: int
    previous_member_epoch: int
    state: MemberState
    assigned_partitions: Assignment
    partitions_pending_revocation: Assignment
    subscribed_topic_names: frozenset[str]
    server_assignor: str | None
    rebalance_timeout_ms: int
    rebalance_timer_epoch: int | None = None
    rack_id: str | None = None
    """The rack the member's client announced (``ConsumerGroupMember.rackId``): exposed to
    assignors; Kafka's built-in ones ignore it (KAFKA-16694)."""
    subscribed_topic_regex: str | None = None
    """The member's regular-expression subscription (``ConsumerGroupMember.subscribedTopicRegex``);
    the topics it stands for are the group's resolution of it (``Group.resolved_regexes``)."""
    assignment_epochs: FrozenMap[TopicPartition, int] = NO_ASSIGNMENT_EPOCHS
    """KIP-1251: for each partition assigned or pending revocation, the member epoch at
    which it was assigned (``CurrentMemberAssignment.AssignmentEpochs``); empty unless
    ``Config.assignment_epochs``."""
    classic: ClassicMemberMetadata | None = None
    """A member speaking the classic protocol in a mixed group
    (``ConsumerGroupMember.classicMemberMetadata``); None for a consumer-protocol member."""

    def owned_or_pending(self) -> Assignment:
        """Partitions the coordinator counts as held by this member (assigned ∪ revoking)."""
        if not self.partitions_pending_revocation:
            return self.assigned_partitions
        return self.assigned_partitions | self.partitions_pending_revocation


def new_member(member_id: str, instance_id: str | None) -> Member:
    """A fresh member: epoch 0, previous epoch -1, STABLE, nothing assigned
    (``ConsumerGroupMember.Builder`` defaults)."""
    return Member(
        member_id=member_id,
        instance_id=instance_id,
        member_epoch=0,
        previous_member_epoch=-1,
        state=MemberState.STABLE,
        assigned_partitions=EMPTY,
        partitions_pending_revocation=EMPTY,
        subscribed_topic_names=frozenset(),
        server_assignor=None,
        rebalance_timeout_ms=-1,
    )


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    """Who committed a partition's offset and at which member epoch.

    The model abstracts the offset value away; what the safety properties need is that
    only a member at a valid epoch wrote it (``OffsetCommitValue`` + the request's
    member id and epoch).
    """

    member_id: str
    member_epoch: int


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    """A topic in the cluster metadata image: its id (KIP-516), partition count, and which
    placement of its replicas on racks it has (``rack_layout``: a new value each time the
    racks of its partitions change; only the group's metadata hash reads it)."""

    topic_id: str
    partitions: int
    rack_layout: int = 0


@dataclass(frozen=True, slots=True)
class AssignorRun:
    """An assignor run offloaded to the coordinator's executor (KIP-1263 "Assignment
    Offload"): the group epoch it was started at and what it read then. The model is
    deterministic, so the result is a function of those inputs and is recorded at the
    start; ``CompleteAssignorRun`` hands it back to the coordinator. ``static_members``
    maps each static member's instance id to its member id at the start, so that the
    result can follow a static replacement made meanwhile."""

    group_epoch: int
    target_assignment: FrozenMap[str, Assignment]
    static_members: FrozenMap[str, str]
    assignor: str | None = None
    """The server assignor the run used (ghost: ``Group.target_assignor`` once installed)."""
    group_deleted: bool = False
    """The group the run was started for was deleted while it ran (``DeleteGroup``, or an
    empty group whose last offsets expired): the coordinator discards the result on
    completion, whatever group of the same id exists then (KIP-1263 "Assignment Offload":
    deleted groups have their assignments discarded)."""

    def member_ids(self) -> frozenset[str]:
        """The members the run assigned (every member of the group when it started)."""
        return frozenset(self.target_assignment)


NO_ASSIGNOR_RUNS: tuple[AssignorRun, ...] = ()


@dataclass(frozen=True, slots=True)
class Group(Record):
    """The coordinator's consumer group (``ConsumerGroup``).

    ``partition_epochs`` is the group-wide ``currentPartitionEpoch`` map: for each partition
    held by a member (assigned or pending revocation), the member epoch of its holder. A
    partition absent from it is free (``ConsumerGroup.currentPartitionEpoch``; see
    docs/kafka-rules.md, Partition epochs and unreleased partitions).

    The fields after the coordinator's own are ghost fields (``GHOST``): history the
    properties need and the protocol does not keep.
    """

    GHOST: ClassVar[frozenset[str]] = frozenset(
        {
            "assignment_history",
            "holder_commit_rejected",
            "deletions",
            "migration_policy_breached",
            "target_assignor",
        }
    )

    group_epoch: int
    assignment_epoch: int
    target_assignment: FrozenMap[str, Assignment]
    members: FrozenMap[str, Member]
    partition_epochs: FrozenMap[TopicPartition, int]
    committed_offsets: FrozenMap[TopicPartition, CommittedOffset]
    resolved_regexes: FrozenMap[str, frozenset[str]] = NO_RESOLVED_REGEXES
    """The coordinator's resolution of every regular expression a member subscribes with:
    the topic names it matched when last resolved (``ConsumerGroup.resolvedRegularExpressions``,
    written as ``ConsumerGroupRegularExpression`` records)."""
    assignment_timestamp: int = 0
    """``AssignmentTimestamp`` of the target assignment metadata (KIP-1263, KAFKA-20266),
    logical: 0 when unknown — no target computed yet, a record without the tagged field,
    or an emptied group realigned (KAFKA-20442) — and 1 once a computation finished. The
    model has no clock: whether the assignment interval has passed since then is
    ``assignment_interval_elapsed``. Recorded only when ``Config.assignment_interval_ms``
    is positive (the batching gate is its only reader)."""
    assignment_interval_elapsed: bool = False
    """Logical time: the assignment interval has passed since ``assignment_timestamp``
    (``AssignmentIntervalElapses``); the next heartbeat that needs a new target starts one."""
    assignor_runs: tuple[AssignorRun, ...] = NO_ASSIGNOR_RUNS
    """Assignor runs in flight on the executor (``Config.assignor_offload``), oldest first:
    at most one (KIP-1263 "Assignment Offload"); a tuple so that a rule breaking that can
    be written down."""
    deleted: bool = False
    """The group was deleted (``GroupMetadataManager.deleteGroup``) and no member has joined
    since: Kafka holds no group of this id, so a heartbeat at an epoch other than 0 and an
    offset commit at an epoch of at least 0 are answered GROUP_ID_NOT_FOUND; a join at
    epoch 0 creates it again. The model keeps the fresh record a new group starts from."""
    static_members: FrozenMap[str, str] = NO_STATIC_MEMBERS
    """The static-member index: instance id -> member id (``ConsumerGroup.staticMembers``),
    kept by the ``write_member``, ``remove_member`` and ``replace_static_member`` rules as
    ``ConsumerGroup.updateMember`` and ``removeMember`` keep it. Under the reference rules
    it is exactly what the members' instance ids say (``static_member_index``)."""

    # -- ghost fields (``GHOST``): bookkeeping Kafka's ``ConsumerGroup`` does not have, for
    # the properties (invariants/); the rules keep them up to date and never read them to
    # decide a step or an answer.
    assignment_history: FrozenMap[tuple[TopicPartition, int], frozenset[Holder]] = (
        NO_ASSIGNMENT_HISTORY
    )
    """Ghost bookkeeping, not a field of Kafka's group: every (partition, KIP-1251
    assignment epoch) pair a member of this group was ever stamped with, and by whom
    (``coordinator.record_assignment_history``). Kept only with
    ``Config.assignment_epochs``; a deleted group's history goes with it (the group
    created again is another group)."""
    holder_commit_rejected: bool = False
    """Ghost bookkeeping, not a field of Kafka's group: an offset commit was refused
    although its member held every partition of it since an epoch no newer than the
    request's (what KIP-1251 guarantees to accept; KAFKA-20066). Set only when
    ``Config.assignment_epochs`` records the epochs that judgement needs."""
    deletions: int = 0
    """Ghost bookkeeping, not a field of Kafka's group: how often a group of this id was
    deleted (its incarnation), so that properties can tell the groups before and after a
    deletion apart."""
    migration_policy_breached: bool = False
    """Ghost bookkeeping, not a field of Kafka's group (mixed configs): the group went
    against ``group.consumer.migration.policy`` — it admitted a classic member although
    the policy is ``disabled`` (KAFKA-20640), or it kept only classic members although the
    policy allows a downgrade (KAFKA-17317)."""
    target_assignor: str | None = None
    """Ghost bookkeeping, not a field of Kafka's group: the server assignor that computed
    the target assignment (``ConsumerGroup.computePreferredServerAssignor`` when it was
    computed); None while no server assignor computed one (a new group, a group converted
    from a classic one)."""

    def static_member_id(self, instance_id: str) -> str | None:
        """The member id holding ``instance_id`` (``ConsumerGroup.staticMemberId``): the
        index entry, when it names a member of the group (``ConsumerGroup.staticMember``
        finds no member for an entry left behind by a removed one)."""
        member_id = self.static_members.get(instance_id)
        if member_id is None or member_id not in self.members:
            return None
        return member_id


def static_member_index(members: FrozenMap[str, Member]) -> FrozenMap[str, str]:
    """The static-member index the members' instance ids say, in member-id order: what a
    coordinator loading the group's member records builds (``ConsumerGroup.updateMember``
    on replay)."""
    return FrozenMap(
        (m.instance_id, mid) for mid, m in sorted(members.items()) if m.instance_id is not None
    )


# --------------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class ConsumerGroupHeartbeatRequest:
    """ConsumerGroupHeartbeat request (KIP-848). ``None`` means the field was not sent."""

    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: frozenset[str] | None = None
    server_assignor: str | None = None
    topic_partitions: Assignment | None = None
    subscribed_topic_regex: str | None = None
    rack_id: str | None = None

    def is_full(self) -> bool:
        """A "full" request re-sends everything (KAFKA-16367): the rebalance timeout, the
        subscription — topic names or a regular expression — and the owned partitions; the
        coordinator then always returns the assignment
        (``GroupMetadataManager.consumerGroupHeartbeat``, ``isFullRequest``)."""
        return (
            self.rebalance_timeout_ms != -1
            and (self.subscribed_topic_names is not None or self.subscribed_topic_regex is not None)
            and self.topic_partitions is not None
        )


@dataclass(frozen=True, slots=True)
class ConsumerGroupHeartbeatResponse:
    """ConsumerGroupHeartbeat response (KIP-848). ``assignment`` is ``None`` when unchanged."""

    error_code: ErrorCode
    member_id: str | None
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: Assignment | None = None


@dataclass(frozen=True, slots=True)
class OffsetCommitRequest:
    """OffsetCommit request (v9+): ``generation_id_or_member_epoch`` carries the member epoch."""

    member_id: str
    generation_id_or_member_epoch: int
    topics: Assignment


@dataclass(frozen=True, slots=True)
class OffsetCommitResponse:
    """OffsetCommit response; one error for the whole request in the model."""

    error_code: ErrorCode
    topics: Assignment


Request = ConsumerGroupHeartbeatRequest | OffsetCommitRequest
Response = ConsumerGroupHeartbeatResponse | OffsetCommitResponse
Body = Request | Response | ClassicBody

HEARTBEAT = "heartbeat"
OFFSET_COMMIT = "offset_commit"


@dataclass(frozen=True, slots=True)
class Message(Record):
    """A request or response in flight between a client process and the coordinator.

    ``incarnation`` identifies the client process and ``connection`` its TCP connection
    to the coordinator: a request timeout closes the connection (Kafka's
    ``NetworkClient``), so responses on an earlier connection or incarnation are never
    read. Within a connection messages are delivered in order, never duplicated.
    """

    client: str
    incarnation: int
    connection: int
    to_coordinator: bool
    body: Body

    @property
    def api(self) -> str:
        """``heartbeat`` or ``offset_commit`` (the classic APIs: ``join``, ``sync``,
        ``classic_heartbeat``, ``leave``)."""
        kind: type = type(self.body)
        api = _APIS.get(kind)
        if api is None:
            api = _APIS[kind] = _body_api(kind)
        return api


_APIS: dict[type, str] = {}
"""``_body_api`` of each body class met: the steps of a search ask for the api of the
messages in flight over and over."""


def _body_api(kind: type) -> str:
    """The api of a body class (``Message.api``)."""
    if issubclass(kind, ConsumerGroupHeartbeatRequest | ConsumerGroupHeartbeatResponse):
        return HEARTBEAT
    if issubclass(kind, OffsetCommitRequest | OffsetCommitResponse):
        return OFFSET_COMMIT
    api = classic_api_of(kind)
    assert api is not None
    return api


# --------------------------------------------------------------------------- clients


@dataclass(frozen=True, slots=True)
class SentFields:
    """What the client last sent in a heartbeat; fields re-sent only when changed
    (``ConsumerHeartbeatRequestManager.HeartbeatState``). ``None`` in place of the record
    means the next heartbeat is full; ``topic_partitions=None`` means the owned partitions
    must be sent again (a reconciliation completed)."""

    subscribed_topic_names: frozenset[str]
    server_assignor: str | None
    topic_partitions: Assignment | None
    subscribed_topic_regex: str | None = None


@dataclass(frozen=True, slots=True)
class Client(Record):
    """A consumer process speaking the KIP-848 protocol (Java ``AbstractMembershipManager``).

    ``owned`` is what the application is consuming right now — the client view that the
    single-owner property is about. ``target`` is the latest assignment received;
    ``reconciling`` the target being applied while the revoked partitions' offsets are
    committed (``revoking``). The last fields are ghost fields (``GHOST``).
    """

    GHOST: ClassVar[frozenset[str]] = frozenset({"expired"})

    name: str
    instance_id: str | None
    incarnation: int
    member_id: str
    alive: bool
    status: ClientStatus
    member_epoch: int
    subscription: frozenset[str]
    server_assignor: str | None
    owned: Assignment = EMPTY
    target: Assignment | None = None
    reconciling: Assignment | None = None
    revoking: Assignment = EMPTY
    heartbeat_in_flight: bool = False
    commit_in_flight: bool = False
    connection: int = 0
    sent: SentFields | None = None
    leave_epoch: int = LEAVE_GROUP_MEMBER_EPOCH
    fatal_error: ErrorCode | None = None
    stalled: bool = False
    """The application hangs in its revocation callback (``onPartitionsRevoked`` never
    returns): it consumes nothing and makes no reconciliation progress, while the
    background thread keeps heartbeating (``StallRevocation``)."""
    callback: str | None = None
    """The rebalance callback the application thread runs (``Config.callback_steps``):
    ``onPartitionsRevoked``, ``onPartitionsAssigned``, ``onPartitionsLost``, or the
    revocation before a leave (``releaseAssignment``); None when it runs none."""
    lost_queued: bool = False
    """``onPartitionsLost`` waits for the callback that runs to finish (callbacks run one
    at a time on the application thread)."""
    rejoined_while_reconciling: bool = False
    """The client rejoined while a reconciliation was in progress: that reconciliation
    must not be applied (``rejoinedWhileReconciliationInProgress``)."""
    poll_expired: bool = False
    """The poll timer expired: the leave heartbeat makes the client STALE, not
    UNSUBSCRIBED (``AbstractMembershipManager.isPollTimerExpired``)."""
    rack: str | None = None
    """The client's ``client.rack``, sent as ``RackId`` when it joins."""
    regex: str | None = None
    """The regular expression the application subscribed with
    (``subscribe(SubscriptionPattern)``), sent as ``SubscribedTopicRegex``."""

    # -- ghost fields (``GHOST``): bookkeeping the Java client does not have, for the
    # properties (invariants/); the rules keep them up to date and never read them to
    # decide a step or a request.
    expired: bool = False
    """Ghost bookkeeping, not a field of the Java client: the coordinator's session or
    rebalance timer removed this live client's member (or its poll timer made it leave)
    and the client has not rejoined since, so it may still consume as a *zombie*
    (``Config.live_timers``, ``PollTimerExpires``)."""


# --------------------------------------------------------------------------- the system


@dataclass(frozen=True, slots=True)
class State(Record):
    """The whole system: coordinator group, cluster metadata, clients and the network.

    ``network`` is in send order (per-channel FIFO unless reordering is on);
    ``perturbations`` counts the perturbation actions taken so far (presets bound
    perturbations, never progress).
    """

    group: Group
    topics: FrozenMap[str, TopicMetadata]
    clients: tuple[Client, ...]
    network: tuple[Message, ...]
    perturbations: int = 0
    topic_generation: int = 0
    coordinator_loading: bool = False
    """A new coordinator is loading the group from its records after a failover
    (``CoordinatorFailover``): requests get COORDINATOR_LOAD_IN_PROGRESS and no timer fires
    until ``CoordinatorLoaded``."""

    def client(self, name: str) -> Client:
        """The client called ``name``."""
        for c in self.clients:
            if c.name == name:
                return c
        raise KeyError(name)

    def subscribed_topic_ids(self, names: frozenset[str]) -> frozenset[str]:
        """Topic ids of the subscribed names that exist in the metadata image."""
        topics = self.topics
        return frozenset(topics[n].topic_id for n in names if n in topics)


hash_once(Member, Group, Message, Client, State)
