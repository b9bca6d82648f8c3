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
path that does not lift is blocked and the search goes on (at most ``attempts`` paths); a
verdict never claims more than was lifted: ``violation`` with a lifted trace, ``ok`` when
no path of the relation up to ``depth`` violates the goal, ``inconclusive`` otherwise.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import z3

from invariants.z3.proof.classic_state import (
    ClassicSym,
    ClassicValue,
    decode,
    pin,
    project,
)
from invariants.z3.proof.classic_transition import (
    ClassicOptions,
    families,
    grounded,
    some_member,
    some_partition,
)
from invariants.z3.proof.lifted_search import Lifted, Outcome, search_lifted
from invariants.z3.proof.state import MEMBER, Partition, Universe
from invariants.z3.proof.transition import Family
from model import system
from model.config import Config

"""A lift's outcome (``groupcheck.explore.classic_lift.lift``): the model trace (None:
none found), the violations of its last step, the nodes visited and, when the search was
exhausted, how many of the path's states after the initial one a trace matched (None:
the search was cut by its bound)."""
Lifter = Callable[["SymPath", Config, int], Lifted]

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


GOALS: dict[str, Callable[[ClassicSym, ClassicSym], BoolRef]] = {
    "NoLiveOffsetExpires": no_live_offset_expires,
    "StaticInstanceUnique": static_instance_unique,
}
"""The goals: property name → the negation of the property on a step."""


# --------------------------------------------------------------------------- the domains


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


def universe_of(config: Config) -> Domains:
    """The member ids of the initial state and ``ID_SLOTS`` more per client, the topics'
    partitions (with ``AddPartitions`` up to ``Config.max_partitions_per_topic``: a
    subscription then names each topic's partitions at any count it may have), the
    clients' instance ids (and those ``ChangeInstanceId`` gives)."""
    init = project(system.initial(config))  # type: ignore[arg-type]
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
    return Domains(
        Universe.of(members, partitions, iids), previous, instances, subscriptions, growth
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
    return out


# --------------------------------------------------------------------------- paths


@dataclass(frozen=True)
class SymPath:
    """A symbolic path: its states and, per step, the family and its member and number
    parameters."""

    goal: str
    states: tuple[ClassicValue, ...]
    steps: tuple[tuple[str, dict[str, str]], ...]


class Unrolling:
    """The relation unrolled from the initial state on the configuration's domains."""

    def __init__(self, config: Config, options: ClassicOptions, domains: Domains) -> None:
        self.config = config
        self.options = options
        self.domains = domains
        u = domains.universe
        self.members = tuple(u.member_consts.values())
        self.partitions = tuple(u.partition_consts.values())
        self.solver = z3.Solver()
        self.states = [ClassicSym.fresh("s0")]
        self.choices: list[list[tuple[Any, Family]]] = []
        self.solver.add(*distinct(u), self.within(self.states[0].leader))
        init = project(system.initial(config))  # type: ignore[arg-type]
        self.solver.add(*pin(self.states[0], init, u))

    def within(self, x: Any) -> BoolRef:
        """The member term ``x`` is one of the universe's member ids."""
        return z3.Or(*[x == c for c in self.members])

    def extend(self) -> None:
        """One more step."""
        k = len(self.states)
        pre, post = self.states[-1], ClassicSym.fresh(f"s{k}")
        self.states.append(post)
        chosen: list[tuple[Any, Family]] = []
        # A MetadataChange only where the configuration adds partitions.
        names = [n for n in UNROLLED if n != "MetadataChange" or self.domains.growth]
        with grounded(self.members, self.partitions):
            fams = families(pre, post, self.options, names)
        for fam in fams:
            sel = z3.Bool(f"step{k}.{fam.name}")
            parts = [fam.formula, *_requests(fam, pre, self.domains)]
            parts += [
                self.within(x) for x in fam.params.values() if z3.is_const(x) and x.sort() == MEMBER
            ]
            self.solver.add(z3.Implies(sel, z3.And(*parts)))
            chosen.append((sel, fam))
        self.solver.add(self.within(post.leader))
        self.solver.add(z3.Or(*[sel for sel, _ in chosen]))
        self.choices.append(chosen)

    def goal(self, name: str) -> BoolRef:
        with grounded(self.members, self.partitions):
            return GOALS[name](self.states[-2], self.states[-1])

    def path(self, model: Any, goal: str) -> SymPath:
        u = self.domains.universe
        names = {
            str(model.eval(c, model_completion=True)): mid for mid, c in u.member_consts.items()
        }
        states = tuple(decode(model, s, u) for s in self.states)
        steps: list[tuple[str, dict[str, str]]] = []
        for chosen in self.choices:
            _, fam = next((s, f) for s, f in chosen if z3.is_true(model.eval(s)))
            shown: dict[str, str] = {}
            for k, x in fam.params.items():
                if not z3.is_const(x):
                    continue
                v = model.eval(x, model_completion=True)
                shown[k] = names.get(str(v), str(v)) if x.sort() == MEMBER else str(v)
            steps.append((fam.name, shown))
        return SymPath(goal, states, tuple(steps))

    def block(self, path: SymPath, length: int) -> None:
        """No other path through the first ``length`` states after the initial one of
        ``path``."""
        u = self.domains.universe
        same = [
            z3.And(*pin(s, v, u))
            for s, v in zip(self.states[1 : length + 1], path.states[1 : length + 1], strict=True)
        ]
        self.solver.add(z3.Not(z3.And(*same)))


def search(
    goal: str,
    depth: int,
    config: Config,
    options: ClassicOptions,
    *,
    lifter: Lifter,
    attempts: int = DEFAULT_ATTEMPTS,
    lift_states: int = DEFAULT_LIFT_STATES,
) -> Outcome:
    """Search for a path of at most ``depth`` coordinator steps violating ``goal`` and lift
    it with ``lifter`` (module docstring); the shortest first."""
    unroll = Unrolling(config, options, universe_of(config))
    return search_lifted(
        unroll, goal, depth, config, lifter=lifter, attempts=attempts, lift_states=lift_states
    )


def render_path(path: SymPath) -> list[str]:
    """Lines describing a symbolic path: the initial state, then each step and its state."""
    from invariants.z3.proof.classic_state import render

    lines = ["initial:"] + ["  " + x for x in render(path.states[0])]
    for (family, params), state in zip(path.steps, path.states[1:], strict=True):
        shown = ", ".join(f"{k}={v}" for k, v in params.items())
        lines.append(f"{family}({shown}):")
        lines += ["  " + x for x in render(state)]
    return lines
