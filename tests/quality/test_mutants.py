"""The mutant kill matrix: every mutant must be killed by exploration, and the baseline of
every mutant scenario must be clean (so a kill is the mutant's doing).

A surviving mutant fails the suite: either a property is missing, or the mutant is
equivalent in its scenario — both need a decision, not a looser test.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from groupcheck.explore.bfs import bfs
from groupcheck.explore.minimise import first_violations
from groupcheck.mutants import MUTANTS
from groupcheck.mutants.matrix import kill
from model.rules import DEFAULT_RULES

BUDGET_SECONDS = 60.0


def _shape(function: Callable[..., Any]) -> list[tuple[str, Any]]:
    """Parameter names and kinds (positional, keyword-only, …) of a rule function."""
    return [(p.name, p.kind) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_keeps_the_signature_of_the_rule_it_replaces(name: str) -> None:
    mutant = MUTANTS[name]
    default = getattr(DEFAULT_RULES, mutant.field)
    replacement = getattr(mutant.rules, mutant.field)
    assert replacement is not default
    assert _shape(replacement) == _shape(default)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_killed(name: str) -> None:
    row = kill(MUTANTS[name], budget_seconds=BUDGET_SECONDS)
    assert row["killed"], f"mutant {name} survived {BUDGET_SECONDS:.0f} s of exploration"
    assert row["length"] is not None
    if row["shortest"] is not None:
        assert row["length"] <= row["shortest"] + 2
    # The reported counterexample replays and violates the reported property.
    from model.path import Path

    config = MUTANTS[name].mutated_config()
    path = Path.decode(config, row["code"])
    found = first_violations(config, path.actions, check_convergence=True)
    assert found is not None
    assert row["property"] in {v.property for v in found[0]}


@pytest.mark.parametrize(
    "scenario", sorted({m.config.name: m.config for m in MUTANTS.values()}.items())
)
def test_mutant_scenario_baseline_is_clean(scenario: tuple[str, object]) -> None:
    _, config = scenario
    result = bfs(config, budget_seconds=20)  # type: ignore[arg-type]
    assert result.result == "ok", f"{result.property}: {result.message}"
