"""Z3's minimum of partition moves (invariants/z3/optimal.py) against brute force, and the
``groupcheck optimality`` command."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from groupcheck import optimality
from groupcheck.cli import main
from invariants.z3 import optimal
from model.ids import TopicPartition


def _brute_force(previous, subs, partitions) -> int:
    """The fewest moves over every valid, balanced assignment, by enumeration."""
    owners = optimal.subscribers(subs, partitions)
    parts = [tp for tp in optimal.partitions_of(partitions) if owners[tp[0]]]
    best = None
    for choice in itertools.product(*(owners[tp[0]] for tp in parts)):
        assignment: dict[str, set[TopicPartition]] = {m: set() for m in subs}
        for tp, m in zip(parts, choice, strict=True):
            assignment[m].add(tp)
        frozen = {m: frozenset(ps) for m, ps in assignment.items()}
        if not optimal.is_balanced(frozen, subs, partitions):
            continue
        count = optimal.moves(previous, frozen, subs, partitions)
        best = count if best is None else min(best, count)
    assert best is not None, "a balanced assignment always exists"
    return best


def _random_instance(rng: random.Random):
    topics = [f"t{i}" for i in range(rng.randint(1, 2))]
    partitions = {t: rng.randint(1, 3) for t in topics}
    members = [f"m{i}" for i in range(rng.randint(1, 3))]
    subs = {m: frozenset(rng.sample(topics, rng.randint(1, len(topics)))) for m in members}
    # Any previous target, even an unbalanced one or one naming a member that left.
    holders = [*members, "gone"]
    previous: dict[str, set[TopicPartition]] = {}
    for tp in optimal.partitions_of(partitions):
        previous.setdefault(rng.choice(holders), set()).add(tp)
    return {m: frozenset(ps) for m, ps in previous.items()}, subs, partitions


@pytest.mark.parametrize("seed", range(60))
def test_minimum_equals_brute_force(seed: int) -> None:
    previous, subs, partitions = _random_instance(random.Random(seed))
    best = optimal.minimal_moves(previous, subs, partitions)
    assert best.status == "optimal"
    assert best.moves == _brute_force(previous, subs, partitions)
    assert best.assignment is not None
    assert optimal.is_valid(best.assignment, subs, partitions)


def test_balance_and_validity_predicates() -> None:
    subs = {"a": frozenset({"t"}), "b": frozenset({"t"})}
    parts = {"t": 3}
    lopsided = {"a": frozenset({("t", 0), ("t", 1), ("t", 2)}), "b": frozenset()}
    assert optimal.is_valid(lopsided, subs, parts)
    assert not optimal.is_balanced(lopsided, subs, parts)
    even = {"a": frozenset({("t", 0), ("t", 1)}), "b": frozenset({("t", 2)})}
    assert optimal.is_balanced(even, subs, parts)
    twice = {"a": frozenset({("t", 0), ("t", 1), ("t", 2)}), "b": frozenset({("t", 2)})}
    assert not optimal.is_valid(twice, subs, parts)
    # Only subscribers of a topic count when judging balance.
    hetero = {"a": frozenset({"t"}), "b": frozenset({"u"})}
    assert optimal.is_balanced(lopsided, hetero, {"t": 3, "u": 0})


def test_balanced_group_gains_a_member_moves_exactly_the_minimum() -> None:
    """KAFKA-18688's shape: the uniform assignor moves nothing it need not move."""
    case = next(c for c in optimality.adversarial_cases() if c.name == "balanced-extra-later")
    row = optimality.run_case(case, timeout_ms=30_000)
    assert row.status == "optimal"
    assert row.uniform_balanced
    assert row.uniform_moves == row.minimal_moves


def test_a_balanced_uniform_result_never_beats_the_minimum() -> None:
    rows = [optimality.run_case(c, 30_000) for c in optimality.random_cases(7, 25)]
    assert all(r.status == "optimal" for r in rows)
    for r in rows:
        if r.uniform_balanced:
            assert r.minimal_moves is not None
            assert r.uniform_moves >= r.minimal_moves, r


def test_command_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimality", "--cases", "3", "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["result"] == "ok"
    assert len(out["rows"]) == len(optimality.adversarial_cases()) + 3


def test_unknown_answers_make_the_run_inconclusive(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        optimal, "minimal_moves", lambda *a, **k: optimal.Optimum("unknown", reason="timeout")
    )
    assert main(["optimality", "--cases", "0", "--quiet"]) == 3
    assert "inconclusive" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv", [["--cases", "-1"], ["--max-members", "1"], ["--max-partitions", "65"]]
)
def test_bad_options_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimality", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
