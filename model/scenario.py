"""Starting points other than ``system.initial`` — a consistent STABLE group at a given
epoch, as the KIP-848 case studies begin ("Let's imagine a group with two members…") —
and ``Script``, a driver for writing scenarios in the KIP's narrative steps.

The built state is what the model itself reaches after the group settles (same records,
same partition epochs, clients consuming what the coordinator assigned), with the epochs
the caller chooses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from model import system
from model.actions import Action, DeliverMessage, LoseMessage, Reconcile, SendHeartbeat
from model.config import Config
from model.consumer import system as consumer_system
from model.ids import Assignment, FrozenMap
from model.records import Client, Group, Member, Message, SentFields, State, static_member_index
from model.status import ClientStatus, ConfigError, MemberState


def stable_state(config: Config, epoch: int, assignment: Mapping[str, Assignment]) -> State:
    """A STABLE group at group = assignment = member epoch ``epoch`` whose members are the
    clients named in ``assignment`` (each subscribed as configured, each consuming exactly
    its target partitions). Clients not named start as configured in ``system.initial``."""
    base = consumer_system.consumer_initial(config)
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
            assignment_epochs=(
                FrozenMap((tp, epoch) for tp in sorted(parts))
                if config.assignment_epochs
                else FrozenMap()
            ),
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
    stored = FrozenMap(members)
    group = Group(
        group_epoch=epoch,
        assignment_epoch=epoch,
        target_assignment=FrozenMap((m.member_id, m.assigned_partitions) for m in members.values()),
        members=stored,
        static_members=static_member_index(stored),
        partition_epochs=FrozenMap(partition_epochs),
        committed_offsets=FrozenMap(),
    )
    return replace(base, group=group, clients=tuple(clients))


class ScriptError(ConfigError):
    """A scripted step that is not possible in the current state."""


class Script:
    """Drive a config step by step in the vocabulary of the KIP's narration — "A
    heartbeats", "the response to B is lost" — through ``system.step`` only. Every step
    must be enabled; ``actions`` is the replayable path taken so far."""

    def __init__(self, config: Config, state: State | None = None) -> None:
        self.config = config
        self.state = state if state is not None else consumer_system.consumer_initial(config)
        self.actions: list[Action] = []

    def do(self, action: Action) -> State:
        if action not in system.enabled(self.state, self.config):
            raise ScriptError(f"step {len(self.actions)}: {action} is not enabled")
        self.state = consumer_system.consumer_step(self.state, action, self.config)
        self.actions.append(action)
        return self.state

    def message(self, client: str, to_coordinator: bool, newest: bool = False) -> Message:
        """The oldest (or newest) message in flight between ``client`` and the coordinator."""
        network = reversed(self.state.network) if newest else iter(self.state.network)
        for m in network:
            if m.client == client and m.to_coordinator == to_coordinator:
                return m
        where = "request from" if to_coordinator else "response to"
        raise ScriptError(f"step {len(self.actions)}: no {where} {client} in flight")

    def deliver(self, client: str, to_coordinator: bool, newest: bool = False) -> State:
        return self.do(DeliverMessage(self.message(client, to_coordinator, newest)))

    def lose(self, client: str, to_coordinator: bool) -> State:
        return self.do(LoseMessage(self.message(client, to_coordinator)))

    def heartbeat(self, client: str) -> State:
        """A full ConsumerGroupHeartbeat round trip."""
        self.do(SendHeartbeat(client))
        self.deliver(client, to_coordinator=True)
        return self.deliver(client, to_coordinator=False)

    def reconcile(self, client: str) -> State:
        """The client applies its target; a revocation's offset commit completes first."""
        self.do(Reconcile(client))
        if self.state.client(client).commit_in_flight and self.state.client(client).reconciling:
            self.deliver(client, to_coordinator=True)
            self.deliver(client, to_coordinator=False)
        return self.state
