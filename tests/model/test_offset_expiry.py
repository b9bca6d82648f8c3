"""KIP-211 offset expiry (docs/kafka-rules.md, Offset expiry; docs/fidelity.md O1–O3):
which offsets may expire in a consumer group and in a classic group, and the
``ExpireOffsets`` perturbation."""

from __future__ import annotations

import dataclasses

from groupcheck.explore.bfs import bfs
from model import system
from model.actions import ExpireOffsets
from model.classic.coordinator import classic_expirable_offsets
from model.classic.records import ClassicState
from model.config import ClientSpec, Config
from model.consumer.coordinator import expirable_offsets
from model.ids import FrozenMap
from model.presets import CLASSIC_OFFSETS_EXPIRY, OFFSETS_EXPIRY
from model.records import CommittedOffset, State
from model.scenario import stable_state
from model.status import ClassicGroupStatus

CONFIG = Config(
    kafka_version="4.2",
    name="offset-expiry",
    topics=(("foo", 1), ("bar", 1)),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
    perturbations=frozenset({"ExpireOffsets"}),
    max_perturbations=1,
)
OFFSETS = FrozenMap({("foo", 0): CommittedOffset("A", 3), ("bar", 0): CommittedOffset("B", 2)})


def with_offsets(state: State) -> State:
    return dataclasses.replace(
        state, group=dataclasses.replace(state.group, committed_offsets=OFFSETS)
    )


def test_consumer_group_expires_only_topics_no_member_subscribes_to() -> None:
    state = with_offsets(stable_state(CONFIG, 3, {"A": frozenset({("foo", 0)}), "B": frozenset()}))
    assert expirable_offsets(state.group, state.topics) == {("bar", 0)}
    assert system.enabled(state, CONFIG)[-1:] == (ExpireOffsets("bar"),)
    after = system.step(state, ExpireOffsets("bar"), CONFIG)
    assert after.group.committed_offsets == {("foo", 0): CommittedOffset("A", 3)}
    assert after.perturbations == 1
    assert ExpireOffsets("foo") not in system.enabled(state, CONFIG)


def test_an_empty_consumer_group_expires_every_offset() -> None:
    state = with_offsets(system.initial(CONFIG))  # type: ignore[arg-type]
    assert not state.group.members
    assert expirable_offsets(state.group, state.topics) == set(OFFSETS)


def test_expiry_is_off_unless_the_config_allows_it() -> None:
    plain = dataclasses.replace(CONFIG, perturbations=frozenset(), max_perturbations=0)
    state = with_offsets(system.initial(plain))  # type: ignore[arg-type]
    assert not any(isinstance(a, ExpireOffsets) for a in system.enabled(state, plain))


def _classic(status: ClassicGroupStatus) -> ClassicState:
    state = system.initial(CLASSIC_OFFSETS_EXPIRY)
    assert isinstance(state, ClassicState)
    group = dataclasses.replace(state.group, status=status, committed_offsets=OFFSETS)
    return dataclasses.replace(state, group=group)


def test_classic_group_expiry_by_state() -> None:
    """Empty: everything; Stable: topics no member subscribes to (the warm group's A takes
    foo, B bar, so nothing); rebalancing: nothing (KAFKA-13636)."""
    stable = _classic(ClassicGroupStatus.STABLE)
    assert {m.subscription.topics for m in stable.group.members.values()} == {
        frozenset({"foo"}),
        frozenset({"bar"}),
    }
    assert classic_expirable_offsets(stable.group, stable.topics) == frozenset()
    only_a = dataclasses.replace(
        stable.group,
        members=FrozenMap(
            (k, m) for k, m in stable.group.members.items() if "foo" in m.subscription.topics
        ),
    )
    assert classic_expirable_offsets(only_a, stable.topics) == {("bar", 0)}
    for status in (ClassicGroupStatus.PREPARING_REBALANCE, ClassicGroupStatus.COMPLETING_REBALANCE):
        assert (
            classic_expirable_offsets(dataclasses.replace(only_a, status=status), stable.topics)
            == frozenset()
        )
    empty = dataclasses.replace(stable.group, status=ClassicGroupStatus.EMPTY, members=FrozenMap())
    assert classic_expirable_offsets(empty, stable.topics) == set(OFFSETS)


def test_offsets_expiry_presets_are_clean_and_reach_the_expiry_of_an_emptied_group() -> None:
    for config in (OFFSETS_EXPIRY, CLASSIC_OFFSETS_EXPIRY):
        result = bfs(config, max_states=200_000)
        assert result.exhausted, config.name
        assert result.result == "ok", (config.name, result.property, result.message)
        assert "OffsetExpiredAfterEmpty" in result.witnesses, config.name
