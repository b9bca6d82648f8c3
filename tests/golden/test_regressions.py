"""Regression scenarios: historical bugs and findings, scripted step by step.

Each scenario is run twice: with the rules that have the bug (a mutant, or Kafka's
behaviour for a finding) a named property must fail at the step the story says; with the
correct rules (or the proposed fix) the same story must run clean.
"""

from __future__ import annotations

from dataclasses import replace

from groupcheck.mutants import get_mutant
from groupcheck.mutants.catalogue import THREE_ON_TWO
from invariants.check import Checker
from model.actions import (
    AbandonRequest,
    Leave,
    ReleaseAssignment,
    RequestTimeout,
    SendHeartbeat,
    Subscribe,
)
from model.config import ClientSpec, Config
from model.records import State
from model.scenario import Script


class Watched(Script):
    """A script that checks every property after every step and records violations."""

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.checker = Checker()
        self.violations: list[tuple[int, str]] = []

    def do(self, action):  # type: ignore[no-untyped-def]
        pre = self.state
        post = super().do(action)
        found = self.checker.check_step(pre, action, post) + self.checker.check_state(post)
        self.violations += [(len(self.actions), v.property) for v in found]
        return post

    def properties(self) -> set[str]:
        return {p for _, p in self.violations}


def kafka_16147(script: Watched) -> State:
    """KAFKA-16147 (docs/bugs.md): M2 (here A) revokes foo-1 for B; B leaves before A
    acknowledges, so the new target gives foo-1 back to A; then C joins and the target gives
    foo-1 to C."""
    script.heartbeat("A")
    script.reconcile("A")
    script.heartbeat("A")  # A owns foo-0 and foo-1
    script.do(Subscribe("B"))
    script.heartbeat("B")  # target: A {foo-0}, B {foo-1}
    script.heartbeat("A")  # A is asked to revoke foo-1
    script.reconcile("A")  # A stops consuming foo-1
    script.do(Leave("B"))
    script.do(ReleaseAssignment("B"))
    script.do(SendHeartbeat("B"))
    script.deliver("B", to_coordinator=True)  # B's leave bumps the group epoch
    script.heartbeat("A")  # A acknowledges; the new target gives foo-1 back to A
    script.do(Subscribe("C"))
    return script.heartbeat("C")  # the target gives foo-1 to C


def test_kafka_16147_reproduced_by_the_bookkeeping_mutant() -> None:
    mutant = get_mutant("bookkeeping-drops-pending")
    script = Watched(replace(THREE_ON_TWO, rules=mutant.rules))
    kafka_16147(script)
    assert {"NoDoubleMemberAssignment", "HandOutOnlyReleased"} <= script.properties()
    assert ("foo", 1) not in script.state.group.partition_epochs or any(
        m.member_id == "C" and ("foo", 1) in m.assigned_partitions
        for m in script.state.group.members.values()
    )


def test_kafka_16147_does_not_happen_with_the_default_rules() -> None:
    script = Watched(THREE_ON_TWO)
    final = kafka_16147(script)
    assert script.violations == []
    c = final.group.members["C"]
    assert ("foo", 1) not in c.assigned_partitions  # C waits for foo-1 ...
    assert final.group.partition_epochs[("foo", 1)] == final.group.members["A"].member_epoch


F1 = Config(
    kafka_version="4.2",
    name="F1",
    topics=(("foo", 2),),
    clients=(
        ClientSpec("A", ("foo",), instance_id="a"),
        ClientSpec("B", ("foo",), instance_id="b"),
    ),
    max_perturbations=2,
    perturbations=frozenset({"LoseMessage", "AbandonRequest"}),
)


def finding_f1(script: Watched) -> State:
    """docs/findings.md F1: A is given foo-0 and foo-1 but, before it applies them, a
    heartbeat reports what it has applied (nothing) at the new epoch; meanwhile B joined and
    the target moved foo-1 to B. The coordinator takes foo-1 as already revoked."""
    script.heartbeat("A")  # A: epoch 1, target {foo-0, foo-1}, not applied yet
    script.do(SendHeartbeat("A"))
    script.do(SendHeartbeat("B"))
    script.deliver("B", to_coordinator=True)  # B joins: group epoch 2
    script.lose("A", to_coordinator=True)
    script.do(RequestTimeout("A"))
    script.do(SendHeartbeat("A"))  # full heartbeat: epoch 1, TopicPartitions=[]
    script.deliver("A", to_coordinator=True)  # A moves to epoch 2 holding only foo-0
    return script.reconcile("A")  # A applies its stale target and consumes foo-1


def test_finding_f1_with_kafka_rules() -> None:
    script = Watched(F1)
    final = finding_f1(script)
    assert "OwnedPartitionsAreHeld" in script.properties()
    assert ("foo", 1) in final.client("A").owned
    assert ("foo", 1) not in final.group.members["A"].owned_or_pending()


def test_finding_f1_closed_by_reporting_pending_additions() -> None:
    script = Watched(replace(F1, report_pending_additions=True))
    final = finding_f1(script)
    assert script.violations == []
    # The coordinator now sees foo-1 reported and asks A to revoke it first.
    assert ("foo", 1) in final.group.members["A"].partitions_pending_revocation


F2 = Config(
    kafka_version="4.2",
    name="F2",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
    max_perturbations=3,
    perturbations=frozenset({"Leave", "Subscribe", "AbandonRequest"}),
    reorder=True,
)


def test_finding_f2_delayed_leave_fences_the_rejoin() -> None:
    script = Watched(F2)
    script.heartbeat("A")
    script.reconcile("A")
    script.do(Leave("A"))
    script.do(ReleaseAssignment("A"))  # commits what it consumed, stops consuming
    script.deliver("A", to_coordinator=True)
    script.deliver("A", to_coordinator=False)
    script.do(SendHeartbeat("A"))  # the leave heartbeat (epoch -1), then A is UNSUBSCRIBED
    script.do(Subscribe("A"))
    script.do(AbandonRequest("A"))  # the leave is slow; the client reconnects
    script.do(SendHeartbeat("A"))  # rejoin on the new connection ...
    script.deliver("A", to_coordinator=True, newest=True)  # ... overtakes the slow leave
    script.deliver("A", to_coordinator=False)
    script.deliver("A", to_coordinator=True)  # the old leave finally arrives
    final = script.reconcile("A")
    assert "OwnedPartitionsAreHeld" in script.properties()
    assert "A" not in final.group.members
    assert final.client("A").owned


def test_finding_f2_needs_reordering() -> None:
    script = Watched(replace(F2, reorder=False))
    script.heartbeat("A")
    script.reconcile("A")
    script.do(Leave("A"))
    script.do(ReleaseAssignment("A"))
    script.deliver("A", to_coordinator=True)
    script.deliver("A", to_coordinator=False)
    script.do(SendHeartbeat("A"))
    script.do(Subscribe("A"))
    script.do(AbandonRequest("A"))
    script.do(SendHeartbeat("A"))
    # Without reordering the old connection's leave is delivered first.
    script.deliver("A", to_coordinator=True)
    assert script.state.group.members.get("A") is None
    script.deliver("A", to_coordinator=True)  # then the rejoin
    script.deliver("A", to_coordinator=False)
    assert "A" in script.state.group.members
    assert script.violations == []
