"""The quantified Z3 reading of a property over symbolic states.

``invariants.z3.encode`` unrolls a property over the finite domains of one snapshot; this
reading keeps its quantifiers: ``∀m`` ranges over the uninterpreted sort of member ids,
``∀p`` over partitions, so one formula speaks of groups of any size. A ``now`` symbol is
read on one symbolic state, ``pre``/``post`` symbols on the two states of a step.

The vocabulary is the snapshot's (``invariants.snapshot``) as far as the abstraction keeps
it (``invariants.z3.proof.state``), plus three symbols only lemmas use:
``partition_held(p)`` and ``partition_epoch(p)`` (the group's partition epochs) and
``previous_epoch(m)``. ``server_error(c)`` reads the coordinator-side ghost (a write was
refused), which holds whenever a client was answered UNKNOWN_SERVER_ERROR.
``group_status()`` is derived from the fields as ``coordinator.group_status`` derives it.
``assigned_since`` and ``holder_commit_rejected()`` read the KIP-1251 fields of a state
that keeps them (``SymState.since``, ``holder_rejected``); on one that does not,
``assigned_since`` is the snapshot's default (``FUNCTION_DEFAULT``) and
``holder_commit_rejected()`` raises :class:`OutsideAbstraction`. ``instance(m)`` reads
the instance number of a state that keeps instance ids (``SymState.instance``), 0 (a
dynamic member) on one that does not. ``exists(p)`` reads ``SymState.present`` and
``group_deletions()`` ``SymState.deletions`` of a state that keeps them (KIP-211 expiry,
group deletion). ``assignor_runs()`` counts the KIP-1263 run slots in use
(``SymState.runs``; 0 on a state without them). Lemmas read the oldest run in flight
(slot 0): ``run_in_flight()`` (1 when it holds a run), ``run_epoch()``,
``run_group_deleted()`` (1 when its group was deleted while it ran; 0 on a state without
deletion), ``run_instance(m)`` (0 on a state without instance ids) and the relations
``run_target(m, p)`` and ``run_member(m)``; on a state without runs ``run_in_flight()``
is 0 and the others raise :class:`OutsideAbstraction`. On a state that keeps the KIP-1251
assignment history (``SymState.history``) the ``HISTORY_RELATIONS`` are read off it:
``epoch_clash`` and ``commit_by_epoch_holder`` as ``invariants.snapshot`` defines them, and
the lemmas' ``stamp_recorded``, ``stamped_above_assignment_epoch``,
``stamped_at_assignment_epoch`` and ``stamped_since_held``. Any other symbol raises
:class:`OutsideAbstraction` too.
"""

from __future__ import annotations

from typing import Any

import z3

from invariants.expr import (
    FUNCTION_DEFAULT,
    And,
    Cmp,
    Const,
    Exists,
    Expr,
    ForAll,
    Implies,
    IntTerm,
    Not,
    Or,
    Rel,
    Same,
    Sort,
    When,
    atoms,
)
from invariants.z3.proof.state import (
    MEMBER,
    PARTITION,
    STABLE,
    UNRELEASED,
    UNREVOKED,
    BoolRef,
    ExprRef,
    SymState,
    run_count,
)

CLIENT = z3.DeclareSort("Client")

_SORTS: dict[Sort, Any] = {"member": MEMBER, "partition": PARTITION, "client": CLIENT}

_BINARY = ("assigned", "revoking", "target", "subscribed", "committed_by")
_STATUS = {"stable": STABLE, "unrevoked": UNREVOKED, "unreleased": UNRELEASED}

SUPPORTED_RELATIONS = frozenset(
    {
        *_BINARY,
        "holds",
        "is_member",
        *_STATUS,
        "partition_held",
        "server_error",
        "run_target",
        "run_member",
    }
)
SUPPORTED_FUNCTIONS = frozenset(
    {
        "group_epoch",
        "assignment_epoch",
        "member_epoch",
        "previous_epoch",
        "member_state",
        "committed_epoch",
        "partition_epoch",
        "instance",
        "assigned_since",
        "holder_commit_rejected",
        "group_status",
        "assignor_runs",
        "run_in_flight",
        "run_epoch",
        "run_group_deleted",
        "run_instance",
    }
)


class OutsideAbstraction(ValueError):
    """A property reads a symbol the symbolic state does not keep (a client's view, the
    group status, …): it cannot be read over the abstraction."""


Env = dict[str, ExprRef]


def read(
    expr: Expr,
    *,
    now: SymState | None = None,
    pre: SymState | None = None,
    post: SymState | None = None,
    env: Env | None = None,
    clients: dict[When, Any] | None = None,
) -> BoolRef:
    """The Z3 formula for ``expr``: state symbols on ``now``, step symbols on ``pre`` and
    ``post``; client symbols on ``clients[when]`` (an
    ``invariants.z3.proof.clients.ClientState``), when given."""
    sides: dict[When, SymState | None] = {"now": now, "pre": pre, "post": post}
    return _read(expr, sides, dict(env or {}), clients or {})


def _side(sides: dict[When, SymState | None], when: When, name: str) -> SymState:
    s = sides[when]
    if s is None:
        raise ValueError(f"{name} is read '{when}', and no such state was given")
    return s


def _var(env: Env, name: str) -> ExprRef:
    try:
        return env[name]
    except KeyError:
        raise ValueError(f"variable {name!r} is not bound by a quantifier") from None


def _term(
    t: IntTerm, sides: dict[When, SymState | None], env: Env, clients: dict[When, Any]
) -> ExprRef:
    if isinstance(t, Const):
        return z3.IntVal(t.value)
    args = [_var(env, v.name) for v in t.args]
    name = t.name
    cs = clients.get(t.when)
    if name in CLIENT_FUNCTIONS and cs is not None and hasattr(cs, name[len("client_") :]):
        return getattr(cs, name[len("client_") :])(*args)
    s = _side(sides, t.when, t.name)
    if name == "group_epoch":
        return s.group_epoch
    if name == "assignment_epoch":
        return s.assignment_epoch
    if name == "member_epoch":
        return s.epoch(*args)
    if name == "previous_epoch":
        return s.prev(*args)
    if name == "member_state":
        return s.mstate(*args)
    if name == "committed_epoch":
        return s.committed_epoch(*args)
    if name == "partition_epoch":
        return s.pe(*args)
    if name == "group_status":
        return s.group_status()
    if name == "instance":
        return s.instance_of(*args)  # 0 where the state keeps no instance ids
    if name == "assigned_since":
        if s.since is not None:
            return s.since(*args)
        return z3.IntVal(FUNCTION_DEFAULT)  # KIP-1251 assignment epochs are not kept
    if name == "holder_commit_rejected" and s.holder_rejected is not None:
        return z3.If(s.holder_rejected, 1, 0)
    if name == "group_deletions" and s.deletions is not None:
        return s.deletions
    if name == "assignor_runs":
        return run_count(s)  # 0 where the state keeps no runs: no offload, none in flight
    if name == "run_in_flight":
        return z3.If(s.runs[0].on, 1, 0) if s.runs else z3.IntVal(0)
    if name == "run_epoch" and s.runs:
        return s.runs[0].epoch
    if name == "run_group_deleted" and s.runs:
        slot = s.runs[0]
        return z3.If(slot.deleted, 1, 0) if slot.deleted is not None else z3.IntVal(0)
    if name == "run_instance" and s.runs:
        slot = s.runs[0]
        return slot.instance(*args) if slot.instance is not None else z3.IntVal(0)
    raise OutsideAbstraction(f"function {name!r} is outside the abstraction")


CLIENT_RELATIONS = frozenset(
    {
        "client_owns",
        "zombie",
        "client_synced",
        "client_member",
        "client_pending",
        "client_response",
        "client_request",
        "client_request_owns",
        "client_awaiting_response",
        "client_revoking",
        "client_joining",
    }
)
"""The client vocabulary of the client layers (``invariants.z3.proof.clients``,
``invariants.z3.proof.bmc_clients``)."""

CLIENT_FUNCTIONS = frozenset({"client_epoch", "client_incarnation"})
"""The client functions a client layer may keep (``epoch``, ``incarnation`` of its clients):
read on it when it has them."""


def _client_rel(name: str, cs: Any, args: list[ExprRef]) -> BoolRef:
    if name == "client_owns":
        return cs.owns(*args)
    if name == "zombie":
        return z3.Not(cs.active(*args))
    if name == "client_synced":
        return z3.BoolVal(True)
    if name == "client_member":
        return cs.cmem(args[0]) == args[1]
    if name == "client_pending":
        return z3.And(cs.has_pending(args[0]), cs.pending(*args))
    if name == "client_response":
        return z3.And(cs.resp(args[0]), cs.resp_ok(args[0]), cs.resp_assign(*args))
    if name == "client_request":
        return cs.req(*args)
    if name == "client_awaiting_response":
        return cs.resp(*args)
    if name == "client_revoking":
        return cs.revoking_now(*args)
    if name == "client_joining":
        return cs.joining(*args)
    return z3.And(cs.req(args[0]), cs.req_owned(*args))


HISTORY_RELATIONS = frozenset(
    {
        "epoch_clash",
        "commit_by_epoch_holder",
        "stamp_recorded",
        "stamped_above_assignment_epoch",
        "stamped_at_assignment_epoch",
        "stamped_since_held",
    }
)
"""The relations read off the KIP-1251 assignment history (``SymState.history``): the
catalogue's ``epoch_clash`` and ``commit_by_epoch_holder`` (``invariants.snapshot``) and
the lemma vocabulary of ``invariants.z3.proof.induction.HISTORY_LEMMAS``, defined as
``invariants.z3.proof.state.Concrete.history_relations`` computes them."""


def _history_rel(name: str, s: SymState, args: list[ExprRef]) -> BoolRef:
    # Bound names of their own ("history.*"), distinct from the properties' variables
    # ("<name>!<depth>") and from one another: no capture, and the same query each time.
    h = s.history
    assert h is not None
    e, e2 = z3.Int("history.e"), z3.Int("history.e2")
    m2 = z3.Const("history.m2", MEMBER)
    if name == "epoch_clash":
        m, p = args
        return z3.Exists([m2, e], z3.And(m2 != m, h(m, p, e), h(m2, p, e)))
    if name == "commit_by_epoch_holder":
        m, p = args
        ce = s.committed_epoch(p)
        m3 = z3.Const("history.m3", MEMBER)
        unstamped = z3.Not(z3.Exists([m3, e2], h(m3, p, e2)))
        held_then = z3.Exists(
            [e],
            z3.And(
                h(m, p, e),
                e <= ce,
                z3.ForAll(
                    [m2, e2],
                    z3.Implies(z3.And(h(m2, p, e2), e <= e2, e2 <= ce), m2 == m),
                ),
            ),
        )
        return z3.And(s.committed_by(m, p), z3.Or(unstamped, held_then))
    if name == "stamp_recorded":
        m, p = args
        assert s.since is not None
        return z3.And(s.is_member(m), s.holds(m, p), h(m, p, s.since(m, p)))
    if name == "stamped_above_assignment_epoch":
        m, p = args
        return z3.Exists([e], z3.And(h(m, p, e), e > s.assignment_epoch))
    if name == "stamped_at_assignment_epoch":
        m, p = args
        return h(m, p, s.assignment_epoch)
    other, m, p = args  # stamped_since_held(m2, m, p)
    assert s.since is not None
    return z3.And(
        s.is_member(m),
        s.holds(m, p),
        z3.Exists([e], z3.And(h(other, p, e), s.since(m, p) <= e)),
    )


def _read(
    expr: Expr, sides: dict[When, SymState | None], env: Env, clients: dict[When, Any]
) -> BoolRef:
    if isinstance(expr, Rel) and expr.name in CLIENT_RELATIONS and clients.get(expr.when):
        return _client_rel(expr.name, clients[expr.when], [_var(env, v.name) for v in expr.args])
    if isinstance(expr, Rel):
        s = _side(sides, expr.when, expr.name)
        args = [_var(env, v.name) for v in expr.args]
        name = expr.name
        if name in _BINARY:
            return getattr(s, name)(*args)
        if name == "holds":
            return s.holds(*args)
        if name == "is_member":
            return s.is_member(*args)
        if name in _STATUS:
            return s.mstate(*args) == _STATUS[name]
        if name == "partition_held":
            return s.pe_held(*args)
        if name == "server_error":
            return s.server_error
        if name == "exists" and s.present is not None:
            return s.present(*args)
        if name == "run_target" and s.runs:
            return s.runs[0].target(*args)
        if name == "run_member" and s.runs:
            return s.runs[0].member(*args)
        if name in HISTORY_RELATIONS and s.history is not None:
            return _history_rel(name, s, args)
        raise OutsideAbstraction(f"relation {name!r} is outside the abstraction")
    if isinstance(expr, Cmp):
        left = _term(expr.left, sides, env, clients)
        right = _term(expr.right, sides, env, clients)
        op = expr.op
        if op == "==":
            return left == right
        if op == "!=":
            return left != right
        if op == "<=":
            return left <= right
        if op == "<":
            return left < right
        if op == ">=":
            return left >= right
        return left > right
    if isinstance(expr, Same):
        return _var(env, expr.left.name) == _var(env, expr.right.name)
    if isinstance(expr, Not):
        return z3.Not(_read(expr.body, sides, env, clients))
    if isinstance(expr, And):
        return (
            z3.And(*[_read(p, sides, env, clients) for p in expr.parts])
            if expr.parts
            else z3.BoolVal(True)
        )
    if isinstance(expr, Or):
        return (
            z3.Or(*[_read(p, sides, env, clients) for p in expr.parts])
            if expr.parts
            else z3.BoolVal(False)
        )
    if isinstance(expr, Implies):
        return z3.Implies(
            _read(expr.premise, sides, env, clients), _read(expr.conclusion, sides, env, clients)
        )
    if isinstance(expr, ForAll | Exists):
        inner = dict(env)
        bound = []
        for v in expr.vars:
            c = z3.Const(f"{v.name}!{len(env)}", _SORTS[v.sort])
            inner[v.name] = c
            bound.append(c)
        body = _read(expr.body, sides, inner, clients)
        return z3.ForAll(bound, body) if isinstance(expr, ForAll) else z3.Exists(bound, body)
    raise TypeError(f"not an expression: {expr!r}")


def readable(expr: Expr) -> bool:
    """Whether every symbol of ``expr`` is inside the abstraction."""
    for a in atoms(expr):
        names = SUPPORTED_RELATIONS if isinstance(a, Rel) else SUPPORTED_FUNCTIONS
        if a.name not in names:
            return False
    return True
