"""The small interface a kernel of the specification is written against (issue 39).

A *kernel* is a pure rule on sets of partitions, epochs and a member's reconciliation
fields — today ``model.consumer.reconcile.reconcile`` (``CurrentAssignmentBuilder.build``) and
the acceptance of an offset commit at a member epoch
(``model.consumer.coordinator.validate_offset_commit``, ``ConsumerGroup.validateOffsetCommit``). It
is written once, against :class:`KernelOps`, and read by two backends:

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

import sys
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
    def false(self) -> B: ...
    def not_(self, a: B, /) -> B: ...
    def all_(self, *a: B) -> B:
        """Every one of ``a`` holds (in Z3: one ``And``; a literal True is dropped)."""
        ...

    def any_(self, *a: B) -> B:
        """Some one of ``a`` holds (in Z3: one ``Or``; a literal False is dropped)."""
        ...

    def eq(self, a: I, b: I, /) -> B: ...
    def lt(self, a: I, b: I, /) -> B: ...
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

    def false(self) -> bool:
        return False

    def not_(self, a: bool, /) -> bool:
        return not a

    def all_(self, *a: bool) -> bool:
        return all(a)

    def any_(self, *a: bool) -> bool:
        return any(a)

    def eq(self, a: int, b: int, /) -> bool:
        return a == b

    def lt(self, a: int, b: int, /) -> bool:
        return a < b

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


class NamedKernel:
    """What a rule made of a kernel shares (``model.consumer.reconcile.KernelRule``,
    ``model.consumer.coordinator.CommitKernelRule``): named as its kernel (``kernel``, a field of
    the frozen dataclass that derives from this), and pickled by reference where it stands
    in its module in place of its kernel (``@kernel_rule`` on a module-level function: a
    catalogue mutant's), else as the rule of its kernel, which must then be module-level
    itself (the Spark search ships its config to the workers, ``groupcheck.pipeline.bfs``)."""

    kernel: Callable[..., Any]

    def __post_init__(self) -> None:
        # Named as its kernel where a rule is named (errors, reports of a user's code, the
        # mutant registry's name check) and where pickle looks a global up.
        name = getattr(self.kernel, "__name__", "kernel_rule")
        object.__setattr__(self, "__name__", name)
        object.__setattr__(self, "__qualname__", getattr(self.kernel, "__qualname__", name))
        object.__setattr__(self, "__module__", getattr(self.kernel, "__module__", __name__))
        object.__setattr__(self, "__doc__", getattr(self.kernel, "__doc__", None))

    def __reduce__(self) -> str | tuple[Any, ...]:
        module = sys.modules.get(str(getattr(self, "__module__", "")))
        if getattr(module, str(getattr(self, "__qualname__", "")), None) is self:
            return str(self.__qualname__)  # the global it stands as
        return (type(self), (self.kernel,))
