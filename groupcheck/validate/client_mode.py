"""Client mode: replay each consumer-protocol member's client through the model's client
state machine and compare the requests it would send, and the callbacks it would run,
with those the real client sent and ran.

Per member (a message's ``client``: the member id of one consumer instance) the replay
starts the model's client (``model.consumer.client``, mirroring Kafka's
``AbstractMembershipManager`` and ``ConsumerHeartbeatRequestManager``, with
``Config.callback_steps``: each rebalance callback a step of its own) and feeds it, in the order of
their ``ts``, what the real client received and what its application did: the captured responses
(``on_heartbeat_response``), its client events (docs/trace-format.md, "Client events":
``subscribe()``, callback ends, ``close()``, poll stalls) and a ``Crash`` — within one
millisecond, where the order sorted diverges, the other order (``_in_either_order``). Whatever the
model's client does of its own accord between them it does at once: start a
reconciliation (``reconcile``), run a callback whose listener Kafka does not call (an
empty ``onPartitionsRevoked``/``Lost``), release before a leave, rejoin after
``onPartitionsLost``, poll again after a stall.

Compared, in sequence — a heartbeat is due in the model when the capture shows one, so
timers are not judged:

- each captured ConsumerGroupHeartbeat request with the one ``build_heartbeat`` makes
  there, field by field (``MemberId``, ``MemberEpoch``, ``InstanceId``,
  ``RebalanceTimeoutMs`` sent or -1, ``SubscribedTopicNames``, ``SubscribedTopicRegex``,
  ``ServerAssignor``, ``RackId`` and ``TopicPartitions``: null or the set);
- each captured callback (its start) with the callback the model's client runs there:
  listener method and partitions, in order.

Two application calls have no event at their start: ``close()`` (the driver reports when
it returned) and the expiry of the poll timer during a stall. The replay applies them at
the first event that shows them — a callback releasing the assignment, or a leave
heartbeat, before the ``Close`` that ends the client or within a ``PollStall`` — and not
earlier. The first difference is a ``Client.Divergence`` finding naming the member, the
line, the field, the model's value and the capture's, and the Kafka rule the model follows
there; that member's replay stops (the others go on). A trace without client events
cannot be judged: inconclusive.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from groupcheck.validate.events import read_trace
from groupcheck.validate.report import Finding, Report
from model.actions import Crash, DeliverMessage, LoseMessage
from model.config import ClientSpec, Config
from model.consumer import client as cl
from model.family import family_named
from model.ids import EMPTY, Assignment
from model.records import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    Client,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    replace,
)
from model.status import ClientStatus
from model.trace import TraceError, TraceHeader
from model.trace.codec import ClientEvent

S = ClientStatus

DIVERGENCE = "Client.Divergence"
"""The finding of client mode."""

NO_CLIENT_EVENTS = (
    'the trace has no client events (docs/trace-format.md, "Client events"): without a '
    "member's subscribe() and callbacks the replay cannot know what its application did, "
    "so its requests and callbacks were not judged"
)

RULES = {
    "MemberEpoch": (
        "AbstractMembershipManager: the epoch of the last successful response; 0 when "
        "joining (transitionToJoining, after fencing or a stale rejoin); "
        "-1 or -2 when leaving (leaveGroupEpoch: -2 for a static member)"
    ),
    "MemberId": "AbstractMembershipManager.memberId: the client's own (KIP-1082), never changed",
    "InstanceId": "ConsumerHeartbeatRequestManager.HeartbeatState: group.instance.id, always sent",
    "RebalanceTimeoutMs": (
        "ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData: max.poll.interval.ms "
        "in a full request (joining, or after a reset), else -1"
    ),
    "SubscribedTopicNames": (
        "ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData: the subscription "
        "in a full request or when it changed since last sent, else null"
    ),
    "SubscribedTopicRegex": (
        "ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData: the pattern in a "
        "full request or when it changed, else null"
    ),
    "ServerAssignor": (
        "ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData: group.remote.assignor "
        "in a full request or when it changed, else null"
    ),
    "RackId": (
        "ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData: client.rack when joining"
    ),
    "TopicPartitions": (
        "ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData: the current "
        "assignment (AbstractMembershipManager.currentAssignment, updated when a "
        "reconciliation completes) in a full request or when it changed since last sent, "
        "else null"
    ),
    "heartbeat": (
        "AbstractMembershipManager.shouldSkipHeartbeat: no heartbeat while UNSUBSCRIBED, "
        "FENCED (until onPartitionsLost returned), STALE or FATAL"
    ),
    "callback": (
        "AbstractMembershipManager.maybeReconcile/revokeAndAssign: onPartitionsRevoked with "
        "the revoked partitions (not called when none), then onPartitionsAssigned with the "
        "added ones (always); transitionToFenced and the poll timer's leave: "
        "onPartitionsLost with the owned ones (not called when none); leaveGroup: "
        "ConsumerMembershipManager.invokeOnPartitionsRevokedOrLostToReleaseAssignment"
    ),
}
"""Per compared field, the Kafka rule (4.4) the model's client follows there."""

_LEAVE_FIELDS = frozenset({"MemberId", "MemberEpoch", "InstanceId"})
"""What a leave heartbeat is compared on: the model's carries nothing else, and the
coordinator reads nothing else of it (``GroupMetadataManager.consumerGroupLeave``)."""

EXPLAINED = {
    "leave-fields": (
        "leave heartbeat(s) whose other fields differ: the real client sends the fields "
        "that changed since last sent (an emptied subscription and assignment, []), the "
        "model's client only its ids and leave epoch"
    ),
    "unrecorded-failure": (
        "full heartbeat(s) after an exchange the capture does not show (it failed before "
        "its response): the replay reset the model's heartbeat state there"
    ),
    "close-before-callback": (
        "close() before the application ran a pending rebalance callback: the real client "
        "drops that reconciliation and releases every partition still assigned; the "
        "model's client would run the callback as an aborted step first"
    ),
    "same-millisecond": (
        "request(s) judged after client events stamped in the same millisecond and written "
        "after them (the proxy's and the driver's clocks cannot order them; in the order "
        "written they would diverge)"
    ),
    "same-millisecond-callback": (
        "callback(s) judged after the response(s) stamped in the same millisecond and "
        "sorted after them (a callback cannot run before the response that carried its "
        "partitions; in the order sorted they would diverge)"
    ),
    "partial-resolution": (
        "acknowledgement(s) of a partially resolved target (maybeReconcile's local epoch "
        "bump while topic metadata is missing), which the model's client does not send"
    ),
}
"""The differences client mode explains (docs/fidelity.md, "Client conformance with
kafka-clients 4.4"), reported as notes with their counts."""

PROFILES = ("auto", "java", "librdkafka")
"""``--client-profile``: whose client the captured members are. ``java`` judges every
difference from the model's client (which follows kafka-clients); ``librdkafka`` admits,
besides, exactly the librdkafka differences of :data:`LIBRDKAFKA_RULES`; ``auto`` takes
``librdkafka`` when the header's ``implementation.clients`` names librdkafka only."""

LIBRDKAFKA_RULES = {
    "RK1": (
        "request field(s) SubscribedTopicRegex '' where kafka-clients sends null "
        "(librdkafka writes the empty string when it has no regex; Kafka's coordinator "
        "takes '' as no regex)"
    ),
    "RK2": (
        "target(s) equal to the current assignment that librdkafka does not reconcile "
        "(rd_kafka_cgrp_consumer_handle_next_assignment: no callback, no acknowledgement) "
        "where kafka-clients runs onPartitionsAssigned([]) and acknowledges"
    ),
    "RK4": (
        "close() call(s) after which librdkafka went on heartbeating or completed a "
        "reconciliation before its release (rd_kafka_cgrp_terminate waits for the "
        "rebalance in progress; the leave follows the unassign), where kafka-clients "
        "starts the release at once"
    ),
    "RK5": (
        "plain heartbeat(s) at the current epoch that librdkafka sent after close() while "
        "its release ran or after it, before the leave heartbeat (its heartbeat timer "
        "keeps running until rd_kafka_cgrp_consumer_leave), where kafka-clients sends the "
        "leave next"
    ),
    "RK3": (
        "field(s) of full heartbeats librdkafka sends while it has not reconciled an "
        "assignment since it joined (join state INIT: rd_kafka_cgrp_consumer_serve sets "
        "full_request), each the member's own value"
    ),
}
"""The differences of librdkafka from the model's (Java) client that the ``librdkafka``
profile admits, by the id of their row in docs/fidelity.md ("librdkafka in client
mode"): each reported as a note with its count, never as ok silently."""

_FIELDS = (
    ("MemberId", "member_id"),
    ("MemberEpoch", "member_epoch"),
    ("InstanceId", "instance_id"),
    ("RebalanceTimeoutMs", "rebalance_timeout_ms"),
    ("SubscribedTopicNames", "subscribed_topic_names"),
    ("SubscribedTopicRegex", "subscribed_topic_regex"),
    ("ServerAssignor", "server_assignor"),
    ("RackId", "rack_id"),
    ("TopicPartitions", "topic_partitions"),
)


@dataclass
class _Item:
    ts: int
    line: int
    what: object  # a request or response body, a ClientEvent, or a Crash
    connection: int = 0


@dataclass
class _Member:
    """One member's replay: the model's client and what the replay knows beside it."""

    member_id: str
    items: list[_Item] = field(default_factory=list)
    client: Client | None = None
    config: Config | None = None
    callback_partitions: Assignment = EMPTY
    """The argument of the callback the model's client runs (``Client.callback``)."""
    callback_started: bool = False
    """The capture showed that callback start."""
    lost_partitions: Assignment = EMPTY
    """The argument of a queued ``onPartitionsLost`` (``Client.lost_queued``)."""
    stalled: bool = False
    resumed: bool = False
    closed: bool = False
    explained: Counter[str] = field(default_factory=Counter)
    """Differences the replay explains (docs/fidelity.md), by kind."""
    subscription: ClientEvent | None = None
    """The ``subscribe()`` before the member's first request."""
    requests: int = 0
    callbacks: int = 0
    profile: str = "java"
    """The client profile the member is judged under (:data:`PROFILES`)."""
    rk_init: bool = True
    """librdkafka: the member has not reconciled an assignment since it joined (its join
    state is still ``INIT``, in which every heartbeat is a full request: RK3)."""
    rk_unacked: bool = False
    """librdkafka: the last target equalled the current assignment, so librdkafka did not
    reconcile it and owes no acknowledgement (RK2)."""
    first: ConsumerGroupHeartbeatRequest | None = None
    """The member's first request (its own configuration)."""
    rk_close: int = 0
    """librdkafka (RK4): 1 while a ``close()`` waits for its release, 2 once a request
    or a callback came between them."""


class _Divergence(Exception):  # a finding, raised to stop one member's replay
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line, self.message = line, message


def _config(first: ConsumerGroupHeartbeatRequest) -> Config:
    """The model config a member's client runs under: callbacks as steps of their own,
    no commit before a revocation (the drivers disable auto-commit), and the member's
    own ``max.poll.interval.ms`` (its first request's ``RebalanceTimeoutMs``)."""
    timeout = first.rebalance_timeout_ms if first.rebalance_timeout_ms > 0 else 300000
    return Config(
        kafka_version="4.2",
        name="client-mode",
        topics=(("topic", 1),),
        clients=(ClientSpec("client", ("topic",)),),
        callback_steps=True,
        commit_on_revoke=False,
        rebalance_timeout_ms=timeout,
        session_timeout_ms=max(45000, timeout + 1),
    )


_C = _config(ConsumerGroupHeartbeatRequest("", 0))


class _Names:
    def __init__(self, header: TraceHeader) -> None:
        self.topics = dict(header.topic_names or {})
        self.clients = dict(header.clients or {})

    def parts(self, a: Assignment | None) -> str:
        if a is None:
            return "null"
        if not a:
            return "[]"
        return "[" + ", ".join(f"{self.topics.get(t, t)}-{p}" for t, p in sorted(a)) + "]"

    def named(self, a: Assignment) -> frozenset[tuple[str, int]]:
        return frozenset((self.topics.get(t, t), p) for t, p in a)

    def member(self, member_id: str) -> str:
        name = self.clients.get(member_id)
        return f"{member_id} ({name})" if name else member_id

    def value(self, key: str, v: Any) -> str:
        if key == "TopicPartitions":
            return self.parts(v)
        if key == "RebalanceTimeoutMs":
            return str(v)
        if isinstance(v, frozenset):
            return "[" + ", ".join(sorted(v)) + "]"
        return "null" if v is None else repr(v) if isinstance(v, str) else str(v)


def client_profile(header: TraceHeader, profile: str = "auto") -> str:
    """The profile a trace is judged under: ``profile`` unless ``auto``, then
    ``librdkafka`` when the header's ``implementation.clients`` names librdkafka and no
    other client library (a trace of both is judged as Java's: the header does not say
    which member ran which library), else ``java``."""
    if profile != "auto":
        return profile
    libraries = [
        x.strip() for x in str((header.implementation or {}).get("clients", "")).split(",")
    ]
    libraries = [x for x in libraries if x]
    if libraries and all(x.startswith("librdkafka") for x in libraries):
        return "librdkafka"
    return "java"


def validate_client(file: str, lines: Iterable[str], profile: str = "auto") -> Report:
    """Client mode on one trace (module docstring), judged under ``profile``
    (:data:`PROFILES`)."""
    report = Report(file, "client")
    try:
        header, items = read_trace(lines)
    except TraceError as e:
        report.error = f"{file}:{e}"
        return report
    report.events = len(items)
    if not family_named(header.protocol).consumer_members:
        report.reasons.append(
            "client mode replays consumer-protocol members (ConsumerGroupHeartbeat) only: "
            f"a {header.protocol} trace has none, no verdict"
        )
        return report
    names = _Names(header)
    chosen = client_profile(header, profile)
    members = _members(items)
    if not members:
        report.reasons.append("the trace has no ConsumerGroupHeartbeat request: nothing to replay")
        return report
    if not any(isinstance(a, ClientEvent) for _, _, a in items):
        report.reasons.append(NO_CLIENT_EVENTS)
        return report
    if any(ts is None for _, ts, _ in items):
        report.reasons.append(
            "client mode orders each member's messages and client events by their ts: "
            "some events have none, no verdict"
        )
        return report
    if chosen != "java":
        report.notes.append(
            f"client profile {chosen}: the model's (Java) client, with the {chosen} "
            f"differences {', '.join(LIBRDKAFKA_RULES)} admitted and counted "
            '(docs/fidelity.md, "librdkafka in client mode"); any other difference is reported'
        )
    for m in members.values():
        m.profile = chosen
        if not any(isinstance(i.what, ClientEvent) for i in m.items):
            report.reasons.append(
                f"{names.member(m.member_id)} has no client events: its requests were not judged"
            )
            continue
        _replay(m, names, file, report)
    for kind, text in EXPLAINED.items():
        count = sum(m.explained[kind] for m in members.values())
        if count:
            report.notes.append(f"explained: {count} {text}")
    for rule, text in LIBRDKAFKA_RULES.items():
        count = sum(m.explained[rule] for m in members.values())
        if count:
            report.notes.append(f"librdkafka {rule}: {count} {text}")
    judged = sum(1 for m in members.values() if m.client is not None)
    report.notes.append(
        f"{judged} member(s) replayed: "
        f"{sum(m.requests for m in members.values())} heartbeat request(s) and "
        f"{sum(m.callbacks for m in members.values())} callback(s) compared"
    )
    return report


def _members(items: list[tuple[int, int | None, object]]) -> dict[str, _Member]:
    members: dict[str, _Member] = {}
    for n, ts, action in items:
        if isinstance(action, DeliverMessage | LoseMessage):
            m = action.message
            body = m.body
            if not isinstance(body, ConsumerGroupHeartbeatRequest | ConsumerGroupHeartbeatResponse):
                continue
            if isinstance(action, LoseMessage) and m.to_coordinator:
                continue  # never reached the coordinator: still, the client sent it
            member = members.get(m.client)
            if member is None:
                if not isinstance(body, ConsumerGroupHeartbeatRequest):
                    continue
                member = members[m.client] = _Member(m.client)
            member.items.append(_Item(ts or 0, n, body, m.connection))
    for n, ts, action in items:
        if isinstance(action, ClientEvent | Crash) and action.client in members:
            members[action.client].items.append(_Item(ts or 0, n, action))
    for member in members.values():
        member.items.sort(key=lambda i: (i.ts, i.line))
    return members


def _replay(m: _Member, names: _Names, file: str, report: Report) -> None:
    who = names.member(m.member_id)
    try:
        k = 0
        while k < len(m.items):
            if isinstance(m.items[k].what, ConsumerGroupHeartbeatRequest) or _is_callback_start(
                m.items[k].what
            ):
                _in_either_order(m, k, names)
            else:
                _step(m, m.items[k], m.items[k + 1 :], names)
            k += 1
    except _Divergence as d:
        report.violations.append(Finding(file, d.line, DIVERGENCE, f"{who}: {d.message}"))
        return
    if m.client is not None and m.client.callback is not None and not m.closed:
        report.notes.append(
            f"{who}: the trace ends while the model's client still runs "
            f"{_callback_name(m)}({names.parts(m.callback_partitions)}), which the capture "
            "does not show starting"
        )


def _snapshot(m: _Member) -> dict[str, Any]:
    saved = dict(m.__dict__)
    saved["explained"], saved["items"] = Counter(m.explained), list(m.items)
    return saved


def _is_callback_start(e: object) -> bool:
    return isinstance(e, ClientEvent) and e.event == "Callback" and e.phase == "start"


def _in_either_order(m: _Member, k: int, names: _Names) -> None:
    """Judge the request or callback start at ``m.items[k]``. The proxy stamps each
    message when it forwards it, the client's driver each client event when the
    application sees it, and each source's own events are in order; but the merge places
    a client event before the first line stamped later than it while the proxy writes an
    exchange once every earlier forwarded request is answered, so between the two sources
    the order of what one millisecond holds is not known. When the item diverges in the
    order sorted, the replay takes first the events of the other source stamped in the
    same millisecond and sorted after it, keeping each source's own order, and judges it
    again: for a request, the client events that follow it with no other request between
    (a callback that returned just before the acknowledgement or the leave it lets go out:
    CC7; a response of that millisecond stays where it is); for a callback, the first
    one, then the first two, … of the member's messages
    (the response that carried its partitions: a callback cannot run before it). If no
    such order replays, the divergence in the order sorted is reported."""
    item = m.items[k]
    saved = _snapshot(m)
    try:
        _step(m, item, m.items[k + 1 :], names)
        return
    except _Divergence as d:
        first = d
    m.__dict__.update(_snapshot_restore(saved))
    same = [x for x in m.items[k + 1 :] if x.ts == item.ts]
    if isinstance(item.what, ConsumerGroupHeartbeatRequest):
        moves = []
        for later in same:
            if isinstance(later.what, ConsumerGroupHeartbeatResponse):
                continue  # a response (to this request, or earlier) stays where it is
            if not isinstance(later.what, ClientEvent):
                break
            moves.append(later)
        tries = [moves] if moves else []
        kind = "same-millisecond"
    else:
        wire = [x for x in same if not isinstance(x.what, ClientEvent | Crash)]
        tries = [wire[:n] for n in range(1, len(wire) + 1)]
        kind = "same-millisecond-callback"
    for moved in tries:
        m.__dict__.update(_snapshot_restore(saved))
        rest = [x for x in m.items[k + 1 :] if all(x is not y for y in moved)]
        try:
            for n, event in enumerate(moved):
                _step(m, event, [*moved[n + 1 :], item, *rest], names)
            _step(m, item, rest, names)
        except _Divergence:
            continue
        m.items[k + 1 :] = rest  # done: the loop goes on after them
        m.explained[kind] += 1
        return
    m.__dict__.update(_snapshot_restore(saved))
    raise first from None


def _snapshot_restore(saved: dict[str, Any]) -> dict[str, Any]:
    return {**saved, "explained": Counter(saved["explained"]), "items": list(saved["items"])}


def _callback_name(m: _Member) -> str:
    assert m.client is not None
    name = m.client.callback
    if name == cl.RELEASE_ASSIGNMENT:
        return cl.ON_PARTITIONS_REVOKED if m.client.member_epoch > 0 else cl.ON_PARTITIONS_LOST
    return str(name)


def _cur(m: _Member) -> Client:
    assert m.client is not None
    return m.client


def _held(c: Client) -> Assignment:
    return c.owned | c.revoking


def _set_callback_args(m: _Member, before: Client) -> None:
    """After a step: the argument of a callback the model's client started in it."""
    c = m.client
    assert c is not None
    if c.lost_queued and not before.lost_queued:
        m.lost_partitions = _held(before)
    if c.callback is None or (c.callback == before.callback and before.callback is not None):
        return
    m.callback_started = False
    if c.callback == cl.ON_PARTITIONS_REVOKED:
        m.callback_partitions = c.revoking
    elif c.callback == cl.ON_PARTITIONS_ASSIGNED:
        m.callback_partitions = (c.reconciling or EMPTY) - c.owned
    elif c.callback == cl.ON_PARTITIONS_LOST:
        m.callback_partitions = (
            m.lost_partitions if before.lost_queued and not c.lost_queued else _held(before)
        )
    else:  # the release before a leave
        m.callback_partitions = _held(c)


def _apply(m: _Member, new: Client) -> None:
    before = m.client
    assert before is not None
    m.client = new
    _set_callback_args(m, before)


def _settle(m: _Member) -> None:
    """What the model's client does of its own accord, until it waits for the capture."""
    for _ in range(32):
        c = m.client
        assert c is not None
        config = m.config
        assert config is not None
        if c.callback is not None:
            silent = not m.callback_partitions and c.callback != cl.ON_PARTITIONS_ASSIGNED
            if not silent:
                return
            _apply(m, cl.complete_callback(c, config)[0])  # no listener call: done at once
            continue
        if c.status is S.RECONCILING and c.reconciling is None and c.target is not None:
            if _rk_same_assignment(m, c):
                continue
            _apply(m, cl.reconcile(c, config)[0])
        elif c.status is S.PREPARE_LEAVING and c.reconciling is None:
            _apply(m, cl.start_release(c, config)[0])
        elif c.status is S.STALE and m.resumed and not c.lost_queued:
            _apply(m, cl.poll(c))
            m.resumed = False
        else:
            return


def _rk_same_assignment(m: _Member, c: Client) -> bool:
    """librdkafka (RK2): a target equal to the current assignment, with nothing being
    revoked, is not reconciled (``rd_kafka_cgrp_consumer_handle_next_assignment``:
    "Assignment is the same"): no callback and no acknowledgement. The replay completes
    the model's reconciliation silently and remembers that no acknowledgement is owed."""
    if m.profile != "librdkafka" or c.target != c.owned or c.revoking:
        return False
    assert m.config is not None
    done = cl.reconcile(c, m.config)[0]
    for _ in range(4):
        if done.callback is None:
            break
        done = cl.complete_callback(done, m.config)[0]
    m.client = replace(done, sent=c.sent)
    m.callback_partitions, m.callback_started = EMPTY, False
    m.rk_unacked = True
    m.explained["RK2"] += 1
    return True


def _leave_ahead(m: _Member, rest: list[_Item]) -> int | None:
    """The leave epoch of a ``close()``/``unsubscribe()`` the rest of the member's events
    show ending (before any new ``subscribe()``), else None."""
    c = m.client
    assert c is not None
    static = c.instance_id is not None
    for item in rest:
        e = item.what
        if isinstance(e, ClientEvent) and e.event == "Subscription":
            return None
        if isinstance(e, ClientEvent) and e.event == "Unsubscribe":
            return LEAVE_GROUP_MEMBER_EPOCH
        if isinstance(e, ClientEvent) and e.event == "Close":
            return _leave_epoch(e, static)
    return None


def _leave_epoch(close: ClientEvent, static: bool) -> int | None:
    """The epoch of the leave heartbeat a ``close()`` sends, None for none: a dynamic
    member closed with REMAIN_IN_GROUP sends none
    (``ConsumerHeartbeatRequestManager.shouldSendLeaveHeartbeatNow``)."""
    if close.leave == "leave" or (close.leave == "default" and not static):
        return LEAVE_GROUP_MEMBER_EPOCH
    return LEAVE_GROUP_STATIC_MEMBER_EPOCH if static else None


def _start_leave(m: _Member, rest: list[_Item]) -> bool:
    """Apply a pending ``close()`` (or the poll timer's expiry during a stall): whether
    there was one."""
    c = m.client
    assert c is not None
    if c.status not in cl.IN_GROUP and c.status is not S.UNSUBSCRIBED:
        return False
    if m.stalled and c.status in cl.IN_GROUP:
        _apply(m, cl.poll_timer_expires(c))
        return True
    epoch = _leave_ahead(m, rest)
    if epoch is None or c.status is S.UNSUBSCRIBED:
        return False
    if m.rk_close == 2:
        m.explained["RK4"] += 1
    m.rk_close = 0
    c = _abandon_unstarted(m, c)
    _apply(m, cl.leave(c, epoch))
    _settle(m)
    return True


def _abandon_unstarted(m: _Member, c: Client) -> Client:
    """``close()`` came before the application ran the reconciliation's next callback:
    Kafka's client drops that reconciliation (``maybeAbortReconciliation``; its
    subscription is updated only when the callback runs), so what it releases is every
    partition still assigned, those of a revocation in progress included. The model's
    client would run the pending callback as an aborted step and release only what it
    kept (docs/fidelity.md)."""
    if (
        c.callback not in (cl.ON_PARTITIONS_REVOKED, cl.ON_PARTITIONS_ASSIGNED)
        or m.callback_started
    ):
        return c
    m.explained["close-before-callback"] += 1
    return replace(
        c,
        callback=None,
        owned=c.owned | c.revoking,
        reconciling=None,
        revoking=EMPTY,
        target=None,
        rejoined_while_reconciling=False,
    )


def _step(m: _Member, item: _Item, rest: list[_Item], names: _Names) -> None:
    _dispatch(m, item, rest, names)
    e = item.what
    if m.rk_close and (
        isinstance(e, ConsumerGroupHeartbeatRequest)
        or (isinstance(e, ClientEvent) and e.event == "Callback")
    ):
        m.rk_close = 2  # RK4: still no leave after it


def _dispatch(m: _Member, item: _Item, rest: list[_Item], names: _Names) -> None:
    e = item.what
    if isinstance(e, ConsumerGroupHeartbeatRequest):
        _request(m, item, e, rest, names)
    elif isinstance(e, ConsumerGroupHeartbeatResponse):
        if m.client is None or not m.client.heartbeat_in_flight:
            return  # a response to a request the replay did not make: nothing to read
        before = m.client
        assert m.config is not None
        _apply(m, cl.on_heartbeat_response(before, e, m.config))
        _settle(m)
    elif isinstance(e, Crash):
        if m.client is not None:
            m.client = cl.crash(m.client)
        m.closed = True
    elif isinstance(e, ClientEvent):
        _client_event(m, item, e, rest, names)


def _subscribe(m: _Member, e: ClientEvent) -> None:
    c = m.client
    assert c is not None
    topics = frozenset(e.topics or ())
    if c.status is S.UNSUBSCRIBED:
        _apply(m, replace(cl.subscribe(c), subscription=topics, regex=e.pattern))
    else:
        _apply(m, replace(cl.change_subscription(c, topics), regex=e.pattern))


def _client_event(
    m: _Member, item: _Item, e: ClientEvent, rest: list[_Item], names: _Names
) -> None:
    if m.client is None:
        if e.event == "Subscription":
            m.subscription = e
        return
    if e.event == "Subscription":
        _subscribe(m, e)
        _settle(m)
    elif e.event == "PollStall":
        if e.phase == "start":
            m.stalled = True
        else:
            m.stalled, m.resumed = False, True
            _settle(m)
    elif e.event == "Close" and e.phase == "start" and m.profile == "librdkafka":
        m.rk_close = 1  # RK4: the leave starts at the release or the leave heartbeat
    elif e.event == "Close" and e.phase == "start":
        c = m.client
        epoch = _leave_epoch(e, c.instance_id is not None)
        if epoch is not None and c.status in cl.IN_GROUP:
            _apply(m, cl.leave(_abandon_unstarted(m, c), epoch))
            _settle(m)
    elif e.event == "Close":
        m.closed = True
    elif e.event == "Callback":
        _callback(m, item, e, rest, names)


def _callback(m: _Member, item: _Item, e: ClientEvent, rest: list[_Item], names: _Names) -> None:
    c = m.client
    assert c is not None
    assert m.config is not None
    captured = names.named(e.partitions or EMPTY)
    shown = f"{e.callback}({names.parts(e.partitions)})"
    if e.phase == "start":
        if (
            c.callback is None
            or m.callback_started
            or _callback_name(m) != e.callback
            or names.named(m.callback_partitions) != captured
        ):
            saved = (m.client, m.callback_partitions, m.callback_started, Counter(m.explained))
            if _start_leave(m, rest) and (
                m.client is None
                or m.client.callback is None
                or _callback_name(m) != e.callback
                or names.named(m.callback_partitions) != captured
            ):  # a leave does not explain it either: judge the state before
                m.client, m.callback_partitions, m.callback_started, m.explained = saved
            c = m.client
            assert c is not None
        if c.callback is None or m.callback_started:
            raise _Divergence(
                item.line,
                f"the client runs {shown} where the model's client runs no callback (it is "
                f"{c.status.value}); {RULES['callback']}",
            )
        expected = _callback_name(m)
        model = names.named(m.callback_partitions)
        if expected != e.callback or model != captured:
            raise _Divergence(
                item.line,
                f"callback: the model's client runs {expected}"
                f"({names.parts(m.callback_partitions)}), the capture {shown}; {RULES['callback']}",
            )
        m.callback_started = True
        m.callbacks += 1
        m.rk_init = m.rk_unacked = False
        return
    if c.callback is None or not m.callback_started:
        return  # the end of a callback already judged divergent, or never started
    _apply(m, cl.complete_callback(c, m.config)[0])
    m.callback_started = False
    _settle(m)


def _request(
    m: _Member,
    item: _Item,
    captured: ConsumerGroupHeartbeatRequest,
    rest: list[_Item],
    names: _Names,
) -> None:
    if m.client is None:
        if m.subscription is None:
            m.subscription = _same_ms_subscription(m, item, rest)
        _start(m, captured, rest)
    c = m.client
    assert c is not None
    assert m.config is not None
    if c.heartbeat_in_flight:  # the last request got no response: it failed
        _apply(m, cl.disconnect(c, m.config))
        c = _cur(m)
    if captured.member_epoch < 0 and c.status is not S.LEAVING and _start_leave(m, rest):
        c = _cur(m)
    if (
        m.profile == "librdkafka"
        and c.status in (S.PREPARE_LEAVING, S.LEAVING)
        and captured.member_epoch == c.member_epoch > 0
        and captured.topic_partitions is None
        and captured.subscribed_topic_names is None
        and _leave_ahead(m, rest) is not None
    ):
        m.explained["RK5"] += 1  # not judged further: its response changes nothing
        return
    if c.status not in cl.HEARTBEATING:
        raise _Divergence(
            item.line,
            f"the client sends a heartbeat (MemberEpoch {captured.member_epoch}) where the "
            f"model's client sends none: it is {c.status.value}"
            + (f", running {_callback_name(m)}" if c.callback else "")
            + f"; {RULES['heartbeat']}",
        )
    if captured.member_epoch == 0:
        m.rk_init = True
    rk_full = m.profile == "librdkafka" and m.rk_init and captured.member_epoch > 0
    if captured.is_full() and c.status is not S.JOINING and c.sent is not None and not rk_full:
        # A full heartbeat with no failure in sight: an exchange the capture could not
        # record failed (the proxy writes an exchange when its response arrives), and the
        # client reset its heartbeat state (AbstractHeartbeatRequestManager.onFailure).
        _apply(m, cl.disconnect(c, m.config))
        c = _cur(m)
        m.explained["unrecorded-failure"] += 1
    new, expected = cl.build_heartbeat(c, m.config)
    m.requests += 1
    diffs = []
    leaving = expected.member_epoch < 0
    leave_differs = False
    for key, attr in _FIELDS:
        want, got = getattr(expected, attr), getattr(captured, attr)
        if leaving and key not in _LEAVE_FIELDS:
            leave_differs = leave_differs or want != got
            continue
        if key == "TopicPartitions" and want is not None and got is not None:
            same = names.named(want) == names.named(got)
        else:
            same = want == got
        rule = None if same else _librdkafka_rule(m, c, key, want, got, rk_full)
        if rule is not None:
            m.explained[rule] += 1
            continue
        if not same:
            diffs.append(
                f"{key}: the model's client sends {names.value(key, want)}, the capture "
                f"{names.value(key, got)} ({RULES.get(key, '')})"
            )
    if leave_differs:
        m.explained["leave-fields"] += 1
    if diffs and not m.callback_started and _partially_resolved(c, expected, captured, names):
        m.explained["partial-resolution"] += 1
        diffs = []
    if diffs:
        raise _Divergence(
            item.line,
            f"heartbeat request #{m.requests} ({c.status.value} in the model): " + "; ".join(diffs),
        )
    _apply(m, new)
    _settle(m)


def _librdkafka_rule(
    m: _Member, c: Client, key: str, want: Any, got: Any, full: bool
) -> str | None:
    """The row of :data:`LIBRDKAFKA_RULES` that admits this one field's difference under
    the librdkafka profile, else None (the difference is reported)."""
    if m.profile != "librdkafka":
        return None
    if key == "SubscribedTopicRegex" and want is None and got == "":
        return "RK1"
    first = m.first
    assert first is not None
    if full and want in (None, -1):
        own = {
            "RebalanceTimeoutMs": first.rebalance_timeout_ms,
            "SubscribedTopicNames": c.subscription,
            "ServerAssignor": c.server_assignor,
            "RackId": c.rack,
            "InstanceId": c.instance_id,
            "TopicPartitions": c.owned,
        }
        if key in own and got == own[key]:
            return "RK3"
    if key == "TopicPartitions" and m.rk_unacked and got is None and want == c.owned:
        return "RK2"
    return None


def _partially_resolved(
    c: Client,
    expected: ConsumerGroupHeartbeatRequest,
    captured: ConsumerGroupHeartbeatRequest,
    names: _Names,
) -> bool:
    """The one difference is that the real client acknowledges again the partitions it
    owns while a new target waits: Kafka's ``AbstractMembershipManager.maybeReconcile``
    bumps the local epoch of the current assignment and acknowledges it when the part of
    the target whose topic ids its metadata resolves equals what it owns (a topic it has
    no metadata for yet); the model's client resolves every topic id at once."""
    if c.target is None or c.status is not S.RECONCILING:
        return False
    if expected.topic_partitions is not None or captured.topic_partitions is None:
        return False
    for key, attr in _FIELDS:
        if key != "TopicPartitions" and getattr(expected, attr) != getattr(captured, attr):
            return False
    return names.named(captured.topic_partitions) == names.named(cl.reported_partitions(c, _C))


def _same_ms_subscription(m: _Member, item: _Item, rest: list[_Item]) -> ClientEvent | None:
    """A ``subscribe()`` its driver stamped with the same millisecond as the member's
    first request, written after it: the call came first (the client joins because of
    it; librdkafka sends the join from its own thread while ``subscribe()`` returns)."""
    for later in rest:
        if later.ts != item.ts:
            return None
        e = later.what
        if isinstance(e, ClientEvent) and e.event == "Subscription":
            m.items.remove(later)  # after the current one: the replay's loop skips it
            return e
    return None


def _start(m: _Member, first: ConsumerGroupHeartbeatRequest, rest: list[_Item]) -> None:
    """The model's client of a member, from its first request: its configuration
    (``group.instance.id``, ``group.remote.assignor``, ``client.rack``,
    ``max.poll.interval.ms``) is the real client's; its subscription is the
    ``subscribe()`` before it (a ``Subscription`` event)."""
    m.config = _config(first)
    m.first = first
    m.client = Client(
        name=m.member_id,
        instance_id=first.instance_id,
        incarnation=0,
        member_id=m.member_id,
        alive=True,
        status=S.UNSUBSCRIBED,
        member_epoch=0,
        subscription=frozenset(),
        server_assignor=first.server_assignor,
        rack=first.rack_id,
    )
    if m.subscription is not None:
        _subscribe(m, m.subscription)
