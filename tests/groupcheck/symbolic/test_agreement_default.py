"""``prove --agreement``'s default catches a one-line change of ``model/consumer/reconcile.py``
that its former default (3 walks of 30 steps: ``cross_check`` without ``bfs_states``)
missed: a member's own partitions pending revocation no longer counted as free
(``compute_next_assignment``). The change is installed through the rules hook
(``Rules.reconcile``), never by editing the model; the default BFS
(``agreement.DEFAULT_BFS`` states, every reachable state of TINY) meets the step where it
matters and the reference relation refuses it.

Bounded by states (the default BFS) and walks, never by seconds; it stops at the first
disagreement (about 180 distinct coordinator steps checked with Z3 before it).
"""

from __future__ import annotations

from dataclasses import replace

from groupcheck.symbolic.agreement import DEFAULT_BFS, DEFAULT_LENGTH, DEFAULT_SEEK, DEFAULT_WALKS
from invariants.z3.proof.crosscheck import cross_check
from model.consumer import reconcile as rc
from model.ids import EMPTY, Assignment, TopicPartition
from model.presets import PRESETS
from model.records import Member
from model.status import MemberState


def pending_not_free(
    member: Member,
    *,
    target_epoch: int,
    target: Assignment,
    partition_epochs: dict[TopicPartition, int],
    owned: Assignment | None,
    subscription_changed: bool,
    subscribed_topic_ids: frozenset[str],
) -> Member:
    """``reconcile`` with ``tp not in own_pending`` dropped from the free check: a
    partition of the target the member itself has pending revocation (and so still in the
    partition epochs) is held, not handed back. The reference's answer, but where it handed
    such a partition back the member is UNRELEASED_PARTITIONS without it — what the edited
    line gives."""
    out = rc.reconcile(
        member,
        target_epoch=target_epoch,
        target=target,
        partition_epochs=partition_epochs,
        owned=owned,
        subscription_changed=subscription_changed,
        subscribed_topic_ids=subscribed_topic_ids,
    )
    own = frozenset(tp for tp in member.partitions_pending_revocation if tp in partition_epochs)
    handed_back = own & out.assigned_partitions
    if not handed_back or out.partitions_pending_revocation:
        return out
    return rc.with_epoch(
        member,
        target_epoch,
        state=MemberState.UNRELEASED_PARTITIONS,
        assigned_partitions=out.assigned_partitions - handed_back,
        partitions_pending_revocation=EMPTY,
    )


def test_the_default_catches_own_pending_not_free() -> None:
    tiny = PRESETS["TINY"]
    changed = replace(tiny, rules=replace(tiny.rules, reconcile=pending_not_free))
    out = cross_check(
        changed,
        walks=DEFAULT_WALKS,
        length=DEFAULT_LENGTH,
        seed=0,
        bfs_states=DEFAULT_BFS,
        seek_states=DEFAULT_SEEK,
    )
    assert out.verdict == "violation"
    (found,) = out.disagreements()
    assert found.family == "DeliverMessage.heartbeat"
    assert found.origin == "bfs"
    assert found.check is not None
    assert found.check.allowed == "no"
    assert out.repeated > 0  # repeated coordinator steps were not checked again
