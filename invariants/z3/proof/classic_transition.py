"""The symbolic transition relation of the classic group coordinator.

The classic counterpart of ``invariants.z3.proof.transition``: ``relation(pre, post,
options)`` over two ``classic_state.ClassicSym`` is a disjunction with one disjunct per
*action family*, named after the model's actions (``model.actions``):
``DeliverMessage.join_group``, ``DeliverMessage.sync_group``,
``DeliverMessage.heartbeat``, ``DeliverMessage.leave_group``,
``DeliverMessage.offset_commit`` (a request reaching the coordinator),
``SessionTimeout``, ``RebalanceTimeout`` (the join timer and the pending-sync timer),
``MetadataChange`` (``AddPartitions``), ``ExpireOffsets``, ``DeleteGroup`` and
``Unchanged`` (every client step: sends, responses, losses, request timeouts,
subscriptions, crashes).

Each family follows ``model.classic.coordinator`` rule by rule, with the intermediate
groups of a rule that calls another (``prepare_rebalance`` → ``maybe_complete_join`` →
``complete_join``) built as terms (:class:`GroupTerm`). What the abstraction does not keep
is a free *parameter* (a Z3 constant or function named ``<family>.<name>``):

* a request's member id (``member``; ``unknown`` for the empty id of a first JoinGroup),
  generation (``generation``), instance number (``instance``, 0 for none), subscribed
  partitions (``subscribed``) and, for an OffsetCommit, its partitions (``partitions``);
* the decisions on protocols, which the states do not keep: whether a JoinGroup shares a
  protocol with the group (``supported``; always, in an empty group:
  ``ClassicGroup.supportsProtocols``), whether a known member's JoinGroup is unchanged
  (``unchanged``: ``ClassicGroupMember.matches``; its subscription is then the member's),
  whether a static replacement keeps the selected protocol (``same_protocol``:
  ``ClassicGroup.selectProtocol``), whether a SyncGroup names the group's protocol
  (``protocol_ok``);
* the leader's assignment in its SyncGroup (``assignment``, kept for members only): with
  ``ClassicOptions.assignor`` one the assignor computes from the group's members and their
  claims (:func:`leader_assigns`, ``classic_assignor``; the assignor's witness ``computed``,
  whether the leader fails, ``failed``, and the partitions it saw, ``seen``, are
  parameters too), otherwise any;
* a JoinGroup's claims: the owned partitions (``owned``), the sticky user data
  (``user_data``) and their generation (``claim_gen``);
* the member id the coordinator hands out (``new_id``: one never handed out before), the
  member holding the request's instance id (``holder``: one, when a member does:
  ``ClassicGroup.staticMemberId``), and the leader chosen when the leader leaves or is not
  kept (``heir``: a member; the model takes the first in order);
* the topic an expiry cleans (``topic``: any set of partitions); the topic a partition is
  added to (``topic``: its partitions, the new one included) and the new partition
  (``added``).

Every family keeps the leader a member (a rule choosing ``heir`` chooses a member).

``ClassicOptions.variant`` names a catalogue mutant encoded as a variant of the rule it
breaks (``VARIANTS``).

Built inside :func:`grounded` (the agreement and BMC do), the formulas are quantifier-free
on a finite universe: a quantifier is the conjunction or disjunction of its instances, and
every intermediate group is a memoised table of its fields on the universe's constants
(:func:`tabulate`). Outside it they quantify over the sorts.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

import z3

from invariants.z3.proof.classic_assignor import PROTOCOLS, LeaderInputs, LeaderOutput
from invariants.z3.proof.classic_assignor import VARIANTS as ASSIGNOR_VARIANTS
from invariants.z3.proof.classic_assignor import leader_assignment as assignor_relation
from invariants.z3.proof.classic_state import (
    COMPLETING,
    EMPTY,
    PREPARING,
    STABLE,
    ClassicSym,
)
from invariants.z3.proof.state import MEMBER, PARTITION
from invariants.z3.proof.transition import Family
from model.actions import (
    Action,
    AddPartitions,
    DeleteGroup,
    DeliverMessage,
    ExpireOffsets,
    RebalanceTimeout,
)
from model.actions import SessionTimeout as SessionTimeoutAction
from model.classic.messages import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    SyncGroupRequest,
)
from model.config import Config
from model.records import OffsetCommitRequest

BoolRef = Any
ExprRef = Any
Unary = Callable[[ExprRef], ExprRef]
Binary = Callable[[ExprRef, ExprRef], ExprRef]

VARIANTS = {
    "classic-delete-non-empty-group": "DeleteGroups deletes a classic group that is not Empty "
    "(ClassicGroup.validateDeleteGroup without NON_EMPTY_GROUP)",
    "expire-while-rebalancing": "in a rebalancing group the offsets of topics only members "
    "that have not rejoined subscribe to expire (KAFKA-13636)",
    "static-replaced-only-when-stable": "a JoinGroup of a known group.instance.id with an "
    "unknown member id outside STABLE joins as another member; the old member keeps the "
    "instance id (KAFKA-8500)",
    "static-replace-without-rebalance": "a static member's JoinGroup with an unknown member id "
    "in COMPLETING_REBALANCE is taken as in STABLE and the group stays COMPLETING_REBALANCE "
    "(KAFKA-9801)",
    "no-pending-sync-timer": "the pending-sync timer removes nobody: RebalanceTimeout in "
    "COMPLETING_REBALANCE leaves the group as it is (KAFKA-12890)",
    **ASSIGNOR_VARIANTS,
}
"""The classic catalogue mutants (``groupcheck.mutants``) this encoding has a variant of."""

FAMILY_NAMES = (
    "DeliverMessage.join_group",
    "DeliverMessage.sync_group",
    "DeliverMessage.heartbeat",
    "DeliverMessage.leave_group",
    "DeliverMessage.offset_commit",
    "SessionTimeout",
    "RebalanceTimeout",
    "MetadataChange",
    "ExpireOffsets",
    "DeleteGroup",
    "Unchanged",
)


def possible_families(config: Config) -> tuple[str, ...]:
    """The families a classic ``config`` can take, read from its switches (an
    over-approximation, in ``FAMILY_NAMES`` order): the requests and ``Unchanged``
    whenever a client is or may become subscribed (an offset commit too: clients commit
    with ``auto_commit`` and before they revoke);
    a LeaveGroup after ``Leave`` or ``Bounce``; the timers once a process can be gone or a
    request lost (the join and pending-sync timers also for a hanging application,
    ``StallAssignment``); ``MetadataChange`` (``AddPartitions``), ``ExpireOffsets`` and
    ``DeleteGroup`` as allowed."""

    def perturb(name: str) -> bool:
        return config.max_perturbations > 0 and config.allows(name)

    leaves = perturb("Leave") or perturb("Bounce")
    gone = (
        config.slow_clients
        or perturb("Crash")
        or leaves
        or (config.live_timers and (perturb("LoseMessage") or perturb("AbandonRequest")))
    )
    can = {
        "DeliverMessage.join_group": True,
        "DeliverMessage.sync_group": True,
        "DeliverMessage.heartbeat": True,
        "DeliverMessage.leave_group": leaves,
        "DeliverMessage.offset_commit": True,
        "SessionTimeout": gone,
        "RebalanceTimeout": gone or perturb("StallAssignment"),
        "MetadataChange": perturb("AddPartitions"),
        "ExpireOffsets": perturb("ExpireOffsets"),
        "DeleteGroup": perturb("DeleteGroup"),
        "Unchanged": True,
    }
    return tuple(name for name in FAMILY_NAMES if can[name])


@dataclass(frozen=True)
class ClassicOptions:
    """The ``Config`` switches the classic rules read, and a variant."""

    delete_expired_groups: bool = False
    """``Config.delete_expired_groups``: an expiry that leaves an Empty group without
    offsets deletes it (``coordinator.classic_maybe_delete_expired_group``)."""
    assignor: str | None = None
    """The one assignor every client lists, when it is one ``classic_assignor`` states
    (``sticky`` or ``cooperative-sticky``) and every client runs byte code with KIP-429 and
    is bounced to no other: the leader's SyncGroup assignment is one
    ``classic_assignor.leader_assignment`` allows. None: the assignment is free (``range``,
    and the upgrade paths' changing assignors, are not stated)."""
    partitions_added: bool = False
    """The configuration may add a partition (``AddPartitions``): the leader assigned the
    partitions it saw in the metadata when it sent its SyncGroup, which may be fewer than
    exist when the SyncGroup arrives."""
    variant: str | None = None

    def __post_init__(self) -> None:
        if self.variant is not None and self.variant not in VARIANTS:
            raise ValueError(
                f"no classic symbolic variant of {self.variant!r}; known: {', '.join(VARIANTS)}"
            )
        if self.variant in ASSIGNOR_VARIANTS and self.assignor is None:
            raise ValueError(
                f"variant {self.variant!r} is an assignor rule: the configuration's clients "
                f"must all list one of {', '.join(PROTOCOLS)} alone"
            )

    @staticmethod
    def of(config: Config, variant: str | None = None) -> ClassicOptions:
        return ClassicOptions(
            delete_expired_groups=config.delete_expired_groups,
            assignor=stated_assignor(config),
            partitions_added=config.max_perturbations > 0 and config.allows("AddPartitions"),
            variant=variant,
        )


def assignor_variant_refusal(config: Config, variant: str | None) -> str | None:
    """Why ``variant``, an assignor rule, has no meaning on ``config`` (None: it has, or it
    is no assignor rule): the relation states the leader's assignor only where
    :func:`stated_assignor` gives one."""
    if variant not in ASSIGNOR_VARIANTS or stated_assignor(config) is not None:
        return None
    return (
        f"mutant {variant!r} is a rule of the leader's assignor, which the classic relation "
        f"states only where every client lists {' or '.join(PROTOCOLS)} alone on KIP-429 "
        f"byte code; config {config.name!r} does not"
    )


def stated_assignor(config: Config) -> str | None:
    """``ClassicOptions.assignor`` of ``config``: the one assignor every client lists, if
    ``classic_assignor`` states it, every client has KIP-429 and none is bounced."""
    lists = {c.assignors for c in config.clients}
    if len(lists) != 1:
        return None
    (only,) = lists
    if len(only) != 1 or only[0] not in PROTOCOLS:
        return None
    if not all(c.kip429 and not c.bounces for c in config.clients):
        return None
    return only[0]


_m = z3.Const("cm", MEMBER)
_p = z3.Const("cp", PARTITION)


_DOMAIN: ContextVar[tuple[tuple[ExprRef, ...], tuple[ExprRef, ...]] | None] = ContextVar(
    "classic_domain", default=None
)


@contextmanager
def grounded(members: Iterable[ExprRef], partitions: Iterable[ExprRef]) -> Iterator[None]:
    """Build the formulas quantifier-free: a quantifier over members or partitions is the
    conjunction or disjunction of its instances on these constants (a finite universe whose
    constants are pairwise distinct and every element, as ``Universe.axioms`` says)."""
    token = _DOMAIN.set((tuple(members), tuple(partitions)))
    try:
        yield
    finally:
        _DOMAIN.reset(token)


def domain() -> tuple[tuple[ExprRef, ...], tuple[ExprRef, ...]]:
    """The member and partition constants of :func:`grounded` (which must be in force)."""
    d = _DOMAIN.get()
    if d is None:
        raise RuntimeError("the formula needs the finite universe of grounded()")
    return d


def every_member(f: Unary) -> BoolRef:
    """For every member."""
    d = _DOMAIN.get()
    return z3.ForAll([_m], f(_m)) if d is None else z3.And(*[f(c) for c in d[0]])


def some_member(f: Unary) -> BoolRef:
    """For some member."""
    d = _DOMAIN.get()
    return z3.Exists([_m], f(_m)) if d is None else z3.Or(*[f(c) for c in d[0]])


def every_partition(f: Unary) -> BoolRef:
    """For every partition."""
    d = _DOMAIN.get()
    return z3.ForAll([_p], f(_p)) if d is None else z3.And(*[f(q) for q in d[1]])


def some_partition(f: Unary) -> BoolRef:
    """For some partition."""
    d = _DOMAIN.get()
    return z3.Exists([_p], f(_p)) if d is None else z3.Or(*[f(q) for q in d[1]])


# --------------------------------------------------------------------------- group terms


@dataclass(frozen=True)
class GroupTerm:
    """A classic group as Z3 terms: what a rule computes from the state before (fields
    of a member as functions of a member term, of a member's partitions as functions of a
    member and a partition term)."""

    status: ExprRef
    generation: ExprRef
    has_leader: BoolRef
    leader: ExprRef
    is_member: Unary
    instance: Unary
    subscribed: Binary
    assigned: Binary
    owned: Binary
    user_data: Binary
    claim_gen: Unary
    awaiting_join: Unary
    awaiting_sync: Unary
    pending: Unary
    pending_sync: Unary
    issued: Unary
    committed_by: Binary
    committed_gen: Unary
    deletions: ExprRef

    def is_leader(self, x: ExprRef) -> BoolRef:
        return z3.And(self.has_leader, self.leader == x)


_UNARY = (
    "is_member",
    "instance",
    "awaiting_join",
    "awaiting_sync",
    "pending",
    "pending_sync",
    "issued",
    "committed_gen",
    "claim_gen",
)
_BINARY = ("subscribed", "assigned", "owned", "user_data", "committed_by")
_SCALAR = ("status", "generation", "has_leader", "leader", "deletions")


def view(s: ClassicSym) -> GroupTerm:
    """The group a symbolic state holds."""
    return GroupTerm(
        **{k: getattr(s, k) for k in _SCALAR},
        **{k: getattr(s, k) for k in _UNARY},
        **{k: getattr(s, k) for k in _BINARY},
    )


def ite(c: BoolRef, a: GroupTerm, b: GroupTerm) -> GroupTerm:
    """``a`` where ``c`` holds, else ``b``, field by field."""

    def u(k: str) -> Unary:
        fa, fb = getattr(a, k), getattr(b, k)
        return lambda x: z3.If(c, fa(x), fb(x))

    def bi(k: str) -> Binary:
        fa, fb = getattr(a, k), getattr(b, k)
        return lambda x, q: z3.If(c, fa(x, q), fb(x, q))

    fields: dict[str, Any] = {k: z3.If(c, getattr(a, k), getattr(b, k)) for k in _SCALAR}
    fields.update({k: u(k) for k in _UNARY})
    fields.update({k: bi(k) for k in _BINARY})
    return tabulate(GroupTerm(**fields))


def _table(f: Callable[..., ExprRef], *domains: tuple[ExprRef, ...]) -> Callable[..., ExprRef]:
    """``f`` memoised: computed at most once on each tuple of the domains' constants (when
    first asked); on another term (a parameter, the leader) the chain of its values by
    which constant the term is."""
    consts = [{c.get_id() for c in d} for d in domains]
    values: dict[tuple[int, ...], ExprRef] = {}

    def at(*args: ExprRef) -> ExprRef:
        key = tuple(a.get_id() for a in args)
        hit = values.get(key)
        if hit is not None:
            return hit
        if all(k in ids for k, ids in zip(key, consts, strict=True)):
            hit = f(*args)
        else:
            hit = None
            for combo in itertools.product(*domains):
                v = at(*combo)
                here = z3.And(*[a == c for a, c in zip(args, combo, strict=True)])
                hit = v if hit is None else z3.If(here, v, hit)
        values[key] = hit
        return hit

    return at


def tabulate(t: GroupTerm) -> GroupTerm:
    """Under :func:`grounded`, ``t`` with every field a table of its values on the
    constants (so that a rule built on another evaluates each field once per constant);
    ``t`` itself otherwise."""
    d = _DOMAIN.get()
    if d is None:
        return t
    ms, ps = d
    fields: dict[str, Any] = {k: getattr(t, k) for k in _SCALAR}
    for k in _UNARY:
        fields[k] = _table(getattr(t, k), ps if k == "committed_gen" else ms)
    for k in _BINARY:
        fields[k] = _table(getattr(t, k), ms, ps)
    return GroupTerm(**fields)


def _with(s: Unary, x: ExprRef, on: BoolRef) -> Unary:
    """``s`` with ``x`` in it (``on`` true) or out of it."""
    return lambda m: z3.If(m == x, on, s(m))


# --------------------------------------------------------------------------- rebalance


def all_members_joined(g: GroupTerm) -> BoolRef:
    """``ClassicGroup.hasAllMembersJoined`` (``coordinator.all_members_joined``): no
    KIP-394 pending member, and every member's JoinGroup is in."""
    return z3.And(
        every_member(lambda m: z3.Not(g.pending(m))),
        every_member(lambda m: z3.Implies(g.is_member(m), g.awaiting_join(m))),
    )


def complete_join(g: GroupTerm, heir: ExprRef) -> GroupTerm:
    """``GroupMetadataManager.completeClassicGroupJoin`` + ``ClassicGroup.initNextGeneration``
    (``coordinator.complete_join``): the members that rejoined are kept, and so are the
    static ones that did not; the generation advances; with none kept the group is EMPTY
    without leader; with some kept but none rejoined nothing changes (the join timer starts
    again); else COMPLETING_REBALANCE, the leader kept if it rejoined (else ``heir``), every
    member awaited in the SyncGroup phase and the rejoined ones' JoinGroups answered."""

    def joined(m: ExprRef) -> BoolRef:
        return z3.And(g.is_member(m), g.awaiting_join(m))

    def kept(m: ExprRef) -> BoolRef:
        return z3.And(g.is_member(m), z3.Or(g.awaiting_join(m), g.instance(m) != 0))

    empty = replace(
        g,
        status=z3.IntVal(EMPTY),
        generation=g.generation + 1,
        has_leader=z3.BoolVal(False),
        is_member=kept,
        pending_sync=lambda m: z3.BoolVal(False),
    )
    leader = z3.If(z3.And(g.has_leader, joined(g.leader)), g.leader, heir)
    formed = replace(
        g,
        status=z3.IntVal(COMPLETING),
        generation=g.generation + 1,
        has_leader=z3.BoolVal(True),
        leader=leader,
        is_member=kept,
        pending_sync=kept,
        awaiting_join=lambda m: z3.BoolVal(False),
    )
    return ite(some_member(joined), formed, ite(some_member(kept), g, empty))


def maybe_complete_join(g: GroupTerm, heir: ExprRef) -> GroupTerm:
    """``DelayedJoin.tryComplete`` (``coordinator.maybe_complete_join``): a join phase
    whose members have all rejoined completes."""
    return ite(z3.And(g.status == PREPARING, all_members_joined(g)), complete_join(g, heir), g)


def prepare_rebalance(g: GroupTerm, heir: ExprRef) -> GroupTerm:
    """``GroupMetadataManager.prepareRebalance`` (``coordinator.prepare_rebalance``): a
    group in its SyncGroup phase drops the assignments and answers the held SyncGroups
    (``resetAndPropagateAssignmentWithError``); the group is PREPARING_REBALANCE with no
    SyncGroup awaited, and the join completes at once if every member has rejoined."""
    completing = g.status == COMPLETING
    reset = replace(
        g,
        status=z3.IntVal(PREPARING),
        assigned=lambda m, q: z3.And(z3.Not(completing), g.assigned(m, q)),
        awaiting_sync=lambda m: z3.And(z3.Not(completing), g.awaiting_sync(m)),
        pending_sync=lambda m: z3.BoolVal(False),
    )
    return maybe_complete_join(reset, heir)


def remove_member(g: GroupTerm, x: ExprRef, heir: ExprRef) -> GroupTerm:
    """``GroupMetadataManager.removeMemberAndUpdateClassicGroup``
    (``coordinator.remove_member``): a KIP-394 pending member is forgotten (the join phase
    may complete); a member is removed — a removed leader is followed by ``heir``, or by
    none in a group left without members — and a STABLE or COMPLETING_REBALANCE group
    starts a rebalance, a join phase may complete; any other id changes nothing."""
    forgotten = maybe_complete_join(
        replace(g, pending=lambda m: z3.And(g.pending(m), m != x)), heir
    )
    others = some_member(lambda m: z3.And(g.is_member(m), m != x))
    loses_leader = g.is_leader(x)
    removed = replace(
        g,
        is_member=lambda m: z3.And(g.is_member(m), m != x),
        has_leader=z3.If(loses_leader, others, g.has_leader),
        leader=z3.If(loses_leader, heir, g.leader),
        pending_sync=lambda m: z3.And(g.pending_sync(m), m != x),
    )
    moved = ite(
        z3.Or(g.status == STABLE, g.status == COMPLETING),
        prepare_rebalance(removed, heir),
        ite(g.status == PREPARING, maybe_complete_join(removed, heir), removed),
    )
    return ite(g.pending(x), forgotten, ite(g.is_member(x), moved, g))


# --------------------------------------------------------------------------- JoinGroup


@dataclass(frozen=True)
class Join:
    """A JoinGroup request's parameters and the coordinator's free choices."""

    unknown: BoolRef
    member: ExprRef
    instance: ExprRef
    subscribed: Binary
    owned: Binary
    user_data: Binary
    claim_gen: ExprRef
    supported: BoolRef
    unchanged: BoolRef
    same_protocol: BoolRef
    new_id: ExprRef
    holder: ExprRef
    heir: ExprRef


def held(g: GroupTerm, instance: ExprRef) -> BoolRef:
    """A member of ``g`` has the request's instance id (``ClassicGroup.staticMemberId``)."""
    return z3.And(
        instance != 0, some_member(lambda m: z3.And(g.is_member(m), g.instance(m) == instance))
    )


def _issue(g: GroupTerm, new_id: ExprRef) -> GroupTerm:
    """``coordinator._issue_member_id``: ``new_id`` is handed out."""
    return replace(g, issued=_with(g.issued, new_id, z3.BoolVal(True)))


def add_member(g: GroupTerm, x: ExprRef, r: Join) -> GroupTerm:
    """``addMemberThenRebalanceOrCompleteJoin`` (``coordinator._add_member``): ``x`` joins
    with the request's instance id and subscription, nothing assigned, its JoinGroup held;
    the first member leads; a join phase may complete, any other state rebalances."""
    added = replace(
        g,
        is_member=_with(g.is_member, x, z3.BoolVal(True)),
        instance=lambda m: z3.If(m == x, r.instance, g.instance(m)),
        subscribed=lambda m, q: z3.If(m == x, r.subscribed(x, q), g.subscribed(m, q)),
        owned=lambda m, q: z3.If(m == x, r.owned(x, q), g.owned(m, q)),
        user_data=lambda m, q: z3.If(m == x, r.user_data(x, q), g.user_data(m, q)),
        claim_gen=lambda m: z3.If(m == x, r.claim_gen, g.claim_gen(m)),
        assigned=lambda m, q: z3.And(m != x, g.assigned(m, q)),
        awaiting_join=_with(g.awaiting_join, x, z3.BoolVal(True)),
        awaiting_sync=_with(g.awaiting_sync, x, z3.BoolVal(False)),
        has_leader=z3.BoolVal(True),
        leader=z3.If(g.has_leader, g.leader, x),
    )
    return ite(
        g.status == PREPARING, maybe_complete_join(added, r.heir), prepare_rebalance(added, r.heir)
    )


def join_static_member(g: GroupTerm, r: Join, variant: str | None) -> GroupTerm:
    """``GroupMetadataManager.classicGroupJoinNewStaticMember`` and
    ``updateStaticMemberThenRebalanceOrCompleteJoin`` (``coordinator.join_static_member``):
    a new member id is handed out; a new instance id joins as a new member; a known one's
    member (``holder``) is renamed to the new id in any state — its subscription the
    request's, its held requests answered FENCED_INSTANCE_ID, its place as leader and in
    the SyncGroup phase taken over — then a STABLE group whose selected protocol is
    unchanged stays as it is, another STABLE group or a COMPLETING_REBALANCE group
    rebalances with the new id's JoinGroup held, and a join phase takes it and may
    complete. The variant ``static-replaced-only-when-stable`` replaces only in STABLE;
    in any other state the new id joins as another member (KAFKA-8500). The variant
    ``static-replace-without-rebalance`` takes a request in COMPLETING_REBALANCE as if the
    group were STABLE — a known instance id swapped in without a rebalance — and leaves the
    group COMPLETING_REBALANCE whatever that did (KAFKA-9801)."""
    g0 = _issue(g, r.new_id)
    new, old = r.new_id, r.holder
    added = add_member(g0, new, r)
    renamed = replace(
        g0,
        is_member=lambda m: z3.Or(m == new, z3.And(g0.is_member(m), m != old)),
        instance=lambda m: z3.If(m == new, g0.instance(old), g0.instance(m)),
        subscribed=lambda m, q: z3.If(m == new, r.subscribed(new, q), g0.subscribed(m, q)),
        owned=lambda m, q: z3.If(m == new, r.owned(new, q), g0.owned(m, q)),
        user_data=lambda m, q: z3.If(m == new, r.user_data(new, q), g0.user_data(m, q)),
        claim_gen=lambda m: z3.If(m == new, r.claim_gen, g0.claim_gen(m)),
        assigned=lambda m, q: z3.If(m == new, g0.assigned(old, q), g0.assigned(m, q)),
        awaiting_join=lambda m: z3.And(m != new, g0.awaiting_join(m)),
        awaiting_sync=lambda m: z3.And(m != new, g0.awaiting_sync(m)),
        leader=z3.If(g0.is_leader(old), new, g0.leader),
        pending_sync=lambda m: z3.If(
            m == new, g0.pending_sync(old), z3.And(g0.pending_sync(m), m != old)
        ),
    )
    joined = replace(renamed, awaiting_join=_with(renamed.awaiting_join, new, z3.BoolVal(True)))
    in_stable = ite(r.same_protocol, renamed, prepare_rebalance(joined, r.heir))
    elsewhere = ite(
        g.status == COMPLETING,
        prepare_rebalance(joined, r.heir),
        maybe_complete_join(joined, r.heir),
    )
    replaced = ite(g.status == STABLE, in_stable, elsewhere)
    if variant == "static-replace-without-rebalance":
        as_stable = join_static_member(replace(g, status=z3.IntVal(STABLE)), r, None)
        kept = replace(as_stable, status=z3.IntVal(COMPLETING))
        return ite(g.status == COMPLETING, kept, ite(held(g, r.instance), replaced, added))
    if variant == "static-replaced-only-when-stable":
        return ite(z3.And(held(g, r.instance), g.status == STABLE), replaced, added)
    return ite(held(g, r.instance), replaced, added)


def _fenced(g: GroupTerm, x: ExprRef, instance: ExprRef, holder: ExprRef) -> BoolRef:
    """``ClassicGroup.validateMember``'s FENCED_INSTANCE_ID: the request's instance id is
    held by another member id."""
    return z3.And(held(g, instance), holder != x)


def _invalid_member(g: GroupTerm, x: ExprRef, instance: ExprRef, holder: ExprRef) -> BoolRef:
    """``ClassicGroup.validateMember`` (``coordinator._validate_member``) refuses the
    request: FENCED_INSTANCE_ID, or UNKNOWN_MEMBER_ID (also for an instance id no member
    holds)."""
    unheld = z3.And(instance != 0, z3.Not(held(g, instance)))
    return z3.Or(_fenced(g, x, instance, holder), unheld, z3.Not(g.is_member(x)))


def join_existing_member(g: GroupTerm, r: Join) -> GroupTerm:
    """``GroupMetadataManager.classicGroupJoinExistingMember``
    (``coordinator._join_existing_member``): refused for an invalid member or an EMPTY
    group; an unchanged member in the SyncGroup phase, or an unchanged follower in
    STABLE, gets the current generation back (nothing changes); otherwise the member's
    subscription is updated and its JoinGroup held: a join phase may complete, any other
    state rebalances."""
    x = r.member
    same = z3.Or(
        z3.And(g.status == COMPLETING, r.unchanged),
        z3.And(g.status == STABLE, r.unchanged, z3.Not(g.is_leader(x))),
    )
    noop = z3.Or(_invalid_member(g, x, r.instance, r.holder), g.status == EMPTY, same)
    updated = replace(
        g,
        subscribed=lambda m, q: z3.If(m == x, r.subscribed(x, q), g.subscribed(m, q)),
        owned=lambda m, q: z3.If(m == x, r.owned(x, q), g.owned(m, q)),
        user_data=lambda m, q: z3.If(m == x, r.user_data(x, q), g.user_data(m, q)),
        claim_gen=lambda m: z3.If(m == x, r.claim_gen, g.claim_gen(m)),
        awaiting_join=_with(g.awaiting_join, x, z3.BoolVal(True)),
    )
    go = ite(
        g.status == PREPARING,
        maybe_complete_join(updated, r.heir),
        prepare_rebalance(updated, r.heir),
    )
    return ite(noop, g, go)


def handle_join_group(g: GroupTerm, r: Join, variant: str | None) -> GroupTerm:
    """``GroupMetadataManager.classicGroupJoin`` (``coordinator.handle_join_group``): a
    request sharing no protocol is refused; an unknown static member joins or replaces;
    an unknown dynamic member gets a new id as a KIP-394 pending member
    (MEMBER_ID_REQUIRED); a pending member joins; a known member rejoins."""
    pending_id = replace(_issue(g, r.new_id), pending=_with(g.pending, r.new_id, z3.BoolVal(True)))
    unknown = ite(r.instance != 0, join_static_member(g, r, variant), pending_id)
    from_pending = add_member(
        replace(g, pending=lambda m: z3.And(g.pending(m), m != r.member)), r.member, r
    )
    known = ite(g.pending(r.member), from_pending, join_existing_member(g, r))
    return ite(z3.Not(r.supported), g, ite(r.unknown, unknown, known))


# --------------------------------------------------------------------------- the families


def equals(post: ClassicSym, t: GroupTerm) -> BoolRef:
    """``post`` is the group ``t``: member fields masked to ``t``'s members (a removed
    member's fields are gone), the leader and an uncommitted partition's generation
    compared only where there is one."""
    member = t.is_member

    def masked(f: Unary) -> Unary:
        return lambda m: z3.And(member(m), f(m))

    return z3.And(
        post.status == t.status,
        post.generation == t.generation,
        post.has_leader == t.has_leader,
        z3.Implies(t.has_leader, post.leader == t.leader),
        post.deletions == t.deletions,
        every_member(
            lambda m: z3.And(
                post.is_member(m) == member(m),
                post.instance(m) == z3.If(member(m), t.instance(m), 0),
                post.claim_gen(m) == z3.If(member(m), t.claim_gen(m), -1),
                post.awaiting_join(m) == masked(t.awaiting_join)(m),
                post.awaiting_sync(m) == masked(t.awaiting_sync)(m),
                post.pending_sync(m) == masked(t.pending_sync)(m),
                post.pending(m) == t.pending(m),
                post.issued(m) == t.issued(m),
            )
        ),
        every_member(
            lambda m: every_partition(
                lambda q: z3.And(
                    post.subscribed(m, q) == z3.And(member(m), t.subscribed(m, q)),
                    post.assigned(m, q) == z3.And(member(m), t.assigned(m, q)),
                    post.owned(m, q) == z3.And(member(m), t.owned(m, q)),
                    post.user_data(m, q) == z3.And(member(m), t.user_data(m, q)),
                    post.committed_by(m, q) == t.committed_by(m, q),
                )
            )
        ),
        every_partition(
            lambda q: z3.Implies(
                some_member(lambda m: t.committed_by(m, q)),
                post.committed_gen(q) == t.committed_gen(q),
            )
        ),
    )


def _leader_member(t: GroupTerm) -> BoolRef:
    """The leader is a member (``heir`` is chosen among them)."""
    return z3.Implies(t.has_leader, t.is_member(t.leader))


def _family(
    name: str, post: ClassicSym, t: GroupTerm, params: dict[str, Any], *guards: Any
) -> Family:
    return Family(name, z3.And(*guards, _leader_member(t), equals(post, t)), params)


def _params(name: str, tag: str, **sorts: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, sort in sorts.items():
        full = f"{name}.{k}@{tag}"
        if isinstance(sort, tuple):
            out[k] = z3.Function(full, *sort)
        else:
            out[k] = z3.Const(full, sort)
    return out


B, N = z3.BoolSort(), z3.IntSort()
MP = (MEMBER, PARTITION, B)


def join_group(pre: ClassicSym, post: ClassicSym, o: ClassicOptions) -> Family:
    """``DeliverMessage`` of a JoinGroup (:func:`handle_join_group`). The new id is one
    never handed out (for a request with the empty member id); a request of an empty
    group shares a protocol with it; an unchanged member's subscription is its own."""
    n = "DeliverMessage.join_group"
    p = _params(
        n,
        post.tag,
        unknown=B,
        member=MEMBER,
        instance=N,
        subscribed=(PARTITION, B),
        owned=(PARTITION, B),
        user_data=(PARTITION, B),
        claim_gen=N,
        supported=B,
        unchanged=B,
        same_protocol=B,
        new_id=MEMBER,
        holder=MEMBER,
        heir=MEMBER,
    )
    g = view(pre)
    r = Join(
        unknown=p["unknown"],
        member=p["member"],
        instance=p["instance"],
        subscribed=lambda _m, q: p["subscribed"](q),
        owned=lambda _m, q: p["owned"](q),
        user_data=lambda _m, q: p["user_data"](q),
        claim_gen=p["claim_gen"],
        supported=p["supported"],
        unchanged=p["unchanged"],
        same_protocol=p["same_protocol"],
        new_id=p["new_id"],
        holder=p["holder"],
        heir=p["heir"],
    )
    t = handle_join_group(g, r, o.variant)
    guards = [
        p["instance"] >= 0,
        p["claim_gen"] >= -1,
        z3.Implies(p["unknown"], z3.Not(pre.issued(p["new_id"]))),
        z3.Implies(every_member(lambda m: z3.Not(pre.is_member(m))), p["supported"]),
        z3.Implies(
            z3.And(p["unchanged"], pre.is_member(p["member"])),
            z3.And(
                every_partition(
                    lambda q: z3.And(
                        p["subscribed"](q) == pre.subscribed(p["member"], q),
                        p["owned"](q) == pre.owned(p["member"], q),
                        p["user_data"](q) == pre.user_data(p["member"], q),
                    )
                ),
                p["claim_gen"] == pre.claim_gen(p["member"]),
            ),
        ),
        z3.Implies(
            held(g, p["instance"]),
            z3.And(pre.is_member(p["holder"]), pre.instance(p["holder"]) == p["instance"]),
        ),
    ]
    return _family(n, post, t, p, *guards)


def sync_group(pre: ClassicSym, post: ClassicSym, o: ClassicOptions) -> Family:
    """``DeliverMessage`` of a SyncGroup (``GroupMetadataManager.classicGroupSync``,
    ``coordinator.handle_sync_group``): refused for an invalid member, another generation,
    another protocol, a join phase or an EMPTY group; otherwise the member is no longer
    awaited; in STABLE nothing else changes; in the SyncGroup phase its SyncGroup is held
    and the leader's installs its assignment for every member, answers the held
    SyncGroups and makes the group STABLE (``ClassicGroup.setAndPropagateAssignment``,
    ``coordinator.install_assignment``)."""
    n = "DeliverMessage.sync_group"
    constrained = o.assignor is not None and _DOMAIN.get() is not None
    leader: dict[str, Any] = {}
    if constrained:
        leader = {"failed": B, "computed": MP}
        if o.partitions_added:
            leader["seen"] = (PARTITION, B)
    p = _params(
        n,
        post.tag,
        member=MEMBER,
        instance=N,
        generation=N,
        protocol_ok=B,
        assignment=MP,
        holder=MEMBER,
        **leader,
    )
    g = view(pre)
    x = p["member"]
    refused = z3.Or(
        _invalid_member(g, x, p["instance"], p["holder"]),
        p["generation"] != g.generation,
        z3.Not(p["protocol_ok"]),
        g.status == PREPARING,
        g.status == EMPTY,
    )
    synced = replace(g, pending_sync=lambda m: z3.And(g.pending_sync(m), m != x))
    held_sync = replace(synced, awaiting_sync=_with(synced.awaiting_sync, x, z3.BoolVal(True)))
    installed = replace(
        held_sync,
        status=z3.IntVal(STABLE),
        assigned=p["assignment"],
        awaiting_sync=lambda m: z3.BoolVal(False),
    )
    t = ite(
        refused,
        g,
        ite(g.status == STABLE, synced, ite(g.is_leader(x), installed, held_sync)),
    )
    guards = [
        p["instance"] >= 0,
        z3.Implies(
            held(g, p["instance"]),
            z3.And(pre.is_member(p["holder"]), pre.instance(p["holder"]) == p["instance"]),
        ),
    ]
    if constrained:
        installs = z3.And(z3.Not(refused), g.status != STABLE, g.is_leader(x))
        guards.append(z3.Implies(installs, leader_assigns(pre, p, o)))
    return _family(n, post, t, p, *guards)


def leader_assigns(pre: ClassicSym, p: dict[str, Any], o: ClassicOptions) -> BoolRef:
    """The leader's SyncGroup assignment (``p["assignment"]``) is one its assignor
    computes (``classic_assignor.leader_assignment`` for ``ClassicOptions.assignor``, under
    the variant if it is an assignor rule) and the leader does not fail
    (``p["failed"]``: a leader whose assignment fails its check sends no SyncGroup,
    ``client.sync_group``). Its inputs are the group's in the SyncGroup phase, which are
    those of the JoinGroup response (a change of members or of a member's subscription
    starts another join phase): the members, their subscriptions and claims — the
    ``sticky`` assignor reads the previous assignment in its user data, the other one the
    owned partitions (``client.leader_assignment``) — of the partitions the leader saw
    (``p["seen"]`` with ``ClassicOptions.partitions_added``: any of those that exist; the
    abstraction keeps no record of when the leader read the metadata). Built on the
    universe of :func:`grounded`."""
    d = domain()
    assert o.assignor is not None
    sticky = o.assignor == "sticky"
    seen = p.get("seen")
    inputs = LeaderInputs(
        members=d[0],
        partitions=d[1],
        joined=pre.is_member,
        subscribed=(
            pre.subscribed if seen is None else (lambda m, q: z3.And(pre.subscribed(m, q), seen(q)))
        ),
        claimed=pre.user_data if sticky else pre.owned,
        claim_gen=pre.claim_gen,
        generation=pre.generation,
        cooperative=z3.BoolVal(o.assignor == "cooperative-sticky"),
    )
    output = LeaderOutput(assigned=p["assignment"], failed=p["failed"], computed=p["computed"])
    variant = o.variant if o.variant in ASSIGNOR_VARIANTS else None
    return z3.And(assignor_relation(inputs, output, variant), z3.Not(p["failed"]))


def heartbeat(pre: ClassicSym, post: ClassicSym, o: ClassicOptions) -> Family:
    """``DeliverMessage`` of a Heartbeat (``GroupMetadataManager.classicGroupHeartbeat``,
    ``coordinator.handle_heartbeat``): only a response; the group is as it was."""
    return _family("DeliverMessage.heartbeat", post, view(pre), {})


def leave_group(pre: ClassicSym, post: ClassicSym, o: ClassicOptions) -> Family:
    """``DeliverMessage`` of a LeaveGroup (``GroupMetadataManager.classicGroupLeave``,
    ``coordinator.handle_leave_group``): a pending member, or a member the request
    validates (``ClassicGroup.validateMember``), is removed (:func:`remove_member`)."""
    n = "DeliverMessage.leave_group"
    p = _params(n, post.tag, member=MEMBER, instance=N, holder=MEMBER, heir=MEMBER)
    g = view(pre)
    x = p["member"]
    goes = z3.Or(g.pending(x), z3.Not(_invalid_member(g, x, p["instance"], p["holder"])))
    t = ite(goes, remove_member(g, x, p["heir"]), g)
    guards = [
        p["instance"] >= 0,
        z3.Implies(
            held(g, p["instance"]),
            z3.And(pre.is_member(p["holder"]), pre.instance(p["holder"]) == p["instance"]),
        ),
    ]
    return _family(n, post, t, p, *guards)


def offset_commit(pre: ClassicSym, post: ClassicSym, o: ClassicOptions) -> Family:
    """``DeliverMessage`` of a classic member's OffsetCommit
    (``ClassicGroup.validateOffsetCommit``, ``coordinator.handle_offset_commit``): refused
    from a non-member, at another generation or in the SyncGroup phase; otherwise every
    partition of the request is committed by the member at its generation."""
    n = "DeliverMessage.offset_commit"
    p = _params(n, post.tag, member=MEMBER, generation=N, partitions=(PARTITION, B))
    g = view(pre)
    x, gen, parts = p["member"], p["generation"], p["partitions"]
    refused = z3.Or(z3.Not(g.is_member(x)), gen != g.generation, g.status == COMPLETING)
    written = replace(
        g,
        committed_by=lambda m, q: z3.If(parts(q), m == x, g.committed_by(m, q)),
        committed_gen=lambda q: z3.If(parts(q), gen, g.committed_gen(q)),
    )
    return _family(n, post, ite(refused, g, written), p)


def timer(pre: ClassicSym, post: ClassicSym, o: ClassicOptions, name: str) -> Family:
    """``SessionTimeout`` (the classic session timer: a member or KIP-394 pending member)
    and ``RebalanceTimeout`` (the join timer for a member that has not rejoined, the
    pending-sync timer, KAFKA-12890, for one the SyncGroup phase awaits:
    ``coordinator.rebalance_timer_fires``): the member is removed (:func:`remove_member`),
    except that the join timer of a static member ends the join phase with it kept
    (:func:`complete_join`, once some member has rejoined; the new leader, ``heir``, is
    one that did). The timer may fire for any such member (the clients are not kept). The variant
    ``no-pending-sync-timer`` removes nobody by the pending-sync timer: RebalanceTimeout in
    COMPLETING_REBALANCE leaves the group as it is (KAFKA-12890)."""
    p = _params(name, post.tag, member=MEMBER, heir=MEMBER)
    g = view(pre)
    x = p["member"]
    t = remove_member(g, x, p["heir"])
    guards = []
    if name == "SessionTimeout":
        may = z3.Or(g.is_member(x), g.pending(x))
    else:
        joined = some_member(lambda m: z3.And(g.is_member(m), g.awaiting_join(m)))
        join_timer = z3.And(g.status == PREPARING, g.instance(x) != 0)
        may = z3.And(
            g.is_member(x),
            z3.If(g.status == PREPARING, z3.Not(g.awaiting_join(x)), g.pending_sync(x)),
            z3.Implies(join_timer, joined),
        )
        # The join timer of a static member ends the phase; a new leader is one that rejoined.
        t = ite(join_timer, complete_join(g, p["heir"]), t)
        guards.append(z3.Implies(join_timer, g.awaiting_join(p["heir"])))
        if o.variant == "no-pending-sync-timer":
            t = ite(g.status == COMPLETING, g, t)
    return _family(name, post, t, p, may, *guards)


def metadata_change(pre: ClassicSym, post: ClassicSym, o: ClassicOptions) -> Family:
    """``MetadataChange``: a partition is added to a topic (``AddPartitions``;
    ``system._add_partitions``). The classic coordinator does not react to it:
    ``GroupMetadataManager.onNewMetadataImage`` asks the groups subscribed to a changed
    topic for a metadata refresh (``requestMetadataRefresh``, which the groups of the new
    protocols have and a ``ClassicGroup`` has not), and a classic group learns of it when
    its leader rejoins (``ConsumerCoordinator.rejoinNeededOrPending``,
    ``model.classic.client.metadata_changed``). What changes is what the abstraction reads
    off the image: the new partition ``added`` of ``topic`` exists, so every member whose
    subscription names the topic — one subscribed to another of its partitions (a topic
    has one at least) — is subscribed to it. No member was subscribed to it before: it
    did not exist. The rest of the group is as it was."""
    n = "MetadataChange"
    p = _params(n, post.tag, topic=(PARTITION, B), added=PARTITION)
    g = view(pre)
    topic, added = p["topic"], p["added"]

    def names_topic(m: ExprRef) -> BoolRef:
        return some_partition(lambda q: z3.And(topic(q), q != added, g.subscribed(m, q)))

    grown = replace(
        g,
        subscribed=lambda m, q: z3.If(
            q == added, z3.And(g.is_member(m), names_topic(m)), g.subscribed(m, q)
        ),
    )
    guards = [topic(added), every_member(lambda m: z3.Not(g.subscribed(m, added)))]
    return _family(n, post, tabulate(grown), p, *guards)


def _deleted(g: GroupTerm) -> GroupTerm:
    """``GroupMetadataManager.deleteGroup`` (``coordinator.classic_delete_group``): a new
    EMPTY group at generation 0 without members, pending members or offsets; the ids
    handed out stay handed out; one deletion more."""
    false = z3.BoolVal(False)
    return replace(
        g,
        status=z3.IntVal(EMPTY),
        generation=z3.IntVal(0),
        has_leader=false,
        is_member=lambda m: false,
        pending=lambda m: false,
        pending_sync=lambda m: false,
        committed_by=lambda m, q: false,
        deletions=g.deletions + 1,
    )


def expirable(g: GroupTerm, q: ExprRef, variant: str | None) -> BoolRef:
    """``ClassicGroup.offsetExpirationCondition`` (``coordinator.classic_expirable_offsets``,
    KIP-211): every committed offset of an EMPTY group; of a STABLE group's, those of
    topics no member subscribes to; none in a rebalance (KAFKA-13636). The variant
    ``expire-while-rebalancing`` reads, in any state but EMPTY, the subscriptions of the
    members that have rejoined so far (all, but in a join phase)."""
    committed = some_member(lambda m: g.committed_by(m, q))

    def reads(m: ExprRef) -> BoolRef:
        if variant == "expire-while-rebalancing":
            return z3.And(g.is_member(m), z3.Or(g.status != PREPARING, g.awaiting_join(m)))
        return g.is_member(m)

    unsubscribed = z3.Not(some_member(lambda m: z3.And(reads(m), g.subscribed(m, q))))
    if variant == "expire-while-rebalancing":
        return z3.And(committed, z3.Or(g.status == EMPTY, unsubscribed))
    return z3.And(
        committed,
        z3.Or(g.status == EMPTY, z3.And(g.status == STABLE, unsubscribed)),
    )


def expire_offsets(pre: ClassicSym, post: ClassicSym, o: ClassicOptions) -> Family:
    """``ExpireOffsets`` (``system._expire_offsets``;
    ``OffsetMetadataManager.cleanupExpiredOffsets``): of one topic (``topic``: the
    abstraction keeps no topics) the expirable offsets are removed — at least one, or the
    model offers no such action; no wall-clock time. With
    ``ClassicOptions.delete_expired_groups`` an EMPTY group left without offsets is
    deleted (``GroupCoordinatorShard.cleanupGroupMetadata`` → ``maybeDeleteGroup``)."""
    n = "ExpireOffsets"
    p = _params(n, post.tag, topic=(PARTITION, B))
    g = view(pre)

    def gone(q: ExprRef) -> BoolRef:
        return z3.And(p["topic"](q), expirable(g, q, o.variant))

    cleaned = replace(g, committed_by=lambda m, q: z3.And(g.committed_by(m, q), z3.Not(gone(q))))
    t = cleaned
    if o.delete_expired_groups:
        left = some_partition(
            lambda q: z3.And(z3.Not(gone(q)), some_member(lambda m: g.committed_by(m, q)))
        )
        t = ite(z3.And(g.status == EMPTY, z3.Not(left)), _deleted(cleaned), cleaned)
    return _family(n, post, t, p, some_partition(gone))


def delete_group(pre: ClassicSym, post: ClassicSym, o: ClassicOptions) -> Family:
    """``DeleteGroup`` (``system._delete_group``; ``GroupMetadataManager.deleteGroups``):
    refused with GROUP_ID_NOT_FOUND for a group no JoinGroup created since it was deleted
    (one equal to a new group), and with NON_EMPTY_GROUP unless it is EMPTY
    (``ClassicGroup.validateDeleteGroup``, ``coordinator.classic_validate_delete_group``) —
    a refusal changes nothing —, else the group is deleted (:func:`_deleted`). The variant
    ``classic-delete-non-empty-group`` drops the NON_EMPTY_GROUP check."""
    g = view(pre)
    fresh = z3.And(
        g.deletions > 0,
        g.status == EMPTY,
        g.generation == 0,
        z3.Not(g.has_leader),
        every_member(lambda m: z3.And(z3.Not(g.is_member(m)), z3.Not(g.pending(m)))),
        every_member(lambda m: every_partition(lambda q: z3.Not(g.committed_by(m, q)))),
    )
    empty = g.status == EMPTY
    if o.variant == "classic-delete-non-empty-group":
        empty = z3.BoolVal(True)
    t = ite(z3.And(z3.Not(fresh), empty), _deleted(g), g)
    return _family("DeleteGroup", post, t, {})


def stutter(pre: ClassicSym, post: ClassicSym, o: ClassicOptions) -> Family:
    return _family("Unchanged", post, view(pre), {})


Builder = Callable[[ClassicSym, ClassicSym, ClassicOptions], Family]

BUILDERS: dict[str, Builder] = {
    "DeliverMessage.join_group": join_group,
    "DeliverMessage.sync_group": sync_group,
    "DeliverMessage.heartbeat": heartbeat,
    "DeliverMessage.leave_group": leave_group,
    "DeliverMessage.offset_commit": offset_commit,
    "SessionTimeout": lambda pre, post, o: timer(pre, post, o, "SessionTimeout"),
    "RebalanceTimeout": lambda pre, post, o: timer(pre, post, o, "RebalanceTimeout"),
    "MetadataChange": metadata_change,
    "ExpireOffsets": expire_offsets,
    "DeleteGroup": delete_group,
    "Unchanged": stutter,
}
"""Each family's builder, in ``FAMILY_NAMES`` order."""


def families(
    pre: ClassicSym, post: ClassicSym, o: ClassicOptions, names: Iterable[str] = FAMILY_NAMES
) -> list[Family]:
    """The disjuncts of the relation named (every one by default), in that order."""
    return [BUILDERS[name](pre, post, o) for name in names]


def relation(pre: ClassicSym, post: ClassicSym, o: ClassicOptions) -> BoolRef:
    """The transition relation: the disjunction of every family."""
    return z3.Or(*[f.formula for f in families(pre, post, o)])


def family_of(action: Action) -> str | None:
    """The family a classic model action belongs to; ``None`` for a request the
    coordinator does not handle."""
    if isinstance(action, DeliverMessage) and action.message.to_coordinator:
        body = action.message.body
        kinds: tuple[tuple[type, str], ...] = (
            (JoinGroupRequest, "join_group"),
            (SyncGroupRequest, "sync_group"),
            (HeartbeatRequest, "heartbeat"),
            (LeaveGroupRequest, "leave_group"),
            (OffsetCommitRequest, "offset_commit"),
        )
        for kind, name in kinds:
            if isinstance(body, kind):
                return f"DeliverMessage.{name}"
        return None
    if isinstance(action, SessionTimeoutAction):
        return "SessionTimeout"
    if isinstance(action, RebalanceTimeout):
        return "RebalanceTimeout"
    if isinstance(action, ExpireOffsets):
        return "ExpireOffsets"
    if isinstance(action, DeleteGroup):
        return "DeleteGroup"
    if isinstance(action, AddPartitions):
        return "MetadataChange"
    return "Unchanged"
