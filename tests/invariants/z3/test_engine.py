"""The protocol-blind BMC engine (invariants/z3/engine.py) on a toy family declared here:
a counter ``x`` from 0, each step ``inc`` (x + 1) or, where allowed, ``add2`` (x + 2).
``Below3`` (x < 3) is first violated at depth 3 by ``inc`` alone, at depth 2 with
``add2``; ``NonNegative`` (x >= 0) never is.

Every bound here is a depth, never seconds."""

from __future__ import annotations

from typing import Any

import pytest
import z3

from invariants.z3 import engine
from invariants.z3.engine import Lifted, SymPath
from model.presets import MUT2

NEGATED = {
    "Below3": lambda x: x >= 3,
    "NonNegative": lambda x: x < 0,
}


class Counter(engine.Unroller[Any]):
    """The toy family: its states, initial and transition constraints on the engine's
    unroller, its goals and decoding (``engine.Symbolic``)."""

    def __init__(self, *, add2: bool = False, fresh: bool = False) -> None:
        self.families = ("inc", "add2") if add2 else ("inc",)
        self.start(engine.FreshSolver() if fresh else z3.Solver())

    def fresh(self, k: int) -> Any:
        return z3.Int(f"x{k}")

    def initial(self, s0: Any) -> None:
        self.solver.add(s0 == 0)

    def transition(self, pre: Any, post: Any, k: int) -> list[tuple[Any, ...]]:
        chosen: list[tuple[Any, ...]] = []
        for name in self.families:
            sel = z3.Bool(f"step{k}.{name}")
            self.solver.add(z3.Implies(sel, post == pre + (1 if name == "inc" else 2)))
            chosen.append((sel, name))
        return self.one_of(chosen)

    def goal(self, name: str) -> Any:
        return NEGATED[name](self.states[-1])

    def path(self, model: Any, goal: str) -> SymPath[int]:
        states = tuple(model.eval(x, model_completion=True).as_long() for x in self.states)
        steps = tuple((name, {}) for _, name in self.chosen_in(model))
        return SymPath(goal, states, steps)

    def block(self, path: SymPath[int], steps: int) -> None:
        pinned = [x == v for x, v in zip(self.states[1 : steps + 1], path.states[1:], strict=False)]
        self.solver.add(z3.Not(z3.And(*pinned)))


def only_inc(path: SymPath[int], config: Any, max_states: int) -> Lifted:
    """A lift that finds a trace for a path of ``inc`` steps only (exhausted otherwise)."""
    if all(name == "inc" for name, _ in path.steps):
        return [], [], len(path.steps), len(path.steps)
    return None, [], 1, len(path.steps) - 1


@pytest.mark.parametrize("scoped", [False, True])
def test_a_goal_violated_at_a_known_depth_and_one_never(scoped: bool) -> None:
    out = engine.search(Counter(), ["Below3", "NonNegative"], 5, scoped=scoped)
    below, nonneg = out["Below3"], out["NonNegative"]
    assert (below.status, below.depth) == ("violation", 3)
    assert below.path is not None
    assert below.path.states == (0, 1, 2, 3)
    assert [name for name, _ in below.path.steps] == ["inc", "inc", "inc"]
    assert (nonneg.status, nonneg.depth, nonneg.path) == ("ok", 5, None)


def test_the_shortest_path_is_found_first() -> None:
    out = engine.search(Counter(add2=True), ["Below3"], 5)["Below3"]
    assert (out.status, out.depth) == ("violation", 2)
    assert out.path is not None
    assert out.path.states[-1] >= 3


@pytest.mark.parametrize("fresh", [False, True])
def test_a_path_that_does_not_lift_is_blocked_and_a_longer_one_lifts(fresh: bool) -> None:
    """The depth-2 paths use ``add2``, which the lift refuses: each is blocked, the goal
    asked again, and the depth-3 path of ``inc`` steps is the violation."""
    out = engine.search(
        Counter(add2=True, fresh=fresh),
        ["Below3"],
        5,
        config=MUT2,
        lift=only_inc,
        attempts=20,
        lift_states=10,
        scoped=True,
    )["Below3"]
    assert (out.status, out.depth) == ("violation", 3)
    assert out.trace is not None
    assert out.path is not None
    assert [name for name, _ in out.path.steps] == ["inc", "inc", "inc"]
    assert out.tried == len(out.lifts) > 1
    assert [lift["found"] for lift in out.lifts][-1]
    assert not any(lift["found"] for lift in out.lifts[:-1])
    assert {lift["depth"] for lift in out.lifts[:-1]} >= {2}


def test_no_lifted_path_within_the_attempts_is_inconclusive() -> None:
    out = engine.search(
        Counter(add2=True),
        ["Below3"],
        5,
        config=MUT2,
        lift=only_inc,
        attempts=1,
        lift_states=10,
        scoped=True,
    )["Below3"]
    assert (out.status, out.depth, out.tried) == ("inconclusive", 2, 1)
    assert out.path is not None
    assert out.trace is None


def test_a_goal_asked_only_from_a_start_depth_is_never_ok() -> None:
    out = engine.search(
        Counter(), ["NonNegative"], 3, config=MUT2, lift=only_inc, scoped=True, start_depth=2
    )["NonNegative"]
    assert out.status == "inconclusive"
    assert out.message is not None
    assert "fewer than 2 steps not asked" in out.message


def test_a_path_renders_its_states_and_steps() -> None:
    path = SymPath("Below3", (0, 1), (("inc", {"by": 1}),))
    assert engine.render_path(path, lambda x: [f"x = {x}"]) == [
        "initial:",
        "  x = 0",
        "inc(by=1):",
        "  x = 1",
    ]
