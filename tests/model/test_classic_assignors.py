"""Classic-protocol client assignors (model/classic/assignors.py): Kafka's examples, KIP-341
claim arbitration (KAFKA-7026), KIP-429 withholding, and properties over random groups
(validity, coverage, balance, stickiness, determinism)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.classic.assignors import (
    CLIENT_ASSIGNORS,
    COOPERATIVE_ASSIGNORS,
    Subscription,
    all_subscriptions_equal,
    arbitrate_claims,
    assign,
    supported_protocols,
    validate_cooperative_assignment,
    withhold_moved_partitions,
)
from model.ids import EMPTY, Assignment, FrozenMap, TopicPartition
from model.status import ConfigError


def P(*parts: int, topic: str = "t") -> Assignment:
    return frozenset((topic, p) for p in parts)


def sub(
    member: str,
    *,
    topics: set[str] | None = None,
    owned: Assignment = EMPTY,
    generation: int = -1,
    instance: str | None = None,
) -> Subscription:
    return Subscription(
        member_id=member,
        instance_id=instance,
        topics=frozenset(topics or {"t"}),
        owned_partitions=owned,
        generation=generation,
    )


def group(*subs: Subscription) -> dict[str, Subscription]:
    return {s.member_id: s for s in subs}


def partitions_of(counts: Mapping[str, int]) -> frozenset[TopicPartition]:
    return frozenset((t, p) for t, n in counts.items() for p in range(n))


# --------------------------------------------------------------------------- examples


def test_round_robin_reproduces_the_kafka_javadoc_examples() -> None:
    # RoundRobinAssignor's class comment: equal subscriptions, then differing ones.
    both = {"t0", "t1"}
    result = assign(
        "roundrobin",
        partitions_per_topic={"t0": 3, "t1": 3},
        subscriptions=group(sub("C0", topics=both), sub("C1", topics=both)),
    )
    assert result == {
        "C0": P(0, 2, topic="t0") | P(1, topic="t1"),
        "C1": P(1, topic="t0") | P(0, 2, topic="t1"),
    }
    result = assign(
        "roundrobin",
        partitions_per_topic={"t0": 1, "t1": 2, "t2": 3},
        subscriptions=group(
            sub("C0", topics={"t0"}),
            sub("C1", topics={"t0", "t1"}),
            sub("C2", topics={"t0", "t1", "t2"}),
        ),
    )
    assert result == {
        "C0": P(0, topic="t0"),
        "C1": P(0, topic="t1"),
        "C2": P(1, topic="t1") | P(0, 1, 2, topic="t2"),
    }


def test_range_cuts_contiguous_ranges_static_members_first() -> None:
    result = assign(
        "range",
        partitions_per_topic={"t": 7, "u": 2},
        subscriptions=group(sub("A", topics={"t", "u"}), sub("B", topics={"t", "u"}), sub("C")),
    )
    assert result == {
        "A": P(0, 1, 2) | P(0, topic="u"),
        "B": P(3, 4) | P(1, topic="u"),
        "C": P(5, 6),
    }
    # MemberInfo order: static members (by group.instance.id) before dynamic ones.
    result = assign(
        "range",
        partitions_per_topic={"t": 3},
        subscriptions=group(sub("A"), sub("B", instance="z"), sub("C", instance="y")),
    )
    assert result == {"C": P(0), "B": P(1), "A": P(2)}


def test_round_robin_uses_member_info_order_and_skips_unknown_topics() -> None:
    result = assign(
        "roundrobin",
        partitions_per_topic={"t": 4, "other": 5},
        subscriptions=group(sub("A"), sub("B", instance="b", topics={"t", "missing"})),
    )
    assert result == {"B": P(0, 2), "A": P(1, 3)}


def test_sticky_keeps_the_lowest_owned_partitions_and_cooperative_withholds_the_rest() -> None:
    subs = group(sub("A", owned=P(0, 1, 2, 3, 4, 5), generation=3), sub("B"), sub("C"))
    sticky = assign("sticky", partitions_per_topic={"t": 6}, subscriptions=subs)
    # assignRoundRobin deals the unowned partitions to B and C in turn.
    assert sticky == {"A": P(0, 1), "B": P(2, 4), "C": P(3, 5)}
    coop = assign("cooperative-sticky", partitions_per_topic={"t": 6}, subscriptions=subs)
    assert coop == {"A": P(0, 1), "B": EMPTY, "C": EMPTY}
    assert validate_cooperative_assignment(subs, coop) == EMPTY
    # The follow-up rebalance, after A revoked: everything lands, nothing moves again.
    after = group(sub("A", owned=P(0, 1), generation=4), sub("B", generation=4), sub("C"))
    again = assign("cooperative-sticky", partitions_per_topic={"t": 6}, subscriptions=after)
    assert again == sticky


def test_without_withholding_cooperative_sticky_revokes_and_assigns_in_one_round() -> None:
    subs = group(sub("A", owned=P(0, 1, 2, 3), generation=1), sub("B", generation=1))
    bad = assign(
        "cooperative-sticky", partitions_per_topic={"t": 4}, subscriptions=subs, withhold=False
    )
    assert bad == {"A": P(0, 1), "B": P(2, 3)}
    assert validate_cooperative_assignment(subs, bad) == P(2, 3)
    good = assign("cooperative-sticky", partitions_per_topic={"t": 4}, subscriptions=subs)
    assert good == {"A": P(0, 1), "B": EMPTY}
    assert validate_cooperative_assignment(subs, good) == EMPTY


def test_kafka_7026_stale_claims_lose_to_the_current_generation() -> None:
    # A left briefly and rejoins claiming its generation-1 assignment; B and C own the
    # partitions at generation 2 (KIP-341 Motivation).
    subs = group(
        sub("A", owned=P(0, 3), generation=1),
        sub("B", owned=P(0, 1, 4), generation=2),
        sub("C", owned=P(2, 3, 5), generation=2),
    )
    kept = arbitrate_claims(subs, P(0, 1, 2, 3, 4, 5))
    assert kept == {"A": EMPTY, "B": P(0, 1, 4), "C": P(2, 3, 5)}
    for name in ("sticky", "cooperative-sticky"):
        result = assign(name, partitions_per_topic={"t": 6}, subscriptions=subs)
        owners = [m for m in result for tp in result[m]]
        assert len(owners) == len(set().union(*result.values())), "a partition assigned twice"


def test_arbitration_rules() -> None:
    parts = P(0, 1, 2, 3)
    # A unique claim stays, whatever its generation.
    subs = group(sub("A", owned=P(0), generation=1), sub("B", owned=P(1), generation=5))
    assert arbitrate_claims(subs, parts) == {"A": P(0), "B": P(1)}
    # The highest generation wins; an absent marker (-1) is the lowest.
    subs = group(
        sub("A", owned=P(0, 1), generation=-1),
        sub("B", owned=P(0), generation=0),
        sub("C", owned=P(1), generation=7),
    )
    assert arbitrate_claims(subs, parts) == {"A": EMPTY, "B": P(0), "C": P(1)}
    # A tie at the highest generation drops the partition from every claimant, even when a
    # lower generation also claims it.
    subs = group(
        sub("A", owned=P(0, 1), generation=2),
        sub("B", owned=P(0, 2), generation=2),
        sub("C", owned=P(0), generation=1),
    )
    assert arbitrate_claims(subs, parts) == {"A": P(1), "B": P(2), "C": EMPTY}
    # Claims on a missing partition or an unsubscribed topic take no part.
    subs = group(
        sub("A", owned=P(9) | P(0, topic="u"), generation=1),
        sub("B", topics={"t", "u"}, owned=P(0, topic="u"), generation=0),
    )
    assert arbitrate_claims(subs, parts | P(0, topic="u")) == {"A": EMPTY, "B": P(0, topic="u")}


def test_equal_generation_double_claim_is_withheld_from_both_claimants() -> None:
    subs = group(
        sub("A", owned=P(0, 1), generation=3),
        sub("B", owned=P(1, 2), generation=3),
        sub("C"),
    )
    assert arbitrate_claims(subs, P(0, 1, 2)) == {"A": P(0), "B": P(2), "C": EMPTY}
    sticky = assign("sticky", partitions_per_topic={"t": 3}, subscriptions=subs)
    assert sticky == {"A": P(0), "B": P(2), "C": P(1)}
    coop = assign("cooperative-sticky", partitions_per_topic={"t": 3}, subscriptions=subs)
    assert coop == {"A": P(0), "B": P(2), "C": EMPTY}
    assert validate_cooperative_assignment(subs, coop) == EMPTY


def test_an_injected_claims_rule_that_skips_arbitration_double_assigns() -> None:
    def keep_every_claim(
        subscriptions: Mapping[str, Subscription], partitions: frozenset[TopicPartition]
    ) -> dict[str, Assignment]:
        return {m: s.owned_partitions & partitions for m, s in subscriptions.items()}

    subs = group(sub("A", owned=P(0, 1), generation=1), sub("B", owned=P(0, 2), generation=2))
    for name in ("sticky", "cooperative-sticky"):
        result = assign(
            name, partitions_per_topic={"t": 4}, subscriptions=subs, claims=keep_every_claim
        )
        assert ("t", 0) in result["A"] & result["B"]


def test_general_case_balances_within_subscriptions() -> None:
    subs = group(
        sub("A", topics={"t", "u"}, owned=P(0, 1, 2, 3), generation=1),
        sub("B", topics={"t"}),
        sub("C", topics={"u"}),
    )
    assert not all_subscriptions_equal(subs)
    result = assign("sticky", partitions_per_topic={"t": 4, "u": 2}, subscriptions=subs)
    assert sorted(len(result[m]) for m in result) == [2, 2, 2]
    assert result["C"] == P(0, 1, topic="u")


def test_unknown_names_and_protocols() -> None:
    with pytest.raises(ConfigError, match="known: range, roundrobin, sticky, cooperative-sticky"):
        assign("uniform", partitions_per_topic={}, subscriptions={})
    with pytest.raises(ConfigError, match="member_id"):
        assign("range", partitions_per_topic={"t": 1}, subscriptions={"X": sub("A")})
    assert supported_protocols("cooperative-sticky") == ("EAGER", "COOPERATIVE")
    assert all(supported_protocols(n) == ("EAGER",) for n in ("range", "roundrobin", "sticky"))
    assert sorted(COOPERATIVE_ASSIGNORS) == ["cooperative-sticky"]
    with pytest.raises(ConfigError):
        supported_protocols("uniform")


# --------------------------------------------------------------------------- properties


@dataclass(frozen=True)
class Case:
    partitions_per_topic: dict[str, int]
    subscriptions: dict[str, Subscription]

    def run(self, name: str, *, withhold: bool = True) -> FrozenMap[str, Assignment]:
        return assign(
            name,
            partitions_per_topic=self.partitions_per_topic,
            subscriptions=self.subscriptions,
            withhold=withhold,
        )

    @property
    def subscribed(self) -> dict[str, frozenset[TopicPartition]]:
        return {
            m: frozenset(
                (t, p) for t in s.topics for p in range(self.partitions_per_topic.get(t, 0))
            )
            for m, s in self.subscriptions.items()
        }

    @property
    def arbitrated(self) -> dict[str, Assignment]:
        return arbitrate_claims(self.subscriptions, partitions_of(self.partitions_per_topic))


@st.composite
def cases(draw: st.DrawFn, *, consistent: bool = False) -> Case:
    """1–5 members, 1–3 topics of 0–6 partitions, random (or equal) subscriptions, random
    claims (nonexistent partitions, unsubscribed topics, double claims, stale generations);
    ``consistent``: no partition claimed twice. The subscriptions in a random order."""
    counts = {f"t{i}": draw(st.integers(0, 6)) for i in range(draw(st.integers(1, 3)))}
    names = [f"m{i}" for i in range(draw(st.integers(1, 5)))]
    equal = draw(st.booleans())
    topics = sorted(counts)
    claimable = [(t, p) for t in topics for p in range(counts[t] + 1)]
    claimed: set[TopicPartition] = set()
    subs: list[Subscription] = []
    for name in names:
        subscribed = (
            set(topics)
            if equal
            else set(draw(st.lists(st.sampled_from(topics), min_size=1, unique=True)))
        )
        owned = set(draw(st.lists(st.sampled_from(claimable), unique=True, max_size=8)))
        if consistent:
            owned -= claimed
            claimed |= owned
        subs.append(
            Subscription(
                member_id=name,
                instance_id=draw(st.none() | st.sampled_from(["i0", "i1", "i2", "i3", "i4"])),
                topics=frozenset(subscribed),
                owned_partitions=frozenset(owned),
                generation=draw(st.integers(-1, 3)),
            )
        )
    instances = [s.instance_id for s in subs if s.instance_id is not None]
    if len(instances) != len(set(instances)):  # group.instance.id is unique in a group
        subs = [replace(s, instance_id=None) for s in subs]
    order = draw(st.permutations(subs))
    return Case(partitions_per_topic=counts, subscriptions={s.member_id: s for s in order})


def _check_valid(case: Case, result: Mapping[str, Assignment]) -> None:
    assert set(result) == set(case.subscriptions)
    seen: set[TopicPartition] = set()
    for member, parts in result.items():
        assert not parts & seen, f"{sorted(parts & seen)} assigned twice"
        seen |= parts
        assert parts <= case.subscribed[member], f"{member} got what it cannot have"


def _spread(sizes: list[int]) -> int:
    return max(sizes) - min(sizes)


@given(cases())
def test_assignments_are_valid_and_cover_every_subscribed_partition(case: Case) -> None:
    everything = frozenset().union(*case.subscribed.values())
    for name in CLIENT_ASSIGNORS:
        result = case.run(name)
        _check_valid(case, result)
        assigned = frozenset().union(*result.values())
        if name in COOPERATIVE_ASSIGNORS:
            withheld = everything - assigned
            # Only a partition that moves while another member still claims it is withheld.
            full = case.run(name, withhold=False)
            assert withheld == frozenset().union(*full.values()) - assigned
            for member, parts in full.items():
                for tp in parts - result[member]:
                    assert tp not in case.arbitrated[member]
                    assert any(
                        tp in s.owned_partitions
                        for m, s in case.subscriptions.items()
                        if m != member
                    )
        else:
            assert assigned == everything, f"{name} left {sorted(everything - assigned)}"


@given(cases())
def test_cooperative_sticky_never_revokes_and_assigns_a_partition_in_one_round(
    case: Case,
) -> None:
    result = case.run("cooperative-sticky")
    assert validate_cooperative_assignment(case.subscriptions, result) == EMPTY


@given(cases(consistent=True))
def test_consistent_claims_pass_the_cooperative_validation(case: Case) -> None:
    result = case.run("cooperative-sticky")
    assert validate_cooperative_assignment(case.subscriptions, result) == EMPTY
    # withhold_moved_partitions on its own (re-arbitrating) gives the same result.
    full = case.run("cooperative-sticky", withhold=False)
    assert withhold_moved_partitions(full, case.subscriptions) == result


@given(cases())
def test_balance_with_equal_subscriptions(case: Case) -> None:
    if not all_subscriptions_equal(case.subscriptions):
        return
    topics = next(iter(case.subscriptions.values())).topics
    for topic, count in case.partitions_per_topic.items():
        if topic not in topics:
            continue
        per_topic = [sum(tp[0] == topic for tp in parts) for parts in case.run("range").values()]
        assert _spread(per_topic) <= 1, topic
        assert sum(per_topic) == count
    for name in ("roundrobin", "sticky"):
        assert _spread([len(p) for p in case.run(name).values()]) <= 1, name
    coop = case.run("cooperative-sticky")
    if coop == case.run("cooperative-sticky", withhold=False):
        assert _spread([len(p) for p in coop.values()]) <= 1


@given(cases())
def test_general_sticky_leaves_no_balancing_move(case: Case) -> None:
    """AbstractStickyAssignor's isBalanced: no partition could go to another subscriber of
    its topic that has at least two partitions fewer."""
    result = case.run("sticky")
    for member, parts in result.items():
        for tp in parts:
            for other, sub_ in case.subscriptions.items():
                if other != member and tp[0] in sub_.topics:
                    assert len(result[other]) + 2 > len(parts), (tp, member, other)


@given(cases())
def test_stickiness_with_equal_subscriptions(case: Case) -> None:
    if not all_subscriptions_equal(case.subscriptions):
        return
    total = len(frozenset().union(*case.subscribed.values()))
    floor_quota = total // len(case.subscriptions)
    arbitrated = case.arbitrated
    for name in ("sticky", "cooperative-sticky"):
        result = case.run(name)
        for member, claims in arbitrated.items():
            kept = result[member] & claims
            assert len(kept) >= min(len(claims), floor_quota), (name, member)
            if len(claims) <= floor_quota:
                assert kept == claims, (name, member)


@given(cases())
def test_cooperative_sticky_settles_in_the_follow_up_rebalance(case: Case) -> None:
    """KIP-429: after the members revoke what the first round withheld, the second round
    withholds nothing and is balanced (equal subscriptions)."""
    if not all_subscriptions_equal(case.subscriptions):
        return
    first = case.run("cooperative-sticky")
    top = max(s.generation for s in case.subscriptions.values()) + 1
    second = Case(
        partitions_per_topic=case.partitions_per_topic,
        subscriptions={
            m: replace(s, owned_partitions=first[m], generation=top)
            for m, s in case.subscriptions.items()
        },
    )
    result = second.run("cooperative-sticky")
    assert result == second.run("cooperative-sticky", withhold=False)
    assert all(first[m] <= result[m] for m in result)
    assert _spread([len(p) for p in result.values()]) <= 1


@given(cases(), st.data())
def test_assignors_are_deterministic(case: Case, data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(list(case.subscriptions.items())))
    permuted = Case(partitions_per_topic=case.partitions_per_topic, subscriptions=dict(shuffled))
    for name in CLIENT_ASSIGNORS:
        first = case.run(name)
        assert case.run(name) == first
        assert permuted.run(name) == first
        assert list(first) == sorted(first)


def test_general_balancing_moves_the_most_constrained_topics_first() -> None:
    """``StickyAssignorTest.testAssignmentWithMultipleGenerations2`` (subscriptions differ,
    round 3): one member owns all 12 partitions; the balancing hands the partitions only
    some members can take to them first, so the answer is fully balanced (4, 4, 4)."""
    from model.classic.assignors import general_assign

    everything = frozenset((t, p) for t in ("topic", "topic2", "topic3") for p in range(4))
    subs = {
        "consumer1": Subscription("consumer1", None, frozenset({"topic"})),
        "consumer2": Subscription("consumer2", None, frozenset({"topic", "topic2", "topic3"})),
        "consumer3": Subscription("consumer3", None, frozenset({"topic", "topic2"})),
    }
    result = general_assign(
        partition_counts={"topic": 4, "topic2": 4, "topic3": 4},
        subscriptions=subs,
        owned={"consumer2": everything},
    )
    assert sorted(len(parts) for parts in result.values()) == [4, 4, 4]
    assert frozenset().union(*result.values()) == everything
