"""BMC on a configuration's finite domains (invariants/z3/proof/bmc.py) and the state sets
it reaches against a Python breadth-first search (invariants/z3/proof/reachable.py).

Every bound here is a depth or a domain size, never seconds.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from groupcheck.mutants import MUTANTS
from invariants.z3.proof.bmc import (
    search_all,
    universe_of,
)
from invariants.z3.proof.reachable import Domain, compare, python_states, z3_states
from invariants.z3.proof.transition import Options
from model.presets import MUT2


def test_universe_of_a_config_is_its_clients_and_partitions() -> None:
    u = universe_of(MUT2)
    assert u.members == ("A", "B")
    assert u.partitions == (("foo", 0), ("foo", 1))
    crash = MUTANTS["bookkeeping-drops-pending"].config
    assert len(universe_of(crash).members) == len(crash.clients) + crash.max_restarts


def test_finite_bmc_of_the_reference_rules_finds_nothing() -> None:
    outcomes = search_all(
        ["NoDoubleMemberAssignment", "NoServerError", "OffsetCommitAtValidEpoch"],
        5,
        Options.of(MUT2),
        universe=universe_of(MUT2),
        group_epoch=0,
    )
    assert {g: o.status for g, o in outcomes.items()} == dict.fromkeys(outcomes, "ok")
    assert {o.depth for o in outcomes.values()} == {5}


@pytest.mark.parametrize(("members", "partitions", "depth"), [(2, 1, 2), (1, 2, 2), (1, 1, 3)])
def test_bmc_reaches_the_states_of_the_python_bfs(
    members: int, partitions: int, depth: int
) -> None:
    result = compare(Domain(members, partitions), depth, MUT2)
    assert result.only_z3 == frozenset()
    assert result.only_python == frozenset()
    # Not vacuous: the sets grow with the depth.
    assert len(result.z3) > len(z3_states(Domain(members, partitions), depth - 1))


def test_state_set_comparison_tells_a_broken_rule() -> None:
    """KAFKA-16147's bookkeeping: the Python coordinator under the mutant's rules reaches
    states the reference relation does not, and misses some it reaches; the relation's
    symbolic variant of the mutant reaches exactly the mutant's states."""
    mutant = MUTANTS["bookkeeping-drops-pending"]
    domain = Domain(2, 1)
    config = replace(MUT2, rules=mutant.rules)
    broken = python_states(domain, 3, config)
    reference = z3_states(domain, 3)
    assert broken - reference
    assert reference - broken
    assert compare(domain, 3, config, options=Options(variant=mutant.name)).equal
