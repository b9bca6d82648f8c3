"""The premises of ``groupcheck prove``'s obligations are satisfiable (non-vacuity).

An obligation is an implication — ``Init ⇒ C``, ``I ∧ F ⇒ C′``, the ranking's — proved by
finding its negation unsatisfiable. When the premise itself is unsatisfiable (an initial
state no state satisfies, a family that can only stutter, an invariant nothing
satisfies) every such obligation is proved and says nothing. Each premise below is one
Z3 query that must answer ``sat`` (a witness exists); ``unsat`` makes it **vacuous**,
``unknown`` leaves it open (Z3's reason):

* ``Init`` — some state is initial (``transition.initial`` and the expiry and deletion
  fields' initial values);
* ``Init ∧ I`` — some initial state satisfies the whole invariant (and the ranking's
  lemmas, when the ranking is checked);
* ``Step.<family>`` — for every family but ``Unchanged`` (the stutter, idle by
  definition), some state satisfying ``I`` has a step of that family that changes a field
  other than the error ghost ``server_error`` (a *non-idle* step: a family whose every
  step leaves the state as it was, or only refuses, proves nothing about that action);
* with the convergence ranking (``invariants.z3.proof.ranking``):
  ``Ranking.NonIncreasing.<family>`` — a non-idle quiet step of each quiet family but
  ``Unchanged`` from ``I`` and the ranking's lemmas; ``Ranking.Decreases.<family>`` — the
  step ``Ranking.Decreases`` is stated for (an honest heartbeat of an enabled member, or
  any step of the coordinator's fair family); ``Ranking.Enabled`` — a state whose ranking
  is not zero with no coordinator step pending, the states that obligation is about;
  ``Ranking.ZeroIsConverged`` — a state of ranking zero with a member in the group.

The queries read the same formulas as the obligations (``families``, ``initial``,
``invariant_for``, ``ranking.quiet``/``honest``/``enabled``/``zero``), so a change that
empties one of them makes its premise vacuous here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import z3

from invariants.z3.proof import ranking
from invariants.z3.proof import transition as tr
from invariants.z3.proof.induction import Conjunct, _fresh_pair
from invariants.z3.proof.obligations import Obligation, Policy, Query
from invariants.z3.proof.obligations import check as run_one
from invariants.z3.proof.reading import read
from invariants.z3.proof.state import MEMBER, PARTITION, SymState

PremiseStatus = Literal["satisfiable", "vacuous", "unknown"]


@dataclass(frozen=True)
class Premise:
    """One premise and what Z3 said of it."""

    name: str
    what: str
    status: PremiseStatus
    seconds: float
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "premise": self.name,
            "what": self.what,
            "status": self.status,
            "seconds": round(self.seconds, 3),
        }
        if self.reason:
            doc["reason"] = self.reason
        return doc


def moved(pre: SymState, post: SymState) -> Any:
    """``post`` differs from ``pre`` in a field other than the error ghost
    ``server_error``: a non-idle step."""
    kept = [tr.unchanged(pre, post, skip=frozenset({"server_error"}))]
    kept.append(tr._deletion_kept(pre, post))
    kept.append(tr._present_kept(pre, post))
    return z3.Not(z3.And(*kept))


SMALL_DOMAIN = 2
"""Members and partitions of the first, bounded try of a premise (``_small``)."""


def _small(size: int) -> list[Any]:
    """Every member and every partition is one of ``size`` constants: a witness within
    them is a witness (the premises are existential), found without quantifier search
    over unbounded sorts; finding none there proves nothing."""
    out = []
    for sort in (MEMBER, PARTITION):
        cs = [z3.Const(f"vacuity.{sort}{i}", sort) for i in range(size)]
        x = z3.Const(f"vacuity.any.{sort}", sort)
        out.append(z3.ForAll([x], z3.Or(*[x == c for c in cs])))
    return out


def _ask(name: str, what: str, formulas: list[Any], timeout_ms: int) -> Premise:
    """Sat on a domain of ``SMALL_DOMAIN`` members and partitions, else the unbounded
    query decides: sat (satisfiable), unsat (vacuous) or unknown. Each is a query of the
    obligation runner whose premise is the formulas and whose conclusion is false: its
    "failed" is a witness."""
    start = time.monotonic()
    policy = Policy(timeout_ms)
    ob = Obligation("premise", name, None)
    result = run_one(Query(ob, (*formulas, *_small(SMALL_DOMAIN))), policy)
    if result.status != "failed":
        result = run_one(Query(ob, tuple(formulas)), policy)
    seconds = time.monotonic() - start
    if result.status == "failed":
        return Premise(name, what, "satisfiable", seconds)
    if result.status == "proved":
        return Premise(name, what, "vacuous", seconds)
    return Premise(name, what, "unknown", seconds, result.reason)


def check(
    options: tr.Options,
    invariant: tuple[Conjunct, ...],
    *,
    with_ranking: bool,
    timeout_ms: int,
    progress: Callable[[str], None] | None = None,
) -> list[Premise]:
    """Every premise of the obligations of ``options``' relation (module docstring)."""
    pre, post = _fresh_pair(options)
    inv = [read(c.expr, now=pre) for c in invariant]
    lemma = ranking.lemma(pre) if with_ranking else z3.BoolVal(True)
    fams = tr.families(pre, post, options)
    asks: list[tuple[str, str, list[Any]]] = []
    init = [tr.initial(pre), tr.initial_expiry_and_deletion(pre)]
    asks.append(("Init", "some state is initial", init))
    asks.append(
        (
            "Init ∧ I",
            "some initial state satisfies the invariant"
            + (" and the ranking's lemmas" if with_ranking else ""),
            [*init, *inv, lemma],
        )
    )
    for f in fams:
        if f.name == "Unchanged":
            continue
        asks.append(
            (
                f"Step.{f.name}",
                f"a step of {f.name} that changes the state, from a state of the invariant",
                [*inv, f.formula, moved(pre, post)],
            )
        )
    if with_ranking:
        rank = ranking.components(options)
        for f in fams:
            if f.name in ranking.QUIET_FAMILIES and f.name != "Unchanged":
                asks.append(
                    (
                        f"{ranking.NON_INCREASING}.{f.name}",
                        f"a quiet step of {f.name} that changes the state, from a state of "
                        "the invariant and the ranking's lemmas",
                        [*inv, lemma, ranking.quiet(f, pre), moved(pre, post)],
                    )
                )
        for f in fams:
            if f.name not in ranking.PROGRESS_FAMILIES:
                continue
            if f.name == "DeliverMessage.heartbeat":
                premise = [
                    ranking.honest(f, pre),
                    z3.Not(pre.loading),
                    ranking.enabled(pre, f.params["member"], options),
                ]
                what = "an honest heartbeat of an enabled member"
            else:
                premise = [f.formula]
                what = f"a step of {f.name}"
            asks.append(
                (
                    f"{ranking.DECREASES}.{f.name}",
                    f"{what}, from a state of the invariant and the ranking's lemmas",
                    [*inv, lemma, *premise],
                )
            )
        due = z3.And(
            z3.BoolVal(not options.compute_target_in_heartbeat), ranking.RANKING[1].member_of(pre)
        )
        running = pre.runs[0].on if pre.runs else z3.BoolVal(False)
        asks.append(
            (
                ranking.ENABLED,
                "a state of the invariant whose ranking is not zero and where no coordinator "
                "step is pending",
                [
                    *inv,
                    lemma,
                    z3.Not(ranking.zero(pre, rank)),
                    z3.Not(pre.loading),
                    z3.Not(due),
                    z3.Not(running),
                    z3.Not(ranking._pending(pre)),
                ],
            )
        )
        x = z3.Const("vacuity.x", MEMBER)
        asks.append(
            (
                ranking.ZERO,
                "a state of the invariant whose ranking is zero, with a member",
                [*inv, lemma, ranking.zero(pre, rank), z3.Exists([x], pre.is_member(x))],
            )
        )
    out = []
    for i, (name, what, formulas) in enumerate(asks, 1):
        if progress is not None:
            progress(f"prove: non-vacuity {i}/{len(asks)}, now {name}")
        out.append(_ask(name, what, formulas, timeout_ms))
    return out


def verdict(premises: list[Premise]) -> PremiseStatus:
    """``vacuous`` if a premise is, else ``unknown`` if one is, else ``satisfiable``."""
    statuses = {p.status for p in premises}
    if "vacuous" in statuses:
        return "vacuous"
    return "unknown" if "unknown" in statuses else "satisfiable"
