"""The injected rules: the record of step functions the model runs (design.md).

A mutant is this record with one function replaced; the model itself carries no bug
switches. Every coordinator and client rule that a historical bug touched is a field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from model import client, coordinator, reconcile, target

if TYPE_CHECKING:
    from model.ids import FrozenMap, TopicPartition
    from model.records import Group, Member, TopicMetadata


@dataclass(frozen=True, slots=True)
class Rules:
    """Step functions of the coordinator and the client. Field = the Kafka rule it mirrors."""

    # GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid
    validate_heartbeat_request: Callable[..., Any] = coordinator.validate_heartbeat_request
    # GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid
    check_member_epoch: Callable[..., Any] = coordinator.check_member_epoch
    # GroupMetadataManager: group-epoch bump decision (§4.4)
    should_bump_group_epoch: Callable[..., bool] = coordinator.should_bump_group_epoch
    # TargetAssignmentBuilder
    compute_target_assignment: Callable[["Group", "Mapping[str, TopicMetadata]", str], "Group"] = (
        target.compute_target_assignment
    )
    # CurrentAssignmentBuilder.build
    reconcile: Callable[..., "Member"] = reconcile.reconcile
    # ConsumerGroup.maybeUpdatePartitionEpoch
    update_partition_epochs: Callable[
        ["FrozenMap[TopicPartition, int]", "Member | None", "Member | None"],
        "FrozenMap[TopicPartition, int]",
    ] = coordinator.update_partition_epochs
    # ConsumerGroup.updateMember
    write_member: Callable[..., "Group"] = coordinator.write_member
    # GroupMetadataManager.fenceMember / ConsumerGroup.removeMember
    remove_member: Callable[..., "Group"] = coordinator.remove_member
    # GroupMetadataManager.consumerGroupLeave
    handle_leave: Callable[..., Any] = coordinator.handle_leave
    # static member replacement (§4.3 step 4)
    replace_static_member: Callable[..., Any] = coordinator.replace_static_member
    # session and rebalance timers (§7)
    session_timeout: Callable[..., "Group"] = coordinator.session_timeout
    rebalance_timeout: Callable[..., "Group"] = coordinator.rebalance_timeout
    # metadata change detection (§4.4)
    on_metadata_change: Callable[["Group", str], "Group"] = coordinator.on_metadata_change
    # ConsumerGroup.validateOffsetCommit
    validate_offset_commit: Callable[..., Any] = coordinator.validate_offset_commit
    # Java client: heartbeat response handling and reconciliation
    client_on_heartbeat_response: Callable[..., Any] = client.on_heartbeat_response
    client_reconcile: Callable[..., Any] = client.reconcile
    client_build_heartbeat: Callable[..., Any] = client.build_heartbeat


DEFAULT_RULES = Rules()

