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
from invariants.liveness import WITNESSES
from model import system
from model.config import ClientSpec, Config
from model.path import Path
from model.presets import preset

PIN0 = Config(
    kafka_version="4.2",
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
    required_witnesses=("RevocationCompletes", "WaitsOnUnreleasedPartitions", "GroupConverges"),
)
"""A settles alone or with B joining at any moment: revocation and waiting both happen
(nobody is fenced: nothing is lost or crashes)."""

# Pinned distinct-state counts. They change when the model changes — on purpose: a changed
# count means the reachable behaviour changed, and the new number must be reviewed and
# pinned again (and the TLA+ manifest with it).
PINNED = {
    ("PIN0", True): 985,
    ("PIN0", False): 1968,
    ("PIN_JOIN", False): 1981,
}


@pytest.mark.parametrize(("config", "symmetry"), [(PIN0, True), (PIN0, False), (PIN_JOIN, False)])
def test_bfs_exhausts_and_pins_distinct_states(config: Config, symmetry: bool) -> None:
    result = bfs(config, symmetry=symmetry)
    assert result.property is None, result.message
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
    result = bfs(config, symmetry=False)
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
    assert result.checked.startswith("150 walks of up to 40 steps")
    assert result.steps > 0


def test_swarm_subsets_differ_across_walks() -> None:
    import random

    config = get_mutant("adopt-negative-epoch").config
    subsets = {swarm(random.Random(f"0:{w}"), config) for w in range(30)}
    assert len(subsets) > 1
    assert all(s <= config.perturbations and s for s in subsets)


def test_hypothesis_engine_shrinks_a_mutant_counterexample() -> None:
    config = get_mutant("revoke-without-waiting").mutated_config()
    # A seeded run of the ci profile (100 examples) finds it about three times in four:
    # the first of five seeds that does is checked.
    outcomes = (run_hypothesis(config, seed=seed, profile="ci") for seed in range(5))
    outcome = next((o for o in outcomes if o.path is not None), None)
    assert outcome is not None, "the mutant survived five seeded Hypothesis runs"
    assert outcome.path is not None
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
    shortest = bfs(config, symmetry=False, stop_on=result.property)
    assert shortest.path is not None
    assert len(small.actions) <= len(shortest.path.actions) + 2


def test_path_code_round_trip_of_a_counterexample() -> None:
    config = get_mutant("revoke-without-waiting").mutated_config()
    result = bfs(config, symmetry=False)
    assert result.path is not None
    again = Path.decode(config, result.path.encode())
    assert again.actions == result.path.actions


def test_config_shrinking_keeps_the_property() -> None:
    from groupcheck.explore.minimise import shrink_config, smaller_configs

    config = get_mutant("no-bump-on-metadata-change").mutated_config()
    assert all(c != config for c in smaller_configs(config))
    smaller, path = shrink_config(config, "ValidTargetAssignment.Covers")
    assert path is not None
    assert len(smaller.clients) < len(config.clients) or len(smaller.topics) < len(config.topics)
    found = first_violations(smaller, path.actions)
    assert found is not None
    assert "ValidTargetAssignment.Covers" in {v.property for v in found[0]}


def test_bfs_with_z3_checks_every_state_and_agrees() -> None:
    plain = bfs(PIN0, max_states=300, check_convergence=False)
    with_z3 = bfs(PIN0, max_states=300, check_convergence=False, z3=True)
    assert with_z3.property is None
    assert plain.property is None
    assert with_z3.result == plain.result == "inconclusive"  # cut at 300 states
    assert with_z3.distinct_states == plain.distinct_states
    broken = get_mutant("assignor-assigns-twice").mutated_config()
    found = bfs(broken, z3=True, check_convergence=False)
    assert found.property == "ValidTargetAssignment.Unique"


# --------------------------------------------------------------------------- verdicts

LONE = Config(
    name="LONE", kafka_version="4.2", topics=(("foo", 1),), clients=(ClientSpec("A", ("foo",)),)
)
"""One client, no perturbations: the group converges, but nothing is ever revoked."""


def test_bfs_cut_by_states_is_inconclusive_not_ok() -> None:
    result = bfs(PIN_JOIN, symmetry=False, max_states=100)
    assert result.property is None
    assert result.result == "inconclusive"
    assert result.exhausted is False
    assert any("state bound (100 states)" in r for r in result.reasons)


def test_bfs_cut_by_time_is_inconclusive() -> None:
    result = bfs(PIN_JOIN, symmetry=False, budget_seconds=0.0)
    assert result.result == "inconclusive"
    assert any("time budget" in r for r in result.reasons)


def test_bfs_depth_fully_explored_is_ok_within_that_depth() -> None:
    result = bfs(PIN_JOIN, symmetry=False, max_depth=20)  # the space is 27 deep
    assert result.result == "ok", result.reasons
    assert result.exhausted is False
    assert result.checked.startswith("every state within 20 steps")


def test_missed_witnesses_make_an_exhaustive_search_inconclusive() -> None:
    result = bfs(LONE)
    assert result.exhausted is True
    assert result.result == "inconclusive"
    assert "RevocationCompletes" in result.missed_witnesses
    assert any("witnesses missed" in r for r in result.reasons)
    # A config that declares the witnesses it can reach is ok when it reaches them.
    declared = bfs(replace(LONE, required_witnesses=("GroupConverges",)))
    assert declared.result == "ok"
    assert declared.missed_witnesses == []


@pytest.mark.parametrize(
    "name", ["MUT2_CALLBACKS", "OFFLOAD_DELETION", "MUTC_COOPERATIVE", "MUT2_FAILOVER"]
)
def test_a_witness_declared_shown_by_some_actions_is_false_on_other_steps(name: str) -> None:
    """``Witness.actions`` lets the checker skip a witness on other actions' steps: exact
    only if the witness's function is False on every such step (checked on the first
    states of configs whose witnesses of that kind apply)."""
    config = preset(name)
    declared = [w for w in WITNESSES if w.actions is not None]
    states = [system.initial(config)]
    others = 0
    for i in range(300):
        state = states[i]
        for action in system.enabled(state, config):
            new = system.step(state, action, config)
            states.append(new)
            for w in declared:
                if not isinstance(action, w.actions):
                    others += 1
                    assert not w.seen(state, action, new), (w.prop.name, action)
    assert others > 1000


def test_unknown_required_witness_is_a_config_error() -> None:
    from model.status import ConfigError

    with pytest.raises(ConfigError, match="unknown witness 'Nope'"):
        bfs(replace(LONE, required_witnesses=("Nope",)))


def test_walk_cut_by_its_budget_is_inconclusive() -> None:
    result = walk(PIN_JOIN, seed=0, walks=50, max_steps=40, budget_seconds=0.0)
    assert result.result == "inconclusive"
    assert any("0 of 50 walks" in r for r in result.reasons)


def test_hypothesis_checks_convergence() -> None:
    # A liveness-only bug: the client never acknowledges, so nothing unsafe happens but
    # the group never converges. The Hypothesis engine must report it.
    from model.rules import DEFAULT_RULES

    def never_send(client, config):  # type: ignore[no-untyped-def]
        new, request = DEFAULT_RULES.client_build_heartbeat(client, config)
        return new, replace(request, topic_partitions=None) if request.member_epoch > 0 else request

    config = replace(
        PIN_JOIN, name="NEVER_ACK", rules=replace(DEFAULT_RULES, client_build_heartbeat=never_send)
    )
    outcome = run_hypothesis(config, seed=0, profile="ci")
    assert outcome.property == "Convergence"
    assert outcome.path is not None


def test_fair_schedules_sharing_a_memo_are_the_schedules_run_alone() -> None:
    # The BFS engines' schedules share a FairMemo (each state's answers computed once);
    # every schedule must stay what it is alone — converging or not, also while the memo
    # drops generations (a small limit) — and hand back the states a replay reaches.
    from invariants.liveness import FairMemo, fair_schedule
    from model.rules import DEFAULT_RULES

    def never_send(client, config):  # type: ignore[no-untyped-def]
        new, request = DEFAULT_RULES.client_build_heartbeat(client, config)
        return new, replace(request, topic_partitions=None) if request.member_epoch > 0 else request

    never_ack = replace(
        PIN_JOIN, name="NEVER_ACK", rules=replace(DEFAULT_RULES, client_build_heartbeat=never_send)
    )
    for config in (PIN_JOIN, never_ack):
        memo = FairMemo(limit=64)
        failed = 0
        for state in state_graph(config, max_states=300):
            reached: list[system.AnyState] = []
            alone = fair_schedule(state, config, 40)
            assert fair_schedule(state, config, 40, states=reached, memo=memo) == alone
            replayed = [state]
            for action in alone[0]:
                replayed.append(system.step(replayed[-1], action, config))
            assert reached == replayed[1:]
            failed += not alone[2]
        assert (failed > 0) == (config is never_ack)


def test_a_large_group_is_given_fair_steps_in_proportion_to_its_size() -> None:
    """Issue 42: under a fixed bound of 400 fair steps, a group of 300 members was a
    Convergence "violation" one step from its start; the fair schedule forms a group in
    about ten steps a member. 60 members take more than 400 steps and converge within
    the bound derived from the config."""
    from dataclasses import replace

    from invariants.check import Checker, check_fair_tail
    from invariants.liveness import (
        DEFAULT_BOUND,
        STEPS_PER_CLIENT,
        convergence_bound,
        fair_schedule,
    )
    from model import system
    from model.presets import preset

    base = preset("SMALL")
    clients = tuple(replace(base.clients[0], name=f"c{i}") for i in range(60))
    config = replace(base, name="SMALL60", clients=clients)
    assert convergence_bound(config) == 60 * STEPS_PER_CLIENT > DEFAULT_BOUND
    assert convergence_bound(config, 20) == 20  # a deliberately short schedule is kept
    assert convergence_bound(preset("SMALL")) == DEFAULT_BOUND
    taken, _, ok = fair_schedule(system.initial(config), config, DEFAULT_BOUND)
    assert ok
    assert DEFAULT_BOUND < len(taken) <= convergence_bound(config)
    _, violation, undecided = check_fair_tail(system.initial(config), config, Checker())
    assert violation is None
    assert undecided is None


def test_a_convergence_violation_is_claimed_only_when_shown() -> None:
    """Issue 42: a fair schedule cut by its bound shows nothing: the run is inconclusive
    and names the bound; a violation is claimed when a fair loop (or a stuck state) shows
    it, and its message says which."""
    from groupcheck.mutants import MUTANTS
    from invariants.liveness import fair_loop
    from model import system
    from model.presets import preset

    tiny = preset("TINY")
    cut = fair_loop(system.initial(tiny), tiny, 3)  # a bound the schedule must hit
    assert cut is not None
    assert not cut.shown
    assert cut.bound == 3
    out = bfs(tiny, max_states=2000, convergence_bound=3)
    assert out.result == "inconclusive", out
    assert any("its bound of 3 fair steps" in r for r in out.reasons), out.reasons
    walked = walk(tiny, seed=0, walks=5, max_steps=10, convergence_bound=3)
    assert walked.result == "inconclusive", walked
    assert any("its bound of 3 fair steps" in r for r in walked.reasons), walked.reasons

    looping = MUTANTS["reject-epoch-zero-rejoin"].mutated_config()
    out = bfs(looping, max_states=3000, stop_on="Convergence")
    assert out.result == "violation"
    assert out.property == "Convergence"
    assert "Shown: the fair schedule loops without converging" in (out.message or "")
    assert out.path is not None
    shown = fair_loop(out.path.final(), looping, 400)
    assert shown is not None
    assert shown.loop is not None
