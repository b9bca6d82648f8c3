"""Server assignors: the KIP-848 case studies, range co-partitioning, and properties over
random specs (validity, balance, stickiness, determinism)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.assignors import AssignmentSpec, MemberSubscription, get_assignor, subscription_type
from model.ids import Assignment, FrozenMap


def P(*parts: int, topic: str = "foo") -> Assignment:
    return frozenset((topic, p) for p in parts)


def spec(
    members: list[str],
    partitions: dict[str, int],
    previous: dict[str, Assignment] | None = None,
    subs: dict[str, set[str]] | None = None,
    instances: dict[str, str] | None = None,
) -> AssignmentSpec:
    subs = subs or {}
    instances = instances or {}
    return AssignmentSpec(
        members=tuple(
            MemberSubscription(m, instances.get(m), frozenset(subs.get(m, set(partitions))))
            for m in sorted(members)
        ),
        partitions_per_topic=FrozenMap(partitions),
        previous_target=FrozenMap(previous or {}),
    )


UNIFORM = get_assignor("uniform")
RANGE = get_assignor("range")


def test_uniform_reproduces_the_kip_848_case_studies() -> None:
    # Basic
    assert UNIFORM.assign(spec(["A"], {"foo": 3})) == {"A": P(0, 1, 2)}
    assert UNIFORM.assign(spec(["A", "B"], {"foo": 3}, {"A": P(0, 1, 2)})) == {
        "A": P(0, 1),
        "B": P(2),
    }
    assert UNIFORM.assign(spec(["A", "B", "C"], {"foo": 3}, {"A": P(0, 1), "B": P(2)})) == {
        "A": P(0),
        "B": P(2),
        "C": P(1),
    }
    # Incremental Revocation & Assignment
    prev = {"A": P(0, 1, 2), "B": P(3, 4, 5)}
    assert UNIFORM.assign(spec(["A", "B", "C"], {"foo": 6}, prev)) == {
        "A": P(0, 1),
        "B": P(3, 4),
        "C": P(2, 5),
    }
    # Member Failure
    prev = {"A": P(0, 1), "B": P(3, 4), "C": P(2, 5)}
    assert UNIFORM.assign(spec(["B", "C"], {"foo": 6}, prev)) == {"B": P(0, 3, 4), "C": P(1, 2, 5)}
    # Partition Added
    assert UNIFORM.assign(spec(["A", "B"], {"foo": 2}, {"A": P(0), "B": P()})) == {
        "A": P(0),
        "B": P(1),
    }


def test_uniform_never_moves_a_balanced_assignment() -> None:
    """KAFKA-18688: the member holding the extra partition may come later in member order."""
    prev = {"A": P(0), "B": P(1, 2)}
    assert UNIFORM.assign(spec(["A", "B"], {"foo": 3}, prev)) == prev


def test_range_co_partitions_and_orders_static_members_first() -> None:
    result = RANGE.assign(spec(["A", "B"], {"foo": 3, "bar": 3}))
    assert result["A"] == P(0, 1) | P(0, 1, topic="bar")
    assert result["B"] == P(2) | P(2, topic="bar")
    static_first = RANGE.assign(spec(["A", "B"], {"foo": 3}, instances={"B": "b"}))
    assert static_first == {"B": P(0, 1), "A": P(2)}


def test_unknown_assignor_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match=r"known: uniform, range"):
        get_assignor("sticky")


@st.composite
def specs(draw: st.DrawFn) -> AssignmentSpec:
    topics = {f"t{i}": draw(st.integers(0, 6)) for i in range(draw(st.integers(1, 3)))}
    names = [f"m{i}" for i in range(draw(st.integers(1, 5)))]
    subs = {
        m: set(draw(st.lists(st.sampled_from(sorted(topics)), min_size=1, unique=True)))
        for m in names
    }
    if draw(st.booleans()):
        same = set(topics)
        subs = dict.fromkeys(names, same)
    all_parts = [(t, p) for t, n in topics.items() for p in range(n + 1)]
    previous = {
        m: frozenset(draw(st.lists(st.sampled_from(all_parts), unique=True, max_size=6)))
        for m in [*names, "gone"]
        if draw(st.booleans())
    }
    return spec(names, topics, previous, subs)


def _check_valid(s: AssignmentSpec, result: dict[str, Assignment]) -> None:
    assert set(result) == {m.member_id for m in s.members}
    owner: dict[tuple[str, int], str] = {}
    subs = {m.member_id: m.subscribed_topic_ids for m in s.members}
    for m, parts in result.items():
        for tp in parts:
            assert tp not in owner, f"{tp} assigned twice"
            owner[tp] = m
            assert tp[0] in subs[m], f"{tp} given to {m}, not subscribed"
            assert tp[1] < s.partitions_per_topic[tp[0]]
    subscribed = set().union(*subs.values())
    for t, n in s.partitions_per_topic.items():
        if t in subscribed:
            for p in range(n):
                assert (t, p) in owner, f"{(t, p)} unassigned"


@given(specs())
def test_assignors_are_valid_and_deterministic(s: AssignmentSpec) -> None:
    for assignor in (UNIFORM, RANGE):
        first = assignor.assign(s)
        _check_valid(s, first)
        assert assignor.assign(s) == first


@given(specs())
def test_uniform_balance_and_stickiness(s: AssignmentSpec) -> None:
    result = UNIFORM.assign(s)
    if subscription_type(s) == "HOMOGENEOUS":
        sizes = [len(p) for p in result.values()]
        assert max(sizes) - min(sizes) <= 1
    # Re-running on its own output changes nothing (a fixpoint: sticky and stable).
    again = AssignmentSpec(s.members, s.partitions_per_topic, FrozenMap(result))
    assert UNIFORM.assign(again) == result
