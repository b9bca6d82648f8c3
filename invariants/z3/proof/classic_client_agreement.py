"""The classic client layer (``invariants.z3.proof.classic_clients``) against the Python
classic model, on concrete client steps.

:func:`check_client_step` pins the layer's view (``project_client``) of the acting client
before and after a model step on the finite domains they mention, asks whether the step's
client family allows them (``allowed``) and, with the family's parameters fixed to what
the step did (the response's fields and connection; whether a leader's assignment
failed), whether the model's successor is the family's only one (``unique``);
:func:`check_join_request` whether a ``SendJoinGroup``'s facts are the fields of the
JoinGroup the model sent. A client
step changes no other client and, but for a response carrying an offset commit, not the
coordinator (:func:`client_cross_check` checks that in Python).

:func:`client_cross_check` checks the client steps out of the first ``max_states`` states
of a classic configuration in BFS order (``classic_agreement.bfs_steps``), at most
``per_family`` per family and branch of its rule (:func:`case`); the verdict is ``ok``
only if every step checked agreed and no query was unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import z3

from invariants.z3.proof.agreement import Answer, StepCheck, _answer, _reason, _solver
from invariants.z3.proof.classic_agreement import bfs_steps
from invariants.z3.proof.classic_clients import (
    CLIENT_FAMILIES,
    ClientOptions,
    ClientSym,
    acting_client,
    client_family_of,
    client_partitions,
    pin_client,
    project_client,
)
from invariants.z3.proof.classic_state import project
from invariants.z3.proof.classic_transition import grounded
from invariants.z3.proof.state import MEMBER, Universe
from invariants.z3.proof.transition import Family
from model.actions import Action, DeliverMessage
from model.classic.messages import JoinGroupRequest, JoinGroupResponse, SyncGroupResponse
from model.classic.records import ClassicState
from model.config import Config

Verdict = Literal["ok", "violation", "inconclusive"]

DEFAULT_TIMEOUT_MS = 20_000


def _parameters(
    fam: Family, action: Action, post: ClassicState, client: str, u: Universe
) -> list[Any]:
    """The family's parameters fixed to what the model step did."""
    p = fam.params
    out: list[Any] = []
    if isinstance(action, DeliverMessage):
        m, body = action.message, action.message.body
        out += [p["incarnation"] == m.incarnation, p["connection"] == m.connection]
        out.append(p["error"] == int(getattr(body, "error_code")))  # noqa: B009
        if isinstance(body, JoinGroupResponse):
            out.append(p["generation"] == body.generation_id)
            out.append(p["is_leader"] == (body.leader == body.member_id))
            if body.member_id:
                out.append(p["member"] == u.member_consts[body.member_id])
        if isinstance(body, SyncGroupResponse):
            out += [
                p["assignment"](pc) == (tp in body.assignment)
                for tp, pc in u.partition_consts.items()
            ]
    if "fails" in p:
        out.append(p["fails"] == (post.client(client).group_request is None))
    return out


def check_client_step(
    pre: ClassicState,
    action: Action,
    post: ClassicState,
    config: Config,
    *,
    options: ClientOptions | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    as_sent: bool = False,
) -> StepCheck:
    """Check one client step of the model against its client family (module docstring);
    with ``as_sent`` ``allowed`` asks it with the parameters fixed to the step's too (the
    response as the coordinator sent it)."""
    opts = options if options is not None else ClientOptions.of(config)
    name = client_family_of(action)
    who = acting_client(action)
    if name is None or who is None:
        return StepCheck(type(action).__name__, "unknown", None, "not a client family")
    before = project_client(pre, pre.client(who))
    after = project_client(post, post.client(who))
    members = {v.member for v in (before, after) if v.member}
    parts = client_partitions((before, after))
    if isinstance(action, DeliverMessage):
        body = action.message.body
        if isinstance(body, JoinGroupResponse) and body.member_id:
            members.add(body.member_id)
        if isinstance(body, SyncGroupResponse):
            parts |= set(body.assignment)
    u = Universe.of(members or {"-"}, parts or {("", -1)})
    spre, spost = ClientSym.fresh(who, "pre"), ClientSym.fresh(who, "post")
    with grounded(u.member_consts.values(), u.partition_consts.values()):
        fam = CLIENT_FAMILIES[name](spre, spost, opts)
    mcs = list(u.member_consts.values())
    within = [
        z3.Or(*[x == c for c in mcs])
        for x in (spre.member, spost.member, *fam.params.values())
        if z3.is_const(x) and x.sort() == MEMBER
    ]
    base = [*within, *pin_client(spre, before, u)]
    if len(mcs) > 1:
        base.append(z3.Distinct(*mcs))
    if len(u.partition_consts) > 1:
        base.append(z3.Distinct(*u.partition_consts.values()))
    pins_post = pin_client(spost, after, u)

    fixed = _parameters(fam, action, post, who, u)
    s = _solver(timeout_ms)
    s.add(*base, *pins_post, fam.formula, *(fixed if as_sent else ()))
    allowed: Answer = _answer(s.check())
    reason = _reason(s, allowed)

    s = _solver(timeout_ms)
    s.add(*base, fam.formula, *fixed)
    s.add(z3.Not(z3.And(*pins_post)))
    other = _answer(s.check())
    unique: Answer = {"yes": "no", "no": "yes", "unknown": "unknown"}[other]  # type: ignore[assignment]
    return StepCheck(name, allowed, unique, reason or _reason(s, other))


def check_join_request(
    pre: ClassicState,
    action: Action,
    post: ClassicState,
    config: Config,
    *,
    options: ClientOptions | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> Answer:
    """Whether the facts of a ``SendJoinGroup`` step (``classic_clients.send_join_group``:
    the member id, generation, owned partitions, user data and subscribed partitions its
    JoinGroup carries) are, on the pinned client before the step, those of the JoinGroup
    the model sent: ``yes`` when no other values are possible (the facts as the link to
    the coordinator's ``DeliverMessage.join_group`` reads them)."""
    opts = options if options is not None else ClientOptions.of(config)
    who = acting_client(action)
    assert who is not None
    req = next(
        m.body
        for m in reversed(post.network)
        if m.to_coordinator and m.client == who and isinstance(m.body, JoinGroupRequest)
    )
    before = project_client(pre, pre.client(who))
    sub = req.subscription
    sent = frozenset(sub.owned_partitions)
    user = frozenset(sub.user_data)
    subscribed = project_client(post, post.client(who)).subscribed
    members = {x for x in (before.member, req.member_id) if x}
    parts = client_partitions((before,)) | set(sent) | set(user) | set(subscribed)
    u = Universe.of(members or {"-"}, parts or {("", -1)})
    spre, spost = ClientSym.fresh(who, "pre"), ClientSym.fresh(who, "post")
    with grounded(u.member_consts.values(), u.partition_consts.values()):
        fam = CLIENT_FAMILIES["SendJoinGroup"](spre, spost, opts)
        f = fam.facts
        facts = [
            f["has_member"] == bool(req.member_id),
            f["generation"] == sub.generation_id,
            *[f["owned"](pc) == (tp in sent) for tp, pc in u.partition_consts.items()],
            *[f["user_data"](pc) == (tp in user) for tp, pc in u.partition_consts.items()],
            *[f["subscribed"](pc) == (tp in subscribed) for tp, pc in u.partition_consts.items()],
        ]
        if req.member_id:
            facts.append(f["member"] == u.member_consts[req.member_id])
    s = _solver(timeout_ms)
    if len(u.partition_consts) > 1:
        s.add(z3.Distinct(*u.partition_consts.values()))
    if len(u.member_consts) > 1:
        s.add(z3.Distinct(*u.member_consts.values()))
    s.add(*pin_client(spre, before, u), fam.formula, z3.Not(z3.And(*facts)))
    return {"yes": "no", "no": "yes", "unknown": "unknown"}[_answer(s.check())]  # type: ignore[return-value]


@dataclass
class ClientOutcome:
    """A client cross-check: the verdict, the steps checked per case (:func:`case`) and the
    disagreements (family, action, what disagreed)."""

    verdict: Verdict
    checked: dict[str, int] = field(default_factory=dict)
    disagreements: list[tuple[str, str, str]] = field(default_factory=list)


def _others_unchanged(pre: ClassicState, post: ClassicState, who: str) -> bool:
    """A client step changes no other client, and the coordinator only by the offset
    commit a response may send (the group itself is as it was)."""
    same = all(
        project_client(pre, a) == project_client(post, b)
        for a, b in zip(pre.clients, post.clients, strict=True)
        if a.name != who
    )
    return same and project(pre) == project(post)


def case(pre: ClassicState, action: Action, name: str, who: str) -> str:
    """The family and the branch of its rule a step takes (the response's error; for a
    JoinGroup whether ``onJoinPrepare`` runs and on a reset member owning something; for a
    SyncGroup whether a leader sends it): the cross-check takes up to ``per_family`` steps
    of each."""
    if isinstance(action, DeliverMessage):
        return f"{name}:{getattr(action.message.body, 'error_code').name}"  # noqa: B009
    c = pre.client(who)
    if name == "SendJoinGroup" and c.needs_join_prepare:
        reset = c.generation_id < 0 or not c.member_id
        return f"{name}:{'reset' if reset else 'prepare'}{':owning' if c.owned else ''}"
    if name == "SendSyncGroup":
        return f"{name}:{'leader' if c.leader else 'follower'}"
    return name


def client_cross_check(
    config: Config,
    *,
    max_states: int,
    per_family: int = 2,
    options: ClientOptions | None = None,
) -> ClientOutcome:
    """Check the client steps out of the first ``max_states`` BFS states of ``config``
    (module docstring)."""
    out = ClientOutcome("ok")
    for pre, action, post in bfs_steps(config, max_states):
        name = client_family_of(action)
        who = acting_client(action)
        if name is None or who is None:
            continue
        assert isinstance(pre, ClassicState)
        assert isinstance(post, ClassicState)
        key = case(pre, action, name, who)
        if out.checked.get(key, 0) >= per_family:
            continue
        out.checked[key] = out.checked.get(key, 0) + 1
        if not _others_unchanged(pre, post, who):
            out.disagreements.append((name, repr(action), "another client or the group changed"))
            out.verdict = "violation"
            continue
        r = check_client_step(pre, action, post, config, options=options)
        if name == "SendJoinGroup" and r.allowed == "yes" and r.unique == "yes":
            sent = check_join_request(pre, action, post, config, options=options)
            if sent != "yes":
                out.verdict = "violation" if sent == "no" else out.verdict
                if sent == "unknown" and out.verdict == "ok":
                    out.verdict = "inconclusive"
                out.disagreements.append((name, repr(action), f"request facts: {sent}"))
            continue
        if r.allowed == "yes" and r.unique == "yes":
            continue
        if "unknown" in (r.allowed, r.unique):
            if out.verdict == "ok":
                out.verdict = "inconclusive"
        else:
            out.verdict = "violation"
        out.disagreements.append((name, repr(action), f"allowed={r.allowed} unique={r.unique}"))
    return out
