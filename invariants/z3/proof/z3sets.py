"""The Z3 backend of the kernel interface (``model/sets.py``: ``KernelOps``).

Sets of partitions are functions from a partition term to a formula (``Set``), truth
values formulas, epochs and member states integer terms, a member's reconciliation fields
a :class:`MemberTerm`, a subscription a ``Set`` (the partitions of subscribed topics).
``ite`` builds one ``If`` term of both branches. A kernel written against the interface
(``model.consumer.reconcile.reconcile_kernel``, or a user's replacement of it) becomes, through
this backend, the corresponding part of the symbolic relation
(``invariants/z3/proof/transition.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import z3

from invariants.z3.proof.state import PARTITION, STABLE, UNRELEASED, UNREVOKED, BoolRef, ExprRef
from model.status import MemberState

Set = Callable[[ExprRef], BoolRef]
"""A set of partitions as a function from a partition term to a formula."""

T = TypeVar("T")

_p = z3.Const("p", PARTITION)

STATE_CODES: dict[MemberState, int] = {
    MemberState.STABLE: STABLE,
    MemberState.UNREVOKED_PARTITIONS: UNREVOKED,
    MemberState.UNRELEASED_PARTITIONS: UNRELEASED,
}
"""A member state's integer in the symbolic states (``invariants/z3/proof/state.py``)."""


@dataclass(frozen=True)
class MemberTerm:
    """A member's reconciliation fields as Z3 terms (sets as functions of a partition)."""

    epoch: ExprRef
    prev: ExprRef
    state: ExprRef
    assigned: Set
    revoking: Set

    def holds(self, q: ExprRef) -> BoolRef:
        return z3.Or(self.assigned(q), self.revoking(q))


def if_member(c: BoolRef, a: MemberTerm, b: MemberTerm) -> MemberTerm:
    """``a`` when ``c`` holds, else ``b``, field by field."""
    return MemberTerm(
        z3.If(c, a.epoch, b.epoch),
        z3.If(c, a.prev, b.prev),
        z3.If(c, a.state, b.state),
        lambda q: z3.If(c, a.assigned(q), b.assigned(q)),
        lambda q: z3.If(c, a.revoking(q), b.revoking(q)),
    )


def nonempty(s: Set) -> BoolRef:
    return z3.Exists([_p], s(_p))


def _or(a: BoolRef, b: BoolRef) -> BoolRef:
    """``Or(a, b)``, kept small where a side is the literal False (the empty set)."""
    return b if z3.is_false(a) else a if z3.is_false(b) else z3.Or(a, b)


def _and(a: BoolRef, b: BoolRef) -> BoolRef:
    """``And(a, b)``, kept small where a side is the literal True or False."""
    if z3.is_false(a) or z3.is_false(b):
        return z3.BoolVal(False)
    return b if z3.is_true(a) else a if z3.is_true(b) else z3.And(a, b)


def _if(c: BoolRef, a: BoolRef, b: BoolRef) -> BoolRef:
    """``If(c, a, b)`` on truth values, written as ``And(c, a)`` where ``b`` is False (a set
    or the empty set: the form the relation's terms had before the kernel was shared)."""
    if z3.is_false(b):
        return _and(c, a)
    if z3.is_false(a):
        return _and(z3.Not(c), b)
    return z3.If(c, a, b)


class Z3Ops:
    """``model.sets.KernelOps`` over Z3 terms."""

    __slots__ = ()

    def empty(self) -> Set:
        return lambda q: z3.BoolVal(False)

    def union(self, a: Set, b: Set, /) -> Set:
        return lambda q: _or(a(q), b(q))

    def inter(self, a: Set, b: Set, /) -> Set:
        return lambda q: _and(a(q), b(q))

    def diff(self, a: Set, b: Set, /) -> Set:
        return lambda q: _and(a(q), z3.Not(b(q)))

    def nonempty(self, a: Set, /) -> BoolRef:
        return nonempty(a)

    def only(self, a: Set, subscribed: Set, /) -> Set:
        return self.inter(a, subscribed)

    def outside(self, a: Set, subscribed: Set, /) -> Set:
        return self.diff(a, subscribed)

    def false(self) -> BoolRef:
        return z3.BoolVal(False)

    def not_(self, a: BoolRef, /) -> BoolRef:
        return z3.Not(a)

    def all_(self, *a: BoolRef) -> BoolRef:
        if any(z3.is_false(x) for x in a):
            return z3.BoolVal(False)
        kept = [x for x in a if not z3.is_true(x)]
        return z3.BoolVal(True) if not kept else kept[0] if len(kept) == 1 else z3.And(*kept)

    def any_(self, *a: BoolRef) -> BoolRef:
        if any(z3.is_true(x) for x in a):
            return z3.BoolVal(True)
        kept = [x for x in a if not z3.is_false(x)]
        return z3.BoolVal(False) if not kept else kept[0] if len(kept) == 1 else z3.Or(*kept)

    def eq(self, a: ExprRef, b: ExprRef, /) -> BoolRef:
        return a == b

    def lt(self, a: ExprRef, b: ExprRef, /) -> BoolRef:
        return a < b

    def ite(self, c: BoolRef, then: Callable[[], T], otherwise: Callable[[], T], /) -> T:
        a, b = then(), otherwise()
        out: Any
        if isinstance(a, MemberTerm) and isinstance(b, MemberTerm):
            out = a if a is b else if_member(c, a, b)
        elif isinstance(a, z3.ExprRef) or isinstance(b, z3.ExprRef):
            out = z3.If(c, a, b)
        elif callable(a) and callable(b):
            sa, sb = a, b
            out = lambda q: _if(c, sa(q), sb(q))  # noqa: E731
        else:
            raise TypeError(
                f"ite: branches of unlike kinds ({type(a).__name__}, {type(b).__name__})"
            )
        return out

    def state(self, s: MemberState, /) -> ExprRef:
        return z3.IntVal(STATE_CODES[s])

    def in_state(self, m: MemberTerm, s: MemberState, /) -> BoolRef:
        return m.state == STATE_CODES[s]

    def epoch(self, m: MemberTerm, /) -> ExprRef:
        return m.epoch

    def assigned(self, m: MemberTerm, /) -> Set:
        return m.assigned

    def revoking(self, m: MemberTerm, /) -> Set:
        return m.revoking

    def with_epoch(
        self,
        m: MemberTerm,
        epoch: ExprRef,
        /,
        *,
        state: ExprRef | None = None,
        assigned: Set | None = None,
        revoking: Set | None = None,
    ) -> MemberTerm:
        return MemberTerm(
            epoch,
            m.epoch,
            m.state if state is None else state,
            m.assigned if assigned is None else assigned,
            m.revoking if revoking is None else revoking,
        )


Z3SETS = Z3Ops()
"""The Z3 backend the symbolic relation runs kernels with."""


def read_kernel(kernel: Callable[..., Any]) -> MemberTerm:
    """``kernel`` (the signature of ``model.consumer.reconcile.reconcile_kernel``) run once on
    fresh terms: what it returns, which must be a :class:`MemberTerm`. A kernel that uses
    a Python ``if``, ``and``, ``or`` or ``not`` on a term raises here (``Z3Exception``),
    as it would inside the relation."""

    def rel(name: str) -> Set:
        return z3.Function(f"kernel.{name}", PARTITION, z3.BoolSort())

    member = MemberTerm(
        z3.Int("kernel.epoch"),
        z3.Int("kernel.prev"),
        z3.Int("kernel.state"),
        rel("assigned"),
        rel("revoking"),
    )
    out = kernel(
        Z3SETS,
        member,
        target_epoch=z3.Int("kernel.target_epoch"),
        target=rel("target"),
        held=rel("held"),
        owned=rel("owned"),
        reported=z3.Bool("kernel.reported"),
        subscription_changed=z3.Bool("kernel.subscription_changed"),
        subscribed=rel("subscribed"),
    )
    if not isinstance(out, MemberTerm):
        raise TypeError(f"it returned {type(out).__name__}, not the member (MemberTerm)")
    return out


def read_commit_kernel(kernel: Callable[..., Any]) -> BoolRef:
    """``kernel`` (the signature of ``model.consumer.coordinator.validate_offset_commit_kernel``)
    run once on fresh terms: what it returns, which must be a formula (accepted or not)."""
    out = kernel(
        Z3SETS,
        epoch=z3.Int("kernel.commit_epoch"),
        member_epoch=z3.Int("kernel.member_epoch"),
        known=z3.Bool("kernel.known"),
        nobody=z3.Bool("kernel.nobody"),
        held=z3.Bool("kernel.held"),
    )
    if not z3.is_bool(out):
        raise TypeError(f"it returned {type(out).__name__}, not a truth value (BoolRef)")
    return out


READERS: dict[str, Callable[[Callable[..., Any]], Any]] = {
    "reconcile": read_kernel,
    "validate_offset_commit": read_commit_kernel,
}
"""Per ``Rules`` field whose replacement may be a kernel, how it is read on fresh terms."""


def unreadable(kernel: Callable[..., Any], field: str = "reconcile") -> str | None:
    """Why Z3 cannot read ``kernel``, a replacement of ``Rules.<field>`` (its reader in
    :data:`READERS` failed), in one line; None when it can."""
    try:
        READERS[field](kernel)
    except Exception as e:  # the user's kernel, read on Z3 terms
        name = getattr(kernel, "__name__", "the kernel")
        hint = (
            " (use ops.ite, not a Python if, and, or, not, on a set, truth value or epoch)"
            if isinstance(e, z3.Z3Exception)
            else ""
        )
        return f"Z3 cannot read its kernel {name}: {type(e).__name__}: {e}{hint}"
    return None
