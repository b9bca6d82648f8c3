"""The mutant kill matrix: every mutant must be killed by exploration, and the baseline of
every mutant scenario must be clean (so a kill is the mutant's doing).

A surviving mutant fails the suite: either a property is missing, or the mutant is
equivalent in its scenario — both need a decision, not a looser test. Work is bounded by
states and walks, never by seconds: a slow machine cannot turn a test green by checking
less.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from groupcheck.explore.bfs import bfs
from groupcheck.explore.minimise import first_violations
from groupcheck.mutants import MUTANTS, Mutant, survivors
from groupcheck.mutants.matrix import KILL_MAX_STATES, kill
from model.presets import EXPECTED
from model.rules import DEFAULT_RULES

# A mutant's known facts are data on its catalogue entry (groupcheck/mutants/catalogue.py):
# its scenario's baseline depth (``Mutant.baseline_depth``, at least the length of every kill
# in that scenario, so each kill is within the depth where the reference rules violate
# nothing) and, for a known survivor, why no property kills it (``Mutant.survivor``).


def _shape(function: Callable[..., Any]) -> list[tuple[str, Any]]:
    """Parameter names and kinds (positional, keyword-only, …) of a rule function."""
    return [(p.name, p.kind) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_keeps_the_signature_of_the_rule_it_replaces(name: str) -> None:
    mutant = MUTANTS[name]
    assert len(set(mutant.fields)) == len(mutant.fields)
    for field in mutant.fields:
        default = getattr(DEFAULT_RULES, field)
        replacement = getattr(mutant.rules, field)
        assert replacement is not default
        assert _shape(replacement) == _shape(default)


SURVIVORS = survivors()
"""Mutants no property kills on their scenario, each with the reason (their entries'
``Mutant.survivor``): ``test_a_known_survivor_survives`` checks that it still survives an
exhaustive search."""


@pytest.mark.parametrize("name", sorted(set(MUTANTS) - set(SURVIVORS)))
def test_mutant_is_killed(name: str) -> None:
    row = kill(MUTANTS[name])  # KILL_MAX_STATES of BFS, then KILL_WALKS walks
    assert row["result"] == "killed", f"mutant {name}: {row['result']}: {row['reasons']}"
    if row["kill"] == "witness lost":
        _assert_witness_lost(name, row)
        return
    assert row["kill"] == "violation"
    assert not row["witnesses_lost"]
    assert row["scenario"] == MUTANTS[name].config.name
    baseline = MUTANTS[name].baseline_depth
    assert baseline is not None
    assert row["length"] <= baseline, "raise the scenario's catalogue.BASELINE_DEPTH"
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


@pytest.mark.parametrize("name", sorted(SURVIVORS))
def test_a_known_survivor_survives(name: str) -> None:
    """A known survivor's scenario, explored to exhaustion under the mutant, violates no
    property and loses no witness; should a property come to kill it, move it back."""
    row = kill(MUTANTS[name])
    assert row["result"] == "survived", row
    assert any("exhausted" in r for r in row["reasons"]), row["reasons"]


def _assert_witness_lost(name: str, row: dict[str, Any]) -> None:
    """A witness-lost kill: no property named, no path; the mutant's scenario explored to
    exhaustion misses the witness, which the reference rules reach (both checked again
    here, outside the matrix)."""
    assert row["property"] is None
    assert row["code"] is None
    assert row["witnesses_lost"]
    mutant = MUTANTS[name]
    assert set(row["witnesses_lost"]) <= set(mutant.config.required_witnesses or ())
    under_mutant = bfs(mutant.mutated_config(), max_states=KILL_MAX_STATES)
    assert under_mutant.exhausted
    assert under_mutant.property is None
    assert not set(row["witnesses_lost"]) & set(under_mutant.witnesses)
    reference = bfs(mutant.config, max_states=KILL_MAX_STATES)
    assert reference.property is None
    assert set(row["witnesses_lost"]) <= set(reference.witnesses)


@pytest.mark.parametrize(
    "scenario",
    sorted({m.config.name: m for m in MUTANTS.values()}.items()),
    ids=lambda scenario: scenario[0],
)
def test_mutant_scenario_baseline_is_clean(scenario: tuple[str, Mutant]) -> None:
    name, mutant = scenario
    config = mutant.config
    depth = mutant.baseline_depth
    assert depth is not None, f"{config.name}: no catalogue.BASELINE_DEPTH"
    result = bfs(config, max_depth=depth)
    assert result.property is None, f"{result.property}: {result.message}"
    assert result.exhausted or result.checked.startswith(f"every state within {depth} steps")
    # The preset's bounded expectation (docs/presets.md) is this check: its depth and states.
    for e in EXPECTED.get(name, ()):
        if e.depth is not None and (e.checked_by or "").startswith("tests/quality/test_mutants.py"):
            assert e.depth == depth, (name, e.depth)
            assert result.distinct_states == e.states, (name, result.distinct_states, e.states)


def test_a_witness_the_reference_misses_too_kills_nothing() -> None:
    """Under the policy ``disabled`` no group ever upgrades, whatever the rules: a mutant
    missing ``GroupUpgrades`` there has lost nothing, so it survives (with the reason)."""
    import dataclasses

    from model.migration.presets import MIGRATION_DISABLED

    mutant = dataclasses.replace(
        MUTANTS["classic-holder-unreleased"],
        config=dataclasses.replace(MIGRATION_DISABLED, required_witnesses=("GroupUpgrades",)),
    )
    row = kill(mutant)
    assert (row["result"], row["kill"], row["witnesses_lost"]) == ("survived", None, [])
    assert any("the reference rules miss GroupUpgrades too" in r for r in row["reasons"])
