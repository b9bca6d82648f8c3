"""Bounded model checking over a mixed group's symbolic relation
(``invariants.z3.proof.mixed_transition``), every path lifted to a trace of the Python
migration model, and the relation's agreement with that model on concrete steps.

:func:`search` unrolls the relation from the projection of the configuration's initial
state (``mixed_state.project`` of ``system.initial``) for 1, 2, … ``depth`` coordinator
steps — every family but ``Unchanged`` — and asks for a path whose last state violates a
goal (``GOALS``: the properties of the catalogue that read the mixed coordinator's
state, or what the relation keeps of them). The requests are tied to the clients that
can send them: a consumer-protocol join carries a consumer-protocol client's member id,
one of its instance ids and the server assignor it asks for (or none); a classic
JoinGroup a classic client's member id and instance id; a classic client's id ``X.m<k>``
is handed out only after ``X.m<k-1>`` and sent only once handed out; a classic group's
members are classic clients' ids; a member subscribes to its client's topics; a step
hands out at most one id; a classic client has at most one member per incarnation in the
group; a consumer-protocol member id that sent its client's alternative instance id sends
it again (``client.change_instance_id`` only moves to it).

A symbolic path is a counterexample of the model only once lifted (the ``lifter``,
``groupcheck.explore.mixed_lift.lift``): a breadth-first search of the Python model for a
trace whose states project, in order, onto the path's states and whose last step is its
first violation of a property under the checks the BFS engine runs. A path that does not
lift is blocked and the search goes on (at most ``attempts`` paths; the depth loop is the
engine's, ``invariants.z3.engine.search``); the verdict is
``violation`` only with a lifted trace, ``ok`` when no path of the relation up to
``depth`` violates the goal, ``inconclusive`` otherwise.

The relation's agreement with the model on concrete steps is
``invariants.z3.proof.mixed_agreement``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import z3

from invariants.z3 import engine
from invariants.z3.engine import Lifted, Outcome
from invariants.z3.proof.lifted_search import search_lifted
from invariants.z3.proof.mixed_state import (
    ID_SLOTS,
    MixedDomains,
    MixedSym,
    MixedTerm,
    MixedValue,
    decode,
    domains_of,
    pin,
    project,
    render,
)
from invariants.z3.proof.mixed_transition import (
    FAMILY_NAMES,
    MixedOptions,
    any_member,
    families,
    preferred,
)
from invariants.z3.proof.transition import Family
from model import system
from model.config import Config

SymPath = engine.SymPath[MixedValue]
"""A symbolic path of a mixed group: the engine's (``invariants.z3.engine``), of mixed
group states."""

Lifter = Callable[[SymPath, Config, int], Lifted]
"""A lift (``groupcheck.explore.mixed_lift.lift``): the model trace (None: none found),
the violations of its last step, the nodes visited and, when the search was exhausted,
how many of the path's states after the initial one a trace matched (None: the search
was cut by its bound)."""

BoolRef = Any

UNROLLED = tuple(name for name in FAMILY_NAMES if name != "Unchanged")
"""The families unrolled: those that can change the group."""

DEFAULT_ATTEMPTS = 40
DEFAULT_LIFT_STATES = 50_000


# --------------------------------------------------------------------------- goals


def migration_policy_breached(post: MixedTerm, d: MixedDomains, o: MixedOptions) -> BoolRef:
    """The negation of ``MigrationPolicyHonoured``: the group's ghost
    ``Group.migration_policy_breached`` is set."""
    return post.breached


def assignor_outdated(post: MixedTerm, d: MixedDomains, o: MixedOptions) -> BoolRef:
    """The negation of ``TargetByPreferredAssignor`` (``snapshot.assignor_outdated``): a
    consumer group with members whose current target (assignment epoch = group epoch) was
    computed by a server assignor other than the members' preferred one (the target's own
    assignor when none asks for one)."""
    return z3.And(
        post.consumer,
        post.target_assignor != 0,
        any_member(post),
        post.group_epoch == post.assignment_epoch,
        preferred(post, d, post.target_assignor) != post.target_assignor,
    )


def stable_assignment_unsubscribed(post: MixedTerm, d: MixedDomains, o: MixedOptions) -> BoolRef:
    """The negation of ``StableAssignmentSubscribed``: a STABLE classic group with a member
    assigned a partition of a topic it does not subscribe to. Asked only of a state a
    consumer group's step made (a downgrade, ``GOALS``): the classic group's own steps are
    not followed here (``ClassicGroup``)."""
    return z3.And(
        z3.Not(post.consumer),
        post.stable,
        z3.Or(
            *[
                z3.And(post.is_member[m], post.target[m][x], z3.Not(post.topic[m][t]))
                for m in post.is_member
                for x, t in d.partitions.items()
            ]
        ),
    )


def static_index_inconsistent(post: MixedTerm, d: MixedDomains, o: MixedOptions) -> BoolRef:
    """The negation of ``StaticIndexConsistent``: a consumer group whose static-member
    index (``index``) leaves a static member out of its own instance id's entry, or has an
    entry naming a member id that is no member or holds another instance id."""
    ids = {m: k + 1 for k, m in enumerate(d.members)}
    unindexed = [
        z3.And(
            post.is_member[m],
            post.instance[m] != 0,
            z3.Or(*[z3.And(post.instance[m] == i, v != ids[m]) for i, v in post.index.items()]),
        )
        for m in d.members
    ]
    stale = [
        z3.And(v == ids[m], z3.Or(z3.Not(post.is_member[m]), post.instance[m] != i))
        for i, v in post.index.items()
        for m in d.members
    ]
    return z3.And(post.consumer, z3.Or(*unindexed, *stale))


def replaced_by_another_instance(
    pre: MixedTerm, post: MixedTerm, d: MixedDomains, o: MixedOptions
) -> BoolRef:
    """What the relation keeps of the negation of ``HandOutOnlyReleased`` at a static
    replacement: a step of a consumer group that stays one adds a member and removes
    another (only a replacement does both: the joining member takes over the removed
    one's assignment) whose instance id is none or not the joining member's after the
    step — the one case the property does not exempt. Whether the removed member held
    partitions the joining one is then assigned is the lift's to find: the relation
    keeps no member's own assignment, nor does it read the property elsewhere (the
    reconciliation)."""
    members = list(post.is_member)
    return z3.And(
        pre.consumer,
        post.consumer,
        z3.Or(
            *[
                z3.And(
                    pre.is_member[m],
                    z3.Not(post.is_member[m]),
                    post.is_member[x],
                    z3.Not(pre.is_member[x]),
                    z3.Or(pre.instance[m] == 0, post.instance[x] != pre.instance[m]),
                )
                for m in members
                for x in members
                if m != x
            ]
        ),
    )


def _state_goal(
    f: Callable[[MixedTerm, MixedDomains, MixedOptions], BoolRef],
) -> Callable[[MixedTerm, MixedTerm, MixedDomains, MixedOptions], BoolRef]:
    return lambda pre, post, d, o: f(post, d, o)


def _after_consumer_group(
    f: Callable[[MixedTerm, MixedDomains, MixedOptions], BoolRef],
) -> Callable[[MixedTerm, MixedTerm, MixedDomains, MixedOptions], BoolRef]:
    """``f`` asked only of a state a step from a non-empty consumer group made (not a
    ``ClassicGroup`` step, whose rules the relation does not follow)."""
    return lambda pre, post, d, o: z3.And(pre.consumer, any_member(pre), f(post, d, o))


GOALS: dict[str, Callable[[MixedTerm, MixedTerm, MixedDomains, MixedOptions], BoolRef]] = {
    "MigrationPolicyHonoured": _state_goal(migration_policy_breached),
    "TargetByPreferredAssignor": _state_goal(assignor_outdated),
    "StableAssignmentSubscribed": _after_consumer_group(stable_assignment_unsubscribed),
    "HandOutOnlyReleased": replaced_by_another_instance,
    "StaticIndexConsistent": _state_goal(static_index_inconsistent),
}
"""The goals: property name → its negation (or what the relation keeps of it) on the last
step of a path (the state before, the state after)."""


# --------------------------------------------------------------------------- paths


def _requests(fam: Family, pre: MixedSym, d: MixedDomains, step: int | None) -> list[BoolRef]:
    """What the configuration's clients can send (module docstring) in one step of
    ``fam``, the ``step``-th; and the classic generation a conversion starts from, at most
    ``2 * step``: the initial group is at generation 0, and a step raises the larger of the
    classic generation and the group epoch by at most two (a conversion's bump for a
    replaced static member and its join's; a downgrade's generation is the group epoch,
    and its rebalance may complete a join phase). ``step`` None: a step at any depth (no
    bound on the generation)."""
    p = fam.params
    ids = {m: i for i, m in enumerate(d.members)}
    out: list[BoolRef] = []

    def one_of(x: Any, values: frozenset[int]) -> BoolRef:
        return z3.Or(*[x == v for v in sorted(values)])

    if fam.name == "DeliverMessage.consumer_join" and step is not None:
        out.append(p["generation"] <= 2 * step)
    if fam.name == "DeliverMessage.consumer_join":
        for m in d.members:
            if m in d.classic_ids:
                out.append(p["member"] != ids[m])
                continue
            out.append(
                z3.Implies(
                    p["member"] == ids[m],
                    z3.And(
                        one_of(p["instance"], d.instances_of[m]),
                        # A full heartbeat (a join) names the client's assignor; another
                        # names it or nothing (``client.heartbeat_request``).
                        z3.If(
                            p["join"],
                            one_of(p["assignor"], d.assignors_of[m]),
                            one_of(p["assignor"], d.assignors_of[m] | {0}),
                        ),
                    ),
                )
            )
    if fam.name in ("DeliverMessage.consumer_join", "DeliverMessage.classic_join"):
        # A request carries its client's subscription; a consumer-protocol heartbeat that
        # is not a join may carry none (the member keeps its own).
        x = p["member"]
        keeps: BoolRef = z3.BoolVal(False)
        if fam.name == "DeliverMessage.classic_join":
            x = z3.If(p["unknown"], p["new_id"], p["member"])
        else:
            keeps = z3.And(z3.Not(p["join"]), z3.Not(p["subscription_changed"]))
        for m in d.members:
            own = z3.And(*[p[f"topics.{t}"] == (t in d.topics_of[m]) for t in d.topics])
            out.append(z3.Implies(x == ids[m], z3.Or(own, keeps)))
    if fam.name == "DeliverMessage.classic_join":
        x = z3.If(p["unknown"], p["new_id"], p["member"])
        for m in d.members:
            if m not in d.classic_ids:
                out += [p["member"] != ids[m], p["new_id"] != ids[m]]
                continue
            out.append(z3.Implies(x == ids[m], one_of(p["instance"], d.instances_of[m])))
        for m, before in d.previous_id.items():
            out.append(z3.Implies(p["new_id"] == ids[m], pre.issued[before]))
        # A classic client sends only a member id it was handed.
        for m in (m for m in d.members if m in d.classic_ids):
            out.append(
                z3.Implies(z3.And(z3.Not(p["unknown"]), p["member"] == ids[m]), pre.issued[m])
            )
    return out


def _classic_members(
    pre: MixedSym, post: MixedSym, d: MixedDomains, config: Config
) -> list[BoolRef]:
    """A classic group's members are classic clients' ids, with their instance ids; an id
    is handed out only after the one before it; a member subscribes to its client's
    topics (a client's subscription does not change: a request carries it, a static
    replacement's copy takes the joining client's at once); a step hands out at most one
    member id; a classic client has at most one member per incarnation in the group."""
    out: list[BoolRef] = [
        z3.Sum(*[z3.If(z3.And(post.issued[m], z3.Not(pre.issued[m])), 1, 0) for m in d.members])
        <= 1
    ]
    for client in sorted({d.client_of[m] for m in d.classic_ids}):
        ids = [m for m in d.members if m in d.classic_ids and d.client_of[m] == client]
        out.append(
            z3.Sum(*[z3.If(post.is_member[m], 1, 0) for m in ids]) <= config.max_restarts + 1
        )
    for m in d.members:
        for t in d.topics:
            own = z3.BoolVal(t in d.topics_of[m])
            out.append(z3.Implies(post.is_member[m], post.topic[m][t] == own))
        if m not in d.classic_ids:
            out.append(z3.Implies(z3.Not(post.consumer), z3.Not(post.is_member[m])))
            out.append(z3.Not(post.issued[m]))
        else:
            inst = z3.Or(*[post.instance[m] == v for v in sorted(d.instances_of[m])])
            out.append(z3.Implies(post.is_member[m], inst))
    for m, before in d.previous_id.items():
        out.append(z3.Implies(post.issued[m], post.issued[before]))
    return out


class Unrolling(engine.Unroller[MixedSym]):
    """The relation unrolled from the initial state on the configuration's domains (the
    engine's unroller, ``invariants.z3.engine.Unroller``)."""

    def __init__(self, config: Config, options: MixedOptions, depth: int = 0) -> None:
        self.config = config
        self.options = options
        # A step hands out at most one member id: ``depth`` ids per classic client are
        # every id a path of that depth can name.
        self.domains = domains_of(config, max(ID_SLOTS, depth))
        self.start(z3.Solver())
        # A consumer-protocol process changes its instance id only to its alternative one
        # (``client.change_instance_id``): once a member id sent that, it sends it again.
        d = self.domains
        alt = {c.name: c.alt_instance_id for c in config.clients if c.alt_instance_id}
        self.alt = {
            m: d.instances[alt[d.client_of[m]]]
            for m in d.members
            if m not in d.classic_ids
            and d.client_of[m] in alt
            and alt[d.client_of[m]] in d.instances
        }
        self.renamed: dict[str, BoolRef] = {m: z3.BoolVal(False) for m in self.alt}

    def fresh(self, k: int) -> MixedSym:
        return MixedSym.fresh(f"s{k}", self.domains)

    def initial(self, s0: MixedSym) -> None:
        """The projection of the configuration's initial state."""
        init = project(system.initial(self.config))  # type: ignore[arg-type]
        self.solver.add(*pin(s0, init, self.domains))

    def transition(self, pre: MixedSym, post: MixedSym, k: int) -> list[tuple[Any, ...]]:
        """Every family but ``Unchanged`` (``UNROLLED``), each tied to the requests the
        clients can send; the classic group's members (:func:`_classic_members`)."""
        d = self.domains
        chosen: list[tuple[Any, ...]] = []
        for fam in families(pre, post, d, self.options, UNROLLED):
            sel = z3.Bool(f"step{k}.{fam.name}")
            self.solver.add(z3.Implies(sel, z3.And(fam.formula, *_requests(fam, pre, d, k))))
            chosen.append((sel, fam))
            if fam.name == "DeliverMessage.consumer_join":
                self._rename_once(sel, fam)
        self.solver.add(*_classic_members(pre, post, d, self.config))
        return self.one_of(chosen)

    def _rename_once(self, sel: BoolRef, fam: Family) -> None:
        """A member id that sent its client's alternative instance id sends it again
        (``Unrolling.alt``)."""
        p = fam.params
        ids = {m: i for i, m in enumerate(self.domains.members)}
        for m, alt in self.alt.items():
            by_m = z3.And(sel, p["member"] == ids[m])
            self.solver.add(z3.Implies(z3.And(by_m, self.renamed[m]), p["instance"] == alt))
            self.renamed[m] = z3.Or(self.renamed[m], z3.And(by_m, p["instance"] == alt))

    def goal(self, name: str) -> BoolRef:
        return GOALS[name](self.states[-2], self.states[-1], self.domains, self.options)

    def path(self, model: Any, goal: str) -> SymPath:
        d = self.domains
        states = tuple(decode(model, s, d) for s in self.states)
        steps: list[tuple[str, dict[str, str]]] = []
        for _, fam in self.chosen_in(model):
            shown: dict[str, str] = {}
            rows: dict[str, list[str]] = {}
            for k, x in fam.params.items():
                v = model.eval(x, model_completion=True)
                if k.startswith(("topics.", "target.")):
                    # One entry per row: the topics or partitions set.
                    head, _, rest = k.partition(".")
                    rows.setdefault(head, [])
                    if z3.is_true(v):
                        rows[head].append(rest)
                    continue
                if k in ("member", "new_id"):
                    i = v.as_long()
                    shown[k] = d.members[i] if 0 <= i < len(d.members) else str(v)
                else:
                    shown[k] = str(v)
            shown.update({k: "{" + ", ".join(v) + "}" for k, v in rows.items()})
            steps.append((fam.name, shown))
        return SymPath(goal, states, tuple(steps))

    def block(self, path: SymPath, length: int) -> None:
        """No other path through the first ``length`` states after the initial one."""
        d = self.domains
        same = [
            z3.And(*pin(s, v, d))
            for s, v in zip(self.states[1 : length + 1], path.states[1 : length + 1], strict=True)
        ]
        self.solver.add(z3.Not(z3.And(*same)))


def search(
    goal: str,
    depth: int,
    config: Config,
    options: MixedOptions,
    *,
    lifter: Lifter,
    attempts: int = DEFAULT_ATTEMPTS,
    lift_states: int = DEFAULT_LIFT_STATES,
) -> Outcome:
    """Search for a path of at most ``depth`` coordinator steps violating ``goal`` and lift
    it with ``lifter`` (module docstring); the shortest first."""
    return search_lifted(
        Unrolling(config, options, depth),
        goal,
        depth,
        config,
        lifter=lifter,
        attempts=attempts,
        lift_states=lift_states,
    )


def render_path(path: SymPath) -> list[str]:
    """Lines describing a symbolic path: the initial state, then each step and its state."""
    return engine.render_path(path, render)
