"""One runner for the proof obligations of every family (issue 39).

An obligation is an implication ``premise ⇒ conclusion`` over symbolic states, named by
its goal and, when it is about a step, the action family (``Obligation``). A family of
obligations — the core's induction (``induction.Prover``), the convergence ranking
(``ranking``), the client layer's diagnosis (``clients``), a mixed group's lost witness
(``mixed_witness``) — says which obligations it has and builds each one's formulas
(:class:`Query`): the premise, the conclusion (none: the premise alone must be
unsatisfiable) and a decoder that turns a Z3 model of ``premise ∧ ¬conclusion`` into a
counterexample the Python reading re-checks. This module discharges them the same way
for all (:func:`run`, :func:`check`), one Z3 query each:

* ``unsat`` — **proved**;
* ``sat`` — **failed**, with the family's decoded counterexample (a counterexample to
  induction, CTI);
* ``unknown`` — **unknown** with Z3's reason (``timeout``, ``canceled``, …): the budget
  ran out or the query was interrupted, and nothing is claimed (the command's verdict is
  then inconclusive).

**Solver policy** (:class:`Policy`). By default each query runs in a Z3 context of its
own: the formulas, built in Z3's main context, are translated into a fresh context and the
model of a failure is translated back for the decoder. Z3 numbers terms by creation in a
context, and its search follows those numbers, so in the main context a query's time (and
the model it finds) depends on every term built before it in the process: the KIP-1251
``stamp-request-epoch`` CTI took 3 s alone and a minute after twenty unrelated
obligations (tests/invariants/z3/proof/test_proof.py). In a fresh context a query sees
only its own terms (that CTI: about 19 CPU seconds, alone or after the others; Z3 keeps
some process-wide state, so a model can still differ after other work), and an
interrupted query (a budget's watchdog, Ctrl-C: :func:`interrupt`) leaves no cancelled
context behind for the next one.
``Policy(isolated=False)`` runs each query in a fresh solver of the main context instead.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import z3

Status = Literal["proved", "failed", "unknown"]
Kind = Literal["initiation", "consecution", "step", "ranking", "premise"]

DEFAULT_TIMEOUT_MS = 30_000
"""Per-query Z3 timeout: a query that needs longer is ``unknown`` (timeout)."""


@dataclass(frozen=True)
class Obligation:
    """Which obligation: its kind (initiation, consecution, step or ranking; premise: a
    non-vacuity query, ``vacuity``, whose failure is the witness it wants), the goal it
    proves and the action family it is about (none: a state obligation)."""

    kind: Kind
    goal: str
    family: str | None

    @property
    def name(self) -> str:
        return self.goal if self.family is None else f"{self.goal} / {self.family}"


class Counterexample(Protocol):
    """What a family's decoder makes of a Z3 model: readable lines, and whether the Python
    reading of the same formulas agrees that the premise holds and the goal fails."""

    @property
    def python_confirms(self) -> bool: ...

    def lines(self) -> list[str]: ...


@dataclass(frozen=True)
class Lines:
    """A counterexample already rendered (``clients.diagnose``'s)."""

    text: tuple[str, ...]
    python_confirms: bool

    def lines(self) -> list[str]:
        return list(self.text)


@dataclass(frozen=True)
class Query:
    """An obligation's formulas: ``premise ⇒ conclusion`` (``conclusion`` None: the
    premise is to be unsatisfiable). ``decode`` reads a model of the negation into a
    counterexample (None: a failure carries ``refuted`` as its reason); ``params`` are Z3
    solver parameters the family needs (``smt.macro_finder``)."""

    obligation: Obligation
    premise: tuple[Any, ...]
    conclusion: Any | None = None
    decode: Callable[[Any], Counterexample] | None = None
    refuted: str = ""
    params: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Result:
    """An obligation's verdict: ``seconds`` by the policy's clock, ``reason`` Z3's for
    ``unknown``, ``cti`` the decoded counterexample of a failure."""

    obligation: Obligation
    status: Status
    seconds: float
    reason: str = ""
    cti: Counterexample | None = None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "obligation": self.obligation.name,
            "kind": self.obligation.kind,
            "goal": self.obligation.goal,
            "family": self.obligation.family,
            "status": self.status,
            "seconds": round(self.seconds, 3),
        }
        if self.reason:
            doc["reason"] = self.reason
        if self.cti is not None:
            doc["cti"] = self.cti.lines()
        return doc


@dataclass(frozen=True)
class Policy:
    """How queries are run: Z3's per-query timeout, a fresh context per query
    (``isolated``, module docstring) or a fresh solver of the main context, and the clock
    ``Result.seconds`` is read on (wall clock by default; CPU: ``time.process_time``)."""

    timeout_ms: int = DEFAULT_TIMEOUT_MS
    isolated: bool = True
    clock: Callable[[], float] = time.monotonic


_running: list[Any] = []
_lock = threading.Lock()


def interrupt() -> None:
    """Interrupt the query running in a context of its own (``groupcheck.signals`` and
    ``groupcheck.budget`` call it with the main context's interrupt)."""
    with _lock:
        for ctx in _running:
            ctx.interrupt()


def _solve(query: Query, policy: Policy) -> tuple[Any, str, Any]:
    """Z3's answer to ``premise ∧ ¬conclusion``, its reason when unknown, and the model
    (in the main context) when sat."""
    formulas = list(query.premise)
    if query.conclusion is not None:
        formulas.append(z3.Not(query.conclusion))
    ctx = z3.Context() if policy.isolated else None
    if ctx is not None:
        with _lock:
            _running.append(ctx)
    try:
        solver = z3.Solver(ctx=ctx)
        solver.set("timeout", policy.timeout_ms)
        for key, value in query.params:
            solver.set(key, value)
        solver.add(*[f.translate(ctx) for f in formulas] if ctx is not None else formulas)
        answer = solver.check()
    finally:
        if ctx is not None:
            with _lock:
                _running.remove(ctx)
    if answer == z3.unknown:
        return answer, str(solver.reason_unknown()), None
    if answer == z3.unsat:
        return answer, "", None
    model = solver.model()
    return answer, "", model.translate(z3.main_ctx()) if ctx is not None else model


def check(query: Query | Callable[[], Query], policy: Policy) -> Result:
    """One obligation (or the builder of one, timed with its building)."""
    start = policy.clock()
    q = query if isinstance(query, Query) else query()
    answer, reason, model = _solve(q, policy)
    if answer == z3.unsat:
        return Result(q.obligation, "proved", policy.clock() - start)
    if answer == z3.unknown:
        return Result(q.obligation, "unknown", policy.clock() - start, reason=reason)
    if q.decode is None:
        return Result(q.obligation, "failed", policy.clock() - start, reason=q.refuted)
    cti = q.decode(model)
    return Result(q.obligation, "failed", policy.clock() - start, cti=cti)


def run(
    obligations: Sequence[Obligation],
    build: Callable[[Obligation], Query],
    policy: Policy,
    *,
    progress: Callable[[int, int, Obligation], None] | None = None,
) -> list[Result]:
    """Every obligation, each built by its family's ``build`` just before it is checked,
    in order; ``progress`` is told which one starts (its number, counting from 1)."""
    out: list[Result] = []
    for i, ob in enumerate(obligations, 1):
        if progress is not None:
            progress(i, len(obligations), ob)
        out.append(check(lambda ob=ob: build(ob), policy))  # type: ignore[misc]
    return out


def summary(results: Iterable[Result]) -> dict[str, int]:
    """How many obligations are proved, failed and unknown."""
    counts = {"proved": 0, "failed": 0, "unknown": 0}
    for r in results:
        counts[r.status] += 1
    return counts
