"""The uniform assignor at the KIP-1263 scale: 1,000 members, 1,000 topics, 50,000
partitions (50 per topic); heterogeneous subscriptions (member i subscribes to a window of
50 + i mod 51 topics starting at 7i mod 1000) and the homogeneous case. Goal ≤ 0.5 s per
assignment (Kafka's Java assignor takes 15–20 ms there). Best of three."""

from __future__ import annotations

import time

from model.assignors import AssignmentSpec, MemberSubscription, get_assignor
from model.ids import FrozenMap

GOAL_SECONDS = 0.5
MEMBERS, TOPICS, PER_TOPIC = 1000, 1000, 50


def _members(heterogeneous: bool) -> tuple[MemberSubscription, ...]:
    names = [f"t{i:04d}" for i in range(TOPICS)]
    out = []
    for i in range(MEMBERS):
        if heterogeneous:
            start, width = (i * 7) % TOPICS, 50 + i % 51
            topics = frozenset(names[(start + k) % TOPICS] for k in range(width))
        else:
            topics = frozenset(names)
        out.append(MemberSubscription(f"m{i:04d}", None, topics))
    return tuple(out)


def _best(fn: object, repeats: int = 3) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best, result


def run() -> list[dict[str, object]]:
    uniform = get_assignor("uniform")
    partitions = FrozenMap((f"t{i:04d}", PER_TOPIC) for i in range(TOPICS))
    rows: list[dict[str, object]] = []
    for label, hetero in (("heterogeneous", True), ("homogeneous", False)):
        members = _members(hetero)
        fresh = AssignmentSpec(members, partitions, FrozenMap())
        seconds, first = _best(lambda s=fresh: uniform.assign(s))
        rows.append(_row(f"uniform {label} fresh", seconds, first))  # type: ignore[arg-type]
        after_leave = AssignmentSpec(members[1:], partitions, FrozenMap(first))  # type: ignore[arg-type]
        seconds, second = _best(lambda s=after_leave: uniform.assign(s))
        moved = sum(len(first[m] - second[m]) for m in second)  # type: ignore[index,operator]
        row = _row(f"uniform {label} one member left", seconds, second)  # type: ignore[arg-type]
        row["partitions_moved_between_remaining_members"] = moved
        rows.append(row)
    return rows


def _row(name: str, seconds: float, result: dict[str, frozenset[object]]) -> dict[str, object]:
    sizes = [len(p) for p in result.values()]
    return {
        "benchmark": name,
        "members": len(result),
        "partitions": sum(sizes),
        "seconds": round(seconds, 4),
        "min_per_member": min(sizes),
        "max_per_member": max(sizes),
        "goal_seconds": GOAL_SECONDS,
        "meets_goal": seconds <= GOAL_SECONDS,
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
