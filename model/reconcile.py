"""Member reconciliation: revoke first, then assign (``CurrentAssignmentBuilder``).

KIP-848 "Member Epoch - Reconciliation of the group" with the refinements of Apache
Kafka's ``modern.consumer.CurrentAssignmentBuilder`` (docs/kafka-rules.md, Reconciliation):

* a member in ``UNREVOKED_PARTITIONS`` keeps its epoch until it acknowledges the
  revocation, then jumps to the target epoch (KAFKA-19974; KIP-848 text: "transitions to
  the target epoch");
* a partition is handed out only when no other member holds it, according to the group's
  partition epochs; the member's own partitions pending revocation count as free
  (KAFKA-19449);
* the target is filtered by the member's live subscription (KAFKA-19431).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from model.ids import EMPTY, Assignment, TopicPartition
from model.records import Member, replace
from model.status import MemberState


def owns_any(owned: Assignment | None, partitions: Assignment) -> bool:
    """Whether the member may still own any of ``partitions``.

    A member that did not report its owned partitions (``TopicPartitions`` null) is
    assumed to hold everything (``CurrentAssignmentBuilder.ownsRevokedPartitions``).
    """
    if owned is None:
        return bool(partitions)
    return not owned.isdisjoint(partitions)


def with_epoch(member: Member, epoch: int, **changes: Any) -> Member:
    """Write a new member epoch; the previous epoch always becomes the old one
    (``ConsumerGroupMember.Builder.updateMemberEpoch``)."""
    return replace(member, member_epoch=epoch, previous_member_epoch=member.member_epoch, **changes)


def compute_next_assignment(
    member: Member,
    *,
    target_epoch: int,
    target: Assignment,
    partition_epochs: Mapping[TopicPartition, int],
    owned: Assignment | None,
    subscribed_topic_ids: frozenset[str],
) -> Member:
    """Move a member towards its target (``CurrentAssignmentBuilder.computeNextAssignment``).

    keep = assigned ∩ target; revoke = assigned − keep; add = target − keep, minus the
    partitions another member still holds. Rules in order: revoke first (the epoch stays),
    else assign what is free and jump to the target epoch (``UNRELEASED_PARTITIONS`` when
    something is still held elsewhere), else settle at the target epoch.
    """
    live_target = frozenset(tp for tp in target if tp[0] in subscribed_topic_ids)
    assigned = member.assigned_partitions
    keep = assigned & live_target
    revoke = assigned - keep
    own_pending = member.partitions_pending_revocation
    add_list: list[TopicPartition] = []
    unreleased = False
    for tp in live_target - keep:
        if tp in partition_epochs and tp not in own_pending:
            unreleased = True
        else:
            add_list.append(tp)

    if revoke and owns_any(owned, revoke):
        return with_epoch(
            member,
            member.member_epoch,
            state=MemberState.UNREVOKED_PARTITIONS,
            assigned_partitions=keep,
            partitions_pending_revocation=revoke,
        )
    if add_list:
        return with_epoch(
            member,
            target_epoch,
            state=MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE,
            assigned_partitions=keep | frozenset(add_list),
            partitions_pending_revocation=EMPTY,
        )
    return with_epoch(
        member,
        target_epoch,
        state=MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE,
        assigned_partitions=keep,
        partitions_pending_revocation=EMPTY,
    )


def shrink_to_subscription(
    member: Member, owned: Assignment | None, subscribed_topic_ids: frozenset[str]
) -> Member:
    """Fast path when only the subscription changed: revoke unsubscribed topics now
    (``CurrentAssignmentBuilder.updateCurrentAssignment``, KAFKA-19431)."""
    moved = frozenset(tp for tp in member.assigned_partitions if tp[0] not in subscribed_topic_ids)
    if not moved:
        return member
    pending = member.partitions_pending_revocation | moved
    if owns_any(owned, pending):
        return with_epoch(
            member,
            member.member_epoch,
            state=MemberState.UNREVOKED_PARTITIONS,
            assigned_partitions=member.assigned_partitions - moved,
            partitions_pending_revocation=pending,
        )
    return with_epoch(
        member, member.member_epoch, assigned_partitions=member.assigned_partitions - moved
    )


def reconcile(
    member: Member,
    *,
    target_epoch: int,
    target: Assignment,
    partition_epochs: Mapping[TopicPartition, int],
    owned: Assignment | None,
    subscription_changed: bool,
    subscribed_topic_ids: frozenset[str],
) -> Member:
    """One reconciliation step for one heartbeat (``CurrentAssignmentBuilder.build``).

    ``member`` is what the builder is constructed with; every other input is keyword-only
    and named after the builder call that supplies it in Kafka:
    ``withTargetAssignment(target_epoch, target)``,
    ``withCurrentPartitionEpoch(partition_epochs)`` (a partition absent from the map is
    free), ``withOwnedTopicPartitions(owned)`` (``None``: the request did not report
    them), and the subscription inputs added with KAFKA-19431 (``subscription_changed``
    and the member's ``subscribed_topic_ids``).

    Keyword-only parameters rather than an input record: a call site reads like Kafka's
    ``with…`` chain at no cost on the hot path (a record would be built on every
    heartbeat the explorers replay), and ``model.rules.ReconcileRule`` types the exact
    signature a mutant must keep.

    Returns the same object when nothing changes.
    """
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return compute_next_assignment(
                member,
                target_epoch=target_epoch,
                target=target,
                partition_epochs=partition_epochs,
                owned=owned,
                subscribed_topic_ids=subscribed_topic_ids,
            )
        if subscription_changed:
            return shrink_to_subscription(member, owned, subscribed_topic_ids)
        return member
    if state is MemberState.UNREVOKED_PARTITIONS:
        if owns_any(owned, member.partitions_pending_revocation):
            if subscription_changed:
                return shrink_to_subscription(member, owned, subscribed_topic_ids)
            return member
        return compute_next_assignment(
            member,
            target_epoch=target_epoch,
            target=target,
            partition_epochs=partition_epochs,
            owned=owned,
            subscribed_topic_ids=subscribed_topic_ids,
        )
    # UNRELEASED_PARTITIONS: try again to collect partitions released meanwhile.
    return compute_next_assignment(
        member,
        target_epoch=target_epoch,
        target=target,
        partition_epochs=partition_epochs,
        owned=owned,
        subscribed_topic_ids=subscribed_topic_ids,
    )
