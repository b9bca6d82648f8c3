"""A client layer for the classic relation: the state of a classic consumer
(``model.classic.records.ClassicClient``) and its steps (``model.classic.client``) as
symbolic families, one per client step of ``model.classic.system``.

The coordinator's relation (``invariants.z3.proof.classic_transition``) lumps every client
step into ``Unchanged``: the group is as it was. This layer says what such a step does to
its client. A ``ClientSym`` holds, for one client of the configuration (a finite domain:
one ``ClientSym`` per ``ClientSpec``), the fields its rules and the client properties
(``NoDoubleClientOwnership``, ``LostOnlyWhenOut``) read:

======================== ========================================================
``status``               0 UNSUBSCRIBED, 1 UNJOINED, 2 PREPARING_REBALANCE,
                         3 COMPLETING_REBALANCE, 4 STABLE (``STATUS_CODE``)
``alive``, ``incarnation`` the process, and which one (``Restart`` starts another)
``connection``           the connection its responses come back on
``has_member``, ``member`` a member id (``member`` of the ``Member`` sort, read only
                         when ``has_member``: the empty id has no element)
``generation``           the generation it knows (-1: reset, ``NO_GENERATION``)
``leader``               it was elected leader by its JoinGroup response
``owned(p)``             it consumes ``p`` (``SubscriptionState.assignedPartitions``)
``assigned(p)``          the last assignment received; ``assigned_generation`` its
                         generation (the ``sticky`` user data, KIP-341)
``subscribed(p)``        ``p`` exists and the client subscribes to its topic
``rejoin_needed``, ``needs_join_prepare``, ``assignment_stale``
                         the rejoin flags (``AbstractCoordinator.rejoinNeeded``,
                         ``needsJoinPrepare``; ``assignmentSnapshot`` outdated)
``group_request``        0 none, 1 a JoinGroup, 2 a SyncGroup in flight
``heartbeat_in_flight``, ``heartbeat_generation``, ``commit_in_flight``
``stalled``, ``expired``, ``fatal``
                         its application hangs; ghost: a zombie; ``poll()`` threw
``cooperative``, ``kip429`` the rebalance protocol it follows
                         (``client.rebalance_protocol``) and its byte code
======================== ========================================================

What it leaves out: the protocol name and the leader's member list (the leader's
assignment is the coordinator family's free ``assignment``; whether the leader's own
check fails is the parameter ``fails`` of ``SendSyncGroup``), the instance id and the
subscription's topic names (only the partitions they cover: ``subscribed``).

Each family (:data:`CLIENT_FAMILIES`) follows one rule of ``model.classic.client``; a
response's fields are free parameters (``error`` — the Kafka error code —, and for a
JoinGroup response ``generation``, ``member``, ``is_leader``; for a SyncGroup response its
``assignment``), and so is the connection it came back on (``incarnation``,
``connection``: a response to a closed connection is read by nobody). The coordinator is
as it was in each of them (the ``Unchanged`` family of the coordinator's relation).

``ClientOptions.variant`` names a catalogue mutant of a client rule (``CLIENT_VARIANTS``).
Built inside ``classic_transition.grounded`` the formulas are quantifier-free on the
universe's partitions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import z3

from invariants.z3.proof.classic_transition import every_partition, some_partition
from invariants.z3.proof.state import MEMBER, PARTITION, Partition, Universe
from invariants.z3.proof.transition import Family
from model.actions import (
    AbandonRequest,
    Action,
    CommitOffsets,
    Crash,
    DeliverMessage,
    Leave,
    RequestTimeout,
    Restart,
    SendHeartbeat,
    SendJoinGroup,
    SendSyncGroup,
    StallAssignment,
    Subscribe,
)
from model.classic.assignors import COOPERATIVE_ASSIGNORS, supported_protocols
from model.classic.client import leader_assignment, rebalance_protocol
from model.classic.messages import (
    JOIN,
    SYNC,
    HeartbeatResponse,
    JoinGroupResponse,
    SyncGroupResponse,
)
from model.classic.records import ClassicClient, ClassicState
from model.config import Config
from model.records import OffsetCommitResponse
from model.status import ClassicClientStatus, ErrorCode, RebalanceProtocol

BoolRef = Any
ExprRef = Any

S = ClassicClientStatus
STATUS_CODE = {
    S.UNSUBSCRIBED: 0,
    S.UNJOINED: 1,
    S.PREPARING_REBALANCE: 2,
    S.COMPLETING_REBALANCE: 3,
    S.STABLE: 4,
}
UNSUBSCRIBED, UNJOINED, PREPARING, COMPLETING, STABLE = range(5)
NO_REQUEST, JOIN_OUT, SYNC_OUT = 0, 1, 2
REQUEST_CODE = {None: NO_REQUEST, JOIN: JOIN_OUT, SYNC: SYNC_OUT}

E = ErrorCode
FATAL = (E.FENCED_INSTANCE_ID, E.INCONSISTENT_GROUP_PROTOCOL, E.UNRELEASED_INSTANCE_ID)
"""``client.CLASSIC_FATAL_ERRORS``, as codes."""

CLIENT_VARIANTS = {
    "lost-partitions-kept": "a member whose generation was reset skips onPartitionsLost and "
    "rejoins still consuming, and reporting, its old partitions (KAFKA-12983 / KAFKA-12984)",
    "late-sync-resets-generation": "a SyncGroup answered REBALANCE_IN_PROGRESS resets the "
    "generation as ILLEGAL_GENERATION does (KAFKA-13891, reverted as KAFKA-14016)",
}
"""The classic catalogue mutants of a client rule this layer has a variant of."""

_SCALARS = (
    "status",
    "alive",
    "incarnation",
    "connection",
    "has_member",
    "member",
    "generation",
    "leader",
    "assigned_generation",
    "rejoin_needed",
    "needs_join_prepare",
    "assignment_stale",
    "group_request",
    "heartbeat_in_flight",
    "heartbeat_generation",
    "commit_in_flight",
    "stalled",
    "expired",
    "fatal",
    "cooperative",
    "kip429",
)
_INTS = (
    "status",
    "incarnation",
    "connection",
    "generation",
    "assigned_generation",
    "group_request",
    "heartbeat_generation",
)
_SETS = ("owned", "assigned", "subscribed")


@dataclass(frozen=True)
class ClientOptions:
    """The ``Config`` switches the client rules read, and a variant."""

    commit_on_revoke: bool = True
    """``Config.commit_on_revoke``: commit before revoking."""
    leader_check: bool = True
    """Whether a leader's assignment may fail its check (``client.leader_assignment``: a
    cooperative leader whose assignor is not a built-in cooperative one,
    ``validateCooperativeAssignment``); false when no client of the configuration has
    such an assignor, none is deployed by a bounce and the rule is the reference one."""
    variant: str | None = None

    def __post_init__(self) -> None:
        if self.variant is not None and self.variant not in CLIENT_VARIANTS:
            raise ValueError(
                f"no classic client variant of {self.variant!r}; "
                f"known: {', '.join(CLIENT_VARIANTS)}"
            )

    @staticmethod
    def of(config: Config, variant: str | None = None) -> ClientOptions:
        checked = any(
            spec.kip429
            and all(
                RebalanceProtocol.COOPERATIVE.value in supported_protocols(a)
                for a in spec.assignors
            )
            and any(a not in COOPERATIVE_ASSIGNORS for a in spec.assignors)
            for spec in config.clients
        )
        replaced = config.rules.classic_leader_assignment is not leader_assignment
        bounces = bool(config.max_perturbations and config.allows("Bounce"))
        return ClientOptions(
            commit_on_revoke=config.commit_on_revoke,
            leader_check=checked or replaced or bounces,
            variant=variant if variant in CLIENT_VARIANTS else None,
        )


@dataclass(frozen=True)
class ClientSym:
    """One symbolic classic client: Z3 constants (and, for the partition sets, functions)
    named ``cclient.<field>.<client>.<tag>``."""

    name: str
    tag: str
    fields: Mapping[str, Any]

    def __getattr__(self, key: str) -> Any:
        try:
            return self.fields[key]
        except KeyError:
            raise AttributeError(key) from None

    @staticmethod
    def fresh(name: str, tag: str) -> ClientSym:
        out: dict[str, Any] = {}
        for k in _SCALARS:
            full = f"cclient.{k}.{name}.{tag}"
            if k == "member":
                out[k] = z3.Const(full, MEMBER)
            elif k in _INTS:
                out[k] = z3.Int(full)
            else:
                out[k] = z3.Bool(full)
        for k in _SETS:
            out[k] = z3.Function(f"cclient.{k}.{name}.{tag}", PARTITION, z3.BoolSort())
        return ClientSym(name, tag, out)

    def term(self) -> Term:
        return Term(dict(self.fields))


@dataclass(frozen=True)
class Term:
    """A client as Z3 terms (what a rule computes): scalars as terms, the partition sets as
    functions of a partition term."""

    f: dict[str, Any]

    def __getattr__(self, key: str) -> Any:
        try:
            return self.f[key]
        except KeyError:
            raise AttributeError(key) from None

    def set(self, **changes: Any) -> Term:
        out = dict(self.f)
        for k, v in changes.items():
            if k in _SETS:
                out[k] = v
            elif isinstance(v, bool):
                out[k] = z3.BoolVal(v)
            elif isinstance(v, int):
                out[k] = z3.IntVal(v)
            else:
                out[k] = v
        return Term(out)


def when(c: BoolRef, a: Term, b: Term) -> Term:
    """``a`` where ``c`` holds, else ``b``, field by field."""
    out: dict[str, Any] = {}
    for k in _SCALARS:
        out[k] = z3.If(c, a.f[k], b.f[k])
    for k in _SETS:
        out[k] = _choose(c, a.f[k], b.f[k])
    return Term(out)


def _choose(c: BoolRef, fa: Callable[[Any], Any], fb: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda q: z3.If(c, fa(q), fb(q))


def equals(post: ClientSym, t: Term) -> BoolRef:
    """``post`` is ``t`` (its member id only where it has one)."""
    parts = [post.fields[k] == t.f[k] for k in _SCALARS if k != "member"]
    parts.append(z3.Implies(post.has_member, post.member == t.member))
    for k in _SETS:
        parts.append(every_partition(_same(post.fields[k], t.f[k])))
    return z3.And(*parts)


def _same(a: Callable[[Any], Any], b: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda q: a(q) == b(q)


NOTHING: Callable[[ExprRef], BoolRef] = lambda q: z3.BoolVal(False)  # noqa: E731


def _minus(a: Callable[[Any], Any], b: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda q: z3.And(a(q), z3.Not(b(q)))


# --------------------------------------------------------------------------- shared rules


def reset(c: Term, keep_member_id: BoolRef) -> Term:
    """``client._reset`` (``AbstractCoordinator.resetStateAndRejoin`` /
    ``resetGenerationOnResponseError``): UNJOINED, generation reset (the member id too
    unless ``keep_member_id``), a rejoin with ``onJoinPrepare`` due."""
    return c.set(
        status=UNJOINED,
        generation=-1,
        has_member=z3.And(keep_member_id, c.has_member),
        leader=False,
        rejoin_needed=True,
        needs_join_prepare=True,
    )


def retry_join(c: Term) -> Term:
    """``client._retry_join`` (``AbstractCoordinator.joinGroupIfNeeded`` after a retriable
    error): join again keeping member id and generation."""
    return c.set(status=UNJOINED, leader=False, rejoin_needed=True)


def out_of_group(c: Term, **changes: Any) -> Term:
    """``client._out_of_group``: UNSUBSCRIBED, consuming nothing, no member id, no
    generation, nothing in flight."""
    return c.set(
        status=UNSUBSCRIBED,
        owned=NOTHING,
        has_member=False,
        generation=-1,
        leader=False,
        group_request=NO_REQUEST,
        heartbeat_in_flight=False,
        commit_in_flight=False,
        **changes,
    )


def fatal(c: Term) -> Term:
    """``client._fatal``: ``poll()`` throws (``FencedInstanceIdException``, …); the
    application closes the consumer, on a new connection."""
    return out_of_group(c, fatal=True, connection=c.connection + 1)


def commits(c: Term, partitions: Callable[[Any], Any]) -> BoolRef:
    """``client._commit``: whether an OffsetCommit of ``partitions`` goes out (some
    partition, no commit in flight, a generation)."""
    return z3.And(some_partition(partitions), z3.Not(c.commit_in_flight), c.generation != -1)


def _is(error: ExprRef, *codes: ErrorCode) -> BoolRef:
    return z3.Or(*[error == int(code) for code in codes])


# --------------------------------------------------------------------------- families


def _params(name: str, tag: str, **sorts: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, sort in sorts.items():
        full = f"{name}.{k}@{tag}"
        out[k] = z3.Function(full, *sort) if isinstance(sort, tuple) else z3.Const(full, sort)
    return out


B, N = z3.BoolSort(), z3.IntSort()


def send_join_group(pre: ClientSym, post: ClientSym, o: ClientOptions) -> Family:
    """``SendJoinGroup`` (``client.join_group``, ``AbstractCoordinator.joinGroupIfNeeded``;
    ``system._send_join``), enabled for a live client not hanging, with no JoinGroup or
    SyncGroup out, UNJOINED or STABLE with a rejoin due. ``ConsumerCoordinator.onJoinPrepare``
    when due: a member whose generation or member id was reset gives up what it owned as
    lost (``onPartitionsLost``); otherwise it commits (``commit_on_revoke``) and revokes
    (``onPartitionsRevoked``) everything under EAGER, the partitions of topics it no longer
    subscribes to under COOPERATIVE. Then the JoinGroup goes out: PREPARING_REBALANCE, the
    rejoin flags cleared. A client that knows it was reset is no zombie any more. The
    variant ``lost-partitions-kept`` skips ``onPartitionsLost`` for a reset member owning
    something: it keeps, and reports, its partitions (KAFKA-12983 / KAFKA-12984).

    The request's fields are facts of the family (``Family.facts``): ``member``
    (``has_member``), the generation it reports (``generation``: the current one under
    COOPERATIVE, the assignment's under EAGER — KIP-792, KIP-341), ``owned`` (its owned
    partitions with KIP-429, none without), ``user_data`` (its last assignment, which the
    ``sticky`` assignor keeps in its user data — KIP-341), ``subscribed``."""
    c = pre.term()
    enabled = z3.And(
        c.alive,
        z3.Not(c.stalled),
        c.group_request == NO_REQUEST,
        z3.Or(
            c.status == UNJOINED,
            z3.And(c.status == STABLE, z3.Or(c.rejoin_needed, c.assignment_stale)),
        ),
    )
    was_reset = z3.Or(c.generation == -1, z3.Not(c.has_member))
    lost = c.set(owned=NOTHING)
    if o.variant == "lost-partitions-kept":
        lost = c
    revoked = lambda q: z3.And(  # noqa: E731
        c.owned(q), z3.Or(z3.Not(c.cooperative), z3.Not(c.subscribed(q)))
    )
    commit = z3.And(o.commit_on_revoke, commits(c, revoked))
    revoking = c.set(
        owned=_minus(c.owned, revoked),
        commit_in_flight=z3.Or(c.commit_in_flight, commit),
    )
    prepared = when(was_reset, lost, revoking).set(leader=False, needs_join_prepare=False)
    c1 = when(c.needs_join_prepare, prepared, c)
    sent = c1.set(
        status=PREPARING,
        group_request=JOIN_OUT,
        rejoin_needed=False,
        assignment_stale=False,
        expired=z3.And(c.expired, z3.Not(was_reset)),
    )
    owned_now = c1.owned
    facts = {
        "has_member": c.has_member,
        "member": c.member,
        "generation": z3.If(c.cooperative, c.generation, c.assigned_generation),
        "owned": lambda q: z3.And(c.kip429, owned_now(q)),
        "user_data": c.assigned,
        "subscribed": c.subscribed,
    }
    return Family("SendJoinGroup", z3.And(enabled, equals(post, sent)), {}, facts)


def _delivered(c: Term, p: dict[str, Any]) -> BoolRef:
    """The response came back on the client's current connection (``system._deliver``:
    one on a closed connection is read by nobody)."""
    return z3.And(c.alive, p["incarnation"] == c.incarnation, p["connection"] == c.connection)


def join_response(pre: ClientSym, post: ClientSym, o: ClientOptions) -> Family:
    """``DeliverMessage`` of a JoinGroup response (``client.on_join_response``,
    ``AbstractCoordinator.JoinGroupResponseHandler``): ignored unless a JoinGroup is out;
    NONE: COMPLETING_REBALANCE with the response's generation and member id, leader when
    the response names it; MEMBER_ID_REQUIRED: join again with the given id and no
    generation (KIP-394); UNKNOWN_MEMBER_ID: reset, member id too; a fatal error:
    ``client._fatal``; any other: join again."""
    n = "DeliverMessage.join_response"
    p = _params(
        n,
        post.tag,
        error=N,
        generation=N,
        member=MEMBER,
        is_leader=B,
        incarnation=N,
        connection=N,
    )
    c = pre.term()
    err = p["error"]
    c0 = c.set(group_request=NO_REQUEST)
    joined = c0.set(
        status=COMPLETING,
        generation=p["generation"],
        member=p["member"],
        has_member=True,
        leader=p["is_leader"],
    )
    again = retry_join(c0).set(member=p["member"], has_member=True, generation=-1)
    t = when(
        _is(err, E.NONE),
        joined,
        when(
            _is(err, E.MEMBER_ID_REQUIRED),
            again,
            when(
                _is(err, E.UNKNOWN_MEMBER_ID),
                reset(c0, z3.BoolVal(False)),
                when(_is(err, *FATAL), fatal(c0), retry_join(c0)),
            ),
        ),
    )
    t = when(c.group_request == JOIN_OUT, t, c)
    return Family(n, z3.And(_delivered(c, p), equals(post, t)), p)


def send_sync_group(pre: ClientSym, post: ClientSym, o: ClientOptions) -> Family:
    """``SendSyncGroup`` (``client.sync_group``: ``onJoinFollower`` / ``onLeaderElected``),
    enabled in COMPLETING_REBALANCE with nothing out and the application not hanging: the
    SyncGroup goes out. A leader whose assignment fails its check (``fails``:
    ``validateCooperativeAssignment``'s ``IllegalStateException``) sends nothing and joins
    again."""
    n = "SendSyncGroup"
    p = _params(n, post.tag, fails=B)
    c = pre.term()
    enabled = z3.And(
        c.alive, z3.Not(c.stalled), c.group_request == NO_REQUEST, c.status == COMPLETING
    )
    fails = z3.And(c.leader, p["fails"], o.leader_check)
    t = when(fails, retry_join(c), c.set(group_request=SYNC_OUT))
    return Family(n, z3.And(enabled, equals(post, t)), p)


def sync_response(pre: ClientSym, post: ClientSym, o: ClientOptions) -> Family:
    """``DeliverMessage`` of a SyncGroup response (``client.on_sync_response``:
    ``SyncGroupResponseHandler``, then ``ConsumerCoordinator.onJoinComplete``): ignored unless
    a SyncGroup is out. ILLEGAL_GENERATION resets the generation, UNKNOWN_MEMBER_ID the
    member id too (``resetGenerationOnResponseError``); a fatal error: ``client._fatal``;
    another error (REBALANCE_IN_PROGRESS, coordinator errors) joins again keeping the
    generation. NONE: STABLE, ``onJoinPrepare`` due again; an assignment naming a topic it
    does not subscribe to makes it rejoin unchanged; otherwise under COOPERATIVE it revokes
    what it owned and was not given (committing it first) and then rejoins, and it takes
    the assignment at its generation. The variant ``late-sync-resets-generation`` takes
    REBALANCE_IN_PROGRESS as ILLEGAL_GENERATION (KAFKA-13891)."""
    n = "DeliverMessage.sync_response"
    p = _params(n, post.tag, error=N, assignment=(PARTITION, B), incarnation=N, connection=N)
    c = pre.term()
    err, got = p["error"], p["assignment"]
    c0 = c.set(group_request=NO_REQUEST)
    illegal = _is(err, E.ILLEGAL_GENERATION)
    if o.variant == "late-sync-resets-generation":
        illegal = _is(err, E.ILLEGAL_GENERATION, E.REBALANCE_IN_PROGRESS)
    stable = c0.set(status=STABLE, rejoin_needed=False, needs_join_prepare=True)
    foreign = some_partition(lambda q: z3.And(got(q), z3.Not(c.subscribed(q))))
    revoked = _minus(c.owned, got)
    revokes = z3.And(c.cooperative, some_partition(revoked))
    commit = z3.And(revokes, o.commit_on_revoke, commits(c, revoked))
    taken = stable.set(
        owned=got,
        assigned=got,
        assigned_generation=c.generation,
        rejoin_needed=revokes,
        commit_in_flight=z3.Or(c.commit_in_flight, commit),
    )
    ok = when(foreign, stable.set(rejoin_needed=True), taken)
    t = when(
        illegal,
        reset(c0, z3.BoolVal(True)),
        when(
            _is(err, E.UNKNOWN_MEMBER_ID),
            reset(c0, z3.BoolVal(False)),
            when(_is(err, *FATAL), fatal(c0), when(_is(err, E.NONE), ok, retry_join(c0))),
        ),
    )
    t = when(c.group_request == SYNC_OUT, t, c)
    return Family(n, z3.And(_delivered(c, p), equals(post, t)), p)


def send_heartbeat(pre: ClientSym, post: ClientSym, o: ClientOptions) -> Family:
    """``SendHeartbeat`` (``client.build_heartbeat``, the heartbeat thread), in
    COMPLETING_REBALANCE or STABLE with none out: one at the current generation. (The model
    sends one only when the coordinator has news for it; the layer lets it send any.)"""
    c = pre.term()
    enabled = z3.And(
        c.alive,
        z3.Or(c.status == COMPLETING, c.status == STABLE),
        z3.Not(c.heartbeat_in_flight),
    )
    t = c.set(heartbeat_in_flight=True, heartbeat_generation=c.generation)
    return Family("SendHeartbeat", z3.And(enabled, equals(post, t)), {})


def heartbeat_response(pre: ClientSym, post: ClientSym, o: ClientOptions) -> Family:
    """``DeliverMessage`` of a Heartbeat response (``client.on_heartbeat_response``,
    ``AbstractCoordinator.HeartbeatResponseHandler``): REBALANCE_IN_PROGRESS makes a STABLE
    member rejoin; a fatal error: ``client._fatal``; ILLEGAL_GENERATION resets the
    generation and UNKNOWN_MEMBER_ID the member id too, unless the generation changed since
    the heartbeat was sent (``generationUnchanged``)."""
    n = "DeliverMessage.heartbeat_response"
    p = _params(n, post.tag, error=N, incarnation=N, connection=N)
    c = pre.term()
    err = p["error"]
    c0 = c.set(heartbeat_in_flight=False)
    t = when(
        _is(err, E.REBALANCE_IN_PROGRESS),
        when(c.status == STABLE, c0.set(rejoin_needed=True), c0),
        when(
            _is(err, *FATAL),
            fatal(c0),
            when(
                z3.And(
                    _is(err, E.ILLEGAL_GENERATION, E.UNKNOWN_MEMBER_ID),
                    c.generation == c.heartbeat_generation,
                ),
                reset(c0, _is(err, E.ILLEGAL_GENERATION)),
                c0,
            ),
        ),
    )
    t = when(c.heartbeat_in_flight, t, c)
    return Family(n, z3.And(_delivered(c, p), equals(post, t)), p)


def commit_offsets(pre: ClientSym, post: ClientSym, o: ClientOptions) -> Family:
    """``CommitOffsets`` (``client.auto_commit``): with ``Config.auto_commit``, a STABLE
    client consuming something, with no commit out, commits."""
    c = pre.term()
    enabled = z3.And(
        c.alive,
        z3.Not(c.stalled),
        c.status == STABLE,
        some_partition(c.owned),
        z3.Not(c.commit_in_flight),
    )
    return Family("CommitOffsets", z3.And(enabled, equals(post, c.set(commit_in_flight=True))), {})


def on_commit(c: Term, err: ExprRef) -> Term:
    """``client.on_commit_response`` on a response with error ``err``
    (``ConsumerCoordinator.OffsetCommitResponseHandler``)."""
    c0 = c.set(commit_in_flight=False)
    t = when(
        z3.And(_is(err, E.REBALANCE_IN_PROGRESS), c.status == STABLE),
        c0.set(rejoin_needed=True),
        when(
            _is(err, *FATAL),
            fatal(c0),
            when(
                z3.And(_is(err, E.ILLEGAL_GENERATION, E.UNKNOWN_MEMBER_ID), c.status == STABLE),
                reset(c0, _is(err, E.ILLEGAL_GENERATION)),
                c0,
            ),
        ),
    )
    return when(c.commit_in_flight, t, c)


def commit_response(pre: ClientSym, post: ClientSym, o: ClientOptions) -> Family:
    """``DeliverMessage`` of an OffsetCommit response (:func:`on_commit`): REBALANCE_IN_PROGRESS
    requests a rejoin; UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION reset a STABLE member; a
    fatal error: ``client._fatal``."""
    n = "DeliverMessage.commit_response"
    p = _params(n, post.tag, error=N, incarnation=N, connection=N)
    c = pre.term()
    return Family(n, z3.And(_delivered(c, p), equals(post, on_commit(c, p["error"]))), p)


def request_timeout(pre: ClientSym, post: ClientSym, o: ClientOptions) -> Family:
    """``RequestTimeout`` / ``AbandonRequest`` (``client.disconnect``, ``NetworkClient``
    disconnect): the commit out is given up, a JoinGroup or SyncGroup out is sent again
    (keeping member id and generation), on a new connection."""
    c = pre.term()
    c1 = when(c.commit_in_flight, c.set(commit_in_flight=False), c)
    c2 = when(c.group_request != NO_REQUEST, retry_join(c1), c1)
    t = c2.set(heartbeat_in_flight=False, group_request=NO_REQUEST, connection=c.connection + 1)
    enabled = z3.And(
        c.alive,
        z3.Or(c.heartbeat_in_flight, c.commit_in_flight, c.group_request != NO_REQUEST),
    )
    return Family("RequestTimeout", z3.And(enabled, equals(post, t)), {})


def subscribe(pre: ClientSym, post: ClientSym, o: ClientOptions) -> Family:
    """``Subscribe`` (``client.subscribe``) of an UNSUBSCRIBED live client: it will join."""
    c = pre.term()
    t = c.set(status=UNJOINED, rejoin_needed=True, needs_join_prepare=True, fatal=False)
    enabled = z3.And(c.alive, c.status == UNSUBSCRIBED)
    return Family("Subscribe", z3.And(enabled, equals(post, t)), {})


def leave(pre: ClientSym, post: ClientSym, o: ClientOptions) -> Family:
    """``Leave`` (``client.leave``: ``close()``, ``onLeavePrepare``, ``maybeLeaveGroup``) of a
    client in the group, not hanging: it commits what it owns (with a generation, outside a
    rebalance, ``commit_on_revoke``), gives everything up and is out of the group on a new
    connection."""
    c = pre.term()
    in_rebalance = z3.Or(c.status == PREPARING, c.status == COMPLETING)
    commit = z3.And(
        o.commit_on_revoke, c.generation != -1, z3.Not(in_rebalance), commits(c, c.owned)
    )
    c1 = c.set(commit_in_flight=z3.Or(c.commit_in_flight, commit))
    t = out_of_group(c1, rejoin_needed=True, needs_join_prepare=True, connection=c.connection + 1)
    enabled = z3.And(c.alive, c.status != UNSUBSCRIBED, z3.Not(c.stalled))
    return Family("Leave", z3.And(enabled, equals(post, t)), {})


def crash(pre: ClientSym, post: ClientSym, o: ClientOptions) -> Family:
    """``Crash`` (``client.crash``): the process dies, consuming nothing."""
    c = pre.term()
    t = out_of_group(c, alive=False, stalled=False, expired=False, fatal=False)
    return Family("Crash", z3.And(c.alive, equals(post, t)), {})


def restart(pre: ClientSym, post: ClientSym, o: ClientOptions) -> Family:
    """``Restart`` (``client.restart``) of a dead or UNSUBSCRIBED client: a new process,
    UNJOINED, with no member id, generation or previous assignment."""
    c = pre.term()
    gone = out_of_group(c, alive=False, stalled=False, expired=False, fatal=False)
    t = gone.set(
        incarnation=c.incarnation + 1,
        alive=True,
        status=UNJOINED,
        assigned=NOTHING,
        assigned_generation=-1,
        rejoin_needed=True,
        needs_join_prepare=True,
    )
    enabled = z3.Or(z3.Not(c.alive), c.status == UNSUBSCRIBED)
    return Family("Restart", z3.And(enabled, equals(post, t)), {})


def stall(pre: ClientSym, post: ClientSym, o: ClientOptions) -> Family:
    """``StallAssignment`` (``client.stall``): the application hangs before its SyncGroup."""
    c = pre.term()
    enabled = z3.And(
        c.alive, z3.Not(c.stalled), c.status == COMPLETING, c.group_request == NO_REQUEST
    )
    return Family("StallAssignment", z3.And(enabled, equals(post, c.set(stalled=True))), {})


ClientBuilder = Callable[[ClientSym, ClientSym, ClientOptions], Family]

CLIENT_FAMILIES: dict[str, ClientBuilder] = {
    "SendJoinGroup": send_join_group,
    "DeliverMessage.join_response": join_response,
    "SendSyncGroup": send_sync_group,
    "DeliverMessage.sync_response": sync_response,
    "SendHeartbeat": send_heartbeat,
    "DeliverMessage.heartbeat_response": heartbeat_response,
    "CommitOffsets": commit_offsets,
    "DeliverMessage.commit_response": commit_response,
    "RequestTimeout": request_timeout,
    "Subscribe": subscribe,
    "Leave": leave,
    "Crash": crash,
    "Restart": restart,
    "StallAssignment": stall,
}
"""Each client family's builder."""


def client_family_of(action: Action) -> str | None:
    """The client family of a classic model action; None for a coordinator step or a
    client step the layer has no family of (``ChangeSubscription``, ``ChangeInstanceId``,
    ``Bounce``, a LeaveGroup response, which no client reads)."""
    if isinstance(action, DeliverMessage):
        if action.message.to_coordinator:
            return None
        kinds: tuple[tuple[type, str], ...] = (
            (JoinGroupResponse, "join_response"),
            (SyncGroupResponse, "sync_response"),
            (HeartbeatResponse, "heartbeat_response"),
            (OffsetCommitResponse, "commit_response"),
        )
        for kind, name in kinds:
            if isinstance(action.message.body, kind):
                return f"DeliverMessage.{name}"
        return None
    simple: tuple[tuple[type, str], ...] = (
        (SendJoinGroup, "SendJoinGroup"),
        (SendSyncGroup, "SendSyncGroup"),
        (SendHeartbeat, "SendHeartbeat"),
        (CommitOffsets, "CommitOffsets"),
        (RequestTimeout, "RequestTimeout"),
        (AbandonRequest, "RequestTimeout"),
        (Subscribe, "Subscribe"),
        (Leave, "Leave"),
        (Crash, "Crash"),
        (Restart, "Restart"),
        (StallAssignment, "StallAssignment"),
    )
    for kind, name in simple:
        if isinstance(action, kind):
            return name
    return None


def acting_client(action: Action) -> str | None:
    """The client a client step is of."""
    if isinstance(action, DeliverMessage):
        return action.message.client
    return getattr(action, "client", None)


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class ClientValue:
    """A classic client as the layer sees it (the fields of the module docstring)."""

    status: int
    alive: bool
    incarnation: int
    connection: int
    member: str
    generation: int
    leader: bool
    owned: frozenset[Partition]
    assigned: frozenset[Partition]
    assigned_generation: int
    subscribed: frozenset[Partition]
    rejoin_needed: bool
    needs_join_prepare: bool
    assignment_stale: bool
    group_request: int
    heartbeat_in_flight: bool
    heartbeat_generation: int
    commit_in_flight: bool
    stalled: bool
    expired: bool
    fatal: bool
    cooperative: bool
    kip429: bool
    extra: tuple[Partition, ...] = field(default=(), compare=False)


def project_client(state: ClassicState, client: ClassicClient) -> ClientValue:
    """The layer's view of ``client`` in ``state`` (its subscription over the state's
    topics)."""
    subscribed = frozenset(
        (meta.topic_id, i)
        for name, meta in state.topics.items()
        if name in client.subscription
        for i in range(meta.partitions)
    )
    return ClientValue(
        status=STATUS_CODE[client.status],
        alive=client.alive,
        incarnation=client.incarnation,
        connection=client.connection,
        member=client.member_id,
        generation=client.generation_id,
        leader=client.leader,
        owned=frozenset(client.owned),
        assigned=frozenset(client.assigned),
        assigned_generation=client.assigned_generation,
        subscribed=subscribed,
        rejoin_needed=client.rejoin_needed,
        needs_join_prepare=client.needs_join_prepare,
        assignment_stale=client.assignment_stale,
        group_request=REQUEST_CODE[client.group_request],
        heartbeat_in_flight=client.heartbeat_in_flight,
        heartbeat_generation=client.heartbeat_generation,
        commit_in_flight=client.commit_in_flight,
        stalled=client.stalled,
        expired=client.expired,
        fatal=client.fatal_error is not None,
        cooperative=rebalance_protocol(client) is RebalanceProtocol.COOPERATIVE,
        kip429=client.kip429,
    )


def pin_client(sym: ClientSym, value: ClientValue, u: Universe) -> list[BoolRef]:
    """Constraints fixing ``sym`` to ``value`` on the universe ``u`` (the member term only
    when it has a member id)."""
    out: list[BoolRef] = []
    for k in _SCALARS:
        if k == "member":
            if value.member:
                out.append(sym.member == u.member_consts[value.member])
            continue
        if k == "has_member":
            out.append(sym.has_member == bool(value.member))
            continue
        out.append(sym.fields[k] == getattr(value, k))
    for k in _SETS:
        held: frozenset[Partition] = getattr(value, k)
        for p, pc in u.partition_consts.items():
            out.append(sym.fields[k](pc) == (p in held))
    return out


def client_partitions(values: Iterable[ClientValue]) -> set[Partition]:
    """The partitions the client values mention."""
    out: set[Partition] = set()
    for v in values:
        out |= v.owned | v.assigned | v.subscribed
    return out


# --------------------------------------------------------------------------- goals


def client_owns(c: ClientSym, q: ExprRef) -> BoolRef:
    """``client_owns(c, q)`` of ``invariants.classic_snapshot``: a live client whose
    application does not hang consumes ``q``."""
    return z3.And(c.alive, z3.Not(c.stalled), c.owned(q))


def zombie(c: ClientSym, g: Any) -> BoolRef:
    """``zombie(c)``: a live client marked expired whose member id the group (``g``, a
    ``ClassicSym``) does not have."""
    return z3.And(c.expired, c.alive, z3.Or(z3.Not(c.has_member), z3.Not(g.is_member(c.member))))


def double_ownership(
    gpre: Any, cpre: Mapping[str, ClientSym], gpost: Any, cpost: Mapping[str, ClientSym]
) -> BoolRef:
    """The negation of ``NoDoubleClientOwnership`` on the state after a step: two clients,
    neither a zombie, consume the same partition."""
    names = sorted(cpost)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    return z3.Or(
        False,
        *[
            z3.And(
                z3.Not(zombie(cpost[a], gpost)),
                z3.Not(zombie(cpost[b], gpost)),
                some_partition(
                    lambda q, a=a, b=b: z3.And(  # type: ignore[misc]
                        client_owns(cpost[a], q), client_owns(cpost[b], q)
                    )
                ),
            )
            for a, b in pairs
        ],
    )


def lost_while_in(
    gpre: Any, cpre: Mapping[str, ClientSym], gpost: Any, cpost: Mapping[str, ClientSym]
) -> BoolRef:
    """The negation of ``LostOnlyWhenOut`` on a step: a client of the same process, in the
    group after the step (alive, UNJOINED … STABLE), resets a generation ≥ 0 to -1 although
    before the step it was alive with the member id of a member of the group whose
    generation it knew (a classic member's epoch is the group's generation)."""
    out = []
    for name in sorted(cpost):
        a, b = cpre[name], cpost[name]
        out.append(
            z3.And(
                a.incarnation == b.incarnation,
                b.alive,
                b.status != UNSUBSCRIBED,
                a.generation >= 0,
                b.generation == -1,
                a.alive,
                a.has_member,
                gpre.is_member(a.member),
                gpre.generation == a.generation,
            )
        )
    return z3.Or(False, *out)


ClientGoal = Callable[[Any, Mapping[str, ClientSym], Any, Mapping[str, ClientSym]], BoolRef]

CLIENT_GOALS: dict[str, ClientGoal] = {
    "NoDoubleClientOwnership": double_ownership,
    "LostOnlyWhenOut": lost_while_in,
}
"""The properties of the catalogue that read the classic clients, as goals over the layer
and the coordinator's state: property name → its negation on a step (group and clients
before, group and clients after)."""
