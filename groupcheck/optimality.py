"""``groupcheck optimality``: how many partitions the uniform assignor moves after a
change, against the fewest any balanced assignment must move (Z3,
``invariants.z3.optimal``).

Each case is a group before and after one change — a member joins or leaves, a member
changes its subscription, partitions are added, or the previous target came from another
assignor (``ChangeServerAssignor``). The previous target is what an assignor computed
before the change; the uniform assignor then computes the new target from it, exactly as
``TargetAssignmentBuilder`` hands it the previous target. A row compares the uniform
assignor's moves (revocations from members that stay) with Z3's proven minimum, and says
whether the uniform assignor's result is balanced at all.

Exit 0 when every case was decided by Z3, 3 (inconclusive) when Z3 answered unknown for
any, 2 on bad options. A uniform assignor that moves more than the minimum is a finding,
not a violation: balance-then-stickiness heuristics are allowed to be suboptimal.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from groupcheck import exitcodes
from groupcheck.argtypes import non_negative, positive
from groupcheck.cli import UsageError
from model.assignors import AssignmentSpec, MemberSubscription, get_assignor
from model.ids import FrozenMap, TopicPartition

MAX_CASES = 10_000
"""The most random cases one run takes."""
MAX_MEMBERS, MAX_TOPICS, MAX_PARTITIONS = 64, 16, 64
"""Bounds of ``--max-members``, ``--max-topics`` and ``--max-partitions``: beyond them a
single optimisation can run for minutes."""

Subs = dict[str, frozenset[str]]
Target = dict[str, frozenset[TopicPartition]]


@dataclass(frozen=True)
class Case:
    """A group before and after one change. ``previous_assignor`` computed the previous
    target (from an empty one) for ``before``; the uniform assignor computes the new target
    for ``after`` from it."""

    name: str
    kind: str
    before: Subs
    after: Subs
    partitions_before: dict[str, int]
    partitions_after: dict[str, int]
    previous_assignor: str = "uniform"


@dataclass(frozen=True)
class Row:
    """One case's result."""

    case: str
    kind: str
    members: int
    partitions: int
    subscriptions: str
    uniform_moves: int
    uniform_balanced: bool
    minimal_moves: int | None
    status: str
    reason: str
    seconds: float

    @property
    def excess(self) -> int | None:
        """Moves beyond the minimum (None when Z3 did not decide)."""
        return None if self.minimal_moves is None else self.uniform_moves - self.minimal_moves


def _spec(subs: Subs, partitions: Mapping[str, int], previous: Mapping[str, Any]) -> AssignmentSpec:
    members = tuple(MemberSubscription(m, None, subs[m]) for m in sorted(subs))
    return AssignmentSpec(members, FrozenMap(partitions), FrozenMap(previous))


def run_case(case: Case, timeout_ms: int) -> Row:
    """The uniform assignor and Z3's optimum on one case."""
    from invariants.z3 import optimal

    previous = get_assignor(case.previous_assignor).assign(
        _spec(case.before, case.partitions_before, {})
    )
    uniform = get_assignor("uniform").assign(_spec(case.after, case.partitions_after, previous))
    started = time.perf_counter()
    best = optimal.minimal_moves(previous, case.after, case.partitions_after, timeout_ms)
    seconds = time.perf_counter() - started
    homogeneous = len(set(case.after.values())) <= 1
    return Row(
        case=case.name,
        kind=case.kind,
        members=len(case.after),
        partitions=sum(case.partitions_after.values()),
        subscriptions="homogeneous" if homogeneous else "heterogeneous",
        uniform_moves=optimal.moves(previous, uniform, case.after, case.partitions_after),
        uniform_balanced=optimal.is_balanced(uniform, case.after, case.partitions_after),
        minimal_moves=best.moves,
        status=best.status,
        reason=best.reason,
        seconds=round(seconds, 3),
    )


def adversarial_cases() -> list[Case]:
    """Hand-made cases where stickiness and balance pull apart."""
    a, b, c = "a", "b", "c"
    every = frozenset({a, b})
    return [
        Case(
            "balanced-extra-later",
            "member joins",
            {"m1": every, "m2": every},
            {"m1": every, "m2": every, "m3": every},
            {a: 4, b: 3},
            {a: 4, b: 3},
        ),
        Case(
            "range-to-uniform",
            "assignor change",
            {"m1": every, "m2": every, "m3": every},
            {"m1": every, "m2": every, "m3": every},
            {a: 2, b: 2},
            {a: 2, b: 2},
            previous_assignor="range",
        ),
        Case(
            "chain-of-subscriptions",
            "member joins",
            {"m1": frozenset({a}), "m2": frozenset({a, b}), "m3": frozenset({b, c})},
            {
                "m1": frozenset({a}),
                "m2": frozenset({a, b}),
                "m3": frozenset({b, c}),
                "m4": frozenset({c}),
            },
            {a: 2, b: 4, c: 6},
            {a: 2, b: 4, c: 6},
        ),
        Case(
            "one-holder-then-three-join",
            "members join",
            {"m1": every},
            {"m1": every, "m2": every, "m3": every, "m4": every},
            {a: 5, b: 4},
            {a: 5, b: 4},
        ),
        Case(
            "leave-uneven-subscribers",
            "member leaves",
            {"m1": frozenset({a}), "m2": frozenset({a, b}), "m3": frozenset({b}), "m4": every},
            {"m1": frozenset({a}), "m2": frozenset({a, b}), "m3": frozenset({b})},
            {a: 6, b: 3},
            {a: 6, b: 3},
        ),
        Case(
            "partitions-added-heterogeneous",
            "partitions added",
            {"m1": frozenset({a}), "m2": every, "m3": frozenset({b})},
            {"m1": frozenset({a}), "m2": every, "m3": frozenset({b})},
            {a: 3, b: 3},
            {a: 3, b: 9},
        ),
        Case(
            "subscription-narrows",
            "subscription change",
            {"m1": every, "m2": every, "m3": every},
            {"m1": frozenset({a}), "m2": every, "m3": every},
            {a: 3, b: 6},
            {a: 3, b: 6},
        ),
    ]


@dataclass(frozen=True)
class Sizes:
    """Upper bounds of the random cases (each at least 1; members at least 2)."""

    members: int = 6
    topics: int = 3
    partitions: int = 6


def random_cases(seed: int, count: int, sizes: Sizes = Sizes()) -> Iterator[Case]:
    """Seeded random cases: 1..``sizes.topics`` topics of 1..``sizes.partitions``
    partitions, 2..``sizes.members`` members, homogeneous or heterogeneous subscriptions
    (half each), one change each."""
    rng = random.Random(seed)
    for index in range(count):
        topics = [f"t{i}" for i in range(rng.randint(1, sizes.topics))]
        partitions = {t: rng.randint(1, sizes.partitions) for t in topics}
        homogeneous = rng.random() < 0.5

        def subscription(
            topics: list[str] = topics, homogeneous: bool = homogeneous
        ) -> frozenset[str]:
            if homogeneous:
                return frozenset(topics)
            return frozenset(rng.sample(topics, rng.randint(1, len(topics))))

        before = {f"m{i}": subscription() for i in range(1, rng.randint(2, sizes.members) + 1)}
        after = dict(before)
        after_partitions = dict(partitions)
        kind = rng.choice(("member joins", "member leaves", "subscription change", "partitions"))
        if kind == "member joins":
            after[f"m{len(before) + 1}"] = subscription()
        elif kind == "member leaves":
            del after[rng.choice(sorted(after))]
        elif kind == "subscription change":
            member = rng.choice(sorted(after))
            after[member] = frozenset(rng.sample(topics, rng.randint(1, len(topics))))
        else:
            topic = rng.choice(topics)
            after_partitions[topic] += rng.randint(1, 4)
            kind = "partitions added"
        yield Case(f"random-{seed}-{index}", kind, before, after, partitions, after_partitions)


def register(sub: Any) -> None:
    """Add the ``optimality`` command."""
    p = sub.add_parser(
        "optimality",
        help="the uniform assignor's partition moves against Z3's proven minimum",
        description=(
            "For hand-made adversarial cases and seeded random ones (a member joins or "
            "leaves, a subscription changes, partitions are added, the assignor changes), "
            "compare the partitions the uniform assignor moves with the fewest moves any "
            "valid, balanced assignment needs (proved minimal with Z3). Exit 0 when Z3 "
            "decided every case, 3 when it answered unknown for any, 2 on bad options."
        ),
    )
    p.add_argument("--seed", type=non_negative, default=1, help="seed of the random cases")
    p.add_argument(
        "--cases", type=non_negative, default=40, help="random cases (default 40; 0: none)"
    )
    p.add_argument(
        "--max-members", type=positive, default=6, help="random cases: at most N members (>= 2)"
    )
    p.add_argument("--max-topics", type=positive, default=3, help="random cases: at most N topics")
    p.add_argument(
        "--max-partitions",
        type=positive,
        default=6,
        help="random cases: at most N partitions per topic",
    )
    p.add_argument(
        "--timeout-ms", type=positive, default=30_000, help="Z3's limit per case (default 30000)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(handler=cmd_optimality)


def cmd_optimality(args: argparse.Namespace) -> int:
    from groupcheck.progress import progress_for

    if args.cases > MAX_CASES:
        raise UsageError(f"groupcheck optimality: --cases must be at most {MAX_CASES}")
    if args.max_members < 2:
        raise UsageError("groupcheck optimality: --max-members must be at least 2")
    for option, value, bound in (
        ("--max-members", args.max_members, MAX_MEMBERS),
        ("--max-topics", args.max_topics, MAX_TOPICS),
        ("--max-partitions", args.max_partitions, MAX_PARTITIONS),
    ):
        if value > bound:
            raise UsageError(f"groupcheck optimality: {option} must be at most {bound}")
    sizes = Sizes(args.max_members, args.max_topics, args.max_partitions)
    progress = progress_for(args.quiet)
    cases = [*adversarial_cases(), *random_cases(args.seed, args.cases, sizes)]
    rows = []
    for i, case in enumerate(cases):
        if progress is not None:
            progress(f"optimality: case {i + 1}/{len(cases)} ({case.name})")
        rows.append(run_case(case, args.timeout_ms))
    undecided = [r for r in rows if r.status != "optimal"]
    result = "inconclusive" if undecided else "ok"
    if args.json:
        print(json.dumps({"result": result, "seed": args.seed, "rows": [asdict(r) for r in rows]}))
    else:
        print(table(rows))
        print(summary(rows))
        if undecided:
            print(f"inconclusive: Z3 did not decide {len(undecided)} case(s)")
    sys.stdout.flush()
    return exitcodes.INCONCLUSIVE if undecided else exitcodes.OK


def table(rows: list[Row]) -> str:
    """The rows as a Markdown table."""
    head = (
        "| case | change | members | partitions | subscriptions | uniform moves "
        "| minimum | uniform balanced |\n|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        minimum = str(r.minimal_moves) if r.minimal_moves is not None else f"{r.status}"
        lines.append(
            f"| {r.case} | {r.kind} | {r.members} | {r.partitions} | {r.subscriptions} "
            f"| {r.uniform_moves} | {minimum} | {'yes' if r.uniform_balanced else 'no'} |"
        )
    return "\n".join(lines)


def summary(rows: list[Row]) -> str:
    """One paragraph: how often the uniform assignor is optimal, and its worst excess."""
    decided = [r for r in rows if r.excess is not None]
    optimal_rows = [r for r in decided if r.excess == 0 and r.uniform_balanced]
    worst = max(decided, key=lambda r: r.excess or 0, default=None)
    unbalanced = [r.case for r in rows if not r.uniform_balanced]
    parts = [
        f"{len(optimal_rows)} of {len(decided)} decided cases: the uniform assignor is "
        "balanced and moves the minimum."
    ]
    if worst is not None and worst.excess:
        parts.append(
            f"Largest excess: {worst.excess} move(s) in {worst.case} "
            f"({worst.uniform_moves} against {worst.minimal_moves})."
        )
    if unbalanced:
        parts.append(f"Unbalanced uniform results: {', '.join(unbalanced)}.")
    return " ".join(parts)
