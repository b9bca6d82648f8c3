"""A plain-text "let / then" account of a counterexample in KIP-848 terms: of a model path
from its states (``explain``), of an external trace from its messages (``explain_events``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from model.actions import Action, DeliverMessage, LoseMessage
from model.coordinator import pending_partitions
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
from reports.casestudy import describe_action
from reports.render.escape import partitions, shown
from reports.render.view import Row, TraceView


def _changes(pre: State, post: State) -> list[str]:
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


def explain(
    states: Sequence[State],
    actions: Sequence[Action],
    prop: str,
    message: str,
    description: str = "",
    reference: str = "",
    max_steps: int = 60,
) -> str:
    """The explanation: the initial group, each step with what it changed, the violation."""
    s0 = states[0]
    g = s0.group
    clients = ", ".join(f"{c.name} {c.status.value}" for c in s0.clients)
    lines = [
        f"Let the group be at group epoch {g.group_epoch} and assignment epoch "
        f"{g.assignment_epoch} with {len(g.members)} member(s); clients: {clients}."
    ]
    skipped = 0
    for i, (a, pre, post) in enumerate(zip(actions, states, states[1:], strict=False), 1):
        changes = _changes(pre, post)
        if len(actions) > max_steps and not changes and i != len(actions):
            skipped += 1
            continue
        if skipped:
            lines.append(f"  ({skipped} steps that change no epoch or assignment)")
            skipped = 0
        tail = ": " + "; ".join(changes) if changes else ""
        lines.append(f"then ({i}) {describe_action(a)}{tail}.")
    lines.append(f"Now {prop} is violated: {message}")
    if description:
        lines.append(f"{prop}: {description}" + (f" ({reference})" if reference else ""))
    return "\n".join(lines) + "\n"


def _say_event(action: Action) -> str:
    """What an external trace's event does, in KIP-848 words (the heartbeat fields of
    ``ConsumerGroupHeartbeatRequest`` / ``ConsumerGroupHeartbeatResponse``)."""
    if not isinstance(action, DeliverMessage | LoseMessage):
        return describe_action(action)
    m = action.message
    b = m.body
    client = shown(m.client)
    lost = " (lost on the way)" if isinstance(action, LoseMessage) else ""
    if isinstance(b, ConsumerGroupHeartbeatRequest):
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
            f"at epoch {b.generation_id_or_member_epoch}"
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


def _row_changes(before: Row | None, row: Row) -> list[str]:
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
    for name, epoch in row.epochs.items():
        if name not in old and epoch > 0:
            out.append(f"member {shown(name)} is at member epoch {epoch}")
        elif name in old and old[name] != epoch:
            out.append(f"member {shown(name)} moves to member epoch {epoch}")
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
) -> str:
    """The "let / then" explanation of an external trace, as far as its messages tell:
    each event in KIP-848 words with what it changed in the safety validator's reading —
    member epochs, what each member may consume (what it last reported plus what it was
    given since), partitions revoked or given while another member still holds them — and
    the ``(line, property, message)`` findings where they are reported. ``describe`` gives
    a property's description and KIP reference. ``view`` is ``view_of_events(events)``."""
    lines = [
        f"Let an external implementation ({protocol} protocol) log {len(events)} events; "
        "the group starts empty and a member may consume what it last reported owning "
        "plus what it was given since."
    ]
    at: dict[int, list[tuple[str, str]]] = {}
    for line, prop, message in findings:
        at.setdefault(line, []).append((prop, message))
    skipped = 0
    before: Row | None = None
    for (line, action), row in zip(events, view.rows, strict=True):
        changes = _row_changes(before, row)
        before = row
        reported = at.get(line, [])
        if len(events) > max_steps and not changes and not reported and row is not view.rows[-1]:
            skipped += 1
            continue
        if skipped:
            lines.append(f"  ({skipped} events that change no epoch or ownership)")
            skipped = 0
        tail = ": " + "; ".join(changes) if changes else ""
        lines.append(f"then ({row.index}, line {line}) {_say_event(action)}{tail}.")
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
