"""The mutant kill matrix: explore every mutant's scenario until a property fails.

BFS runs first (it also yields the shortest counterexample), bounded by ``max_states``;
if it exhausts the scenario without a violation the mutant *survived* — a finding: either
a property is missing or the mutant is equivalent in the scenario. If BFS stopped at its
bound, seeded random walks (``walks`` of ``max_steps``) get their turn; a mutant they do
not kill either is *inconclusive*. The work is fixed by those bounds; ``budget_seconds``
(the CLI's per-mutant limit) may only cut it short, which can only make a row
inconclusive, never "survived" or "killed" by accident.

A mutant is killed in one of two ways, reported in the row's ``kill``: a *violation* (a
property fails; ``property`` names it and ``code`` replays the counterexample), or a
*witness lost*: BFS exhausted the mutant's scenario without a violation, but missed one of
the scenario's required witnesses (``Config.required_witnesses``, a behaviour the scenario
exists to show, e.g. ``GroupUpgrades``) that a BFS of the same scenario under the reference
rules reaches. Such a mutant breaks no safety property; it takes away something the
protocol promises to do (KAFKA-17228: a rolling upgrade of static members never
completes). The lost witnesses are named in ``witnesses_lost``; ``property`` stays None,
and there is no counterexample path: what is shown is an absence, over every reachable
state of the mutant. If the reference misses the witness too, the scenario is at fault and
the mutant is not killed by it.

A mutant from a user's file (``groupcheck mutants --from FILE``, ``Mutant.source``) may
name any scenario, one where the reference rules violate a property too: it is explored
with a baseline (``groupcheck.explore.run.explore``'s ``baseline``: the reference rules on
the same scenario, engine, seed and bounds, every property's violation on both sides), and
it is killed only by a violation the reference rules do not have; the row's ``baseline``
holds the comparison. The catalogue's scenarios run with the fix for finding F1, so the
reference rules violate nothing there (``tests/quality/test_mutants.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from groupcheck import exitcodes
from groupcheck.budget import BudgetExpired, watchdog
from groupcheck.explore.run import explore
from groupcheck.mutants import MUTANTS, Mutant
from groupcheck.usercode import UserCodeError, locate
from model.rules import DEFAULT_RULES
from model.status import ConfigError

KILL_MAX_STATES = 200_000
"""States the BFS of a mutant's scenario may visit before the walks take over."""
KILL_WALKS = 2000
KILL_MAX_STEPS = 60


def kill(
    mutant: Mutant,
    budget_seconds: float | None = None,
    seed: int = 0,
    *,
    max_states: int = KILL_MAX_STATES,
    walks: int = KILL_WALKS,
    max_steps: int = KILL_MAX_STEPS,
) -> dict[str, Any]:
    """Explore one mutant; the row of the kill matrix (``result``: killed, survived or
    inconclusive, with ``reasons``)."""
    config = mutant.mutated_config()
    start = time.perf_counter()
    baseline = mutant.source is not None
    outcome = explore(
        config,
        engine="bfs",
        budget_seconds=None if budget_seconds is None else budget_seconds * 0.6,
        max_states=max_states,
        baseline=baseline,
    )
    exhausted = bool(outcome.exhausted)
    checked = [f"bfs: {outcome.checked}"]
    reasons: list[str] = []
    if outcome.result != "violation" and not exhausted:
        reasons.append(f"bfs: {'; '.join(outcome.reasons) or outcome.checked}")
        left = None
        if budget_seconds is not None:
            left = max(1.0, budget_seconds - (time.perf_counter() - start))
        outcome = explore(
            config,
            engine="walk",
            seed=seed,
            budget_seconds=left,
            walks=walks,
            max_steps=max_steps,
            baseline=baseline,
        )
        checked.append(f"walk: {outcome.checked}")
        if outcome.result != "violation":
            reasons.append(f"walk: {outcome.checked}" + "".join(f"; {r}" for r in outcome.reasons))
    lost: list[str] = []
    if outcome.result != "violation" and exhausted and outcome.missed_witnesses:
        lost, reason = witnesses_lost(mutant, outcome.missed_witnesses, max_states)
        if reason:
            reasons.append(reason)
    seconds = time.perf_counter() - start
    violated = outcome.result == "violation"
    killed = violated or bool(lost)
    if killed:
        result, reasons = "killed", []
    elif exhausted:
        result = "survived"
        reasons = [
            f"bfs exhausted the scenario ({outcome.checked}) without a violation",
            *reasons,
        ]
    else:
        result = "inconclusive"
    if not killed and outcome.baseline is not None and outcome.baseline["comparison"] == "both":
        shared = [r["property"] for r in outcome.baseline["properties"] if r["outcome"] == "both"]
        reasons.append(
            "it violates only what the reference rules violate on the scenario: "
            + ", ".join(shared)
        )
    return {
        "mutant": mutant.name,
        "field": mutant.field,
        "fields": list(mutant.fields),
        "bug": mutant.bug,
        "scenario": mutant.config.name,
        "result": result,
        "reasons": reasons,
        "checked": "; ".join(checked),
        "killed": killed,
        "kill": "violation" if violated else "witness lost" if lost else None,
        "witnesses_lost": lost,
        "expected": mutant.expected,
        "as_expected": killed and mutant.expected in (None, outcome.property, *lost),
        "source": mutant.source,
        "property": outcome.property,
        "engine": outcome.engine if killed else None,
        "seconds": round(seconds, 3),
        "length": len(outcome.path.actions) if outcome.path is not None else None,
        "found_length": outcome.original_length,
        "shortest": outcome.shortest,
        "code": outcome.path.encode() if outcome.path is not None else None,
        "baseline": outcome.baseline,
    }


def witnesses_lost(
    mutant: Mutant, missed: list[str], max_states: int
) -> tuple[list[str], str | None]:
    """The required witnesses an exhaustive BFS of the mutant missed that a BFS of the same
    scenario under the reference rules (bounded by ``max_states``; reaching a witness needs
    no exhaustion) reaches, and, when some missed witness is missed by the reference too, a
    reason saying so."""
    reference = explore(
        replace(mutant.config, rules=DEFAULT_RULES),
        engine="bfs",
        max_states=max_states,
        minimise=False,
        shortest=False,
    )
    if reference.result == "violation":
        return [], f"the reference rules violate {reference.property} in the scenario"
    lost = [w for w in missed if w in reference.witnesses]
    also = [w for w in missed if w not in reference.witnesses]
    if not also:
        return lost, None
    scope = "" if reference.exhausted else f" within {max_states} states"
    return lost, f"the reference rules miss {', '.join(also)} too{scope}"


def kill_matrix(
    only: list[str] | None = None,
    budget_seconds: float | None = 60.0,
    progress: Callable[[str], None] | None = None,
    extra: Sequence[Mutant] = (),
) -> list[dict[str, Any]]:
    """Rows for every mutant of the catalogue and ``extra`` (or the named ones)."""
    everyone = {**MUTANTS, **{m.name: m for m in extra}}
    names = only if only else list(everyone)
    unknown = [n for n in names if n not in everyone]
    if unknown:
        raise ConfigError(f"unknown mutant(s) {unknown}; known: {', '.join(everyone)}")
    rows = []
    for i, name in enumerate(names, 1):
        if progress is not None:
            progress(f"mutant {i}/{len(names)}: {name}")
        rows.append(guarded_kill(everyone[name], budget_seconds))
    return rows


def matrix_status(rows: Sequence[dict[str, Any]]) -> int:
    """The kill matrix's exit status: a mutant that survived or was killed by another
    property than its expected one first, then a user's code failing, then inconclusive."""
    codes = [exitcodes.OK]
    for r in rows:
        if r["result"] == "survived" or (r["killed"] and not r["as_expected"]):
            # A mutant that survives, or one killed by another property than the one it
            # is expected to violate: the matrix does not show what it claims.
            codes.append(exitcodes.VIOLATION)
        elif r["result"] == "user code error":
            codes.append(exitcodes.USER_CODE_ERROR)
        elif r["result"] == "inconclusive":
            codes.append(exitcodes.INCONCLUSIVE)
    return exitcodes.worst(*codes)


MATRIX_RESULTS = {
    exitcodes.OK: "ok",
    exitcodes.VIOLATION: "violation",
    exitcodes.USER_CODE_ERROR: "user code error",
    exitcodes.INCONCLUSIVE: "inconclusive",
}
"""The matrix's ``result`` per exit status (``groupcheck.exitcodes``)."""


def matrix_document(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The kill matrix as ``mutants --json`` prints it, without ``schema`` and ``version``
    (docs/json/mutants.schema.json)."""
    killed = sum(1 for r in rows if r["killed"])
    return {
        "result": MATRIX_RESULTS[matrix_status(rows)],
        "checked": f"{len(rows)} mutants, {killed} killed",
        "killed": killed,
        "mutants": list(rows),
    }


def guarded_kill(mutant: Mutant, budget_seconds: float | None) -> dict[str, Any]:
    """``kill`` within the mutant's whole budget (``groupcheck.budget.watchdog``: a rule
    that never returns is stopped, the row is inconclusive and says where), and with a
    failing user rule reported in the row (``result`` "user code error")."""
    start = time.perf_counter()
    try:
        with watchdog(budget_seconds):
            return kill(mutant, budget_seconds)
    except BudgetExpired as e:
        return _row(
            mutant,
            "inconclusive",
            [f"{e}; stopped there"],
            start,
            "no search ended: the time budget stopped the mutant's run",
        )
    except UserCodeError as e:
        locate(e, mutant.mutated_config())
        row = _row(
            mutant, "user code error", e.report(), start, "no search ended: a rule of it failed"
        )
        row["error"] = e.to_json()
        return row


def _row(
    mutant: Mutant, result: str, reasons: list[str], start: float, checked: str
) -> dict[str, Any]:
    return {
        "mutant": mutant.name,
        "field": mutant.field,
        "fields": list(mutant.fields),
        "bug": mutant.bug,
        "scenario": mutant.config.name,
        "result": result,
        "reasons": reasons,
        "checked": checked,
        "killed": False,
        "kill": None,
        "witnesses_lost": [],
        "expected": mutant.expected,
        "as_expected": False,
        "source": mutant.source,
        "property": None,
        "engine": None,
        "seconds": round(time.perf_counter() - start, 3),
        "length": None,
        "found_length": None,
        "shortest": None,
        "code": None,
    }
