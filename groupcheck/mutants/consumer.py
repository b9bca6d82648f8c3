"""The KIP-848 consumer protocol's mutants: rules of the group coordinator
(``GroupMetadataManager``, ``CurrentAssignmentBuilder``) and of the client
(``AbstractMembershipManager``, ``ConsumerHeartbeatRequestManager``). Each is declared at its
function with ``@mutant(...)`` (``groupcheck.mutants.registry``); the catalogue collects this
module's ``REGISTRY`` first (``groupcheck.mutants.catalogue``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from groupcheck.mutants.registry import Registry
from groupcheck.mutants.scenarios import (
    COMMIT_EPOCHS,
    COMMITTING,
    CRASH_TWO,
    EPOCH_HISTORY,
    FAILOVER,
    LOSSY_TWO,
    REGEX,
    REJOIN,
    STATIC_TWO,
    TOPICS_TWO,
    TWO_ON_TWO,
)
from model.consumer import client as cl
from model.consumer import coordinator as co
from model.consumer import reconcile as rc
from model.consumer import target as tg
from model.ids import EMPTY, FrozenMap, TopicPartition
from model.presets import MUT2_CALLBACKS, MUT2_POLL
from model.records import (
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    Client,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Group,
    Member,
    TopicMetadata,
)
from model.sets import AnyOps
from model.status import ClientStatus, ErrorCode, MemberState

REGISTRY = Registry()
mutant = REGISTRY.mutant


# -------------------------------------------------------------------------------------- coordinator


@mutant(
    name="revoke-without-waiting",
    summary="assigns before the revocation is acknowledged",
    bug="KIP-848 revoke-before-assign rule",
    field="reconcile",
    config=TWO_ON_TWO,
    killed_by="OwnedPartitionsAreHeld",
    bmc_depth=2,
    tla="agreement",
)
@rc.kernel_rule
def revoke_without_waiting(ops: AnyOps, member: Any, /, **inputs: Any) -> Any:
    """Jumps to the target at once, releasing revoked partitions before the client
    acknowledged (the revoke-before-assign rule dropped): a step that would leave the
    member ``UNREVOKED_PARTITIONS`` moves it to the target epoch, ``STABLE``, with nothing
    pending. A kernel (``model/sets.py``): its symbolic variant is itself, run by the
    KIP-848 relation as a user's ``--rules`` kernel is (``transition.KERNEL_VARIANTS``)."""
    out = rc.reconcile_kernel(ops, member, **inputs)
    return ops.ite(
        ops.in_state(out, MemberState.UNREVOKED_PARTITIONS),
        lambda: ops.with_epoch(
            out, inputs["target_epoch"], state=ops.state(MemberState.STABLE), revoking=ops.empty()
        ),
        lambda: out,
    )


@mutant(
    name="ignore-partition-epochs",
    summary="hands out partitions not yet released",
    bug="KIP-848 reconciliation phase 3",
    field="reconcile",
    config=TWO_ON_TWO,
    killed_by="NoServerError",
    bmc_depth=2,
    tla="agreement",
)
@rc.kernel_rule
def ignore_partition_epochs(ops: AnyOps, member: Any, /, **inputs: Any) -> Any:
    """Hands out target partitions other members have not released yet (the partition
    epochs, ``withCurrentPartitionEpoch``, not consulted: nothing is held). A kernel, its
    own symbolic variant (``transition.KERNEL_VARIANTS``)."""
    return rc.reconcile_kernel(ops, member, **{**inputs, "held": ops.empty()})


@mutant(
    name="ack-ignored",
    summary="a revocation acknowledgement is never taken",
    bug="KAFKA-16249 (revocation acknowledgement missed)",
    field="reconcile",
    config=TWO_ON_TWO,
    killed_by="Convergence",
    lasso_depth=9,
    tla="spec",
)
@rc.kernel_rule
def ack_ignored(ops: AnyOps, member: Any, /, **inputs: Any) -> Any:
    """Never notices a revocation acknowledgement: a revoking member stays revoking. A
    kernel, its own symbolic variant (``transition.KERNEL_VARIANTS``)."""
    return ops.ite(
        ops.in_state(member, MemberState.UNREVOKED_PARTITIONS),
        lambda: member,
        lambda: rc.reconcile_kernel(ops, member, **inputs),
    )


@mutant(
    name="bookkeeping-drops-pending",
    summary="partition epochs of assigned and pending partitions updated separately",
    bug="KAFKA-16147",
    field="update_partition_epochs",
    config=CRASH_TWO,
    killed_by="HandOutOnlyReleased",
    bmc_depth=4,
    tla="spec",
)
def bookkeeping_drops_pending(
    partition_epochs: FrozenMap[TopicPartition, int], old: Member | None, new: Member | None
) -> FrozenMap[TopicPartition, int]:
    """KAFKA-16147: assigned and pending-revocation partitions updated separately and
    without checks — the new assigned entries are written, then the old pending entries
    deleted, even when they are the entries just written."""
    d = partition_epochs.as_dict()
    if old is not None:
        for tp in old.assigned_partitions:
            d.pop(tp, None)
    if new is not None:
        for tp in new.assigned_partitions:
            d[tp] = new.member_epoch
    if old is not None:
        for tp in old.partitions_pending_revocation:
            d.pop(tp, None)
    if new is not None:
        for tp in new.partitions_pending_revocation:
            d[tp] = new.member_epoch
    return FrozenMap(d)


@mutant(
    name="no-epoch-bump-on-fence",
    summary="no group-epoch bump when a member is fenced or expires",
    bug="KAFKA-20442 neighbourhood",
    field="remove_member",
    config=TWO_ON_TWO,
    killed_by="ValidTargetAssignment.Covers",
    bmc_depth=3,
    tla="agreement",
)
def no_epoch_bump_on_fence(group: Group, member: Member, config: Any) -> Group:
    """Fencing (leave, session or rebalance timeout) removes the member without bumping
    the group epoch, so no new target is computed."""
    out = co.remove_member(group, member, config)
    return replace(out, group_epoch=group.group_epoch)


@mutant(
    name="reject-epoch-zero-rejoin",
    summary="a fenced member cannot rejoin with epoch 0",
    bug="KAFKA-19233",
    field="check_member_epoch",
    config=LOSSY_TWO,
    killed_by="Convergence",
    lasso_depth=9,
    tla="spec",
    unstated_harm=(
        "breaks only Convergence, once a lost heartbeat response "
        "leaves a client rejoining at epoch 0 while its member is at a newer epoch; the "
        "ranking's fairness is on honest heartbeats (each member at the epoch the coordinator "
        "gave it), so it never reads that rejoin: under this variant every obligation is still "
        "proved"
    ),
)
def reject_epoch_zero_rejoin(
    member: Member, req: ConsumerGroupHeartbeatRequest, config: Any
) -> ErrorCode | None:
    """KAFKA-19233: a stored member rejoining with epoch 0 is fenced again."""
    if req.member_epoch == 0 and member.member_epoch != 0:
        return ErrorCode.FENCED_MEMBER_EPOCH
    return co.check_member_epoch(member, req, config)


@mutant(
    name="static-replacement-keeps-both",
    summary="static replacement keeps the old instance too",
    bug="KAFKA-8500 shape",
    field="replace_static_member",
    config=STATIC_TWO,
    killed_by="NoServerError",
    bmc_depth=3,
)
def static_replacement_keeps_both(
    group: Group, holder: Member, new_member_id: str, config: Any
) -> tuple[Group, Member | None, Member]:
    """Static replacement adds the new member id but leaves the old one in the group
    (KAFKA-8500 shape in the KIP-848 coordinator)."""
    copy = replace(holder, member_id=new_member_id, member_epoch=0, previous_member_epoch=0)
    pe = group.partition_epochs
    members = group.members.set(new_member_id, copy)
    old = group.members[holder.member_id]
    old = replace(old, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH)
    members = members.set(holder.member_id, old)
    target = group.target_assignment
    moved = target.get(holder.member_id)
    if moved is not None:
        target = target.set(new_member_id, moved)
    return (
        replace(group, members=members, partition_epochs=pe, target_assignment=target),
        copy,
        copy,
    )


@mutant(
    name="assignor-assigns-twice",
    summary="an assignor gives one partition to two members",
    bug="KIP-848 Assignment Process (cf. KAFKA-7026)",
    field="compute_target_assignment",
    config=TWO_ON_TWO,
    killed_by="ValidTargetAssignment.Unique",
    bmc_depth=2,
    tla="agreement",
)
def assignor_assigns_twice(
    group: Group, topics: Mapping[str, TopicMetadata], default_assignor: str
) -> Group:
    """An assignor that gives its first partition to every member as well."""
    return assign_first_to_every_member(
        tg.compute_target_assignment(group, topics, default_assignor)
    )


def assign_first_to_every_member(out: Group) -> Group:
    """What ``assignor_assigns_twice`` does to the assignor's output (BMC's replay applies
    it to the target of its path)."""
    every = sorted(tp for parts in out.target_assignment.values() for tp in parts)
    if not every:
        return out
    first = every[0]
    target = FrozenMap((mid, parts | {first}) for mid, parts in out.target_assignment.items())
    return replace(out, target_assignment=target)


def after_assignor(rules: Any) -> Callable[[Group], Group] | None:
    """What ``rules.compute_target_assignment`` does to the assignor's output beyond the
    assignor, for BMC's replay (``invariants.z3.proof.bmc.replay``), which installs the
    path's target (any valid assignor's) and then applies this part of the rule."""
    if rules.compute_target_assignment is assignor_assigns_twice:
        return assign_first_to_every_member
    return None


@mutant(
    name="no-bump-on-subscription-change",
    summary="a changed subscription does not bump the group epoch",
    bug="KAFKA-19891 shape",
    field="should_bump_group_epoch",
    config=TOPICS_TWO,
    killed_by="ValidTargetAssignment.OnlySubscribed",
    bmc_depth=2,
)
def no_bump_on_subscription_change(
    group: Group, old: Member | None, new: Member, config: Any
) -> bool:
    """Only new members bump the group epoch; a changed subscription does not."""
    if old is None:
        return co.should_bump_group_epoch(group, old, new, config)
    return False


@mutant(
    name="no-bump-on-metadata-change",
    summary="an added partition is not noticed",
    bug="KIP-848 Group Epoch triggers",
    field="on_metadata_change",
    config=TOPICS_TWO,
    killed_by="ValidTargetAssignment.Covers",
    bmc_depth=2,
)
def no_bump_on_metadata_change(group: Group, topic_name: str) -> Group:
    """A partition added to (or a subscribed topic recreated) is not noticed."""
    return group


@mutant(
    name="accept-commit-from-unknown-member",
    summary="offset commits from removed members accepted",
    bug="zombie commits (KIP-848 OffsetCommit API)",
    field="validate_offset_commit",
    config=COMMITTING,
    killed_by="OffsetCommitAtValidEpoch",
    bmc_depth=1,
    tla="spec",
)
@co.commit_kernel_rule
def accept_commit_from_unknown_member(ops: AnyOps, /, *, known: Any, **inputs: Any) -> Any:
    """Offset commits from member ids the group no longer has are accepted (zombies). A
    kernel of the offset-commit check (``model.consumer.coordinator.commit_kernel_rule``): its
    symbolic variant is itself (``transition.COMMIT_KERNEL_VARIANTS``)."""
    return ops.any_(co.validate_offset_commit_kernel(ops, known=known, **inputs), ops.not_(known))


@mutant(
    name="accept-stale-commit-epoch",
    summary="offset commits at a stale epoch accepted",
    bug="KIP-848 offset fencing (KAFKA-20066 reversed)",
    field="validate_offset_commit",
    config=COMMITTING,
    killed_by="OffsetCommitAtValidEpoch",
    bmc_depth=2,
    tla="spec",
)
@co.commit_kernel_rule
def accept_stale_commit_epoch(
    ops: AnyOps, /, *, epoch: Any, known: Any, nobody: Any, **inputs: Any
) -> Any:
    """Offset commits at any epoch of a known member are accepted. A kernel of the
    offset-commit check, its own symbolic variant (``transition.COMMIT_KERNEL_VARIANTS``)."""
    return ops.any_(ops.all_(ops.lt(epoch, 0), nobody), known)


# ------------------------------------------------------------------------------------------- client


@mutant(
    name="client-acks-before-revoking",
    summary="the client acknowledges before it stops consuming",
    bug="KAFKA-20332",
    field="client_build_heartbeat",
    config=TWO_ON_TWO,
    killed_by="OwnedPartitionsAreHeld",
    bmc_depth=5,
    tla="agreement",
)
def client_acks_before_revoking(
    client: Client, config: Any
) -> tuple[Client, ConsumerGroupHeartbeatRequest]:
    """While reconciling, the client reports its new target as owned before it stopped
    consuming the revoked partitions (the acknowledgement races the revocation; cf.
    KAFKA-20332)."""
    new, req = cl.build_heartbeat(client, config)
    if client.status is ClientStatus.RECONCILING and client.target is not None:
        req = replace(req, topic_partitions=client.target)
    return new, req


@mutant(
    name="adopt-negative-epoch",
    summary="a late leave response sets epoch -1 on a joining client",
    bug="KAFKA-19335",
    field="client_on_heartbeat_response",
    config=REJOIN,
    killed_by="ClientEpochMonotone",
    bmc_depth=4,
    tla="agreement",
)
def adopt_negative_epoch(
    client: Client, resp: ConsumerGroupHeartbeatResponse, config: Any
) -> Client:
    """KAFKA-19335: a leave response (epoch -1) arriving after the application subscribed
    again overwrites the joining client's epoch."""
    out = cl.on_heartbeat_response(client, resp, config)
    if resp.error_code is ErrorCode.NONE and resp.member_epoch < 0 and client.heartbeat_in_flight:
        return replace(out, member_epoch=resp.member_epoch)
    return out


@mutant(
    name="callback-ignores-abort",
    summary="a reconciliation is applied after its member was fenced, left or rejoined",
    bug="AbstractMembershipManager.maybeAbortReconciliation dropped",
    field="client_complete_callback",
    config=MUT2_CALLBACKS,
    killed_by="OwnedPartitionsAreHeld",
    bmc_depth=6,
)
def callback_ignores_abort(client: Client, config: Any) -> tuple[Client, Any]:
    """The end of a rebalance callback applies its reconciliation even when the client
    was fenced, left or rejoined meanwhile (``maybeAbortReconciliation`` dropped)."""
    if client.callback in (cl.ON_PARTITIONS_REVOKED, cl.ON_PARTITIONS_ASSIGNED):
        pretend = replace(client, status=ClientStatus.RECONCILING, rejoined_while_reconciling=False)
        done, commit = cl.complete_callback(pretend, config)
        if client.status is not ClientStatus.RECONCILING and done.callback is None:
            done = replace(done, status=ClientStatus.ACKNOWLEDGING)
        return done, commit
    return cl.complete_callback(client, config)


@mutant(
    name="poll-timeout-keeps-partitions",
    summary="a client whose poll timer expired keeps its partitions into its rejoin",
    bug="AbstractMembershipManager.transitionToStale without onPartitionsLost",
    field="client_build_heartbeat",
    config=MUT2_POLL,
    killed_by="JoiningClientOwnsNothing",
    bmc_depth=5,
)
def poll_timeout_keeps_partitions(client: Client, config: Any) -> tuple[Client, Any]:
    """A client whose poll timer expired leaves the group but never runs
    onPartitionsLost: it keeps its partitions into its rejoin."""
    new, request = cl.build_heartbeat(client, config)
    if client.poll_expired and new.status is ClientStatus.STALE:
        new = replace(new, owned=client.owned, callback=None, lost_queued=False)
    return new, request


# -------------------------------------------------------- KIP-1251 epochs, failover, regex, commits


@mutant(
    name="strict-commit-epoch",
    summary="commits at an older epoch refused although the member held the partitions",
    bug="KAFKA-20066 (KIP-1251, Kafka 4.3)",
    field="validate_offset_commit",
    config=COMMIT_EPOCHS,
    killed_by="HolderCommitsAccepted",
    bmc_depth=3,
)
@co.commit_kernel_rule
def strict_commit_epoch(ops: AnyOps, /, **inputs: Any) -> Any:
    """Kafka ≤ 4.2's strict epoch equality kept where KIP-1251 assignment epochs are
    recorded: a commit at an older epoch is refused even for partitions the member held
    since then (KAFKA-20066) — the check with nothing counted as held. A kernel of the
    offset-commit check, its own symbolic variant (``transition.COMMIT_KERNEL_VARIANTS``)."""
    return co.validate_offset_commit_kernel(ops, **{**inputs, "held": ops.false()})


@mutant(
    name="stamp-request-epoch",
    summary="a partition's KIP-1251 assignment epoch is the member's epoch before it was assigned",
    bug="KIP-1251 (CurrentAssignmentBuilder stamps the target assignment epoch; KAFKA-20066)",
    field="write_member",
    config=EPOCH_HISTORY,
    killed_by="AssignmentEpochHolderUnique",
    outside="BMC's symbolic states keep no history of the assignment epochs handed out "
    "(ghost Group.assignment_history), which AssignmentEpochHolderUnique and "
    "EpochCommitFromHolder read; prove keeps it (prove --preset MUT2_EPOCH_HISTORY "
    "--variant stamp-request-epoch)",
)
def stamp_request_epoch(group: Group, old: Member | None, new: Member, config: Any) -> Group:
    """KIP-1251 assignment epochs stamped with the member epoch the member had before the
    update (the epoch of the heartbeat that brought the partition; 0 for a join) instead of
    the epoch it is assigned at (``CurrentAssignmentBuilder.computeNextAssignment`` stamps
    a newly assigned partition with the target assignment epoch; KAFKA-20066): a partition
    that moves to a member can carry an epoch its previous holder was stamped with."""
    written = co.write_member(group, old, new, config)
    if not config.assignment_epochs:
        return written
    member = written.members[new.member_id]
    before = old.member_epoch if old is not None else 0
    kept = old.assigned_partitions if old is not None else EMPTY
    epochs = FrozenMap(
        (
            tp,
            max(before, 0) if tp in member.assigned_partitions and tp not in kept else epoch,
        )
        for tp, epoch in member.assignment_epochs.items()
    )
    if epochs == member.assignment_epochs:
        return written
    stamped = replace(member, assignment_epochs=epochs)
    return replace(written, members=written.members.set(new.member_id, stamped))


@mutant(
    name="failover-drops-pending-revocation",
    summary="a coordinator failover forgets the partitions members are still revoking",
    bug="ConsumerGroupCurrentMemberAssignment record without PartitionsPendingRevocation",
    field="rebuild_group",
    config=FAILOVER,
    killed_by="OwnedPartitionsAreHeld",
    bmc_depth=4,
)
def failover_drops_pending_revocation(group: Group, config: Any) -> Group:
    """A failover loses the partitions members were still revoking (a current-assignment
    record without its pending revocations): the new coordinator takes them for free."""
    rebuilt = co.rebuild_group(group, config)
    members = FrozenMap(
        (mid, replace(m, partitions_pending_revocation=EMPTY)) for mid, m in rebuilt.members.items()
    )
    partition_epochs = FrozenMap(
        (tp, m.member_epoch) for m in members.values() for tp in sorted(m.assigned_partitions)
    )
    return replace(rebuilt, members=members, partition_epochs=partition_epochs)


@mutant(
    name="regex-resolution-without-bump",
    summary="a regex resolution that changes the subscribed topics triggers no rebalance",
    bug="GroupMetadataManager.handleRegularExpressionsResult without the epoch bump",
    field="resolve_regular_expressions",
    config=REGEX,
    killed_by="ValidTargetAssignment.Covers",
    bmc_depth=2,
)
def regex_resolution_without_bump(group: Group, topics: Any, config: Any) -> Group:
    """A new resolution of the regular expressions is stored without bumping the group
    epoch: no new target is computed for the topics it adds or drops."""
    resolved = co.resolve_regular_expressions(group, topics, config)
    return replace(resolved, group_epoch=group.group_epoch)


@mutant(
    name="ack-while-revoking",
    summary="a revocation is reported done while its offsets are still being committed",
    bug="ConsumerHeartbeatRequestManager reporting consumption, not currentAssignment",
    field="client_build_heartbeat",
    config=TWO_ON_TWO,
    killed_by="RevokedBeforeReassigned",
    bmc_depth=12,
)
def ack_while_revoking(client: Client, config: Any) -> tuple[Client, Any]:
    """The heartbeat reports partitions being revoked as gone while their offsets are
    still being committed: the coordinator releases them before the revocation ends
    (the client reports what it consumes, not its last reconciled assignment)."""
    new, request = cl.build_heartbeat(client, config)
    if request.topic_partitions is not None and client.revoking:
        early = request.topic_partitions - client.revoking
        return new, replace(request, topic_partitions=early)
    return new, request
