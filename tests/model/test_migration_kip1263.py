"""KIP-1263 in mixed groups: classic members of a consumer group under assignment batching
and assignor offload (KIP-1263 JoinGroup, SyncGroup and Heartbeat Request Handling;
KAFKA-20272). From Kafka 4.3 (``epoch_layout = "kafka-4.3"``) a classic member is told
REBALANCE_IN_PROGRESS only when its epoch is behind the *target assignment* epoch, which
batching and offload let lag behind the group epoch; a classic join that needs a new
target goes through the same gate as a consumer-protocol heartbeat."""

from __future__ import annotations

import dataclasses

import pytest

from groupcheck.explore.bfs import bfs
from model.classic.messages import (
    ClassicSubscription,
    HeartbeatRequest,
    JoinGroupRequest,
    SyncGroupRequest,
)
from model.classic.records import ClassicGroup, ClassicMember, ReplyTo
from model.config import Config
from model.ids import FrozenMap
from model.migration import coordinator as mco
from model.migration.presets import MIGRATION_BATCHING, MIGRATION_OFFLOAD, MIGRATION_UPGRADE
from model.records import TopicMetadata
from model.status import ClassicGroupStatus, ConfigError, ErrorCode

BOTH = frozenset({("foo", 0), ("foo", 1)})
TOPICS = FrozenMap({"foo": TopicMetadata("foo", 2)})


def _converted(generation: int = 3) -> object:
    member = ClassicMember(
        member_id="A.m1",
        instance_id=None,
        protocols=("cooperative-sticky",),
        subscription=ClassicSubscription(frozenset({"foo"})),
        rebalance_timeout_ms=300000,
        assignment=BOTH,
        process=ReplyTo("A", 0, 0),
    )
    classic = ClassicGroup(
        status=ClassicGroupStatus.STABLE,
        generation_id=generation,
        protocol_name="cooperative-sticky",
        leader_id="A.m1",
        members=FrozenMap({"A.m1": member}),
        committed_offsets=FrozenMap(),
    )
    return mco.from_classic_group(classic)


@pytest.mark.parametrize(
    ("config", "told"),
    [
        (MIGRATION_UPGRADE, ErrorCode.REBALANCE_IN_PROGRESS),  # Kafka <= 4.2: the group epoch
        (MIGRATION_OFFLOAD, ErrorCode.NONE),  # Kafka 4.3: the target assignment epoch
    ],
    ids=["group-epoch", "target-epoch"],
)
def test_a_classic_member_rejoins_when_the_target_epoch_passes_it(
    config: Config, told: ErrorCode
) -> None:
    group = _converted(3)
    bumped = dataclasses.replace(group, group_epoch=4)  # type: ignore[type-var]
    hb = mco.handle_classic_heartbeat(bumped, HeartbeatRequest("A.m1", 3, None), config)
    assert hb.error_code is told
    sync = mco.handle_classic_sync(
        bumped, SyncGroupRequest("A.m1", 3, None, "cooperative-sticky"), config
    )
    assert sync.error_code is told
    # Once a target at epoch 4 is installed, both rules ask it to rejoin.
    installed = dataclasses.replace(bumped, assignment_epoch=4)
    hb = mco.handle_classic_heartbeat(installed, HeartbeatRequest("A.m1", 3, None), config)
    assert hb.error_code is ErrorCode.REBALANCE_IN_PROGRESS


def test_a_classic_join_that_needs_a_target_starts_an_offloaded_run() -> None:
    """Under offload a classic JoinGroup that bumps the group epoch hands the assignor run
    to the executor: no new target yet, and the member is answered at the target epoch it
    reconciled to; inline (Kafka <= 4.2) the target is computed at once."""
    join = JoinGroupRequest(
        "", None, ("cooperative-sticky",), ClassicSubscription(frozenset({"foo"})), 300000, 45000
    )
    for config, runs, assignment_epoch in ((MIGRATION_OFFLOAD, 1, 3), (MIGRATION_UPGRADE, 0, 4)):
        group = _converted(3)
        _, issued, replies = mco.handle_classic_join(
            group, TOPICS, join, ReplyTo("C", 0, 0), FrozenMap(), config
        )
        assert replies[0][1].error_code is ErrorCode.MEMBER_ID_REQUIRED
        member_id = replies[0][1].member_id  # type: ignore[union-attr]
        second = dataclasses.replace(join, member_id=member_id)
        after, _, replies = mco.handle_classic_join(
            group, TOPICS, second, ReplyTo("C", 0, 0), issued, config
        )
        response = replies[0][1]
        assert response.error_code is ErrorCode.NONE
        assert after.group_epoch == 4
        assert (len(after.assignor_runs), after.assignment_epoch) == (runs, assignment_epoch)
        assert response.generation_id == after.members[member_id].member_epoch  # type: ignore[union-attr]


@pytest.mark.parametrize("config", [MIGRATION_OFFLOAD, MIGRATION_BATCHING], ids=lambda c: c.name)
def test_mixed_presets_under_kip1263_exhaust_clean(config: Config) -> None:
    result = bfs(config, max_states=40_000)
    assert result.exhausted
    assert result.property is None, f"{result.property}: {result.message}"
    assert result.missed_witnesses == []
    assert set(config.required_witnesses) <= set(result.witnesses)


def test_walks_reach_classic_members_waiting_for_the_lagging_target() -> None:
    """The 4.3 rule is exercised: seeded walks of ``MIGRATION_OFFLOAD`` reach states where
    the group epoch is ahead of the target's and a classic member at the target epoch is
    not asked to rejoin (the group-epoch rule would ask it)."""
    from tracelines import progress_walk

    from model import system
    from model.records import Group

    waiting = 0
    for seed in range(30):
        path = progress_walk(MIGRATION_OFFLOAD, seed, 80, perturb=True, idle="stop")
        state = system.initial(MIGRATION_OFFLOAD)
        for action in path.actions:
            state = system.step(state, action, MIGRATION_OFFLOAD)
            g = state.group
            if not isinstance(g, Group) or g.group_epoch <= g.assignment_epoch:
                continue
            for mid, m in g.members.items():
                if m.classic is None:
                    continue
                req = HeartbeatRequest(mid, m.member_epoch, None)
                new = mco.handle_classic_heartbeat(g, req, MIGRATION_OFFLOAD).error_code
                old = mco.handle_classic_heartbeat(g, req, MIGRATION_UPGRADE).error_code
                waiting += new is ErrorCode.NONE and old is ErrorCode.REBALANCE_IN_PROGRESS
    assert waiting > 0


def test_kip1263_options_are_taken_in_a_mixed_config_and_others_refused() -> None:
    assert MIGRATION_OFFLOAD.assignor_offload
    assert MIGRATION_BATCHING.assignment_interval_ms
    with pytest.raises(ConfigError, match="not modelled for a mixed config"):
        dataclasses.replace(MIGRATION_UPGRADE, live_timers=True)
