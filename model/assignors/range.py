"""The ``range`` assignor (``RangeAssignor``): co-partitioning, not sticky.

Members are ordered static first (by instance id) then dynamic (by member id); every topic
is cut into contiguous ranges over its subscribers in that order, the first ``P mod N``
subscribers getting one extra partition. Equal subscriptions and equal partition counts
give every member the same partition indexes on every topic.
"""

from __future__ import annotations

from model.assignors.spec import AssignmentSpec, MemberSubscription
from model.ids import Assignment, TopicPartition


def _order(m: MemberSubscription) -> tuple[int, str]:
    if m.instance_id is not None:
        return (0, m.instance_id)
    return (1, m.member_id)


class RangeAssignor:
    """Kafka's co-partitioning server assignor."""

    name = "range"

    def assign(self, spec: AssignmentSpec) -> dict[str, Assignment]:
        result: dict[str, list[TopicPartition]] = {m.member_id: [] for m in spec.members}
        ordered = sorted(spec.members, key=_order)
        for topic, count in spec.partitions_per_topic.items():
            subs = [m.member_id for m in ordered if topic in m.subscribed_topic_ids]
            if not subs:
                continue
            quota, extra = divmod(count, len(subs))
            start = 0
            for i, m in enumerate(subs):
                size = quota + (1 if i < extra else 0)
                result[m].extend((topic, p) for p in range(start, start + size))
                start += size
        return {m: frozenset(ps) for m, ps in result.items()}
