"""The constraints a classic group leader's sticky assignment satisfies, as a Z3 relation.

``classic_transition`` constrains the leader's assignment in its SyncGroup
(``DeliverMessage.sync_group``'s ``assignment``) by this relation
(``classic_transition.leader_assigns``). This module states, over a finite universe
(member ids and partitions are the uninterpreted sorts ``Member`` and ``Partition`` of
``classic_state``, generations integers), what that assignment is given the leader's inputs,
the JoinGroup metadata of every member (``ConsumerProtocolSubscription``) as the leader's
JoinGroup response lists it:

==================== =========================================================
``joined(m)``         ``m`` is listed in the leader's JoinGroup response
``subscribed(m,p)``   ``p`` exists and ``m`` subscribes to its topic
``claimed(m,p)``      ``m`` claims ``p``: its ``ownedPartitions`` (KIP-429,
                      cooperative-sticky) or the previous assignment in the
                      ``StickyAssignor`` user data (KIP-341, eager sticky)
``claim_gen(m)``      the generation of that claim (``generationId``; -1 none)
``generation``        the group's generation (every claim is older)
``cooperative``       the selected assignor is ``cooperative-sticky`` (else the
                      eager ``sticky``)
==================== =========================================================

The output is the assignment the leader sends (``assigned(m,p)``) and whether the leader
fails the rebalance instead (``failed``: ``ConsumerCoordinator.onLeaderElected`` throwing,
no assignment sent); ``computed(m,p)`` is a witness, the assignor's result before
``CooperativeStickyAssignor.adjustAssignment`` (the same as ``assigned`` under the eager
protocol). :func:`leader_assignment` is the conjunction of named clauses
(:func:`clauses`), each following a rule of ``model.classic.assignors`` or
``model.classic.client.leader_assignment``:

* ``previous owners`` (:func:`previous_owners`, a term, not a clause): KIP-341 / KAFKA-14639
  per-partition arbitration (``AbstractStickyAssignor.allSubscriptionsEqual``;
  ``assignors.arbitrate_claims``): a claim on a subscribed partition is kept by the unique
  claimant at the highest generation; a claim below another claimant's generation, a tie at
  the highest and a claim on an unsubscribed partition are dropped. *Tight*: a function of
  the inputs.
* ``valid``: only joined members get partitions, and only partitions they subscribe to;
  ``at most once``: no partition twice; ``complete``: every partition some member
  subscribes to is computed for someone (``constrainedAssign`` / ``assignRoundRobin`` and
  the model's ``general_assign``).
* ``balanced``: no partition is held by a member with at least two partitions more than
  another subscriber of it (the end condition of the model's ``general_assign``, its
  stand-in for ``GeneralAssignmentBuilder.isBalanced``); with equal subscriptions, every
  count is ``floor(P/N)`` or ``ceil(P/N)`` (``ConstrainedAssignmentBuilder`` minQuota /
  maxQuota).
* ``sticky`` (equal subscriptions, ``constrainedAssign`` / ``assignOwnedPartitions``): every
  member keeps as many of its previously owned partitions as its count allows (its
  computed partitions all were its own, or it keeps all of its own), and ``sticky
  quotas``: a member that gave up a previous partition to stay at a smaller count is not
  out-counted by a member given a partition it did not own (maxQuota slots go to members
  that own enough). Differing subscriptions state no stickiness (the model's
  ``general_assign`` moves owned partitions while balancing).
* ``adjusted``: eager: the computed assignment is sent; cooperative-sticky
  (``CooperativeStickyAssignor.adjustAssignment``, ``assignors.withhold_moved_partitions``):
  a computed partition is withheld from a member that is not its previous owner while
  another member still claims it. *Tight* given ``computed``.
* ``failure``: the leader never fails with these two assignors
  (``validateCooperativeAssignment`` is skipped for the built-in cooperative-sticky,
  KAFKA-13406).

Over-approximations: which of its previously owned partitions a member keeps when it keeps
some, which members get the maxQuota slots among equals, and where the unowned partitions
go are free (the model and Kafka decide them by iteration order); under differing
subscriptions stickiness is free. Preconditions: only joined members subscribe and every
claim is older than the group's generation (:func:`well_formed`); every subscribed topic
has a partition (so equal subscribed partitions are equal topic subscriptions, which
``allSubscriptionsEqual`` compares).

``variant`` names an assignor-rule mutant of the catalogue (``VARIANTS``), encoded as the
rule it breaks. Under sticky-without-generation a partition several members claim is kept by
each of them (then held by at most as many members as claim it: the balancing of differing
subscriptions may move a copy on), which uses up the quotas: its relation states, for equal
subscriptions, only
that a member keeps ``floor(P/N)`` of its previous partitions or all of them, and no balance
(the model's balancing, with duplicates, does not always reach its end condition).

Built on the universe's constants: every quantifier is the conjunction or disjunction of its
instances, so the formulas are quantifier-free.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import z3

from invariants.z3.proof.state import MEMBER, PARTITION, Partition, Universe
from model.classic.messages import ClassicSubscription, JoinGroupResponseMember
from model.classic.records import ClassicClient
from model.config import Config
from model.ids import EMPTY
from model.records import TopicMetadata
from model.status import ClassicClientStatus

BoolRef = Any
ExprRef = Any
FuncRef = Any

PROTOCOLS = ("sticky", "cooperative-sticky")
"""The assignors the relation covers (``StickyAssignor``, ``CooperativeStickyAssignor``)."""

VARIANTS = {
    "sticky-without-generation": "every claim on a subscribed partition is a previous "
    "ownership, without the KIP-341 generation: a partition several members claim is kept "
    "by all of them (KAFKA-7026)",
    "highest-generation-claims-only": "the claims of members below the highest generation "
    "are erased, for the assignor and adjustAssignment alike (KAFKA-14639)",
    "sticky-forgets-ownership": "no previous ownership: nothing sticky (KIP-54 / KIP-429)",
    "assign-without-withholding": "the leader runs as byte code without KIP-429: "
    "cooperative-sticky reads no owned partitions and withholds nothing "
    "(CooperativeStickyAssignor.adjustAssignment dropped)",
    "validate-stale-claims": "as highest-generation-claims-only, and a cooperative "
    "assignment that revokes and assigns a partition against the raw claims fails the "
    "rebalance (validateCooperativeAssignment, KAFKA-13406 / KAFKA-13419)",
}
"""The classic catalogue mutants of an assignor rule (``groupcheck.mutants``) this
relation has a variant of."""

Binary = Callable[[ExprRef, ExprRef], BoolRef]


# --------------------------------------------------------------------------- symbols


@dataclass(frozen=True)
class LeaderInputs:
    """The leader's inputs as Z3 terms, on the universe's constants ``members`` and
    ``partitions``."""

    members: tuple[ExprRef, ...]
    partitions: tuple[ExprRef, ...]
    joined: FuncRef
    subscribed: FuncRef
    claimed: FuncRef
    claim_gen: FuncRef
    generation: ExprRef
    cooperative: BoolRef

    @staticmethod
    def fresh(tag: str, u: Universe) -> LeaderInputs:
        M, P, B, N = MEMBER, PARTITION, z3.BoolSort(), z3.IntSort()
        return LeaderInputs(
            members=tuple(u.member_consts.values()),
            partitions=tuple(u.partition_consts.values()),
            joined=z3.Function(f"leader.joined.{tag}", M, B),
            subscribed=z3.Function(f"leader.subscribed.{tag}", M, P, B),
            claimed=z3.Function(f"leader.claimed.{tag}", M, P, B),
            claim_gen=z3.Function(f"leader.claim_gen.{tag}", M, N),
            generation=z3.Int(f"leader.generation.{tag}"),
            cooperative=z3.Bool(f"leader.cooperative.{tag}"),
        )


@dataclass(frozen=True)
class LeaderOutput:
    """The leader's SyncGroup assignment (``assigned``), whether it fails the rebalance
    instead (``failed``) and the witness ``computed`` (the assignor's result before
    ``adjustAssignment``)."""

    assigned: FuncRef
    failed: BoolRef
    computed: FuncRef

    @staticmethod
    def fresh(tag: str) -> LeaderOutput:
        M, P, B = MEMBER, PARTITION, z3.BoolSort()
        return LeaderOutput(
            assigned=z3.Function(f"leader.assigned.{tag}", M, P, B),
            failed=z3.Bool(f"leader.failed.{tag}"),
            computed=z3.Function(f"leader.computed.{tag}", M, P, B),
        )


# --------------------------------------------------------------------------- terms


def _all(xs: Any) -> BoolRef:
    return z3.And(*list(xs))


def _any(xs: Any) -> BoolRef:
    items = list(xs)
    return z3.Or(*items) if items else z3.BoolVal(False)


def _size(i: LeaderInputs, rel: Binary, m: ExprRef) -> ExprRef:
    """How many partitions ``rel`` gives ``m``."""
    return z3.Sum(*[z3.If(rel(m, p), 1, 0) for p in i.partitions])


def _subset(i: LeaderInputs, a: Binary, b: Binary, m: ExprRef) -> BoolRef:
    return _all(z3.Implies(a(m, p), b(m, p)) for p in i.partitions)


def _memo(f: Callable[..., ExprRef]) -> Callable[..., ExprRef]:
    """``f`` computed once per tuple of arguments (constants of the universe)."""
    seen: dict[tuple[int, ...], ExprRef] = {}

    def at(*args: ExprRef) -> ExprRef:
        key = tuple(a.get_id() for a in args)
        hit = seen.get(key)
        if hit is None:
            hit = seen[key] = f(*args)
        return hit

    return at


def _tabled(i: LeaderInputs) -> LeaderInputs:
    """``i`` with every function application memoised (each built once)."""
    return replace(
        i,
        joined=_memo(i.joined),
        subscribed=_memo(i.subscribed),
        claimed=_memo(i.claimed),
        claim_gen=_memo(i.claim_gen),
    )


def effective_claims(i: LeaderInputs, variant: str | None = None) -> Binary:
    """The claims the assignor reads (``leader_assignment``'s ``Subscription``s):
    ``claimed`` of joined members; under highest-generation-claims-only and
    validate-stale-claims only those of the members at the highest generation
    (``highest_generation_claims_only``); under assign-without-withholding none for
    cooperative-sticky (byte code without KIP-429 reads no ``ownedPartitions``)."""
    if variant in ("highest-generation-claims-only", "validate-stale-claims"):

        @_memo
        def top(m: ExprRef) -> BoolRef:
            return _all(
                z3.Implies(i.joined(o), i.claim_gen(o) <= i.claim_gen(m)) for o in i.members
            )

        return _memo(lambda m, p: z3.And(i.joined(m), i.claimed(m, p), top(m)))
    if variant == "assign-without-withholding":
        return _memo(lambda m, p: z3.And(i.joined(m), i.claimed(m, p), z3.Not(i.cooperative)))
    return _memo(lambda m, p: z3.And(i.joined(m), i.claimed(m, p)))


def previous_owners(
    i: LeaderInputs, variant: str | None = None, claims: Binary | None = None
) -> Binary:
    """The previously owned partitions the sticky algorithm starts from
    (``AbstractStickyAssignor.allSubscriptionsEqual`` filling ``consumerToOwnedPartitions``;
    ``assignors.arbitrate_claims`` under ``assignors._previously_owned``): a claim on a
    subscribed partition whose claimant's generation is higher than every other claimant's.
    sticky-without-generation keeps every claim on a subscribed partition
    (``catalogue.sticky_without_generation``); sticky-forgets-ownership keeps none.
    ``claims``: :func:`effective_claims` when already built."""
    if claims is None:
        claims = effective_claims(i, variant)
    if variant == "sticky-forgets-ownership":
        return lambda m, p: z3.BoolVal(False)

    @_memo
    def valid(m: ExprRef, p: ExprRef) -> BoolRef:
        return z3.And(claims(m, p), i.subscribed(m, p))

    if variant == "sticky-without-generation":
        return valid

    @_memo
    def owner(m: ExprRef, p: ExprRef) -> BoolRef:
        others = (
            z3.Implies(valid(o, p), i.claim_gen(o) < i.claim_gen(m))
            for o in i.members
            if not o.eq(m)
        )
        return z3.And(valid(m, p), *others)

    return owner


def adjusted(
    i: LeaderInputs,
    o: LeaderOutput,
    variant: str | None = None,
    *,
    claims: Binary | None = None,
    prev: Binary | None = None,
) -> Binary:
    """The assignment sent: ``computed`` under eager; under cooperative-sticky
    ``CooperativeStickyAssignor.adjustAssignment`` (``assignors.withhold_moved_partitions``):
    a partition stays with its computed member if it is that member's previous partition or
    no other joined member claims it (the raw claim, as the assignor read it); under
    assign-without-withholding nothing is withheld. ``claims`` and ``prev``:
    :func:`effective_claims` and :func:`previous_owners` when already built."""
    if variant == "assign-without-withholding":
        return o.computed
    if claims is None:
        claims = effective_claims(i, variant)
    if prev is None:
        prev = previous_owners(i, variant, claims)
    cs = claims

    @_memo
    def sent(m: ExprRef, p: ExprRef) -> BoolRef:
        claimed_by_other = _any(cs(x, p) for x in i.members if not x.eq(m))
        kept = z3.Or(prev(m, p), z3.Not(claimed_by_other))
        return z3.And(o.computed(m, p), z3.Or(z3.Not(i.cooperative), kept))

    return sent


def cooperative_check_fails(i: LeaderInputs, sent: Binary) -> BoolRef:
    """``ConsumerCoordinator.validateCooperativeAssignment``
    (``assignors.validate_cooperative_assignment``) fails: some partition is revoked from a
    joined member (claimed, not sent) and added to another (sent, not claimed)."""

    def raw(m: ExprRef, p: ExprRef) -> BoolRef:
        return z3.And(i.joined(m), i.claimed(m, p))

    return _any(
        z3.And(
            _any(z3.And(raw(m, p), z3.Not(sent(m, p))) for m in i.members),
            _any(z3.And(i.joined(m), sent(m, p), z3.Not(raw(m, p))) for m in i.members),
        )
        for p in i.partitions
    )


def equal_subscriptions(i: LeaderInputs) -> BoolRef:
    """``AbstractStickyAssignor.allSubscriptionsEqual`` (its return value): every two joined
    members subscribe to the same partitions."""
    return _all(
        z3.Implies(
            z3.And(i.joined(a), i.joined(b)),
            _all(i.subscribed(a, p) == i.subscribed(b, p) for p in i.partitions),
        )
        for a in i.members
        for b in i.members
        if a.get_id() < b.get_id()
    )


# --------------------------------------------------------------------------- the relation


def well_formed(i: LeaderInputs) -> list[BoolRef]:
    """What the leader's inputs always satisfy: only joined members subscribe, every claim's
    generation is ``DEFAULT_GENERATION`` or older than the group's."""
    out: list[BoolRef] = []
    for m in i.members:
        out.append(z3.Implies(i.joined(m), i.claim_gen(m) >= -1))
        out.append(z3.Implies(i.joined(m), i.claim_gen(m) < i.generation))
        for p in i.partitions:
            out.append(z3.Implies(i.subscribed(m, p), i.joined(m)))
    return out


def clauses(i: LeaderInputs, o: LeaderOutput, variant: str | None = None) -> dict[str, BoolRef]:
    """The relation's named clauses (module docstring), under ``variant``."""
    if variant is not None and variant not in VARIANTS:
        raise ValueError(
            f"no symbolic assignor variant of {variant!r}; known: {', '.join(VARIANTS)}"
        )
    i = _tabled(i)
    o = replace(o, computed=_memo(o.computed))
    ms, ps = i.members, i.partitions
    c = o.computed
    claims = effective_claims(i, variant)
    prev = previous_owners(i, variant, claims)
    size = {m.get_id(): _size(i, c, m) for m in ms}
    owned = {m.get_id(): _size(i, prev, m) for m in ms}
    out: dict[str, BoolRef] = {}
    out["valid"] = _all(
        z3.Implies(c(m, p), z3.And(i.joined(m), i.subscribed(m, p))) for m in ms for p in ps
    )
    pairs = [(a, b) for a in ms for b in ms if a.get_id() < b.get_id()]
    if variant == "sticky-without-generation":
        # AbstractStickyAssignor without KIP-341: several claimants each keep the partition;
        # the balancing may move one of the copies on, never make another.
        def holders(rel: Binary, p: ExprRef) -> ExprRef:
            return z3.Sum(*[z3.If(rel(m, p), 1, 0) for m in ms])

        out["at most once"] = _all(
            z3.Or(holders(c, p) <= 1, holders(c, p) <= holders(prev, p)) for p in ps
        )
    else:
        out["at most once"] = _all(z3.Not(z3.And(c(a, p), c(b, p))) for a, b in pairs for p in ps)
    out["complete"] = _all(
        z3.Implies(_any(i.subscribed(m, p) for m in ms), _any(c(m, p) for m in ms)) for p in ps
    )
    equal = equal_subscriptions(i)
    if variant == "sticky-without-generation":
        # Duplicates consume quota: a member keeps floor(P/N) of its previous partitions or
        # all of them (assignOwnedPartitions), and nothing more is guaranteed.
        kept = {m.get_id(): _size(i, lambda x, p: z3.And(c(x, p), prev(x, p)), m) for m in ms}
        total = z3.Sum(*[z3.If(_any(i.subscribed(x, p) for x in ms), 1, 0) for p in ps])

        def at_min_quota(m: ExprRef) -> BoolRef:
            # kept >= floor(P/N), as N * (kept + 1) > P
            return z3.Sum(*[z3.If(i.joined(x), kept[m.get_id()] + 1, 0) for x in ms]) > total

        out["sticky"] = z3.Implies(
            equal,
            _all(z3.Or(kept[m.get_id()] >= owned[m.get_id()], at_min_quota(m)) for m in ms),
        )
    else:
        out["balanced"] = _all(
            z3.Implies(z3.And(c(d, p), i.subscribed(r, p)), size[r.get_id()] + 2 > size[d.get_id()])
            for d in ms
            for r in ms
            if not d.eq(r)
            for p in ps
        )
        out["sticky"] = z3.Implies(
            equal, _all(z3.Or(_subset(i, prev, c, m), _subset(i, c, prev, m)) for m in ms)
        )
        out["sticky quotas"] = z3.Implies(
            equal,
            _all(
                z3.Implies(
                    z3.And(
                        owned[m.get_id()] > size[m.get_id()],
                        size[x.get_id()] > size[m.get_id()],
                    ),
                    _subset(i, c, prev, x),
                )
                for m in ms
                for x in ms
                if not m.eq(x)
            ),
        )
    sent = adjusted(i, o, variant, claims=claims, prev=prev)
    if variant == "validate-stale-claims":
        fails = z3.And(i.cooperative, cooperative_check_fails(i, sent))
        out["failure"] = o.failed == fails
        out["adjusted"] = _all(
            o.assigned(m, p) == z3.And(z3.Not(fails), sent(m, p)) for m in ms for p in ps
        )
    else:
        out["failure"] = z3.Not(o.failed)
        out["adjusted"] = _all(o.assigned(m, p) == sent(m, p) for m in ms for p in ps)
    return out


def leader_assignment(
    inputs: LeaderInputs, output: LeaderOutput, variant: str | None = None
) -> BoolRef:
    """The leader's SyncGroup assignment given its JoinGroup inputs (module docstring):
    the conjunction of :func:`clauses`."""
    return z3.And(*clauses(inputs, output, variant).values())


# --------------------------------------------------------------------------- concrete values


@dataclass(frozen=True)
class MemberInput:
    """One member as the leader's JoinGroup response lists it: its subscribed topics, its
    claimed partitions and their generation."""

    member_id: str
    topics: frozenset[str]
    claimed: frozenset[Partition] = frozenset()
    generation: int = -1


@dataclass(frozen=True)
class LeaderInputsValue:
    """Concrete leader inputs: the selected assignor, the group's generation, the topics'
    partition counts and the members."""

    protocol: str
    generation: int
    topics: tuple[tuple[str, int], ...]
    members: tuple[MemberInput, ...]

    def partitions(self) -> tuple[Partition, ...]:
        return tuple((t, k) for t, n in self.topics for k in range(n))

    def subscribed(self, member: MemberInput) -> frozenset[Partition]:
        return frozenset(p for p in self.partitions() if p[0] in member.topics)

    def universe(self) -> Universe:
        return Universe.of([m.member_id for m in self.members], self.partitions())


LeaderOutputValue = Mapping[str, frozenset[Partition]] | None
"""The leader's assignment by member id, or None when it fails the rebalance."""


def run(inputs: LeaderInputsValue, config: Config) -> LeaderOutputValue:
    """The model's leader (``config.rules.classic_leader_assignment``, as
    ``classic.client.sync_group`` calls it) on ``inputs``: a KIP-429 leader configured with
    the one assignor, the claims in ``ownedPartitions`` (cooperative-sticky) or the sticky
    user data (sticky), topic names their ids."""
    if inputs.protocol not in PROTOCOLS:
        raise ValueError(f"protocol {inputs.protocol!r}; give one of {', '.join(PROTOCOLS)}")
    if not inputs.members:
        raise ValueError("no member: the leader's JoinGroup response lists the leader at least")
    cooperative = inputs.protocol == "cooperative-sticky"
    members = tuple(
        JoinGroupResponseMember(
            member_id=m.member_id,
            instance_id=None,
            subscription=ClassicSubscription(
                topics=m.topics,
                owned_partitions=m.claimed if cooperative else EMPTY,
                generation_id=m.generation,
                user_data=EMPTY if cooperative else m.claimed,
            ),
        )
        for m in inputs.members
    )
    leader = inputs.members[0]
    client = ClassicClient(
        name=leader.member_id,
        instance_id=None,
        incarnation=0,
        alive=True,
        status=ClassicClientStatus.UNJOINED,
        assignors=(inputs.protocol,),
        kip429=True,
        subscription=leader.topics,
        member_id=leader.member_id,
        generation_id=inputs.generation,
        protocol_name=inputs.protocol,
        leader=True,
        join_members=members,
    )
    topics = {t: TopicMetadata(topic_id=t, partitions=n) for t, n in inputs.topics}
    result = config.rules.classic_leader_assignment(client, members, topics, config)
    if result is None:
        return None
    return {m: frozenset(ps) for m, ps in result.items()}


def pin_inputs(i: LeaderInputs, v: LeaderInputsValue, u: Universe) -> list[BoolRef]:
    """Constraints fixing ``i`` to ``v`` on the universe ``u``."""
    by_id = {m.member_id: m for m in v.members}
    out: list[BoolRef] = [
        i.generation == v.generation,
        i.cooperative == (v.protocol == "cooperative-sticky"),
    ]
    for mid, mc in u.member_consts.items():
        m = by_id.get(mid)
        out.append(i.joined(mc) == (m is not None))
        out.append(i.claim_gen(mc) == (m.generation if m is not None else -1))
        subscribed = v.subscribed(m) if m is not None else frozenset()
        for p, pc in u.partition_consts.items():
            out.append(i.subscribed(mc, pc) == (p in subscribed))
            out.append(i.claimed(mc, pc) == (m is not None and p in m.claimed))
    return out


def pin_output(o: LeaderOutput, v: LeaderOutputValue, u: Universe) -> list[BoolRef]:
    """Constraints fixing ``o``'s assignment and ``failed`` to ``v`` (``computed`` open)."""
    out: list[BoolRef] = [o.failed == (v is None)]
    for mid, mc in u.member_consts.items():
        mine = frozenset() if v is None else v.get(mid, frozenset())
        for p, pc in u.partition_consts.items():
            out.append(o.assigned(mc, pc) == (p in mine))
    return out


@dataclass(frozen=True)
class Judgement:
    """Whether the relation allows an output on given inputs; when not, an unsat core of
    the clauses that refuse it."""

    allowed: bool
    refused_by: tuple[str, ...] = ()


def judge(
    inputs: LeaderInputsValue, output: LeaderOutputValue, variant: str | None = None
) -> Judgement:
    """Whether ``leader_assignment(inputs, output, variant)`` holds for some ``computed``."""
    u = inputs.universe()
    i = LeaderInputs.fresh("j", u)
    o = LeaderOutput.fresh("j")
    s = z3.Solver()
    s.add(*u.axioms(), *pin_inputs(i, inputs, u), *pin_output(o, output, u))
    named = clauses(i, o, variant)
    for name, clause in named.items():
        s.assert_and_track(clause, z3.Bool(f"clause:{name}"))
    verdict = s.check()
    if verdict == z3.sat:
        return Judgement(True)
    if verdict != z3.unsat:
        raise RuntimeError(f"z3 answered {verdict} on a ground assignor query")
    core = {str(b) for b in s.unsat_core()}
    return Judgement(False, tuple(n for n in named if f"clause:{n}" in core))


def outputs(
    inputs: LeaderInputsValue,
    variant: str | None = None,
    *,
    computed: Mapping[str, frozenset[Partition]] | None = None,
    limit: int = 2,
) -> list[LeaderOutputValue]:
    """Up to ``limit`` distinct outputs the relation allows on ``inputs`` (two: whether the
    output is unique), with the witness ``computed`` fixed to the value given if any."""
    u = inputs.universe()
    i = LeaderInputs.fresh("o", u)
    o = LeaderOutput.fresh("o")
    s = z3.Solver()
    s.add(*u.axioms(), *pin_inputs(i, inputs, u), leader_assignment(i, o, variant))
    if computed is not None:
        for mid, mc in u.member_consts.items():
            mine = computed.get(mid, frozenset())
            for p, pc in u.partition_consts.items():
                s.add(o.computed(mc, pc) == (p in mine))
    found: list[LeaderOutputValue] = []
    cells = [
        (mid, p, o.assigned(mc, pc))
        for mid, mc in u.member_consts.items()
        for p, pc in u.partition_consts.items()
    ]
    while len(found) < limit and s.check() == z3.sat:
        model = s.model()
        failed = z3.is_true(model.eval(o.failed, model_completion=True))
        on = {(mid, p) for mid, p, x in cells if z3.is_true(model.eval(x, model_completion=True))}
        value: LeaderOutputValue = None
        if not failed:
            value = {
                m.member_id: frozenset(p for mid, p in on if mid == m.member_id)
                for m in inputs.members
            }
        found.append(value)
        s.add(
            z3.Or(
                o.failed != failed,
                *[x != ((mid, p) in on) for mid, p, x in cells],
            )
        )
    return found


def owners_value(
    inputs: LeaderInputsValue, variant: str | None = None
) -> dict[str, frozenset[Partition]]:
    """The previous owners :func:`previous_owners` gives on ``inputs`` (a term of the
    inputs, so a ground evaluation)."""
    u = inputs.universe()
    i = LeaderInputs.fresh("w", u)
    s = z3.Solver()
    s.add(*u.axioms(), *pin_inputs(i, inputs, u))
    if s.check() != z3.sat:
        raise RuntimeError("the pinned inputs are unsatisfiable")
    model = s.model()
    prev = previous_owners(i, variant)
    return {
        m.member_id: frozenset(
            p
            for p, pc in u.partition_consts.items()
            if z3.is_true(model.eval(prev(u.member_consts[m.member_id], pc), True))
        )
        for m in inputs.members
    }
