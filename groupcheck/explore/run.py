"""One entry point for every engine: explore a config, minimise what is found, report.

``explore`` runs the chosen engine, and on a violation delta-debugs the path, measures the
BFS-shortest counterexample length for comparison (when the state space allows), re-checks
the violation with Z3 for state properties, and returns an ``Outcome`` the CLI prints.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from groupcheck.explore.minimise import first_violations, minimise_path, shrink_config
from invariants.check import Violation
from model.config import Config
from model.path import Path

ENGINES = ("bfs", "walk", "hypothesis")


@dataclass
class Outcome:
    """The result of one exploration, engine-independent."""

    engine: str
    result: str
    property: str | None = None
    message: str | None = None
    path: Path | None = None
    original_length: int | None = None
    shortest: int | None = None
    distinct_states: int | None = None
    exhausted: bool | None = None
    examples: int | None = None
    steps: int = 0
    witnesses: list[str] = field(default_factory=list)
    missed_witnesses: list[str] = field(default_factory=list)
    seconds: float = 0.0
    z3: str | None = None
    shrunk_config: Config | None = None


Progress = Callable[[str], None]


def explore(
    config: Config,
    engine: str = "bfs",
    seed: int = 0,
    budget_seconds: float | None = None,
    profile: str = "ci",
    z3: bool = False,
    minimise: bool = True,
    shortest: bool = True,
    progress: Progress | None = None,
    symmetry: bool = False,
    shrink: bool = False,
) -> Outcome:
    """Explore ``config`` with ``engine``; minimise and measure any counterexample."""
    start = time.perf_counter()
    if engine == "hypothesis":
        outcome = _hypothesis(config, seed, budget_seconds, profile, progress)
    elif engine == "bfs":
        outcome = _bfs(config, budget_seconds, z3, progress, symmetry)
    elif engine == "walk":
        outcome = _walk(config, seed, budget_seconds, progress)
    else:
        raise ValueError(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}")
    if outcome.path is not None and outcome.property is not None:
        outcome.original_length = len(outcome.path.actions)
        if minimise:
            if progress:
                progress(f"minimising a {outcome.original_length}-step counterexample")
            outcome.path = minimise_path(outcome.path, outcome.property)
        if engine == "bfs" and outcome.property != "Convergence":
            outcome.shortest = outcome.original_length  # BFS order: already a shortest one
        elif shortest:
            outcome.shortest = shortest_length(config, outcome.property, budget_seconds)
        if shrink:
            if progress:
                progress("shrinking the config")
            smaller, small_path = shrink_config(config, outcome.property, budget_seconds or 30.0)
            if small_path is not None and smaller != config:
                outcome.shrunk_config = smaller
                outcome.path = minimise_path(small_path, outcome.property)
                outcome.shortest = len(small_path.actions)
                again = first_violations(smaller, outcome.path.actions, check_convergence=True)
                if again is not None:
                    named = [v for v in again[0] if v.property == outcome.property]
                    outcome.message = (named or again[0])[0].message
        # Every violation of a state or step property is re-checked with Z3 (README.md,
        # Conventions).
        outcome.z3 = z3_recheck(outcome.path, outcome.property)
    outcome.seconds = time.perf_counter() - start
    return outcome


def shortest_length(config: Config, prop: str, budget_seconds: float | None) -> int | None:
    """Length of the BFS-shortest path violating ``prop`` (None if BFS gave up)."""
    from groupcheck.explore.bfs import bfs

    budget = min(budget_seconds or 60.0, 60.0)
    res = bfs(config, budget_seconds=budget, stop_on=prop)
    if res.path is None or res.property != prop:
        return None
    return len(res.path.actions)


def z3_recheck(path: Path, prop: str) -> str:
    """Re-check the final violation with Z3 (state and step properties): "violated" when Z3
    agrees, "proved" when it does not (a disagreement), "unknown" when it cannot tell."""
    from invariants.check import all_properties
    from invariants.expr import StepSnapshot
    from invariants.properties import Kind
    from invariants.snapshot import project
    from invariants.z3.check import recheck

    props = {p.name: p for p in all_properties()}
    target = props.get(prop)
    if target is None or target.expr is None:
        return "not applicable (a convergence or witness property)"
    states = list(path.states())
    if target.kind is Kind.ALWAYS_STATE:
        return str(recheck(target, project(states[-1])).value)
    if len(states) < 2:
        return "not applicable (no step)"
    return str(recheck(target, StepSnapshot(project(states[-2]), project(states[-1]))).value)


def _hypothesis(
    config: Config, seed: int, budget: float | None, profile: str, progress: Progress | None
) -> Outcome:
    from groupcheck.explore.hypothesis_engine import run_hypothesis

    out = run_hypothesis(
        config,
        seed=seed,
        profile=profile,
        budget_seconds=budget,
        progress=(lambda ex, st: progress(f"hypothesis: {ex} examples, {st} steps"))
        if progress
        else None,
    )
    from invariants.liveness import WITNESSES

    names = [w.prop.name for w in WITNESSES]
    return Outcome(
        engine="hypothesis",
        result="violation" if out.path is not None else "ok",
        property=out.property,
        message=out.message,
        path=out.path,
        examples=out.examples,
        steps=out.steps,
        witnesses=sorted(out.seen),
        missed_witnesses=[n for n in names if n not in out.seen],
    )


def _from_result(engine: str, res: Any) -> Outcome:
    """Adapt an engine's result record to an ``Outcome``."""
    return Outcome(
        engine=engine,
        result=str(getattr(res, "result", "ok")),
        property=getattr(res, "property", None),
        message=getattr(res, "message", None),
        path=getattr(res, "path", None),
        distinct_states=getattr(res, "distinct_states", None),
        exhausted=getattr(res, "exhausted", None),
        steps=int(getattr(res, "steps", 0) or 0),
        witnesses=list(getattr(res, "witnesses", []) or []),
        missed_witnesses=list(getattr(res, "missed_witnesses", []) or []),
    )


def _bfs(
    config: Config, budget: float | None, z3: bool, progress: Progress | None, symmetry: bool
) -> Outcome:
    from groupcheck.explore.bfs import bfs

    cb = None
    if progress is not None:

        def cb(states: int, depth: int, frontier: int) -> None:
            progress(f"bfs: {states} states, depth {depth}, frontier {frontier}")

    res = bfs(config, budget_seconds=budget, progress=cb, z3=z3, symmetry=symmetry)
    return _from_result("bfs", res)


def _walk(config: Config, seed: int, budget: float | None, progress: Progress | None) -> Outcome:
    from groupcheck.explore.walk import walk

    cb = None
    if progress is not None:

        def cb(walks: int, steps: int) -> None:
            progress(f"walk: {walks} walks, {steps} steps")

    res = walk(
        config, seed=seed, walks=10_000, max_steps=60, budget_seconds=budget or 30.0, progress=cb
    )
    return _from_result("walk", res)


def replay(path: Path) -> tuple[list[Violation], int] | None:
    """Violations of the first violating step of ``path`` (and that step), or None."""
    found = first_violations(path.config, path.actions, check_convergence=True)
    return None if found is None else (list(found[0]), found[1])
