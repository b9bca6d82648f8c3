"""KIP-848's "Online Migration" case study, step by step, in the KIP's terms.

The KIP starts from a classic ("generic") group at generation 22 with members A, B and C
on six partitions of ``foo``, and narrates the coordinator: the conversion when A comes
back with the new protocol, B's leave, C's eager rebalance through JoinGroup/SyncGroup
against the consumer group, and B's return with the new protocol. The test drives the
coordinator functions of ``model/migration/`` and ``model/consumer/coordinator.py`` with the
requests the KIP describes, and after every step for which the KIP shows the group
compares the group epoch, the target assignment and every member's epoch, partitions and
pending partitions with the KIP's table.

Where Kafka refines the KIP the test follows Kafka and says so (docs/fidelity.md):

- A, a static member (instance ``a``), comes back as a consumer-protocol process that
  replaces its classic member (KAFKA-17228) under a new member id, ``A'``; the join that
  converts the group bumps the group epoch (M12), so from there on every epoch is the
  KIP's + 1 (``K``).
- A classic member's JoinGroup is answered with its new member epoch as generation (M4);
  SyncGroup returns its assigned partitions.
- Which partition C gives up when B returns is the uniform assignor's choice, not the
  KIP table's (the KIP moves foo-4); the test names it ``moved``.
"""

from __future__ import annotations

from model.classic.messages import (
    ClassicSubscription,
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    SyncGroupRequest,
)
from model.classic.records import ClassicGroup, ClassicMember, ReplyTo
from model.config import ClientSpec, Config
from model.consumer import coordinator as co
from model.consumer.coordinator import pending_partitions
from model.ids import FrozenMap
from model.migration import coordinator as mco
from model.records import ConsumerGroupHeartbeatRequest, Group, TopicMetadata
from model.status import ClassicGroupStatus, ErrorCode, MemberState

K = 1
"""The model's epochs from the upgrade on: the KIP's + 1 (docs/fidelity.md M12)."""

CONFIG = Config(
    kafka_version="4.2",
    name="KIP848_ONLINE_MIGRATION",
    protocol="mixed",
    topics=(("foo", 6),),
    clients=tuple(
        ClientSpec(n, ("foo",), instance_id=n.lower(), group_protocol="classic") for n in "ABC"
    ),
    max_partitions_per_topic=6,
)
TOPICS = FrozenMap({"foo": TopicMetadata("foo", 6)})


def P(text: str) -> frozenset[tuple[str, int]]:
    """``P("foo-0 foo-1")`` → the partitions, as the KIP writes them."""
    out = set()
    for item in text.split():
        topic, _, index = item.rpartition("-")
        out.add((topic, int(index)))
    return frozenset(out)


def _classic_member(name: str, partitions: str) -> ClassicMember:
    return ClassicMember(
        member_id=name,
        instance_id=name.lower(),
        protocols=("range",),
        subscription=ClassicSubscription(frozenset({"foo"})),
        rebalance_timeout_ms=300000,
        assignment=P(partitions),
        process=ReplyTo(name, 0, 0),
    )


def expect(
    group: Group,
    epoch: int,
    target_epoch: int,
    target: dict[str, str],
    members: dict[str, tuple[int, str, str]],
) -> None:
    """The KIP's table: group epoch, target assignment (epoch, partitions per member) and
    member assignment (epoch, partitions, pending-partitions per member)."""
    assert group.group_epoch == epoch
    assert group.assignment_epoch == target_epoch
    assert dict(group.target_assignment) == {m: P(p) for m, p in target.items()}
    got = {
        mid: (m.member_epoch, m.assigned_partitions, pending_partitions(group, m))
        for mid, m in group.members.items()
    }
    assert got == {m: (e, P(p), P(q)) for m, (e, p, q) in members.items()}


def _heartbeat(group: Group, member_id: str, **fields: object) -> Group:
    member = group.members[member_id]
    req = ConsumerGroupHeartbeatRequest(
        member_id=member_id,
        member_epoch=member.member_epoch,
        instance_id=member.instance_id,
        **fields,  # type: ignore[arg-type]
    )
    group, response = co.handle_consumer_group_heartbeat(group, TOPICS, req, CONFIG)
    assert response.error_code is ErrorCode.NONE
    return group


def _classic_join(group: Group, name: str, owned: str = "") -> tuple[Group, JoinGroupResponse]:
    req = JoinGroupRequest(
        member_id=name,
        instance_id=name.lower(),
        protocols=("range",),
        subscription=ClassicSubscription(frozenset({"foo"}), owned_partitions=P(owned)),
        rebalance_timeout_ms=300000,
        session_timeout_ms=45000,
    )
    group, _, replies = mco.handle_classic_join(
        group, TOPICS, req, ReplyTo(name, 0, 0), FrozenMap(), CONFIG
    )
    response = replies[0][1]
    assert isinstance(response, JoinGroupResponse)
    assert response.error_code is ErrorCode.NONE
    return group, response


def test_online_migration_case_study() -> None:
    # "We start with a generic group" at generation 22.
    classic = ClassicGroup(
        status=ClassicGroupStatus.STABLE,
        generation_id=22,
        protocol_name="range",
        leader_id="A",
        members=FrozenMap(
            {
                "A": _classic_member("A", "foo-0 foo-1"),
                "B": _classic_member("B", "foo-3 foo-4"),
                "C": _classic_member("C", "foo-2 foo-5"),
            }
        ),
        committed_offsets=FrozenMap(),
    )

    # "The group is converted. The current generation becomes the group epoch. The target
    # assignment and the member assignments are created based on the current assignment."
    assert mco.validate_online_upgrade(classic, CONFIG)
    group = mco.from_classic_group(classic)
    expect(
        group,
        22,
        22,
        {"A": "foo-0 foo-1", "B": "foo-3 foo-4", "C": "foo-2 foo-5"},
        {
            "A": (22, "foo-0 foo-1", ""),
            "B": (22, "foo-3 foo-4", ""),
            "C": (22, "foo-2 foo-5", ""),
        },
    )

    # "A uses the new protocol": its consumer-protocol process replaces its classic member
    # (KAFKA-17228) and keeps its partitions.
    group = mco.bump_for_replacement(group, "a")
    req = ConsumerGroupHeartbeatRequest(
        member_id="A'",
        member_epoch=0,
        instance_id="a",
        rebalance_timeout_ms=300000,
        subscribed_topic_names=frozenset({"foo"}),
        topic_partitions=frozenset(),
    )
    group, response = co.handle_consumer_group_heartbeat(group, TOPICS, req, CONFIG)
    assert response.error_code is ErrorCode.NONE
    assert group.members["A'"].classic is None
    expect(
        group,
        22 + K,
        22 + K,
        {"A'": "foo-0 foo-1", "B": "foo-3 foo-4", "C": "foo-2 foo-5"},
        {
            "A'": (22 + K, "foo-0 foo-1", ""),
            "B": (22, "foo-3 foo-4", ""),
            "C": (22, "foo-2 foo-5", ""),
        },
    )

    # "B leaves the group. The group coordinator removes it and bumps the group epoch."
    group, left = mco.handle_classic_leave(group, LeaveGroupRequest("B", "b"), CONFIG)
    assert left.error_code is ErrorCode.NONE
    assert group.group_epoch == 23 + K
    assert set(group.members) == {"A'", "C"}
    assert not mco.validate_online_downgrade(group, group, CONFIG)  # A' still speaks KIP-848

    # "C heartbeats and is notified that a rebalance is required."
    hb = mco.handle_classic_heartbeat(group, HeartbeatRequest("C", 22, "c"), CONFIG)
    assert hb.error_code is ErrorCode.REBALANCE_IN_PROGRESS

    # "C revokes all its partitions (Eager) and sends a JoinGroup request. [It] can
    # transition to epoch 23 [...]; the new epoch must be given to the member in the
    # JoinGroup response." The new target is computed on that request.
    group, joined = _classic_join(group, "C")
    assert joined.generation_id == 23 + K
    expect(
        group,
        23 + K,
        23 + K,
        {"A'": "foo-0 foo-1 foo-3", "C": "foo-2 foo-5 foo-4"},
        {"A'": (22 + K, "foo-0 foo-1", ""), "C": (23 + K, "foo-2 foo-5 foo-4", "")},
    )

    # "In the meantime, A heartbeats and transitions to epoch 23 as well."
    group = _heartbeat(group, "A'")
    expect(
        group,
        23 + K,
        23 + K,
        {"A'": "foo-0 foo-1 foo-3", "C": "foo-2 foo-5 foo-4"},
        {"A'": (23 + K, "foo-0 foo-1 foo-3", ""), "C": (23 + K, "foo-2 foo-5 foo-4", "")},
    )

    # "C sends the SyncGroup request and collects its new assignment."
    sync = mco.handle_classic_sync(group, SyncGroupRequest("C", 23 + K, "c", "range"), CONFIG)
    assert sync.error_code is ErrorCode.NONE
    assert sync.assignment == P("foo-2 foo-5 foo-4")

    # "B rejoins the group with the new protocol. The group coordinator adds it and bumps
    # the group epoch"; the new target has C revoke foo-4 and A foo-3.
    req = ConsumerGroupHeartbeatRequest(
        member_id="B'",
        member_epoch=0,
        rebalance_timeout_ms=300000,
        subscribed_topic_names=frozenset({"foo"}),
        topic_partitions=frozenset(),
    )
    group, response = co.handle_consumer_group_heartbeat(group, TOPICS, req, CONFIG)
    assert response.error_code is ErrorCode.NONE
    # Which of its partitions C gives up is the assignor's choice: the KIP's table moves
    # foo-4, the model's uniform assignor foo-5 (``moved``); the protocol is the same.
    (moved,) = P("foo-4 foo-5") - group.target_assignment["C"]
    kept = "foo-5" if moved == ("foo", 4) else "foo-4"
    name = f"foo-{moved[1]}"
    target = {"A'": "foo-0 foo-1", "B'": f"foo-3 {name}", "C": f"foo-2 {kept}"}
    # B transitions to epoch 24 at once but gets no partition: they are not free yet.
    expect(
        group,
        24 + K,
        24 + K,
        target,
        {
            "A'": (23 + K, "foo-0 foo-1 foo-3", ""),
            "B'": (24 + K, "", f"foo-3 {name}"),
            "C": (23 + K, "foo-2 foo-5 foo-4", ""),
        },
    )

    # "A heartbeats and he is told to revoke foo-3."
    group = _heartbeat(group, "A'")
    assert group.members["A'"].state is MemberState.UNREVOKED_PARTITIONS
    assert group.members["A'"].partitions_pending_revocation == P("foo-3")

    # "C heartbeats and he is told to rebalance."
    hb = mco.handle_classic_heartbeat(group, HeartbeatRequest("C", 23 + K, "c"), CONFIG)
    assert hb.error_code is ErrorCode.REBALANCE_IN_PROGRESS
    # "He revokes all its partitions and sends the JoinGroup request": the partition it
    # gives up is free, and C is at epoch 24 with its new assignment.
    group, joined = _classic_join(group, "C")
    assert joined.generation_id == 24 + K
    assert group.members["C"].assigned_partitions == P(f"foo-2 {kept}")
    assert moved not in group.partition_epochs

    # "B heartbeats and transitions to epoch 24 but does not get any partitions yet":
    # foo-3 is still A's to revoke; the partition C gave up is B's now.
    group = _heartbeat(group, "B'", topic_partitions=frozenset())
    assert group.members["B'"].assigned_partitions == frozenset({moved})
    assert pending_partitions(group, group.members["B'"]) == P("foo-3")
