"""Coordinator mode for classic and mixed captures, the mixed family's own module
(``tests/reports/test_family_registry.py``, ``EXCLUDED``): every request the capture shows is
handed to the model's coordinator — ``model.migration.system.step``, which takes a classic
group's requests in ``model.classic.coordinator`` and a consumer group's (KIP-848, with
classic members after an online migration) in ``model.consumer.coordinator`` and
``model.migration.coordinator`` — and each response the coordinator sent is compared with
the model's, field by field:

- JoinGroup: error code, generation, protocol, leader, member id, and the leader's member
  list (ids, subscribed topics, owned partitions);
- SyncGroup: error code, protocol, assignment;
- Heartbeat and LeaveGroup: error code;
- ConsumerGroupHeartbeat: as ``groupcheck.validate.coordinator_mode`` compares them.

The clients are stand-ins: each request is delivered on its own client's connection as
captured, and the responses the model sends — at once, or when a join or sync phase
completes (``completeClassicGroupJoin``) — are queued on that connection, to be compared
with the captured responses in order. A JoinGroup or SyncGroup response in the capture
that the model's coordinator has not sent (it still holds the request) is a divergence
too.

Member ids are the coordinator's own (Kafka: ``clientId-UUID``; the model numbers them per
client): the first response that carries one pairs the model's id with the captured one,
and requests are translated with those pairs. The assignor of a consumer group is the
implementation's, as in the consumer replay: the model installs the targets the capture
shows (ConsumerGroupHeartbeat and, for classic members of a consumer group, SyncGroup
responses). A classic group's assignment is the leader's SyncGroup, as on the wire.

Timers: a member silent for longer than its session timeout is expired before the next
request (``--session-timeout-ms`` or the header's); a join phase that waits past a
member's rebalance timeout is not replayed (a note says when one might have fired).
Offset commits are not replayed (a note counts them).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from groupcheck.families import COORDINATOR, CoordinatorFacet
from groupcheck.validate.coordinator_common import (
    _differences,
    _gate,
    _interval,
    _kafka_rules,
    answers_any,
)
from groupcheck.validate.report import Finding, Report
from groupcheck.validate.safety import Names
from groupcheck.validate.timing import TimingOptions
from model.actions import (
    AddPartitions,
    CreateTopic,
    DeliverMessage,
    LoseMessage,
    SessionTimeout,
)
from model.classic.coordinator import join_response
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
from model.classic.records import ClassicClient, ClassicGroup, new_classic_group
from model.config import ClientSpec, Config
from model.consumer.coordinator import on_metadata_change
from model.consumer.target import compute_target_assignment
from model.ids import Assignment, FrozenMap
from model.migration import system as mixed_system
from model.migration.records import MixedState
from model.records import (
    Client,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Group,
    Message,
    OffsetCommitRequest,
    TopicMetadata,
)
from model.status import ClassicClientStatus, ClientStatus, ErrorCode
from model.trace import TraceHeader

DIVERGENCE = "Coordinator.Divergence"

CLASSIC_REQUESTS = (JoinGroupRequest, SyncGroupRequest, HeartbeatRequest, LeaveGroupRequest)
CLASSIC_RESPONSES = (JoinGroupResponse, SyncGroupResponse, HeartbeatResponse, LeaveGroupResponse)

ANSWERS = (*CLASSIC_RESPONSES, ConsumerGroupHeartbeatResponse)

RULES = {
    "ErrorCode": (
        "GroupMetadataManager.classicGroupJoin / classicGroupSync / classicGroupHeartbeat / "
        "classicGroupLeave (and their consumer-group counterparts for classic members, "
        "classicGroupJoinToConsumerGroup …): the member, generation and group-state checks"
    ),
    "GenerationId": (
        "ClassicGroup.initNextGeneration: a completed join phase starts the next generation; "
        "a classic member of a consumer group is at its member epoch"
    ),
    "ProtocolName": "ClassicGroup.selectProtocol: the assignor most members vote for",
    "Leader": "ClassicGroup: the first member to join leads (none in a consumer group)",
    "MemberId": "GroupMetadataManager.classicGroupJoinNewDynamicMember (KIP-394)",
    "Members": (
        "GroupMetadataManager.completeClassicGroupJoin: the leader's response lists every "
        "member with its subscription"
    ),
    "Assignment": (
        "classicGroupSync: the leader's assignment for the member (a classic group); the "
        "member's assigned partitions (a consumer group)"
    ),
    "MemberEpoch": "CurrentAssignmentBuilder (KIP-848 Reconciliation)",
    "HeartbeatIntervalMs": "group.consumer.heartbeat.interval.ms",
    "Response": (
        "the coordinator answers a held JoinGroup or SyncGroup when its phase completes "
        "(completeClassicGroupJoin, classicGroupSync) and every other request at once"
    ),
}
"""Per compared field, the Kafka rule the model follows there."""


def _family(body: object) -> str | None:
    if isinstance(body, ConsumerGroupHeartbeatRequest):
        return "consumer"
    if isinstance(body, CLASSIC_REQUESTS):
        return "classic"
    return None


def stand_in(name: str, family: str, m: Message) -> ClassicClient | Client:
    """A client record that only receives: the coordinator's responses are addressed to its
    process and connection."""
    if family == "classic":
        return ClassicClient(
            name=name,
            instance_id=None,
            incarnation=m.incarnation,
            alive=True,
            status=ClassicClientStatus.STABLE,
            assignors=(),
            kip429=True,
            subscription=frozenset(),
            connection=m.connection,
        )
    return Client(
        name=name,
        instance_id=None,
        incarnation=m.incarnation,
        member_id=name,
        alive=True,
        status=ClientStatus.STABLE,
        member_epoch=0,
        subscription=frozenset(),
        server_assignor=None,
        connection=m.connection,
    )


class Ids:
    """The model's member ids paired with the captured ones."""

    def __init__(self) -> None:
        self.to_capture: dict[str, str] = {}
        self.to_model: dict[str, str] = {}

    def pair(self, model: str, captured: str) -> None:
        if model and captured and model not in self.to_capture:
            self.to_capture[model] = captured
            self.to_model.setdefault(captured, model)

    def model(self, captured: str) -> str:
        return self.to_model.get(captured, captured)

    def capture(self, model: str) -> str:
        return self.to_capture.get(model, model)


def _to_model(body: object, ids: Ids) -> object:
    """A captured request with the model's member ids."""
    if isinstance(body, JoinGroupRequest | HeartbeatRequest | LeaveGroupRequest):
        return replace(body, member_id=ids.model(body.member_id))
    if isinstance(body, SyncGroupRequest):
        given = FrozenMap((ids.model(k), v) for k, v in body.assignments.items())
        return replace(body, member_id=ids.model(body.member_id), assignments=given)
    return body


def differences(model: object, captured: object, ids: Ids) -> list[str]:
    """The fields in which the model's response differs from the captured one (the model's
    member ids read as the captured ones)."""
    if type(model) is not type(captured):
        return ["Response"]
    if isinstance(model, ConsumerGroupHeartbeatResponse):
        assert isinstance(captured, ConsumerGroupHeartbeatResponse)
        return _differences(model, captured)  # as the consumer replay compares them
    out = []
    if model.error_code is not captured.error_code:  # type: ignore[attr-defined]
        out.append("ErrorCode")
    if isinstance(model, JoinGroupResponse):
        assert isinstance(captured, JoinGroupResponse)
        ids.pair(model.member_id, captured.member_id)
        if model.generation_id != captured.generation_id:
            out.append("GenerationId")
        if (model.protocol_name or None) != (captured.protocol_name or None):
            out.append("ProtocolName")
        if ids.capture(model.leader) != captured.leader:
            out.append("Leader")
        if ids.capture(model.member_id) != captured.member_id:
            out.append("MemberId")
        listed = {
            ids.capture(m.member_id): (m.subscription.topics, m.subscription.owned_partitions)
            for m in model.members
        }
        shown = {
            m.member_id: (m.subscription.topics, m.subscription.owned_partitions)
            for m in captured.members
        }
        if listed != shown:
            out.append("Members")
    elif isinstance(model, SyncGroupResponse):
        assert isinstance(captured, SyncGroupResponse)
        if captured.error_code is ErrorCode.NONE and model.protocol_name != captured.protocol_name:
            out.append("ProtocolName")
        if model.assignment != captured.assignment:
            out.append("Assignment")
    return out


def shown(body: object, ids: Ids, names: Names) -> str:
    """A response in words (member ids as captured)."""
    if body is None:
        return "no response yet (the request is held)"
    kind = type(body).__name__.removesuffix("Response")
    error = getattr(body, "error_code", None)
    parts = [kind]
    if error is not None:
        parts.append(f"ErrorCode {error.name} ({int(error)})")
    if isinstance(body, JoinGroupResponse):
        parts.append(f"GenerationId {body.generation_id}")
        parts.append(f"ProtocolName {body.protocol_name}")
        parts.append(f"Leader {names.member(ids.capture(body.leader)) if body.leader else '-'}")
        parts.append(f"MemberId {names.member(ids.capture(body.member_id))}")
        if body.members:
            listed = ", ".join(sorted(names.member(ids.capture(m.member_id)) for m in body.members))
            parts.append(f"Members [{listed}]")
    if isinstance(body, SyncGroupResponse | ConsumerGroupHeartbeatResponse):
        if isinstance(body, ConsumerGroupHeartbeatResponse):
            parts.append(f"MemberEpoch {body.member_epoch}")
        if body.assignment is None:
            parts.append("no Assignment")
        else:
            given = ", ".join(names.partition(t, i) for t, i in sorted(body.assignment))
            parts.append(f"Assignment [{given}]")
    return ", ".join(parts)


def _named(action: object, id_names: Mapping[str, str]) -> object:
    """A ConsumerGroupHeartbeat exchange with its partitions keyed by topic name."""
    if not id_names or not isinstance(action, DeliverMessage | LoseMessage):
        return action
    body = action.message.body

    def named(tps: Assignment | None) -> Assignment | None:
        if tps is None:
            return None
        return frozenset((id_names.get(t, t), p) for t, p in tps)

    if isinstance(body, ConsumerGroupHeartbeatRequest):
        body = replace(body, topic_partitions=named(body.topic_partitions))
    elif isinstance(body, ConsumerGroupHeartbeatResponse):
        body = replace(body, assignment=named(body.assignment))
    else:
        return action
    return replace(action, message=replace(action.message, body=body))


def _targets(
    events: list[tuple[int, int | None, object]], ids: Ids
) -> dict[int, dict[str, Assignment]]:
    """Epoch → captured member id → the target the capture shows for it: what each
    ConsumerGroupHeartbeat response gave at a member epoch, and what a SyncGroup response
    gave a classic member of a consumer group at its generation (= member epoch), up to the
    first response that takes a partition away again (a revocation towards the next
    target)."""
    shown_at: list[tuple[int, str, Assignment | None]] = []
    syncs: dict[tuple[str, int, int], tuple[str, int]] = {}
    for _, _, action in events:
        if not isinstance(action, DeliverMessage | LoseMessage):
            continue
        m, b = action.message, action.message.body
        key = (m.client, m.incarnation, m.connection)
        if isinstance(b, SyncGroupRequest):
            syncs[key] = (b.member_id, b.generation_id)
        elif isinstance(b, SyncGroupResponse) and key in syncs:
            member, generation = syncs.pop(key)
            if b.error_code is ErrorCode.NONE and generation > 0:
                shown_at.append((generation, member, b.assignment))
        elif (
            isinstance(b, ConsumerGroupHeartbeatResponse)
            and b.error_code is ErrorCode.NONE
            and b.member_epoch > 0
            and b.member_id
        ):
            shown_at.append((b.member_epoch, b.member_id, b.assignment))
    targets: dict[int, dict[str, Assignment]] = {}
    closed: set[tuple[int, str]] = set()
    current: dict[str, Assignment] = {}
    for epoch, member, given in shown_at:
        if given is not None:
            current[member] = given
        assignment = current.get(member)
        if assignment is None or (epoch, member) in closed:
            continue
        at = targets.setdefault(epoch, {})
        before = at.get(member)
        if before is not None and not assignment >= before:
            closed.add((epoch, member))
            continue
        at[member] = assignment
    return targets


def _answers(
    events: list[tuple[int, int | None, object]],
) -> dict[int, tuple[int | None, object]]:
    """Request line → the time and body of the captured response to it."""
    return answers_any(events, ANSWERS)


def _config(header: TraceHeader, clients: Mapping[str, str], options: TimingOptions) -> Config:
    """The replay's config: the rules of the Kafka version the header names, one client per
    captured client of the family its first request shows, the header's timeouts and
    heartbeat interval, the migration policy the header's settings give (Kafka's default,
    ``bidirectional``, otherwise)."""

    rules = _kafka_rules(header)
    topics = tuple(sorted(header.topics.items())) or (("-", 1),)
    interval, _ = _interval(header, None)
    settings = header.settings or {}
    policy = settings.get("migration_policy", "bidirectional")
    if policy not in ("bidirectional", "upgrade", "downgrade", "disabled"):
        policy = "bidirectional"
    specs = tuple(
        ClientSpec(
            name,
            tuple(n for n, _ in topics),
            group_protocol=family,  # type: ignore[arg-type]
        )
        for name, family in clients.items()
    ) or (ClientSpec("capture", tuple(n for n, _ in topics), group_protocol="classic"),)
    return Config(
        name="capture",
        topics=topics,
        clients=specs,
        protocol="mixed",
        kafka_version=rules.version if rules is not None else "4.4",
        heartbeat_interval_ms=options.heartbeat_interval_ms or header.heartbeat_interval_ms or 5000,
        session_timeout_ms=header.session_timeout_ms or 45000,
        rebalance_timeout_ms=header.rebalance_timeout_ms or 300000,
        max_partitions_per_topic=max([4, *(n for _, n in topics)]),
        assignment_interval_ms=interval or 0,
        max_assignment_interval_ms=max(15000, interval or 0),
        migration_policy=policy,
    )


def validate_classic_coordinator(
    file: str,
    header: TraceHeader,
    events: list[tuple[int, int | None, object]],
    report: Report,
    timing: TimingOptions | None = None,
    all_divergences: bool = False,
) -> Report:
    """Replay a classic or mixed capture through the model's coordinator (module
    docstring); the first response that differs is a :data:`DIVERGENCE` finding."""
    options = timing or TimingOptions()
    if events and all(ts is not None for _, ts, _ in events):
        # Each event's ts is when the proxy forwarded it: requests in the order the broker
        # received them, even those written later (a held JoinGroup is written when its
        # response comes).
        events.sort(key=lambda e: (e[1], e[0]))
    names = Names(header)
    ids = Ids()
    families: dict[str, str] = {}
    for _, _, action in events:
        if isinstance(action, DeliverMessage) and action.message.to_coordinator:
            fam = _family(action.message.body)
            if fam is not None:
                families.setdefault(action.message.client, fam)
    config = _config(header, families, options)
    guessed: set[tuple[int, str]] = set()
    computing = [False]

    def captured_target(group: Group, topics: Mapping[str, TopicMetadata], assignor: str) -> Group:
        computing[0] = True
        at = {ids.model(k): v for k, v in targets.get(group.group_epoch, {}).items()}
        # A classic member's SyncGroup shows what it was assigned, not its target: a
        # partition another member still held is missing (KIP-848 Reconciliation). Its
        # target is the model's assignor's when that agrees with what the capture showed.
        own = compute_target_assignment(group, topics, assignor).target_assignment
        guessed.update((group.group_epoch, m) for m in group.members if m not in at)

        def target_of(m: str) -> Assignment:
            shown = at.get(m)
            mine = own.get(m, frozenset())
            classic = group.members[m].classic is not None
            if shown is None:
                return mine if classic else group.target_assignment.get(m, frozenset())
            if classic and shown <= mine:
                return mine
            return shown

        target = FrozenMap((m, target_of(m)) for m in group.members)
        return replace(group, assignment_epoch=group.group_epoch, target_assignment=target)

    config = replace(config, rules=replace(config.rules, compute_target_assignment=captured_target))
    # The model keys partitions by topic name in both families; the consumer protocol's
    # wire carries topic ids, read as names here (the header's topic_names).
    id_names = dict(header.topic_names or {})
    events = [(n, ts, _named(a, id_names)) for n, ts, a in events]
    created = {a.topic for _, _, a in events if isinstance(a, CreateTopic)}
    topics = FrozenMap(
        (name, TopicMetadata(name, count))
        for name, count in header.topics.items()
        if name not in created
    )
    targets = _targets(events, ids)
    state = MixedState(group=new_classic_group(), topics=topics, clients=(), network=())
    stand_ins: dict[str, ClassicClient | Client] = {}
    expected: dict[tuple[str, int, int], deque[tuple[int, object]]] = {}
    session = options.resolve(header).session_timeout_ms
    last_seen: dict[str, int] = {}
    compared = commits = expiries = 0
    converted: list[str] = []
    diverged = False
    later: list[str] = []

    def collect(st: MixedState) -> MixedState:
        for msg in st.network:
            if not msg.to_coordinator:
                key = (msg.client, msg.incarnation, msg.connection)
                expected.setdefault(key, deque()).append((request_line.get(key, 0), msg.body))
        return replace(st, network=())

    request_line: dict[tuple[str, int, int], int] = {}
    hash_ordered = False
    """The group was converted to a classic group and no JoinGroup response has shown its
    leader since."""
    answers = _answers(events)
    interval = config.assignment_interval_ms
    last: tuple[int, int] | None = None
    """The last computation of a target: between its request's and its response's ts."""

    def batched(st: MixedState, request: Message, n: int, ts: int | None) -> MixedState:
        """Deliver ``request`` behind KIP-1263's gate on the capture's clock
        (``coordinator_common._gate``); an ambiguous gate is decided by the captured response
        when only one outcome agrees with it, else by the request's time."""
        nonlocal last
        answered = answers.get(n)
        group = st.group
        outcomes: list[MixedState] = []
        gate = "open"
        if isinstance(group, Group):
            if not group.members and config.realign_empty_group:
                last = None  # KAFKA-20442: an emptied group's AssignmentTimestamp is 0
            gate = _gate(group, interval, last, ts, answered[0] if answered else None)
        choices = [True, False] if gate == "ambiguous" else [gate == "elapsed"]
        computed = []
        for elapsed in choices:
            g = st.group
            if elapsed and isinstance(g, Group):
                g = replace(g, assignment_interval_elapsed=True)
            computing[0] = False
            delivered = mixed_system.step(replace(st, group=g), DeliverMessage(request), config)
            outcomes.append(delivered)
            computed.append(computing[0])
        pick = len(outcomes) - 1
        if len(outcomes) == 2 and outcomes[0] != outcomes[1]:
            agree = [
                i
                for i, o in enumerate(outcomes)
                if answered is not None
                and any(
                    not differences(msg.body, answered[1], Ids())
                    for msg in o.network
                    if not msg.to_coordinator and msg.client == request.client
                )
            ]
            if len(agree) == 1:
                pick = agree[0]
            else:
                assert last is not None
                assert ts is not None
                pick = 0 if ts >= last[0] + interval else 1
        if computed[pick] and ts is not None:
            last = (ts, answered[0] if answered and answered[0] is not None else ts)
        return outcomes[pick]

    for n, ts, action in events:
        if isinstance(action, AddPartitions | CreateTopic):
            name = action.topic
            if isinstance(action, CreateTopic):
                count = action.partitions or header.topics.get(name, 1)  # the event's, if given
                meta = TopicMetadata(name, count)
            else:
                old = topics.get(name) or TopicMetadata(name, 0)
                meta = replace(old, partitions=old.partitions + 1)
            topics = FrozenMap({**topics.as_dict(), name: meta})
            group = state.group
            if isinstance(group, Group):
                group = on_metadata_change(group, name)
            state = replace(state, topics=topics, group=group)
            continue
        if not isinstance(action, DeliverMessage):
            continue
        m = action.message
        body = m.body
        key = (m.client, m.incarnation, m.connection)
        if m.to_coordinator:
            if isinstance(body, OffsetCommitRequest):
                commits += 1
                continue
            fam = _family(body)
            if fam is None:
                continue
            if session is not None and ts is not None:
                for member_id, seen in sorted(last_seen.items()):
                    if ts > seen + session and member_id in state.group.members:
                        state = collect(mixed_system.step(state, SessionTimeout(member_id), config))
                        expiries += 1
                        del last_seen[member_id]
            stand = stand_ins.get(m.client)
            if stand is None or (fam == "classic") != isinstance(stand, ClassicClient):
                stand = stand_in(m.client, fam, m)
            else:
                stand = replace(stand, incarnation=m.incarnation, connection=m.connection)
            stand_ins[m.client] = stand
            request = replace(m, body=_to_model(body, ids))  # type: ignore[arg-type]
            was_classic = isinstance(state.group, ClassicGroup)
            state = replace(
                state,
                clients=tuple(stand_ins.values()),
                network=(request,),
            )
            request_line[key] = n
            state = collect(batched(state, request, n, ts))
            if was_classic != isinstance(state.group, ClassicGroup):
                hash_ordered = isinstance(state.group, ClassicGroup)
                converted.append(
                    f"line {n}: the group became a "
                    + ("classic" if isinstance(state.group, ClassicGroup) else "consumer")
                    + " group"
                )
            member = getattr(request.body, "member_id", "")
            if ts is not None and member:
                last_seen[member] = ts
            continue
        if not isinstance(body, ANSWERS):
            continue
        queue = expected.get(key)
        model = queue.popleft()[1] if queue else None
        compared += 1
        if model is None:
            fields = ["Response"]
        else:
            fields = differences(model, body, ids)
            group_now = state.group
            if (
                isinstance(model, ConsumerGroupHeartbeatResponse)
                and isinstance(group_now, Group)
                and any(e == group_now.assignment_epoch for e, _ in guessed)
            ):
                unsure = [f for f in fields if f == "Assignment"]
                if unsure:
                    report.reasons.append(
                        f"the response at line {n} differs from the model's in Assignment, "
                        "which depends on targets the capture does not show: no verdict "
                        "from there on"
                    )
                    diverged = True
                    break
        if (
            fields
            and set(fields) <= {"Leader", "Members"}
            and isinstance(model, JoinGroupResponse)
            and isinstance(body, JoinGroupResponse)
            and hash_ordered
            and isinstance(state.group, ClassicGroup)
            and ids.model(body.leader) in state.group.members
        ):
            # The leader of a classic group converted from a consumer group is the first
            # member of the consumer group's member table in hash order
            # (``ClassicGroup.fromConsumerGroup`` adds them in ``members()`` order and the
            # first one added leads): the implementation's choice, as its assignor's is.
            # The replay takes the captured leader and answers this generation again.
            group = replace(state.group, leader_id=ids.model(body.leader))
            state = replace(state, group=group)
            for queue_ in expected.values():
                for i, (line_, held) in enumerate(queue_):
                    if (
                        isinstance(held, JoinGroupResponse)
                        and held.error_code is ErrorCode.NONE
                        and held.generation_id == group.generation_id
                    ):
                        queue_[i] = (line_, join_response(group, held.member_id))
            model = join_response(group, model.member_id)
            fields = differences(model, body, ids)
            report.notes.append(
                f"{file}: line {n}: the leader of the group converted from a consumer group "
                f"is Kafka's choice by hash order (ClassicGroup.fromConsumerGroup): "
                f"{names.member(body.leader)}, which the replay takes"
            )
            hash_ordered = False
        if isinstance(body, JoinGroupResponse) and not fields:
            hash_ordered = False
        if not fields:
            continue
        who = names.member(getattr(body, "member_id", "") or m.client)
        text = (
            f"the response at line {n} ({who}) differs in {', '.join(fields)}: the model's "
            f"coordinator answers {shown(model, ids, names)}; the capture has "
            f"{shown(body, Ids(), names)}"
        )
        if diverged:
            later.append(text)
            continue
        rules = "; ".join(f"{f}: {RULES[f]}" for f in fields)
        report.violations.append(Finding(file, n, DIVERGENCE, f"{text}. Kafka's rule — {rules}"))
        diverged = True
        report.notes.append(
            f"{file}: the first divergence at line {n} ({compared} responses compared); "
            + ("the replay goes on" if all_divergences else "replay stopped")
        )
        if not all_divergences:
            break
    if not diverged:
        report.notes.append(
            f"{file}: {compared} responses compared, all as the model's coordinator answers"
        )
    for text in later:
        report.notes.append(f"{file}: after the first divergence, {text}")
    report.notes.append(
        f"{file}: {header.protocol} capture replayed through model.migration.system "
        f"(Kafka {config.kafka_version} rules, migration policy {config.migration_policy}); "
        + (f"{'; '.join(converted)}; " if converted else "")
        + (
            f"{expiries} expiries applied (session timeout {session} ms)"
            if session is not None
            else "no session timeout known: no expiry applied"
        )
        + (f"; {commits} offset commit(s) not replayed" if commits else "")
    )
    if compared == 0 and not report.violations:
        report.reasons.append("no classic or ConsumerGroupHeartbeat response to compare")
    return report


def _replay_mixed(
    file: str,
    header: TraceHeader,
    events: list[tuple[int, int | None, object]],
    report: Report,
    timing: TimingOptions | None,
    all_divergences: bool,
    **consumer_options: Any,
) -> Report:
    """The classic and mixed families' coordinator replay
    (``groupcheck.families.COORDINATOR``): :func:`validate_classic_coordinator` (the
    consumer replay's options do not apply)."""
    return validate_classic_coordinator(file, header, events, report, timing, all_divergences)


COORDINATOR.register("classic", CoordinatorFacet(replay=_replay_mixed, streamed=False))
COORDINATOR.register("mixed", CoordinatorFacet(replay=_replay_mixed, streamed=False))
