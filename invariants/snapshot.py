"""Project a model ``State`` onto the vocabulary properties are written in.

Relations (true/false for a tuple) and functions (integers) named as in KIP-848:

===================== ============================================================
``client_owns(c,p)``   client process ``c`` is consuming partition ``p`` (client view;
                       nothing while its application hangs in a callback)
``client_revoking(c,p)`` ``c`` is RECONCILING and still revoking ``p`` (committing its
                       offset, or in ``onPartitionsRevoked``)
``client_joining(c)``  ``c`` is alive and JOINING (joining or rejoining at epoch 0)
``client_synced(c)``   every client (KIP-848); classic: ``c`` completed the group's current
                       generation (STABLE at it, the group STABLE)
``claims(m,p)``        classic: ``m`` reported owning ``p`` in its JoinGroup (KIP-429
                       ``OwnedPartitions``); nothing for KIP-848
``under_share(m)``     classic, with ``sticky_assignor()``: ``m`` is assigned fewer than
                       its fair share, ⌊partitions / members⌋; nothing for KIP-848
``zombie(c)``          ``c`` is alive but a coordinator timer removed its member, and it
                       has not heard so (``Client.expired``): it may still consume
``client_member(c,m)`` ``c`` is alive and its current member id is ``m``
``client_in_group(c)`` ``c`` is JOINING, RECONCILING, ACKNOWLEDGING or STABLE
``is_member(m)``       the coordinator has member ``m``
``assigned(m,p)``      ``p`` is in ``m``'s assigned partitions
``revoking(m,p)``      ``p`` is in ``m``'s partitions pending revocation
``holds(m,p)``         assigned or revoking (the coordinator view of ownership)
``target(m,p)``        ``p`` is in ``m``'s target assignment
``subscribed(m,p)``    ``p`` exists and ``m`` subscribes to its topic
``exists(p)``          ``p`` is a partition of a topic in the metadata image
``committed_by(m,p)``  the committed offset of ``p`` was written by ``m``
``stable(m)``          ``m`` is in state STABLE
``unrevoked(m)``       ``m`` is in state UNREVOKED_PARTITIONS
``unreleased(m)``      ``m`` is in state UNRELEASED_PARTITIONS
``server_error(c)``    ``c`` was failed with UNKNOWN_SERVER_ERROR
``group_epoch()``      group epoch; ``assignment_epoch()`` target assignment epoch
``member_epoch(m)``    ``m``'s member epoch
``client_epoch(c)``    the member epoch ``c`` knows; ``client_incarnation(c)`` its process
``committed_epoch(p)`` the member epoch the committed offset of ``p`` was written at
``assigned_since(m,p)`` KIP-1251: the epoch at which ``m`` was assigned ``p`` it holds
                       (undefined without ``Config.assignment_epochs``)
``epoch_clash(m,p)``   KIP-1251 history (ghost ``Group.assignment_history``): ``m`` was
                       stamped with ``p`` at an assignment epoch the history names another
                       holder for too (two member ids of one static instance are one holder)
``commit_by_epoch_holder(m,p)`` the committed offset of ``p``, written by ``m`` at epoch E,
                       comes from the holder of (p, E) by the history: ``m`` was stamped
                       with ``p`` at some s ≤ E and no other holder at an epoch in [s, E];
                       true when the history has no stamp of ``p`` (nothing to judge)
``holder_commit_rejected()`` 1 once a commit KIP-1251 must accept was refused, else 0
``assignor_runs()``    KIP-1263: the number of assignor runs in flight on the executor
``group_deletions()``  ghost: how often the group was deleted (its incarnation)
``sticky_assignor()``  classic: 1 when the group's selected assignor is ``sticky`` or
                       ``cooperative-sticky``, every member lists only those and all
                       subscribe to the same topics (the sticky assignors' constrained
                       case); else 0, and 0 for KIP-848
``group_status()``     0 EMPTY, 1 ASSIGNING, 2 RECONCILING, 3 STABLE
``policy_breached()``  mixed configs: 1 once the consumer group went against its migration
                       policy (``Group.migration_policy_breached``), else 0
``assignor_outdated()`` 1 when the target is current (assignment epoch = group epoch), the
                       group has members, a server assignor computed the target (ghost
                       ``Group.target_assignor``), and some member asks for a server
                       assignor but the most common one asked for is another; else 0
``instance(m)``        1 + the index of ``m``'s static instance id among the clients'
                       instance ids; 0 for a dynamic member (and for an instance id no
                       client holds any more: a renamed classic member's old one)
``indexed(m)``         ``m`` is a member with a ``group.instance.id`` and the group's
                       static-member index maps that instance id to ``m``
                       (``Group.static_members``, ``ConsumerGroup.staticMembers``)
``index_entries(m)``   how many entries of the static-member index name ``m`` (a member
                       id named only by the index is an element too)
===================== ============================================================
"""

from __future__ import annotations

from typing import cast

from invariants import vocabulary
from invariants.classic_snapshot import (
    ClassicSnapshotKey,
)
from invariants.expr import Snapshot
from invariants.families import SNAPSHOTS, SnapshotFacet
from model.consumer.client import IN_GROUP
from model.consumer.coordinator import group_status
from model.consumer.target import member_topics, preferred_server_assignor
from model.family import family_of_group
from model.ids import EMPTY, Assignment, FrozenMap, TopicPartition
from model.records import Client, Group, Holder, State, TopicMetadata
from model.status import ClientStatus, ErrorCode, GroupStatus, MemberState
from model.system import AnyState

# The vocabulary's names (invariants/vocabulary.py), read here and by the other families'
# projections.
RELATIONS = vocabulary.RELATIONS
UNARY_RELATIONS = vocabulary.UNARY_RELATIONS
FUNCTIONS = vocabulary.FUNCTIONS
BINARY_FUNCTIONS = vocabulary.BINARY_FUNCTIONS
NULLARY_FUNCTIONS = vocabulary.NULLARY_FUNCTIONS

STATUS_CODE = {
    GroupStatus.EMPTY: 0,
    GroupStatus.ASSIGNING: 1,
    GroupStatus.RECONCILING: 2,
    GroupStatus.STABLE: 3,
    GroupStatus.DEAD: 4,
}


ClientView = tuple[
    str, str | None, str, int, int, bool, bool, bool, Assignment, bool, Assignment, bool
]
"""What the vocabulary reads of a client: name, instance id, member id, member epoch,
incarnation, alive, in the group (alive and JOINING … STABLE), failed with
UNKNOWN_SERVER_ERROR, the partitions it consumes, expired by a timer while alive, the
partitions it is still revoking, joining."""

SnapshotKey = tuple[Group, FrozenMap[str, TopicMetadata], tuple[ClientView, ...]]
"""Everything ``project`` reads of a state: two states with equal keys have equal
snapshots, so every state and step property reads them alike (engines memoise verdicts
on it; the network, timers in flight and what a client last sent are not part of it)."""


def client_view(c: Client) -> ClientView:
    """The part of a client the vocabulary reads (``ClientView``)."""
    return (
        c.name,
        c.instance_id,
        c.member_id,
        c.member_epoch,
        c.incarnation,
        c.alive,
        c.alive and c.status in IN_GROUP,
        c.fatal_error is ErrorCode.UNKNOWN_SERVER_ERROR,
        EMPTY if c.stalled else c.owned,
        c.expired and c.alive,
        c.revoking if c.alive and c.status is ClientStatus.RECONCILING else EMPTY,
        c.alive and c.status is ClientStatus.JOINING,
    )


def snapshot_key(state: AnyState) -> SnapshotKey | ClassicSnapshotKey:
    """The part of ``state`` its snapshot is a function of (``SnapshotKey``), read by its
    family's facet (``invariants.families.SNAPSHOTS``)."""
    key: SnapshotKey | ClassicSnapshotKey = SNAPSHOTS.of_state(state).key(state)
    return key


def consumer_snapshot_key(state: State) -> SnapshotKey:
    """``snapshot_key`` of a KIP-848 state."""
    return (state.group, state.topics, tuple(map(client_view, state.clients)))


def snapshot_key_after(
    pre_key: SnapshotKey | ClassicSnapshotKey, pre: AnyState, post: AnyState
) -> SnapshotKey | ClassicSnapshotKey:
    """``snapshot_key(post)`` for a successor ``post`` of ``pre``, whose key is
    ``pre_key`` (``SnapshotFacet.key_after`` of their family)."""
    key: SnapshotKey | ClassicSnapshotKey = SNAPSHOTS.of_state(post).key_after(pre_key, pre, post)
    return key


def consumer_snapshot_key_after(pre_key: SnapshotKey, pre: State, post: State) -> SnapshotKey:
    """``snapshot_key_after`` of a KIP-848 step: a step leaves all but one or two clients
    as they were (the same records), and their views are taken from ``pre_key`` instead
    of read again."""
    views = pre_key[2]
    return (
        post.group,
        post.topics,
        tuple(
            [
                view if before is after else client_view(after)
                for before, after, view in zip(pre.clients, post.clients, views, strict=True)
            ]
        ),
    )


def assignor_outdated(g: Group) -> bool:
    """``assignor_outdated()``: the current target was computed by a server assignor other
    than the one the members ask for most (``ConsumerGroup.computePreferredServerAssignor``;
    ties to the smaller name as in the model). Members that ask for none leave the
    assignor that computed the target standing: the configured default is not part of the
    group, so a switch back to it is not judged."""
    if g.target_assignor is None or not g.members or g.group_epoch != g.assignment_epoch:
        return False
    return preferred_server_assignor(g.members.values(), g.target_assignor) != g.target_assignor


def _identity(holder: Holder) -> tuple[str, str]:
    """A holder of the assignment history as one identity: a static member's instance id
    (its processes replace one another's member ids, KIP-345), else its member id."""
    member_id, instance_id = holder
    return ("instance", instance_id) if instance_id is not None else ("member", member_id)


def epoch_clashes(g: Group) -> set[tuple[object, ...]]:
    """``epoch_clash``: (member id, partition) of every holder of a (partition, epoch) pair
    of ``Group.assignment_history`` that names more than one identity."""
    out: set[tuple[object, ...]] = set()
    for (tp, _), holders in g.assignment_history.items():
        if len({_identity(h) for h in holders}) > 1:
            out.update((member_id, tp) for member_id, _ in holders)
    return out


def commits_by_epoch_holder(g: Group) -> set[tuple[object, ...]]:
    """``commit_by_epoch_holder``: (member id, partition) of every committed offset whose
    writer held (partition, epoch) by ``Group.assignment_history`` — stamped with the
    partition at some s no newer than the commit's epoch E, and no other identity stamped
    with it at an epoch in [s, E] — or whose partition the history never stamped."""
    stamps: dict[TopicPartition, list[tuple[int, tuple[str, str]]]] = {}
    member_identity: dict[str, tuple[str, str]] = {}
    for (tp, epoch), holders in g.assignment_history.items():
        for h in holders:
            stamps.setdefault(tp, []).append((epoch, _identity(h)))
            member_identity[h[0]] = _identity(h)
    out: set[tuple[object, ...]] = set()
    for tp, record in g.committed_offsets.items():
        of_tp = stamps.get(tp)
        if of_tp is None:
            out.add((record.member_id, tp))
            continue
        who = member_identity.get(record.member_id)
        mine = [e for e, ident in of_tp if ident == who and e <= record.member_epoch]
        if not mine:
            continue
        since = max(mine)
        if all(ident == who for e, ident in of_tp if since <= e <= record.member_epoch):
            out.add((record.member_id, tp))
    return out


def project(state: AnyState) -> Snapshot:
    """The snapshot of ``state``."""
    return project_key(snapshot_key(state))


def project_key(key: SnapshotKey | ClassicSnapshotKey) -> Snapshot:
    """The snapshot of every state whose ``snapshot_key`` is ``key``: read in the
    vocabulary of its group's family (``SnapshotFacet.project``)."""
    snap: Snapshot = SNAPSHOTS.of(family_of_group(key[0])).project(key)
    return snap


def consumer_project_key(key: SnapshotKey) -> Snapshot:
    """``project_key`` of a key with a KIP-848 group."""
    g, topics, views = key
    existing: set[TopicPartition] = {
        (meta.topic_id, i) for meta in topics.values() for i in range(meta.partitions)
    }
    name_to_id = {name: meta.topic_id for name, meta in topics.items()}

    rel: dict[str, set[tuple[object, ...]]] = {k: set() for k in RELATIONS}
    fn: dict[str, dict[tuple[object, ...], int]] = {
        "group_epoch": {(): g.group_epoch},
        "assignment_epoch": {(): g.assignment_epoch},
        "group_status": {(): STATUS_CODE[group_status(g)]},
        "member_epoch": {},
        "client_epoch": {},
        "client_incarnation": {},
        "committed_epoch": {},
        "instance": {},
        "assigned_since": {},
        "holder_commit_rejected": {(): int(g.holder_commit_rejected)},
        "assignor_runs": {(): len(g.assignor_runs)},
        "sticky_assignor": {(): 0},
        "group_deletions": {(): g.deletions},
        "policy_breached": {(): int(g.migration_policy_breached)},
        "assignor_outdated": {(): int(assignor_outdated(g))},
        "index_entries": {},
    }
    instance_index = {iid: i + 1 for i, iid in enumerate(sorted({v[1] for v in views if v[1]}))}
    partitions: set[TopicPartition] = set(existing)
    members: dict[str, None] = {}
    clients = tuple(v[0] for v in views)

    for view in views:
        name, _, member_id, member_epoch, incarnation, alive, in_group, failed, owned = view[:9]
        expired, revoking, joining = view[9:]
        members[member_id] = None
        rel["client_synced"].add((name,))
        if joining:
            rel["client_joining"].add((name,))
        for tp in revoking:
            rel["client_revoking"].add((name, tp))
            partitions.add(tp)
        if expired and member_id not in g.members:
            rel["zombie"].add((name,))
        fn["client_epoch"][(name,)] = member_epoch
        fn["client_incarnation"][(name,)] = incarnation
        if alive:
            rel["client_member"].add((name, member_id))
        if in_group:
            rel["client_in_group"].add((name,))
        if failed:
            rel["server_error"].add((name,))
        for tp in owned:
            rel["client_owns"].add((name, tp))
            partitions.add(tp)

    for mid, m in g.members.items():
        members[mid] = None
        rel["is_member"].add((mid,))
        fn["member_epoch"][(mid,)] = m.member_epoch
        fn["instance"][(mid,)] = instance_index.get(m.instance_id, 0) if m.instance_id else 0
        if m.instance_id is not None and g.static_members.get(m.instance_id) == mid:
            rel["indexed"].add((mid,))
        if m.state is MemberState.STABLE:
            rel["stable"].add((mid,))
        elif m.state is MemberState.UNREVOKED_PARTITIONS:
            rel["unrevoked"].add((mid,))
        else:
            rel["unreleased"].add((mid,))
        for tp in m.assigned_partitions:
            rel["assigned"].add((mid, tp))
            rel["holds"].add((mid, tp))
            partitions.add(tp)
        for tp in m.partitions_pending_revocation:
            rel["revoking"].add((mid, tp))
            rel["holds"].add((mid, tp))
            partitions.add(tp)
        for tp, since in m.assignment_epochs.items():
            fn["assigned_since"][(mid, tp)] = since
        subscribed_ids = {
            name_to_id[n] for n in member_topics(m, g.resolved_regexes) if n in name_to_id
        }
        for tp in existing:
            if tp[0] in subscribed_ids:
                rel["subscribed"].add((mid, tp))

    for mid, parts in g.target_assignment.items():
        members[mid] = None
        for tp in parts:
            rel["target"].add((mid, tp))
            partitions.add(tp)

    for tp, record in g.committed_offsets.items():
        members[record.member_id] = None
        partitions.add(tp)
        rel["committed_by"].add((record.member_id, tp))
        fn["committed_epoch"][(tp,)] = record.member_epoch

    for tp in existing:
        rel["exists"].add((tp,))

    if g.assignment_history:
        clashes = epoch_clashes(g)
        rel["epoch_clash"].update(clashes)
        for holder_id, clash_tp in clashes:  # holders that left are elements too
            members[cast(str, holder_id)] = None
            partitions.add(cast(TopicPartition, clash_tp))
        rel["commit_by_epoch_holder"].update(commits_by_epoch_holder(g))
    else:
        rel["commit_by_epoch_holder"].update(rel["committed_by"])

    for named in g.static_members.values():  # an entry naming a member id that left too
        members[named] = None
    for mid in members:
        fn["index_entries"][(mid,)] = 0
    for named in g.static_members.values():
        fn["index_entries"][(named,)] += 1

    return Snapshot(
        clients=clients,
        members=tuple(sorted(members)),
        partitions=tuple(sorted(partitions)),
        relations={k: frozenset(v) for k, v in rel.items()},
        functions=fn,
    )


SNAPSHOTS.register(
    "consumer",
    SnapshotFacet(
        key=consumer_snapshot_key,
        key_after=consumer_snapshot_key_after,
        project=consumer_project_key,
    ),
)
