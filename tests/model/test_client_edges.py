"""The KIP-848 client state machine (Java ``AbstractMembershipManager``), one test per
transition: ``test_<from>_to_<to>``."""

from __future__ import annotations

from dataclasses import replace

from model import system
from model.actions import (
    AbandonRequest,
    Crash,
    Leave,
    LoseMessage,
    Reconcile,
    Rejoin,
    ReleaseAssignment,
    RequestTimeout,
    Restart,
    SendHeartbeat,
    Subscribe,
    TemporaryLeave,
)
from model.config import ClientSpec, Config
from model.consumer.client import on_heartbeat_response
from model.records import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse
from model.scenario import Script
from model.status import ClientStatus as S
from model.status import ErrorCode

CONFIG = Config(
    kafka_version="4.2",
    name="CLIENT",
    topics=(("foo", 2),),
    clients=(
        ClientSpec("A", ("foo",), subscribed=False),
        ClientSpec("B", ("foo",), subscribed=False, instance_id="b"),
    ),
    max_perturbations=10,
    perturbations=frozenset(
        {
            "Subscribe",
            "Leave",
            "TemporaryLeave",
            "Crash",
            "Restart",
            "LoseMessage",
            "AbandonRequest",
        }
    ),
    max_restarts=2,
)
FOO0, FOO1 = ("foo", 0), ("foo", 1)


def joined(name: str = "A") -> Script:
    script = Script(CONFIG)
    script.do(Subscribe(name))
    script.heartbeat(name)
    script.reconcile(name)
    script.heartbeat(name)  # acknowledge
    return script


def test_unsubscribed_to_joining() -> None:
    script = Script(CONFIG)
    assert script.state.client("A").status is S.UNSUBSCRIBED
    script.do(Subscribe("A"))
    assert script.state.client("A").status is S.JOINING
    script.do(SendHeartbeat("A"))
    req = script.message("A", to_coordinator=True).body
    assert isinstance(req, ConsumerGroupHeartbeatRequest)
    assert req.member_epoch == 0
    assert req.topic_partitions == frozenset()
    assert req.subscribed_topic_names == {"foo"}
    assert req.rebalance_timeout_ms == CONFIG.rebalance_timeout_ms


def test_joining_to_reconciling() -> None:
    script = Script(CONFIG)
    script.do(Subscribe("A"))
    script.heartbeat("A")
    a = script.state.client("A")
    assert a.status is S.RECONCILING
    assert a.member_epoch == 1
    assert a.target == {FOO0, FOO1}
    assert a.owned == frozenset()  # nothing is consumed before reconciling


def test_reconciling_to_acknowledging_without_revocation() -> None:
    script = Script(CONFIG)
    script.do(Subscribe("A"))
    script.heartbeat("A")
    script.reconcile("A")
    a = script.state.client("A")
    assert a.status is S.ACKNOWLEDGING
    assert a.owned == {FOO0, FOO1}


def test_acknowledging_to_stable() -> None:
    script = joined()
    a = script.state.client("A")
    assert a.status is S.STABLE
    assert script.state.group.members["A"].assigned_partitions == a.owned


def test_reconciling_to_acknowledging_with_revocation_commits_first() -> None:
    script = joined()
    script.do(Subscribe("B"))
    script.heartbeat("B")
    script.heartbeat("A")  # A's new target drops one partition
    a = script.state.client("A")
    assert a.status is S.RECONCILING
    revoked = a.owned - (a.target or frozenset())
    assert len(revoked) == 1
    script.do(Reconcile("A"))
    a = script.state.client("A")
    assert a.status is S.RECONCILING  # waiting for the commit
    assert a.revoking == revoked
    assert not (a.owned & revoked)  # stopped consuming at once
    commit = script.message("A", to_coordinator=True).body
    assert commit.topics == revoked  # type: ignore[union-attr]
    assert commit.generation_id_or_member_epoch == a.member_epoch  # type: ignore[union-attr]
    script.deliver("A", to_coordinator=True)
    script.deliver("A", to_coordinator=False)
    assert script.state.client("A").status is S.ACKNOWLEDGING


def test_acknowledging_to_reconciling_when_a_newer_target_waits() -> None:
    script = Script(CONFIG)
    script.do(Subscribe("A"))
    script.heartbeat("A")
    client = script.state.client("A")
    client = replace(client, status=S.ACKNOWLEDGING, owned=frozenset({FOO0}))
    state = replace(script.state, clients=(client, script.state.client("B")))
    new = system.step(state, SendHeartbeat("A"), CONFIG)
    assert new.client("A").status is S.RECONCILING  # target {foo-0, foo-1} ≠ owned


def fenced_by(error: ErrorCode) -> Script:
    script = joined()
    a = script.state.client("A")
    resp = ConsumerGroupHeartbeatResponse(error, None, 0, 0)
    a = on_heartbeat_response(replace(a, heartbeat_in_flight=True), resp, CONFIG)
    script.state = replace(script.state, clients=(a, script.state.client("B")))
    return script


def test_stable_to_fenced_on_fenced_member_epoch() -> None:
    a = fenced_by(ErrorCode.FENCED_MEMBER_EPOCH).state.client("A")
    assert a.status is S.FENCED
    assert a.member_epoch == 0
    assert a.owned == frozenset()


def test_stable_to_fenced_on_unknown_member_id() -> None:
    a = fenced_by(ErrorCode.UNKNOWN_MEMBER_ID).state.client("A")
    assert (a.status, a.owned) == (S.FENCED, frozenset())


def test_fenced_to_joining() -> None:
    script = fenced_by(ErrorCode.FENCED_MEMBER_EPOCH)
    script.do(Rejoin("A"))
    assert script.state.client("A").status is S.JOINING
    script.do(SendHeartbeat("A"))
    req = script.message("A", to_coordinator=True).body
    assert isinstance(req, ConsumerGroupHeartbeatRequest)
    assert (req.member_id, req.member_epoch, req.topic_partitions) == ("A", 0, frozenset())


def test_stable_to_fatal_on_unreleased_instance_id() -> None:
    script = Script(CONFIG)
    a = script.state.client("A")
    resp = ConsumerGroupHeartbeatResponse(ErrorCode.UNRELEASED_INSTANCE_ID, None, 0, 0)
    a = on_heartbeat_response(replace(a, status=S.JOINING, heartbeat_in_flight=True), resp, CONFIG)
    assert a.status is S.FATAL
    assert a.fatal_error is ErrorCode.UNRELEASED_INSTANCE_ID


def test_stable_to_prepare_leaving_to_leaving_to_unsubscribed() -> None:
    script = joined()
    script.do(Leave("A"))
    assert script.state.client("A").status is S.PREPARE_LEAVING
    script.do(ReleaseAssignment("A"))
    a = script.state.client("A")
    assert a.status is S.LEAVING
    assert a.owned == frozenset()
    script.deliver("A", to_coordinator=True)  # the commit of what it consumed
    script.deliver("A", to_coordinator=False)
    script.do(SendHeartbeat("A"))
    assert script.state.client("A").status is S.UNSUBSCRIBED  # as soon as it is sent
    leave = script.message("A", to_coordinator=True).body
    assert leave.member_epoch == -1  # type: ignore[union-attr]
    script.deliver("A", to_coordinator=True)
    assert "A" not in script.state.group.members


def test_static_temporary_leave_sends_minus_two() -> None:
    script = joined("B")
    script.do(TemporaryLeave("B"))
    script.do(ReleaseAssignment("B"))
    script.deliver("B", to_coordinator=True)
    script.deliver("B", to_coordinator=False)
    script.do(SendHeartbeat("B"))
    leave = script.message("B", to_coordinator=True).body
    assert (leave.member_epoch, leave.instance_id) == (-2, "b")  # type: ignore[union-attr]
    script.deliver("B", to_coordinator=True)
    assert script.state.group.members["B"].member_epoch == -2


def test_unsubscribed_ignores_a_late_leave_response_kafka_19335() -> None:
    script = joined()
    script.do(Leave("A"))
    script.do(ReleaseAssignment("A"))
    script.deliver("A", to_coordinator=True)
    script.deliver("A", to_coordinator=False)
    script.do(SendHeartbeat("A"))  # leave in flight
    script.do(Subscribe("A"))  # the application subscribes again at once
    script.deliver("A", to_coordinator=True)
    script.deliver("A", to_coordinator=False)  # the leave response (epoch -1)
    a = script.state.client("A")
    assert a.status is S.JOINING
    assert a.member_epoch == 0  # not -1


def test_heartbeat_sends_only_changed_fields_and_full_after_a_timeout() -> None:
    script = joined()
    script.do(SendHeartbeat("A"))
    req = script.message("A", to_coordinator=True).body
    assert isinstance(req, ConsumerGroupHeartbeatRequest)
    assert (req.subscribed_topic_names, req.topic_partitions, req.rebalance_timeout_ms) == (
        None,
        None,
        -1,
    )
    script.lose("A", to_coordinator=True)
    script.do(RequestTimeout("A"))
    script.do(SendHeartbeat("A"))
    req = script.message("A", to_coordinator=True).body
    assert isinstance(req, ConsumerGroupHeartbeatRequest)
    assert req.is_full()


def test_crashed_client_never_reads_responses_and_restarts_with_a_new_member_id() -> None:
    script = joined("B")
    script.do(SendHeartbeat("B"))
    script.do(Crash("B"))
    script.deliver("B", to_coordinator=True)
    script.deliver("B", to_coordinator=False)  # dropped: nobody listens
    assert script.state.client("B").alive is False
    script.do(Restart("B"))
    b = script.state.client("B")
    assert (b.member_id, b.instance_id, b.status) == ("B.1", "b", S.JOINING)


def test_response_on_an_abandoned_connection_is_dropped() -> None:
    script = joined()
    script.do(SendHeartbeat("A"))
    script.do(AbandonRequest("A"))
    assert script.state.client("A").connection == 1
    script.deliver("A", to_coordinator=True)
    before = script.state.client("A")
    script.deliver("A", to_coordinator=False)
    assert script.state.client("A") == before


def test_lost_response_then_retry_is_accepted_by_the_lost_response_rule() -> None:
    script = Script(CONFIG)
    script.do(Subscribe("A"))
    script.heartbeat("A")
    script.reconcile("A")
    script.do(Subscribe("B"))
    script.heartbeat("B")  # target moves foo-1 (or foo-0) to B
    script.do(SendHeartbeat("A"))  # ack of epoch 1 carries owned {foo-0, foo-1}
    script.deliver("A", to_coordinator=True)
    script.do(LoseMessage(script.message("A", to_coordinator=False)))
    script.do(RequestTimeout("A"))
    script.do(SendHeartbeat("A"))  # full retry at the old epoch
    script.deliver("A", to_coordinator=True)
    resp = script.message("A", to_coordinator=False).body
    assert resp.error_code is ErrorCode.NONE  # type: ignore[union-attr]
