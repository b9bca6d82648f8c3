"""Project a classic-protocol ``ClassicState`` onto the properties' vocabulary
(``invariants.snapshot``), where the meaning carries over:

===================== ============================================================
``client_owns(c,p)``   ``c`` consumes ``p`` (nothing while its application hangs)
``client_member(c,m)`` ``c`` is alive and uses member id ``m``
``client_in_group(c)`` ``c`` is subscribed (UNJOINED … STABLE)
``client_synced(c)``   ``c`` is STABLE at the group's generation and the group is STABLE
``zombie(c)``          ``c`` still consumes, but a coordinator timer (or a static
                       replacement) removed its member and it has not heard so
``is_member(m)``       the group has member ``m``
``assigned(m,p)``      ``p`` is in ``m``'s assignment of the last SyncGroup phase
                       (``holds`` and ``target`` alike: the coordinator tracks no
                       revocation in the classic protocol)
``claims(m,p)``        ``m`` reported owning ``p`` in its JoinGroup (KIP-429)
``under_share(m)``     with ``sticky_assignor()``: ``m``'s assignment has fewer than
                       ⌊partitions / members⌋ partitions
``sticky_assignor()``  1 when the selected assignor is ``sticky`` or ``cooperative-sticky``,
                       every member lists only those and all subscribe to the same topics
``subscribed(m,p)``    ``p`` exists and ``m`` subscribes to its topic
``committed_by(m,p)``  the committed offset of ``p`` was written by ``m``
``group_epoch()``      the generation (``assignment_epoch()`` and every member's
                       ``member_epoch(m)`` likewise: a classic member has no epoch of its own)
``client_epoch(c)``    the generation ``c`` knows (-1 once reset)
``committed_epoch(p)`` the generation the committed offset of ``p`` was written at
``group_status()``     0 EMPTY, 1 PREPARING_REBALANCE, 2 COMPLETING_REBALANCE, 3 STABLE
===================== ============================================================
"""

from __future__ import annotations

from invariants.expr import Snapshot
from invariants.families import SNAPSHOTS, SnapshotFacet, key_after_by_reading
from invariants.vocabulary import FUNCTIONS, RELATIONS
from model.classic.client import IN_GROUP
from model.classic.messages import ClassicSubscription
from model.classic.records import ClassicClient, ClassicGroup, ClassicState
from model.ids import EMPTY, Assignment, FrozenMap, TopicPartition
from model.records import TopicMetadata
from model.status import ClassicClientStatus, ClassicGroupStatus

ClassicClientView = tuple[str, str | None, str, int, int, bool, bool, Assignment, bool, bool]
"""What the vocabulary reads of a classic client: name, instance id, member id, generation,
incarnation, alive, subscribed, the partitions it consumes, expired while alive, STABLE."""

ClassicSnapshotKey = tuple[
    ClassicGroup, FrozenMap[str, TopicMetadata], tuple[ClassicClientView, ...]
]
"""Everything ``project_classic_key`` reads of a state."""

STATUS_CODE = {
    ClassicGroupStatus.EMPTY: 0,
    ClassicGroupStatus.PREPARING_REBALANCE: 1,
    ClassicGroupStatus.COMPLETING_REBALANCE: 2,
    ClassicGroupStatus.STABLE: 3,
    ClassicGroupStatus.DEAD: 4,
}


STICKY_ASSIGNORS = frozenset({"sticky", "cooperative-sticky"})
"""The assignors built on ``AbstractStickyAssignor`` (KIP-54, KIP-341, KIP-429)."""


def sticky_group(group: ClassicGroup) -> bool:
    """Whether the group's assignment is the sticky assignors' constrained case
    (``AbstractStickyAssignor.allSubscriptionsEqual``): a sticky assignor selected, every
    member listing only sticky assignors, every member subscribed to the same topics."""
    members = list(group.members.values())
    return (
        bool(members)
        and group.protocol_name in STICKY_ASSIGNORS
        and all(set(m.protocols) <= STICKY_ASSIGNORS for m in members)
        and len({m.subscription.topics for m in members}) == 1
    )


def fair_share(group: ClassicGroup, topics: FrozenMap[str, TopicMetadata]) -> int:
    """⌊P/N⌋ (``minQuota`` of ``ConstrainedAssignmentBuilder``): P partitions of the
    members' common subscription, N members."""
    sub: ClassicSubscription = next(iter(group.members.values())).subscription
    count = sum(topics[t].partitions for t in sub.topics if t in topics)
    return count // len(group.members)


def classic_client_view(c: ClassicClient) -> ClassicClientView:
    """The part of a classic client the vocabulary reads."""
    return (
        c.name,
        c.instance_id,
        c.member_id,
        c.generation_id,
        c.incarnation,
        c.alive,
        c.alive and c.status in IN_GROUP,
        EMPTY if c.stalled or not c.alive else c.owned,
        c.expired and c.alive,
        c.alive and c.status is ClassicClientStatus.STABLE,
    )


def classic_snapshot_key(state: ClassicState) -> ClassicSnapshotKey:
    """The part of ``state`` its snapshot is a function of."""
    return (state.group, state.topics, tuple(map(classic_client_view, state.clients)))


def project_classic_key(key: ClassicSnapshotKey) -> Snapshot:
    """The snapshot of every classic state whose key is ``key``."""
    g, topics, views = key
    existing: set[TopicPartition] = {
        (meta.topic_id, i) for meta in topics.values() for i in range(meta.partitions)
    }
    name_to_id = {name: meta.topic_id for name, meta in topics.items()}
    rel: dict[str, set[tuple[object, ...]]] = {k: set() for k in RELATIONS}
    fn: dict[str, dict[tuple[object, ...], int]] = {k: {} for k in FUNCTIONS}
    fn["group_epoch"][()] = g.generation_id
    fn["assignment_epoch"][()] = g.generation_id
    fn["group_status"][()] = STATUS_CODE[g.status]
    fn["holder_commit_rejected"][()] = 0
    fn["assignor_runs"][()] = 0
    fn["group_deletions"][()] = g.deletions
    fn["policy_breached"][()] = 0
    fn["assignor_outdated"][()] = 0
    sticky = sticky_group(g)
    fn["sticky_assignor"][()] = int(sticky)
    share = fair_share(g, topics) if sticky else 0
    instance_index = {iid: i + 1 for i, iid in enumerate(sorted({v[1] for v in views if v[1]}))}
    partitions: set[TopicPartition] = set(existing)
    members: dict[str, None] = {}
    stable_group = g.status is ClassicGroupStatus.STABLE

    for view in views:
        name, _, member_id, generation, incarnation, alive, in_group, owned, expired, stable = view
        fn["client_epoch"][(name,)] = generation
        fn["client_incarnation"][(name,)] = incarnation
        if alive and member_id:
            members[member_id] = None
            rel["client_member"].add((name, member_id))
        if in_group:
            rel["client_in_group"].add((name,))
        if expired and member_id not in g.members:
            rel["zombie"].add((name,))
        if stable and stable_group and generation == g.generation_id:
            rel["client_synced"].add((name,))
        for tp in owned:
            rel["client_owns"].add((name, tp))
            partitions.add(tp)

    for mid, m in g.members.items():
        members[mid] = None
        rel["is_member"].add((mid,))
        fn["member_epoch"][(mid,)] = g.generation_id
        fn["instance"][(mid,)] = instance_index.get(m.instance_id, 0) if m.instance_id else 0
        if len(m.assignment) < share:
            rel["under_share"].add((mid,))
        for tp in m.assignment:
            for r in ("assigned", "holds", "target"):
                rel[r].add((mid, tp))
            partitions.add(tp)
        for tp in m.subscription.owned_partitions:
            rel["claims"].add((mid, tp))
            partitions.add(tp)
        subscribed_ids = {name_to_id[n] for n in m.subscription.topics if n in name_to_id}
        for tp in existing:
            if tp[0] in subscribed_ids:
                rel["subscribed"].add((mid, tp))

    for tp, record in g.committed_offsets.items():
        members[record.member_id] = None
        partitions.add(tp)
        rel["committed_by"].add((record.member_id, tp))
        fn["committed_epoch"][(tp,)] = record.member_epoch

    for tp in existing:
        rel["exists"].add((tp,))

    return Snapshot(
        clients=tuple(v[0] for v in views),
        members=tuple(sorted(members)),
        partitions=tuple(sorted(partitions)),
        relations={k: frozenset(v) for k, v in rel.items()},
        functions=fn,
        family="classic",
    )


SNAPSHOTS.register(
    "classic",
    SnapshotFacet(
        key=classic_snapshot_key,
        key_after=key_after_by_reading(classic_snapshot_key),
        project=project_classic_key,
    ),
)
