"""The fewest partition moves a balanced assignment needs, proved minimal with Z3.

A server assignor (``UniformAssignor``) is judged on two things after a membership or
subscription change: balance first, stickiness second (KIP-848 "Assignor"). This module
computes the best any assignor can do, so the uniform assignor's moves can be compared
with it (``groupcheck optimality``, docs/assignor-optimality.md).

* **Valid**: every partition of a topic that some member subscribes to is assigned to
  exactly one member subscribed to that topic (``ValidTargetAssignment``).
* **Balanced**: no partition could go to a subscriber of its topic that holds two or more
  partitions fewer than its holder — the condition under which the uniform assignor's
  balancing phase stops moving (``UniformHeterogeneousAssignmentBuilder``; for a
  homogeneous group it says every member holds ⌊P/N⌋ or ⌈P/N⌉).
* **Moves**: partitions that a member of the new group held in the previous target, may
  still hold (still subscribed, still existing), and that go to another member: each is a
  revocation the group must wait for. Partitions of members that left are not moves.

The minimum is found by descending bounds: Z3 finds a valid balanced assignment, then
one that moves fewer, until it proves (unsat) that none moves fewer than the last. Answers
are three-way: ``optimal`` (Z3 proved no valid balanced assignment moves fewer),
``infeasible`` (no valid balanced assignment exists, which :func:`minimal_moves` never
expects: a greedy argument always finds one), or ``unknown`` with Z3's reason. Every
``optimal`` assignment is re-checked with the Python predicates below before it is
returned.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import z3

from model.ids import TopicPartition

Subscriptions = Mapping[str, frozenset[str]]
"""Member id → the topics it subscribes to."""
AssignmentMap = Mapping[str, frozenset[TopicPartition]]
"""Member id → the partitions assigned to it."""

DEFAULT_TIMEOUT_MS = 30_000
"""Z3's limit per optimisation; past it the answer is ``unknown``."""


@dataclass(frozen=True)
class Optimum:
    """The answer of :func:`minimal_moves`."""

    status: Literal["optimal", "infeasible", "unknown"]
    moves: int | None = None
    assignment: dict[str, frozenset[TopicPartition]] | None = None
    reason: str = ""


def partitions_of(partitions_per_topic: Mapping[str, int]) -> list[TopicPartition]:
    """Every partition of the given topics, in order."""
    return [(t, i) for t in sorted(partitions_per_topic) for i in range(partitions_per_topic[t])]


def subscribers(
    subscriptions: Subscriptions, partitions_per_topic: Mapping[str, int]
) -> dict[str, list[str]]:
    """Topic → its subscribing members (sorted), for topics that exist."""
    out: dict[str, list[str]] = {t: [] for t in partitions_per_topic}
    for member in sorted(subscriptions):
        for topic in subscriptions[member]:
            if topic in out:
                out[topic].append(member)
    return out


def is_valid(
    assignment: AssignmentMap,
    subscriptions: Subscriptions,
    partitions_per_topic: Mapping[str, int],
) -> bool:
    """Each subscribed partition exactly once, to a subscriber of its topic; nothing else."""
    seen: set[TopicPartition] = set()
    for member, parts in assignment.items():
        for tp in parts:
            if tp in seen or tp[0] not in subscriptions.get(member, frozenset()):
                return False
            if tp[0] not in partitions_per_topic or not 0 <= tp[1] < partitions_per_topic[tp[0]]:
                return False
            seen.add(tp)
    subs = subscribers(subscriptions, partitions_per_topic)
    wanted = {tp for tp in partitions_of(partitions_per_topic) if subs[tp[0]]}
    return seen == wanted


def is_balanced(
    assignment: AssignmentMap,
    subscriptions: Subscriptions,
    partitions_per_topic: Mapping[str, int],
) -> bool:
    """No partition's holder has two or more partitions more than another subscriber of
    the partition's topic."""
    load = {m: len(assignment.get(m, frozenset())) for m in subscriptions}
    subs = subscribers(subscriptions, partitions_per_topic)
    for holder, parts in assignment.items():
        for tp in parts:
            if any(load[holder] - load[other] > 1 for other in subs.get(tp[0], ())):
                return False
    return True


def moves(
    previous: AssignmentMap,
    new: AssignmentMap,
    subscriptions: Subscriptions,
    partitions_per_topic: Mapping[str, int],
) -> int:
    """Partitions a member of the new group held before, could keep, and lost."""
    count = 0
    for member in subscriptions:
        for tp in keepable(previous, member, subscriptions, partitions_per_topic):
            if tp not in new.get(member, frozenset()):
                count += 1
    return count


def keepable(
    previous: AssignmentMap,
    member: str,
    subscriptions: Subscriptions,
    partitions_per_topic: Mapping[str, int],
) -> list[TopicPartition]:
    """The member's previous partitions that still exist and that it still subscribes to."""
    return sorted(
        tp
        for tp in previous.get(member, frozenset())
        if tp[0] in subscriptions[member]
        and tp[0] in partitions_per_topic
        and tp[1] < partitions_per_topic[tp[0]]
    )


def minimal_moves(
    previous: AssignmentMap,
    subscriptions: Subscriptions,
    partitions_per_topic: Mapping[str, int],
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> Optimum:
    """The fewest moves of any valid, balanced assignment of ``partitions_per_topic`` to
    the members of ``subscriptions``, starting from ``previous``.

    Partitions of one topic differ only in who held them before, so the encoding counts
    instead of naming them (one partition variable each made Z3 time out on 34
    partitions): ``count[m, t]`` partitions of topic ``t`` go to member ``m``, of which
    ``kept[m, t]`` are among the ones it may keep. Any such counts are realisable — each
    member keeps ``kept`` of its own previous partitions and takes the rest from the
    partitions nobody keeps — and :func:`_realise` builds that assignment, which the
    Python predicates then re-check."""
    held = [tp for ps in previous.values() for tp in ps]
    if len(held) != len(set(held)):
        raise ValueError("the previous target gives a partition to two members")
    subs = subscribers(subscriptions, partitions_per_topic)
    members = sorted(subscriptions)
    own = {
        (m, t): [
            tp for tp in keepable(previous, m, subscriptions, partitions_per_topic) if tp[0] == t
        ]
        for m in members
        for t in subscriptions[m]
        if t in partitions_per_topic
    }
    count = {key: z3.Int(f"count[{key[0]},{key[1]}]") for key in own}
    kept = {key: z3.Int(f"kept[{key[0]},{key[1]}]") for key in own}
    opt = z3.Solver()
    opt.set("timeout", timeout_ms)
    for key, mine in own.items():
        opt.add(count[key] >= 0, kept[key] >= 0, kept[key] <= count[key], kept[key] <= len(mine))
    for t, holders in subs.items():
        if holders:
            opt.add(z3.Sum([count[m, t] for m in holders]) == partitions_per_topic[t])
    load = {
        m: z3.Sum([count[key] for key in own if key[0] == m] or [z3.IntVal(0)]) for m in members
    }
    for holder, t in own:
        for other in subs[t]:
            if other != holder:
                opt.add(z3.Implies(count[holder, t] > 0, load[holder] - load[other] <= 1))
    lost = [len(mine) - kept[key] for key, mine in own.items() if mine]
    total = z3.Sum(lost) if lost else z3.IntVal(0)
    # Descend: each answer bounds the next query below it, until none is left (unsat:
    # the last answer is optimal). A plain solver decides these bounded queries where
    # Optimize's own search stalled on groups of a dozen members.
    best = None
    while True:
        answer = opt.check()
        if answer == z3.unsat:
            break
        if answer != z3.sat:
            return Optimum("unknown", reason=str(opt.reason_unknown()))
        best = opt.model()
        opt.add(total < best.eval(total, model_completion=True))
    if best is None:
        return Optimum("infeasible")
    model = best

    def value(v: z3.ArithRef) -> int:
        return int(model.eval(v, model_completion=True).as_long())

    assignment = _realise(
        own,
        {key: value(v) for key, v in count.items()},
        {key: value(v) for key, v in kept.items()},
        partitions_per_topic,
        members,
    )
    if not (
        is_valid(assignment, subscriptions, partitions_per_topic)
        and is_balanced(assignment, subscriptions, partitions_per_topic)
    ):
        raise AssertionError("Z3's optimal assignment fails the Python validity or balance check")
    moved = moves(previous, assignment, subscriptions, partitions_per_topic)
    if moved != model.eval(total, model_completion=True).as_long():
        raise AssertionError("Z3's objective disagrees with the moves counted in Python")
    return Optimum("optimal", moves=moved, assignment=assignment)


def _realise(
    own: Mapping[tuple[str, str], list[TopicPartition]],
    count: Mapping[tuple[str, str], int],
    kept: Mapping[tuple[str, str], int],
    partitions_per_topic: Mapping[str, int],
    members: list[str],
) -> dict[str, frozenset[TopicPartition]]:
    """An assignment with the given counts: each member keeps the first ``kept`` of its
    own previous partitions and takes the rest from the partitions nobody keeps."""
    found: dict[str, set[TopicPartition]] = {m: set() for m in members}
    for (m, _), mine in own.items():
        found[m].update(mine[: kept[m, _]])
    taken = {tp for ps in found.values() for tp in ps}
    for t in sorted(partitions_per_topic):
        pool = iter(tp for tp in partitions_of({t: partitions_per_topic[t]}) if tp not in taken)
        for m, topic in sorted(own):
            if topic == t:
                for _ in range(count[m, t] - kept[m, t]):
                    found[m].add(next(pool))
    return {m: frozenset(ps) for m, ps in found.items()}
