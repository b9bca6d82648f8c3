"""The injected rules: the record of step functions the model runs.

A mutant is this record with one function replaced; the model itself carries no bug
switches. Every coordinator and client rule that a historical bug touched is a field,
typed with the exact signature of the default so a mutant cannot change the shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias

from model.classic import assignors as classic_assignors
from model.classic import client as classic_client
from model.classic import coordinator as classic_coordinator
from model.consumer import client, coordinator, reconcile, target
from model.migration import coordinator as migration_coordinator
from model.records import Record, hash_once

if TYPE_CHECKING:
    from model.classic.messages import HeartbeatResponse, SyncGroupResponse
    from model.config import Config
    from model.ids import Assignment, FrozenMap, TopicPartition
    from model.records import (
        Body,
        Client,
        ConsumerGroupHeartbeatRequest,
        ConsumerGroupHeartbeatResponse,
        Group,
        Member,
        OffsetCommitRequest,
        TopicMetadata,
    )
    from model.status import ErrorCode

    PartitionEpochs: TypeAlias = FrozenMap[TopicPartition, int]
    HeartbeatResult: TypeAlias = tuple[Group, ConsumerGroupHeartbeatResponse]
    from model.classic.messages import JoinGroupRequest, JoinGroupResponseMember
    from model.classic.records import ClassicClient, ClassicGroup, ReplyTo

    ClassicResult: TypeAlias = classic_coordinator.Result
    Resolved: TypeAlias = tuple[Group, Member | None, Member]


class ReconcileRule(Protocol):
    """The signature of ``model.consumer.reconcile.reconcile`` (``CurrentAssignmentBuilder.build``):
    the member, then its inputs by keyword, named after the builder's ``with…`` calls."""

    def __call__(
        self,
        member: Member,
        /,
        *,
        target_epoch: int,
        target: Assignment,
        partition_epochs: Mapping[TopicPartition, int],
        owned: Assignment | None,
        subscription_changed: bool,
        subscribed_topic_ids: frozenset[str],
    ) -> Member: ...


@dataclass(frozen=True, slots=True)
class Rules(Record):
    """Step functions of the coordinator and the client. Field = the Kafka rule it mirrors."""

    # GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid
    validate_heartbeat_request: Callable[
        [ConsumerGroupHeartbeatRequest, Config], ErrorCode | None
    ] = coordinator.validate_heartbeat_request
    # GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid
    check_member_epoch: Callable[
        [Member, ConsumerGroupHeartbeatRequest, Config], ErrorCode | None
    ] = coordinator.check_member_epoch
    # GroupMetadataManager.consumerGroupHeartbeat: group-epoch bump decision
    # (hasMemberSubscriptionChanged, ConsumerGroup.computePreferredServerAssignor)
    should_bump_group_epoch: Callable[[Group, Member | None, Member, Config], bool] = (
        coordinator.should_bump_group_epoch
    )
    # TargetAssignmentBuilder
    compute_target_assignment: Callable[[Group, Mapping[str, TopicMetadata], str], Group] = (
        target.compute_target_assignment
    )
    # KIP-1263 Assignment Offload: the run handed to the executor (at most one in flight)
    start_assignor_run: Callable[
        [
            Group,
            Mapping[str, TopicMetadata],
            str,
            Callable[[Group, Mapping[str, TopicMetadata], str], Group],
        ],
        Group,
    ] = target.start_assignor_run
    # KIP-1263 Assignment Offload: installing a completed run (TargetAssignmentBuilder with
    # removals and static replacements re-applied, KAFKA-20292)
    install_assignor_run: Callable[[Group, Mapping[str, TopicMetadata], int, bool], Group] = (
        target.install_assignor_run
    )
    # CurrentAssignmentBuilder.build
    reconcile: ReconcileRule = reconcile.reconcile
    # ConsumerGroup.maybeUpdatePartitionEpoch
    update_partition_epochs: Callable[
        [PartitionEpochs, Member | None, Member | None], PartitionEpochs
    ] = coordinator.update_partition_epochs
    # ConsumerGroup.updateMember
    write_member: Callable[[Group, Member | None, Member, Config], Group] = coordinator.write_member
    # GroupMetadataManager.consumerGroupFenceMember / ConsumerGroup.removeMember
    remove_member: Callable[[Group, Member, Config], Group] = coordinator.remove_member
    # GroupMetadataManager.handleRegularExpressionsResult
    resolve_regular_expressions: Callable[[Group, Mapping[str, TopicMetadata], Config], Group] = (
        coordinator.resolve_regular_expressions
    )
    # GroupMetadataManager.onLoaded (the group rebuilt from its records after a failover)
    rebuild_group: Callable[[Group, Config], Group] = coordinator.rebuild_group
    # GroupMetadataManager.consumerGroupLeave
    handle_leave: Callable[[Group, ConsumerGroupHeartbeatRequest, Config], HeartbeatResult] = (
        coordinator.handle_leave
    )
    # GroupMetadataManager.getOrMaybeSubscribeStaticConsumerGroupMember: static member
    # replacement (replaceMember)
    replace_static_member: Callable[[Group, Member, str, Config], Resolved] = (
        coordinator.replace_static_member
    )
    # GroupMetadataManager.scheduleConsumerGroupSessionTimeout /
    # scheduleConsumerGroupRebalanceTimeout: session and rebalance timers
    session_timeout: Callable[[Group, str, Config], Group] = coordinator.session_timeout
    rebalance_timeout: Callable[[Group, str, Config], Group] = coordinator.rebalance_timeout
    # metadata change detection: subscription metadata hash in
    # GroupMetadataManager.consumerGroupHeartbeat (KIP-1101)
    on_metadata_change: Callable[[Group, str], Group] = coordinator.on_metadata_change
    # ConsumerGroup.validateOffsetCommit
    validate_offset_commit: Callable[[Group, OffsetCommitRequest, Config], ErrorCode] = (
        coordinator.validate_offset_commit
    )
    # Java client: heartbeat response handling, reconciliation, heartbeat building
    client_on_heartbeat_response: Callable[
        [Client, ConsumerGroupHeartbeatResponse, Config], Client
    ] = client.on_heartbeat_response
    client_reconcile: Callable[[Client, Config], tuple[Client, OffsetCommitRequest | None]] = (
        client.reconcile
    )
    client_build_heartbeat: Callable[
        [Client, Config], tuple[Client, ConsumerGroupHeartbeatRequest]
    ] = client.build_heartbeat
    # AbstractMembershipManager: the end of a rebalance callback (revokeAndAssign,
    # maybeAbortReconciliation, transitionToFenced, leaveGroup)
    client_complete_callback: Callable[
        [Client, Config], tuple[Client, OffsetCommitRequest | None]
    ] = client.complete_callback

    # ---- the classic protocol (model/classic/)
    # GroupMetadataManager.completeClassicGroupJoin (ClassicGroup.initNextGeneration)
    classic_complete_join: Callable[[ClassicGroup, Config], ClassicResult] = (
        classic_coordinator.complete_join
    )
    # GroupMetadataManager.classicGroupJoinNewStaticMember /
    # updateStaticMemberThenRebalanceOrCompleteJoin (KAFKA-8500, KAFKA-9801, KAFKA-10284)
    classic_join_static_member: Callable[
        [ClassicGroup, JoinGroupRequest, ReplyTo, Config], ClassicResult
    ] = classic_coordinator.join_static_member
    # ClassicGroup.setAndPropagateAssignment (the leader's SyncGroup)
    classic_install_assignment: Callable[
        [ClassicGroup, FrozenMap[str, Assignment], Config], ClassicResult
    ] = classic_coordinator.install_assignment
    # GroupMetadataManager classic session / join / pending-sync timers (KAFKA-12890)
    classic_session_timeout: Callable[[ClassicGroup, str, Config], ClassicResult] = (
        classic_coordinator.session_timeout
    )
    classic_rebalance_timeout: Callable[[ClassicGroup, str, Config], ClassicResult] = (
        classic_coordinator.rebalance_timeout
    )
    # ClassicGroup.validateOffsetCommit
    classic_validate_offset_commit: Callable[
        [ClassicGroup, OffsetCommitRequest, Config], ErrorCode
    ] = classic_coordinator.validate_offset_commit
    # OffsetMetadataManager.cleanupExpiredOffsets with ConsumerGroup's and ClassicGroup's
    # offset expiration conditions (KIP-211; KAFKA-4682, KAFKA-13636)
    expirable_offsets: Callable[[Group, Mapping[str, TopicMetadata]], frozenset[TopicPartition]] = (
        coordinator.expirable_offsets
    )
    classic_expirable_offsets: Callable[
        [ClassicGroup, Mapping[str, TopicMetadata]], frozenset[TopicPartition]
    ] = classic_coordinator.classic_expirable_offsets
    # AbstractStickyAssignor: KIP-341 arbitration of ownership claims (KAFKA-7026, KAFKA-12984,
    # KAFKA-14639)
    classic_arbitrate_claims: classic_assignors.ClaimsRule = classic_assignors.arbitrate_claims
    # ConsumerCoordinator.onLeaderElected (with validateCooperativeAssignment, KAFKA-13406)
    classic_leader_assignment: Callable[
        [ClassicClient, tuple[JoinGroupResponseMember, ...], Mapping[str, TopicMetadata], Config],
        FrozenMap[str, Assignment] | None,
    ] = classic_client.leader_assignment
    # ConsumerCoordinator.onJoinPrepare / AbstractCoordinator response handlers
    classic_join_group: Callable[
        [ClassicClient, Config], tuple[ClassicClient, tuple[Body, ...]]
    ] = classic_client.join_group
    classic_on_sync_response: Callable[
        [ClassicClient, SyncGroupResponse, Config], tuple[ClassicClient, OffsetCommitRequest | None]
    ] = classic_client.on_sync_response
    classic_on_heartbeat_response: Callable[[ClassicClient, HeartbeatResponse], ClassicClient] = (
        classic_client.on_heartbeat_response
    )

    # ConsumerGroup.validateDeleteGroup / ClassicGroup.validateDeleteGroup (DeleteGroups)
    validate_delete_group: Callable[[Group], ErrorCode] = coordinator.validate_delete_group
    classic_validate_delete_group: Callable[[ClassicGroup], ErrorCode] = (
        classic_coordinator.classic_validate_delete_group
    )
    # ---- mixed groups (model/migration/)
    # GroupMetadataManager.classicGroupJoinToConsumerGroup: the migration policy check
    # (KAFKA-20640)
    mixed_admits_classic_join: Callable[[Config], bool] = migration_coordinator.admits_classic_join
    # GroupMetadataManager.validateOnlineDowngradeWithFencedMembers
    mixed_validate_online_downgrade: Callable[[Group, Group, Config], bool] = (
        migration_coordinator.validate_online_downgrade
    )
    # GroupMetadataManager.convertToClassicGroup: a rebalance after a downgrade by static
    # replacement (KAFKA-19546, KAFKA-20273)
    mixed_downgrade_rebalances: Callable[[Group, Member, Member], bool] = (
        migration_coordinator.downgrade_rebalances
    )
    # GroupMetadataManager.getOrMaybeSubscribeStaticConsumerGroupMember: whether the holder
    # of an instance id may be replaced — a classic holder always (KAFKA-17228)
    static_holder_released: Callable[[Member], bool] = coordinator.static_holder_released
    # ConsumerGroup.updateMember → updateStaticMember: the static-member index (KAFKA-20747)
    update_static_members: Callable[
        [FrozenMap[str, str], Member | None, Member], FrozenMap[str, str]
    ] = coordinator.update_static_members


hash_once(Rules)

DEFAULT_RULES = Rules()
