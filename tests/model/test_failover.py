"""Coordinator failover (``CoordinatorFailover``, ``CoordinatorLoaded``): requests in flight
fail with NOT_COORDINATOR, the new coordinator answers COORDINATOR_LOAD_IN_PROGRESS while
it loads, and the group it loads is what its records say (``GroupMetadataManager.onLoaded``;
docs/fidelity.md, row 21)."""

from __future__ import annotations

import random
from dataclasses import replace

from groupcheck.explore.bfs import bfs
from groupcheck.mutants import get_mutant
from model import system
from model.actions import (
    CoordinatorFailover,
    CoordinatorLoaded,
    Crash,
    SendHeartbeat,
    SessionTimeout,
)
from model.config import ClientSpec, Config
from model.consumer.coordinator import rebuild_group
from model.presets import MUT2_FAILOVER
from model.records import ConsumerGroupHeartbeatResponse
from model.scenario import Script, stable_state
from model.status import ErrorCode

CONFIG = Config(
    kafka_version="4.2",
    name="failover",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
    max_perturbations=3,
    perturbations=frozenset({"CoordinatorFailover", "Crash"}),
    max_restarts=0,
)


def settled() -> Script:
    """A STABLE group at epoch 3: A consumes foo-0, B foo-1."""
    start = stable_state(CONFIG, 3, {"A": frozenset({("foo", 0)}), "B": frozenset({("foo", 1)})})
    return Script(CONFIG, start)


def test_requests_in_flight_fail_with_not_coordinator_and_the_client_retries_in_full() -> None:
    script = settled()
    script.do(SendHeartbeat("A"))
    script.do(CoordinatorFailover())
    reply = script.message("A", to_coordinator=False).body
    assert isinstance(reply, ConsumerGroupHeartbeatResponse)
    assert reply.error_code is ErrorCode.NOT_COORDINATOR
    before = script.state.client("A")
    script.deliver("A", to_coordinator=False)
    a = script.state.client("A")
    assert a.sent is None  # the next heartbeat is full
    assert not a.heartbeat_in_flight
    assert (a.status, a.member_epoch, a.owned) == (before.status, before.member_epoch, before.owned)


def test_loading_coordinator_answers_load_in_progress_and_fires_no_timer() -> None:
    script = settled()
    script.do(CoordinatorFailover())
    group = script.state.group
    script.do(Crash("B"))
    assert SessionTimeout("B") not in system.enabled(script.state, CONFIG)
    script.do(SendHeartbeat("A"))
    script.deliver("A", to_coordinator=True)
    reply = script.message("A", to_coordinator=False).body
    assert isinstance(reply, ConsumerGroupHeartbeatResponse)
    assert reply.error_code is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    assert script.state.group == group  # nothing read or written
    script.do(CoordinatorLoaded())
    assert SessionTimeout("B") in system.enabled(script.state, CONFIG)


def test_the_records_carry_the_whole_group_on_reachable_states() -> None:
    """On the reference rules a reload changes nothing: every state the coordinator needs
    is in its records (random walks over the failover scenario)."""
    checked = 0
    for seed in range(20):
        rng = random.Random(seed)
        state = system.initial(MUT2_FAILOVER)
        for _ in range(40):
            assert rebuild_group(state.group, MUT2_FAILOVER) == state.group
            checked += 1
            enabled = system.enabled(state, MUT2_FAILOVER)
            if not enabled:
                break
            state = system.step(state, enabled[rng.randrange(len(enabled))], MUT2_FAILOVER)
    assert checked > 200


def test_failover_config_is_exhausted_with_the_reload_witness() -> None:
    config = replace(
        CONFIG,
        name="failover-small",
        topics=(("foo", 1),),
        max_perturbations=1,
        perturbations=frozenset({"CoordinatorFailover"}),
        required_witnesses=("GroupReloadedAfterFailover", "GroupConverges"),
    )
    result = bfs(config)
    assert result.exhausted
    assert result.result == "ok", (result.property, result.message, result.reasons)


def test_a_reload_that_forgets_pending_revocations_is_caught() -> None:
    result = bfs(get_mutant("failover-drops-pending-revocation").mutated_config())
    assert result.result == "violation"
    assert result.property in {"OwnedPartitionsAreHeld", "RevokedBeforeReassigned"}
