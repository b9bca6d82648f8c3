"""Rebalance callbacks as steps of their own, the poll timer, and the client contract
properties that make them checkable (``AbstractMembershipManager``; docs/fidelity.md C2,
C3, C5, C7–C9)."""

from __future__ import annotations

from dataclasses import replace

from groupcheck.explore.bfs import bfs
from invariants.check import Checker
from model import system
from model.actions import (
    CompleteCallback,
    Leave,
    Poll,
    PollTimerExpires,
    Reconcile,
    SendHeartbeat,
    Subscribe,
)
from model.config import ClientSpec, Config
from model.consumer import client as cl
from model.presets import CALLBACKS
from model.records import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse
from model.scenario import Script
from model.status import ClientStatus as S
from model.status import ErrorCode

CONFIG = Config(
    kafka_version="4.2",
    name="CALLBACK_EDGES",
    topics=(("foo", 2),),
    clients=(
        ClientSpec("A", ("foo",), subscribed=False),
        ClientSpec("B", ("foo",), subscribed=False, instance_id="b"),
    ),
    max_perturbations=10,
    perturbations=frozenset({"Subscribe", "Leave", "PollTimerExpires", "LoseMessage"}),
    callback_steps=True,
)
FOO0, FOO1 = ("foo", 0), ("foo", 1)


def joined(name: str = "A", config: Config = CONFIG) -> Script:
    """``name`` joined alone, reconciled (onPartitionsAssigned as its own step) and acked."""
    script = Script(config)
    script.do(Subscribe(name))
    script.heartbeat(name)
    script.reconcile(name)
    if config.callback_steps:
        assert script.state.client(name).callback == cl.ON_PARTITIONS_ASSIGNED
        script.do(CompleteCallback(name))
    script.heartbeat(name)
    assert script.state.client(name).status is S.STABLE
    return script


def revoking_one() -> Script:
    """A owns both partitions; B joined, so A's new target drops one and A has started
    reconciling: the revoked partition's offset commit is in flight."""
    script = joined()
    script.do(Subscribe("B"))
    script.heartbeat("B")
    script.heartbeat("A")
    script.do(Reconcile("A"))
    a = script.state.client("A")
    assert a.commit_in_flight
    assert len(a.revoking) == 1
    return script


def test_revocation_runs_commit_then_revoked_then_assigned_callbacks() -> None:
    script = revoking_one()
    revoked = script.state.client("A").revoking
    script.deliver("A", to_coordinator=True)
    script.deliver("A", to_coordinator=False)  # the commit completed
    a = script.state.client("A")
    assert a.callback == cl.ON_PARTITIONS_REVOKED
    assert a.status is S.RECONCILING
    assert a.revoking == revoked
    assert not (a.owned & revoked)  # consumption stopped before the callback
    script.do(CompleteCallback("A"))
    a = script.state.client("A")
    assert a.callback == cl.ON_PARTITIONS_ASSIGNED
    script.do(CompleteCallback("A"))
    a = script.state.client("A")
    assert a.callback is None
    assert a.status is S.ACKNOWLEDGING
    assert a.owned == a.target
    assert not a.revoking


def test_heartbeat_reports_revoking_partitions_until_the_reconciliation_completes() -> None:
    """Java's ``currentAssignment`` changes only when a reconciliation completes: the
    coordinator must not take a partition still being revoked as released."""
    script = revoking_one()
    a = script.state.client("A")
    reported = cl.reported_partitions(a, CONFIG)
    assert reported == a.owned | a.revoking == {FOO0, FOO1}


def test_app_thread_actions_wait_for_the_callback() -> None:
    script = revoking_one()
    script.deliver("A", to_coordinator=True)
    script.deliver("A", to_coordinator=False)
    enabled = system.enabled(script.state, CONFIG)
    assert CompleteCallback("A") in enabled
    assert Leave("A") not in enabled  # unsubscribe() runs on the application thread


def test_fencing_during_revoked_callback_aborts_the_reconciliation_then_loses() -> None:
    script = revoking_one()
    script.deliver("A", to_coordinator=True)
    script.deliver("A", to_coordinator=False)
    a = script.state.client("A")
    assert a.callback == cl.ON_PARTITIONS_REVOKED
    fenced = cl.on_heartbeat_error(a, ErrorCode.FENCED_MEMBER_EPOCH, CONFIG)
    assert fenced.status is S.FENCED
    assert fenced.owned == frozenset()
    assert fenced.callback == cl.ON_PARTITIONS_REVOKED
    assert fenced.lost_queued
    after, commit = cl.complete_callback(fenced, CONFIG)
    assert commit is None
    assert after.reconciling is None  # maybeAbortReconciliation: not applied
    assert after.callback == cl.ON_PARTITIONS_LOST
    assert not after.lost_queued
    assert after.owned == frozenset()
    rejoined, _ = cl.complete_callback(after, CONFIG)
    assert rejoined.status is S.JOINING
    assert rejoined.member_epoch == 0
    assert rejoined.owned == frozenset()


def test_commit_completing_after_a_rejoin_does_not_apply_the_old_reconciliation() -> None:
    """Fenced while the revocation commit is in flight: onPartitionsLost runs, the client
    rejoins, then the commit completes — the old target must not be applied
    (``rejoinedWhileReconciliationInProgress``)."""
    script = revoking_one()
    a = script.state.client("A")
    fenced = cl.on_heartbeat_error(a, ErrorCode.FENCED_MEMBER_EPOCH, CONFIG)
    assert fenced.callback == cl.ON_PARTITIONS_LOST
    assert fenced.reconciling is not None
    rejoined, _ = cl.complete_callback(fenced, CONFIG)
    assert rejoined.status is S.JOINING
    assert rejoined.rejoined_while_reconciling
    after = cl.on_commit_response(rejoined, None, CONFIG)
    assert after.reconciling is None
    assert not after.rejoined_while_reconciling
    assert after.owned == frozenset()
    assert after.status is S.JOINING
    assert after.callback is None


def test_poll_timer_leaves_then_loses_then_rejoins_on_the_next_poll() -> None:
    script = joined()
    script.do(PollTimerExpires("A"))
    a = script.state.client("A")
    assert a.status is S.LEAVING
    assert a.leave_epoch == -1
    assert a.poll_expired
    script.do(SendHeartbeat("A"))
    req = script.message("A", to_coordinator=True).body
    assert isinstance(req, ConsumerGroupHeartbeatRequest)
    assert req.member_epoch == -1
    a = script.state.client("A")
    assert a.status is S.STALE
    assert a.owned == frozenset()
    assert a.callback == cl.ON_PARTITIONS_LOST
    assert Poll("A") not in system.enabled(script.state, CONFIG)  # callback first
    script.do(CompleteCallback("A"))
    assert script.state.client("A").status is S.STALE  # waits for the application
    script.deliver("A", to_coordinator=True)  # the leave reaches the coordinator
    assert "A" not in script.state.group.members
    script.do(Poll("A"))
    a = script.state.client("A")
    assert a.status is S.JOINING
    assert a.member_epoch == 0
    assert not a.poll_expired


def test_poll_timer_of_a_static_member_leaves_with_epoch_minus_two() -> None:
    script = joined("B")
    script.do(PollTimerExpires("B"))
    assert script.state.client("B").leave_epoch == -2


def test_poll_timer_without_callback_steps_is_stale_at_once() -> None:
    config = replace(CONFIG, callback_steps=False)
    script = joined(config=config)
    script.do(PollTimerExpires("A"))
    script.do(SendHeartbeat("A"))
    a = script.state.client("A")
    assert a.status is S.STALE
    assert a.callback is None
    assert a.owned == frozenset()
    assert Poll("A") in system.enabled(script.state, config)


def test_new_target_while_acknowledging_moves_to_reconciling() -> None:
    """``processAssignmentReceived``: a new target is reconciled from ACKNOWLEDGING too."""
    script = Script(CONFIG)
    script.do(Subscribe("A"))
    script.heartbeat("A")
    script.reconcile("A")
    script.do(CompleteCallback("A"))
    a = script.state.client("A")
    assert a.status is S.ACKNOWLEDGING
    resp = ConsumerGroupHeartbeatResponse(
        error_code=ErrorCode.NONE,
        member_id=a.member_id,
        member_epoch=a.member_epoch + 1,
        heartbeat_interval_ms=5000,
        assignment=frozenset({FOO0}),
    )
    after = cl.on_heartbeat_response(replace(a, heartbeat_in_flight=True), resp, CONFIG)
    assert after.status is S.RECONCILING
    assert after.target == {FOO0}


def test_joining_client_owns_nothing_property() -> None:
    """A client back at JOINING that still consumes breaks ``JoiningClientOwnsNothing``."""
    script = joined()
    a = script.state.client("A")
    bad = replace(
        script.state,
        clients=(replace(a, status=S.JOINING, member_epoch=0), *script.state.clients[1:]),
    )
    violated = {v.property for v in Checker().check_state(bad)}
    assert "JoiningClientOwnsNothing" in violated
    assert not {v.property for v in Checker().check_state(script.state)}


def test_revoked_before_reassigned_property() -> None:
    """A partition another client consumes while this one still revokes it."""
    script = revoking_one()
    a = script.state.client("A")
    (tp,) = a.revoking
    b = script.state.client("B")
    bad = replace(script.state, clients=(a, replace(b, owned=frozenset({tp}))))
    violated = {v.property for v in Checker().check_state(bad)}
    assert "RevokedBeforeReassigned" in violated


def test_small_callback_config_is_exhausted_with_its_witnesses() -> None:
    config = replace(
        CALLBACKS,
        topics=(("foo", 1),),
        max_perturbations=1,
        required_witnesses=(
            "ReconciliationAborted",
            "StaleMemberRejoins",
            "FencedMemberRejoins",
            "GroupConverges",
        ),
    )
    result = bfs(config)
    assert result.exhausted
    assert result.result == "ok", (result.property, result.message, result.reasons)
    assert result.distinct_states == 1209
