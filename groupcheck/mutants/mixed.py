"""The mixed-group mutants (KIP-848 "Upgrade/Downgrade": a consumer group with classic
members, ``model.migration``). Each is declared at its function with ``@mutant(...)``
(``groupcheck.mutants.registry``)."""

from __future__ import annotations

from typing import Any

from groupcheck.mutants.registry import Registry
from model.consumer import coordinator as co
from model.ids import FrozenMap
from model.migration import coordinator as mco
from model.presets import (
    MIGRATION_DISABLED,
    MIXED_INSTANCE_RENAME,
    MIXED_STATIC,
    MIXED_STATIC_ASSIGNOR,
    MIXED_STATIC_RESUBSCRIBE,
)
from model.records import LEAVE_GROUP_STATIC_MEMBER_EPOCH, Group, Member

REGISTRY = Registry()
mutant = REGISTRY.mutant


@mutant(
    name="mixed-admits-when-disabled",
    summary="a consumer group admits a classic member under the migration policy 'disabled'",
    bug="KAFKA-20640",
    field="mixed_admits_classic_join",
    config=MIGRATION_DISABLED,
    killed_by="MigrationPolicyHonoured",
    bmc_depth=3,
)
def mixed_admits_when_disabled(config: Any) -> bool:
    """KAFKA-20640: a classic JoinGroup to a consumer group is admitted whatever the
    migration policy, ``disabled`` included."""
    return True


@mutant(
    name="no-downgrade-on-replacement",
    summary="the last consumer-protocol member replaced by a classic static member: no downgrade",
    bug="KAFKA-17317",
    field="mixed_validate_online_downgrade",
    config=MIXED_STATIC,
    killed_by="MigrationPolicyHonoured",
    bmc_depth=3,
)
def no_downgrade_on_replacement(before: Group, after: Group, config: Any) -> bool:
    """KAFKA-17317: the downgrade check runs when a member is fenced, not when a classic
    static member replaces the last consumer-protocol member (its instance id stays)."""
    replaced = any(
        m.instance_id is not None and after.static_member_id(m.instance_id) is not None
        for mid, m in before.members.items()
        if mid not in after.members
    )
    return not replaced and mco.validate_online_downgrade(before, after, config)


@mutant(
    name="downgrade-keeps-old-assignment",
    summary="a downgrade by static replacement never rebalances, whatever the member subscribes",
    bug="KAFKA-19546",
    field="mixed_downgrade_rebalances",
    config=MIXED_STATIC_RESUBSCRIBE,
    killed_by="StableAssignmentSubscribed",
    bmc_depth=3,
)
def downgrade_keeps_old_assignment(group: Group, replaced: Member, joining: Member) -> bool:
    """KAFKA-19546: the classic group a static replacement downgrades to keeps the replaced
    member's assignment for the joining one, without a rebalance, even when the joining
    member subscribes to other topics."""
    return False


@mutant(
    name="classic-holder-unreleased",
    summary="a consumer-protocol static join is refused while a classic member holds its instance",
    bug="KAFKA-17228",
    field="static_holder_released",
    config=MIXED_STATIC,
    killed_by="GroupUpgrades",
)
def classic_holder_unreleased(holder: Member) -> bool:
    """KAFKA-17228: a static join may replace the holder of its instance id only after the
    holder left with -2 — which a classic member never does, so a consumer-protocol process
    of a classic member's instance is refused with UNRELEASED_INSTANCE_ID."""
    return holder.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH


@mutant(
    name="no-bump-on-assignor-change",
    summary="a change of the group's preferred server assignor does not bump the group epoch",
    bug="KAFKA-20434",
    field="should_bump_group_epoch",
    config=MIXED_STATIC_ASSIGNOR,
    killed_by="TargetByPreferredAssignor",
    bmc_depth=3,
)
def no_bump_on_assignor_change(group: Group, old: Member | None, new: Member, config: Any) -> bool:
    """KAFKA-20434: only a change of subscribed topic names bumps the group epoch; a member
    update that changes the group's preferred server assignor — a member switching
    assignors, or a static member replaced by one of the other protocol, which asks for
    another or none — leaves the old assignor's target in force."""
    old_names = co.subscribed_topics(old, group) if old is not None else frozenset()
    return co.subscribed_topics(new, group) != old_names


@mutant(
    name="stale-static-mapping",
    summary="a member renamed to another instance id keeps its old instance id's index entry",
    bug="KAFKA-20747",
    field="update_static_members",
    config=MIXED_INSTANCE_RENAME,
    killed_by="StaticIndexConsistent",
    bmc_depth=2,
)
def stale_static_mapping(
    static_members: FrozenMap[str, str], old: Member | None, new: Member
) -> FrozenMap[str, str]:
    """KAFKA-20747: ``ConsumerGroup.updateMember`` maps the member's new instance id to its
    member id but leaves the entry of the instance id it held before: a later join with
    that instance id finds the renamed member."""
    if new.instance_id is None or static_members.get(new.instance_id) == new.member_id:
        return static_members
    return static_members.set(new.instance_id, new.member_id)
