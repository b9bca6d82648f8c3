"""The one lasso search of Convergence (issue 39): a protocol-blind loop over any family's
unrolling, beside the depth loop of ``invariants.z3.engine`` and on its types: a
:class:`Lasso` is an engine path (``engine.SymPath``) and its loop's entry, the outcome
the engine's (:class:`LassoOutcome`, an ``engine.Outcome`` with the entry and shift).

Convergence (``invariants.liveness``) asks that, once perturbations stop, a fair schedule
of progress steps reach a converged state. A counterexample of bounded length is a
*lasso* (Biere, Cimatti, Clarke, Zhu, "Symbolic model checking without BDDs", TACAS 1999):
a path ``s0 … sk`` whose last state is an earlier one, ``sk = sj`` (``j < k``) — or the
entry moved by a shift its loop can repeat for ever (``classic_lasso``, "Up to a
generation shift") — so that the loop ``sj … sk`` can run for ever, where every step of
the loop may be in a loop (no perturbation, no converged state: the family's
:meth:`LassoFamily.looping`) and the loop is weakly fair: every obligation of the family
(:meth:`LassoFamily.fairness`: a step whose precondition holds in every state of the loop)
is taken somewhere in it.

A family — the KIP-848 client layer (``invariants.z3.proof.bmc_lasso``), the classic
coordinator's relation (``classic_lasso``) — supplies only those parts through
:class:`LassoFamily`: its unrolling, grown one step at a time; when the last state closes
the loop at ``sj``; what a loop's steps and a prefix's steps must be; its fairness
obligations; the decoding of a model into a path (``engine.Symbolic.path``); and its
confirmer, which judges a lasso in Python. The search knows nothing of members, clients,
epochs or rules.

:func:`search_lasso` asks, for ``k = 1, 2, …, depth``, whether the unrolling of ``k`` steps
has such a lasso (one query per ``k`` under an assumption literal of its own, the loop
entry ``j`` and the shift chosen by the solver), so the first one found is a shortest. A
lasso the confirmer confirms is the ``violation``; one it does not confirm is blocked (the
block the confirmer gives, asserted at this length and every longer one) and the search
goes on, at most ``attempts`` lassos; a confirmation without a block ends the search
``inconclusive``. A family without a confirmer (``confirm`` None) has every lasso stand:
its caller judges the one returned. ``ok`` means no fair non-converging lasso of at most
``depth`` steps (under the family's fairness; nothing is said of longer loops);
``inconclusive`` with ``unanswered``, Z3 gave no answer at ``depth``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import z3

from invariants.z3.engine import Outcome, SymPath

BoolRef = Any

CONVERGENCE = "Convergence"
"""The goal of every lasso search (``invariants.liveness.CONVERGENCE``'s name)."""


@dataclass(frozen=True)
class Lasso:
    """A lasso: the path ``s0 … sk`` and the index ``loop`` of the state ``sj`` its last
    state equals — up to ``shift`` (how much larger the last state's generations are than
    the entry's; 0: equal)."""

    path: SymPath[Any]
    loop: int
    shift: int = 0

    @property
    def prefix(self) -> SymPath[Any]:
        """The path up to the loop's entry ``sj`` (its clients too, where it has some)."""
        p, j = self.path, self.loop
        return replace(p, states=p.states[: j + 1], steps=p.steps[:j], clients=p.clients[: j + 1])

    def loop_steps(self) -> list[str]:
        """The loop's steps, each as ``family(member)`` (``family`` without one)."""
        out = []
        for fam, params in self.path.steps[self.loop :]:
            who = params.get("member")
            out.append(f"{fam}({who})" if who else fam)
        return out


@dataclass(frozen=True)
class Fairness:
    """One weak-fairness obligation: if ``enabled`` holds in every state of the loop (at
    state ``i``), the step ``taken`` describes (at step ``i``) is taken in it."""

    taken: Callable[[int], BoolRef]
    enabled: Callable[[int], BoolRef]


Block = Callable[[Sequence[BoolRef]], BoolRef]
"""The lassos an unconfirmed one rules out, given a length's loop-entry literals."""


@dataclass(frozen=True)
class Confirmation:
    """A confirmer's verdict on a lasso: ``confirmed``; its ``record`` (appended, after
    the lasso's depth and entry, to :attr:`LassoOutcome.lifts`); what confirms it
    (``trace``: the model trace, or whatever the family's caller reads); and, unconfirmed,
    the lassos to block before asking again (None: the search ends inconclusive)."""

    confirmed: bool
    record: dict[str, Any] = field(default_factory=dict)
    trace: Any = None
    block: Block | None = None


class LassoFamily(Protocol):
    """A family's parts of the lasso search: an unrolling from its initial state."""

    @property
    def solver(self) -> Any:
        """What the queries are asked of: ``add``, ``check(*assumptions)`` and ``model``
        as ``z3.Solver`` has them."""

    def extend(self) -> None:
        """One more step unrolled (with what the family asks of every path, e.g. its
        perturbation budget)."""

    def grounded(self) -> AbstractContextManager[Any]:
        """The scope the lasso's formulas are built in."""

    def encode(self, formula: BoolRef) -> BoolRef:
        """``formula`` as the solver reads it."""

    def closes(self, j: int, k: int, shift: Any) -> BoolRef:
        """The last state ``sk`` is ``sj`` (up to ``shift``)."""

    def shift_range(self, shift: Any) -> BoolRef | None:
        """The shifts a loop may close with (None: the family has none)."""

    def looping(self, i: int) -> BoolRef:
        """Step ``i`` (and state ``si``) may be in the loop: not converged, a loop step."""

    def leading(self, i: int) -> BoolRef | None:
        """What step ``i`` must be where it is before the loop (None: anything)."""

    def fairness(self) -> Sequence[Fairness]:
        """The loop's weak-fairness obligations."""

    def path(self, model: Any, goal: str) -> SymPath[Any]:
        """The path of a model of the unrolling (``engine.Symbolic.path``)."""

    @property
    def confirm(self) -> Callable[[Lasso], Confirmation] | None:
        """The family's confirmer (None: every lasso stands, its caller judges it)."""


@dataclass
class LassoOutcome(Outcome):
    """The engine's :class:`~invariants.z3.engine.Outcome` of a lasso search, with the
    loop: ``violation`` (a lasso, confirmed where the family has a confirmer), ``ok`` (no
    lasso up to ``depth``) or ``inconclusive`` (lassos, none confirmed; or Z3 gave no
    answer: ``unanswered``, its ``reason``); ``path`` the lasso's and ``trace`` its
    confirmer's (``Confirmation.trace``), ``loop`` and ``shift`` where it closes
    (:class:`Lasso`); ``lifts`` each confirmation's record."""

    loop: int = 0
    shift: int = 0
    unanswered: bool = False
    """Z3 gave no answer at ``depth`` (unknown): that depth and those above unsearched."""

    @property
    def lasso(self) -> Lasso | None:
        """The lasso reported (None: none found)."""
        return None if self.path is None else Lasso(self.path, self.loop, self.shift)

    def report(self, status: str, k: int, lasso: Lasso) -> None:
        """Report ``lasso``, of ``k`` steps, as ``status``."""
        self.status, self.depth = status, k
        self.path, self.loop, self.shift = lasso.path, lasso.loop, lasso.shift


def lasso_at(family: LassoFamily, k: int) -> tuple[BoolRef, list[Any], Any]:
    """The formula "the unrolling's first ``k`` steps are a fair non-converging lasso",
    its loop-entry literals (``entry[j]``: the loop starts at ``sj``) and its shift."""
    entry = [z3.Bool(f"lasso{k}.entry{j}") for j in range(k)]
    inside = [z3.Or(*entry[: i + 1]) for i in range(k)]
    out: list[BoolRef] = [z3.Or(*entry)]
    d = z3.Int(f"lasso{k}.shift")
    with family.grounded():
        for j in range(k):
            out.append(z3.Implies(entry[j], family.closes(j, k, d)))
        shifts = family.shift_range(d)
        if shifts is not None:
            out.append(shifts)
        for i in range(k):
            out.append(z3.Implies(inside[i], family.looping(i)))
            lead = family.leading(i)
            if lead is not None:
                out.append(z3.Or(inside[i], lead))
        for ob in family.fairness():
            taken = z3.Or(*[z3.And(inside[i], ob.taken(i)) for i in range(k)])
            off = z3.Or(*[z3.And(inside[i], z3.Not(ob.enabled(i))) for i in range(k)])
            out.append(z3.Or(taken, off))
    return z3.And(*out), entry, d


def search_lasso(
    family: LassoFamily,
    depth: int,
    *,
    attempts: int = 1,
    refute: bool = True,
    clock: Callable[[], float] = time.monotonic,
) -> LassoOutcome:
    """The shortest fair non-converging lasso of ``family`` (in steps, up to ``depth``)
    that its confirmer confirms: one incremental unrolling, one query per length under an
    assumption literal of its own, unconfirmed lassos blocked (module docstring). With
    ``refute``, a length without a lasso has its literal refuted for good (what the solver
    learns there serves the next lengths; the KIP-848 layer's choice); without, it is left
    open, as the classic relation's search always asked (the same assertions in the same
    order, so the same lassos first). Either way the verdicts and depths are the same."""
    start = clock()
    out = LassoOutcome(CONVERGENCE, "ok", depth, 0.0)
    blocks: list[Block] = []
    solver = family.solver
    for k in range(1, depth + 1):
        family.extend()
        formula, entry, d = lasso_at(family, k)
        asked = z3.Bool(f"lasso@{k}")
        solver.add(z3.Implies(asked, family.encode(formula)))
        for block in blocks:
            solver.add(z3.Implies(asked, block(entry)))
        while out.tried < attempts:
            answer = solver.check(asked)
            if answer == z3.unknown:
                out.status, out.depth, out.unanswered = "inconclusive", k, True
                reason = getattr(solver, "reason_unknown", None)
                out.reason = str(reason()) if reason is not None else ""
                out.seconds = clock() - start
                return out
            if answer != z3.sat:
                break
            model = solver.model()
            j = next(
                j for j, e in enumerate(entry) if z3.is_true(model.eval(e, model_completion=True))
            )
            shift = model.eval(d, model_completion=True).as_long()
            lasso = Lasso(family.path(model, CONVERGENCE), j, shift)
            out.tried += 1
            if family.confirm is None:
                out.report("violation", k, lasso)
                out.seconds = clock() - start
                return out
            verdict = family.confirm(lasso)
            out.lifts.append({"depth": k, "entry": j, **verdict.record})
            if verdict.confirmed:
                out.report("violation", k, lasso)
                out.trace = verdict.trace
                out.seconds = clock() - start
                return out
            if out.path is None:
                out.report("inconclusive", k, lasso)
            if verdict.block is None:
                out.seconds = clock() - start
                return out
            blocks.append(verdict.block)
            solver.add(z3.Implies(asked, verdict.block(entry)))
        else:
            break
        if refute:
            solver.add(z3.Not(asked))
    out.seconds = clock() - start
    return out
