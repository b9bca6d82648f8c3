"""Target assignment computation (``TargetAssignmentBuilder``; KIP-848 "Target Assignment").

A new target is computed when the group epoch exceeds the assignment epoch. Input is
every member's subscription, the topic metadata and the *previous target* (not the
current ownership); output is a target per member stamped with the group epoch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace

from model.assignors import get_assignor
from model.assignors.spec import AssignmentSpec, MemberSubscription
from model.ids import Assignment, FrozenMap
from model.records import Group, Member, TopicMetadata


def preferred_server_assignor(members: Iterable[Member], default: str) -> str:
    """The most common ``ServerAssignor`` among members, else the default
    (``ModernGroup.computePreferredServerAssignor``). Ties go to the smaller name."""
    counts = Counter(m.server_assignor for m in members if m.server_assignor is not None)
    if not counts:
        return default
    best = max(counts.values())
    return min(name for name, n in counts.items() if n == best)


def member_topics(member: Member, resolved_regexes: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The topic names a member subscribes to: its names, and what the group last resolved
    its regular expression to (``ConsumerGroup.computeSubscribedTopicNames``)."""
    regex = member.subscribed_topic_regex
    if regex is None:
        return member.subscribed_topic_names
    return member.subscribed_topic_names | resolved_regexes.get(regex, frozenset())


def assignment_spec(
    members: Mapping[str, Member],
    topics: Mapping[str, TopicMetadata],
    previous_target: FrozenMap[str, Assignment],
    resolved_regexes: Mapping[str, frozenset[str]] | None = None,
) -> AssignmentSpec:
    """The assignor input (``GroupSpecImpl`` + ``SubscribedTopicDescriber``); a member's
    subscription includes what its regular expression resolved to."""
    resolved = resolved_regexes or {}
    subs = tuple(
        MemberSubscription(
            member_id=m.member_id,
            instance_id=m.instance_id,
            subscribed_topic_ids=frozenset(
                topics[n].topic_id for n in member_topics(m, resolved) if n in topics
            ),
        )
        for m in sorted(members.values(), key=lambda m: m.member_id)
    )
    partitions = FrozenMap((t.topic_id, t.partitions) for t in topics.values())
    return AssignmentSpec(
        members=subs, partitions_per_topic=partitions, previous_target=previous_target
    )


def compute_target_assignment(
    group: Group, topics: Mapping[str, TopicMetadata], default_assignor: str
) -> Group:
    """Install a new target assignment at the group epoch
    (``GroupMetadataManager.updateTargetAssignment`` → ``TargetAssignmentBuilder.build``)."""
    assignor = get_assignor(preferred_server_assignor(group.members.values(), default_assignor))
    spec = assignment_spec(
        group.members, topics, group.target_assignment, resolved_regexes=group.resolved_regexes
    )
    result = assignor.assign(spec)
    target = FrozenMap((mid, frozenset(result.get(mid, frozenset()))) for mid in group.members)
    return replace(group, assignment_epoch=group.group_epoch, target_assignment=target)
