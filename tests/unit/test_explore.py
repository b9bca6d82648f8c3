"""Exploration engines: BFS (pinned counts, shortest counterexamples, symmetry), random
walks (determinism, swarm), Hypothesis, and minimisation."""

from __future__ import annotations

from dataclasses import replace

import networkx as nx
import pytest

from groupcheck.explore.bfs import bfs, state_graph
from groupcheck.explore.hypothesis_engine import run_hypothesis
from groupcheck.explore.minimise import first_violations, minimise_path
from groupcheck.explore.symmetry import canonicaliser, permute, symmetry_classes
from groupcheck.explore.walk import swarm, walk
from groupcheck.mutants import get_mutant
from model import system
from model.config import ClientSpec, Config
from model.path import Path

PIN0 = Config(
    name="PIN0",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
)
"""Two clients join a topic of two partitions; no perturbations."""

PIN_JOIN = replace(
    PIN0,
    name="PIN_JOIN",
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
    max_perturbations=1,
    perturbations=frozenset({"Subscribe"}),
)
"""A settles alone or with B joining at any moment: revocation and waiting both happen."""

# Pinned distinct-state counts. They change when the model changes — on purpose: a changed
# count means the reachable behaviour changed, and the new number must be reviewed and
# pinned again (and the TLA+ manifest with it).
PINNED = {
    ("PIN0", True): 1001,
    ("PIN0", False): 2000,
    ("PIN_JOIN", False): 2013,
}


@pytest.mark.parametrize(("config", "symmetry"), [(PIN0, True), (PIN0, False), (PIN_JOIN, False)])
def test_bfs_exhausts_and_pins_distinct_states(config: Config, symmetry: bool) -> None:
    result = bfs(config, symmetry=symmetry)
    assert result.result == "ok", result.message
    assert result.exhausted is True
    assert result.distinct_states == PINNED[(config.name, symmetry)]


def test_bfs_hits_its_witnesses_when_a_member_joins() -> None:
    result = bfs(PIN_JOIN, symmetry=False)
    assert {"RevocationCompletes", "WaitsOnUnreleasedPartitions", "GroupConverges"} <= set(
        result.witnesses
    )


def test_symmetry_halves_interchangeable_clients() -> None:
    assert symmetry_classes(PIN0) == [["A", "B"]]
    assert symmetry_classes(PIN_JOIN) == []  # B starts unsubscribed: not interchangeable
    canonical = canonicaliser(PIN0)
    state = system.initial(PIN0)
    for action in system.enabled(state, PIN0)[:1]:
        state = system.step(state, action, PIN0)
    swapped = permute(state, {"A": "B", "B": "A"})
    assert swapped != state
    assert canonical(swapped) == canonical(state)
    assert canonical(canonical(state)) == canonical(state)  # type: ignore[arg-type]


def test_bfs_shortest_counterexample_replays() -> None:
    config = get_mutant("revoke-without-waiting").mutated_config()
    result = bfs(config, symmetry=False, budget_seconds=60)
    assert result.result == "violation"
    assert result.path is not None
    assert result.property is not None
    found = first_violations(config, result.path.actions)
    assert found is not None
    assert result.property in {v.property for v in found[0]}
    assert found[1] == len(result.path.actions)  # the violation is at the last step


def test_state_graph_has_one_node_per_distinct_state() -> None:
    g = state_graph(PIN0, symmetry=False)
    assert isinstance(g, nx.DiGraph)
    assert g.number_of_nodes() == PINNED[("PIN0", False)]
    assert all("kind" in data for _, _, data in g.edges(data=True))


def test_walk_is_deterministic_and_finds_a_mutant() -> None:
    config = get_mutant("revoke-without-waiting").mutated_config()
    first = walk(config, seed=3, walks=500, max_steps=40)
    again = walk(config, seed=3, walks=500, max_steps=40)
    assert first.result == "violation"
    assert (first.property, first.steps) == (again.property, again.steps)
    assert first.path is not None
    assert again.path is not None
    assert first.path.actions == again.path.actions


def test_walk_default_rules_clean_on_a_small_config() -> None:
    result = walk(PIN_JOIN, seed=0, walks=150, max_steps=40)
    assert result.result == "ok", result.message
    assert result.steps > 0


def test_swarm_subsets_differ_across_walks() -> None:
    import random

    config = get_mutant("adopt-negative-epoch").config
    subsets = {swarm(random.Random(f"0:{w}"), config) for w in range(30)}
    assert len(subsets) > 1
    assert all(s <= config.perturbations and s for s in subsets)


def test_hypothesis_engine_shrinks_a_mutant_counterexample() -> None:
    config = get_mutant("revoke-without-waiting").mutated_config()
    outcome = run_hypothesis(config, seed=1, profile="ci", budget_seconds=60)
    assert outcome.path is not None, "the mutant survived the Hypothesis engine"
    assert outcome.property in {"OwnedPartitionsAreHeld", "NoDoubleClientOwnership"}
    found = first_violations(config, outcome.path.actions)
    assert found is not None


def test_minimisation_keeps_the_violation_and_shortens() -> None:
    config = get_mutant("revoke-without-waiting").mutated_config()
    result = walk(config, seed=5, walks=500, max_steps=60)
    assert result.path is not None
    assert result.property is not None
    small = minimise_path(result.path, result.property)
    assert len(small.actions) <= len(result.path.actions)
    found = first_violations(config, small.actions)
    assert found is not None
    assert result.property in {v.property for v in found[0]}
    shortest = bfs(config, symmetry=False, budget_seconds=60, stop_on=result.property)
    assert shortest.path is not None
    assert len(small.actions) <= len(shortest.path.actions) + 2


def test_path_code_round_trip_of_a_counterexample() -> None:
    config = get_mutant("revoke-without-waiting").mutated_config()
    result = bfs(config, symmetry=False, budget_seconds=60)
    assert result.path is not None
    again = Path.decode(config, result.path.encode())
    assert again.actions == result.path.actions


def test_config_shrinking_keeps_the_property() -> None:
    from groupcheck.explore.minimise import shrink_config, smaller_configs

    config = get_mutant("no-bump-on-metadata-change").mutated_config()
    assert all(c != config for c in smaller_configs(config))
    smaller, path = shrink_config(config, "ValidTargetAssignment.Covers", budget_seconds=30)
    assert path is not None
    assert len(smaller.clients) < len(config.clients) or len(smaller.topics) < len(config.topics)
    found = first_violations(smaller, path.actions)
    assert found is not None
    assert "ValidTargetAssignment.Covers" in {v.property for v in found[0]}


def test_bfs_with_z3_checks_every_state_and_agrees() -> None:
    plain = bfs(PIN0, max_states=300, check_convergence=False)
    with_z3 = bfs(PIN0, max_states=300, check_convergence=False, z3=True)
    assert with_z3.result == plain.result == "ok"
    assert with_z3.distinct_states == plain.distinct_states
    broken = get_mutant("assignor-assigns-twice").mutated_config()
    found = bfs(broken, z3=True, check_convergence=False)
    assert found.property == "ValidTargetAssignment.Unique"
