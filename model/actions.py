"""The action alphabet. An action's class name is also the TLA+ action, the trace event
kind and the Hypothesis rule (README.md, Conventions).

All nondeterminism is a choice of action. ``PERTURBATION`` marks the actions bounded by
``Config.max_perturbations``; the others are progress and are never bounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from model.records import Message


@dataclass(frozen=True, slots=True)
class Action:
    """Base of every action."""

    PERTURBATION: ClassVar[bool] = False

    @property
    def kind(self) -> str:
        """The vocabulary name of the action."""
        return type(self).__name__


# --------------------------------------------------------------------------- progress


@dataclass(frozen=True, slots=True)
class SendHeartbeat(Action):
    """The client sends a ConsumerGroupHeartbeat (its heartbeat interval elapsed, or it has
    something to acknowledge)."""

    client: str


@dataclass(frozen=True, slots=True)
class Reconcile(Action):
    """The client applies its latest target: revoke (commit, stop consuming), then assign."""

    client: str


@dataclass(frozen=True, slots=True)
class ReleaseAssignment(Action):
    """A leaving client runs its revocation callbacks (PREPARE_LEAVING → LEAVING)."""

    client: str


@dataclass(frozen=True, slots=True)
class Rejoin(Action):
    """A fenced client, its partitions lost, rejoins with epoch 0 (FENCED → JOINING)."""

    client: str


@dataclass(frozen=True, slots=True)
class CommitOffsets(Action):
    """The client commits the offsets of what it consumes (auto-commit)."""

    client: str


@dataclass(frozen=True, slots=True)
class DeliverMessage(Action):
    """The network delivers a request to the coordinator or a response to a client."""

    message: Message


@dataclass(frozen=True, slots=True)
class RequestTimeout(Action):
    """A request's request or response was lost: the client's request times out, it
    reconnects, and retries with a full heartbeat."""

    client: str


@dataclass(frozen=True, slots=True)
class ComputeTargetAssignment(Action):
    """The coordinator computes a new target assignment (group epoch > assignment epoch)."""


@dataclass(frozen=True, slots=True)
class AssignmentIntervalElapses(Action):
    """The assignment interval passes since the last target computation finished
    (KIP-1263 "Assignment Batching"): logical time, like the session timers. Nothing is
    computed by it; the next heartbeat that needs a new target computes one (the gate is
    lazy, ``GroupMetadataManager`` target-assignment update)."""


@dataclass(frozen=True, slots=True)
class CompleteAssignorRun(Action):
    """The oldest assignor run in flight on the coordinator's executor completes and the
    coordinator installs its result (KIP-1263 "Assignment Offload")."""


# --------------------------------------------------------------------------- perturbations


@dataclass(frozen=True, slots=True)
class Subscribe(Action):
    """The application calls ``subscribe()`` (UNSUBSCRIBED → JOINING)."""

    PERTURBATION: ClassVar[bool] = True
    client: str


@dataclass(frozen=True, slots=True)
class Leave(Action):
    """The application unsubscribes or closes and leaves the group (epoch -1)."""

    PERTURBATION: ClassVar[bool] = True
    client: str


@dataclass(frozen=True, slots=True)
class TemporaryLeave(Action):
    """A static member closes and will come back (epoch -2)."""

    PERTURBATION: ClassVar[bool] = True
    client: str


@dataclass(frozen=True, slots=True)
class Crash(Action):
    """The client process dies without a word."""

    PERTURBATION: ClassVar[bool] = True
    client: str


@dataclass(frozen=True, slots=True)
class Restart(Action):
    """A new consumer instance replaces a crashed or closed one (a new process or a new
    ``KafkaConsumer``): new member id (KIP-1082), same instance id, subscribed."""

    PERTURBATION: ClassVar[bool] = True
    client: str


@dataclass(frozen=True, slots=True)
class ChangeSubscription(Action):
    """The application subscribes to another set of topics."""

    PERTURBATION: ClassVar[bool] = True
    client: str
    topics: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChangeServerAssignor(Action):
    """The client asks for another server-side assignor."""

    PERTURBATION: ClassVar[bool] = True
    client: str
    assignor: str


@dataclass(frozen=True, slots=True)
class SessionTimeout(Action):
    """The coordinator's session timer for a member expires: its client process is gone
    (crashed, fatal, or left without being heard), or — with ``live_timers`` — its
    heartbeat was lost, or — with ``slow_clients`` — it is merely slow. A timer the
    coordinator always fires eventually, so not a perturbation."""

    member_id: str


@dataclass(frozen=True, slots=True)
class RebalanceTimeout(Action):
    """The coordinator's rebalance (revocation) timer for a member expires while the member
    still has partitions pending revocation at the armed epoch: its client is gone, or —
    with ``live_timers`` — hangs in its revocation callback (``slow_clients``: any
    member)."""

    member_id: str


@dataclass(frozen=True, slots=True)
class AddPartitions(Action):
    """An administrator adds a partition to a topic."""

    PERTURBATION: ClassVar[bool] = True
    topic: str


@dataclass(frozen=True, slots=True)
class RecreateTopic(Action):
    """A topic is deleted and created again under a new topic id."""

    PERTURBATION: ClassVar[bool] = True
    topic: str


@dataclass(frozen=True, slots=True)
class CreateTopic(Action):
    """An administrator creates a topic (one of ``Config.absent_topics``) with
    ``partitions`` partitions (CreateTopics' ``NumPartitions``, KIP-848's metadata image).
    The model always says how many; a trace written before the count was recorded leaves
    it None (docs/trace-format.md, "Administrator events")."""

    PERTURBATION: ClassVar[bool] = True
    topic: str
    partitions: int | None = None


@dataclass(frozen=True, slots=True)
class DeleteTopic(Action):
    """An administrator deletes a topic: its partitions and committed offsets are gone."""

    PERTURBATION: ClassVar[bool] = True
    topic: str


@dataclass(frozen=True, slots=True)
class ExpireOffsets(Action):
    """The offset retention period (``offsets.retention.minutes``) has passed for the
    group's expirable committed offsets of a topic, and the coordinator's cleanup removes
    them (``OffsetMetadataManager.cleanupExpiredOffsets``; KIP-211). Time is logical: the
    action may happen whenever an offset is expirable."""

    PERTURBATION: ClassVar[bool] = True
    topic: str


@dataclass(frozen=True, slots=True)
class ChangePartitionRacks(Action):
    """The replicas of a topic's partitions move to brokers on other racks (a partition
    reassignment): the group's metadata hash, which includes partition racks, changes
    (``GroupMetadataManager`` metadata hash, KIP-1101)."""

    PERTURBATION: ClassVar[bool] = True
    topic: str


@dataclass(frozen=True, slots=True)
class ResolveRegularExpressions(Action):
    """The coordinator resolves its members' regular expressions against the topics again
    (``GroupMetadataManager.maybeUpdateRegularExpressions``, run on the coordinator's
    executor when a new regex appears or the metadata changed)."""


@dataclass(frozen=True, slots=True)
class LoseMessage(Action):
    """The network loses a request or a response."""

    PERTURBATION: ClassVar[bool] = True
    message: Message


@dataclass(frozen=True, slots=True)
class CompleteCallback(Action):
    """The application thread finishes the rebalance callback it runs
    (``Config.callback_steps``); the reconciliation it belongs to goes on, unless the
    client was fenced, left or rejoined meanwhile (``maybeAbortReconciliation``)."""

    client: str


@dataclass(frozen=True, slots=True)
class Poll(Action):
    """The application polls again after its poll timer expired: a STALE client rejoins
    (``AbstractMembershipManager.maybeRejoinStaleMember``)."""

    client: str


@dataclass(frozen=True, slots=True)
class PollTimerExpires(Action):
    """The application did not poll within ``max.poll.interval.ms``: the client leaves
    the group (epoch -1; -2 for a static member), then releases its partitions with
    ``onPartitionsLost`` and stays STALE until the next poll
    (``AbstractMembershipManager.transitionToSendingLeaveGroup(true)``)."""

    PERTURBATION: ClassVar[bool] = True
    client: str


@dataclass(frozen=True, slots=True)
class CoordinatorFailover(Action):
    """The group's coordinator moves to another broker (a leader change of its
    ``__consumer_offsets`` partition): every request in flight to the old one fails with
    NOT_COORDINATOR, and the new one starts loading the group from its records
    (``CoordinatorRuntime`` loading, ``GroupMetadataManager.onLoaded``)."""

    PERTURBATION: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class CoordinatorLoaded(Action):
    """The new coordinator finished replaying the group's records: the group is what the
    records say, and its session and rebalance timers restart
    (``GroupMetadataManager.onLoaded``)."""


@dataclass(frozen=True, slots=True)
class StallRevocation(Action):
    """The application hangs in ``onPartitionsRevoked``: the client never finishes the
    revocation it started, consumes nothing, and only its background thread still
    heartbeats. KIP-848 promises such a member is removed when its rebalance timeout
    expires ("Rebalance timeout")."""

    PERTURBATION: ClassVar[bool] = True
    client: str


@dataclass(frozen=True, slots=True)
class AbandonRequest(Action):
    """A request times out although it (or its response) is only delayed: the client
    reconnects and retries, and the original may still reach the coordinator — the
    way a request is duplicated or reordered over Kafka's TCP connections."""

    PERTURBATION: ClassVar[bool] = True
    client: str


# --------------------------------------------------------------------------- the classic protocol


@dataclass(frozen=True, slots=True)
class SendJoinGroup(Action):
    """A classic client (re)joins: ``onJoinPrepare`` (commit, then revoke: everything under
    EAGER, the partitions of unsubscribed topics under COOPERATIVE), then JoinGroup
    (``AbstractCoordinator.joinGroupIfNeeded``)."""

    client: str


@dataclass(frozen=True, slots=True)
class SendSyncGroup(Action):
    """A classic client that received its JoinGroup response sends SyncGroup; the leader
    first runs the selected assignor (``onLeaderElected``)."""

    client: str


@dataclass(frozen=True, slots=True)
class Bounce(Action):
    """A rolling bounce of a classic client: the process is closed (commit, revoke,
    LeaveGroup for a dynamic member) and a new one starts with the client's next
    configuration (``ClientSpec.bounces``), byte code that knows KIP-429."""

    PERTURBATION: ClassVar[bool] = True
    client: str


@dataclass(frozen=True, slots=True)
class StallAssignment(Action):
    """A classic client's application thread hangs after the JoinGroup response (the
    leader's assignor, or a client that never syncs): no SyncGroup is sent while its
    heartbeat thread keeps the session alive (KAFKA-12890's trigger)."""

    PERTURBATION: ClassVar[bool] = True
    client: str


@dataclass(frozen=True, slots=True)
class DeleteGroup(Action):
    """An administrator deletes the group (the DeleteGroups API, ``Admin.deleteConsumerGroups``;
    ``GroupMetadataManager.deleteGroups``): refused with NON_EMPTY_GROUP unless the group is
    empty (``validateDeleteGroup``), else the group and its committed offsets are gone and
    the next join creates a new group from scratch."""

    PERTURBATION: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class ChangeInstanceId(Action):
    """A STABLE client rejoins under another ``group.instance.id`` (its
    ``ClientSpec.alt_instance_id``) with the member id it holds (the case of KAFKA-20747):
    a classic member of a consumer group sends a JoinGroup carrying both at once, which
    Kafka refuses with UNKNOWN_MEMBER_ID (``throwIfStaticMemberIsUnknown``), so it rejoins
    without its member id; a consumer-protocol client gives up its partitions and joins
    at epoch 0 with both. The Java consumer reads ``group.instance.id`` once, so this
    stands for a client that reconfigures it without leaving the group."""

    PERTURBATION: ClassVar[bool] = True
    client: str


ACTION_TYPES: tuple[type[Action], ...] = (
    SendHeartbeat,
    Reconcile,
    ReleaseAssignment,
    Rejoin,
    CommitOffsets,
    DeliverMessage,
    RequestTimeout,
    ComputeTargetAssignment,
    Subscribe,
    Leave,
    TemporaryLeave,
    Crash,
    Restart,
    ChangeSubscription,
    ChangeServerAssignor,
    SessionTimeout,
    RebalanceTimeout,
    AddPartitions,
    RecreateTopic,
    LoseMessage,
    AbandonRequest,
    StallRevocation,
    CompleteCallback,
    Poll,
    PollTimerExpires,
    CoordinatorFailover,
    CoordinatorLoaded,
    CreateTopic,
    DeleteTopic,
    ResolveRegularExpressions,
    ChangePartitionRacks,
    ExpireOffsets,
    SendJoinGroup,
    SendSyncGroup,
    Bounce,
    StallAssignment,
    AssignmentIntervalElapses,
    CompleteAssignorRun,
    DeleteGroup,
    ChangeInstanceId,
)
"""Every action class, in the vocabulary's canonical order."""

ACTIONS_BY_KIND: dict[str, type[Action]] = {t.__name__: t for t in ACTION_TYPES}
