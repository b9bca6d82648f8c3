"""Bounded model checking over the classic coordinator's symbolic relation, every path
lifted to a trace of the Python classic model.

:func:`search` unrolls ``classic_transition`` from the projection of the configuration's
initial state (``classic_state.project`` of ``system.initial``: a warm start's formed
group) for 1, 2, … ``depth`` coordinator steps — every family but ``Unchanged`` and the
heartbeat, which leave the group as it is — and asks for a path whose last step violates
a goal (``GOALS``: the properties of the catalogue that read only the classic
coordinator's state). The formulas are built quantifier-free on the configuration's finite
domains (``classic_transition.grounded``
; :func:`universe_of`: each client's member ids ``<client>.m<k>``, the topics' partitions,
the instance ids), and the requests are tied to the clients that can send them: a member
id ``X.m<k>`` is handed out only after ``X.m<k-1>`` (``coordinator._issue_member_id``),
and a request under it carries one of ``X``'s instance ids and subscriptions.

A symbolic path is a counterexample of the model only once lifted (the ``lifter``,
``groupcheck.explore.classic_lift.lift``): a
breadth-first search of the Python classic model (``system.enabled``/``system.step``
under the config's rules, clients and network; at most ``max_states`` nodes) for a trace
whose group projects, in order, onto the path's states — client steps that leave the group
as it is are free, any other change of the group must be the path's next state — and whose
last step is its first violation of a property under the checks the BFS engine runs. A
path that does not lift is blocked and the search goes on (at most ``attempts`` paths;
the depth loop is the engine's, ``invariants.z3.engine.search``); a
verdict never claims more than was lifted: ``violation`` with a lifted trace, ``ok`` when
no path of the relation up to ``depth`` violates the goal, ``inconclusive`` otherwise.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import z3

from invariants.classic_snapshot import STICKY_ASSIGNORS
from invariants.z3 import engine
from invariants.z3.engine import Lifted, Outcome, SymPath
from invariants.z3.proof.classic_state import (
    COMPLETING,
    PREPARING,
    STABLE,
    ClassicSym,
    ClassicValue,
    decode,
    pin,
    project,
    render,
)
from invariants.z3.proof.classic_transition import (
    ClassicOptions,
    domain,
    equals,
    every_member,
    every_partition,
    families,
    grounded,
    possible_families,
    some_member,
    some_partition,
    stated_assignor,
    view,
)
from invariants.z3.proof.state import MEMBER, Partition, Universe
from invariants.z3.proof.transition import Family
from model import system
from model.classic.messages import JoinGroupRequest, JoinGroupResponse, SyncGroupResponse
from model.classic.records import ClassicState
from model.config import Config
from model.records import OffsetCommitRequest
from model.rules import DEFAULT_RULES
from model.status import ErrorCode

Lifter = Callable[[SymPath[ClassicValue], Config, int], Lifted]
"""A lift (``groupcheck.explore.classic_lift.lift``): the model trace (None: none found),
the violations of its last step, the nodes visited and, when the search was exhausted,
how many of the path's states after the initial one a trace matched (None: the search
was cut by its bound)."""

BoolRef = Any

UNROLLED = (
    "DeliverMessage.join_group",
    "DeliverMessage.sync_group",
    "DeliverMessage.leave_group",
    "DeliverMessage.offset_commit",
    "SessionTimeout",
    "RebalanceTimeout",
    "MetadataChange",
    "ExpireOffsets",
    "DeleteGroup",
)
"""The families unrolled: those that can change the group."""

ID_SLOTS = 1
"""Member ids per client beyond those handed out in the initial state."""

DEFAULT_ATTEMPTS = 60
"""Symbolic paths tried (lifted, then blocked) before the search gives up."""

DEFAULT_LIFT_STATES = 50_000


# --------------------------------------------------------------------------- goals


def no_live_offset_expires(pre: ClassicSym, post: ClassicSym) -> BoolRef:
    """The negation of ``NoLiveOffsetExpires`` (``invariants.properties``) on a step: a
    committed offset is gone although a member of the group before subscribed to its
    topic (a committed offset's partition exists: the classic configurations delete no
    topic, and a partition not added yet has no offset)."""
    return some_partition(
        lambda q: z3.And(
            some_member(lambda m: pre.committed_by(m, q)),
            z3.Not(some_member(lambda m: post.committed_by(m, q))),
            some_member(lambda m: z3.And(pre.is_member(m), pre.subscribed(m, q))),
        )
    )


def static_instance_unique(pre: ClassicSym, post: ClassicSym) -> BoolRef:
    """The negation of ``StaticInstanceUnique`` on the state after a step: two members
    with the same instance id."""
    return some_member(
        lambda a: some_member(
            lambda b: z3.And(
                a != b,
                post.is_member(a),
                post.is_member(b),
                post.instance(a) != 0,
                post.instance(a) == post.instance(b),
            )
        )
    )


def no_double_member_assignment(pre: ClassicSym, post: ClassicSym) -> BoolRef:
    """The negation of ``NoDoubleMemberAssignment`` on the state after a step: a partition
    in the assignments of two members (a classic member holds its assignment: the
    coordinator tracks no revocation)."""
    return some_member(
        lambda a: some_member(
            lambda b: z3.And(
                a != b,
                some_partition(lambda q: z3.And(post.assigned(a, q), post.assigned(b, q))),
            )
        )
    )


def moves_only_released(pre: ClassicSym, post: ClassicSym) -> BoolRef:
    """The negation of ``MovesOnlyReleased`` on a step: a member is newly assigned a
    partition another member of the group still reports owning (``owned``, its JoinGroup's
    ``OwnedPartitions``)."""
    return some_member(
        lambda a: some_member(
            lambda b: z3.And(
                a != b,
                post.is_member(b),
                some_partition(
                    lambda q: z3.And(
                        post.assigned(a, q), z3.Not(pre.assigned(a, q)), post.owned(b, q)
                    )
                ),
            )
        )
    )


def sticky_assignment(pre: ClassicSym, post: ClassicSym) -> BoolRef:
    """The negation of ``StickyAssignment`` on a step, without its ``sticky_assignor()``
    condition on the protocols (the states keep none; :data:`GOAL_SCOPE` leaves out the
    configurations where no client lists a sticky assignor): a SyncGroup phase ends with
    a group whose members subscribe alike, a member is not given a partition only it
    reports owning and subscribes to, and it is under its share (its assignment has fewer
    than ⌊P/N⌋ partitions: P those it subscribes to, N the members) or is given a
    partition it does not report owning."""
    ms, ps = domain()

    def count(f: Callable[[Any], BoolRef]) -> Any:
        return z3.Sum(*[z3.If(f(q), 1, 0) for q in ps])

    equal = every_member(
        lambda a: every_member(
            lambda b: z3.Implies(
                z3.And(post.is_member(a), post.is_member(b)),
                every_partition(lambda q: post.subscribed(a, q) == post.subscribed(b, q)),
            )
        )
    )

    def under_share(m: Any) -> BoolRef:
        size = count(lambda q: post.assigned(m, q))
        total = count(lambda q: post.subscribed(m, q))
        return z3.Sum(*[z3.If(post.is_member(x), size + 1, 0) for x in ms]) <= total

    def loses(m: Any, q: Any) -> BoolRef:
        return z3.And(
            post.owned(m, q),
            every_member(lambda o: z3.Implies(post.owned(o, q), o == m)),
            post.subscribed(m, q),
            z3.Not(post.assigned(m, q)),
        )

    return z3.And(
        pre.status == COMPLETING,
        post.status == STABLE,
        equal,
        some_member(
            lambda m: z3.And(
                post.is_member(m),
                some_partition(lambda q: loses(m, q)),
                z3.Or(
                    under_share(m),
                    some_partition(lambda q: z3.And(post.assigned(m, q), z3.Not(post.owned(m, q)))),
                ),
            )
        ),
    )


GOALS: dict[str, Callable[[ClassicSym, ClassicSym], BoolRef]] = {
    "NoLiveOffsetExpires": no_live_offset_expires,
    "StaticInstanceUnique": static_instance_unique,
    "NoDoubleMemberAssignment": no_double_member_assignment,
    "MovesOnlyReleased": moves_only_released,
    "StickyAssignment": sticky_assignment,
}
"""The goals: property name → the negation of the property on a step."""

Successors = Callable[[Sequence[ClassicValue], Config, int], "tuple[ClassicValue, ...] | None"]
"""``classic_lift.next_states``: the group states a model step reaches from the model
states matching a prefix's last state (None: not known within the bound)."""

GOAL_VARIANTS = frozenset(
    {
        "sticky-without-generation",
        "highest-generation-claims-only",
        "sticky-forgets-ownership",
        "assign-without-withholding",
    }
)
"""The assignor variants whose rule breaks one goal, which ``explore --engine bmc --mutant``
searches alone: the property that kills the mutant (its catalogue entry's
``Mutant.killed_by``; docs/bugs.md)."""

VARIANT_UNREACHED: dict[str, str] = {}
"""The assignor variants no search has lifted a path of (docs/invariants.md, "The classic
coordinator"), with what is known of the depth they need; empty since every assignor
variant's path lifts. Without ``--depth`` such a variant is searched at depth 3, so the run
ends inconclusive, never ok."""

VARIANT_ATTEMPTS: dict[str, int] = {
    "sticky-without-generation": 400,
    "highest-generation-claims-only": 400,
}
"""``explore --engine bmc --mutant``'s attempts for an assignor variant whose search tries
more paths than ``DEFAULT_ATTEMPTS`` before one lifts, or did (sticky-without-generation:
191 before the pruning of :meth:`Unrolling.restrict`, 29 with it; highest-generation-
claims-only: 105; docs/invariants.md)."""

GOAL_SCOPE: dict[str, Callable[[Config], bool]] = {
    "StickyAssignment": lambda config: any(
        set(c.assignors) & STICKY_ASSIGNORS for c in config.clients
    ),
}
"""The goals a configuration may violate only under a condition the states do not keep:
elsewhere no path violates them (``StickyAssignment`` needs a sticky assignor selected,
which only a client listing one can bring)."""


# --------------------------------------------------------------------------- the domains


@dataclass(frozen=True)
class Received:
    """A SyncGroup answer a client received before the path starts (or has in flight):
    the member id it was answered to, the assignment and the generation it goes with; or
    (``request``) the claims of a JoinGroup, or the partitions of an OffsetCommit, the
    client has in flight then, with the generation they carry."""

    member: str
    assignment: frozenset[Partition]
    generation: int
    request: bool = False


@dataclass(frozen=True)
class Domains:
    """The configuration's finite domains and what each client can send: by member id,
    its client's instance numbers and subscribed partition sets."""

    universe: Universe
    previous_id: dict[str, str]
    """Member id → the id its client was handed before it (``X.m<k-1>``)."""
    instances: dict[str, frozenset[int]]
    subscriptions: dict[str, tuple[frozenset[Partition], ...]]
    growth: dict[str, tuple[frozenset[Partition], frozenset[Partition]]] = field(
        default_factory=dict
    )
    """With ``AddPartitions``: per topic, its partitions up to ``max_partitions_per_topic``
    and those of them it does not have initially (a ``MetadataChange`` adds one)."""
    joined_generation: bool = False
    """Every client claims at the generation it joined (``cooperative-sticky`` with
    KIP-792, ``client.join_group``), which a lost member id resets to -1; the eager
    ``sticky`` user data and a client before KIP-792 carry the generation of the last
    assignment received."""
    eager: bool = False
    """Every client runs the eager ``sticky`` assignor (``ClassicOptions.assignor``)."""
    deletes: bool = True
    """The configuration may delete the group (``DeleteGroup``, or an expiry with
    ``delete_expired_groups``): a client's generation may then exceed the group's."""
    linked: bool = False
    """A JoinGroup's claims are tied to the SyncGroup answers its client received
    (:func:`_claims_history`): the clients' ``join_group`` and ``on_sync_response`` and the
    coordinator's ``install_assignment`` are the reference rules."""
    received: dict[str, tuple[Received, ...]] = field(default_factory=dict)
    """Per member id, the SyncGroup answers its client holds or has in flight in the
    initial state (``ClassicClient.assigned`` and ``assigned_generation``, a
    ``SyncGroupResponse`` in the network) and the JoinGroups and OffsetCommits it has in
    flight then: the claims' history before the path."""
    siblings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per member id, every member id of the universe its client may hold
    (``X.m1``, ``X.m2`` …: the coordinator names a new id after the requesting client)."""
    resubscribes: bool = False
    """The configuration may change a client's subscription (``ChangeSubscription``)."""
    restarts: bool = True
    """A client may restart (``Restart``, ``Bounce``), which clears the assignment it
    received (``client.restart``)."""
    ids_kept: frozenset[str] = frozenset()
    """The member ids whose client holds a member id initially and forgets it only on an
    UNKNOWN_MEMBER_ID answer (no process restarts, crashes or leaves, no static member, one
    list of assignors: no fatal error), as :func:`_claims_history` reads them."""
    joined: dict[str, frozenset[int]] = field(default_factory=dict)
    """Per member id, the generations its client holds (``ClassicClient.generation_id``)
    or has in flight in a JoinGroup answer in the initial state: those it may claim
    without a join phase of the path (:func:`_claims_history`)."""
    late_answers: bool = False
    """A SyncGroup answer may reach a client after its generation was reset (the network
    reorders, or the group's generation may come back after a deletion): the assignment
    received then goes with generation -1."""


def universe_of(config: Config) -> Domains:
    """The member ids of the initial state and ``ID_SLOTS`` more per client, the topics'
    partitions (with ``AddPartitions`` up to ``Config.max_partitions_per_topic``: a
    subscription then names each topic's partitions at any count it may have), the
    clients' instance ids (and those ``ChangeInstanceId`` gives)."""
    state = system.initial(config)
    assert isinstance(state, ClassicState)
    init = project(state)
    topics = dict(config.topics)
    grows = config.max_perturbations > 0 and config.allows("AddPartitions")
    most = {t: max(n, config.max_partitions_per_topic) if grows else n for t, n in topics.items()}

    def parts(names: tuple[str, ...] | frozenset[str]) -> set[frozenset[Partition]]:
        named = sorted(t for t in names if t in topics)
        return {
            frozenset((t, i) for t, k in zip(named, counts, strict=True) for i in range(k))
            for counts in itertools.product(*[range(topics[t], most[t] + 1) for t in named])
        }

    changes = config.max_perturbations > 0 and config.allows("ChangeInstanceId")
    resubscribes = config.max_perturbations > 0 and config.allows("ChangeSubscription")
    iids = sorted(
        {c.instance_id for c in config.clients if c.instance_id}
        | {c.alt_instance_id for c in config.clients if c.alt_instance_id and changes}
    )
    number = {iid: i + 1 for i, iid in enumerate(iids)}
    members: list[str] = []
    previous: dict[str, str] = {}
    instances: dict[str, frozenset[int]] = {}
    subscriptions: dict[str, tuple[frozenset[Partition], ...]] = {}
    for c in config.clients:
        handed = sum(1 for mid in init.issued if mid.rsplit(".m", 1)[0] == c.name)
        own = {number[c.instance_id] if c.instance_id else 0}
        if changes and c.alt_instance_id:
            own.add(number[c.alt_instance_id])
        subs = parts(c.subscription)
        if resubscribes:
            for choice in config.subscription_choices:
                subs |= parts(tuple(choice))
        for k in range(1, handed + ID_SLOTS + 1):
            mid = f"{c.name}.m{k}"
            members.append(mid)
            if k > 1:
                previous[mid] = f"{c.name}.m{k - 1}"
            instances[mid] = frozenset(own)
            subscriptions[mid] = tuple(sorted(subs, key=sorted))
    partitions = [(t, i) for t, _ in config.topics for i in range(most[t])]
    growth = {
        t: (
            frozenset((t, i) for i in range(most[t])),
            frozenset((t, i) for i in range(n, most[t])),
        )
        for t, n in config.topics
        if grows and most[t] > n
    }
    deletes = config.max_perturbations > 0 and (
        config.allows("DeleteGroup")
        or (config.delete_expired_groups and config.allows("ExpireOffsets"))
    )
    siblings: dict[str, tuple[str, ...]] = {}
    received: dict[str, tuple[Received, ...]] = {}
    joined: dict[str, frozenset[int]] = {}
    for c in config.clients:
        ids = tuple(m for m in members if m.rsplit(".m", 1)[0] == c.name)
        client = state.client(c.name)
        held = {client.generation_id} | {
            msg.body.generation_id
            for msg in state.network
            if msg.client == c.name and isinstance(msg.body, JoinGroupResponse)
        }
        answers = [Received(client.member_id, client.assigned, client.assigned_generation)]
        for msg in state.network:
            body = msg.body
            if msg.client != c.name:
                continue
            if isinstance(body, SyncGroupResponse) and body.error_code is ErrorCode.NONE:
                answers.append(Received(client.member_id, body.assignment, client.generation_id))
            if isinstance(body, JoinGroupRequest):
                sub = body.subscription
                answers.append(
                    Received(body.member_id, sub.user_data, sub.generation_id, request=True)
                )
            if isinstance(body, OffsetCommitRequest):
                answers.append(Received(body.member_id, body.topics, -1, request=True))
        for mid in ids:
            siblings[mid] = ids
            received[mid] = tuple(answers)
            joined[mid] = frozenset(held)
    steady = (
        not (
            config.max_perturbations > 0
            and any(config.allows(a) for a in ("Crash", "Restart", "Leave", "Bounce"))
        )
        and len({(c.assignors, c.instance_id, c.alt_instance_id) for c in config.clients}) == 1
    )
    ids_kept = frozenset(
        mid
        for c in config.clients
        if steady
        and c.instance_id is None
        and state.client(c.name).member_id
        and not any(
            msg.client == c.name and getattr(msg.body, "error_code", None) is not ErrorCode.NONE
            for msg in state.network
            if not msg.to_coordinator
        )
        for mid in siblings.get(f"{c.name}.m1", ())
    )
    linked = all(
        getattr(config.rules, f) is getattr(DEFAULT_RULES, f)
        for f in ("classic_join_group", "classic_on_sync_response", "classic_install_assignment")
    )
    joined_generation = (
        stated_assignor(config) == "cooperative-sticky"
        and config.rules.classic_join_group is DEFAULT_RULES.classic_join_group
    )
    return Domains(
        Universe.of(members, partitions, iids),
        previous,
        instances,
        subscriptions,
        growth,
        joined_generation=joined_generation,
        eager=stated_assignor(config) == "sticky"
        and config.rules.classic_join_group is DEFAULT_RULES.classic_join_group,
        deletes=deletes,
        linked=linked,
        received=received,
        siblings=siblings,
        resubscribes=resubscribes,
        late_answers=config.reorder or deletes,
        ids_kept=ids_kept,
        joined=joined,
        restarts=config.max_perturbations > 0
        and (config.allows("Restart") or config.allows("Bounce")),
    )


def distinct(u: Universe) -> list[BoolRef]:
    """The universe's constants are pairwise distinct (the finite domains' axioms; that
    every element is one of them is what ``grounded`` builds on)."""
    out = []
    for consts in (u.member_consts, u.partition_consts):
        if len(consts) > 1:
            out.append(z3.Distinct(*consts.values()))
    return out


def _requests(fam: Family, pre: ClassicSym, d: Domains) -> list[BoolRef]:
    """What the configuration's clients can send (module docstring) and the ids the
    coordinator hands out, for one step of ``fam``."""
    p = fam.params
    mc, pc = d.universe.member_consts, d.universe.partition_consts
    out: list[BoolRef] = []

    def carries(who: Any, mid: str) -> BoolRef:
        instance = z3.Or(*[p["instance"] == n for n in sorted(d.instances[mid])])
        if "subscribed" not in p:
            return z3.Implies(who == mc[mid], instance)
        sub = z3.Or(
            *[
                z3.And(*[p["subscribed"](q) == (tp in s) for tp, q in pc.items()])
                for s in d.subscriptions[mid]
            ]
        )
        return z3.Implies(who == mc[mid], z3.And(instance, sub))

    if fam.name == "MetadataChange":
        # A partition the configuration may add, to its own topic.
        return [
            z3.Or(
                *[
                    z3.And(
                        z3.Or(*[p["added"] == pc[tp] for tp in sorted(new)]),
                        *[p["topic"](q) == (tp in whole) for tp, q in pc.items()],
                    )
                    for whole, new in d.growth.values()
                ]
            )
        ]
    if "instance" in p:
        requester = p["member"]
        if "unknown" in p:
            requester = z3.If(p["unknown"], p["new_id"], p["member"])
        out += [carries(requester, mid) for mid in mc]
    if "new_id" in p:
        out += [
            z3.Implies(p["new_id"] == mc[mid], pre.issued(mc[before]))
            for mid, before in d.previous_id.items()
        ]
    if "claim_gen" in p and not d.deletes:
        # A client's generation (and that of the last assignment it received) is one the
        # group had: without deletion the group's generation never goes back.
        out.append(p["claim_gen"] <= pre.generation)
    if "owned" in p:
        # A client's generation is -1 or one a JoinGroup response gave it, after the
        # join phase that ended generation 0 at least (coordinator.complete_join). It owns
        # partitions only from a SyncGroup answered at its generation, and gives them up
        # as lost when its generation is reset (client.join_group).
        out.append(p["claim_gen"] != 0)
        # A client that sends no member id, or a KIP-394 pending member's second
        # JoinGroup, had its member id reset (or never had one): it gave up what it owned
        # (client.join_group), and, claiming at its own generation, has none.
        # What it owns it was assigned, and the last assignment it received is what its
        # user data carries (client.on_sync_response, client.join_group).
        out += [z3.Implies(p["owned"](q), p["user_data"](q)) for q in pc.values()]
        fresh = z3.Or(p["unknown"], pre.pending(p["member"]))
        out.append(z3.Implies(fresh, z3.And(*[z3.Not(p["owned"](q)) for q in pc.values()])))
        if d.joined_generation:
            out.append(z3.Implies(fresh, p["claim_gen"] == -1))
        if d.eager:
            # EAGER revokes everything before it joins; the user data's assignment comes
            # with the generation it was received at.
            out += [z3.Not(p["owned"](q)) for q in pc.values()]
            some = z3.Or(*[p["user_data"](q) for q in pc.values()])
            if not d.late_answers:
                out.append(z3.Implies(some, p["claim_gen"] >= 1))
            # At the group's generation, the assignment received is the one installed for
            # the member then: the SyncGroup phase of that generation ended, and a member's
            # assignment changes only in a later one.
            x = p["member"]
            current = z3.And(
                z3.Not(p["unknown"]), pre.is_member(x), some, p["claim_gen"] == pre.generation
            )
            out.append(
                z3.Implies(
                    current,
                    z3.And(
                        z3.Or(pre.status == STABLE, pre.status == PREPARING),
                        *[p["user_data"](q) == pre.assigned(x, q) for q in pc.values()],
                    ),
                )
            )
    if "subscribed" in p and "unknown" in p:
        # A topic has the same partitions for every subscriber: those that exist.
        for t in sorted({tp[0] for tp in pc}):
            qs = [q for tp, q in pc.items() if tp[0] == t]
            names = z3.Or(*[p["subscribed"](q) for q in qs])
            for m in mc.values():
                member_names = z3.And(pre.is_member(m), z3.Or(*[pre.subscribed(m, q) for q in qs]))
                same = z3.And(*[p["subscribed"](q) == pre.subscribed(m, q) for q in qs])
                out.append(z3.Implies(z3.And(names, member_names), same))
            if "owned" in p:
                # A claimed partition of a topic it names exists (no topic is deleted).
                out += [
                    z3.Implies(
                        z3.And(names, z3.Or(p["owned"](q), p["user_data"](q))), p["subscribed"](q)
                    )
                    for q in qs
                ]
        out.append(
            z3.Implies(p["claim_gen"] == -1, z3.And(*[z3.Not(p["owned"](q)) for q in pc.values()]))
        )
    return out


def _claims_history(fam: Family, history: Sequence[ClassicSym], d: Domains) -> list[BoolRef]:
    """A JoinGroup's claims are those of a SyncGroup answer its client received, on the
    path so far (``history``: the states up to the step's, the first the initial one)
    or before it (``Domains.received``). The classic client sends the last assignment it
    received as the sticky user data, the owned partitions it still consumes and a
    generation (``client.join_group``; ``ConsumerCoordinator.onJoinPrepare``,
    ``ConsumerProtocolSubscription``), and it receives an assignment only in a SyncGroup
    answer (``client.on_sync_response``), which the coordinator gives from a STABLE group:
    the assignment installed for the member the SyncGroup names (``coordinator.
    handle_sync_group``, ``install_assignment``), at the group's generation (a SyncGroup at
    another one is refused ILLEGAL_GENERATION). That group is a state of the path: a model
    trace goes through the path's states, the client steps between them leave the group
    as it is. The member is one of the client's ids (the coordinator names a new id after
    the requesting client, ``coordinator._issue_member_id``), not necessarily the one the
    JoinGroup carries: a client whose member id was reset keeps its user data
    (KAFKA-7026). So, sound for every rule the relation states:

    * the user data is the assignment of one of the client's member ids in a STABLE state
      of the history, one received before the path, or empty after a restart
      (``client.restart``, the only rule that clears it: ``Domains.restarts``);
    * eager ``sticky``: its generation (``assigned_generation``) is that state's (or -1
      with ``Domains.late_answers``: an answer read after a reset takes the reset
      generation), -1 after a restart;
    * ``cooperative-sticky`` with KIP-792: the owned partitions are the assignment
      received, or nothing (a reset or a crash gives them up as lost) — all of it without
      ``ChangeSubscription`` (``onJoinPrepare`` revokes only the topics no longer
      subscribed, and an answer naming another topic is not taken); partitions owned were
      answered to the member id the JoinGroup carries (a new id comes only after a reset,
      which gives them up) at a generation no later than the claimed one (the member's
      generation only grows until a reset, unless the group can be deleted); a member
      that owns nothing of a non-empty assignment received, without ``ChangeSubscription``,
      gave it up in a reset after that answer, so a generation it claims other than -1 is
      one a later join phase gave it: newer than the answer's (unless the group can be
      deleted); a generation it claims other than -1 is one a JoinGroup answer gave it
      (``client.on_join_response``, the only rule that sets ``generation_id`` other than
      to -1): the coordinator answers a JoinGroup with the group's generation only for a
      member of the group in COMPLETING_REBALANCE or STABLE (``join_response``, from
      ``maybe_complete_join``, a static member's replacement and an unchanged rejoin), a
      state of the history (the answer reaches the client before it sends the JoinGroup,
      so it was given in a step before), for one of the client's ids; or one it held or
      had in flight in the initial state (``Domains.joined``);
    * a client that holds a member id initially and can lose it only to an
      UNKNOWN_MEMBER_ID answer (``Domains.ids_kept``) sends a JoinGroup without one only
      after a state of the history in which one of its ids was handed out and was no
      member (the coordinator answers UNKNOWN_MEMBER_ID only to an id that is no member).

    Nothing unless ``Domains.linked``."""
    if not d.linked:
        return []
    p = fam.params
    mc, pc = d.universe.member_consts, d.universe.partition_consts
    qs = list(pc.values())
    if fam.name == "DeliverMessage.offset_commit":
        return _commits_history(fam, history, d)
    if fam.name != "DeliverMessage.join_group":
        return []
    data, owned, gen = p["user_data"], p["owned"], p["claim_gen"]

    def data_is(assignment: frozenset[Partition]) -> BoolRef:
        return z3.And(*[data(q) == (tp in assignment) for tp, q in pc.items()])

    answered = {
        (j, mid): z3.And(
            s.status == STABLE, s.is_member(x), *[data(q) == s.assigned(x, q) for q in qs]
        )
        for j, s in enumerate(history)
        for mid, x in mc.items()
    }
    nothing = z3.And(*[z3.Not(data(q)) for q in qs])
    some_owned = z3.Or(*[owned(q) for q in qs])
    requester = z3.If(p["unknown"], p["new_id"], p["member"])
    out: list[BoolRef] = []
    for mid, me in mc.items():
        # (the answer is the user data, its generation, the member id answered)
        answers: list[tuple[BoolRef, Any, str]] = [
            (answered[j, sib], s.generation, sib)
            for sib in d.siblings[mid]
            for j, s in enumerate(history)
        ]
        answers += [
            (data_is(r.assignment), z3.IntVal(r.generation), r.member) for r in d.received[mid]
        ]
        if d.eager:

            def at(g: Any) -> BoolRef:
                return z3.Or(gen == g, gen == -1) if d.late_answers else gen == g

            options = [z3.And(a, at(g)) for a, g, _ in answers]
            if d.restarts:
                options.append(z3.And(nothing, gen == -1))
        else:
            options = [a for a, _, _ in answers]
            if d.restarts:
                options.append(nothing)
        parts = [z3.Or(*options)]
        if d.joined_generation:
            if not d.resubscribes:
                parts.append(z3.Implies(some_owned, z3.And(*[owned(q) == data(q) for q in qs])))
            if not d.resubscribes and not d.deletes:
                lost = z3.And(z3.Not(some_owned), z3.Not(nothing), gen != -1)
                # (a JoinGroup in flight initially carries its own claimed generation)
                later = [z3.And(a, g < gen) for a, g, _ in answers]
                later += [
                    data_is(r.assignment)
                    for r in d.received[mid]
                    if r.request and r.generation >= 0
                ]
                parts.append(z3.Implies(lost, z3.Or(*later)))
            mine = [
                z3.And(a, z3.BoolVal(True) if d.deletes else g <= gen)
                for a, g, m in answers
                if m == mid
            ]
            parts.append(z3.Implies(some_owned, z3.Or(*mine)))
            if mid in d.joined:
                # The generation claimed is one a JoinGroup answer gave the client.
                phases = [
                    z3.And(
                        z3.Or(s.status == COMPLETING, s.status == STABLE),
                        s.generation == gen,
                        s.is_member(mc[x]),
                    )
                    for s in history
                    for x in d.siblings[mid]
                ]
                held = [gen == g for g in sorted(d.joined[mid])]
                parts.append(z3.Or(gen == -1, *held, *phases))
        if mid in d.ids_kept:
            # A JoinGroup without a member id from a client that held one: the client
            # was answered UNKNOWN_MEMBER_ID (client._reset) for an id of its own the
            # group had handed out and no longer had as a member.
            parts.append(
                z3.Implies(
                    p["unknown"],
                    z3.Or(
                        *[
                            z3.And(s.issued(mc[x]), z3.Not(s.is_member(mc[x])))
                            for s in history
                            for x in d.siblings[mid]
                        ]
                    ),
                )
            )
        out.append(z3.Implies(requester == me, z3.And(*parts)))
    return out


def _commits_history(fam: Family, history: Sequence[ClassicSym], d: Domains) -> list[BoolRef]:
    """An OffsetCommit's partitions are some the client consumes (``client.auto_commit``,
    the revocations of ``client.join_group`` and ``on_sync_response``, ``client.leave``:
    all within ``ClassicClient.owned``), which are within the last assignment it received
    (``owned`` is set to it, then only shrinks or is cleared; a restart clears both): within
    the assignment of one of the client's member ids in a STABLE state of the history, or
    one received before the path (or a commit in flight initially) — as
    :func:`_claims_history` reads the answers."""
    p = fam.params
    mc, pc = d.universe.member_consts, d.universe.partition_consts
    qs = list(pc.values())
    parts = p["partitions"]
    out: list[BoolRef] = []
    for mid, me in mc.items():
        options = [
            z3.And(
                s.status == STABLE,
                s.is_member(mc[sib]),
                *[z3.Implies(parts(q), s.assigned(mc[sib], q)) for q in qs],
            )
            for sib in d.siblings[mid]
            for s in history
        ]
        options += [
            z3.And(*[z3.Not(parts(q)) for tp, q in pc.items() if tp not in r.assignment])
            for r in d.received[mid]
        ]
        out.append(z3.Implies(p["member"] == me, z3.Or(*options)))
    return out


def _hints(fam: Family, pre: ClassicSym, options: ClassicOptions) -> list[BoolRef]:
    """What a JoinGroup's claims most often are, tried first (``HintedSolver``): a member
    of the group reports its assignment at the group's generation (as owned partitions
    unless the assignor is the eager ``sticky``, which revokes everything and keeps the
    assignment in its user data), a new member nothing. A guide to the solver only: the
    search drops a hint the goal cannot be reached with."""
    if fam.name != "DeliverMessage.join_group":
        return []
    p = fam.params
    x = p["member"]
    known = z3.And(z3.Not(p["unknown"]), pre.is_member(x))
    eager = options.assignor == "sticky"

    def claims(q: Any, name: str, as_assigned: bool) -> BoolRef:
        return p[name](q) == z3.And(known, pre.assigned(x, q) if as_assigned else False)

    return [
        every_partition(lambda q: claims(q, "owned", not eager)),
        every_partition(lambda q: claims(q, "user_data", True)),
        p["claim_gen"] == z3.If(known, pre.generation, -1),
    ]


class HintedSolver:
    """A solver that answers ``check`` under as many of its ``hints`` (guarded
    constraints, each by its own literal) as keep the query satisfiable — it drops the
    hints of an unsat core until the query is sat, or all of them — so that the first
    paths found are the likely ones; unsat only when the query is unsat without hints."""

    def __init__(self) -> None:
        self.solver = z3.Solver()
        self.hints: list[BoolRef] = []

    def add(self, *constraints: BoolRef) -> None:
        self.solver.add(*constraints)

    def push(self) -> None:
        self.solver.push()

    def pop(self) -> None:
        self.solver.pop()

    def model(self) -> Any:
        return self.solver.model()

    def hint(self, constraint: BoolRef) -> None:
        literal = z3.Bool(f"hint{len(self.hints)}")
        self.solver.add(z3.Implies(literal, constraint))
        self.hints.append(literal)

    def check(self, *assumptions: BoolRef) -> Any:
        active = list(self.hints)
        while active:
            verdict = self.solver.check(*assumptions, *active)
            if verdict != z3.unsat:
                return verdict
            core = {c.get_id() for c in self.solver.unsat_core()}
            kept = [h for h in active if h.get_id() not in core]
            if len(kept) == len(active):
                break
            active = kept
        return self.solver.check(*assumptions)


# --------------------------------------------------------------------------- paths


class Unrolling(engine.Unroller[ClassicSym]):
    """The relation unrolled from the initial state on the configuration's domains (the
    engine's unroller, ``invariants.z3.engine.Unroller``)."""

    def __init__(self, config: Config, options: ClassicOptions, domains: Domains) -> None:
        self.config = config
        self.options = options
        self.domains = domains
        u = domains.universe
        self.members = tuple(u.member_consts.values())
        self.partitions = tuple(u.partition_consts.values())
        self.learned: list[BoolRef] = []
        """Blocks of prefixes shorter than the path they were found on (:meth:`block`),
        asserted for every depth by the next :meth:`extend`."""
        self.start(HintedSolver())

    def fresh(self, k: int) -> ClassicSym:
        return ClassicSym.fresh(f"s{k}")

    def initial(self, s0: ClassicSym) -> None:
        """The projection of the configuration's initial state (``system.initial``), its
        leader one of the universe's member ids."""
        u = self.domains.universe
        self.solver.add(*distinct(u), self.within(s0.leader))
        init = project(system.initial(self.config))  # type: ignore[arg-type]
        self.solver.add(*pin(s0, init, u))

    def within(self, x: Any) -> BoolRef:
        """The member term ``x`` is one of the universe's member ids."""
        return z3.Or(*[x == c for c in self.members])

    def extend(self) -> None:
        """One more step (first asserting, for every depth, the prefixes blocked so far:
        :meth:`block`)."""
        self.solver.add(*self.learned)
        self.learned.clear()
        super().extend()

    def transition(self, pre: ClassicSym, post: ClassicSym, k: int) -> list[tuple[Any, ...]]:
        """Only the families the configuration can take (a LeaveGroup after Leave or
        Bounce, the timers once a process can be gone or a request lost: what
        ``classic_transition.possible_families`` reads off its switches), a MetadataChange
        only where it adds partitions; each tied to the requests the clients can send and
        to the claims' history, with its hints (:class:`HintedSolver`); a step that changes
        the group."""
        chosen: list[tuple[Any, ...]] = []
        can = possible_families(self.config)
        names = [n for n in UNROLLED if n in can and (n != "MetadataChange" or self.domains.growth)]
        with grounded(self.members, self.partitions):
            fams = families(pre, post, self.options, names)
        for fam in fams:
            sel = z3.Bool(f"step{k}.{fam.name}")
            parts = [fam.formula, *_requests(fam, pre, self.domains)]
            parts += _claims_history(fam, self.states[:-1], self.domains)
            parts += [
                self.within(x) for x in fam.params.values() if z3.is_const(x) and x.sort() == MEMBER
            ]
            self.solver.add(z3.Implies(sel, z3.And(*parts)))
            with grounded(self.members, self.partitions):
                for hint in _hints(fam, pre, self.options):
                    self.solver.hint(z3.Implies(sel, hint))
            chosen.append((sel, fam))
        self.solver.add(self.within(post.leader))
        self.one_of(chosen)
        # Every step changes the group: a path with a step that leaves it as it is has a
        # shorter one without it, which reaches the same states and steps.
        with grounded(self.members, self.partitions):
            self.solver.add(z3.Not(equals(post, view(pre))))
        return chosen

    def goal(self, name: str) -> BoolRef:
        scope = GOAL_SCOPE.get(name)
        if scope is not None and not scope(self.config):
            return z3.BoolVal(False)
        with grounded(self.members, self.partitions):
            return GOALS[name](self.states[-2], self.states[-1])

    def path(self, model: Any, goal: str) -> SymPath[ClassicValue]:
        u = self.domains.universe
        names = {
            str(model.eval(c, model_completion=True)): mid for mid, c in u.member_consts.items()
        }
        states = tuple(decode(model, s, u) for s in self.states)
        steps: list[tuple[str, dict[str, str]]] = []
        for _, fam in self.chosen_in(model):
            shown: dict[str, str] = {}
            for k, x in fam.params.items():
                if not z3.is_const(x):
                    continue
                v = model.eval(x, model_completion=True)
                shown[k] = names.get(str(v), str(v)) if x.sort() == MEMBER else str(v)
            steps.append((fam.name, shown))
        return SymPath(goal, states, tuple(steps))

    def restrict(
        self, path: SymPath[ClassicValue], matched: int, moves: tuple[ClassicValue, ...]
    ) -> None:
        """Through the first ``matched`` states after the initial one of ``path``, the next
        state is one of ``moves``: every group state a model step takes the group to from a
        model state matching the ``matched``-th (``classic_lift.next_states``, a search
        that was exhausted). Sound at every depth: a path through that prefix lifts only
        through a model trace matching it without a violation on the way, and its next
        state is the group's after a step of such a trace (a step that leaves the group as
        it is is no step of the unrolling). Asserted for every depth from the next
        :meth:`extend` on."""
        u = self.domains.universe
        if len(self.states) <= matched + 1:
            return
        same = [
            z3.And(*pin(s, v, u))
            for s, v in zip(self.states[1 : matched + 1], path.states[1 : matched + 1], strict=True)
        ]
        nxt = self.states[matched + 1]
        rule = z3.Implies(z3.And(*same), z3.Or(*[z3.And(*pin(nxt, v, u)) for v in moves]))
        self.solver.add(rule)
        self.learned.append(rule)

    def block(self, path: SymPath[ClassicValue], length: int) -> None:
        """No other path through the first ``length`` states after the initial one of
        ``path``.

        The engine (``invariants.z3.engine.search``) blocks a prefix shorter than the path
        (``length`` below its steps) only when the lift was exhausted and reached no model
        state matching the path's state ``length`` (``lift_exact``: the model states reached
        through the prefix without a violation on the way, the states a longer path's lift
        would go through too). Such a block is sound at every depth: a longer path through
        that prefix needs a model trace matching it without a violation before its last
        step, and none exists. The next :meth:`extend` asserts it outside the depth's scope,
        so the deeper searches do not try the prefix again."""
        u = self.domains.universe
        same = [
            z3.And(*pin(s, v, u))
            for s, v in zip(self.states[1 : length + 1], path.states[1 : length + 1], strict=True)
        ]
        self.solver.add(z3.Not(z3.And(*same)))
        if length < len(self.states) - 1:
            self.learned.append(z3.Not(z3.And(*same)))


def search(
    goal: str,
    depth: int,
    config: Config,
    options: ClassicOptions,
    *,
    lifter: Lifter,
    attempts: int = DEFAULT_ATTEMPTS,
    lift_states: int = DEFAULT_LIFT_STATES,
    successors: Successors | None = None,
) -> Outcome:
    """Search for a path of at most ``depth`` coordinator steps violating ``goal`` and lift
    it with ``lifter`` (module docstring); the shortest first. With ``successors``
    (``classic_lift.next_states``), a lift exhausted short of the path's end also rules
    out every state after the prefix it matched that no model step reaches
    (:meth:`Unrolling.restrict`)."""
    unroll = Unrolling(config, options, universe_of(config))

    def lifting(path: Any, config: Config, max_states: int) -> Lifted:
        out = lifter(path, config, max_states)
        matched = out[3]
        if successors is not None and matched is not None and 0 <= matched < len(path.steps):
            moves = successors(path.states[: matched + 1], config, max_states)
            if moves is not None:
                unroll.restrict(path, matched, moves)
        return out

    return engine.search(
        unroll,
        [goal],
        depth,
        config=config,
        lift=lifting,
        attempts=attempts,
        lift_states=lift_states,
        scoped=True,
    )[goal]


def render_path(path: SymPath[ClassicValue]) -> list[str]:
    """Lines describing a symbolic path: the initial state, then each step and its state."""
    return engine.render_path(path, render)
