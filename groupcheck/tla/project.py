"""The projection of a model state onto the variables of ``tla/KIP848.tla``.

Each TLA+ variable is a function of ``model.records.State``; fields the specification
leaves out are constant within its scope (see ``configs.check_in_scope``): member and
instance ids (a member id is its client's name), incarnations, the subscription (topic
``foo``), the server assignor, the rebalance timeout and the leave epoch. The network's
single send-ordered tuple becomes one FIFO queue per client and direction — the order
in which the model may deliver them (without ``reorder`` a channel is FIFO).

The projection is the consumer family's facet ``groupcheck.families.TLA``: a config of a
family the specification does not model is refused by name.
"""

from __future__ import annotations

from typing import Any

from groupcheck.families import TLA
from groupcheck.tla.values import EMPTY, Fn, Seq, State, fn
from model.ids import Assignment
from model.records import Client as ModelClient
from model.records import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Member,
    Message,
    OffsetCommitRequest,
    OffsetCommitResponse,
)
from model.records import State as ModelState

FREE = -1


def _some(x: Any) -> Seq:
    return Seq((x,))


def _opt(x: Any) -> Seq:
    return EMPTY if x is None else Seq((x,))


def _parts(a: Assignment) -> frozenset[int]:
    return frozenset(i for _, i in a)


def _opt_parts(a: Assignment | None) -> Seq:
    return EMPTY if a is None else _some(_parts(a))


def member_value(m: Member) -> Seq | Fn:
    """A member record (``KIP848.NewMember`` shape)."""
    return fn(
        {
            "epoch": m.member_epoch,
            "previousEpoch": m.previous_member_epoch,
            "state": m.state.value,
            "assigned": _parts(m.assigned_partitions),
            "pending": _parts(m.partitions_pending_revocation),
            "subscribed": frozenset(m.subscribed_topic_names),
            "timer": _opt(m.rebalance_timer_epoch),
        }
    )


def client_value(c: ModelClient) -> Seq | Fn:
    """A client record (``KIP848.Init`` shape)."""
    sent: Seq = EMPTY
    if c.sent is not None:
        sent = _some(fn({"parts": _opt_parts(c.sent.topic_partitions)}))
    return fn(
        {
            "alive": c.alive,
            "status": c.status.value,
            "epoch": c.member_epoch,
            "owned": _parts(c.owned),
            "target": _opt_parts(c.target),
            "reconciling": _opt_parts(c.reconciling),
            "revoking": _parts(c.revoking),
            "hbInFlight": c.heartbeat_in_flight,
            "commitInFlight": c.commit_in_flight,
            "connection": c.connection,
            "sent": sent,
            "fatal": 0 if c.fatal_error is None else int(c.fatal_error),
        }
    )


def message_value(m: Message) -> Seq | Fn:
    """A request or response as the specification's message records."""
    b = m.body
    if isinstance(b, ConsumerGroupHeartbeatRequest):
        return fn(
            {
                "kind": "HeartbeatRequest",
                "conn": m.connection,
                "epoch": b.member_epoch,
                "rebalanceTimeoutMs": b.rebalance_timeout_ms,
                "subscribed": _opt(
                    None
                    if b.subscribed_topic_names is None
                    else frozenset(b.subscribed_topic_names)
                ),
                "parts": _opt_parts(b.topic_partitions),
            }
        )
    if isinstance(b, ConsumerGroupHeartbeatResponse):
        return fn(
            {
                "kind": "HeartbeatResponse",
                "conn": m.connection,
                "error": int(b.error_code),
                "epoch": b.member_epoch,
                "assignment": _opt_parts(b.assignment),
            }
        )
    if isinstance(b, OffsetCommitRequest):
        return fn(
            {
                "kind": "OffsetCommitRequest",
                "conn": m.connection,
                "epoch": b.generation_id_or_member_epoch,
                "parts": _parts(b.topics),
            }
        )
    assert isinstance(b, OffsetCommitResponse)
    return fn(
        {
            "kind": "OffsetCommitResponse",
            "conn": m.connection,
            "error": int(b.error_code),
            "parts": _parts(b.topics),
        }
    )


def project(state: ModelState, partitions: int) -> State:
    """The TLA+ state (variable, value) pairs of a model state."""
    g = state.group
    names = [c.name for c in state.clients]
    to_coordinator: dict[str, list[Any]] = {n: [] for n in names}
    to_client: dict[str, list[Any]] = {n: [] for n in names}
    for m in state.network:
        (to_coordinator if m.to_coordinator else to_client)[m.client].append(message_value(m))
    pe = dict.fromkeys(range(partitions), FREE)
    for (_, i), epoch in g.partition_epochs.items():
        pe[i] = epoch
    offsets: dict[int, Any] = dict.fromkeys(range(partitions), EMPTY)
    for (_, i), co in g.committed_offsets.items():
        offsets[i] = _some(fn({"member": co.member_id, "epoch": co.member_epoch}))
    out = {
        "groupEpoch": g.group_epoch,
        "assignmentEpoch": g.assignment_epoch,
        "targetAssignment": fn({k: _parts(v) for k, v in g.target_assignment.items()}),
        "members": fn({k: member_value(v) for k, v in g.members.items()}),
        "partitionEpochs": fn(pe),
        "committedOffsets": fn(offsets),
        "clients": fn({c.name: client_value(c) for c in state.clients}),
        "toCoordinator": fn({n: Seq(tuple(v)) for n, v in to_coordinator.items()}),
        "toClient": fn({n: Seq(tuple(v)) for n, v in to_client.items()}),
        "perturbations": state.perturbations,
    }
    return tuple(sorted(out.items()))


TLA.register("consumer", project)
"""The consumer family's projection (the family ``tla/KIP848.tla`` specifies)."""
