"""The coordinator's timers for live clients (``Config.live_timers``): a session that
expires behind lost heartbeats, and the KIP's guarantee that a member which never revokes
is removed by its rebalance timeout."""

from __future__ import annotations

from dataclasses import replace

from groupcheck.explore.bfs import bfs
from model import system
from model.actions import RebalanceTimeout, Reconcile, SessionTimeout, StallRevocation
from model.config import ClientSpec, Config
from model.presets import PRESETS
from model.scenario import Script

STALL = Config(
    kafka_version="4.2",
    name="STALL",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
    max_perturbations=2,
    perturbations=frozenset({"Subscribe", "StallRevocation"}),
    live_timers=True,
    report_pending_additions=True,
    max_restarts=0,
    required_witnesses=("RevocationCompletes", "StalledMemberRemoved", "GroupConverges"),
)
"""A owns both partitions; B joins, and A's application may hang in the revocation."""

ZOMBIE = Config(
    kafka_version="4.2",
    name="ZOMBIE",
    topics=(("foo", 1),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
    max_perturbations=1,
    perturbations=frozenset({"LoseMessage"}),
    live_timers=True,
    report_pending_additions=True,
    max_restarts=0,
    required_witnesses=("ZombieOverlap", "FencedMemberRejoins", "GroupConverges"),
)
"""One lost heartbeat: the coordinator may expire a live member's session."""


def test_a_member_that_never_revokes_is_removed() -> None:
    result = bfs(STALL)
    assert result.exhausted is True
    assert result.result == "ok", (result.property, result.reasons)
    assert "StalledMemberRemoved" in result.witnesses
    # Without the rebalance timer for live members, the hung member blocks the group.
    without = bfs(replace(STALL, live_timers=False))
    assert without.property == "Convergence"
    assert without.path is not None
    assert StallRevocation("A") in without.path.actions


def test_a_zombie_overlaps_but_the_reference_rules_violate_nothing() -> None:
    result = bfs(ZOMBIE)
    assert result.exhausted is True
    assert result.result == "ok", (result.property, result.message, result.reasons)
    assert "ZombieOverlap" in result.witnesses  # the overlap is reached, and excused


def test_live_timers_are_off_in_every_preset_but_timers() -> None:
    consumer = [n for n, c in PRESETS.items() if c.live_timers and c.protocol == "consumer"]
    # ZOMBIE_DELETION: a zombie (a live member a timer removed) meets its deleted group.
    assert consumer == ["TIMERS", "ZOMBIE_DELETION"]
    # The classic mutant scenarios that need a live member removed by a timer.
    classic = [n for n, c in PRESETS.items() if c.live_timers and c.protocol == "classic"]
    assert classic == ["MUTC_STICKY", "MUTC_COOPERATIVE"]


def _stalled_revoker() -> Script:
    from model.actions import Subscribe

    s = Script(STALL)
    s.heartbeat("A")
    s.reconcile("A")
    s.heartbeat("A")  # A owns foo-0 and foo-1 at epoch 1
    s.do(Subscribe("B"))
    s.heartbeat("B")  # B joins: A must give one partition up
    s.heartbeat("A")  # A is told to revoke
    return s


def test_stall_only_while_a_revocation_is_pending() -> None:
    s = Script(STALL)
    assert StallRevocation("A") not in system.enabled(s.state, STALL)
    s = _stalled_revoker()
    assert StallRevocation("A") in system.enabled(s.state, STALL)
    s.do(StallRevocation("A"))
    enabled = system.enabled(s.state, STALL)
    assert Reconcile("A") not in enabled  # the application thread hangs
    member = s.state.client("A").member_id
    assert RebalanceTimeout(member) in enabled
    # Without live timers the coordinator waits forever for a live client.
    no_timers = replace(STALL, live_timers=False)
    assert RebalanceTimeout(member) not in system.enabled(s.state, no_timers)


def test_session_expires_only_behind_a_lost_heartbeat() -> None:
    from model.actions import LoseMessage, SendHeartbeat

    s = Script(ZOMBIE)
    s.heartbeat("A")
    s.heartbeat("B")
    member = s.state.client("A").member_id
    assert SessionTimeout(member) not in system.enabled(s.state, ZOMBIE)
    s.do(SendHeartbeat("A"))
    s.do(LoseMessage(s.message("A", True)))
    assert SessionTimeout(member) in system.enabled(s.state, ZOMBIE)
    assert SessionTimeout(member) not in system.enabled(s.state, replace(ZOMBIE, live_timers=False))
    s.do(SessionTimeout(member))
    assert s.state.client("A").expired is True
