"""Target assignment computation (``TargetAssignmentBuilder``; KIP-848 "Target Assignment").

A new target is computed when the group epoch exceeds the assignment epoch. Input is
every member's subscription, the topic metadata and the *previous target* (not the
current ownership); output is a target per member stamped with the group epoch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from model.assignors import get_assignor
from model.assignors.spec import AssignmentSpec, MemberSubscription
from model.ids import Assignment, FrozenMap
from model.records import AssignorRun, Group, Member, TopicMetadata


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
    name = preferred_server_assignor(group.members.values(), default_assignor)
    spec = assignment_spec(
        group.members, topics, group.target_assignment, resolved_regexes=group.resolved_regexes
    )
    result = get_assignor(name).assign(spec)
    target = FrozenMap((mid, frozenset(result.get(mid, frozenset()))) for mid in group.members)
    return replace(
        group, assignment_epoch=group.group_epoch, target_assignment=target, target_assignor=name
    )


# --------------------------------------------------------------------------- KIP-1263


def assignment_interval_open(group: Group, interval_ms: int) -> bool:
    """The batching gate: a new target may be computed when batching is off, when the
    time of the last computation is unknown (``AssignmentTimestamp`` 0), or once the
    interval has passed since it (KIP-1263 "Assignment Batching";
    ``GroupMetadataManager`` target-assignment update)."""
    return interval_ms == 0 or group.assignment_timestamp == 0 or group.assignment_interval_elapsed


def record_assignment_time(group: Group, interval_ms: int) -> Group:
    """A computation finished: ``AssignmentTimestamp`` is now, and the interval starts
    again (KIP-1263 Records, ``ConsumerGroupTargetAssignmentMetadataValue``). Only the gate
    reads it, so nothing is recorded without batching."""
    if interval_ms == 0:
        return group
    return replace(group, assignment_timestamp=1, assignment_interval_elapsed=False)


def start_assignor_run(
    group: Group,
    topics: Mapping[str, TopicMetadata],
    default_assignor: str,
    compute: Callable[[Group, Mapping[str, TopicMetadata], str], Group],
) -> Group:
    """Hand an assignor run to the executor at the group epoch, unless one is in flight:
    then there is no new target until it completes (KIP-1263 ConsumerGroupHeartbeat Request
    Handling). The run reads what an inline computation (``compute``, the
    ``compute_target_assignment`` rule) reads: every member's subscription, the topics and
    the previous target."""
    if group.assignor_runs:
        return group
    computed = compute(group, topics, default_assignor)
    run = AssignorRun(
        group_epoch=group.group_epoch,
        target_assignment=computed.target_assignment,
        assignor=computed.target_assignor,
        static_members=FrozenMap(
            (m.instance_id, m.member_id)
            for m in sorted(group.members.values(), key=lambda m: m.member_id)
            if m.instance_id is not None
        ),
    )
    return replace(group, assignor_runs=(*group.assignor_runs, run))


def reapply_changes(
    run: AssignorRun, group: Group, topics: Mapping[str, TopicMetadata]
) -> FrozenMap[str, Assignment]:
    """The run's result with what changed while it ran re-applied (KIP-1263 "Assignment
    Offload"; the view Kafka's preparatory refactor gives ``TargetAssignmentBuilder``,
    KAFKA-20292): a member that left or was fenced loses its entry, a replaced static
    member's entry moves to the instance's current member id, and partitions that no
    longer exist (a topic deleted or recreated under a new id, KIP-516) are dropped.
    Members that joined meanwhile get no entry: their join bumped the group epoch, so
    another run follows."""
    existing = frozenset(
        (meta.topic_id, i) for meta in topics.values() for i in range(meta.partitions)
    )
    entries: list[tuple[str, Assignment]] = []
    for mid in sorted(group.members):
        member = group.members[mid]
        parts = run.target_assignment.get(mid)
        if parts is None and member.instance_id is not None:
            before = run.static_members.get(member.instance_id)
            if before is not None and before not in group.members:
                parts = run.target_assignment.get(before)
        if parts is not None:
            entries.append((mid, frozenset(parts & existing)))
    return FrozenMap(entries)


def install_assignor_run(
    group: Group, topics: Mapping[str, TopicMetadata], interval_ms: int, discard_stale: bool
) -> Group:
    """The oldest run in flight completes: its result is installed at the run's group
    epoch with the changes made meanwhile re-applied (``reapply_changes``), and the
    ``AssignmentTimestamp`` is now. A run whose epoch is not newer than the assignment
    epoch (the emptied group was realigned meanwhile, KAFKA-20442) is discarded, never
    installed at an older epoch; so is a run whose epoch the group passed when
    ``discard_stale`` (``Config.offload_stale_run``), and a run whose group was deleted
    while it ran (``AssignorRun.group_deleted``): it is never installed into the group
    created again under the same id."""
    run, rest = group.assignor_runs[0], group.assignor_runs[1:]
    done = replace(group, assignor_runs=rest)
    if run.group_deleted:
        return done
    if run.group_epoch <= group.assignment_epoch:
        return done
    if discard_stale and run.group_epoch < group.group_epoch:
        return done
    installed = replace(
        done,
        assignment_epoch=run.group_epoch,
        target_assignment=reapply_changes(run, group, topics),
        target_assignor=run.assignor,
    )
    return record_assignment_time(installed, interval_ms)
