"""``initial``, ``enabled`` and ``step`` of the classic protocol family; ``model.system``
dispatches to them for a config whose ``protocol`` is ``classic``.

``enabled`` lists the actions in a deterministic order: network deliveries, client
progress, coordinator timers, then perturbations (while the budget lasts). ``step`` is
pure and returns the very same object when an action changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from model.actions import (
    AbandonRequest,
    Action,
    AddPartitions,
    Bounce,
    ChangeInstanceId,
    ChangeSubscription,
    CommitOffsets,
    Crash,
    DeleteGroup,
    DeliverMessage,
    ExpireOffsets,
    Leave,
    LoseMessage,
    RebalanceTimeout,
    RequestTimeout,
    Restart,
    SendHeartbeat,
    SendJoinGroup,
    SendSyncGroup,
    SessionTimeout,
    StallAssignment,
    Subscribe,
)
from model.classic import client as cc
from model.classic import coordinator as co
from model.classic.messages import (
    CLASSIC_HEARTBEAT,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    SyncGroupRequest,
    SyncGroupResponse,
)
from model.classic.records import ClassicClient, ClassicState, ReplyTo, new_classic_group
from model.config import Config
from model.consumer.coordinator import expirations, expire_offsets
from model.ids import FrozenMap
from model.network import apis_in_flight, deliverable, without
from model.records import (
    OFFSET_COMMIT,
    Body,
    Message,
    OffsetCommitRequest,
    OffsetCommitResponse,
    TopicMetadata,
    replace,
    same_value,
)
from model.status import ClassicClientStatus, ClassicGroupStatus, ConfigError, ErrorCode

S = ClassicClientStatus


# --------------------------------------------------------------------------- initial


def initial(config: Config) -> ClassicState:
    """An empty group at generation 0, the configured topics (topic id = name), and every
    client either about to join (subscribed) or UNSUBSCRIBED."""
    topics = FrozenMap((name, TopicMetadata(name, n)) for name, n in config.topics)
    clients = tuple(
        ClassicClient(
            name=spec.name,
            instance_id=spec.instance_id,
            incarnation=0,
            alive=True,
            status=S.UNJOINED if spec.subscribed else S.UNSUBSCRIBED,
            assignors=spec.assignors,
            kip429=spec.kip429,
            subscription=frozenset(spec.subscription),
        )
        for spec in config.clients
    )
    state = ClassicState(group=new_classic_group(), topics=topics, clients=clients, network=())
    return settle(state, config) if config.warm_start else state


SETTLE_BOUND = 10_000


def settle(state: ClassicState, config: Config) -> ClassicState:
    """``Config.warm_start``: take the first enabled progress action (auto-commits aside)
    until none is left — the clients have joined and the group is STABLE."""
    for _ in range(SETTLE_BOUND):
        acts = [
            a
            for a in enabled(state, config)
            if not a.PERTURBATION and not isinstance(a, CommitOffsets)
        ]
        if not acts:
            return state
        state = step(state, acts[0], config)
    raise ConfigError(
        f"config {config.name!r}: warm_start: the group did not settle in {SETTLE_BOUND} steps"
    )


# --------------------------------------------------------------------------- enabled


def _deliverable(state: ClassicState, config: Config) -> list[Message]:
    """Messages the network may deliver now (``model.network.deliverable``)."""
    return deliverable(state.network, config.reorder)


def _in_network(state: ClassicState, c: ClassicClient) -> set[str]:
    """APIs with a request or response in the network on the client's connection."""
    return apis_in_flight(state.network, c.name, c.incarnation, c.connection)


def _held(state: ClassicState, c: ClassicClient) -> bool:
    """Whether the coordinator holds the client's JoinGroup or SyncGroup on its connection."""
    here = ReplyTo(c.name, c.incarnation, c.connection)
    return any(here in (m.awaiting_join, m.awaiting_sync) for m in state.group.members.values())


def _lost_requests(state: ClassicState, c: ClassicClient) -> bool:
    """A request of the client is neither in the network nor held: it (or its response)
    was lost, and the client's request times out."""
    if not (c.heartbeat_in_flight or c.commit_in_flight or c.group_request is not None):
        return False
    pending = _in_network(state, c)
    if c.heartbeat_in_flight and CLASSIC_HEARTBEAT not in pending:
        return True
    if c.commit_in_flight and OFFSET_COMMIT not in pending:
        return True
    return c.group_request is not None and c.group_request not in pending and not _held(state, c)


def _unheard(state: ClassicState, c: ClassicClient) -> bool:
    """The coordinator does not hear from the client: its heartbeat, or its JoinGroup or
    SyncGroup, was lost (a lost offset commit does not matter to the session)."""
    pending = _in_network(state, c)
    if c.heartbeat_in_flight and CLASSIC_HEARTBEAT not in pending:
        return True
    return c.group_request is not None and c.group_request not in pending and not _held(state, c)


def _process(state: ClassicState, member_id: str) -> ClassicClient | None:
    """The live client process that is, or is becoming, ``member_id``: the process whose
    JoinGroup created it, while it uses that id or has not read it yet — for a KIP-394
    pending member, on the connection the id was sent to."""
    group = state.group
    member = group.members.get(member_id)
    owner = member.process if member is not None else group.pending_members.get(member_id)
    if owner is None:
        return None
    c = state.client(owner.client)
    if not c.alive or c.incarnation != owner.incarnation or c.status not in cc.IN_GROUP:
        return None
    if c.member_id == member_id:
        return c
    if c.member_id == "" and (member is not None or c.connection == owner.connection):
        return c
    return None


def _news_for(state: ClassicState, c: ClassicClient, config: Config) -> bool:
    """Whether the coordinator would answer the client's heartbeat with news: an error, or a
    rebalance the client does not know of yet. The heartbeat thread heartbeats all the
    time; the model sends a heartbeat only when it carries news: one answered NONE changes
    nothing, and one sent before the news is the same request as one sent when it arrives
    (docs/fidelity.md, the classic protocol)."""
    req = HeartbeatRequest(c.member_id, c.generation_id, c.instance_id)
    error = co.handle_heartbeat(state.group, req, config).error_code
    if error is ErrorCode.REBALANCE_IN_PROGRESS:
        return c.status is S.STABLE and not c.rejoin_needed  # else the client ignores it
    return error is not ErrorCode.NONE


def enabled(state: ClassicState, config: Config) -> tuple[Action, ...]:
    """Every action enabled in ``state``, in a deterministic order."""
    deliverable = _deliverable(state, config)
    acts: list[Action] = [DeliverMessage(m) for m in deliverable]
    for c in state.clients:
        if not c.alive:
            continue
        status = c.status
        if status in cc.HEARTBEATING and not c.heartbeat_in_flight and _news_for(state, c, config):
            acts.append(SendHeartbeat(c.name))
        if not c.stalled and c.group_request is None:
            if status is S.UNJOINED or (
                status is S.STABLE and (c.rejoin_needed or c.assignment_stale)
            ):
                acts.append(SendJoinGroup(c.name))
            if status is S.COMPLETING_REBALANCE:
                acts.append(SendSyncGroup(c.name))
        if (
            config.auto_commit
            and not c.stalled
            and status is S.STABLE
            and c.owned
            and not c.commit_in_flight
        ):
            acts.append(CommitOffsets(c.name))
        if _lost_requests(state, c):
            acts.append(RequestTimeout(c.name))
    acts.extend(timeouts(state, config))
    if state.perturbations < config.max_perturbations:
        acts.extend(_perturbations(state, config, deliverable))
    return tuple(acts)


def timeouts(state: ClassicState, config: Config) -> list[Action]:
    """Coordinator timers that fire: the session timer of a member (or KIP-394 pending
    member) whose client process is gone — with ``live_timers`` also of a live client whose
    heartbeat, JoinGroup or SyncGroup was lost — and the join or pending-sync timer for a
    member the phase waits for (``rebalance_timer_fires``: not a static member's join timer
    while nobody has rejoined) whose client is gone, hangs (``StallAssignment``) or, with
    ``live_timers``, lost such a request; ``slow_clients`` lets any timer fire."""
    acts: list[Action] = []
    group = state.group
    for mid in (*group.members, *sorted(group.pending_members)):
        process = None if config.slow_clients else _process(state, mid)
        lost = process is not None and config.live_timers and _unheard(state, process)
        if process is None or lost:
            acts.append(SessionTimeout(mid))
        if co.rebalance_timer_fires(group, mid) and (process is None or process.stalled or lost):
            acts.append(RebalanceTimeout(mid))
    return acts


def _settled(state: ClassicState) -> bool:
    """Nothing in flight, the group STABLE and every subscribed client STABLE: a rolling
    bounce restarts the next instance only once the group has settled."""
    if state.network or state.group.status is not ClassicGroupStatus.STABLE:
        return False
    return all(
        c.status is S.STABLE and not c.rejoin_needed and not c.assignment_stale
        for c in state.clients
        if c.alive and c.status is not S.UNSUBSCRIBED
    )


def _perturbations(state: ClassicState, config: Config, deliverable: list[Message]) -> list[Action]:
    allows = config.allows
    specs = {spec.name: spec for spec in config.clients}
    acts: list[Action] = []
    for c in state.clients:
        if c.alive:
            in_group = c.status in cc.IN_GROUP and not c.stalled
            if allows("Subscribe") and c.status is S.UNSUBSCRIBED:
                acts.append(Subscribe(c.name))
            if allows("Leave") and in_group:
                acts.append(Leave(c.name))
            if allows("Crash"):
                acts.append(Crash(c.name))
            if (
                allows("Bounce")
                and in_group
                and c.bounced < len(specs[c.name].bounces)
                and _settled(state)
            ):
                acts.append(Bounce(c.name))
            if allows("ChangeSubscription") and in_group:
                for choice in config.subscription_choices:
                    if frozenset(choice) != c.subscription:
                        acts.append(ChangeSubscription(c.name, tuple(sorted(choice))))
            alt = specs[c.name].alt_instance_id
            if (
                allows("ChangeInstanceId")
                and alt not in (None, c.instance_id)
                and c.status is S.STABLE
                and not c.stalled
                and c.group_request is None
            ):
                acts.append(ChangeInstanceId(c.name))
            if (
                allows("StallAssignment")
                and not c.stalled
                and c.status is S.COMPLETING_REBALANCE
                and c.group_request is None
            ):
                acts.append(StallAssignment(c.name))
            if allows("AbandonRequest") and not _lost_requests(state, c):
                pending = _in_network(state, c)
                if (
                    (c.heartbeat_in_flight and CLASSIC_HEARTBEAT in pending)
                    or (c.commit_in_flight and OFFSET_COMMIT in pending)
                    or (c.group_request is not None and c.group_request in pending)
                ):
                    acts.append(AbandonRequest(c.name))
        if (
            allows("Restart")
            and (not c.alive or c.status is S.UNSUBSCRIBED)
            and c.incarnation < config.max_restarts
        ):
            acts.append(Restart(c.name))
    for name, meta in state.topics.items():
        if allows("AddPartitions") and meta.partitions < config.max_partitions_per_topic:
            acts.append(AddPartitions(name))
    if allows("ExpireOffsets"):
        expirable = config.rules.classic_expirable_offsets(state.group, state.topics)
        acts.extend(expirations(state.topics, expirable))
    if allows("LoseMessage"):
        acts.extend(LoseMessage(m) for m in deliverable)
    if allows("DeleteGroup"):
        acts.append(DeleteGroup())
    return acts


# --------------------------------------------------------------------------- step


def _set_client(
    state: ClassicState, new: ClassicClient, sent: tuple[Body, ...] = (), **changes: Any
) -> ClassicState:
    clients = tuple(new if c.name == new.name else c for c in state.clients)
    network = state.network
    old = state.client(new.name)
    if (old.incarnation, old.connection, old.alive) != (new.incarnation, new.connection, new.alive):
        network = _open(network, new)
    if sent:
        network = (
            *network,
            *(Message(new.name, new.incarnation, new.connection, True, body) for body in sent),
        )
    return replace(state, clients=clients, network=network, **changes)


def _open(network: tuple[Message, ...], client: ClassicClient) -> tuple[Message, ...]:
    """Drop the responses on the client's closed connections: nobody reads them, so they
    are dropped now rather than delivered to nobody later (requests still reach the
    coordinator)."""
    return tuple(
        m
        for m in network
        if m.to_coordinator
        or m.client != client.name
        or (
            client.alive
            and (m.incarnation, m.connection) == (client.incarnation, client.connection)
        )
    )


_without = without


def _replies(state: ClassicState, replies: tuple[co.Reply, ...]) -> tuple[Message, ...]:
    """The coordinator's responses, except those to a closed connection (read by nobody)."""
    out: list[Message] = []
    for r, body in replies:
        c = state.client(r.client)
        if c.alive and (c.incarnation, c.connection) == (r.incarnation, r.connection):
            out.append(Message(r.client, r.incarnation, r.connection, False, body))
    return tuple(out)


def _deliver(state: ClassicState, a: DeliverMessage, config: Config) -> ClassicState:
    m = a.message
    network = _without(state.network, m)
    body = m.body
    if m.to_coordinator:
        reply = ReplyTo(m.client, m.incarnation, m.connection)
        group = state.group
        replies: tuple[co.Reply, ...]
        if isinstance(body, JoinGroupRequest):
            group, replies = co.handle_join_group(group, body, reply, config)
        elif isinstance(body, SyncGroupRequest):
            group, replies = co.handle_sync_group(group, body, reply, config)
        elif isinstance(body, HeartbeatRequest):
            replies = ((reply, co.handle_heartbeat(group, body, config)),)
        elif isinstance(body, LeaveGroupRequest):
            group, replies = co.handle_leave_group(group, body, reply, config)
        else:
            assert isinstance(body, OffsetCommitRequest)
            group, response = co.handle_offset_commit(group, body, config)
            replies = ((reply, response),)
        state = replace(state, group=group, network=(*network, *_replies(state, replies)))
        return _mark_zombies(state)
    c = state.client(m.client)
    if not c.alive or c.incarnation != m.incarnation or c.connection != m.connection:
        return replace(state, network=network)  # nobody reads a closed connection
    sent: tuple[Body, ...] = ()
    if isinstance(body, JoinGroupResponse):
        new = cc.on_join_response(c, body, config)
    elif isinstance(body, SyncGroupResponse):
        new, commit = config.rules.classic_on_sync_response(c, body, config)
        sent = (commit,) if commit is not None else ()
    elif isinstance(body, HeartbeatResponse):
        new = config.rules.classic_on_heartbeat_response(c, body)
    elif isinstance(body, OffsetCommitResponse):
        new = cc.on_commit_response(c, body)
    else:
        new = c  # a LeaveGroup response: the client has moved on
    return _set_client(replace(state, network=network), new, sent)


def _mark_zombies(state: ClassicState) -> ClassicState:
    """A member the coordinator removed (a timer, or a static replacement) whose client is
    still consuming without knowing: ghost bookkeeping for the properties
    (``ClassicClient.expired``)."""
    members = state.group.members
    for c in state.clients:
        if (
            c.alive
            and not c.expired
            and c.status in cc.IN_GROUP
            and c.generation_id >= 0
            and c.member_id not in members
        ):
            state = _set_client(state, replace(c, expired=True))
    return state


def _send_join(state: ClassicState, a: SendJoinGroup, config: Config) -> ClassicState:
    c = state.client(a.client)
    new, bodies = config.rules.classic_join_group(c, config)
    if c.generation_id < 0 or not c.member_id:
        new = replace(new, expired=False)  # it knows it left the group: no zombie any more
    return _set_client(state, new, bodies)


def _send_sync(state: ClassicState, a: SendSyncGroup, config: Config) -> ClassicState:
    new, req = cc.sync_group(state.client(a.client), state.topics, config)
    return _set_client(state, new, (req,) if req is not None else ())


def _send_heartbeat(state: ClassicState, a: SendHeartbeat, config: Config) -> ClassicState:
    new, req = cc.build_heartbeat(state.client(a.client))
    return _set_client(state, new, (req,))


def _commit(state: ClassicState, a: CommitOffsets, config: Config) -> ClassicState:
    new, req = cc.auto_commit(state.client(a.client))
    return _set_client(state, new, (req,))


def _timeout(
    state: ClassicState, a: RequestTimeout | AbandonRequest, config: Config
) -> ClassicState:
    return _set_client(state, cc.disconnect(state.client(a.client)))


def _timer(
    rule: Callable[[Any, str, Config], co.Result],
) -> Callable[[ClassicState, SessionTimeout | RebalanceTimeout, Config], ClassicState]:
    def fire(
        state: ClassicState, a: SessionTimeout | RebalanceTimeout, config: Config
    ) -> ClassicState:
        group, replies = rule(state.group, a.member_id, config)
        return _mark_zombies(
            replace(state, group=group, network=(*state.network, *_replies(state, replies)))
        )

    return fire


def _session_timeout(state: ClassicState, a: SessionTimeout, config: Config) -> ClassicState:
    return _timer(config.rules.classic_session_timeout)(state, a, config)


def _rebalance_timeout(state: ClassicState, a: RebalanceTimeout, config: Config) -> ClassicState:
    return _timer(config.rules.classic_rebalance_timeout)(state, a, config)


def _subscribe(state: ClassicState, a: Subscribe, config: Config) -> ClassicState:
    return _set_client(state, cc.subscribe(state.client(a.client)))


def _leave(state: ClassicState, a: Leave, config: Config) -> ClassicState:
    new, bodies = cc.leave(state.client(a.client), config)
    return _set_client(state, new, bodies)


def _crash(state: ClassicState, a: Crash, config: Config) -> ClassicState:
    return _set_client(state, cc.crash(state.client(a.client)))


def _restart(state: ClassicState, a: Restart, config: Config) -> ClassicState:
    c = state.client(a.client)
    return _set_client(state, cc.restart(c, c.assignors, kip429=c.kip429))


def _bounce(state: ClassicState, a: Bounce, config: Config) -> ClassicState:
    c = state.client(a.client)
    spec = next(s for s in config.clients if s.name == c.name)
    closed, bodies = cc.leave(c, config)
    state = _set_client(state, closed, bodies)
    started = replace(
        cc.restart(closed, spec.bounces[c.bounced], kip429=True), bounced=c.bounced + 1
    )
    return _set_client(state, started)


def _change_subscription(
    state: ClassicState, a: ChangeSubscription, config: Config
) -> ClassicState:
    return _set_client(state, cc.change_subscription(state.client(a.client), frozenset(a.topics)))


def _change_instance_id(state: ClassicState, a: ChangeInstanceId, config: Config) -> ClassicState:
    spec = next(s for s in config.clients if s.name == a.client)
    assert spec.alt_instance_id is not None
    renamed = cc.change_instance_id(state.client(a.client), spec.alt_instance_id)
    new, bodies = config.rules.classic_join_group(renamed, config)
    return _set_client(state, new, bodies)


def _stall(state: ClassicState, a: StallAssignment, config: Config) -> ClassicState:
    return _set_client(state, cc.stall(state.client(a.client)))


def _add_partitions(state: ClassicState, a: AddPartitions, config: Config) -> ClassicState:
    meta = state.topics[a.topic]
    topics = state.topics.set(a.topic, replace(meta, partitions=meta.partitions + 1))
    clients = tuple(cc.metadata_changed(c) if c.alive else c for c in state.clients)
    return replace(state, topics=topics, clients=clients)


def _expire_offsets(state: ClassicState, a: ExpireOffsets, config: Config) -> ClassicState:
    expirable = config.rules.classic_expirable_offsets(state.group, state.topics)
    group = expire_offsets(state.group, expirable, state.topics[a.topic].topic_id)
    return replace(state, group=co.classic_maybe_delete_expired_group(group, config))


def _delete_group(state: ClassicState, a: DeleteGroup, config: Config) -> ClassicState:
    """DeleteGroups: refused unless the group is Empty. A refused request changes nothing,
    not even the perturbation budget (``step`` spends one unit, given back here)."""
    if config.rules.classic_validate_delete_group(state.group) is not ErrorCode.NONE:
        return replace(state, perturbations=state.perturbations - 1)
    return replace(state, group=co.classic_delete_group(state.group))


def _lose(state: ClassicState, a: LoseMessage, config: Config) -> ClassicState:
    return replace(state, network=_without(state.network, a.message))


_HANDLERS: dict[type[Action], Callable[[ClassicState, Action, Config], ClassicState]] = {
    DeliverMessage: _deliver,  # type: ignore[dict-item]
    SendJoinGroup: _send_join,  # type: ignore[dict-item]
    SendSyncGroup: _send_sync,  # type: ignore[dict-item]
    SendHeartbeat: _send_heartbeat,  # type: ignore[dict-item]
    CommitOffsets: _commit,  # type: ignore[dict-item]
    RequestTimeout: _timeout,  # type: ignore[dict-item]
    AbandonRequest: _timeout,  # type: ignore[dict-item]
    SessionTimeout: _session_timeout,  # type: ignore[dict-item]
    RebalanceTimeout: _rebalance_timeout,  # type: ignore[dict-item]
    Subscribe: _subscribe,  # type: ignore[dict-item]
    Leave: _leave,  # type: ignore[dict-item]
    Crash: _crash,  # type: ignore[dict-item]
    Restart: _restart,  # type: ignore[dict-item]
    Bounce: _bounce,  # type: ignore[dict-item]
    ChangeSubscription: _change_subscription,  # type: ignore[dict-item]
    StallAssignment: _stall,  # type: ignore[dict-item]
    AddPartitions: _add_partitions,  # type: ignore[dict-item]
    LoseMessage: _lose,  # type: ignore[dict-item]
    ExpireOffsets: _expire_offsets,  # type: ignore[dict-item]
    DeleteGroup: _delete_group,  # type: ignore[dict-item]
    ChangeInstanceId: _change_instance_id,  # type: ignore[dict-item]
}


def step(state: ClassicState, action: Action, config: Config) -> ClassicState:
    """Apply ``action`` to ``state`` (the caller guarantees it is enabled). A perturbation
    spends one unit of the budget."""
    new = _HANDLERS[type(action)](state, action, config)
    if action.PERTURBATION:
        new = replace(new, perturbations=new.perturbations + 1)
    if same_value(new, state):
        return state
    return new
