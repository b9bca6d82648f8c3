"""A liveness witness a mixed-group mutant never reaches, proved by induction over the
mixed relation (``invariants.z3.proof.mixed_transition``), and a path reaching it under
the reference rules, lifted to a trace of the Python migration model.

A mutant that breaks no safety property but takes a behaviour away (``LOST``: the
catalogue's ``classic-holder-unreleased``, KAFKA-17228, loses ``GroupUpgrades``) is killed
by a claim about every run: no reachable state takes the witness's step. A lasso cannot
show that; an inductive invariant can. The relation is the one BMC unrolls
(``mixed_bmc``: every family, the requests the configuration's clients can send and what
a classic group's members can be, with no bound on the classic generation) over the
configuration's universe (``mixed_state.domains_of``). The invariant ``INVARIANT`` reads:
a classic group's members are classic clients' member ids, each with an instance id its
client can send. The obligations, one Z3 query each of the obligation runner
(``invariants.z3.proof.obligations``):

* initiation: the projection of the initial state satisfies it;
* consecution, per family: a step from a state satisfying it leads to one that does;
* step, per family: no step from a state satisfying it is the witness's.

All three unsatisfiable: no path of the relation, of any length, reaches the witness on
that universe. Under the reference rules the same invariant holds but the witness's step
is satisfiable (``Proof.reference_step``), and :func:`reach` finds a path to it and lifts
it (``groupcheck.explore.mixed_lift.lift_witness``).

The relation over-approximates the model where it abstracts it
(``mixed_agreement`` checks the two agree on concrete steps); the proof is about the
relation.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import z3

from invariants.z3 import engine
from invariants.z3.engine import Lifted, Outcome
from invariants.z3.proof.mixed_bmc import (
    UNROLLED,
    SymPath,
    Unrolling,
    _classic_members,
    _requests,
)
from invariants.z3.proof.mixed_state import (
    ID_SLOTS,
    MixedDomains,
    MixedSym,
    MixedTerm,
    domains_of,
    pin,
    project,
)
from invariants.z3.proof.mixed_transition import FAMILY_NAMES, MixedOptions, any_member, families
from invariants.z3.proof.obligations import Obligation, Policy, Query, Result, check, run
from model import system
from model.actions import Action
from model.config import Config

BoolRef = Any

DEFAULT_TIMEOUT_MS = 30_000


def upgrades(pre: MixedTerm, post: MixedTerm) -> BoolRef:
    """``GroupUpgrades``'s step (``invariants.liveness._group_upgrades``): a classic group
    with members becomes a consumer group."""
    return z3.And(z3.Not(pre.consumer), any_member(pre), post.consumer)


WITNESSES: dict[str, Callable[[MixedTerm, MixedTerm], BoolRef]] = {"GroupUpgrades": upgrades}
"""The witnesses the relation reads: name → its step."""

LOST: dict[str, str] = {"classic-holder-unreleased": "GroupUpgrades"}
"""The mutants (``mixed_transition.VARIANTS``) killed by a lost witness, and the witness."""

INVARIANT = "ClassicMembersKnown"


def classic_members_known(s: MixedTerm, d: MixedDomains) -> BoolRef:
    """``INVARIANT``: a classic group's members are classic clients' member ids, each with
    an instance id (or none) its client can send (``MixedDomains.instances_of``)."""
    parts = []
    for m in d.members:
        here = z3.And(z3.Not(s.consumer), s.is_member[m])
        if m not in d.classic_ids:
            parts.append(z3.Not(here))
            continue
        own = z3.Or(*[s.instance[m] == v for v in sorted(d.instances_of[m])])
        parts.append(z3.Implies(here, own))
    return z3.And(*parts)


@dataclass
class Proof:
    """The obligations' results, and whether the reference rules take the witness's step
    from a state satisfying the invariant."""

    witness: str
    variant: str
    results: list[Result] = field(default_factory=list)
    reference_step: str = "unknown"
    """``sat``: the reference relation takes the witness's step from a state satisfying
    the invariant; ``unsat``: it does not; ``unknown``: Z3 gave no answer."""

    @property
    def proved(self) -> bool:
        return bool(self.results) and all(r.status == "proved" for r in self.results)

    def failures(self) -> list[Result]:
        return [r for r in self.results if r.status != "proved"]


def _step(
    pre: MixedSym, post: MixedSym, d: MixedDomains, o: MixedOptions, config: Config, name: str
) -> BoolRef:
    """One step of family ``name`` as BMC unrolls it, at any depth."""
    (fam,) = families(pre, post, d, o, (name,))
    return z3.And(
        fam.formula, *_requests(fam, pre, d, None), *_classic_members(pre, post, d, config)
    )


def _queries(
    config: Config, variant: str, d: MixedDomains, witness: str
) -> list[tuple[Obligation, Callable[[], Query]]]:
    """The obligations (module docstring) and their builders, in order: initiation, then
    per family consecution and step."""
    pre, post = MixedSym.fresh("p", d), MixedSym.fresh("q", d)
    found = "Z3 found a state and a step"
    initiation = Obligation("initiation", INVARIANT, None)
    out: list[tuple[Obligation, Callable[[], Query]]] = [
        (
            initiation,
            lambda: Query(
                initiation,
                tuple(pin(pre, project(system.initial(config)), d)),  # type: ignore[arg-type]
                classic_members_known(pre, d),
                refuted=found,
            ),
        )
    ]
    mutant = MixedOptions.of(config, variant)

    def consecution(name: str) -> Query:
        step = _step(pre, post, d, mutant, config, name)
        ob = Obligation("consecution", INVARIANT, name)
        return Query(
            ob, (classic_members_known(pre, d), step), classic_members_known(post, d), refuted=found
        )

    def no_witness(name: str) -> Query:
        step = _step(pre, post, d, mutant, config, name)
        ob = Obligation("step", f"no {witness}", name)
        premise = (classic_members_known(pre, d), step, WITNESSES[witness](pre, post))
        return Query(ob, premise, refuted=found)

    for name in FAMILY_NAMES:
        out.append((Obligation("consecution", INVARIANT, name), partial(consecution, name)))
        out.append((Obligation("step", f"no {witness}", name), partial(no_witness, name)))
    return out


def prove(
    config: Config,
    variant: str,
    *,
    id_slots: int = ID_SLOTS,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> Proof:
    """The obligations (module docstring) for ``variant``'s lost witness on ``config``'s
    universe with ``id_slots`` member ids per classic client, run by the obligation runner
    (CPU seconds), then the witness's step under the reference rules."""
    witness = LOST[variant]
    d = domains_of(config, id_slots)
    out = Proof(witness, variant)
    # In the main context, as before the runner: in a context of its own one of these
    # queries ran past its timeout for over 15 minutes in a full run of the suite.
    policy = Policy(timeout_ms, isolated=False, clock=time.process_time)
    builders = dict(_queries(config, variant, d, witness))
    out.results = run(list(builders), lambda ob: builders[ob](), policy)
    pre, post = MixedSym.fresh("p", d), MixedSym.fresh("q", d)
    reference = MixedOptions.of(config, None)
    answer = check(
        Query(
            Obligation("step", witness, None),
            (
                classic_members_known(pre, d),
                WITNESSES[witness](pre, post),
                z3.Or(*[_step(pre, post, d, reference, config, n) for n in UNROLLED]),
            ),
        ),
        policy,
    )
    out.reference_step = {"proved": "unsat", "failed": "sat", "unknown": "unknown"}[answer.status]
    return out


class _WitnessUnrolling(Unrolling):
    """BMC's unrolling whose goal is a witness's step."""

    def goal(self, name: str) -> BoolRef:
        return WITNESSES[name](self.states[-2], self.states[-1])


Lift = Callable[[SymPath, Config, int], tuple[list[Action] | None, int, int | None]]
"""A witness lift: the trace (None: none found), the nodes visited and how many of the
path's states after the initial one a trace matched (None: the search was cut)."""


def reach(
    witness: str,
    depth: int,
    config: Config,
    *,
    lifter: Lift,
    attempts: int = 40,
    lift_states: int = 50_000,
) -> Outcome:
    """The shortest path of at most ``depth`` coordinator steps of the reference relation
    whose last step is ``witness``'s, lifted with ``lifter`` (``config`` runs the
    reference rules): the engine's search (``invariants.z3.engine.search``) with the
    witness's step as the goal, so ``violation`` means the witness reached and lifted,
    ``ok`` no path to it."""
    unroll = _WitnessUnrolling(config, MixedOptions.of(config, None), depth)

    def lift(path: SymPath, cfg: Config, states: int) -> Lifted:
        trace, visited, matched = lifter(path, cfg, states)
        return trace, [], visited, matched

    return engine.search(
        unroll,
        [witness],
        depth,
        config=config,
        lift=lift,
        attempts=attempts,
        lift_states=lift_states,
        scoped=True,
    )[witness]
