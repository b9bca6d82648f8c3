"""The small interface a kernel of the specification is written against (issue 39).

A *kernel* is a pure rule on sets of partitions, epochs and a member's reconciliation
fields — today ``model.reconcile.reconcile`` (``CurrentAssignmentBuilder.build``). It is
written once, against :class:`KernelOps`, and read by two backends:

* :data:`FROZENSETS` (here): sets are ``frozenset`` values, epochs ``int``, a member a
  ``model.records.Member``; the model and the explicit engines run it;
* the Z3 backend (``invariants/z3/proof/z3sets.py``): sets are functions of a partition
  term, epochs and states Z3 terms, a member a ``MemberTerm``; the symbolic relation of
  KIP-848 (``invariants/z3/proof/transition.py``) calls the same kernel through it, so a
  kernel a user replaces (``--rules``) is proved and searched symbolically as written.

A kernel may use only what this interface offers: no Python ``if`` on a set, a boolean or
an epoch (``ite`` instead: in Z3 both branches become one term), no iteration over a set,
no other fields of a member. Both branches of ``ite`` are given as functions of no
argument, so the frozenset backend runs only the branch taken.
"""

from __future__ import annotations

from collections.abc import Callable, Set
from typing import Any, Protocol, TypeVar

from model.ids import EMPTY, TopicPartition
from model.records import Member, replace
from model.status import MemberState

S = TypeVar("S")
"""A set of partitions."""
B = TypeVar("B")
"""A truth value."""
I = TypeVar("I")  # noqa: E741
"""An epoch."""
M = TypeVar("M")
"""A member's reconciliation fields (epoch, previous epoch, state, assigned, revoking)."""
X = TypeVar("X")
"""A member state (``model.status.MemberState``)."""
F_contra = TypeVar("F_contra", contravariant=True)
"""A member's subscription, as a filter on partitions."""
T = TypeVar("T")


class KernelOps(Protocol[S, B, I, M, X, F_contra]):
    """What a kernel may do with sets, truth values, epochs and a member."""

    # sets of partitions
    def empty(self) -> S: ...
    def union(self, a: S, b: S, /) -> S: ...
    def inter(self, a: S, b: S, /) -> S: ...
    def diff(self, a: S, b: S, /) -> S: ...
    def nonempty(self, a: S, /) -> B: ...
    def only(self, a: S, subscribed: F_contra, /) -> S:
        """The partitions of ``a`` whose topic the subscription names."""
        ...

    def outside(self, a: S, subscribed: F_contra, /) -> S:
        """The partitions of ``a`` whose topic the subscription does not name."""
        ...

    # truth values and epochs
    def not_(self, a: B, /) -> B: ...
    def eq(self, a: I, b: I, /) -> B: ...
    def ite(self, c: B, then: Callable[[], T], otherwise: Callable[[], T], /) -> T:
        """``then()`` when ``c`` holds, else ``otherwise()`` (in Z3: one ``If`` term)."""
        ...

    # a member's reconciliation fields (``ConsumerGroupMember``)
    def state(self, s: MemberState, /) -> X: ...
    def in_state(self, m: M, s: MemberState, /) -> B: ...
    def epoch(self, m: M, /) -> I: ...
    def assigned(self, m: M, /) -> S: ...
    def revoking(self, m: M, /) -> S: ...
    def with_epoch(
        self,
        m: M,
        epoch: I,
        /,
        *,
        state: X | None = None,
        assigned: S | None = None,
        revoking: S | None = None,
    ) -> M:
        """``m`` at ``epoch``, its epoch before becoming the previous one
        (``ConsumerGroupMember.Builder.updateMemberEpoch``); a field given as None keeps
        its value."""
        ...


PySet = Set[TopicPartition]
"""A set of partitions in the frozenset backend (``frozenset``; a partition-epoch map's
keys may be given where a kernel only intersects with them)."""


class FrozensetOps:
    """The frozenset backend: sets are ``frozenset`` (``model.ids.Assignment``), truth
    values ``bool``, epochs ``int``, a member a ``model.records.Member``, the
    subscription a set of topic ids."""

    __slots__ = ()

    def empty(self) -> PySet:
        return EMPTY

    def union(self, a: PySet, b: PySet, /) -> PySet:
        return a | b

    def inter(self, a: PySet, b: PySet, /) -> PySet:
        return a & b

    def diff(self, a: PySet, b: PySet, /) -> PySet:
        return a - b

    def nonempty(self, a: PySet, /) -> bool:
        return bool(a)

    def only(self, a: PySet, subscribed: Set[str], /) -> PySet:
        return frozenset(tp for tp in a if tp[0] in subscribed)

    def outside(self, a: PySet, subscribed: Set[str], /) -> PySet:
        return frozenset(tp for tp in a if tp[0] not in subscribed)

    def not_(self, a: bool, /) -> bool:
        return not a

    def eq(self, a: int, b: int, /) -> bool:
        return a == b

    def ite(self, c: bool, then: Callable[[], T], otherwise: Callable[[], T], /) -> T:
        return then() if c else otherwise()

    def state(self, s: MemberState, /) -> MemberState:
        return s

    def in_state(self, m: Member, s: MemberState, /) -> bool:
        return m.state is s

    def epoch(self, m: Member, /) -> int:
        return m.member_epoch

    def assigned(self, m: Member, /) -> PySet:
        return m.assigned_partitions

    def revoking(self, m: Member, /) -> PySet:
        return m.partitions_pending_revocation

    def with_epoch(
        self,
        m: Member,
        epoch: int,
        /,
        *,
        state: MemberState | None = None,
        assigned: PySet | None = None,
        revoking: PySet | None = None,
    ) -> Member:
        changes: dict[str, Any] = {}
        if state is not None:
            changes["state"] = state
        if assigned is not None:
            changes["assigned_partitions"] = assigned
        if revoking is not None:
            changes["partitions_pending_revocation"] = revoking
        return replace(m, member_epoch=epoch, previous_member_epoch=m.member_epoch, **changes)


AnyOps = KernelOps[Any, Any, Any, Any, Any, Any]
"""The interface with every backend's types: what a kernel function takes (a kernel is
generic in its backend; Python's type system cannot state that more precisely)."""

FROZENSETS = FrozensetOps()
"""The frozenset backend the model runs."""
