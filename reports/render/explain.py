"""A plain-text "let / then" account of a counterexample in KIP-848 terms."""

from __future__ import annotations

from collections.abc import Sequence

from model.actions import Action
from model.coordinator import pending_partitions
from model.ids import format_partitions
from model.records import State
from reports.casestudy import describe_action


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
