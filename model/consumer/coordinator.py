"""The group coordinator: ConsumerGroupHeartbeat, leave, fencing, timers, OffsetCommit.

Mirrors ``GroupMetadataManager`` (heartbeat pipeline, leave, static membership, timers),
``GroupCoordinatorService`` (request validation) and ``ConsumerGroup`` (partition epochs,
offset-commit validation) of Apache Kafka's group coordinator (docs/kafka-rules.md).
Every function is pure: it takes the group and returns a new one with the response.
The sub-rules are called through ``config.rules`` so that a mutant can replace one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from model.actions import ExpireOffsets
from model.consumer.target import (
    assignment_interval_open,
    member_topics,
    preferred_server_assignor,
    record_assignment_time,
)
from model.ids import EMPTY, Assignment, FrozenMap, TopicPartition
from model.records import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    NO_RESOLVED_REGEXES,
    CommittedOffset,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Group,
    Holder,
    Member,
    OffsetCommitRequest,
    OffsetCommitResponse,
    TopicMetadata,
    new_member,
    replace,
    static_member_index,
)
from model.sets import FROZENSETS, AnyOps, NamedKernel
from model.status import ErrorCode, GroupStatus, MemberState

OffsetOwner = TypeVar("OffsetOwner", "Group", "ClassicGroup")
"""A group that stores committed offsets: a consumer group or a classic group."""

if TYPE_CHECKING:
    from model.classic.records import ClassicGroup
    from model.config import Config
    from model.rules import Rules

HeartbeatResult = tuple[Group, ConsumerGroupHeartbeatResponse]


class PartitionEpochConflict(Exception):
    """The partition-epoch bookkeeping refused an update (Kafka throws
    ``IllegalStateException`` in ``ConsumerGroup.addPartitionEpochs``; the write fails)."""


# --------------------------------------------------------------------------- group status


def group_status(group: Group) -> GroupStatus:
    """EMPTY / ASSIGNING / RECONCILING / STABLE (``ConsumerGroup.maybeUpdateGroupState``)."""
    if not group.members:
        return GroupStatus.EMPTY
    if group.group_epoch > group.assignment_epoch:
        return GroupStatus.ASSIGNING
    for m in group.members.values():
        if not (m.state is MemberState.STABLE and m.member_epoch == group.assignment_epoch):
            return GroupStatus.RECONCILING
    return GroupStatus.STABLE


# --------------------------------------------------------------------------- bookkeeping


def update_partition_epochs(
    partition_epochs: FrozenMap[TopicPartition, int], old: Member | None, new: Member | None
) -> FrozenMap[TopicPartition, int]:
    """Replace ``old``'s entries by ``new``'s (``ConsumerGroup.maybeUpdatePartitionEpoch``).

    Removing an entry requires it to carry the old member epoch; adding requires the
    partition to be free. Either violation raises :class:`PartitionEpochConflict` —
    the hardening that turned KAFKA-16147's silent double assignment into a failed write.
    """
    if (
        old is not None
        and new is not None
        and (
            old.member_epoch == new.member_epoch
            and old.assigned_partitions == new.assigned_partitions
            and old.partitions_pending_revocation == new.partitions_pending_revocation
        )
    ):
        return partition_epochs
    d = partition_epochs.as_dict()
    if old is not None:
        for tp in old.owned_or_pending():
            if d.pop(tp, None) != old.member_epoch:
                raise PartitionEpochConflict(f"{tp} is not held at epoch {old.member_epoch}")
    if new is not None:
        for tp in new.owned_or_pending():
            if tp in d:
                raise PartitionEpochConflict(f"{tp} is still held at epoch {d[tp]}")
            d[tp] = new.member_epoch
    return FrozenMap(d)


def stamp_assignment_epochs(old: Member | None, new: Member) -> FrozenMap[TopicPartition, int]:
    """KIP-1251 assignment epochs of ``new``'s partitions
    (``CurrentAssignmentBuilder.computeNextAssignment``, ``ConsumerGroupMember.assignmentEpochs``;
    KAFKA-20066): a partition that stays assigned keeps its epoch, and so does one that stays
    held while pending revocation; a partition that enters the assigned partitions gets the
    member epoch it is assigned at — also one that comes back from pending revocation, since
    Kafka stamps every partition pending assignment with the target assignment epoch. A
    static member's temporary leave (epoch -2) resets them to 0."""
    held = new.owned_or_pending()
    if new.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        return FrozenMap((tp, 0) for tp in sorted(held))
    if old is None:
        return FrozenMap((tp, new.member_epoch) for tp in sorted(held))
    before, kept = old.assignment_epochs, old.assigned_partitions
    return FrozenMap(
        (
            tp,
            new.member_epoch
            if tp in new.assigned_partitions and tp not in kept
            else before.get(tp, new.member_epoch),
        )
        for tp in sorted(held)
    )


def record_assignment_history(group: Group) -> Group:
    """Ghost bookkeeping, not a rule of Kafka's: add every (partition, assignment epoch)
    pair a member of ``group`` is stamped with (``Member.assignment_epochs``, KIP-1251) to
    ``Group.assignment_history``, with the member as its holder. The system applies it
    after every step of a config with ``Config.assignment_epochs``, whatever rule wrote
    the member, so the history is the rules' record, not their own account of it."""
    added: dict[tuple[TopicPartition, int], frozenset[Holder]] = {}
    history = group.assignment_history
    for m in group.members.values():
        holder = (m.member_id, m.instance_id)
        for tp, epoch in m.assignment_epochs.items():
            key = (tp, epoch)
            known = added.get(key, history.get(key, frozenset()))
            if holder not in known:
                added[key] = known | {holder}
    if not added:
        return group
    return replace(group, assignment_history=FrozenMap({**history, **added}))


def write_member(group: Group, old: Member | None, new: Member, config: Config) -> Group:
    """Store ``new`` in place of ``old`` (``ConsumerGroup.updateMember``), with its KIP-1251
    assignment epochs when ``config.assignment_epochs``."""
    if config.assignment_epochs:
        new = replace(new, assignment_epochs=stamp_assignment_epochs(old, new))
    pe = config.rules.update_partition_epochs(group.partition_epochs, old, new)
    static = config.rules.update_static_members(group.static_members, old, new)
    return replace(
        group,
        members=group.members.set(new.member_id, new),
        partition_epochs=pe,
        static_members=static,
    )


def update_static_members(
    static_members: FrozenMap[str, str], old: Member | None, new: Member
) -> FrozenMap[str, str]:
    """The static-member index after ``old`` is stored as ``new``
    (``ConsumerGroup.updateMember`` → ``updateStaticMember``): ``new``'s instance id maps
    to its member id, and an instance id ``old`` held but ``new`` does not is released
    (KAFKA-20747, Kafka 4.4: before it the old entry stayed)."""
    if (
        old is not None
        and old.instance_id is not None
        and old.instance_id != new.instance_id
        and static_members.get(old.instance_id) == old.member_id
    ):
        static_members = static_members.remove(old.instance_id)
    if new.instance_id is not None and static_members.get(new.instance_id) != new.member_id:
        static_members = static_members.set(new.instance_id, new.member_id)
    return static_members


def remove_member(group: Group, member: Member, config: Config) -> Group:
    """Fence ``member``: its partitions are free at once, its target entry is deleted and
    the group epoch is bumped (``GroupMetadataManager.consumerGroupFenceMember``).

    With ``config.realign_empty_group`` an emptied group also gets assignment epoch =
    group epoch (KAFKA-20442, Kafka 4.4)."""
    pe = config.rules.update_partition_epochs(group.partition_epochs, member, None)
    members = group.members.remove(member.member_id)
    static = group.static_members
    if member.instance_id is not None:  # ConsumerGroup.removeMember → removeStaticMember
        static = static.remove(member.instance_id)
    group_epoch = group.group_epoch + 1
    assignment_epoch = group.assignment_epoch
    timestamp = group.assignment_timestamp
    elapsed = group.assignment_interval_elapsed
    if not members and config.realign_empty_group:
        # KAFKA-20442 also writes AssignmentTimestamp 0: the next member is assigned at once.
        assignment_epoch, timestamp, elapsed = group_epoch, 0, False
    return replace(
        group,
        group_epoch=group_epoch,
        assignment_epoch=assignment_epoch,
        target_assignment=group.target_assignment.remove(member.member_id),
        members=members,
        partition_epochs=pe,
        static_members=static,
        # The model drops every resolution with a member; the next heartbeat that needs
        # one resolves the regular expressions again (ResolveRegularExpressions).
        resolved_regexes=NO_RESOLVED_REGEXES,
        assignment_timestamp=timestamp,
        assignment_interval_elapsed=elapsed,
    )


def rebuild_group(group: Group, config: Config) -> Group:
    """The group as a new coordinator loads it after a failover: members (their epochs,
    state, assigned partitions and partitions pending revocation: the
    ``ConsumerGroupCurrentMemberAssignment`` records), target assignment, group and
    assignment epochs and committed offsets as written; the partition epochs derived again
    from the members' current assignments; a rebalance timer restarted for every member in
    UNREVOKED_PARTITIONS (``GroupMetadataManager.onLoaded``); the static-member index
    from the members' instance ids, as replaying their records builds it. An assignor run
    in flight on the old coordinator's executor is gone (KIP-1263: the run is not a
    record); the group epoch still ahead of the assignment epoch starts another."""
    members = FrozenMap(
        (
            mid,
            replace(
                m,
                rebalance_timer_epoch=(
                    m.member_epoch if m.state is MemberState.UNREVOKED_PARTITIONS else None
                ),
            ),
        )
        for mid, m in group.members.items()
    )
    partition_epochs = FrozenMap(
        (tp, m.member_epoch) for m in members.values() for tp in sorted(m.owned_or_pending())
    )
    return replace(
        group,
        members=members,
        partition_epochs=partition_epochs,
        static_members=static_member_index(members),
        assignor_runs=(),
    )


# --------------------------------------------------------------------------- validation


def validate_heartbeat_request(
    req: ConsumerGroupHeartbeatRequest, config: Config
) -> ErrorCode | None:
    """Static checks before the state machine
    (``GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid``; KIP-848
    "ConsumerGroupHeartbeat API", Request Validation)."""
    epoch = req.member_epoch
    if not req.member_id:
        return ErrorCode.INVALID_REQUEST
    if req.instance_id is not None and not req.instance_id.strip():
        return ErrorCode.INVALID_REQUEST
    if epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        return ErrorCode.INVALID_REQUEST
    if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH and req.instance_id is None:
        return ErrorCode.INVALID_REQUEST
    if epoch == 0:
        if req.rebalance_timeout_ms == -1:
            return ErrorCode.INVALID_REQUEST
        if req.topic_partitions is None or req.topic_partitions:
            return ErrorCode.INVALID_REQUEST
        if req.subscribed_topic_names is None and req.subscribed_topic_regex is None:
            return ErrorCode.INVALID_REQUEST
    if req.server_assignor is not None and req.server_assignor not in config.server_assignors:
        return ErrorCode.UNSUPPORTED_ASSIGNOR
    return None


def check_member_epoch(
    member: Member, req: ConsumerGroupHeartbeatRequest, config: Config
) -> ErrorCode | None:
    """The member-epoch check (``GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid``).

    0 rejoins (KAFKA-19233; before it, 0 for a stored member was fenced); a higher epoch
    is fenced; a lower one is accepted only as a retry after a lost response: it equals
    the previous epoch, carries owned partitions, and those are all still assigned.
    """
    r, m = req.member_epoch, member.member_epoch
    if r == m:
        return None
    if r == 0 and config.rejoin_with_epoch_zero:
        return None
    # Before KAFKA-19233 a rejoin at 0 met the general rules below (and passed only where
    # the previous epoch was 0 — right after a first assignment or a static replacement).
    if r > m:
        return ErrorCode.FENCED_MEMBER_EPOCH
    owned = req.topic_partitions
    if (
        r == member.previous_member_epoch
        and owned is not None
        and owned <= member.assigned_partitions
    ):
        return None
    return ErrorCode.FENCED_MEMBER_EPOCH


def should_bump_group_epoch(group: Group, old: Member | None, new: Member, config: Config) -> bool:
    """Whether a member update bumps the group epoch (KIP-848 "Group Epoch - Trigger a
    rebalance"; ``GroupMetadataManager.hasMemberSubscriptionChanged``): its subscribed topic
    names changed (a regular expression counts once resolved: a new one bumps the epoch
    when its resolution is written), or the group's preferred server assignor changed
    (KAFKA-20434)."""
    old_names = subscribed_topics(old, group) if old is not None else frozenset()
    if subscribed_topics(new, group) != old_names:
        return True
    old_assignor = old.server_assignor if old is not None else None
    if new.server_assignor == old_assignor:
        return False
    default = config.server_assignors[0]
    before = preferred_server_assignor(group.members.values(), default)
    after_members = dict(group.members)
    after_members[new.member_id] = new
    return preferred_server_assignor(after_members.values(), default) != before


# --------------------------------------------------------------------------- heartbeat


def error_response(
    req: ConsumerGroupHeartbeatRequest, error: ErrorCode, config: Config
) -> ConsumerGroupHeartbeatResponse:
    """An error response; Kafka echoes no member id and epoch 0 with an error."""
    return ConsumerGroupHeartbeatResponse(
        error_code=error, member_id=None, member_epoch=0, heartbeat_interval_ms=0
    )


def resolve_member(
    group: Group, req: ConsumerGroupHeartbeatRequest, config: Config
) -> tuple[Group, Member | None, Member] | ErrorCode:
    """Find or create the member a heartbeat is for
    (``GroupMetadataManager.getOrMaybeSubscribeDynamicConsumerGroupMember`` /
    ``getOrMaybeSubscribeStaticConsumerGroupMember``).

    Returns the group (with a static replacement applied), the stored member before
    this request (``None`` for a new one) and the member to update.
    """
    existing = group.members.get(req.member_id)
    holder_id = group.static_member_id(req.instance_id) if req.instance_id is not None else None
    if existing is None and holder_id is None and len(group.members) >= config.max_group_size:
        return ErrorCode.GROUP_MAX_SIZE_REACHED

    if req.instance_id is None:
        if existing is None:
            if req.member_epoch != 0:
                return ErrorCode.UNKNOWN_MEMBER_ID
            return group, None, new_member(req.member_id, None)
        error = config.rules.check_member_epoch(existing, req, config)
        return error if error is not None else (group, existing, existing)

    if req.member_epoch == 0:
        if holder_id is None:
            if existing is not None:
                error = config.rules.check_member_epoch(existing, req, config)
                return error if error is not None else (group, existing, existing)
            return group, None, new_member(req.member_id, req.instance_id)
        holder = group.members[holder_id]
        if (
            holder_id == req.member_id
            and holder.classic is None
            and config.static_rejoin_same_member_id
        ):
            # The holder itself rejoins (its join response was lost, or it was fenced):
            # treated like a dynamic rejoin (the fix proposed upstream in PR #23542). A
            # classic holder is replaced even under its own member id: the copy at epoch
            # 0 / previous 0 drops its classic metadata (KAFKA-17228; vector
            # testConsumerGroupHeartbeatFromExistingClassicStaticMember of
            # vectors/GroupMetadataManagerTest.json).
            error = config.rules.check_member_epoch(holder, req, config)
            return error if error is not None else (group, holder, holder)
        if not config.rules.static_holder_released(holder):
            return ErrorCode.UNRELEASED_INSTANCE_ID
        return config.rules.replace_static_member(group, holder, req.member_id, config)

    if holder_id is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if holder_id != req.member_id:
        return ErrorCode.FENCED_INSTANCE_ID
    holder = group.members[holder_id]
    error = config.rules.check_member_epoch(holder, req, config)
    return error if error is not None else (group, holder, holder)


def static_holder_released(holder: Member) -> bool:
    """Whether a static join at epoch 0 may replace the member holding its instance id:
    the holder left with -2, or it speaks the classic protocol — a classic client never
    sends a -2 leave, so a consumer-protocol process of its instance replaces it at once
    (``GroupMetadataManager.getOrMaybeSubscribeStaticConsumerGroupMember`` with
    ``throwIfInstanceIdIsUnreleased`` skipped for a classic holder; KAFKA-17228, a mixed
    group's rolling upgrade). Otherwise the join is refused with UNRELEASED_INSTANCE_ID."""
    return holder.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH or holder.classic is not None


def replace_static_member(
    group: Group, holder: Member, new_member_id: str, config: Config
) -> tuple[Group, Member | None, Member]:
    """A static member rejoining after a temporary leave replaces its old member id
    (KIP-848 "Static Membership (KIP-345)"; ``GroupMetadataManager.replaceMember``): the
    copy keeps state and assignment at epoch 0 / previous 0 and takes over the old id's
    target assignment; the instance id now maps to the new member id (``removeMember`` of
    the old id, ``updateMember`` of the new one)."""
    copy = replace(holder, member_id=new_member_id, member_epoch=0, previous_member_epoch=0)
    pe = config.rules.update_partition_epochs(group.partition_epochs, holder, copy)
    target = group.target_assignment
    moved = target.get(holder.member_id)
    target = target.remove(holder.member_id)
    if moved is not None:
        target = target.set(new_member_id, moved)
    members = group.members.remove(holder.member_id).set(new_member_id, copy)
    static = group.static_members
    if holder.instance_id is not None:
        static = static.set(holder.instance_id, new_member_id)
    return (
        replace(
            group,
            members=members,
            partition_epochs=pe,
            target_assignment=target,
            static_members=static,
        ),
        copy,
        copy,
    )


def handle_consumer_group_heartbeat(
    group: Group,
    topics: Mapping[str, TopicMetadata],
    req: ConsumerGroupHeartbeatRequest,
    config: Config,
) -> HeartbeatResult:
    """The ConsumerGroupHeartbeat pipeline (``GroupMetadataManager.consumerGroupHeartbeat``).

    validate → leave path or: resolve member → update member → bump group epoch →
    (compute target assignment) → reconcile → write → respond. A failed write (partition
    epoch conflict) answers UNKNOWN_SERVER_ERROR and changes nothing.
    """
    rules = config.rules
    error = rules.validate_heartbeat_request(req, config)
    if error is not None:
        return group, error_response(req, error, config)
    if group.deleted:
        error = deleted_group_error(group, req)
        if error is not None:
            return group, error_response(req, error, config)
        group = replace(group, deleted=False)  # a join at epoch 0 creates the group again
    if req.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
        return rules.handle_leave(group, req, config)
    try:
        return _heartbeat(group, topics, req, config)
    except PartitionEpochConflict:
        return group, error_response(req, ErrorCode.UNKNOWN_SERVER_ERROR, config)


def _heartbeat(
    group: Group,
    topics: Mapping[str, TopicMetadata],
    req: ConsumerGroupHeartbeatRequest,
    config: Config,
) -> HeartbeatResult:
    rules = config.rules
    resolved = resolve_member(group, req, config)
    if isinstance(resolved, ErrorCode):
        return group, error_response(req, resolved, config)
    group, stored, member = resolved

    # Member update: null fields mean "unchanged" (``ConsumerGroupMember.Builder.maybeUpdate…``).
    updated = replace(
        member,
        subscribed_topic_names=(
            req.subscribed_topic_names
            if req.subscribed_topic_names is not None
            else member.subscribed_topic_names
        ),
        server_assignor=(
            req.server_assignor if req.server_assignor is not None else member.server_assignor
        ),
        instance_id=req.instance_id if req.instance_id is not None else member.instance_id,
        rebalance_timeout_ms=(
            req.rebalance_timeout_ms
            if req.rebalance_timeout_ms != -1
            else member.rebalance_timeout_ms
        ),
        subscribed_topic_regex=(
            req.subscribed_topic_regex
            if req.subscribed_topic_regex is not None
            else member.subscribed_topic_regex
        ),
        rack_id=req.rack_id if req.rack_id is not None else member.rack_id,
        classic=None,  # the member speaks the consumer protocol now (a mixed group)
    )
    subscription_changed = subscribed_topics(updated, group) != subscribed_topics(member, group)
    if rules.should_bump_group_epoch(group, stored, updated, config):
        group = replace(group, group_epoch=group.group_epoch + 1)
    group = replace(group, members=group.members.set(updated.member_id, updated))
    if config.compute_target_in_heartbeat and group.group_epoch > group.assignment_epoch:
        group = update_target_assignment(group, topics, config)

    subscribed_ids = frozenset(
        topics[n].topic_id for n in subscribed_topics(updated, group) if n in topics
    )
    if not config.reconcile_while_assigning and group.group_epoch > group.assignment_epoch:
        # KIP-848 "Member Epoch": members reconcile once the new target is installed.
        reconciled = updated
    else:
        reconciled = _reconcile(rules, updated, group, req, subscription_changed, subscribed_ids)
    if reconciled is not updated and reconciled != updated:
        timer = (
            reconciled.member_epoch
            if reconciled.state is MemberState.UNREVOKED_PARTITIONS
            else None
        )
        reconciled = replace(reconciled, rebalance_timer_epoch=timer)
    group = rules.write_member(group, stored, reconciled, config)
    send_assignment = (
        req.member_epoch == 0
        or req.is_full()
        or reconciled.assigned_partitions != member.assigned_partitions
    )
    response = ConsumerGroupHeartbeatResponse(
        error_code=ErrorCode.NONE,
        member_id=reconciled.member_id,
        member_epoch=reconciled.member_epoch,
        heartbeat_interval_ms=config.heartbeat_interval_ms,
        assignment=reconciled.assigned_partitions if send_assignment else None,
    )
    return group, response


def update_target_assignment(
    group: Group, topics: Mapping[str, TopicMetadata], config: Config
) -> Group:
    """A heartbeat finds the target behind the group epoch (``GroupMetadataManager``
    target-assignment update; KIP-1263 ConsumerGroupHeartbeat Request Handling): no new
    target while the assignment interval has not passed since the last computation (the
    stale target and epoch are kept); otherwise an assignor run is handed to the executor
    (``assignor_offload``, at most one in flight) or the target is computed inline and its
    ``AssignmentTimestamp`` written."""
    interval = config.effective_assignment_interval_ms()
    if not assignment_interval_open(group, interval):
        return group
    default = config.server_assignors[0]
    if config.assignor_offload:
        rules = config.rules
        return rules.start_assignor_run(group, topics, default, rules.compute_target_assignment)
    group = config.rules.compute_target_assignment(group, topics, default)
    return record_assignment_time(group, interval)


def install_assignor_run(
    group: Group, topics: Mapping[str, TopicMetadata], config: Config
) -> Group:
    """An offloaded assignor run completes (``CompleteAssignorRun``; KIP-1263 "Assignment
    Offload")."""
    return config.rules.install_assignor_run(
        group,
        topics,
        config.effective_assignment_interval_ms(),
        config.offload_stale_run == "discard",
    )


def _reconcile(
    rules: Rules,
    member: Member,
    group: Group,
    req: ConsumerGroupHeartbeatRequest,
    subscription_changed: bool,
    subscribed_ids: frozenset[str],
) -> Member:
    return rules.reconcile(
        member,
        target_epoch=group.assignment_epoch,
        target=group.target_assignment.get(member.member_id, EMPTY),
        partition_epochs=group.partition_epochs,
        owned=req.topic_partitions,
        subscription_changed=subscription_changed,
        subscribed_topic_ids=subscribed_ids,
    )


def handle_leave(
    group: Group, req: ConsumerGroupHeartbeatRequest, config: Config
) -> HeartbeatResult:
    """Leave with epoch -1 (fence) or a static member's temporary leave with -2
    (``GroupMetadataManager.consumerGroupLeave`` / ``consumerGroupStaticMemberGroupLeave``)."""
    if req.instance_id is None:
        member = group.members.get(req.member_id)
        if member is None:
            return group, error_response(req, ErrorCode.UNKNOWN_MEMBER_ID, config)
    else:
        holder_id = group.static_member_id(req.instance_id)
        if holder_id is None:
            return group, error_response(req, ErrorCode.UNKNOWN_MEMBER_ID, config)
        if holder_id != req.member_id:
            return group, error_response(req, ErrorCode.FENCED_INSTANCE_ID, config)
        member = group.members[holder_id]
    response = ConsumerGroupHeartbeatResponse(
        error_code=ErrorCode.NONE,
        member_id=req.member_id,
        member_epoch=req.member_epoch,
        heartbeat_interval_ms=0,
    )
    try:
        if req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # The epoch is set directly (not through updateMemberEpoch): the previous
            # epoch is kept (consumerGroupStaticMemberGroupLeave).
            left = replace(
                member,
                member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                partitions_pending_revocation=EMPTY,
                rebalance_timer_epoch=None,
            )
            return config.rules.write_member(group, member, left, config), response
        return config.rules.remove_member(group, member, config), response
    except PartitionEpochConflict:
        return group, error_response(req, ErrorCode.UNKNOWN_SERVER_ERROR, config)


# --------------------------------------------------------------------------- timers


def session_timeout(group: Group, member_id: str, config: Config) -> Group:
    """The member's session expired: fence it
    (``GroupMetadataManager.scheduleConsumerGroupSessionTimeout``)."""
    member = group.members.get(member_id)
    if member is None:
        return group
    try:
        return config.rules.remove_member(group, member, config)
    except PartitionEpochConflict:
        return group


def rebalance_timeout(group: Group, member_id: str, config: Config) -> Group:
    """The revocation did not complete in the rebalance timeout: fence the member if it is
    still at the epoch the timer was armed with
    (``GroupMetadataManager.scheduleConsumerGroupRebalanceTimeout``)."""
    member = group.members.get(member_id)
    if member is None or member.rebalance_timer_epoch is None:
        return group
    if member.member_epoch != member.rebalance_timer_epoch:
        return group
    try:
        return config.rules.remove_member(group, member, config)
    except PartitionEpochConflict:
        return group


# --------------------------------------------------------------------------- metadata


def regex_matches(regex: str, topic_names: Iterable[str]) -> frozenset[str]:
    """The topic names ``regex`` matches as a whole (the coordinator's resolution,
    ``GroupMetadataManager.refreshRegularExpressions``; RE2/J there, Python's ``re`` here:
    docs/fidelity.md, row 22)."""
    pattern = re.compile(regex)
    return frozenset(name for name in topic_names if pattern.fullmatch(name))


def subscribed_topics(member: Member, group: Group) -> frozenset[str]:
    """The topic names a member of ``group`` subscribes to (``target.member_topics``)."""
    return member_topics(member, group.resolved_regexes)


def regexes_in_use(group: Group) -> frozenset[str]:
    """The regular expressions some member subscribes with."""
    return frozenset(
        m.subscribed_topic_regex
        for m in group.members.values()
        if m.subscribed_topic_regex is not None
    )


def regexes_stale(group: Group, topics: Mapping[str, TopicMetadata]) -> bool:
    """Whether the group's resolutions differ from what its regular expressions match in
    the current metadata, or keep one no member uses: a refresh is due
    (``GroupMetadataManager.maybeUpdateRegularExpressions``)."""
    if not group.resolved_regexes and all(
        m.subscribed_topic_regex is None for m in group.members.values()
    ):
        return False  # no regular expression at all: the common case, answered quickly
    used = regexes_in_use(group)
    if frozenset(group.resolved_regexes) != used:
        return True
    return any(group.resolved_regexes[r] != regex_matches(r, topics) for r in used)


def resolve_regular_expressions(
    group: Group, topics: Mapping[str, TopicMetadata], config: Config
) -> Group:
    """Resolve every regular expression in use against the topics and drop the unused
    ones; a changed resolution bumps the group epoch, so the next heartbeat computes a new
    target (``GroupMetadataManager.handleRegularExpressionsResult``, written as
    ``ConsumerGroupRegularExpression`` records)."""
    used = sorted(regexes_in_use(group))
    resolved = FrozenMap((r, regex_matches(r, topics)) for r in used)
    changed = any(group.resolved_regexes.get(r) != resolved[r] for r in used)
    epoch = group.group_epoch + 1 if changed else group.group_epoch
    return replace(group, resolved_regexes=resolved, group_epoch=epoch)


def on_metadata_change(group: Group, topic_name: str) -> Group:
    """A subscribed topic changed (partitions added, deleted or created, recreated under a
    new topic id, or its partitions' racks changed): bump the group epoch so a new target
    is computed (KIP-848 "Group Epoch"; Kafka detects it through the subscription metadata
    hash, KIP-1101)."""
    for m in group.members.values():
        if topic_name in subscribed_topics(m, group):
            return replace(group, group_epoch=group.group_epoch + 1)
    return group


def drop_offsets_of_topic(group: Group, topic_id: str) -> Group:
    """A deleted topic's committed offsets are removed at once
    (``OffsetMetadataManager.onPartitionsDeleted``)."""
    offsets = FrozenMap((tp, c) for tp, c in group.committed_offsets.items() if tp[0] != topic_id)
    if len(offsets) == len(group.committed_offsets):
        return group
    return replace(group, committed_offsets=offsets)


# --------------------------------------------------------------------------- offsets


def expirable_offsets(
    group: Group, topics: Mapping[str, TopicMetadata]
) -> frozenset[TopicPartition]:
    """The committed offsets whose retention may have passed (``ConsumerGroup``'s offset
    expiration condition, ``OffsetMetadataManager.cleanupExpiredOffsets``): in a consumer
    group, in any state, the offsets of every topic no member subscribes to, counted from
    their commit time. An empty group subscribes to nothing, so all its offsets expire
    retention after their last commit (docs/fidelity.md: KIP-211 counts from the moment
    the group became Empty)."""
    subscribed = {
        topics[name].topic_id
        for member in group.members.values()
        for name in subscribed_topics(member, group)
        if name in topics
    }
    return frozenset(tp for tp in group.committed_offsets if tp[0] not in subscribed)


def expirations(
    topics: Mapping[str, TopicMetadata], expirable: frozenset[TopicPartition]
) -> list[ExpireOffsets]:
    """One ``ExpireOffsets`` per topic (by name) with expirable offsets, in topic order."""
    ids = {tp[0] for tp in expirable}
    return [ExpireOffsets(name) for name, meta in topics.items() if meta.topic_id in ids]


def expire_offsets(
    group: OffsetOwner, expirable: frozenset[TopicPartition], topic_id: str
) -> OffsetOwner:
    """The cleanup removes the ``expirable`` offsets of one topic (an ``OffsetCommit``
    tombstone each), in a consumer or a classic group."""
    expired = {tp for tp in expirable if tp[0] == topic_id}
    if not expired:
        return group
    offsets = FrozenMap((tp, c) for tp, c in group.committed_offsets.items() if tp not in expired)
    return replace(group, committed_offsets=offsets)


def validate_offset_commit_kernel(
    ops: AnyOps, *, epoch: Any, member_epoch: Any, known: Any, nobody: Any, held: Any
) -> Any:
    """Whether an OffsetCommit at member epoch ``epoch`` is accepted
    (``ConsumerGroup.validateOffsetCommit``): a kernel written against ``model/sets.py``,
    which :func:`validate_offset_commit` runs with frozensets and the KIP-848 relation
    (``transition.offset_commit``) with Z3. ``known``: the request's member is in the
    group, at ``member_epoch`` (any value where it is not); ``nobody``: the group has no
    member (a commit at a negative epoch is then a simple consumer's, accepted); ``held``:
    the member holds every partition of the commit since an assignment epoch no newer than
    ``epoch`` (:func:`held_since`; false unless ``Config.assignment_epochs``). The current
    epoch is accepted; an older one only for partitions ``held`` since (KIP-1251; Kafka ≤
    4.2's strict equality where ``held`` is false); a newer one never."""
    current = ops.any_(
        ops.all_(ops.lt(epoch, 0), nobody), ops.all_(known, ops.eq(epoch, member_epoch))
    )
    return ops.any_(current, ops.all_(known, ops.lt(epoch, member_epoch), held))


def run_commit_kernel(
    kernel: Callable[..., Any], group: Group, req: OffsetCommitRequest, config: Config
) -> ErrorCode:
    """``kernel`` (the signature of :func:`validate_offset_commit_kernel`) run by the model
    with the frozenset backend: NONE when it accepts the commit, else UNKNOWN_MEMBER_ID for
    a member the group does not have and STALE_MEMBER_EPOCH for one it has (the errors
    ``ConsumerGroup.validateOffsetCommit`` throws)."""
    epoch = req.generation_id_or_member_epoch
    member = group.members.get(req.member_id)
    accepted: bool = kernel(
        FROZENSETS,
        epoch=epoch,
        member_epoch=member.member_epoch if member is not None else 0,
        known=member is not None,
        nobody=not group.members,
        held=config.assignment_epochs and member is not None and held_since(member, req),
    )
    if accepted:
        return ErrorCode.NONE
    return ErrorCode.UNKNOWN_MEMBER_ID if member is None else ErrorCode.STALE_MEMBER_EPOCH


def validate_offset_commit(group: Group, req: OffsetCommitRequest, config: Config) -> ErrorCode:
    """OffsetCommit fencing by member epoch (``ConsumerGroup.validateOffsetCommit``):
    an unknown member is UNKNOWN_MEMBER_ID; the member's current epoch is accepted for
    every partition; a newer epoch is STALE_MEMBER_EPOCH; an older one is
    STALE_MEMBER_EPOCH too (KIP-848 strict equality, Kafka ≤ 4.2) unless
    ``config.assignment_epochs``, where it is accepted when every partition of the commit
    is held by the member since an epoch no newer than the request's (KIP-1251):
    :func:`validate_offset_commit_kernel` with the frozenset backend."""
    return run_commit_kernel(validate_offset_commit_kernel, group, req, config)


@dataclass(frozen=True)
class CommitKernelRule(NamedKernel):
    """A ``Rules.validate_offset_commit`` replacement from a kernel written against
    ``model/sets.py`` (:func:`commit_kernel_rule`): called, it runs ``kernel`` with the
    frozenset backend, as :func:`validate_offset_commit` runs
    :func:`validate_offset_commit_kernel`; the KIP-848 relation reads ``kernel`` with the
    Z3 backend (``transition.Options.commit_kernel``). Named and pickled as its kernel
    (``model.sets.NamedKernel``)."""

    kernel: Callable[..., Any]

    def __call__(self, group: Group, req: OffsetCommitRequest, config: Config) -> ErrorCode:
        return run_commit_kernel(self.kernel, group, req, config)


def commit_kernel_rule(kernel: Callable[..., Any]) -> CommitKernelRule:
    """A ``Rules.validate_offset_commit`` replacement from a kernel of the signature of
    :func:`validate_offset_commit_kernel` (:class:`CommitKernelRule`). A mutant of the
    check is one (``groupcheck/mutants/consumer.py``): its symbolic variant is its
    kernel."""
    return CommitKernelRule(kernel)


def held_since(member: Member, req: OffsetCommitRequest) -> bool:
    """Whether ``member`` holds every partition of ``req`` (assigned or pending
    revocation) with an assignment epoch no newer than the request's epoch (KIP-1251,
    ``ConsumerGroup.validateOffsetCommit`` for an older epoch)."""
    epoch = req.generation_id_or_member_epoch
    held = member.owned_or_pending()
    return all(
        tp in held and member.assignment_epochs.get(tp, epoch + 1) <= epoch for tp in req.topics
    )


def falsely_fenced(group: Group, req: OffsetCommitRequest, error: ErrorCode) -> bool:
    """Whether a refused commit came from a member that held all its partitions since the
    request's epoch — what KIP-1251 guarantees to accept (KAFKA-20066)."""
    member = group.members.get(req.member_id)
    return (
        error is ErrorCode.STALE_MEMBER_EPOCH
        and member is not None
        and 0 <= req.generation_id_or_member_epoch <= member.member_epoch
        and held_since(member, req)
    )


def handle_offset_commit(
    group: Group, req: OffsetCommitRequest, config: Config
) -> tuple[Group, OffsetCommitResponse]:
    """Validate and store committed offsets per partition
    (``OffsetMetadataManager.commitOffset``). A deleted group is not there: a commit at an
    epoch of at least 0 is GROUP_ID_NOT_FOUND (``OffsetMetadataManager.validateOffsetCommit``,
    OffsetCommit v9+)."""
    if group.deleted and req.generation_id_or_member_epoch >= 0:
        return group, OffsetCommitResponse(ErrorCode.GROUP_ID_NOT_FOUND, req.topics)
    error = config.rules.validate_offset_commit(group, req, config)
    if config.assignment_epochs and falsely_fenced(group, req, error):
        group = replace(group, holder_commit_rejected=True)
    if error is not ErrorCode.NONE or not req.topics:
        return group, OffsetCommitResponse(error_code=error, topics=req.topics)
    record = CommittedOffset(req.member_id, req.generation_id_or_member_epoch)
    offsets = group.committed_offsets.as_dict()
    for tp in req.topics:
        offsets[tp] = record
    return replace(group, committed_offsets=FrozenMap(offsets)), OffsetCommitResponse(
        error_code=ErrorCode.NONE, topics=req.topics
    )


def member_target(group: Group, member_id: str) -> Assignment:
    """The member's target partitions (empty when it has none)."""
    return group.target_assignment.get(member_id, EMPTY)


def pending_partitions(group: Group, member: Member) -> Assignment:
    """The KIP-848 case studies' "pending-partitions": target partitions the member waits
    for because their previous owner has not released them yet (the member is in
    ``UNRELEASED_PARTITIONS``)."""
    if member.state is not MemberState.UNRELEASED_PARTITIONS:
        return EMPTY
    return group.target_assignment.get(member.member_id, EMPTY) - member.assigned_partitions


# --------------------------------------------------------------------------- group deletion


def validate_delete_group(group: Group) -> ErrorCode:
    """A DeleteGroups request is refused with NON_EMPTY_GROUP unless the group is EMPTY
    (``ConsumerGroup.validateDeleteGroup``), and with GROUP_ID_NOT_FOUND when it was
    deleted and not created again (``GroupMetadataManager.deleteGroups``)."""
    if group.deleted:
        return ErrorCode.GROUP_ID_NOT_FOUND
    return ErrorCode.NONE if not group.members else ErrorCode.NON_EMPTY_GROUP


def new_group(config: Config) -> Group:
    """A group as the coordinator creates it: no members, no target, no offsets, at group
    and assignment epoch 0 — or 1 under ``epoch_layout = "kafka-4.3"``, the empty epoch-1
    target of KIP-1263 (KAFKA-20268: group epoch 1 and assignment epoch 1, so the first
    computed target is epoch 2)."""
    start = 1 if config.epoch_layout == "kafka-4.3" else 0
    return Group(
        group_epoch=start,
        assignment_epoch=start,
        target_assignment=FrozenMap(),
        members=FrozenMap(),
        partition_epochs=FrozenMap(),
        committed_offsets=FrozenMap(),
    )


def delete_group(group: Group, config: Config) -> Group:
    """The group and its committed offsets are deleted (``GroupMetadataManager.deleteGroup``,
    ``OffsetMetadataManager.deleteAllOffsets``): what remains is the record a new group
    starts from (group and assignment epoch as ``Config.epoch_layout`` numbers a new group,
    no members, no target, no offsets), marked ``deleted`` until a member joins. An assignor
    run still in flight on the executor is marked so that its result is discarded (KIP-1263
    "Assignment Offload")."""
    return replace(
        new_group(config),
        assignor_runs=tuple(replace(run, group_deleted=True) for run in group.assignor_runs),
        holder_commit_rejected=group.holder_commit_rejected,
        deleted=True,
        deletions=group.deletions + 1,
    )


def maybe_delete_expired_group(group: Group, config: Config) -> Group:
    """After the offset cleanup: an empty group without committed offsets left is deleted
    (``GroupCoordinatorShard.cleanupGroupMetadata`` → ``maybeDeleteGroup``), with
    ``Config.delete_expired_groups``."""
    if not config.delete_expired_groups or group.members or group.committed_offsets:
        return group
    return delete_group(group, config)


def deleted_group_error(group: Group, req: ConsumerGroupHeartbeatRequest) -> ErrorCode | None:
    """A heartbeat for a deleted group: an epoch other than 0 (a member that still believes
    it is in the group, or its leave) finds no group, GROUP_ID_NOT_FOUND
    (``GroupMetadataManager.getOrMaybeCreateConsumerGroup`` without ``createIfNotExists``,
    ``consumerGroupLeave``); epoch 0 creates the group again."""
    if group.deleted and req.member_epoch != 0:
        return ErrorCode.GROUP_ID_NOT_FOUND
    return None
