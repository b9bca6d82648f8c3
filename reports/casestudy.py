"""The group in the KIP-848 case studies' own layout, as text or as a JSON-ready dict.

    Group (epoch=2)
      • A
      • B
    Target Assignment (epoch=2)
      • A - partitions=[foo-0, foo-1]
      • B - partitions=[foo-2]
    Member Assignment
      • A - epoch=1, partitions=[foo-0, foo-1, foo-2], pending-partitions=[]
      • B - epoch=2, partitions=[], pending-partitions=[foo-2]

"partitions" are what the member still holds (Kafka's assigned partitions plus those
pending revocation); "pending-partitions" are target partitions it waits for.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from model.actions import Action, DeliverMessage, LoseMessage
from model.coordinator import group_status, pending_partitions
from model.ids import format_partitions
from model.records import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Message,
    OffsetCommitRequest,
    OffsetCommitResponse,
    State,
)
from reports.render.escape import partitions, shown


def _parts(partitions: frozenset[tuple[str, int]] | None) -> list[str] | None:
    if partitions is None:
        return None
    return [f"{t}-{p}" for t, p in sorted(partitions)]


def group_view(state: State) -> dict[str, Any]:
    """The group, its target assignment, each member's assignment and each client, as
    plain JSON-ready data."""
    g = state.group
    members = {}
    for mid, m in g.members.items():
        members[mid] = {
            "epoch": m.member_epoch,
            "state": m.state.value,
            "partitions": _parts(m.owned_or_pending()),
            "pending_partitions": _parts(pending_partitions(g, m)),
            "pending_revocation": _parts(m.partitions_pending_revocation),
        }
    clients = {
        c.name: {
            "member_id": c.member_id,
            "status": c.status.value,
            "epoch": c.member_epoch,
            "owned": _parts(c.owned),
            "alive": c.alive,
        }
        for c in state.clients
    }
    return {
        "group_epoch": g.group_epoch,
        "status": group_status(g).value,
        "target_assignment": {
            "epoch": g.assignment_epoch,
            "members": {mid: _parts(p) for mid, p in g.target_assignment.items()},
        },
        "members": members,
        "clients": clients,
        "in_flight": len(state.network),
        "perturbations": state.perturbations,
    }


def render_group(state: State) -> str:
    """The KIP-848 case-study layout, plus one line per client (what it consumes)."""
    g = state.group
    lines = [f"Group (epoch={g.group_epoch}, {group_status(g).value})"]
    lines += [f"  • {mid}" for mid in g.members] or ["  • Empty"]
    lines.append(f"Target Assignment (epoch={g.assignment_epoch})")
    lines += [
        f"  • {mid} - partitions={format_partitions(p)}" for mid, p in g.target_assignment.items()
    ] or ["  • Empty"]
    lines.append("Member Assignment")
    member_lines = []
    for mid, m in g.members.items():
        held = format_partitions(m.owned_or_pending())
        pending = format_partitions(pending_partitions(g, m))
        line = (
            f"  • {mid} - epoch={m.member_epoch}, partitions={held}, pending-partitions={pending}"
        )
        if m.partitions_pending_revocation:
            line += f", revoking={format_partitions(m.partitions_pending_revocation)}"
        member_lines.append(line)
    lines += member_lines or ["  • Empty"]
    client_bits = []
    for c in state.clients:
        where = c.status.value if c.alive else "DOWN"
        client_bits.append(
            f"{c.member_id} {where} epoch={c.member_epoch} owns={format_partitions(c.owned)}"
        )
    lines.append("Clients: " + "; ".join(client_bits))
    return "\n".join(lines)


def describe_body(body: object) -> str:
    """A request or response with Kafka's field names; unset fields are omitted."""
    if isinstance(body, ConsumerGroupHeartbeatRequest):
        bits = [f"MemberId={shown(body.member_id)}", f"MemberEpoch={body.member_epoch}"]
        if body.instance_id is not None:
            bits.append(f"InstanceId={shown(body.instance_id)}")
        if body.subscribed_topic_names is not None:
            bits.append(
                "SubscribedTopicNames=["
                + ", ".join(shown(t) for t in sorted(body.subscribed_topic_names))
                + "]"
            )
        if body.server_assignor is not None:
            bits.append(f"ServerAssignor={shown(body.server_assignor)}")
        if body.topic_partitions is not None:
            bits.append(f"TopicPartitions={partitions(body.topic_partitions)}")
        return "ConsumerGroupHeartbeat(" + ", ".join(bits) + ")"
    if isinstance(body, ConsumerGroupHeartbeatResponse):
        bits = [f"ErrorCode={body.error_code.name}"]
        if body.error_code == 0:
            bits.append(f"MemberEpoch={body.member_epoch}")
        if body.assignment is not None:
            bits.append(f"Assignment={partitions(body.assignment)}")
        return "ConsumerGroupHeartbeatResponse(" + ", ".join(bits) + ")"
    if isinstance(body, OffsetCommitRequest):
        return (
            f"OffsetCommit(MemberId={shown(body.member_id)}, "
            f"GenerationIdOrMemberEpoch={body.generation_id_or_member_epoch}, "
            f"Topics={partitions(body.topics)})"
        )
    if isinstance(body, OffsetCommitResponse):
        return f"OffsetCommitResponse(ErrorCode={body.error_code.name})"
    return repr(body)


def describe_message(m: Message) -> str:
    """``A → coordinator: ConsumerGroupHeartbeat(...)``."""
    client = shown(m.client)
    arrow = f"{client} → coordinator" if m.to_coordinator else f"coordinator → {client}"
    return f"{arrow}: {describe_body(m.body)}"


def describe_action(action: Action) -> str:
    """One line naming the action in the model's vocabulary."""
    if isinstance(action, DeliverMessage | LoseMessage):
        return f"{action.kind} {describe_message(action.message)}"
    args = ", ".join(_argument(getattr(action, f.name)) for f in fields(action))
    return f"{action.kind}({args})"


def _argument(value: object) -> str:
    """An action's field as ``describe_action`` shows it: ids (and tuples of topic names)
    cut and made visible (``reports.render.escape.shown``)."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, tuple):
        return str(tuple(shown(v) if isinstance(v, str) else v for v in value))
    return str(value)
