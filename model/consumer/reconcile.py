"""Member reconciliation: revoke first, then assign (``CurrentAssignmentBuilder``).

KIP-848 "Member Epoch - Reconciliation of the group" with the refinements of Apache
Kafka's ``modern.consumer.CurrentAssignmentBuilder`` (docs/kafka-rules.md, Reconciliation):

* a member in ``UNREVOKED_PARTITIONS`` keeps its epoch until it acknowledges the
  revocation, then jumps to the target epoch (KAFKA-19974; KIP-848 text: "transitions to
  the target epoch");
* a partition is handed out only when no other member holds it, according to the group's
  partition epochs; the member's own partitions pending revocation count as free
  (KAFKA-19449);
* the target is filtered by the member's live subscription (KAFKA-19431).

The rule is a *kernel* written once against the set interface of ``model/sets.py``
(``ops``): :func:`reconcile_kernel` and the functions it calls. The model runs it with the
frozenset backend (:func:`reconcile`, the ``Rules.reconcile`` default); the symbolic
relation of KIP-848 runs the same functions with the Z3 backend
(``invariants/z3/proof/z3sets.py``). A user's replacement written the same way
(:func:`kernel_rule`) is explored, searched by BMC and proved (``--rules``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from model.ids import EMPTY, Assignment, TopicPartition
from model.records import Member, replace
from model.sets import FROZENSETS, AnyOps, NamedKernel
from model.status import MemberState

STABLE = MemberState.STABLE
UNREVOKED = MemberState.UNREVOKED_PARTITIONS
UNRELEASED = MemberState.UNRELEASED_PARTITIONS


def owns_any(ops: AnyOps, owned: Any, reported: Any, s: Any) -> Any:
    """Whether the member may still own any of ``s``: those of ``owned`` when the request
    ``reported`` its owned partitions; a member that did not (``TopicPartitions`` null) is
    assumed to hold everything (``CurrentAssignmentBuilder.ownsRevokedPartitions``)."""
    return ops.ite(reported, lambda: ops.nonempty(ops.inter(s, owned)), lambda: ops.nonempty(s))


def compute_next_assignment(
    ops: AnyOps,
    member: Any,
    *,
    target_epoch: Any,
    live: Any,
    held: Any,
    owned: Any,
    reported: Any,
) -> Any:
    """Move a member towards its target ``live`` (already filtered by its subscription)
    (``CurrentAssignmentBuilder.computeNextAssignment``).

    keep = assigned ∩ target; revoke = assigned − target; add = (target − assigned) −
    (held − pending): minus the partitions another member still holds (``held``: those
    with a partition epoch; the member's own pending revocation counts as free). Rules in
    order: revoke first (the epoch stays), else assign what is free and jump to the
    target epoch (``UNRELEASED_PARTITIONS`` when something is still held elsewhere, else
    ``STABLE``).
    """
    assigned = ops.assigned(member)
    keep = ops.inter(assigned, live)
    revoke = ops.diff(assigned, live)

    def revoke_first() -> Any:
        return ops.with_epoch(
            member, ops.epoch(member), state=ops.state(UNREVOKED), assigned=keep, revoking=revoke
        )

    def assign_free() -> Any:
        wanted = ops.diff(live, assigned)
        elsewhere = ops.diff(held, ops.revoking(member))
        state = ops.ite(
            ops.nonempty(ops.inter(wanted, elsewhere)),
            lambda: ops.state(UNRELEASED),
            lambda: ops.state(STABLE),
        )
        return ops.with_epoch(
            member,
            target_epoch,
            state=state,
            assigned=ops.union(keep, ops.diff(wanted, elsewhere)),
            revoking=ops.empty(),
        )

    return ops.ite(owns_any(ops, owned, reported, revoke), revoke_first, assign_free)


def shrink_to_subscription(
    ops: AnyOps,
    member: Any,
    *,
    owned: Any,
    reported: Any,
    subscribed: Any,
) -> Any:
    """Only the subscription changed: revoke the unsubscribed topics now, at the same
    epoch (``CurrentAssignmentBuilder.updateCurrentAssignment``, KAFKA-19431)."""
    assigned = ops.assigned(member)
    moved = ops.outside(assigned, subscribed)

    def shrink() -> Any:
        pending = ops.union(ops.revoking(member), moved)
        return ops.ite(
            owns_any(ops, owned, reported, pending),
            lambda: ops.with_epoch(
                member,
                ops.epoch(member),
                state=ops.state(UNREVOKED),
                assigned=ops.diff(assigned, moved),
                revoking=pending,
            ),
            lambda: ops.with_epoch(member, ops.epoch(member), assigned=ops.diff(assigned, moved)),
        )

    return ops.ite(ops.nonempty(moved), shrink, lambda: member)


def reconcile_kernel(
    ops: AnyOps,
    member: Any,
    *,
    target_epoch: Any,
    target: Any,
    held: Any,
    owned: Any,
    reported: Any,
    subscription_changed: Any,
    subscribed: Any,
) -> Any:
    """One reconciliation step for one heartbeat (``CurrentAssignmentBuilder.build``).

    ``member`` is what the builder is constructed with; the inputs are named after the
    builder calls that supply them: ``withTargetAssignment(target_epoch, target)``,
    ``withCurrentPartitionEpoch`` (``held``: the partitions that have a partition epoch),
    ``withOwnedTopicPartitions`` (``owned``; ``reported`` false when the request did not
    report them), and the subscription inputs of KAFKA-19431 (``subscription_changed``,
    ``subscribed``). A ``STABLE`` member moves when its epoch is not the target's; an
    ``UNREVOKED_PARTITIONS`` member once it no longer owns what it revokes; an
    ``UNRELEASED_PARTITIONS`` member tries again to collect partitions released meanwhile.
    Returns ``member`` itself when nothing changes.
    """

    def next_assignment() -> Any:
        return compute_next_assignment(
            ops,
            member,
            target_epoch=target_epoch,
            live=ops.only(target, subscribed),
            held=held,
            owned=owned,
            reported=reported,
        )

    def maybe_shrink() -> Any:
        return ops.ite(
            subscription_changed,
            lambda: shrink_to_subscription(
                ops, member, owned=owned, reported=reported, subscribed=subscribed
            ),
            lambda: member,
        )

    def stable() -> Any:
        return ops.ite(ops.eq(ops.epoch(member), target_epoch), maybe_shrink, next_assignment)

    def unrevoked() -> Any:
        revoking = ops.revoking(member)
        return ops.ite(owns_any(ops, owned, reported, revoking), maybe_shrink, next_assignment)

    return ops.ite(
        ops.in_state(member, STABLE),
        stable,
        lambda: ops.ite(ops.in_state(member, UNREVOKED), unrevoked, next_assignment),
    )


class ReconcileKernel(Protocol):
    """The signature of :func:`reconcile_kernel`: what a user's replacement of the kernel
    (``--rules``, :func:`kernel_rule`) defines."""

    def __call__(
        self,
        ops: AnyOps,
        member: Any,
        /,
        *,
        target_epoch: Any,
        target: Any,
        held: Any,
        owned: Any,
        reported: Any,
        subscription_changed: Any,
        subscribed: Any,
    ) -> Any: ...


def with_epoch(member: Member, epoch: int, **changes: Any) -> Member:
    """Write a new member epoch; the previous epoch always becomes the old one
    (``ConsumerGroupMember.Builder.updateMemberEpoch``)."""
    return replace(member, member_epoch=epoch, previous_member_epoch=member.member_epoch, **changes)


def run_kernel(
    kernel: Callable[..., Any],
    member: Member,
    *,
    target_epoch: int,
    target: Assignment,
    partition_epochs: Mapping[TopicPartition, int],
    owned: Assignment | None,
    subscription_changed: bool,
    subscribed_topic_ids: frozenset[str],
) -> Member:
    """``kernel`` run by the model: the frozenset backend, with the inputs as
    ``Rules.reconcile`` receives them."""
    out: Member = kernel(
        FROZENSETS,
        member,
        target_epoch=target_epoch,
        target=target,
        held=partition_epochs.keys(),
        owned=EMPTY if owned is None else owned,
        reported=owned is not None,
        subscription_changed=subscription_changed,
        subscribed=subscribed_topic_ids,
    )
    return out


def reconcile(
    member: Member,
    *,
    target_epoch: int,
    target: Assignment,
    partition_epochs: Mapping[TopicPartition, int],
    owned: Assignment | None,
    subscription_changed: bool,
    subscribed_topic_ids: frozenset[str],
) -> Member:
    """One reconciliation step for one heartbeat (``CurrentAssignmentBuilder.build``):
    :func:`reconcile_kernel` with the frozenset backend.

    ``member`` is what the builder is constructed with; every other input is keyword-only
    and named after the builder call that supplies it in Kafka:
    ``withTargetAssignment(target_epoch, target)``,
    ``withCurrentPartitionEpoch(partition_epochs)`` (a partition absent from the map is
    free), ``withOwnedTopicPartitions(owned)`` (``None``: the request did not report
    them), and the subscription inputs added with KAFKA-19431 (``subscription_changed``
    and the member's ``subscribed_topic_ids``). ``model.rules.ReconcileRule`` types the
    exact signature a mutant must keep.

    Returns the same object when nothing changes.
    """
    return run_kernel(
        reconcile_kernel,
        member,
        target_epoch=target_epoch,
        target=target,
        partition_epochs=partition_epochs,
        owned=owned,
        subscription_changed=subscription_changed,
        subscribed_topic_ids=subscribed_topic_ids,
    )


@dataclass(frozen=True)
class KernelRule(NamedKernel):
    """A ``Rules.reconcile`` replacement from a kernel written against ``model/sets.py``
    (:func:`kernel_rule`): called, it runs ``kernel`` with the frozenset backend, as
    :func:`reconcile` runs :func:`reconcile_kernel`; ``explore --engine bmc`` and ``prove``
    read ``kernel`` with the Z3 backend. Named as its kernel; a value, not a closure, so
    that a config holding it pickles (``model.sets.NamedKernel``)."""

    kernel: ReconcileKernel

    def __call__(
        self,
        member: Member,
        *,
        target_epoch: int,
        target: Assignment,
        partition_epochs: Mapping[TopicPartition, int],
        owned: Assignment | None,
        subscription_changed: bool,
        subscribed_topic_ids: frozenset[str],
    ) -> Member:
        return run_kernel(
            self.kernel,
            member,
            target_epoch=target_epoch,
            target=target,
            partition_epochs=partition_epochs,
            owned=owned,
            subscription_changed=subscription_changed,
            subscribed_topic_ids=subscribed_topic_ids,
        )


def kernel_rule(kernel: ReconcileKernel) -> KernelRule:
    """A ``Rules.reconcile`` replacement from a kernel written against ``model/sets.py``
    (:class:`KernelRule`): the model runs it with the frozenset backend, and ``explore
    --engine bmc`` and ``prove`` read it (its ``kernel`` attribute) with the Z3 backend.
    A mutant of the reconciliation is one too (``groupcheck/mutants/catalogue.py``): its
    symbolic variant is its kernel, read the same way."""
    return KernelRule(kernel)
