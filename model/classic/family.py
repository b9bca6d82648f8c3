"""The classic protocol's family (JoinGroup / SyncGroup, ``GroupMetadataManager``'s classic
groups): its states are ``model.classic.records.ClassicState``, run by
``model.classic.system`` (``model.family``)."""

from __future__ import annotations

from model.classic import system
from model.classic.records import ClassicClient, ClassicGroup, ClassicState
from model.family import ProtocolFamily, identity, register


def generation_id(client: ClassicClient) -> int:
    """The epoch a client knows (``ProtocolFamily.client_epoch``): its generation, as the
    last ``JoinGroupResponse`` gave it (-1 once reset)."""
    return client.generation_id


CLASSIC = register(
    ProtocolFamily(
        name="classic",
        state_type=ClassicState,
        group_type=ClassicGroup,
        initial=system.initial,
        enabled=system.enabled,
        step=system.step,
        shared=identity,
        one_family=identity,
        client_epoch=generation_id,
        consumer_members=False,
    )
)
"""The classic protocol's family (``Config.protocol == "classic"``)."""
