"""The classic protocol family (model/classic/): the coordinator's JoinGroup / SyncGroup /
Heartbeat / LeaveGroup / OffsetCommit rules, the eager and cooperative clients, and the
engines on the classic presets. Work is bounded by steps and states."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from groupcheck.explore.bfs import bfs
from invariants.liveness import converged
from model import system
from model.actions import (
    Action,
    Bounce,
    DeliverMessage,
    SendJoinGroup,
    SendSyncGroup,
    Subscribe,
)
from model.classic import coordinator as co
from model.classic.client import rebalance_protocol
from model.classic.messages import (
    ClassicSubscription,
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from model.classic.presets import (
    CLASSIC_COOPERATIVE,
    CLASSIC_EAGER,
    CLASSIC_STATIC,
    MUTC_TWO_PROCESSES,
    UPGRADE_ONE_BOUNCE,
)
from model.classic.records import ClassicMember, ClassicState, ReplyTo, new_classic_group
from model.config import ClientSpec, Config
from model.ids import FrozenMap
from model.presets import preset
from model.records import OffsetCommitRequest
from model.status import (
    ClassicClientStatus,
    ClassicGroupStatus,
    ConfigError,
    ErrorCode,
    RebalanceProtocol,
)
from tests import counterexamples

SUB = ClassicSubscription(topics=frozenset({"foo"}))
A = ReplyTo("A", 0, 0)
B = ReplyTo("B", 0, 0)


def _join(member_id: str = "", instance_id: str | None = None) -> JoinGroupRequest:
    return JoinGroupRequest(
        member_id=member_id,
        instance_id=instance_id,
        protocols=("range",),
        subscription=SUB,
        rebalance_timeout_ms=300000,
        session_timeout_ms=45000,
    )


def _settle(state: ClassicState, config: Config, bound: int = 500) -> ClassicState:
    """Take the first enabled progress action until none is left."""
    for _ in range(bound):
        acts = [a for a in system.enabled(state, config) if not a.PERTURBATION]
        if not acts:
            return state
        new = system.step(state, acts[0], config)
        assert isinstance(new, ClassicState)
        state = new
    raise AssertionError("did not settle")


def _take(state: ClassicState, config: Config, pick: Callable[[Action], bool]) -> ClassicState:
    action = next(a for a in system.enabled(state, config) if pick(a))
    new = system.step(state, action, config)
    assert isinstance(new, ClassicState)
    return new


# --------------------------------------------------------------------------- coordinator


def test_a_first_dynamic_join_is_answered_member_id_required() -> None:
    group, replies = co.handle_join_group(new_classic_group(), _join(), A, CLASSIC_EAGER)
    ((to, resp),) = replies
    assert to == A
    assert isinstance(resp, JoinGroupResponse)
    assert resp.error_code is ErrorCode.MEMBER_ID_REQUIRED
    assert resp.member_id in group.pending_members
    assert not group.members


def test_a_join_before_version_4_adds_a_dynamic_member_at_once() -> None:
    """``classicGroupJoinNewDynamicMember``: without ``requiresKnownMemberId`` (JoinGroup
    v0-v3) there is no MEMBER_ID_REQUIRED round; a lone member's join phase completes."""
    old = replace(_join(), require_known_member_id=False)
    group, replies = co.handle_join_group(new_classic_group(), old, A, CLASSIC_EAGER)
    ((_, resp),) = replies
    assert isinstance(resp, JoinGroupResponse)
    assert resp.error_code is ErrorCode.NONE
    assert not group.pending_members
    assert list(group.members) == [resp.member_id] == [group.leader_id]
    assert group.status is ClassicGroupStatus.COMPLETING_REBALANCE


def test_a_leave_without_member_id_removes_the_holder_of_the_instance() -> None:
    """``classicGroupLeaveToClassicGroup``: a LeaveGroup naming only a ``group.instance.id``
    removes its static member (KIP-345); an instance id nobody holds is UNKNOWN_MEMBER_ID."""
    state = system.initial(CLASSIC_STATIC)
    assert isinstance(state, ClassicState)
    holder = state.group.static_member_id("a")
    assert holder is not None
    leave = LeaveGroupRequest("", "a")
    group, replies = co.handle_leave_group(state.group, leave, A, CLASSIC_STATIC)
    assert holder not in group.members
    assert replies[0] == (A, LeaveGroupResponse(ErrorCode.NONE))
    unknown = LeaveGroupRequest("", "no-such-instance")
    same, replies = co.handle_leave_group(state.group, unknown, A, CLASSIC_STATIC)
    assert same == state.group
    assert replies == ((A, LeaveGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID)),)


def test_the_join_phase_completes_when_every_member_rejoined() -> None:
    group, _ = co.handle_join_group(new_classic_group(), _join(), A, CLASSIC_EAGER)
    (mid,) = group.pending_members
    group, replies = co.handle_join_group(group, _join(mid), A, CLASSIC_EAGER)
    assert group.status is ClassicGroupStatus.COMPLETING_REBALANCE
    assert group.generation_id == 1
    assert group.leader_id == mid
    ((_, resp),) = replies
    assert isinstance(resp, JoinGroupResponse)
    assert resp.leader == mid
    assert [m.member_id for m in resp.members] == [mid]


def _formed_group() -> co.ClassicGroup:
    group, _ = co.handle_join_group(new_classic_group(), _join(), A, CLASSIC_EAGER)
    (a,) = group.pending_members
    group, _ = co.handle_join_group(group, _join(a), A, CLASSIC_EAGER)
    assignments = FrozenMap({a: frozenset({("foo", 0), ("foo", 1)})})
    sync = SyncGroupRequest(a, 1, None, "range", assignments)
    group, replies = co.handle_sync_group(group, sync, A, CLASSIC_EAGER)
    ((_, resp),) = replies
    assert isinstance(resp, SyncGroupResponse)
    assert resp.assignment == assignments[a]
    assert group.status is ClassicGroupStatus.STABLE
    return group


def test_heartbeats_are_fenced_by_generation_and_see_a_rebalance() -> None:
    group = _formed_group()
    (a,) = group.members
    ok = co.handle_heartbeat(group, HeartbeatRequest(a, 1, None), CLASSIC_EAGER)
    assert ok.error_code is ErrorCode.NONE
    old = co.handle_heartbeat(group, HeartbeatRequest(a, 0, None), CLASSIC_EAGER)
    assert old.error_code is ErrorCode.ILLEGAL_GENERATION
    unknown = co.handle_heartbeat(group, HeartbeatRequest("X.m1", 1, None), CLASSIC_EAGER)
    assert unknown.error_code is ErrorCode.UNKNOWN_MEMBER_ID
    group, _ = co.handle_join_group(group, _join(), B, CLASSIC_EAGER)
    (b,) = group.pending_members
    group, _ = co.handle_join_group(group, _join(b), B, CLASSIC_EAGER)
    assert group.status is ClassicGroupStatus.PREPARING_REBALANCE
    busy = co.handle_heartbeat(group, HeartbeatRequest(a, 1, None), CLASSIC_EAGER)
    assert busy.error_code is ErrorCode.REBALANCE_IN_PROGRESS


def test_offset_commits_are_fenced_by_generation() -> None:
    group = _formed_group()
    (a,) = group.members
    tp = frozenset({("foo", 0)})
    assert co.validate_offset_commit(group, OffsetCommitRequest(a, 1, tp), CLASSIC_EAGER) is (
        ErrorCode.NONE
    )
    stale = co.validate_offset_commit(group, OffsetCommitRequest(a, 0, tp), CLASSIC_EAGER)
    assert stale is ErrorCode.ILLEGAL_GENERATION
    gone = co.validate_offset_commit(group, OffsetCommitRequest("Z", 1, tp), CLASSIC_EAGER)
    assert gone is ErrorCode.UNKNOWN_MEMBER_ID
    syncing = replace(group, status=ClassicGroupStatus.COMPLETING_REBALANCE)
    busy = co.validate_offset_commit(syncing, OffsetCommitRequest(a, 1, tp), CLASSIC_EAGER)
    assert busy is ErrorCode.REBALANCE_IN_PROGRESS


def test_a_join_without_a_shared_protocol_is_inconsistent() -> None:
    group = _formed_group()
    other = replace(_join(), protocols=("roundrobin",))
    _, replies = co.handle_join_group(group, other, B, CLASSIC_EAGER)
    ((_, resp),) = replies
    assert isinstance(resp, JoinGroupResponse)
    assert resp.error_code is ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_the_protocol_most_members_prefer_is_selected() -> None:
    group = _formed_group()
    (a,) = group.members
    two = replace(_join(), protocols=("roundrobin", "range"))
    group = replace(
        group,
        members=group.members.set(a, replace(group.members[a], protocols=("roundrobin", "range"))),
    )
    group, _ = co.handle_join_group(group, two, B, CLASSIC_EAGER)
    (b,) = group.pending_members
    group, _ = co.handle_join_group(group, replace(two, member_id=b), B, CLASSIC_EAGER)
    assert co.select_protocol(group) == "roundrobin"


def test_a_static_member_is_replaced_in_a_stable_group_without_a_rebalance() -> None:
    config = CLASSIC_STATIC
    state = system.initial(config)
    assert isinstance(state, ClassicState)
    group = state.group
    old = group.static_member_id("a")
    assert old is not None
    join = replace(_join(instance_id="a"), protocols=("cooperative-sticky",))
    new_group, replies = co.handle_join_group(group, join, A, config)
    assert new_group.status is ClassicGroupStatus.STABLE
    assert new_group.generation_id == group.generation_id
    new = new_group.static_member_id("a")
    assert new is not None
    assert new != old
    assert new_group.members[new].assignment == group.members[old].assignment
    assert any(isinstance(r, JoinGroupResponse) and r.member_id == new for _, r in replies)


def test_a_static_member_replaced_while_syncing_starts_a_rebalance() -> None:
    state = system.initial(CLASSIC_STATIC)
    assert isinstance(state, ClassicState)
    syncing = replace(state.group, status=ClassicGroupStatus.COMPLETING_REBALANCE)
    join = replace(_join(instance_id="a"), protocols=("cooperative-sticky",))
    group, _ = co.handle_join_group(syncing, join, A, CLASSIC_STATIC)
    assert group.status is ClassicGroupStatus.PREPARING_REBALANCE


def test_the_join_timer_keeps_a_static_member_that_did_not_rejoin() -> None:
    """``completeClassicGroupJoin`` removes at the join timer only the dynamic members that
    did not rejoin: a static follower stays in the next generation, unanswered and awaited
    in the SyncGroup phase; a dynamic one is removed by its timer."""
    a, b = "A.m1", "B.m1"
    members = {
        mid: ClassicMember(
            member_id=mid,
            instance_id=inst,
            protocols=("range",),
            subscription=SUB,
            rebalance_timeout_ms=300000,
            process=reply,
        )
        for mid, inst, reply in ((a, "a", A), (b, "b", B))
    }
    stable = replace(
        new_classic_group(),
        status=ClassicGroupStatus.STABLE,
        generation_id=2,
        protocol_name="range",
        leader_id=a,
        members=FrozenMap(members),
    )
    # The leader rejoins; the static follower does not: the phase waits for it.
    group, replies = co.handle_join_group(stable, _join(a, "a"), A, CLASSIC_EAGER)
    assert group.status is ClassicGroupStatus.PREPARING_REBALANCE
    assert not replies
    assert co.rebalance_timer_fires(group, b)
    after, replies = co.rebalance_timeout(group, b, CLASSIC_EAGER)
    assert after.status is ClassicGroupStatus.COMPLETING_REBALANCE
    assert after.generation_id == 3
    assert set(after.members) == {a, b}
    assert after.leader_id == a
    assert after.pending_sync == {a, b}
    ((to, resp),) = replies
    assert to == A
    assert isinstance(resp, JoinGroupResponse)
    assert {m.member_id for m in resp.members} == {a, b}
    # The static leader not rejoining: the follower that did leads the next generation.
    group2, _ = co.prepare_rebalance(stable, CLASSIC_EAGER)
    group2, _ = co.handle_join_group(group2, _join(b, "b"), B, CLASSIC_EAGER)
    assert group2.status is ClassicGroupStatus.PREPARING_REBALANCE
    led, _ = co.rebalance_timeout(group2, a, CLASSIC_EAGER)
    assert set(led.members) == {a, b}
    assert led.leader_id == b
    # Nobody rejoined: the timer changes nothing and is not enabled.
    idle = replace(
        group2,
        members=FrozenMap((m, replace(x, awaiting_join=None)) for m, x in group2.members.items()),
    )
    assert not co.rebalance_timer_fires(idle, a)
    assert co.rebalance_timeout(idle, a, CLASSIC_EAGER) == (idle, ())
    # A dynamic member that did not rejoin is removed by its timer.
    dynamic = replace(
        group,
        members=group.members.set(b, replace(group.members[b], instance_id=None)),
    )
    gone, _ = co.rebalance_timeout(dynamic, b, CLASSIC_EAGER)
    assert set(gone.members) == {a}


def test_a_second_process_of_an_instance_replaces_the_first_while_preparing() -> None:
    """KAFKA-8500's fix: a static JoinGroup with an unknown member id replaces the instance's
    member in a rebalancing group too; the old process is fenced and stops consuming."""
    config = MUTC_TWO_PROCESSES
    state = system.initial(config)
    assert isinstance(state, ClassicState)
    old = state.group.static_member_id("a")
    assert old is not None
    preparing = replace(state.group, status=ClassicGroupStatus.PREPARING_REBALANCE)
    group, _ = co.handle_join_group(preparing, _join(instance_id="a"), A, config)
    assert [m for m in group.members.values() if m.instance_id == "a"] == [
        group.members[group.static_member_id("a") or ""]
    ]
    assert old not in group.members
    # End to end: A2 starts while C's join rebalances the group; A ends fenced.
    for pick in (
        lambda a: isinstance(a, Subscribe) and a.client == "C",
        lambda a: isinstance(a, SendJoinGroup) and a.client == "C",
        lambda a: isinstance(a, DeliverMessage) and a.message.client == "C",
        lambda a: isinstance(a, DeliverMessage) and a.message.client == "C",
        lambda a: isinstance(a, SendJoinGroup) and a.client == "C",
        lambda a: isinstance(a, DeliverMessage) and a.message.client == "C",
        lambda a: isinstance(a, Subscribe) and a.client == "A2",
        lambda a: isinstance(a, SendJoinGroup) and a.client == "A2",
    ):
        state = _take(state, config, pick)
    assert state.group.status is ClassicGroupStatus.PREPARING_REBALANCE
    state = _settle(state, config)
    assert sum(m.instance_id == "a" for m in state.group.members.values()) == 1
    assert state.client("A").fatal_error is ErrorCode.FENCED_INSTANCE_ID
    assert not state.client("A").owned
    assert converged(state)


def test_only_classic_configs_run_two_processes_of_one_instance() -> None:
    clients = (
        ClientSpec("A", ("foo",), instance_id="a"),
        ClientSpec("B", ("foo",), instance_id="a"),
    )
    with pytest.raises(ConfigError, match=r"share a group\.instance\.id"):
        Config(name="x", topics=(("foo", 2),), clients=clients)
    Config(name="x", protocol="classic", topics=(("foo", 2),), clients=clients)


# --------------------------------------------------------------------------- clients


def test_the_rebalance_protocol_is_the_best_every_assignor_supports() -> None:
    state = system.initial(replace(CLASSIC_EAGER, warm_start=False))
    assert isinstance(state, ClassicState)
    client = state.client("A")
    assert rebalance_protocol(client) is RebalanceProtocol.EAGER
    coop = replace(client, assignors=("cooperative-sticky",))
    assert rebalance_protocol(coop) is RebalanceProtocol.COOPERATIVE
    mixed = replace(client, assignors=("range", "cooperative-sticky"))
    assert rebalance_protocol(mixed) is RebalanceProtocol.EAGER
    old = replace(coop, kip429=False)
    assert rebalance_protocol(old) is RebalanceProtocol.EAGER


def _two_members(config: Config) -> ClassicState:
    state = _settle(system.initial(config), config)  # type: ignore[arg-type]
    return _take(state, config, lambda a: isinstance(a, Subscribe))


def test_an_eager_member_revokes_everything_before_it_rejoins() -> None:
    state = _two_members(CLASSIC_EAGER)
    assert state.client("A").owned == frozenset({("foo", 0), ("foo", 1)})
    for _ in range(50):
        acts = system.enabled(state, CLASSIC_EAGER)
        if SendJoinGroup("A") in acts:
            state = _take(state, CLASSIC_EAGER, lambda a: a == SendJoinGroup("A"))
            break
        state = _take(state, CLASSIC_EAGER, lambda a: not a.PERTURBATION)
    assert state.client("A").owned == frozenset()
    state = _settle(state, CLASSIC_EAGER)
    assert converged(state)
    assert state.client("A").owned | state.client("B").owned == {("foo", 0), ("foo", 1)}


def test_a_cooperative_member_keeps_its_partitions_and_revokes_in_a_follow_up() -> None:
    config = CLASSIC_COOPERATIVE
    state = _two_members(config)
    owned_before = state.client("A").owned
    generations: list[int] = []
    kept_throughout = True
    for _ in range(200):
        acts = [a for a in system.enabled(state, config) if not a.PERTURBATION]
        if not acts:
            break
        new = system.step(state, acts[0], config)
        assert isinstance(new, ClassicState)
        a_now = new.client("A")
        generations.append(new.group.generation_id)
        if a_now.generation_id < 0 or (
            new.group.generation_id <= 3 and not a_now.owned & owned_before
        ):
            kept_throughout = False
        state = new
    assert converged(state)
    assert kept_throughout
    # B's join, then the follow-up rebalance after A revoked a partition.
    assert state.group.generation_id - generations[0] >= 2
    assert len(state.client("A").owned) == len(state.client("B").owned) == 1


# --------------------------------------------------------------------------- configs


def test_classic_configs_refuse_consumer_options() -> None:
    with pytest.raises(ConfigError, match="consumer-protocol option"):
        replace(CLASSIC_EAGER, report_pending_additions=True)
    with pytest.raises(ConfigError, match="names assignor 'uniform'"):
        replace(
            CLASSIC_EAGER,
            clients=(ClientSpec("A", ("foo",), assignors=("uniform",)),),
        )
    with pytest.raises(ConfigError, match="not modelled for the classic protocol"):
        replace(CLASSIC_EAGER, perturbations=frozenset({"CoordinatorFailover"}))
    with pytest.raises(ConfigError, match="classic-protocol"):
        replace(preset("TINY"), warm_start=True)


# --------------------------------------------------------------------------- engines

PINNED = {"CLASSIC_EAGER": 7354, "CLASSIC_COOPERATIVE": 11216, "CLASSIC_STATIC": 11087}
"""Distinct states of the classic presets (BFS, no symmetry reduction): a change to the
classic model's rules shows up here."""


@pytest.mark.parametrize("name", sorted(PINNED))
def test_classic_presets_are_clean_and_pinned(name: str) -> None:
    result = bfs(preset(name))
    assert result.result == "ok", (result.property, result.message, result.missed_witnesses)
    assert result.exhausted
    assert result.distinct_states == PINNED[name]


def test_the_upgrade_in_one_bounce_double_assigns_a_partition() -> None:
    result = bfs(UPGRADE_ONE_BOUNCE)
    assert result.result == "violation"
    assert result.property == "MovesOnlyReleased"
    assert result.path is not None
    # The path the other tests replay instead of searching again (tests/counterexamples.py).
    assert result.path.encode() == counterexamples.UPGRADE_ONE_BOUNCE
    assert any(isinstance(a, Bounce) for a in result.path.actions)
    final = result.path.final()
    assert isinstance(final, ClassicState)
    # The bounced member follows COOPERATIVE, the leader is still on the old byte code.
    assert rebalance_protocol(final.client("B")) is RebalanceProtocol.COOPERATIVE
    assert not final.client("A").kip429


def test_the_upgrade_in_two_bounces_is_safe_within_its_first_bounces() -> None:
    config = preset("UPGRADE_TWO_BOUNCES")
    result = bfs(replace(config, max_perturbations=2))
    assert result.property is None, (result.property, result.message)
    assert result.exhausted
    assert result.distinct_states == 19248


def test_a_classic_sync_is_its_own_step() -> None:
    config = replace(CLASSIC_EAGER, warm_start=False)
    state = system.initial(config)
    assert isinstance(state, ClassicState)
    for _ in range(20):
        if state.client("A").status is ClassicClientStatus.COMPLETING_REBALANCE:
            break
        state = _take(state, config, lambda a: not a.PERTURBATION)
    assert state.client("A").status is ClassicClientStatus.COMPLETING_REBALANCE
    assert state.client("A").leader
    assert SendSyncGroup("A") in system.enabled(state, config)
    state = _take(state, config, lambda a: a == SendSyncGroup("A"))
    (request,) = (m.body for m in state.network if m.to_coordinator)
    assert isinstance(request, SyncGroupRequest)
    assert request.assignments["A.m1"] == frozenset({("foo", 0), ("foo", 1)})
