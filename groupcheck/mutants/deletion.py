"""The group-deletion mutants (``DeleteGroups``: ``ConsumerGroup.validateDeleteGroup``,
``ClassicGroup.validateDeleteGroup``, and an offloaded run completing after the deletion).
Each is declared at its function with ``@mutant(...)`` (``groupcheck.mutants.registry``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from groupcheck.mutants.registry import Registry
from model.classic import coordinator as clco
from model.classic.records import ClassicGroup
from model.consumer import target as tg
from model.presets import CLASSIC_GROUP_DELETION, GROUP_DELETION, OFFLOAD_DELETION
from model.records import Group, TopicMetadata
from model.status import ErrorCode

REGISTRY = Registry()
mutant = REGISTRY.mutant


@mutant(
    name="delete-non-empty-group",
    summary="DeleteGroups deletes a consumer group that still has members",
    bug="ConsumerGroup.validateDeleteGroup (NON_EMPTY_GROUP) dropped",
    field="validate_delete_group",
    config=GROUP_DELETION,
    killed_by="GroupDeletedOnlyWhenEmpty",
    bmc_depth=2,
)
def delete_non_empty_group(group: Group) -> ErrorCode:
    """DeleteGroups is not refused when the group has members (``validateDeleteGroup``
    without its NON_EMPTY_GROUP check)."""
    return ErrorCode.GROUP_ID_NOT_FOUND if group.deleted else ErrorCode.NONE


@mutant(
    name="classic-delete-non-empty-group",
    summary="DeleteGroups deletes a classic group that is not Empty",
    bug="ClassicGroup.validateDeleteGroup (NON_EMPTY_GROUP) dropped",
    field="classic_validate_delete_group",
    config=CLASSIC_GROUP_DELETION,
    killed_by="NoLiveOffsetExpires",
    bmc_depth=1,
)
def classic_delete_non_empty_group(group: ClassicGroup) -> ErrorCode:
    """A classic group is deleted in any state (``ClassicGroup.validateDeleteGroup`` without
    its NON_EMPTY_GROUP check)."""
    error = clco.classic_validate_delete_group(group)
    return ErrorCode.NONE if error is ErrorCode.NON_EMPTY_GROUP else error


@mutant(
    name="install-run-after-deletion",
    summary="an offloaded run completing after its group was deleted is installed in the new group",
    bug="KIP-1263 Assignment Offload (deleted groups have their assignments discarded)",
    field="install_assignor_run",
    config=OFFLOAD_DELETION,
    killed_by="EpochOrder.AssignmentEpoch",
    bmc_depth=4,
)
def install_run_after_deletion(
    group: Group, topics: Mapping[str, TopicMetadata], interval_ms: int, discard_stale: bool
) -> Group:
    """An offloaded assignor run that completes after its group was deleted is installed
    into the group created again under the same id."""
    if not group.assignor_runs:
        return tg.install_assignor_run(group, topics, interval_ms, discard_stale)
    run = replace(group.assignor_runs[0], group_deleted=False)
    revived = replace(group, assignor_runs=(run, *group.assignor_runs[1:]))
    return tg.install_assignor_run(revived, topics, interval_ms, discard_stale)
