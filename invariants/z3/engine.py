"""The one bounded model checking engine (issue 39): a protocol-blind depth loop over any
family's symbolic relation, with one outcome type (:class:`Outcome`) and one path type
(:class:`SymPath`).

A family — the KIP-848 core (``invariants.z3.proof.bmc``), the classic coordinator
(``classic_bmc``, with its clients ``classic_client_bmc``), a mixed group (``mixed_bmc``,
``mixed_witness``) — gives the engine its relation through :class:`Symbolic`: an
unrolling built with the initial constraint on its state ``s0``, which ``extend`` grows by
a fresh state ``s<k>`` and the transition constraint between ``s<k-1>`` and ``s<k>``; the
negation of a goal (a property of ``invariants.properties``, read from its
``invariants.expr`` form or stated in the relation's terms) on the last step; the decoding
of a model into a :class:`SymPath`; and the blocking of a path's prefix. The engine knows
nothing of members, partitions or rules.

:func:`search` unrolls 1, 2, … ``depth`` steps and asks each goal still open at every depth
(the shortest path first). A path found counts at once (``lift`` None: the KIP-848 core,
whose paths the caller replays through the Python coordinator) or only once ``lift`` lifts
it to a model trace (``groupcheck.explore.classic_lift``, ``mixed_lift``): a path that does
not lift is blocked, with the prefix an exhausted lift could not match, and the goal asked
again, at most ``attempts`` paths.

How a goal is asked is the family's choice of solver use, not of semantics (the same
assertions, the same satisfiability): under a push/pop scope (``scoped``: the lifted
searches, whose blocks are asserted inside it), or under an assumption literal of its own
(the negated goal implied by it, and refuted for good when unsat), so that what the solver
learns refuting one goal serves the next goals and depths (2.5 × faster than scopes on
MUT2, docs/benchmarks.md)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import z3

from invariants.check import Violation
from model.actions import Action
from model.config import Config
from model.path import Path as Trace

S = TypeVar("S")


@dataclass(frozen=True)
class SymPath(Generic[S]):
    """A symbolic path: the states ``s0 … sk`` (the family's decoded values) and, between
    them, the family of each step and its parameters (as the family names them)."""

    goal: str
    states: tuple[S, ...]
    steps: tuple[tuple[str, dict[str, Any]], ...]
    clients: tuple[tuple[Any, ...], ...] = ()
    """A family with a client layer beside its states (``bmc_clients``): the clients of
    every state."""


Lifted = tuple[list[Action] | None, list[Violation], int, int | None]
"""A lift's answer: the trace's actions (None: none found), the violations of its last
step, the nodes visited and how many of the path's states after the initial one some
trace matched (None: the search was cut; -1: the initial state does not match)."""

Lift = Callable[[Any, Config, int], Lifted]
"""A lift: the path, the configuration, the most model states to visit."""


@dataclass
class Outcome:
    """One goal's search: ``violation`` (a path; with a lift, a lifted trace), ``ok`` (no
    path up to ``depth``), ``inconclusive`` (paths, none lifted; or the shorter depths not
    asked) or ``unknown`` (Z3 gave no answer, without a lift); the depth of the path
    reported, the seconds (the unrolling's and the goal's own queries' and lifts', CPU),
    the paths tried and each lift's record. Not frozen: ``classic_client_bmc.search``
    puts its lifted partition image in ``path``. A lasso search's is a subtype with the
    loop's entry and shift (``invariants.z3.lasso.LassoOutcome``)."""

    goal: str
    status: str
    depth: int
    seconds: float
    path: Any = None
    trace: Trace | None = None
    property: str | None = None
    message: str | None = None
    reason: str = ""
    """Z3's reason for no answer (``status`` unknown or inconclusive)."""
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


class Symbolic(Protocol):
    """A family's relation as the engine drives it: an unrolling whose constructor
    asserted the initial constraint on ``s0``."""

    solver: Any
    """What the queries are asked of: ``add``, ``push``, ``pop``, ``check(*assumptions)``
    and ``model`` as ``z3.Solver`` has them."""

    def extend(self) -> None:
        """A fresh state ``s<k>`` and the transition constraint between ``s<k-1>`` and
        it."""

    def goal(self, name: str) -> Any:
        """The negation of goal ``name`` on the last step (``s<k-1>``, ``s<k>``), as the
        solver reads it."""

    def path(self, model: Any, goal: str) -> Any:
        """The path of a model of the unrolling (a :class:`SymPath`; the classic client
        layer's ``ClientPath`` until it moves here)."""

    def block(self, path: Any, steps: int) -> None:
        """No other path through the first ``steps`` states after the initial one of
        ``path`` (asked only with a lift)."""


class Unroller(Generic[S]):
    """The one unroller: a family's relation unrolled from its initial state one step at a
    time. A family gives the states and constraints (the hooks below: its symbolic
    interface); the unroller keeps the states ``s0 … sk`` and, per step, the choices of
    the relation's disjuncts — each a tuple whose first element is the selector literal
    guarding a disjunct (then the family and what else the family decodes a step with) —
    of which the step takes one.

    A step: ``fresh(k)`` the state ``s<k>``; ``transition`` asserts each disjunct between
    ``s<k-1>`` and ``s<k>`` under its selector, that the step takes one of them
    (:meth:`one_of`) and what binds the step taken, and returns the choices. The hooks
    assert into ``solver`` themselves, in the order the family makes its terms: Z3 hands
    out the ids of terms no longer used to new ones, and the values it gives parameters no
    constraint pins follow the ids, so a step's terms stay alive until it is asserted."""

    solver: Any
    states: list[S]
    choices: list[list[tuple[Any, ...]]]

    def start(self, solver: Any) -> None:
        """Begin with ``solver``: the state ``s0`` and the initial constraint on it."""
        self.solver = solver
        self.states = [self.fresh(0)]
        self.choices = []
        self.initial(self.states[0])

    def fresh(self, k: int) -> S:
        """The symbolic state ``s<k>``."""
        raise NotImplementedError

    def initial(self, s0: S) -> None:
        """Assert the initial constraint on ``s0``."""
        raise NotImplementedError

    def transition(self, pre: S, post: S, k: int) -> list[tuple[Any, ...]]:
        """Assert the ``k``-th step, from ``pre`` to ``post``: each disjunct of the
        relation under a selector literal of its own, one of them taken (:meth:`one_of`);
        the choices (selector first)."""
        raise NotImplementedError

    def one_of(self, chosen: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """Assert that the step takes one of ``chosen`` (their selectors); ``chosen``."""
        self.solver.add(z3.Or(*[c[0] for c in chosen]))
        return chosen

    def extend(self) -> None:
        """A fresh state ``s<k>`` and the transition constraint between ``s<k-1>`` and
        it."""
        k = len(self.states)
        pre, post = self.states[-1], self.fresh(k)
        self.states.append(post)
        self.choices.append(self.transition(pre, post, k))

    def chosen_in(self, model: Any) -> Iterator[tuple[Any, ...]]:
        """The choice each step of a model of the unrolling takes, step by step (lazily:
        a family's decoding of a step may make terms, and the values Z3 gives later
        queries follow the order terms are made in)."""
        for chosen in self.choices:
            yield next(c for c in chosen if z3.is_true(model.eval(c[0], model_completion=True)))


def search(
    unroll: Symbolic,
    goals: Sequence[str],
    depth: int,
    *,
    config: Config | None = None,
    lift: Lift | None = None,
    attempts: int = 1,
    lift_states: int = 0,
    scoped: bool = False,
    start_depth: int = 1,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Outcome]:
    """For each goal, the shortest path of at most ``depth`` steps of ``unroll`` violating
    it (with ``lift``, the shortest one ``lift`` lifts under ``config``, at most
    ``attempts`` paths and ``lift_states`` model states a lift; module docstring). With
    ``start_depth`` > 1 a goal is asked only from that depth on (the unrolling is built
    through the depths below it): a violation is still a path, but none is no longer
    ``ok`` — the shorter paths were not asked —, it is ``inconclusive`` with the depths
    asked named."""
    began = time.process_time()
    building = 0.0
    own = dict.fromkeys(goals, 0.0)
    out = {goal: Outcome(goal, "ok", depth, 0.0) for goal in goals}
    done: set[str] = set()
    for d in range(1, depth + 1):
        if len(done) == len(out):
            break
        t0 = time.process_time()
        unroll.extend()
        building += time.process_time() - t0
        if d < start_depth:
            continue
        for goal in goals:
            if goal in done:
                continue
            t0 = time.process_time()
            over = _ask(
                unroll,
                out[goal],
                d,
                config=config,
                lift=lift,
                attempts=attempts,
                lift_states=lift_states,
                scoped=scoped,
                progress=progress,
                began=began,
            )
            if over:
                done.add(goal)
            own[goal] += time.process_time() - t0
            out[goal].seconds = building + own[goal]
    for goal, o in out.items():
        o.seconds = building + own[goal] if len(out) > 1 else time.process_time() - began
        if o.status == "ok" and start_depth > 1:
            o.status = "inconclusive"
            asked = f"{start_depth}" if start_depth >= depth else f"{start_depth} to {depth}"
            o.message = (
                f"no symbolic path of {asked} steps; paths of fewer than {start_depth} steps "
                "not asked"
            )
    return out


def _ask(
    unroll: Symbolic,
    out: Outcome,
    d: int,
    *,
    config: Config | None,
    lift: Lift | None,
    attempts: int,
    lift_states: int,
    scoped: bool,
    progress: Callable[[str], None] | None,
    began: float,
) -> bool:
    """Ask ``out.goal`` at depth ``d`` (a path, lifted or not, until one counts or the
    attempts are spent); whether the goal's search is over."""
    solver = unroll.solver
    asked: list[Any] = []
    if scoped:
        # The scope first, then the goal's terms (the order the lifted searches asked in:
        # the values Z3 gives parameters no constraint pins follow the order terms are made).
        solver.push()
        solver.add(unroll.goal(out.goal))
    else:
        negated = unroll.goal(out.goal)
        literal = z3.Bool(f"violates:{out.goal}@{d}")
        solver.add(z3.Implies(literal, negated))
        asked.append(literal)
    if progress is not None:
        progress(f"depth {d} ({time.process_time() - began:.1f} s)")
    over = False
    while out.tried < attempts:
        answer = solver.check(*asked)
        if answer == z3.unknown:
            # No answer is not "no path": the depth stays unsearched.
            out.status = "unknown" if lift is None else "inconclusive"
            out.depth = d
            out.reason = str(solver.reason_unknown()) if hasattr(solver, "reason_unknown") else ""
            out.message = f"Z3 gave no answer at depth {d}"
            over = True
            break
        if answer != z3.sat:
            if not scoped:
                solver.add(z3.Not(asked[0]))
            break
        path = unroll.path(solver.model(), out.goal)
        if lift is None:
            out.status, out.depth, out.path = "violation", d, path
            over = True
            break
        assert config is not None
        out.tried += 1
        trace, violations, visited, matched = lift(path, config, lift_states)
        found = trace is not None
        out.lifts.append(
            {"depth": d, "states": visited, "exhausted": matched is not None, "found": found}
        )
        if progress is not None:
            progress(
                f"depth {d}: path {out.tried} lifted: {trace is not None} "
                f"({visited} states, matched {matched}; {time.process_time() - began:.1f} s)"
            )
        if trace is not None:
            out.status, out.depth, out.path = "violation", d, path
            out.trace = Trace(config, tuple(trace))
            if violations:  # none for a lift to a witness's step (mixed_witness.reach)
                chosen = next((v for v in violations if v.property == out.goal), violations[0])
                out.property, out.message = chosen.property, chosen.message
            over = True
            break
        if out.path is None:
            out.status, out.depth, out.path = "inconclusive", d, path
        # An exhausted lift reached no model state matching the path's state after the
        # ``matched`` first ones: no path through that prefix lifts.
        unroll.block(path, d if matched is None else max(1, min(d, matched + 1)))
    if scoped:
        solver.pop()
    return over or (lift is not None and out.tried >= attempts)


def render_path(path: SymPath[Any], render: Callable[[Any], list[str]]) -> list[str]:
    """Lines describing a symbolic path: the initial state, then each step and its state
    (``render``: a state's lines), each state followed by its clients when the path has
    them."""

    def state(i: int) -> list[str]:
        lines = ["  " + x for x in render(path.states[i])]
        if path.clients:
            lines += ["  " + c.render() for c in path.clients[i]]
        return lines

    lines = ["initial:", *state(0)]
    for i, (family, params) in enumerate(path.steps, 1):
        shown = ", ".join(f"{k}={v}" for k, v in params.items())
        lines.append(f"{family}({shown}):")
        lines += state(i)
    return lines
