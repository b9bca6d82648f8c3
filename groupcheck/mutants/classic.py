"""The classic protocol's mutants — rules of the classic group coordinator
(``ClassicGroup``, ``GroupMetadataManager``'s classic handlers), of its clients
(``ConsumerCoordinator``, ``AbstractCoordinator``) and of the client-side assignors
(``AbstractStickyAssignor``, ``CooperativeStickyAssignor``) — and the two offset-expiry
mutants (KIP-211: the consumer group's and the classic group's). Each is declared at its
function with ``@mutant(...)`` (``groupcheck.mutants.registry``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from groupcheck.mutants.registry import Registry
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
from model.presets import (
    CLASSIC_OFFSETS_EXPIRY,
    MUTC_COOPERATIVE,
    MUTC_LATE_SYNC,
    MUTC_LEAVE,
    MUTC_MISSED_ROUND,
    MUTC_STALL,
    MUTC_STATIC,
    MUTC_STICKY,
    MUTC_TWO_PROCESSES,
    OFFSETS_EXPIRY,
)
from model.records import Body, Group, OffsetCommitRequest, TopicMetadata
from model.status import ClassicGroupStatus, ErrorCode, RebalanceProtocol

REGISTRY = Registry()
mutant = REGISTRY.mutant


# ----------------------------------------------------------------------------- the classic protocol


@mutant(
    name="sticky-without-generation",
    summary="the sticky assignor trusts every ownership claim, without the generation",
    bug="KAFKA-7026 (KIP-341)",
    field="classic_arbitrate_claims",
    config=MUTC_STICKY,
    killed_by="NoDoubleMemberAssignment",
    bmc_depth=10,
)
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


@mutant(
    name="lost-partitions-kept",
    summary="a member whose generation was reset keeps and reports its old partitions",
    bug="KAFKA-12983 / KAFKA-12984",
    field="classic_join_group",
    config=MUTC_COOPERATIVE,
    killed_by="NoDoubleClientOwnership",
)
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


@mutant(
    name="assign-without-withholding",
    summary="cooperative-sticky moves a partition in the round its owner revokes it",
    bug="KIP-429 CooperativeStickyAssignor.adjustAssignment dropped",
    field="classic_leader_assignment",
    config=MUTC_COOPERATIVE,
    killed_by="MovesOnlyReleased",
    bmc_depth=7,
)
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


@mutant(
    name="static-replace-without-rebalance",
    summary="a static member rejoining in COMPLETING_REBALANCE is swapped in without a rebalance",
    bug="KAFKA-9801",
    field="classic_join_static_member",
    config=MUTC_STATIC,
    killed_by="Convergence",
    lasso_depth=5,
)
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


@mutant(
    name="no-pending-sync-timer",
    summary="members that never send SyncGroup are never removed",
    bug="KAFKA-12890",
    field="classic_rebalance_timeout",
    config=MUTC_STALL,
    killed_by="Convergence",
    lasso_depth=6,
)
def no_pending_sync_timer(group: ClassicGroup, member_id: str, config: Any) -> Any:
    """KAFKA-12890: no timer removes members that joined but never sent SyncGroup; a
    member that heartbeats without syncing keeps the group in COMPLETING_REBALANCE."""
    if group.status is ClassicGroupStatus.COMPLETING_REBALANCE:
        return group, ()
    return clco.rebalance_timeout(group, member_id, config)


# -------------------------------------------------------------------------- offset expiry (KIP-211)


@mutant(
    name="expire-by-commit-time",
    summary="offsets expire retention after their commit, even while the group consumes them",
    bug="KAFKA-4682 (KIP-211)",
    field="expirable_offsets",
    config=OFFSETS_EXPIRY,
    killed_by="NoLiveOffsetExpires",
    bmc_depth=3,
)
def expire_by_commit_time(group: Group, topics: Any) -> frozenset[TopicPartition]:
    """KAFKA-4682: every offset expires retention after its commit, whatever the group
    does (before KIP-211)."""
    return frozenset(group.committed_offsets)


@mutant(
    name="expire-while-rebalancing",
    summary="a rebalancing classic group expires the offsets of members that have not rejoined",
    bug="KAFKA-13636",
    field="classic_expirable_offsets",
    config=CLASSIC_OFFSETS_EXPIRY,
    killed_by="NoLiveOffsetExpires",
    bmc_depth=2,
)
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


# ----------------------------------------------------------------------- classic assignors, clients


@mutant(
    name="highest-generation-claims-only",
    summary="owned partitions honoured only from members at the highest generation",
    bug="KAFKA-14639",
    field="classic_leader_assignment",
    config=MUTC_MISSED_ROUND,
    killed_by="MovesOnlyReleased",
    bmc_depth=10,
)
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


@mutant(
    name="late-sync-resets-generation",
    summary="a member late for SyncGroup resets its generation and gives up its partitions",
    bug="KAFKA-13891 / KAFKA-14016",
    field="classic_on_sync_response",
    config=MUTC_LATE_SYNC,
    killed_by="LostOnlyWhenOut",
)
def late_sync_resets_generation(
    client: ClassicClient, resp: SyncGroupResponse, config: Any
) -> tuple[ClassicClient, OffsetCommitRequest | None]:
    """KAFKA-13891, reverted as KAFKA-14016: a SyncGroup answered REBALANCE_IN_PROGRESS (the
    member was late for the SyncGroup phase) resets the generation, as ILLEGAL_GENERATION
    does: the member gives up its partitions as lost before it rejoins."""
    if resp.error_code is ErrorCode.REBALANCE_IN_PROGRESS:
        resp = replace(resp, error_code=ErrorCode.ILLEGAL_GENERATION)
    return cc.on_sync_response(client, resp, config)


# The second rule of validate-stale-claims below (its ``also``): KAFKA-13406 took both.
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


@mutant(
    name="validate-stale-claims",
    summary="a stale claim fails the leader's cooperative check, rebalance after rebalance",
    bug="KAFKA-13406 / KAFKA-13419",
    field="classic_leader_assignment",
    config=MUTC_LATE_SYNC,
    killed_by="Convergence",
    lasso_depth=6,
    also=(("classic_join_group", generation_of_last_assignment),),
)
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


@mutant(
    name="sticky-forgets-ownership",
    summary="the sticky assignors read no previous ownership and deal partitions round-robin",
    bug="KIP-54 / KIP-429 stickiness (AbstractStickyAssignor previous owners)",
    field="classic_arbitrate_claims",
    config=MUTC_LEAVE,
    killed_by="StickyAssignment",
    bmc_depth=4,
)
def sticky_forgets_ownership(
    subscriptions: Mapping[str, Subscription], partitions: frozenset[TopicPartition]
) -> dict[str, Assignment]:
    """The sticky assignors read no previous ownership at all (every claim dropped, as if
    no member's subscription carried owned partitions): the constrained algorithm deals
    every partition round-robin, so partitions move between members that keep their
    subscription (KIP-54 / KIP-429 stickiness lost)."""
    return dict.fromkeys(sorted(subscriptions), EMPTY)


@mutant(
    name="static-replaced-only-when-stable",
    summary="a second process of a static instance joins as another member outside STABLE",
    bug="KAFKA-8500",
    field="classic_join_static_member",
    config=MUTC_TWO_PROCESSES,
    killed_by="StaticInstanceUnique",
    bmc_depth=3,
)
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
