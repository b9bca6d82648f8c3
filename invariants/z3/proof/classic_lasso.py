"""Bounded model checking of Convergence over the classic coordinator's relation: a search
for fair non-converging lassos.

The classic counterpart of ``invariants.z3.proof.bmc_lasso``. A lasso (Biere, Cimatti,
Clarke, Zhu, "Symbolic model checking without BDDs", TACAS 1999) is a path ``s0 … sk`` of
``classic_transition`` from the configuration's initial state (as ``classic_bmc``
unrolls it, with the same domains and requests) whose last state is an earlier one,
``sk = sj`` (``j < k``), so that the loop ``sj … sk`` can run for ever, where

* every step of the loop is one of :data:`LOOP_FAMILIES`: a JoinGroup, SyncGroup or
  OffsetCommit delivered, a coordinator timer, or ``Unchanged`` (the clients' steps the
  relation abstracts: sends, responses, heartbeats). Left out are the perturbations
  (``ExpireOffsets``, ``DeleteGroup``) and the LeaveGroup, which a classic client sends
  only when a perturbation makes it leave (``client.leave``: ``Leave``, ``Bounce``);
* no state of the loop is :func:`settled`: the coordinator's side of
  ``invariants.liveness.classic_converged`` — the group STABLE or EMPTY, and no member
  whose client still waits for an answer (its JoinGroup or SyncGroup held, or a KIP-394
  pending member). The clients' side (each client STABLE at the group's generation,
  consuming its member's assignment) and ``_classic_covered`` (it reads the leader's
  assignment, a free parameter of the relation) are left to the Python confirmation;
* the loop is weakly fair to the coordinator's timers (:data:`FAIRNESS`): a member the
  phase in progress waits for (``coordinator.awaits``) in every state of the loop has
  its join or pending-sync timer (``RebalanceTimeout``) taken in it, and a KIP-394
  pending member in every state of the loop its session timer (``SessionTimeout``). In
  the model these timers fire only for a client gone or hung (``system.timeouts``); a
  client that runs sends its JoinGroup or SyncGroup instead, which ends the wait. The
  timers of a member nobody waits for are not demanded (its client may run and heartbeat
  for ever), nor are the clients' steps, which the relation does not keep.

So a loop may leave out what a running client would do; that is what the Python
confirmation judges. :func:`search_lasso` runs the one lasso search
(``invariants.z3.lasso``) over the relation's parts (:class:`ClassicRelationLasso`):
it asks, for ``k = 1, 2, …, depth``, whether the unrolling of ``k`` steps has such a
lasso (one query per ``k``, the loop's entry ``j`` chosen by the solver), so the first
one found is a shortest; each is confirmed by the ``confirmer``
(``groupcheck.explore.classic_lift.lift_lasso``): a breadth-first search of the Python
classic model for a trace through the lasso's prefix ``s0 … sj`` (client steps
free, as ``classic_bmc`` lifts a path) from whose last state ``invariants.liveness``'s
fair schedule does not converge. The loop itself is not replayed (its client steps are
``Unchanged``): the model's fair schedule from the entry is the judge. A lasso not
confirmed is blocked — no other lasso through the same prefix, nor, where no model trace
goes through the prefix's first states ``s0 … sm`` but for the next, through ``s0 … sm``
and a next state no model state matching ``sm`` steps to (``LassoLifted.moves``) — and the
search goes on (at most ``attempts``). The verdict: ``violation`` with a confirmed trace;
``ok`` when the relation has no fair non-converging lasso of at most ``depth`` steps (under
the fairness above; nothing is said of longer loops); ``inconclusive`` otherwise.

Up to a generation shift
------------------------
With ``shifts`` (:data:`SHIFTED_VARIANTS`) the last state need only be the entry's with
every generation larger by one ``d >= 0`` (:func:`shifted`), and with the fields no rule
of a loop reads left out (:func:`write_only`). Such a loop runs for ever too:

* ``σ_d`` (:func:`shift`) maps ``v`` to ``v + d`` for ``v >= 0`` and leaves the sentinels
  below 0 alone (-1: no generation, the claims of a member without any). It is strictly
  increasing, so it keeps every ``=``, ``≠``, ``<`` and ``<=`` between generations, and
  ``σ_d(v + 1) = σ_d(v) + 1`` for ``v >= 0``. Applied to a state it shifts the group's
  generation (never below 0: :func:`shifted` asks it of the entry), every member's
  claims' generation and the offsets' generations; to a step, its generation parameters
  (a JoinGroup's ``claim_gen``, a SyncGroup's and an OffsetCommit's ``generation``).
* The loop's families (:data:`LOOP_FAMILIES`) and the requests the clients can send
  (``classic_bmc._requests``) use a generation only in a comparison with another one
  (a request's generation with the group's, the assignor's claims by generation:
  ``classic_assignor``), in ``generation + 1`` (``complete_join``), copied, or compared
  with a constant: ``claim_gen >= -1``, ``claim_gen == -1`` and the mask of a
  non-member's claims (-1), which ``σ_d`` keeps both ways since it fixes the negatives;
  ``claim_gen != 0`` and ``claim_gen >= 1``, which occur only as constraints a request
  satisfies, and ``σ_d`` keeps them true. The constants 0 of a deleted group
  (``DeleteGroup``, an expiry's deletion) are outside the loop's families. So a step
  ``s → s'`` of a loop family is a step ``σ_d(s) → σ_d(s')`` of the same family, member and
  parameters shifted; what the loop asks of its states — not :func:`settled`, the timers
  :data:`FAIRNESS` demands — reads no generation, and ``σ_d(σ_d(s)) = σ_2d(s)``.
* The fields left out are only written by the loop's families, never read (by a rule, a
  request, :func:`settled` or :data:`FAIRNESS`): the offsets' generation
  (``committed_gen``: an OffsetCommit writes it; nothing compares it) and, but under the
  eager ``sticky`` assignor whose clients' user data the requests tie to it, the
  assignment of the last SyncGroup phase (``assigned``: written by a SyncGroup, cleared by
  a rebalance of the SyncGroup phase). A step's other fields do not depend on them, and
  every value of theirs before a step has one after it.

So from ``sk``, equal to ``σ_d(sj)`` but for the fields left out, the loop's steps shifted
by ``d`` lead to ``σ_2d(sj)`` (the same but for those fields), and so on: an infinite
path of the relation whose every state is one of the loop's shifted, none settled, every
timer the fairness demands taken in each round. ``d = 0`` is a lasso as above but for the
fields left out. The loop is one of the relation, whose clients' steps are free (a
member may rejoin at any time); the Python confirmation judges it as any other.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, NamedTuple

import z3

from invariants.z3 import lasso as lassos
from invariants.z3.engine import SymPath
from invariants.z3.lasso import Confirmation, Fairness, Lasso, LassoOutcome
from invariants.z3.proof.classic_bmc import (
    DEFAULT_LIFT_STATES,
    UNROLLED,
    Domains,
    Unrolling,
    _requests,
    universe_of,
)
from invariants.z3.proof.classic_state import (
    EMPTY,
    PREPARING,
    STABLE,
    ClassicSym,
    ClassicValue,
    pin,
)
from invariants.z3.proof.classic_transition import (
    ClassicOptions,
    equals,
    every_member,
    families,
    grounded,
    possible_families,
    view,
)
from invariants.z3.proof.state import MEMBER
from model.actions import Action
from model.config import Config
from model.path import Path

BoolRef = Any

CONVERGENCE = lassos.CONVERGENCE

LASSO_VARIANTS = {
    "static-replace-without-rebalance": "a static member that restarts while the group is "
    "in COMPLETING_REBALANCE is swapped in without a rebalance: its JoinGroup stays held "
    "and the group settles around it, the client waiting for ever",
    "no-pending-sync-timer": "a member hung before its SyncGroup is never removed: the "
    "group stays in COMPLETING_REBALANCE, its pending-sync timer firing to no effect",
    "validate-stale-claims": "a member whose claims the leader's check refuses keeps the "
    "group rebalancing: found up to a generation shift (every member rejoins, the "
    "generation one larger), the model's own loop judged by its fair schedule",
}
"""The classic catalogue mutants whose kill is Convergence only, with the loop BMC finds;
the steps of each one's shortest lasso on its scenario are its catalogue entry's
``Mutant.lasso_depth`` (docs/invariants.md, "Convergence: lassos of the classic relation"),
``DEFAULT_DEPTH`` the longest."""

SHIFTED_VARIANTS = frozenset({"validate-stale-claims"})
"""The lasso variants ``explore --engine bmc`` searches up to a generation shift
(``search_lasso``'s ``shifts``): the relation has no loop of theirs that returns to the
same state (module docstring, "Up to a generation shift")."""

LASSO_UNROLLED = (*UNROLLED, "Unchanged")
"""The families unrolled: those of ``classic_bmc`` and the clients' steps, each where the
configuration can take it (``classic_transition.possible_families``)."""

LOOP_FAMILIES = (
    "DeliverMessage.join_group",
    "DeliverMessage.sync_group",
    "DeliverMessage.offset_commit",
    "SessionTimeout",
    "RebalanceTimeout",
    "Unchanged",
)
"""The families a loop may take (module docstring)."""

DEFAULT_DEPTH = 6
"""``explore --engine bmc``'s depth for a classic Convergence search without ``--depth``
(the longer of the two mutants' shortest lassos)."""
DEFAULT_ATTEMPTS = 400
"""Lassos tried (confirmed, or blocked) before the search gives up."""


def settled(s: ClassicSym) -> BoolRef:
    """The coordinator's side of ``invariants.liveness.classic_converged``: the group
    STABLE or EMPTY, no member's JoinGroup or SyncGroup held and no KIP-394 pending member
    (each has a client waiting for an answer)."""
    return z3.And(
        z3.Or(s.status == STABLE, s.status == EMPTY),
        every_member(
            lambda m: z3.And(
                z3.Not(z3.And(s.is_member(m), z3.Or(s.awaiting_join(m), s.awaiting_sync(m)))),
                z3.Not(s.pending(m)),
            )
        ),
    )


def awaited(s: ClassicSym, x: Any) -> BoolRef:
    """``coordinator.awaits``: the join phase waits for member ``x`` to rejoin, or the
    SyncGroup phase for its SyncGroup (where ``RebalanceTimeout`` may fire)."""
    return z3.And(
        s.is_member(x),
        z3.If(s.status == PREPARING, z3.Not(s.awaiting_join(x)), s.pending_sync(x)),
    )


FAIRNESS: dict[str, Callable[[ClassicSym, Any], BoolRef]] = {
    "RebalanceTimeout": awaited,
    "SessionTimeout": lambda s, x: s.pending(x),
}
"""The timers weak fairness demands, each with when it must fire for member ``x``."""


class LassoLifted(NamedTuple):
    """A lasso's confirmation (``groupcheck.explore.classic_lift.lift_lasso``): the model
    trace to the loop's entry (None: none found), the nodes visited, the model states
    matching the entry reached and how many of them converged, and — the search
    exhausted — how many of the prefix's states after the initial one a trace matched
    (None: the search was cut by its bound) and, when that is ``m`` short of the entry,
    every state the group takes in a step from a model state matching the prefix's
    ``m``-th (None: not known)."""

    actions: list[Action] | None
    visited: int
    matching: int
    converging: int
    matched: int | None
    moves: tuple[ClassicValue, ...] | None = None


Confirmer = Callable[[SymPath[ClassicValue], Config, int], LassoLifted]


class LassoUnrolling(Unrolling):
    """``classic_bmc.Unrolling`` with the clients' steps (``Unchanged``) unrolled too, and
    only the families the configuration can take (``LASSO_UNROLLED``): its
    :meth:`transition` hook (``invariants.z3.engine.Unroller``) without the path search's
    claims history, hints and change of the group (a loop's steps may leave it as it
    is)."""

    def transition(self, pre: ClassicSym, post: ClassicSym, k: int) -> list[tuple[Any, ...]]:
        chosen: list[tuple[Any, ...]] = []
        names = [n for n in LASSO_UNROLLED if n in possible_families(self.config)]
        with grounded(self.members, self.partitions):
            fams = families(pre, post, self.options, names)
        for fam in fams:
            sel = z3.Bool(f"step{k}.{fam.name}")
            parts = [fam.formula, *_requests(fam, pre, self.domains)]
            parts += [
                self.within(x) for x in fam.params.values() if z3.is_const(x) and x.sort() == MEMBER
            ]
            self.solver.add(z3.Implies(sel, z3.And(*parts)))
            chosen.append((sel, fam))
        self.solver.add(self.within(post.leader))
        return self.one_of(chosen)

    def taken(self, i: int, name: str, x: Any) -> BoolRef:
        """Step ``i`` is of family ``name`` for member ``x``."""
        return z3.Or(
            *[
                z3.And(sel, fam.params.get("member") == x)
                for sel, fam in self.choices[i]
                if fam.name == name
            ],
            z3.BoolVal(False),
        )

    def in_loop_family(self, i: int) -> BoolRef:
        """Step ``i`` is of one of ``LOOP_FAMILIES``."""
        sels = [sel for n in LOOP_FAMILIES for sel, fam in self.choices[i] if fam.name == n]
        return z3.Or(*sels, z3.BoolVal(False))


def shift(v: Any, d: Any) -> Any:
    """``σ_d``: a generation ``v`` shifted by ``d`` — the sentinels below 0 (-1: no
    generation) left as they are (module docstring, "Up to a generation shift")."""
    return z3.If(v >= 0, v + d, v)


def write_only(domains: Domains) -> tuple[str, ...]:
    """The fields no rule of a loop's families reads (only writes): the offsets' generation
    (``committed_gen``) and, but where the eager ``sticky`` clients' requests read it
    (``classic_bmc._requests``), the assignment of the last SyncGroup phase
    (``assigned``)."""
    return ("committed_gen",) if domains.eager else ("committed_gen", "assigned")


def shifted(post: ClassicSym, pre: ClassicSym, d: Any, ignored: tuple[str, ...]) -> BoolRef:
    """``post`` is ``pre`` with every generation shifted by ``d`` (:func:`shift`): the
    group's generation and each member's claims' generation; the fields ``ignored``
    (:func:`write_only`) are not compared, the rest must be equal (a non-member's fields
    masked as ``classic_transition.equals`` masks them)."""
    t = view(pre)
    t = replace(t, generation=pre.generation + d, claim_gen=lambda m: shift(pre.claim_gen(m), d))
    if "assigned" in ignored:
        t = replace(t, assigned=post.assigned)
    if "committed_gen" in ignored:
        t = replace(t, committed_gen=post.committed_gen)
    return z3.And(pre.generation >= 0, equals(post, t))


def _blocked(run: LassoUnrolling, entry: Sequence[Any], *, block: Block) -> BoolRef:
    """No lasso whose path starts with the states ``block.states`` (``s0 … sn``) and whose
    loop starts at ``sn`` (``block.exact``) or at any state after it; with
    ``block.moves``, none either whose path starts with ``s0 … s(n-1)`` and whose ``sn``
    is not one of them, with its loop from ``sn`` on."""
    n = len(block.states) - 1
    if n >= len(entry):
        return z3.BoolVal(True)
    u = run.domains.universe
    same = [
        z3.And(*pin(s, v, u)) for s, v in zip(run.states[1 : n + 1], block.states[1:], strict=True)
    ]
    where = entry[n] if block.exact else z3.Or(*entry[n:])
    if block.moves is None:
        return z3.Implies(where, z3.Not(z3.And(*same)))
    step = z3.Or(*[z3.And(*pin(run.states[n], v, u)) for v in block.moves], z3.BoolVal(False))
    return z3.Implies(z3.And(where, *same[:-1]), z3.And(step, z3.Not(same[-1])))


@dataclass(frozen=True)
class Block:
    """Lassos not to ask for again: those through ``states`` whose loop starts at its last
    (``exact``) or later."""

    states: tuple[ClassicValue, ...]
    exact: bool
    moves: tuple[ClassicValue, ...] | None = None
    """The states the last may be (``LassoLifted.moves``), the others blocked with it."""


def _block_of(lasso: Lasso, lifted: LassoLifted) -> Block:
    """What an unconfirmed lasso rules out: an exhausted search that matched only the
    first ``m`` states of the prefix after the initial one rules out every lasso through
    its first ``m + 1`` with a loop from there on (no model trace goes through them); any
    other, the lassos with the same prefix (the confirmation reads nothing else)."""
    states = lasso.prefix.states
    m = lifted.matched
    if m is not None and 0 <= m < len(states) - 1:
        return Block(states[: m + 2], exact=False, moves=lifted.moves)
    return Block(states, exact=True)


@dataclass
class ClassicRelationLasso:
    """The classic relation's parts of the lasso search (``invariants.z3.lasso``):
    the unrolling with the clients' steps (:class:`LassoUnrolling`); the loop closed on the
    group (with ``shifts``, up to a generation shift and the write-only fields); no
    :func:`settled` state and only :data:`LOOP_FAMILIES` in the loop, every step of the
    prefix a change of the group; the timers of :data:`FAIRNESS` per member; the
    ``confirmer`` run on the lasso's prefix, an unconfirmed lasso blocked
    (:func:`_block_of`)."""

    run: LassoUnrolling
    confirmer: Confirmer
    lift_states: int
    shifts: bool = False

    @property
    def solver(self) -> Any:
        return self.run.solver

    def extend(self) -> None:
        self.run.extend()

    def grounded(self) -> AbstractContextManager[Any]:
        return grounded(self.run.members, self.run.partitions)

    def encode(self, formula: BoolRef) -> BoolRef:
        return formula

    def closes(self, j: int, k: int, shift: Any) -> BoolRef:
        s = self.run.states
        if self.shifts:
            return shifted(s[k], s[j], shift, write_only(self.run.domains))
        return equals(s[k], view(s[j]))

    def shift_range(self, shift: Any) -> BoolRef:
        return shift >= 0 if self.shifts else shift == 0

    def looping(self, i: int) -> BoolRef:
        return z3.And(z3.Not(settled(self.run.states[i])), self.run.in_loop_family(i))

    def leading(self, i: int) -> BoolRef:
        # A step of the prefix changes the group: without it the lasso is shorter.
        s = self.run.states
        return z3.Not(equals(s[i + 1], view(s[i])))

    def fairness(self) -> list[Fairness]:
        run = self.run
        return [
            Fairness(
                taken=partial(run.taken, name=name, x=x),
                enabled=partial(_enabled, run, when=enabled, x=x),
            )
            for x in run.members
            for name, enabled in FAIRNESS.items()
        ]

    def path(self, model: Any, goal: str) -> SymPath[ClassicValue]:
        return self.run.path(model, goal)

    def confirm(self, lasso: Lasso) -> Confirmation:
        config = self.run.config
        lifted = self.confirmer(lasso.prefix, config, self.lift_states)
        record = {
            "states": lifted.visited,
            "exhausted": lifted.matched is not None,
            "matching": lifted.matching,
            "converging": lifted.converging,
            "found": lifted.actions is not None,
        }
        if lifted.actions is not None:
            return Confirmation(True, record, trace=Path(config, tuple(lifted.actions)))
        block = _block_of(lasso, lifted)
        return Confirmation(False, record, block=partial(_blocked, self.run, block=block))


def _enabled(
    run: LassoUnrolling, i: int, *, when: Callable[[ClassicSym, Any], BoolRef], x: Any
) -> BoolRef:
    """A :data:`FAIRNESS` timer's condition ``when`` for member ``x`` in state ``i``."""
    return when(run.states[i], x)


def search_lasso(
    depth: int,
    config: Config,
    options: ClassicOptions,
    *,
    confirmer: Confirmer,
    attempts: int = DEFAULT_ATTEMPTS,
    lift_states: int = DEFAULT_LIFT_STATES,
    shifts: bool = False,
) -> LassoOutcome:
    """The shortest fair non-converging lasso of the classic relation (in steps, up to
    ``depth``) that the ``confirmer`` confirms; with ``shifts``, up to a generation shift:
    ``invariants.z3.lasso.search_lasso`` over :class:`ClassicRelationLasso` (module
    docstring; ``seconds`` in CPU time)."""
    start = time.process_time()
    run = LassoUnrolling(config, options, universe_of(config))
    family = ClassicRelationLasso(run, confirmer, lift_states, shifts)
    out = lassos.search_lasso(
        family, depth, attempts=attempts, refute=False, clock=time.process_time
    )
    out.seconds = time.process_time() - start
    return out
