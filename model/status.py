"""Status enums and protocol error codes, named as Apache Kafka names them.

"Status" names an enum, "state" a record (README.md, Conventions). Error codes carry Kafka's numeric
values (``org.apache.kafka.common.protocol.Errors``) so traces can use either form.
"""

from __future__ import annotations

from enum import Enum, IntEnum


class MemberState(Enum):
    """Coordinator-side reconciliation state of a member (Kafka ``modern.MemberState``)."""

    STABLE = "STABLE"
    UNREVOKED_PARTITIONS = "UNREVOKED_PARTITIONS"
    UNRELEASED_PARTITIONS = "UNRELEASED_PARTITIONS"


class GroupStatus(Enum):
    """Consumer group state (KIP-848 "Group States"; ``ConsumerGroup.ConsumerGroupState``)."""

    EMPTY = "EMPTY"
    ASSIGNING = "ASSIGNING"
    RECONCILING = "RECONCILING"
    STABLE = "STABLE"
    DEAD = "DEAD"


class ClientStatus(Enum):
    """KIP-848 client membership state (Java client ``consumer.internals.MemberState``)."""

    UNSUBSCRIBED = "UNSUBSCRIBED"
    JOINING = "JOINING"
    RECONCILING = "RECONCILING"
    ACKNOWLEDGING = "ACKNOWLEDGING"
    STABLE = "STABLE"
    FENCED = "FENCED"
    PREPARE_LEAVING = "PREPARE_LEAVING"
    LEAVING = "LEAVING"
    FATAL = "FATAL"
    STALE = "STALE"
    """Left the group because the application did not poll within max.poll.interval.ms;
    rejoins on the next poll (``AbstractMembershipManager.transitionToStale``)."""


class ErrorCode(IntEnum):
    """Protocol errors used by ConsumerGroupHeartbeat and OffsetCommit (Kafka ``Errors``)."""

    NONE = 0
    UNKNOWN_SERVER_ERROR = -1
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    UNKNOWN_MEMBER_ID = 25
    REBALANCE_IN_PROGRESS = 27
    INVALID_REQUEST = 42
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    MEMBER_ID_REQUIRED = 79
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    FENCED_MEMBER_EPOCH = 110
    UNRELEASED_INSTANCE_ID = 111
    UNSUPPORTED_ASSIGNOR = 112
    STALE_MEMBER_EPOCH = 113


FENCING_ERRORS = frozenset({ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID})
"""Errors after which the Java client releases everything and rejoins with epoch 0
(``AbstractMembershipManager.transitionToFenced``)."""

FATAL_ERRORS = frozenset(
    {
        ErrorCode.UNKNOWN_SERVER_ERROR,
        ErrorCode.INVALID_REQUEST,
        ErrorCode.GROUP_ID_NOT_FOUND,
        ErrorCode.GROUP_MAX_SIZE_REACHED,
        ErrorCode.FENCED_INSTANCE_ID,
        ErrorCode.UNRELEASED_INSTANCE_ID,
        ErrorCode.UNSUPPORTED_ASSIGNOR,
    }
)
"""Errors the Java client treats as fatal for the membership
(``AbstractHeartbeatRequestManager.onErrorResponse`` → ``handleFatalFailure``)."""


class ClassicGroupStatus(Enum):
    """Classic group state (``ClassicGroupState``): a rebalance goes PREPARING_REBALANCE
    (JoinGroup phase) → COMPLETING_REBALANCE (SyncGroup phase) → STABLE."""

    EMPTY = "EMPTY"
    PREPARING_REBALANCE = "PREPARING_REBALANCE"
    COMPLETING_REBALANCE = "COMPLETING_REBALANCE"
    STABLE = "STABLE"
    DEAD = "DEAD"


class ClassicClientStatus(Enum):
    """A classic consumer's membership state (``AbstractCoordinator.MemberState``), plus
    UNSUBSCRIBED before ``subscribe()`` and after ``close()``."""

    UNSUBSCRIBED = "UNSUBSCRIBED"
    UNJOINED = "UNJOINED"
    PREPARING_REBALANCE = "PREPARING_REBALANCE"
    """A JoinGroup request is out."""
    COMPLETING_REBALANCE = "COMPLETING_REBALANCE"
    """The JoinGroup response arrived; the SyncGroup request is due or out."""
    STABLE = "STABLE"


class RebalanceProtocol(Enum):
    """``ConsumerPartitionAssignor.RebalanceProtocol`` (KIP-429)."""

    EAGER = "EAGER"
    COOPERATIVE = "COOPERATIVE"


class ConfigError(ValueError):
    """An impossible or inconsistent configuration: the one exception family of ``model``.

    Raised early, with a message that says what to do instead.
    """
