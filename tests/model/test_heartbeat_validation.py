"""ConsumerGroupHeartbeat: request validation, member resolution, epoch checks, leave,
group-epoch bumps, the response's ``Assignment`` and failed writes.

Drives ``model.consumer.coordinator.handle_consumer_group_heartbeat`` directly on groups built with
``model.scenario.stable_state`` / ``model.system.initial``; the rules under test are
listed in docs/kafka-rules.md. Topic ids equal topic names in these states. The stable
group is at epoch 5 with A = {foo-0, foo-1} and B = {foo-2}; every member's previous epoch
is 4.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from model.config import ClientSpec, Config
from model.consumer import coordinator
from model.consumer.coordinator import handle_consumer_group_heartbeat
from model.ids import EMPTY, Assignment, FrozenMap, TopicPartition
from model.records import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Group,
    Member,
    State,
    TopicMetadata,
)
from model.rules import DEFAULT_RULES
from model.scenario import stable_state
from model.status import ErrorCode, MemberState
from model.system import initial

E = ErrorCode
REBALANCE_TIMEOUT = 300000


def foo(*partitions: int) -> Assignment:
    return frozenset(("foo", p) for p in partitions)


TOPICS = (("foo", 3), ("bar", 2))
DYNAMIC = Config(
    kafka_version="4.2",
    name="hb-dynamic",
    topics=TOPICS,
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
)
STATIC = Config(
    kafka_version="4.2",
    name="hb-static",
    topics=TOPICS,
    clients=(
        ClientSpec("A", ("foo",), instance_id="a"),
        ClientSpec("B", ("foo",), instance_id="b"),
    ),
)
LAYOUT: Mapping[str, Assignment] = {"A": foo(0, 1), "B": foo(2)}


def stable(config: Config = DYNAMIC) -> State:
    """A STABLE group at epoch 5: A = {foo-0, foo-1}, B = {foo-2}."""
    return stable_state(config, 5, LAYOUT)


def send(
    state: State | tuple[Group, Mapping[str, TopicMetadata]],
    config: Config,
    req: ConsumerGroupHeartbeatRequest,
) -> tuple[Group, ConsumerGroupHeartbeatResponse]:
    if isinstance(state, State):
        return handle_consumer_group_heartbeat(state.group, state.topics, req, config)
    group, topics = state
    return handle_consumer_group_heartbeat(group, topics, req, config)


def join(
    member_id: str,
    instance_id: str | None = None,
    subscription: frozenset[str] = frozenset({"foo"}),
    server_assignor: str | None = None,
) -> ConsumerGroupHeartbeatRequest:
    """A valid join (or rejoin) heartbeat: epoch 0 with every field (KIP-848
    "ConsumerGroupHeartbeat API", Request Validation)."""
    return ConsumerGroupHeartbeatRequest(
        member_id=member_id,
        member_epoch=0,
        instance_id=instance_id,
        rebalance_timeout_ms=REBALANCE_TIMEOUT,
        subscribed_topic_names=subscription,
        server_assignor=server_assignor,
        topic_partitions=EMPTY,
    )


def beat(
    member_id: str,
    epoch: int,
    instance_id: str | None = None,
    owned: Assignment | None = None,
    *,
    rebalance_timeout_ms: int = -1,
    subscribed_topic_names: frozenset[str] | None = None,
    server_assignor: str | None = None,
) -> ConsumerGroupHeartbeatRequest:
    """A regular heartbeat; fields left out are "unchanged" (null)."""
    return ConsumerGroupHeartbeatRequest(
        member_id=member_id,
        member_epoch=epoch,
        instance_id=instance_id,
        rebalance_timeout_ms=rebalance_timeout_ms,
        subscribed_topic_names=subscribed_topic_names,
        server_assignor=server_assignor,
        topic_partitions=owned,
    )


def assert_rejected(
    state: State,
    config: Config,
    req: ConsumerGroupHeartbeatRequest,
    error: ErrorCode,
) -> None:
    """The request is answered with ``error`` (no member id, epoch 0, no assignment) and
    the group is left as it was."""
    group, resp = send(state, config, req)
    assert resp.error_code is error
    assert resp.member_id is None
    assert resp.member_epoch == 0
    assert resp.assignment is None
    assert group is state.group


def member_of(group: Group, member_id: str) -> Member:
    return group.members[member_id]


# --------------------------------------------------------------------------- validation


def test_invalid_request_on_empty_member_id() -> None:
    assert_rejected(initial(DYNAMIC), DYNAMIC, join(""), E.INVALID_REQUEST)


def test_invalid_request_on_blank_instance_id() -> None:
    assert_rejected(initial(STATIC), STATIC, join("A", instance_id="  "), E.INVALID_REQUEST)


def test_invalid_request_on_empty_instance_id() -> None:
    assert_rejected(initial(STATIC), STATIC, join("A", instance_id=""), E.INVALID_REQUEST)


def test_invalid_request_on_epoch_below_minus_two() -> None:
    assert_rejected(stable(), DYNAMIC, beat("A", -3), E.INVALID_REQUEST)


def test_invalid_request_on_static_leave_without_instance_id() -> None:
    assert_rejected(stable(), DYNAMIC, beat("A", -2), E.INVALID_REQUEST)


def test_invalid_request_on_join_without_rebalance_timeout() -> None:
    req = dataclasses.replace(join("C"), rebalance_timeout_ms=-1)
    assert_rejected(initial(DYNAMIC), DYNAMIC, req, E.INVALID_REQUEST)


def test_invalid_request_on_join_with_owned_partitions() -> None:
    req = dataclasses.replace(join("C"), topic_partitions=foo(0))
    assert_rejected(initial(DYNAMIC), DYNAMIC, req, E.INVALID_REQUEST)


def test_invalid_request_on_join_with_null_topic_partitions() -> None:
    req = dataclasses.replace(join("C"), topic_partitions=None)
    assert_rejected(initial(DYNAMIC), DYNAMIC, req, E.INVALID_REQUEST)


def test_invalid_request_on_join_with_null_subscribed_topic_names() -> None:
    req = dataclasses.replace(join("C"), subscribed_topic_names=None)
    assert_rejected(initial(DYNAMIC), DYNAMIC, req, E.INVALID_REQUEST)


def test_join_with_empty_subscription_is_accepted() -> None:
    """KAFKA-18095: an empty (non-null) subscription is a valid join; no group-epoch bump."""
    state = initial(DYNAMIC)
    group, resp = send(state, DYNAMIC, join("C", subscription=frozenset()))
    assert resp.error_code is E.NONE
    assert "C" in group.members
    assert group.group_epoch == state.group.group_epoch


def test_unsupported_assignor() -> None:
    assert_rejected(
        initial(DYNAMIC), DYNAMIC, join("C", server_assignor="sticky"), E.UNSUPPORTED_ASSIGNOR
    )


def test_unsupported_assignor_not_configured_on_the_broker() -> None:
    """Only the assignors in ``group.consumer.assignors`` are supported."""
    config = dataclasses.replace(DYNAMIC, server_assignors=("uniform",))
    assert_rejected(
        initial(config), config, join("C", server_assignor="range"), E.UNSUPPORTED_ASSIGNOR
    )


# --------------------------------------------------------------------------- member resolution


def test_unknown_member_id_for_unknown_dynamic_member() -> None:
    assert_rejected(stable(), DYNAMIC, beat("Z", 5, owned=EMPTY), E.UNKNOWN_MEMBER_ID)


def test_unknown_member_id_for_unknown_static_instance() -> None:
    assert_rejected(stable(STATIC), STATIC, beat("Z", 5, instance_id="z"), E.UNKNOWN_MEMBER_ID)


def test_unknown_member_id_on_leave_of_unknown_member() -> None:
    assert_rejected(stable(), DYNAMIC, beat("Z", -1), E.UNKNOWN_MEMBER_ID)


def test_unknown_member_id_on_static_leave_of_unknown_instance() -> None:
    assert_rejected(stable(STATIC), STATIC, beat("Z", -2, instance_id="z"), E.UNKNOWN_MEMBER_ID)


def test_fenced_member_epoch_when_epoch_is_greater() -> None:
    """FENCED_MEMBER_EPOCH does not remove the member
    (``GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid``)."""
    assert_rejected(stable(), DYNAMIC, beat("A", 6, owned=foo(0, 1)), E.FENCED_MEMBER_EPOCH)


def test_fenced_member_epoch_when_lower_epoch_is_not_previous() -> None:
    assert_rejected(stable(), DYNAMIC, beat("A", 3, owned=foo(0)), E.FENCED_MEMBER_EPOCH)


def test_fenced_member_epoch_when_previous_epoch_without_owned_partitions() -> None:
    assert_rejected(stable(), DYNAMIC, beat("A", 4, owned=None), E.FENCED_MEMBER_EPOCH)


def test_fenced_member_epoch_when_previous_epoch_owns_unassigned_partition() -> None:
    assert_rejected(stable(), DYNAMIC, beat("A", 4, owned=foo(0, 2)), E.FENCED_MEMBER_EPOCH)


def test_fenced_member_epoch_for_static_member_with_greater_epoch() -> None:
    assert_rejected(
        stable(STATIC), STATIC, beat("A", 6, instance_id="a", owned=foo(0)), E.FENCED_MEMBER_EPOCH
    )


def test_previous_epoch_retry_is_accepted() -> None:
    """Lost response: the member retries at its previous epoch with owned ⊆ assigned and
    is told its current epoch."""
    state = stable()
    group, resp = send(state, DYNAMIC, beat("A", 4, owned=foo(0)))
    assert resp.error_code is E.NONE
    assert resp.member_id == "A"
    assert resp.member_epoch == 5
    assert resp.assignment is None
    assert member_of(group, "A") == member_of(state.group, "A")


def test_previous_epoch_retry_with_nothing_owned_is_accepted() -> None:
    """The empty set is a subset of every assignment."""
    _, resp = send(stable(), DYNAMIC, beat("A", 4, owned=EMPTY))
    assert resp.error_code is E.NONE
    assert resp.member_epoch == 5


def test_rejoin_with_epoch_zero_is_accepted() -> None:
    """KAFKA-19233: a stored member rejoining with epoch 0 gets its state back."""
    state = stable()
    group, resp = send(state, DYNAMIC, join("A"))
    assert resp.error_code is E.NONE
    assert resp.member_id == "A"
    assert resp.member_epoch == 5
    assert resp.assignment == foo(0, 1)
    assert group.group_epoch == 5
    assert member_of(group, "A").assigned_partitions == foo(0, 1)


def test_fenced_member_epoch_on_rejoin_with_epoch_zero_when_disabled() -> None:
    config = dataclasses.replace(DYNAMIC, rejoin_with_epoch_zero=False)
    assert_rejected(stable(config), config, join("A"), E.FENCED_MEMBER_EPOCH)


def test_rejoin_with_epoch_zero_at_previous_epoch_zero_accepted_when_disabled() -> None:
    config = dataclasses.replace(DYNAMIC, rejoin_with_epoch_zero=False)
    state = stable(config)
    a = dataclasses.replace(member_of(state.group, "A"), previous_member_epoch=0)
    group = dataclasses.replace(state.group, members=state.group.members.set("A", a))
    _, resp = send((group, state.topics), config, join("A"))
    assert resp.error_code is E.NONE
    assert resp.member_epoch == 5


# --------------------------------------------------------------------------- static membership


def temporarily_left(config: Config = STATIC) -> State:
    """The stable static group after A left with epoch -2."""
    state = stable(config)
    group, resp = send(state, config, beat("A", -2, instance_id="a"))
    assert resp.error_code is E.NONE
    return dataclasses.replace(state, group=group)


def test_unreleased_instance_id() -> None:
    """Another member id joins with instance id ``a`` while A holds it at epoch 5."""
    assert_rejected(stable(STATIC), STATIC, join("A.1", instance_id="a"), E.UNRELEASED_INSTANCE_ID)


def test_static_replacement_copies_holder_at_epoch_zero() -> None:
    """Static replacement (``GroupMetadataManager.replaceMember``): the copy keeps state and
    assignment at epoch 0 / previous 0, takes over the target entry, and the holder's
    partition epochs move to it."""
    state = temporarily_left()
    holder = member_of(state.group, "A")
    group, stored, copy = coordinator.replace_static_member(state.group, holder, "A.1", STATIC)
    assert stored is copy
    assert (copy.member_id, copy.instance_id) == ("A.1", "a")
    assert (copy.member_epoch, copy.previous_member_epoch) == (0, 0)
    assert copy.assigned_partitions == foo(0, 1)
    assert set(group.members) == {"A.1", "B"}
    assert group.target_assignment == {"A.1": foo(0, 1), "B": foo(2)}
    assert group.partition_epochs == {("foo", 0): 0, ("foo", 1): 0, ("foo", 2): 5}


def test_static_replacement_after_temporary_leave() -> None:
    """The new member id takes over A's assignment and target, starts at epoch 0 and is
    reconciled to the target epoch in the same heartbeat; no group-epoch bump."""
    state = temporarily_left()
    group, resp = send(state, STATIC, join("A.1", instance_id="a"))
    assert resp.error_code is E.NONE
    assert resp.member_id == "A.1"
    assert resp.member_epoch == 5
    assert resp.assignment == foo(0, 1)
    assert "A" not in group.members
    new = member_of(group, "A.1")
    assert (new.member_epoch, new.previous_member_epoch) == (5, 0)
    assert new.state is MemberState.STABLE
    assert new.assigned_partitions == foo(0, 1)
    assert group.static_member_id("a") == "A.1"
    assert group.target_assignment == {"A.1": foo(0, 1), "B": foo(2)}
    assert (group.group_epoch, group.assignment_epoch) == (5, 5)
    assert group.partition_epochs == {("foo", 0): 5, ("foo", 1): 5, ("foo", 2): 5}


def test_static_rejoin_with_same_member_id_is_accepted() -> None:
    """The holder itself rejoins with epoch 0 (lost join response, or fenced): handled like
    a dynamic rejoin (the fix proposed upstream in PR #23542; model default)."""
    state = stable(STATIC)
    group, resp = send(state, STATIC, join("A", instance_id="a"))
    assert resp.error_code is E.NONE
    assert resp.member_epoch == 5
    assert resp.assignment == foo(0, 1)
    assert set(group.members) == {"A", "B"}


def test_unreleased_instance_id_on_same_member_id_rejoin_when_disabled() -> None:
    """Kafka's behaviour while apache/kafka PR #23542 is open: the holder fences itself."""
    config = dataclasses.replace(STATIC, static_rejoin_same_member_id=False)
    assert_rejected(stable(config), config, join("A", instance_id="a"), E.UNRELEASED_INSTANCE_ID)


def test_join_of_known_member_id_with_new_instance_id() -> None:
    state = stable()
    group, resp = send(state, DYNAMIC, join("A", instance_id="a"))
    if resp.error_code is E.NONE:
        assert member_of(group, "A").instance_id == "a"
        assert group.static_member_id("a") == "A"
    else:
        assert resp.error_code is E.INVALID_REQUEST


def test_fenced_instance_id() -> None:
    """A static heartbeat with epoch > 0 whose instance id maps to another member id."""
    assert_rejected(
        stable(STATIC), STATIC, beat("A.1", 5, instance_id="a", owned=foo(0)), E.FENCED_INSTANCE_ID
    )


def test_fenced_instance_id_on_leave() -> None:
    assert_rejected(stable(STATIC), STATIC, beat("A.1", -1, instance_id="a"), E.FENCED_INSTANCE_ID)


def test_fenced_instance_id_on_static_leave() -> None:
    assert_rejected(stable(STATIC), STATIC, beat("A.1", -2, instance_id="a"), E.FENCED_INSTANCE_ID)


def test_group_max_size_reached() -> None:
    config = dataclasses.replace(DYNAMIC, max_group_size=2)
    assert_rejected(stable(config), config, join("C"), E.GROUP_MAX_SIZE_REACHED)


def test_group_max_size_reached_for_new_static_member() -> None:
    config = dataclasses.replace(STATIC, max_group_size=2)
    assert_rejected(stable(config), config, join("C", instance_id="c"), E.GROUP_MAX_SIZE_REACHED)


def test_group_max_size_allows_existing_member() -> None:
    config = dataclasses.replace(DYNAMIC, max_group_size=2)
    _, resp = send(stable(config), config, beat("A", 5))
    assert resp.error_code is E.NONE


def test_group_max_size_allows_static_member_replacing_itself() -> None:
    """KAFKA-20601: the instance id already belongs to a static member, so a new member id
    replacing it does not count as a new member."""
    config = dataclasses.replace(STATIC, max_group_size=2)
    state = temporarily_left(config)
    group, resp = send(state, config, join("A.1", instance_id="a"))
    assert resp.error_code is E.NONE
    assert set(group.members) == {"A.1", "B"}


# --------------------------------------------------------------------------- leave


def test_leave_fences_member() -> None:
    """Epoch -1: the member is removed, the group epoch bumped, its partitions freed at
    once and its target entry deleted. The response echoes the member id and -1."""
    state = stable()
    group, resp = send(state, DYNAMIC, beat("A", -1))
    assert resp.error_code is E.NONE
    assert (resp.member_id, resp.member_epoch) == ("A", -1)
    assert "A" not in group.members
    assert group.group_epoch == 6
    assert group.assignment_epoch == 5
    assert group.partition_epochs == {("foo", 2): 5}
    assert group.target_assignment == {"B": foo(2)}


def test_static_leave_with_minus_one_fences_member() -> None:
    state = stable(STATIC)
    group, resp = send(state, STATIC, beat("A", -1, instance_id="a"))
    assert resp.error_code is E.NONE
    assert "A" not in group.members
    assert group.static_member_id("a") is None
    assert group.group_epoch == 6


def revoking_static() -> State:
    """The static group with A revoking foo-1 at epoch 5 (keeping foo-0)."""
    state = stable(STATIC)
    a = dataclasses.replace(
        member_of(state.group, "A"),
        state=MemberState.UNREVOKED_PARTITIONS,
        previous_member_epoch=5,
        assigned_partitions=foo(0),
        partitions_pending_revocation=foo(1),
        rebalance_timer_epoch=5,
    )
    group = dataclasses.replace(
        state.group,
        members=state.group.members.set("A", a),
        target_assignment=FrozenMap({"A": foo(0), "B": foo(1, 2)}),
    )
    return dataclasses.replace(state, group=group)


def test_static_leave_keeps_member_at_minus_two() -> None:
    """Epoch -2: the member stays with epoch -2 and its assigned partitions (held at -2),
    its pending revocation is released, no group-epoch bump, target unchanged."""
    state = revoking_static()
    group, resp = send(state, STATIC, beat("A", -2, instance_id="a"))
    assert resp.error_code is E.NONE
    assert (resp.member_id, resp.member_epoch) == ("A", -2)
    a = member_of(group, "A")
    assert a.member_epoch == -2
    assert a.assigned_partitions == foo(0)
    assert a.partitions_pending_revocation == EMPTY
    assert a.rebalance_timer_epoch is None
    assert group.partition_epochs == {("foo", 0): -2, ("foo", 2): 5}
    assert group.group_epoch == 5
    assert group.target_assignment == state.group.target_assignment


def test_static_leave_keeps_previous_member_epoch() -> None:
    state = stable(STATIC)
    group, _ = send(state, STATIC, beat("A", -2, instance_id="a"))
    assert member_of(group, "A").previous_member_epoch == 4


# --------------------------------------------------------------------------- group epoch


def test_group_epoch_bump_on_subscription_change() -> None:
    state = stable()
    group, resp = send(
        state, DYNAMIC, beat("A", 5, subscribed_topic_names=frozenset({"foo", "bar"}))
    )
    assert resp.error_code is E.NONE
    assert group.group_epoch == 6
    assert group.assignment_epoch == 6  # the target is computed in the heartbeat
    assert member_of(group, "A").subscribed_topic_names == {"foo", "bar"}


def test_group_epoch_bump_on_preferred_assignor_change() -> None:
    """KAFKA-20434: A asks for ``range``; the most common assignor goes from the default
    ``uniform`` to ``range``."""
    state = stable()
    group, resp = send(state, DYNAMIC, beat("A", 5, server_assignor="range"))
    assert resp.error_code is E.NONE
    assert group.group_epoch == 6
    assert member_of(group, "A").server_assignor == "range"


def test_no_group_epoch_bump_on_assignor_change_keeping_preferred() -> None:
    """A names the default assignor explicitly: the preferred assignor is unchanged."""
    state = stable()
    group, resp = send(state, DYNAMIC, beat("A", 5, server_assignor="uniform"))
    assert resp.error_code is E.NONE
    assert member_of(group, "A").server_assignor == "uniform"
    assert group.group_epoch == 5


def test_no_group_epoch_bump_on_rejoin_with_unchanged_subscription() -> None:
    state = stable()
    group, resp = send(state, DYNAMIC, join("A"))
    assert resp.error_code is E.NONE
    assert group.group_epoch == 5


def test_group_epoch_bump_on_new_member_join() -> None:
    """A new member with a non-empty subscription changes the subscribed names."""
    state = stable()
    group, resp = send(state, DYNAMIC, join("C"))
    assert resp.error_code is E.NONE
    assert group.group_epoch == 6
    assert "C" in group.members


# --------------------------------------------------------------------------- response


def test_assignment_sent_on_join() -> None:
    state = initial(DYNAMIC)
    group, resp = send(state, DYNAMIC, join("A"))
    assert resp.error_code is E.NONE
    assert resp.assignment is not None
    assert resp.assignment == member_of(group, "A").assigned_partitions
    assert resp.member_epoch == member_of(group, "A").member_epoch == 1


def test_assignment_sent_on_full_request() -> None:
    """KAFKA-16367: a full request always gets the assignment, even when unchanged."""
    req = beat(
        "A",
        5,
        owned=foo(0, 1),
        rebalance_timeout_ms=REBALANCE_TIMEOUT,
        subscribed_topic_names=frozenset({"foo"}),
    )
    assert req.is_full()
    _, resp = send(stable(), DYNAMIC, req)
    assert resp.error_code is E.NONE
    assert resp.assignment == foo(0, 1)


def test_assignment_sent_when_assigned_set_changed() -> None:
    """A new target (epoch 6) gives A the free foo-1: the response carries the new set."""
    state = stable_state(DYNAMIC, 5, {"A": foo(0), "B": foo(2)})
    group = dataclasses.replace(
        state.group,
        group_epoch=6,
        assignment_epoch=6,
        target_assignment=FrozenMap({"A": foo(0, 1), "B": foo(2)}),
    )
    group, resp = send((group, state.topics), DYNAMIC, beat("A", 5))
    assert resp.error_code is E.NONE
    assert resp.member_epoch == 6
    assert resp.assignment == foo(0, 1)
    assert group.partition_epochs[("foo", 1)] == 6


def test_assignment_not_sent_when_unchanged() -> None:
    _, resp = send(stable(), DYNAMIC, beat("A", 5, owned=foo(0, 1)))
    assert resp.error_code is E.NONE
    assert resp.member_epoch == 5
    assert resp.assignment is None


def test_assignment_not_sent_when_only_epoch_changed() -> None:
    """A new target epoch with the same partitions: epoch 6 in the response, no Assignment."""
    state = stable()
    group = dataclasses.replace(state.group, group_epoch=6, assignment_epoch=6)
    _, resp = send((group, state.topics), DYNAMIC, beat("A", 5))
    assert resp.error_code is E.NONE
    assert resp.member_epoch == 6
    assert resp.assignment is None


# --------------------------------------------------------------------------- failed write


def test_failed_write_answers_unknown_server_error() -> None:
    """A reconciliation that hands out foo-2, which B holds, makes the partition-epoch
    update fail (KAFKA-16147 hardening): UNKNOWN_SERVER_ERROR, group unchanged."""

    def bad(
        member: Member,
        target_epoch: int,
        target: Assignment,
        owned: Assignment | None,
        subscription_changed: bool,
        partition_epochs: Mapping[TopicPartition, int],
        subscribed_topic_ids: frozenset[str],
    ) -> Member:
        return dataclasses.replace(member, assigned_partitions=member.assigned_partitions | foo(2))

    config = dataclasses.replace(DYNAMIC, rules=dataclasses.replace(DEFAULT_RULES, reconcile=bad))
    state = stable(config)
    group, resp = send(
        state, config, beat("A", 5, subscribed_topic_names=frozenset({"foo", "bar"}))
    )
    assert resp.error_code is E.UNKNOWN_SERVER_ERROR
    assert resp.member_id is None
    assert group is state.group
    assert group.group_epoch == 5
