"""One test per edge of the coordinator's reconciliation state machine.

``model.consumer.reconcile.reconcile`` mirrors Kafka's ``CurrentAssignmentBuilder.build``
(docs/kafka-rules.md, Reconciliation). Tests are named ``test_<from>_to_<to>`` over the
member states stable / unrevoked_partitions / unreleased_partitions, with a suffix when one
edge has several causes. Every test checks epoch, previous epoch, state, assigned
partitions and partitions pending revocation of the result.

Members are built by hand; topic ids are the topic names (``foo``, ``bar``). The partition
epochs map is the group's ``currentPartitionEpoch``: a partition in it is held by the member
whose epoch it records (docs/kafka-rules.md, Partition epochs and unreleased partitions).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from model.consumer.reconcile import reconcile
from model.ids import EMPTY, Assignment, FrozenMap, TopicPartition
from model.records import Member
from model.status import MemberState

STABLE = MemberState.STABLE
UNREVOKED = MemberState.UNREVOKED_PARTITIONS
UNRELEASED = MemberState.UNRELEASED_PARTITIONS

FOO_ONLY = frozenset({"foo"})
FOO_AND_BAR = frozenset({"foo", "bar"})


def foo(*partitions: int) -> Assignment:
    """Partitions of topic ``foo``."""
    return frozenset(("foo", p) for p in partitions)


def bar(*partitions: int) -> Assignment:
    """Partitions of topic ``bar``."""
    return frozenset(("bar", p) for p in partitions)


def member(
    *,
    epoch: int = 5,
    previous: int = 4,
    state: MemberState = STABLE,
    assigned: Assignment = EMPTY,
    pending: Assignment = EMPTY,
    subscribed: Iterable[str] = ("foo",),
) -> Member:
    """A member ``A`` as the coordinator stores it."""
    return Member(
        member_id="A",
        instance_id=None,
        member_epoch=epoch,
        previous_member_epoch=previous,
        state=state,
        assigned_partitions=assigned,
        partitions_pending_revocation=pending,
        subscribed_topic_names=frozenset(subscribed),
        server_assignor=None,
        rebalance_timeout_ms=300000,
    )


def held(m: Member, **others: Mapping[TopicPartition, int]) -> FrozenMap[TopicPartition, int]:
    """Partition epochs of ``m``'s partitions (assigned and pending) plus other members'."""
    d: dict[TopicPartition, int] = dict.fromkeys(m.owned_or_pending(), m.member_epoch)
    for entries in others.values():
        d.update(entries)
    return FrozenMap(d)


def assert_member(
    m: Member,
    *,
    epoch: int,
    previous: int,
    state: MemberState,
    assigned: Assignment,
    pending: Assignment = EMPTY,
) -> None:
    assert m.member_epoch == epoch
    assert m.previous_member_epoch == previous
    assert m.state is state
    assert m.assigned_partitions == assigned
    assert m.partitions_pending_revocation == pending


# --------------------------------------------------------------------------- from STABLE


def test_stable_to_stable() -> None:
    """A new target epoch that only adds free partitions: jump to it at once (rule 2)."""
    m = member(assigned=foo(0))
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0, 1),
        partition_epochs=held(m),
        owned=foo(0),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=6, previous=5, state=STABLE, assigned=foo(0, 1))


def test_stable_to_stable_on_new_epoch_with_same_partitions() -> None:
    """A new target epoch with the same partitions: the epoch moves, nothing else (rule 4)."""
    m = member(assigned=foo(0, 1))
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0, 1),
        partition_epochs=held(m),
        owned=foo(0, 1),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=6, previous=5, state=STABLE, assigned=foo(0, 1))


def test_stable_to_stable_when_unchanged_returns_same_object() -> None:
    """STABLE at the target epoch, subscription unchanged: the very same member comes back."""
    m = member(assigned=foo(0, 1))
    out = reconcile(
        m,
        target_epoch=5,
        target=foo(0, 1, 2),
        partition_epochs=held(m),
        owned=None,
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert out is m


def test_stable_to_stable_on_subscription_change_keeping_every_topic() -> None:
    """SHRINK with nothing to move returns the member as is."""
    m = member(assigned=foo(0), subscribed=("foo", "bar"))
    out = reconcile(
        m,
        target_epoch=5,
        target=foo(0),
        partition_epochs=held(m),
        owned=foo(0),
        subscription_changed=True,
        subscribed_topic_ids=FOO_AND_BAR,
    )
    assert out is m


def test_stable_to_stable_when_revoked_partitions_already_released() -> None:
    """Revoked partitions the member already stopped reporting skip the revocation step:
    they are dropped and the member moves to the target epoch
    (``CurrentAssignmentBuilder.ownsRevokedPartitions``)."""
    m = member(assigned=foo(0, 1))
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0, 2),
        partition_epochs=held(m),
        owned=foo(0),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=6, previous=5, state=STABLE, assigned=foo(0, 2))


def test_stable_to_stable_when_nothing_owned_is_reported() -> None:
    """An empty owned set is a report ("I own nothing"), unlike ``None``: no revocation."""
    m = member(assigned=foo(0, 1))
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(2),
        partition_epochs=held(m),
        owned=EMPTY,
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=6, previous=5, state=STABLE, assigned=foo(2))


def test_stable_to_stable_with_target_filtered_by_subscription() -> None:
    """KAFKA-19431: a target partition of a topic the member no longer subscribes to is not
    added, even though it is free."""
    m = member(assigned=foo(0))
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0) | bar(0),
        partition_epochs=held(m),
        owned=foo(0),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=6, previous=5, state=STABLE, assigned=foo(0))


def test_stable_to_stable_on_subscription_change_when_already_revoked() -> None:
    """SHRINK when the member no longer reports the unsubscribed partitions: they are just
    dropped from the assignment; the member stays STABLE at its epoch."""
    m = member(assigned=foo(0) | bar(0), subscribed=("foo",))
    out = reconcile(
        m,
        target_epoch=5,
        target=foo(0) | bar(0),
        partition_epochs=held(m),
        owned=foo(0),
        subscription_changed=True,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert out.member_epoch == 5
    assert out.state is STABLE
    assert out.assigned_partitions == foo(0)
    assert out.partitions_pending_revocation == EMPTY


def test_stable_to_stable_on_subscription_change_sets_previous_epoch() -> None:
    """Like the test above, and the write goes through ``updateMemberEpoch``."""
    m = member(assigned=foo(0) | bar(0), subscribed=("foo",))
    out = reconcile(
        m,
        target_epoch=5,
        target=foo(0) | bar(0),
        partition_epochs=held(m),
        owned=foo(0),
        subscription_changed=True,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=5, previous=5, state=STABLE, assigned=foo(0))


def test_stable_to_unrevoked_partitions() -> None:
    """The target removes an owned partition: revoke first (rule 1). The epoch stays, the
    previous epoch becomes the current one, and the added free partition is not given yet."""
    m = member(assigned=foo(0, 1))
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0, 2),
        partition_epochs=held(m),
        owned=foo(0, 1),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=5, previous=5, state=UNREVOKED, assigned=foo(0), pending=foo(1))


def test_stable_to_unrevoked_partitions_when_owned_not_reported() -> None:
    """``TopicPartitions`` null: the member is assumed to still own everything
    (``ownsRevokedPartitions``)."""
    m = member(assigned=foo(0, 1))
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0),
        partition_epochs=held(m),
        owned=None,
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=5, previous=5, state=UNREVOKED, assigned=foo(0), pending=foo(1))


def test_stable_to_unrevoked_partitions_on_unsubscribed_target_topic() -> None:
    """KAFKA-19431: a new target still naming an unsubscribed topic counts as empty for it,
    so the member's partitions of that topic are revoked."""
    m = member(assigned=foo(0) | bar(0), subscribed=("foo",))
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0) | bar(0),
        partition_epochs=held(m),
        owned=foo(0) | bar(0),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=5, previous=5, state=UNREVOKED, assigned=foo(0), pending=bar(0))


def test_stable_to_unrevoked_partitions_on_subscription_change() -> None:
    """SHRINK (fast path at the target epoch): the unsubscribed topic moves to pending
    revocation at the same epoch."""
    m = member(assigned=foo(0) | bar(0, 1), subscribed=("foo",))
    out = reconcile(
        m,
        target_epoch=5,
        target=foo(0) | bar(0, 1),
        partition_epochs=held(m),
        owned=foo(0) | bar(0, 1),
        subscription_changed=True,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=5, previous=5, state=UNREVOKED, assigned=foo(0), pending=bar(0, 1))


def test_stable_to_unrevoked_partitions_on_subscription_change_to_nothing() -> None:
    """SHRINK with an empty subscription moves the whole assignment to pending revocation."""
    m = member(assigned=foo(0, 1), subscribed=())
    out = reconcile(
        m,
        target_epoch=5,
        target=foo(0, 1),
        partition_epochs=held(m),
        owned=None,
        subscription_changed=True,
        subscribed_topic_ids=frozenset(),
    )
    assert_member(out, epoch=5, previous=5, state=UNREVOKED, assigned=EMPTY, pending=foo(0, 1))


def test_stable_to_unreleased_partitions() -> None:
    """A target partition still held by another member (per partition epochs) is not given:
    the member jumps to the target epoch in UNRELEASED_PARTITIONS with what is free."""
    m = member(assigned=foo(0))
    epochs = held(m, B={("foo", 1): 5})
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0, 1, 2),
        partition_epochs=epochs,
        owned=foo(0),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=6, previous=5, state=UNRELEASED, assigned=foo(0, 2))


def test_stable_to_unreleased_partitions_with_nothing_free() -> None:
    """Nothing to revoke, nothing free to add, something unreleased (rule 3)."""
    m = member(assigned=foo(0))
    epochs = held(m, B={("foo", 1): 5})
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0, 1),
        partition_epochs=epochs,
        owned=foo(0),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=6, previous=5, state=UNRELEASED, assigned=foo(0))


# --------------------------------------------------------------------------- from UNREVOKED


def revoking(assigned: Assignment | None = None, subscribed: Iterable[str] = ("foo",)) -> Member:
    """Member A revoking ``foo-1`` at epoch 5 (its target at epoch 6 dropped it)."""
    return member(
        epoch=5,
        previous=5,
        state=UNREVOKED,
        assigned=foo(0) if assigned is None else assigned,
        pending=foo(1),
        subscribed=subscribed,
    )


def test_unrevoked_partitions_to_unrevoked_partitions() -> None:
    """The member still reports the partition pending revocation: wait, same object."""
    m = revoking()
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0),
        partition_epochs=held(m),
        owned=foo(0, 1),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert out is m
    assert_member(out, epoch=5, previous=5, state=UNREVOKED, assigned=foo(0), pending=foo(1))


def test_unrevoked_partitions_to_unrevoked_partitions_when_owned_not_reported() -> None:
    """``TopicPartitions`` null means "assume still owned": keep waiting."""
    m = revoking()
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0),
        partition_epochs=held(m),
        owned=None,
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert out is m


def test_unrevoked_partitions_to_unrevoked_partitions_on_newer_target() -> None:
    """KAFKA-19974: the member acknowledges, but the newest target (epoch 7) revokes more.
    It re-enters UNREVOKED_PARTITIONS at its old epoch 5, not at 6 or 7."""
    m = revoking()
    out = reconcile(
        m,
        target_epoch=7,
        target=foo(2),
        partition_epochs=held(m),
        owned=foo(0),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=5, previous=5, state=UNREVOKED, assigned=EMPTY, pending=foo(0))


def test_unrevoked_partitions_to_unrevoked_partitions_on_subscription_change() -> None:
    """Still revoking and the subscription drops ``bar``: SHRINK adds ``bar`` to the
    pending revocation, epoch unchanged."""
    m = revoking(assigned=foo(0) | bar(0), subscribed=("foo",))
    owned = foo(0, 1) | bar(0)
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0) | bar(0),
        partition_epochs=held(m),
        owned=owned,
        subscription_changed=True,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(
        out, epoch=5, previous=5, state=UNREVOKED, assigned=foo(0), pending=foo(1) | bar(0)
    )


def test_unrevoked_partitions_to_stable() -> None:
    """Acknowledged (owned disjoint from the pending revocation): the member jumps to the
    target epoch and gets the free partition."""
    m = revoking()
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0, 2),
        partition_epochs=held(m),
        owned=foo(0),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=6, previous=5, state=STABLE, assigned=foo(0, 2))


def test_unrevoked_partitions_to_stable_when_own_pending_revocation_is_free() -> None:
    """KAFKA-19449: a newer target gives back ``foo-1``, which is still in the partition
    epochs only because this member was revoking it. It counts as free."""
    m = revoking()
    epochs = held(m)
    assert ("foo", 1) in epochs
    out = reconcile(
        m,
        target_epoch=7,
        target=foo(0, 1),
        partition_epochs=epochs,
        owned=foo(0),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=7, previous=5, state=STABLE, assigned=foo(0, 1))


def test_unrevoked_partitions_to_unreleased_partitions() -> None:
    """Acknowledged, but a new target partition is still held by another member."""
    m = revoking()
    epochs = held(m, B={("foo", 2): 5})
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0, 2),
        partition_epochs=epochs,
        owned=foo(0),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=6, previous=5, state=UNRELEASED, assigned=foo(0))


# --------------------------------------------------------------------------- from UNRELEASED


def waiting(assigned: Assignment | None = None) -> Member:
    """Member A at target epoch 6 waiting for ``foo-2`` (its target is ``{foo-0, foo-2}``)."""
    held_now = foo(0) if assigned is None else assigned
    return member(epoch=6, previous=5, state=UNRELEASED, assigned=held_now)


def test_unreleased_partitions_to_stable() -> None:
    """The partition got released: the member collects it on its next heartbeat."""
    m = waiting()
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0, 2),
        partition_epochs=held(m),
        owned=foo(0),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=6, previous=6, state=STABLE, assigned=foo(0, 2))


def test_unreleased_partitions_to_unreleased_partitions() -> None:
    """The partition is still held elsewhere: keep waiting at the target epoch."""
    m = waiting()
    epochs = held(m, B={("foo", 2): 5})
    out = reconcile(
        m,
        target_epoch=6,
        target=foo(0, 2),
        partition_epochs=epochs,
        owned=foo(0),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=6, previous=6, state=UNRELEASED, assigned=foo(0))


def test_unreleased_partitions_to_unreleased_partitions_on_newer_target() -> None:
    """A newer target adds one free and one held partition: take the free one, keep waiting
    at the newer epoch."""
    m = waiting()
    epochs = held(m, B={("foo", 2): 5})
    out = reconcile(
        m,
        target_epoch=7,
        target=foo(0, 1, 2),
        partition_epochs=epochs,
        owned=foo(0),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=7, previous=6, state=UNRELEASED, assigned=foo(0, 1))


def test_unreleased_partitions_to_unrevoked_partitions() -> None:
    """The target changed and now removes an owned partition: revoke at the current epoch."""
    m = waiting(assigned=foo(0, 1))
    epochs = held(m, B={("foo", 2): 5})
    out = reconcile(
        m,
        target_epoch=7,
        target=foo(1, 2),
        partition_epochs=epochs,
        owned=foo(0, 1),
        subscription_changed=False,
        subscribed_topic_ids=FOO_ONLY,
    )
    assert_member(out, epoch=6, previous=6, state=UNREVOKED, assigned=foo(1), pending=foo(0))
