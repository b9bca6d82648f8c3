"""The one lasso search (invariants/z3/lasso.py) on a toy family declared here: a
counter ``x`` from 0 that either counts up (``inc``, while ``x < TOP``) or, once at
``TOP``, wraps back to ``WRAP`` (``wrap``); it is converged only at ``GOAL``. The only
loop is ``WRAP → … → TOP → WRAP``, so its shortest fair non-converging lasso has
``TOP + 1`` steps, its entry the first visit of ``WRAP``. With ``GOAL`` inside the loop
every loop converges somewhere: no lasso. A confirmer that refuses blocks each lasso in
turn; one that refuses without a block ends the search inconclusive; a fairness
obligation the loop never meets (a step always enabled, never taken) leaves no lasso.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import z3

from invariants.z3.engine import Outcome, SymPath
from invariants.z3.lasso import (
    Confirmation,
    Fairness,
    Lasso,
    LassoOutcome,
    search_lasso,
)

TOP = 4
WRAP = 2


@dataclass
class Counter:
    """The toy family: one integer state per step, a step ``inc`` or ``wrap``."""

    goal: int
    confirm: Callable[[Lasso], Confirmation] | None = None
    starving: bool = False
    """An extra obligation: a step ``poke``, always enabled, never taken."""
    solver: Any = field(default_factory=z3.Solver)
    states: list[Any] = field(default_factory=list)
    incs: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.states.append(z3.Int("x0"))
        self.solver.add(self.states[0] == 0)

    def extend(self) -> None:
        k = len(self.states)
        pre, post = self.states[-1], z3.Int(f"x{k}")
        inc = z3.Bool(f"inc{k}")
        self.states.append(post)
        self.incs.append(inc)
        self.solver.add(
            z3.If(inc, z3.And(pre < TOP, post == pre + 1), z3.And(pre == TOP, post == WRAP))
        )

    def grounded(self) -> AbstractContextManager[Any]:
        return nullcontext()

    def encode(self, formula: Any) -> Any:
        return formula

    def closes(self, j: int, k: int, shift: Any) -> Any:
        return self.states[k] == self.states[j]

    def shift_range(self, shift: Any) -> Any:
        return None

    def looping(self, i: int) -> Any:
        return self.states[i] != self.goal

    def leading(self, i: int) -> Any:
        return None

    def fairness(self) -> list[Fairness]:
        # wrap, enabled at TOP only: never in every state of a loop, so never demanded.
        wrap = Fairness(
            taken=lambda i: z3.Not(self.incs[i]), enabled=lambda i: self.states[i] == TOP
        )
        out = [wrap]
        if self.starving:
            out.append(
                Fairness(taken=lambda i: z3.BoolVal(False), enabled=lambda i: z3.BoolVal(True))
            )
        return out

    def path(self, model: Any, goal: str) -> SymPath[int]:
        xs = tuple(model.eval(x, model_completion=True).as_long() for x in self.states)
        steps: tuple[tuple[str, dict[str, Any]], ...] = tuple(
            ("inc" if z3.is_true(model.eval(f, model_completion=True)) else "wrap", {})
            for f in self.incs
        )
        return SymPath(goal, xs, steps)


def test_the_shortest_fair_non_converging_lasso_is_found_at_its_length() -> None:
    out = search_lasso(Counter(goal=TOP + 5), TOP + 3)
    assert (out.status, out.depth, out.tried) == ("violation", TOP + 1, 1)
    # The engine's outcome, its path the lasso's.
    assert isinstance(out, Outcome)
    assert out.goal == "Convergence"
    assert out.lasso is not None
    assert out.path is out.lasso.path
    path = out.lasso.path
    assert path.states == (0, 1, 2, 3, 4, WRAP)
    assert out.lasso.loop == WRAP
    assert out.lasso.shift == 0
    assert out.lasso.loop_steps() == ["inc", "inc", "wrap"]
    assert out.lasso.prefix.states == (0, 1, 2)
    assert out.lasso.prefix.steps == (("inc", {}), ("inc", {}))


def test_a_loop_through_a_converged_state_is_no_lasso() -> None:
    out = search_lasso(Counter(goal=3), TOP + 5)
    assert (out.status, out.depth, out.lasso) == ("ok", TOP + 5, None)


def test_a_fairness_obligation_the_loop_never_meets_leaves_no_lasso() -> None:
    out = search_lasso(Counter(goal=TOP + 5, starving=True), TOP + 3)
    assert (out.status, out.lasso) == ("ok", None)


def test_the_confirmer_decides_and_an_unconfirmed_lasso_is_blocked() -> None:
    seen: list[Lasso] = []

    def refuse_once(lasso: Lasso) -> Confirmation:
        seen.append(lasso)
        if len(seen) == 1:
            entry = lasso.loop

            def block(entries: Any) -> Any:
                return z3.Not(entries[entry]) if entry < len(entries) else z3.BoolVal(True)

            return Confirmation(False, {"why": "first"}, block=block)
        return Confirmation(True, {"why": "second"}, trace="trace")

    out = search_lasso(Counter(goal=TOP + 5, confirm=refuse_once), TOP + 6, attempts=5)
    # The one loop of length TOP + 1 blocked, the next lasso loops twice round it (or
    # enters it later): longer.
    assert out.status == "violation"
    assert out.depth > TOP + 1
    assert out.trace == "trace"
    assert out.tried == 2
    assert [r["why"] for r in out.lifts] == ["first", "second"]
    assert out.lifts[0]["depth"] == TOP + 1
    assert out.lasso is not None
    assert out.lasso.loop != WRAP


def test_a_refusal_without_a_block_ends_the_search_inconclusive() -> None:
    def refuse(lasso: Lasso) -> Confirmation:
        return Confirmation(False)

    out: LassoOutcome = search_lasso(Counter(goal=TOP + 5, confirm=refuse), TOP + 3, attempts=9)
    assert (out.status, out.depth, out.tried, out.trace) == ("inconclusive", TOP + 1, 1, None)
    assert out.lasso is not None


def test_no_answer_from_z3_is_inconclusive_not_ok() -> None:
    class Unknown(z3.Solver):  # type: ignore[misc]
        def check(self, *assumptions: Any) -> Any:
            return z3.unknown

    out = search_lasso(Counter(goal=TOP + 5, solver=Unknown()), 3)
    assert (out.status, out.depth, out.unanswered, out.tried) == ("inconclusive", 1, True, 0)
