"""``initial``, ``enabled`` and ``step`` of a mixed config (``Config.protocol == "mixed"``);
``model.system`` dispatches to them for a ``MixedState``.

Each client runs its own protocol's code unchanged: its actions are enabled and taken in
a *view* of the state holding only the clients and messages of its protocol family
(``model.records.State`` or ``model.classic.records.ClassicState``), with the real group
when the group is of that family and an empty group of the family otherwise (a client
step reads and writes only its client and the network). What the coordinator receives is
dispatched on the request and the group's type: a request of the group's own protocol
goes to that protocol's coordinator; a classic request to a consumer group goes to the
translated handlers of ``model.migration.coordinator``; a consumer-protocol join to a
classic group upgrades it (``convertToConsumerGroup``); a fencing that leaves only classic
members downgrades the group (``convertToClassicGroup``).
"""

from __future__ import annotations

from typing import Any

from model.actions import (
    Action,
    AssignmentIntervalElapses,
    ChangeInstanceId,
    CompleteAssignorRun,
    DeliverMessage,
    LoseMessage,
    RebalanceTimeout,
    SendHeartbeat,
    SessionTimeout,
)
from model.classic import client as cc
from model.classic import coordinator as cco
from model.classic import system as classic_system
from model.classic.messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from model.classic.records import (
    ClassicClient,
    ClassicGroup,
    ClassicState,
    ReplyTo,
    new_classic_group,
)
from model.config import Config
from model.consumer import client as cl
from model.consumer import coordinator as co
from model.consumer import system as base
from model.consumer.coordinator import error_response
from model.ids import FrozenMap
from model.migration import coordinator as mco
from model.migration.records import AnyClient, MixedState
from model.network import without
from model.records import (
    Body,
    Client,
    ConsumerGroupHeartbeatRequest,
    Group,
    Message,
    OffsetCommitRequest,
    State,
    TopicMetadata,
    replace,
    same_value,
)
from model.status import ClassicClientStatus, ClientStatus, ErrorCode

CLASSIC = "classic"
CONSUMER = "consumer"

EMPTY_CONSUMER_GROUP = Group(
    group_epoch=0,
    assignment_epoch=0,
    target_assignment=FrozenMap(),
    members=FrozenMap(),
    partition_epochs=FrozenMap(),
    committed_offsets=FrozenMap(),
)
"""The group a consumer client's view holds while the real group is a classic group."""

EMPTY_CLASSIC_GROUP = new_classic_group()
"""The group a classic client's view holds while the real group is a consumer group."""


# --------------------------------------------------------------------------- initial


def initial(config: Config) -> MixedState:
    """An empty group (classic: its type is that of the first member to join), the
    configured topics, and each client of its ``group_protocol``, joining (subscribed) or
    UNSUBSCRIBED."""
    topics = FrozenMap((name, TopicMetadata(name, n)) for name, n in config.topics)
    clients: list[AnyClient] = []
    for spec in config.clients:
        if spec.group_protocol == CLASSIC:
            clients.append(
                ClassicClient(
                    name=spec.name,
                    instance_id=spec.instance_id,
                    incarnation=0,
                    alive=True,
                    status=(
                        ClassicClientStatus.UNJOINED
                        if spec.subscribed
                        else ClassicClientStatus.UNSUBSCRIBED
                    ),
                    assignors=spec.assignors,
                    kip429=spec.kip429,
                    subscription=frozenset(spec.subscription),
                )
            )
        else:
            clients.append(
                Client(
                    name=spec.name,
                    instance_id=spec.instance_id,
                    incarnation=0,
                    member_id=cl.member_id_for(spec.name, 0),
                    alive=True,
                    status=ClientStatus.JOINING if spec.subscribed else ClientStatus.UNSUBSCRIBED,
                    member_epoch=0,
                    subscription=frozenset(spec.subscription),
                    server_assignor=spec.server_assignor,
                    rack=spec.rack,
                )
            )
    return MixedState(group=new_classic_group(), topics=topics, clients=tuple(clients), network=())


# --------------------------------------------------------------------------- views


def family(client: AnyClient) -> str:
    """The protocol family of a client."""
    return CLASSIC if isinstance(client, ClassicClient) else CONSUMER


def _families(state: MixedState) -> dict[str, str]:
    return {c.name: family(c) for c in state.clients}


def classic_view(state: MixedState, group: ClassicGroup) -> ClassicState:
    """The classic clients, their messages and ``group``."""
    names = {c.name for c in state.clients if isinstance(c, ClassicClient)}
    return ClassicState(
        group=group,
        topics=state.topics,
        clients=tuple(c for c in state.clients if isinstance(c, ClassicClient)),
        network=tuple(m for m in state.network if m.client in names),
        perturbations=state.perturbations,
        topic_generation=state.topic_generation,
    )


def consumer_view(state: MixedState, group: Group) -> State:
    """The consumer-protocol clients, their messages and ``group``."""
    names = {c.name for c in state.clients if isinstance(c, Client)}
    return State(
        group=group,
        topics=state.topics,
        clients=tuple(c for c in state.clients if isinstance(c, Client)),
        network=tuple(m for m in state.network if m.client in names),
        perturbations=state.perturbations,
        topic_generation=state.topic_generation,
    )


def _view(state: MixedState, fam: str) -> State | ClassicState:
    """The view of ``fam`` with the real group if it is of that family."""
    group = state.group
    if fam == CLASSIC:
        return classic_view(
            state, group if isinstance(group, ClassicGroup) else EMPTY_CLASSIC_GROUP
        )
    return consumer_view(state, group if isinstance(group, Group) else EMPTY_CONSUMER_GROUP)


def _canonical(network: tuple[Message, ...]) -> tuple[Message, ...]:
    """The network ordered by client, each client's messages in send order: delivery is
    per channel (``model.network.deliverable``), so this order stands for all the
    interleavings of different clients' messages."""
    return tuple(sorted(network, key=lambda m: m.client))


def _merge(state: MixedState, view: State | ClassicState, fam: str, *, group: bool) -> MixedState:
    """Write a view's clients, messages and perturbation count back (its group too when
    ``group``)."""
    names = _families(state)
    new_clients = {c.name: c for c in view.clients}
    clients = tuple(new_clients.get(c.name, c) if family(c) == fam else c for c in state.clients)
    others = tuple(m for m in state.network if names[m.client] != fam)
    return replace(
        state,
        group=view.group if group else state.group,
        clients=clients,
        network=_canonical(others + view.network),
        perturbations=view.perturbations,
    )


# --------------------------------------------------------------------------- enabled


def _classic_process(state: MixedState, member_id: str, process: tuple[str, int] | None) -> bool:
    """Whether the classic client process that joined as ``member_id`` still runs and still
    uses (or is about to learn) that member id."""
    if process is None:
        return False
    c = state.client(process[0])
    return (
        isinstance(c, ClassicClient)
        and c.alive
        and c.incarnation == process[1]
        and c.status in cc.IN_GROUP
        and c.member_id in (member_id, "")
    )


def _classic_news(group: Group, c: ClassicClient, config: Config) -> bool:
    """Whether a consumer group would answer the classic client's heartbeat with news (as
    ``model.classic.system`` sends a heartbeat only then)."""
    req = HeartbeatRequest(c.member_id, c.generation_id, c.instance_id)
    error = mco.handle_classic_heartbeat(group, req, config).error_code
    if error is ErrorCode.REBALANCE_IN_PROGRESS:
        return c.status is ClassicClientStatus.STABLE and not c.rejoin_needed
    return error is not ErrorCode.NONE


def enabled(state: MixedState, config: Config) -> tuple[Action, ...]:
    """Every action enabled in ``state``: each family's actions in its view (the group's
    own family first), the classic members' session timers of a consumer group, and the
    classic clients' heartbeats to a consumer group."""
    group = state.group
    if isinstance(group, ClassicGroup):
        # ChangeInstanceId is modelled for a classic member of a consumer group only.
        acts = [
            a
            for a in classic_system.enabled(classic_view(state, group), config)
            if not isinstance(a, ChangeInstanceId)
        ]
        acts.extend(base.consumer_enabled(consumer_view(state, EMPTY_CONSUMER_GROUP), config))
        return tuple(acts)
    classic_ids = {mid for mid, m in group.members.items() if m.classic is not None}
    acts = [
        a
        for a in base.consumer_enabled(consumer_view(state, group), config)
        if not (isinstance(a, SessionTimeout | RebalanceTimeout) and a.member_id in classic_ids)
    ]
    for mid in sorted(classic_ids):
        meta = group.members[mid].classic
        assert meta is not None
        if not _classic_process(state, mid, meta.process):
            acts.append(SessionTimeout(mid))
    for a in classic_system.enabled(classic_view(state, EMPTY_CLASSIC_GROUP), config):
        if isinstance(a, SendHeartbeat):
            continue
        acts.append(a)
    for c in state.clients:
        if (
            isinstance(c, ClassicClient)
            and c.alive
            and c.status in cc.HEARTBEATING
            and not c.heartbeat_in_flight
            and _classic_news(group, c, config)
        ):
            acts.append(SendHeartbeat(c.name))
    return tuple(acts)


# --------------------------------------------------------------------------- step


Replies = tuple[tuple[ReplyTo, Body], ...]
"""Responses, each addressed to the client process and connection it answers."""


def _replies(state: MixedState, replies: Replies) -> tuple[Message, ...]:
    """The coordinator's responses, except those to a closed connection."""
    out: list[Message] = []
    for r, body in replies:
        c = state.client(r.client)
        if c.alive and (c.incarnation, c.connection) == (r.incarnation, r.connection):
            out.append(Message(r.client, r.incarnation, r.connection, False, body))
    return tuple(out)


def _answer(state: MixedState, m: Message, replies: Replies, **changes: Any) -> MixedState:
    """Remove the delivered request ``m``, apply ``changes`` and send ``replies``."""
    network = without(state.network, m)
    state = replace(state, network=network, **changes)
    return replace(state, network=_canonical(state.network + _replies(state, replies)))


def _in_view(state: MixedState, action: Action, fam: str, config: Config) -> MixedState:
    """Take ``action`` in the view of ``fam``; the group is written back when it is of
    that family."""
    view = _view(state, fam)
    same = isinstance(state.group, ClassicGroup) == (fam == CLASSIC)
    if isinstance(view, ClassicState):
        after: State | ClassicState = classic_system.step(view, action, config)
    else:
        after = base.consumer_step(view, action, config)
    return _merge(state, after, fam, group=same)


def _downgrade(before: MixedState, after: MixedState, config: Config) -> MixedState:
    """A fencing that left only classic members converts the consumer group to a classic
    group, with a rebalance prepared; so does a classic static member replacing the last
    consumer-protocol member, which prepares a rebalance only when needed
    (``convertToClassicGroup``)."""
    g0, g1 = before.group, after.group
    if not (isinstance(g0, Group) and isinstance(g1, Group)):
        return after
    if not config.rules.mixed_validate_online_downgrade(g0, g1, config):
        return after
    replaced = mco.replacement(g0, g1)
    if replaced is None:
        classic, replies = mco.from_consumer_group(g0, g1, after.issued_member_ids, config)
    else:
        classic, replies = mco.from_consumer_group_replaced(
            g0, replaced[0], g1.members[replaced[1]], after.issued_member_ids, config
        )
    state = replace(after, group=classic, issued_member_ids=FrozenMap())
    return replace(state, network=_canonical(state.network + _replies(state, replies)))


def _to_coordinator(state: MixedState, a: DeliverMessage, config: Config) -> MixedState:
    m = a.message
    body = m.body
    group = state.group
    reply = ReplyTo(m.client, m.incarnation, m.connection)
    if isinstance(body, ConsumerGroupHeartbeatRequest):
        if isinstance(group, ClassicGroup):
            if mco.is_empty_classic(group) and body.member_epoch == 0:
                state = replace(
                    state,
                    group=mco.new_consumer_group(group, config),
                    issued_member_ids=group.issued_member_ids,
                )
            elif body.member_epoch == 0 and mco.validate_online_upgrade(group, config):
                upgraded = mco.from_classic_group(group)
                if config.replacement_bumps_group_epoch:
                    upgraded = mco.bump_for_replacement(upgraded, body.instance_id)
                _, answer = co.handle_consumer_group_heartbeat(upgraded, state.topics, body, config)
                if answer.error_code is not ErrorCode.NONE:
                    # The conversion and the join are written together or not at all.
                    return _answer(state, m, ((reply, answer),))
                held = mco.held_requests_failed(group)
                state = replace(
                    state,
                    group=upgraded,
                    issued_member_ids=group.issued_member_ids,
                    network=_canonical(state.network + _replies(state, held)),
                )
            else:
                refused = error_response(body, ErrorCode.GROUP_ID_NOT_FOUND, config)
                return _answer(state, m, ((reply, refused),))
        return _downgrade(state, _in_view(state, a, CONSUMER, config), config)
    if isinstance(body, OffsetCommitRequest):
        if isinstance(group, ClassicGroup):
            if isinstance(state.client(m.client), ClassicClient):
                return _in_view(state, a, CLASSIC, config)
            committed_group, committed = cco.handle_offset_commit(group, body, config)
            return _answer(state, m, ((reply, committed),), group=committed_group)
        if isinstance(state.client(m.client), Client):
            return _in_view(state, a, CONSUMER, config)
        new_consumer, commit = mco.handle_classic_offset_commit(group, body, config)
        return _answer(state, m, ((reply, commit),), group=new_consumer)
    # A classic request.
    if isinstance(group, ClassicGroup):
        return _in_view(state, a, CLASSIC, config)
    if not group.members:
        if isinstance(body, JoinGroupRequest):
            # An empty consumer group is replaced by a classic one on JoinGroup
            # (``classicGroupJoinToClassicGroup``, ``maybeDeleteEmptyConsumerGroup``).
            classic = replace(
                new_classic_group(),
                committed_offsets=group.committed_offsets,
                issued_member_ids=state.issued_member_ids,
            )
            state = replace(state, group=classic, issued_member_ids=FrozenMap())
            return _in_view(state, a, CLASSIC, config)
        return _answer(state, m, ((reply, _unknown_member(body)),))
    if isinstance(body, JoinGroupRequest):
        joined, issued, replies = mco.handle_classic_join(
            group, state.topics, body, reply, state.issued_member_ids, config
        )
        after = _answer(state, m, replies, group=joined, issued_member_ids=issued)
        return _downgrade(state, after, config)
    if isinstance(body, SyncGroupRequest):
        return _answer(state, m, ((reply, mco.handle_classic_sync(group, body, config)),))
    if isinstance(body, HeartbeatRequest):
        return _answer(state, m, ((reply, mco.handle_classic_heartbeat(group, body, config)),))
    assert isinstance(body, LeaveGroupRequest)
    left_group, left = mco.handle_classic_leave(group, body, config)
    return _downgrade(state, _answer(state, m, ((reply, left),), group=left_group), config)


def _unknown_member(body: Body) -> Body:
    """UNKNOWN_MEMBER_ID for a SyncGroup, Heartbeat or LeaveGroup to an empty group."""
    if isinstance(body, SyncGroupRequest):
        return SyncGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID, None)
    if isinstance(body, HeartbeatRequest):
        return HeartbeatResponse(ErrorCode.UNKNOWN_MEMBER_ID)
    return LeaveGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID)


def _timer(state: MixedState, a: SessionTimeout | RebalanceTimeout, config: Config) -> MixedState:
    group = state.group
    if isinstance(group, ClassicGroup):
        return _in_view(state, a, CLASSIC, config)
    member = group.members.get(a.member_id)
    if member is not None and member.classic is not None:
        after = replace(state, group=config.rules.session_timeout(group, a.member_id, config))
    else:
        after = _in_view(state, a, CONSUMER, config)
    return _downgrade(state, after, config)


def policy_breached(group: Group, config: Config) -> bool:
    """Whether a consumer group goes against the migration policy: a classic member under
    ``disabled`` (no classic JoinGroup is admitted, KAFKA-20640), or only classic members
    under a policy that allows a downgrade (the conversion runs in the step that fences or
    replaces the last consumer-protocol member, KAFKA-17317)."""
    classic = len(mco.classic_members(group))
    if config.migration_policy == "disabled":
        return classic > 0
    return mco.downgrade_enabled(config) and 0 < classic == len(group.members)


def _mark_zombies(state: MixedState) -> MixedState:
    """A member the coordinator removed — a timer, a static replacement by a process of
    the other protocol, a conversion that left it out — whose client still consumes
    without knowing: ghost bookkeeping for the properties (``expired``), as each family
    keeps it."""
    members = state.group.members
    clients: list[AnyClient] = []
    changed = False
    for c in state.clients:
        if isinstance(c, ClassicClient):
            zombie = c.status in cc.IN_GROUP and c.generation_id >= 0
        else:
            zombie = c.status in cl.IN_GROUP and c.status is not ClientStatus.JOINING
            zombie = zombie and c.member_epoch > 0
        if zombie and c.alive and not c.expired and c.member_id not in members:
            clients.append(replace(c, expired=True))
            changed = True
        else:
            clients.append(c)
    return replace(state, clients=tuple(clients)) if changed else state


def step(state: MixedState, action: Action, config: Config) -> MixedState:
    """Apply ``action`` to ``state`` (the caller guarantees it is enabled). A perturbation
    spends one unit of the budget (in the view that takes it). A consumer group that goes
    against the migration policy is marked (``Group.migration_policy_breached``)."""
    if isinstance(action, DeliverMessage) and action.message.to_coordinator:
        new = _mark_zombies(_to_coordinator(state, action, config))
    elif isinstance(action, SessionTimeout | RebalanceTimeout):
        new = _mark_zombies(_timer(state, action, config))
    elif isinstance(action, DeliverMessage | LoseMessage):
        new = _in_view(state, action, family(state.client(action.message.client)), config)
    elif isinstance(action, CompleteAssignorRun | AssignmentIntervalElapses):
        new = _in_view(state, action, CONSUMER, config)  # the consumer group's own timers
    else:
        name = getattr(action, "client", None)
        assert isinstance(name, str), action
        new = _in_view(state, action, family(state.client(name)), config)
    group = new.group
    if (
        isinstance(group, Group)
        and not group.migration_policy_breached
        and policy_breached(group, config)
    ):
        new = replace(new, group=replace(group, migration_policy_breached=True))
    if same_value(new, state):
        return state
    return new


# --------------------------------------------------------------------------- one family


_AS_CONSUMER = {
    ClassicClientStatus.UNSUBSCRIBED: ClientStatus.UNSUBSCRIBED,
    ClassicClientStatus.UNJOINED: ClientStatus.JOINING,
    ClassicClientStatus.PREPARING_REBALANCE: ClientStatus.JOINING,
    ClassicClientStatus.COMPLETING_REBALANCE: ClientStatus.RECONCILING,
    ClassicClientStatus.STABLE: ClientStatus.STABLE,
}

_AS_CLASSIC = {
    ClientStatus.JOINING: ClassicClientStatus.UNJOINED,
    ClientStatus.RECONCILING: ClassicClientStatus.COMPLETING_REBALANCE,
    ClientStatus.ACKNOWLEDGING: ClassicClientStatus.COMPLETING_REBALANCE,
    ClientStatus.STABLE: ClassicClientStatus.STABLE,
}


def family_state(state: MixedState) -> State | ClassicState:
    """The state as one of the group's family, for the readers that know one family only
    (renderers): the group and the whole network kept, each client of the other protocol
    shown as a client of the group's (its generation or member epoch, its status mapped
    to the nearest one, what it consumes)."""
    group = state.group
    if isinstance(group, ClassicGroup):
        classic_clients = tuple(
            c
            if isinstance(c, ClassicClient)
            else ClassicClient(
                name=c.name,
                instance_id=c.instance_id,
                incarnation=c.incarnation,
                alive=c.alive,
                status=_AS_CLASSIC.get(c.status, ClassicClientStatus.UNSUBSCRIBED),
                assignors=("cooperative-sticky",),
                kip429=True,
                subscription=c.subscription,
                member_id=c.member_id,
                generation_id=c.member_epoch,
                owned=c.owned,
                expired=c.expired,
            )
            for c in state.clients
        )
        return ClassicState(
            group=group,
            topics=state.topics,
            clients=classic_clients,
            network=state.network,
            perturbations=state.perturbations,
        )
    consumer_clients = tuple(
        c
        if isinstance(c, Client)
        else Client(
            name=c.name,
            instance_id=c.instance_id,
            incarnation=c.incarnation,
            member_id=c.member_id,
            alive=c.alive,
            status=_AS_CONSUMER[c.status],
            member_epoch=c.generation_id,
            subscription=c.subscription,
            server_assignor=None,
            owned=c.owned,
            expired=c.expired,
        )
        for c in state.clients
    )
    return State(
        group=group,
        topics=state.topics,
        clients=consumer_clients,
        network=state.network,
        perturbations=state.perturbations,
    )
