"""The symbolic state of a mixed group's coordinator, and the projection of a model state.

A mixed configuration (``Config.protocol == "mixed"``, ``model.migration``) has one group
that is either a classic group or a consumer group whose members speak either protocol
(KIP-848 "Online Migration"). The abstraction keeps what the migration rules read and
write on a finite universe (the configuration's member ids, instance ids and server
assignors: ``MixedDomains``), each field one Z3 constant per member id, so every formula
is quantifier-free:

===================== =========================================================
``consumer``           the group is a consumer group (``model.records.Group``); false:
                       a classic group (``model.classic.records.ClassicGroup``)
``is_member[m]``       the group has member ``m``
``classic[m]``         it speaks the classic protocol (``ConsumerGroupMember``
                       ``useClassicProtocol``; every member of a classic group)
``instance[m]``        its ``group.instance.id`` as a number (0: a dynamic member)
``assignor[m]``        the server assignor it asks for as a number (0: none;
                       ``MixedDomains.assignors``)
``left[m]``            a static member's temporary leave: member epoch -2
                       (``LEAVE_GROUP_STATIC_MEMBER_EPOCH``)
``issued[m]``          the coordinator handed out member id ``m`` to a classic JoinGroup
                       (``MixedState.issued_member_ids`` of a consumer group,
                       ``ClassicGroup.issued_member_ids`` of a classic one)
``group_epoch``        the consumer group's epoch; ``assignment_epoch`` its target's
``target_assignor``    the server assignor that computed the target (0: none;
                       ghost ``Group.target_assignor``)
``breached``           ghost ``Group.migration_policy_breached``
``stable``             a classic group is STABLE (``ClassicGroupStatus``); false of a
                       consumer group
``topic[m][t]``        member ``m`` subscribes to topic ``t`` (``subscribed_topic_names``;
                       a classic group's member: ``ClassicSubscription.topics``)
``index[i]``           the member the static-member index maps instance ``i`` to, as
                       1 + its position in ``MixedDomains.members`` (0: none;
                       ``Group.static_members``; 0 of a classic group)
``target[m][p]``       partition ``p`` is in ``m``'s target assignment
                       (``Group.target_assignment``; a classic group's member: its
                       assignment, ``ClassicMember.assignment``)
===================== =========================================================

Topics and partitions are the configuration's (``MixedDomains.topics``, ``partitions``:
the relation covers no topic change). What it leaves out: the clients and the network,
the members' own assignments and partition epochs (the reconciliation), member epochs
but the -2 of a temporary leave,
the classic protocols (whether a JoinGroup shares one with the group is a free parameter)
and everything of a classic group but its members, their instance ids, subscriptions and
assignments and whether it is STABLE (its rules are
``invariants.z3.proof.classic_transition``'s; here a classic group changes freely). Of a
classic group the consumer-group fields are 0 (false); every per-member field of a
non-member is 0 (false).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import z3

from model.classic.records import ClassicGroup
from model.config import Config
from model.consumer.client import member_id_for
from model.migration.records import MixedState
from model.records import LEAVE_GROUP_STATIC_MEMBER_EPOCH, Group
from model.status import ClassicGroupStatus

BoolRef = Any
ExprRef = Any

UNARY = ("is_member", "classic", "instance", "assignor", "left", "issued")
"""The per-member fields."""
SCALAR = (
    "consumer",
    "group_epoch",
    "assignment_epoch",
    "target_assignor",
    "breached",
    "stable",
)
"""The group's fields."""
NESTED = ("topic", "target")
"""The per-member fields with one Bool per topic (``topic``) or partition (``target``);
all false for a non-member."""
INDEX = "index"
"""The per-instance field (one Int per instance number, not masked: an entry may name a
member id that left)."""
MASKED = ("classic", "instance", "assignor", "left")
"""The per-member fields that are 0 (false) for a non-member."""
BOOLS = frozenset(
    {"consumer", "breached", "stable", "is_member", "classic", "left", "issued", *NESTED}
)


@dataclass(frozen=True)
class MixedDomains:
    """The finite universe of a mixed configuration: the member ids its clients can have
    (consumer-protocol clients: ``client.member_id_for`` of each incarnation; classic
    clients: ``<client>.m<k>`` for the first ids handed out), the instance ids
    (numbered from 1) and the server assignors (numbered from 1 in name order, so that the
    smaller number wins a tie as ``target.preferred_server_assignor`` says)."""

    members: tuple[str, ...]
    classic_ids: frozenset[str]
    """The member ids of classic clients (those a classic JoinGroup can carry)."""
    client_of: Mapping[str, str]
    instances: Mapping[str, int]
    assignors: Mapping[str, int]
    default_assignor: int
    """``Config.server_assignors[0]``: the assignor of a group whose members ask for none."""
    previous_id: Mapping[str, str] = field(default_factory=dict)
    """A classic client's member id → the one handed out to it before
    (``mco.issue_member_id`` counts per client)."""
    instances_of: Mapping[str, frozenset[int]] = field(default_factory=dict)
    """A member id → the instance numbers its client can send (0: none)."""
    assignors_of: Mapping[str, frozenset[int]] = field(default_factory=dict)
    """A consumer-protocol member id → the server assignors its client can ask for."""
    topics: tuple[str, ...] = ()
    """The topic names a member can subscribe to: the configuration's topics and its
    clients' subscriptions."""
    partitions: Mapping[str, str] = field(default_factory=dict)
    """Each partition of the configuration's topics, ``<topic>-<index>`` → its topic."""
    topics_of: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """A member id → the topics its client subscribes to (``ClientSpec.topics``)."""


ID_SLOTS = 2
"""Member ids per classic client in the universe by default (BMC takes one per step: a
step hands out at most one id)."""


def domains_of(config: Config, id_slots: int = ID_SLOTS) -> MixedDomains:
    """The universe of ``config`` (``MixedDomains``), with ``id_slots`` member ids per
    classic client."""
    changes = config.max_perturbations > 0 and config.allows("ChangeInstanceId")
    iids = sorted(
        {c.instance_id for c in config.clients if c.instance_id}
        | {c.alt_instance_id for c in config.clients if c.alt_instance_id and changes}
    )
    instances = {iid: i + 1 for i, iid in enumerate(iids)}
    assignors = {a: i + 1 for i, a in enumerate(sorted(set(config.server_assignors)))}
    members: list[str] = []
    classic_ids: set[str] = set()
    client_of: dict[str, str] = {}
    previous: dict[str, str] = {}
    instances_of: dict[str, frozenset[int]] = {}
    assignors_of: dict[str, frozenset[int]] = {}
    topics_of: dict[str, frozenset[str]] = {}
    subscribed = {t for c in config.clients for t in c.subscription}
    topics = sorted({t for t, _ in config.topics} | subscribed)
    partitions = {f"{t}-{i}": t for t, n in config.topics for i in range(n)}
    for c in config.clients:
        own = {instances[c.instance_id] if c.instance_id else 0}
        if changes and c.alt_instance_id:
            own.add(instances[c.alt_instance_id])
        if c.group_protocol == "classic":
            ids = [f"{c.name}.m{k}" for k in range(1, id_slots + 1)]
            classic_ids |= set(ids)
            for a, b in itertools.pairwise(ids):
                previous[b] = a
        else:
            ids = [member_id_for(c.name, k) for k in range(config.max_restarts + 1)]
        for mid in ids:
            members.append(mid)
            client_of[mid] = c.name
            instances_of[mid] = frozenset(own)
            asks = {0} if c.server_assignor is None else {assignors[c.server_assignor]}
            assignors_of[mid] = frozenset(asks)
            topics_of[mid] = frozenset(c.subscription)
    return MixedDomains(
        members=tuple(members),
        classic_ids=frozenset(classic_ids),
        client_of=client_of,
        instances=instances,
        assignors=assignors,
        default_assignor=assignors[config.server_assignors[0]],
        previous_id=previous,
        instances_of=instances_of,
        assignors_of=assignors_of,
        topics=tuple(topics),
        partitions=partitions,
        topics_of=topics_of,
    )


@dataclass(frozen=True)
class MixedTerm:
    """A mixed group as Z3 terms: the scalar fields and, per member id, the member's."""

    consumer: BoolRef
    group_epoch: ExprRef
    assignment_epoch: ExprRef
    target_assignor: ExprRef
    breached: BoolRef
    stable: BoolRef
    is_member: Mapping[str, BoolRef]
    classic: Mapping[str, BoolRef]
    instance: Mapping[str, ExprRef]
    assignor: Mapping[str, ExprRef]
    left: Mapping[str, BoolRef]
    issued: Mapping[str, BoolRef]
    topic: Mapping[str, Mapping[str, BoolRef]]
    target: Mapping[str, Mapping[str, BoolRef]]
    index: Mapping[int, ExprRef]


@dataclass(frozen=True)
class MixedSym(MixedTerm):
    """One symbolic mixed state: fresh Z3 constants named
    ``mixed.<field>.<tag>[.<id>[.<topic or partition>]]``."""

    tag: str = ""

    @staticmethod
    def fresh(tag: str, d: MixedDomains) -> MixedSym:
        ids = d.members

        def const(name: str) -> ExprRef:
            return z3.Bool(name) if name.split(".")[1] in BOOLS else z3.Int(name)

        scalars = {k: const(f"mixed.{k}.{tag}") for k in SCALAR}
        unary = {k: {m: const(f"mixed.{k}.{tag}.{m}") for m in ids} for k in UNARY}
        keys = {"topic": d.topics, "target": tuple(d.partitions)}
        nested = {
            k: {m: {x: const(f"mixed.{k}.{tag}.{m}.{x}") for x in keys[k]} for m in ids}
            for k in NESTED
        }
        index = {i: z3.Int(f"mixed.index.{tag}.{i}") for i in sorted(d.instances.values())}
        return MixedSym(tag=tag, **scalars, **unary, **nested, index=index)


# --------------------------------------------------------------------------- concrete values


@dataclass(frozen=True)
class MixedMemberValue:
    """A member as the abstraction sees it."""

    classic: bool
    instance: str | None
    assignor: str | None
    left: bool
    topics: frozenset[str] = frozenset()
    target: frozenset[str] = frozenset()
    """The partitions of its target (``<topic>-<index>``)."""


@dataclass(frozen=True)
class MixedValue:
    """The values of a ``MixedSym``: what :func:`project` reads off a model state and
    :func:`decode` off a Z3 model."""

    consumer: bool
    members: Mapping[str, MixedMemberValue]
    issued: frozenset[str]
    group_epoch: int = 0
    assignment_epoch: int = 0
    target_assignor: str | None = None
    breached: bool = False
    stable: bool = False
    index: Mapping[str, str] = field(default_factory=dict)
    """The static-member index: instance id → member id (empty of a classic group)."""
    targets: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """The target entries of member ids that are not members (none under the reference
    rules: ``remove_member`` and ``replace_static_member`` drop them)."""


def _issued(counts: Mapping[str, int]) -> frozenset[str]:
    return frozenset(f"{c}.m{i}" for c, n in counts.items() for i in range(1, n + 1))


def _names(state: MixedState) -> Callable[[Iterable[tuple[str, int]]], frozenset[str]]:
    """Partitions (topic id, index) as ``<topic name>-<index>``."""
    name = {meta.topic_id: t for t, meta in state.topics.items()}
    return lambda parts: frozenset(f"{name.get(tid, tid)}-{i}" for tid, i in parts)


def project(state: MixedState) -> MixedValue:
    """The abstraction of a mixed model state (``model.migration.records.MixedState``)."""
    g = state.group
    names = _names(state)
    if isinstance(g, ClassicGroup):
        return MixedValue(
            consumer=False,
            members={
                mid: MixedMemberValue(
                    True,
                    m.instance_id,
                    None,
                    False,
                    topics=frozenset(m.subscription.topics),
                    target=names(m.assignment),
                )
                for mid, m in g.members.items()
            },
            issued=_issued(g.issued_member_ids),
            stable=g.status is ClassicGroupStatus.STABLE,
        )
    assert isinstance(g, Group)
    return MixedValue(
        consumer=True,
        members={
            mid: MixedMemberValue(
                classic=m.classic is not None,
                instance=m.instance_id,
                assignor=m.server_assignor,
                left=m.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                topics=frozenset(m.subscribed_topic_names or ()),
                target=names(g.target_assignment.get(mid, frozenset())),
            )
            for mid, m in g.members.items()
        },
        issued=_issued(state.issued_member_ids),
        group_epoch=g.group_epoch,
        assignment_epoch=g.assignment_epoch,
        target_assignor=g.target_assignor,
        breached=g.migration_policy_breached,
        index=dict(g.static_members.items()),
        targets={
            mid: names(parts)
            for mid, parts in g.target_assignment.items()
            if mid not in g.members and parts
        },
    )


class OutsideUniverse(ValueError):
    """A model state names a member id, instance id or assignor the universe lacks."""


def pin(sym: MixedTerm, value: MixedValue, d: MixedDomains) -> list[BoolRef]:
    """Constraints fixing ``sym`` to ``value``."""

    def number(table: Mapping[str, int], name: str | None) -> int:
        if name is None:
            return 0
        if name not in table:
            raise OutsideUniverse(name)
        return table[name]

    extra = (set(value.members) | set(value.issued)) - set(d.members)
    if extra:
        raise OutsideUniverse(", ".join(sorted(extra)))
    out: list[BoolRef] = [
        sym.consumer == value.consumer,
        sym.group_epoch == value.group_epoch,
        sym.assignment_epoch == value.assignment_epoch,
        sym.target_assignor == number(d.assignors, value.target_assignor),
        sym.breached == value.breached,
        sym.stable == value.stable,
    ]
    if set(value.targets) - set(d.members):
        raise OutsideUniverse(", ".join(sorted(set(value.targets) - set(d.members))))
    pos = {m: i + 1 for i, m in enumerate(d.members)}
    for holder in value.index.values():
        if holder not in pos:
            raise OutsideUniverse(holder)
    for iid, i in d.instances.items():
        entry = value.index.get(iid)
        out.append(sym.index[i] == (pos[entry] if entry is not None else 0))
    if set(value.index) - set(d.instances):
        raise OutsideUniverse(", ".join(sorted(set(value.index) - set(d.instances))))
    for mid in d.members:
        mv = value.members.get(mid)
        topics: frozenset[str] = mv.topics if mv else frozenset()
        target = mv.target if mv else value.targets.get(mid, frozenset())
        if not topics <= set(d.topics) or not target <= set(d.partitions):
            outside = (topics - set(d.topics)) | (target - set(d.partitions))
            raise OutsideUniverse(", ".join(sorted(outside)))
        out += [sym.topic[mid][t] == (t in topics) for t in d.topics]
        out += [sym.target[mid][x] == (x in target) for x in d.partitions]
        out += [
            sym.is_member[mid] == (mv is not None),
            sym.classic[mid] == (mv is not None and mv.classic),
            sym.instance[mid] == (number(d.instances, mv.instance) if mv else 0),
            sym.assignor[mid] == (number(d.assignors, mv.assignor) if mv else 0),
            sym.left[mid] == (mv is not None and mv.left),
            sym.issued[mid] == (mid in value.issued),
        ]
    return out


def decode(model: Any, sym: MixedTerm, d: MixedDomains) -> MixedValue:
    """The values a Z3 model gives ``sym``."""

    def b(x: ExprRef) -> bool:
        return bool(z3.is_true(model.eval(x, model_completion=True)))

    def n(x: ExprRef) -> int:
        return int(model.eval(x, model_completion=True).as_long())

    iname = {v: k for k, v in d.instances.items()}
    aname = {v: k for k, v in d.assignors.items()}

    def topics(mid: str) -> frozenset[str]:
        return frozenset(t for t in d.topics if b(sym.topic[mid][t]))

    def target(mid: str) -> frozenset[str]:
        return frozenset(x for x in d.partitions if b(sym.target[mid][x]))

    members = {
        mid: MixedMemberValue(
            classic=b(sym.classic[mid]),
            instance=iname.get(n(sym.instance[mid])),
            assignor=aname.get(n(sym.assignor[mid])),
            left=b(sym.left[mid]),
            topics=topics(mid),
            target=target(mid),
        )
        for mid in d.members
        if b(sym.is_member[mid])
    }
    targets = {mid: target(mid) for mid in d.members if mid not in members and target(mid)}
    return MixedValue(
        consumer=b(sym.consumer),
        members=members,
        issued=frozenset(mid for mid in d.members if b(sym.issued[mid])),
        group_epoch=n(sym.group_epoch),
        assignment_epoch=n(sym.assignment_epoch),
        target_assignor=aname.get(n(sym.target_assignor)),
        breached=b(sym.breached),
        stable=b(sym.stable),
        index={
            iid: d.members[n(sym.index[i]) - 1]
            for iid, i in d.instances.items()
            if 1 <= n(sym.index[i]) <= len(d.members)
        },
        targets=targets,
    )


def render(value: MixedValue) -> list[str]:
    """Lines describing ``value``."""
    if value.consumer:
        head = (
            f"consumer group at epoch {value.group_epoch}, target epoch "
            f"{value.assignment_epoch} by {value.target_assignor or 'no assignor'}"
            + (", migration policy breached" if value.breached else "")
        )
    else:
        head = "classic group" + (", STABLE" if value.stable else "")
    lines = [head]
    for mid in sorted(value.members):
        mv = value.members[mid]
        lines.append(
            f"  member {mid}: {'classic' if mv.classic else 'consumer'} protocol"
            + (f", instance {mv.instance}" if mv.instance is not None else "")
            + (f", asks for {mv.assignor}" if mv.assignor is not None else "")
            + (", left with epoch -2" if mv.left else "")
            + (f", subscribes to {', '.join(sorted(mv.topics))}" if mv.topics else "")
            + (
                f", {'target' if value.consumer else 'assigned'} {', '.join(sorted(mv.target))}"
                if mv.target
                else ""
            )
        )
    if value.issued:
        lines.append("  member ids handed out: " + ", ".join(sorted(value.issued)))
    stale = {i: m for i, m in value.index.items() if value.members.get(m, None) is None}
    stale |= {
        i: m
        for i, m in value.index.items()
        if m in value.members and value.members[m].instance != i
    }
    if stale:
        lines.append("  static index: " + ", ".join(f"{i} → {m}" for i, m in sorted(stale.items())))
    return lines
