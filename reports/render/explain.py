"""A plain-text "let / then" account of a counterexample in KIP-848 terms: of a model path
from its states (``explain``), of an external trace from its messages (``explain_events``).

A classic group (JoinGroup / SyncGroup) is explained in its own terms: the generation, the
group's status, selected protocol and leader, each member's assignment and the partitions
it reported owning in its JoinGroup (KIP-429), each client's status, generation and what
it consumes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from invariants.liveness import Lasso
from model.actions import Action, DeliverMessage, LoseMessage
from model.classic.client import rebalance_protocol
from model.classic.messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from model.classic.records import ClassicState
from model.consumer.coordinator import pending_partitions
from model.family import family_of_state
from model.ids import TopicPartition, format_partitions
from model.records import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    State,
)
from model.status import FENCING_ERRORS, ErrorCode
from model.system import AnyState
from reports.casestudy import describe_action
from reports.escape import partitions, shown
from reports.families import EXPLAIN, RENDER, ExplainFacet
from reports.render.lasso import lasso_lines
from reports.render.view import CLASSIC_RESETS, Row, TraceView, consumes, one_family


def _classic_changes(pre: ClassicState, post: ClassicState) -> list[str]:
    """What a step changed in a classic group and its clients."""
    out: list[str] = []
    g0, g1 = pre.group, post.group
    if g1.generation_id != g0.generation_id:
        out.append(f"the group moves to generation {g1.generation_id}")
    if g1.status != g0.status:
        out.append(f"the group is {g1.status.value}")
    if g1.protocol_name != g0.protocol_name and g1.protocol_name is not None:
        out.append(f"the group's protocol is {shown(g1.protocol_name)}")
    if g1.leader_id != g0.leader_id and g1.leader_id:
        out.append(f"the leader is {shown(g1.leader_id)}")
    for mid in sorted(set(g0.members) | set(g1.members)):
        a, b = g0.members.get(mid), g1.members.get(mid)
        name = shown(mid)
        if b is None:
            out.append(f"member {name} is removed from the group")
            continue
        if a is None:
            out.append(f"member {name} joins the group")
        claims = b.subscription.owned_partitions
        if (a is None or a.subscription.owned_partitions != claims) and claims:
            generation = b.subscription.generation_id
            at = f" (generation {generation})" if generation >= 0 else ""
            out.append(f"{name} reports owning {partitions(claims)}{at}")
        if (a is None and b.assignment) or (a is not None and a.assignment != b.assignment):
            out.append(
                f"{name} is assigned {partitions(b.assignment)} (generation {g1.generation_id})"
            )
    for c0, c1 in zip(pre.clients, post.clients, strict=True):
        name = shown(c1.name)
        if c0.alive != c1.alive:
            out.append(f"client {name} is {'up' if c1.alive else 'down'}")
        protocol = rebalance_protocol(c1)
        if c0.assignors != c1.assignors or protocol is not rebalance_protocol(c0):
            assignors = ", ".join(shown(a) for a in c1.assignors)
            out.append(
                f"client {name} runs assignors [{assignors}] and follows the "
                f"{protocol.value} protocol"
            )
        if c0.member_id != c1.member_id and c1.member_id:
            out.append(f"client {name} is member {shown(c1.member_id)}")
        if c0.generation_id != c1.generation_id:
            out.append(f"client {name} is at generation {c1.generation_id}")
        if c0.status != c1.status:
            out.append(f"client {name} is {c1.status.value}")
        if c1.stalled and not c0.stalled:
            out.append(f"client {name}'s application hangs")
        if consumes(c0) != consumes(c1):
            out.append(f"client {name} now consumes {partitions(consumes(c1))}")
        if c1.expired and not c0.expired:
            out.append(f"client {name}'s member was removed but it still consumes")
    return out


def _changes(pre: AnyState, post: AnyState) -> list[str]:
    """What a step changed, in the KIP's terms of the states' family
    (``ExplainFacet.changes``: ``_consumer_changes``, ``_classic_changes``)."""
    before, after = EXPLAIN.of_state(pre), EXPLAIN.of_state(post)
    if before is not after:
        kind = family_of_state(post).name
        return [f"the group is converted to a {kind} group (KIP-848 Online Migration)"]
    return after.changes(pre, post)


def _consumer_changes(pre: State, post: State) -> list[str]:
    """``_changes`` of a KIP-848 step."""
    out: list[str] = []
    g0, g1 = pre.group, post.group
    if g1.group_epoch != g0.group_epoch:
        out.append(f"the group epoch becomes {g1.group_epoch}")
    if g1.assignment_epoch != g0.assignment_epoch or g1.target_assignment != g0.target_assignment:
        target = ", ".join(f"{m} {format_partitions(ps)}" for m, ps in g1.target_assignment.items())
        out.append(f"the target assignment (epoch {g1.assignment_epoch}) is {target or 'empty'}")
    for mid in sorted(set(g0.members) | set(g1.members)):
        a, b = g0.members.get(mid), g1.members.get(mid)
        if b is None:
            if a is not None:
                out.append(f"member {mid} is removed from the group")
            continue
        if a is None:
            out.append(f"member {mid} joins at member epoch {b.member_epoch}")
        elif a.member_epoch != b.member_epoch:
            out.append(f"member {mid} moves to member epoch {b.member_epoch}")
        if (a is None or a.assigned_partitions != b.assigned_partitions) and b.assigned_partitions:
            out.append(f"{mid} is assigned {format_partitions(b.assigned_partitions)}")
        revoking = b.partitions_pending_revocation
        if revoking and (a is None or a.partitions_pending_revocation != revoking):
            out.append(f"{mid} has partitions pending revocation {format_partitions(revoking)}")
        waiting = pending_partitions(g1, b)
        if waiting and (a is None or pending_partitions(g0, a) != waiting):
            out.append(f"{mid} waits for unreleased partitions {format_partitions(waiting)}")
    for c0, c1 in zip(pre.clients, post.clients, strict=True):
        if c0.owned != c1.owned:
            out.append(f"client {c1.name} now consumes {format_partitions(c1.owned)}")
        if c0.status != c1.status:
            out.append(f"client {c1.name} is {c1.status.value}")
    return out


def _opening(s0: AnyState) -> str:
    """The explanation's first line: the group and the clients before the first step."""
    return EXPLAIN.of_state(s0).opening(s0)


def _classic_opening(s0: ClassicState) -> str:
    """``_opening`` of a classic path."""
    cg = s0.group
    clients = ", ".join(
        f"{shown(c.name)} {c.status.value} ({rebalance_protocol(c).value})"
        + (f" at generation {c.generation_id}" if c.generation_id >= 0 else "")
        + (f" consuming {partitions(consumes(c))}" if consumes(c) else "")
        for c in s0.clients
    )
    protocol = f", protocol {shown(cg.protocol_name)}" if cg.protocol_name else ""
    leader = f", leader {shown(cg.leader_id)}" if cg.leader_id else ""
    return (
        f"Let the classic group be at generation {cg.generation_id} "
        f"({cg.status.value}{protocol}{leader}) with {len(cg.members)} member(s); "
        f"clients: {clients}."
    )


def _consumer_opening(s0: State) -> str:
    """``_opening`` of a KIP-848 path."""
    g = s0.group
    clients = ", ".join(f"{c.name} {c.status.value}" for c in s0.clients)
    return (
        f"Let the group be at group epoch {g.group_epoch} and assignment epoch "
        f"{g.assignment_epoch} with {len(g.members)} member(s); clients: {clients}."
    )


def explain(
    states: Sequence[AnyState],
    actions: Sequence[Action],
    prop: str,
    message: str,
    description: str = "",
    reference: str = "",
    max_steps: int = 60,
    first_index: int = 1,
    lasso: Lasso | None = None,
) -> str:
    """The explanation: the initial group, each step with what it changed, the violation
    (a classic path in generations, assignments and reported owned partitions).
    ``first_index`` numbers the first action (a stretch of a longer path). A Convergence
    violation with its ``lasso`` goes on with the fair schedule's steps, the loop that
    repeats for ever and what never happens in it (``reports.render.lasso``)."""
    states = one_family(states)
    lines = [_opening(states[0])]
    unchanged = EXPLAIN.of_state(states[0]).unchanged
    skipped = 0
    last = first_index + len(actions) - 1
    steps = zip(actions, states, states[1:], strict=False)
    for i, (a, pre, post) in enumerate(steps, first_index):
        changes = _changes(pre, post)
        if len(actions) > max_steps and not changes and i != last:
            skipped += 1
            continue
        if skipped:
            lines.append(f"  ({skipped} steps that change no {unchanged})")
            skipped = 0
        tail = ": " + "; ".join(changes) if changes else ""
        lines.append(f"then ({i}) {describe_action(a)}{tail}.")
    if lasso is not None:
        lines += lasso_lines(lasso, len(actions) + 1)
        lines.append(f"So {prop} is violated: {message}")
    else:
        lines.append(f"Now {prop} is violated: {message}")
    if description:
        lines.append(f"{prop}: {description}" + (f" ({reference})" if reference else ""))
    return "\n".join(lines) + "\n"


def _classic_error(client: str, request: str, error: ErrorCode) -> str:
    """``the coordinator answers A's SyncGroup with ILLEGAL_GENERATION (…)``."""
    text = f"the coordinator answers {client}'s {request} with {error.name}"
    if error in CLASSIC_RESETS:
        text += " (it loses its partitions and joins again)"
    return text


def _say_classic(client: str, b: object) -> str | None:
    """What a classic group request or response says, in Kafka's words (None for another
    body)."""
    if isinstance(b, JoinGroupRequest):
        sub = b.subscription
        who = f" as {shown(b.member_id)}" if b.member_id else " without a member id"
        at = f" at generation {sub.generation_id}" if sub.generation_id >= 0 else ""
        return (
            f"{client} sends JoinGroup{who}, reporting it owns "
            f"{partitions(sub.owned_partitions)}{at}"
        )
    if isinstance(b, JoinGroupResponse):
        if b.error_code is ErrorCode.MEMBER_ID_REQUIRED:
            member = shown(b.member_id)
            return f"the coordinator answers {client}'s JoinGroup: join again as {member}"
        if b.error_code is not ErrorCode.NONE:
            return _classic_error(client, "JoinGroup", b.error_code)
        leads = b.member_id and b.member_id == b.leader
        role = "the leader" if leads else f"leader {shown(b.leader)}"
        return (
            f"the coordinator answers {client}'s JoinGroup: generation {b.generation_id}, "
            f"member {shown(b.member_id)}, {role}"
        )
    if isinstance(b, SyncGroupRequest):
        given = ", ".join(f"{shown(m)} {partitions(a)}" for m, a in b.assignments.items())
        assigning = f", assigning {given}" if given else ""
        return f"{client} sends SyncGroup at generation {b.generation_id}{assigning}"
    if isinstance(b, SyncGroupResponse):
        if b.error_code is not ErrorCode.NONE:
            return _classic_error(client, "SyncGroup", b.error_code)
        given = partitions(b.assignment)
        return f"the coordinator answers {client}'s SyncGroup: assignment {given}"
    if isinstance(b, HeartbeatRequest):
        return f"{client} heartbeats at generation {b.generation_id}"
    if isinstance(b, HeartbeatResponse):
        text = _classic_error(client, "heartbeat", b.error_code)
        if b.error_code is ErrorCode.REBALANCE_IN_PROGRESS:
            text += " (it must rejoin)"
        return text
    if isinstance(b, LeaveGroupRequest):
        return f"{client} leaves the group (LeaveGroup as {shown(b.member_id)})"
    if isinstance(b, LeaveGroupResponse):
        return f"the coordinator answers {client}'s LeaveGroup with {b.error_code.name}"
    return None


def _say_event(action: Action, classic: bool = False) -> str:
    """What an external trace's event does, in KIP-848 words (the heartbeat fields of
    ``ConsumerGroupHeartbeatRequest`` / ``ConsumerGroupHeartbeatResponse``), or in the
    classic protocol's (JoinGroup, SyncGroup, Heartbeat, LeaveGroup; ``classic``: an offset
    commit carries a generation)."""
    if not isinstance(action, DeliverMessage | LoseMessage):
        return describe_action(action)
    m = action.message
    b = m.body
    client = shown(m.client)
    lost = " (lost on the way)" if isinstance(action, LoseMessage) else ""
    said = _say_classic(client, b)
    if said is not None:
        text = said
    elif isinstance(b, ConsumerGroupHeartbeatRequest):
        owned = (
            ""
            if b.topic_partitions is None
            else f", reporting it owns {partitions(b.topic_partitions)}"
        )
        if b.member_epoch == 0:
            text = f"{client} joins with a heartbeat at member epoch 0{owned}"
        elif b.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
            text = f"{client} leaves the group (member epoch {LEAVE_GROUP_MEMBER_EPOCH})"
        elif b.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            text = (
                f"{client} leaves temporarily as a static member "
                f"(member epoch {LEAVE_GROUP_STATIC_MEMBER_EPOCH})"
            )
        else:
            text = f"{client} heartbeats at member epoch {b.member_epoch}{owned}"
    elif isinstance(b, ConsumerGroupHeartbeatResponse):
        if b.error_code is not ErrorCode.NONE:
            text = f"the coordinator answers {client} with {b.error_code.name}"
            if b.error_code in FENCING_ERRORS:
                text += " (it must release its partitions and rejoin at member epoch 0)"
        else:
            given = "" if b.assignment is None else f", assigning {partitions(b.assignment)}"
            text = f"the coordinator answers {client}: member epoch {b.member_epoch}{given}"
    elif isinstance(b, OffsetCommitRequest):
        text = (
            f"{client} commits offsets of {partitions(b.topics)} "
            f"at {'generation' if classic else 'epoch'} {b.generation_id_or_member_epoch}"
        )
    else:
        assert isinstance(b, OffsetCommitResponse)
        text = f"the coordinator answers {client}'s offset commit with {b.error_code.name}"
    return text + lost


def _holdings(row: Row | None) -> dict[str, frozenset[TopicPartition]]:
    out: dict[str, set[TopicPartition]] = {}
    if row is not None:
        for tp, names in row.owners.items():
            for name in names:
                out.setdefault(name, set()).add(tp)
    return {name: frozenset(tps) for name, tps in out.items()}


def _row_changes(before: Row | None, row: Row, classic: bool = False) -> list[str]:
    out: list[str] = []
    target = shown(row.target)
    if row.revoked:
        out.append(f"{target} is revoked {partitions(row.revoked)}")
    if row.member_pending:
        held = before.owners if before is not None else {}
        holders = sorted({n for tp in row.member_pending for n in held.get(tp, ())} - {row.target})
        out.append(
            f"{target} is given {partitions(row.member_pending)} while "
            f"{', '.join(shown(h) for h in holders) or 'another member'} still holds them"
        )
    old = before.epochs if before is not None else {}
    word = "generation" if classic else "member epoch"
    for name, epoch in row.epochs.items():
        if name not in old and epoch > 0:
            out.append(f"member {shown(name)} is at {word} {epoch}")
        elif name in old and old[name] != epoch:
            out.append(f"member {shown(name)} moves to {word} {epoch}")
    h0, h1 = _holdings(before), _holdings(row)
    for name in sorted(set(h0) | set(h1)):
        if h0.get(name, frozenset()) != h1.get(name, frozenset()):
            now = h1.get(name, frozenset())
            out.append(f"{shown(name)} may now consume {partitions(now)}")
    doubled = sorted(tp for tp, names in row.owners.items() if len(names) > 1)
    if doubled and (before is None or any(len(before.owners.get(tp, ())) < 2 for tp in doubled)):
        parts = "; ".join(
            f"{shown(t)}-{p} by {', '.join(shown(n) for n in row.owners[(t, p)])}"
            for t, p in doubled
        )
        out.append(f"partitions are owned twice: {parts}")
    return out


def explain_events(
    events: Sequence[tuple[int, Action]],
    view: TraceView,
    findings: Sequence[tuple[int, str, str]],
    describe: Callable[[str], tuple[str, str]] | None = None,
    protocol: str = "consumer",
    max_steps: int = 60,
    total: int | None = None,
) -> str:
    """The "let / then" explanation of an external trace, as far as its messages tell:
    each event in KIP-848 words with what it changed in the safety validator's reading —
    member epochs, what each member may consume (what it last reported plus what it was
    given since), partitions revoked or given while another member still holds them — and
    the ``(line, property, message)`` findings where they are reported. A classic trace
    (the family of ``view.protocol``, or of ``protocol``, counts in generations:
    ``RenderFacet.in_generations``) is told in generations, JoinGroup and SyncGroup: a
    member may consume what it reported owning in its last JoinGroup, then what its
    SyncGroup response assigned. ``describe`` gives a property's description and KIP
    reference. ``view`` is ``view_of_events(events)``;
    ``total`` the number of events in the trace when ``events`` are a stretch of it."""
    # A mixed trace (no render facet of its own) is told as its view's family.
    told_as = RENDER.get(protocol)
    classic = RENDER.named(view.protocol).in_generations or (
        told_as is not None and told_as.in_generations
    )
    reading = (
        "what it last reported owning in a JoinGroup, then what its SyncGroup response assigned"
        if classic
        else "what it last reported owning plus what it was given since"
    )
    lines = [
        f"Let an external implementation ({protocol} protocol) log "
        f"{len(events) if total is None else total} events; "
        f"the group starts empty and a member may consume {reading}."
    ]
    at: dict[int, list[tuple[str, str]]] = {}
    for line, prop, message in findings:
        at.setdefault(line, []).append((prop, message))
    skipped = 0
    before: Row | None = None
    for (line, action), row in zip(events, view.rows, strict=True):
        changes = _row_changes(before, row, classic)
        before = row
        reported = at.get(line, [])
        if len(events) > max_steps and not changes and not reported and row is not view.rows[-1]:
            skipped += 1
            continue
        if skipped:
            lines.append(f"  ({skipped} events that change no epoch or ownership)")
            skipped = 0
        tail = ": " + "; ".join(changes) if changes else ""
        lines.append(f"then (line {line}) {_say_event(action, classic)}{tail}.")
        for prop, message in reported:
            lines.append(f"  here {prop} is violated: {message}")
    if not findings:
        lines.append("Now the safety validator reports nothing.")
        return "\n".join(lines) + "\n"
    line, prop, message = findings[0]
    lines.append(f"Now {prop} is violated (line {line}): {message}")
    description, reference = describe(prop) if describe is not None else ("", "")
    if description:
        lines.append(f"{prop}: {description}" + (f" ({reference})" if reference else ""))
    if len(findings) > 1:
        lines.append(f"({len(findings) - 1} more finding(s) follow it in the trace.)")
    return "\n".join(lines) + "\n"


EXPLAIN.register(
    "consumer",
    ExplainFacet(
        changes=_consumer_changes, opening=_consumer_opening, unchanged="epoch or assignment"
    ),
)
EXPLAIN.register(
    "classic",
    ExplainFacet(
        changes=_classic_changes,
        opening=_classic_opening,
        unchanged="generation, assignment, status or ownership",
    ),
)
