"""The consumer protocol's family (KIP-848 "Consumer Group Protocol"): its states are
``model.records.State``, run by ``model.consumer.system.consumer_initial``,
``consumer_enabled`` and ``consumer_step`` (``model.family``)."""

from __future__ import annotations

from model.consumer import system
from model.family import ProtocolFamily, identity, register
from model.records import Client, Group, State


def member_epoch(client: Client) -> int:
    """The epoch a client knows (``ProtocolFamily.client_epoch``): its member epoch, as the
    last ``ConsumerGroupHeartbeatResponse`` gave it."""
    return client.member_epoch


CONSUMER = register(
    ProtocolFamily(
        name="consumer",
        state_type=State,
        group_type=Group,
        initial=system.consumer_initial,
        enabled=system.consumer_enabled,
        step=system.consumer_step,
        shared=system.with_shared_group,
        one_family=identity,
        client_epoch=member_epoch,
        consumer_members=True,
    )
)
"""KIP-848's family (``Config.protocol == "consumer"``)."""
