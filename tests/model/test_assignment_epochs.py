"""KIP-1251 assignment epochs (``Config.assignment_epochs``): per-partition epochs stored
with each member, offset commits at an older epoch accepted for partitions the member held
since then (``ConsumerGroup.validateOffsetCommit``, Kafka 4.3; KAFKA-20066), and the
property that states the guarantee (``HolderCommitsAccepted``)."""

from __future__ import annotations

from dataclasses import replace

from groupcheck.mutants import get_mutant
from invariants.check import Checker
from model.actions import CommitOffsets, SendHeartbeat, Subscribe
from model.config import ClientSpec, Config
from model.consumer.coordinator import stamp_assignment_epochs, validate_offset_commit
from model.ids import FrozenMap
from model.records import OffsetCommitRequest, new_member
from model.scenario import Script, stable_state
from model.status import ErrorCode, MemberState

CONFIG = Config(
    kafka_version="4.2",
    name="assignment-epochs",
    topics=(("foo", 3),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
    assignment_epochs=True,
)
FOO0, FOO1, FOO2 = ("foo", 0), ("foo", 1), ("foo", 2)


def test_kept_partitions_keep_their_epoch_gained_ones_get_the_new_epoch() -> None:
    old = replace(
        new_member("A", None),
        member_epoch=3,
        assigned_partitions=frozenset({FOO0, FOO1}),
        assignment_epochs=FrozenMap({FOO0: 2, FOO1: 3}),
    )
    new = replace(old, member_epoch=5, assigned_partitions=frozenset({FOO0, FOO2}))
    assert stamp_assignment_epochs(old, new) == {FOO0: 2, FOO2: 5}
    revoking = replace(
        new,
        assigned_partitions=frozenset({FOO0}),
        partitions_pending_revocation=frozenset({FOO2}),
        state=MemberState.UNREVOKED_PARTITIONS,
    )
    assert stamp_assignment_epochs(new, revoking) == {FOO0: 2, FOO2: 5}


def test_static_leave_resets_the_epochs_to_zero() -> None:
    old = replace(
        new_member("A", "a"),
        member_epoch=4,
        assigned_partitions=frozenset({FOO0}),
        assignment_epochs=FrozenMap({FOO0: 4}),
    )
    left = replace(old, member_epoch=-2)
    assert stamp_assignment_epochs(old, left) == {FOO0: 0}


def _group(epochs: dict[tuple[str, int], int]) -> object:
    group = stable_state(CONFIG, 5, {"A": frozenset({FOO0, FOO1}), "B": frozenset({FOO2})}).group
    a = replace(group.members["A"], assignment_epochs=FrozenMap(epochs))
    return replace(group, members=group.members.set("A", a))


def _commit(epoch: int, *partitions: tuple[str, int]) -> OffsetCommitRequest:
    return OffsetCommitRequest(
        member_id="A", generation_id_or_member_epoch=epoch, topics=frozenset(partitions)
    )


def test_older_epoch_accepted_for_partitions_held_since_then() -> None:
    group = _group({FOO0: 3, FOO1: 5})
    assert validate_offset_commit(group, _commit(4, FOO0), CONFIG) is ErrorCode.NONE  # type: ignore[arg-type]
    assert validate_offset_commit(group, _commit(3, FOO0), CONFIG) is ErrorCode.NONE  # type: ignore[arg-type]


def test_older_epoch_refused_for_a_partition_assigned_later_or_not_held() -> None:
    group = _group({FOO0: 3, FOO1: 5})
    stale = ErrorCode.STALE_MEMBER_EPOCH
    assert validate_offset_commit(group, _commit(4, FOO0, FOO1), CONFIG) is stale  # type: ignore[arg-type]
    assert validate_offset_commit(group, _commit(4, FOO2), CONFIG) is stale  # type: ignore[arg-type]
    assert validate_offset_commit(group, _commit(6, FOO0), CONFIG) is stale  # type: ignore[arg-type]
    assert validate_offset_commit(group, _commit(5, FOO0, FOO1, FOO2), CONFIG) is ErrorCode.NONE  # type: ignore[arg-type]


def test_strict_rule_without_assignment_epochs() -> None:
    strict = replace(CONFIG, assignment_epochs=False)
    group = _group({FOO0: 3})
    assert validate_offset_commit(group, _commit(4, FOO0), strict) is ErrorCode.STALE_MEMBER_EPOCH  # type: ignore[arg-type]


def test_stable_state_stamps_the_epoch_it_starts_at() -> None:
    group = stable_state(CONFIG, 5, {"A": frozenset({FOO0})}).group
    assert group.members["A"].assignment_epochs == {FOO0: 5}


RACE = Config(
    kafka_version="4.2",
    name="commit-race",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
    max_perturbations=1,
    perturbations=frozenset({"Subscribe"}),
    auto_commit=True,
    assignment_epochs=True,
    report_pending_additions=True,
    max_restarts=0,
)


def race(config: Config) -> Script:
    """A owns both partitions at epoch 1; B joins; A revokes foo-1 and acknowledges; its
    auto-commit of foo-0 at epoch 1 reaches the coordinator after the acknowledgement moved
    A to epoch 2 (KAFKA-20066)."""
    script = Script(config)
    script.heartbeat("A")
    script.reconcile("A")
    script.heartbeat("A")
    script.do(Subscribe("B"))
    script.heartbeat("B")
    script.heartbeat("A")  # A must revoke one partition
    script.reconcile("A")  # revocation commit done
    script.do(SendHeartbeat("A"))  # the acknowledgement, at epoch 1
    script.do(CommitOffsets("A"))  # auto-commit of what A keeps, at epoch 1
    script.deliver("A", to_coordinator=True)  # the acknowledgement: A moves to epoch 2
    assert script.state.group.members[script.state.client("A").member_id].member_epoch == 2
    script.deliver("A", to_coordinator=True)  # the commit at epoch 1
    return script


def test_commit_racing_the_epoch_bump_is_accepted() -> None:
    script = race(RACE)
    a = script.state.client("A")
    (kept,) = a.owned
    record = script.state.group.committed_offsets[kept]
    assert (record.member_id, record.member_epoch) == (a.member_id, 1)
    assert not script.state.group.holder_commit_rejected
    assert not Checker().check_state(script.state)


def test_strict_rule_refusing_that_commit_violates_holder_commits_accepted() -> None:
    config = replace(RACE, rules=get_mutant("strict-commit-epoch").rules)
    script = race(config)
    assert script.state.group.holder_commit_rejected
    violated = {v.property for v in Checker().check_state(script.state)}
    assert violated == {"HolderCommitsAccepted"}
