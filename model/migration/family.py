"""The mixed family (KIP-848 "Online Migration"): classic and consumer-protocol clients in
one group, whose states are ``model.migration.records.MixedState``, run by
``model.migration.system`` (``model.family``). Its group is a classic or a consumer group,
so it has no group type of its own."""

from __future__ import annotations

from model.family import ProtocolFamily, identity, register
from model.migration import system
from model.migration.records import AnyClient, MixedState
from model.records import Client


def client_epoch(client: AnyClient) -> int:
    """The epoch a client knows (``ProtocolFamily.client_epoch``), by the protocol it
    speaks: a consumer-protocol client's member epoch, a classic client's generation."""
    return client.member_epoch if isinstance(client, Client) else client.generation_id


MIXED = register(
    ProtocolFamily(
        name="mixed",
        state_type=MixedState,
        group_type=None,
        initial=system.initial,
        enabled=system.enabled,
        step=system.step,
        shared=identity,
        one_family=system.family_state,
        client_epoch=client_epoch,
        consumer_members=True,
    )
)
"""Mixed groups' family (``Config.protocol == "mixed"``)."""
