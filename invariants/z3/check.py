"""Check properties with Z3, and re-check every Z3 answer with the Python predicate.

* :func:`z3_holds` — the pure Z3 reading of a property on a concrete snapshot: encode it,
  pin the symbolic structure to the snapshot, ask whether the negation is satisfiable.
* :func:`recheck` / :func:`check_structure` — the same question as a three-way
  ``Verdict`` (``PROVED`` unsat, ``VIOLATED`` sat, ``UNKNOWN`` with Z3's reason, e.g. a
  timeout); a ``VIOLATED`` model is decoded and both it and the snapshot are re-checked
  with the Python predicate, and any disagreement raises :class:`Disagreement`.
* :func:`find_violation` — leave the structure free (optionally constrained) and ask Z3
  for *any* structure over given domains that violates the property; the answer is
  decoded and re-checked with the Python predicate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import z3

from invariants.check import Verdict
from invariants.expr import Expr, Not, StepSnapshot, Structure, compile_expr
from invariants.properties import Kind, Property
from invariants.z3.encode import (
    BoolRef,
    Domains,
    HasDomains,
    SymbolicStructure,
    assert_snapshot,
    decode,
    encode,
)

DEFAULT_TIMEOUT_MS = 10_000
"""Per-query Z3 timeout. The catalogue's queries on model-sized snapshots take
milliseconds; a timeout turns a pathological query into ``UNKNOWN`` instead of a hang."""

Constraint = Expr | Callable[[SymbolicStructure], BoolRef]
"""A side condition for :func:`find_violation`: an expression in the property language
(encoded over the same structure and re-checked in Python on the answer), or a function
building a Z3 formula from the structure's variables."""


class Z3Unknown(Exception):
    """Z3 answered ``unknown`` (timeout, resource limit, …) where a yes/no was needed."""

    def __init__(self, what: str, reason: str) -> None:
        super().__init__(f"{what}: z3 answered unknown ({reason})")
        self.reason = reason


class Disagreement(AssertionError):
    """The Python and Z3 readings of one property disagree: a bug in one of them."""


@dataclass(frozen=True)
class Outcome:
    """A Z3 verdict with its evidence: Z3's reason when ``UNKNOWN``, the decoded
    counterexample when ``VIOLATED``."""

    verdict: Verdict
    reason: str = ""
    counterexample: Structure | None = None


def _expr(prop: Property) -> Expr:
    if prop.expr is None:
        raise ValueError(f"{prop.name} has no expression (only state and step properties do)")
    return prop.expr


def _solver(timeout_ms: int) -> Any:
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    return solver


@lru_cache(maxsize=512)
def _encoded_negation(expr: Expr, domains: Domains, step: bool) -> tuple[SymbolicStructure, Any]:
    """The symbolic structure and the encoded negation of ``expr`` over ``domains``.
    Cached: an exploration meets the same domains again and again, and encoding (not
    solving) is most of the cost of a query."""
    sym = SymbolicStructure.build(domains, expr, step=step)
    return sym, z3.Not(encode(expr, sym))


def _negation_query(
    prop: Property, structure: Structure, timeout_ms: int
) -> tuple[Any, Any, SymbolicStructure]:
    step = isinstance(structure, StepSnapshot)
    sym, negation = _encoded_negation(_expr(prop), Domains.of(structure), step)
    solver = _solver(timeout_ms)
    solver.add(*assert_snapshot(sym, structure))
    solver.add(negation)
    return solver, solver.check(), sym


def z3_holds(prop: Property, structure: Structure, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> bool:
    """Whether ``prop`` holds on ``structure`` according to Z3 alone: the negation of its
    encoding is unsatisfiable once every variable is fixed to the snapshot.

    Raises :class:`Z3Unknown` if Z3 cannot decide within ``timeout_ms``."""
    solver, result, _ = _negation_query(prop, structure, timeout_ms)
    if result == z3.unsat:
        return True
    if result == z3.sat:
        return False
    raise Z3Unknown(prop.name, solver.reason_unknown())


def check_structure(
    prop: Property, structure: Structure, timeout_ms: int = DEFAULT_TIMEOUT_MS
) -> Outcome:
    """The Z3 verdict on ``structure``, re-checked with the Python predicate.

    ``VIOLATED``: the negation is satisfiable under the snapshot; the model is decoded and
    the Python predicate must reject both the decoded structure and ``structure``.
    ``PROVED``: unsatisfiable; the Python predicate must accept ``structure``.
    ``UNKNOWN``: Z3 gave up (``reason`` says why, e.g. ``timeout``); nothing is claimed.
    A disagreement raises :class:`Disagreement`."""
    solver, result, sym = _negation_query(prop, structure, timeout_ms)
    if result == z3.unknown:
        return Outcome(Verdict.UNKNOWN, reason=solver.reason_unknown())
    python = prop.holds(structure)
    if result == z3.unsat:
        if not python:
            raise Disagreement(f"{prop.name}: Z3 proves it, the Python predicate rejects it")
        return Outcome(Verdict.PROVED)
    decoded = decode(solver.model(), sym)
    if python or prop.holds(decoded):
        raise Disagreement(
            f"{prop.name}: Z3 finds it violated, the Python predicate accepts "
            + ("the snapshot" if python else "the decoded Z3 model")
        )
    return Outcome(Verdict.VIOLATED, counterexample=decoded)


def recheck(prop: Property, structure: Structure, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Verdict:
    """``check_structure(...).verdict``: PROVED, VIOLATED or UNKNOWN."""
    return check_structure(prop, structure, timeout_ms).verdict


def find_structure(
    expr: Expr,
    domains: HasDomains,
    constraints: Iterable[Constraint] = (),
    *,
    step: bool | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> Structure | None:
    """Any structure over ``domains`` satisfying ``expr`` and ``constraints`` (relations
    and functions free), decoded from a Z3 model; ``None`` if there is none. ``step``
    defaults to whether the expressions use ``pre``/``post`` symbols.

    The answer is re-checked with the Python reading of ``expr`` and of every ``Expr``
    constraint. Raises :class:`Z3Unknown` if Z3 gives up."""
    cons = list(constraints)
    exprs = [c for c in cons if not callable(c)]
    sym = SymbolicStructure.build(domains, expr, *exprs, step=step)
    solver = _solver(timeout_ms)
    for c in cons:
        solver.add(c(sym) if callable(c) else encode(c, sym))
    solver.add(encode(expr, sym))
    result = solver.check()
    if result == z3.unsat:
        return None
    if result == z3.unknown:
        raise Z3Unknown("find_structure", solver.reason_unknown())
    found = decode(solver.model(), sym)
    for e in (expr, *exprs):
        if not compile_expr(e)(found, {}):
            raise Disagreement(f"the Python reading rejects the Z3 model of {e!r}")
    return found


def find_violation(
    prop: Property,
    domains: HasDomains,
    constraints: Iterable[Constraint] = (),
    *,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> Structure | None:
    """Any structure over ``domains`` (``Domains`` or a snapshot's domains) that violates
    ``prop`` and satisfies ``constraints``; ``None`` if the property holds on every such
    structure (a bounded proof). The decoded answer is re-checked: the Python predicate
    must reject it too, else :class:`Disagreement`."""
    expr = _expr(prop)
    found = find_structure(
        Not(expr), domains, constraints, step=_is_step_prop(prop), timeout_ms=timeout_ms
    )
    if found is not None and prop.holds(found):
        raise Disagreement(f"{prop.name}: Z3's violation is accepted by the Python predicate")
    return found


def _is_step_prop(prop: Property) -> bool | None:
    if prop.kind is Kind.ALWAYS_STEP:
        return True
    if prop.kind is Kind.ALWAYS_STATE:
        return False
    return None
