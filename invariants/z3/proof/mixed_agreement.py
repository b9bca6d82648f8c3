"""The mixed relation against the Python migration model on concrete steps, both ways.

:func:`check_step` pins the projection (``mixed_state.project``) of a model step's state
before, fixes the family's parameters to what the step did (:func:`parameters`: the
request's fields, the member a timer fires for, the coordinator's choices as the model
made them) and asks whether the family allows the projection of the state after
(``allowed``) and whether that is the family's only successor (``unique``). The
``ClassicGroup`` family, which does not follow the classic group's rules, is checked one
way only (``unique`` is None). A step that leaves the projection as it was is the
``Unchanged`` family's, whatever its action (a refused request, a client's step).

:func:`walk_check` is the mixed side of ``groupcheck prove --agreement``: the walk loop
of ``invariants.z3.proof.walks`` (seeded walks, side steps, BFS steps, a model-only
search for a family the walks missed; a mutant's rules against the relation's variant of
them, ``reference``) with these step checks, and the verdict rules and result shape of
the classic and the KIP-848 cross-checks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import z3

from invariants.z3.proof.agreement import Answer, _answer, _reason, _solver
from invariants.z3.proof.agreement import StepCheck as RelationCheck
from invariants.z3.proof.mixed_state import (
    ID_SLOTS,
    MixedDomains,
    MixedSym,
    MixedValue,
    OutsideUniverse,
    domains_of,
    pin,
    project,
)
from invariants.z3.proof.mixed_transition import (
    FAMILY_NAMES,
    MixedOptions,
    families,
    family_of,
    unsupported,
)
from invariants.z3.proof.walks import Relation, WalkOutcome, walk_loop
from model.actions import Action, DeliverMessage, RebalanceTimeout, SessionTimeout
from model.classic.messages import UNKNOWN_MEMBER_ID, JoinGroupRequest
from model.classic.records import ClassicGroup
from model.config import Config
from model.consumer import coordinator as co
from model.migration import coordinator as mco
from model.migration.records import MixedState
from model.records import ConsumerGroupHeartbeatRequest, Group, Member


@dataclass(frozen=True)
class StepCheck:
    """One step's verdicts: the family, whether it allows the model's successor and
    whether that successor is its only one (None: not asked)."""

    family: str
    allowed: bool
    unique: bool | None


def _number(table: Mapping[str, int], name: str | None) -> int:
    """``name``'s number in ``table`` (0: none)."""
    if name is None:
        return 0
    if name not in table:
        raise OutsideUniverse(name)
    return table[name]


def _topics(m: Member | None, g: Group) -> frozenset[str]:
    return co.subscribed_topics(m, g) if m is not None else frozenset()


def parameters(
    pre: MixedState, action: Action, post: MixedState, d: MixedDomains, config: Config
) -> dict[str, Any]:
    """The family's parameters as the model step took them (by name; member ids as
    indices into the universe)."""
    ids = {m: i + 1 for i, m in enumerate(d.members)}

    def index(mid: str) -> int:
        return _number(ids, mid) - 1

    name = family_of(pre, action)
    group = pre.group
    if name in ("SessionTimeout", "RebalanceTimeout"):
        assert isinstance(action, SessionTimeout | RebalanceTimeout)
        return {"member": index(action.member_id)}
    assert isinstance(action, DeliverMessage)
    body = action.message.body
    if name in ("DeliverMessage.consumer_leave", "DeliverMessage.classic_leave"):
        assert isinstance(group, Group)
        gone = [mid for mid in group.members if mid not in post.group.members]
        return {"member": index(gone[0])}
    if name == "DeliverMessage.static_leave":
        assert isinstance(body, ConsumerGroupHeartbeatRequest)
        return {"member": index(body.member_id)}
    if name == "DeliverMessage.consumer_join":
        assert isinstance(body, ConsumerGroupHeartbeatRequest)
        out: dict[str, Any] = {
            "member": index(body.member_id),
            "instance": _number(d.instances, body.instance_id),
            "assignor": _number(d.assignors, body.server_assignor),
            "join": body.member_epoch == 0,
            "generation": 0,
            "fresh": False,
            "refused": False,
        }
        base = group
        if isinstance(group, ClassicGroup):
            out["fresh"] = mco.is_empty_classic(group)
            out["generation"] = group.generation_id
            if out["fresh"]:
                base = mco.new_consumer_group(group, config)
                out["refused"] = body.member_id not in post.group.members
            else:
                base = mco.bump_for_replacement(mco.from_classic_group(group), body.instance_id)
        assert isinstance(base, Group)
        old = base.members.get(body.member_id)
        holder = base.static_member_id(body.instance_id) if body.instance_id else None
        if old is None and holder is not None and body.member_epoch == 0:
            old = base.members[holder]
        new = body.subscribed_topic_names
        before = _topics(old, base)
        after = new if new is not None else before
        out["subscription_changed"] = after != before
        return out | _rows(frozenset(after), post, d)
    assert name == "DeliverMessage.classic_join"
    assert isinstance(body, JoinGroupRequest)
    assert isinstance(group, Group)
    unknown = body.member_id == UNKNOWN_MEMBER_ID
    client = action.message.client
    new_id = f"{client}.m{pre.issued_member_ids.get(client, 0) + 1}"
    mid = new_id if unknown else body.member_id
    old = group.members.get(mid)
    holder = group.static_member_id(body.instance_id) if body.instance_id else None
    if old is None and holder is not None:
        old = group.members[holder]
    before = _topics(old, group)
    id_required = unknown and body.instance_id is None
    return _rows(frozenset(body.subscription.topics), post, d) | {
        "member": index(new_id if unknown else body.member_id),
        "unknown": unknown,
        "new_id": index(new_id) if unknown else 0,
        "instance": _number(d.instances, body.instance_id),
        "supported": True,
        "subscription_changed": body.subscription.topics != before,
        "refused": not id_required and mid not in post.group.members,
    }


def _rows(topics: frozenset[str], post: MixedState, d: MixedDomains) -> dict[str, Any]:
    """A join's ``topics.<topic>`` (the member's subscription after the request) and
    ``target.<member>.<partition>`` (the target the step leaves; none when it leaves a
    classic group, whose assignments come from the group before the step)."""
    if not topics <= set(d.topics):
        raise OutsideUniverse(", ".join(sorted(topics - set(d.topics))))
    value = project(post)
    targets = dict(value.targets)
    if value.consumer:
        targets |= {mid: mv.target for mid, mv in value.members.items()}
    out: dict[str, Any] = {f"topics.{t}": t in topics for t in d.topics}
    for m in d.members:
        for x in d.partitions:
            out[f"target.{m}.{x}"] = x in targets.get(m, frozenset())
    return out


DEFAULT_TIMEOUT_MS = 20_000


def _slots(*values: MixedValue) -> int:
    """The member ids per classic client a universe needs for ``values`` (at least
    ``ID_SLOTS``): a walk may hand a classic client more ids than BMC's default."""
    handed = [int(mid.rsplit(".m", 1)[1]) for v in values for mid in v.issued]
    return max([ID_SLOTS, *handed])


def answer_step(
    pre: MixedState,
    action: Action,
    post: MixedState,
    config: Config,
    variant: str | None = None,
    *,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> RelationCheck:
    """:func:`check_step`'s queries, answered as the other relations' step checks are
    (``agreement.StepCheck``: yes, no or unknown within ``timeout_ms``, with Z3's
    reason)."""
    before, after = project(pre), project(post)
    d = domains_of(config, _slots(before, after))
    o = MixedOptions.of(config, variant)
    name = family_of(pre, action)
    s0, s1 = MixedSym.fresh("a", d), MixedSym.fresh("b", d)
    (fam,) = families(s0, s1, d, o, (name,))
    solver = _solver(timeout_ms)
    solver.add(*pin(s0, before, d), fam.formula)
    if name != "ClassicGroup":
        values = parameters(pre, action, post, d, config)
        assert set(values) == set(fam.params), (values, fam.params)
        solver.add(*[fam.params[k] == v for k, v in values.items()])
    pinned = z3.And(*pin(s1, after, d))
    allowed: Answer = _answer(solver.check(pinned))
    reason = _reason(solver, allowed)
    unique: Answer | None = None
    if name != "ClassicGroup":
        other = _answer(solver.check(z3.Not(pinned)))
        unique = {"yes": "no", "no": "yes", "unknown": "unknown"}[other]  # type: ignore[assignment]
        reason = reason or _reason(solver, other)
    return RelationCheck(name, allowed, unique, reason)


def check_step(
    pre: MixedState, action: Action, post: MixedState, config: Config, variant: str | None = None
) -> StepCheck:
    """The verdicts on one model step that changes the projection (module docstring)."""
    check = answer_step(pre, action, post, config, variant)
    unique = None if check.unique is None else check.unique == "yes"
    return StepCheck(check.family, check.allowed == "yes", unique)


# --------------------------------------------------------------------------- walks


def possible_families(config: Config) -> tuple[str, ...]:
    """The families a mixed ``config`` can take, read from its switches (an
    over-approximation, in ``FAMILY_NAMES`` order): a consumer-protocol client that is
    or may become subscribed joins (a classic one: ``ClassicGroup``); the group mixes
    (a classic JoinGroup to a consumer group, ``classic_join``) when both kinds of
    client can join and the policy is not ``disabled`` (``mco.admits_classic_join``);
    a ``Leave`` perturbation gives a consumer-protocol leave (epoch -1) and, in a mixed
    group, a classic LeaveGroup; a ``TemporaryLeave`` a static leave (-2); the timers
    fence a consumer group's member once a process can be gone or a request lost."""

    def perturb(name: str) -> bool:
        return config.max_perturbations > 0 and config.allows(name)

    joining = [c for c in config.clients if c.subscribed or perturb("Subscribe")]
    consumer = [c for c in joining if c.group_protocol == "consumer"]
    classic = [c for c in joining if c.group_protocol == "classic"]
    mixes = bool(consumer and classic) and config.migration_policy != "disabled"
    gone = (
        config.slow_clients
        or any(perturb(p) for p in ("Crash", "Leave", "TemporaryLeave", "Restart"))
        or (config.live_timers and perturb("LoseMessage"))
    )
    can = {
        "DeliverMessage.consumer_join": bool(consumer),
        "DeliverMessage.consumer_leave": bool(consumer) and perturb("Leave"),
        "DeliverMessage.static_leave": any(c.instance_id for c in consumer)
        and perturb("TemporaryLeave"),
        "DeliverMessage.classic_join": mixes,
        "DeliverMessage.classic_leave": mixes and perturb("Leave"),
        "SessionTimeout": bool(consumer) and gone,
        "RebalanceTimeout": bool(consumer) and gone,
        "ClassicGroup": bool(classic),
        "Unchanged": True,
    }
    return tuple(name for name in FAMILY_NAMES if can[name])


def _mixed(value: object) -> MixedState:
    if not isinstance(value, MixedState):
        raise ValueError("the mixed cross-check covers mixed configs' states")
    return value


def step_family(pre: MixedState, action: Action, post: MixedState) -> str:
    """The family a model step is checked under: ``Unchanged`` if the projection stayed,
    else ``family_of`` its action."""
    return "Unchanged" if project(pre) == project(post) else family_of(pre, action)


def walk_check(
    config: Config,
    *,
    walks: int,
    length: int,
    seed: int,
    bfs_states: int = 0,
    seek_states: int = 0,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    variant: str | None = None,
    progress: Callable[[str], None] | None = None,
    reference: Config | None = None,
) -> WalkOutcome:
    """``crosscheck.cross_check`` for a mixed ``config`` (``walks.walk_loop``): each step
    that changes the projection is checked with :func:`answer_step` against the relation
    (its ``variant``, if given), one that leaves it is ``Unchanged``. With ``reference``
    (``config`` runs the mutant ``variant``'s rules) the verdict is ``ok`` only if a step
    the mutated rule decided was checked that the reference relation refuses or to which
    it allows another successor. Stops at the first disagreement."""
    why = unsupported(config)
    if why is not None:
        raise ValueError(why)

    def check(pre: Any, action: Action, post: Any, against_reference: bool) -> RelationCheck:
        return answer_step(
            _mixed(pre),
            action,
            _mixed(post),
            config,
            None if against_reference else variant,
            timeout_ms=timeout_ms,
        )

    relation = Relation(
        names=FAMILY_NAMES,
        possible=possible_families(config),
        family=lambda pre, action, post: step_family(_mixed(pre), action, _mixed(post)),
        nominal=lambda pre, action: family_of(_mixed(pre), action),
        same=lambda pre, post: project(_mixed(pre)) == project(_mixed(post)),
        check=check,
    )
    return walk_loop(
        config,
        relation,
        walks=walks,
        length=length,
        seed=seed,
        bfs_states=bfs_states,
        seek_states=seek_states,
        progress=progress,
        reference=reference,
    )
