"""KIP-848's ``consumer_initial``, ``consumer_enabled`` and ``consumer_step`` (the consumer
protocol family, ``model.consumer.family``); ``model.system`` dispatches to them for a
config whose ``protocol`` is ``consumer``.

``consumer_enabled`` lists the actions in a deterministic order: coordinator, network
deliveries, client progress, then perturbations (while the budget lasts).
``consumer_step`` is pure and returns the very same object when an action changes nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from model.actions import (
    AbandonRequest,
    Action,
    AddPartitions,
    AssignmentIntervalElapses,
    ChangeInstanceId,
    ChangePartitionRacks,
    ChangeServerAssignor,
    ChangeSubscription,
    CommitOffsets,
    CompleteAssignorRun,
    CompleteCallback,
    ComputeTargetAssignment,
    CoordinatorFailover,
    CoordinatorLoaded,
    Crash,
    CreateTopic,
    DeleteGroup,
    DeleteTopic,
    DeliverMessage,
    ExpireOffsets,
    Leave,
    LoseMessage,
    Poll,
    PollTimerExpires,
    RebalanceTimeout,
    Reconcile,
    RecreateTopic,
    Rejoin,
    ReleaseAssignment,
    RequestTimeout,
    ResolveRegularExpressions,
    Restart,
    SendHeartbeat,
    SessionTimeout,
    StallRevocation,
    Subscribe,
    TemporaryLeave,
)
from model.config import Config
from model.consumer import client as cl
from model.consumer import coordinator as co
from model.ids import FrozenMap
from model.network import apis_in_flight, deliverable, without
from model.records import (
    HEARTBEAT,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    OFFSET_COMMIT,
    Body,
    Client,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Group,
    Message,
    OffsetCommitRequest,
    OffsetCommitResponse,
    State,
    TopicMetadata,
    replace,
    same_value,
)
from model.status import ClientStatus, ErrorCode

if TYPE_CHECKING:
    from model.rules import Rules

S = ClientStatus

LIVE = frozenset(
    {S.JOINING, S.RECONCILING, S.ACKNOWLEDGING, S.STABLE, S.FENCED, S.PREPARE_LEAVING, S.LEAVING}
)
"""Client states in which the process keeps its session alive."""


# --------------------------------------------------------------------------- initial


def consumer_initial(config: Config) -> State:
    """The initial state: an empty group, the configured topics (topic id = name), and
    every client either JOINING (already subscribed) or UNSUBSCRIBED."""
    group = co.new_group(config)
    topics = FrozenMap((name, TopicMetadata(name, n)) for name, n in config.topics)
    clients = tuple(
        Client(
            name=spec.name,
            instance_id=spec.instance_id,
            incarnation=0,
            member_id=cl.member_id_for(spec.name, 0),
            alive=True,
            status=S.JOINING if spec.subscribed else S.UNSUBSCRIBED,
            member_epoch=0,
            subscription=frozenset(spec.subscription),
            server_assignor=spec.server_assignor,
            regex=spec.regex,
            rack=spec.rack,
        )
        for spec in config.clients
    )
    return State(group=group, topics=topics, clients=clients, network=())


# --------------------------------------------------------------------------- enabled


def _deliverable(state: State, config: Config) -> list[Message]:
    """Messages the network may deliver now (``model.network.deliverable``)."""
    return deliverable(state.network, config.reorder)


def _pending(state: State, c: Client) -> set[str]:
    """APIs with a request or response in the network on the client's connection."""
    return apis_in_flight(state.network, c.name, c.incarnation, c.connection)


def _client_processes(state: State) -> dict[str, Client]:
    """The live client process of each member id (``_client_process`` for all at once)."""
    out: dict[str, Client] = {}
    for c in state.clients:
        if c.alive and c.status in LIVE:
            out.setdefault(c.member_id, c)
    return out


def _client_process(state: State, member_id: str) -> Client | None:
    for c in state.clients:
        if c.member_id == member_id and c.alive and c.status in LIVE:
            return c
    return None


def _application_steps(c: Client, config: Config) -> list[Action]:
    """Progress the client's application thread drives: reconciling, releasing before a
    leave, rejoining after fencing, auto-commit, polling again after the poll timer
    expired — or, while it runs a rebalance callback, finishing it."""
    if c.callback is not None:
        return [CompleteCallback(c.name)]
    acts: list[Action] = []
    status = c.status
    if status is S.RECONCILING and c.reconciling is None and c.target is not None:
        acts.append(Reconcile(c.name))
    if status is S.PREPARE_LEAVING and c.reconciling is None:
        acts.append(ReleaseAssignment(c.name))
    if status is S.FENCED and not config.callback_steps:
        acts.append(Rejoin(c.name))  # with callback steps, onPartitionsLost's end rejoins
    if status is S.STALE and not c.lost_queued:
        acts.append(Poll(c.name))
    if (
        config.auto_commit
        and c.owned
        and not c.commit_in_flight
        and c.reconciling is None
        and c.member_epoch > 0
        and status in cl.IN_GROUP
    ):
        acts.append(CommitOffsets(c.name))
    return acts


def consumer_enabled(state: State, config: Config) -> tuple[Action, ...]:
    """Every action enabled in a KIP-848 ``state``, in a deterministic order."""
    acts: list[Action] = []
    group = state.group
    if (
        not config.compute_target_in_heartbeat
        and group.members
        and group.group_epoch > group.assignment_epoch
    ):
        acts.append(ComputeTargetAssignment())
    deliverable = _deliverable(state, config)
    acts.extend(DeliverMessage(m) for m in deliverable)

    for c in state.clients:
        if not c.alive:
            continue
        status = c.status
        if not c.heartbeat_in_flight and status in cl.HEARTBEATING:
            acts.append(SendHeartbeat(c.name))
        if not c.stalled:  # a stalled application makes no progress of its own
            acts.extend(_application_steps(c, config))
        if c.heartbeat_in_flight or c.commit_in_flight:
            pending = _pending(state, c)
            if (c.heartbeat_in_flight and HEARTBEAT not in pending) or (
                c.commit_in_flight and OFFSET_COMMIT not in pending
            ):
                acts.append(RequestTimeout(c.name))

    if state.coordinator_loading:
        acts.append(CoordinatorLoaded())
    else:
        acts.extend(timeouts(state, config))
        acts.extend(assignment_steps(group, config))
        if co.regexes_stale(group, state.topics):
            acts.append(ResolveRegularExpressions())
    if state.perturbations < config.max_perturbations:
        acts.extend(_perturbations(state, config, deliverable))
    return tuple(acts)


def timeouts(state: State, config: Config) -> list[Action]:
    """Coordinator timers that fire (``GroupMetadataManager`` session and rebalance timers):
    the session timer of a member whose client process is gone, and its rebalance timer
    while it still revokes at the armed epoch (``scheduleConsumerGroupRebalanceTimeout``).
    A live client keeps its session unless ``config.slow_clients``; with
    ``config.live_timers`` a live client's session expires once its heartbeat or the
    response was lost (the coordinator has not heard from it), and its rebalance timer
    fires while its application hangs in the revocation (``StallRevocation``): a live
    client that is merely working revokes long before the timer (its ``max.poll.interval.ms``
    is the rebalance timeout it sends)."""
    acts: list[Action] = []
    processes = _client_processes(state)
    for mid, member in state.group.members.items():
        revoking = (
            member.rebalance_timer_epoch is not None
            and member.rebalance_timer_epoch == member.member_epoch
        )
        process = None if config.slow_clients else processes.get(mid)
        if process is None:
            acts.append(SessionTimeout(mid))
            if revoking:
                acts.append(RebalanceTimeout(mid))
            continue
        if not config.live_timers:
            continue
        if process.heartbeat_in_flight and HEARTBEAT not in _pending(state, process):
            acts.append(SessionTimeout(mid))
        if revoking and process.stalled:
            acts.append(RebalanceTimeout(mid))
    return acts


def assignment_steps(group: Group, config: Config) -> list[Action]:
    """KIP-1263's logical time and executor: the assignment interval passes once a
    computation finished (batching), and an assignor run in flight completes (offload)."""
    acts: list[Action] = []
    if (
        config.effective_assignment_interval_ms() > 0
        and group.assignment_timestamp != 0
        and not group.assignment_interval_elapsed
    ):
        acts.append(AssignmentIntervalElapses())
    if group.assignor_runs:
        acts.append(CompleteAssignorRun())
    return acts


def _perturbations(state: State, config: Config, deliverable: list[Message]) -> list[Action]:
    allows = config.allows
    specs = {spec.name: spec for spec in config.clients}
    acts: list[Action] = []
    if allows("CoordinatorFailover") and not state.coordinator_loading:
        acts.append(CoordinatorFailover())
    for c in state.clients:
        if c.alive and c.stalled:  # the application is blocked: it can only be killed
            if allows("Crash"):
                acts.append(Crash(c.name))
        elif c.alive:
            if (
                allows("StallRevocation")
                and c.status is S.RECONCILING
                and c.reconciling is None
                and c.target is not None
                and not c.owned <= c.target
            ):
                acts.append(StallRevocation(c.name))
            # Java lets the application subscribe again while its leave heartbeat is still
            # in flight (the race behind KAFKA-19335).
            if allows("Subscribe") and c.status is S.UNSUBSCRIBED:
                acts.append(Subscribe(c.name))
            # unsubscribe(), close() and subscribe() run on the application thread: not while
            # it runs a rebalance callback.
            app_free = c.callback is None
            if allows("Leave") and c.status in cl.IN_GROUP and app_free:
                acts.append(Leave(c.name))
            if (
                allows("TemporaryLeave")
                and c.instance_id is not None
                and c.status in cl.IN_GROUP
                and app_free
            ):
                acts.append(TemporaryLeave(c.name))
            if allows("Crash"):
                acts.append(Crash(c.name))
            alt = specs[c.name].alt_instance_id if allows("ChangeInstanceId") else None
            if (
                alt not in (None, c.instance_id)
                and c.status is S.STABLE
                and app_free
                and not c.heartbeat_in_flight
                and not c.commit_in_flight
            ):
                acts.append(ChangeInstanceId(c.name))
            if allows("ChangeSubscription") and c.status in cl.IN_GROUP and app_free:
                for choice in config.subscription_choices:
                    if frozenset(choice) != c.subscription:
                        acts.append(ChangeSubscription(c.name, tuple(sorted(choice))))
            if allows("AbandonRequest") and (c.heartbeat_in_flight or c.commit_in_flight):
                pending = _pending(state, c)
                if (c.heartbeat_in_flight and HEARTBEAT in pending) or (
                    c.commit_in_flight and OFFSET_COMMIT in pending
                ):
                    acts.append(AbandonRequest(c.name))
            if (
                allows("PollTimerExpires")
                and c.status in (S.RECONCILING, S.ACKNOWLEDGING, S.STABLE)
                and c.member_epoch > 0
            ):
                acts.append(PollTimerExpires(c.name))
            if allows("ChangeServerAssignor") and c.status in cl.IN_GROUP and app_free:
                for name in config.server_assignors:
                    if name != c.server_assignor:
                        acts.append(ChangeServerAssignor(c.name, name))
        if (
            allows("Restart")
            and (not c.alive or c.status is S.UNSUBSCRIBED)
            and c.incarnation < config.max_restarts
        ):
            acts.append(Restart(c.name))
    for name, meta in state.topics.items():
        if allows("AddPartitions") and meta.partitions < config.max_partitions_per_topic:
            acts.append(AddPartitions(name))
        if allows("RecreateTopic"):
            acts.append(RecreateTopic(name))
        if allows("DeleteTopic"):
            acts.append(DeleteTopic(name))
        if allows("ChangePartitionRacks"):
            acts.append(ChangePartitionRacks(name))
    if allows("CreateTopic"):
        acts.extend(
            CreateTopic(name, partitions=count)
            for name, count in config.absent_topics
            if name not in state.topics
        )
    if allows("ExpireOffsets"):
        acts.extend(
            co.expirations(state.topics, config.rules.expirable_offsets(state.group, state.topics))
        )
    if allows("LoseMessage"):
        acts.extend(LoseMessage(m) for m in deliverable)
    if allows("DeleteGroup") and not state.coordinator_loading:
        acts.append(DeleteGroup())
    return acts


# --------------------------------------------------------------------------- step


def _set_client(state: State, new: Client, sent: Body | None = None, **changes: Any) -> State:
    """``state`` with client ``new`` in place of the client of its name, the request
    ``sent`` (if any) appended to the network, and ``changes`` (one copy of the state)."""
    name = new.name
    clients = tuple([new if c.name == name else c for c in state.clients])
    if sent is not None:
        network = changes.get("network", state.network)
        request = Message(new.name, new.incarnation, new.connection, True, sent)
        changes["network"] = (*network, request)
    return replace(state, clients=clients, **changes)


_without = without


def _send_heartbeat(state: State, a: SendHeartbeat, config: Config) -> State:
    c = state.client(a.client)
    new, req = _build_heartbeat(c, config, config.rules)
    if new.expired and req.member_epoch == 0:
        new = replace(new, expired=False)  # it rejoins: no zombie any more
    return _set_client(state, new, req)


def _reconcile(state: State, a: Reconcile, config: Config) -> State:
    new, commit = _client_reconcile(state.client(a.client), config, config.rules)
    return _set_client(state, new, commit)


def _release(state: State, a: ReleaseAssignment, config: Config) -> State:
    new, commit = cl.start_release(state.client(a.client), config)
    return _set_client(state, new, commit)


def _rejoin(state: State, a: Rejoin, config: Config) -> State:
    return _set_client(state, cl.rejoin(state.client(a.client)))


def _commit(state: State, a: CommitOffsets, config: Config) -> State:
    new, req = cl.auto_commit(state.client(a.client))
    return _set_client(state, new, req)


def _deliver(state: State, a: DeliverMessage, config: Config) -> State:
    m = a.message
    network = _without(state.network, m)
    body = m.body
    if m.to_coordinator and state.coordinator_loading:
        reply = _coordinator_error(m, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
        return replace(state, network=(*network, reply))
    if m.to_coordinator:
        group = state.group
        response: Body
        if isinstance(body, ConsumerGroupHeartbeatRequest):
            changed, response = _heartbeat_answer(group, state.topics, body, config, config.rules)
            group = group if changed is None else changed
        else:
            assert isinstance(body, OffsetCommitRequest)
            group, response = co.handle_offset_commit(group, body, config)
        reply = Message(m.client, m.incarnation, m.connection, False, response)
        if group is not state.group:
            group = _interned(group)
        return replace(state, group=group, network=(*network, reply))
    c = state.client(m.client)
    if not c.alive or c.incarnation != m.incarnation or c.connection != m.connection:
        return replace(state, network=network)  # nobody reads a closed connection
    if isinstance(body, ConsumerGroupHeartbeatResponse):
        new = _client_on_heartbeat_response(c, body, config, config.rules)
    else:
        assert isinstance(body, OffsetCommitResponse)
        new = cl.on_commit_response(c, body, config)
    return _set_client(state, new, network=network)


MEMO_SIZE = 1 << 16
"""Answers each memoised rule keeps (least recently used first out)."""


@functools.lru_cache(maxsize=MEMO_SIZE)
def _interned(group: Group) -> Group:
    """The first group record built with ``group``'s value (of those the memo holds): the
    coordinator's answers rebuild equal groups on different paths, and states that share
    one group record compare and look up by identity (an exhaustive search compares its
    states' groups again and again). The value is ``group``'s: no step's result changes."""
    return group


def with_shared_group(state: State) -> State:
    """``state`` with the group record ``_interned`` holds for its group's value (its own,
    when the memo holds none): for a state rebuilt from a copy, whose group is a record of
    its own, such as one a parallel search's worker takes from another
    (``groupcheck.explore.pbfs``). The value is ``state``'s."""
    group = _interned(state.group)
    return state if group is state.group else replace(state, group=group)


@functools.lru_cache(maxsize=MEMO_SIZE)
def _heartbeat_answer(
    group: Group,
    topics: FrozenMap[str, TopicMetadata],
    req: ConsumerGroupHeartbeatRequest,
    config: Config,
    rules: Rules,
) -> tuple[Group | None, ConsumerGroupHeartbeatResponse]:
    """``co.handle_consumer_group_heartbeat``, memoised. The coordinator's pipeline is a
    pure function of frozen, hashable values (the rules it runs are a field of
    ``config``), and an exhaustive search delivers the same request to the same group
    over and over, from states that differ elsewhere (MUT2 with two perturbations,
    ``MUT2_LOSS2`` of ``groupcheck.tla.configs``: 34,009 deliveries of 674 distinct
    pairs of group and request). An answer taken from the memo is the answer computed
    for equal arguments: no step's result changes. ``rules`` is ``config.rules``, an
    argument of its own because a config's equality leaves its rules out.

    The group is None when the heartbeat leaves it as it was (a member's steady
    heartbeat): the caller keeps its own group record, so the step's state shares it
    with its parent, as the steps that do not touch the group do (the memo would
    otherwise hand out the record built for the first equal group, an equal copy)."""
    group_after, response = co.handle_consumer_group_heartbeat(group, topics, req, config)
    return (None if group_after == group else group_after), response


@functools.lru_cache(maxsize=MEMO_SIZE)
def _client_on_heartbeat_response(
    c: Client, response: ConsumerGroupHeartbeatResponse, config: Config, rules: Rules
) -> Client:
    """``config.rules.client_on_heartbeat_response``, memoised as ``_heartbeat_answer`` is
    (on ``MUT2_LOSS2``: 23,849 responses read, 305 distinct pairs of client and
    response)."""
    return rules.client_on_heartbeat_response(c, response, config)


@functools.lru_cache(maxsize=MEMO_SIZE)
def _build_heartbeat(
    c: Client, config: Config, rules: Rules
) -> tuple[Client, ConsumerGroupHeartbeatRequest]:
    """``config.rules.client_build_heartbeat``, memoised as ``_heartbeat_answer`` is (on
    ``MUT2_LOSS2``: 21,508 heartbeats built by 199 distinct clients)."""
    return rules.client_build_heartbeat(c, config)


@functools.lru_cache(maxsize=MEMO_SIZE)
def _client_reconcile(
    c: Client, config: Config, rules: Rules
) -> tuple[Client, OffsetCommitRequest | None]:
    """``config.rules.client_reconcile``, memoised as ``_heartbeat_answer`` is (on
    ``MUT2_LOSS2``: 20,030 reconciliations by 110 distinct clients)."""
    return rules.client_reconcile(c, config)


def _coordinator_error(request: Message, error: ErrorCode) -> Message:
    """The response a coordinator that does not serve the group gives ``request``
    (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS): nothing else is read or written."""
    body = request.body
    response: Body
    if isinstance(body, ConsumerGroupHeartbeatRequest):
        response = ConsumerGroupHeartbeatResponse(
            error_code=error, member_id=None, member_epoch=0, heartbeat_interval_ms=0
        )
    else:
        assert isinstance(body, OffsetCommitRequest)
        response = OffsetCommitResponse(error_code=error, topics=body.topics)
    return Message(request.client, request.incarnation, request.connection, False, response)


def _failover(state: State, a: CoordinatorFailover, config: Config) -> State:
    """Requests in flight to the old coordinator fail with NOT_COORDINATOR; the new one
    starts loading the group."""
    network = tuple(
        _coordinator_error(m, ErrorCode.NOT_COORDINATOR) if m.to_coordinator else m
        for m in state.network
    )
    return replace(state, network=network, coordinator_loading=True)


def _loaded(state: State, a: CoordinatorLoaded, config: Config) -> State:
    group = config.rules.rebuild_group(state.group, config)
    return replace(state, group=group, coordinator_loading=False)


def _timeout(state: State, a: RequestTimeout | AbandonRequest, config: Config) -> State:
    return _set_client(state, cl.disconnect(state.client(a.client), config))


def _compute(state: State, a: ComputeTargetAssignment, config: Config) -> State:
    group = config.rules.compute_target_assignment(
        state.group, state.topics, config.server_assignors[0]
    )
    return replace(state, group=group)


def _interval_elapses(state: State, a: AssignmentIntervalElapses, config: Config) -> State:
    return replace(state, group=replace(state.group, assignment_interval_elapsed=True))


def _complete_run(state: State, a: CompleteAssignorRun, config: Config) -> State:
    return replace(state, group=co.install_assignor_run(state.group, state.topics, config))


def _subscribe(state: State, a: Subscribe, config: Config) -> State:
    return _set_client(state, cl.subscribe(state.client(a.client)))


def _leave(state: State, a: Leave, config: Config) -> State:
    return _set_client(state, cl.leave(state.client(a.client), LEAVE_GROUP_MEMBER_EPOCH))


def _temporary_leave(state: State, a: TemporaryLeave, config: Config) -> State:
    return _set_client(state, cl.leave(state.client(a.client), LEAVE_GROUP_STATIC_MEMBER_EPOCH))


def _crash(state: State, a: Crash, config: Config) -> State:
    return _set_client(state, cl.crash(state.client(a.client)))


def _restart(state: State, a: Restart, config: Config) -> State:
    return _set_client(state, cl.restart(state.client(a.client)))


def _change_subscription(state: State, a: ChangeSubscription, config: Config) -> State:
    return _set_client(state, cl.change_subscription(state.client(a.client), frozenset(a.topics)))


def _change_instance_id(state: State, a: ChangeInstanceId, config: Config) -> State:
    spec = next(s for s in config.clients if s.name == a.client)
    assert spec.alt_instance_id is not None
    c = state.client(a.client)
    return _set_client(state, cl.change_instance_id(c, spec.alt_instance_id, config))


def _change_assignor(state: State, a: ChangeServerAssignor, config: Config) -> State:
    return _set_client(state, cl.change_server_assignor(state.client(a.client), a.assignor))


def _session_timeout(state: State, a: SessionTimeout, config: Config) -> State:
    group = config.rules.session_timeout(state.group, a.member_id, config)
    return _mark_zombie(replace(state, group=_interned(group)), a.member_id)


def _rebalance_timeout(state: State, a: RebalanceTimeout, config: Config) -> State:
    group = config.rules.rebalance_timeout(state.group, a.member_id, config)
    return _mark_zombie(replace(state, group=_interned(group)), a.member_id)


def _mark_zombie(state: State, member_id: str) -> State:
    """A timer removed the member of a live client: the client does not know yet and may
    go on consuming (ghost bookkeeping for the properties: ``Client.expired``)."""
    if member_id in state.group.members:
        return state
    process = _client_process(state, member_id)
    if process is None or process.expired:
        return state
    return _set_client(state, replace(process, expired=True))


def _stall(state: State, a: StallRevocation, config: Config) -> State:
    return _set_client(state, cl.stall(state.client(a.client)))


def _complete_callback(state: State, a: CompleteCallback, config: Config) -> State:
    new, commit = config.rules.client_complete_callback(state.client(a.client), config)
    return _set_client(state, new, commit)


def _poll(state: State, a: Poll, config: Config) -> State:
    return _set_client(state, cl.poll(state.client(a.client)))


def _poll_timer_expires(state: State, a: PollTimerExpires, config: Config) -> State:
    return _set_client(state, cl.poll_timer_expires(state.client(a.client)))


def _add_partitions(state: State, a: AddPartitions, config: Config) -> State:
    meta = state.topics[a.topic]
    topics = state.topics.set(a.topic, replace(meta, partitions=meta.partitions + 1))
    group = config.rules.on_metadata_change(state.group, a.topic)
    return replace(state, topics=topics, group=group)


def _recreate_topic(state: State, a: RecreateTopic, config: Config) -> State:
    meta = state.topics[a.topic]
    generation = state.topic_generation + 1
    topics = state.topics.set(a.topic, TopicMetadata(f"{a.topic}~{generation}", meta.partitions))
    group = co.drop_offsets_of_topic(state.group, meta.topic_id)
    group = config.rules.on_metadata_change(group, a.topic)
    return replace(state, topics=topics, group=group, topic_generation=generation)


def _create_topic(state: State, a: CreateTopic, config: Config) -> State:
    partitions = a.partitions if a.partitions is not None else dict(config.absent_topics)[a.topic]
    generation = state.topic_generation + 1
    meta = TopicMetadata(f"{a.topic}~{generation}", partitions)
    topics = FrozenMap({**state.topics.as_dict(), a.topic: meta})
    group = config.rules.on_metadata_change(state.group, a.topic)
    return replace(state, topics=topics, group=group, topic_generation=generation)


def _delete_topic(state: State, a: DeleteTopic, config: Config) -> State:
    meta = state.topics[a.topic]
    topics = FrozenMap({n: t for n, t in state.topics.items() if n != a.topic})
    group = co.drop_offsets_of_topic(state.group, meta.topic_id)
    group = config.rules.on_metadata_change(group, a.topic)
    return replace(state, topics=topics, group=group)


def _expire_offsets(state: State, a: ExpireOffsets, config: Config) -> State:
    expirable = config.rules.expirable_offsets(state.group, state.topics)
    group = co.expire_offsets(state.group, expirable, state.topics[a.topic].topic_id)
    return replace(state, group=co.maybe_delete_expired_group(group, config))


def _change_racks(state: State, a: ChangePartitionRacks, config: Config) -> State:
    meta = state.topics[a.topic]
    topics = state.topics.set(a.topic, replace(meta, rack_layout=meta.rack_layout + 1))
    group = config.rules.on_metadata_change(state.group, a.topic)
    return replace(state, topics=topics, group=group)


def _resolve_regexes(state: State, a: ResolveRegularExpressions, config: Config) -> State:
    group = config.rules.resolve_regular_expressions(state.group, state.topics, config)
    return replace(state, group=group)


def _lose(state: State, a: LoseMessage, config: Config) -> State:
    return replace(state, network=_without(state.network, a.message))


def _delete_group(state: State, a: DeleteGroup, config: Config) -> State:
    """DeleteGroups: refused unless the group is empty. A refused request changes nothing,
    not even the perturbation budget (``step`` spends one unit, given back here), so the
    refusal is a self-loop and adds no state."""
    if config.rules.validate_delete_group(state.group) is not ErrorCode.NONE:
        return replace(state, perturbations=state.perturbations - 1)
    return replace(state, group=co.delete_group(state.group, config))


_HANDLERS: dict[type[Action], Callable[[State, Action, Config], State]] = {
    SendHeartbeat: _send_heartbeat,  # type: ignore[dict-item]
    Reconcile: _reconcile,  # type: ignore[dict-item]
    ReleaseAssignment: _release,  # type: ignore[dict-item]
    Rejoin: _rejoin,  # type: ignore[dict-item]
    CommitOffsets: _commit,  # type: ignore[dict-item]
    DeliverMessage: _deliver,  # type: ignore[dict-item]
    RequestTimeout: _timeout,  # type: ignore[dict-item]
    ComputeTargetAssignment: _compute,  # type: ignore[dict-item]
    Subscribe: _subscribe,  # type: ignore[dict-item]
    Leave: _leave,  # type: ignore[dict-item]
    TemporaryLeave: _temporary_leave,  # type: ignore[dict-item]
    Crash: _crash,  # type: ignore[dict-item]
    Restart: _restart,  # type: ignore[dict-item]
    ChangeSubscription: _change_subscription,  # type: ignore[dict-item]
    ChangeServerAssignor: _change_assignor,  # type: ignore[dict-item]
    ChangeInstanceId: _change_instance_id,  # type: ignore[dict-item]
    SessionTimeout: _session_timeout,  # type: ignore[dict-item]
    RebalanceTimeout: _rebalance_timeout,  # type: ignore[dict-item]
    AddPartitions: _add_partitions,  # type: ignore[dict-item]
    RecreateTopic: _recreate_topic,  # type: ignore[dict-item]
    LoseMessage: _lose,  # type: ignore[dict-item]
    AbandonRequest: _timeout,  # type: ignore[dict-item]
    StallRevocation: _stall,  # type: ignore[dict-item]
    CompleteCallback: _complete_callback,  # type: ignore[dict-item]
    Poll: _poll,  # type: ignore[dict-item]
    PollTimerExpires: _poll_timer_expires,  # type: ignore[dict-item]
    CoordinatorFailover: _failover,  # type: ignore[dict-item]
    CoordinatorLoaded: _loaded,  # type: ignore[dict-item]
    CreateTopic: _create_topic,  # type: ignore[dict-item]
    DeleteTopic: _delete_topic,  # type: ignore[dict-item]
    ResolveRegularExpressions: _resolve_regexes,  # type: ignore[dict-item]
    ChangePartitionRacks: _change_racks,  # type: ignore[dict-item]
    ExpireOffsets: _expire_offsets,  # type: ignore[dict-item]
    AssignmentIntervalElapses: _interval_elapses,  # type: ignore[dict-item]
    CompleteAssignorRun: _complete_run,  # type: ignore[dict-item]
    DeleteGroup: _delete_group,  # type: ignore[dict-item]
}


def consumer_step(state: State, action: Action, config: Config) -> State:
    """``step`` for a KIP-848 state."""
    new = _HANDLERS[type(action)](state, action, config)
    if config.assignment_epochs and new.group is not state.group:
        new = replace(new, group=_interned(co.record_assignment_history(new.group)))
    if action.PERTURBATION:
        new = replace(new, perturbations=new.perturbations + 1)
    if same_value(new, state):
        return state
    return new
