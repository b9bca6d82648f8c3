"""The mutant kill matrix: explore every mutant's scenario until a property fails.

Each mutant gets a per-mutant budget. BFS runs first (it also yields the shortest
counterexample); if it exhausts its share without a violation, seeded random walks get the
rest. A mutant no engine kills within its budget *survives* — a finding: either a property
is missing or the mutant is equivalent in the scenario.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from groupcheck.explore.run import explore
from groupcheck.mutants import MUTANTS, Mutant


def kill(mutant: Mutant, budget_seconds: float = 60.0, seed: int = 0) -> dict[str, Any]:
    """Explore one mutant; the row of the kill matrix."""
    config = mutant.mutated_config()
    start = time.perf_counter()
    outcome = explore(config, engine="bfs", budget_seconds=budget_seconds * 0.6)
    if outcome.result != "violation":
        left = max(1.0, budget_seconds - (time.perf_counter() - start))
        outcome = explore(config, engine="walk", seed=seed, budget_seconds=left)
    seconds = time.perf_counter() - start
    killed = outcome.result == "violation"
    return {
        "mutant": mutant.name,
        "field": mutant.field,
        "bug": mutant.bug,
        "scenario": mutant.config.name,
        "killed": killed,
        "property": outcome.property,
        "engine": outcome.engine if killed else None,
        "seconds": round(seconds, 3),
        "length": len(outcome.path.actions) if outcome.path is not None else None,
        "found_length": outcome.original_length,
        "shortest": outcome.shortest,
        "code": outcome.path.encode() if outcome.path is not None else None,
    }


def kill_matrix(
    only: list[str] | None = None,
    budget_seconds: float = 60.0,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Rows for every mutant (or the named ones)."""
    names = only if only else list(MUTANTS)
    unknown = [n for n in names if n not in MUTANTS]
    if unknown:
        from model.status import ConfigError

        raise ConfigError(f"unknown mutant(s) {unknown}; known: {', '.join(MUTANTS)}")
    rows = []
    for i, name in enumerate(names, 1):
        if progress is not None:
            progress(f"mutant {i}/{len(names)}: {name}")
        rows.append(kill(MUTANTS[name], budget_seconds))
    return rows
