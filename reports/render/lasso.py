"""The words of a Convergence lasso (``invariants.liveness.fair_loop``): the fair steps
after the counterexample's prefix, the loop that repeats for ever, and what never happens
in it — which member never reaches which epoch or partition, and why, read from the states
and messages of the loop.

A gap is something the loop's every state lacks for convergence (``converged``): a member
below the target epoch, a client that never consumes what its member is assigned, a
partition whose previous owner never releases it, a group that never becomes STABLE. Only
gaps present in *every* state of the loop are reported: they are what never happens."""

from __future__ import annotations

from collections.abc import Sequence

from invariants.liveness import Lasso
from model.actions import Action, DeliverMessage
from model.classic.records import ClassicState
from model.consumer.client import IN_GROUP
from model.consumer.coordinator import group_status, pending_partitions
from model.ids import format_partitions
from model.records import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, State
from model.status import (
    ClassicClientStatus,
    ClassicGroupStatus,
    ClientStatus,
    ErrorCode,
    GroupStatus,
)
from model.system import AnyState
from reports.casestudy import describe_action
from reports.escape import shown
from reports.families import LASSO, LassoFacet
from reports.render.view import one_family

Gaps = dict[tuple[str, str], str]
"""(who, what) → the sentence: what a state lacks for convergence."""


def _consumer_gaps(state: State) -> Gaps:
    g = state.group
    out: Gaps = {}
    status = group_status(g)
    if status not in (GroupStatus.STABLE, GroupStatus.EMPTY):
        out[("group", "status")] = f"the group never becomes STABLE (it stays {status.value})"
    if state.coordinator_loading:
        out[("group", "loading")] = "the coordinator never finishes loading the group"
    by_id = {c.member_id: c.name for c in state.clients}
    for c in state.clients:
        if not c.alive or c.stalled:
            continue
        if c.status not in IN_GROUP and c.status is not ClientStatus.FENCED:
            continue
        name = shown(c.name)
        member = g.members.get(c.member_id)
        if member is None:
            out[(c.name, "member")] = (
                f"client {name} never becomes a member of the group (it stays {c.status.value})"
            )
            continue
        if member.member_epoch != g.assignment_epoch:
            out[(c.name, "epoch")] = (
                f"member {name} never reaches the target epoch {g.assignment_epoch} (it stays "
                f"at member epoch {member.member_epoch})"
            )
        if c.member_epoch != member.member_epoch:
            out[(c.name, "client-epoch")] = (
                f"client {name} never learns its member's epoch {member.member_epoch} (it stays "
                f"at epoch {c.member_epoch})"
            )
        missing = member.assigned_partitions - c.owned
        if missing:
            out[(c.name, "missing")] = (
                f"client {name} never consumes {format_partitions(missing)}, which the "
                f"coordinator assigns to member {name} at epoch {member.member_epoch} (it "
                f"consumes {format_partitions(c.owned)})"
            )
        extra = c.owned - member.assigned_partitions
        if extra:
            out[(c.name, "extra")] = (
                f"client {name} never stops consuming {format_partitions(extra)}, which its "
                f"member no longer holds"
            )
        waiting = pending_partitions(g, member)
        if waiting:
            holders = sorted(
                {
                    shown(by_id.get(m.member_id, m.member_id))
                    for m in g.members.values()
                    if m.member_id != member.member_id
                    and (m.assigned_partitions | m.partitions_pending_revocation) & waiting
                }
            )
            by = f", which {', '.join(holders)} never releases" if holders else ""
            out[(c.name, "waiting")] = f"member {name} never gets {format_partitions(waiting)}{by}"
        if member.partitions_pending_revocation:
            out[(c.name, "revoking")] = (
                f"member {name} never revokes "
                f"{format_partitions(member.partitions_pending_revocation)}"
            )
        if c.status is not ClientStatus.STABLE and (c.name, "member") not in out:
            out[(c.name, "status")] = (
                f"client {name} never becomes STABLE (it stays {c.status.value})"
            )
    return out


def _classic_gaps(state: ClassicState) -> Gaps:
    g = state.group
    out: Gaps = {}
    if g.status not in (ClassicGroupStatus.STABLE, ClassicGroupStatus.EMPTY):
        out[("group", "status")] = f"the group never becomes STABLE (it stays {g.status.value})"
    for c in state.clients:
        if not c.alive or c.status is ClassicClientStatus.UNSUBSCRIBED or c.stalled:
            continue
        name = shown(c.name)
        member = g.members.get(c.member_id)
        if member is None:
            out[(c.name, "member")] = (
                f"client {name} never becomes a member of the group (it stays {c.status.value})"
            )
            continue
        if c.generation_id != g.generation_id:
            out[(c.name, "generation")] = (
                f"client {name} never reaches the group's generation {g.generation_id} (it "
                f"stays at generation {c.generation_id})"
            )
        if c.owned != member.assignment:
            out[(c.name, "owned")] = (
                f"client {name} never consumes exactly its assignment "
                f"{format_partitions(member.assignment)} (it consumes "
                f"{format_partitions(c.owned)})"
            )
        if c.status is not ClassicClientStatus.STABLE:
            out[(c.name, "status")] = (
                f"client {name} never becomes STABLE (it stays {c.status.value})"
            )
        elif c.rejoin_needed or c.assignment_stale:
            out[(c.name, "rejoin")] = f"client {name} never completes the rejoin it needs"
    return out


def gaps(state: AnyState) -> Gaps:
    """What ``state`` lacks for convergence (``invariants.liveness.converged``), by who."""
    (s,) = one_family([state])
    found: Gaps = LASSO.of_state(s).gaps(s)
    return found


def never(states: Sequence[AnyState]) -> list[str]:
    """The gaps every state of ``states`` (one turn of a loop) has, worded as at the first."""
    if not states:
        return []
    common = gaps(states[0])
    for s in states[1:]:
        later = gaps(s)
        common = {k: v for k, v in common.items() if k in later}
    return list(common.values())


def _why(client: str, loop: Sequence[Action]) -> str | None:
    """What ``client``'s heartbeats do in one turn of the loop (consumer protocol)."""
    sent = answered = given = 0
    errors: set[str] = set()
    full = False
    for a in loop:
        if not isinstance(a, DeliverMessage) or a.message.client != client:
            continue
        b = a.message.body
        if isinstance(b, ConsumerGroupHeartbeatRequest):
            sent += 1
            full = full or b.topic_partitions is not None
        elif isinstance(b, ConsumerGroupHeartbeatResponse):
            answered += 1
            if b.error_code is not ErrorCode.NONE:
                errors.add(b.error_code.name)
            elif b.assignment is not None:
                given += 1
    name = shown(client)
    if sent == 0:
        return f"{name} sends no heartbeat the coordinator receives in the loop"
    if errors:
        return f"the coordinator answers {name}'s heartbeats with {', '.join(sorted(errors))}"
    if answered and not given:
        kind = "" if full else "incremental "
        return (
            f"each of {name}'s {kind}heartbeats in the loop ({sent} a turn) is answered "
            "without an assignment: the coordinator sends one only to a full request or "
            "when the member's assignment changes (GroupMetadataManager.consumerGroupHeartbeat), "
            "and it does not change any more"
        )
    return None


def lasso_lines(lasso: Lasso, first: int) -> list[str]:
    """The lasso in words: the stem's steps (numbered from ``first``), the loop's steps
    marked as repeating, and what never happens in it and why."""
    lines: list[str] = []
    n = first
    if lasso.stem:
        lines.append(
            f"Then, with no more perturbations, the fair schedule takes {len(lasso.stem)} "
            f"step(s) ({first}–{first + len(lasso.stem) - 1}):"
        )
        for a in lasso.stem:
            lines.append(f"  ({n}) {describe_action(a)}")
            n += 1
    if lasso.stuck:
        lines.append("and then no progress action is enabled: the group is stuck unconverged.")
    elif not lasso.loop:
        lines.append(
            f"and shows no fair loop within its bound ({len(lasso.stem)} fair steps without "
            "converging): the bound cut the schedule, which shows no violation."
        )
    else:
        lines.append(
            f"LOOP, repeating for ever (steps {n}–{n + len(lasso.loop) - 1}, back to the state "
            f"after step {n - 1}; every progress action enabled throughout it is taken in it):"
        )
        for a in lasso.loop:
            lines.append(f"  ↻ ({n}) {describe_action(a)}")
            n += 1
    missing = never(lasso.loop_states)
    if missing:
        lines.append("What never happens:")
        lines += [f"  - {text}" for text in missing]
        state = lasso.entry
        whys: list[str] = []
        if LASSO.of_state(state).why_stuck and lasso.loop:
            stuck = {who for who, _ in _keys(lasso.loop_states) if who != "group"}
            for c in state.clients:
                if c.name in stuck:
                    why = _why(c.name, lasso.loop)
                    if why:
                        whys.append(why)
        if whys:
            lines.append("Why:")
            lines += [f"  - {text}" for text in whys]
    return lines


def _keys(states: Sequence[AnyState]) -> set[tuple[str, str]]:
    common = set(gaps(states[0]))
    for s in states[1:]:
        common &= set(gaps(s))
    return common


LASSO.register("consumer", LassoFacet(gaps=_consumer_gaps, why_stuck=True))
LASSO.register("classic", LassoFacet(gaps=_classic_gaps, why_stuck=False))
LASSO.register("mixed", LassoFacet(gaps=gaps, why_stuck=False))
