"""A client layer over the coordinator core: where ``OwnedPartitionsAreHeld`` fails to be
inductive (docs/findings.md, F1).

``OwnedPartitionsAreHeld`` speaks of what a client consumes, which the coordinator core
does not keep. This layer adds a third sort, clients, each with its member id, the
partitions it consumes (``owns``), the target it received and has not applied yet
(``pending``), and one heartbeat request or response in flight; the coordinator's
heartbeat family now handles the requests the clients send (their owned partitions as the
Java client reports them: the last reconciled assignment, plus the target still to apply
with ``Config.report_pending_additions``).

It is a *diagnosis* model, not a proof about the Python model: the network is reliable
(no loss, no request timeout, so no stale request), clients do not crash or restart, a
zombie never rejoins, a refused heartbeat fences the client (it loses its partitions),
a reconciliation is applied in one step (the revoked partitions are not consumed
meanwhile, so nothing is lost by it) and the request's member epoch is free. Its use is
to say *which* transition breaks the natural strengthening of ``OwnedPartitionsAreHeld``:
without the client-side fix the counterexample to induction is F1's heartbeat (the
coordinator releases a partition the client received but has not applied, because the
heartbeat does not report it); with the fix the same obligations are proved.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import z3

from invariants.expr import (
    Expr,
    Implies,
    Not,
    Rel,
    Same,
    Snapshot,
    Var,
    all_of,
    any_of,
    compile_expr,
    exists,
    forall,
)
from invariants.properties import OWNED_PARTITIONS_ARE_HELD
from invariants.z3.proof.induction import INVARIANT, Conjunct, params_of
from invariants.z3.proof.obligations import Lines, Obligation, Policy, Query, Result, run
from invariants.z3.proof.reading import CLIENT, read
from invariants.z3.proof.state import (
    MEMBER,
    PARTITION,
    BoolRef,
    ExprRef,
    FuncRef,
    SymState,
    decode,
    render,
)
from invariants.z3.proof.transition import Family, Options, families, initial, unchanged


@dataclass(frozen=True)
class ClientState:
    """The clients' side of one symbolic state."""

    cmem: FuncRef
    active: FuncRef
    owns: FuncRef
    pending: FuncRef
    has_pending: FuncRef
    req: FuncRef
    req_owned: FuncRef
    resp: FuncRef
    resp_ok: FuncRef
    resp_assign: FuncRef

    @staticmethod
    def fresh(tag: str) -> ClientState:
        C, M, P, B = CLIENT, MEMBER, PARTITION, z3.BoolSort()

        def f(name: str, *sorts: Any) -> FuncRef:
            return z3.Function(f"{name}.{tag}", *sorts)

        return ClientState(
            cmem=f("client_member", C, M),
            active=f("active", C, B),
            owns=f("owns", C, P, B),
            pending=f("pending", C, P, B),
            has_pending=f("has_pending", C, B),
            req=f("request", C, B),
            req_owned=f("request_owned", C, P, B),
            resp=f("response", C, B),
            resp_ok=f("response_ok", C, B),
            resp_assign=f("response_assignment", C, P, B),
        )


_c = z3.Const("c", CLIENT)
_p = z3.Const("p", PARTITION)
_UNARY = ("cmem", "active", "has_pending", "req", "resp", "resp_ok")
_BINARY = ("owns", "pending", "req_owned", "resp_assign")


def same_clients(
    a: ClientState,
    b: ClientState,
    *,
    except_client: ExprRef | None = None,
    skip: tuple[str, ...] = (),
) -> BoolRef:
    """Every client field unchanged (for every client but ``except_client``, if given)."""
    out: list[BoolRef] = []
    for name in _UNARY:
        if name in skip:
            continue
        eq = getattr(b, name)(_c) == getattr(a, name)(_c)
        out.append(z3.ForAll([_c], eq if except_client is None else z3.Or(_c == except_client, eq)))
    for name in _BINARY:
        if name in skip:
            continue
        eq = getattr(b, name)(_c, _p) == getattr(a, name)(_c, _p)
        out.append(
            z3.ForAll([_c, _p], eq if except_client is None else z3.Or(_c == except_client, eq))
        )
    return z3.And(*out)


def client_families(
    pre: SymState, post: SymState, a: ClientState, b: ClientState, o: Options, fix: bool
) -> list[Family]:
    """The families of the layer: the clients' own steps, the coordinator's heartbeat on a
    client's request, and the coordinator's other families (a removed member's client is
    no longer active: it left, or it is a zombie)."""
    out: list[Family] = []
    # SendHeartbeat: the reported partitions (model.consumer.client.reported_partitions).
    c = z3.Const("SendHeartbeat.client", CLIENT)
    reported = z3.ForAll(
        [_p],
        b.req_owned(c, _p)
        == z3.Or(a.owns(c, _p), z3.And(z3.BoolVal(fix), a.has_pending(c), a.pending(c, _p))),
    )
    out.append(
        Family(
            "SendHeartbeat",
            z3.And(
                a.active(c),
                z3.Not(a.req(c)),
                z3.Not(a.resp(c)),
                b.req(c),
                reported,
                same_clients(a, b, except_client=c),
                same_clients(a, b, skip=("req", "req_owned")),
                unchanged(pre, post),
            ),
            {"client": c},
        )
    )
    # The coordinator handles the request.
    c = z3.Const("DeliverMessage.heartbeat.client", CLIENT)
    hb = next(f for f in families(pre, post, o) if f.name == "DeliverMessage.heartbeat")
    member = a.cmem(c)
    out.append(
        Family(
            "DeliverMessage.heartbeat",
            z3.And(
                a.req(c),
                hb.formula,
                hb.params["member"] == member,
                z3.Not(hb.params["owned_null"]),
                z3.ForAll([_p], hb.params["owned"](_p) == a.req_owned(c, _p)),
                z3.Not(b.req(c)),
                b.resp(c),
                b.resp_ok(c) == hb.facts["accepted"],
                z3.ForAll([_p], b.resp_assign(c, _p) == post.assigned(member, _p)),
                same_clients(a, b, except_client=c),
                same_clients(a, b, skip=("req", "resp", "resp_ok", "resp_assign")),
            ),
            {"client": c, **hb.params},
        )
    )
    # The client reads the response (model.consumer.client.on_heartbeat_response): a new target,
    # or, refused, it is fenced and loses everything.
    c = z3.Const("DeliverMessage.response.client", CLIENT)
    fenced = z3.And(
        z3.ForAll([_p], z3.And(z3.Not(b.owns(c, _p)), z3.Not(b.pending(c, _p)))),
        z3.Not(b.has_pending(c)),
    )
    received = z3.And(
        z3.ForAll(
            [_p], z3.And(b.owns(c, _p) == a.owns(c, _p), b.pending(c, _p) == a.resp_assign(c, _p))
        ),
        b.has_pending(c),
    )
    out.append(
        Family(
            "DeliverMessage.response",
            z3.And(
                a.resp(c),
                z3.Not(b.resp(c)),
                z3.If(a.resp_ok(c), received, fenced),
                same_clients(a, b, except_client=c),
                same_clients(a, b, skip=("resp", "owns", "pending", "has_pending")),
                unchanged(pre, post),
            ),
            {"client": c},
        )
    )
    # Reconcile: the received target becomes what the client consumes.
    c = z3.Const("Reconcile.client", CLIENT)
    out.append(
        Family(
            "Reconcile",
            z3.And(
                a.active(c),
                a.has_pending(c),
                z3.ForAll(
                    [_p], z3.And(b.owns(c, _p) == a.pending(c, _p), z3.Not(b.pending(c, _p)))
                ),
                z3.Not(b.has_pending(c)),
                same_clients(a, b, except_client=c),
                same_clients(a, b, skip=("owns", "pending", "has_pending")),
                unchanged(pre, post),
            ),
            {"client": c},
        )
    )
    for fam in families(pre, post, o):
        if fam.name == "DeliverMessage.heartbeat":
            continue  # only the clients' requests, above
        if "member" in fam.params and fam.name != "DeliverMessage.offset_commit":
            x = fam.params["member"]
            clients = z3.And(
                z3.ForAll([_c], b.active(_c) == z3.And(a.active(_c), a.cmem(_c) != x)),
                same_clients(a, b, skip=("active",)),
            )
        else:
            clients = same_clients(a, b)
        out.append(Family(fam.name, z3.And(fam.formula, clients), fam.params))
    return out


def client_initial(s: SymState, a: ClientState) -> BoolRef:
    """Every client active, joining with nothing owned, received or in flight."""
    return z3.And(
        initial(s),
        z3.ForAll(
            [_c, _p],
            z3.And(
                a.active(_c),
                z3.Not(a.owns(_c, _p)),
                z3.Not(a.pending(_c, _p)),
                z3.Not(a.has_pending(_c)),
                z3.Not(a.req(_c)),
                z3.Not(a.resp(_c)),
            ),
        ),
        z3.ForAll(
            [_c, z3.Const("c2", CLIENT)],
            z3.Implies(a.cmem(_c) == a.cmem(z3.Const("c2", CLIENT)), _c == z3.Const("c2", CLIENT)),
        ),
    )


c, c1, c2, m, p = (
    Var("c", "client"),
    Var("c1", "client"),
    Var("c2", "client"),
    Var("m", "member"),
    Var("p", "partition"),
)


def _held_by_its_member(premise: Expr) -> Expr:
    return forall(c, p)(
        Implies(
            all_of(premise, Not(Rel("zombie", (c,)))),
            exists(m)(all_of(Rel("client_member", (c, m)), Rel("holds", (m, p)))),
        )
    )


CLIENT_LEMMAS: tuple[Conjunct, ...] = (
    Conjunct(
        "Lemma.ReceivedTargetIsHeld",
        _held_by_its_member(Rel("client_pending", (c, p))),
        True,
        "A target a client received and has not applied yet is held by its member: what "
        "the client will consume next is already its member's at the coordinator.",
    ),
    Conjunct(
        "Lemma.ResponseIsHeld",
        _held_by_its_member(Rel("client_response", (c, p))),
        True,
        "An assignment on its way to a client is held by the client's member.",
    ),
    Conjunct(
        "Lemma.ClientsHaveTheirOwnMembers",
        forall(c1, c2, m)(
            Implies(
                all_of(Rel("client_member", (c1, m)), Rel("client_member", (c2, m))),
                Same(c1, c2),
            )
        ),
        True,
        "Two clients never share a member id (KIP-1082: each client process generates its own).",
    ),
    Conjunct(
        "Lemma.OneHeartbeatInFlight",
        forall(c)(Not(all_of(Rel("client_request", (c,)), Rel("client_awaiting_response", (c,))))),
        True,
        "A client has at most one heartbeat in flight: a request, or the response to it "
        "(ConsumerHeartbeatRequestManager sends the next one after the response).",
    ),
)
"""The strengthening the client layer tries: what a client will consume is held."""

REQUEST_REPORTS = Conjunct(
    "Lemma.RequestReportsWhatTheClientMayConsume",
    forall(c, p)(
        Implies(
            all_of(
                Rel("client_request", (c,)),
                Not(Rel("zombie", (c,))),
                any_of(Rel("client_owns", (c, p)), Rel("client_pending", (c, p))),
            ),
            Rel("client_request_owns", (c, p)),
        )
    ),
    True,
    "A heartbeat in flight reports every partition its client consumes or is about to "
    "apply: the coordinator never takes an unreported partition for a revoked one.",
)

CLIENT_PROPERTY = Conjunct(
    OWNED_PARTITIONS_ARE_HELD.name,
    OWNED_PARTITIONS_ARE_HELD.expr,  # type: ignore[arg-type]
    False,
    OWNED_PARTITIONS_ARE_HELD.description,
)


def layer_conjuncts(request_lemma: bool) -> tuple[Conjunct, ...]:
    """The client-layer conjuncts tried: the property, its strengthening, and (optionally)
    the lemma that the heartbeat in flight reports everything."""
    return (CLIENT_PROPERTY, *CLIENT_LEMMAS, *((REQUEST_REPORTS,) if request_lemma else ()))


def obligations(
    request_lemma: bool, options: Options, fix: bool, only: tuple[str, ...] | None = None
) -> list[Obligation]:
    """Initiation and consecution (per family) of the layer's conjuncts (those named in
    ``only``, when given)."""
    names = [
        f.name
        for f in client_families(
            SymState.fresh("n0"),
            SymState.fresh("n1"),
            ClientState.fresh("n0"),
            ClientState.fresh("n1"),
            options,
            fix,
        )
    ]
    return [
        Obligation("initiation" if family is None else "consecution", goal.name, family)
        for goal in layer_conjuncts(request_lemma)
        if only is None or goal.name in only
        for family in (None, *names)
    ]


def query(ob: Obligation, *, fix: bool, request_lemma: bool, options: Options) -> Query:
    """One obligation's formulas: the layer's initial states, or the core invariant and the
    layer's conjuncts before a step of the family; a model of the negation is decoded into
    readable lines (:func:`_cti`)."""
    layer = layer_conjuncts(request_lemma)
    goal = next(c for c in layer if c.name == ob.goal)
    pre, post = SymState.fresh("pre"), SymState.fresh("post")
    a, b = ClientState.fresh("pre"), ClientState.fresh("post")
    fam = None
    if ob.family is None:
        premise: tuple[Any, ...] = (client_initial(pre, a),)
        conclusion = read(goal.expr, now=pre, clients={"now": a})
    else:
        fam = next(f for f in client_families(pre, post, a, b, options, fix) if f.name == ob.family)
        assumed = [read(conj.expr, now=pre, clients={"now": a}) for conj in (*INVARIANT, *layer)]
        premise = (*assumed, fam.formula)
        conclusion = read(goal.expr, now=post, clients={"now": b})

    def decode_cti(model: Any) -> Lines:
        return Lines(*_cti(model, pre, post, a, b, fam, goal, layer))

    return Query(ob, premise, conclusion, decode=decode_cti)


def diagnose(
    *,
    fix: bool,
    request_lemma: bool,
    options: Options | None = None,
    timeout_ms: int = 30_000,
    only: tuple[str, ...] | None = None,
    progress: Callable[[int, int, Obligation], None] | None = None,
) -> list[Result]:
    """Initiation and consecution of the client-layer conjuncts (the core invariant is
    assumed in the pre-state: the core proof covers it, and the layer's families are
    restrictions of the core's), run by the obligation runner."""
    o = options if options is not None else Options()
    return run(
        obligations(request_lemma, o, fix, only),
        lambda ob: query(ob, fix=fix, request_lemma=request_lemma, options=o),
        Policy(timeout_ms),
        progress=progress,
    )


def to_json(result: Result) -> dict[str, Any]:
    """A client-layer obligation as ``prove --json`` lists it (``client_layer``): its
    name, goal, family, status, seconds, Z3's reason, and a counterexample's lines with
    whether the Python reading confirms it."""
    doc: dict[str, Any] = {
        "obligation": result.obligation.name,
        "goal": result.obligation.goal,
        "family": result.obligation.family,
        "status": result.status,
        "seconds": round(result.seconds, 3),
    }
    if result.reason:
        doc["reason"] = result.reason
    if result.cti is not None:
        doc["cti"] = result.cti.lines()
        doc["python_confirms"] = result.cti.python_confirms
    return doc


def _cti(
    model: Any,
    pre: SymState,
    post: SymState,
    a: ClientState,
    b: ClientState,
    fam: Family | None,
    goal: Conjunct,
    layer: tuple[Conjunct, ...],
) -> tuple[tuple[str, ...], bool]:
    """Readable lines for a CTI of the layer, and whether the Python reading confirms it
    (the layer's conjuncts hold before, the goal fails after)."""
    before, members, partitions = decode(model, pre)
    elems = model.get_universe(CLIENT) or []
    cname = {str(e): f"c{i}" for i, e in enumerate(elems)}

    def member_of(cs: ClientState, e: Any) -> str:
        v = model.eval(cs.cmem(e), model_completion=True)
        for name, me in members.items():
            if z3.is_true(model.eval(me == v, model_completion=True)):
                return name
        return str(v)

    def parts(f: Any, e: Any) -> list[str]:
        return sorted(
            n
            for n, q in partitions.items()
            if z3.is_true(model.eval(f(e, q), model_completion=True))
        )

    def yes(x: Any) -> bool:
        return bool(z3.is_true(model.eval(x, model_completion=True)))

    def client_lines(cs: ClientState) -> list[str]:
        lines = []
        for e in elems:
            bits = [f"member {member_of(cs, e)}", "active" if yes(cs.active(e)) else "zombie/left"]
            bits.append(f"consumes {parts(cs.owns, e)}")
            if yes(cs.has_pending(e)):
                bits.append(f"received target {parts(cs.pending, e)} not applied yet")
            if yes(cs.req(e)):
                bits.append(f"heartbeat in flight reporting {parts(cs.req_owned, e)}")
            if yes(cs.resp(e)):
                ok = yes(cs.resp_ok(e))
                bits.append(
                    f"response in flight with assignment {parts(cs.resp_assign, e)}"
                    if ok
                    else "error response in flight"
                )
            lines.append(f"  client {cname[str(e)]}: " + ", ".join(bits))
        return lines

    def snapshot(core: Any, cs: ClientState) -> Any:
        base = core.snapshot(members=members, partitions=[("p", int(n[1:])) for n in partitions])
        rel = dict(base.relations)
        extra: dict[str, set[tuple[object, ...]]] = {
            k: set()
            for k in (
                "client_owns",
                "zombie",
                "client_synced",
                "client_member",
                "client_pending",
                "client_response",
                "client_request",
                "client_request_owns",
                "client_awaiting_response",
            )
        }
        for e in elems:
            n = cname[str(e)]
            extra["client_synced"].add((n,))
            extra["client_member"].add((n, member_of(cs, e)))
            if not yes(cs.active(e)):
                extra["zombie"].add((n,))
            if yes(cs.req(e)):
                extra["client_request"].add((n,))
            if yes(cs.resp(e)):
                extra["client_awaiting_response"].add((n,))
            for pn, q in partitions.items():
                tp = ("p", int(pn[1:]))
                if yes(cs.owns(e, q)):
                    extra["client_owns"].add((n, tp))
                if yes(cs.has_pending(e)) and yes(cs.pending(e, q)):
                    extra["client_pending"].add((n, tp))
                if yes(cs.resp(e)) and yes(cs.resp_ok(e)) and yes(cs.resp_assign(e, q)):
                    extra["client_response"].add((n, tp))
                if yes(cs.req(e)) and yes(cs.req_owned(e, q)):
                    extra["client_request_owns"].add((n, tp))
        rel.update({k: frozenset(v) for k, v in extra.items()})
        return Snapshot(tuple(cname.values()), base.members, base.partitions, rel, base.functions)

    lines = ["pre-state (satisfies the invariant):"]
    lines += ["  " + x for x in render(before)] + client_lines(a)
    if fam is None:
        return tuple(lines), not compile_expr(goal.expr)(snapshot(before, a), {})
    after, _, _ = decode(model, post)
    params = params_of(model, fam, members, partitions)
    if "client" in fam.params:
        params["client"] = cname.get(
            str(model.eval(fam.params["client"], model_completion=True)), "?"
        )
    lines.append(f"action {fam.name}(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")")
    lines.append("post-state:")
    lines += ["  " + x for x in render(after)] + client_lines(b)
    sb, sa = snapshot(before, a), snapshot(after, b)
    # the layer's own conjuncts hold before and the goal fails after (Python reading)
    confirms = all(compile_expr(c.expr)(sb, {}) for c in layer) and not compile_expr(goal.expr)(
        sa, {}
    )
    return tuple(lines), confirms
