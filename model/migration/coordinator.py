"""The coordinator of a mixed group: the classic APIs answered by a consumer group, and the
two conversions between a classic and a consumer group (KIP-848 "Online Migration").

Mirrors ``GroupMetadataManager.classicGroupJoinToConsumerGroup``,
``classicGroupSyncToConsumerGroup``, ``classicGroupHeartbeatToConsumerGroup``,
``classicGroupLeaveToConsumerGroup``, ``validateOnlineUpgrade``,
``validateOnlineDowngradeWithFencedMembers``, ``convertToConsumerGroup``,
``convertToClassicGroup``, ``ConsumerGroup.fromClassicGroup`` and
``ClassicGroup.fromConsumerGroup``. Every function is pure; the sub-rules a historical bug
touched are called through ``config.rules`` so that a mutant can replace one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from model.classic import coordinator as cco
from model.classic.messages import (
    UNKNOWN_MEMBER_ID,
    ClassicSubscription,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from model.classic.records import ClassicGroup, ClassicMember, ReplyTo
from model.consumer import coordinator as co
from model.ids import EMPTY, FrozenMap
from model.records import (
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ClassicMemberMetadata,
    Group,
    Member,
    OffsetCommitRequest,
    OffsetCommitResponse,
    TopicMetadata,
    new_member,
    replace,
    static_member_index,
)
from model.status import ClassicGroupStatus, ErrorCode, MemberState

if TYPE_CHECKING:
    from model.config import Config

Reply = cco.Reply
IssuedIds = FrozenMap[str, int]


# --------------------------------------------------------------------------- policy


def upgrade_enabled(config: Config) -> bool:
    """``ConsumerGroupMigrationPolicy.isUpgradeEnabled``: ``upgrade`` or ``bidirectional``."""
    return config.migration_policy in ("upgrade", "bidirectional")


def downgrade_enabled(config: Config) -> bool:
    """``ConsumerGroupMigrationPolicy.isDowngradeEnabled``: ``downgrade`` or ``bidirectional``."""
    return config.migration_policy in ("downgrade", "bidirectional")


def admits_classic_join(config: Config) -> bool:
    """Whether a non-empty consumer group takes a classic member's JoinGroup: not under the
    policy ``disabled``, which refuses it with INCONSISTENT_GROUP_PROTOCOL — neither
    conversion could ever run, so the group would stay mixed for good (KAFKA-20640)."""
    return config.migration_policy != "disabled"


def classic_members(group: Group) -> list[Member]:
    """The members that speak the classic protocol (``ConsumerGroupMember.useClassicProtocol``)."""
    return [m for m in group.members.values() if m.classic is not None]


def supports_classic_protocols(group: Group, protocols: tuple[str, ...]) -> bool:
    """``ConsumerGroup.supportsClassicProtocols``: a joining classic member must share one
    protocol with every classic member already in the group."""
    if not protocols:
        return False
    others = classic_members(group)
    return any(
        all(p in m.classic.supported_protocols for m in others if m.classic) for p in protocols
    )


# --------------------------------------------------------------------------- upgrade


def validate_online_upgrade(group: ClassicGroup, config: Config) -> bool:
    """``GroupMetadataManager.validateOnlineUpgrade``: a consumer-protocol member may turn a
    non-empty classic group into a consumer group if the policy allows an upgrade and the
    group fits ``group.consumer.max.size`` (the model's classic members all use the
    consumer embedded protocol, without custom user data)."""
    return upgrade_enabled(config) and len(group.members) <= config.max_group_size


def from_classic_group(group: ClassicGroup) -> Group:
    """``ConsumerGroup.fromClassicGroup``: group epoch = assignment epoch = the classic
    generation; every classic member becomes a STABLE member at that epoch whose assigned
    partitions and target are its last classic assignment (empty allowed, KAFKA-17733),
    keeping its supported protocols as classic member metadata and its instance id in the
    static-member index; the committed offsets stay."""
    generation = group.generation_id
    members: dict[str, Member] = {}
    for mid, m in group.members.items():
        process = m.process
        members[mid] = replace(
            new_member(mid, m.instance_id),
            member_epoch=generation,
            previous_member_epoch=generation,
            assigned_partitions=m.assignment,
            subscribed_topic_names=m.subscription.topics,
            rebalance_timeout_ms=m.rebalance_timeout_ms,
            classic=ClassicMemberMetadata(
                supported_protocols=m.protocols,
                process=(process.client, process.incarnation) if process else None,
            ),
        )
    converted = FrozenMap(members)
    return Group(
        group_epoch=generation,
        assignment_epoch=generation,
        target_assignment=FrozenMap((mid, m.assignment) for mid, m in group.members.items()),
        members=converted,
        static_members=static_member_index(converted),
        partition_epochs=FrozenMap(
            (tp, generation) for m in group.members.values() for tp in sorted(m.assignment)
        ),
        committed_offsets=group.committed_offsets,
    )


def bump_for_replacement(group: Group, instance_id: str | None) -> Group:
    """The join that converts a classic group bumps the group epoch — a new member always
    brings a new subscription (``convertToConsumerGroup`` relies on it) — and, in the model,
    so does a static member replacing its classic holder (KAFKA-17228), whose copy keeps
    the holder's subscription: the target is recomputed over every member, whatever the
    classic group had assigned when it converted (a rebalance in progress assigned
    nothing). Kafka 4.3.0 and 4.4.0 do not bump there (``ConsumerGroup.fromClassicGroup``
    writes the subscription metadata hash), which ``Config.replacement_bumps_group_epoch``
    off follows (docs/fidelity.md M12, V13; docs/findings.md F5)."""
    if instance_id is None or group.static_member_id(instance_id) is None:
        return group
    return replace(group, group_epoch=group.group_epoch + 1)


def held_requests_failed(group: ClassicGroup) -> tuple[Reply, ...]:
    """The JoinGroup and SyncGroup requests a classic group holds, answered
    REBALANCE_IN_PROGRESS when it is converted (``convertToConsumerGroup``)."""
    out: list[Reply] = []
    for m in group.members.values():
        if m.awaiting_join is not None:
            out.append(
                (m.awaiting_join, cco.join_error(m.member_id, ErrorCode.REBALANCE_IN_PROGRESS))
            )
        if m.awaiting_sync is not None:
            out.append((m.awaiting_sync, SyncGroupResponse(ErrorCode.REBALANCE_IN_PROGRESS, None)))
    return tuple(out)


def new_consumer_group(committed: ClassicGroup, config: Config) -> Group:
    """The consumer group that replaces an empty classic group on a consumer-protocol join
    (``maybeDeleteEmptyClassicGroup``, then a new group at the epochs ``Config.epoch_layout``
    starts a group at: 0, or 1 with the empty epoch-1 target of KIP-1263); offsets stay."""
    return replace(co.new_group(config), committed_offsets=committed.committed_offsets)


def is_empty_classic(group: ClassicGroup) -> bool:
    """An empty classic group: no member and no member id handed out for a second join."""
    return not group.members and not group.pending_members


# --------------------------------------------------------------------------- classic APIs


def _validate_member(group: Group, member_id: str, instance_id: str | None) -> Member | ErrorCode:
    """``validateConsumerGroupMember`` and ``throwIfMemberDoesNotUseClassicProtocol``: the
    member (by instance id for a static one, FENCED_INSTANCE_ID if another id holds it)
    must exist and speak the classic protocol."""
    if instance_id is not None:
        holder = group.static_member_id(instance_id)
        if holder is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if holder != member_id:
            return ErrorCode.FENCED_INSTANCE_ID
    member = group.members.get(member_id)
    if member is None or member.classic is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    return member


def issue_member_id(issued: IssuedIds, client_id: str) -> tuple[IssuedIds, str]:
    """A new member id for a client (Kafka: a UUID; the model counts per client id as the
    classic group does, so ids are deterministic and never reused across a conversion)."""
    n = issued.get(client_id, 0) + 1
    return issued.set(client_id, n), f"{client_id}.m{n}"


def handle_classic_join(
    group: Group,
    topics: Mapping[str, TopicMetadata],
    req: JoinGroupRequest,
    reply: ReplyTo,
    issued: IssuedIds,
    config: Config,
) -> tuple[Group, IssuedIds, tuple[Reply, ...]]:
    """JoinGroup to a non-empty consumer group (``classicGroupJoinToConsumerGroup``): refused
    with GROUP_MAX_SIZE_REACHED when a new member would exceed ``group.consumer.max.size``
    (``throwIfConsumerGroupIsFull``, checked first: a dynamic member without id is refused
    before it is given one), with INCONSISTENT_GROUP_PROTOCOL under the policy ``disabled``
    (KAFKA-20640) or when the classic members share none of its protocols; a dynamic member
    without id gets one with MEMBER_ID_REQUIRED; a static member sending a member id is
    UNKNOWN_MEMBER_ID when no member holds its instance and FENCED_INSTANCE_ID when
    another member does (``static_rejoin_error``); a static member without id
    replaces a classic holder of its instance, or a consumer-protocol one that left with -2
    (any, under ``Config.classic_replaces_live_holder``), else UNRELEASED_INSTANCE_ID;
    then the member is created
    or updated like a heartbeat's (its subscription may bump the group epoch and recompute
    the target), reconciled with the
    partitions its subscription says it owns, and answered at once with generation = its
    member epoch and its first protocol; it is never the leader."""
    if _over_max_size(group, req, config):
        error = cco.join_error(req.member_id, ErrorCode.GROUP_MAX_SIZE_REACHED)
        return group, issued, ((reply, error),)
    if not config.rules.mixed_admits_classic_join(config) or not supports_classic_protocols(
        group, req.protocols
    ):
        error = cco.join_error(req.member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        return group, issued, ((reply, error),)
    member_id = req.member_id
    if member_id == UNKNOWN_MEMBER_ID:
        issued, member_id = issue_member_id(issued, reply.client)
        if req.instance_id is None:
            return (
                group,
                issued,
                ((reply, cco.join_error(member_id, ErrorCode.MEMBER_ID_REQUIRED)),),
            )
    stored: Member | None
    if req.instance_id is not None:
        holder_id = group.static_member_id(req.instance_id)
        if req.member_id != UNKNOWN_MEMBER_ID:
            rejoin_error = static_rejoin_error(holder_id, req.member_id)
            if rejoin_error is not None:
                error = cco.join_error(req.member_id, rejoin_error)
                return group, issued, ((reply, error),)
        if holder_id is not None and holder_id != member_id:
            holder = group.members[holder_id]
            if (
                not config.classic_replaces_live_holder
                and holder.classic is None
                and holder.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH
            ):
                # A consumer-protocol holder is replaced only once it left with epoch -2:
                # the model's default (docs/fidelity.md M12, V10). Kafka replaces it at
                # once (``getOrMaybeSubscribeStaticConsumerGroupMember`` checks the
                # release, ``throwIfInstanceIdIsUnreleased``, only when both speak the
                # consumer protocol), as ``Config.classic_replaces_live_holder`` does.
                error = cco.join_error(req.member_id, ErrorCode.UNRELEASED_INSTANCE_ID)
                return group, issued, ((reply, error),)
            try:
                group, stored, member = config.rules.replace_static_member(
                    group, holder, member_id, config
                )
            except co.PartitionEpochConflict:
                error = cco.join_error(req.member_id, ErrorCode.UNKNOWN_SERVER_ERROR)
                return group, issued, ((reply, error),)
        else:
            stored = group.members.get(member_id)
            member = stored if stored is not None else new_member(member_id, req.instance_id)
    else:
        stored = group.members.get(member_id)
        member = stored if stored is not None else new_member(member_id, None)
    updated = replace(
        member,
        instance_id=req.instance_id if req.instance_id is not None else member.instance_id,
        rebalance_timeout_ms=req.rebalance_timeout_ms,
        subscribed_topic_names=req.subscription.topics,
        subscribed_topic_regex=None,
        classic=ClassicMemberMetadata(
            supported_protocols=req.protocols, process=(reply.client, reply.incarnation)
        ),
    )
    before = group
    try:
        group, _ = _join_as_member(group, topics, stored, member, updated, req, config)
    except co.PartitionEpochConflict:
        error = cco.join_error(req.member_id, ErrorCode.UNKNOWN_SERVER_ERROR)
        return before, issued, ((reply, error),)
    joined = group.members[member_id]
    response = JoinGroupResponse(
        error_code=ErrorCode.NONE,
        generation_id=joined.member_epoch,
        protocol_name=req.protocols[0],
        leader="",
        member_id=member_id,
    )
    return group, issued, ((reply, response),)


def static_rejoin_error(holder_id: str | None, member_id: str) -> ErrorCode | None:
    """A classic static JoinGroup that sends a member id rejoins as the member holding its
    instance id: UNKNOWN_MEMBER_ID when no member holds it (``throwIfStaticMemberIsUnknown``
    — a classic member that changed its ``group.instance.id`` is not renamed but rejoins
    without its member id, docs/fidelity.md M14), FENCED_INSTANCE_ID when another member
    does (``throwIfInstanceIdIsFenced``); None: the holder rejoins
    (``GroupMetadataManager.getOrMaybeSubscribeStaticConsumerGroupMember`` without
    ``createIfNotExists``, Kafka 4.3.0 and 4.4.0 alike)."""
    if holder_id is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if holder_id != member_id:
        return ErrorCode.FENCED_INSTANCE_ID
    return None


def _over_max_size(group: Group, req: JoinGroupRequest, config: Config) -> bool:
    """``throwIfConsumerGroupIsFull``: the group is at ``group.consumer.max.size`` and the
    JoinGroup is not from one of its members — a dynamic member without id included. A
    static member taking over its instance's holder does not add a member and is let in
    (the model's choice; Kafka 4.3 refuses it too, as its new member id is not a member)."""
    if len(group.members) < config.max_group_size or req.member_id in group.members:
        return False
    return req.instance_id is None or group.static_member_id(req.instance_id) is None


def _join_as_member(
    group: Group,
    topics: Mapping[str, TopicMetadata],
    stored: Member | None,
    member: Member,
    updated: Member,
    req: JoinGroupRequest,
    config: Config,
) -> tuple[Group, Member]:
    """Steps 1–3 of ``classicGroupJoinToConsumerGroup``: the group-epoch bump, the target
    assignment update, and the reconciliation against the owned partitions the member's
    subscription reports (``CurrentAssignmentBuilder``)."""
    rules = config.rules
    changed = co.subscribed_topics(updated, group) != co.subscribed_topics(member, group)
    if rules.should_bump_group_epoch(group, stored, updated, config):
        group = replace(group, group_epoch=group.group_epoch + 1)
    group = replace(group, members=group.members.set(updated.member_id, updated))
    if group.group_epoch > group.assignment_epoch:
        group = co.update_target_assignment(group, topics, config)
    subscribed_ids = frozenset(
        topics[n].topic_id for n in updated.subscribed_topic_names if n in topics
    )
    reconciled = rules.reconcile(
        updated,
        target_epoch=group.assignment_epoch,
        target=group.target_assignment.get(updated.member_id, EMPTY),
        partition_epochs=group.partition_epochs,
        owned=req.subscription.owned_partitions,
        subscription_changed=changed,
        subscribed_topic_ids=subscribed_ids,
    )
    if reconciled != updated:
        timer = (
            reconciled.member_epoch
            if reconciled.state is MemberState.UNREVOKED_PARTITIONS
            else None
        )
        reconciled = replace(reconciled, rebalance_timer_epoch=timer)
    return rules.write_member(group, stored, reconciled, config), reconciled


def handle_classic_sync(group: Group, req: SyncGroupRequest, config: Config) -> SyncGroupResponse:
    """SyncGroup to a consumer group (``classicGroupSyncToConsumerGroup``): the member must
    exist, speak the classic protocol, send its member epoch as generation
    (ILLEGAL_GENERATION) and the protocol of its JoinGroup response
    (INCONSISTENT_GROUP_PROTOCOL); REBALANCE_IN_PROGRESS while the group epoch (Kafka 4.3:
    the target assignment epoch, ``rebalance_epoch``) is ahead of its epoch, unless it is
    revoking (``throwIfRebalanceInProgress``); else its assigned
    partitions, those pending revocation excluded (``prepareAssignment``)."""
    member = _validate_member(group, req.member_id, req.instance_id)
    if isinstance(member, ErrorCode):
        return SyncGroupResponse(member, None)
    if req.generation_id != member.member_epoch:
        return SyncGroupResponse(ErrorCode.ILLEGAL_GENERATION, None)
    assert member.classic is not None
    protocol = member.classic.supported_protocols[0]
    if req.protocol_name is not None and req.protocol_name != protocol:
        return SyncGroupResponse(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, None)
    if (
        rebalance_epoch(group, config) > member.member_epoch
        and member.state is not MemberState.UNREVOKED_PARTITIONS
    ):
        return SyncGroupResponse(ErrorCode.REBALANCE_IN_PROGRESS, None)
    return SyncGroupResponse(ErrorCode.NONE, protocol, member.assigned_partitions)


def rebalance_epoch(group: Group, config: Config) -> int:
    """The epoch a classic member of a consumer group must have reached not to be told
    REBALANCE_IN_PROGRESS at its SyncGroup or Heartbeat: the group epoch up to Kafka 4.2;
    from Kafka 4.3 (``epoch_layout = "kafka-4.3"``), the target assignment epoch, which may
    lag behind the group epoch under batching and offload (KIP-1263 SyncGroup and
    Heartbeat Request Handling; KAFKA-20272)."""
    return group.assignment_epoch if config.epoch_layout == "kafka-4.3" else group.group_epoch


def waiting_on_unreleased(group: Group, member: Member) -> bool:
    """``ConsumerGroup.waitingOnUnreleasedPartition``: a partition of the member's target it
    is not assigned yet is still held by another member."""
    missing = group.target_assignment.get(member.member_id, EMPTY) - member.assigned_partitions
    return any(tp in group.partition_epochs for tp in missing)


def handle_classic_heartbeat(
    group: Group, req: HeartbeatRequest, config: Config
) -> HeartbeatResponse:
    """Heartbeat to a consumer group (``classicGroupHeartbeatToConsumerGroup``): the member
    must exist, speak the classic protocol and send its member epoch as generation; it is
    told REBALANCE_IN_PROGRESS — to rejoin — when its epoch is behind the group epoch (Kafka
    4.3: the target assignment epoch, ``rebalance_epoch``), when
    it has partitions to revoke, or when partitions it waited for were released."""
    member = _validate_member(group, req.member_id, req.instance_id)
    if isinstance(member, ErrorCode):
        return HeartbeatResponse(member)
    if req.generation_id != member.member_epoch:
        return HeartbeatResponse(ErrorCode.ILLEGAL_GENERATION)
    if (
        member.member_epoch < rebalance_epoch(group, config)
        or member.state is MemberState.UNREVOKED_PARTITIONS
        or (
            member.state is MemberState.UNRELEASED_PARTITIONS
            and not waiting_on_unreleased(group, member)
        )
    ):
        return HeartbeatResponse(ErrorCode.REBALANCE_IN_PROGRESS)
    return HeartbeatResponse(ErrorCode.NONE)


def handle_classic_leave(
    group: Group, req: LeaveGroupRequest, config: Config
) -> tuple[Group, LeaveGroupResponse]:
    """LeaveGroup to a consumer group (``classicGroupLeaveToConsumerGroup``): the member
    (found by instance id for a static one) is fenced — removed, its partitions freed, the
    group epoch bumped."""
    if req.instance_id is not None:
        holder = group.static_member_id(req.instance_id)
        if holder is None:
            return group, LeaveGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID)
        if req.member_id not in (UNKNOWN_MEMBER_ID, holder):
            return group, LeaveGroupResponse(ErrorCode.FENCED_INSTANCE_ID)
        member = group.members[holder]
    else:
        found = group.members.get(req.member_id)
        if found is None:
            return group, LeaveGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID)
        member = found
    try:
        return config.rules.remove_member(group, member, config), LeaveGroupResponse(ErrorCode.NONE)
    except co.PartitionEpochConflict:
        return group, LeaveGroupResponse(ErrorCode.UNKNOWN_SERVER_ERROR)


def handle_classic_offset_commit(
    group: Group, req: OffsetCommitRequest, config: Config
) -> tuple[Group, OffsetCommitResponse]:
    """OffsetCommit of a classic member of a consumer group
    (``ConsumerGroup.validateOffsetCommit``): the member must exist and, speaking the
    classic protocol, commit at its member epoch as generation (ILLEGAL_GENERATION)."""
    member = group.members.get(req.member_id)
    if member is None:
        return group, OffsetCommitResponse(ErrorCode.UNKNOWN_MEMBER_ID, req.topics)
    if member.classic is not None and req.generation_id_or_member_epoch != member.member_epoch:
        return group, OffsetCommitResponse(ErrorCode.ILLEGAL_GENERATION, req.topics)
    return co.handle_offset_commit(group, req, config)


# --------------------------------------------------------------------------- downgrade


def validate_online_downgrade(before: Group, after: Group, config: Config) -> bool:
    """``validateOnlineDowngradeWithFencedMembers``: a fencing (leave, timer) left a
    non-empty group of classic members only, the policy allows a downgrade, and the
    group fits the classic maximum size (unbounded in the model)."""
    removed = set(before.members) - set(after.members)
    return (
        bool(removed)
        and bool(after.members)
        and len(classic_members(after)) == len(after.members)
        and downgrade_enabled(config)
    )


def from_consumer_group(
    group: Group, remaining: Group, issued: IssuedIds, config: Config
) -> tuple[ClassicGroup, tuple[Reply, ...]]:
    """``convertToClassicGroup`` on the leave path: the classic group of the members that
    stay (``to_classic_group``), then a rebalance is prepared (``prepareRebalance``)."""
    return cco.prepare_rebalance(to_classic_group(group, remaining, issued), config)


def to_classic_group(group: Group, remaining: Group, issued: IssuedIds) -> ClassicGroup:
    """``ClassicGroup.fromConsumerGroup``: the classic group of ``remaining``'s members, at
    generation = ``group``'s epoch (before the step that converts it), each member's
    assignment its *target* assignment, the first member leading, STABLE."""
    members: dict[str, ClassicMember] = {}
    for mid, m in remaining.members.items():
        assert m.classic is not None
        process = m.classic.process
        members[mid] = ClassicMember(
            member_id=mid,
            instance_id=m.instance_id,
            protocols=m.classic.supported_protocols,
            subscription=ClassicSubscription(topics=m.subscribed_topic_names),
            rebalance_timeout_ms=m.rebalance_timeout_ms,
            assignment=remaining.target_assignment.get(mid, EMPTY),
            process=ReplyTo(process[0], process[1], 0) if process else None,
        )
    classic = ClassicGroup(
        status=ClassicGroupStatus.STABLE,
        generation_id=group.group_epoch,
        protocol_name=None,
        leader_id=next(iter(members)),
        members=FrozenMap(members),
        committed_offsets=remaining.committed_offsets,
        issued_member_ids=issued,
    )
    return replace(classic, protocol_name=cco.select_protocol(classic))


def replacement(before: Group, after: Group) -> tuple[str, str] | None:
    """The static replacement a step made, as (old member id, new member id): a member
    gone whose instance id another member holds now; None for a fencing."""
    for mid, m in before.members.items():
        if mid in after.members or m.instance_id is None:
            continue
        holder = after.static_member_id(m.instance_id)
        if holder is not None:
            return mid, holder
    return None


def from_consumer_group_replaced(
    group: Group, old_id: str, joining: Member, issued: IssuedIds, config: Config
) -> tuple[ClassicGroup, tuple[Reply, ...]]:
    """``convertToClassicGroup`` on the replacement path (KAFKA-17317): the classic group is
    built from the consumer group as it was before the JoinGroup (Kafka converts the
    in-memory group, which has not replayed the join's records), the joining member in
    place of the one it replaces, with that member's target assignment; generation = the
    group epoch. A rebalance is prepared only if the joining member subscribes to other
    topics than the member it replaces (KAFKA-19546) or the target was behind the group
    epoch (KAFKA-20273); else the group stays STABLE."""
    old = group.members[old_id]
    members = FrozenMap(
        (joining.member_id if mid == old_id else mid, joining if mid == old_id else m)
        for mid, m in group.members.items()
    )
    target = FrozenMap(
        (joining.member_id if mid == old_id else mid, parts)
        for mid, parts in group.target_assignment.items()
    )
    base = replace(group, members=members, target_assignment=target)
    classic = to_classic_group(base, base, issued)
    if config.rules.mixed_downgrade_rebalances(group, old, joining):
        return cco.prepare_rebalance(classic, config)
    return classic, ()


def downgrade_rebalances(group: Group, replaced: Member, joining: Member) -> bool:
    """Whether the classic group a static replacement downgrades to needs a rebalance: the
    joining member subscribes to other topics than the one it replaces (KAFKA-19546), or
    the target assignment was behind the group epoch (KAFKA-20273)
    (``GroupMetadataManager.convertToClassicGroup``)."""
    changed = joining.subscribed_topic_names != replaced.subscribed_topic_names
    return changed or group.group_epoch > group.assignment_epoch
