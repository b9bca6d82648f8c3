"""Assignor input and interface (``GroupSpec``, ``SubscribedTopicDescriber``,
``ConsumerGroupPartitionAssignor`` in Kafka's group coordinator)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from model.ids import Assignment, FrozenMap

SubscriptionType = Literal["HOMOGENEOUS", "HETEROGENEOUS"]


@dataclass(frozen=True, slots=True)
class MemberSubscription:
    """One member as the assignor sees it: its id, static instance id and the topic ids
    it subscribes to (resolved through the metadata image)."""

    member_id: str
    instance_id: str | None
    subscribed_topic_ids: frozenset[str]


@dataclass(frozen=True, slots=True)
class AssignmentSpec:
    """Everything an assignor reads: members (sorted by member id), partition counts of
    existing topics, and the previous target assignment (stickiness is relative to it)."""

    members: tuple[MemberSubscription, ...]
    partitions_per_topic: FrozenMap[str, int]
    previous_target: FrozenMap[str, Assignment]


class Assignor(Protocol):
    """A server-side assignor: deterministic, pure."""

    name: str

    def assign(self, spec: AssignmentSpec) -> dict[str, Assignment]: ...


def subscription_type(spec: AssignmentSpec) -> SubscriptionType:
    """HOMOGENEOUS when every member subscribes to the same topics (``SubscriptionType``)."""
    subs = {m.subscribed_topic_ids for m in spec.members}
    return "HOMOGENEOUS" if len(subs) <= 1 else "HETEROGENEOUS"
