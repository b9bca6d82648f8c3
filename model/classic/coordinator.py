"""The classic group coordinator: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit
and the session, join and sync timers.

Mirrors the classic half of Kafka's ``GroupMetadataManager`` (``classicGroupJoin``,
``classicGroupSync``, ``classicGroupHeartbeat``, ``classicGroupLeave``, ``prepareRebalance``,
``completeClassicGroupJoin``, ``removeMemberAndUpdateClassicGroup``) and ``ClassicGroup``
(protocol selection, offset-commit validation). Every function is pure: it takes the group
and returns the new group with the responses to send, each addressed to the client
process and connection it answers (a JoinGroup or SyncGroup may be answered later, when
the phase completes). The sub-rules a historical bug touched are called through
``config.rules`` so that a mutant can replace one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING

from model.classic.messages import (
    UNKNOWN_MEMBER_ID,
    ClassicResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    JoinGroupResponseMember,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from model.classic.records import ClassicGroup, ClassicMember, ReplyTo, new_classic_group
from model.ids import EMPTY, FrozenMap, TopicPartition
from model.records import (
    CommittedOffset,
    OffsetCommitRequest,
    OffsetCommitResponse,
    TopicMetadata,
    replace,
)
from model.status import ClassicGroupStatus, ErrorCode

if TYPE_CHECKING:
    from model.config import Config

G = ClassicGroupStatus

Reply = tuple[ReplyTo, ClassicResponse | OffsetCommitResponse]
Result = tuple[ClassicGroup, tuple[Reply, ...]]


# --------------------------------------------------------------------------- protocols


def supports_protocols(group: ClassicGroup, protocols: tuple[str, ...]) -> bool:
    """An empty group takes any protocol; otherwise a joining member must share one with
    every member (``ClassicGroup.supportsProtocols``), else INCONSISTENT_GROUP_PROTOCOL."""
    if not protocols:
        return False
    if not group.members:
        return True
    return any(all(p in m.protocols for m in group.members.values()) for p in protocols)


def select_protocol(group: ClassicGroup) -> str | None:
    """The assignor every member supports that most members prefer
    (``ClassicGroup.selectProtocol``: each member votes for its first candidate; Kafka
    breaks a tie by hash order, the model by name)."""
    members = list(group.members.values())
    if not members:
        return None
    candidates = [p for p in members[0].protocols if all(p in m.protocols for m in members)]
    if not candidates:
        return None
    votes: Counter[str] = Counter()
    for m in members:
        votes[next(p for p in m.protocols if p in candidates)] += 1
    return min(votes, key=lambda p: (-votes[p], p))


# --------------------------------------------------------------------------- responses


def join_error(member_id: str, error: ErrorCode) -> JoinGroupResponse:
    """A JoinGroup error response."""
    return JoinGroupResponse(
        error_code=error, generation_id=-1, protocol_name=None, leader="", member_id=member_id
    )


def join_response(group: ClassicGroup, member_id: str) -> JoinGroupResponse:
    """The JoinGroup response of the current generation; the leader's lists every member
    with its subscription (``completeClassicGroupJoin``)."""
    members: tuple[JoinGroupResponseMember, ...] = ()
    if member_id == group.leader_id:
        members = tuple(
            JoinGroupResponseMember(m.member_id, m.instance_id, m.subscription)
            for m in group.members.values()
        )
    return JoinGroupResponse(
        error_code=ErrorCode.NONE,
        generation_id=group.generation_id,
        protocol_name=group.protocol_name,
        leader=group.leader_id or "",
        member_id=member_id,
        members=members,
    )


def _fail_held_requests(member: ClassicMember, error: ErrorCode) -> tuple[Reply, ...]:
    """Answer the JoinGroup / SyncGroup the coordinator holds for ``member`` with ``error``."""
    out: list[Reply] = []
    if member.awaiting_join is not None:
        out.append((member.awaiting_join, join_error(member.member_id, error)))
    if member.awaiting_sync is not None:
        out.append((member.awaiting_sync, SyncGroupResponse(error, None)))
    return tuple(out)


# --------------------------------------------------------------------------- rebalance


def prepare_rebalance(group: ClassicGroup, config: Config) -> Result:
    """Start a join phase (``GroupMetadataManager.prepareRebalance``): a group still in its
    SyncGroup phase answers the SyncGroups it holds with REBALANCE_IN_PROGRESS and drops
    the assignments (``resetAndPropagateAssignmentWithError``); the join completes at once
    if every member has already rejoined. The model has no initial rebalance delay
    (``group.initial.rebalance.delay.ms`` = 0; docs/fidelity.md)."""
    replies: tuple[Reply, ...] = ()
    members = group.members
    if group.status is G.COMPLETING_REBALANCE:
        out: list[Reply] = []
        reset: dict[str, ClassicMember] = {}
        for mid, m in members.items():
            if m.awaiting_sync is not None:
                out.append(
                    (m.awaiting_sync, SyncGroupResponse(ErrorCode.REBALANCE_IN_PROGRESS, None))
                )
            reset[mid] = replace(m, assignment=EMPTY, awaiting_sync=None)
        members = FrozenMap(reset)
        replies = tuple(out)
    group = replace(group, status=G.PREPARING_REBALANCE, members=members, pending_sync=frozenset())
    group, more = maybe_complete_join(group, config)
    return group, replies + more


def all_members_joined(group: ClassicGroup) -> bool:
    """Every member's JoinGroup is in and no KIP-394 pending member is still to come
    (``ClassicGroup.hasAllMembersJoined``)."""
    return not group.pending_members and all(
        m.awaiting_join is not None for m in group.members.values()
    )


def maybe_complete_join(group: ClassicGroup, config: Config) -> Result:
    """Complete the join phase once every member has rejoined (``DelayedJoin.tryComplete``)."""
    if group.status is G.PREPARING_REBALANCE and all_members_joined(group):
        return config.rules.classic_complete_join(group, config)
    return group, ()


def complete_join(group: ClassicGroup, config: Config) -> Result:
    """End the join phase (``completeClassicGroupJoin`` + ``ClassicGroup.initNextGeneration``):
    the dynamic members that did not rejoin are gone, while a static member that did not
    stays in the next generation, unanswered, until its session or the pending-sync timer
    removes it; the generation advances; the protocol is selected; the leader stays if it
    rejoined, or is the first member that did (``ClassicGroup.maybeElectNewJoinedLeader``);
    every rejoined member gets its JoinGroup response (the leader's lists every member) and
    the SyncGroup phase awaits every member. With no member left the group is EMPTY; with
    members left but none rejoined the phase goes on (Kafka starts the join timer again)."""
    kept = FrozenMap(
        (mid, m)
        for mid, m in group.members.items()
        if m.awaiting_join is not None or m.instance_id is not None
    )
    joined = [mid for mid, m in kept.items() if m.awaiting_join is not None]
    generation = group.generation_id + 1
    if not kept:
        empty = replace(
            group,
            status=G.EMPTY,
            generation_id=generation,
            protocol_name=None,
            leader_id=None,
            members=kept,
            pending_sync=frozenset(),
        )
        return empty, ()
    if not joined:
        return group, ()
    leader = group.leader_id if group.leader_id in joined else joined[0]
    group = replace(
        group,
        status=G.COMPLETING_REBALANCE,
        generation_id=generation,
        members=kept,
        leader_id=leader,
        pending_sync=frozenset(kept),
    )
    group = replace(group, protocol_name=select_protocol(group))
    replies: list[Reply] = []
    answered: dict[str, ClassicMember] = {}
    for mid, m in group.members.items():
        if m.awaiting_join is not None:
            replies.append((m.awaiting_join, join_response(group, mid)))
        answered[mid] = replace(m, awaiting_join=None)
    return replace(group, members=FrozenMap(answered)), tuple(replies)


def remove_member(group: ClassicGroup, member_id: str, config: Config) -> Result:
    """Remove a member (leave, session or rebalance timeout) and move the group on
    (``removeMemberAndUpdateClassicGroup``): a STABLE or COMPLETING_REBALANCE group starts
    a rebalance; a join phase may now be complete. A KIP-394 pending member is only
    forgotten. Requests the coordinator held for the member are answered
    UNKNOWN_MEMBER_ID."""
    if member_id in group.pending_members:
        group = replace(group, pending_members=group.pending_members.remove(member_id))
        return maybe_complete_join(group, config)
    member = group.members.get(member_id)
    if member is None:
        return group, ()
    replies = _fail_held_requests(member, ErrorCode.UNKNOWN_MEMBER_ID)
    members = group.members.remove(member_id)
    leader = group.leader_id
    if leader == member_id:
        leader = next(iter(members), None)
    group = replace(
        group,
        members=members,
        leader_id=leader,
        pending_sync=group.pending_sync - {member_id},
    )
    if group.status in (G.STABLE, G.COMPLETING_REBALANCE):
        group, more = prepare_rebalance(group, config)
    elif group.status is G.PREPARING_REBALANCE:
        group, more = maybe_complete_join(group, config)
    else:
        more = ()
    return group, replies + more


# --------------------------------------------------------------------------- JoinGroup


def _issue_member_id(group: ClassicGroup, client_id: str) -> tuple[ClassicGroup, str]:
    """A new member id for a client (Kafka: ``clientId-UUID``; the model counts per client
    id, ``A.m1``, ``A.m2`` …, so the id is a deterministic value)."""
    n = group.issued_member_ids.get(client_id, 0) + 1
    issued = group.issued_member_ids.set(client_id, n)
    return replace(group, issued_member_ids=issued), f"{client_id}.m{n}"


def handle_join_group(
    group: ClassicGroup, req: JoinGroupRequest, reply: ReplyTo, config: Config
) -> Result:
    """JoinGroup (``GroupMetadataManager.classicGroupJoin``): a member must share a
    protocol with the group; an unknown dynamic member first gets a member id with
    MEMBER_ID_REQUIRED (KIP-394) — before JoinGroup version 4 it is added at once
    (``classicGroupJoinNewDynamicMember``); an unknown static member joins or replaces the
    member of its instance id (KIP-345); a known member rejoins."""
    if not supports_protocols(group, req.protocols):
        return group, ((reply, join_error(req.member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)),)
    if req.member_id == UNKNOWN_MEMBER_ID:
        if req.instance_id is not None:
            return config.rules.classic_join_static_member(group, req, reply, config)
        group, member_id = _issue_member_id(group, reply.client)
        if not req.require_known_member_id:
            return _add_member(group, req, member_id, reply, config)
        group = replace(group, pending_members=group.pending_members.set(member_id, reply))
        return group, ((reply, join_error(member_id, ErrorCode.MEMBER_ID_REQUIRED)),)
    if req.member_id in group.pending_members:
        group = replace(group, pending_members=group.pending_members.remove(req.member_id))
        return _add_member(group, req, req.member_id, reply, config)
    return _join_existing_member(group, req, reply, config)


def _new_member(req: JoinGroupRequest, member_id: str, reply: ReplyTo) -> ClassicMember:
    return ClassicMember(
        member_id=member_id,
        instance_id=req.instance_id,
        protocols=req.protocols,
        subscription=req.subscription,
        rebalance_timeout_ms=req.rebalance_timeout_ms,
        awaiting_join=reply,
        process=reply,
    )


def _add_member(
    group: ClassicGroup, req: JoinGroupRequest, member_id: str, reply: ReplyTo, config: Config
) -> Result:
    """``addMemberThenRebalanceOrCompleteJoin``: the member waits in the join phase; the
    first member of a group leads it."""
    members = group.members.set(member_id, _new_member(req, member_id, reply))
    leader = group.leader_id if group.leader_id is not None else member_id
    group = replace(group, members=members, leader_id=leader)
    if group.status is G.PREPARING_REBALANCE:
        return maybe_complete_join(group, config)
    return prepare_rebalance(group, config)


def join_static_member(
    group: ClassicGroup, req: JoinGroupRequest, reply: ReplyTo, config: Config
) -> Result:
    """A static member with an unknown member id (``classicGroupJoinNewStaticMember``): a
    new instance id joins as a new member; a known one replaces the old member id in any
    group state — the held JoinGroup / SyncGroup of the old id are answered
    FENCED_INSTANCE_ID (KAFKA-8500) — and then (``updateStaticMemberThenRebalanceOrCompleteJoin``)
    a STABLE group whose selected protocol is unchanged stays STABLE and answers with the
    current generation (the new id is persisted, KAFKA-10284); a COMPLETING_REBALANCE group
    rebalances (KAFKA-9801); a join phase takes the new id's JoinGroup."""
    assert req.instance_id is not None
    group, new_id = _issue_member_id(group, reply.client)
    old_id = group.static_member_id(req.instance_id)
    if old_id is None:
        return _add_member(group, req, new_id, reply, config)
    old = group.members[old_id]
    fenced = _fail_held_requests(old, ErrorCode.FENCED_INSTANCE_ID)
    new = replace(
        old,
        member_id=new_id,
        protocols=req.protocols,
        subscription=req.subscription,
        rebalance_timeout_ms=req.rebalance_timeout_ms,
        awaiting_join=None,
        awaiting_sync=None,
        process=reply,
    )
    members = FrozenMap(
        (new_id if mid == old_id else mid, new if mid == old_id else m)
        for mid, m in group.members.items()
    )
    group = replace(
        group,
        members=members,
        leader_id=new_id if group.leader_id == old_id else group.leader_id,
        pending_sync=(group.pending_sync - {old_id})
        | ({new_id} if old_id in group.pending_sync else set()),
    )
    if group.status is G.STABLE:
        if select_protocol(group) == group.protocol_name:
            return group, (*fenced, (reply, join_response(group, new_id)))
        group = replace(group, members=group.members.set(new_id, replace(new, awaiting_join=reply)))
        group, more = prepare_rebalance(group, config)
        return group, fenced + more
    group = replace(group, members=group.members.set(new_id, replace(new, awaiting_join=reply)))
    if group.status is G.COMPLETING_REBALANCE:
        group, more = prepare_rebalance(group, config)
    else:
        group, more = maybe_complete_join(group, config)
    return group, fenced + more


def _validate_member(group: ClassicGroup, member_id: str, instance_id: str | None) -> ErrorCode:
    """``ClassicGroup.validateMember``: the member must exist, and a static member's id must
    be the one its instance id holds (an instance id no member holds: UNKNOWN_MEMBER_ID)."""
    if instance_id is not None:
        holder = group.static_member_id(instance_id)
        if holder is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if holder != member_id:
            return ErrorCode.FENCED_INSTANCE_ID
    if member_id not in group.members:
        return ErrorCode.UNKNOWN_MEMBER_ID
    return ErrorCode.NONE


def _join_existing_member(
    group: ClassicGroup, req: JoinGroupRequest, reply: ReplyTo, config: Config
) -> Result:
    """A known member rejoins (``classicGroupJoinExistingMember``): in the join phase it is
    counted in; in the SyncGroup phase an unchanged member gets the current generation
    back, a changed one starts a rebalance; in STABLE the leader, or a member whose
    metadata changed, starts a rebalance and a follower without change gets the current
    generation back."""
    error = _validate_member(group, req.member_id, req.instance_id)
    if error is not ErrorCode.NONE or group.status is G.EMPTY:
        error = error if error is not ErrorCode.NONE else ErrorCode.UNKNOWN_MEMBER_ID
        return group, ((reply, join_error(req.member_id, error)),)
    member = group.members[req.member_id]
    unchanged = member.matches(req.protocols, req.subscription)
    if group.status is G.COMPLETING_REBALANCE and unchanged:
        return group, ((reply, join_response(group, req.member_id)),)
    if group.status is G.STABLE and unchanged and req.member_id != group.leader_id:
        return group, ((reply, join_response(group, req.member_id)),)
    updated = replace(
        member,
        protocols=req.protocols,
        subscription=req.subscription,
        rebalance_timeout_ms=req.rebalance_timeout_ms,
        awaiting_join=reply,
    )
    group = replace(group, members=group.members.set(req.member_id, updated))
    if group.status is G.PREPARING_REBALANCE:
        return maybe_complete_join(group, config)
    return prepare_rebalance(group, config)


# --------------------------------------------------------------------------- SyncGroup


def handle_sync_group(
    group: ClassicGroup, req: SyncGroupRequest, reply: ReplyTo, config: Config
) -> Result:
    """SyncGroup (``GroupMetadataManager.classicGroupSync``): checked like a heartbeat
    (member, instance id, generation, protocol); in the join phase REBALANCE_IN_PROGRESS;
    in the SyncGroup phase a follower waits and the leader's assignment is installed for
    every member, which ends the rebalance (STABLE); in STABLE the member's assignment."""
    error = _validate_member(group, req.member_id, req.instance_id)
    if error is ErrorCode.NONE and req.generation_id != group.generation_id:
        error = ErrorCode.ILLEGAL_GENERATION
    if error is ErrorCode.NONE and req.protocol_name != group.protocol_name:
        error = ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    if error is ErrorCode.NONE and group.status is G.PREPARING_REBALANCE:
        error = ErrorCode.REBALANCE_IN_PROGRESS
    if error is not ErrorCode.NONE or group.status is G.EMPTY:
        error = error if error is not ErrorCode.NONE else ErrorCode.UNKNOWN_MEMBER_ID
        return group, ((reply, SyncGroupResponse(error, None)),)
    group = replace(group, pending_sync=group.pending_sync - {req.member_id})
    member = group.members[req.member_id]
    if group.status is G.STABLE:
        return group, (
            (reply, SyncGroupResponse(ErrorCode.NONE, group.protocol_name, member.assignment)),
        )
    members = group.members.set(req.member_id, replace(member, awaiting_sync=reply))
    group = replace(group, members=members)
    if req.member_id != group.leader_id:
        return group, ()
    return config.rules.classic_install_assignment(group, req.assignments, config)


def install_assignment(
    group: ClassicGroup, assignments: FrozenMap[str, frozenset[tuple[str, int]]], config: Config
) -> Result:
    """The leader's SyncGroup: every member's assignment is what the leader computed for it
    (none: empty), the group is STABLE, and every held SyncGroup is answered
    (``ClassicGroup.setAndPropagateAssignment``)."""
    replies: list[Reply] = []
    members: dict[str, ClassicMember] = {}
    for mid, m in group.members.items():
        assignment = assignments.get(mid, EMPTY)
        if m.awaiting_sync is not None:
            replies.append(
                (
                    m.awaiting_sync,
                    SyncGroupResponse(ErrorCode.NONE, group.protocol_name, assignment),
                )
            )
        members[mid] = replace(m, assignment=assignment, awaiting_sync=None)
    return replace(group, members=FrozenMap(members), status=G.STABLE), tuple(replies)


# --------------------------------------------------------------------------- Heartbeat, LeaveGroup


def handle_heartbeat(
    group: ClassicGroup, req: HeartbeatRequest, config: Config
) -> HeartbeatResponse:
    """Heartbeat (``classicGroupHeartbeat``): UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID /
    ILLEGAL_GENERATION for a member the group does not know at this generation;
    REBALANCE_IN_PROGRESS in the join phase; otherwise NONE (the session is extended)."""
    if group.status is G.EMPTY:
        return HeartbeatResponse(ErrorCode.UNKNOWN_MEMBER_ID)
    error = _validate_member(group, req.member_id, req.instance_id)
    if error is ErrorCode.NONE and req.generation_id != group.generation_id:
        error = ErrorCode.ILLEGAL_GENERATION
    if error is ErrorCode.NONE and group.status is G.PREPARING_REBALANCE:
        error = ErrorCode.REBALANCE_IN_PROGRESS
    return HeartbeatResponse(error)


def handle_leave_group(
    group: ClassicGroup, req: LeaveGroupRequest, reply: ReplyTo, config: Config
) -> Result:
    """LeaveGroup (``classicGroupLeave``): a pending or known member is removed; a static
    member's instance id must match. Without a member id (UNKNOWN_MEMBER_ID), the member
    holding the instance id is removed — KIP-345's removal of a static member by its
    ``group.instance.id`` (``classicGroupLeaveToClassicGroup``) — and an instance id no
    member holds, or none, is UNKNOWN_MEMBER_ID."""
    if req.member_id == UNKNOWN_MEMBER_ID:
        holder = group.static_member_id(req.instance_id) if req.instance_id else None
        if holder is None:
            return group, ((reply, LeaveGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID)),)
        group, more = remove_member(group, holder, config)
        return group, ((reply, LeaveGroupResponse(ErrorCode.NONE)), *more)
    if req.member_id in group.pending_members:
        group, more = remove_member(group, req.member_id, config)
        return group, ((reply, LeaveGroupResponse(ErrorCode.NONE)), *more)
    error = _validate_member(group, req.member_id, req.instance_id)
    if error is not ErrorCode.NONE:
        return group, ((reply, LeaveGroupResponse(error)),)
    group, more = remove_member(group, req.member_id, config)
    return group, ((reply, LeaveGroupResponse(ErrorCode.NONE)), *more)


# --------------------------------------------------------------------------- timers


def session_timeout(group: ClassicGroup, member_id: str, config: Config) -> Result:
    """The member's session expired (``GroupMetadataManager`` classic session timer):
    it is removed."""
    return remove_member(group, member_id, config)


def rebalance_timeout(group: ClassicGroup, member_id: str, config: Config) -> Result:
    """The join phase, or the SyncGroup phase, outlived the rebalance timeout without this
    member. The pending-sync timer (KAFKA-12890) removes a member that did not send
    SyncGroup; the join timer removes a dynamic member that did not rejoin, but for a
    static one it ends the join phase with the member kept (``completeClassicGroupJoin``
    removes only the dynamic members that did not rejoin)."""
    member = group.members.get(member_id)
    static = member is not None and member.instance_id is not None
    if group.status is G.PREPARING_REBALANCE and static:
        return config.rules.classic_complete_join(group, config)
    return remove_member(group, member_id, config)


def rebalance_timer_fires(group: ClassicGroup, member_id: str) -> bool:
    """Whether the rebalance timeout of ``member_id`` changes the group: the phase awaits
    the member (``awaits``), and for a static member in the join phase some member has
    rejoined (otherwise Kafka's join timer only starts again: ``completeClassicGroupJoin``
    when ``maybeElectNewJoinedLeader`` finds nobody)."""
    if not awaits(group, member_id):
        return False
    if group.status is G.PREPARING_REBALANCE and group.members[member_id].instance_id is not None:
        return any(m.awaiting_join is not None for m in group.members.values())
    return True


def awaits(group: ClassicGroup, member_id: str) -> bool:
    """Whether the phase in progress waits for ``member_id``: it has not rejoined in the
    join phase, or not sent SyncGroup in the SyncGroup phase."""
    member = group.members.get(member_id)
    if member is None:
        return False
    if group.status is G.PREPARING_REBALANCE:
        return member.awaiting_join is None
    return member_id in group.pending_sync


# --------------------------------------------------------------------------- OffsetCommit


def validate_offset_commit(
    group: ClassicGroup, req: OffsetCommitRequest, config: Config
) -> ErrorCode:
    """``ClassicGroup.validateOffsetCommit``: only a member at the group's generation may
    commit, and not while the SyncGroup phase runs (REBALANCE_IN_PROGRESS)."""
    if req.member_id not in group.members:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if req.generation_id_or_member_epoch != group.generation_id:
        return ErrorCode.ILLEGAL_GENERATION
    if group.status is G.COMPLETING_REBALANCE:
        return ErrorCode.REBALANCE_IN_PROGRESS
    return ErrorCode.NONE


def handle_offset_commit(
    group: ClassicGroup, req: OffsetCommitRequest, config: Config
) -> tuple[ClassicGroup, OffsetCommitResponse]:
    """OffsetCommit of a classic member: validated, then every partition's offset is written
    with the member and generation that wrote it."""
    error = config.rules.classic_validate_offset_commit(group, req, config)
    if error is not ErrorCode.NONE:
        return group, OffsetCommitResponse(error, req.topics)
    record = CommittedOffset(req.member_id, req.generation_id_or_member_epoch)
    offsets = group.committed_offsets.as_dict()
    for tp in req.topics:
        offsets[tp] = record
    return replace(group, committed_offsets=FrozenMap(offsets)), OffsetCommitResponse(
        ErrorCode.NONE, req.topics
    )


# --------------------------------------------------------------------------- offset expiry


def classic_expirable_offsets(
    group: ClassicGroup, topics: Mapping[str, TopicMetadata]
) -> frozenset[TopicPartition]:
    """The committed offsets whose retention may have passed (KIP-211 "Proposed Changes";
    ``ClassicGroup.offsetExpirationCondition``): an Empty group's offsets all expire,
    counted from when it became Empty; a Stable group's, counted from their commit time,
    only for topics no member subscribes to; in a rebalance nothing expires, since the
    subscriptions are not all known (KAFKA-13636)."""
    if group.status is G.EMPTY:
        return frozenset(group.committed_offsets)
    if group.status is not G.STABLE:
        return frozenset()
    subscribed = {
        topics[name].topic_id
        for member in group.members.values()
        for name in member.subscription.topics
        if name in topics
    }
    return frozenset(tp for tp in group.committed_offsets if tp[0] not in subscribed)


# --------------------------------------------------------------------------- group deletion


def classic_validate_delete_group(group: ClassicGroup) -> ErrorCode:
    """A DeleteGroups request is refused with NON_EMPTY_GROUP unless the group is Empty
    (``ClassicGroup.validateDeleteGroup``; pending KIP-394 members do not count), and with
    GROUP_ID_NOT_FOUND while no JoinGroup has created it since it was deleted (a group
    equal to a new one: ``GroupMetadataManager.deleteGroups``)."""
    fresh = replace(
        new_classic_group(),
        issued_member_ids=group.issued_member_ids,
        deletions=group.deletions,
    )
    if group.deletions and group == fresh:
        return ErrorCode.GROUP_ID_NOT_FOUND
    return ErrorCode.NONE if group.status is G.EMPTY else ErrorCode.NON_EMPTY_GROUP


def classic_delete_group(group: ClassicGroup) -> ClassicGroup:
    """The group and its committed offsets are deleted (``GroupMetadataManager.deleteGroup``):
    the next JoinGroup creates an Empty group at generation 0. The count of member ids
    issued per client is kept: Kafka's ids carry a UUID, so a new group never hands out an
    id a member of the deleted one had."""
    return replace(
        new_classic_group(),
        issued_member_ids=group.issued_member_ids,
        deletions=group.deletions + 1,
    )


def classic_maybe_delete_expired_group(group: ClassicGroup, config: Config) -> ClassicGroup:
    """After the offset cleanup: an Empty group without committed offsets left is deleted
    (``GroupCoordinatorShard.cleanupGroupMetadata`` → ``maybeDeleteGroup``), with
    ``Config.delete_expired_groups``."""
    if not config.delete_expired_groups or group.status is not G.EMPTY:
        return group
    if group.committed_offsets:
        return group
    return classic_delete_group(group)
