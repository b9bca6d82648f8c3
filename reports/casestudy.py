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

A classic group (``model.classic``) has no epochs and no target assignment: it is shown
with its generation, status, selected protocol (assignor) and leader, each member's
assignment of the last SyncGroup phase and the partitions it reported owning in its
JoinGroup (KIP-429 ``OwnedPartitions``), and each client's status and generation:

    Group (generation=3, STABLE, protocol=cooperative-sticky, leader=A.m1)
      • A.m1
      • B.m2
    Member Assignment (generation=3)
      • A.m1 - partitions=[foo-0, foo-2], owned-partitions=[]
      • B.m2 - partitions=[foo-1, foo-3], owned-partitions=[]
    Clients: A.m1 STABLE generation=3 EAGER owns=[foo-0, foo-2]; ...
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from model.actions import Action, DeliverMessage, LoseMessage
from model.classic.client import rebalance_protocol
from model.classic.messages import (
    ClassicSubscription,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from model.classic.records import ClassicClient, ClassicMember, ClassicState
from model.consumer.coordinator import group_status, pending_partitions
from model.family import family_of_state
from model.ids import Assignment, format_partitions
from model.records import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Message,
    OffsetCommitRequest,
    OffsetCommitResponse,
    State,
)
from model.status import ErrorCode
from model.system import AnyState
from reports.escape import partitions, shown
from reports.families import CASESTUDY, CaseStudyFacet


def _parts(partitions: frozenset[tuple[str, int]] | None) -> list[str] | None:
    if partitions is None:
        return None
    return [f"{t}-{p}" for t, p in sorted(partitions)]


def group_view(state: AnyState) -> dict[str, Any]:
    """The group, its target assignment, each member's assignment and each client, as
    plain JSON-ready data, as the state's family shows it (``CaseStudyFacet.group_view``:
    ``consumer_group_view``, ``classic_group_view``,
    ``reports.mixed_casestudy.mixed_group_view``)."""
    view: dict[str, Any] = CASESTUDY.of_state(state).group_view(state)
    return view


def consumer_group_view(state: State) -> dict[str, Any]:
    """``group_view`` of a KIP-848 state."""
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


def classic_group_view(state: ClassicState) -> dict[str, Any]:
    """A classic group as plain JSON-ready data: its status, generation, selected protocol
    and leader; each member's assignment (of the last SyncGroup phase), the partitions it
    reported owning in its JoinGroup and the request the coordinator holds for it; each
    client's status, member id, generation, rebalance protocol and what it consumes."""
    g = state.group
    members = {}
    for mid, m in g.members.items():
        members[mid] = {
            "instance_id": m.instance_id,
            "protocols": list(m.protocols),
            "topics": sorted(m.subscription.topics),
            "assignment": _parts(m.assignment),
            "owned_partitions": _parts(m.subscription.owned_partitions),
            "owned_generation": m.subscription.generation_id,
            "awaiting": _awaiting(m),
        }
    clients = {
        c.name: {
            "member_id": c.member_id,
            "instance_id": c.instance_id,
            "status": c.status.value,
            "generation": c.generation_id,
            "rebalance_protocol": rebalance_protocol(c).value,
            "assignors": list(c.assignors),
            "leader": c.leader,
            "owned": _parts(c.owned),
            "alive": c.alive,
            "stalled": c.stalled,
            "bounced": c.bounced,
        }
        for c in state.clients
    }
    return {
        "protocol": "classic",
        "generation": g.generation_id,
        "status": g.status.value,
        "protocol_name": g.protocol_name,
        "leader": g.leader_id,
        "members": members,
        "pending_members": sorted(g.pending_members),
        "pending_sync": sorted(g.pending_sync),
        "clients": clients,
        "in_flight": len(state.network),
        "perturbations": state.perturbations,
    }


def _awaiting(m: ClassicMember) -> str | None:
    """The request the coordinator holds for a classic member: ``join``, ``sync`` or None."""
    if m.awaiting_join is not None:
        return "join"
    if m.awaiting_sync is not None:
        return "sync"
    return None


def render_group(state: AnyState) -> str:
    """The KIP-848 case-study layout, plus one line per client (what it consumes); a
    classic group in the same shape (``render_classic_group``), a mixed state as its
    group's family (``ProtocolFamily.one_family``)."""
    one = family_of_state(state).one_family(state)
    text: str = CASESTUDY.of_state(one).render_group(one)
    return text


def render_consumer_group(state: State) -> str:
    """``render_group`` of a KIP-848 state."""
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


def render_classic_group(state: ClassicState) -> str:
    """A classic group in the case-study layout: the group with its generation, status,
    protocol and leader; each member's assignment and the partitions it reported owning;
    one entry per client with its status, generation, rebalance protocol and what it
    consumes."""
    g = state.group
    protocol = shown(g.protocol_name) if g.protocol_name is not None else "none"
    leader = shown(g.leader_id) if g.leader_id else "none"
    lines = [
        f"Group (generation={g.generation_id}, {g.status.value}, protocol={protocol}, "
        f"leader={leader})"
    ]
    lines += [f"  • {shown(mid)}" for mid in g.members] or ["  • Empty"]
    lines.append(f"Member Assignment (generation={g.generation_id})")
    member_lines = []
    for mid, m in g.members.items():
        line = (
            f"  • {shown(mid)} - partitions={partitions(m.assignment)}, "
            f"owned-partitions={partitions(m.subscription.owned_partitions)}"
        )
        awaiting = _awaiting(m)
        if awaiting is not None:
            line += f", awaiting-{awaiting}"
        member_lines.append(line)
    lines += member_lines or ["  • Empty"]
    lines.append("Clients: " + "; ".join(_classic_client_text(c) for c in state.clients))
    return "\n".join(lines)


def _classic_client_text(c: ClassicClient) -> str:
    """``A.m1 STABLE generation=3 EAGER owns=[foo-0]`` (the client's name while it has no
    member id; DOWN when its process is gone; ``stalled`` while its application hangs)."""
    who = shown(c.member_id) if c.member_id else shown(c.name)
    where = c.status.value if c.alive else "DOWN"
    text = (
        f"{who} {where} generation={c.generation_id} {rebalance_protocol(c).value} "
        f"owns={partitions(c.owned)}"
    )
    return text + (" stalled" if c.stalled else "")


def _member(member_id: str) -> str:
    """A member id as a body shows it: ``""`` for the unknown member id of a first join."""
    return shown(member_id) if member_id else '""'


def _subscription(sub: ClassicSubscription) -> list[str]:
    """The fields of a JoinGroup's ``ConsumerProtocolSubscription``: its owned partitions
    always (KIP-429; empty for an eager member), the generation they were assigned in and
    the user data only when set."""
    bits = [f"OwnedPartitions={partitions(sub.owned_partitions)}"]
    if sub.generation_id >= 0:
        bits.append(f"GenerationId={sub.generation_id}")
    if sub.user_data:
        bits.append(f"UserData={partitions(sub.user_data)}")
    return bits


def _assignments(assignments: Mapping[str, Assignment]) -> str:
    """A leader's SyncGroup assignments: ``{A.m1=[foo-0], B.m2=[foo-1]}``."""
    return "{" + ", ".join(f"{shown(m)}={partitions(a)}" for m, a in assignments.items()) + "}"


def describe_classic_body(body: object) -> str | None:
    """A classic group request or response (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)
    with Kafka's field names, unset fields omitted; None for any other body."""
    if isinstance(body, JoinGroupRequest):
        bits = [f"MemberId={_member(body.member_id)}"]
        if body.instance_id is not None:
            bits.append(f"GroupInstanceId={shown(body.instance_id)}")
        bits.append("Protocols=[" + ", ".join(shown(p) for p in body.protocols) + "]")
        bits.append(
            "Topics=[" + ", ".join(shown(t) for t in sorted(body.subscription.topics)) + "]"
        )
        bits += _subscription(body.subscription)
        return "JoinGroup(" + ", ".join(bits) + ")"
    if isinstance(body, JoinGroupResponse):
        bits = [f"ErrorCode={body.error_code.name}"]
        if body.error_code is ErrorCode.NONE:
            bits.append(f"GenerationId={body.generation_id}")
            if body.protocol_name is not None:
                bits.append(f"ProtocolName={shown(body.protocol_name)}")
            bits.append(f"Leader={_member(body.leader)}")
        if body.member_id:
            bits.append(f"MemberId={shown(body.member_id)}")
        if body.members:
            listed = ", ".join(
                f"{shown(m.member_id)}(" + ", ".join(_subscription(m.subscription)) + ")"
                for m in body.members
            )
            bits.append(f"Members=[{listed}]")
        return "JoinGroupResponse(" + ", ".join(bits) + ")"
    if isinstance(body, SyncGroupRequest):
        bits = [f"MemberId={_member(body.member_id)}", f"GenerationId={body.generation_id}"]
        if body.instance_id is not None:
            bits.append(f"GroupInstanceId={shown(body.instance_id)}")
        if body.protocol_name is not None:
            bits.append(f"ProtocolName={shown(body.protocol_name)}")
        if body.assignments:
            bits.append(f"Assignments={_assignments(body.assignments)}")
        return "SyncGroup(" + ", ".join(bits) + ")"
    if isinstance(body, SyncGroupResponse):
        bits = [f"ErrorCode={body.error_code.name}"]
        if body.error_code is ErrorCode.NONE:
            bits.append(f"Assignment={partitions(body.assignment)}")
        return "SyncGroupResponse(" + ", ".join(bits) + ")"
    if isinstance(body, HeartbeatRequest):
        bits = [f"MemberId={_member(body.member_id)}", f"GenerationId={body.generation_id}"]
        if body.instance_id is not None:
            bits.append(f"GroupInstanceId={shown(body.instance_id)}")
        return "Heartbeat(" + ", ".join(bits) + ")"
    if isinstance(body, HeartbeatResponse):
        return f"HeartbeatResponse(ErrorCode={body.error_code.name})"
    if isinstance(body, LeaveGroupRequest):
        bits = [f"MemberId={_member(body.member_id)}"]
        if body.instance_id is not None:
            bits.append(f"GroupInstanceId={shown(body.instance_id)}")
        return "LeaveGroup(" + ", ".join(bits) + ")"
    if isinstance(body, LeaveGroupResponse):
        return f"LeaveGroupResponse(ErrorCode={body.error_code.name})"
    return None


def describe_body(body: object) -> str:
    """A request or response with Kafka's field names; unset fields are omitted. A classic
    body as ``describe_classic_body`` shows it; an offset commit names the generation or
    member epoch it carries with its field name (``GenerationIdOrMemberEpoch``)."""
    classic = describe_classic_body(body)
    if classic is not None:
        return classic
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
    """``A → coordinator: ConsumerGroupHeartbeat(...)`` (or ``JoinGroup(...)`` …)."""
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
    cut and made visible (``reports.escape.shown``)."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, tuple):
        return str(tuple(shown(v) if isinstance(v, str) else v for v in value))
    return str(value)


CASESTUDY.register(
    "consumer",
    CaseStudyFacet(group_view=consumer_group_view, render_group=render_consumer_group),
)
CASESTUDY.register(
    "classic",
    CaseStudyFacet(group_view=classic_group_view, render_group=render_classic_group),
)
