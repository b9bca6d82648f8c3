"""Bounded model checking of the classic coordinator with its clients: the client layer
(``classic_clients``) linked to the coordinator's families (``classic_transition``) through
the requests and responses in flight, for the goals that read the clients
(``classic_clients.CLIENT_GOALS``).

A step is one action of ``model.classic.system``. Its state is the group (``ClassicSym``),
every client (``ClientSym``) and, per client, what is in flight on its connection
(:class:`NetSym`): a JoinGroup, SyncGroup, Heartbeat or OffsetCommit request with the fields
it was sent with (the client's member id, generation, committed partitions: the facts of
the client family that sent it), and a response of each kind with its fields. The families:

* the client steps of the layer, a request they send put in flight (``SendJoinGroup``, its
  revocation commit, ``SendSyncGroup``, ``SendHeartbeat`` — sent only when the coordinator
  would answer it with news, as ``system._news_for`` —, a cooperative ``SyncGroup``
  response's commit), a response they read taken out of it, with its fields as the client
  family's parameters;
* a request's delivery: the coordinator's family with the request's fields as its
  parameters (a dynamic member's: instance 0; every client shares the group's protocols),
  the response it answers at once in flight, and the responses to the JoinGroups and
  SyncGroups the coordinator held that the step answers (read off the group before and
  after: a held JoinGroup no longer held is answered with the new generation, or
  UNKNOWN_MEMBER_ID when its member is gone; a held SyncGroup with the member's assignment
  once STABLE, REBALANCE_IN_PROGRESS when a rebalance started, UNKNOWN_MEMBER_ID when its
  member is gone); a Heartbeat's and an OffsetCommit's answer as
  ``coordinator.handle_heartbeat`` and ``validate_offset_commit`` give it;
* the coordinator's timers (``SessionTimeout``, ``RebalanceTimeout``), answering held
  requests the same way; after every coordinator step a live client in the group whose
  member is gone is marked expired (``system._mark_zombies``);
* ``Subscribe`` and ``LoseMessage`` (any message in flight dropped) as perturbations of the
  configuration's budget, and a client's ``RequestTimeout`` once one of its requests is
  neither in flight nor held.

A JoinGroup request carries the claims the client sent (owned partitions, user data, their
generation: the facts of ``SendJoinGroup``), the coordinator's JoinGroup family's claims;
the leader's SyncGroup assignment is the configuration's assignor's where
``classic_transition.stated_assignor`` states one, else bounded only by what every
assignor gives (``Linked._assignment_bounds``). It abstracts the model's network (no
order between a client's messages but that a JoinGroup and its response come after the
OffsetCommit and Heartbeat requests and responses in flight with them, ``_AFTER``; a
request held on an earlier connection not told apart; ``unchanged`` a free parameter of
the coordinator's families) and restricts it (the requests in flight are dropped with the
connection a request timeout closes, where the model still delivers them and drops only
their responses), so a path is a counterexample only once lifted
(``groupcheck.explore.classic_lift.lift_clients``): a breadth-first search of the Python
classic model whose group and clients project, in order, onto the states of the path or
of an image of it under a renaming of a topic's partitions (:func:`partition_images`);
and "no path" speaks of the restricted relation only. The search (:func:`search`) asks
every depth (from ``start_depth``) of a new solver and, by default, only of paths whose
consecutive local steps of two clients come in the clients' order
(:func:`reduce_interleavings`: every path has such a reordering with the same last
step), each step stated once by the conjuncts its families share (``factored.one_of``:
the same steps). It covers configurations whose clients are
dynamic members that all list the same assignors and may only subscribe, lose messages
and time out (:func:`supported`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import z3

from invariants.z3.proof.classic_bmc import (
    DEFAULT_ATTEMPTS,
    DEFAULT_LIFT_STATES,
    Domains,
    distinct,
    universe_of,
)
from invariants.z3.proof.classic_clients import (
    CLIENT_FAMILIES,
    CLIENT_GOALS,
    JOIN_OUT,
    STABLE,
    SYNC_OUT,
    UNSUBSCRIBED,
    ClientOptions,
    ClientSym,
    ClientValue,
    pin_client,
    project_client,
)
from invariants.z3.proof.classic_state import COMPLETING as G_COMPLETING
from invariants.z3.proof.classic_state import EMPTY as G_EMPTY
from invariants.z3.proof.classic_state import PREPARING as G_PREPARING
from invariants.z3.proof.classic_state import STABLE as G_STABLE
from invariants.z3.proof.classic_state import (
    ClassicSym,
    ClassicValue,
    decode,
    pin,
    project,
    render,
)
from invariants.z3.proof.classic_transition import (
    BUILDERS,
    ClassicOptions,
    grounded,
    possible_families,
)
from invariants.z3.proof.factored import one_of
from invariants.z3.proof.lifted_search import FreshSolver, Outcome, search_lifted
from invariants.z3.proof.state import MEMBER, PARTITION, Partition
from model import system
from model.classic.messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from model.classic.records import ClassicState
from model.config import Config
from model.records import OffsetCommitRequest, OffsetCommitResponse
from model.status import ErrorCode

BoolRef = Any
E = ErrorCode

DEFAULT_DEPTH = 27
"""``explore --engine bmc``'s default depth here: the steps of the shortest counterexample
of each client variant (``docs/invariants.md``)."""

GOAL_VARIANTS = frozenset({"lost-partitions-kept", "late-sync-resets-generation"})
"""The client variants (``classic_clients.CLIENT_VARIANTS``) whose goal is the property that
kills the mutant (its catalogue entry's ``Mutant.killed_by``, its breadth-first
counterexample's property): ``explore --engine bmc --mutant M`` asks it once, at
:data:`DEFAULT_DEPTH` (``search``'s ``start_depth``)."""

ALLOWED = frozenset({"Subscribe", "LoseMessage"})
"""The perturbations the linked relation has."""


def supported(config: Config) -> str | None:
    """Why the linked relation does not cover ``config`` (None: it does)."""
    if config.protocol != "classic":
        return "not a classic configuration"
    if any(c.instance_id for c in config.clients):
        return "static members are not in the client layer's link"
    if len({c.assignors for c in config.clients}) > 1:
        return "clients with different assignors"
    extra = {p for p in config.perturbations if config.max_perturbations > 0} - ALLOWED
    if extra:
        return f"perturbations outside the link: {', '.join(sorted(extra))}"
    if config.auto_commit or config.slow_clients or config.reorder:
        return "auto_commit, slow_clients or reorder"
    return None


_NET_BOOLS = (
    "jq",
    "jq_has",
    "jr",
    "jr_leader",
    "sq",
    "sr",
    "hq",
    "hq_has",
    "hr",
    "cq",
    "cq_has",
    "cr",
)
_NET_INTS = (
    "jq_gen",
    "jr_error",
    "jr_gen",
    "sq_gen",
    "sr_error",
    "hq_gen",
    "hr_error",
    "cq_gen",
    "cr_error",
)
_NET_MEMBERS = ("jq_member", "jr_member", "sq_member", "hq_member", "cq_member")
_NET_SETS = ("jq_owned", "jq_user", "sr_assign", "cq_parts")
_MESSAGES = ("jq", "jr", "sq", "sr", "hq", "hr", "cq", "cr")


@dataclass(frozen=True)
class NetSym:
    """What is in flight on one client's connection (module docstring): ``jq``/``jr`` a
    JoinGroup request/response, ``sq``/``sr`` SyncGroup, ``hq``/``hr`` Heartbeat,
    ``cq``/``cr`` OffsetCommit, each with its fields."""

    fields: Mapping[str, Any]

    def __getattr__(self, key: str) -> Any:
        try:
            return self.fields[key]
        except KeyError:
            raise AttributeError(key) from None

    @staticmethod
    def fresh(name: str, tag: str) -> NetSym:
        out: dict[str, Any] = {}
        for k in _NET_BOOLS:
            out[k] = z3.Bool(f"net.{k}.{name}.{tag}")
        for k in _NET_INTS:
            out[k] = z3.Int(f"net.{k}.{name}.{tag}")
        for k in _NET_MEMBERS:
            out[k] = z3.Const(f"net.{k}.{name}.{tag}", MEMBER)
        for k in _NET_SETS:
            out[k] = z3.Function(f"net.{k}.{name}.{tag}", PARTITION, z3.BoolSort())
        return NetSym(out)


def _net_equal(post: NetSym, changes: Mapping[str, Any], pre: NetSym, parts: Any) -> BoolRef:
    """``post`` is ``pre`` with ``changes`` (fields of a message not in flight are free)."""
    out = []
    for k in (*_NET_BOOLS, *_NET_INTS, *_NET_MEMBERS):
        v = changes.get(k, pre.fields[k])
        out.append(post.fields[k] == v)
    for k in _NET_SETS:
        v = changes.get(k, pre.fields[k])
        out += [post.fields[k](q) == v(q) for q in parts]
    return z3.And(*out)


def _empty_net(n: NetSym) -> BoolRef:
    return z3.And(*[z3.Not(n.fields[k]) for k in _MESSAGES])


@dataclass(frozen=True)
class Frame:
    """One step's state: the group, the clients, the network, the perturbations spent."""

    group: ClassicSym
    clients: dict[str, ClientSym]
    net: dict[str, NetSym]
    spent: Any

    @staticmethod
    def fresh(names: tuple[str, ...], tag: str) -> Frame:
        return Frame(
            ClassicSym.fresh(tag),
            {n: ClientSym.fresh(n, tag) for n in names},
            {n: NetSym.fresh(n, tag) for n in names},
            z3.Int(f"spent.{tag}"),
        )


@dataclass(frozen=True)
class State:
    """A decoded step state."""

    group: ClassicValue
    clients: dict[str, ClientValue]

    def key(self) -> tuple[Any, ...]:
        return (self.group, tuple(sorted(self.clients.items())))


def project_state(state: ClassicState) -> State:
    """The group and clients of a model state, as the linked relation sees them."""
    return State(project(state), {c.name: project_client(state, c) for c in state.clients})


def project_net(state: ClassicState) -> dict[str, dict[str, Any]] | None:
    """Per client, what is in flight on its current connection as :class:`NetSym` fields
    (a message's fields only with it); None when a message is on an earlier connection or
    process, is a LeaveGroup, or two of a kind are in flight: the link does not represent
    it."""
    out: dict[str, dict[str, Any]] = {c.name: {} for c in state.clients}
    current = {c.name: (c.incarnation, c.connection) for c in state.clients}
    for m in state.network:
        if (m.incarnation, m.connection) != current[m.client]:
            return None
        b: Any = m.body
        d = out[m.client]
        if isinstance(b, JoinGroupRequest):
            sub = b.subscription
            kind, fields = (
                "jq",
                {
                    "jq_has": bool(b.member_id),
                    "jq_member": b.member_id,
                    "jq_gen": sub.generation_id,
                    "jq_owned": frozenset(sub.owned_partitions),
                    "jq_user": frozenset(sub.user_data),
                },
            )
        elif isinstance(b, JoinGroupResponse):
            kind, fields = (
                "jr",
                {
                    "jr_error": int(b.error_code),
                    "jr_gen": b.generation_id,
                    "jr_member": b.member_id,
                    "jr_leader": bool(b.member_id) and b.leader == b.member_id,
                },
            )
        elif isinstance(b, SyncGroupRequest):
            kind, fields = "sq", {"sq_member": b.member_id, "sq_gen": b.generation_id}
        elif isinstance(b, SyncGroupResponse):
            kind, fields = "sr", {"sr_error": int(b.error_code), "sr_assign": b.assignment}
        elif isinstance(b, HeartbeatRequest):
            kind, fields = (
                "hq",
                {
                    "hq_has": bool(b.member_id),
                    "hq_member": b.member_id,
                    "hq_gen": b.generation_id,
                },
            )
        elif isinstance(b, HeartbeatResponse):
            kind, fields = "hr", {"hr_error": int(b.error_code)}
        elif isinstance(b, OffsetCommitRequest):
            kind, fields = (
                "cq",
                {
                    "cq_has": bool(b.member_id),
                    "cq_member": b.member_id,
                    "cq_gen": b.generation_id_or_member_epoch,
                    "cq_parts": b.topics,
                },
            )
        elif isinstance(b, OffsetCommitResponse):
            kind, fields = "cr", {"cr_error": int(b.error_code)}
        else:
            return None
        if kind in d:
            return None
        d[kind] = True
        d.update(fields)
    return out


def pin_net(n: NetSym, value: Mapping[str, Any], u: Any) -> list[BoolRef]:
    """Constraints fixing ``n`` to a :func:`project_net` value."""
    out: list[BoolRef] = []
    for kind in _MESSAGES:
        on = bool(value.get(kind))
        out.append(n.fields[kind] == on)
        if not on:
            continue
        for k, v in value.items():
            if not k.startswith(kind + "_"):
                continue
            if k in _NET_MEMBERS:
                if v:
                    out.append(n.fields[k] == u.member_consts[v])
            elif k in _NET_SETS:
                out += [n.fields[k](pc) == (tp in v) for tp, pc in u.partition_consts.items()]
            else:
                out.append(n.fields[k] == v)
    return out


def check_linked_step(
    pre: ClassicState,
    post: ClassicState,
    config: Config,
    *,
    variant: str | None = None,
) -> str:
    """Whether a model step from ``pre`` to ``post`` is a step of the linked relation
    (group, clients and network pinned on both sides): ``yes``, ``no`` or ``unknown``."""
    unroll = Linked(
        config,
        universe_of(config),
        ClassicOptions.of(config),
        ClientOptions.of(config, variant),
        start=pre,
    )
    unroll.extend()
    unroll.solver.add(*unroll.pin_state(unroll.frames[-1], post))
    r = unroll.solver.check()
    return "yes" if r == z3.sat else "no" if r == z3.unsat else "unknown"


# --------------------------------------------------------------------------- the link

LOCAL = (
    "SendJoinGroup",
    "SendSyncGroup",
    "SendHeartbeat",
    "DeliverMessage.join_response",
    "DeliverMessage.sync_response",
    "DeliverMessage.heartbeat_response",
    "DeliverMessage.commit_response",
    "RequestTimeout",
    "Subscribe",
    "LoseMessage",
)
"""The families of a client's local steps: each changes that client, what is in flight on
its connection and the perturbations spent, and nothing else (the group, every other
client and connection are framed); it reads the group, that client, its connection and
the perturbations spent only. (The deliveries of a request and the coordinator's timers
change the group, answer other clients' held requests and mark zombies: not local.)"""


def local_client(name: str, names: tuple[str, ...]) -> int | None:
    """The index in ``names`` of the client whose local step the family ``name`` is
    (``SendJoinGroup(A)``, ``LoseMessage.jq(A)``), None for a step that is not local."""
    kind, _, rest = name.partition("(")
    if kind.split(".")[0] == "LoseMessage" or kind in LOCAL:
        return names.index(rest.rstrip(")"))
    return None


def reduce_interleavings(
    first: Mapping[int, list[Any]], second: Mapping[int, list[Any]]
) -> list[BoolRef]:
    """Two consecutive steps, ``first`` then ``second`` (each: the selectors of every
    client's local families, :data:`LOCAL`), are not local steps of two clients in
    decreasing order of their index.

    Sound for a search that reads a path's last step (its goal) and its states only through
    a lift: local steps ``a`` of client i and ``b`` of client j ≠ i commute — ``b`` reads
    and writes neither client i nor its connection, ``a`` neither j nor its, both leave the
    group as it is, and two perturbations spent add up in either order under the same
    budget (``spent < budget`` before each iff ``spent + 2 <= budget``) — so s -a-> s1 -b-> s2
    gives s -b-> s1' -a-> s2 with the same s2. Swapping such adjacent pairs, local client
    index out of order, among the steps before the last one sorts each run of consecutive
    local steps by client (stably: one client's steps keep their order) and ends: every path
    has one obeying this constraint on every pair but the last step, of the same length,
    with the same last step from the same state, whose states are the path's but for those
    between swapped steps. Only those middle states differ, so a path the lift cannot
    follow may have a reordering it could; the lift (``lift_exact``) matches the reduced
    path's states and ``classic_lift`` reports a violation only on a model trace, so the
    reduction never adds one, and "no path up to depth K" is the unreduced relation's
    answer too. tests/invariants/z3/proof/test_classic_client_bmc.py compares the reduced and
    unreduced searches at small depths."""
    out = []
    for i, later in first.items():
        for j, earlier in second.items():
            if j < i and later and earlier:
                out.append(z3.Not(z3.And(z3.Or(*later), z3.Or(*earlier))))
    return out


_AFTER: dict[str, Callable[[NetSym], list[BoolRef]]] = {
    "jq": lambda n: [z3.Not(n.cq), z3.Not(n.hq)],
    "jr": lambda n: [z3.Not(n.cr), z3.Not(n.hr)],
}
"""The order a client's channel keeps (``model.network.deliverable``: one channel per
client process and direction, delivered in order): a JoinGroup request in flight with an
OffsetCommit or a Heartbeat request was sent after them — a client sends its revocation
commit before its JoinGroup (``client.join_group``), a commit otherwise only with no
JoinGroup out (``on_sync_response``), and a heartbeat only in COMPLETING_REBALANCE or
STABLE, never while its JoinGroup is out —, so it is delivered after them; likewise its
response, answered after theirs, is read after theirs."""


def _is(x: Any, *codes: ErrorCode) -> BoolRef:
    return z3.Or(*[x == int(c) for c in codes])


class Linked:
    """The linked relation unrolled from the configuration's initial state."""

    def __init__(
        self,
        config: Config,
        domains: Domains,
        coordinator: ClassicOptions,
        clients: ClientOptions,
        start: ClassicState | None = None,
        *,
        reduce: bool = False,
        fresh: bool = False,
        factor: bool = False,
    ) -> None:
        self.config = config
        self.reduce = reduce
        self.factor = factor
        self.domains = domains
        self.copts = coordinator
        self.kopts = clients
        u = domains.universe
        self.u = u
        self.members = tuple(u.member_consts.values())
        self.parts = tuple(u.partition_consts.values())
        self.names = tuple(c.name for c in config.clients)
        self.ids = {
            n: [u.member_consts[m] for m in sorted(u.member_consts) if m.rsplit(".m", 1)[0] == n]
            for n in self.names
        }
        possible = possible_families(config)
        self.timers = tuple(t for t in ("SessionTimeout", "RebalanceTimeout") if t in possible)
        self.solver: Any = FreshSolver() if fresh else z3.Solver()
        self.frames = [Frame.fresh(self.names, "s0")]
        self.choices: list[list[tuple[Any, str]]] = []
        self.local: list[dict[int, list[Any]]] = []
        """Per step, per client (its index in ``names``), the selectors of its local
        families (:data:`LOCAL`)."""
        init = system.initial(config) if start is None else start
        assert isinstance(init, ClassicState)
        f0 = self.frames[0]
        self.solver.add(*distinct(u), self.within(f0.group.leader))
        self.solver.add(*self.pin_state(f0, init), f0.spent == init.perturbations)

    def pin_state(self, f: Frame, state: ClassicState) -> list[BoolRef]:
        """``f`` fixed to the model state's group, clients and network
        (:func:`project_net`; ValueError when the network is not one the link represents)."""
        u = self.u
        out = pin(f.group, project(state), u)
        nets = project_net(state)
        if nets is None:
            raise ValueError("a network the linked relation does not represent")
        for c in state.clients:
            out += pin_client(f.clients[c.name], project_client(state, c), u)
            out += pin_net(f.net[c.name], nets[c.name], u)
        return out

    def within(self, x: Any) -> BoolRef:
        return z3.Or(*[x == c for c in self.members])

    # ----------------------------------------------------------------- pieces

    def _frame_clients(self, pre: Frame, post: Frame, but: str | None) -> list[BoolRef]:
        out = []
        for n in self.names:
            if n == but:
                continue
            a, b = pre.clients[n], post.clients[n]
            out += [
                b.fields[k] == a.fields[k]
                for k in a.fields
                if k not in ("owned", "assigned", "subscribed", "member")
            ]
            out.append(z3.Implies(b.has_member, b.member == a.member))
            for k in ("owned", "assigned", "subscribed"):
                out += [b.fields[k](q) == a.fields[k](q) for q in self.parts]
        return out

    def _frame_net(
        self, pre: Frame, post: Frame, changes: Mapping[str, Mapping[str, Any]]
    ) -> list[BoolRef]:
        return [
            _net_equal(post.net[n], changes.get(n, {}), pre.net[n], self.parts) for n in self.names
        ]

    def _zombies(self, pre: Frame, post: Frame) -> list[BoolRef]:
        """Every client as it was but ``expired`` (``system._mark_zombies``)."""
        out = []
        h = post.group
        for n in self.names:
            a, b = pre.clients[n], post.clients[n]
            out += [
                b.fields[k] == a.fields[k]
                for k in a.fields
                if k not in ("owned", "assigned", "subscribed", "member", "expired")
            ]
            out.append(z3.Implies(b.has_member, b.member == a.member))
            for k in ("owned", "assigned", "subscribed"):
                out += [b.fields[k](q) == a.fields[k](q) for q in self.parts]
            gone = z3.And(
                a.alive,
                a.status != UNSUBSCRIBED,
                a.generation >= 0,
                z3.Not(z3.And(a.has_member, h.is_member(a.member))),
            )
            out.append(b.expired == z3.Or(a.expired, gone))
        return out

    def _answers(self, pre: Frame, post: Frame, skip: str | None) -> dict[str, dict[str, Any]]:
        """The responses to held JoinGroups and SyncGroups the coordinator step answers."""
        g, h = pre.group, post.group
        out: dict[str, dict[str, Any]] = {}
        for n in self.names:
            if n == skip:
                continue
            c, net = pre.clients[n], pre.net[n]
            m = c.member
            jheld = z3.And(
                c.alive,
                c.group_request == JOIN_OUT,
                z3.Not(net.jq),
                z3.Not(net.jr),
                c.has_member,
                g.is_member(m),
                g.awaiting_join(m),
            )
            janswered = z3.And(jheld, z3.Not(z3.And(h.is_member(m), h.awaiting_join(m))))
            kept = h.is_member(m)
            sheld = z3.And(
                c.alive,
                c.group_request == SYNC_OUT,
                z3.Not(net.sq),
                z3.Not(net.sr),
                c.has_member,
                g.is_member(m),
                g.awaiting_sync(m),
            )
            sanswered = z3.And(sheld, z3.Not(z3.And(h.is_member(m), h.awaiting_sync(m))))
            out[n] = {
                "jr": z3.Or(net.jr, janswered),
                "jr_error": z3.If(
                    janswered, z3.If(kept, 0, int(E.UNKNOWN_MEMBER_ID)), net.jr_error
                ),
                "jr_gen": z3.If(janswered, z3.If(kept, h.generation, -1), net.jr_gen),
                "jr_member": z3.If(janswered, m, net.jr_member),
                "jr_leader": z3.If(
                    janswered, z3.And(kept, h.has_leader, h.leader == m), net.jr_leader
                ),
                "sr": z3.Or(net.sr, sanswered),
                "sr_error": z3.If(
                    sanswered,
                    z3.If(
                        kept,
                        z3.If(h.status == G_STABLE, 0, int(E.REBALANCE_IN_PROGRESS)),
                        int(E.UNKNOWN_MEMBER_ID),
                    ),
                    net.sr_error,
                ),
                "sr_assign": (
                    lambda q, sanswered=sanswered, kept=kept, m=m, net=net: z3.If(
                        sanswered,
                        z3.And(kept, h.status == G_STABLE, h.assigned(m, q)),
                        net.sr_assign(q),
                    )
                ),
            }
        return out

    # ----------------------------------------------------------------- families

    def step_families(self, pre: Frame, post: Frame) -> list[tuple[str, BoolRef]]:
        out: list[tuple[str, BoolRef]] = []
        budget = self.config.max_perturbations
        for n in self.names:
            out += self._client_steps(pre, post, n, budget)
            out += self._deliveries(pre, post, n)
            if budget > 0 and self.config.allows("LoseMessage"):
                for msg in _MESSAGES:
                    out.append(
                        (
                            f"LoseMessage.{msg}({n})",
                            z3.And(
                                pre.spent < budget,
                                post.spent == pre.spent + 1,
                                pre.net[n].fields[msg],
                                *self._frame_net(pre, post, {n: {msg: z3.BoolVal(False)}}),
                                *self._frame_clients(pre, post, None),
                                *self._same_group(pre, post),
                            ),
                        )
                    )
        for timer in self.timers:
            fam = BUILDERS[timer](pre.group, post.group, self.copts)
            parts = [
                fam.formula,
                self._timer_may(pre, fam.params["member"], timer),
                self.within(fam.params["member"]),
                self.within(fam.params["heir"]),
                post.spent == pre.spent,
                *self._zombies(pre, post),
                *self._frame_net(pre, post, self._answers(pre, post, None)),
            ]
            out.append((timer, z3.And(*parts)))
        return out

    def _timer_may(self, pre: Frame, x: Any, timer: str) -> BoolRef:
        """``system.timeouts``: a timer fires for a member whose client process is gone
        (no live client in the group uses its id) or, with ``live_timers``, whose client's
        heartbeat, JoinGroup or SyncGroup was lost (``system._unheard``); the join and
        pending-sync timers also for a member whose application hangs (not in the link)."""
        g = pre.group
        users = []
        unheard = []
        for n in self.names:
            c, net = pre.clients[n], pre.net[n]
            uses = z3.And(c.alive, c.status != UNSUBSCRIBED, c.has_member, c.member == x)
            users.append(uses)
            lost = z3.Or(
                z3.And(c.heartbeat_in_flight, z3.Not(net.hq), z3.Not(net.hr)),
                z3.And(
                    c.group_request == JOIN_OUT,
                    z3.Not(net.jq),
                    z3.Not(net.jr),
                    z3.Not(z3.And(g.is_member(c.member), g.awaiting_join(c.member))),
                ),
                z3.And(
                    c.group_request == SYNC_OUT,
                    z3.Not(net.sq),
                    z3.Not(net.sr),
                    z3.Not(z3.And(g.is_member(c.member), g.awaiting_sync(c.member))),
                ),
            )
            unheard.append(z3.And(uses, lost))
        gone = z3.Not(z3.Or(*users))
        if self.config.live_timers:
            return z3.Or(gone, *unheard)
        return gone

    def _same_group(self, pre: Frame, post: Frame) -> list[BoolRef]:
        fam = BUILDERS["Unchanged"](pre.group, post.group, self.copts)
        return [fam.formula]

    def _client_steps(
        self, pre: Frame, post: Frame, n: str, budget: int
    ) -> list[tuple[str, BoolRef]]:
        out: list[tuple[str, BoolRef]] = []
        c, d, net = pre.clients[n], post.clients[n], pre.net[n]
        g = pre.group
        common = [*self._frame_clients(pre, post, n), *self._same_group(pre, post)]

        def fam(name: str) -> Any:
            return CLIENT_FAMILIES[name](c, d, self.kopts)

        # SendJoinGroup: the JoinGroup in flight, a revocation commit with it.
        f = fam("SendJoinGroup")
        commit = z3.And(d.commit_in_flight, z3.Not(c.commit_in_flight))
        out.append(
            (
                f"SendJoinGroup({n})",
                z3.And(
                    f.formula,
                    z3.Not(net.jq),
                    z3.Not(net.jr),
                    post.spent == pre.spent,
                    *common,
                    *self._frame_net(
                        pre,
                        post,
                        {
                            n: {
                                "jq": z3.BoolVal(True),
                                "jq_has": f.facts["has_member"],
                                "jq_member": f.facts["member"],
                                "jq_gen": f.facts["generation"],
                                "jq_owned": f.facts["owned"],
                                "jq_user": f.facts["user_data"],
                                "cq": z3.Or(net.cq, commit),
                                "cq_has": z3.If(commit, c.has_member, net.cq_has),
                                "cq_member": z3.If(commit, c.member, net.cq_member),
                                "cq_gen": z3.If(commit, c.generation, net.cq_gen),
                                "cq_parts": lambda q: z3.If(
                                    commit, z3.And(c.owned(q), z3.Not(d.owned(q))), net.cq_parts(q)
                                ),
                            }
                        },
                    ),
                ),
            )
        )
        # SendSyncGroup.
        f = fam("SendSyncGroup")
        sent = d.group_request == SYNC_OUT
        out.append(
            (
                f"SendSyncGroup({n})",
                z3.And(
                    f.formula,
                    z3.Not(net.sq),
                    z3.Not(net.sr),
                    post.spent == pre.spent,
                    *common,
                    *self._frame_net(
                        pre,
                        post,
                        {
                            n: {
                                "sq": z3.Or(net.sq, sent),
                                "sq_member": z3.If(sent, c.member, net.sq_member),
                                "sq_gen": z3.If(sent, c.generation, net.sq_gen),
                            }
                        },
                    ),
                ),
            )
        )
        # SendHeartbeat, only with news (system._news_for).
        f = fam("SendHeartbeat")
        err = self._heartbeat_error(g, c.has_member, c.member, c.generation)
        news = z3.If(
            _is(err, E.REBALANCE_IN_PROGRESS),
            z3.And(c.status == STABLE, z3.Not(c.rejoin_needed)),
            z3.Not(_is(err, E.NONE)),
        )
        out.append(
            (
                f"SendHeartbeat({n})",
                z3.And(
                    f.formula,
                    news,
                    z3.Not(net.hq),
                    z3.Not(net.hr),
                    post.spent == pre.spent,
                    *common,
                    *self._frame_net(
                        pre,
                        post,
                        {
                            n: {
                                "hq": z3.BoolVal(True),
                                "hq_has": c.has_member,
                                "hq_member": c.member,
                                "hq_gen": c.generation,
                            }
                        },
                    ),
                ),
            )
        )
        # Responses read.
        for name, flag, params in (
            (
                "DeliverMessage.join_response",
                "jr",
                {
                    "error": net.jr_error,
                    "generation": net.jr_gen,
                    "member": net.jr_member,
                    "is_leader": net.jr_leader,
                },
            ),
            ("DeliverMessage.sync_response", "sr", {"error": net.sr_error}),
            ("DeliverMessage.heartbeat_response", "hr", {"error": net.hr_error}),
            ("DeliverMessage.commit_response", "cr", {"error": net.cr_error}),
        ):
            f = fam(name)
            p = f.params
            fixed = [p[k] == v for k, v in params.items()]
            fixed += [p["incarnation"] == c.incarnation, p["connection"] == c.connection]
            if name == "DeliverMessage.sync_response":
                fixed += [p["assignment"](q) == net.sr_assign(q) for q in self.parts]
            changes: dict[str, Any] = {flag: z3.BoolVal(False)}
            if name == "DeliverMessage.sync_response":
                commit = z3.And(d.commit_in_flight, z3.Not(c.commit_in_flight))
                changes.update(
                    {
                        "cq": z3.Or(net.cq, commit),
                        "cq_has": z3.If(commit, c.has_member, net.cq_has),
                        "cq_member": z3.If(commit, c.member, net.cq_member),
                        "cq_gen": z3.If(commit, c.generation, net.cq_gen),
                        "cq_parts": lambda q, commit=commit: z3.If(
                            commit,
                            z3.And(c.owned(q), z3.Not(net.sr_assign(q))),
                            net.cq_parts(q),
                        ),
                    }
                )
            out.append(
                (
                    f"{name}({n})",
                    z3.And(
                        net.fields[flag],
                        *(_AFTER[flag](net) if flag in _AFTER else []),
                        f.formula,
                        *fixed,
                        post.spent == pre.spent,
                        *common,
                        *self._frame_net(pre, post, {n: changes}),
                    ),
                )
            )
        # RequestTimeout: a request neither in flight nor held.
        f = fam("RequestTimeout")
        lost = z3.Or(
            z3.And(c.heartbeat_in_flight, z3.Not(net.hq), z3.Not(net.hr)),
            z3.And(c.commit_in_flight, z3.Not(net.cq), z3.Not(net.cr)),
            z3.And(
                c.group_request == JOIN_OUT,
                z3.Not(net.jq),
                z3.Not(net.jr),
                z3.Not(z3.And(c.has_member, g.is_member(c.member), g.awaiting_join(c.member))),
            ),
            z3.And(
                c.group_request == SYNC_OUT,
                z3.Not(net.sq),
                z3.Not(net.sr),
                z3.Not(z3.And(c.has_member, g.is_member(c.member), g.awaiting_sync(c.member))),
            ),
        )
        out.append(
            (
                f"RequestTimeout({n})",
                z3.And(
                    f.formula,
                    lost,
                    post.spent == pre.spent,
                    *common,
                    *self._frame_net(pre, post, {n: {k: z3.BoolVal(False) for k in _MESSAGES}}),
                ),
            )
        )
        if budget > 0 and self.config.allows("Subscribe"):
            f = fam("Subscribe")
            out.append(
                (
                    f"Subscribe({n})",
                    z3.And(
                        f.formula,
                        pre.spent < budget,
                        post.spent == pre.spent + 1,
                        *common,
                        *self._frame_net(pre, post, {}),
                    ),
                )
            )
        return out

    def _heartbeat_error(self, g: Any, has: Any, m: Any, gen: Any) -> Any:
        """``coordinator.handle_heartbeat``'s error for a dynamic member."""
        return z3.If(
            z3.Or(g.status == G_EMPTY, z3.Not(has), z3.Not(g.is_member(m))),
            int(E.UNKNOWN_MEMBER_ID),
            z3.If(
                gen != g.generation,
                int(E.ILLEGAL_GENERATION),
                z3.If(g.status == G_PREPARING, int(E.REBALANCE_IN_PROGRESS), 0),
            ),
        )

    def _assignment_bounds(self, g: Any, assignment: Any) -> list[BoolRef]:
        """What every leader's assignment in the model satisfies, whichever assignor the
        group selected (``model.classic.client.leader_assignment`` over
        ``model.classic.assignors``; ``classic_assignor``'s ``valid`` and ``at most once``
        clauses): a member of the group gets only partitions it subscribes to, no partition
        goes to two members, and the only member of a group gets every partition it
        subscribes to (an assignor deals out every subscribed partition; the cooperative
        protocol withholds only a partition another member claims). The rest of the
        assignment stays a free parameter of the SyncGroup family."""
        out: list[BoolRef] = []
        for q in self.parts:
            for i, m in enumerate(self.members):
                out.append(z3.Implies(z3.And(g.is_member(m), assignment(m, q)), g.subscribed(m, q)))
                out += [
                    z3.Not(
                        z3.And(g.is_member(m), g.is_member(k), assignment(m, q), assignment(k, q))
                    )
                    for k in self.members[i + 1 :]
                ]
                alone = z3.And(
                    g.is_member(m), *[z3.Not(g.is_member(k)) for k in self.members if k is not m]
                )
                out.append(z3.Implies(z3.And(alone, g.subscribed(m, q)), assignment(m, q)))
        return out

    def _deliveries(self, pre: Frame, post: Frame, n: str) -> list[tuple[str, BoolRef]]:
        out: list[tuple[str, BoolRef]] = []
        c, net = pre.clients[n], pre.net[n]
        g, h = pre.group, post.group
        same_spent = post.spent == pre.spent
        # JoinGroup.
        fam = BUILDERS["DeliverMessage.join_group"](g, h, self.copts)
        p = fam.params
        x = p["member"]
        new_ids = self.ids[n]
        issue = z3.Or(
            *[
                z3.And(
                    p["new_id"] == mid,
                    z3.Not(g.issued(mid)),
                    *([g.issued(new_ids[i - 1])] if i else []),
                )
                for i, mid in enumerate(new_ids)
            ]
        )
        link = [
            p["unknown"] == z3.Not(net.jq_has),
            z3.Implies(net.jq_has, x == net.jq_member),
            self.within(x),
            self.within(p["heir"]),
            self.within(p["holder"]),
            p["instance"] == 0,
            p["supported"],
            *[p["subscribed"](q) == c.subscribed(q) for q in self.parts],
            p["claim_gen"] == net.jq_gen,
            *[p["owned"](q) == net.jq_owned(q) for q in self.parts],
            *[p["user_data"](q) == net.jq_user(q) for q in self.parts],
            z3.Implies(p["unknown"], issue),
        ]
        invalid = z3.Or(z3.Not(g.is_member(x)), g.status == G_EMPTY)
        same = z3.Or(
            z3.And(g.status == G_COMPLETING, p["unchanged"]),
            z3.And(
                g.status == G_STABLE, p["unchanged"], z3.Not(z3.And(g.has_leader, g.leader == x))
            ),
        )
        pending = g.pending(x)
        answered = z3.Not(z3.And(h.is_member(x), h.awaiting_join(x)))
        # The requester's response: (in flight?, error, generation, member, leader).
        now = z3.Or(
            p["unknown"],
            z3.And(z3.Not(pending), z3.Or(invalid, same)),
            answered,
        )
        err = z3.If(
            p["unknown"],
            int(E.MEMBER_ID_REQUIRED),
            z3.If(z3.And(z3.Not(pending), invalid), int(E.UNKNOWN_MEMBER_ID), 0),
        )
        from_g = z3.And(z3.Not(p["unknown"]), z3.Not(pending), same, z3.Not(invalid))
        gen = z3.If(err != 0, -1, z3.If(from_g, g.generation, h.generation))
        leader = z3.If(
            err != 0,
            False,
            z3.If(from_g, z3.And(g.has_leader, g.leader == x), z3.And(h.has_leader, h.leader == x)),
        )
        answers = self._answers(pre, post, n)
        answers[n] = {
            "jq": z3.BoolVal(False),
            "jr": now,
            "jr_error": err,
            "jr_gen": gen,
            "jr_member": z3.If(p["unknown"], p["new_id"], x),
            "jr_leader": leader,
        }
        out.append(
            (
                f"DeliverMessage.join_group({n})",
                z3.And(
                    net.jq,
                    *_AFTER["jq"](net),
                    fam.formula,
                    *link,
                    same_spent,
                    *self._zombies(pre, post),
                    *self._frame_net(pre, post, answers),
                ),
            )
        )
        # SyncGroup.
        fam = BUILDERS["DeliverMessage.sync_group"](g, h, self.copts)
        p = fam.params
        x = p["member"]
        link = [
            x == net.sq_member,
            self.within(x),
            self.within(p["holder"]),
            p["generation"] == net.sq_gen,
            p["instance"] == 0,
            p["protocol_ok"],
        ]
        if self.copts.assignor is None:
            link += self._assignment_bounds(g, p["assignment"])
        err = z3.If(
            z3.Not(g.is_member(x)),
            int(E.UNKNOWN_MEMBER_ID),
            z3.If(
                p["generation"] != g.generation,
                int(E.ILLEGAL_GENERATION),
                z3.If(
                    g.status == G_PREPARING,
                    int(E.REBALANCE_IN_PROGRESS),
                    z3.If(g.status == G_EMPTY, int(E.UNKNOWN_MEMBER_ID), 0),
                ),
            ),
        )
        now = z3.Or(err != 0, g.status == G_STABLE, z3.Not(h.awaiting_sync(x)))
        answers = self._answers(pre, post, n)
        answers[n] = {
            "sq": z3.BoolVal(False),
            "sr": now,
            "sr_error": err,
            "sr_assign": lambda q, x=x, err=err: z3.And(err == 0, h.assigned(x, q)),
        }
        out.append(
            (
                f"DeliverMessage.sync_group({n})",
                z3.And(
                    net.sq,
                    fam.formula,
                    *link,
                    same_spent,
                    *self._zombies(pre, post),
                    *self._frame_net(pre, post, answers),
                ),
            )
        )
        # Heartbeat.
        err = self._heartbeat_error(g, net.hq_has, net.hq_member, net.hq_gen)
        out.append(
            (
                f"DeliverMessage.heartbeat({n})",
                z3.And(
                    net.hq,
                    *self._same_group(pre, post),
                    same_spent,
                    *self._zombies(pre, post),
                    *self._frame_net(
                        pre,
                        post,
                        {n: {"hq": z3.BoolVal(False), "hr": z3.BoolVal(True), "hr_error": err}},
                    ),
                ),
            )
        )
        # OffsetCommit.
        fam = BUILDERS["DeliverMessage.offset_commit"](g, h, self.copts)
        p = fam.params
        x = p["member"]
        link = [
            z3.Implies(net.cq_has, x == net.cq_member),
            self.within(x),
            p["generation"] == net.cq_gen,
            *[p["partitions"](q) == net.cq_parts(q) for q in self.parts],
        ]
        member = z3.And(net.cq_has, g.is_member(x))
        err = z3.If(
            z3.Not(member),
            int(E.UNKNOWN_MEMBER_ID),
            z3.If(
                p["generation"] != g.generation,
                int(E.ILLEGAL_GENERATION),
                z3.If(g.status == G_COMPLETING, int(E.REBALANCE_IN_PROGRESS), 0),
            ),
        )
        out.append(
            (
                f"DeliverMessage.offset_commit({n})",
                z3.And(
                    net.cq,
                    fam.formula,
                    *link,
                    z3.Implies(z3.Not(net.cq_has), *self._same_group(pre, post)),
                    same_spent,
                    *self._zombies(pre, post),
                    *self._frame_net(
                        pre,
                        post,
                        {n: {"cq": z3.BoolVal(False), "cr": z3.BoolVal(True), "cr_error": err}},
                    ),
                ),
            )
        )
        return out

    # ----------------------------------------------------------------- unrolling

    def extend(self) -> None:
        k = len(self.frames)
        pre, post = self.frames[-1], Frame.fresh(self.names, f"s{k}")
        self.frames.append(post)
        chosen: list[tuple[Any, str]] = []
        with grounded(self.members, self.parts):
            fams = self.step_families(pre, post)
        for name, _ in fams:
            chosen.append((z3.Bool(f"step{k}.{name}"), name))
        sels = [sel for sel, _ in chosen]
        if self.factor:
            self.solver.add(*one_of(sels, [f for _, f in fams]))
        else:
            for sel, (_, formula) in zip(sels, fams, strict=True):
                self.solver.add(z3.Implies(sel, formula))
        self.solver.add(self.within(post.group.leader))
        for n in self.names:
            self.solver.add(
                z3.Implies(post.clients[n].has_member, self.within(post.clients[n].member))
            )
        self.solver.add(z3.Or(*[s for s, _ in chosen]))
        local: dict[int, list[Any]] = {i: [] for i in range(len(self.names))}
        for sel, name in chosen:
            who = local_client(name, self.names)
            if who is not None:
                local[who].append(sel)
        if self.reduce and len(self.local) >= 2:
            # The step before the new one is no longer the last: order it after the one
            # before it (reduce_interleavings).
            self.solver.add(*reduce_interleavings(self.local[-2], self.local[-1]))
        self.choices.append(chosen)
        self.local.append(local)

    def goal(self, name: str) -> BoolRef:
        pre, post = self.frames[-2], self.frames[-1]
        with grounded(self.members, self.parts):
            return CLIENT_GOALS[name](pre.group, pre.clients, post.group, post.clients)

    def decode_state(self, model: Any, f: Frame) -> State:
        return State(
            decode(model, f.group, self.u),
            {n: _decode_client(model, f.clients[n], self.u) for n in self.names},
        )

    def path(self, model: Any, goal: str) -> ClientPath:
        states = tuple(self.decode_state(model, f) for f in self.frames)
        steps = tuple(
            next(name for sel, name in chosen if z3.is_true(model.eval(sel)))
            for chosen in self.choices
        )
        return ClientPath(goal, states, steps)

    def block(self, path: ClientPath, length: int) -> None:
        same = []
        for f, s in zip(self.frames[1 : length + 1], path.states[1 : length + 1], strict=True):
            same += pin(f.group, s.group, self.u)
            for n in self.names:
                same += pin_client(f.clients[n], s.clients[n], self.u)
        self.solver.add(z3.Not(z3.And(*same)))


def _decode_client(model: Any, c: ClientSym, u: Any) -> ClientValue:
    def b(x: Any) -> bool:
        return bool(z3.is_true(model.eval(x, model_completion=True)))

    def n(x: Any) -> int:
        return int(model.eval(x, model_completion=True).as_long())

    member = ""
    if b(c.has_member):
        v = model.eval(c.member, model_completion=True)
        member = next(mid for mid, mc in u.member_consts.items() if b(mc == v))

    def s(f: Any) -> frozenset[Any]:
        return frozenset(p for p, pc in u.partition_consts.items() if b(f(pc)))

    return ClientValue(
        status=n(c.status),
        alive=b(c.alive),
        incarnation=n(c.incarnation),
        connection=n(c.connection),
        member=member,
        generation=n(c.generation),
        leader=b(c.leader),
        owned=s(c.owned),
        assigned=s(c.assigned),
        assigned_generation=n(c.assigned_generation),
        subscribed=s(c.subscribed),
        rejoin_needed=b(c.rejoin_needed),
        needs_join_prepare=b(c.needs_join_prepare),
        assignment_stale=b(c.assignment_stale),
        group_request=n(c.group_request),
        heartbeat_in_flight=b(c.heartbeat_in_flight),
        heartbeat_generation=n(c.heartbeat_generation),
        commit_in_flight=b(c.commit_in_flight),
        stalled=b(c.stalled),
        expired=b(c.expired),
        fatal=b(c.fatal),
        cooperative=b(c.cooperative),
        kip429=b(c.kip429),
    )


@dataclass(frozen=True)
class ClientPath:
    """A symbolic path of the linked relation: its states and the step names."""

    goal: str
    states: tuple[State, ...]
    steps: tuple[str, ...]


Lifted = tuple[list[Any] | None, list[Any], int, int | None]
ClientLifter = Callable[[ClientPath, Config, int], Lifted]

MAX_IMAGES = 24
"""At most this many images of a path (:func:`partition_images`) are lifted."""


def rename_partitions(path: ClientPath, to: Mapping[Partition, Partition]) -> ClientPath:
    """``path`` with every partition ``p`` renamed ``to[p]`` (``p`` where ``to`` has none)."""

    def ps(parts: frozenset[Partition]) -> frozenset[Partition]:
        return frozenset(to.get(q, q) for q in parts)

    def state(s: State) -> State:
        g = s.group
        members = {
            mid: replace(
                mv,
                subscribed=ps(mv.subscribed),
                assigned=ps(mv.assigned),
                owned=ps(mv.owned),
                user_data=ps(mv.user_data),
            )
            for mid, mv in g.members.items()
        }
        committed = {to.get(q, q): v for q, v in g.committed.items()}
        clients = {
            n: replace(
                v,
                owned=ps(v.owned),
                assigned=ps(v.assigned),
                subscribed=ps(v.subscribed),
            )
            for n, v in s.clients.items()
        }
        return State(replace(g, members=members, committed=committed), clients)

    return ClientPath(path.goal, tuple(state(s) for s in path.states), path.steps)


def partition_images(path: ClientPath) -> Iterator[ClientPath]:
    """``path`` and its images under the renamings of each topic's partitions among
    themselves that leave its initial state as it is (at most :data:`MAX_IMAGES` in all).

    The linked relation tells no two partitions of a topic apart (its formulas range over
    the universe's partitions alike; the leader's assignor relation leaves free which of
    its partitions a member keeps and where the others go, ``classic_assignor``), so the
    image of a path under such a renaming is a path from the same initial state, with the
    same steps. The model's assignors do tell them apart (by iteration order,
    ``model.classic.assignors``), so a path whose assignments the model makes with the
    partitions the other way round lifts only as its image."""
    parts = sorted(
        {q for s in path.states for v in s.clients.values() for q in v.subscribed}
        | {q for s in path.states for q in s.group.partition_domain()}
    )
    topics: dict[str, list[Partition]] = {}
    for q in parts:
        topics.setdefault(q[0], []).append(q)
    groups = list(topics.values())
    yield path
    count = 1
    for choice in itertools.product(*[itertools.permutations(g) for g in groups]):
        to = {
            q: r
            for g, perm in zip(groups, choice, strict=True)
            for q, r in zip(g, perm, strict=True)
        }
        if all(q == r for q, r in to.items()):
            continue
        image = rename_partitions(path, to)
        if image.states[0].key() != path.states[0].key():
            continue
        if count >= MAX_IMAGES:
            return
        count += 1
        yield image


def lift_images(lifter: ClientLifter, lifted: dict[int, ClientPath]) -> ClientLifter:
    """``lifter`` tried on each of a path's images (:func:`partition_images`), the path
    itself first: the first trace found, with ``lifted[id(path)]`` the image it matches.
    When none lifts, how many states some image matched at most (None when a lift was
    cut): no path through that prefix has an image that lifts."""

    def lift(path: ClientPath, config: Config, max_states: int) -> Lifted:
        visited, best, cut = 0, -1, False
        for image in partition_images(path):
            trace, violations, seen, matched = lifter(image, config, max_states)
            visited += seen
            if trace is not None:
                lifted[id(path)] = image
                return trace, violations, visited, matched
            if matched is None:
                cut = True
            else:
                best = max(best, matched)
        return None, [], visited, None if cut else best

    return lift


def search(
    goal: str,
    depth: int,
    config: Config,
    *,
    variant: str | None = None,
    lifter: ClientLifter,
    attempts: int = DEFAULT_ATTEMPTS,
    lift_states: int = DEFAULT_LIFT_STATES,
    progress: Callable[[str], None] | None = None,
    reduce: bool = True,
    fresh: bool = True,
    factor: bool = True,
    start_depth: int = 1,
) -> Outcome:
    """Search for a path of at most ``depth`` steps of the linked relation whose last step
    violates ``goal``, the shortest first, and lift it (module docstring). ``reduce``: only
    paths whose consecutive local steps of different clients come in the clients' order
    (:func:`reduce_interleavings`); ``fresh``: every query asked of a new solver
    (``lifted_search.FreshSolver``); ``factor``: each step stated once by the conjuncts its
    families share, exactly one family a step (``factored.one_of``: the same steps);
    ``start_depth``: the goal asked only from that depth on
    (``lifted_search.search_lifted``: no path found is then inconclusive)."""
    why = supported(config)
    if why is not None:
        raise ValueError(f"config {config.name!r}: {why}")
    coordinator = ClassicOptions.of(config)
    clients = ClientOptions.of(config, variant)
    unroll = Linked(
        config, universe_of(config), coordinator, clients, reduce=reduce, fresh=fresh, factor=factor
    )
    lifted: dict[int, ClientPath] = {}
    out = search_lifted(
        unroll,
        goal,
        depth,
        config,
        lifter=lift_images(lifter, lifted),
        attempts=attempts,
        lift_states=lift_states,
        progress=progress,
        start_depth=start_depth,
    )
    if out.status == "violation":
        out.path = lifted.get(id(out.path), out.path)
    return out


_STATUS = ("UNSUBSCRIBED", "UNJOINED", "PREPARING_REBALANCE", "COMPLETING_REBALANCE", "STABLE")


def render_client(name: str, v: ClientValue) -> str:
    """One line describing a client of a path state."""

    def ps(parts: frozenset[Any]) -> str:
        return "{" + ", ".join(f"{t}-{i}" for t, i in sorted(parts)) + "}"

    flags = [
        k
        for k in ("rejoin_needed", "needs_join_prepare", "expired", "stalled", "fatal")
        if getattr(v, k)
    ]
    out = {0: "", 1: ", JoinGroup out", 2: ", SyncGroup out"}[v.group_request]
    return (
        f"client {name}: {_STATUS[v.status]}{'' if v.alive else ' (dead)'}, member "
        f"{v.member or 'none'} at generation {v.generation}, owns {ps(v.owned)}{out}"
        + (f" [{', '.join(flags)}]" if flags else "")
    )


def render_client_path(path: ClientPath) -> list[str]:
    """Lines describing a path: the initial state, then each step and its state."""

    def state(s: State) -> list[str]:
        return ["  " + x for x in render(s.group)] + [
            "  " + render_client(n, v) for n, v in sorted(s.clients.items())
        ]

    lines = ["initial:", *state(path.states[0])]
    for step, s in zip(path.steps, path.states[1:], strict=True):
        lines.append(f"{step}:")
        lines += state(s)
    return lines
