"""The ``uniform`` assignor (``UniformAssignor``): balance first, stickiness second.

Homogeneous subscriptions follow ``UniformHomogeneousAssignmentBuilder``: with P
partitions and N members every member gets ⌊P/N⌋ and P mod N members one more; members
keep their previous-target partitions up to their quota, members that already hold an
extra partition keep it while extra slots remain (KAFKA-18688: a balanced assignment is
never moved), and the partitions left over go to members below quota in member order.

Heterogeneous subscriptions follow ``UniformHeterogeneousAssignmentBuilder`` in shape:
members keep their still-valid previous partitions, unassigned partitions go to the least
loaded subscriber (topics with fewer subscribers first), then an iterative phase (at most
16 rounds) moves partitions from a member to a less loaded subscriber of the same topic
while that reduces the imbalance by more than one.
"""

from __future__ import annotations

import heapq

from model.assignors.spec import AssignmentSpec, subscription_type
from model.ids import Assignment, TopicPartition

MAX_BALANCE_ITERATIONS = 16


class UniformAssignor:
    """Kafka's default server assignor."""

    name = "uniform"

    def assign(self, spec: AssignmentSpec) -> dict[str, Assignment]:
        if not spec.members:
            return {}
        if subscription_type(spec) == "HOMOGENEOUS":
            result = _homogeneous(spec)
        else:
            result = _heterogeneous(spec)
        return {m: frozenset(ps) for m, ps in result.items()}


def _valid_previous(
    spec: AssignmentSpec, member_id: str, topics: frozenset[str]
) -> list[TopicPartition]:
    """The member's previous target partitions that still exist and are still subscribed."""
    counts = spec.partitions_per_topic
    prev = spec.previous_target.get(member_id, frozenset())
    return sorted(
        tp for tp in prev if tp[0] in topics and tp[0] in counts and tp[1] < counts[tp[0]]
    )


def _homogeneous(spec: AssignmentSpec) -> dict[str, list[TopicPartition]]:
    """``UniformHomogeneousAssignmentBuilder``."""
    members = [m.member_id for m in spec.members]
    topics = spec.members[0].subscribed_topic_ids
    counts = spec.partitions_per_topic
    partitions = [(t, i) for t in sorted(topics) if t in counts for i in range(counts[t])]
    n = len(members)
    quota, extra = divmod(len(partitions), n)
    taken: set[TopicPartition] = set()
    result: dict[str, list[TopicPartition]] = {}
    candidates: dict[str, list[TopicPartition]] = {}
    for m in members:
        mine = [tp for tp in _valid_previous(spec, m, topics) if tp not in taken]
        keep = mine[:quota]
        taken.update(keep)
        result[m] = keep
        candidates[m] = mine[quota:]
    # Members already holding an extra partition keep it while extra slots remain.
    gets_extra: set[str] = set()
    for m in members:
        if extra - len(gets_extra) <= 0:
            break
        spare = [tp for tp in candidates[m] if tp not in taken]
        if spare:
            result[m].append(spare[0])
            taken.add(spare[0])
            gets_extra.add(m)
    for m in members:
        if len(gets_extra) >= extra:
            break
        if m not in gets_extra:
            gets_extra.add(m)
    leftovers = iter([tp for tp in partitions if tp not in taken])
    for m in members:
        target = quota + (1 if m in gets_extra else 0)
        while len(result[m]) < target:
            tp = next(leftovers, None)
            if tp is None:
                break
            result[m].append(tp)
    return result


def _heterogeneous(spec: AssignmentSpec) -> dict[str, list[TopicPartition]]:
    """``UniformHeterogeneousAssignmentBuilder`` in shape (see the module docstring)."""
    counts = spec.partitions_per_topic
    order = {m.member_id: i for i, m in enumerate(spec.members)}
    subscribers: dict[str, list[str]] = {}
    for ms in spec.members:
        for t in ms.subscribed_topic_ids:
            if t in counts:
                subscribers.setdefault(t, []).append(ms.member_id)
    owner: dict[TopicPartition, str] = {}
    load: dict[str, int] = {ms.member_id: 0 for ms in spec.members}
    for ms in spec.members:
        for tp in _valid_previous(spec, ms.member_id, ms.subscribed_topic_ids):
            if tp not in owner:
                owner[tp] = ms.member_id
                load[ms.member_id] += 1
    # Unassigned partitions: topics with fewer subscribers first, each partition to the
    # least-loaded subscriber (ties: member order).
    for t in sorted(subscribers, key=lambda t: (len(subscribers[t]), t)):
        subs = subscribers[t]
        heap = [(load[s], order[s], s) for s in subs]
        heapq.heapify(heap)
        for i in range(counts[t]):
            tp = (t, i)
            if tp in owner:
                continue
            _, _, chosen = heapq.heappop(heap)
            owner[tp] = chosen
            load[chosen] += 1
            heapq.heappush(heap, (load[chosen], order[chosen], chosen))
    # Balance: move a partition to a less loaded subscriber of its topic while the gap > 1.
    for _ in range(MAX_BALANCE_ITERATIONS):
        moved = False
        for t in sorted(subscribers):
            subs = subscribers[t]
            if len(subs) < 2:
                continue
            heap = [(load[s], order[s], s) for s in subs]
            heapq.heapify(heap)
            for i in range(counts[t]):
                tp = (t, i)
                holder = owner[tp]
                while heap[0][0] != load[heap[0][2]]:  # refresh stale heap entries
                    _, _, stale = heapq.heappop(heap)
                    heapq.heappush(heap, (load[stale], order[stale], stale))
                least_load, _, least = heap[0]
                if load[holder] - least_load > 1:
                    owner[tp] = least
                    load[holder] -= 1
                    load[least] += 1
                    heapq.heapreplace(heap, (load[least], order[least], least))
                    heapq.heappush(heap, (load[holder], order[holder], holder))
                    moved = True
        if not moved:
            break
    result: dict[str, list[TopicPartition]] = {m.member_id: [] for m in spec.members}
    for tp, member_id in owner.items():
        result[member_id].append(tp)
    return result
