"""Mixed groups (KIP-848 "Online Migration"): the translated classic APIs, the upgrade and
downgrade conversions, the migration policy, and the mixed presets explored to the end."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable

import pytest

from groupcheck.explore.bfs import bfs
from invariants.liveness import converged
from invariants.snapshot import assignor_outdated
from model import system
from model.actions import (
    Action,
    Crash,
    DeliverMessage,
    Leave,
    SendHeartbeat,
    SessionTimeout,
    Subscribe,
)
from model.classic.messages import (
    ClassicSubscription,
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    SyncGroupRequest,
)
from model.classic.records import ClassicClient, ClassicGroup, ClassicMember, ReplyTo
from model.config import ClientSpec, Config
from model.ids import FrozenMap
from model.migration import coordinator as mco
from model.migration.presets import (
    MIGRATION_DISABLED,
    MIGRATION_ROUNDTRIP,
    MIGRATION_UPGRADE,
    MIXED_STATIC,
)
from model.migration.records import MixedState
from model.presets import STATIC
from model.records import (
    Client,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Group,
    Member,
)
from model.status import (
    ClassicClientStatus,
    ClassicGroupStatus,
    ClientStatus,
    ConfigError,
    ErrorCode,
    MemberState,
)

F0, F1 = ("foo", 0), ("foo", 1)
BOTH = frozenset({F0, F1})


def _config(
    policy: str = "bidirectional", assignors: tuple[str, ...] = ("cooperative-sticky",)
) -> Config:
    return dataclasses.replace(
        MIGRATION_UPGRADE,
        name="T",
        migration_policy=policy,
        clients=(
            ClientSpec("A", ("foo",), group_protocol="classic", assignors=assignors),
            ClientSpec("B", ("foo",), group_protocol="consumer", subscribed=False),
        ),
    )  # type: ignore[arg-type]


def _progress(
    state: MixedState, config: Config, until: Callable[[MixedState], bool], limit: int = 200
) -> tuple[MixedState, list[MixedState]]:
    """Take enabled progress actions, in turn (a fair schedule: the i-th step takes the
    i-th enabled action modulo their number), until ``until`` holds (every state kept)."""
    seen = [state]
    for i in range(limit):
        if until(state):
            return state, seen
        acts = [a for a in system.enabled(state, config) if not a.PERTURBATION]
        assert acts, "stuck before the condition held"
        state = system.step(state, acts[i % len(acts)], config)  # type: ignore[assignment]
        seen.append(state)
    raise AssertionError("condition not reached")


def _quiet(state: MixedState, config: Config) -> bool:
    """Converged (``invariants.liveness.converged``) with B, if subscribed, in the group."""
    b = state.client("B")
    out = (ClientStatus.UNSUBSCRIBED, ClientStatus.FATAL)
    joined = b.status in out or b.member_id in state.group.members
    return converged(state) and joined


def _classic_group_formed(config: Config) -> MixedState:
    s0 = system.initial(config)
    assert isinstance(s0, MixedState)
    state, _ = _progress(s0, config, lambda s: _quiet(s, config))
    group = state.group
    assert isinstance(group, ClassicGroup)
    assert group.status is ClassicGroupStatus.STABLE
    return state


def _classic_group(generation: int = 3) -> ClassicGroup:
    member = ClassicMember(
        member_id="A.m1",
        instance_id=None,
        protocols=("cooperative-sticky",),
        subscription=ClassicSubscription(frozenset({"foo"})),
        rebalance_timeout_ms=300000,
        assignment=BOTH,
        process=ReplyTo("A", 0, 0),
    )
    return ClassicGroup(
        status=ClassicGroupStatus.STABLE,
        generation_id=generation,
        protocol_name="cooperative-sticky",
        leader_id="A.m1",
        members=FrozenMap({"A.m1": member}),
        committed_offsets=FrozenMap(),
    )


# --------------------------------------------------------------------------- rules


def test_from_classic_group_keeps_generation_and_assignment() -> None:
    group = mco.from_classic_group(_classic_group(3))
    assert (group.group_epoch, group.assignment_epoch) == (3, 3)
    member = group.members["A.m1"]
    assert member.state is MemberState.STABLE
    assert (member.member_epoch, member.assigned_partitions) == (3, BOTH)
    assert group.target_assignment["A.m1"] == BOTH
    assert member.classic is not None
    assert member.classic.supported_protocols == ("cooperative-sticky",)
    assert member.classic.process == ("A", 0)
    assert dict(group.partition_epochs) == {F0: 3, F1: 3}


@pytest.mark.parametrize(
    ("policy", "upgrade", "downgrade", "classic_join"),
    [
        ("bidirectional", True, True, True),
        ("upgrade", True, False, True),
        ("downgrade", False, True, True),
        ("disabled", False, False, False),
    ],
)
def test_migration_policy(policy: str, upgrade: bool, downgrade: bool, classic_join: bool) -> None:
    config = _config(policy)
    assert mco.validate_online_upgrade(_classic_group(), config) is upgrade
    assert mco.downgrade_enabled(config) is downgrade
    assert mco.admits_classic_join(config) is classic_join


def _join(member_id: str, owned: frozenset[tuple[str, int]] = frozenset()) -> JoinGroupRequest:
    return JoinGroupRequest(
        member_id=member_id,
        instance_id=None,
        protocols=("cooperative-sticky",),
        subscription=ClassicSubscription(frozenset({"foo"}), owned_partitions=owned),
        rebalance_timeout_ms=300000,
        session_timeout_ms=45000,
    )


def _consumer_group_with_b(config: Config) -> Group:
    """A consumer group whose only member B holds both partitions at epoch 1."""
    from model.consumer import coordinator as co

    group = mco.new_consumer_group(_classic_group(), config)
    req = ConsumerGroupHeartbeatRequest(
        member_id="B",
        member_epoch=0,
        rebalance_timeout_ms=300000,
        subscribed_topic_names=frozenset({"foo"}),
        topic_partitions=frozenset(),
    )
    topics = system.initial(config).topics
    group, response = co.handle_consumer_group_heartbeat(group, topics, req, config)
    assert response.error_code is ErrorCode.NONE
    assert response.assignment == BOTH
    return group


def _with_members(group: Group, *members: Member) -> Group:
    """``group`` with exactly ``members`` (their instance ids in the static-member index)."""
    from model.records import static_member_index

    stored = FrozenMap((m.member_id, m) for m in members)
    return dataclasses.replace(group, members=stored, static_members=static_member_index(stored))


def test_classic_join_to_a_consumer_group() -> None:
    config = _config()
    group = _consumer_group_with_b(config)
    topics = system.initial(config).topics
    reply = ReplyTo("A", 0, 0)
    g1, issued, replies = mco.handle_classic_join(
        group, topics, _join(""), reply, FrozenMap(), config
    )
    assert g1 == group
    assert replies[0][1].error_code is ErrorCode.MEMBER_ID_REQUIRED
    member_id = replies[0][1].member_id
    assert isinstance(replies[0][1], JoinGroupResponse)
    assert member_id == "A.m1"
    g2, _, replies = mco.handle_classic_join(group, topics, _join(member_id), reply, issued, config)
    response = replies[0][1]
    assert isinstance(response, JoinGroupResponse)
    assert response.error_code is ErrorCode.NONE
    member = g2.members[member_id]
    # The new member waits for a partition B still holds: its generation is its epoch.
    assert g2.group_epoch == group.group_epoch + 1
    assert response.generation_id == member.member_epoch == g2.assignment_epoch
    assert response.leader == ""
    assert response.protocol_name == "cooperative-sticky"
    assert member.state is MemberState.UNRELEASED_PARTITIONS
    assert not member.assigned_partitions
    # Its heartbeat: nothing new while it waits on B; its SyncGroup: what it is assigned.
    hb = mco.handle_classic_heartbeat(
        g2, HeartbeatRequest(member_id, member.member_epoch, None), config
    )
    assert hb.error_code is ErrorCode.NONE
    stale = mco.handle_classic_heartbeat(g2, HeartbeatRequest(member_id, 0, None), config)
    assert stale.error_code is ErrorCode.ILLEGAL_GENERATION
    sync = mco.handle_classic_sync(
        g2, SyncGroupRequest(member_id, member.member_epoch, None, "cooperative-sticky"), config
    )
    assert sync.error_code is ErrorCode.NONE
    assert sync.assignment == frozenset()


def test_classic_heartbeat_asks_a_member_behind_the_group_epoch_to_rejoin() -> None:
    config = _config()
    group = mco.from_classic_group(_classic_group(3))
    assert mco.handle_classic_heartbeat(
        group, HeartbeatRequest("A.m1", 3, None), config
    ).error_code is (ErrorCode.NONE)
    bumped = dataclasses.replace(group, group_epoch=4)
    hb = mco.handle_classic_heartbeat(bumped, HeartbeatRequest("A.m1", 3, None), config)
    assert hb.error_code is ErrorCode.REBALANCE_IN_PROGRESS
    sync = mco.handle_classic_sync(
        bumped, SyncGroupRequest("A.m1", 3, None, "cooperative-sticky"), config
    )
    assert sync.error_code is ErrorCode.REBALANCE_IN_PROGRESS
    unknown = mco.handle_classic_heartbeat(bumped, HeartbeatRequest("X", 3, None), config)
    assert unknown.error_code is ErrorCode.UNKNOWN_MEMBER_ID


def test_policy_disabled_refuses_a_classic_join_to_a_consumer_group() -> None:
    """KAFKA-20640: under ``disabled`` a classic JoinGroup to a non-empty consumer group
    is refused with INCONSISTENT_GROUP_PROTOCOL."""
    config = _config("disabled")
    group = _consumer_group_with_b(config)
    topics = system.initial(config).topics
    g1, _, replies = mco.handle_classic_join(
        group, topics, _join("A.m1"), ReplyTo("A", 0, 0), FrozenMap(), config
    )
    assert g1 == group
    assert replies[0][1].error_code is ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_from_consumer_group_downgrades_at_the_group_epoch_with_targets() -> None:
    config = _config()
    group = mco.from_classic_group(_classic_group(3))
    target = FrozenMap({"A.m1": frozenset({F0})})
    group = dataclasses.replace(group, group_epoch=5, target_assignment=target)
    classic, replies = mco.from_consumer_group(group, group, FrozenMap({"A": 1}), config)
    assert classic.generation_id == 5
    assert classic.members["A.m1"].assignment == frozenset({F0})
    assert classic.status is ClassicGroupStatus.PREPARING_REBALANCE
    assert classic.issued_member_ids == FrozenMap({"A": 1})
    assert replies == ()


# --------------------------------------------------------------------------- scripted runs


def _upgrade(config: Config) -> list[MixedState]:
    """A forms a classic group; B subscribes and joins; the run goes on until quiet."""
    state = _classic_group_formed(config)
    state = system.step(state, Subscribe("B"), config)  # type: ignore[assignment]
    state, seen = _progress(state, config, lambda s: _quiet(s, config))
    return seen


@pytest.mark.parametrize("assignors", [("cooperative-sticky",), ("range",)])
def test_upgrade_then_classic_member_rebalances_by_its_own_protocol(
    assignors: tuple[str, ...],
) -> None:
    config = _config(assignors=assignors)
    seen = _upgrade(config)
    first = next(i for i, s in enumerate(seen) if isinstance(s.group, Group))
    before, after = seen[first - 1], seen[first]
    assert isinstance(before.group, ClassicGroup)
    assert isinstance(after.group, Group)
    generation = before.group.generation_id
    member = after.group.members["A.m1"]
    # The classic member is a STABLE member at epoch = generation holding its assignment
    # (the same step then processes B's join, which gives A a new target).
    assert member.classic is not None
    assert member.state is MemberState.STABLE
    assert member.member_epoch == generation
    assert member.assigned_partitions == BOTH
    assert after.group.group_epoch == generation + 1
    # A's epoch (its generation) never goes back while it stays in the group.
    a_epochs = [s.client("A").generation_id for s in seen[first:]]
    assert a_epochs == sorted(a_epochs)
    assert a_epochs[0] == generation
    owned = [s.client("A").owned for s in seen[first:]]
    if assignors == ("cooperative-sticky",):
        assert all(owned), "a cooperative member keeps a partition throughout"
    else:
        assert frozenset() in owned, "an eager member revokes everything before rejoining"
    end = seen[-1]
    assert isinstance(end.group, Group)
    a, b = end.client("A"), end.client("B")
    assert isinstance(a, ClassicClient)
    assert isinstance(b, Client)
    assert a.status is ClassicClientStatus.STABLE
    assert b.status is ClientStatus.STABLE
    assert a.owned | b.owned == BOTH
    assert not a.owned & b.owned
    assert a.generation_id == end.group.members[a.member_id].member_epoch


def test_upgrade_refused_under_policy_downgrade() -> None:
    config = _config("downgrade")
    seen = _upgrade(config)
    assert all(isinstance(s.group, ClassicGroup) for s in seen)
    responses = [
        a.message.body
        for s, a in _steps(seen)
        if isinstance(a, DeliverMessage)
        and isinstance(a.message.body, ConsumerGroupHeartbeatResponse)
    ]
    assert responses
    assert responses[0].error_code is ErrorCode.GROUP_ID_NOT_FOUND
    assert seen[-1].client("B").status is ClientStatus.FATAL


def _steps(seen: list[MixedState]) -> list[tuple[MixedState, Action]]:
    """The action between each pair of states (recovered by trying the enabled ones)."""
    config = _config("downgrade")
    out = []
    for pre, post in itertools.pairwise(seen):
        for a in system.enabled(pre, config):
            if system.step(pre, a, config) == post:
                out.append((pre, a))
                break
    return out


def test_last_consumer_member_leaving_downgrades() -> None:
    config = _config()
    end = _upgrade(config)[-1]
    state = system.step(end, Leave("B"), config)
    state, seen = _progress(
        state,  # type: ignore[arg-type]
        config,
        lambda s: isinstance(s.group, ClassicGroup) and converged(s),
    )
    first = next(i for i, s in enumerate(seen) if isinstance(s.group, ClassicGroup))
    before, after = seen[first - 1], seen[first]
    assert isinstance(before.group, Group)
    assert isinstance(after.group, ClassicGroup)
    assert after.group.generation_id == before.group.group_epoch
    assert after.group.status is ClassicGroupStatus.PREPARING_REBALANCE
    assert set(after.group.members) == {"A.m1"}
    assert isinstance(state.group, ClassicGroup)
    assert state.group.status is ClassicGroupStatus.STABLE
    assert state.client("A").owned == BOTH


def test_fencing_the_last_consumer_member_downgrades_and_a_gone_classic_member_expires() -> None:
    config = dataclasses.replace(
        _config(), perturbations=frozenset({"Subscribe", "Crash"}), max_perturbations=2
    )
    end = _upgrade(config)[-1]
    crashed = system.step(end, Crash("B"), config)
    assert SessionTimeout("B") in system.enabled(crashed, config)
    assert SessionTimeout("A.m1") not in system.enabled(crashed, config)
    fenced = system.step(crashed, SessionTimeout("B"), config)
    assert isinstance(fenced.group, ClassicGroup)
    assert fenced.group.status is ClassicGroupStatus.PREPARING_REBALANCE
    # The classic member's own session timer fires once its process is gone.
    other = system.step(end, Crash("A"), config)
    assert isinstance(other.group, Group)
    assert SessionTimeout("A.m1") in system.enabled(other, config)
    after = system.step(other, SessionTimeout("A.m1"), config)
    assert isinstance(after.group, Group)
    assert set(after.group.members) == {"B"}


def test_a_mixed_config_names_each_client_protocol_and_its_perturbations() -> None:
    with pytest.raises(ConfigError, match="group_protocol"):
        dataclasses.replace(MIGRATION_UPGRADE, clients=(ClientSpec("A", ("foo",)),))
    with pytest.raises(ConfigError, match="not modelled for a mixed config"):
        dataclasses.replace(MIGRATION_UPGRADE, perturbations=frozenset({"AddPartitions"}))
    with pytest.raises(ConfigError, match="set protocol = 'mixed'"):
        dataclasses.replace(MIGRATION_UPGRADE, protocol="consumer")
    with pytest.raises(ConfigError, match="migration_policy"):
        dataclasses.replace(MIGRATION_UPGRADE, migration_policy="sideways")  # type: ignore[arg-type]


def test_heartbeat_sent_only_with_news() -> None:
    config = _config()
    end = _upgrade(config)[-1]
    assert SendHeartbeat("A") not in system.enabled(end, config)


# --------------------------------------------------------------------------- static members


def _static_join(instance: str) -> JoinGroupRequest:
    return dataclasses.replace(_join(""), instance_id=instance)


def test_consumer_static_member_replaces_its_classic_holder() -> None:
    """KAFKA-17228: a classic holder never leaves with -2; a consumer-protocol process of
    its instance replaces it at once, taking its partitions, and the epoch is bumped."""
    from model.consumer import coordinator as co

    config = _config()
    classic = _classic_group(3)
    member = dataclasses.replace(classic.members["A.m1"], instance_id="a")
    group = mco.from_classic_group(
        dataclasses.replace(classic, members=FrozenMap({"A.m1": member}))
    )
    group = mco.bump_for_replacement(group, "a")
    req = ConsumerGroupHeartbeatRequest(
        member_id="A2",
        member_epoch=0,
        instance_id="a",
        rebalance_timeout_ms=300000,
        subscribed_topic_names=frozenset({"foo"}),
        topic_partitions=frozenset(),
    )
    topics = system.initial(config).topics
    after, response = co.handle_consumer_group_heartbeat(group, topics, req, config)
    assert response.error_code is ErrorCode.NONE
    assert set(after.members) == {"A2"}
    assert after.members["A2"].classic is None
    assert after.group_epoch == after.assignment_epoch == 4
    assert after.members["A2"].assigned_partitions == BOTH


def test_consumer_static_member_replaces_its_classic_holder_under_the_same_member_id() -> None:
    """KAFKA-17228 with the holder's own member id (``GroupMetadataManagerTest.
    testConsumerGroupHeartbeatFromExistingClassicStaticMember``): the classic holder is
    replaced, not rejoined — the copy starts at epoch 0 / previous 0 without its classic
    metadata, so the member's previous epoch is 0, not the holder's."""
    from model.consumer import coordinator as co

    config = _config()
    classic = _classic_group(3)
    member = dataclasses.replace(classic.members["A.m1"], instance_id="a")
    group = mco.from_classic_group(
        dataclasses.replace(classic, members=FrozenMap({"A.m1": member}))
    )
    req = ConsumerGroupHeartbeatRequest(
        member_id="A.m1",
        member_epoch=0,
        instance_id="a",
        rebalance_timeout_ms=5000,
        subscribed_topic_names=frozenset({"foo"}),
        topic_partitions=frozenset(),
    )
    topics = system.initial(config).topics
    after, response = co.handle_consumer_group_heartbeat(group, topics, req, config)
    assert response.error_code is ErrorCode.NONE
    replaced = after.members["A.m1"]
    assert replaced.classic is None
    assert replaced.previous_member_epoch == 0
    assert replaced.assigned_partitions == BOTH
    assert replaced.rebalance_timeout_ms == 5000


def test_a_full_consumer_group_refuses_a_classic_join_before_issuing_an_id() -> None:
    """``throwIfConsumerGroupIsFull`` comes first: a dynamic member without id is refused
    with GROUP_MAX_SIZE_REACHED, not told MEMBER_ID_REQUIRED, and no id is handed out;
    under the limit it gets its id as before."""
    config = dataclasses.replace(_config(), max_group_size=1)
    group = _consumer_group_with_b(config)
    topics = system.initial(config).topics
    kept, issued, replies = mco.handle_classic_join(
        group, topics, _join(""), ReplyTo("A", 0, 0), FrozenMap(), config
    )
    assert kept == group
    assert issued == FrozenMap()
    assert replies[0][1].error_code is ErrorCode.GROUP_MAX_SIZE_REACHED
    roomy = dataclasses.replace(config, max_group_size=2)
    _, issued, replies = mco.handle_classic_join(
        group, topics, _join(""), ReplyTo("A", 0, 0), FrozenMap(), roomy
    )
    assert replies[0][1].error_code is ErrorCode.MEMBER_ID_REQUIRED
    assert issued == FrozenMap({"A": 1})


def test_classic_static_member_replaces_a_consumer_holder_only_after_its_leave() -> None:
    config = _config()
    base = _consumer_group_with_b(config)
    b = dataclasses.replace(base.members["B"], instance_id="b")
    group = _with_members(base, b)
    topics = system.initial(config).topics
    reply = ReplyTo("B2", 0, 0)
    kept, _, replies = mco.handle_classic_join(
        group, topics, _static_join("b"), reply, FrozenMap(), config
    )
    assert kept == group
    assert replies[0][1].error_code is ErrorCode.UNRELEASED_INSTANCE_ID
    from model.consumer import coordinator as co

    left = co.write_member(group, b, dataclasses.replace(b, member_epoch=-2), config)
    joined, _, replies = mco.handle_classic_join(
        left, topics, _static_join("b"), reply, FrozenMap(), config
    )
    assert replies[0][1].error_code is ErrorCode.NONE
    assert set(joined.members) == {"B2.m1"}
    assert joined.members["B2.m1"].classic is not None
    # Only classic members are left: the downgrade (KAFKA-17317) applies.
    assert mco.validate_online_downgrade(left, joined, config)


def test_kafkas_rule_replaces_a_live_consumer_holder() -> None:
    """``Config.classic_replaces_live_holder`` (docs/fidelity.md V10): the classic static
    JoinGroup replaces B at its epoch, without a -2 leave, copying its assignment; a config
    of another protocol may not set it."""
    config = dataclasses.replace(_config(), classic_replaces_live_holder=True)
    base = _consumer_group_with_b(config)
    b = dataclasses.replace(base.members["B"], instance_id="b")
    group = _with_members(base, b)
    topics = system.initial(config).topics
    joined, _, replies = mco.handle_classic_join(
        group, topics, _static_join("b"), ReplyTo("B2", 0, 0), FrozenMap(), config
    )
    assert replies[0][1].error_code is ErrorCode.NONE
    assert set(joined.members) == {"B2.m1"}
    assert joined.members["B2.m1"].assigned_partitions == b.assigned_partitions
    with pytest.raises(ConfigError, match="classic_replaces_live_holder"):
        dataclasses.replace(STATIC, classic_replaces_live_holder=True)


@pytest.mark.parametrize("mutated", [False, True], ids=["reference", "no-bump-on-assignor-change"])
def test_replacing_a_classic_holder_with_a_server_assignor_bumps_the_epoch(mutated: bool) -> None:
    """KAFKA-20434, migration half: classic members ask for no server assignor, so the
    consumer-protocol process replacing a classic static member and asking for ``range``
    makes ``range`` the group's preferred assignor: the join bumps the group epoch and the
    target is computed again by ``range``. Without the rule (the mutant) the epoch stays
    and the default assignor's target stands."""
    from groupcheck.mutants import MUTANTS
    from model.consumer import coordinator as co

    config = _config()
    if mutated:
        config = dataclasses.replace(config, rules=MUTANTS["no-bump-on-assignor-change"].rules)
    classic = _classic_group(3)
    member = dataclasses.replace(classic.members["A.m1"], instance_id="a")
    group = mco.from_classic_group(
        dataclasses.replace(classic, members=FrozenMap({"A.m1": member}))
    )
    group = dataclasses.replace(group, target_assignor="uniform")
    req = ConsumerGroupHeartbeatRequest(
        member_id="A2",
        member_epoch=0,
        instance_id="a",
        rebalance_timeout_ms=300000,
        subscribed_topic_names=frozenset({"foo"}),
        server_assignor="range",
        topic_partitions=frozenset(),
    )
    topics = system.initial(config).topics
    after, response = co.handle_consumer_group_heartbeat(group, topics, req, config)
    assert response.error_code is ErrorCode.NONE
    assert set(after.members) == {"A2"}
    if mutated:
        assert (after.group_epoch, after.assignment_epoch) == (3, 3)
        assert after.target_assignor == "uniform"
        assert assignor_outdated(after)
    else:
        assert (after.group_epoch, after.assignment_epoch) == (4, 4)
        assert after.target_assignor == "range"
        assert not assignor_outdated(after)


def test_classic_member_replacing_a_consumer_holder_keeps_its_server_assignor() -> None:
    """``classicGroupJoinToConsumerGroup`` leaves the server assignor name unchanged: the
    classic member replacing a consumer-protocol static member after its -2 leave keeps the
    holder's, so the group's preferred assignor does not change."""
    from model.consumer import coordinator as co

    config = _config()
    base = _consumer_group_with_b(config)
    b = dataclasses.replace(base.members["B"], instance_id="b", server_assignor="range")
    group = _with_members(base, b)
    left = co.write_member(group, b, dataclasses.replace(b, member_epoch=-2), config)
    topics = system.initial(config).topics
    joined, _, replies = mco.handle_classic_join(
        left, topics, _static_join("b"), ReplyTo("B2", 0, 0), FrozenMap(), config
    )
    assert replies[0][1].error_code is ErrorCode.NONE
    assert joined.members["B2.m1"].server_assignor == "range"
    assert joined.group_epoch == left.group_epoch


@pytest.mark.parametrize(("topics", "status"), [("foo", "STABLE"), ("bar", "PREPARING_REBALANCE")])
def test_downgrade_by_replacement_rebalances_only_when_the_subscription_changed(
    topics: str, status: str
) -> None:
    """KAFKA-17317 converts; KAFKA-19546: a rebalance only if the replacing member
    subscribes to other topics than the member it replaces."""
    config = _config()
    base = _consumer_group_with_b(config)
    b = dataclasses.replace(base.members["B"], instance_id="b")
    group = _with_members(base, b)
    joining = dataclasses.replace(
        mco.from_classic_group(_classic_group(1)).members["A.m1"],
        member_id="B2.m1",
        instance_id="b",
        subscribed_topic_names=frozenset({topics}),
    )
    classic, _ = mco.from_consumer_group_replaced(group, "B", joining, FrozenMap(), config)
    assert set(classic.members) == {"B2.m1"}
    assert classic.generation_id == group.group_epoch
    assert classic.members["B2.m1"].assignment == BOTH  # B's target
    assert classic.status is ClassicGroupStatus[status]


# --------------------------------------------------------------------------- presets


@pytest.mark.parametrize(
    "config",
    [MIGRATION_UPGRADE, MIGRATION_ROUNDTRIP, MIGRATION_DISABLED, MIXED_STATIC],
    ids=lambda c: c.name,
)
def test_migration_presets_are_clean_and_reach_their_witnesses(config: Config) -> None:
    result = bfs(config, max_states=50_000)
    assert result.exhausted, config.name
    assert result.result == "ok", (config.name, result.property, result.message)
    assert config.required_witnesses is not None
    assert set(config.required_witnesses) <= set(result.witnesses)


def test_tla_refuses_a_mixed_config() -> None:
    from groupcheck.tla.configs import cfg_text

    with pytest.raises(ConfigError, match="uses the mixed protocol"):
        cfg_text(MIGRATION_UPGRADE)


# --------------------------------------------------------------------------- instance id changes


def _static_beat(member_id: str, instance: str) -> ConsumerGroupHeartbeatRequest:
    return ConsumerGroupHeartbeatRequest(
        member_id=member_id,
        member_epoch=0,
        instance_id=instance,
        rebalance_timeout_ms=300000,
        subscribed_topic_names=frozenset({"foo"}),
        topic_partitions=frozenset(),
    )


def test_a_member_rejoining_under_another_instance_id_releases_the_old_one() -> None:
    """KAFKA-20747 (fixed in 4.4): B rejoins with its member id and instance id ``b2``
    instead of ``b``; the instance ``b`` is no longer held, so a later join with ``b`` is a
    new member — not refused with UNRELEASED_INSTANCE_ID by the renamed B. The model
    derives the instance-id index from the members (``Group.static_member_id``), so no
    stale entry can stay."""
    from model.consumer import coordinator as co

    config = _config()
    base = _consumer_group_with_b(config)
    b = dataclasses.replace(base.members["B"], instance_id="b")
    group = _with_members(base, b)
    topics = system.initial(config).topics
    renamed, response = co.handle_consumer_group_heartbeat(
        group, topics, _static_beat("B", "b2"), config
    )
    assert response.error_code is ErrorCode.NONE
    assert renamed.members["B"].instance_id == "b2"
    assert (renamed.static_member_id("b"), renamed.static_member_id("b2")) == (None, "B")
    after, response = co.handle_consumer_group_heartbeat(
        renamed, topics, _static_beat("X", "b"), config
    )
    assert response.error_code is ErrorCode.NONE
    assert set(after.members) == {"B", "X"}
    assert after.members["B"].instance_id == "b2"


def test_a_classic_member_cannot_rejoin_under_another_instance_id() -> None:
    """Kafka 4.4 (``getOrMaybeSubscribeStaticConsumerGroupMember`` →
    ``throwIfStaticMemberIsUnknown``): the classic member A sends a JoinGroup with its
    member id under instance ``a2``, which no member holds: UNKNOWN_MEMBER_ID, the group
    unchanged; under ``a`` held by another member, FENCED_INSTANCE_ID."""
    config = _config()
    group = _consumer_group_with_b(config)
    topics = system.initial(config).topics
    group, issued, replies = mco.handle_classic_join(
        group, topics, _static_join("a"), ReplyTo("A", 0, 0), FrozenMap(), config
    )
    assert replies[0][1].error_code is ErrorCode.NONE
    member_id = replies[0][1].member_id
    rename = dataclasses.replace(_static_join("a2"), member_id=member_id)
    after, _, replies = mco.handle_classic_join(
        group, topics, rename, ReplyTo("A", 0, 0), issued, config
    )
    assert replies[0][1].error_code is ErrorCode.UNKNOWN_MEMBER_ID
    assert after == group
    assert group.static_member_id("a") == member_id
    other = dataclasses.replace(_static_join("a"), member_id="X")
    after, _, replies = mco.handle_classic_join(
        group, topics, other, ReplyTo("X", 0, 0), issued, config
    )
    assert replies[0][1].error_code is ErrorCode.FENCED_INSTANCE_ID
    assert after == group


@pytest.mark.parametrize(
    ("config", "max_states"), [(MIXED_STATIC, 20_000), (STATIC, 5_000)], ids=["MIXED", "STATIC"]
)
def test_the_static_member_index_is_what_the_members_say(config: Config, max_states: int) -> None:
    """Under the reference rules the coordinator's static-member index
    (``Group.static_members``, ``ConsumerGroup.staticMembers``) maps exactly the members'
    instance ids to their member ids in every state a breadth-first search reaches."""
    from model.records import Group, static_member_index

    start = system.initial(config)
    seen = {start}
    frontier = [start]
    checked = 0
    while frontier and len(seen) < max_states:
        state = frontier.pop(0)
        group = state.group
        if isinstance(group, Group):
            assert group.static_members == static_member_index(group.members), state
            checked += 1
        for action in system.enabled(state, config):
            after = system.step(state, action, config)
            if after not in seen:
                seen.add(after)
                frontier.append(after)
    assert checked > 100


def test_change_instance_id_needs_a_static_classic_client_of_a_mixed_config() -> None:
    from model.migration.presets import MIXED_INSTANCE_RENAME

    with pytest.raises(ConfigError, match="alt_instance_id needs the ChangeInstanceId"):
        dataclasses.replace(MIXED_INSTANCE_RENAME, perturbations=frozenset({"Subscribe"}))
    with pytest.raises(ConfigError, match="ChangeInstanceId needs a client with alt_instance_id"):
        dataclasses.replace(
            MIXED_STATIC, perturbations=frozenset({"Subscribe", "ChangeInstanceId"})
        )
    dynamic_alt = ClientSpec("B", ("foo",), alt_instance_id="b2", group_protocol="consumer")
    with pytest.raises(ConfigError, match="client B: alt_instance_id is for a static client"):
        dataclasses.replace(
            MIXED_INSTANCE_RENAME, clients=(dynamic_alt, *MIXED_INSTANCE_RENAME.clients[1:])
        )
    with pytest.raises(ConfigError, match="ChangeInstanceId needs a client with alt_instance_id"):
        dataclasses.replace(STATIC, perturbations=STATIC.perturbations | {"ChangeInstanceId"})
    from model.classic.presets import CLASSIC_STATIC

    renamed = (dataclasses.replace(CLASSIC_STATIC.clients[0], alt_instance_id="a2"),)
    with pytest.raises(ConfigError, match="ChangeInstanceId is not modelled for the classic"):
        dataclasses.replace(
            CLASSIC_STATIC,
            clients=renamed + CLASSIC_STATIC.clients[1:],
            perturbations=CLASSIC_STATIC.perturbations | {"ChangeInstanceId"},
        )


def test_a_consumer_protocol_client_rejoins_under_another_instance_id() -> None:
    """``ChangeInstanceId`` of a consumer-protocol client: it gives up its partitions and
    joins at epoch 0 with its member id and instance ``a2``; the coordinator keeps the
    member, which takes ``a2`` and releases ``a`` (KAFKA-20747 fixed). Every state keeps
    the static-member index equal to what the members say."""
    from model.records import static_member_index

    config = dataclasses.replace(
        STATIC,
        name="STATIC_RENAME",
        clients=(
            dataclasses.replace(STATIC.clients[0], alt_instance_id="a2"),
            *STATIC.clients[1:],
        ),
        max_perturbations=1,
        perturbations=frozenset({"ChangeInstanceId"}),
    )
    start = system.initial(config)
    seen = {start}
    frontier = [start]
    renamed = 0
    while frontier:
        state = frontier.pop(0)
        group = state.group
        assert isinstance(group, Group)
        assert group.static_members == static_member_index(group.members)
        client = state.client("A")
        member = group.members.get(client.member_id)
        if member is not None and member.instance_id == "a2":
            assert group.static_member_id("a") is None
            assert group.static_member_id("a2") == client.member_id
            renamed += 1
        for action in system.enabled(state, config):
            after = system.step(state, action, config)
            if after not in seen:
                seen.add(after)
                frontier.append(after)
    assert renamed > 0


def test_a_classic_client_changing_its_instance_id_rejoins_as_a_new_member() -> None:
    """``ChangeInstanceId`` of a classic member of a consumer group: it sends at once a
    JoinGroup with the member id A holds and instance ``a2``; Kafka answers
    UNKNOWN_MEMBER_ID (``throwIfStaticMemberIsUnknown``), the member keeps ``a`` and the
    client resets its member id, so its next JoinGroup is a new static member's."""
    from model.actions import ChangeInstanceId
    from model.classic.messages import JoinGroupResponse
    from model.classic.records import ClassicClient

    config = dataclasses.replace(
        MIGRATION_UPGRADE,
        name="CLASSIC_RENAME",
        kafka_version="4.4",
        topics=(("foo", 1),),
        clients=(
            ClientSpec("B", ("foo",), group_protocol="consumer"),
            ClientSpec(
                "A",
                ("foo",),
                instance_id="a",
                alt_instance_id="a2",
                group_protocol="classic",
                assignors=("range",),
            ),
        ),
        max_perturbations=1,
        perturbations=frozenset({"ChangeInstanceId"}),
        required_witnesses=None,
    )
    start = system.initial(config)
    seen = {start}
    frontier = [start]
    refused = 0
    while frontier and len(seen) < 4_000:
        state = frontier.pop(0)
        for action in system.enabled(state, config):
            after = system.step(state, action, config)
            if isinstance(action, ChangeInstanceId):
                assert isinstance(state.group, Group)
                client = after.client("A")
                assert isinstance(client, ClassicClient)
                assert client.instance_id == "a2"
                sent = [m for m in after.network if m not in state.network]
                joins = [m for m in sent if isinstance(m.body, JoinGroupRequest)]
                assert [m.client for m in joins] == ["A"]
                join = joins[0].body
                assert isinstance(join, JoinGroupRequest)
                assert (join.member_id, join.instance_id) == (client.member_id, "a2")
                delivered = system.step(after, DeliverMessage(joins[0]), config)
                if isinstance(delivered.group, Group) and client.member_id in state.group.members:
                    assert delivered.group == after.group
                    assert delivered.group.static_member_id("a") == client.member_id
                    answers = [m for m in delivered.network if m not in after.network]
                    assert len(answers) == 1
                    answer = answers[0].body
                    assert isinstance(answer, JoinGroupResponse)
                    assert answer.error_code is ErrorCode.UNKNOWN_MEMBER_ID
                    reset = system.step(delivered, DeliverMessage(answers[0]), config)
                    assert reset.client("A").member_id == ""
                    refused += 1
            if after not in seen:
                seen.add(after)
                frontier.append(after)
    assert refused > 0


def test_kafkas_replacement_of_a_live_holder_breaks_owned_partitions_are_held() -> None:
    """docs/findings.md F4: under ``classic_replaces_live_holder`` (Kafka's rule, V10) the
    classic B2 replaces the consumer-protocol B while B's join response is on its way; B
    takes it and consumes foo-0, foo-1, which its member no longer holds: the path of the
    finding's reproducer violates ``OwnedPartitionsAreHeld`` at its last step and not
    before, and under the model's default (-2 required) the same JoinGroup is refused."""
    from pathlib import Path as FilePath

    from groupcheck.configfile import load_config_file
    from groupcheck.explore.minimise import first_violations
    from model.path import Path

    data = FilePath(__file__).parents[1] / "data" / "mixed_static_kafka_replacement.toml"
    config = load_config_file(str(data))
    assert config.classic_replaces_live_holder
    actions = Path.decode(config, "00112121").actions
    assert len(actions) == 8
    found = first_violations(config, actions, check_convergence=False)
    assert found is not None
    assert "OwnedPartitionsAreHeld" in {v.property for v in found[0]}
    assert first_violations(config, actions[:-1], check_convergence=False) is None
    state = system.initial(config)
    for action in actions[:4]:
        state = system.step(state, action, config)
    join = actions[4]
    assert isinstance(join, DeliverMessage)
    assert isinstance(join.message.body, JoinGroupRequest)
    default = dataclasses.replace(config, classic_replaces_live_holder=False)
    refused = system.step(state, join, default)
    assert isinstance(refused.group, Group)
    assert "B" in refused.group.members
    replaced = system.step(state, join, config)
    assert "B" not in replaced.group.members


def test_kafkas_converting_replacement_keeps_an_empty_target() -> None:
    """docs/findings.md F5: with ``replacement_bumps_group_epoch`` off (Kafka's rule, V13)
    B's heartbeat converts the classic group of B2, whose first rebalance assigned nothing
    yet, and replaces B2: the group epoch stays the classic generation and the target
    gives foo-0, foo-1 to nobody (``ValidTargetAssignment.Covers`` at step 5); under the
    default the same step bumps the epoch and the target covers them."""
    from pathlib import Path as FilePath

    from groupcheck.configfile import load_config_file
    from groupcheck.explore.minimise import first_violations
    from model.path import Path

    data = FilePath(__file__).parents[1] / "data" / "mixed_static_no_replacement_bump.toml"
    config = load_config_file(str(data))
    assert not config.replacement_bumps_group_epoch
    actions = Path.decode(config, "00011").actions
    found = first_violations(config, actions, check_convergence=False)
    assert found is not None
    assert "ValidTargetAssignment.Covers" in {v.property for v in found[0]}
    assert first_violations(config, actions[:-1], check_convergence=False) is None
    default = dataclasses.replace(config, replacement_bumps_group_epoch=True)
    kafka, model = system.initial(config), system.initial(default)
    for action in actions:
        kafka, model = system.step(kafka, action, config), system.step(model, action, default)
    assert isinstance(kafka.group, Group)
    assert isinstance(model.group, Group)
    assert kafka.group.group_epoch == kafka.group.assignment_epoch == 1
    assert set(kafka.group.target_assignment) == {"B"}
    assert not kafka.group.target_assignment["B"]
    assert model.group.group_epoch == model.group.assignment_epoch == 2
    assert len(model.group.target_assignment["B"]) == 2
    assert first_violations(default, actions, check_convergence=False) is None


def test_replacement_bumps_group_epoch_is_a_setting_of_a_mixed_config() -> None:
    with pytest.raises(ConfigError, match="replacement_bumps_group_epoch"):
        dataclasses.replace(STATIC, replacement_bumps_group_epoch=False)
