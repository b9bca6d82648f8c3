"""OffsetCommit fencing by member epoch (``ConsumerGroup.validateOffsetCommit``; see
docs/kafka-rules.md, Offset commits) and storage (``OffsetMetadataManager.commitOffset``).

By default the model implements KIP-848's strict epoch equality (Kafka ≤ 4.2): any epoch
other than the member's current one is STALE_MEMBER_EPOCH (KIP-1251's relaxation:
tests/model/test_assignment_epochs.py). The stable group is at epoch 5 with
A = {foo-0, foo-1} and B = {foo-2}.
"""

from __future__ import annotations

import dataclasses

import pytest

from model.config import ClientSpec, Config
from model.consumer.coordinator import handle_offset_commit, validate_offset_commit
from model.ids import EMPTY, Assignment, FrozenMap, TopicPartition
from model.records import CommittedOffset, Group, OffsetCommitRequest
from model.scenario import stable_state
from model.status import ErrorCode
from model.system import initial

E = ErrorCode

CONFIG = Config(
    kafka_version="4.2",
    name="offset-commit",
    topics=(("foo", 3),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
)


def foo(*partitions: int) -> Assignment:
    return frozenset(("foo", p) for p in partitions)


def stable_group() -> Group:
    return stable_state(CONFIG, 5, {"A": foo(0, 1), "B": foo(2)}).group


def commit(member_id: str, epoch: int, topics: Assignment) -> OffsetCommitRequest:
    return OffsetCommitRequest(
        member_id=member_id, generation_id_or_member_epoch=epoch, topics=topics
    )


def test_offset_commit_accepted_at_member_epoch() -> None:
    """Accepted at the current epoch; each partition records the member id and epoch."""
    group = stable_group()
    out, resp = handle_offset_commit(group, commit("A", 5, foo(0, 1)), CONFIG)
    assert resp.error_code is E.NONE
    assert resp.topics == foo(0, 1)
    assert out.committed_offsets == {
        ("foo", 0): CommittedOffset("A", 5),
        ("foo", 1): CommittedOffset("A", 5),
    }
    assert out.members == group.members
    assert out.partition_epochs == group.partition_epochs


def test_offset_commit_overwrites_previous_commit() -> None:
    group = stable_group()
    group, _ = handle_offset_commit(group, commit("A", 5, foo(0)), CONFIG)
    group, resp = handle_offset_commit(group, commit("B", 5, foo(0, 2)), CONFIG)
    assert resp.error_code is E.NONE
    assert group.committed_offsets == {
        ("foo", 0): CommittedOffset("B", 5),
        ("foo", 2): CommittedOffset("B", 5),
    }


def test_offset_commit_accepted_for_partition_not_owned() -> None:
    """Epoch equality is the only check: no ownership check (KIP-848 "OffsetCommit API"; Kafka
    keeps this for equal epochs even after KIP-1251)."""
    out, resp = handle_offset_commit(stable_group(), commit("A", 5, foo(2)), CONFIG)
    assert resp.error_code is E.NONE
    assert out.committed_offsets == {("foo", 2): CommittedOffset("A", 5)}


def test_stale_member_epoch_when_epoch_is_higher() -> None:
    group = stable_group()
    out, resp = handle_offset_commit(group, commit("A", 6, foo(0)), CONFIG)
    assert resp.error_code is E.STALE_MEMBER_EPOCH
    assert out is group


def test_stale_member_epoch_when_epoch_is_lower() -> None:
    """≤ 4.2 strict equality: the previous epoch is stale too (KIP-1251 relaxes it in 4.3)."""
    group = stable_group()
    out, resp = handle_offset_commit(group, commit("A", 4, foo(0)), CONFIG)
    assert resp.error_code is E.STALE_MEMBER_EPOCH
    assert out is group


def test_unknown_member_id() -> None:
    group = stable_group()
    out, resp = handle_offset_commit(group, commit("Z", 5, foo(0)), CONFIG)
    assert resp.error_code is E.UNKNOWN_MEMBER_ID
    assert out is group


def test_unknown_member_id_with_negative_epoch_when_group_has_members() -> None:
    """An admin commit (epoch -1) is accepted only while the group has no members."""
    group = stable_group()
    out, resp = handle_offset_commit(group, commit("", -1, foo(0)), CONFIG)
    assert resp.error_code is E.UNKNOWN_MEMBER_ID
    assert out is group


def test_accepted_with_negative_epoch_when_group_has_no_members() -> None:
    group = initial(CONFIG).group
    assert not group.members
    out, resp = handle_offset_commit(group, commit("", -1, foo(0, 2)), CONFIG)
    assert resp.error_code is E.NONE
    assert out.committed_offsets == {
        ("foo", 0): CommittedOffset("", -1),
        ("foo", 2): CommittedOffset("", -1),
    }


def test_unknown_member_id_with_non_negative_epoch_when_group_has_no_members() -> None:
    """The empty-group exception is for epoch < 0 only."""
    group = initial(CONFIG).group
    out, resp = handle_offset_commit(group, commit("A", 0, foo(0)), CONFIG)
    assert resp.error_code is E.UNKNOWN_MEMBER_ID
    assert out is group


@pytest.mark.parametrize(
    ("member_id", "epoch", "error"),
    [
        ("A", 6, E.STALE_MEMBER_EPOCH),
        ("A", 4, E.STALE_MEMBER_EPOCH),
        ("A", -1, E.STALE_MEMBER_EPOCH),
        ("Z", 5, E.UNKNOWN_MEMBER_ID),
        ("", -1, E.UNKNOWN_MEMBER_ID),
    ],
)
def test_nothing_stored_on_rejection(member_id: str, epoch: int, error: ErrorCode) -> None:
    """A rejected commit leaves earlier commits untouched and stores nothing new."""
    earlier: FrozenMap[TopicPartition, CommittedOffset] = FrozenMap(
        {("foo", 2): CommittedOffset("B", 5)}
    )
    group = dataclasses.replace(stable_group(), committed_offsets=earlier)
    assert validate_offset_commit(group, commit(member_id, epoch, foo(0, 1)), CONFIG) is error
    out, resp = handle_offset_commit(group, commit(member_id, epoch, foo(0, 1, 2)), CONFIG)
    assert resp.error_code is error
    assert out is group
    assert out.committed_offsets == earlier


def test_empty_commit_changes_nothing() -> None:
    group = stable_group()
    out, resp = handle_offset_commit(group, commit("A", 5, EMPTY), CONFIG)
    assert resp.error_code is E.NONE
    assert out is group


def test_validate_offset_commit_accepts_current_epoch_only() -> None:
    group = stable_group()
    codes = {
        epoch: validate_offset_commit(group, commit("B", epoch, foo(2)), CONFIG)
        for epoch in (-1, 3, 4, 5, 6)
    }
    assert codes == {
        -1: E.STALE_MEMBER_EPOCH,
        3: E.STALE_MEMBER_EPOCH,
        4: E.STALE_MEMBER_EPOCH,
        5: E.NONE,
        6: E.STALE_MEMBER_EPOCH,
    }
