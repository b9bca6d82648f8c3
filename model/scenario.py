"""Starting points other than ``system.initial``: a consistent STABLE group at a given
epoch, as the KIP-848 case studies begin ("Let's imagine a group with two members…").

The built state is what the model itself reaches after the group settles (same records,
same partition epochs, clients consuming what the coordinator assigned), with the epochs
the caller chooses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from model import system
from model.config import Config
from model.ids import Assignment, FrozenMap
from model.records import Client, Group, Member, SentFields, State
from model.status import ClientStatus, ConfigError, MemberState


def stable_state(config: Config, epoch: int, assignment: Mapping[str, Assignment]) -> State:
    """A STABLE group at group = assignment = member epoch ``epoch`` whose members are the
    clients named in ``assignment`` (each subscribed as configured, each consuming exactly
    its target partitions). Clients not named start as configured in ``system.initial``."""
    base = system.initial(config)
    if epoch < 1:
        raise ConfigError("a stable group with members has epoch >= 1")
    members: dict[str, Member] = {}
    partition_epochs: dict[tuple[str, int], int] = {}
    clients: list[Client] = []
    seen: set[tuple[str, int]] = set()
    for c in base.clients:
        if c.name not in assignment:
            clients.append(c)
            continue
        parts = frozenset(assignment[c.name])
        if parts & seen:
            raise ConfigError(f"partitions {sorted(parts & seen)} given to two members")
        seen |= parts
        member = Member(
            member_id=c.member_id,
            instance_id=c.instance_id,
            member_epoch=epoch,
            previous_member_epoch=epoch - 1,
            state=MemberState.STABLE,
            assigned_partitions=parts,
            partitions_pending_revocation=frozenset(),
            subscribed_topic_names=c.subscription,
            server_assignor=c.server_assignor,
            rebalance_timeout_ms=config.rebalance_timeout_ms,
        )
        members[member.member_id] = member
        for tp in parts:
            partition_epochs[tp] = epoch
        clients.append(
            replace(
                c,
                status=ClientStatus.STABLE,
                member_epoch=epoch,
                owned=parts,
                target=parts,
                sent=SentFields(c.subscription, c.server_assignor, parts),
            )
        )
    unknown = set(assignment) - {c.name for c in base.clients}
    if unknown:
        raise ConfigError(f"no client called {sorted(unknown)} in config {config.name!r}")
    group = Group(
        group_epoch=epoch,
        assignment_epoch=epoch,
        target_assignment=FrozenMap((m.member_id, m.assigned_partitions) for m in members.values()),
        members=FrozenMap(members),
        partition_epochs=FrozenMap(partition_epochs),
        committed_offsets=FrozenMap(),
    )
    return replace(base, group=group, clients=tuple(clients))
