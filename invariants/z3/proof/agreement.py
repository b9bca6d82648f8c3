"""The symbolic relation against the Python model, on concrete steps.

A proof over the relation is a proof about the model only if the relation allows every
step the model takes (it over-approximates). :func:`allows` checks that for one model
step: the projections of the state before and after are pinned on finite domains (the
member ids and partitions the two states mention), and Z3 must find parameters under which
the family of the step's action relates them. :func:`deterministic` checks the converse
for one family whose parameters the step determines (the request's fields, the member a
timer fires for, the group-epoch bump and the new target as the model chose them): with
those fixed, the only successor the relation allows is the model's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from dataclasses import replace as dc_replace
from typing import Any, Literal

import z3

from invariants.z3.proof.state import (
    Concrete,
    SymState,
    Universe,
    pin,
    project,
)
from invariants.z3.proof.transition import Family, Options, families, family_of
from model.actions import Action, DeliverMessage, ExpireOffsets, RebalanceTimeout, SessionTimeout
from model.config import Config
from model.consumer.coordinator import resolve_member, subscribed_topics, validate_heartbeat_request
from model.records import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    OffsetCommitRequest,
    State,
    new_member,
    replace,
)
from model.status import ErrorCode

DEFAULT_TIMEOUT_MS = 20_000

Answer = Literal["yes", "no", "unknown"]


@dataclass(frozen=True)
class StepCheck:
    """Whether one model step is allowed by its family (and, where the family is
    deterministic given the step, whether the model's successor is the only one)."""

    family: str
    allowed: Answer
    unique: Answer | None
    reason: str | None = None
    """Z3's reason when a query answered unknown."""


NO_PARTITION = ("", -1)
"""The partition of a universe whose states and request mention none (every topic
deleted, say): pinned like every partition, so that nothing holds of it. (A universe
without partitions would leave the sort's one element unpinned: a request could own it.)"""


def _universe(
    *values: Concrete,
    extra: tuple[Any, ...] = (),
    instances: tuple[str, ...] = (),
    requesters: tuple[str, ...] = (),
) -> Universe:
    members: set[str] = set(requesters)
    partitions: set[tuple[str, int]] = set(extra)
    ids: set[str] = set(instances)
    for v in values:
        members |= set(v.member_domain())
        partitions |= set(v.partition_domain())
        ids |= {mv.instance for mv in v.members.values() if mv.instance is not None}
        # A run's snapshot may name an instance no member has any more (KIP-1263).
        ids |= {i for _, _, started, _ in v.runs or () for _, i in started if i is not None}
    return Universe.of(members, partitions or {NO_PARTITION}, ids)


def _request_instance(action: Action) -> str | None:
    if isinstance(action, DeliverMessage):
        body = action.message.body
        if isinstance(body, ConsumerGroupHeartbeatRequest):
            return body.instance_id
    return None


def _requester(action: Action) -> tuple[str, ...]:
    """The member id a request is from (an old incarnation's request may still arrive)."""
    if isinstance(action, DeliverMessage):
        body = action.message.body
        if isinstance(body, ConsumerGroupHeartbeatRequest | OffsetCommitRequest):
            return (body.member_id,) if body.member_id else ()
    return ()


def _instance(u: Universe, iid: str | None) -> int:
    """The instance number of ``iid`` in ``u`` (0: none, or blank — which validation
    refuses)."""
    return u.instances[iid] if iid is not None and iid.strip() else 0


def _solver(timeout_ms: int) -> Any:
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    return s


def _reason(s: Any, answer: Answer) -> str | None:
    return str(s.reason_unknown()) if answer == "unknown" else None


def _answer(result: Any) -> Answer:
    if result == z3.sat:
        return "yes"
    if result == z3.unsat:
        return "no"
    return "unknown"


def _family(pre: SymState, post: SymState, options: Options, name: str) -> Family:
    for f in families(pre, post, options):
        if f.name == name:
            return f
    raise ValueError(f"no family {name!r} under these options")


def _request_partitions(action: Action) -> tuple[tuple[str, int], ...]:
    if isinstance(action, DeliverMessage):
        body = action.message.body
        if isinstance(body, ConsumerGroupHeartbeatRequest) and body.topic_partitions:
            return tuple(body.topic_partitions)
        if isinstance(body, OffsetCommitRequest):
            return tuple(body.topics)
    return ()


def parameters(
    fam: Family, pre: State, action: Action, post: State, u: Universe, config: Config
) -> list[Any] | None:
    """Constraints fixing ``fam``'s parameters to what the model step did, or ``None``
    when the family is nondeterministic by design (metadata changes, a separately
    computed target: any valid one)."""
    p = fam.params
    pc = u.partition_consts

    def pset(f: Any, parts: frozenset[tuple[str, int]]) -> list[Any]:
        return [f(q) == (tp in parts) for tp, q in pc.items()]

    if fam.name in (
        "Unchanged",
        "CoordinatorFailover",
        "CoordinatorLoaded",
        "AssignmentIntervalElapses",
    ):
        return []
    if fam.name in ("ExpireOffsets", "DeleteGroup"):
        return _expiry_parameters(fam, pre, action, u)
    if fam.name == "CompleteAssignorRun":
        # target.reapply_changes keeps the partitions of the topics that exist.
        present = frozenset(
            (meta.topic_id, i) for meta in pre.topics.values() for i in range(meta.partitions)
        )
        return pset(p["existing"], present)
    if fam.name in ("SessionTimeout", "RebalanceTimeout"):
        assert isinstance(action, SessionTimeout | RebalanceTimeout)
        return [p["member"] == u.member_consts[action.member_id], z3.Not(p["regexes_dropped"])]
    if not isinstance(action, DeliverMessage):
        return None
    body = action.message.body
    if fam.name == "DeliverMessage.leave":
        assert isinstance(body, ConsumerGroupHeartbeatRequest)
        dropped = any(c.regex is not None for c in pre.clients)
        out = [p["member"] == u.member_consts[body.member_id], p["regexes_dropped"] == dropped]
        if "instance" in p:
            out.append(p["instance"] == _instance(u, body.instance_id))
        return out
    if fam.name == "DeliverMessage.static_leave":
        assert isinstance(body, ConsumerGroupHeartbeatRequest)
        return [
            p["member"] == u.member_consts[body.member_id],
            p["instance"] == _instance(u, body.instance_id),
        ]
    if fam.name == "DeliverMessage.offset_commit":
        assert isinstance(body, OffsetCommitRequest)
        return [
            p["member"] == u.member_consts[body.member_id],
            p["epoch"] == body.generation_id_or_member_epoch,
            *pset(p["partitions"], frozenset(body.topics)),
        ]
    if fam.name != "DeliverMessage.heartbeat":
        return None
    assert isinstance(body, ConsumerGroupHeartbeatRequest)
    group = pre.group
    stored = group.members.get(body.member_id)
    member = stored if stored is not None else new_member(body.member_id, body.instance_id)
    holder_id = None
    if "instance" in p and body.instance_id is not None:
        holder_id = group.static_member_id(body.instance_id)
        resolved = resolve_member(group, body, config)
        if not isinstance(resolved, ErrorCode):
            # A static replacement: the pipeline updates the holder's copy.
            _, _, member = resolved
    updated = replace(
        member,
        subscribed_topic_names=(
            body.subscribed_topic_names
            if body.subscribed_topic_names is not None
            else member.subscribed_topic_names
        ),
        subscribed_topic_regex=(
            body.subscribed_topic_regex
            if body.subscribed_topic_regex is not None
            else member.subscribed_topic_regex
        ),
    )
    names = subscribed_topics(updated, group)
    ids = {pre.topics[n].topic_id for n in names if n in pre.topics}
    newsub = frozenset(
        (meta.topic_id, i)
        for meta in pre.topics.values()
        if meta.topic_id in ids
        for i in range(meta.partitions)
    )
    after = project(post)
    target = after.target
    if len(post.group.assignor_runs) > len(group.assignor_runs):
        # KIP-1263: the heartbeat started a run; the assignor's result is the run's.
        target = frozenset(
            (mid, tp)
            for mid, tps in post.group.assignor_runs[-1].target_assignment.items()
            for tp in tps
        )
    full = (
        stored is None
        and (body.instance_id is None or group.static_member_id(body.instance_id) is None)
        and len(group.members) >= config.max_group_size
    )
    out = [
        p["member"] == u.member_consts[body.member_id],
        p["epoch"] == body.member_epoch,
        p["owned_null"] == (body.topic_partitions is None),
        *pset(p["owned"], frozenset(body.topic_partitions or ())),
        *pset(p["subscribed"], newsub),
        p["subscription_changed"] == (names != subscribed_topics(member, group)),
        p["bump"] == (post.group.group_epoch > group.group_epoch),
        p["invalid"] == (validate_heartbeat_request(body, config) is not None),
        p["group_full"] == full,
    ]
    if "instance" in p:
        holder = holder_id if holder_id is not None else body.member_id
        out += [
            p["instance"] == _instance(u, body.instance_id),
            p["holder"] == u.member_consts[holder],
        ]
    for mid, mc in u.member_consts.items():
        out += [p["target"](mc, q) == ((mid, tp) in target) for tp, q in pc.items()]
    return out


def _expiry_parameters(fam: Family, pre: State, action: Action, u: Universe) -> list[Any]:
    """``ExpireOffsets``' topic (the partitions of the topic the action names, by its topic
    id); ``DeleteGroup`` has no parameter."""
    if not isinstance(action, ExpireOffsets):
        return []
    topic_id = pre.topics[action.topic].topic_id
    return [fam.params["topic"](q) == (tp[0] == topic_id) for tp, q in u.partition_consts.items()]


def refused_write(pre: State, post: State) -> bool:
    """Whether the step answered a heartbeat with UNKNOWN_SERVER_ERROR: the coordinator's
    write was refused by the partition-epoch bookkeeping (``PartitionEpochConflict``), which
    the relation's ``server_error`` ghost records."""
    sent = Counter(post.network) - Counter(pre.network)
    return any(
        isinstance(m.body, ConsumerGroupHeartbeatResponse)
        and m.body.error_code == ErrorCode.UNKNOWN_SERVER_ERROR
        for m in sent
    )


def check_step(
    pre: State,
    action: Action,
    post: State,
    config: Config,
    *,
    options: Options | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> StepCheck:
    """Check one model step against the relation (module docstring)."""
    opts = options if options is not None else Options.of(config)
    epochs = opts.assignment_epochs
    kept = {"expiry": opts.offset_expiry, "deletion": opts.group_deletion}
    offload = opts.assignor_offload
    batching = opts.batching
    # The ghost rises on this step exactly when the model refused the write.
    before = dc_replace(
        project(pre, epochs, offload, **kept, batching=batching, history=epochs),
        server_error=False,
    )
    after = dc_replace(
        project(post, epochs, offload, **kept, batching=batching, history=epochs),
        server_error=refused_write(pre, post),
    )
    request_instance = _request_instance(action)
    u = _universe(
        before,
        after,
        extra=_request_partitions(action),
        instances=(request_instance,) if request_instance else (),
        requesters=_requester(action),
    )
    static = opts.static_members
    slots = opts.run_slots
    name = family_of(action)
    beyond = max(len(before.runs or ()), len(after.runs or ()))
    if beyond > slots and offload:
        # Not a disagreement: the states have more runs than the relation has slots.
        beyond_slots = f"{beyond} assignor runs in flight: the relation keeps {slots} run slots"
        return StepCheck(name, "unknown", None, beyond_slots)
    # With KIP-1251 epochs the ghost history too (SymState.history), as prove keeps it.
    spre = SymState.fresh("pre", epochs, static, slots, **kept, batching=batching, history=epochs)
    spost = SymState.fresh("post", epochs, static, slots, **kept, batching=batching, history=epochs)
    fam = _family(spre, spost, opts, name)
    pins_pre, pins_post = pin(spre, before, u), pin(spost, after, u)

    s = _solver(timeout_ms)
    s.add(*u.axioms(), *pins_pre, *pins_post, fam.formula)
    allowed = _answer(s.check())
    reason = _reason(s, allowed)

    unique: Answer | None = None
    fixed = parameters(fam, pre, action, post, u, config)
    if fixed is not None:
        s = _solver(timeout_ms)
        s.add(*u.axioms(), *pins_pre, fam.formula, *fixed)
        s.add(z3.Not(z3.And(*pins_post)))
        other = _answer(s.check())
        unique = {"yes": "no", "no": "yes", "unknown": "unknown"}[other]  # type: ignore[assignment]
        reason = reason or _reason(s, other)
    return StepCheck(name, allowed, unique, reason)
