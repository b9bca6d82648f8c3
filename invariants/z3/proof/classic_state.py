"""The symbolic state of the classic group coordinator, and the projection of a model state.

The classic counterpart of ``invariants.z3.proof.state`` (same sorts: member ids and
partitions are the uninterpreted sorts ``Member`` and ``Partition``; the generation and
instance numbers are integers). A ``ClassicSym`` holds one Z3 function or constant per
field of ``model.classic.records.ClassicGroup`` that the coordinator's rules
(``model.classic.coordinator``) read or write:

===================== =========================================================
``status``             0 EMPTY, 1 PREPARING_REBALANCE, 2 COMPLETING_REBALANCE,
                       3 STABLE (``ClassicGroup.state``; the codes of
                       ``invariants.classic_snapshot.STATUS_CODE``)
``generation``         ``ClassicGroup.generationId``
``has_leader``         the group has a leader; ``leader`` its member id
``is_member(m)``       the group has member ``m``
``instance(m)``        its ``group.instance.id`` as a number (0: a dynamic member)
``subscribed(m,p)``    ``p`` exists and ``m``'s JoinGroup subscription names its topic
``assigned(m,p)``      ``p`` is in ``m``'s assignment of the last SyncGroup phase
``owned(m,p)``         ``p`` is in the ``OwnedPartitions`` of ``m``'s JoinGroup
                       subscription (KIP-429)
``user_data(m,p)``     ``p`` is in the previous assignment the eager ``sticky``
                       assignor's user data of that subscription carries (KIP-341)
``claim_gen(m)``       the subscription's generation of those claims (-1: none)
``awaiting_join(m)``   the coordinator holds ``m``'s JoinGroup (``awaitingJoinFuture``)
``awaiting_sync(m)``   the coordinator holds ``m``'s SyncGroup (``awaitingSyncFuture``)
``pending(m)``         ``m`` is a KIP-394 pending member (``pendingJoinMembers``)
``pending_sync(m)``    the SyncGroup phase waits for ``m`` (``pendingSyncMembers``,
                       KAFKA-12890)
``issued(m)``          the coordinator has handed out member id ``m`` (the model's
                       ``issued_member_ids``: a new id is never one handed out before)
``committed_by(m,p)``  ``p``'s committed offset was written by ``m``
``committed_gen(p)``   the generation it was written at
``deletions``          ghost: how often the group was deleted (``ClassicGroup.deletions``)
===================== =========================================================

What it leaves out: the clients and the network (a request is any request a model client
can send: ``invariants.z3.proof.classic_transition``), the protocols (assignor names) and
the selected protocol (the rules' decisions on them are free parameters), the reply
addresses of held requests (only whether a request is held), the rebalance timeouts and
the topics: which partitions exist is seen only through the subscriptions (the classic
configurations delete no topic; ``AddPartitions`` adds one:
``classic_transition.metadata_change``), so a partition of the domain no member subscribes
to may be one not added yet.
Every per-member field of a non-member is false (0 for the instance number, -1 for the
claims' generation): the rules
mask what a removed member leaves behind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import z3

from invariants.classic_snapshot import STATUS_CODE
from invariants.z3.proof.state import MEMBER, PARTITION, Partition, Universe
from model.classic.records import ClassicGroup, ClassicState

BoolRef = Any
ExprRef = Any
FuncRef = Any

EMPTY, PREPARING, COMPLETING, STABLE = 0, 1, 2, 3
STATUS_NAME = {code: status.value for status, code in STATUS_CODE.items()}

MEMBER_FIELDS = (
    "is_member",
    "instance",
    "awaiting_join",
    "awaiting_sync",
    "pending_sync",
    "claim_gen",
)
"""The unary member fields masked to a member (``is_member`` itself aside)."""
MEMBER_RELATIONS = ("subscribed", "assigned", "owned", "user_data")
"""The binary member × partition fields masked to a member."""


@dataclass(frozen=True)
class ClassicSym:
    """One symbolic classic group: fresh Z3 functions and constants named
    ``classic.<field>.<tag>``."""

    tag: str
    status: ExprRef
    generation: ExprRef
    has_leader: ExprRef
    leader: ExprRef
    is_member: FuncRef
    instance: FuncRef
    subscribed: FuncRef
    assigned: FuncRef
    owned: FuncRef
    user_data: FuncRef
    claim_gen: FuncRef
    awaiting_join: FuncRef
    awaiting_sync: FuncRef
    pending: FuncRef
    pending_sync: FuncRef
    issued: FuncRef
    committed_by: FuncRef
    committed_gen: FuncRef
    deletions: ExprRef

    @staticmethod
    def fresh(tag: str) -> ClassicSym:
        M, P, B, N = MEMBER, PARTITION, z3.BoolSort(), z3.IntSort()

        def f(name: str, *sorts: Any) -> FuncRef:
            return z3.Function(f"classic.{name}.{tag}", *sorts)

        return ClassicSym(
            tag=tag,
            status=z3.Int(f"classic.status.{tag}"),
            generation=z3.Int(f"classic.generation.{tag}"),
            has_leader=z3.Bool(f"classic.has_leader.{tag}"),
            leader=z3.Const(f"classic.leader.{tag}", M),
            is_member=f("is_member", M, B),
            instance=f("instance", M, N),
            subscribed=f("subscribed", M, P, B),
            assigned=f("assigned", M, P, B),
            owned=f("owned", M, P, B),
            user_data=f("user_data", M, P, B),
            claim_gen=f("claim_gen", M, N),
            awaiting_join=f("awaiting_join", M, B),
            awaiting_sync=f("awaiting_sync", M, B),
            pending=f("pending", M, B),
            pending_sync=f("pending_sync", M, B),
            issued=f("issued", M, B),
            committed_by=f("committed_by", M, P, B),
            committed_gen=f("committed_gen", P, N),
            deletions=z3.Int(f"classic.deletions.{tag}"),
        )


# --------------------------------------------------------------------------- concrete values


@dataclass(frozen=True)
class ClassicMemberValue:
    """A classic member as the abstraction sees it."""

    instance: str | None
    subscribed: frozenset[Partition]
    assigned: frozenset[Partition]
    awaiting_join: bool
    awaiting_sync: bool
    owned: frozenset[Partition] = frozenset()
    user_data: frozenset[Partition] = frozenset()
    claim_gen: int = -1


@dataclass(frozen=True)
class ClassicValue:
    """The values of a ``ClassicSym`` on finite domains: what :func:`project` reads off a
    model state and :func:`decode` off a Z3 model."""

    status: int
    generation: int
    leader: str | None
    members: Mapping[str, ClassicMemberValue]
    pending: frozenset[str]
    pending_sync: frozenset[str]
    issued: frozenset[str]
    committed: Mapping[Partition, tuple[str, int]]
    deletions: int
    partitions: tuple[Partition, ...] = field(default=(), compare=False)
    """The partitions of the configuration's topics (a domain hint, not a field)."""

    def member_domain(self) -> tuple[str, ...]:
        ids = set(self.members) | set(self.pending) | set(self.issued)
        ids |= {mid for mid, _ in self.committed.values()}
        if self.leader is not None:
            ids.add(self.leader)
        return tuple(sorted(ids))

    def partition_domain(self) -> tuple[Partition, ...]:
        ps = set(self.partitions) | set(self.committed)
        for mv in self.members.values():
            ps |= mv.subscribed | mv.assigned | mv.owned | mv.user_data
        return tuple(sorted(ps))

    def instances(self) -> frozenset[str]:
        return frozenset(mv.instance for mv in self.members.values() if mv.instance is not None)


def project_group(
    group: ClassicGroup, existing: Mapping[str, tuple[Partition, ...]]
) -> ClassicValue:
    """The abstraction of a coordinator's classic group; ``existing`` gives each topic
    name's partitions (the metadata image)."""
    members = {
        mid: ClassicMemberValue(
            instance=m.instance_id,
            subscribed=frozenset(
                tp for name in m.subscription.topics for tp in existing.get(name, ())
            ),
            assigned=frozenset(m.assignment),
            awaiting_join=m.awaiting_join is not None,
            awaiting_sync=m.awaiting_sync is not None,
            owned=frozenset(m.subscription.owned_partitions),
            user_data=frozenset(m.subscription.user_data),
            claim_gen=m.subscription.generation_id,
        )
        for mid, m in group.members.items()
    }
    issued = frozenset(
        f"{client}.m{i}" for client, n in group.issued_member_ids.items() for i in range(1, n + 1)
    )
    return ClassicValue(
        status=STATUS_CODE[group.status],
        generation=group.generation_id,
        leader=group.leader_id,
        members=members,
        pending=frozenset(group.pending_members),
        pending_sync=frozenset(group.pending_sync),
        issued=issued,
        committed={tp: (c.member_id, c.member_epoch) for tp, c in group.committed_offsets.items()},
        deletions=group.deletions,
        partitions=tuple(sorted(tp for tps in existing.values() for tp in tps)),
    )


def project(state: ClassicState) -> ClassicValue:
    """The abstraction of a classic model state (``model.classic.records.ClassicState``):
    its group, over the partitions of its topics."""
    existing = {
        name: tuple((meta.topic_id, i) for i in range(meta.partitions))
        for name, meta in state.topics.items()
    }
    return project_group(state.group, existing)


def universe_for(
    *values: ClassicValue, members: Iterable[str] = (), instances: Iterable[str] = ()
) -> Universe:
    """The finite domains of ``values`` (their member ids, partitions and instance ids),
    with the extra member ids and instance ids given."""
    ms: set[str] = set(members)
    ps: set[Partition] = set()
    iids: set[str] = set(instances)
    for v in values:
        ms |= set(v.member_domain())
        ps |= set(v.partition_domain())
        iids |= v.instances()
    return Universe.of(ms or {"-"}, ps or {("", -1)}, iids)


def pin(sym: ClassicSym, value: ClassicValue, u: Universe) -> list[BoolRef]:
    """Constraints fixing ``sym`` to ``value`` on the universe ``u`` (the leader and the
    generation of an uncommitted partition are left open when there is none)."""
    out: list[BoolRef] = [
        sym.status == value.status,
        sym.generation == value.generation,
        sym.has_leader == (value.leader is not None),
        sym.deletions == value.deletions,
    ]
    if value.leader is not None:
        out.append(sym.leader == u.member_consts[value.leader])
    for mid, mc in u.member_consts.items():
        mv = value.members.get(mid)
        number = 0
        if mv is not None and mv.instance is not None:
            number = u.instances[mv.instance]
        out += [
            sym.is_member(mc) == (mv is not None),
            sym.instance(mc) == number,
            sym.awaiting_join(mc) == (mv is not None and mv.awaiting_join),
            sym.awaiting_sync(mc) == (mv is not None and mv.awaiting_sync),
            sym.claim_gen(mc) == (mv.claim_gen if mv is not None else -1),
            sym.pending(mc) == (mid in value.pending),
            sym.pending_sync(mc) == (mid in value.pending_sync),
            sym.issued(mc) == (mid in value.issued),
        ]
        for p, pc in u.partition_consts.items():
            committed = value.committed.get(p)
            out += [
                sym.subscribed(mc, pc) == (mv is not None and p in mv.subscribed),
                sym.assigned(mc, pc) == (mv is not None and p in mv.assigned),
                sym.owned(mc, pc) == (mv is not None and p in mv.owned),
                sym.user_data(mc, pc) == (mv is not None and p in mv.user_data),
                sym.committed_by(mc, pc) == (committed is not None and committed[0] == mid),
            ]
    for p, pc in u.partition_consts.items():
        if p in value.committed:
            out.append(sym.committed_gen(pc) == value.committed[p][1])
    return out


def decode(model: Any, sym: ClassicSym, u: Universe) -> ClassicValue:
    """The concrete values a Z3 model gives ``sym`` on the universe ``u`` (named as the
    universe names its constants)."""

    def b(x: ExprRef) -> bool:
        return bool(z3.is_true(model.eval(x, model_completion=True)))

    def n(x: ExprRef) -> int:
        return int(model.eval(x, model_completion=True).as_long())

    number_to_id = {v: k for k, v in u.instances.items()}
    members: dict[str, ClassicMemberValue] = {}
    for mid, mc in u.member_consts.items():
        if not b(sym.is_member(mc)):
            continue
        members[mid] = ClassicMemberValue(
            instance=number_to_id.get(n(sym.instance(mc))),
            subscribed=frozenset(
                p for p, pc in u.partition_consts.items() if b(sym.subscribed(mc, pc))
            ),
            assigned=frozenset(
                p for p, pc in u.partition_consts.items() if b(sym.assigned(mc, pc))
            ),
            awaiting_join=b(sym.awaiting_join(mc)),
            awaiting_sync=b(sym.awaiting_sync(mc)),
            owned=frozenset(p for p, pc in u.partition_consts.items() if b(sym.owned(mc, pc))),
            user_data=frozenset(
                p for p, pc in u.partition_consts.items() if b(sym.user_data(mc, pc))
            ),
            claim_gen=n(sym.claim_gen(mc)),
        )
    leader = None
    if b(sym.has_leader):
        leader_elem = model.eval(sym.leader, model_completion=True)
        leader = next(mid for mid, mc in u.member_consts.items() if b(mc == leader_elem))
    committed: dict[Partition, tuple[str, int]] = {}
    for p, pc in u.partition_consts.items():
        by = [mid for mid, mc in u.member_consts.items() if b(sym.committed_by(mc, pc))]
        if by:
            committed[p] = (by[0], n(sym.committed_gen(pc)))
    return ClassicValue(
        status=n(sym.status),
        generation=n(sym.generation),
        leader=leader,
        members=members,
        pending=frozenset(mid for mid, mc in u.member_consts.items() if b(sym.pending(mc))),
        pending_sync=frozenset(
            mid for mid, mc in u.member_consts.items() if b(sym.pending_sync(mc))
        ),
        issued=frozenset(mid for mid, mc in u.member_consts.items() if b(sym.issued(mc))),
        committed=committed,
        deletions=n(sym.deletions),
        partitions=tuple(u.partition_consts),
    )


def render(value: ClassicValue) -> list[str]:
    """Lines describing ``value`` in the classic protocol's vocabulary."""

    def ps(parts: Iterable[Partition]) -> str:
        return "{" + ", ".join(f"{t}-{i}" for t, i in sorted(parts)) + "}"

    lines = [
        f"{STATUS_NAME.get(value.status, f'status {value.status}')} at generation "
        f"{value.generation}, leader {value.leader or 'none'}"
        + (f", {value.deletions} deletion(s)" if value.deletions else "")
    ]
    for mid in sorted(value.members):
        mv = value.members[mid]
        held = [w for w, on in (("join", mv.awaiting_join), ("sync", mv.awaiting_sync)) if on]
        lines.append(
            f"  member {mid}"
            + (f" (instance {mv.instance})" if mv.instance is not None else "")
            + f": subscribed {ps(mv.subscribed)}, assigned {ps(mv.assigned)}"
            + (f", awaiting {' and '.join(held)}" if held else "")
            + (f", owned {ps(mv.owned)}" if mv.owned else "")
            + (f", user data {ps(mv.user_data)}" if mv.user_data else "")
            + (f", claims of generation {mv.claim_gen}" if mv.claim_gen >= 0 else "")
            + (", SyncGroup awaited" if mid in value.pending_sync else "")
        )
    if value.pending:
        lines.append("  pending members: " + ", ".join(sorted(value.pending)))
    if value.committed:
        lines.append(
            "  committed offsets: "
            + ", ".join(
                f"{t}-{i} by {m} at {g}" for (t, i), (m, g) in sorted(value.committed.items())
            )
        )
    return lines
