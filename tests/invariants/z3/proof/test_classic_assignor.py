"""The symbolic leader assignor (invariants/z3/proof/classic_assignor.py) against the model's
leader (``model.classic.client.leader_assignment`` over ``model.classic.assignors``): on
seeded generated inputs the model's assignment satisfies the relation, each assignor-rule
mutant's satisfies its variant and some input shows it refused by the reference relation.
Bounded by the number of inputs, never by seconds."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
import z3

from groupcheck.mutants import MUTANTS
from groupcheck.mutants.catalogue import sticky_without_generation
from invariants.z3.proof.classic_assignor import (
    PROTOCOLS,
    VARIANTS,
    LeaderInputs,
    LeaderInputsValue,
    LeaderOutput,
    MemberInput,
    cooperative_check_fails,
    judge,
    leader_assignment,
    outputs,
    owners_value,
    run,
    well_formed,
)
from invariants.z3.proof.state import Universe
from model.classic.assignors import Subscription, arbitrate_claims, sticky_assign
from model.config import Config
from model.ids import EMPTY
from model.presets import PRESETS
from model.rules import DEFAULT_RULES

REFERENCE = replace(PRESETS["MUTC_COOPERATIVE"], rules=DEFAULT_RULES)
INPUTS = 24
"""Generated inputs per test."""


def generate(seed: int, count: int = INPUTS) -> list[LeaderInputsValue]:
    """``count`` leader inputs: 2-4 members, 1-6 partitions over one or two topics, equal
    subscriptions more often than not, random claims (on any partition) at random
    generations below the group's (-1 included): conflicting, stale and unsubscribed claims
    all occur."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        names = ["t0", "t1"][: rng.randint(1, 2)]
        total = rng.randint(len(names), 6)
        first = total if len(names) == 1 else rng.randint(1, total - 1)
        topics = tuple(zip(names, (first, total - first)[: len(names)], strict=True))
        partitions = [(t, k) for t, n in topics for k in range(n)]
        generation = rng.randint(2, 5)
        equal = rng.random() < 0.6
        members = tuple(
            MemberInput(
                member_id=f"m{j}",
                topics=frozenset(names if equal else rng.sample(names, rng.randint(1, len(names)))),
                claimed=frozenset(p for p in partitions if rng.random() < 0.4),
                generation=rng.choice([-1, *range(max(0, generation - 3), generation)]),
            )
            for j in range(rng.randint(2, 4))
        )
        out.append(LeaderInputsValue(rng.choice(PROTOCOLS), generation, topics, members))
    return out


def subscriptions(inputs: LeaderInputsValue) -> dict[str, Subscription]:
    return {
        m.member_id: Subscription(m.member_id, None, m.topics, m.claimed, m.generation)
        for m in inputs.members
    }


def mutated(name: str) -> Config:
    return MUTANTS[name].mutated_config()


def test_the_inputs_cover_conflicting_and_stale_claims() -> None:
    inputs = generate(1)
    assert {i.protocol for i in inputs} == set(PROTOCOLS)
    assert any(len({m.topics for m in i.members}) > 1 for i in inputs)

    def conflicts(i: LeaderInputsValue, same: bool) -> bool:
        return any(
            p in a.claimed & b.claimed and (a.generation == b.generation) == same
            for a in i.members
            for b in i.members
            if a.member_id < b.member_id
            for p in i.partitions()
        )

    assert any(conflicts(i, same=True) for i in inputs)
    assert any(conflicts(i, same=False) for i in inputs)


def test_the_model_leader_satisfies_the_reference_relation() -> None:
    for inputs in generate(1, 3 * INPUTS):
        out = run(inputs, REFERENCE)
        assert out is not None
        assert judge(inputs, out).allowed, (inputs, out)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_each_mutant_satisfies_its_variant_and_the_reference_refuses_it(name: str) -> None:
    refused: list[tuple[str, ...]] = []
    for inputs in generate(2):
        out = run(inputs, mutated(name))
        assert judge(inputs, out, name).allowed, (name, inputs, out)
        verdict = judge(inputs, out)
        if not verdict.allowed:
            assert verdict.refused_by
            refused.append(verdict.refused_by)
    assert refused, f"no generated input makes {name} observable"


def test_the_variants_are_assignor_rule_mutants_of_the_catalogue() -> None:
    assert set(VARIANTS) <= set(MUTANTS)
    assert {MUTANTS[v].field for v in VARIANTS} == {
        "classic_arbitrate_claims",
        "classic_leader_assignment",
    }
    with pytest.raises(ValueError, match="no symbolic assignor variant"):
        judge(generate(1, 1)[0], None, "revoke-without-waiting")


def test_claim_arbitration_is_the_model_rule() -> None:
    """The previous owners are a term of the inputs, equal to the claims rule's verdict:
    Kafka's (``arbitrate_claims``), KAFKA-7026's and none; highest-generation-claims-only
    arbitrates the claims of the members at the highest generation."""
    for inputs in generate(3):
        subs = subscriptions(inputs)
        parts = frozenset(inputs.partitions())
        assert owners_value(inputs) == arbitrate_claims(subs, parts)
        assert owners_value(inputs, "sticky-without-generation") == sticky_without_generation(
            subs, parts
        )
        assert owners_value(inputs, "sticky-forgets-ownership") == dict.fromkeys(subs, EMPTY)
        top = max(m.generation for m in inputs.members)
        erased = {
            mid: s if s.generation == top else replace(s, owned_partitions=EMPTY)
            for mid, s in subs.items()
        }
        expected = arbitrate_claims(erased, parts)
        assert owners_value(inputs, "highest-generation-claims-only") == expected


def test_withholding_is_the_model_rule_given_the_computed_assignment() -> None:
    """With the assignor's result before ``adjustAssignment`` fixed to the model's
    ``sticky_assign``, the model leader's assignment is the only one the relation allows."""
    checked = 0
    for inputs in generate(4):
        computed = sticky_assign(
            partitions_per_topic=dict(inputs.topics), subscriptions=subscriptions(inputs)
        )
        assert outputs(inputs, computed=computed) == [run(inputs, REFERENCE)]
        checked += inputs.protocol == "cooperative-sticky"
    assert checked


def test_the_reference_never_fails_the_cooperative_check() -> None:
    """On every input of three members and three partitions (symbolic, not generated), a
    cooperative-sticky assignment the relation allows passes
    ``validateCooperativeAssignment``; under validate-stale-claims the leader can fail."""
    u = Universe.of(["a", "b", "c"], [("t", 0), ("t", 1), ("t", 2)])
    i = LeaderInputs.fresh("all", u)
    for variant, expected in ((None, z3.unsat), ("validate-stale-claims", z3.sat)):
        o = LeaderOutput.fresh(f"all.{variant}")
        s = z3.Solver()
        s.add(*u.axioms(), *well_formed(i), i.cooperative, leader_assignment(i, o, variant))
        assert s.check() == z3.sat, variant
        s.add(z3.Or(o.failed, cooperative_check_fails(i, o.assigned)))
        assert s.check() == expected, variant


def test_a_kept_duplicate_moved_by_the_balancing() -> None:
    """sticky-without-generation, differing subscriptions: m0 and m1 both keep t0-1; the
    balancing moves m1's copy to m2, which never claimed it. Its variant allows the result
    (two holders, two claimants); the reference refuses it for the duplicate."""
    inputs = LeaderInputsValue(
        protocol="sticky",
        generation=2,
        topics=(("t0", 2), ("t1", 2)),
        members=(
            MemberInput("m0", frozenset({"t0"}), frozenset({("t0", 1), ("t1", 1)}), -1),
            MemberInput("m1", frozenset({"t0", "t1"}), frozenset({("t0", 1), ("t1", 1)}), 1),
            MemberInput("m2", frozenset({"t0"}), frozenset({("t1", 0)}), 1),
            MemberInput("m3", frozenset({"t0"}), frozenset({("t0", 0)}), -1),
        ),
    )
    name = "sticky-without-generation"
    out = run(inputs, mutated(name))
    assert out is not None
    assert {m for m, ps in out.items() if ("t0", 1) in ps} == {"m0", "m2"}
    assert judge(inputs, out, name).allowed
    assert "at most once" in judge(inputs, out).refused_by


def test_the_relation_reads_the_assignor_of_configs_that_state_one() -> None:
    """The classic relation constrains the leader's SyncGroup assignment by this relation
    where every client lists one stated assignor alone on KIP-429 byte code and is bounced
    to no other (``classic_transition.stated_assignor``); elsewhere it stays free."""
    from invariants.z3.proof.classic_transition import stated_assignor
    from model.presets import PRESETS

    expected = {
        "MUTC_STICKY": "sticky",
        "MUTC_LEAVE": "cooperative-sticky",
        "CLASSIC_STATIC": "cooperative-sticky",
        "CLASSIC_EAGER": None,
        "UPGRADE_ONE_BOUNCE": None,
        "UPGRADE_TWO_BOUNCES": None,
    }
    assert {name: stated_assignor(PRESETS[name]) for name in expected} == expected
