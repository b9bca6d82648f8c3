"""The symbolic state of the KIP-848 coordinator core, and the projection of a model state.

The abstraction (docs/invariants.md, "Proofs for groups of any size"): member ids and
partitions are two uninterpreted sorts, so a formula that holds of every symbolic state
holds of groups of any size; epochs are integers. A symbolic state is a set of Z3
functions over those sorts, one per field of the coordinator's ``Group`` that the core
reads or writes:

==================== =========================================================
``is_member(m)``      the group has member ``m``
``epoch(m)``          its member epoch; ``prev(m)`` its previous member epoch
``mstate(m)``         0 STABLE, 1 UNREVOKED_PARTITIONS, 2 UNRELEASED_PARTITIONS
``assigned(m,p)``     ``p`` is in its assigned partitions
``revoking(m,p)``     ``p`` is in its partitions pending revocation
``target(m,p)``       ``p`` is in its target assignment
``subscribed(m,p)``   ``p`` exists and ``m`` subscribes to its topic
``committed_by(m,p)`` ``p``'s committed offset was written by ``m``
``committed_epoch(p)`` the member epoch it was written at
``pe_held(p)``        ``p`` has an entry in the partition epochs
                      (``ConsumerGroup.currentPartitionEpoch``); ``pe(p)`` its epoch
``group_epoch``       the group epoch; ``assignment_epoch`` the target's epoch
``loading``           a new coordinator is loading the group (``CoordinatorFailover``)
``server_error``      ghost: a heartbeat's write was refused by the partition-epoch
                      bookkeeping (UNKNOWN_SERVER_ERROR) at some point
==================== =========================================================

With KIP-1251 assignment epochs (``Config.assignment_epochs``; ``fresh(tag, epochs=True)``)
two more fields, ``None`` otherwise:

==================== =========================================================
``since(m,p)``        the epoch at which ``m`` was assigned ``p`` it holds
                      (``Member.assignment_epochs``; read where ``m`` holds ``p``)
``holder_rejected``   ghost: a commit KIP-1251 must accept was refused at some point
                      (``Group.holder_commit_rejected``)
==================== =========================================================

With the KIP-1251 assignment history too (``fresh(tag, epochs=True, history=True)``: what
``groupcheck prove`` keeps of a configuration with assignment epochs) one more field,
``None`` otherwise:

==================== =========================================================
``history(m,p,e)``    ghost: ``m`` was ever stamped with ``p`` at assignment epoch
                      ``e`` (``Group.assignment_history``; a member id is a holder's
                      identity, static members and assignment epochs not being
                      encoded together)
==================== =========================================================

With static membership (a configuration with instance ids; ``fresh(tag, static=True)``) one
more field, ``None`` otherwise:

==================== =========================================================
``instance(m)``       the member's ``group.instance.id`` as a number (0: none, a
                      dynamic member); the static-member index
                      (``Group.static_members``) is read off it: the member of the
                      group with that instance id (``ConsumerGroup.staticMemberId``;
                      under the reference rules the index is exactly what the
                      members' instance ids say, ``records.static_member_index``)
==================== =========================================================

With KIP-211 offset expiry (a configuration allowing ``ExpireOffsets``;
``fresh(tag, expiry=True)``) and with group deletion (one allowing ``DeleteGroup`` or
deleting expired groups; ``fresh(tag, deletion=True)``) more fields, ``None`` otherwise:

==================== ==================================================
``present(p)``        ``p`` is a partition of a topic in the metadata image (the
                      snapshot's ``exists``): expiry reads only existing topics'
                      offsets (``coordinator.expirations``), and ``NoLiveOffsetExpires``
                      tells an expired offset from a deleted topic's
``deleted``           the group was deleted and no member has joined since
                      (``Group.deleted``)
``deletions``         ghost: how often the group was deleted (``Group.deletions``)
=======
With KIP-1263 assignor offload (``Config.assignor_offload``; ``fresh(tag, runs=RUN_SLOTS)``)
the assignor runs in flight on the coordinator's executor (``Group.assignor_runs``), oldest
first, in a fixed number of slots (``RUN_SLOTS``; empty otherwise):

==================== =========================================================
``runs[k].on``        slot ``k`` holds a run (the slots in use are a prefix)
``runs[k].epoch``     the group epoch the run was started at
``runs[k].target``    ``target(m,p)``: ``p`` is in the run's result for ``m``
                      (``AssignorRun.target_assignment``)
``runs[k].deleted``   with group deletion too: the group was deleted while the run
                      ran (``AssignorRun.group_deleted``)
==================== =========================================================

With KIP-1263 assignment batching (a positive ``Config.effective_assignment_interval_ms``;
``fresh(tag, batching=True)``) one more field, ``None`` otherwise:

==================== =========================================================
``interval_pending``  the assignment interval has not passed since the last target
                      computation finished (``Group.assignment_timestamp`` set and
                      not ``assignment_interval_elapsed``): the batching gate
                      (``target.assignment_interval_open``) is closed. The model's
                      two open states (no timestamp; the interval elapsed) behave
                      alike, so one flag is exact
==================== =========================================================

What it leaves out: the clients and the network (a request the coordinator receives is
any request, constrained only by what the model's clients can send: see
``invariants.z3.proof.transition``), timers (a timer fires for any member), topics (a
metadata change changes every subscription arbitrarily), static membership and KIP-1251
assignment epochs unless asked for (above), regular expressions as such, the
assignor (any valid target). Integer fields of a non-member are unconstrained (the model
has no such member).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import z3

from invariants.expr import Snapshot
from invariants.snapshot import project as snapshot_of
from model.records import Group, State
from model.status import MemberState

BoolRef = Any  # z3.BoolRef: z3 ships no type stubs
ExprRef = Any
FuncRef = Any
ModelRef = Any

MEMBER = z3.DeclareSort("Member")
PARTITION = z3.DeclareSort("Partition")

STABLE, UNREVOKED, UNRELEASED = 0, 1, 2
STATE_CODE = {
    MemberState.STABLE: STABLE,
    MemberState.UNREVOKED_PARTITIONS: UNREVOKED,
    MemberState.UNRELEASED_PARTITIONS: UNRELEASED,
}
STATE_NAME = {v: k.value for k, v in STATE_CODE.items()}

Partition = tuple[str, int]


@dataclass(frozen=True)
class SymState:
    """One symbolic state: fresh Z3 functions and constants named ``<field>.<tag>``."""

    tag: str
    is_member: FuncRef
    epoch: FuncRef
    prev: FuncRef
    mstate: FuncRef
    assigned: FuncRef
    revoking: FuncRef
    target: FuncRef
    subscribed: FuncRef
    committed_by: FuncRef
    committed_epoch: FuncRef
    pe_held: FuncRef
    pe: FuncRef
    group_epoch: ExprRef
    assignment_epoch: ExprRef
    loading: ExprRef
    server_error: ExprRef
    since: FuncRef | None = None
    holder_rejected: ExprRef | None = None
    instance: FuncRef | None = None
    present: FuncRef | None = None
    deleted: ExprRef | None = None
    deletions: ExprRef | None = None
    runs: tuple[RunSlot, ...] = ()
    interval_pending: ExprRef | None = None
    history: FuncRef | None = None

    @staticmethod
    def fresh(
        tag: str,
        epochs: bool = False,
        static: bool = False,
        runs: int = 0,
        *,
        expiry: bool = False,
        deletion: bool = False,
        batching: bool = False,
        history: bool = False,
    ) -> SymState:
        M, P, B, N = MEMBER, PARTITION, z3.BoolSort(), z3.IntSort()

        def f(name: str, *sorts: Any) -> FuncRef:
            return z3.Function(f"{name}.{tag}", *sorts)

        return SymState(
            tag=tag,
            is_member=f("is_member", M, B),
            epoch=f("epoch", M, N),
            prev=f("prev", M, N),
            mstate=f("mstate", M, N),
            assigned=f("assigned", M, P, B),
            revoking=f("revoking", M, P, B),
            target=f("target", M, P, B),
            subscribed=f("subscribed", M, P, B),
            committed_by=f("committed_by", M, P, B),
            committed_epoch=f("committed_epoch", P, N),
            pe_held=f("pe_held", P, B),
            pe=f("pe", P, N),
            group_epoch=z3.Int(f"group_epoch.{tag}"),
            assignment_epoch=z3.Int(f"assignment_epoch.{tag}"),
            loading=z3.Bool(f"loading.{tag}"),
            server_error=z3.Bool(f"server_error.{tag}"),
            since=f("since", M, P, N) if epochs else None,
            holder_rejected=z3.Bool(f"holder_rejected.{tag}") if epochs else None,
            instance=f("instance", M, N) if static else None,
            present=f("present", P, B) if expiry else None,
            deleted=z3.Bool(f"deleted.{tag}") if deletion else None,
            deletions=z3.Int(f"deletions.{tag}") if deletion else None,
            runs=tuple(RunSlot.fresh(tag, k, static, deletion) for k in range(runs)),
            interval_pending=z3.Bool(f"interval_pending.{tag}") if batching else None,
            history=f("history", M, P, N, B) if epochs and history else None,
        )

    def instance_of(self, m: ExprRef) -> ExprRef:
        """``m``'s instance id as a number (0 when the state keeps none: dynamic members)."""
        return self.instance(m) if self.instance is not None else z3.IntVal(0)

    def holds(self, m: ExprRef, p: ExprRef) -> BoolRef:
        """Assigned or pending revocation: the coordinator's view of ownership."""
        return z3.Or(self.assigned(m, p), self.revoking(m, p))

    def group_status(self) -> ExprRef:
        """``coordinator.group_status`` (``ConsumerGroup.maybeUpdateGroupState``), derived
        from the fields: 0 EMPTY, 1 ASSIGNING, 2 RECONCILING, 3 STABLE."""
        m = z3.Const("status.m", MEMBER)
        anyone = z3.Exists([m], self.is_member(m))
        unsettled = z3.Exists(
            [m],
            z3.And(
                self.is_member(m),
                z3.Not(z3.And(self.mstate(m) == STABLE, self.epoch(m) == self.assignment_epoch)),
            ),
        )
        return z3.If(
            z3.Not(anyone),
            0,
            z3.If(self.group_epoch > self.assignment_epoch, 1, z3.If(unsettled, 2, 3)),
        )


@dataclass(frozen=True)
class RunSlot:
    """One slot of the assignor runs in flight (KIP-1263 "Assignment Offload";
    ``model.records.AssignorRun``): whether it holds a run, the run's group epoch, its
    result, the members it assigned (the group's members when it started:
    ``AssignorRun.member_ids``) and, with static members, their instance numbers then
    (``AssignorRun.static_members``; 0 for a dynamic member) and, with group deletion,
    whether the group was deleted while it ran (``AssignorRun.group_deleted``)."""

    on: ExprRef
    epoch: ExprRef
    target: FuncRef
    member: FuncRef
    instance: FuncRef | None = None
    deleted: ExprRef | None = None

    @staticmethod
    def fresh(tag: str, k: int, static: bool = False, deletion: bool = False) -> RunSlot:
        return RunSlot(
            z3.Bool(f"run{k}.on.{tag}"),
            z3.Int(f"run{k}.epoch.{tag}"),
            z3.Function(f"run{k}.target.{tag}", MEMBER, PARTITION, z3.BoolSort()),
            z3.Function(f"run{k}.member.{tag}", MEMBER, z3.BoolSort()),
            z3.Function(f"run{k}.instance.{tag}", MEMBER, z3.IntSort()) if static else None,
            z3.Bool(f"run{k}.deleted.{tag}") if deletion else None,
        )


RUN_SLOTS = 2
"""The run slots of a state with assignor offload: the reference rules keep at most one
run in flight (``target.start_assignor_run``); the second slot holds what a rule starting
another one would (``two-runs-in-flight``)."""


def run_count(s: SymState) -> ExprRef:
    """The number of assignor runs in flight (``len(Group.assignor_runs)``)."""
    return z3.Sum([z3.If(r.on, 1, 0) for r in s.runs]) if s.runs else z3.IntVal(0)


Run = tuple[int, frozenset[tuple[str, Partition]], frozenset[tuple[str, str | None]], bool]
"""A run's group epoch, its result as (member id, partition) pairs, the members it
assigned with their instance ids when it started (``None``: a dynamic member), and whether
its group was deleted while it ran (``AssignorRun.group_deleted``; False where the states
keep no deletion)."""


MEMBER_RELATIONS = ("assigned", "revoking", "target", "subscribed", "committed_by")
"""The binary relations of a symbolic state (member × partition)."""


# --------------------------------------------------------------------------- concrete values


@dataclass(frozen=True)
class MemberValue:
    """A member as the abstraction sees it."""

    epoch: int
    prev: int
    state: int
    assigned: frozenset[Partition]
    revoking: frozenset[Partition]
    subscribed: frozenset[Partition]
    instance: str | None = None
    """Its ``group.instance.id`` (``None``: a dynamic member)."""


@dataclass(frozen=True)
class Concrete:
    """The values of a symbolic state on finite domains: what :func:`project` reads off a
    model state, and what :func:`decode` reads off a Z3 model."""

    members: Mapping[str, MemberValue]
    target: frozenset[tuple[str, Partition]]
    committed: Mapping[Partition, tuple[str, int]]
    partition_epochs: Mapping[Partition, int]
    group_epoch: int
    assignment_epoch: int
    loading: bool
    server_error: bool | None = None
    """``None`` when the ghost is not projected (a model state has no such field)."""
    extra_members: tuple[str, ...] = ()
    """Member ids of the domain that are not members (committers gone, joiners to come)."""
    extra_partitions: tuple[Partition, ...] = field(default=())
    since: Mapping[tuple[str, Partition], int] | None = None
    """KIP-1251 assignment epochs of the partitions members hold (``None``: not kept)."""
    holder_rejected: bool | None = None
    """``Group.holder_commit_rejected`` (``None``: not kept)."""
    present: frozenset[Partition] | None = None
    """The partitions of the topics that exist (``None``: not kept; KIP-211 expiry)."""
    deleted: bool | None = None
    """``Group.deleted`` (``None``: not kept; group deletion)."""
    deletions: int | None = None
    """``Group.deletions`` (``None``: not kept; group deletion)."""
    runs: tuple[Run, ...] | None = None
    """KIP-1263: the assignor runs in flight, oldest first (``None``: not kept)."""
    interval_pending: bool | None = None
    """KIP-1263 batching: the assignment interval has not passed since the last
    computation (``None``: not kept; ``interval_pending``)."""
    history: frozenset[tuple[str, Partition, int]] | None = None
    """KIP-1251: the assignment history as (member id, partition, epoch) stamps
    (``Group.assignment_history``; ``None``: not kept)."""

    def group_status(self) -> int:
        """``coordinator.group_status`` of these values (0 EMPTY … 3 STABLE)."""
        if not self.members:
            return 0
        if self.group_epoch > self.assignment_epoch:
            return 1
        settled = all(
            mv.state == STABLE and mv.epoch == self.assignment_epoch for mv in self.members.values()
        )
        return 3 if settled else 2

    def member_domain(self) -> tuple[str, ...]:
        ids = set(self.members) | set(self.extra_members)
        ids |= {mid for mid, _ in self.target}
        ids |= {mid for mid, _ in self.committed.values()}
        ids |= {mid for _, result, _, _ in self.runs or () for mid, _ in result}
        ids |= {mid for _, _, started, _ in self.runs or () for mid, _ in started}
        ids |= {mid for mid, _, _ in self.history or ()}  # holders that left count too
        return tuple(sorted(ids))

    def partition_domain(self) -> tuple[Partition, ...]:
        ps: set[Partition] = set(self.extra_partitions) | set(self.partition_epochs)
        ps |= set(self.present or ())
        ps |= set(self.committed)
        ps |= {p for _, p in self.target}
        ps |= {p for _, result, _, _ in self.runs or () for _, p in result}
        ps |= {p for _, p, _ in self.history or ()}
        for mv in self.members.values():
            ps |= mv.assigned | mv.revoking | mv.subscribed
        return tuple(sorted(ps))

    def snapshot(
        self, members: Iterable[str] = (), partitions: Iterable[Partition] = ()
    ) -> Snapshot:
        """The ``invariants.expr`` snapshot of these values, with the proof vocabulary
        (``partition_held``, ``partition_epoch``, ``previous_epoch``) next to the
        property vocabulary, so the Python reading can check lemmas and properties."""
        rel: dict[str, set[tuple[object, ...]]] = {
            k: set()
            for k in (
                "is_member",
                "assigned",
                "revoking",
                "holds",
                "target",
                "subscribed",
                "committed_by",
                "stable",
                "unrevoked",
                "unreleased",
                "partition_held",
                "server_error",
            )
        }
        fn: dict[str, dict[tuple[object, ...], int]] = {
            "group_epoch": {(): self.group_epoch},
            "assignment_epoch": {(): self.assignment_epoch},
            "member_epoch": {},
            "previous_epoch": {},
            "member_state": {},
            "committed_epoch": {},
            "partition_epoch": {},
            "instance": {},
            "assigned_since": {(m, p): e for (m, p), e in (self.since or {}).items()},
            "holder_commit_rejected": {(): int(bool(self.holder_rejected))},
            "assignor_runs": {(): len(self.runs or ())},
        }
        # Instance ids numbered from 1 in their order (invariants.snapshot numbers them
        # so too); 0 for a dynamic member.
        oldest = (self.runs or ())[:1]
        ids = sorted(
            {mv.instance for mv in self.members.values() if mv.instance is not None}
            | {iid for _, _, started, _ in oldest for _, iid in started if iid is not None}
        )
        number = {iid: i + 1 for i, iid in enumerate(ids)}
        # The oldest run in flight, as the lemmas read it (invariants.z3.proof.reading).
        fn["run_in_flight"] = {(): len(oldest)}
        fn["run_instance"] = {}
        rel["run_target"] = set()
        rel["run_member"] = set()
        for epoch, result, started, group_deleted in oldest:
            fn["run_epoch"] = {(): epoch}
            fn["run_group_deleted"] = {(): int(group_deleted)}
            rel["run_target"] |= set(result)
            for mid, iid in started:
                rel["run_member"].add((mid,))
                fn["run_instance"][(mid,)] = number[iid] if iid is not None else 0
        for mid, mv in self.members.items():
            rel["is_member"].add((mid,))
            fn["member_epoch"][(mid,)] = mv.epoch
            fn["previous_epoch"][(mid,)] = mv.prev
            fn["member_state"][(mid,)] = mv.state
            fn["instance"][(mid,)] = number.get(mv.instance, 0) if mv.instance else 0
            if mv.state in (STABLE, UNREVOKED, UNRELEASED):
                rel[("stable", "unrevoked", "unreleased")[mv.state]].add((mid,))
            for p in mv.assigned:
                rel["assigned"].add((mid, p))
                rel["holds"].add((mid, p))
            for p in mv.revoking:
                rel["revoking"].add((mid, p))
                rel["holds"].add((mid, p))
            for p in mv.subscribed:
                rel["subscribed"].add((mid, p))
        for mid, p in self.target:
            rel["target"].add((mid, p))
        for p, (mid, e) in self.committed.items():
            rel["committed_by"].add((mid, p))
            fn["committed_epoch"][(p,)] = e
        for p, e in self.partition_epochs.items():
            rel["partition_held"].add((p,))
            fn["partition_epoch"][(p,)] = e
        if self.server_error:
            rel["server_error"].add(("coordinator",))
        if self.present is not None:
            rel["exists"] = {(p,) for p in self.present}
        if self.deletions is not None:
            fn["group_deletions"] = {(): self.deletions}
        fn["group_status"] = {(): self.group_status()}
        if self.history is not None:
            rel.update(self.history_relations())
        mdom = tuple(sorted(set(self.member_domain()) | set(members)))
        pdom = tuple(sorted(set(self.partition_domain()) | set(partitions)))
        return Snapshot(
            clients=("coordinator",),
            members=mdom,
            partitions=pdom,
            relations={k: frozenset(v) for k, v in rel.items()},
            functions=fn,
        )

    def history_relations(self) -> dict[str, set[tuple[object, ...]]]:
        """The relations the KIP-1251 assignment history is read by: the catalogue's
        ``epoch_clash`` and ``commit_by_epoch_holder`` (as ``invariants.snapshot`` reads
        them off ``Group.assignment_history``, a member id being a holder's identity) and
        the proof's lemma vocabulary (``invariants.z3.proof.reading``):
        ``stamp_recorded(m,p)`` — ``m`` holds ``p`` and the history has its stamp;
        ``stamped_above_assignment_epoch(m,p)``, ``stamped_at_assignment_epoch(m,p)``;
        ``stamped_since_held(m2,m,p)`` — ``m`` holds ``p`` and ``m2`` was stamped with it
        at an epoch no older than ``m``'s stamp."""
        history = self.history or frozenset()
        ae = self.assignment_epoch
        since = self.since or {}
        by_pair: dict[tuple[Partition, int], set[str]] = {}
        for mid, p, e in history:
            by_pair.setdefault((p, e), set()).add(mid)
        clash: set[tuple[object, ...]] = {
            (mid, p) for (p, _), ms in by_pair.items() if len(ms) > 1 for mid in ms
        }
        commits: set[tuple[object, ...]] = set()
        for p, (mid, ce) in self.committed.items():
            of_p = [(e, m) for m, q, e in history if q == p]
            if not of_p:
                commits.add((mid, p))
                continue
            mine = [e for e, m in of_p if m == mid and e <= ce]
            if mine and all(m == mid for e, m in of_p if max(mine) <= e <= ce):
                commits.add((mid, p))
        held = {(mid, p) for mid, mv in self.members.items() for p in mv.assigned | mv.revoking}
        return {
            "epoch_clash": clash,
            "commit_by_epoch_holder": commits,
            "stamp_recorded": {
                (m, p) for m, p in held if (m, p) in since and (m, p, since[m, p]) in history
            },
            "stamped_above_assignment_epoch": {(m, p) for m, p, e in history if e > ae},
            "stamped_at_assignment_epoch": {(m, p) for m, p, e in history if e == ae},
            "stamped_since_held": {
                (m2, m, p)
                for m, p in held
                if (m, p) in since
                for m2, q, e in history
                if q == p and e >= since[m, p]
            },
        }


def project_group(
    group: Group,
    subscribed: Mapping[str, frozenset[Partition]],
    epochs: bool = False,
    offload: bool = False,
    *,
    deletion: bool = False,
    batching: bool = False,
    history: bool = False,
) -> Concrete:
    """The abstraction of a coordinator group; ``subscribed`` gives each member's
    subscribed partitions (as ``invariants.snapshot`` computes them); with ``epochs``, the
    KIP-1251 assignment epochs and ``holder_commit_rejected`` too; with ``offload``, the
    KIP-1263 assignor runs in flight; with ``deletion``, ``Group.deleted`` and
    ``Group.deletions``; with ``batching``, whether the KIP-1263 assignment interval is
    pending (:func:`interval_pending`); with ``epochs`` and ``history``, the KIP-1251
    assignment history (``Group.assignment_history``) as (member id, partition, epoch)."""
    members = {
        mid: MemberValue(
            epoch=m.member_epoch,
            prev=m.previous_member_epoch,
            state=STATE_CODE[m.state],
            assigned=frozenset(m.assigned_partitions),
            revoking=frozenset(m.partitions_pending_revocation),
            subscribed=subscribed.get(mid, frozenset()),
            instance=m.instance_id,
        )
        for mid, m in group.members.items()
    }
    return Concrete(
        members=members,
        target=frozenset((mid, p) for mid, ps in group.target_assignment.items() for p in ps),
        committed={p: (c.member_id, c.member_epoch) for p, c in group.committed_offsets.items()},
        partition_epochs=dict(group.partition_epochs.items()),
        group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch,
        loading=False,
        since=(
            {
                (mid, p): e
                for mid, m in group.members.items()
                for p, e in m.assignment_epochs.items()
            }
            if epochs
            else None
        ),
        holder_rejected=group.holder_commit_rejected if epochs else None,
        runs=project_runs(group) if offload else None,
        deleted=group.deleted if deletion else None,
        deletions=group.deletions if deletion else None,
        interval_pending=interval_pending(group) if batching else None,
        history=(
            frozenset(
                (mid, p, e)
                for (p, e), holders in group.assignment_history.items()
                for mid, _ in holders
            )
            if epochs and history
            else None
        ),
    )


def interval_pending(group: Group) -> bool:
    """The batching gate is closed: a computation finished (``AssignmentTimestamp`` set)
    and the assignment interval has not passed since (``target.assignment_interval_open``
    false with a positive interval; KIP-1263 "Assignment Batching")."""
    return group.assignment_timestamp != 0 and not group.assignment_interval_elapsed


def project_runs(group: Group) -> tuple[Run, ...]:
    """The assignor runs in flight of ``group`` (``Group.assignor_runs``), oldest first."""
    out: list[Run] = []
    for run in group.assignor_runs:
        instance_of = {mid: iid for iid, mid in run.static_members.items()}
        out.append(
            (
                run.group_epoch,
                frozenset((mid, p) for mid, ps in run.target_assignment.items() for p in ps),
                frozenset((mid, instance_of.get(mid)) for mid in run.member_ids()),
                run.group_deleted,
            )
        )
    return tuple(out)


def project(
    state: State,
    epochs: bool = False,
    offload: bool = False,
    *,
    expiry: bool = False,
    deletion: bool = False,
    batching: bool = False,
    history: bool = False,
) -> Concrete:
    """The abstraction of a KIP-848 model state (``model.records.State``). The clients
    contribute their member ids to the member domain (members to come). With ``epochs``,
    the KIP-1251 fields too; with ``offload``, the KIP-1263 assignor runs; with
    ``expiry``, the partitions that exist; with ``deletion``, the group's deletion
    fields; with ``batching``, the KIP-1263 assignment interval; with ``epochs`` and
    ``history``, the KIP-1251 assignment history."""
    snap = snapshot_of(state)
    subs: dict[str, set[Partition]] = {}
    for mid, p in snap.relations["subscribed"]:
        subs.setdefault(str(mid), set()).add(p)  # type: ignore[arg-type]
    concrete = project_group(
        state.group,
        {k: frozenset(v) for k, v in subs.items()},
        epochs,
        offload,
        deletion=deletion,
        batching=batching,
        history=history,
    )
    present = frozenset(p for (p,) in snap.relations["exists"]) if expiry else None
    return replace(
        concrete,
        present=present,  # type: ignore[arg-type]
        loading=state.coordinator_loading,
        extra_members=tuple(c.member_id for c in state.clients),
        extra_partitions=tuple(p for p in snap.partitions),
    )


# --------------------------------------------------------------------------- finite domains


@dataclass(frozen=True)
class Universe:
    """Finite domains for the two sorts: a Z3 constant per element, and the axioms that
    the sorts have exactly these elements."""

    members: tuple[str, ...]
    partitions: tuple[Partition, ...]
    member_consts: Mapping[str, ExprRef]
    partition_consts: Mapping[Partition, ExprRef]
    instances: Mapping[str, int] = field(default_factory=dict)
    """The instance ids a state or request may name, numbered from 1 (``SymState.instance``)."""
    client_instances: Mapping[str, frozenset[int]] = field(default_factory=dict)
    """The instance numbers a configured client's requests carry (its instance id, and the
    one ``ChangeInstanceId`` gives it; 0 for a dynamic client), by member id; members not
    named here (a restarted client's) may carry any."""

    @staticmethod
    def of(
        members: Iterable[str], partitions: Iterable[Partition], instances: Iterable[str] = ()
    ) -> Universe:
        ms = tuple(sorted(set(members)))
        ps = tuple(sorted(set(partitions)))
        return Universe(
            ms,
            ps,
            {m: z3.Const(f"member:{m}", MEMBER) for m in ms},
            {p: z3.Const(f"partition:{p[0]}-{p[1]}", PARTITION) for p in ps},
            {iid: i + 1 for i, iid in enumerate(sorted(set(instances)))},
        )

    def axioms(self) -> list[BoolRef]:
        out: list[BoolRef] = []
        for sort, consts in ((MEMBER, self.member_consts), (PARTITION, self.partition_consts)):
            cs = list(consts.values())
            x = z3.Const(f"x.{sort}", sort)
            if not cs:
                # An empty domain cannot be expressed (sorts are non-empty): one spare
                # element no field mentions.
                cs = [z3.Const(f"spare.{sort}", sort)]
            if len(cs) > 1:
                out.append(z3.Distinct(*cs))
            out.append(z3.ForAll([x], z3.Or(*[x == c for c in cs])))
        return out


def pin(sym: SymState, value: Concrete, u: Universe) -> list[BoolRef]:
    """Constraints fixing ``sym`` to ``value`` on the universe ``u`` (relations fully;
    integer fields of non-members and of uncommitted or free partitions are left open,
    as the abstraction leaves them)."""
    out: list[BoolRef] = [
        sym.group_epoch == value.group_epoch,
        sym.assignment_epoch == value.assignment_epoch,
        sym.loading == value.loading,
    ]
    if value.server_error is not None:
        out.append(sym.server_error == value.server_error)
    if value.holder_rejected is not None and sym.holder_rejected is not None:
        out.append(sym.holder_rejected == value.holder_rejected)
    if value.deleted is not None and sym.deleted is not None:
        out.append(sym.deleted == value.deleted)
    if value.deletions is not None and sym.deletions is not None:
        out.append(sym.deletions == value.deletions)
    if value.interval_pending is not None and sym.interval_pending is not None:
        out.append(sym.interval_pending == value.interval_pending)
    if value.present is not None and sym.present is not None:
        out += [sym.present(pc) == (p in value.present) for p, pc in u.partition_consts.items()]
    if value.since is not None and sym.since is not None:
        for (mid, p), e in value.since.items():
            out.append(sym.since(u.member_consts[mid], u.partition_consts[p]) == e)
    if value.history is not None and sym.history is not None:
        k = z3.Int("pin.history.e")
        for mid, mc in u.member_consts.items():
            for p, pc in u.partition_consts.items():
                stamps = [e for m, q, e in value.history if m == mid and q == p]
                out.append(
                    z3.ForAll([k], sym.history(mc, pc, k) == z3.Or(*[k == e for e in stamps]))
                    if stamps
                    else z3.ForAll([k], z3.Not(sym.history(mc, pc, k)))
                )
    target = value.target
    for mid, mc in u.member_consts.items():
        mv = value.members.get(mid)
        out.append(sym.is_member(mc) == (mv is not None))
        if mv is not None:
            out += [sym.epoch(mc) == mv.epoch, sym.prev(mc) == mv.prev, sym.mstate(mc) == mv.state]
            if sym.instance is not None:
                number = u.instances[mv.instance] if mv.instance is not None else 0
                out.append(sym.instance(mc) == number)
        for p, pc in u.partition_consts.items():
            committed = value.committed.get(p)
            out += [
                sym.assigned(mc, pc) == (mv is not None and p in mv.assigned),
                sym.revoking(mc, pc) == (mv is not None and p in mv.revoking),
                sym.subscribed(mc, pc) == (mv is not None and p in mv.subscribed),
                sym.target(mc, pc) == ((mid, p) in target),
                sym.committed_by(mc, pc) == (committed is not None and committed[0] == mid),
            ]
    for p, pc in u.partition_consts.items():
        held = p in value.partition_epochs
        out.append(sym.pe_held(pc) == held)
        if held:
            out.append(sym.pe(pc) == value.partition_epochs[p])
        if p in value.committed:
            out.append(sym.committed_epoch(pc) == value.committed[p][1])
    if value.runs is not None and sym.runs:
        out += pin_runs(sym, value.runs, u)
    return out


def pin_runs(sym: SymState, runs: tuple[Run, ...], u: Universe) -> list[BoolRef]:
    """Constraints fixing ``sym``'s run slots to ``runs`` (a free slot's fields open)."""
    if len(runs) > len(sym.runs):
        raise ValueError(
            f"{len(runs)} assignor runs in flight: the symbolic state has {len(sym.runs)} slots"
        )
    out: list[BoolRef] = []
    for k, slot in enumerate(sym.runs):
        out.append(slot.on == (k < len(runs)))
        if k >= len(runs):
            continue
        epoch, result, started, deleted = runs[k]
        out.append(slot.epoch == epoch)
        if slot.deleted is not None:
            out.append(slot.deleted == deleted)
        instance = dict(started)
        for mid, mc in u.member_consts.items():
            out.append(slot.member(mc) == (mid in instance))
            if slot.instance is not None and mid in instance:
                iid = instance[mid]
                out.append(slot.instance(mc) == (u.instances[iid] if iid is not None else 0))
            for p, pc in u.partition_consts.items():
                out.append(slot.target(mc, pc) == ((mid, p) in result))
    return out


# --------------------------------------------------------------------------- decoding


def _universe(model: ModelRef, sort: Any) -> list[ExprRef]:
    elems = model.get_universe(sort)
    return list(elems) if elems is not None else []


def decode(
    model: ModelRef, sym: SymState, universe: Universe | None = None
) -> tuple[Concrete, dict[str, ExprRef], dict[str, ExprRef]]:
    """The concrete values a Z3 model gives ``sym``: member elements are named ``m0``,
    ``m1``…, partitions ``("p", 0)``…; also the element → name maps (by element string).
    The elements are the model's universe of each sort, or ``universe``'s constants (in
    its order) when the formulas were grounded on a finite universe."""
    if universe is None:
        ms = _universe(model, MEMBER)
        ps = _universe(model, PARTITION)
    else:
        ms = [model.eval(c, model_completion=True) for c in universe.member_consts.values()]
        ps = [model.eval(c, model_completion=True) for c in universe.partition_consts.values()]
    mname = {str(e): f"m{i}" for i, e in enumerate(ms)}
    pname = {str(e): i for i, e in enumerate(ps)}

    def ev(x: ExprRef) -> Any:
        return model.eval(x, model_completion=True)

    def b(x: ExprRef) -> bool:
        return bool(z3.is_true(ev(x)))

    def n(x: ExprRef) -> int:
        v = ev(x)
        if not z3.is_int_value(v):
            v = z3.simplify(v)  # a function Z3 eliminated as a macro (smt.macro_finder)
        if not z3.is_int_value(v):
            return 0  # a term the model leaves open: any value is one of its completions
        return int(v.as_long())

    members: dict[str, MemberValue] = {}
    for e in ms:
        if not b(sym.is_member(e)):
            continue

        def rel(f: FuncRef, e: ExprRef = e) -> frozenset[Partition]:
            return frozenset(("p", pname[str(q)]) for q in ps if b(f(e, q)))

        members[mname[str(e)]] = MemberValue(
            epoch=n(sym.epoch(e)),
            prev=n(sym.prev(e)),
            state=n(sym.mstate(e)),
            assigned=rel(sym.assigned),
            revoking=rel(sym.revoking),
            subscribed=rel(sym.subscribed),
            instance=instance_name(n(sym.instance(e))) if sym.instance is not None else None,
        )
    target = frozenset(
        (mname[str(e)], ("p", pname[str(q)])) for e in ms for q in ps if b(sym.target(e, q))
    )
    committed: dict[Partition, tuple[str, int]] = {}
    for q in ps:
        by = [mname[str(e)] for e in ms if b(sym.committed_by(e, q))]
        if by:
            committed[("p", pname[str(q)])] = (by[0], n(sym.committed_epoch(q)))
    pes = {("p", pname[str(q)]): n(sym.pe(q)) for q in ps if b(sym.pe_held(q))}
    since: dict[tuple[str, Partition], int] | None = None
    if sym.since is not None:
        since = {
            (mname[str(e)], ("p", pname[str(q)])): n(sym.since(e, q))
            for e in ms
            for q in ps
            if b(sym.is_member(e)) and (b(sym.assigned(e, q)) or b(sym.revoking(e, q)))
        }
    history: frozenset[tuple[str, Partition, int]] | None = None
    if sym.history is not None:
        history = _decode_history(model, sym, ms, ps, mname, pname)
    runs: tuple[Run, ...] | None = None
    if sym.runs:
        taken: list[Run] = []
        for slot in sym.runs:
            if not b(slot.on):
                break
            taken.append(
                (
                    n(slot.epoch),
                    frozenset(
                        (mname[str(e)], ("p", pname[str(q)]))
                        for e in ms
                        for q in ps
                        if b(slot.target(e, q))
                    ),
                    frozenset(
                        (
                            mname[str(e)],
                            instance_name(n(slot.instance(e)))
                            if slot.instance is not None
                            else None,
                        )
                        for e in ms
                        if b(slot.member(e))
                    ),
                    slot.deleted is not None and b(slot.deleted),
                )
            )
        runs = tuple(taken)
    concrete = Concrete(
        members=members,
        target=target,
        committed=committed,
        partition_epochs=pes,
        group_epoch=n(sym.group_epoch),
        assignment_epoch=n(sym.assignment_epoch),
        loading=b(sym.loading),
        server_error=b(sym.server_error),
        since=since,
        holder_rejected=None if sym.holder_rejected is None else b(sym.holder_rejected),
        present=(
            None
            if sym.present is None
            else frozenset(("p", pname[str(q)]) for q in ps if b(sym.present(q)))
        ),
        deleted=None if sym.deleted is None else b(sym.deleted),
        deletions=None if sym.deletions is None else n(sym.deletions),
        runs=runs,
        interval_pending=None if sym.interval_pending is None else b(sym.interval_pending),
        history=history,
        extra_members=tuple(mname.values()),
        extra_partitions=tuple(("p", i) for i in range(len(ps))),
    )
    return concrete, {mname[str(e)]: e for e in ms}, {f"p{pname[str(q)]}": q for q in ps}


def _decode_history(
    model: ModelRef,
    sym: SymState,
    ms: list[ExprRef],
    ps: list[ExprRef],
    mname: dict[str, str],
    pname: dict[str, int],
) -> frozenset[tuple[str, Partition, int]]:
    """The stamps of ``sym.history`` in ``model``, at the epochs that can matter: every
    epoch of the state (member and previous epochs, assignment epochs, committed epochs,
    partition epochs, group and assignment epoch) and those the function's table names
    from the lowest of them on, each with its neighbours."""
    assert sym.history is not None

    def n(x: ExprRef) -> set[int]:
        # Z3 may leave an application of a function to an element its interpretation does
        # not list unevaluated even with model completion: no epoch to widen by, then.
        v = model.eval(x, model_completion=True)
        if not z3.is_int_value(v) and z3.is_app(v):
            table = model.get_interp(v.decl())
            if isinstance(table, z3.FuncInterp):
                try:
                    v = table.else_value()  # an application its table does not list
                except z3.Z3Exception:  # a table without an else ("ast is null")
                    return set()
        return {v.as_long()} if z3.is_int_value(v) else set()

    epochs = n(sym.group_epoch) | n(sym.assignment_epoch)
    for e in ms:
        epochs |= n(sym.epoch(e)) | n(sym.prev(e))
        for q in ps:
            if sym.since is not None:
                epochs |= n(sym.since(e, q))
    for q in ps:
        epochs |= n(sym.committed_epoch(q)) | n(sym.pe(q))
    # The table's entries below every epoch of the state are left out: no lemma reads
    # them, and the state satisfies the property there or not whatever they are.
    low = min(epochs, default=0) - 1
    table = model.get_interp(sym.history)
    if isinstance(table, z3.FuncInterp):
        for entry in table.as_list()[:-1]:
            if z3.is_int_value(entry[2]) and entry[2].as_long() >= low:
                epochs.add(entry[2].as_long())
    epochs |= {e + d for e in epochs for d in (-1, 1)}
    grounded: dict[int, ExprRef] = {}
    return frozenset(
        (mname[str(e)], ("p", pname[str(q)]), k)
        for e in ms
        for q in ps
        for k in sorted(epochs)
        if _true_in(model, sym.history(e, q, k), grounded)
    )


def _true_in(
    model: ModelRef, formula: ExprRef, grounded: dict[int, ExprRef], *, expand: bool = True
) -> bool:
    """Whether ``formula`` is true in ``model``. Z3's evaluator leaves a quantifier it meets
    unevaluated (a post-state's history defined by ``smt.macro_finder`` quantifies over the
    partitions: ``transition.history_recorded``), so a closed quantifier that remains is
    expanded over the model's finite universe of its bound sorts and evaluated again
    (``grounded``: each such quantifier's value, by Z3's id of it). Only one level is
    expanded (``expand``), over at most :data:`GROUND_LIMIT` instances a quantifier: a
    quantifier left undecided reads as false, as Z3's evaluator leaves it."""
    value = model.eval(formula, model_completion=True)
    if z3.is_true(value) or z3.is_false(value) or not expand:
        return z3.is_true(value)
    pairs = [(q, _ground(model, q, grounded)) for q in _closed_quantifiers(value)]
    if pairs:
        value = model.eval(z3.substitute(value, *pairs), model_completion=True)
    return z3.is_true(value)


GROUND_LIMIT = 256
"""The most instances :func:`_ground` expands a quantifier into (the partitions of a
counterexample's universe are a few dozen)."""


def _closed_quantifiers(formula: ExprRef) -> list[Any]:
    """The outermost quantifiers of ``formula`` (a closed formula: so are they)."""
    found: dict[int, Any] = {}
    todo = [formula]
    seen: set[int] = set()
    while todo:
        x = todo.pop()
        if x.get_id() in seen:
            continue
        seen.add(x.get_id())
        if z3.is_quantifier(x):
            found[x.get_id()] = x
        elif z3.is_app(x):
            todo.extend(x.children())
    return list(found.values())


def _ground(model: ModelRef, q: Any, grounded: dict[int, ExprRef]) -> ExprRef:
    """The truth value of the closed quantifier ``q`` in ``model``, over the model's
    universe of each bound sort (Booleans: both values); ``q`` itself when a bound sort
    has no finite universe there (an integer), which leaves it undecided."""
    key = q.get_id()
    if key in grounded:
        return grounded[key]
    if q.is_lambda():  # an array, not a formula: nothing to decide
        grounded[key] = q
        return q
    universes: list[list[Any]] = []
    for i in range(q.num_vars()):
        sort = q.var_sort(i)
        if sort == z3.BoolSort(sort.ctx):
            universes.append([z3.BoolVal(False, sort.ctx), z3.BoolVal(True, sort.ctx)])
        elif sort.kind() == z3.Z3_UNINTERPRETED_SORT and model.get_universe(sort) is not None:
            universes.append(list(model.get_universe(sort)))
        else:
            grounded[key] = q
            return q
    if math.prod(len(u) for u in universes) > GROUND_LIMIT:
        grounded[key] = q
        return q
    values = []
    for combo in itertools.product(*universes):
        # De Bruijn: variable 0 is the last one bound.
        instance = z3.substitute_vars(q.body(), *reversed(combo))
        values.append(z3.BoolVal(_true_in(model, instance, grounded, expand=False), q.ctx))
    result = z3.simplify(z3.And(*values) if q.is_forall() else z3.Or(*values))
    grounded[key] = result
    return result


def instance_name(number: int) -> str | None:
    """The instance id a decoded state gives instance number ``number`` (``i<number>``;
    ``None`` for 0, a dynamic member): what the BMC replay sends as ``group.instance.id``."""
    return None if number == 0 else f"i{number}"


def render(value: Concrete) -> list[str]:
    """Lines describing ``value`` in the KIP-848 case-study vocabulary."""

    def ps(parts: Iterable[Partition]) -> str:
        return (
            "{" + ", ".join(f"{t}{i}" if t == "p" else f"{t}-{i}" for t, i in sorted(parts)) + "}"
        )

    lines = [
        f"group epoch {value.group_epoch}, assignment epoch {value.assignment_epoch}"
        + (", loading" if value.loading else "")
        + (", a write was refused (UNKNOWN_SERVER_ERROR)" if value.server_error else "")
        + (", a holder's commit was refused (KIP-1251)" if value.holder_rejected else "")
        + (", deleted" if value.deleted else "")
        + (f", {value.deletions} deletion(s)" if value.deletions else "")
        + (", assignment interval pending" if value.interval_pending else "")
    ]
    for mid in sorted(value.members):
        mv = value.members[mid]
        target = [p for m, p in value.target if m == mid]
        lines.append(
            f"  member {mid}"
            + (f" (instance {mv.instance})" if mv.instance is not None else "")
            + f": epoch {mv.epoch} (previous {mv.prev}), "
            f"{STATE_NAME.get(mv.state, f'state {mv.state}')}, assigned {ps(mv.assigned)}, "
            f"pending revocation {ps(mv.revoking)}, target {ps(target)}"
        )
        if value.since is not None:
            held = sorted((p, e) for (m, p), e in value.since.items() if m == mid)
            if held:
                lines[-1] += ", assigned since " + ", ".join(
                    f"{(t + str(i)) if t == 'p' else f'{t}-{i}'}@{e}" for (t, i), e in held
                )
    stray = sorted({m for m, _ in value.target} - set(value.members))
    for mid in stray:
        lines.append(f"  target of non-member {mid}: {ps(p for m, p in value.target if m == mid)}")
    if value.partition_epochs:
        pe = ", ".join(
            f"{(t + str(i)) if t == 'p' else f'{t}-{i}'}@{e}"
            for (t, i), e in sorted(value.partition_epochs.items())
        )
        lines.append(f"  partition epochs: {pe}")
    if value.committed:
        co = ", ".join(
            f"{(t + str(i)) if t == 'p' else f'{t}-{i}'} by {m} at {e}"
            for (t, i), (m, e) in sorted(value.committed.items())
        )
        lines.append(f"  committed offsets: {co}")
    if value.history:
        lines.append(
            "  assignment history: "
            + ", ".join(
                f"{(t + str(i)) if t == 'p' else f'{t}-{i}'}@{e} by {m}"
                for m, (t, i), e in sorted(value.history, key=lambda h: (h[1], h[2], h[0]))
            )
        )
    if value.present is not None and set(value.present) != set(value.partition_domain()):
        gone = sorted(set(value.partition_domain()) - set(value.present))
        lines.append(
            "  deleted partitions: "
            + ", ".join((t + str(i)) if t == "p" else f"{t}-{i}" for t, i in gone)
        )
    for k, (epoch, result, _, group_deleted) in enumerate(value.runs or ()):
        given = ", ".join(
            f"{mid} {ps(p for m, p in result if m == mid)}"
            for mid in sorted({m for m, _ in result})
        )
        of = " (its group deleted since)" if group_deleted else ""
        lines.append(f"  assignor run {k + 1} in flight at epoch {epoch}{of}: {given or 'nothing'}")
    return lines
