"""Protocol families: one ``ProtocolFamily`` record per family of group protocols, and the
registry ``model.system`` dispatches through (issue 39).

A family is what ``Config.protocol`` names: ``consumer`` (KIP-848 "Consumer Group
Protocol"; declared in ``model/consumer/family.py``), ``classic`` (JoinGroup / SyncGroup;
``model/classic/family.py``) and ``mixed`` (KIP-848 "Online Migration": classic and
consumer-protocol clients in one group; ``model/migration/family.py``). Each declaration
calls :func:`register` where it is written; the registry imports the declaring modules
(:data:`FAMILY_MODULES`) the first time it is asked, so this module imports none of them
and ``model.system`` → ``model.family`` closes no import cycle.

The layers above ``model/`` keep their own facets of a family (its snapshot vocabulary,
its drawing, its trace checks) in small registries keyed by :attr:`ProtocolFamily.name`
(``invariants/families.py``, ``reports/families.py``): ``model/`` cannot import them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from model.status import ConfigError

if TYPE_CHECKING:
    from model.actions import Action
    from model.config import Config

FAMILY_MODULES: tuple[str, ...] = (
    "model.consumer.family",
    "model.classic.family",
    "model.migration.family",
)
"""The modules that declare a family (each registers its own on import)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProtocolFamily:
    """One family of group protocols as ``model.system`` runs it: the ``Config.protocol``
    value that selects it, the record type of its states, and its ``initial``, ``enabled``
    and ``step`` (README.md, Conventions)."""

    name: str
    """The ``Config.protocol`` value (``model.config.Protocol``)."""
    state_type: type
    """The type of every state of the family (``initial``'s result, ``step``'s)."""
    group_type: type | None
    """The type of the family's group record, when it has one of its own; None for a
    family whose group is of another family's type (``mixed``: a classic or a consumer
    group, converted between the two)."""
    initial: Callable[[Config], Any]
    enabled: Callable[[Any, Config], tuple[Action, ...]]
    step: Callable[[Any, Action, Config], Any]
    one_family: Callable[[Any], Any]
    """The state as one of a family with a group type of its own (the identity for such
    a family; ``mixed``: ``model.migration.system.family_state``), for readers that know
    single-protocol states only."""
    shared: Callable[[Any], Any]
    """The state with the records this process's memos hold for its values (its own when
    they hold none): for a state rebuilt from a copy, such as one a parallel search's
    worker takes from another (KIP-848: ``model.consumer.system.with_shared_group``; the identity
    for a family whose steps keep no such memo)."""
    client_epoch: Callable[[Any], int]
    """The epoch a client of the family's states knows: its member epoch (KIP-848
    ``ConsumerGroupHeartbeatResponse.MemberEpoch``) or its generation (classic
    ``JoinGroupResponse.GenerationId``; ``mixed``: by the client's protocol)."""
    consumer_members: bool
    """Whether the family's groups can hold consumer-protocol members (KIP-848
    ``ConsumerGroupHeartbeat``): what ``validate --mode client`` replays."""


_FAMILIES: dict[str, ProtocolFamily] = {}
_BY_STATE: dict[type, ProtocolFamily] = {}
_BY_GROUP: dict[type, ProtocolFamily] = {}

FAMILIES: Mapping[str, ProtocolFamily] = MappingProxyType(_FAMILIES)
"""Every registered family by name (read-only; filled by :func:`load_families`)."""


def register(family: ProtocolFamily) -> ProtocolFamily:
    """Register ``family`` (once: a second family of the same name or state type is an
    error) and return it."""
    if family.name in _FAMILIES or family.state_type in _BY_STATE:
        raise ValueError(f"protocol family {family.name!r} is registered twice")
    _FAMILIES[family.name] = family
    _BY_STATE[family.state_type] = family
    if family.group_type is not None:
        _BY_GROUP[family.group_type] = family
    return family


def load_families() -> Mapping[str, ProtocolFamily]:
    """Import every module of :data:`FAMILY_MODULES` (each registers its family) and return
    :data:`FAMILIES`."""
    if len(_FAMILIES) < len(FAMILY_MODULES):
        for module in FAMILY_MODULES:
            importlib.import_module(module)
    return FAMILIES


def family_named(name: str) -> ProtocolFamily:
    """The family ``name`` (a ``Config.protocol`` value); an unknown name is a
    ``ConfigError`` naming the known ones."""
    family = _FAMILIES.get(name)
    if family is None:
        family = load_families().get(name)
    if family is None:
        raise ConfigError(
            f"unknown protocol {name!r}; known protocol families: {', '.join(sorted(_FAMILIES))}"
        )
    return family


def family_of(config: Config) -> ProtocolFamily:
    """The family of ``config`` (its ``protocol``)."""
    return family_named(config.protocol)


def family_of_state(state: object) -> ProtocolFamily:
    """The family whose states are of ``state``'s type."""
    family = _BY_STATE.get(type(state))
    if family is None:
        load_families()
        family = _BY_STATE.get(type(state))
    if family is None:
        raise TypeError(f"{type(state).__name__} is the state type of no protocol family")
    return family


def family_of_group(group: object) -> ProtocolFamily:
    """The family whose group records are of ``group``'s type (a mixed state's group is
    of the classic or the consumer family)."""
    family = _BY_GROUP.get(type(group))
    if family is None:
        load_families()
        family = _BY_GROUP.get(type(group))
    if family is None:
        raise TypeError(f"{type(group).__name__} is the group type of no protocol family")
    return family


def identity(state: Any) -> Any:
    """``ProtocolFamily.one_family`` of a family with a group type of its own."""
    return state
