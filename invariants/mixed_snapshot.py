"""The mixed family's reading in the snapshot vocabulary (KIP-848 "Online Migration"): a
mixed state is read in the vocabulary of its group's family, every client of either
protocol projected as a client of that family (``invariants.families.SNAPSHOTS``)."""

from __future__ import annotations

from invariants.classic_snapshot import ClassicClientView, ClassicSnapshotKey, classic_client_view
from invariants.families import SNAPSHOTS, SnapshotFacet, key_after_by_reading
from invariants.snapshot import ClientView, SnapshotKey, client_view, project_key
from model.classic.client import IN_GROUP as CLASSIC_IN_GROUP
from model.classic.records import ClassicClient, ClassicGroup
from model.consumer.client import IN_GROUP
from model.ids import EMPTY
from model.migration.records import MixedState
from model.records import Client
from model.status import ClientStatus


def classic_as_client_view(c: ClassicClient) -> ClientView:
    """A classic client of a mixed state read in the KIP-848 vocabulary: its generation is
    its member epoch (a consumer group answers a classic JoinGroup with generation = member
    epoch); it never joins "at epoch 0" (a cooperative member rejoins keeping its
    partitions, KIP-429), and it revokes nothing in steps."""
    return (
        c.name,
        c.instance_id,
        c.member_id,
        max(c.generation_id, 0),
        c.incarnation,
        c.alive,
        c.alive and c.status in CLASSIC_IN_GROUP,
        False,
        EMPTY if c.stalled or not c.alive else c.owned,
        c.expired and c.alive,
        EMPTY,
        False,
    )


def client_as_classic_view(c: Client) -> ClassicClientView:
    """A consumer-protocol client of a mixed state read in the classic vocabulary: its
    member epoch as its generation (epoch 0, joining, as the reset generation -1), STABLE
    when it is."""
    return (
        c.name,
        c.instance_id,
        c.member_id,
        c.member_epoch if c.member_epoch > 0 else -1,
        c.incarnation,
        c.alive,
        c.alive and c.status in IN_GROUP,
        EMPTY if c.stalled or not c.alive else c.owned,
        c.expired and c.alive,
        c.alive and c.status is ClientStatus.STABLE,
    )


def mixed_snapshot_key(state: MixedState) -> SnapshotKey | ClassicSnapshotKey:
    """A mixed state read in the vocabulary of its group's family: every client, of either
    protocol, projected as a client of that family, so the properties of the group's
    family see all members and all clients."""
    group = state.group
    if isinstance(group, ClassicGroup):
        views = tuple(
            classic_client_view(c) if isinstance(c, ClassicClient) else client_as_classic_view(c)
            for c in state.clients
        )
        return (group, state.topics, views)
    return (
        group,
        state.topics,
        tuple(
            classic_as_client_view(c) if isinstance(c, ClassicClient) else client_view(c)
            for c in state.clients
        ),
    )


SNAPSHOTS.register(
    "mixed",
    SnapshotFacet(
        key=mixed_snapshot_key,
        key_after=key_after_by_reading(mixed_snapshot_key),
        project=project_key,
    ),
)
