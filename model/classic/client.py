"""The classic consumer: ``AbstractCoordinator`` / ``ConsumerCoordinator`` of the Java client,
eager and cooperative (KIP-429).

A rebalance runs JoinGroup then SyncGroup. Before joining, ``onJoinPrepare`` commits and
revokes: everything under the EAGER protocol, only partitions of topics no longer
subscribed under COOPERATIVE. The leader runs the selected assignor over the members'
subscriptions. After SyncGroup, ``onJoinComplete`` revokes what the assignment took away
(COOPERATIVE; then a follow-up rebalance is requested) and takes what it added.
``ClassicClient.owned`` is what the application consumes: the client view the single-owner
property is about.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from model.classic.assignors import (
    COOPERATIVE_ASSIGNORS,
    Subscription,
    assign,
    supported_protocols,
    validate_cooperative_assignment,
)
from model.classic.messages import (
    JOIN,
    NO_GENERATION,
    SYNC,
    UNKNOWN_MEMBER_ID,
    ClassicSubscription,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    JoinGroupResponseMember,
    LeaveGroupRequest,
    SyncGroupRequest,
    SyncGroupResponse,
)
from model.classic.records import ClassicClient
from model.ids import EMPTY, Assignment, FrozenMap
from model.records import Body, OffsetCommitRequest, OffsetCommitResponse, TopicMetadata, replace
from model.status import ClassicClientStatus, ErrorCode, RebalanceProtocol

if TYPE_CHECKING:
    from model.config import Config

S = ClassicClientStatus

IN_GROUP = frozenset({S.UNJOINED, S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE, S.STABLE})
"""States of a subscribed client (it is, or is getting, in the group)."""

HEARTBEATING = frozenset({S.COMPLETING_REBALANCE, S.STABLE})
"""States in which the heartbeat thread runs (``AbstractCoordinator.HeartbeatThread``:
disabled while the member has not joined)."""

CLASSIC_FATAL_ERRORS = frozenset(
    {
        ErrorCode.FENCED_INSTANCE_ID,
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
        ErrorCode.UNRELEASED_INSTANCE_ID,
    }
)
"""Errors ``poll()`` throws to the application (``FencedInstanceIdException``,
``InconsistentGroupProtocolException``; UNRELEASED_INSTANCE_ID, which only a consumer group
answers — a static JoinGroup for an instance a consumer-protocol member still holds — is
an unexpected error to the classic ``JoinGroupResponseHandler``): the consumer is unusable
and the application closes it."""

RETRIABLE_JOIN_ERRORS = frozenset(
    {
        ErrorCode.REBALANCE_IN_PROGRESS,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
    }
)
"""JoinGroup / SyncGroup errors after which the client simply joins again, keeping its
member id and generation (``AbstractCoordinator.joinGroupIfNeeded``)."""


def rebalance_protocol(client: ClassicClient) -> RebalanceProtocol:
    """The protocol the client follows: the most advanced one every configured assignor
    supports (``ConsumerCoordinator``'s constructor); EAGER for byte code without KIP-429."""
    if not client.kip429:
        return RebalanceProtocol.EAGER
    common = set(RebalanceProtocol)
    for name in client.assignors:
        common &= {RebalanceProtocol(p) for p in supported_protocols(name)}
    if RebalanceProtocol.COOPERATIVE in common:
        return RebalanceProtocol.COOPERATIVE
    return RebalanceProtocol.EAGER


def _reset(client: ClassicClient, *, keep_member_id: bool) -> ClassicClient:
    """``resetStateAndRejoin``: UNJOINED, generation reset (the member id too unless
    ``keep_member_id``), a rejoin with ``onJoinPrepare`` due."""
    return replace(
        client,
        status=S.UNJOINED,
        generation_id=NO_GENERATION,
        member_id=client.member_id if keep_member_id else UNKNOWN_MEMBER_ID,
        protocol_name=None,
        leader=False,
        join_members=None,
        rejoin_needed=True,
        needs_join_prepare=True,
    )


def _retry_join(client: ClassicClient) -> ClassicClient:
    """Join again, keeping member id and generation; ``onJoinPrepare`` runs only if it is
    still due (a reset since the last one: ``needsJoinPrepare``)."""
    return replace(client, status=S.UNJOINED, leader=False, join_members=None, rejoin_needed=True)


def _out_of_group(client: ClassicClient, **changes: Any) -> ClassicClient:
    """The client is out of the group: UNSUBSCRIBED, consuming nothing, no member id, no
    generation, nothing in flight — the fields a close, a fatal error and a crash share."""
    return replace(
        client,
        status=S.UNSUBSCRIBED,
        owned=EMPTY,
        member_id=UNKNOWN_MEMBER_ID,
        generation_id=NO_GENERATION,
        protocol_name=None,
        leader=False,
        join_members=None,
        group_request=None,
        heartbeat_in_flight=False,
        commit_in_flight=False,
        **changes,
    )


def _fatal(client: ClassicClient, error: ErrorCode) -> ClassicClient:
    """``poll()`` throws: the application stops consuming and closes the consumer."""
    return _forget_requests(_out_of_group(client, fatal_error=error))


# --------------------------------------------------------------------------- application


def subscribe(client: ClassicClient) -> ClassicClient:
    """``subscribe()`` + poll: the client will join."""
    return replace(
        client, status=S.UNJOINED, rejoin_needed=True, needs_join_prepare=True, fatal_error=None
    )


def change_subscription(client: ClassicClient, topics: frozenset[str]) -> ClassicClient:
    """``subscribe(newTopics)``: a member rejoins when its subscription changed since it
    joined (``ConsumerCoordinator.rejoinNeededOrPending``)."""
    return replace(client, subscription=topics, rejoin_needed=True)


def change_instance_id(client: ClassicClient, instance_id: str) -> ClassicClient:
    """The client takes another ``group.instance.id`` and rejoins with the member id it
    holds (``ChangeInstanceId``): the JoinGroup it sends at once carries both, and a
    consumer group refuses it with UNKNOWN_MEMBER_ID (``mco.static_rejoin_error``)."""
    return replace(client, instance_id=instance_id, rejoin_needed=True)


def metadata_changed(client: ClassicClient) -> ClassicClient:
    """The partition count of a topic changed: the leader, which watches the metadata of
    the whole group's subscription, rejoins (``assignmentSnapshot`` no longer matches the
    metadata snapshot, ``ConsumerCoordinator.rejoinNeededOrPending``)."""
    assigned = client.status is S.STABLE or (
        client.status is S.COMPLETING_REBALANCE and client.group_request == SYNC
    )
    if client.leader and assigned:
        return replace(client, assignment_stale=True)
    return client


def _commit(
    client: ClassicClient, partitions: Assignment
) -> tuple[ClassicClient, OffsetCommitRequest | None]:
    """Commit the positions of ``partitions`` at the current generation, unless a commit is
    already out or the generation was reset."""
    if not partitions or client.commit_in_flight or client.generation_id == NO_GENERATION:
        return client, None
    req = OffsetCommitRequest(client.member_id, client.generation_id, partitions)
    return replace(client, commit_in_flight=True), req


def join_group(client: ClassicClient, config: Config) -> tuple[ClassicClient, tuple[Body, ...]]:
    """``joinGroupIfNeeded``: run ``onJoinPrepare`` when due, then send JoinGroup.

    ``onJoinPrepare``: a member whose generation or member id was reset gives up what it
    owned as lost; otherwise it commits (``commit_on_revoke``; Kafka's auto-commit before a
    rebalance) and revokes — everything under EAGER, only the partitions of topics it no
    longer subscribes to under COOPERATIVE (``ConsumerCoordinator.onJoinPrepare``). The
    subscription it sends carries its owned partitions and generation (KIP-429, KIP-792)
    and the previous assignment the ``sticky`` assignor keeps in its user data (KIP-341).
    The commit goes out first on the same connection (Java waits for it)."""
    bodies: list[Body] = []
    if client.needs_join_prepare:
        reset = client.generation_id == NO_GENERATION or client.member_id == UNKNOWN_MEMBER_ID
        if reset:
            client = replace(client, owned=EMPTY)  # onPartitionsLost
        else:
            if rebalance_protocol(client) is RebalanceProtocol.EAGER:
                revoked = client.owned
            else:
                revoked = frozenset(tp for tp in client.owned if tp[0] not in _ids(client, config))
            if config.commit_on_revoke:
                client, commit = _commit(client, revoked)
                if commit is not None:
                    bodies.append(commit)
            client = replace(client, owned=client.owned - revoked)  # onPartitionsRevoked
        client = replace(client, leader=False, needs_join_prepare=False)
    cooperative = rebalance_protocol(client) is RebalanceProtocol.COOPERATIVE
    subscription = ClassicSubscription(
        topics=client.subscription,
        owned_partitions=client.owned if client.kip429 else EMPTY,
        generation_id=client.generation_id if cooperative else client.assigned_generation,
        user_data=client.assigned,
    )
    req = JoinGroupRequest(
        member_id=client.member_id,
        instance_id=client.instance_id,
        protocols=client.assignors,
        subscription=subscription,
        rebalance_timeout_ms=config.rebalance_timeout_ms,
        session_timeout_ms=config.session_timeout_ms,
    )
    bodies.append(req)
    client = replace(
        client,
        status=S.PREPARING_REBALANCE,
        group_request=JOIN,
        rejoin_needed=False,
        assignment_stale=False,
    )
    return client, tuple(bodies)


def _ids(client: ClassicClient, config: Config) -> frozenset[str]:
    """The subscribed topics as the model names partitions (topic id = name for the
    classic family, which has no topic recreation)."""
    return client.subscription


def on_join_response(
    client: ClassicClient, resp: JoinGroupResponse, config: Config
) -> ClassicClient:
    """``JoinGroupResponseHandler``: on success the client takes the generation, member id
    and protocol and is COMPLETING_REBALANCE (the leader keeps the member list for its
    assignment); MEMBER_ID_REQUIRED joins again with the given id (KIP-394);
    UNKNOWN_MEMBER_ID resets the member id; retriable errors join again; FENCED_INSTANCE_ID
    and INCONSISTENT_GROUP_PROTOCOL are fatal."""
    if client.group_request != JOIN:
        return client
    client = replace(client, group_request=None)
    error = resp.error_code
    if error is ErrorCode.NONE:
        leader = resp.leader == resp.member_id
        return replace(
            client,
            status=S.COMPLETING_REBALANCE,
            generation_id=resp.generation_id,
            member_id=resp.member_id,
            protocol_name=resp.protocol_name,
            leader=leader,
            join_members=resp.members if leader else (),
        )
    if error is ErrorCode.MEMBER_ID_REQUIRED:
        return replace(_retry_join(client), member_id=resp.member_id, generation_id=NO_GENERATION)
    if error is ErrorCode.UNKNOWN_MEMBER_ID:
        return _reset(client, keep_member_id=False)
    if error in CLASSIC_FATAL_ERRORS:
        return _fatal(client, error)
    return _retry_join(client)


def leader_assignment(
    client: ClassicClient,
    members: tuple[JoinGroupResponseMember, ...],
    topics: Mapping[str, TopicMetadata],
    config: Config,
) -> FrozenMap[str, Assignment] | None:
    """The leader runs the selected assignor (``ConsumerCoordinator.onLeaderElected``) over
    every member's subscription: the ``sticky`` assignor reads the previous assignment in
    its user data, the others the owned partitions (KIP-429), both with the generation
    that goes with them. Byte code without KIP-429 reads no owned partitions and does not
    hold back moving partitions. Under COOPERATIVE an assignor other than the built-in
    ``cooperative-sticky`` is checked not to revoke and assign a partition in one round
    (``validateCooperativeAssignment``; skipped for the built-in one, KAFKA-13406): None
    when the check fails (``IllegalStateException``, the rebalance fails)."""
    name = client.protocol_name
    assert name is not None
    subscribed = {t for m in members for t in m.subscription.topics}
    partitions_per_topic = {
        topics[t].topic_id: topics[t].partitions for t in sorted(subscribed) if t in topics
    }
    subscriptions = {}
    for m in members:
        sub = m.subscription
        claims = sub.user_data if name == "sticky" else sub.owned_partitions
        if not client.kip429 and name != "sticky":
            claims = EMPTY
        subscriptions[m.member_id] = Subscription(
            member_id=m.member_id,
            instance_id=m.instance_id,
            topics=frozenset(topics[t].topic_id for t in sub.topics if t in topics),
            owned_partitions=claims,
            generation=sub.generation_id,
        )
    result = assign(
        name,
        partitions_per_topic=partitions_per_topic,
        subscriptions=subscriptions,
        claims=config.rules.classic_arbitrate_claims,
        withhold=client.kip429,
    )
    cooperative = rebalance_protocol(client) is RebalanceProtocol.COOPERATIVE
    if (
        cooperative
        and name not in COOPERATIVE_ASSIGNORS
        and validate_cooperative_assignment(subscriptions, result)
    ):
        return None
    return result


def sync_group(
    client: ClassicClient, topics: Mapping[str, TopicMetadata], config: Config
) -> tuple[ClassicClient, SyncGroupRequest | None]:
    """Send SyncGroup (``onJoinFollower`` / ``onLeaderElected``): the leader with every
    member's assignment. A leader whose assignment fails its check sends nothing and joins
    again (the exception fails the rebalance)."""
    assignments: FrozenMap[str, Assignment] = FrozenMap()
    if client.leader:
        computed = config.rules.classic_leader_assignment(
            client, client.join_members or (), topics, config
        )
        if computed is None:
            return _retry_join(client), None
        assignments = computed
    req = SyncGroupRequest(
        member_id=client.member_id,
        generation_id=client.generation_id,
        instance_id=client.instance_id,
        protocol_name=client.protocol_name,
        assignments=assignments,
    )
    return replace(client, group_request=SYNC, join_members=None), req


def on_sync_response(
    client: ClassicClient, resp: SyncGroupResponse, config: Config
) -> tuple[ClassicClient, OffsetCommitRequest | None]:
    """``SyncGroupResponseHandler`` then ``ConsumerCoordinator.onJoinComplete``: STABLE with the
    assignment. COOPERATIVE revokes what it owned and was not given (committing it first
    with ``commit_on_revoke``, as a revocation callback does) and, if anything was revoked,
    requests a follow-up rebalance; then it takes the added partitions. An assignment of
    topics it does not subscribe to makes it rejoin unchanged. Errors: REBALANCE_IN_PROGRESS
    (and coordinator errors) join again keeping the generation; ILLEGAL_GENERATION resets
    the generation, UNKNOWN_MEMBER_ID the member id too; FENCED_INSTANCE_ID is fatal."""
    if client.group_request != SYNC:
        return client, None
    client = replace(client, group_request=None)
    error = resp.error_code
    if error is ErrorCode.ILLEGAL_GENERATION:
        return _reset(client, keep_member_id=True), None
    if error is ErrorCode.UNKNOWN_MEMBER_ID:
        return _reset(client, keep_member_id=False), None
    if error in CLASSIC_FATAL_ERRORS:
        return _fatal(client, error), None
    if error is not ErrorCode.NONE:
        return _retry_join(client), None
    client = replace(client, status=S.STABLE, rejoin_needed=False, needs_join_prepare=True)
    assigned = resp.assignment
    if any(tp[0] not in _ids(client, config) for tp in assigned):
        return replace(client, rejoin_needed=True), None
    commit = None
    if rebalance_protocol(client) is RebalanceProtocol.COOPERATIVE:
        revoked = client.owned - assigned
        if revoked:
            if config.commit_on_revoke:
                client, commit = _commit(client, revoked)
            client = replace(client, owned=client.owned - revoked, rejoin_needed=True)
    client = replace(
        client, owned=assigned, assigned=assigned, assigned_generation=client.generation_id
    )
    return client, commit


# --------------------------------------------------------------------------- heartbeats, commits


def build_heartbeat(client: ClassicClient) -> tuple[ClassicClient, HeartbeatRequest]:
    """The heartbeat thread's Heartbeat at the current generation."""
    req = HeartbeatRequest(client.member_id, client.generation_id, client.instance_id)
    return replace(client, heartbeat_in_flight=True, heartbeat_generation=client.generation_id), req


def on_heartbeat_response(client: ClassicClient, resp: HeartbeatResponse) -> ClassicClient:
    """``HeartbeatResponseHandler``: REBALANCE_IN_PROGRESS makes a STABLE member rejoin
    (ignored while it is rebalancing); ILLEGAL_GENERATION resets the generation and
    UNKNOWN_MEMBER_ID the member id too — unless the client moved to another generation
    since it sent the heartbeat; FENCED_INSTANCE_ID is fatal."""
    if not client.heartbeat_in_flight:
        return client
    client = replace(client, heartbeat_in_flight=False)
    error = resp.error_code
    if error is ErrorCode.REBALANCE_IN_PROGRESS:
        return replace(client, rejoin_needed=True) if client.status is S.STABLE else client
    if error in CLASSIC_FATAL_ERRORS:
        return _fatal(client, error)
    if error in (ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNKNOWN_MEMBER_ID):
        if client.generation_id != client.heartbeat_generation:
            return client  # the generation changed since it was sent (generationUnchanged)
        return _reset(client, keep_member_id=error is ErrorCode.ILLEGAL_GENERATION)
    return client


def auto_commit(client: ClassicClient) -> tuple[ClassicClient, OffsetCommitRequest]:
    """Auto-commit the positions of everything consumed, at the current generation."""
    req = OffsetCommitRequest(client.member_id, client.generation_id, client.owned)
    return replace(client, commit_in_flight=True), req


def on_commit_response(client: ClassicClient, resp: OffsetCommitResponse | None) -> ClassicClient:
    """An OffsetCommit completed (``resp``) or timed out (``None``)
    (``ConsumerCoordinator.OffsetCommitResponseHandler``): REBALANCE_IN_PROGRESS requests a
    rejoin; UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION reset the generation of a member that
    is not rebalancing; FENCED_INSTANCE_ID is fatal."""
    if not client.commit_in_flight:
        return client
    client = replace(client, commit_in_flight=False)
    if resp is None:
        return client
    error = resp.error_code
    if error is ErrorCode.REBALANCE_IN_PROGRESS and client.status is S.STABLE:
        return replace(client, rejoin_needed=True)
    if error in CLASSIC_FATAL_ERRORS:
        return _fatal(client, error)
    if error in (ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNKNOWN_MEMBER_ID):
        if client.status is not S.STABLE:
            return client
        return _reset(client, keep_member_id=error is ErrorCode.ILLEGAL_GENERATION)
    return client


# --------------------------------------------------------------------------- leave, crash, restart


def leave(client: ClassicClient, config: Config) -> tuple[ClassicClient, tuple[Body, ...]]:
    """``close()``: commit, revoke everything (``onLeavePrepare``: lost if the generation was
    reset or a rebalance is in progress) and, for a dynamic member, send LeaveGroup
    (``maybeLeaveGroup``; a static member does not leave on close, KIP-345)."""
    bodies: list[Body] = []
    in_rebalance = client.status in (S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE)
    if client.generation_id != NO_GENERATION and not in_rebalance and config.commit_on_revoke:
        client, commit = _commit(client, client.owned)
        if commit is not None:
            bodies.append(commit)
    if client.instance_id is None and client.member_id != UNKNOWN_MEMBER_ID:
        bodies.append(LeaveGroupRequest(client.member_id, None))
    client = _out_of_group(client, rejoin_needed=True, needs_join_prepare=True)
    return _forget_requests(client), tuple(bodies)


def _forget_requests(client: ClassicClient) -> ClassicClient:
    """Responses to what the client sent before it left are read by nobody: Kafka matches
    them to requests (correlation ids, ``generationUnchanged``) and drops them; the model
    moves the client to a new connection."""
    return replace(client, connection=client.connection + 1)


def crash(client: ClassicClient) -> ClassicClient:
    """The process dies: nothing is consumed, nothing is sent any more."""
    return _out_of_group(client, alive=False, stalled=False, expired=False, fatal_error=None)


def restart(client: ClassicClient, assignors: tuple[str, ...], *, kip429: bool) -> ClassicClient:
    """A new process for the same client (a restart, or a rolling bounce that deploys
    ``assignors`` with byte code that knows KIP-429): no member id, no generation,
    nothing owned; a static member keeps its ``group.instance.id``."""
    gone = crash(client)
    return replace(
        gone,
        incarnation=client.incarnation + 1,
        alive=True,
        status=S.UNJOINED,
        assignors=assignors,
        kip429=kip429,
        assigned=EMPTY,
        assigned_generation=NO_GENERATION,
        rejoin_needed=True,
        needs_join_prepare=True,
    )


def stall(client: ClassicClient) -> ClassicClient:
    """The application thread hangs before sending SyncGroup (``StallAssignment``)."""
    return replace(client, stalled=True)


def disconnect(client: ClassicClient) -> ClassicClient:
    """A request timed out: the connection is closed and every request on it fails
    (``NetworkClient`` disconnect): a JoinGroup or SyncGroup is sent again (keeping member id
    and generation), a commit is given up."""
    if client.commit_in_flight:
        client = on_commit_response(client, None)
    if client.group_request is not None:
        client = _retry_join(client)
    return replace(
        client, heartbeat_in_flight=False, group_request=None, connection=client.connection + 1
    )
