"""The depth-by-depth search of a bounded model checking whose paths count only once
lifted to a model trace (the classic coordinator's ``classic_bmc``, with its clients
``classic_client_bmc``, and a mixed group's ``mixed_bmc``): ask the goal at every depth
from 1 up, lift each symbolic path found, block a path that does not lift (with the
prefix an exhausted lift could not match) and ask again, at most ``attempts`` paths."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import z3

from invariants.check import Violation
from model.actions import Action
from model.config import Config
from model.path import Path

Lifted = tuple[list[Action] | None, list[Violation], int, int | None]
"""A lift's answer: the trace's actions (None: none found), the violations of its last
step, the nodes visited and how many of the path's states after the initial one some
trace matched (None: the search was cut; -1: the initial state does not match)."""


@dataclass
class Outcome:
    """One goal's search: ``violation`` (a lifted trace), ``ok`` (no symbolic path up to
    ``depth``) or ``inconclusive`` (symbolic paths, none lifted); the depth of the path
    reported, the paths tried and the lift's record."""

    goal: str
    status: str
    depth: int
    seconds: float
    path: Any = None
    trace: Path | None = None
    property: str | None = None
    message: str | None = None
    tried: int = 0
    lifts: list[dict[str, Any]] = field(default_factory=list)


class FreshSolver:
    """A solver that answers every ``check`` with a new ``z3.Solver`` over the assertions
    added so far (those of the scopes ``push`` opened and ``pop`` has not closed).

    Once pushed, ``z3.Solver`` answers incrementally, without the preprocessing it gives a
    query asked from scratch; a deep unrolling asked once per depth is answered faster
    from scratch (docs/benchmarks.md). The answer is the same: the same
    assertions, the same satisfiability."""

    def __init__(self) -> None:
        self._assertions: list[Any] = []
        self._marks: list[int] = []
        self._model: Any = None

    def add(self, *constraints: Any) -> None:
        self._assertions.extend(constraints)

    def push(self) -> None:
        self._marks.append(len(self._assertions))

    def pop(self) -> None:
        del self._assertions[self._marks.pop() :]

    def assertions(self) -> list[Any]:
        return list(self._assertions)

    def check(self, *assumptions: Any) -> Any:
        solver = z3.Solver()
        solver.add(*self._assertions)
        answer = solver.check(*assumptions)
        self._model = solver.model() if answer == z3.sat else None
        return answer

    def model(self) -> Any:
        if self._model is None:
            raise z3.Z3Exception("no model: the last check was not sat")
        return self._model


class Unrolled(Protocol):
    """An unrolling the search extends one step at a time."""

    solver: Any

    def extend(self) -> None: ...

    def goal(self, goal: str) -> Any: ...

    def path(self, model: Any, goal: str) -> Any: ...

    def block(self, path: Any, steps: int) -> None: ...


def search_lifted(
    unroll: Unrolled,
    goal: str,
    depth: int,
    config: Config,
    *,
    lifter: Callable[[Any, Config, int], Lifted],
    attempts: int,
    lift_states: int,
    progress: Callable[[str], None] | None = None,
    start_depth: int = 1,
) -> Outcome:
    """The shortest path of at most ``depth`` steps of ``unroll`` violating ``goal`` that
    ``lifter`` lifts (module docstring). With ``start_depth`` > 1 the goal is asked only
    from that depth on (the unrolling is built through the depths below it): a violation
    is still a lifted trace, but no path is no longer ``ok`` — the shorter paths were not
    asked —, it is ``inconclusive`` with the depths asked named."""
    began = time.process_time()
    out = Outcome(goal, "ok", depth, 0.0)
    for d in range(1, depth + 1):
        unroll.extend()
        if d < start_depth:
            continue
        unroll.solver.push()
        unroll.solver.add(unroll.goal(goal))
        if progress is not None:
            progress(f"depth {d} ({time.process_time() - began:.1f} s)")
        while out.tried < attempts:
            answer = unroll.solver.check()
            if answer == z3.unknown:
                # No answer is not "no path": the depth stays unsearched.
                out.status, out.depth = "inconclusive", d
                out.message = f"Z3 gave no answer at depth {d}"
                unroll.solver.pop()
                out.seconds = time.process_time() - began
                return out
            if answer != z3.sat:
                break
            path = unroll.path(unroll.solver.model(), goal)
            out.tried += 1
            trace, violations, visited, matched = lifter(path, config, lift_states)
            out.lifts.append(
                {
                    "depth": d,
                    "states": visited,
                    "exhausted": matched is not None,
                    "found": trace is not None,
                }
            )
            if progress is not None:
                progress(
                    f"depth {d}: path {out.tried} lifted: {trace is not None} "
                    f"({visited} states, matched {matched}; {time.process_time() - began:.1f} s)"
                )
            if trace is not None:
                out.status, out.depth, out.path = "violation", d, path
                out.trace = Path(config, tuple(trace))
                if violations:  # none for a lift to a witness's step (mixed_witness.reach)
                    chosen = next((v for v in violations if v.property == goal), violations[0])
                    out.property, out.message = chosen.property, chosen.message
                unroll.solver.pop()
                out.seconds = time.process_time() - began
                return out
            if out.path is None:
                out.status, out.depth, out.path = "inconclusive", d, path
            # An exhausted lift reached no model state matching the path's state after the
            # ``matched`` first ones: no path through that prefix lifts.
            unroll.block(path, d if matched is None else max(1, min(d, matched + 1)))
        unroll.solver.pop()
        if out.tried >= attempts:
            break
    if out.status == "ok" and start_depth > 1:
        out.status = "inconclusive"
        asked = f"{start_depth}" if start_depth >= depth else f"{start_depth} to {depth}"
        out.message = (
            f"no symbolic path of {asked} steps; paths of fewer than {start_depth} steps not asked"
        )
    out.seconds = time.process_time() - began
    return out
