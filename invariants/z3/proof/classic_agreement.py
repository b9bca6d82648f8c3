"""The classic relation against the Python classic model, on concrete steps: the classic
counterpart of ``invariants.z3.proof.agreement`` and ``crosscheck``.

:func:`check_step` pins the projections (``classic_state.project``) of a model step's
states on the finite domains they mention, asks whether the step's family allows them
(``allowed``) and, with the family's parameters fixed to what the step did
(:func:`parameters`: the request's fields, the member a timer fires for, the
coordinator's choices as the model made them), whether the model's successor is the
family's only one (``unique``). The formulas are built quantifier-free on the finite
domains (``classic_transition.grounded``).

:func:`cross_check` checks every step out of the first ``max_states`` states of a classic
configuration in BFS order (the KIP-848 cross-check's ``bfs_steps``), family by family;
the verdict is ``ok`` only if every step agreed, no query was unknown and every family
the configuration can take (:func:`possible_families`) was checked at least once.

:func:`walk_check` is the classic side of ``groupcheck prove --agreement``: the steps of
seeded walks, side steps, BFS steps and steps a model-only search seeks for a family the
walks missed, with the verdict rules and the result shape of the KIP-848 cross-check
(``invariants.z3.proof.crosscheck.cross_check``), a mutant's rules against the relation's
variant of them included (``reference``): the walk loop and its result are
``invariants.z3.proof.walks``'s, which a mixed group's cross-check shares.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from typing import Any, Literal

import z3

from invariants.z3.proof.agreement import Answer, StepCheck, _answer, _reason, _solver
from invariants.z3.proof.classic_bmc import distinct
from invariants.z3.proof.classic_state import (
    ClassicSym,
    pin,
    project,
    universe_for,
)
from invariants.z3.proof.classic_transition import (
    FAMILY_NAMES,
    ClassicOptions,
    families,
    family_of,
    grounded,
    possible_families,
)
from invariants.z3.proof.state import MEMBER, PARTITION, Universe
from invariants.z3.proof.transition import Family
from invariants.z3.proof.walks import Relation, WalkOutcome, walk_loop
from model import system
from model.actions import (
    Action,
    AddPartitions,
    DeliverMessage,
    ExpireOffsets,
    RebalanceTimeout,
    SessionTimeout,
)
from model.classic import coordinator as co
from model.classic.messages import (
    JoinGroupRequest,
    LeaveGroupRequest,
    SyncGroupRequest,
)
from model.classic.records import ClassicState
from model.config import Config
from model.records import OffsetCommitRequest
from model.status import ClassicGroupStatus

Verdict = Literal["ok", "violation", "inconclusive"]

DEFAULT_TIMEOUT_MS = 20_000


def _body(action: Action) -> Any:
    return action.message.body if isinstance(action, DeliverMessage) else None


def _requester(action: Action) -> tuple[str, ...]:
    body = _body(action)
    member_id = getattr(body, "member_id", None)
    return (member_id,) if isinstance(member_id, str) and member_id else ()


def _request_instance(action: Action) -> tuple[str, ...]:
    iid = getattr(_body(action), "instance_id", None)
    return (iid,) if isinstance(iid, str) else ()


def _number(u: Universe, iid: str | None) -> int:
    return u.instances[iid] if iid is not None else 0


def _topic_partitions(state: ClassicState, names: frozenset[str]) -> frozenset[tuple[str, int]]:
    return frozenset(
        (meta.topic_id, i)
        for name, meta in state.topics.items()
        if name in names
        for i in range(meta.partitions)
    )


def parameters(
    fam: Family, pre: ClassicState, action: Action, post: ClassicState, u: Universe
) -> list[Any]:
    """Constraints fixing ``fam``'s parameters to what the model step did (a parameter the
    step's outcome does not depend on is left free)."""
    p = fam.params
    mc, pc = u.member_consts, u.partition_consts
    group, after = pre.group, post.group
    out: list[Any] = []
    if "heir" in p and after.leader_id is not None:
        out.append(p["heir"] == mc[after.leader_id])
    if isinstance(action, SessionTimeout | RebalanceTimeout):
        return [*out, p["member"] == mc[action.member_id]]
    if isinstance(action, ExpireOffsets):
        topic_id = pre.topics[action.topic].topic_id
        return [p["topic"](q) == (tp[0] == topic_id) for tp, q in pc.items()]
    if isinstance(action, AddPartitions):
        meta = pre.topics[action.topic]
        added = (meta.topic_id, meta.partitions)
        out = [p["topic"](q) == (tp[0] == meta.topic_id) for tp, q in pc.items()]
        return [*out, p["added"] == pc[added]] if added in pc else out
    body = _body(action)
    if body is None or not p:
        return out
    if "instance" in p:
        iid = body.instance_id
        out.append(p["instance"] == _number(u, iid))
        holder = group.static_member_id(iid) if iid is not None else None
        if holder is not None:
            out.append(p["holder"] == mc[holder])
    if isinstance(body, OffsetCommitRequest):
        return [
            p["member"] == mc[body.member_id],
            p["generation"] == body.generation_id_or_member_epoch,
            *[p["partitions"](q) == (tp in body.topics) for tp, q in pc.items()],
        ]
    if isinstance(body, LeaveGroupRequest):
        return [*out, p["member"] == mc[body.member_id]]
    if isinstance(body, SyncGroupRequest):
        out += [
            p["member"] == mc[body.member_id],
            p["generation"] == body.generation_id,
            p["protocol_ok"] == (body.protocol_name == group.protocol_name),
        ]
        for mid, m in mc.items():
            given = body.assignments.get(mid, frozenset())
            out += [p["assignment"](m, q) == (tp in given) for tp, q in pc.items()]
        return out
    assert isinstance(body, JoinGroupRequest)
    unknown = body.member_id == ""
    out += [
        p["unknown"] == unknown,
        p["supported"] == co.supports_protocols(group, body.protocols),
    ]
    if not unknown:
        out.append(p["member"] == mc[body.member_id])
        stored = group.members.get(body.member_id)
        out.append(
            p["unchanged"]
            == (stored is not None and stored.matches(body.protocols, body.subscription))
        )
    subscribed = _topic_partitions(pre, body.subscription.topics)
    out += [p["subscribed"](q) == (tp in subscribed) for tp, q in pc.items()]
    sub = body.subscription
    out += [p["owned"](q) == (tp in sub.owned_partitions) for tp, q in pc.items()]
    out += [p["user_data"](q) == (tp in sub.user_data) for tp, q in pc.items()]
    out.append(p["claim_gen"] == sub.generation_id)
    issued = set(project(post).issued) - set(project(pre).issued)
    if issued:
        out.append(p["new_id"] == mc[issued.pop()])
    if group.status is ClassicGroupStatus.STABLE:
        out.append(p["same_protocol"] == (after.status is ClassicGroupStatus.STABLE))
    return out


def check_step(
    pre: ClassicState,
    action: Action,
    post: ClassicState,
    config: Config,
    *,
    options: ClassicOptions | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> StepCheck:
    """Check one classic model step against the relation (module docstring)."""
    opts = options if options is not None else ClassicOptions.of(config)
    name = family_of(action)
    if name is None:
        return StepCheck(type(action).__name__, "unknown", None, "not in the classic relation")
    before, after = project(pre), project(post)
    u = universe_for(before, after, members=_requester(action), instances=_request_instance(action))
    spre, spost = ClassicSym.fresh("pre"), ClassicSym.fresh("post")
    members = tuple(u.member_consts.values())
    with grounded(members, u.partition_consts.values()):
        (fam,) = families(spre, spost, opts, (name,))
    parts = tuple(u.partition_consts.values())
    within = [
        z3.Or(*[x == c for c in (members if x.sort() == MEMBER else parts)])
        for x in (spre.leader, spost.leader, *fam.params.values())
        if z3.is_const(x) and x.sort() in (MEMBER, PARTITION)
    ]
    base = [*distinct(u), *within, *pin(spre, before, u)]
    pins_post = pin(spost, after, u)
    formula = fam.formula

    s = _solver(timeout_ms)
    s.add(*base, *pins_post, formula)
    allowed: Answer = _answer(s.check())
    reason = _reason(s, allowed)

    s = _solver(timeout_ms)
    s.add(*base, formula, *parameters(fam, pre, action, post, u))
    s.add(z3.Not(z3.And(*pins_post)))
    other = _answer(s.check())
    unique: Answer = {"yes": "no", "no": "yes", "unknown": "unknown"}[other]  # type: ignore[assignment]
    return StepCheck(name, allowed, unique, reason or _reason(s, other))


# --------------------------------------------------------------------------- cross-check


@dataclass
class FamilyResult:
    """The steps of one family: checked, allowed, the model's successor the only one
    (``unique``), unknown, and the first disagreement as (pre, action, post, check)."""

    family: str
    steps: int = 0
    allowed: int = 0
    unique: int = 0
    unknown: int = 0
    disagreement: tuple[ClassicState, Action, ClassicState, StepCheck] | None = None


@dataclass(frozen=True)
class Outcome:
    """The classic cross-check of one config."""

    verdict: Verdict
    possible: tuple[str, ...]
    missing: tuple[str, ...]
    families: tuple[FamilyResult, ...] = field(default=())
    steps: int = 0
    states: int = 0
    exhausted: bool = False


def bfs_steps(
    config: Config, max_states: int, exhausted: list[bool] | None = None
) -> Iterator[tuple[ClassicState, Action, ClassicState]]:
    """Every step out of the first ``max_states`` states of ``config`` in BFS order;
    ``exhausted`` (if given) gets ``True`` appended when the search ran out of states
    before the budget (every reachable state was expanded)."""
    init = system.initial(config)
    assert isinstance(init, ClassicState)
    seen = {init}
    queue = deque([init])
    expanded = 0
    while queue and expanded < max_states:
        s = queue.popleft()
        expanded += 1
        for a in system.enabled(s, config):
            t = system.step(s, a, config)
            assert isinstance(t, ClassicState)
            yield s, a, t
            if t not in seen:
                seen.add(t)
                queue.append(t)
    if not queue and exhausted is not None:
        exhausted.append(True)


def cross_check(
    config: Config,
    *,
    max_states: int,
    per_family: int | None = None,
    options: ClassicOptions | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> Outcome:
    """Check the steps out of the first ``max_states`` BFS states of the classic
    ``config`` (at most ``per_family`` steps of each family, if given: the search stops
    once every possible family has them; ``Unchanged`` steps are compared by projection,
    which is all the family says). Stops at the first disagreement."""
    if config.protocol != "classic":
        raise ValueError(f"the classic cross-check covers classic configs; {config.name} is not")
    opts = options if options is not None else ClassicOptions.of(config)
    results = {name: FamilyResult(name) for name in FAMILY_NAMES}
    possible = possible_families(config)
    steps = 0
    broken = False
    for pre, action, post in bfs_steps(config, max_states):
        name = family_of(action)
        if name is None:
            raise ValueError(
                f"{config.name}: {type(action).__name__} is outside the classic relation"
            )
        r = results[name]
        if per_family is not None and r.steps >= per_family:
            if all(results[n].steps >= per_family for n in possible):
                break
            continue
        r.steps += 1
        steps += 1
        if name == "Unchanged":
            same = project(pre) == project(post)
            r.allowed += same
            r.unique += same
            if not same:
                r.disagreement = (pre, action, post, StepCheck(name, "no", "no"))
                broken = True
                break
            continue
        check = check_step(pre, action, post, config, options=opts, timeout_ms=timeout_ms)
        r.allowed += check.allowed == "yes"
        r.unique += check.unique == "yes"
        r.unknown += "unknown" in (check.allowed, check.unique)
        if "no" in (check.allowed, check.unique):
            r.disagreement = (pre, action, post, check)
            broken = True
            break
    fams = tuple(results.values())
    missing = tuple(n for n in possible if results[n].steps == 0)
    verdict: Verdict = "ok"
    if broken:
        verdict = "violation"
    elif missing or any(r.unknown for r in fams):
        verdict = "inconclusive"
    return Outcome(verdict, possible, missing, fams, steps)


# --------------------------------------------------------------------------- walks


def _classic(value: object) -> ClassicState:
    if not isinstance(value, ClassicState):
        raise ValueError("the classic cross-check covers classic configs' states")
    return value


def _family(action: Action) -> str:
    name = family_of(action)
    if name is None:
        raise ValueError(f"{type(action).__name__} is outside the classic relation")
    return name


def walk_check(
    config: Config,
    *,
    walks: int,
    length: int,
    seed: int,
    bfs_states: int = 0,
    seek_states: int = 0,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    options: ClassicOptions | None = None,
    progress: Callable[[str], None] | None = None,
    checker: Callable[..., StepCheck] | None = None,
    reference: Config | None = None,
) -> WalkOutcome:
    """``crosscheck.cross_check`` for a classic ``config``: the steps out of its first
    ``bfs_states`` BFS states, of ``walks`` seeded walks of ``length`` steps with the side
    steps of families not checked yet, and a step of each family they missed found within
    ``seek_states`` states of the model alone, each checked with ``checker`` (default
    :func:`check_step`). Stops at the first disagreement.

    With ``reference`` (``config`` runs a mutant's rules, ``options`` names its variant): a
    step whose successor under the reference rules differs was decided by the mutated
    rule (``mutated``); one of them the reference relation refuses, or to which it allows
    another successor, tells the variant apart (``distinguished``). The search seeks one
    if the walks check none, and the verdict is ``ok`` only if one was checked."""
    if config.protocol != "classic":
        raise ValueError(f"the classic cross-check covers classic configs; {config.name} is not")
    check_one = checker if checker is not None else check_step
    opts = options if options is not None else ClassicOptions.of(config)
    plain = dc_replace(opts, variant=None)

    def check(pre: Any, action: Action, post: Any, against_reference: bool) -> StepCheck:
        chosen = plain if against_reference else opts
        return check_one(
            _classic(pre), action, _classic(post), config, options=chosen, timeout_ms=timeout_ms
        )

    relation = Relation(
        names=FAMILY_NAMES,
        possible=possible_families(config),
        family=lambda pre, action, post: _family(action),
        nominal=lambda pre, action: _family(action),
        same=lambda pre, post: project(_classic(pre)) == project(_classic(post)),
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
