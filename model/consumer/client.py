"""The KIP-848 consumer: membership state machine and the partitions it consumes.

Mirrors the Java client's ``AbstractMembershipManager`` / ``ConsumerMembershipManager``
and ``ConsumerHeartbeatRequestManager`` (docs/kafka-rules.md, Client state machine). The
client view matters to users: ``Client.owned`` is what the application is processing right
now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from model.ids import EMPTY, Assignment
from model.records import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    Client,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    SentFields,
    replace,
)
from model.status import FATAL_ERRORS, FENCING_ERRORS, ClientStatus, ErrorCode

if TYPE_CHECKING:
    from model.config import Config

S = ClientStatus

HEARTBEATING = frozenset({S.JOINING, S.RECONCILING, S.ACKNOWLEDGING, S.STABLE, S.LEAVING})
"""States in which the client sends heartbeats (``AbstractMembershipManager.shouldHeartbeatNow``
and the leave heartbeat of LEAVING)."""

IN_GROUP = frozenset({S.JOINING, S.RECONCILING, S.ACKNOWLEDGING, S.STABLE})
"""States that accept an assignment from a heartbeat response."""

ON_PARTITIONS_REVOKED = "onPartitionsRevoked"
ON_PARTITIONS_ASSIGNED = "onPartitionsAssigned"
ON_PARTITIONS_LOST = "onPartitionsLost"
RELEASE_ASSIGNMENT = "releaseAssignment"
"""The callbacks a ``ConsumerRebalanceListener`` runs (``releaseAssignment``: the
revocation before a leave, ``AbstractMembershipManager.signalMemberLeavingGroup``)."""


def member_id_for(name: str, incarnation: int) -> str:
    """The client-generated member id (KIP-1082) of a process incarnation."""
    return name if incarnation == 0 else f"{name}.{incarnation}"


def subscribe(client: Client) -> Client:
    """``subscribe()`` + poll: UNSUBSCRIBED → JOINING with epoch 0."""
    return replace(client, status=S.JOINING, member_epoch=0, sent=None, target=None)


def leave(client: Client, leave_epoch: int) -> Client:
    """``unsubscribe()``/``close()``: → PREPARE_LEAVING. ``leave_epoch`` is -1, or -2 for a
    static member that will come back (KIP-848 "Static Membership")."""
    return replace(client, status=S.PREPARE_LEAVING, leave_epoch=leave_epoch)


def start_release(client: Client, config: Config) -> tuple[Client, OffsetCommitRequest | None]:
    """PREPARE_LEAVING: run the revocation callback before leaving — a step of its own with
    ``config.callback_steps`` (finished by ``complete_callback``), else at once."""
    if config.callback_steps:
        return replace(client, callback=RELEASE_ASSIGNMENT), None
    return release_assignment(client)


def release_assignment(client: Client) -> tuple[Client, OffsetCommitRequest | None]:
    """PREPARE_LEAVING → LEAVING: commit, run onPartitionsRevoked and stop consuming
    (``AbstractMembershipManager.leaveGroup``)."""
    commit = None
    if client.owned and not client.commit_in_flight and client.member_epoch > 0:
        commit = OffsetCommitRequest(client.member_id, client.member_epoch, client.owned)
    return (
        replace(
            client,
            status=S.LEAVING,
            owned=EMPTY,
            target=None,
            reconciling=None,
            revoking=EMPTY,
            commit_in_flight=client.commit_in_flight or commit is not None,
        ),
        commit,
    )


def stall(client: Client) -> Client:
    """The application blocks in ``onPartitionsRevoked`` for good (``StallRevocation``)."""
    return replace(client, stalled=True)


def crash(client: Client) -> Client:
    """The process dies: nothing is consumed, nothing is sent any more."""
    return replace(
        client,
        alive=False,
        status=S.UNSUBSCRIBED,
        member_epoch=0,
        owned=EMPTY,
        target=None,
        reconciling=None,
        revoking=EMPTY,
        heartbeat_in_flight=False,
        commit_in_flight=False,
        sent=None,
        fatal_error=None,
        stalled=False,
        expired=False,
    )


def restart(client: Client) -> Client:
    """A new consumer instance for the same client: a new member id (KIP-1082), the same
    instance id, nothing owned, nothing in flight."""
    incarnation = client.incarnation + 1
    return replace(
        crash(client),
        incarnation=incarnation,
        member_id=member_id_for(client.name, incarnation),
        alive=True,
        status=S.JOINING,
        member_epoch=0,
    )


def change_subscription(client: Client, topics: frozenset[str]) -> Client:
    """``subscribe(newTopics)``: sent in the next heartbeat; the coordinator revokes
    what is no longer subscribed."""
    return replace(client, subscription=topics)


def change_instance_id(client: Client, instance_id: str, config: Config) -> Client:
    """The client takes another ``group.instance.id`` and rejoins with its member id
    (``ChangeInstanceId``; KAFKA-20747's trigger): like a fenced member it gives up its
    partitions (``onPartitionsLost``) and its next heartbeat is a join at epoch 0 carrying
    its member id and the new instance id."""
    fenced = replace(client, instance_id=instance_id, status=S.FENCED, member_epoch=0)
    return lose_partitions(fenced, config)


def change_server_assignor(client: Client, name: str) -> Client:
    """``group.remote.assignor`` changed (sent in the next heartbeat)."""
    return replace(client, server_assignor=name)


def reported_partitions(client: Client, config: Config) -> Assignment:
    """The partitions a heartbeat reports as owned: the last reconciled assignment
    (``AbstractMembershipManager.currentAssignment``, updated only when a reconciliation
    completes) — while one runs, what the client owned before it, the partitions it is
    still revoking included: a revocation is acknowledged only once its offsets are
    committed and ``onPartitionsRevoked`` returned (docs/fidelity.md C2). With
    ``config.report_pending_additions`` a client that still has to apply a target also
    reports the partitions it is about to add, so the coordinator never takes an
    unreported partition for a revoked one (docs/findings.md, F1)."""
    reconciled = client.owned | client.revoking if client.revoking else client.owned
    if (
        config.report_pending_additions
        and client.target is not None
        and client.status in (S.RECONCILING, S.ACKNOWLEDGING)
    ):
        return reconciled | client.target | (client.reconciling or EMPTY)
    return reconciled


def build_heartbeat(client: Client, config: Config) -> tuple[Client, ConsumerGroupHeartbeatRequest]:
    """Send a heartbeat (``ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData``).

    A full request after joining or an error; otherwise subscription, assignor and owned
    partitions only when changed since last sent. LEAVING sends the leave epoch and
    becomes UNSUBSCRIBED as soon as the leave heartbeat is sent; ACKNOWLEDGING becomes
    STABLE (or RECONCILING when a newer target is waiting).
    """
    if client.status is S.LEAVING:
        req = ConsumerGroupHeartbeatRequest(
            member_id=client.member_id,
            member_epoch=client.leave_epoch,
            instance_id=client.instance_id,
        )
        if client.poll_expired:  # STALE until the next poll, after onPartitionsLost
            stale = replace(client, status=S.STALE, member_epoch=0, heartbeat_in_flight=True)
            return lose_partitions(stale, config), req
        done = replace(
            client, status=S.UNSUBSCRIBED, member_epoch=0, heartbeat_in_flight=True, sent=None
        )
        return done, req
    sent = client.sent
    owned = reported_partitions(client, config)
    # A request at epoch 0 is a join and must carry every field
    # (``GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid``).
    full = sent is None or client.status is S.JOINING or client.member_epoch == 0
    req = ConsumerGroupHeartbeatRequest(
        member_id=client.member_id,
        member_epoch=0 if client.status is S.JOINING else client.member_epoch,
        instance_id=client.instance_id,
        rebalance_timeout_ms=config.rebalance_timeout_ms if full else -1,
        subscribed_topic_names=(
            client.subscription
            if full or sent is None or sent.subscribed_topic_names != client.subscription
            else None
        ),
        server_assignor=(
            client.server_assignor
            if full or sent is None or sent.server_assignor != client.server_assignor
            else None
        ),
        topic_partitions=(
            owned if full or sent is None or sent.topic_partitions != owned else None
        ),
        rack_id=client.rack if full else None,
        subscribed_topic_regex=(
            client.regex
            if client.regex is not None
            and (full or sent is None or sent.subscribed_topic_regex != client.regex)
            else None
        ),
    )
    status = client.status
    if status is S.ACKNOWLEDGING:
        status = S.STABLE if client.target == client.owned else S.RECONCILING
    updated = replace(
        client,
        status=status,
        heartbeat_in_flight=True,
        sent=SentFields(client.subscription, client.server_assignor, owned, client.regex),
    )
    return updated, req


def on_heartbeat_response(
    client: Client, resp: ConsumerGroupHeartbeatResponse, config: Config
) -> Client:
    """Handle a heartbeat response (``AbstractMembershipManager.onHeartbeatSuccess`` /
    ``onHeartbeatFailure``; docs/kafka-rules.md, Client state machine)."""
    if not client.heartbeat_in_flight:
        return client
    client = replace(client, heartbeat_in_flight=False)
    if resp.error_code is not ErrorCode.NONE:
        return on_heartbeat_error(client, resp.error_code, config)
    if client.status not in IN_GROUP or resp.member_epoch < 0:
        return client  # ignored in UNSUBSCRIBED, FENCED, FATAL, PREPARE_LEAVING, LEAVING
    client = replace(client, member_epoch=resp.member_epoch)
    if resp.assignment is None or resp.assignment == client.target:
        return client
    # A new target (Java bumps its local epoch, ``LocalAssignment.updateWith``) is never
    # "already reconciled": the client reconciles it and acknowledges with its owned
    # partitions even when they are unchanged — RECONCILING, also from ACKNOWLEDGING
    # (``processAssignmentReceived``); the owned partitions of the reconciliation just
    # completed go out with the next heartbeat.
    return replace(client, target=resp.assignment, status=S.RECONCILING)


def on_heartbeat_error(client: Client, error: ErrorCode, config: Config) -> Client:
    """FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID: lose everything and rejoin at epoch 0
    (``transitionToFenced``: ``onPartitionsLost``, then JOINING), or finish leaving;
    fatal errors end the membership."""
    if error in FENCING_ERRORS:
        if client.status in (S.PREPARE_LEAVING, S.LEAVING, S.UNSUBSCRIBED, S.STALE):
            status = S.STALE if client.status is S.STALE else S.UNSUBSCRIBED
            return replace(client, status=status, member_epoch=0, sent=None)
        fenced = replace(client, status=S.FENCED, member_epoch=0)
        return lose_partitions(fenced, config)
    if error in FATAL_ERRORS and client.status is not S.UNSUBSCRIBED:
        return replace(
            client,
            status=S.FATAL,
            owned=EMPTY,
            target=None,
            reconciling=None,
            revoking=EMPTY,
            sent=None,
            fatal_error=error,
        )
    return replace(client, sent=None)


def rejoin(client: Client) -> Client:
    """FENCED → JOINING after onPartitionsLost, same member id, epoch 0
    (``transitionToJoining``; a reconciliation still in progress must not be applied
    any more: ``rejoinedWhileReconciliationInProgress``)."""
    return replace(
        client,
        status=S.JOINING,
        member_epoch=0,
        rejoined_while_reconciling=client.reconciling is not None,
    )


def lose_partitions(client: Client, config: Config) -> Client:
    """Release everything with ``onPartitionsLost``: the application stops consuming at
    once; with ``config.callback_steps`` the callback runs as a step of its own (after
    the one that runs, if any), and what follows it — a rejoin, or waiting STALE for the
    next poll — happens when it finishes."""
    client = replace(client, owned=EMPTY, revoking=EMPTY, target=None, sent=None)
    if not config.callback_steps:
        return replace(client, reconciling=None)
    if client.callback is None:
        return replace(client, callback=ON_PARTITIONS_LOST)
    return replace(client, lost_queued=True)


def reconciliation_aborted(client: Client) -> bool:
    """Whether the reconciliation in progress must stop: the client left RECONCILING
    (fenced, leaving, stale) or rejoined meanwhile
    (``AbstractMembershipManager.maybeAbortReconciliation``)."""
    return client.status is not S.RECONCILING or client.rejoined_while_reconciling


def _reconciliation_done(client: Client) -> Client:
    return replace(client, reconciling=None, revoking=EMPTY, rejoined_while_reconciling=False)


def complete_callback(client: Client, config: Config) -> tuple[Client, OffsetCommitRequest | None]:
    """The application finishes its callback (``Config.callback_steps``) and the step that
    waited for it goes on (``revokeAndAssign``; ``transitionToFenced``; ``leaveGroup``):
    after ``onPartitionsRevoked`` the assignment is applied, after
    ``onPartitionsAssigned`` the client acknowledges — unless the reconciliation was
    aborted meanwhile; after ``onPartitionsLost`` a fenced client rejoins; after the
    release before a leave the client leaves. A queued ``onPartitionsLost`` starts next."""
    name = client.callback
    client = replace(client, callback=None)
    commit = None
    if name == ON_PARTITIONS_REVOKED:
        if reconciliation_aborted(client):
            client = _reconciliation_done(client)
        else:  # still reported as owned until the whole reconciliation completes
            client = replace(client, callback=ON_PARTITIONS_ASSIGNED)
    elif name == ON_PARTITIONS_ASSIGNED:
        if reconciliation_aborted(client) or client.reconciling is None:
            client = _reconciliation_done(client)
        else:
            client = replace(
                _reconciliation_done(client),
                owned=client.reconciling,
                status=S.ACKNOWLEDGING,
                sent=_resend_owned(client),
            )
    elif name == ON_PARTITIONS_LOST:
        if client.status is S.FENCED:
            client = rejoin(client)
    elif name == RELEASE_ASSIGNMENT:
        client, commit = _after_release(client)
    if client.callback is None and client.lost_queued:
        client = replace(client, callback=ON_PARTITIONS_LOST, lost_queued=False)
    return client, commit


def _after_release(client: Client) -> tuple[Client, OffsetCommitRequest | None]:
    """The release before a leave finished: a member still PREPARE_LEAVING leaves; one that
    was fenced (UNSUBSCRIBED) or failed (FATAL) meanwhile only drops its assignment and sends
    no leave heartbeat (``AbstractMembershipManager.transitionToSendingLeaveGroup`` does
    nothing in UNSUBSCRIBED or FATAL; ``ConsumerMembershipManagerTest.
    testFencingWhenStateIsPrepareLeaving``)."""
    if client.status is not S.PREPARE_LEAVING:
        return replace(client, owned=EMPTY, target=None, reconciling=None, revoking=EMPTY), None
    return release_assignment(client)


def poll_timer_expires(client: Client) -> Client:
    """The application did not poll in time: leave at once, without releasing first
    (``transitionToSendingLeaveGroup(dueToExpiredPollTimer=true)``); ``onPartitionsLost``
    follows the leave heartbeat. Until then the application may still be working on what
    it fetched: a zombie once its member is gone (``Client.expired``)."""
    static = client.instance_id is not None
    leave_epoch = LEAVE_GROUP_STATIC_MEMBER_EPOCH if static else LEAVE_GROUP_MEMBER_EPOCH
    return replace(
        client, status=S.LEAVING, leave_epoch=leave_epoch, poll_expired=True, expired=True
    )


def poll(client: Client) -> Client:
    """The next poll after the timer expired: a STALE client that released its
    partitions rejoins at epoch 0 (``maybeRejoinStaleMember`` → ``transitionToJoining``,
    which marks a reconciliation still in progress as not to be applied)."""
    return replace(rejoin(client), member_epoch=0, poll_expired=False, sent=None)


def reconcile(client: Client, config: Config) -> tuple[Client, OffsetCommitRequest | None]:
    """Apply the latest target (``AbstractMembershipManager.maybeReconcile``): stop consuming
    the revoked partitions and commit their offsets, then (once the commit completed)
    take the added partitions and acknowledge in the next heartbeat."""
    target = client.target
    assert target is not None
    revoked = client.owned - target
    if revoked and config.commit_on_revoke and client.member_epoch > 0:
        commit = OffsetCommitRequest(client.member_id, client.member_epoch, revoked)
        return (
            replace(
                client,
                owned=client.owned - revoked,
                reconciling=target,
                revoking=revoked,
                commit_in_flight=True,
            ),
            commit,
        )
    if config.callback_steps:  # revoke, then assign, each callback a step of its own
        first = ON_PARTITIONS_REVOKED if revoked else ON_PARTITIONS_ASSIGNED
        started = replace(
            client, owned=client.owned - revoked, reconciling=target, revoking=revoked
        )
        return replace(started, callback=first), None
    return (
        replace(
            client,
            owned=target,
            status=S.ACKNOWLEDGING,
            reconciling=None,
            sent=_resend_owned(client),
        ),
        None,
    )


def finish_reconcile(client: Client, config: Config) -> Client:
    """The revocation commit completed (or failed): onPartitionsRevoked is done, the added
    partitions are taken and the next heartbeat acknowledges. With
    ``config.callback_steps`` the revocation callback starts now — unless the
    reconciliation was aborted meanwhile (``maybeReconcile`` after the commit)."""
    if client.reconciling is None:
        return client
    if config.callback_steps:
        if reconciliation_aborted(client):
            return _reconciliation_done(client)
        if client.callback is None:
            return replace(client, callback=ON_PARTITIONS_REVOKED)
        return client
    return replace(
        client,
        owned=client.reconciling,
        reconciling=None,
        revoking=EMPTY,
        status=S.ACKNOWLEDGING if client.status is S.RECONCILING else client.status,
        sent=_resend_owned(client),
    )


def _resend_owned(client: Client) -> SentFields | None:
    """After a reconciliation the owned partitions are sent again in the next heartbeat,
    even if unchanged ("TopicPartitions — sent with the first heartbeat after a new
    assignment was reconciled", ``ConsumerHeartbeatRequestManager.HeartbeatState``)."""
    if client.sent is None:
        return None
    return replace(client.sent, topic_partitions=None)


def auto_commit(client: Client) -> tuple[Client, OffsetCommitRequest]:
    """Commit the positions of everything consumed, at the current member epoch."""
    req = OffsetCommitRequest(client.member_id, client.member_epoch, client.owned)
    return replace(client, commit_in_flight=True), req


def on_commit_response(client: Client, resp: OffsetCommitResponse | None, config: Config) -> Client:
    """An OffsetCommit completed (``resp``) or timed out (``None``)."""
    if not client.commit_in_flight:
        return client
    client = replace(client, commit_in_flight=False)
    if client.reconciling is not None:  # the commit a reconciliation waited for
        return finish_reconcile(client, config)
    return client


def disconnect(client: Client, config: Config) -> Client:
    """A request timed out: the connection is closed, every request on it fails, and the
    next heartbeat is full (``NetworkClient`` disconnect, then
    ``AbstractHeartbeatRequestManager.resetHeartbeatState``)."""
    if client.commit_in_flight:
        client = on_commit_response(client, None, config)
    return replace(client, heartbeat_in_flight=False, sent=None, connection=client.connection + 1)
