"""The mutant functions and their scenarios. Each function has the signature of the
``model.rules.Rules`` field it replaces and differs from the default in one rule; docs/bugs.md
describes each one, the bug it stands for and the property that kills it. A mutant that
replaces more than one field (``ALSO``) names its further functions here too."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from model import client as cl
from model import coordinator as co
from model import reconcile as rc
from model import target as tg
from model.classic import client as cc
from model.classic import coordinator as clco
from model.classic.assignors import Subscription, validate_cooperative_assignment
from model.classic.messages import (
    NO_GENERATION,
    JoinGroupRequest,
    JoinGroupResponseMember,
    SyncGroupResponse,
)
from model.classic.records import ClassicClient, ClassicGroup, ReplyTo
from model.ids import EMPTY, Assignment, FrozenMap, TopicPartition
from model.migration import coordinator as mco
from model.presets import (
    CLASSIC_GROUP_DELETION,
    CLASSIC_OFFSETS_EXPIRY,
    GROUP_DELETION,
    MIGRATION_DISABLED,
    MIXED_INSTANCE_RENAME,
    MIXED_STATIC,
    MIXED_STATIC_ASSIGNOR,
    MIXED_STATIC_RESUBSCRIBE,
    MUT2,
    MUT2_CALLBACKS,
    MUT2_COMMIT,
    MUT2_COMMIT_EPOCHS,
    MUT2_CRASH,
    MUT2_EPOCH_HISTORY,
    MUT2_FAILOVER,
    MUT2_LOSSY,
    MUT2_OFFLOAD,
    MUT2_OFFLOAD_STATIC,
    MUT2_POLL,
    MUT2_REGEX,
    MUT2_REJOIN,
    MUT2_STATIC,
    MUT2_TOPICS,
    MUT3,
    MUTC_COOPERATIVE,
    MUTC_LATE_SYNC,
    MUTC_LEAVE,
    MUTC_MISSED_ROUND,
    MUTC_STALL,
    MUTC_STATIC,
    MUTC_STICKY,
    MUTC_TWO_PROCESSES,
    OFFLOAD_DELETION,
    OFFSETS_EXPIRY,
)
from model.records import (
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    Body,
    Client,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Group,
    Member,
    OffsetCommitRequest,
    TopicMetadata,
)
from model.status import (
    ClassicGroupStatus,
    ClientStatus,
    ErrorCode,
    MemberState,
    RebalanceProtocol,
)

# --------------------------------------------------------------------------- scenarios

# The scenarios are presets (model/presets.py, "Mutant scenarios"), so any command can name
# them; every one runs with the client-side fix for finding F1 (docs/findings.md), so its
# baseline — the default rules — violates nothing and a kill means the mutant's rule.
TWO_ON_TWO = MUT2
THREE_ON_TWO = MUT3
CRASH_TWO = MUT2_CRASH
LOSSY_TWO = MUT2_LOSSY
COMMITTING = MUT2_COMMIT
COMMIT_EPOCHS = MUT2_COMMIT_EPOCHS
EPOCH_HISTORY = MUT2_EPOCH_HISTORY
FAILOVER = MUT2_FAILOVER
REGEX = MUT2_REGEX
STATIC_TWO = MUT2_STATIC
TOPICS_TWO = MUT2_TOPICS
REJOIN = MUT2_REJOIN

BASELINE_DEPTH: dict[str, int] = {
    "MUT2": 19,
    "MUT2_CALLBACKS": 10,
    "MUT2_COMMIT": 13,
    "MUT2_COMMIT_EPOCHS": 13,
    "MUT2_EPOCH_HISTORY": 12,
    "MUT2_CRASH": 15,
    "MUT2_FAILOVER": 11,
    "MUT2_LOSSY": 12,
    "MUT2_OFFLOAD": 12,
    "MUT2_OFFLOAD_STATIC": 13,
    "MUT2_POLL": 8,
    "MUT2_REGEX": 8,
    "MUT2_REJOIN": 12,
    "MUT2_STATIC": 11,
    "MUT2_TOPICS": 8,
    "MUTC_COOPERATIVE": 27,
    "MUTC_LATE_SYNC": 27,
    "MUTC_LEAVE": 15,
    "MUTC_MISSED_ROUND": 37,
    "MUTC_STALL": 15,
    "MUTC_STATIC": 8,
    "MUTC_STICKY": 31,
    "OFFSETS_EXPIRY": 12,
    "CLASSIC_OFFSETS_EXPIRY": 10,
    "MUTC_TWO_PROCESSES": 9,
    "GROUP_DELETION": 8,
    "CLASSIC_GROUP_DELETION": 6,
    "OFFLOAD_DELETION": 12,
    "MIGRATION_DISABLED": 7,
    "MIXED_STATIC": 12,
    "MIXED_STATIC_RESUBSCRIBE": 12,
    "MIXED_STATIC_ASSIGNOR": 9,
    "MIXED_INSTANCE_RENAME": 14,
}
"""Per scenario, the depth to which the default rules are checked clean
(``Mutant.baseline_depth``): at least the length of every kill in that scenario, so each
kill is within the depth where the reference rules violate nothing
(tests/quality/test_mutants.py checks both)."""


# --------------------------------------------------------------------------- coordinator


def revoke_without_waiting(
    member: Member,
    *,
    target_epoch: int,
    target: Assignment,
    partition_epochs: Mapping[TopicPartition, int],
    owned: Assignment | None,
    subscription_changed: bool,
    subscribed_topic_ids: frozenset[str],
) -> Member:
    """Jumps to the target at once, releasing revoked partitions before the client
    acknowledged (the revoke-before-assign rule dropped)."""
    out = rc.reconcile(
        member,
        target_epoch=target_epoch,
        target=target,
        partition_epochs=partition_epochs,
        owned=owned,
        subscription_changed=subscription_changed,
        subscribed_topic_ids=subscribed_topic_ids,
    )
    if out.state is MemberState.UNREVOKED_PARTITIONS:
        return rc.with_epoch(
            out, target_epoch, state=MemberState.STABLE, partitions_pending_revocation=EMPTY
        )
    return out


def ignore_partition_epochs(
    member: Member,
    *,
    target_epoch: int,
    target: Assignment,
    partition_epochs: Mapping[TopicPartition, int],
    owned: Assignment | None,
    subscription_changed: bool,
    subscribed_topic_ids: frozenset[str],
) -> Member:
    """Hands out target partitions other members have not released yet."""
    return rc.reconcile(
        member,
        target_epoch=target_epoch,
        target=target,
        partition_epochs={},
        owned=owned,
        subscription_changed=subscription_changed,
        subscribed_topic_ids=subscribed_topic_ids,
    )


def ack_ignored(
    member: Member,
    *,
    target_epoch: int,
    target: Assignment,
    partition_epochs: Mapping[TopicPartition, int],
    owned: Assignment | None,
    subscription_changed: bool,
    subscribed_topic_ids: frozenset[str],
) -> Member:
    """Never notices a revocation acknowledgement: a revoking member stays revoking."""
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        return member
    return rc.reconcile(
        member,
        target_epoch=target_epoch,
        target=target,
        partition_epochs=partition_epochs,
        owned=owned,
        subscription_changed=subscription_changed,
        subscribed_topic_ids=subscribed_topic_ids,
    )


def bookkeeping_drops_pending(
    partition_epochs: FrozenMap[TopicPartition, int], old: Member | None, new: Member | None
) -> FrozenMap[TopicPartition, int]:
    """KAFKA-16147: assigned and pending-revocation partitions updated separately and
    without checks — the new assigned entries are written, then the old pending entries
    deleted, even when they are the entries just written."""
    d = partition_epochs.as_dict()
    if old is not None:
        for tp in old.assigned_partitions:
            d.pop(tp, None)
    if new is not None:
        for tp in new.assigned_partitions:
            d[tp] = new.member_epoch
    if old is not None:
        for tp in old.partitions_pending_revocation:
            d.pop(tp, None)
    if new is not None:
        for tp in new.partitions_pending_revocation:
            d[tp] = new.member_epoch
    return FrozenMap(d)


def no_epoch_bump_on_fence(group: Group, member: Member, config: Any) -> Group:
    """Fencing (leave, session or rebalance timeout) removes the member without bumping
    the group epoch, so no new target is computed."""
    out = co.remove_member(group, member, config)
    return replace(out, group_epoch=group.group_epoch)


def reject_epoch_zero_rejoin(
    member: Member, req: ConsumerGroupHeartbeatRequest, config: Any
) -> ErrorCode | None:
    """KAFKA-19233: a stored member rejoining with epoch 0 is fenced again."""
    if req.member_epoch == 0 and member.member_epoch != 0:
        return ErrorCode.FENCED_MEMBER_EPOCH
    return co.check_member_epoch(member, req, config)


def static_replacement_keeps_both(
    group: Group, holder: Member, new_member_id: str, config: Any
) -> tuple[Group, Member | None, Member]:
    """Static replacement adds the new member id but leaves the old one in the group
    (KAFKA-8500 shape in the KIP-848 coordinator)."""
    copy = replace(holder, member_id=new_member_id, member_epoch=0, previous_member_epoch=0)
    pe = group.partition_epochs
    members = group.members.set(new_member_id, copy)
    old = group.members[holder.member_id]
    old = replace(old, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH)
    members = members.set(holder.member_id, old)
    target = group.target_assignment
    moved = target.get(holder.member_id)
    if moved is not None:
        target = target.set(new_member_id, moved)
    return (
        replace(group, members=members, partition_epochs=pe, target_assignment=target),
        copy,
        copy,
    )


def assignor_assigns_twice(
    group: Group, topics: Mapping[str, TopicMetadata], default_assignor: str
) -> Group:
    """An assignor that gives its first partition to every member as well."""
    return assign_first_to_every_member(
        tg.compute_target_assignment(group, topics, default_assignor)
    )


def assign_first_to_every_member(out: Group) -> Group:
    """What ``assignor_assigns_twice`` does to the assignor's output (BMC's replay applies
    it to the target of its path)."""
    every = sorted(tp for parts in out.target_assignment.values() for tp in parts)
    if not every:
        return out
    first = every[0]
    target = FrozenMap((mid, parts | {first}) for mid, parts in out.target_assignment.items())
    return replace(out, target_assignment=target)


def after_assignor(rules: Any) -> Callable[[Group], Group] | None:
    """What ``rules.compute_target_assignment`` does to the assignor's output beyond the
    assignor, for BMC's replay (``invariants.z3.proof.bmc.replay``), which installs the
    path's target (any valid assignor's) and then applies this part of the rule."""
    if rules.compute_target_assignment is assignor_assigns_twice:
        return assign_first_to_every_member
    return None


def no_bump_on_subscription_change(
    group: Group, old: Member | None, new: Member, config: Any
) -> bool:
    """Only new members bump the group epoch; a changed subscription does not."""
    if old is None:
        return co.should_bump_group_epoch(group, old, new, config)
    return False


def no_bump_on_metadata_change(group: Group, topic_name: str) -> Group:
    """A partition added to (or a subscribed topic recreated) is not noticed."""
    return group


def accept_commit_from_unknown_member(
    group: Group, req: OffsetCommitRequest, config: Any
) -> ErrorCode:
    """Offset commits from member ids the group no longer has are accepted (zombies)."""
    if req.member_id not in group.members:
        return ErrorCode.NONE
    return co.validate_offset_commit(group, req, config)


def accept_stale_commit_epoch(group: Group, req: OffsetCommitRequest, config: Any) -> ErrorCode:
    """Offset commits at any epoch of a known member are accepted."""
    error = co.validate_offset_commit(group, req, config)
    return ErrorCode.NONE if error is ErrorCode.STALE_MEMBER_EPOCH else error


def strict_commit_epoch(group: Group, req: OffsetCommitRequest, config: Any) -> ErrorCode:
    """Kafka ≤ 4.2's strict epoch equality kept where KIP-1251 assignment epochs are
    recorded: a commit at an older epoch is refused even for partitions the member held
    since then (KAFKA-20066)."""
    member = group.members.get(req.member_id)
    error = co.validate_offset_commit(group, req, config)
    if (
        error is ErrorCode.NONE
        and member is not None
        and req.generation_id_or_member_epoch != member.member_epoch
    ):
        return ErrorCode.STALE_MEMBER_EPOCH
    return error


def stamp_request_epoch(group: Group, old: Member | None, new: Member, config: Any) -> Group:
    """KIP-1251 assignment epochs stamped with the member epoch the member had before the
    update (the epoch of the heartbeat that brought the partition; 0 for a join) instead of
    the epoch it is assigned at (``CurrentAssignmentBuilder.computeNextAssignment`` stamps
    a newly assigned partition with the target assignment epoch; KAFKA-20066): a partition
    that moves to a member can carry an epoch its previous holder was stamped with."""
    written = co.write_member(group, old, new, config)
    if not config.assignment_epochs:
        return written
    member = written.members[new.member_id]
    before = old.member_epoch if old is not None else 0
    kept = old.assigned_partitions if old is not None else EMPTY
    epochs = FrozenMap(
        (
            tp,
            max(before, 0) if tp in member.assigned_partitions and tp not in kept else epoch,
        )
        for tp, epoch in member.assignment_epochs.items()
    )
    if epochs == member.assignment_epochs:
        return written
    stamped = replace(member, assignment_epochs=epochs)
    return replace(written, members=written.members.set(new.member_id, stamped))


def failover_drops_pending_revocation(group: Group, config: Any) -> Group:
    """A failover loses the partitions members were still revoking (a current-assignment
    record without its pending revocations): the new coordinator takes them for free."""
    rebuilt = co.rebuild_group(group, config)
    members = FrozenMap(
        (mid, replace(m, partitions_pending_revocation=EMPTY)) for mid, m in rebuilt.members.items()
    )
    partition_epochs = FrozenMap(
        (tp, m.member_epoch) for m in members.values() for tp in sorted(m.assigned_partitions)
    )
    return replace(rebuilt, members=members, partition_epochs=partition_epochs)


def regex_resolution_without_bump(group: Group, topics: Any, config: Any) -> Group:
    """A new resolution of the regular expressions is stored without bumping the group
    epoch: no new target is computed for the topics it adds or drops."""
    resolved = co.resolve_regular_expressions(group, topics, config)
    return replace(resolved, group_epoch=group.group_epoch)


# --------------------------------------------------------------------------- KIP-1263 offload


def install_without_reapplying_removals(
    group: Group, topics: Mapping[str, TopicMetadata], interval_ms: int, discard_stale: bool
) -> Group:
    """A completed assignor run is installed with the entries of members that left or were
    fenced while it ran (the removals made meanwhile are not re-applied)."""
    out = tg.install_assignor_run(group, topics, interval_ms, discard_stale)
    if out.assignment_epoch == group.assignment_epoch:
        return out  # discarded
    run = group.assignor_runs[0]
    gone = {mid: parts for mid, parts in run.target_assignment.items() if mid not in group.members}
    return replace(out, target_assignment=FrozenMap({**out.target_assignment.as_dict(), **gone}))


def two_runs_in_flight(
    group: Group,
    topics: Mapping[str, TopicMetadata],
    default_assignor: str,
    compute: Callable[[Group, Mapping[str, TopicMetadata], str], Group],
) -> Group:
    """A heartbeat that needs a new target starts another assignor run although one is
    already in flight."""
    idle = replace(group, assignor_runs=())
    started = tg.start_assignor_run(idle, topics, default_assignor, compute)
    return replace(group, assignor_runs=(*group.assignor_runs, *started.assignor_runs))


def install_before_static_replacement(
    group: Group, topics: Mapping[str, TopicMetadata], interval_ms: int, discard_stale: bool
) -> Group:
    """A completed assignor run is installed as computed before a static member was
    replaced: the new instance's member id gets nothing (the old id's entry is not moved
    to it)."""
    out = tg.install_assignor_run(group, topics, interval_ms, discard_stale)
    if out.assignment_epoch == group.assignment_epoch:
        return out
    run = group.assignor_runs[0]
    kept = FrozenMap(
        (mid, parts) for mid, parts in out.target_assignment.items() if mid in run.target_assignment
    )
    return replace(out, target_assignment=kept)


def install_without_epoch(
    group: Group, topics: Mapping[str, TopicMetadata], interval_ms: int, discard_stale: bool
) -> Group:
    """A completed assignor run's target is installed but the assignment epoch is left
    where it was."""
    out = tg.install_assignor_run(group, topics, interval_ms, discard_stale)
    return replace(out, assignment_epoch=group.assignment_epoch)


# --------------------------------------------------------------------------- client


def client_acks_before_revoking(
    client: Client, config: Any
) -> tuple[Client, ConsumerGroupHeartbeatRequest]:
    """While reconciling, the client reports its new target as owned before it stopped
    consuming the revoked partitions (the acknowledgement races the revocation; cf.
    KAFKA-20332)."""
    new, req = cl.build_heartbeat(client, config)
    if client.status is ClientStatus.RECONCILING and client.target is not None:
        req = replace(req, topic_partitions=client.target)
    return new, req


def adopt_negative_epoch(
    client: Client, resp: ConsumerGroupHeartbeatResponse, config: Any
) -> Client:
    """KAFKA-19335: a leave response (epoch -1) arriving after the application subscribed
    again overwrites the joining client's epoch."""
    out = cl.on_heartbeat_response(client, resp, config)
    if resp.error_code is ErrorCode.NONE and resp.member_epoch < 0 and client.heartbeat_in_flight:
        return replace(out, member_epoch=resp.member_epoch)
    return out


def callback_ignores_abort(client: Client, config: Any) -> tuple[Client, Any]:
    """The end of a rebalance callback applies its reconciliation even when the client
    was fenced, left or rejoined meanwhile (``maybeAbortReconciliation`` dropped)."""
    if client.callback in (cl.ON_PARTITIONS_REVOKED, cl.ON_PARTITIONS_ASSIGNED):
        pretend = replace(client, status=ClientStatus.RECONCILING, rejoined_while_reconciling=False)
        done, commit = cl.complete_callback(pretend, config)
        if client.status is not ClientStatus.RECONCILING and done.callback is None:
            done = replace(done, status=ClientStatus.ACKNOWLEDGING)
        return done, commit
    return cl.complete_callback(client, config)


def poll_timeout_keeps_partitions(client: Client, config: Any) -> tuple[Client, Any]:
    """A client whose poll timer expired leaves the group but never runs
    onPartitionsLost: it keeps its partitions into its rejoin."""
    new, request = cl.build_heartbeat(client, config)
    if client.poll_expired and new.status is ClientStatus.STALE:
        new = replace(new, owned=client.owned, callback=None, lost_queued=False)
    return new, request


def ack_while_revoking(client: Client, config: Any) -> tuple[Client, Any]:
    """The heartbeat reports partitions being revoked as gone while their offsets are
    still being committed: the coordinator releases them before the revocation ends
    (the client reports what it consumes, not its last reconciled assignment)."""
    new, request = cl.build_heartbeat(client, config)
    if request.topic_partitions is not None and client.revoking:
        early = request.topic_partitions - client.revoking
        return new, replace(request, topic_partitions=early)
    return new, request


# --------------------------------------------------------------------------- the classic protocol


def sticky_without_generation(
    subscriptions: Mapping[str, Subscription], partitions: frozenset[TopicPartition]
) -> dict[str, Assignment]:
    """KAFKA-7026: the sticky assignor takes every member's claim at face value, without
    the KIP-341 generation: a partition two members claim stays with both."""
    return {
        mid: frozenset(
            tp for tp in sub.owned_partitions if tp in partitions and tp[0] in sub.topics
        )
        for mid, sub in subscriptions.items()
    }


def lost_partitions_kept(client: ClassicClient, config: Any) -> tuple[ClassicClient, Any]:
    """KAFKA-12983/12984: a cooperative member whose generation was reset skips
    ``onPartitionsLost`` and rejoins still consuming, and reporting, the partitions of its
    old generation."""
    reset = client.generation_id < 0 or not client.member_id
    if reset and client.needs_join_prepare and client.owned:
        kept = client.owned
        new, bodies = cc.join_group(replace(client, needs_join_prepare=False), config)
        join = bodies[-1]
        assert isinstance(join, JoinGroupRequest)
        subscription = replace(join.subscription, owned_partitions=kept)
        return replace(new, owned=kept), (*bodies[:-1], replace(join, subscription=subscription))
    return cc.join_group(client, config)


def assign_without_withholding(
    client: ClassicClient,
    members: tuple[JoinGroupResponseMember, ...],
    topics: Mapping[str, TopicMetadata],
    config: Any,
) -> FrozenMap[str, Assignment] | None:
    """The cooperative-sticky assignor without ``adjustAssignment``: a partition moves to
    its new owner in the same round its old owner is told to revoke it (KIP-429's two
    rebalances collapsed into one)."""
    return cc.leader_assignment(replace(client, kip429=False), members, topics, config)


def static_replace_without_rebalance(
    group: ClassicGroup, req: JoinGroupRequest, reply: ReplyTo, config: Any
) -> Any:
    """KAFKA-9801: a static member rejoining during COMPLETING_REBALANCE has its member id
    swapped without a new rebalance, though the leader assigns by the old id."""
    if group.status is not ClassicGroupStatus.COMPLETING_REBALANCE:
        return clco.join_static_member(group, req, reply, config)
    stable = replace(group, status=ClassicGroupStatus.STABLE)
    out, replies = clco.join_static_member(stable, req, reply, config)
    return replace(out, status=ClassicGroupStatus.COMPLETING_REBALANCE), replies


def no_pending_sync_timer(group: ClassicGroup, member_id: str, config: Any) -> Any:
    """KAFKA-12890: no timer removes members that joined but never sent SyncGroup; a
    member that heartbeats without syncing keeps the group in COMPLETING_REBALANCE."""
    if group.status is ClassicGroupStatus.COMPLETING_REBALANCE:
        return group, ()
    return clco.rebalance_timeout(group, member_id, config)


def expire_by_commit_time(group: Group, topics: Any) -> frozenset[TopicPartition]:
    """KAFKA-4682: every offset expires retention after its commit, whatever the group
    does (before KIP-211)."""
    return frozenset(group.committed_offsets)


def expire_while_rebalancing(group: ClassicGroup, topics: Any) -> frozenset[TopicPartition]:
    """KAFKA-13636: subscription-based expiry in every state but Empty, reading during a
    rebalance only the subscriptions of the members that have rejoined so far."""
    if group.status is ClassicGroupStatus.EMPTY:
        return frozenset(group.committed_offsets)
    rejoined = [
        m
        for m in group.members.values()
        if group.status is not ClassicGroupStatus.PREPARING_REBALANCE or m.awaiting_join
    ]
    subscribed = {
        topics[name].topic_id for m in rejoined for name in m.subscription.topics if name in topics
    }
    return frozenset(tp for tp in group.committed_offsets if tp[0] not in subscribed)


def highest_generation_claims_only(
    client: ClassicClient,
    members: tuple[JoinGroupResponseMember, ...],
    topics: Mapping[str, TopicMetadata],
    config: Any,
) -> FrozenMap[str, Assignment] | None:
    """KAFKA-14639: ``AbstractStickyAssignor`` before Kafka 3.5 took the owned partitions only
    of the members reporting the highest generation; a member that missed a round counts
    as owning nothing, for the sticky algorithm and for ``adjustAssignment`` alike, so its
    partitions go to others in the round it is told to revoke them."""
    top = max((m.subscription.generation_id for m in members), default=NO_GENERATION)
    counted = tuple(
        m
        if m.subscription.generation_id == top
        else replace(
            m, subscription=replace(m.subscription, owned_partitions=EMPTY, user_data=EMPTY)
        )
        for m in members
    )
    return cc.leader_assignment(client, counted, topics, config)


def late_sync_resets_generation(
    client: ClassicClient, resp: SyncGroupResponse, config: Any
) -> tuple[ClassicClient, OffsetCommitRequest | None]:
    """KAFKA-13891, reverted as KAFKA-14016: a SyncGroup answered REBALANCE_IN_PROGRESS (the
    member was late for the SyncGroup phase) resets the generation, as ILLEGAL_GENERATION
    does: the member gives up its partitions as lost before it rejoins."""
    if resp.error_code is ErrorCode.REBALANCE_IN_PROGRESS:
        resp = replace(resp, error_code=ErrorCode.ILLEGAL_GENERATION)
    return cc.on_sync_response(client, resp, config)


def validate_stale_claims(
    client: ClassicClient,
    members: tuple[JoinGroupResponseMember, ...],
    topics: Mapping[str, TopicMetadata],
    config: Any,
) -> FrozenMap[str, Assignment] | None:
    """KAFKA-13406 (Kafka 3.0): the leader honours claims only from the highest generation
    (as before KAFKA-14639) and then checks even the built-in cooperative-sticky assignment
    with ``validateCooperativeAssignment`` against every member's raw claims: a stale claim
    the assignor ignored makes the check fail, and the rebalance with it."""
    result = highest_generation_claims_only(client, members, topics, config)
    if result is None or cc.rebalance_protocol(client) is not RebalanceProtocol.COOPERATIVE:
        return result
    claims = {
        m.member_id: Subscription(
            member_id=m.member_id,
            instance_id=m.instance_id,
            topics=m.subscription.topics,
            owned_partitions=m.subscription.owned_partitions,
            generation=m.subscription.generation_id,
        )
        for m in members
    }
    return None if validate_cooperative_assignment(claims, result) else result


def generation_of_last_assignment(
    client: ClassicClient, config: Any
) -> tuple[ClassicClient, tuple[Body, ...]]:
    """Before KIP-792 (Kafka 3.4) a cooperative member reported, in the cooperative-sticky
    user data, the generation of the last assignment it received
    (``CooperativeStickyAssignor.onAssignment``), not the generation it joined: a member
    whose SyncGroup failed keeps reporting the generation before it."""
    new, bodies = cc.join_group(client, config)
    join = bodies[-1]
    assert isinstance(join, JoinGroupRequest)
    if cc.rebalance_protocol(new) is not RebalanceProtocol.COOPERATIVE:
        return new, bodies
    subscription = replace(join.subscription, generation_id=new.assigned_generation)
    return new, (*bodies[:-1], replace(join, subscription=subscription))


def static_replaced_only_when_stable(
    group: ClassicGroup, req: JoinGroupRequest, reply: ReplyTo, config: Any
) -> Any:
    """KAFKA-8500: the member id of a known ``group.instance.id`` is replaced only in a
    STABLE group; in any other state a JoinGroup with an unknown member id joins as a new
    member, and the old member of the instance stays."""
    assert req.instance_id is not None
    old_id = group.static_member_id(req.instance_id)
    if old_id is None or group.status is ClassicGroupStatus.STABLE:
        return clco.join_static_member(group, req, reply, config)
    old = group.members[old_id]
    unknown = replace(group, members=group.members.set(old_id, replace(old, instance_id=None)))
    out, replies = clco.join_static_member(unknown, req, reply, config)
    kept = out.members.get(old_id)
    if kept is not None:
        out = replace(
            out, members=out.members.set(old_id, replace(kept, instance_id=old.instance_id))
        )
    return out, replies


def sticky_forgets_ownership(
    subscriptions: Mapping[str, Subscription], partitions: frozenset[TopicPartition]
) -> dict[str, Assignment]:
    """The sticky assignors read no previous ownership at all (every claim dropped, as if
    no member's subscription carried owned partitions): the constrained algorithm deals
    every partition round-robin, so partitions move between members that keep their
    subscription (KIP-54 / KIP-429 stickiness lost)."""
    return dict.fromkeys(sorted(subscriptions), EMPTY)


# --------------------------------------------------------------------------- group deletion


def delete_non_empty_group(group: Group) -> ErrorCode:
    """DeleteGroups is not refused when the group has members (``validateDeleteGroup``
    without its NON_EMPTY_GROUP check)."""
    return ErrorCode.GROUP_ID_NOT_FOUND if group.deleted else ErrorCode.NONE


def classic_delete_non_empty_group(group: ClassicGroup) -> ErrorCode:
    """A classic group is deleted in any state (``ClassicGroup.validateDeleteGroup`` without
    its NON_EMPTY_GROUP check)."""
    error = clco.classic_validate_delete_group(group)
    return ErrorCode.NONE if error is ErrorCode.NON_EMPTY_GROUP else error


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


ALSO: dict[str, tuple[tuple[str, str], ...]] = {
    "validate-stale-claims": (("classic_join_group", "generation_of_last_assignment"),),
}
"""Mutant name → the further (Rules field, function of this module) it replaces."""


def _entry(
    name: str,
    summary: str,
    bug: str,
    field: str,
    config: Any,
    *,
    killed_by: str = "",
    bmc_depth: int | None = None,
    lasso_depth: int | None = None,
    outside: str = "",
    survivor: str = "",
) -> dict[str, Any]:
    """One catalogue entry: the mutant and its known facts (``Mutant``'s fields of the same
    names)."""
    return {
        "name": name,
        "summary": summary,
        "bug": bug,
        "field": field,
        "config": config,
        "killed_by": killed_by,
        "bmc_depth": bmc_depth,
        "lasso_depth": lasso_depth,
        "outside": outside,
        "survivor": survivor,
    }


def build(make: Callable[..., Any]) -> list[Any]:
    """The catalogue: per mutant its name, summary, bug, Rules field and scenario, and what
    is known of it — the property that kills it (``killed_by``; docs/bugs.md's entry says
    the same), the depth of BMC's shortest path on its scenario (``bmc_depth``; a lasso's
    ``lasso_depth``), why
    it has no symbolic variant (``outside``), why no property kills it (``survivor``).
    Adding a mutant is this one entry, its function above and its docs/bugs.md entry."""
    rows: list[dict[str, Any]] = [
        _entry(
            "revoke-without-waiting",
            "assigns before the revocation is acknowledged",
            "KIP-848 revoke-before-assign rule",
            "reconcile",
            TWO_ON_TWO,
            killed_by="OwnedPartitionsAreHeld",
            bmc_depth=2,
        ),
        _entry(
            "ignore-partition-epochs",
            "hands out partitions not yet released",
            "KIP-848 reconciliation phase 3",
            "reconcile",
            TWO_ON_TWO,
            killed_by="NoServerError",
            bmc_depth=2,
        ),
        _entry(
            "ack-ignored",
            "a revocation acknowledgement is never taken",
            "KAFKA-16249 (revocation acknowledgement missed)",
            "reconcile",
            TWO_ON_TWO,
            killed_by="Convergence",
            lasso_depth=9,
        ),
        _entry(
            "bookkeeping-drops-pending",
            "partition epochs of assigned and pending partitions updated separately",
            "KAFKA-16147",
            "update_partition_epochs",
            CRASH_TWO,
            killed_by="HandOutOnlyReleased",
            bmc_depth=4,
        ),
        _entry(
            "no-epoch-bump-on-fence",
            "no group-epoch bump when a member is fenced or expires",
            "KAFKA-20442 neighbourhood",
            "remove_member",
            TWO_ON_TWO,
            killed_by="ValidTargetAssignment.Covers",
            bmc_depth=3,
        ),
        _entry(
            "reject-epoch-zero-rejoin",
            "a fenced member cannot rejoin with epoch 0",
            "KAFKA-19233",
            "check_member_epoch",
            LOSSY_TWO,
            killed_by="Convergence",
            lasso_depth=9,
        ),
        _entry(
            "static-replacement-keeps-both",
            "static replacement keeps the old instance too",
            "KAFKA-8500 shape",
            "replace_static_member",
            STATIC_TWO,
            killed_by="NoServerError",
            bmc_depth=3,
        ),
        _entry(
            "assignor-assigns-twice",
            "an assignor gives one partition to two members",
            "KIP-848 Assignment Process (cf. KAFKA-7026)",
            "compute_target_assignment",
            TWO_ON_TWO,
            killed_by="ValidTargetAssignment.Unique",
            bmc_depth=2,
        ),
        _entry(
            "no-bump-on-subscription-change",
            "a changed subscription does not bump the group epoch",
            "KAFKA-19891 shape",
            "should_bump_group_epoch",
            TOPICS_TWO,
            killed_by="ValidTargetAssignment.OnlySubscribed",
            bmc_depth=2,
        ),
        _entry(
            "no-bump-on-metadata-change",
            "an added partition is not noticed",
            "KIP-848 Group Epoch triggers",
            "on_metadata_change",
            TOPICS_TWO,
            killed_by="ValidTargetAssignment.Covers",
            bmc_depth=2,
        ),
        _entry(
            "accept-commit-from-unknown-member",
            "offset commits from removed members accepted",
            "zombie commits (KIP-848 OffsetCommit API)",
            "validate_offset_commit",
            COMMITTING,
            killed_by="OffsetCommitAtValidEpoch",
            bmc_depth=1,
        ),
        _entry(
            "accept-stale-commit-epoch",
            "offset commits at a stale epoch accepted",
            "KIP-848 offset fencing (KAFKA-20066 reversed)",
            "validate_offset_commit",
            COMMITTING,
            killed_by="OffsetCommitAtValidEpoch",
            bmc_depth=2,
        ),
        _entry(
            "client-acks-before-revoking",
            "the client acknowledges before it stops consuming",
            "KAFKA-20332",
            "client_build_heartbeat",
            TWO_ON_TWO,
            killed_by="OwnedPartitionsAreHeld",
            bmc_depth=5,
        ),
        _entry(
            "adopt-negative-epoch",
            "a late leave response sets epoch -1 on a joining client",
            "KAFKA-19335",
            "client_on_heartbeat_response",
            REJOIN,
            killed_by="ClientEpochMonotone",
            bmc_depth=4,
        ),
        _entry(
            "callback-ignores-abort",
            "a reconciliation is applied after its member was fenced, left or rejoined",
            "AbstractMembershipManager.maybeAbortReconciliation dropped",
            "client_complete_callback",
            MUT2_CALLBACKS,
            killed_by="OwnedPartitionsAreHeld",
            bmc_depth=6,
        ),
        _entry(
            "poll-timeout-keeps-partitions",
            "a client whose poll timer expired keeps its partitions into its rejoin",
            "AbstractMembershipManager.transitionToStale without onPartitionsLost",
            "client_build_heartbeat",
            MUT2_POLL,
            killed_by="JoiningClientOwnsNothing",
            bmc_depth=5,
        ),
        _entry(
            "strict-commit-epoch",
            "commits at an older epoch refused although the member held the partitions",
            "KAFKA-20066 (KIP-1251, Kafka 4.3)",
            "validate_offset_commit",
            COMMIT_EPOCHS,
            killed_by="HolderCommitsAccepted",
            bmc_depth=3,
        ),
        _entry(
            "stamp-request-epoch",
            "a partition's KIP-1251 assignment epoch is the member's epoch before it was assigned",
            "KIP-1251 (CurrentAssignmentBuilder stamps the target assignment epoch; KAFKA-20066)",
            "write_member",
            EPOCH_HISTORY,
            killed_by="AssignmentEpochHolderUnique",
            outside=(
                "BMC's symbolic states keep no history of the assignment epochs handed out "
                "(ghost Group.assignment_history), which AssignmentEpochHolderUnique and "
                "EpochCommitFromHolder read; prove keeps it (prove --preset MUT2_EPOCH_HISTORY "
                "--variant stamp-request-epoch)"
            ),
        ),
        _entry(
            "failover-drops-pending-revocation",
            "a coordinator failover forgets the partitions members are still revoking",
            "ConsumerGroupCurrentMemberAssignment record without PartitionsPendingRevocation",
            "rebuild_group",
            FAILOVER,
            killed_by="OwnedPartitionsAreHeld",
            bmc_depth=4,
        ),
        _entry(
            "regex-resolution-without-bump",
            "a regex resolution that changes the subscribed topics triggers no rebalance",
            "GroupMetadataManager.handleRegularExpressionsResult without the epoch bump",
            "resolve_regular_expressions",
            REGEX,
            killed_by="ValidTargetAssignment.Covers",
            bmc_depth=2,
        ),
        _entry(
            "ack-while-revoking",
            "a revocation is reported done while its offsets are still being committed",
            "ConsumerHeartbeatRequestManager reporting consumption, not currentAssignment",
            "client_build_heartbeat",
            TWO_ON_TWO,
            killed_by="RevokedBeforeReassigned",
            bmc_depth=12,
        ),
        _entry(
            "install-without-reapplying-removals",
            "an offloaded run is installed with members that left while it ran",
            "KIP-1263 Assignment Offload (removed members' assignments discarded)",
            "install_assignor_run",
            MUT2_OFFLOAD,
            killed_by="ValidTargetAssignment.OnlyMembers",
            bmc_depth=3,
        ),
        _entry(
            "two-runs-in-flight",
            "a second assignor run starts while one is in flight",
            "KIP-1263 Assignment Offload (one in-flight run per group)",
            "start_assignor_run",
            MUT2_OFFLOAD,
            killed_by="AssignorRunsInFlight.AtMostOne",
            bmc_depth=2,
        ),
        _entry(
            "install-before-static-replacement",
            "an offloaded run is installed without moving a replaced static member's entry",
            "KIP-1263 Assignment Offload (replaced static members' assignments moved); KAFKA-20292",
            "install_assignor_run",
            MUT2_OFFLOAD_STATIC,
            killed_by="ValidTargetAssignment.Covers",
            bmc_depth=4,
        ),
        _entry(
            "install-without-epoch",
            "an offloaded run is installed without bumping the assignment epoch",
            "KIP-1263 Assignment Offload; KIP-848 Assignment Epoch",
            "install_assignor_run",
            MUT2_OFFLOAD,
            killed_by="TargetEpochAdvances",
            bmc_depth=2,
        ),
        _entry(
            "sticky-without-generation",
            "the sticky assignor trusts every ownership claim, without the generation",
            "KAFKA-7026 (KIP-341)",
            "classic_arbitrate_claims",
            MUTC_STICKY,
            killed_by="NoDoubleMemberAssignment",
            bmc_depth=10,
        ),
        _entry(
            "lost-partitions-kept",
            "a member whose generation was reset keeps and reports its old partitions",
            "KAFKA-12983 / KAFKA-12984",
            "classic_join_group",
            MUTC_COOPERATIVE,
            killed_by="NoDoubleClientOwnership",
        ),
        _entry(
            "assign-without-withholding",
            "cooperative-sticky moves a partition in the round its owner revokes it",
            "KIP-429 CooperativeStickyAssignor.adjustAssignment dropped",
            "classic_leader_assignment",
            MUTC_COOPERATIVE,
            killed_by="MovesOnlyReleased",
            bmc_depth=7,
        ),
        _entry(
            "static-replace-without-rebalance",
            "a static member rejoining in COMPLETING_REBALANCE is swapped in without a rebalance",
            "KAFKA-9801",
            "classic_join_static_member",
            MUTC_STATIC,
            killed_by="Convergence",
            lasso_depth=5,
        ),
        _entry(
            "no-pending-sync-timer",
            "members that never send SyncGroup are never removed",
            "KAFKA-12890",
            "classic_rebalance_timeout",
            MUTC_STALL,
            killed_by="Convergence",
            lasso_depth=6,
        ),
        _entry(
            "expire-by-commit-time",
            "offsets expire retention after their commit, even while the group consumes them",
            "KAFKA-4682 (KIP-211)",
            "expirable_offsets",
            OFFSETS_EXPIRY,
            killed_by="NoLiveOffsetExpires",
            bmc_depth=3,
        ),
        _entry(
            "expire-while-rebalancing",
            "a rebalancing classic group expires the offsets of members that have not rejoined",
            "KAFKA-13636",
            "classic_expirable_offsets",
            CLASSIC_OFFSETS_EXPIRY,
            killed_by="NoLiveOffsetExpires",
            bmc_depth=2,
        ),
        _entry(
            "highest-generation-claims-only",
            "owned partitions honoured only from members at the highest generation",
            "KAFKA-14639",
            "classic_leader_assignment",
            MUTC_MISSED_ROUND,
            killed_by="MovesOnlyReleased",
            bmc_depth=10,
        ),
        _entry(
            "late-sync-resets-generation",
            "a member late for SyncGroup resets its generation and gives up its partitions",
            "KAFKA-13891 / KAFKA-14016",
            "classic_on_sync_response",
            MUTC_LATE_SYNC,
            killed_by="LostOnlyWhenOut",
        ),
        _entry(
            "validate-stale-claims",
            "a stale claim fails the leader's cooperative check, rebalance after rebalance",
            "KAFKA-13406 / KAFKA-13419",
            "classic_leader_assignment",
            MUTC_LATE_SYNC,
            killed_by="Convergence",
            lasso_depth=6,
        ),
        _entry(
            "sticky-forgets-ownership",
            "the sticky assignors read no previous ownership and deal partitions round-robin",
            "KIP-54 / KIP-429 stickiness (AbstractStickyAssignor previous owners)",
            "classic_arbitrate_claims",
            MUTC_LEAVE,
            killed_by="StickyAssignment",
            bmc_depth=4,
        ),
        _entry(
            "static-replaced-only-when-stable",
            "a second process of a static instance joins as another member outside STABLE",
            "KAFKA-8500",
            "classic_join_static_member",
            MUTC_TWO_PROCESSES,
            killed_by="StaticInstanceUnique",
            bmc_depth=3,
        ),
        _entry(
            "delete-non-empty-group",
            "DeleteGroups deletes a consumer group that still has members",
            "ConsumerGroup.validateDeleteGroup (NON_EMPTY_GROUP) dropped",
            "validate_delete_group",
            GROUP_DELETION,
            killed_by="GroupDeletedOnlyWhenEmpty",
            bmc_depth=2,
        ),
        _entry(
            "classic-delete-non-empty-group",
            "DeleteGroups deletes a classic group that is not Empty",
            "ClassicGroup.validateDeleteGroup (NON_EMPTY_GROUP) dropped",
            "classic_validate_delete_group",
            CLASSIC_GROUP_DELETION,
            killed_by="NoLiveOffsetExpires",
            bmc_depth=1,
        ),
        _entry(
            "install-run-after-deletion",
            "an offloaded run completing after its group was deleted is installed in the new group",
            "KIP-1263 Assignment Offload (deleted groups have their assignments discarded)",
            "install_assignor_run",
            OFFLOAD_DELETION,
            killed_by="EpochOrder.AssignmentEpoch",
            bmc_depth=4,
        ),
        _entry(
            "mixed-admits-when-disabled",
            "a consumer group admits a classic member under the migration policy 'disabled'",
            "KAFKA-20640",
            "mixed_admits_classic_join",
            MIGRATION_DISABLED,
            killed_by="MigrationPolicyHonoured",
            bmc_depth=3,
        ),
        _entry(
            "no-downgrade-on-replacement",
            "the last consumer-protocol member replaced by a classic static member: no downgrade",
            "KAFKA-17317",
            "mixed_validate_online_downgrade",
            MIXED_STATIC,
            killed_by="MigrationPolicyHonoured",
            bmc_depth=3,
        ),
        _entry(
            "downgrade-keeps-old-assignment",
            "a downgrade by static replacement never rebalances, whatever the member subscribes",
            "KAFKA-19546",
            "mixed_downgrade_rebalances",
            MIXED_STATIC_RESUBSCRIBE,
            killed_by="StableAssignmentSubscribed",
            bmc_depth=3,
        ),
        _entry(
            "classic-holder-unreleased",
            "a consumer-protocol static join is refused while a classic member holds its instance",
            "KAFKA-17228",
            "static_holder_released",
            MIXED_STATIC,
            killed_by="GroupUpgrades",
        ),
        _entry(
            "no-bump-on-assignor-change",
            "a change of the group's preferred server assignor does not bump the group epoch",
            "KAFKA-20434",
            "should_bump_group_epoch",
            MIXED_STATIC_ASSIGNOR,
            killed_by="TargetByPreferredAssignor",
            bmc_depth=3,
        ),
        _entry(
            "stale-static-mapping",
            "a member renamed to another instance id keeps its old instance id's index entry",
            "KAFKA-20747",
            "update_static_members",
            MIXED_INSTANCE_RENAME,
            killed_by="StaticIndexConsistent",
            bmc_depth=2,
        ),
    ]
    return [make(**row) for row in rows]


def mixed_admits_when_disabled(config: Any) -> bool:
    """KAFKA-20640: a classic JoinGroup to a consumer group is admitted whatever the
    migration policy, ``disabled`` included."""
    return True


def no_downgrade_on_replacement(before: Group, after: Group, config: Any) -> bool:
    """KAFKA-17317: the downgrade check runs when a member is fenced, not when a classic
    static member replaces the last consumer-protocol member (its instance id stays)."""
    replaced = any(
        m.instance_id is not None and after.static_member_id(m.instance_id) is not None
        for mid, m in before.members.items()
        if mid not in after.members
    )
    return not replaced and mco.validate_online_downgrade(before, after, config)


def downgrade_keeps_old_assignment(group: Group, replaced: Member, joining: Member) -> bool:
    """KAFKA-19546: the classic group a static replacement downgrades to keeps the replaced
    member's assignment for the joining one, without a rebalance, even when the joining
    member subscribes to other topics."""
    return False


def classic_holder_unreleased(holder: Member) -> bool:
    """KAFKA-17228: a static join may replace the holder of its instance id only after the
    holder left with -2 — which a classic member never does, so a consumer-protocol process
    of a classic member's instance is refused with UNRELEASED_INSTANCE_ID."""
    return holder.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH


def no_bump_on_assignor_change(group: Group, old: Member | None, new: Member, config: Any) -> bool:
    """KAFKA-20434: only a change of subscribed topic names bumps the group epoch; a member
    update that changes the group's preferred server assignor — a member switching
    assignors, or a static member replaced by one of the other protocol, which asks for
    another or none — leaves the old assignor's target in force."""
    old_names = co.subscribed_topics(old, group) if old is not None else frozenset()
    return co.subscribed_topics(new, group) != old_names


def stale_static_mapping(
    static_members: FrozenMap[str, str], old: Member | None, new: Member
) -> FrozenMap[str, str]:
    """KAFKA-20747: ``ConsumerGroup.updateMember`` maps the member's new instance id to its
    member id but leaves the entry of the instance id it held before: a later join with
    that instance id finds the renamed member."""
    if new.instance_id is None or static_members.get(new.instance_id) == new.member_id:
        return static_members
    return static_members.set(new.instance_id, new.member_id)
