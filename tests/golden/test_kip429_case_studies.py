"""KIP-429's own walk-throughs, in the KIP's terms, on the classic protocol family.

- "Proposed Changes": a partition that moves under the COOPERATIVE protocol is first
  revoked by its owner — removed from the new assignment "for that round" — and assigned
  to its final owner "in the second rebalance".
- "Compatibility and Upgrade Path", consumer: the first rolling bounce sets the assignors
  to ``range, cooperative-sticky`` ("will still choose EAGER … range assignor will be
  selected"); the second removes ``range`` ("whoever have been bounced will then choose
  COOPERATIVE … while others not-yet-bounced will still go with EAGER … the
  cooperative-sticky assignor will be chosen").
- The same section's warning: a leader on old byte code "may think everyone is still on
  V0" and reassign partitions new members did not revoke.

Each step is the model's: a perturbation, then the first enabled progress action until
none is left (the group settles).
"""

from __future__ import annotations

from model import system
from model.actions import Action, Bounce, Subscribe
from model.classic.client import rebalance_protocol
from model.classic.presets import CLASSIC_COOPERATIVE, UPGRADE_TWO_BOUNCES
from model.classic.records import ClassicState
from model.config import Config
from model.status import ClassicGroupStatus, RebalanceProtocol

FOO0, FOO1 = ("foo", 0), ("foo", 1)


def _settle(state: ClassicState, config: Config) -> list[ClassicState]:
    """The states the group goes through until no progress action is enabled."""
    seen = [state]
    for _ in range(1000):
        acts = [a for a in system.enabled(state, config) if not a.PERTURBATION]
        if not acts:
            return seen
        new = system.step(state, acts[0], config)
        assert isinstance(new, ClassicState)
        state = new
        seen.append(state)
    raise AssertionError("the group did not settle")


def _do(state: ClassicState, action: Action, config: Config) -> ClassicState:
    assert action in system.enabled(state, config), action
    new = system.step(state, action, config)
    assert isinstance(new, ClassicState)
    return new


def test_a_partition_moves_in_the_second_rebalance() -> None:
    config = CLASSIC_COOPERATIVE
    start = system.initial(config)
    assert isinstance(start, ClassicState)
    state = _settle(start, config)[-1]
    assert state.client("A").owned == {FOO0, FOO1}
    generation = state.group.generation_id

    states = _settle(_do(state, Subscribe("B"), config), config)
    # First rebalance: A keeps foo-0 and is told to give up foo-1; B gets nothing yet.
    first = next(
        s
        for s in states
        if s.group.generation_id == generation + 1 and s.group.status is ClassicGroupStatus.STABLE
    )
    assignment = {m.member_id[0]: m.assignment for m in first.group.members.values()}
    assert assignment == {"A": {FOO0}, "B": set()}
    # A never stops consuming foo-0, and nobody consumes foo-1 twice.
    for s in states:
        assert FOO0 in s.client("A").owned
        assert not (s.client("A").owned & s.client("B").owned)
    # Second rebalance: foo-1 reaches B.
    last = states[-1]
    assert last.group.generation_id == generation + 2
    assert last.client("A").owned == {FOO0}
    assert last.client("B").owned == {FOO1}


def test_the_upgrade_path_in_two_rolling_bounces() -> None:
    config = UPGRADE_TWO_BOUNCES
    state = system.initial(config)
    assert isinstance(state, ClassicState)
    assert state.group.protocol_name == "range"
    assert not state.client("A").kip429

    # First rolling bounce: "range, cooperative-sticky" — still EAGER, range selected.
    for name in ("A", "B"):
        state = _settle(_do(state, Bounce(name), config), config)[-1]
        assert state.client(name).assignors == ("range", "cooperative-sticky")
        assert rebalance_protocol(state.client(name)) is RebalanceProtocol.EAGER
        assert state.group.protocol_name == "range"

    # Second rolling bounce: the bounced member goes COOPERATIVE, the other stays EAGER,
    # and cooperative-sticky is chosen as soon as one member no longer lists range.
    states = _settle(_do(state, Bounce("A"), config), config)
    state = states[-1]
    assert rebalance_protocol(state.client("A")) is RebalanceProtocol.COOPERATIVE
    assert rebalance_protocol(state.client("B")) is RebalanceProtocol.EAGER
    assert state.group.protocol_name == "cooperative-sticky"
    for s in states:
        assert not (s.client("A").owned & s.client("B").owned)

    states = _settle(_do(state, Bounce("B"), config), config)
    state = states[-1]
    assert all(rebalance_protocol(c) is RebalanceProtocol.COOPERATIVE for c in state.clients)
    assert state.client("A").owned | state.client("B").owned == {FOO0, FOO1}
    for s in states:
        assert not (s.client("A").owned & s.client("B").owned)
