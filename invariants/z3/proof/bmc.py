"""Bounded model checking over the symbolic coordinator core, with every counterexample
replayed through the Python model's coordinator rules.

:func:`search` unrolls the relation from ``Init`` for 1, 2, … ``depth`` steps (the engine's
depth loop, ``invariants.z3.engine.search``, driving :class:`Unrolling`) and asks for
a path whose last state violates a goal (``GOALS``: the core's state properties,
``ValidTargetAssignment.Covers`` under a covering assignor, ``Lemma.UnrevokedHasPending``;
``HolderCommitsAccepted`` too where the states keep the KIP-1251 assignment epochs:
``EPOCH_GOALS``) or whose last step violates a step property. Only the families whose
steps the replay can drive are unrolled (``BMC_FAMILIES``) — a client's heartbeat (a
bump only as the rules' ``should_bump_group_epoch`` gives one for a changed subscription,
a valid request, the group never full), a leave, an offset commit, a coordinator failover
and load, the deletion of a topic and a resolution of the regular expressions — so a path
found is a path the Python coordinator can be driven along.

:func:`replay` plays the path through ``model.consumer.coordinator`` — the functions
``system.step`` runs when it delivers a request, fails over, loads the group, deletes a
topic or resolves the regular expressions, with the config's ``Rules`` (a mutant's, if
any) — on a group whose topics are one single-partition topic per partition of the path,
with the path's targets as the assignor's output. After every step the Python group's
projection must equal the path's state (else :class:`ReplayDiverged`), and at the
end the Python reading of the property must fail on the Python states: the counterexample
is the model's, not only the encoding's.

For a client-side variant the unrolling is the client layer's instead
(``invariants.z3.proof.bmc_clients``: the configuration's clients over the core, their
heartbeats, reconciliations and revocation commits), its paths replayed by the Python
clients and coordinator together (``bmc_clients.replay_clients``).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import z3

from invariants.expr import Expr, StepSnapshot, compile_expr
from invariants.properties import (
    AT_MOST_ONE_ASSIGNOR_RUN,
    GROUP_DELETED_ONLY_WHEN_EMPTY,
    HOLDER_COMMITS_ACCEPTED,
    NO_LIVE_OFFSET_EXPIRES,
    TARGET_COVERS,
    TARGET_EPOCH_ADVANCES,
    TARGET_ONLY_MEMBERS,
    Property,
)
from invariants.z3 import engine
from invariants.z3.engine import Outcome, SymPath
from invariants.z3.proof.bmc_clients import (
    CLIENT_GOALS,
    CLIENT_STEP_GOALS,
    LOCAL_FAMILIES,
    POLL_GOALS,
    ClientValue,
    ClientVars,
    Layer,
)
from invariants.z3.proof.induction import (
    LEMMAS,
    STATE_TARGETS,
    STEP_TARGETS,
    Conjunct,
    _property,
    params_of,
)
from invariants.z3.proof.reading import CLIENT, read
from invariants.z3.proof.state import (
    MEMBER,
    PARTITION,
    Concrete,
    Partition,
    SymState,
    Universe,
    decode,
    instance_name,
    project,
    project_group,
    render,
)
from invariants.z3.proof.transition import (
    PARTITION_RANK,
    Family,
    Options,
    families,
    initial,
    initial_expiry_and_deletion,
)
from model.config import Config
from model.consumer import coordinator as co
from model.consumer.coordinator import subscribed_topics
from model.consumer.system import consumer_initial
from model.ids import FrozenMap
from model.ids import FrozenMap as _FrozenMap
from model.records import ConsumerGroupHeartbeatRequest, Group, OffsetCommitRequest, TopicMetadata
from model.status import ErrorCode

REQUEST_FAMILIES = (
    "DeliverMessage.heartbeat",
    "DeliverMessage.leave",
    "DeliverMessage.offset_commit",
)
"""The families of a request reaching the coordinator (what the state-set comparison of
``invariants.z3.proof.reachable`` enumerates on the Python side)."""

BMC_FAMILIES = (
    *REQUEST_FAMILIES,
    "DeliverMessage.static_leave",
    "CoordinatorFailover",
    "CoordinatorLoaded",
    "DeleteTopic",
    "ResolveRegularExpressions",
    "ExpireOffsets",
    "DeleteGroup",
    "CompleteAssignorRun",
    "AssignmentIntervalElapses",
)
"""The families BMC unrolls: the requests (with a static member's -2 leave where the
configuration has instance ids); a coordinator failover and the new coordinator
loading the group (``CoordinatorFailover``, ``CoordinatorLoaded``); the deletion of a
topic and a new resolution of the regular expressions (``DeleteTopic``,
``ResolveRegularExpressions``: ``MetadataChange`` restricted to what the replay drives);
with KIP-211 expiry and group deletion (``Options.offset_expiry``, ``group_deletion``)
the expiry of one replay topic's offsets and a DeleteGroups request (``ExpireOffsets``,
``DeleteGroup``); with KIP-1263 assignor offload, an assignor run completing
(``CompleteAssignorRun``); with KIP-1263 assignment batching, the assignment interval
passing (``AssignmentIntervalElapses``)."""

STATE_GOALS: tuple[Conjunct, ...] = (
    *STATE_TARGETS,
    _property(TARGET_COVERS),
    *[c for c in LEMMAS if c.name == "Lemma.UnrevokedHasPending"],
)
"""The state properties BMC reads: the proof's; ``ValidTargetAssignment.Covers``, which
holds on every path because BMC's relation assumes a covering assignor
(``Options.assignor_covers``) and every change of membership or subscription bumps the
group epoch (so that the target no longer counts as current); and the proof's lemma that
a member in UNREVOKED_PARTITIONS has partitions pending revocation (proved inductive for
the reference rules, so a path violating it is the rule's doing)."""

GOALS: tuple[str, ...] = tuple(c.name for c in STATE_GOALS) + tuple(s.name for s in STEP_TARGETS)
"""Every property BMC reads, in the order it reports them."""

EPOCH_GOALS: tuple[Conjunct, ...] = (_property(HOLDER_COMMITS_ACCEPTED),)
"""The state properties BMC reads besides ``GOALS`` when the states keep the KIP-1251
assignment epochs (``Options.assignment_epochs``): ``HolderCommitsAccepted``, on the
``holder_rejected`` ghost the offset-commit family sets as ``handle_offset_commit`` sets
``Group.holder_commit_rejected``."""

EXPIRY_GOALS: tuple[Property, ...] = (NO_LIVE_OFFSET_EXPIRES,)
"""The step properties BMC reads besides ``GOALS`` when the states keep which partitions
exist (``Options.offset_expiry``): ``NoLiveOffsetExpires``."""

DELETION_GOALS: tuple[Property, ...] = (GROUP_DELETED_ONLY_WHEN_EMPTY,)
"""The step properties BMC reads besides ``GOALS`` when the states keep the deletion
fields (``Options.group_deletion``): ``GroupDeletedOnlyWhenEmpty``."""

OFFLOAD_GOALS: tuple[Conjunct, ...] = (
    _property(AT_MOST_ONE_ASSIGNOR_RUN),
    _property(TARGET_ONLY_MEMBERS),
)
"""The state properties BMC reads besides ``GOALS`` when the states keep the KIP-1263
assignor runs (``Options.assignor_offload``): ``AssignorRunsInFlight.AtMostOne`` on the
run slots, and ``ValidTargetAssignment.OnlyMembers`` (an installed run's result re-applies
the removals made while it ran)."""

OFFLOAD_STEP_GOALS: tuple[Property, ...] = (TARGET_EPOCH_ADVANCES,)
"""The step property BMC reads besides ``GOALS`` with assignor offload:
``TargetEpochAdvances`` (an installed run's result is stamped with the run's epoch)."""

_p = z3.Const("p", PARTITION)
_m = z3.Const("m", MEMBER)


class ReplayDiverged(AssertionError):
    """The Python coordinator did not reproduce a step of the symbolic path: the encoding
    and the model disagree."""


def _replayable(fam: Family, *, owned_null: bool = False) -> Any:
    """The family's formula restricted to steps the replay can drive: a heartbeat is valid,
    finds the group not full, reports its owned partitions, changes the subscription
    exactly when its subscribed partitions change and bumps the group epoch as the rules'
    ``should_bump_group_epoch`` does for it (the family's ``bump`` fact: the replay changes
    no server assignor). What a member subscribes to by name or by regular expression is
    tied to its subscribed partitions by :class:`Ghost`. The client layer's heartbeats may
    report null owned partitions (``owned_null``: the client's report is unchanged)."""
    p = fam.params
    if fam.name != "DeliverMessage.heartbeat":
        return fam.formula
    return z3.And(
        fam.formula,
        z3.Not(p["invalid"]),
        z3.Not(p["group_full"]),
        z3.BoolVal(True) if owned_null else z3.Not(p["owned_null"]),
        p["subscription_changed"] == fam.facts["changed"],
        p["bump"] == fam.facts["bump"],
    )


# --------------------------------------------------------------------------- finite domains


class Grounder:
    """Quantifier elimination on a finite universe: every ``ForAll``/``Exists`` over the
    member and partition sorts becomes the conjunction/disjunction of its instances on the
    universe's constants (which are pairwise distinct), so the formulas of a concrete
    configuration are quantifier-free (uninterpreted functions over the constants, linear
    integer arithmetic on epochs). Shared subterms are grounded once."""

    def __init__(self, universe: Universe, layer: Layer | None = None) -> None:
        self.universe = universe
        self._consts = {
            MEMBER: _elements(universe.member_consts.values(), MEMBER),
            PARTITION: _elements(universe.partition_consts.values(), PARTITION),
            # The core's snapshots have one client, the coordinator (``server_error``); the
            # client layer's, the configuration's clients.
            CLIENT: list(layer.consts)
            if layer is not None and layer.consts
            else [z3.Const("client:coordinator", CLIENT)],
        }
        # A client's member id is a constant of the layer: read in place.
        self._cmem = layer.cmem if layer is not None else None
        self._inline = layer.inline() if layer is not None else {}
        self._memo: dict[int, tuple[Any, Any]] = {}

    def axioms(self) -> list[Any]:
        """The universe's constants are pairwise distinct."""
        return [z3.Distinct(*cs) for cs in self._consts.values() if len(cs) > 1]

    def within(self, x: Any) -> Any:
        """``x`` (a member or partition term) is one of the universe's constants."""
        return z3.Or(*[x == c for c in self._consts[x.sort()]])

    def __call__(self, e: Any) -> Any:
        key = e.get_id()
        hit = self._memo.get(key)
        if hit is not None:
            return hit[1]
        out = self._ground(e)
        self._memo[key] = (e, out)  # keeps ``e`` alive, so its id is not reused
        return out

    def _ground(self, e: Any) -> Any:
        if z3.is_quantifier(e):
            sorts = [e.var_sort(i) for i in range(e.num_vars())]
            body = e.body()
            instances = [
                self(z3.substitute_vars(body, *reversed(combo)))
                for combo in itertools.product(*[self._consts[s] for s in sorts])
            ]
            if e.is_forall():
                return z3.And(*instances) if instances else z3.BoolVal(True)
            return z3.Or(*instances) if instances else z3.BoolVal(False)
        if not z3.is_app(e) or e.num_args() == 0:
            return e
        args = [e.arg(i) for i in range(e.num_args())]
        grounded = [self(a) for a in args]
        if self._cmem is not None and e.decl().eq(self._cmem):
            return self._inline[str(grounded[0])]
        if all(g.eq(a) for g, a in zip(grounded, args, strict=True)):
            return e
        return e.decl()(*grounded)


class Bitblaster:
    """A grounded formula (no quantifier, every member or partition argument a universe
    constant) as a formula over Booleans and bit-vectors, for a SAT-based solver: each
    application of a state field or parameter to constants becomes a variable of its own,
    an equation between two universe constants is decided (they are distinct), and every
    integer is a signed bit-vector of ``width`` bits. The width must hold every epoch a
    path can reach (the initial group epoch plus one per step, and the previous epoch −1):
    :func:`width_for` picks it from the depth; arithmetic never leaves that range on a
    path, and every path found is replayed in the Python model anyway."""

    def __init__(self, universe: Universe, width: int, layer: Layer | None = None) -> None:
        self.width = width
        self._ids = {
            c.get_id()
            for c in [
                *universe.member_consts.values(),
                *universe.partition_consts.values(),
                *(layer.consts if layer is not None else ()),
            ]
        }
        self._sorts = (MEMBER, PARTITION, *((CLIENT,) if layer is not None else ()))
        self._memo: dict[int, tuple[Any, Any]] = {}

    def __call__(self, e: Any) -> Any:
        key = e.get_id()
        hit = self._memo.get(key)
        if hit is not None:
            return hit[1]
        out = self._blast(e)
        self._memo[key] = (e, out)
        return out

    def _var(self, e: Any) -> Any:
        if z3.is_bool(e):
            return z3.Bool(str(e))
        if z3.is_int(e):
            return z3.BitVec(str(e), self.width)
        raise ValueError(f"a {e.sort()} term outside the universe: {e}")

    def _blast(self, e: Any) -> Any:
        k = e.decl().kind()
        if z3.is_int_value(e):
            return z3.BitVecVal(e.as_long(), self.width)
        if k == z3.Z3_OP_UNINTERPRETED:
            if e.num_args() == 0 and e.sort() in (MEMBER, PARTITION, CLIENT):
                return e
            return self._var(e)
        args = [self(e.arg(i)) for i in range(e.num_args())]
        if k in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) and e.arg(0).sort() in self._sorts:
            ids = [e.arg(i).get_id() for i in range(e.num_args())]
            if all(i in self._ids for i in ids):
                same = len(set(ids)) < len(ids)
                return z3.BoolVal(same if k == z3.Z3_OP_EQ else not same)
            raise ValueError(f"a member or partition term outside the universe: {e}")
        ops: dict[int, Callable[..., Any]] = {
            z3.Z3_OP_TRUE: lambda: z3.BoolVal(True),
            z3.Z3_OP_FALSE: lambda: z3.BoolVal(False),
            z3.Z3_OP_AND: z3.And,
            z3.Z3_OP_OR: z3.Or,
            z3.Z3_OP_NOT: z3.Not,
            z3.Z3_OP_IMPLIES: z3.Implies,
            z3.Z3_OP_XOR: z3.Xor,
            z3.Z3_OP_EQ: lambda a, b: a == b,
            z3.Z3_OP_DISTINCT: z3.Distinct,
            z3.Z3_OP_ITE: z3.If,
            z3.Z3_OP_ADD: lambda *a: functools.reduce(lambda x, y: x + y, a),
            z3.Z3_OP_SUB: lambda *a: functools.reduce(lambda x, y: x - y, a),
            z3.Z3_OP_UMINUS: lambda a: -a,
            z3.Z3_OP_LE: lambda a, b: a <= b,
            z3.Z3_OP_LT: lambda a, b: a < b,
            z3.Z3_OP_GE: lambda a, b: a >= b,
            z3.Z3_OP_GT: lambda a, b: a > b,
        }
        op = ops.get(k)
        if op is None:
            raise ValueError(f"no bit-vector reading of {e.decl()} in {e}")
        return op(*args)


def width_for(depth: int, group_epoch: int = 1) -> int:
    """Bits of a signed bit-vector that holds every epoch a path of ``depth`` steps can
    reach from a group at ``group_epoch``, with room to spare."""
    return max(8, (4 * (group_epoch + depth + 2)).bit_length() + 1)


class _Reading:
    """A model of the bit-blasted unrolling, read as a model of the symbolic states (what
    ``decode`` and ``params_of`` expect): a term is grounded, its member parameters bound
    to the constants the step chose, and bit-blasted, then evaluated; bit-vectors are read
    as signed integers."""

    def __init__(self, model: Any, run: Unrolling, binding: list[tuple[Any, Any]]) -> None:
        self.model, self.run, self.binding = model, run, binding

    def eval(self, x: Any, model_completion: bool = True) -> Any:
        if self.binding:
            x = z3.substitute(x, *self.binding)
        g = self.run.ground(x)
        if g.sort() in (MEMBER, PARTITION):
            return g
        assert self.run.blast is not None
        v = self.model.eval(self.run.blast(g), model_completion=True)
        if z3.is_bv_value(v):
            return z3.IntVal(v.as_signed_long())
        return v


def _elements(consts: Iterable[Any], sort: Any) -> list[Any]:
    cs = list(consts)
    # A sort is never empty: one spare element no field mentions stands for an empty domain.
    return cs if cs else [z3.Const(f"spare.{sort}", sort)]


def universe_of(config: Config) -> Universe:
    """The finite universe of a configuration: its clients' member ids (and one more per
    allowed restart: a restarted client joins under a new id) and its topics' partitions."""
    value = project(consumer_initial(config))
    members = list(value.extra_members)
    members += [f"restart{i}" for i in range(config.max_restarts)]
    instances = [i for c in config.clients for i in (c.instance_id, c.alt_instance_id) if i]
    universe = Universe.of(members, value.extra_partitions, instances)
    own = {
        c.name: frozenset(
            universe.instances[i] if i else 0 for i in (c.instance_id, c.alt_instance_id) if i
        )
        or frozenset({0})
        for c in config.clients
    }
    return replace(universe, client_instances=own)


# --------------------------------------------------------------------------- unrolling


@dataclass(frozen=True)
class Ghost:
    """What the replay needs of a state and the abstraction does not keep: the replay's
    single-partition topics that exist (``present``), and each member's subscription as
    the client sends it — topic names (``named``), a regular expression or none (``rx``)
    and the topics it matches (``pattern``) — with the group's resolution of it (``res``:
    one is stored; ``rset``: the topics it resolved to). ``glue`` ties them to the
    abstraction's subscribed partitions as ``coordinator.subscribed_topics`` does."""

    present: Any
    named: Any
    rx: Any
    pattern: Any
    res: Any
    rset: Any

    @staticmethod
    def fresh(tag: str) -> Ghost:
        M, P, B = MEMBER, PARTITION, z3.BoolSort()
        return Ghost(
            z3.Function(f"present.{tag}", P, B),
            z3.Function(f"named.{tag}", M, P, B),
            z3.Function(f"rx.{tag}", M, B),
            z3.Function(f"pattern.{tag}", M, P, B),
            z3.Function(f"res.{tag}", M, B),
            z3.Function(f"rset.{tag}", M, P, B),
        )

    def glue(self, s: SymState) -> Any:
        return z3.ForAll(
            [_m, _p],
            s.subscribed(_m, _p)
            == z3.And(
                s.is_member(_m),
                self.present(_p),
                z3.Or(
                    self.named(_m, _p),
                    z3.And(self.rx(_m), self.res(_m), self.rset(_m, _p)),
                ),
            ),
        )

    def same(self, other: Ghost, *, skip: frozenset[str] = frozenset()) -> Any:
        out = []
        if "present" not in skip:
            out.append(z3.ForAll([_p], other.present(_p) == self.present(_p)))
        for name in ("named", "pattern", "rset"):
            if name not in skip:
                f, g = getattr(self, name), getattr(other, name)
                out.append(z3.ForAll([_m, _p], g(_m, _p) == f(_m, _p)))
        for name in ("rx", "res"):
            if name not in skip:
                f, g = getattr(self, name), getattr(other, name)
                out.append(z3.ForAll([_m], g(_m) == f(_m)))
        return z3.And(*out)


class Unrolling(engine.Unroller[SymState]):
    """The relation unrolled from ``Init`` in one incremental solver, one step at a time.

    With a ``universe`` (a concrete configuration) the unrolling is propositional: each
    family is split by the member its step is for (one disjunct per member of the
    universe), every quantifier is expanded on the universe (:class:`Grounder`) and the
    result bit-blasted (:class:`Bitblaster`, integers of ``width_for(max_depth)`` bits),
    so the solver sees Booleans and small bit-vectors only. Without one, the sorts stay
    uninterpreted and the quantifiers stay (groups of any size, with quantifier
    instantiation: slow beyond a few steps). ``stutter`` adds ``Unchanged`` to the
    families, so that the last state ranges over the states reachable in *at most* the
    unrolled number of steps. The engine's unroller (``invariants.z3.engine.Unroller``):
    the choices of a step are ``(selector, family, binding)``; with its goals
    (:meth:`asking`), the relation the engine's depth loop drives (``engine.Symbolic``)."""

    def __init__(
        self,
        options: Options,
        *,
        universe: Universe | None = None,
        group_epoch: int | None = None,
        stutter: bool = False,
        timeout_ms: int = 60_000,
        max_depth: int = 64,
        names: tuple[str, ...] = REQUEST_FAMILIES,
        layer: Layer | None = None,
    ) -> None:
        self.options = options
        self.universe = universe
        self.layer = layer
        if layer is not None and universe is None:
            raise ValueError("the client layer unrolls on a finite universe only")
        self.max_depth = max_depth
        self.names = names + (("Unchanged",) if stutter else ())
        self.solver = z3.SolverFor("QF_BV") if universe is not None else z3.Solver()
        self.solver.set("timeout", timeout_ms)
        self.epochs = options.assignment_epochs
        self.static = options.static_members
        self.expiry = options.offset_expiry
        self.deletion = options.group_deletion
        self.slots = options.run_slots
        self.batching = options.batching
        self.states = [self.fresh(0)]
        self.choices = []
        self.state_goals: dict[str, Expr] = {}
        self.step_goals: dict[str, Expr] = {}
        self.grounder = Grounder(universe, layer) if universe is not None else None
        self.blast = (
            Bitblaster(universe, width_for(max_depth, group_epoch or 1), layer)
            if universe is not None
            else None
        )
        self.group_epoch = group_epoch
        self.clients: list[ClientVars] = []
        self._owners: list[list[tuple[Any, int, bool]]] = []
        # The grounder and the bit-blaster before the initial constraint, which they encode.
        self.initial(self.states[0])

    def fresh(self, k: int) -> SymState:
        return SymState.fresh(
            f"s{k}",
            self.epochs,
            self.static,
            self.slots,
            expiry=self.expiry,
            deletion=self.deletion,
            batching=self.batching,
        )

    def initial(self, s0: SymState) -> None:
        """``Init``, at ``group_epoch`` when given; the ghost's: every replay topic exists,
        nobody subscribes to anything; the client layer's initial clients."""
        self.add(initial(s0))
        g0 = Ghost.fresh("s0")
        self.ghosts = [g0]
        self.add(z3.ForAll([_p], g0.present(_p)))
        self.add(z3.ForAll([_m], z3.And(z3.Not(g0.rx(_m)), z3.Not(g0.res(_m)))))
        self.add(g0.glue(s0))
        self.add(initial_expiry_and_deletion(s0))
        self.add(self._present_glue(s0, g0))
        if self.universe is not None:
            # The assignor lists partitions in the universe's order (the replay's topics
            # p0, p1, … sort that way).
            for i, c in enumerate(self.universe.partition_consts.values()):
                self.add(PARTITION_RANK(c) == i)
        if self.group_epoch is not None:
            self.add(s0.group_epoch == self.group_epoch)
        if self.layer is not None:
            self.clients.append(self.layer.fresh("s0"))
            self.add(self.layer.initial(self.clients[0]))

    def asking(self, state: dict[str, Expr], step: dict[str, Expr]) -> Unrolling:
        """The unrolling with the goals :meth:`goal` reads (``state``: name → a state
        property's ``invariants.expr`` form, ``step``: name → a step property's)."""
        self.state_goals, self.step_goals = state, step
        return self

    def goal(self, name: str) -> Any:
        """The negation of goal ``name`` (:meth:`asking`) read (``reading.read``) on the last
        state, or on the last step, with the clients' when the unrolling has the client
        layer, as the solver reads it (:meth:`encode`)."""
        k, states = self.depth, self.states
        if name in self.state_goals:
            clients: dict[Any, Any] | None = (
                {"now": self.clients[k]} if self.layer is not None else None
            )
            negated = z3.Not(read(self.state_goals[name], now=states[k], clients=clients))
        else:
            sides: dict[Any, Any] | None = (
                {"pre": self.clients[k - 1], "post": self.clients[k]}
                if self.layer is not None
                else None
            )
            expr = self.step_goals[name]
            negated = z3.Not(read(expr, pre=states[k - 1], post=states[k], clients=sides))
        return self.encode(negated)

    def block(self, path: Any, steps: int) -> None:
        raise NotImplementedError("the core's paths are replayed by the caller, not lifted")

    def ground(self, e: Any) -> Any:
        return self.grounder(e) if self.grounder is not None else e

    def encode(self, e: Any) -> Any:
        """``e`` as the solver reads it."""
        g = self.ground(e)
        return self.blast(g) if self.blast is not None else g

    def add(self, e: Any) -> None:
        self.solver.add(self.encode(e))

    @property
    def depth(self) -> int:
        return len(self.states) - 1

    def _cases(self, f: Family) -> list[list[tuple[Any, Any]]]:
        """The bindings of the family's member parameters to the universe's members
        (one empty binding without a universe)."""
        if self.universe is None:
            return [[]]
        xs = [
            x
            for x in f.params.values()
            if isinstance(x, z3.ExprRef)
            and not z3.is_func_decl(x)
            and x.sort() in (MEMBER, PARTITION)
        ]
        consts = {
            MEMBER: list(self.universe.member_consts.values()),
            PARTITION: list(self.universe.partition_consts.values()),
        }
        choices = [consts[x.sort()] for x in xs]
        return [list(zip(xs, combo, strict=True)) for combo in itertools.product(*choices)]

    def extend(self) -> None:
        """Unroll one more step."""
        if self.depth >= self.max_depth:
            raise ValueError(f"the unrolling was sized for {self.max_depth} steps")
        super().extend()

    def transition(self, pre: SymState, post: SymState, k: int) -> list[tuple[Any, ...]]:
        """The ghost after the step, then the families (``names``) as the replay drives
        them, each split by the members its step is for on a universe — or, with the
        client layer, the layer's steps (:meth:`_client_steps`)."""
        i = k - 1
        g, h = self.ghosts[i], Ghost.fresh(f"s{k}")
        self.ghosts.append(h)
        self.add(h.glue(post))
        self.add(self._present_glue(post, h))
        if self.layer is not None:
            return self._client_steps(pre, post, g, h)
        picks: list[tuple[Any, ...]] = []
        steps = [*families(pre, post, self.options), *self._metadata(pre, post, g, h)]
        for step in steps:
            if step.name not in self.names:
                continue
            f = step
            if f.name == "ExpireOffsets":
                f = self._one_topic(f)
            formula = _replayable(f)
            if self.expiry and f.name == "DeliverMessage.offset_commit":
                formula = z3.And(formula, self._commits_held(f, pre))
            if "instance" in f.params and self.universe is not None:
                # A request names one of the configuration's instance ids, or none.
                inst = f.params["instance"]
                numbers = self.universe.instances.values()
                formula = z3.And(formula, z3.Or(inst == 0, *[inst == n for n in numbers]))
            if f.name == "DeliverMessage.heartbeat":
                f, kept = self._heartbeat_ghost(f, pre, g, h)
                formula = z3.And(formula, kept)
            elif f.name == "DeliverMessage.leave":
                # remove_member drops every resolution of a regular expression.
                x = f.params["member"]
                formula = z3.And(
                    formula,
                    g.same(h, skip=frozenset({"res"})),
                    z3.If(
                        z3.And(pre.is_member(x), z3.Not(post.is_member(x))),
                        z3.ForAll([_m], z3.Not(h.res(_m))),
                        z3.ForAll([_m], h.res(_m) == g.res(_m)),
                    ),
                )
            elif f.name not in ("DeleteTopic", "ResolveRegularExpressions"):
                formula = z3.And(formula, g.same(h))
            if f.name == "CompleteAssignorRun":
                # reapply_changes keeps the partitions of the replay's topics that exist.
                existing = f.params["existing"]
                formula = z3.And(formula, z3.ForAll([_p], existing(_p) == g.present(_p)))
            for binding in self._cases(f):
                who = ",".join(str(c) for _, c in binding)
                flag = z3.Bool(f"step{i}:{f.name}:{who}")
                picks.append((flag, f, binding))
                body = z3.substitute(formula, *binding) if binding else formula
                if self.slots and self.static and "instance" in f.params:
                    body = z3.And(body, self._own_instance(f, binding))
                self.solver.add(z3.Implies(flag, self.encode(body)))
        return self.one_of(picks)

    @staticmethod
    def _present_glue(s: SymState, g: Ghost) -> Any:
        """The partitions that exist are the replay's topics that exist."""
        if s.present is None:
            return z3.BoolVal(True)
        return z3.ForAll([_p], s.present(_p) == g.present(_p))

    @staticmethod
    def _one_topic(f: Family) -> Family:
        """``ExpireOffsets`` of one replay topic: its one partition (``topic``, bound to a
        partition of the universe like every partition parameter)."""
        tag = f.params["topic"].name().split("@")[-1]
        d = z3.Const(f"ExpireOffsets.partition@{tag}", PARTITION)
        topic = f.params["topic"]
        formula = z3.And(f.formula, z3.ForAll([_p], topic(_p) == (_p == d)))
        return replace(f, formula=formula, params={"topic": d})

    @staticmethod
    def _commits_held(f: Family, pre: SymState) -> Any:
        """With KIP-211 expiry, a commit names only partitions its member holds at the
        coordinator, as the model's clients commit what they own and give up (on a
        revocation or before a leave): the paths whose expired offsets a model run can
        have committed."""
        cm, parts = f.params["member"], f.params["partitions"]
        return z3.ForAll([_p], z3.Implies(parts(_p), pre.holds(cm, _p)))

    def _own_instance(self, f: Family, binding: list[tuple[Any, Any]]) -> Any:
        """With assignor offload and static members: a configured client's request carries
        its own instance id (``Universe.client_instances``), so that a path's static
        replacement is one of a restarted client, which lifts to a model trace; a
        restarted client's member id may carry any."""
        assert self.universe is not None
        names = {str(c): name for name, c in self.universe.member_consts.items()}
        member = next((c for x, c in binding if x.eq(f.params["member"])), None)
        allowed = self.universe.client_instances.get(names.get(str(member), ""))
        if allowed is None:
            return z3.BoolVal(True)
        return z3.Or(*[f.params["instance"] == k for k in sorted(allowed)])

    def _client_steps(
        self, pre: SymState, post: SymState, g: Ghost, h: Ghost
    ) -> list[tuple[Any, ...]]:
        """One step of the client layer (``bmc_clients.Layer.steps``) instead of the core's
        requests: a client's heartbeat (sent, delivered, answered), reconciliation or
        revocation commit (delivered, answered)."""
        assert self.layer is not None
        i = self.depth - 1
        a, b = self.clients[i], self.layer.fresh(f"s{i + 1}")
        self.clients.append(b)

        def heartbeat_of(f: Family) -> tuple[Family, Any]:
            f2, kept = self._heartbeat_ghost(f, pre, g, h)
            return f2, z3.And(_replayable(f, owned_null=True), kept)

        picks: list[tuple[Any, ...]] = []
        owner: list[tuple[Any, int, bool]] = []
        index = {str(m): k for k, m in enumerate(self.layer.members)}
        for f, binding, step in self.layer.steps(pre, post, a, b, self.options, heartbeat_of):
            formula = step
            if f.name not in ("ClientHeartbeat", "DeliverHeartbeat"):
                formula = z3.And(step, g.same(h))
            who = ",".join(str(c) for _, c in binding)
            flag = z3.Bool(f"step{i}:{f.name}:{who}")
            picks.append((flag, f, binding))
            owner.append((flag, index[str(binding[0][1])], f.name in LOCAL_FAMILIES))
            self.solver.add(z3.Implies(flag, self.encode(z3.substitute(formula, *binding))))
        self.one_of(picks)
        # Partial-order reduction: two steps of different clients, one of them local to
        # its client (LOCAL_FAMILIES), commute (neither reads what the other writes), so
        # every path can be reordered, at the same length and to the same last state,
        # into one where such neighbours come in the order of their clients (the
        # lexicographic normal form of its trace): the others are left out.
        for f0, k0, l0 in self._owners[-1] if self._owners else []:
            for f1, k1, l1 in owner:
                if k1 < k0 and (l0 or l1):
                    self.solver.add(z3.Not(z3.And(f0, f1)))
        self._owners.append(owner)
        return picks

    def _heartbeat_ghost(self, f: Family, pre: SymState, g: Ghost, h: Ghost) -> tuple[Family, Any]:
        """The heartbeat with the subscription its client sends — topic names (of topics
        that exist), and for a joining member a regular expression or none (a member keeps
        its expression: the replay's clients never change it) — and the ghost after it."""
        tag = f.params["member"].decl().name().split("@")[-1]
        hm = f.params["member"]
        names = z3.Function(f"DeliverMessage.heartbeat.names@{tag}", PARTITION, z3.BoolSort())
        regex = z3.Bool(f"DeliverMessage.heartbeat.regex@{tag}")
        pattern = z3.Function(f"DeliverMessage.heartbeat.pattern@{tag}", PARTITION, z3.BoolSort())
        joins = z3.Not(pre.is_member(hm))
        accepted = f.facts["accepted"]
        sub = f.params["subscribed"]
        resolved = z3.And(regex, z3.Not(joins), g.res(hm))
        kept = z3.And(
            z3.ForAll([_p], z3.Implies(names(_p), g.present(_p))),
            # What the request subscribes to (coordinator.subscribed_topics), whether or
            # not the coordinator takes it.
            z3.ForAll(
                [_p],
                sub(_p)
                == z3.And(g.present(_p), z3.Or(names(_p), z3.And(resolved, g.rset(hm, _p)))),
            ),
            z3.Implies(
                z3.Not(joins),
                z3.And(
                    regex == g.rx(hm),
                    z3.ForAll([_p], pattern(_p) == z3.And(g.rx(hm), g.pattern(hm, _p))),
                ),
            ),
            z3.Implies(z3.Not(regex), z3.ForAll([_p], z3.Not(pattern(_p)))),
            z3.If(
                accepted,
                z3.And(
                    g.same(h, skip=frozenset({"named", "rx", "pattern", "res"})),
                    z3.ForAll(
                        [_m, _p],
                        z3.And(
                            h.named(_m, _p) == z3.If(_m == hm, names(_p), g.named(_m, _p)),
                            h.pattern(_m, _p) == z3.If(_m == hm, pattern(_p), g.pattern(_m, _p)),
                        ),
                    ),
                    z3.ForAll(
                        [_m],
                        z3.And(
                            h.rx(_m) == z3.If(_m == hm, regex, g.rx(_m)),
                            # A new member's expression (the replay makes it unique to the
                            # member) has no resolution yet.
                            h.res(_m) == z3.If(z3.And(_m == hm, joins), False, g.res(_m)),
                        ),
                    ),
                ),
                g.same(h),
            ),
        )
        if self.static:
            # A static replacement's copy would keep the holder's regular expression: with
            # instance ids the replay subscribes by name only (explore refuses both).
            kept = z3.And(kept, z3.Not(regex))
        params = {**f.params, "names": names, "regex": regex, "pattern": pattern}
        return replace(f, params=params), kept

    def _metadata(self, pre: SymState, post: SymState, g: Ghost, h: Ghost) -> list[Family]:
        """``MetadataChange`` restricted to what the replay can drive: ``DeleteTopic`` of
        one of its single-partition topics (``system._delete_topic``: the partition leaves
        every member's subscription, its committed offsets are dropped) and
        ``ResolveRegularExpressions`` (``coordinator.resolve_regular_expressions``: every
        expression in use resolved against the topics that exist). Each bumps the group
        epoch as its Python function does under the options' rules, and nothing else
        moves."""
        out: list[Family] = []
        variant = self.options.variant
        if "DeleteTopic" in self.names:
            rules = self.options
            if variant == "regex-resolution-without-bump":
                rules = replace(rules, variant=None)
            meta = next(f for f in families(pre, post, rules) if f.name == "MetadataChange")
            d = z3.Const(f"DeleteTopic.topic@{post.tag}", PARTITION)
            moved = z3.Exists([_m], z3.And(pre.is_member(_m), pre.subscribed(_m, d)))
            bump = z3.And(moved, z3.BoolVal(variant != "no-bump-on-metadata-change"))
            formula = z3.And(
                meta.formula,
                g.present(d),
                g.same(h, skip=frozenset({"present"})),
                z3.ForAll([_p], h.present(_p) == z3.And(g.present(_p), _p != d)),
                z3.ForAll(
                    [_m, _p],
                    post.committed_by(_m, _p) == z3.And(pre.committed_by(_m, _p), _p != d),
                ),
                # on_metadata_change bumps for a topic a member subscribes to (no racks).
                post.group_epoch == pre.group_epoch + z3.If(bump, 1, 0),
            )
            out.append(Family("DeleteTopic", formula, {"topic": d}))
        if "ResolveRegularExpressions" in self.names:
            rules = self.options
            if variant == "no-bump-on-metadata-change":
                rules = replace(rules, variant=None)
            meta = next(f for f in families(pre, post, rules) if f.name == "MetadataChange")
            used = z3.And(pre.is_member(_m), g.rx(_m))
            changed = z3.Exists(
                [_m],
                z3.And(
                    used,
                    z3.Or(
                        z3.Not(g.res(_m)),
                        z3.Exists(
                            [_p],
                            g.rset(_m, _p) != z3.And(g.pattern(_m, _p), g.present(_p)),
                        ),
                    ),
                ),
            )
            bump = z3.And(changed, z3.BoolVal(variant != "regex-resolution-without-bump"))
            formula = z3.And(
                meta.formula,
                g.same(h, skip=frozenset({"res", "rset"})),
                z3.ForAll(
                    [_m, _p],
                    z3.And(
                        h.res(_m) == used,
                        h.rset(_m, _p) == z3.And(g.pattern(_m, _p), g.present(_p)),
                        post.committed_by(_m, _p) == pre.committed_by(_m, _p),
                    ),
                ),
                post.group_epoch == pre.group_epoch + z3.If(bump, 1, 0),
            )
            out.append(Family("ResolveRegularExpressions", formula, {}))
        return out

    def reading(self, model: Any, binding: list[tuple[Any, Any]] | None = None) -> Any:
        """A model of the solver as ``decode`` and ``params_of`` read models."""
        if self.universe is None:
            return model
        return _Reading(model, self, binding or [])

    def decode(self, model: Any, i: int) -> Concrete:
        """The ``i``-th state of a model."""
        return decode(self.reading(model), self.states[i], self.universe)[0]

    def path(self, model: Any, goal: str) -> SymPath[Concrete]:
        """The path of a model of the unrolling."""
        decoded = []
        names: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
        for s in self.states:
            value, members, partitions = decode(self.reading(model), s, self.universe)
            decoded.append(value)
            names = (members, partitions)
        steps = []
        for picks in self.choices:
            _flag, fam, binding = next(
                (fl, f, b)
                for fl, f, b in picks
                if z3.is_true(model.eval(fl, model_completion=True))
            )
            steps.append((fam.name, params_of(self.reading(model, binding), fam, *names)))
        clients: tuple[tuple[ClientValue, ...], ...] = ()
        if self.layer is not None:
            assert self.universe is not None
            clients = tuple(
                self.layer.decode(self.reading(model), a, self.universe) for a in self.clients
            )
        return SymPath(goal, tuple(decoded), tuple(steps), clients)


def search(
    goal: str,
    depth: int,
    options: Options,
    *,
    timeout_ms: int = 60_000,
    universe: Universe | None = None,
    group_epoch: int | None = None,
    layer: Layer | None = None,
) -> Outcome:
    """The shortest path (in steps, up to ``depth``) to a violation of ``goal``."""
    return search_all(
        [goal],
        depth,
        options,
        timeout_ms=timeout_ms,
        universe=universe,
        group_epoch=group_epoch,
        layer=layer,
    )[goal]


def bmc_unrolling(
    options: Options,
    depth: int,
    *,
    universe: Universe | None,
    group_epoch: int | None,
    timeout_ms: int,
    layer: Layer | None = None,
) -> Unrolling:
    """The unrolling ``explore --engine bmc`` searches: the BMC families (``BMC_FAMILIES``)
    up to ``depth`` steps, every new target assumed to cover the subscribed partitions
    (``Options.assignor_covers``), the client layer's steps too when ``layer`` is given."""
    return Unrolling(
        replace(options, assignor_covers=True),
        universe=universe,
        group_epoch=group_epoch,
        timeout_ms=timeout_ms,
        max_depth=depth,
        names=BMC_FAMILIES,
        layer=layer,
    )


def goal_table(options: Options, layer: Layer | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The state goals (name → ``Conjunct``) and the step goals (name → ``Property``) BMC
    reads under ``options``, with the client layer's when ``layer`` is given."""
    state_goals = {c.name: c for c in STATE_GOALS}
    if layer is not None:
        state_goals.update({c.name: c for c in (*CLIENT_GOALS, *POLL_GOALS)})
    if options.assignment_epochs:
        state_goals.update({c.name: c for c in EPOCH_GOALS})
    step_goals: dict[str, Any] = {s.name: s for s in STEP_TARGETS}
    if options.offset_expiry:
        step_goals.update({s.name: s for s in EXPIRY_GOALS})
    if options.group_deletion:
        step_goals.update({s.name: s for s in DELETION_GOALS})
    if options.assignor_offload:
        state_goals.update({c.name: c for c in OFFLOAD_GOALS})
        step_goals.update({s.name: s for s in OFFLOAD_STEP_GOALS})
    if layer is not None:
        step_goals.update({c.name: c for c in CLIENT_STEP_GOALS})
    return state_goals, step_goals


def search_all(
    goals: Iterable[str],
    depth: int,
    options: Options,
    *,
    timeout_ms: int = 60_000,
    universe: Universe | None = None,
    group_epoch: int | None = None,
    layer: Layer | None = None,
) -> dict[str, Outcome]:
    """For each goal, the shortest path (in steps, up to ``depth``) to a violation of it:
    the engine's search (``invariants.z3.engine.search``) of the BMC unrolling
    (:func:`bmc_unrolling`), built once for every goal, each goal asked under an assumption
    literal of its own (push/pop scopes would drop what the solver learns refuting one
    goal: 2.5 × slower on MUT2). A goal's seconds are the unrolling's plus its own
    queries'. With a client ``layer`` the unrolling is the client layer's (``bmc_clients``)
    and its goals (``CLIENT_GOALS``) may be asked too."""
    state_goals, step_goals = goal_table(options, layer)
    names = list(goals)
    for goal in names:
        if goal not in state_goals and goal not in step_goals:
            raise ValueError(f"{goal!r} is not a property of the core")
    run = bmc_unrolling(
        options,
        depth,
        universe=universe,
        group_epoch=group_epoch,
        timeout_ms=timeout_ms,
        layer=layer,
    )
    state = {name: c.expr for name, c in state_goals.items()}
    step = {name: p.expr for name, p in step_goals.items() if p.expr is not None}
    return engine.search(run.asking(state, step), names, depth)


# --------------------------------------------------------------------------- replay


def _tp(name: str | Partition) -> tuple[str, int]:
    """A path partition (``p3`` or ``("p", 3)``) as the replay's topic partition."""
    i = int(name[1:]) if isinstance(name, str) else name[1]
    return (f"p{i}", 0)


def _abstract(value: Concrete) -> Concrete:
    """A path state with partitions named as the replay names them."""

    def ps(parts: frozenset[Partition]) -> frozenset[Partition]:
        return frozenset(_tp(p) for p in parts)

    members = {
        mid: replace(
            mv, assigned=ps(mv.assigned), revoking=ps(mv.revoking), subscribed=ps(mv.subscribed)
        )
        for mid, mv in value.members.items()
    }
    since = value.since
    runs = value.runs
    return Concrete(
        members=members,
        target=frozenset((m, _tp(p)) for m, p in value.target),
        committed={_tp(p): c for p, c in value.committed.items()},
        partition_epochs={_tp(p): e for p, e in value.partition_epochs.items()},
        group_epoch=value.group_epoch,
        assignment_epoch=value.assignment_epoch,
        loading=value.loading,
        since=None if since is None else {(m, _tp(p)): e for (m, p), e in since.items()},
        holder_rejected=value.holder_rejected,
        present=None if value.present is None else frozenset(_tp(p) for p in value.present),
        deleted=value.deleted,
        deletions=value.deletions,
        interval_pending=value.interval_pending,
        runs=None
        if runs is None
        else tuple(
            (e, frozenset((m, _tp(p)) for m, p in result), started, gone)
            for e, result, started, gone in runs
        ),
    )


def _comparable(value: Concrete) -> tuple[object, ...]:
    """The fields the relation pins: a non-member's integers are open in the abstraction,
    and a committed offset's epoch of a partition never committed does not exist."""
    return (
        value.members,
        value.target,
        dict(value.committed),
        dict(value.partition_epochs),
        value.group_epoch,
        value.assignment_epoch,
        value.loading,
        None if value.since is None else dict(value.since),
        value.holder_rejected,
        value.present,
        value.deleted,
        value.deletions,
        value.runs,
        value.interval_pending,
    )


def replay_topics(n_partitions: int) -> Any:
    """The replay's topics: one single-partition topic ``p<i>`` per partition."""
    return FrozenMap((f"p{i}", TopicMetadata(f"p{i}", 1)) for i in range(max(n_partitions, 1)))


def same_as_path(i: int, family: str, now: Concrete, after: Concrete) -> None:
    """Raise ``ReplayDiverged`` unless the replayed group ``now`` is the path's state after
    step ``i`` (``after``)."""

    if _comparable(now) != _comparable(_abstract(after)):
        raise ReplayDiverged(
            f"step {i + 1} ({family}): the Python coordinator reached "
            + "; ".join(render(now))
            + " where the path has "
            + "; ".join(render(_abstract(after)))
        )


def replay_start(path: SymPath[Concrete]) -> tuple[Any, Any]:
    """The replay's empty group at the path's first epochs, and its topics (one
    single-partition topic per partition any state of the path names)."""
    n_parts = max((len(s.partition_domain()) for s in path.states), default=0)
    first = path.states[0]
    group = Group(
        group_epoch=first.group_epoch,
        assignment_epoch=first.assignment_epoch,
        target_assignment=FrozenMap(),
        members=FrozenMap(),
        partition_epochs=FrozenMap(),
        committed_offsets=FrozenMap(),
    )
    return group, replay_topics(n_parts)


def replay_projection(
    group: Any,
    topics: Any,
    epochs: bool = False,
    offload: bool = False,
    *,
    expiry: bool = False,
    deletion: bool = False,
    batching: bool = False,
) -> Concrete:
    """A replayed group as the abstraction sees it (partitions named as the replay names
    them), with its KIP-1251 fields when ``epochs``, its KIP-1263 runs when ``offload``,
    the topics that exist when ``expiry``, its deletion fields when ``deletion`` and its
    KIP-1263 assignment interval when ``batching``."""
    subs = {
        mid: frozenset((name, 0) for name in topics if name in subscribed_topics(m, group))
        for mid, m in group.members.items()
    }
    value = project_group(group, subs, epochs, offload, deletion=deletion, batching=batching)
    if expiry:
        value = replace(value, present=frozenset((name, 0) for name in topics))
    return value


def apply_step(
    group: Any,
    topics: Any,
    family: str,
    params: dict[str, Any],
    rules: Any,
    base_config: Any,
    *,
    target_used: list[bool] | None = None,
    also_named: frozenset[str] = frozenset(),
    after_assignor: Callable[[Any], Any] | None = None,
    request: Any = None,
    responses: list[Any] | None = None,
) -> tuple[Any, bool]:
    """One step of a path (family and parameters as :meth:`Unrolling.path` reads them) on
    a Python group, through the coordinator functions ``system.step`` runs when it delivers
    the request, under ``rules``. Returns the new group and whether a heartbeat was
    answered UNKNOWN_SERVER_ERROR; ``target_used`` (when given) records whether the
    coordinator computed a target assignment (and so took the step's target). A heartbeat
    ``request`` (a Python client's) is sent instead of the one built from the parameters,
    with the path's subscription when it carries one (the replay's topics); its response
    is appended to ``responses``."""
    if family == "DeliverMessage.heartbeat":
        pairs = [str(x).split(":") for x in params["target"]]
        target = {m: frozenset(_tp(p) for m2, p in pairs if m2 == m) for m, _ in pairs}

        after = after_assignor

        def install(g: Group, t: Any, default: str, target: Any = target) -> Group:
            if target_used is not None:
                target_used.append(True)
            out = replace(
                g,
                assignment_epoch=g.group_epoch,
                target_assignment=FrozenMap(
                    (mid, target.get(mid, frozenset())) for mid in g.members
                ),
            )
            return after(out) if after is not None else out

        config = replace(base_config, rules=replace(rules, compute_target_assignment=install))
        by_name = params.get("names", params["subscribed"])
        subscribed = frozenset(f"p{int(str(p)[1:])}" for p in by_name) | also_named
        regex = None
        if params.get("regex"):
            # The topics of the pattern, and an alternative no topic name matches, which
            # makes the expression the member's own.
            matched = [f"p{int(str(p)[1:])}" for p in params["pattern"]]
            regex = "|".join([*matched, f"#{params['member']}"])
        req = ConsumerGroupHeartbeatRequest(
            member_id=str(params["member"]),
            member_epoch=int(params["epoch"]),
            instance_id=instance_name(int(str(params.get("instance", 0)))),
            rebalance_timeout_ms=config.rebalance_timeout_ms,
            subscribed_topic_regex=regex,
            subscribed_topic_names=subscribed,
            topic_partitions=frozenset(_tp(str(p)) for p in params["owned"]),
        )
        if request is not None:
            req = replace(
                request,
                subscribed_topic_names=(
                    None if request.subscribed_topic_names is None else subscribed
                ),
                subscribed_topic_regex=regex,
            )
        group, resp = co.handle_consumer_group_heartbeat(group, topics, req, config)
        if responses is not None:
            responses.append(resp)
        return group, resp.error_code is ErrorCode.UNKNOWN_SERVER_ERROR
    config = replace(base_config, rules=rules)
    if family in ("DeliverMessage.leave", "DeliverMessage.static_leave"):
        req = ConsumerGroupHeartbeatRequest(
            member_id=str(params["member"]),
            member_epoch=-1 if family == "DeliverMessage.leave" else -2,
            instance_id=instance_name(int(str(params.get("instance", 0)))),
        )
        group, resp = co.handle_consumer_group_heartbeat(group, topics, req, config)
        return group, resp.error_code is ErrorCode.UNKNOWN_SERVER_ERROR
    if family == "DeliverMessage.offset_commit":
        commit = OffsetCommitRequest(
            str(params["member"]),
            int(params["epoch"]),
            frozenset(_tp(str(p)) for p in params["partitions"]),
        )
        group, _ = co.handle_offset_commit(group, commit, config)
        return group, False
    raise ValueError(f"the replay drives no {family!r} step")


def replay(
    path: SymPath[Concrete],
    rules: Any,
    base_config: Any,
    *,
    after_assignor: Callable[[Any], Any] | None = None,
) -> tuple[list[Concrete], bool]:
    """Play ``path`` through the Python coordinator under ``rules``; returns the Python
    states' projections and whether a heartbeat was answered UNKNOWN_SERVER_ERROR. Raises
    :class:`ReplayDiverged` when a Python state differs from the path's. ``after_assignor``
    is what the rules' ``compute_target_assignment`` does to the assignor's output beyond
    the assignor (a mutant's post-processing, ``groupcheck.mutants.catalogue.after_assignor``):
    the replay installs the path's target, then applies it."""
    group, topics = replay_start(path)
    first = path.states[0]
    epochs = first.since is not None
    shown = {
        "expiry": first.present is not None,
        "deletion": first.deleted is not None,
        "batching": first.interval_pending is not None,
    }
    offload = first.runs is not None
    out = [replay_projection(group, topics, epochs, offload, **shown)]
    server_error = False
    loading = first.loading
    deleted: set[str] = set()
    for i, (family, params) in enumerate(path.steps):
        after = path.states[i + 1]
        if family == "DeleteTopic":
            # system._delete_topic

            name = _tp(str(params["topic"]))[0]
            topics = _FrozenMap((n, t) for n, t in topics.items() if n != name)
            deleted.add(name)
            group = co.drop_offsets_of_topic(group, name)
            group = rules.on_metadata_change(group, name)
        elif family == "ResolveRegularExpressions":
            # system._resolve_regexes
            group = rules.resolve_regular_expressions(
                group, topics, replace(base_config, rules=rules)
            )
        elif family in ("ExpireOffsets", "DeleteGroup"):
            group = _expire_or_delete(group, topics, family, params, rules, base_config)
        elif family == "CoordinatorFailover":
            # system._failover: the new coordinator starts loading the group.
            loading = True
        elif family == "CoordinatorLoaded":
            # system._loaded
            group = rules.rebuild_group(group, replace(base_config, rules=rules))
            loading = False
        elif family == "CompleteAssignorRun":
            # system._complete_run

            group = co.install_assignor_run(group, topics, replace(base_config, rules=rules))
        elif family == "AssignmentIntervalElapses":
            # system._interval_elapses
            group = replace(group, assignment_interval_elapsed=True)
        elif not loading:
            kept: frozenset[str] = frozenset()
            member = group.members.get(str(params.get("member")))
            if family == "DeliverMessage.heartbeat" and member is not None:
                # A client keeps the names of deleted topics in its subscription.
                kept = frozenset(member.subscribed_topic_names) & deleted
            group, refused = apply_step(
                group,
                topics,
                family,
                dict(params),
                rules,
                base_config,
                also_named=kept,
                after_assignor=after_assignor,
            )
            server_error = server_error or refused
        # While the group loads, system.step answers every request to the coordinator
        # with COORDINATOR_LOAD_IN_PROGRESS and leaves the group as it is.
        now = replace(replay_projection(group, topics, epochs, offload, **shown), loading=loading)
        same_as_path(i, family, now, after)
        out.append(now)
    return out, server_error


def _expire_or_delete(
    group: Any, topics: Any, family: str, params: dict[str, Any], rules: Any, base_config: Any
) -> Any:
    """``system._expire_offsets`` of the step's topic (with the rules' expiration
    condition, then ``maybe_delete_expired_group``) or ``system._delete_group`` (the
    rules' ``validate_delete_group``; a refusal changes nothing)."""
    config = replace(base_config, rules=rules)
    if family == "ExpireOffsets":
        name = _tp(str(params["topic"]))[0]
        expirable = rules.expirable_offsets(group, topics)
        group = co.expire_offsets(group, expirable, topics[name].topic_id)
        return co.maybe_delete_expired_group(group, config)
    if rules.validate_delete_group(group) is not ErrorCode.NONE:
        return group
    return co.delete_group(group, config)


def confirmed(path: SymPath[Concrete], states: list[Concrete], server_error: bool) -> bool:
    """Whether the Python reading of the goal fails on the replayed states."""
    goal = path.goal
    state_goals = {c.name: c for c in (*STATE_GOALS, *EPOCH_GOALS, *OFFLOAD_GOALS)}
    if goal in state_goals:
        last = replace(states[-1], server_error=server_error)
        return not compile_expr(state_goals[goal].expr)(last.snapshot(), {})
    prop: Property = next(
        s
        for s in (*STEP_TARGETS, *EXPIRY_GOALS, *DELETION_GOALS, *OFFLOAD_STEP_GOALS)
        if s.name == goal
    )
    a, b = states[-2], states[-1]
    ms = set(a.member_domain()) | set(b.member_domain())
    ps = set(a.partition_domain()) | set(b.partition_domain())
    return not prop.holds(StepSnapshot(a.snapshot(ms, ps), b.snapshot(ms, ps)))
