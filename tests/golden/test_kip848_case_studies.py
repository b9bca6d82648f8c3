"""The KIP-848 case studies, step by step, with the KIP's own epoch numbering.

Each test drives the model only through ``system.step`` with enabled actions, the way
the KIP narrates it: heartbeats are a request and its response, the target assignment is
computed as a step of its own (``compute_target_in_heartbeat=False``), members reconcile
only once the new target is installed (``reconcile_while_assigning=False``) and epochs
start at 0 (``epoch_layout="kip-848"``). After every step for which the KIP shows the group, the
group epoch, the target assignment and every member's epoch, partitions and
pending-partitions must equal the KIP's table.

Where the KIP text and Kafka differ, the test follows Kafka and says so (docs/fidelity.md):
a fenced member's target entry is deleted at once, and a snapshot the KIP prints *before*
describing a member's heartbeat is compared after that heartbeat.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from model import system
from model.actions import (
    Action,
    AddPartitions,
    ComputeTargetAssignment,
    Crash,
    DeliverMessage,
    Reconcile,
    SendHeartbeat,
    SessionTimeout,
    Subscribe,
)
from model.config import ClientSpec, Config
from model.consumer.coordinator import pending_partitions
from model.records import State
from model.scenario import stable_state
from model.status import ClientStatus, MemberState


def P(text: str) -> frozenset[tuple[str, int]]:
    """``P("foo-0 foo-1")`` → the partitions, as the KIP writes them."""
    out = set()
    for item in text.split():
        topic, _, index = item.rpartition("-")
        out.add((topic, int(index)))
    return frozenset(out)


def kip_config(partitions: int) -> Config:
    return Config(
        kafka_version="4.2",
        name="KIP848_CASE_STUDY",
        topics=(("foo", partitions),),
        clients=tuple(ClientSpec(n, ("foo",), subscribed=False) for n in "ABC"),
        max_perturbations=10,
        perturbations=frozenset({"Subscribe", "Crash", "AddPartitions"}),
        compute_target_in_heartbeat=False,
        reconcile_while_assigning=False,
        epoch_layout="kip-848",
        max_partitions_per_topic=6,
    )


@dataclass
class Driver:
    config: Config
    state: State
    taken: list[Action] = field(default_factory=list)

    def do(self, action: Action) -> None:
        assert action in system.enabled(self.state, self.config), f"{action} not enabled"
        self.state = system.step(self.state, action, self.config)
        self.taken.append(action)

    def deliver(self, client: str, to_coordinator: bool) -> None:
        for m in self.state.network:
            if m.client == client and m.to_coordinator == to_coordinator:
                self.do(DeliverMessage(m))
                return
        raise AssertionError(f"no message for {client} (to_coordinator={to_coordinator})")

    def heartbeat(self, client: str) -> None:
        """One ConsumerGroupHeartbeat round trip."""
        self.do(SendHeartbeat(client))
        self.deliver(client, to_coordinator=True)
        self.deliver(client, to_coordinator=False)

    def join(self, client: str) -> None:
        self.do(Subscribe(client))
        self.heartbeat(client)

    def reconcile(self, client: str) -> None:
        """The client applies its new assignment; revoked partitions are committed first."""
        self.do(Reconcile(client))
        if self.state.client(client).commit_in_flight:
            self.deliver(client, to_coordinator=True)
            self.deliver(client, to_coordinator=False)
        assert self.state.client(client).status is ClientStatus.ACKNOWLEDGING

    def compute(self) -> None:
        self.do(ComputeTargetAssignment())

    def expect(
        self,
        group_epoch: int,
        target_epoch: int,
        target: dict[str, str],
        members: dict[str, tuple[int, str, str]],
    ) -> None:
        """Compare with a KIP table: members map to (epoch, partitions, pending-partitions)."""
        g = self.state.group
        assert g.group_epoch == group_epoch, self.taken
        assert g.assignment_epoch == target_epoch
        assert dict(g.target_assignment) == {m: P(p) for m, p in target.items()}
        assert set(g.members) == set(members)
        for mid, (epoch, parts, pending) in members.items():
            m = g.members[mid]
            assert m.member_epoch == epoch, (mid, m)
            # The KIP's "partitions" are what the member still holds: Kafka's assigned
            # partitions plus those pending revocation.
            assert m.owned_or_pending() == P(parts), (mid, m)
            assert pending_partitions(g, m) == P(pending), (mid, m)


def test_basic() -> None:
    config = kip_config(3)
    d = Driver(config, system.initial(config))
    d.expect(0, 0, {}, {})

    d.join("A")  # "Member A joins the group. The coordinator bumps the group epoch to 1"
    d.expect(1, 0, {}, {"A": (0, "", "")})
    d.compute()
    d.expect(1, 1, {"A": "foo-0 foo-1 foo-2"}, {"A": (0, "", "")})
    d.heartbeat("A")
    d.expect(1, 1, {"A": "foo-0 foo-1 foo-2"}, {"A": (1, "foo-0 foo-1 foo-2", "")})
    d.reconcile("A")

    d.join("B")
    d.expect(
        2,
        1,
        {"A": "foo-0 foo-1 foo-2"},
        {"A": (1, "foo-0 foo-1 foo-2", ""), "B": (0, "", "")},
    )
    d.compute()
    target2 = {"A": "foo-0 foo-1", "B": "foo-2"}
    d.expect(2, 2, target2, {"A": (1, "foo-0 foo-1 foo-2", ""), "B": (0, "", "")})
    d.heartbeat("B")  # "B can transition to epoch 2 but cannot get foo-2 until A revokes it"
    d.expect(2, 2, target2, {"A": (1, "foo-0 foo-1 foo-2", ""), "B": (2, "", "foo-2")})

    d.heartbeat("A")  # "the group coordinator instructs it to revoke foo-2"
    a = d.state.group.members["A"]
    assert a.state is MemberState.UNREVOKED_PARTITIONS
    assert a.member_epoch == 1
    assert a.partitions_pending_revocation == P("foo-2")
    d.reconcile("A")
    d.heartbeat("A")  # "acknowledges the revocation … transitions it to epoch 2"
    d.expect(2, 2, target2, {"A": (2, "foo-0 foo-1", ""), "B": (2, "", "foo-2")})
    d.heartbeat("B")  # "When B heartbeats, he can now gets foo-2."
    d.expect(2, 2, target2, {"A": (2, "foo-0 foo-1", ""), "B": (2, "foo-2", "")})
    d.reconcile("B")

    d.join("C")
    d.expect(
        3,
        2,
        target2,
        {"A": (2, "foo-0 foo-1", ""), "B": (2, "foo-2", ""), "C": (0, "", "")},
    )
    d.compute()
    target3 = {"A": "foo-0", "B": "foo-2", "C": "foo-1"}
    d.expect(
        3,
        3,
        target3,
        {"A": (2, "foo-0 foo-1", ""), "B": (2, "foo-2", ""), "C": (0, "", "")},
    )
    d.heartbeat("B")  # "transitions it to epoch 3 because B has no partitions to revoke"
    d.expect(
        3,
        3,
        target3,
        {"A": (2, "foo-0 foo-1", ""), "B": (3, "foo-2", ""), "C": (0, "", "")},
    )
    d.heartbeat("C")  # "it transitions to epoch 3 but cannot get foo-1 yet"
    d.expect(
        3,
        3,
        target3,
        {"A": (2, "foo-0 foo-1", ""), "B": (3, "foo-2", ""), "C": (3, "", "foo-1")},
    )
    d.heartbeat("A")  # "instructs it to revoke foo-1"
    assert d.state.group.members["A"].partitions_pending_revocation == P("foo-1")
    d.reconcile("A")
    d.heartbeat("A")  # "transitions it to epoch 3 and releases foo-1"
    d.expect(
        3,
        3,
        target3,
        {"A": (3, "foo-0", ""), "B": (3, "foo-2", ""), "C": (3, "", "foo-1")},
    )
    d.heartbeat("C")  # the KIP's last table already shows C's next heartbeat
    d.expect(
        3,
        3,
        target3,
        {"A": (3, "foo-0", ""), "B": (3, "foo-2", ""), "C": (3, "foo-1", "")},
    )


def test_incremental_revocation_and_assignment() -> None:
    config = kip_config(6)
    start = stable_state(config, 21, {"A": P("foo-0 foo-1 foo-2"), "B": P("foo-3 foo-4 foo-5")})
    d = Driver(config, start)
    d.expect(
        21,
        21,
        {"A": "foo-0 foo-1 foo-2", "B": "foo-3 foo-4 foo-5"},
        {"A": (21, "foo-0 foo-1 foo-2", ""), "B": (21, "foo-3 foo-4 foo-5", "")},
    )
    d.join("C")
    d.compute()  # "adds it, bumps the group epoch, … and computes the target assignment"
    target = {"A": "foo-0 foo-1", "B": "foo-3 foo-4", "C": "foo-2 foo-5"}
    d.expect(
        22,
        22,
        target,
        {"A": (21, "foo-0 foo-1 foo-2", ""), "B": (21, "foo-3 foo-4 foo-5", ""), "C": (0, "", "")},
    )
    d.heartbeat("C")  # "transitions it to epoch 22 but does not yet give it any partitions"
    d.expect(
        22,
        22,
        target,
        {
            "A": (21, "foo-0 foo-1 foo-2", ""),
            "B": (21, "foo-3 foo-4 foo-5", ""),
            "C": (22, "", "foo-2 foo-5"),
        },
    )
    d.heartbeat("A")  # "instructs it to revoke foo-2"
    assert d.state.group.members["A"].partitions_pending_revocation == P("foo-2")
    d.heartbeat("B")  # "instructs it to revoke foo-5"
    assert d.state.group.members["B"].partitions_pending_revocation == P("foo-5")
    before = d.state.group.members["C"]
    d.heartbeat("C")  # "C heartbeats, no changes for it." (epoch and partitions)
    after = d.state.group.members["C"]
    assert (after.member_epoch, after.assigned_partitions, after.state) == (
        before.member_epoch,
        before.assigned_partitions,
        before.state,
    )

    d.reconcile("A")
    d.heartbeat("A")  # "transitions it to epoch 22, release foo-2"
    a = d.state.group.members["A"]
    assert (a.member_epoch, a.assigned_partitions) == (22, P("foo-0 foo-1"))
    assert "foo-2" not in {f"{t}-{p}" for t, p in d.state.group.partition_epochs}
    d.heartbeat("C")  # "gives it foo-2 which is now free but hold foo-5"
    d.expect(
        22,
        22,
        target,
        {
            "A": (22, "foo-0 foo-1", ""),
            "B": (21, "foo-3 foo-4 foo-5", ""),
            "C": (22, "foo-2", "foo-5"),
        },
    )
    d.reconcile("B")
    d.heartbeat("B")  # "transitions it to epoch 22, releases foo-5"
    d.heartbeat("C")  # "gives it foo-2 and foo-5"
    d.expect(
        22,
        22,
        target,
        {"A": (22, "foo-0 foo-1", ""), "B": (22, "foo-3 foo-4", ""), "C": (22, "foo-2 foo-5", "")},
    )


def test_member_failure() -> None:
    config = kip_config(6)
    start = stable_state(
        config, 22, {"A": P("foo-0 foo-1"), "B": P("foo-3 foo-4"), "C": P("foo-2 foo-5")}
    )
    d = Driver(config, start)
    d.do(Crash("A"))  # "A fails to heartbeat."
    d.do(SessionTimeout("A"))  # "removes it after the session timeout expires and bump"
    # The KIP still lists A's target entry; Kafka deletes it with the member
    # (GroupMetadataManager.fenceMember writes a target-assignment tombstone).
    d.expect(
        23,
        22,
        {"B": "foo-3 foo-4", "C": "foo-2 foo-5"},
        {"B": (22, "foo-3 foo-4", ""), "C": (22, "foo-2 foo-5", "")},
    )
    d.compute()
    target = {"B": "foo-3 foo-4 foo-0", "C": "foo-2 foo-5 foo-1"}
    d.expect(23, 23, target, {"B": (22, "foo-3 foo-4", ""), "C": (22, "foo-2 foo-5", "")})
    d.heartbeat("B")
    d.heartbeat("C")  # "B and C heartbeat and transition to epoch 23."
    d.expect(
        23,
        23,
        target,
        {"B": (23, "foo-3 foo-4 foo-0", ""), "C": (23, "foo-2 foo-5 foo-1", "")},
    )


def test_partition_added() -> None:
    config = kip_config(1)
    start = stable_state(config, 22, {"A": P("foo-0"), "B": frozenset()})
    d = Driver(config, start)
    d.expect(22, 22, {"A": "foo-0", "B": ""}, {"A": (22, "foo-0", ""), "B": (22, "", "")})
    d.do(AddPartitions("foo"))  # "A new partition foo-1 is created … bump the group epoch."
    d.expect(23, 22, {"A": "foo-0", "B": ""}, {"A": (22, "foo-0", ""), "B": (22, "", "")})
    d.compute()
    target = {"A": "foo-0", "B": "foo-1"}
    d.expect(23, 23, target, {"A": (22, "foo-0", ""), "B": (22, "", "")})
    d.heartbeat("A")
    d.heartbeat("B")  # the KIP says "B and C"; the group has A and B
    d.expect(23, 23, target, {"A": (23, "foo-0", ""), "B": (23, "foo-1", "")})
