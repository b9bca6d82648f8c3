"""The state of a mixed config: the group is a classic group or a consumer group (whose
members may speak the classic protocol), and the clients speak either protocol.

The same field names as ``model.records.State`` and ``model.classic.records.ClassicState``.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.classic.records import NO_ISSUED_IDS, ClassicClient, ClassicGroup
from model.ids import FrozenMap
from model.records import Client, Group, Message, Record, TopicMetadata, hash_once

AnyGroup = Group | ClassicGroup
AnyClient = Client | ClassicClient


@dataclass(frozen=True, slots=True)
class MixedState(Record):
    """The whole system of a mixed config: the group (``ClassicGroup`` or ``Group``, as the
    coordinator stores it now), the metadata, the consumer processes of both protocols and
    the network. ``issued_member_ids`` counts the member ids the coordinator handed to
    classic JoinGroups while the group is a consumer group (a classic group keeps its own
    count, ``ClassicGroup.issued_member_ids``; a conversion carries it over)."""

    group: AnyGroup
    topics: FrozenMap[str, TopicMetadata]
    clients: tuple[AnyClient, ...]
    network: tuple[Message, ...]
    perturbations: int = 0
    topic_generation: int = 0
    coordinator_loading: bool = False
    issued_member_ids: FrozenMap[str, int] = NO_ISSUED_IDS

    def client(self, name: str) -> AnyClient:
        """The client called ``name``."""
        for c in self.clients:
            if c.name == name:
                return c
        raise KeyError(name)


hash_once(MixedState)
