"""The classic protocol's family (JoinGroup / SyncGroup, ``GroupMetadataManager``'s classic
groups): its states are ``model.classic.records.ClassicState``, run by
``model.classic.system`` (``model.family``)."""

from __future__ import annotations

from model.classic import system
from model.classic.records import ClassicGroup, ClassicState
from model.family import ProtocolFamily, identity, register

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
    )
)
"""The classic protocol's family (``Config.protocol == "classic"``)."""
