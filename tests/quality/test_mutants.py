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
from groupcheck.mutants import MUTANTS
from groupcheck.mutants.matrix import KILL_MAX_STATES, kill
from model.config import Config
from model.rules import DEFAULT_RULES

BASELINE_DEPTH = {
    "MUT2": 19,
    "MUT2_CALLBACKS": 10,
    "MUT2_COMMIT": 13,
    "MUT2_COMMIT_EPOCHS": 13,
    "MUT2_EPOCH_HISTORY": 12,
    "MUT2_CRASH": 15,
    "MUT2_FAILOVER": 11,
    "MUT2_LOSSY": 12,
    "MUT2_OFFLOAD": 12,
    "MUT2_OFFLOAD_STATIC": 13,
    "MUT2_POLL": 8,
    "MUT2_REGEX": 8,
    "MUT2_REJOIN": 12,
    "MUT2_STATIC": 11,
    "MUT2_TOPICS": 8,
    "MUTC_COOPERATIVE": 27,
    "MUTC_LATE_SYNC": 27,
    "MUTC_LEAVE": 15,
    "MUTC_MISSED_ROUND": 37,
    "MUTC_STALL": 15,
    "MUTC_STATIC": 8,
    "MUTC_STICKY": 31,
    "OFFSETS_EXPIRY": 12,
    "CLASSIC_OFFSETS_EXPIRY": 10,
    "MUTC_TWO_PROCESSES": 9,
    "GROUP_DELETION": 8,
    "CLASSIC_GROUP_DELETION": 6,
    "OFFLOAD_DELETION": 12,
    "MIGRATION_DISABLED": 7,
    "MIXED_STATIC": 12,
    "MIXED_STATIC_RESUBSCRIBE": 12,
    "MIXED_STATIC_ASSIGNOR": 9,
    "MIXED_INSTANCE_RENAME": 14,
}
"""Per scenario, the depth to which the default rules are checked clean: at least the
length of every kill in that scenario (``test_mutant_is_killed`` asserts it), so each kill
is within the depth where the reference rules violate nothing."""


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


SURVIVORS: dict[str, str] = {}
"""Mutants no property kills on their scenario, each with the reason:
``test_a_known_survivor_survives`` checks that it still survives an exhaustive search."""


@pytest.mark.parametrize("name", sorted(set(MUTANTS) - set(SURVIVORS)))
def test_mutant_is_killed(name: str) -> None:
    row = kill(MUTANTS[name])  # KILL_MAX_STATES of BFS, then KILL_WALKS walks
    assert row["result"] == "killed", f"mutant {name}: {row['result']}: {row['reasons']}"
    if row["kill"] == "witness lost":
        _assert_witness_lost(name, row)
        return
    assert row["kill"] == "violation"
    assert not row["witnesses_lost"]
    assert row["length"] <= BASELINE_DEPTH[row["scenario"]], "raise BASELINE_DEPTH"
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
    sorted({m.config.name: m.config for m in MUTANTS.values()}.items()),
    ids=lambda scenario: scenario[0],
)
def test_mutant_scenario_baseline_is_clean(scenario: tuple[str, Config]) -> None:
    name, config = scenario
    depth = BASELINE_DEPTH[name]
    result = bfs(config, max_depth=depth)
    assert result.property is None, f"{result.property}: {result.message}"
    assert result.exhausted or result.checked.startswith(f"every state within {depth} steps")


def test_a_witness_the_reference_misses_too_kills_nothing() -> None:
    """Under the policy ``disabled`` no group ever upgrades, whatever the rules: a mutant
    missing ``GroupUpgrades`` there has lost nothing, so it survives (with the reason)."""
    import dataclasses

    from model.presets import MIGRATION_DISABLED

    mutant = dataclasses.replace(
        MUTANTS["classic-holder-unreleased"],
        config=dataclasses.replace(MIGRATION_DISABLED, required_witnesses=("GroupUpgrades",)),
    )
    row = kill(mutant)
    assert (row["result"], row["kill"], row["witnesses_lost"]) == ("survived", None, [])
    assert any("the reference rules miss GroupUpgrades too" in r for r in row["reasons"])
