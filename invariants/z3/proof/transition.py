"""The symbolic transition relation of the KIP-848 coordinator core.

``relation(pre, post, options)`` is a disjunction with one disjunct per *action family*,
named after the model's actions (``model.actions``): ``DeliverMessage.heartbeat`` (a
ConsumerGroupHeartbeat reaching the coordinator: validation, member-epoch check,
subscription update, group-epoch bump, target assignment, ``CurrentAssignmentBuilder``
reconciliation, partition-epoch bookkeeping), ``DeliverMessage.leave``,
``DeliverMessage.offset_commit``, ``ComputeTargetAssignment``, ``SessionTimeout``,
``RebalanceTimeout``, ``MetadataChange`` (every action that changes topics or regular
expression resolutions), ``CoordinatorFailover``, ``CoordinatorLoaded`` and
``Unchanged`` (every action that leaves the coordinator's group as it is: client steps,
sends, losses, request timeouts, responses).

Each family follows ``model.consumer.coordinator`` and ``model.consumer.reconcile`` rule by rule;
where the model depends on something the abstraction does not keep, the family takes it as a free
*parameter* (a Z3 constant or function named ``<family>.<name>``), which makes the
relation an over-approximation of the model:

* a request is any request (member, epoch, owned partitions or none, subscription), as
  long as it is one the model's clients can send — the assumptions on the environment
  are that offset commits carry a positive member epoch (the Java client commits only at
  epoch > 0: ``model/consumer/client.py``) and, with static members and no ``ChangeInstanceId``
  (``Options.instance_changes``), that a member's request carries its own instance id;
* the target assignment is any *valid* target (``ValidTargetAssignment.Unique`` and
  ``OnlySubscribed``): a proof covers every assignor that satisfies them;
* the group-epoch bump of a heartbeat is free, except that a changed subscription forces
  it (a changed preferred server assignor may bump it too);
* a timer may fire for any member; a metadata change may change every member's
  subscribed partitions (and then bumps the group epoch, as ``on_metadata_change`` and
  ``resolve_regular_expressions`` do), bump the group epoch anyway and drop committed
  offsets.

With ``Options.assignment_epochs`` (a configuration recording KIP-1251 assignment epochs)
the states keep them (``SymState.since``, ``holder_rejected``): the heartbeat stamps them,
the offset commit accepts an older epoch by them and records a refused holder's commit,
every other family keeps them. Without it no formula mentions them.

With ``Options.static_members`` (a configuration with instance ids) the states keep each
member's instance id (``SymState.instance``): a heartbeat carries one and follows
``resolve_member``'s static branches — a join replacing a holder that left with -2
(``replace_static_member``, an intermediate group inside the family) or refused — a leave
is checked against the static-member index, and the -2 temporary leave is a family of its
own, ``DeliverMessage.static_leave``. Without it no formula mentions instance ids and the
relation is the dynamic one, family for family.

With ``Options.offset_expiry`` (a configuration allowing ``ExpireOffsets``, KIP-211) the
states keep which partitions exist (``SymState.present``) and ``ExpireOffsets`` is a family:
the offsets of partitions no member subscribes to may expire, with no wall-clock time (the
retention is taken to have passed whenever the rule allows it, as the model does). With
``Options.group_deletion`` (``DeleteGroup`` allowed, or expired groups deleted) the states
keep ``deleted`` and the ``deletions`` ghost, ``DeleteGroup`` is a family (refused unless
the group is empty), an expiry may delete the emptied group, and a join at epoch 0
creates a deleted group again. Without them the relation is today's, family for family.

With ``Options.assignor_offload`` (KIP-1263 "Assignment Offload"; a configuration with
``assignor_offload``) the states keep the assignor runs in flight (``SymState.runs``): a
heartbeat that needs a new target starts a run instead of installing one
(``target.start_assignor_run``), a family of its own, ``CompleteAssignorRun``, installs
the oldest run (``target.install_assignor_run``), and the load after a failover drops them.
With group deletion too, a deletion marks every run in flight as its deleted group's
(``RunSlot.deleted``, ``AssignorRun.group_deleted``) and ``CompleteAssignorRun`` discards
such a run. Without it no formula mentions runs.

With ``Options.batching`` (KIP-1263 "Assignment Batching"; a positive
``Config.effective_assignment_interval_ms``) the states keep whether the assignment
interval is pending since the last computation (``SymState.interval_pending``): a heartbeat
computes a new target only when it is not (``target.assignment_interval_open``), an inline
computation starts it (``target.record_assignment_time``), so does an installed run with
offload too, a realigned emptied group and a deleted one clear it (``AssignmentTimestamp``
0), and a family of its own, ``AssignmentIntervalElapses``, lets it pass — logical time,
as the model has it. Without it no formula mentions the interval.

Given its parameters, every family is deterministic: the tests compare its successor
with the Python model's (tests/invariants/z3/proof/test_proof.py).

``Options.variant`` names a mutant of ``groupcheck/mutants/catalogue.py`` encoded as a
variant of the symbolic rule it breaks (``VARIANTS``), so that a broken rule can be shown
to turn a proof into a counterexample to induction. A mutant of the reconciliation is no
branch here: it is a kernel (``KERNEL_VARIANTS``), which the heartbeat runs as it runs a
user's ``--rules`` kernel (``Options.kernel``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import z3

from invariants.z3.proof.state import (
    MEMBER,
    MEMBER_RELATIONS,
    PARTITION,
    RUN_SLOTS,
    STABLE,
    BoolRef,
    ExprRef,
    RunSlot,
    SymState,
)
from invariants.z3.proof.z3sets import Z3SETS, MemberTerm, Set
from invariants.z3.proof.z3sets import if_member as _if
from model.actions import (
    Action,
    AddPartitions,
    AssignmentIntervalElapses,
    ChangePartitionRacks,
    CompleteAssignorRun,
    ComputeTargetAssignment,
    CoordinatorFailover,
    CoordinatorLoaded,
    CreateTopic,
    DeleteGroup,
    DeleteTopic,
    DeliverMessage,
    ExpireOffsets,
    RebalanceTimeout,
    RecreateTopic,
    ResolveRegularExpressions,
    SessionTimeout,
)
from model.config import Config
from model.consumer.coordinator import validate_offset_commit_kernel
from model.consumer.reconcile import reconcile_kernel
from model.records import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupHeartbeatRequest,
    OffsetCommitRequest,
)

VARIANTS = {
    "ignore-partition-epochs": "reconciliation hands out partitions another member still "
    "holds (the partition epochs are not consulted)",
    "bookkeeping-drops-pending": "partition epochs of assigned and pending partitions are "
    "updated separately and without checks (KAFKA-16147)",
    "accept-stale-commit-epoch": "offset commits at a stale member epoch are accepted",
    "accept-commit-from-unknown-member": "offset commits from member ids the group no "
    "longer has are accepted",
    "revoke-without-waiting": "a reconciliation that would leave the member revoking "
    "(UNREVOKED_PARTITIONS) moves it to the target epoch at once, STABLE, with nothing "
    "pending",
    "no-epoch-bump-on-fence": "a leave or timer removes the member without bumping the group epoch",
    "assignor-assigns-twice": "the assignor's first partition (lowest ``partition_rank``) "
    "is added to every member's target",
    "no-bump-on-subscription-change": "only a new member's heartbeat bumps the group epoch; "
    "a stored member's changed subscription does not",
    "failover-drops-pending-revocation": "a new coordinator loads the members without their "
    "partitions pending revocation (partition epochs from the assigned partitions only)",
    "no-bump-on-metadata-change": "a metadata change never bumps the group epoch, whatever "
    "it does to the members' subscribed partitions",
    "regex-resolution-without-bump": "a metadata change (a new resolution of the regular "
    "expressions among them) never bumps the group epoch",
    # Over static members (Options.static_members).
    "static-replacement-keeps-both": "a static join replacing a holder that left with -2 "
    "adds the copy at epoch 0 but keeps the holder in the group, its partition epochs "
    "untouched (KAFKA-8500 shape)",
    # The client layer's (invariants.z3.proof.bmc_clients.CLIENT_VARIANTS): BMC unrolls it
    # for these; the coordinator's families are the reference ones.
    "client-acks-before-revoking": "while RECONCILING, a client's heartbeat reports the "
    "received target as owned (the acknowledgement races the revocation)",
    "ack-while-revoking": "a client's heartbeat reports the partitions being revoked as gone "
    "while their offsets are still being committed",
    "adopt-negative-epoch": "the response to a client's leave heartbeat (epoch -1) sets the "
    "client's member epoch (KAFKA-19335)",
    "poll-timeout-keeps-partitions": "a client whose poll timer expired keeps its "
    "partitions when its leave heartbeat makes it STALE (no onPartitionsLost), and into its "
    "rejoin",
    "callback-ignores-abort": "the end of a client's rebalance callback applies its "
    "reconciliation although the client was fenced, left or rejoined meanwhile "
    "(maybeAbortReconciliation dropped)",
    # Liveness only: found as lassos of the client layer (invariants.z3.proof.bmc_lasso).
    "ack-ignored": "a member revoking (UNREVOKED_PARTITIONS) stays as it is, whatever it "
    "reports: its revocation acknowledgement is never taken",
    "reject-epoch-zero-rejoin": "a heartbeat at epoch 0 from a member whose epoch is not 0 is "
    "fenced (FENCED_MEMBER_EPOCH): a fenced member cannot rejoin (KAFKA-19233)",
    # Over the KIP-1251 assignment epochs (Options.assignment_epochs).
    "strict-commit-epoch": "an offset commit at an older epoch is refused although its "
    "member held every partition of it since then (KAFKA-20066)",
    # Over KIP-211 offset expiry and group deletion (Options.offset_expiry,
    # Options.group_deletion).
    "expire-by-commit-time": "any committed offset may expire, also one of a topic a member "
    "of the group subscribes to (KAFKA-4682, before KIP-211)",
    "delete-non-empty-group": "DeleteGroups deletes the group whatever its members "
    "(ConsumerGroup.validateDeleteGroup without NON_EMPTY_GROUP)",
    # Over KIP-1263 assignor offload (Options.assignor_offload).
    "two-runs-in-flight": "a heartbeat that needs a new target starts another assignor run "
    "although one is in flight",
    "install-without-epoch": "a completed assignor run's result is installed but the "
    "assignment epoch is left where it was",
    "install-without-reapplying-removals": "a completed assignor run is installed with the "
    "entries of members that left or were fenced while it ran",
    "install-before-static-replacement": "a completed assignor run is installed as computed "
    "before a static member was replaced: the old member id's entry is not moved to the new "
    "one (KAFKA-20292)",
    "install-run-after-deletion": "a completed assignor run is installed although its group "
    "was deleted while it ran: its result lands in the group created again under the same id",
}
"""The catalogue mutants (``groupcheck.mutants``) this encoding has a symbolic variant of,
each named as its mutant. The classic coordinator's variants are
``classic_transition.VARIANTS``, its clients' ``classic_clients.CLIENT_VARIANTS``, a mixed
group's ``mixed_transition.VARIANTS``; a catalogue mutant none of them has says why on its
entry (``Mutant.outside``; docs/invariants.md, "Not covered yet"), and the depth BMC finds
a variant at is the entry's ``Mutant.bmc_depth``."""

KERNEL_VARIANTS = frozenset({"revoke-without-waiting", "ignore-partition-epochs", "ack-ignored"})
"""The variants that are patches of the reconciliation kernel: their mutant replaces
``Rules.reconcile`` by a kernel written against ``model/sets.py``
(``model.consumer.reconcile.kernel_rule``), and the relation runs that kernel
(``Options.kernel``, read from the mutant's rules) — no branch of the relation reads these
names, so the explicit mutant and its variant are one function."""

COMMIT_KERNEL_VARIANTS = frozenset(
    {"accept-stale-commit-epoch", "accept-commit-from-unknown-member", "strict-commit-epoch"}
)
"""The variants that are patches of the offset-commit check: their mutant replaces
``Rules.validate_offset_commit`` by a kernel written against ``model/sets.py``
(``model.consumer.coordinator.commit_kernel_rule``), and the OffsetCommit runs that kernel
(``Options.commit_kernel``) — no branch of the relation reads these names."""

STATIC_VARIANTS = frozenset({"static-replacement-keeps-both"})
"""The variants of a rule on static members: a variant only where
``Options.static_members`` (BMC or ``prove`` on a configuration with instance ids)."""

EXPIRY_VARIANTS = frozenset({"expire-by-commit-time"})
"""The variants of the offset-expiry rule: a variant only where ``Options.offset_expiry``."""

DELETION_VARIANTS = frozenset({"delete-non-empty-group"})
"""The variants of the DeleteGroups rule: a variant only where ``Options.group_deletion``."""

OFFLOAD_VARIANTS = frozenset(
    {
        "two-runs-in-flight",
        "install-without-epoch",
        "install-without-reapplying-removals",
        "install-before-static-replacement",
        "install-run-after-deletion",
    }
)
"""The variants of a KIP-1263 offload rule: a variant only where ``Options.assignor_offload``
(BMC or ``prove --agreement`` on a configuration with assignor offload;
``install-run-after-deletion`` with group deletion too)."""

EPOCH_VARIANTS = frozenset({"strict-commit-epoch"})
"""The variants of a rule that reads the KIP-1251 assignment epochs: a variant only where
``Options.assignment_epochs`` (BMC on a configuration that records them; ``prove``'s
obligations do not read them)."""

HISTORY_VARIANTS: dict[str, str] = {
    "stamp-request-epoch": "a partition's KIP-1251 assignment epoch is the member's epoch "
    "before it was assigned (0 for a join), not the epoch it is assigned at (KAFKA-20066)",
}
"""The variants of a rule whose harm only the KIP-1251 assignment history shows
(``AssignmentEpochHolderUnique``, ``EpochCommitFromHolder``): ``prove`` keeps the history
(``SymState.history``) on a configuration with assignment epochs, BMC does not, so they are
``prove``'s only (``prove --preset MUT2_EPOCH_HISTORY --variant M``) and outside the
relations for BMC (their catalogue entries' ``Mutant.outside``)."""


@dataclass(frozen=True)
class Options:
    """The ``Config`` switches the core reads (docs/kafka-rules.md), and a variant."""

    compute_target_in_heartbeat: bool = True
    reconcile_while_assigning: bool = True
    rejoin_with_epoch_zero: bool = True
    realign_empty_group: bool = False
    static_rejoin_same_member_id: bool = True
    assignment_epochs: bool = False
    """KIP-1251: the states keep each member's assignment epochs (``SymState.since``) and
    the ``holder_rejected`` ghost, the heartbeat stamps them, an offset commit at an older
    epoch is judged by them. Off, the relation does not mention them."""
    static_members: bool = False
    """Static membership (a configuration with instance ids): the states keep each member's
    instance id (``SymState.instance``), a heartbeat carries one and follows
    ``resolve_member``'s static branches (a replacement of a holder that left with -2),
    a leave is checked against the static-member index, and the -2 temporary leave is a
    family of its own (``DeliverMessage.static_leave``). Off, the relation does not
    mention instance ids."""
    instance_changes: bool = False
    """A client may take another instance id (``ChangeInstanceId``). Off, the relation
    assumes of static members' requests what the model's clients do: a request of a member
    of the group carries the instance id the member has (a client's instance id is
    fixed; a new process joins under a new member id, KIP-1082)."""
    offset_expiry: bool = False
    """KIP-211 offset expiry (a configuration allowing ``ExpireOffsets``): the states keep
    which partitions exist (``SymState.present``), and ``ExpireOffsets`` is a family. Off,
    the relation does not mention them."""
    group_deletion: bool = False
    """Group deletion (a configuration allowing ``DeleteGroup`` or deleting expired
    groups): the states keep ``deleted`` and the ``deletions`` ghost, ``DeleteGroup`` is a
    family, a join at epoch 0 creates a deleted group again. Off, the relation does not
    mention them."""
    delete_expired_groups: bool = False
    """``Config.delete_expired_groups``: an expiry that leaves an empty group without
    offsets deletes it (``coordinator.maybe_delete_expired_group``)."""
    new_group_epoch: int = 0
    """The group and assignment epoch of a group as the coordinator creates it
    (``coordinator.new_group``: 1 under ``epoch_layout = "kafka-4.3"``), which a deletion
    leaves."""
    variant: str | None = None
    kernel: Callable[..., Any] | None = None
    """The reconciliation kernel the heartbeat runs (``model.consumer.reconcile.reconcile_kernel``
    when None): a replacement written against ``model/sets.py``
    (``model.consumer.reconcile.kernel_rule``) — a user's (``--rules``) or, for a variant of
    ``KERNEL_VARIANTS``, its mutant's — read from ``Config.rules.reconcile``."""
    commit_kernel: Callable[..., Any] | None = None
    """The offset-commit check the OffsetCommit runs
    (``model.consumer.coordinator.validate_offset_commit_kernel`` when None): a replacement written
    against ``model/sets.py`` (``model.consumer.coordinator.commit_kernel_rule``) — for a variant
    of ``COMMIT_KERNEL_VARIANTS``, its mutant's — read from
    ``Config.rules.validate_offset_commit``."""
    assignor_offload: bool = False
    """KIP-1263 assignor offload: the states keep the assignor runs in flight
    (``SymState.runs``, ``RUN_SLOTS`` slots), a heartbeat that needs a new target starts a
    run instead of installing one, and ``CompleteAssignorRun`` installs the oldest run.
    Off, the relation does not mention runs."""
    offload_discard_stale: bool = False
    """``Config.offload_stale_run == "discard"``: a run whose epoch the group passed while it
    ran is discarded on completion."""
    batching: bool = False
    """KIP-1263 assignment batching (a positive ``Config.effective_assignment_interval_ms``):
    the states keep ``interval_pending``, the heartbeat's target computation is gated on it
    and ``AssignmentIntervalElapses`` is a family. Off, the relation does not mention the
    interval."""
    assignor_covers: bool = False
    """Assume also that a new target gives every subscribed partition to some member
    (``ValidTargetAssignment.Covers``): every assignor of the model does, and BMC reads
    ``Covers`` under this assumption. The proofs leave it out (a wider relation)."""

    def __post_init__(self) -> None:
        if self.static_members and self.assignment_epochs:
            raise ValueError(
                "static membership and KIP-1251 assignment epochs together are not encoded"
            )
        if self.variant in HISTORY_VARIANTS and not self.assignment_epochs:
            raise ValueError(
                f"{self.variant!r} is a variant over the KIP-1251 assignment history, which "
                "only states with assignment epochs keep"
            )
        if (
            self.variant is not None
            and self.variant not in VARIANTS
            and self.variant not in HISTORY_VARIANTS
        ):
            raise ValueError(
                f"no symbolic variant of {self.variant!r}; known: {', '.join(VARIANTS)}"
            )
        if self.variant in KERNEL_VARIANTS and self.kernel is None:
            raise ValueError(
                f"{self.variant!r} is a patch of the reconciliation kernel: the relation runs "
                "its mutant's kernel (Options.kernel; Options.of reads it from the mutant's "
                "rules), none was given"
            )
        if self.variant in COMMIT_KERNEL_VARIANTS and self.commit_kernel is None:
            raise ValueError(
                f"{self.variant!r} is a patch of the offset-commit check: the relation runs "
                "its mutant's kernel (Options.commit_kernel; Options.of reads it from the "
                "mutant's rules), none was given"
            )

    @property
    def run_slots(self) -> int:
        """The run slots of the states (``SymState.runs``): none without offload;
        ``RUN_SLOTS`` (two: the reference keeps at most one run, so the second slot shows
        whether a rule starts another); four under ``two-runs-in-flight``, whose runs pile
        up (a heartbeat starting a run beyond them is outside the relation)."""
        if not self.assignor_offload:
            return 0
        return 2 * RUN_SLOTS if self.variant == "two-runs-in-flight" else RUN_SLOTS

    @staticmethod
    def of(
        config: Config,
        variant: str | None = None,
        *,
        kernel: Callable[..., Any] | None = None,
        commit_kernel: Callable[..., Any] | None = None,
    ) -> Options:
        """The options of ``config`` under ``variant``; the kernel is ``kernel`` when given
        (a mutant's, where ``config`` runs other rules: ``prove --variant``), else that
        of ``config``'s rules (``Config.rules.reconcile``: a user's or a mutant's); the
        same for ``commit_kernel`` (``Config.rules.validate_offset_commit``)."""
        if kernel is None:
            kernel = getattr(config.rules.reconcile, "kernel", None)
        if commit_kernel is None:
            commit_kernel = getattr(config.rules.validate_offset_commit, "kernel", None)
        return Options(
            compute_target_in_heartbeat=config.compute_target_in_heartbeat,
            reconcile_while_assigning=config.reconcile_while_assigning,
            rejoin_with_epoch_zero=config.rejoin_with_epoch_zero,
            realign_empty_group=config.realign_empty_group,
            static_rejoin_same_member_id=config.static_rejoin_same_member_id,
            assignment_epochs=config.assignment_epochs,
            static_members=any(c.instance_id is not None for c in config.clients),
            instance_changes=config.max_perturbations > 0 and config.allows("ChangeInstanceId"),
            offset_expiry=config.allows("ExpireOffsets"),
            group_deletion=config.allows("DeleteGroup") or config.delete_expired_groups,
            delete_expired_groups=config.delete_expired_groups,
            new_group_epoch=1 if config.epoch_layout == "kafka-4.3" else 0,
            variant=variant,
            kernel=kernel,
            commit_kernel=commit_kernel,
            assignor_offload=config.assignor_offload,
            offload_discard_stale=config.assignor_offload and config.offload_stale_run == "discard",
            batching=config.effective_assignment_interval_ms() > 0,
        )


@dataclass(frozen=True)
class Family:
    """One disjunct of the relation: its name, formula and free parameters."""

    name: str
    formula: BoolRef
    params: dict[str, Any]
    facts: dict[str, BoolRef] = field(default_factory=dict)
    """Named sub-formulas others build on (the heartbeat's ``accepted``: the request passed
    every check and its write was not refused; ``changed``: the request changes the
    member's subscribed partitions)."""


_m = z3.Const("m", MEMBER)
_m2 = z3.Const("m'", MEMBER)
_p = z3.Const("p", PARTITION)


def _nonempty(s: Set) -> BoolRef:
    return z3.Exists([_p], s(_p))


# --------------------------------------------------------------------------- frames


def unchanged(pre: SymState, post: SymState, *, skip: frozenset[str] = frozenset()) -> BoolRef:
    """Every field of ``post`` equals ``pre``'s, except those named in ``skip``."""
    out: list[BoolRef] = []
    for name in ("is_member", "epoch", "prev", "mstate"):
        if name not in skip:
            out.append(z3.ForAll([_m], getattr(post, name)(_m) == getattr(pre, name)(_m)))
    for name in MEMBER_RELATIONS:
        if name not in skip:
            out.append(
                z3.ForAll([_m, _p], getattr(post, name)(_m, _p) == getattr(pre, name)(_m, _p))
            )
    for name in ("committed_epoch", "pe_held", "pe"):
        if name not in skip:
            out.append(z3.ForAll([_p], getattr(post, name)(_p) == getattr(pre, name)(_p)))
    for name in ("group_epoch", "assignment_epoch", "loading", "server_error"):
        if name not in skip:
            out.append(getattr(post, name) == getattr(pre, name))
    if pre.instance is not None and post.instance is not None and "instance" not in skip:
        out.append(z3.ForAll([_m], post.instance(_m) == pre.instance(_m)))
    if pre.runs and post.runs and "runs" not in skip:
        out.append(runs_unchanged(pre, post))
    if "interval_pending" not in skip:
        out.append(interval_kept(pre, post))
    return z3.And(*out)


def valid_target(
    target: Any,
    is_member: Callable[[ExprRef], BoolRef],
    subscribed: Callable[[ExprRef, ExprRef], BoolRef],
    covers: bool = False,
) -> BoolRef:
    """``ValidTargetAssignment.Unique`` and ``OnlySubscribed`` of a new target: what the
    relation assumes of every assignor. ``Covers`` (every subscribed partition to some
    member) only with ``covers``: no proof needs it, and leaving it out widens the
    relation; BMC assumes it (``Options.assignor_covers``) so that it can read ``Covers``."""
    covering = z3.ForAll(
        [_p],
        z3.Implies(
            z3.Exists([_m], z3.And(is_member(_m), subscribed(_m, _p))),
            z3.Exists([_m2], target(_m2, _p)),
        ),
    )
    return z3.And(
        covering if covers else z3.BoolVal(True),
        z3.ForAll([_m, _m2, _p], z3.Implies(z3.And(target(_m, _p), target(_m2, _p)), _m == _m2)),
        z3.ForAll(
            [_m, _p],
            z3.Implies(target(_m, _p), z3.And(is_member(_m), subscribed(_m, _p))),
        ),
    )


# --------------------------------------------------------------------------- reconciliation


def reconcile(
    member: MemberTerm,
    *,
    target_epoch: ExprRef,
    target: Set,
    subscribed: Set,
    pe_held: Any,
    owned_null: BoolRef,
    owned: Any,
    subscription_changed: BoolRef,
    kernel: Callable[..., Any] | None = None,
) -> MemberTerm:
    """``model.consumer.reconcile.reconcile`` (``CurrentAssignmentBuilder.build``) on terms: the
    model's kernel itself (``model.consumer.reconcile.reconcile_kernel``), or a replacement of it
    (``kernel``: a user's, ``--rules``, or a catalogue mutant's, ``KERNEL_VARIANTS``), run
    with the Z3 backend (``z3sets.Z3SETS``); ``target`` is the member's target,
    ``subscribed`` the partitions of its subscribed topics."""
    out: MemberTerm = (kernel or reconcile_kernel)(
        Z3SETS,
        member,
        target_epoch=target_epoch,
        target=target,
        held=pe_held,
        owned=owned,
        reported=z3.Not(owned_null),
        subscription_changed=subscription_changed,
        subscribed=subscribed,
    )
    return out


# --------------------------------------------------------------------------- bookkeeping


def partition_epochs(
    pre: SymState,
    old: MemberTerm,
    new: MemberTerm,
    variant: str | None,
    view: tuple[Set, Callable[[ExprRef], ExprRef]] | None = None,
) -> tuple[BoolRef, Set, Callable[[ExprRef], ExprRef]]:
    """``coordinator.update_partition_epochs`` for one member going from ``old`` to
    ``new``: (conflict, held after, epoch after). An absent member holds nothing. The
    partition epochs before are ``pre``'s, or ``view``'s (held, epoch) when given (a
    static replacement rebound them first)."""
    if view is not None:
        pre = replace(pre, pe_held=view[0], pe=view[1])
    if variant == "bookkeeping-drops-pending":
        # Assigned entries removed and added, then pending entries, unchecked.
        def held(q: ExprRef) -> BoolRef:
            h1 = z3.Or(z3.And(pre.pe_held(q), z3.Not(old.assigned(q))), new.assigned(q))
            return z3.Or(z3.And(h1, z3.Not(old.revoking(q))), new.revoking(q))

        def epoch(q: ExprRef) -> ExprRef:
            return z3.If(z3.Or(new.assigned(q), new.revoking(q)), new.epoch, pre.pe(q))

        return z3.BoolVal(False), held, epoch
    same = z3.And(
        new.epoch == old.epoch,
        z3.ForAll(
            [_p], z3.And(new.assigned(_p) == old.assigned(_p), new.revoking(_p) == old.revoking(_p))
        ),
    )
    conflict = z3.And(
        z3.Not(same),
        z3.Or(
            z3.Exists(
                [_p],
                z3.And(old.holds(_p), z3.Not(z3.And(pre.pe_held(_p), pre.pe(_p) == old.epoch))),
            ),
            z3.Exists([_p], z3.And(new.holds(_p), pre.pe_held(_p), z3.Not(old.holds(_p)))),
        ),
    )

    def held_after(q: ExprRef) -> BoolRef:
        return z3.If(
            same, pre.pe_held(q), z3.Or(z3.And(pre.pe_held(q), z3.Not(old.holds(q))), new.holds(q))
        )

    def epoch_after(q: ExprRef) -> ExprRef:
        return z3.If(z3.And(z3.Not(same), new.holds(q)), new.epoch, pre.pe(q))

    return conflict, held_after, epoch_after


# --------------------------------------------------------------------------- KIP-1251


def epochs_unchanged(pre: SymState, post: SymState) -> BoolRef:
    """The KIP-1251 fields (``SymState.since``, ``holder_rejected``) as they were."""
    assert pre.since is not None
    assert post.since is not None
    return z3.And(
        z3.ForAll([_m, _p], post.since(_m, _p) == pre.since(_m, _p)),
        post.holder_rejected == pre.holder_rejected,
    )


def _stamped(
    pre: SymState,
    post: SymState,
    hm: ExprRef,
    old: MemberTerm,
    new: MemberTerm,
    wrote: BoolRef,
    variant: str | None = None,
) -> BoolRef:
    """``coordinator.stamp_assignment_epochs`` when the heartbeat wrote member ``hm``
    (``write_member``; ``CurrentAssignmentBuilder.computeNextAssignment``,
    ``ConsumerGroupMember.assignmentEpochs``; KAFKA-20066): a partition that stays assigned,
    or stays held pending revocation, keeps its epoch; a partition that enters the assigned
    partitions (also one back from pending revocation) gets the new member epoch (no static
    members here: no -2 reset); every other entry as it was."""
    before = pre.since
    assert before is not None
    assert post.since is not None

    def stamp(q: ExprRef) -> ExprRef:
        fresh = z3.If(new.assigned(q), z3.Not(old.assigned(q)), z3.Not(old.holds(q)))
        epoch = new.epoch
        if variant == "stamp-request-epoch":
            # The epoch the member had before the write (0 for a join) for a partition
            # that enters the assigned partitions.
            entered = z3.And(new.assigned(q), z3.Not(old.assigned(q)))
            epoch = z3.If(entered, z3.If(old.epoch > 0, old.epoch, 0), new.epoch)
        return z3.If(z3.And(new.holds(q), fresh), epoch, before(hm, q))

    return z3.And(
        post.holder_rejected == pre.holder_rejected,
        z3.ForAll(
            [_m, _p],
            post.since(_m, _p) == z3.If(z3.And(wrote, _m == hm), stamp(_p), before(_m, _p)),
        ),
    )


def held_since(pre: SymState, cm: ExprRef, r: ExprRef, parts: Any) -> BoolRef:
    """``coordinator.held_since``: ``cm`` holds every partition of the commit with an
    assignment epoch no newer than the request's (``ConsumerGroup.validateOffsetCommit``
    for an older epoch, KIP-1251)."""
    assert pre.since is not None
    return z3.ForAll([_p], z3.Implies(parts(_p), z3.And(pre.holds(cm, _p), pre.since(cm, _p) <= r)))


# --------------------------------------------------------------------------- KIP-1263


def interval_kept(pre: SymState, post: SymState) -> BoolRef:
    """The batching interval (``SymState.interval_pending``) as it was; true where the
    states keep none."""
    if pre.interval_pending is None or post.interval_pending is None:
        return z3.BoolVal(True)
    return post.interval_pending == pre.interval_pending


def interval_set(pre: SymState, post: SymState, recorded: BoolRef, cleared: BoolRef) -> BoolRef:
    """The batching interval after a step that ``recorded`` a computation's time
    (``target.record_assignment_time``: pending again) or ``cleared`` the timestamp (a
    realigned or deleted group: ``AssignmentTimestamp`` 0), else as it was; true where the
    states keep none."""
    if pre.interval_pending is None or post.interval_pending is None:
        return z3.BoolVal(True)
    return post.interval_pending == z3.If(
        recorded, True, z3.If(cleared, False, pre.interval_pending)
    )


def interval_open(pre: SymState, o: Options) -> BoolRef:
    """The batching gate (``target.assignment_interval_open``): a new target may be
    computed — always without batching."""
    if not o.batching or pre.interval_pending is None:
        return z3.BoolVal(True)
    return z3.Not(pre.interval_pending)


def interval_elapses(pre: SymState, post: SymState, o: Options) -> Family:
    """``AssignmentIntervalElapses`` (``system._interval_elapses``; KIP-1263 "Assignment
    Batching"): the interval passes since the last computation finished — logical time,
    like the session timers; nothing else changes. Enabled while it is pending and no
    coordinator is loading the group (``system.assignment_steps``)."""
    n = "AssignmentIntervalElapses"
    assert pre.interval_pending is not None
    assert post.interval_pending is not None
    formula = z3.And(
        pre.interval_pending,
        z3.Not(pre.loading),
        z3.Not(post.interval_pending),
        unchanged(pre, post, skip=frozenset({"interval_pending"})),
    )
    return Family(n, formula, {})


def _same_run(a: RunSlot, b: RunSlot) -> list[BoolRef]:
    """Slot ``b`` holds what slot ``a`` holds."""
    out = [
        b.on == a.on,
        b.epoch == a.epoch,
        z3.ForAll([_m, _p], b.target(_m, _p) == a.target(_m, _p)),
        z3.ForAll([_m], b.member(_m) == a.member(_m)),
    ]
    if a.instance is not None and b.instance is not None:
        out.append(z3.ForAll([_m], b.instance(_m) == a.instance(_m)))
    if a.deleted is not None and b.deleted is not None:
        out.append(b.deleted == a.deleted)
    return out


def runs_unchanged(pre: SymState, post: SymState) -> BoolRef:
    """The assignor runs in flight (``SymState.runs``) as they were."""
    out: list[BoolRef] = []
    for a, b in zip(pre.runs, post.runs, strict=True):
        out += _same_run(a, b)
    return z3.And(*out)


def runs_dropped(pre: SymState, post: SymState) -> BoolRef:
    """No run in flight any more: ``coordinator.rebuild_group`` after a failover (a run is
    not a record; KIP-1263 "Assignment Offload"). True where the states keep no runs."""
    return z3.And(*[z3.Not(r.on) for r in post.runs])


def run_starts(pre: SymState, o: Options, compute: BoolRef) -> BoolRef:
    """Whether a heartbeat that needs a new target (``compute``) hands a run to the executor
    (``target.start_assignor_run``): only when no run is in flight (KIP-1263
    ConsumerGroupHeartbeat Request Handling: no new calculation while one is in flight).
    Under ``two-runs-in-flight`` whenever a slot is free (a heartbeat that would start a
    run beyond the slots is outside the relation: ``RUN_SLOTS``)."""
    if o.variant == "two-runs-in-flight":
        return z3.And(compute, z3.Not(pre.runs[-1].on))
    return z3.And(compute, z3.Not(pre.runs[0].on))


def runs_started(
    pre: SymState,
    post: SymState,
    starts: BoolRef,
    epoch: ExprRef,
    result: Any,
    members: Callable[[ExprRef], BoolRef],
) -> BoolRef:
    """The runs after a heartbeat's write: when it ``starts`` one, the first free slot
    holds a run at the group ``epoch`` with the assignor's ``result`` (``AssignorRun``:
    the target the inline computation would install), the group's ``members`` and, with
    static members, their instance numbers as written (``post.instance``); every other slot
    as it was."""
    out: list[BoolRef] = []
    for k, (a, b) in enumerate(zip(pre.runs, post.runs, strict=True)):
        free_before = z3.And(*[r.on for r in pre.runs[:k]]) if k else z3.BoolVal(True)
        here = z3.And(starts, z3.Not(a.on), free_before)
        out += [
            b.on == z3.Or(a.on, here),
            b.epoch == z3.If(here, epoch, a.epoch),
            z3.ForAll([_m, _p], b.target(_m, _p) == z3.If(here, result(_m, _p), a.target(_m, _p))),
            z3.ForAll([_m], b.member(_m) == z3.If(here, members(_m), a.member(_m))),
        ]
        if a.instance is not None and b.instance is not None and post.instance is not None:
            out.append(
                z3.ForAll([_m], b.instance(_m) == z3.If(here, post.instance(_m), a.instance(_m)))
            )
        if a.deleted is not None and b.deleted is not None:
            out.append(b.deleted == z3.And(z3.Not(here), a.deleted))
    return z3.And(*out)


def complete_run(pre: SymState, post: SymState, o: Options) -> Family:
    """``CompleteAssignorRun``: the oldest run in flight completes
    (``coordinator.install_assignor_run``, ``target.install_assignor_run``; KIP-1263
    "Assignment Offload"). The other runs move up a slot. A run whose group was deleted
    while it ran (``RunSlot.deleted``, ``AssignorRun.group_deleted``) is discarded, so is a
    run whose epoch is not newer than the assignment epoch (the emptied group was realigned
    meanwhile) and one the group epoch passed when ``Options.offload_discard_stale``; the
    variant ``install-run-after-deletion`` installs a deleted group's run. Otherwise its
    result is installed at the run's epoch with the changes made meanwhile re-applied
    (``target.reapply_changes``): only members of the group keep their entry, a replaced
    static member's entry moves to the instance's current member, and only partitions that
    still exist (the free parameter ``existing``: the abstraction keeps no topics).
    Enabled while no coordinator is loading the group (``system.assignment_steps``)."""
    n = "CompleteAssignorRun"
    existing = z3.Function(f"{n}.existing@{post.tag}", PARTITION, z3.BoolSort())
    run = pre.runs[0]
    shifted: list[BoolRef] = []
    for k, b in enumerate(post.runs):
        if k + 1 < len(pre.runs):
            shifted += _same_run(pre.runs[k + 1], b)
        else:
            shifted.append(z3.Not(b.on))
    discard = z3.Or(
        run.epoch <= pre.assignment_epoch,
        z3.And(z3.BoolVal(o.offload_discard_stale), run.epoch < pre.group_epoch),
    )
    if run.deleted is not None and o.variant != "install-run-after-deletion":
        discard = z3.Or(run.deleted, discard)

    def entry(x: ExprRef, q: ExprRef) -> BoolRef:
        """The run's entry for member ``x``: its own, or for a static member not in the
        run, the entry of the member its instance had when the run started if that one is
        gone (a static replacement made meanwhile; KAFKA-20292)."""
        if run.instance is None or o.variant == "install-before-static-replacement":
            return run.target(x, q)
        y = z3.Const("run.before", MEMBER)
        before = z3.Exists(
            [y],
            z3.And(
                run.member(y),
                run.instance(y) == pre.instance_of(x),
                z3.Not(pre.is_member(y)),
                run.target(y, q),
            ),
        )
        moved = z3.And(z3.Not(run.member(x)), pre.instance_of(x) != 0, before)
        return z3.Or(run.target(x, q), moved)

    def reapplied(x: ExprRef, q: ExprRef) -> BoolRef:
        kept = z3.And(pre.is_member(x), entry(x, q), existing(q))
        if o.variant == "install-without-reapplying-removals":
            # The entries of members gone meanwhile are installed as computed.
            return z3.Or(kept, z3.And(z3.Not(pre.is_member(x)), run.target(x, q)))
        return kept

    epoch = pre.assignment_epoch if o.variant == "install-without-epoch" else run.epoch
    installed = z3.And(
        unchanged(
            pre, post, skip=frozenset({"target", "assignment_epoch", "runs", "interval_pending"})
        ),
        z3.ForAll([_m, _p], post.target(_m, _p) == reapplied(_m, _p)),
        post.assignment_epoch == epoch,
        # target.install_assignor_run → record_assignment_time (batching with offload).
        interval_set(pre, post, z3.BoolVal(True), z3.BoolVal(False)),
    )
    discarded = unchanged(pre, post, skip=frozenset({"runs"}))
    formula = z3.And(run.on, z3.Not(pre.loading), *shifted, z3.If(discard, discarded, installed))
    return Family(n, formula, {"existing": existing}, {"discard": discard})


# --------------------------------------------------------------------------- families


PARTITION_RANK = z3.Function("partition_rank", PARTITION, z3.IntSort())
"""The order in which an assignor lists partitions (sorted topic partitions); free in the
proofs, the universe's order in BMC. Only the ``assignor-assigns-twice`` variant reads it."""


def _first_ok(base: Any, first: ExprRef, o: Options) -> BoolRef:
    """``assignor-assigns-twice``: ``first`` is the lowest-ranked partition of the
    assignor's output, when it gives any."""
    if o.variant != "assignor-assigns-twice":
        return z3.BoolVal(True)
    given = z3.Exists([_m], base(_m, first))
    lowest = z3.ForAll(
        [_m, _p], z3.Implies(base(_m, _p), PARTITION_RANK(first) <= PARTITION_RANK(_p))
    )
    anything = z3.Exists([_m, _p], base(_m, _p))
    return z3.Implies(anything, z3.And(given, lowest))


def _installed(
    base: Any, first: ExprRef, members: Callable[[ExprRef], BoolRef], o: Options
) -> Callable[[ExprRef, ExprRef], BoolRef]:
    """The target a computation installs from the assignor's output ``base``."""
    if o.variant != "assignor-assigns-twice":
        return base
    anything = z3.Exists([_m, _p], base(_m, _p))
    return lambda x, q: z3.Or(base(x, q), z3.And(anything, members(x), q == first))


def heartbeat(pre: SymState, post: SymState, o: Options) -> Family:
    """``DeliverMessage`` of a ConsumerGroupHeartbeat with member epoch ≥ 0
    (``coordinator.handle_consumer_group_heartbeat``, ``_heartbeat``). With
    ``Options.static_members`` the request carries an instance id and ``resolve_member``'s
    static branches are followed (:func:`_static_view`)."""
    n = "DeliverMessage.heartbeat"
    hm = z3.Const(f"{n}.member@{post.tag}", MEMBER)
    r = z3.Int(f"{n}.epoch@{post.tag}")
    owned_null = z3.Bool(f"{n}.owned_null@{post.tag}")
    owned = z3.Function(f"{n}.owned@{post.tag}", PARTITION, z3.BoolSort())
    newsub = z3.Function(f"{n}.subscribed@{post.tag}", PARTITION, z3.BoolSort())
    subch = z3.Bool(f"{n}.subscription_changed@{post.tag}")
    bump = z3.Bool(f"{n}.bump@{post.tag}")
    invalid = z3.Bool(f"{n}.invalid@{post.tag}")
    group_full = z3.Bool(f"{n}.group_full@{post.tag}")
    target = z3.Function(f"{n}.target@{post.tag}", MEMBER, PARTITION, z3.BoolSort())
    params = {
        "member": hm,
        "epoch": r,
        "owned_null": owned_null,
        "owned": owned,
        "subscribed": newsub,
        "subscription_changed": subch,
        "bump": bump,
        "invalid": invalid,
        "group_full": group_full,
        "target": target,
    }

    new = z3.Not(pre.is_member(hm))
    # validate_heartbeat_request: a join (epoch 0) reports an empty owned set.
    valid = z3.And(
        z3.Not(invalid),
        r >= 0,
        z3.Implies(r == 0, z3.And(z3.Not(owned_null), z3.ForAll([_p], z3.Not(owned(_p))))),
    )
    # resolve_member / check_member_epoch
    e = pre.epoch(hm)
    retry = z3.And(
        r < e,
        r == pre.prev(hm),
        z3.Not(owned_null),
        z3.ForAll([_p], z3.Implies(owned(_p), pre.assigned(hm, _p))),
    )
    existing_ok = z3.Or(r == e, retry, z3.And(z3.BoolVal(o.rejoin_with_epoch_zero), r == 0))
    if o.variant == "reject-epoch-zero-rejoin":
        existing_ok = z3.And(z3.Not(z3.And(r == 0, e != 0)), existing_ok)
    accept = z3.If(new, z3.And(r == 0, z3.Not(group_full)), existing_ok)
    view = _View.of(pre)
    joining = new
    env_static: BoolRef = z3.BoolVal(True)
    if o.static_members:
        inst = z3.Int(f"{n}.instance@{post.tag}")
        holder = z3.Const(f"{n}.holder@{post.tag}", MEMBER)
        params["instance"] = inst
        params["holder"] = holder
        accept, env_static, view, replacing = _static_view(
            pre, o, hm, r, inst, holder, accept, existing_ok
        )
        # A replaced holder's copy is the stored member (not a new one).
        joining = z3.And(new, z3.Not(replacing))
    go = z3.And(z3.Not(pre.loading), valid, accept)
    old = view.member(hm, joining)

    # The member update and the group-epoch bump.
    changed = z3.Exists([_p], newsub(_p) != old.subscribed(_p))
    env = z3.And(z3.Implies(changed, subch), z3.Implies(subch, bump))
    # The bump of a request that changes no server assignor (what the replay sends).
    plain_bump = subch
    if o.variant == "no-bump-on-subscription-change":
        # should_bump_group_epoch consulted for new members only.
        env = z3.And(
            z3.Implies(changed, subch), z3.If(joining, z3.Implies(subch, bump), z3.Not(bump))
        )
        plain_bump = z3.And(subch, joining)
    if o.static_members:
        env = z3.And(env, env_static)
    ge1 = pre.group_epoch + z3.If(bump, 1, 0)

    def member_after(x: ExprRef) -> BoolRef:
        return z3.Or(view.is_member(x), x == hm)

    def subscribed_after(x: ExprRef, q: ExprRef) -> BoolRef:
        return z3.If(x == hm, newsub(q), view.subscribed(x, q))

    # KIP-1263 batching: no new target while the assignment interval is pending.
    compute = z3.And(
        z3.BoolVal(o.compute_target_in_heartbeat), ge1 > pre.assignment_epoch, interval_open(pre, o)
    )
    assign = compute
    if o.assignor_offload:
        # KIP-1263: the target is computed by a run handed to the executor, if one starts.
        assign = run_starts(pre, o, compute)
    first = z3.Const(f"{n}.first@{post.tag}", PARTITION)
    installed = _installed(target, first, member_after, o)
    target_ok = z3.If(
        assign,
        z3.And(
            valid_target(target, member_after, subscribed_after, o.assignor_covers),
            _first_ok(target, first, o),
        ),
        z3.ForAll([_m, _p], target(_m, _p) == view.target(_m, _p)),
    )
    if o.variant == "assignor-assigns-twice":
        params["first"] = first

        def new_target(x: ExprRef, q: ExprRef) -> BoolRef:
            return z3.If(compute, installed(x, q), view.target(x, q))
    elif o.assignor_offload:

        def new_target(x: ExprRef, q: ExprRef) -> BoolRef:
            return view.target(x, q)  # the run's result waits for CompleteAssignorRun
    else:

        def new_target(x: ExprRef, q: ExprRef) -> BoolRef:
            return target(x, q)

    ae1 = z3.If(compute, ge1, pre.assignment_epoch)
    if o.assignor_offload:
        ae1 = pre.assignment_epoch

    member = old.term()
    reconciled = reconcile(
        member,
        target_epoch=ae1,
        target=lambda q: new_target(hm, q),
        subscribed=newsub,
        pe_held=view.pe_held,
        owned_null=owned_null,
        owned=owned,
        subscription_changed=subch,
        kernel=o.kernel,
    )
    if not o.reconcile_while_assigning:
        reconciled = _if(ge1 > ae1, member, reconciled)
    conflict, held_after, epoch_after = partition_epochs(
        pre, member, reconciled, o.variant, (view.pe_held, view.pe)
    )
    if o.static_members:
        conflict = z3.Or(view.conflict, conflict)

    written = z3.And(
        z3.ForAll([_m], post.is_member(_m) == member_after(_m)),
        post.epoch(hm) == reconciled.epoch,
        post.prev(hm) == reconciled.prev,
        post.mstate(hm) == reconciled.state,
        z3.ForAll(
            [_m],
            z3.Implies(
                _m != hm,
                z3.And(
                    post.epoch(_m) == pre.epoch(_m),
                    post.prev(_m) == pre.prev(_m),
                    post.mstate(_m) == pre.mstate(_m),
                ),
            ),
        ),
        z3.ForAll(
            [_m, _p],
            z3.And(
                post.assigned(_m, _p)
                == z3.If(_m == hm, reconciled.assigned(_p), view.assigned(_m, _p)),
                post.revoking(_m, _p)
                == z3.If(_m == hm, reconciled.revoking(_p), view.revoking(_m, _p)),
                post.subscribed(_m, _p) == subscribed_after(_m, _p),
                post.target(_m, _p) == new_target(_m, _p),
                post.committed_by(_m, _p) == pre.committed_by(_m, _p),
            ),
        ),
        z3.ForAll(
            [_p],
            z3.And(
                post.committed_epoch(_p) == pre.committed_epoch(_p),
                post.pe_held(_p) == held_after(_p),
                post.pe(_p) == epoch_after(_p),
            ),
        ),
        post.group_epoch == ge1,
        post.assignment_epoch == ae1,
        post.loading == pre.loading,
        post.server_error == pre.server_error,
        # An inline computation records its time (target.record_assignment_time); a run
        # started on the executor records it when it is installed.
        interval_set(
            pre, post, z3.And(compute, z3.BoolVal(not o.assignor_offload)), z3.BoolVal(False)
        ),
    )
    if o.assignor_offload:
        written = z3.And(written, runs_started(pre, post, assign, ge1, target, member_after))
    if o.static_members:
        # ``updated.instance_id``: the request's, else the stored member's.
        assert pre.instance is not None
        assert post.instance is not None
        inst = params["instance"]
        written = z3.And(
            written,
            z3.ForAll(
                [_m],
                post.instance(_m)
                == z3.If(_m == hm, z3.If(inst != 0, inst, old.instance), pre.instance(_m)),
            ),
        )
    refused_write = z3.And(
        unchanged(pre, post, skip=frozenset({"server_error"})), post.server_error
    )
    formula = z3.And(
        env,
        target_ok,
        z3.If(go, z3.If(conflict, refused_write, written), unchanged(pre, post)),
    )
    if o.assignment_epochs:
        formula = z3.And(
            formula,
            _stamped(pre, post, hm, member, reconciled, z3.And(go, z3.Not(conflict)), o.variant),
        )
    return Family(
        n,
        formula,
        params,
        {
            "accepted": z3.And(go, z3.Not(conflict)),
            "changed": changed,
            "bump": plain_bump,
            # Refused with a fencing error: UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH.
            "fenced": z3.And(z3.Not(pre.loading), valid, z3.If(new, r != 0, z3.Not(existing_ok))),
        },
    )


@dataclass(frozen=True)
class _Stored:
    """The member a heartbeat updates, as ``resolve_member`` returns it: its reconciliation
    fields, subscribed partitions and instance number."""

    fields: MemberTerm
    subscribed: Set
    instance: ExprRef

    def term(self) -> MemberTerm:
        return self.fields


@dataclass(frozen=True)
class _View:
    """The group a heartbeat's pipeline runs on after ``resolve_member``: ``pre`` itself,
    or ``pre`` with a static replacement applied (``replace_static_member``), whose
    partition-epoch rebinding may have failed (``conflict``)."""

    pre: SymState
    is_member: Callable[[ExprRef], BoolRef]
    epoch: Callable[[ExprRef], ExprRef]
    prev: Callable[[ExprRef], ExprRef]
    mstate: Callable[[ExprRef], ExprRef]
    assigned: Callable[[ExprRef, ExprRef], BoolRef]
    revoking: Callable[[ExprRef, ExprRef], BoolRef]
    subscribed: Callable[[ExprRef, ExprRef], BoolRef]
    target: Callable[[ExprRef, ExprRef], BoolRef]
    instance: Callable[[ExprRef], ExprRef]
    pe_held: Set
    pe: Callable[[ExprRef], ExprRef]
    conflict: BoolRef

    @staticmethod
    def of(pre: SymState) -> _View:
        return _View(
            pre,
            pre.is_member,
            pre.epoch,
            pre.prev,
            pre.mstate,
            pre.assigned,
            pre.revoking,
            pre.subscribed,
            pre.target,
            pre.instance_of,
            pre.pe_held,
            pre.pe,
            z3.BoolVal(False),
        )

    def member(self, hm: ExprRef, joining: BoolRef) -> _Stored:
        """The member ``hm`` of this group (a new one when ``joining``: epoch 0, previous
        epoch -1, STABLE, nothing held or subscribed, no instance id yet)."""
        return _Stored(
            MemberTerm(
                z3.If(joining, 0, self.epoch(hm)),
                z3.If(joining, -1, self.prev(hm)),
                z3.If(joining, z3.IntVal(STABLE), self.mstate(hm)),
                lambda q: z3.And(z3.Not(joining), self.assigned(hm, q)),
                lambda q: z3.And(z3.Not(joining), self.revoking(hm, q)),
            ),
            lambda q: z3.And(z3.Not(joining), self.subscribed(hm, q)),
            z3.If(joining, 0, self.instance(hm)),
        )


def _static_view(
    pre: SymState,
    o: Options,
    hm: ExprRef,
    r: ExprRef,
    inst: ExprRef,
    holder: ExprRef,
    dynamic_accept: BoolRef,
    existing_ok: BoolRef,
) -> tuple[BoolRef, BoolRef, _View, BoolRef]:
    """``resolve_member`` for a request with instance number ``inst`` (0: none): (accepted,
    the constraint on the ``holder`` parameter, the group the pipeline runs on, whether a
    holder is replaced).

    ``holder`` is the member the static-member index maps ``inst`` to (the member of the
    group with that instance id), ``hm`` itself when there is none. A join (epoch 0)
    finding no holder is a dynamic join; finding the requesting member itself, a rejoin
    (``static_rejoin_same_member_id``); finding another holder that left with -2, a
    replacement (``replace_static_member``: the copy takes the holder's state, assignment,
    subscription, instance and target at epoch 0 / previous 0, the holder's partition
    epochs are rebound to 0, which fails — UNKNOWN_SERVER_ERROR — unless they carry its
    epoch); any other holder refuses it (UNRELEASED_INSTANCE_ID). Another epoch needs the
    requesting member to be the holder (else UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID)."""
    instance = pre.instance
    assert instance is not None
    x = z3.Const("holder.x", MEMBER)
    held = z3.And(inst != 0, z3.Exists([x], z3.And(pre.is_member(x), instance(x) == inst)))
    env = z3.And(
        inst >= 0,
        z3.If(held, z3.And(pre.is_member(holder), instance(holder) == inst), holder == hm),
        z3.BoolVal(True)
        if o.instance_changes
        else z3.Implies(pre.is_member(hm), instance(hm) == inst),
        # Nor does the instance id of a member an assignor run in flight assigned
        # (``AssignorRun.static_members``; 0 for a dynamic member): its process's.
        *[
            z3.Implies(z3.And(run.on, run.member(hm)), run.instance(hm) == inst)
            for run in pre.runs
            if run.instance is not None and not o.instance_changes
        ],
    )
    rejoin_same = z3.And(z3.BoolVal(o.static_rejoin_same_member_id), holder == hm)
    released = pre.epoch(holder) == LEAVE_GROUP_STATIC_MEMBER_EPOCH
    accept = z3.If(
        inst == 0,
        dynamic_accept,
        z3.If(
            r == 0,
            z3.If(z3.Not(held), dynamic_accept, z3.If(rejoin_same, existing_ok, released)),
            z3.And(held, holder == hm, existing_ok),
        ),
    )
    replacing = z3.And(inst != 0, r == 0, held, z3.Not(rejoin_same), released)
    keeps_both = o.variant == "static-replacement-keeps-both"
    gone = z3.And(replacing, holder != hm, z3.BoolVal(not keeps_both))

    def holds(q: ExprRef) -> BoolRef:
        return pre.holds(holder, q)

    if keeps_both:
        # The copy is added, the holder stays (at -2), the partition epochs are untouched.
        conflict: BoolRef = z3.BoolVal(False)

        def pe_held(q: ExprRef) -> BoolRef:
            return pre.pe_held(q)

        def pe(q: ExprRef) -> ExprRef:
            return pre.pe(q)
    else:
        conflict = z3.And(
            replacing,
            z3.Exists(
                [_p],
                z3.And(holds(_p), z3.Not(z3.And(pre.pe_held(_p), pre.pe(_p) == pre.epoch(holder)))),
            ),
        )

        def pe_held(q: ExprRef) -> BoolRef:
            return z3.Or(pre.pe_held(q), z3.And(replacing, holds(q)))

        def pe(q: ExprRef) -> ExprRef:
            return z3.If(z3.And(replacing, holds(q)), 0, pre.pe(q))

    def copy(x: ExprRef) -> BoolRef:
        return z3.And(replacing, x == hm)

    entry = z3.Exists([_p], pre.target(holder, _p))

    def target(x: ExprRef, q: ExprRef) -> BoolRef:
        return z3.If(
            copy(x),
            z3.If(entry, pre.target(holder, q), pre.target(hm, q)),
            z3.And(pre.target(x, q), z3.Not(z3.And(gone, x == holder))),
        )

    def keep(f: Any) -> Callable[[ExprRef, ExprRef], BoolRef]:
        return lambda x, q: z3.If(
            copy(x), f(holder, q), z3.And(f(x, q), z3.Not(z3.And(gone, x == holder)))
        )

    view = _View(
        pre,
        lambda x: z3.Or(z3.And(pre.is_member(x), z3.Not(z3.And(gone, x == holder))), copy(x)),
        lambda x: z3.If(copy(x), 0, pre.epoch(x)),
        lambda x: z3.If(copy(x), 0, pre.prev(x)),
        lambda x: z3.If(copy(x), pre.mstate(holder), pre.mstate(x)),
        keep(pre.assigned),
        keep(pre.revoking),
        keep(pre.subscribed),
        target,
        lambda x: z3.If(copy(x), instance(holder), instance(x)),
        pe_held,
        pe,
        conflict,
    )
    return accept, env, view, replacing


def _remove(pre: SymState, post: SymState, o: Options, name: str, *, answers: bool) -> Family:
    """``coordinator.remove_member`` of a member (a leave, or a timer firing)."""
    x = z3.Const(f"{name}.member@{post.tag}", MEMBER)
    drop = z3.Bool(f"{name}.regexes_dropped@{post.tag}")
    params = {"member": x, "regexes_dropped": drop}
    gone = MemberTerm(
        pre.epoch(x),
        pre.prev(x),
        pre.mstate(x),
        lambda q: pre.assigned(x, q),
        lambda q: pre.revoking(x, q),
    )
    if o.variant == "bookkeeping-drops-pending":
        conflict: BoolRef = z3.BoolVal(False)

        def held_after(q: ExprRef) -> BoolRef:
            return z3.And(pre.pe_held(q), z3.Not(gone.holds(q)))
    else:
        conflict = z3.Exists(
            [_p], z3.And(gone.holds(_p), z3.Not(z3.And(pre.pe_held(_p), pre.pe(_p) == gone.epoch)))
        )

        def held_after(q: ExprRef) -> BoolRef:
            return z3.And(pre.pe_held(q), z3.Not(gone.holds(q)))

    ge1 = pre.group_epoch + 1
    kept_epoch = pre.group_epoch if o.variant == "no-epoch-bump-on-fence" else ge1
    nobody_left = z3.ForAll([_m], z3.Implies(pre.is_member(_m), _m == x))
    ae1 = (
        z3.If(nobody_left, ge1, pre.assignment_epoch)
        if o.realign_empty_group
        else pre.assignment_epoch
    )
    removed = z3.And(
        z3.ForAll([_m], post.is_member(_m) == z3.And(pre.is_member(_m), _m != x)),
        z3.ForAll(
            [_m],
            z3.Implies(
                _m != x,
                z3.And(
                    post.epoch(_m) == pre.epoch(_m),
                    post.prev(_m) == pre.prev(_m),
                    post.mstate(_m) == pre.mstate(_m),
                ),
            ),
        ),
        z3.ForAll(
            [_m, _p],
            z3.And(
                post.assigned(_m, _p) == z3.And(pre.assigned(_m, _p), _m != x),
                post.revoking(_m, _p) == z3.And(pre.revoking(_m, _p), _m != x),
                post.target(_m, _p) == z3.And(pre.target(_m, _p), _m != x),
                # remove_member builds a new Group without the regex resolutions: members
                # subscribed through a regular expression may lose partitions.
                z3.Implies(
                    z3.Not(drop), post.subscribed(_m, _p) == z3.And(pre.subscribed(_m, _p), _m != x)
                ),
                z3.Implies(post.subscribed(_m, _p), z3.And(pre.subscribed(_m, _p), _m != x)),
                post.committed_by(_m, _p) == pre.committed_by(_m, _p),
            ),
        ),
        z3.ForAll(
            [_p],
            z3.And(
                post.committed_epoch(_p) == pre.committed_epoch(_p),
                post.pe_held(_p) == held_after(_p),
                post.pe(_p) == pre.pe(_p),
            ),
        ),
        post.group_epoch == kept_epoch,
        post.assignment_epoch == ae1,
        post.loading == pre.loading,
        post.server_error == pre.server_error,
        # KAFKA-20442 also writes AssignmentTimestamp 0 for a realigned emptied group.
        interval_set(
            pre, post, z3.BoolVal(False), z3.And(z3.BoolVal(o.realign_empty_group), nobody_left)
        ),
    )
    if pre.runs:
        removed = z3.And(removed, runs_unchanged(pre, post))  # a run outlives the member
    refused = z3.And(
        unchanged(pre, post, skip=frozenset({"server_error"})),
        post.server_error if answers else post.server_error == pre.server_error,
    )
    go = z3.And(pre.is_member(x), z3.Not(pre.loading))
    if pre.instance is not None:
        assert post.instance is not None
        removed = z3.And(removed, z3.ForAll([_m], post.instance(_m) == pre.instance(_m)))
        if answers:
            # handle_leave: with an instance id, the static-member index must map it to
            # the leaving member (else UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID).
            inst = z3.Int(f"{name}.instance@{post.tag}")
            params["instance"] = inst
            go = z3.And(go, inst >= 0, z3.Or(inst == 0, pre.instance(x) == inst))
    formula = z3.If(go, z3.If(conflict, refused, removed), unchanged(pre, post))
    return Family(name, formula, params)


def static_leave(pre: SymState, post: SymState, o: Options) -> Family:
    """``DeliverMessage`` of a static member's temporary leave, member epoch -2
    (``coordinator.handle_leave``; ``GroupMetadataManager.consumerGroupStaticMemberGroupLeave``):
    the member the static-member index maps the request's instance id to — the requesting
    member, else UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID — is written at epoch -2, its
    previous epoch, state, assigned partitions and target kept, its partitions pending
    revocation dropped; its partition epochs follow (``write_member``), a failed write
    answers UNKNOWN_SERVER_ERROR. The group epoch stays: the member is still in the group."""
    n = "DeliverMessage.static_leave"
    x = z3.Const(f"{n}.member@{post.tag}", MEMBER)
    inst = z3.Int(f"{n}.instance@{post.tag}")
    params = {"member": x, "instance": inst}
    assert pre.instance is not None
    assert post.instance is not None
    before = MemberTerm(
        pre.epoch(x),
        pre.prev(x),
        pre.mstate(x),
        lambda q: pre.assigned(x, q),
        lambda q: pre.revoking(x, q),
    )
    left = MemberTerm(
        z3.IntVal(LEAVE_GROUP_STATIC_MEMBER_EPOCH),
        pre.prev(x),
        pre.mstate(x),
        lambda q: pre.assigned(x, q),
        lambda q: z3.BoolVal(False),
    )
    conflict, held_after, epoch_after = partition_epochs(pre, before, left, o.variant)
    written = z3.And(
        unchanged(pre, post, skip=frozenset({"epoch", "revoking", "pe_held", "pe"})),
        z3.ForAll([_m], post.epoch(_m) == z3.If(_m == x, left.epoch, pre.epoch(_m))),
        z3.ForAll(
            [_m, _p],
            post.revoking(_m, _p) == z3.And(pre.revoking(_m, _p), _m != x),
        ),
        z3.ForAll([_p], z3.And(post.pe_held(_p) == held_after(_p), post.pe(_p) == epoch_after(_p))),
    )
    refused = z3.And(unchanged(pre, post, skip=frozenset({"server_error"})), post.server_error)
    go = z3.And(z3.Not(pre.loading), inst > 0, pre.is_member(x), pre.instance(x) == inst)
    formula = z3.If(go, z3.If(conflict, refused, written), unchanged(pre, post))
    return Family(n, formula, params)


def offset_commit(pre: SymState, post: SymState, o: Options) -> Family:
    """``DeliverMessage`` of an OffsetCommit (``coordinator.handle_offset_commit`` and
    ``validate_offset_commit``: its kernel, ``validate_offset_commit_kernel``, or a
    replacement, ``Options.commit_kernel``, run with the Z3 backend)."""
    n = "DeliverMessage.offset_commit"
    cm = z3.Const(f"{n}.member@{post.tag}", MEMBER)
    r = z3.Int(f"{n}.epoch@{post.tag}")
    parts = z3.Function(f"{n}.partitions@{post.tag}", PARTITION, z3.BoolSort())
    params = {"member": cm, "epoch": r, "partitions": parts}
    nobody = z3.ForAll([_m], z3.Not(pre.is_member(_m)))
    known, member_epoch = pre.is_member(cm), pre.epoch(cm)
    # KIP-1251: an older epoch is accepted for partitions held since then.
    held = held_since(pre, cm, r, parts) if o.assignment_epochs else Z3SETS.false()
    # The check is a kernel (coordinator.validate_offset_commit_kernel), or a replacement
    # of it (Options.commit_kernel: a mutant's, COMMIT_KERNEL_VARIANTS), run with Z3.
    accepted: BoolRef = (o.commit_kernel or validate_offset_commit_kernel)(
        Z3SETS, epoch=r, member_epoch=member_epoch, known=known, nobody=nobody, held=held
    )
    # A holder's commit at an older epoch (coordinator.falsely_fenced, when refused).
    older_ok = Z3SETS.all_(known, r < member_epoch, held)
    stored = z3.And(
        unchanged(pre, post, skip=frozenset({"committed_by", "committed_epoch"})),
        z3.ForAll(
            [_m, _p],
            post.committed_by(_m, _p) == z3.If(parts(_p), _m == cm, pre.committed_by(_m, _p)),
        ),
        z3.ForAll(
            [_p],
            post.committed_epoch(_p) == z3.If(parts(_p), r, pre.committed_epoch(_p)),
        ),
    )
    go = z3.And(z3.Not(pre.loading), accepted)
    formula = z3.And(r > 0, z3.If(go, stored, unchanged(pre, post)))
    if o.assignment_epochs:
        # handle_offset_commit: a refused commit of a holder (falsely_fenced) sets
        # Group.holder_commit_rejected.
        assert pre.since is not None
        assert post.since is not None
        fenced = z3.And(z3.Not(pre.loading), z3.Not(accepted), older_ok)
        formula = z3.And(
            formula,
            z3.ForAll([_m, _p], post.since(_m, _p) == pre.since(_m, _p)),
            post.holder_rejected == z3.Or(pre.holder_rejected, fenced),
        )
    return Family(n, formula, params)


def compute_target(pre: SymState, post: SymState, o: Options) -> Family:
    """``ComputeTargetAssignment`` as its own step (``compute_target_in_heartbeat`` off):
    any valid target, stamped with the group epoch."""
    n = "ComputeTargetAssignment"
    enabled = z3.And(z3.Exists([_m], pre.is_member(_m)), pre.group_epoch > pre.assignment_epoch)
    base = z3.Function(f"{n}.target@{post.tag}", MEMBER, PARTITION, z3.BoolSort())
    first = z3.Const(f"{n}.first@{post.tag}", PARTITION)
    installed = _installed(base, first, pre.is_member, o)
    formula = z3.And(
        enabled,
        unchanged(pre, post, skip=frozenset({"target", "assignment_epoch"})),
        valid_target(base, pre.is_member, pre.subscribed, o.assignor_covers),
        _first_ok(base, first, o),
        z3.ForAll([_m, _p], post.target(_m, _p) == installed(_m, _p)),
        post.assignment_epoch == pre.group_epoch,
    )
    params: dict[str, Any] = {"target": base}
    if o.variant == "assignor-assigns-twice":
        params["first"] = first
    return Family(n, formula, params)


def metadata_change(pre: SymState, post: SymState, o: Options) -> Family:
    """Topics created, deleted, recreated or grown, racks moved, regular expressions
    resolved again: any member's subscribed partitions may change, which bumps the group
    epoch (``coordinator.on_metadata_change``, ``resolve_regular_expressions``); the group
    epoch may be bumped anyway (racks); committed offsets of deleted topics are dropped."""
    n = "MetadataChange"
    moved = z3.Exists([_m, _p], post.subscribed(_m, _p) != pre.subscribed(_m, _p))
    bumps: BoolRef = z3.Implies(moved, post.group_epoch == pre.group_epoch + 1)
    if o.variant in ("no-bump-on-metadata-change", "regex-resolution-without-bump"):
        bumps = post.group_epoch == pre.group_epoch
    formula = z3.And(
        unchanged(pre, post, skip=frozenset({"subscribed", "group_epoch", "committed_by"})),
        z3.Or(post.group_epoch == pre.group_epoch, post.group_epoch == pre.group_epoch + 1),
        # coordinator.on_metadata_change / resolve_regular_expressions: a change of what a
        # member subscribes to bumps the group epoch.
        bumps,
        z3.ForAll(
            [_m, _p],
            z3.And(
                z3.Implies(post.subscribed(_m, _p), pre.is_member(_m)),
                z3.Implies(post.committed_by(_m, _p), pre.committed_by(_m, _p)),
            ),
        ),
    )
    return Family(n, formula, {}, {"moved": moved})


def failover(pre: SymState, post: SymState, o: Options) -> Family:
    n = "CoordinatorFailover"
    formula = z3.And(
        z3.Not(pre.loading), post.loading, unchanged(pre, post, skip=frozenset({"loading"}))
    )
    return Family(n, formula, {})


def loaded(pre: SymState, post: SymState, o: Options) -> Family:
    """``CoordinatorLoaded``: ``coordinator.rebuild_group`` derives the partition epochs
    from the members' current assignments."""
    n = "CoordinatorLoaded"
    if o.variant == "failover-drops-pending-revocation":
        # The members are loaded without their partitions pending revocation, and the
        # partition epochs derived from their assigned partitions only.
        return Family(
            n,
            z3.And(
                pre.loading,
                z3.Not(post.loading),
                unchanged(
                    pre, post, skip=frozenset({"loading", "pe_held", "pe", "revoking", "runs"})
                ),
                runs_dropped(pre, post),
                z3.ForAll([_m, _p], z3.Not(post.revoking(_m, _p))),
                z3.ForAll(
                    [_p],
                    post.pe_held(_p)
                    == z3.Exists([_m], z3.And(pre.is_member(_m), pre.assigned(_m, _p))),
                ),
                z3.ForAll(
                    [_m, _p],
                    z3.Implies(
                        z3.And(pre.is_member(_m), pre.assigned(_m, _p)),
                        post.pe(_p) == pre.epoch(_m),
                    ),
                ),
            ),
            {},
        )
    formula = z3.And(
        pre.loading,
        z3.Not(post.loading),
        unchanged(pre, post, skip=frozenset({"loading", "pe_held", "pe", "runs"})),
        runs_dropped(pre, post),
        z3.ForAll(
            [_p],
            post.pe_held(_p) == z3.Exists([_m], z3.And(pre.is_member(_m), pre.holds(_m, _p))),
        ),
        z3.ForAll(
            [_m, _p],
            z3.Implies(z3.And(pre.is_member(_m), pre.holds(_m, _p)), post.pe(_p) == pre.epoch(_m)),
        ),
    )
    return Family(n, formula, {})


def stutter(pre: SymState, post: SymState, o: Options) -> Family:
    return Family("Unchanged", unchanged(pre, post), {})


def families(pre: SymState, post: SymState, o: Options) -> list[Family]:
    """Every disjunct of the relation, in a fixed order."""
    out = [
        heartbeat(pre, post, o),
        _remove(pre, post, o, "DeliverMessage.leave", answers=True),
        *([static_leave(pre, post, o)] if o.static_members else []),
        offset_commit(pre, post, o),
        _remove(pre, post, o, "SessionTimeout", answers=False),
        _remove(pre, post, o, "RebalanceTimeout", answers=False),
        metadata_change(pre, post, o),
        failover(pre, post, o),
        loaded(pre, post, o),
        stutter(pre, post, o),
    ]
    if not o.compute_target_in_heartbeat:
        out.insert(1, compute_target(pre, post, o))
    if o.assignor_offload:
        out.insert(1 if o.compute_target_in_heartbeat else 2, complete_run(pre, post, o))
    if o.batching:
        out.insert(len(out) - 1, interval_elapses(pre, post, o))
    if o.assignment_epochs:
        # Only a heartbeat's write and a commit move the KIP-1251 fields (a removed
        # member's entries are read no more; rebuild_group loads them as written).
        own = ("DeliverMessage.heartbeat", "DeliverMessage.offset_commit")
        kept = epochs_unchanged(pre, post)
        out = [f if f.name in own else replace(f, formula=z3.And(f.formula, kept)) for f in out]
    if o.offset_expiry or o.group_deletion:
        out = _with_expiry_and_deletion(pre, post, o, out)
    if pre.history is not None and post.history is not None:
        recorded = history_recorded(pre, post)
        out = [replace(f, formula=z3.And(f.formula, recorded)) for f in out]
    return out


def history_recorded(pre: SymState, post: SymState) -> BoolRef:
    """The ghost ``SymState.history`` after a step of any family: what
    ``model.consumer.system.consumer_step`` makes of it with
    ``coordinator.record_assignment_history``
    — the stamps before, plus every (member, partition, assignment epoch) a member of the
    group holds after the step — except that a deleted group's history goes with it (a
    deleted group has no members, and the group created again starts from scratch). The
    model applies it after a step that replaced the group; after one that did not, the
    stamps are the ones recorded before (``Lemma.HeldStampRecorded``), so applying it
    always is the same."""
    assert pre.history is not None
    assert post.history is not None
    assert post.since is not None
    e = z3.Int("history.e")
    kept = pre.history(_m, _p, e)
    if post.deleted is not None:
        kept = z3.And(z3.Not(post.deleted), kept)
    stamp = z3.And(post.is_member(_m), post.holds(_m, _p), post.since(_m, _p) == e)
    return z3.ForAll([_m, _p, e], post.history(_m, _p, e) == z3.Or(kept, stamp))


FAMILY_NAMES = (
    "DeliverMessage.heartbeat",
    "ComputeTargetAssignment",
    "CompleteAssignorRun",
    "DeliverMessage.leave",
    "DeliverMessage.static_leave",
    "DeliverMessage.offset_commit",
    "SessionTimeout",
    "RebalanceTimeout",
    "MetadataChange",
    "CoordinatorFailover",
    "CoordinatorLoaded",
    "ExpireOffsets",
    "DeleteGroup",
    "AssignmentIntervalElapses",
    "Unchanged",
)


def relation(pre: SymState, post: SymState, o: Options) -> BoolRef:
    """The transition relation: the disjunction of every family."""
    return z3.Or(*[f.formula for f in families(pre, post, o)])


def initial(s: SymState) -> BoolRef:
    """``system.consumer_initial``: an empty group at epoch 0 (1 with the Kafka 4.3 epoch
    layout), nothing committed (no commit refused either, with KIP-1251 fields)."""
    return z3.And(
        z3.BoolVal(True) if s.holder_rejected is None else z3.Not(s.holder_rejected),
        z3.ForAll([_m], z3.Not(s.is_member(_m))),
        z3.ForAll(
            [_m, _p],
            z3.And(*[z3.Not(getattr(s, r)(_m, _p)) for r in MEMBER_RELATIONS]),
        ),
        z3.ForAll([_p], z3.Not(s.pe_held(_p))),
        s.group_epoch == s.assignment_epoch,
        z3.Or(s.group_epoch == 0, s.group_epoch == 1),
        z3.Not(s.loading),
        z3.Not(s.server_error),
        *[z3.Not(r.on) for r in s.runs],
        z3.BoolVal(True) if s.interval_pending is None else z3.Not(s.interval_pending),
        _no_history(s),
    )


def _no_history(s: SymState) -> BoolRef:
    """An empty KIP-1251 assignment history (true where the state keeps none)."""
    if s.history is None:
        return z3.BoolVal(True)
    e = z3.Int("history.e")
    return z3.ForAll([_m, _p, e], z3.Not(s.history(_m, _p, e)))


# --------------------------------------------------------------------------- the model's actions


METADATA_ACTIONS = (
    AddPartitions,
    RecreateTopic,
    CreateTopic,
    DeleteTopic,
    ChangePartitionRacks,
    ResolveRegularExpressions,
)


def family_of(action: Action) -> str:
    """The family a model action belongs to."""
    if isinstance(action, DeliverMessage) and action.message.to_coordinator:
        body = action.message.body
        if isinstance(body, OffsetCommitRequest):
            return "DeliverMessage.offset_commit"
        if isinstance(body, ConsumerGroupHeartbeatRequest):
            if body.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
                return "DeliverMessage.leave"
            if body.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                return "DeliverMessage.static_leave"
            return "DeliverMessage.heartbeat"
        return "Unchanged"
    if isinstance(action, ComputeTargetAssignment):
        return "ComputeTargetAssignment"
    if isinstance(action, CompleteAssignorRun):
        return "CompleteAssignorRun"
    if isinstance(action, AssignmentIntervalElapses):
        return "AssignmentIntervalElapses"
    if isinstance(action, SessionTimeout):
        return "SessionTimeout"
    if isinstance(action, RebalanceTimeout):
        return "RebalanceTimeout"
    if isinstance(action, METADATA_ACTIONS):
        return "MetadataChange"
    if isinstance(action, CoordinatorFailover):
        return "CoordinatorFailover"
    if isinstance(action, CoordinatorLoaded):
        return "CoordinatorLoaded"
    if isinstance(action, ExpireOffsets):
        return "ExpireOffsets"
    if isinstance(action, DeleteGroup):
        return "DeleteGroup"
    return "Unchanged"


# --------------------------------------------------------------------------- expiry, deletion


def _deleted_group(pre: SymState, post: SymState, o: Options) -> BoolRef:
    """``coordinator.delete_group`` (``GroupMetadataManager.deleteGroup``,
    ``OffsetMetadataManager.deleteAllOffsets``): what remains is a new group's record
    (``coordinator.new_group``: no members, target, partition epochs or offsets, group and
    assignment epoch ``Options.new_group_epoch``), marked deleted, one deletion more.
    Integer fields of the members gone are left open, as the abstraction leaves a
    non-member's; the ghosts (``server_error``, ``holder_rejected``) and which partitions
    exist stay. The assignor runs in flight stay on the executor, each marked as its
    group's deleted (``RunSlot.deleted``, ``AssignorRun.group_deleted``)."""
    assert post.deleted is not None
    assert pre.deletions is not None
    out = [
        z3.ForAll([_m], z3.Not(post.is_member(_m))),
        z3.ForAll([_m, _p], z3.And(*[z3.Not(getattr(post, r)(_m, _p)) for r in MEMBER_RELATIONS])),
        z3.ForAll([_p], z3.Not(post.pe_held(_p))),
        post.group_epoch == o.new_group_epoch,
        post.assignment_epoch == o.new_group_epoch,
        post.loading == pre.loading,
        post.server_error == pre.server_error,
        post.deleted,
        post.deletions == pre.deletions + 1,
        # A new group's record: no AssignmentTimestamp.
        interval_set(pre, post, z3.BoolVal(False), z3.BoolVal(True)),
    ]
    if pre.present is not None and post.present is not None:
        out.append(z3.ForAll([_p], post.present(_p) == pre.present(_p)))
    if pre.holder_rejected is not None and post.holder_rejected is not None:
        out.append(post.holder_rejected == pre.holder_rejected)
    for a, b in zip(pre.runs, post.runs, strict=True):
        out += _same_run(replace(a, deleted=None), b)
        if a.deleted is not None and b.deleted is not None:
            out.append(b.deleted == z3.Or(a.on, a.deleted))
    return z3.And(*out)


def _deletion_kept(pre: SymState, post: SymState) -> BoolRef:
    """The deletion fields as they were (a family that neither deletes nor creates)."""
    if pre.deleted is None or post.deleted is None:
        return z3.BoolVal(True)
    return z3.And(post.deleted == pre.deleted, post.deletions == pre.deletions)


def _present_kept(pre: SymState, post: SymState) -> BoolRef:
    if pre.present is None or post.present is None:
        return z3.BoolVal(True)
    return z3.ForAll([_p], post.present(_p) == pre.present(_p))


def expire_offsets(pre: SymState, post: SymState, o: Options) -> Family:
    """``ExpireOffsets`` (``system._expire_offsets``;
    ``OffsetMetadataManager.cleanupExpiredOffsets`` with KIP-211's expiration condition,
    ``coordinator.expirable_offsets``): of one topic that exists (the parameter ``topic``,
    any set of existing partitions: the abstraction keeps no topics), the committed
    offsets of partitions no member subscribes to are removed — at least one, or the model
    offers no such action. No wall-clock time: the retention is taken to have passed, as
    the model takes it. With ``Options.delete_expired_groups``, an empty group left without
    offsets is deleted (``coordinator.maybe_delete_expired_group``,
    ``GroupMetadataManager.maybeDeleteGroup``). The variant ``expire-by-commit-time`` lets
    any committed offset expire (KAFKA-4682)."""
    n = "ExpireOffsets"
    topic = z3.Function(f"{n}.topic@{post.tag}", PARTITION, z3.BoolSort())

    def committed(q: ExprRef) -> BoolRef:
        return z3.Exists([_m], pre.committed_by(_m, q))

    def expirable(q: ExprRef) -> BoolRef:
        if o.variant == "expire-by-commit-time":
            return committed(q)
        return z3.And(committed(q), z3.Not(z3.Exists([_m], pre.subscribed(_m, q))))

    def gone(q: ExprRef) -> BoolRef:
        return z3.And(topic(q), expirable(q))

    exists: Set = pre.present if pre.present is not None else (lambda q: z3.BoolVal(True))
    cleaned = z3.And(
        unchanged(pre, post, skip=frozenset({"committed_by"})),
        z3.ForAll(
            [_m, _p],
            post.committed_by(_m, _p) == z3.And(pre.committed_by(_m, _p), z3.Not(gone(_p))),
        ),
        _present_kept(pre, post),
        _deletion_kept(pre, post),
    )
    formula = z3.And(
        z3.Exists([_p], gone(_p)),
        z3.ForAll([_p], z3.Implies(topic(_p), exists(_p))),
    )
    if o.group_deletion and o.delete_expired_groups:
        emptied = z3.And(
            z3.ForAll([_m], z3.Not(pre.is_member(_m))),
            z3.ForAll([_m, _p], z3.Implies(pre.committed_by(_m, _p), gone(_p))),
        )
        formula = z3.And(formula, z3.If(emptied, _deleted_group(pre, post, o), cleaned))
    else:
        formula = z3.And(formula, cleaned)
    return Family(n, formula, {"topic": topic})


def delete_group(pre: SymState, post: SymState, o: Options) -> Family:
    """``DeleteGroup`` (``system._delete_group``; ``GroupMetadataManager.deleteGroups``):
    refused with GROUP_ID_NOT_FOUND when the group is deleted, and with NON_EMPTY_GROUP
    unless it is empty (``ConsumerGroup.validateDeleteGroup``,
    ``coordinator.validate_delete_group``) — a refusal changes nothing —, else the group
    is deleted (:func:`_deleted_group`). Not offered while a new coordinator loads the
    group. The variant ``delete-non-empty-group`` drops the NON_EMPTY_GROUP check."""
    n = "DeleteGroup"
    assert pre.deleted is not None
    empty = z3.ForAll([_m], z3.Not(pre.is_member(_m)))
    if o.variant == "delete-non-empty-group":
        empty = z3.BoolVal(True)
    go = z3.And(z3.Not(pre.deleted), empty)
    kept = z3.And(unchanged(pre, post), _present_kept(pre, post), _deletion_kept(pre, post))
    formula = z3.And(z3.Not(pre.loading), z3.If(go, _deleted_group(pre, post, o), kept))
    return Family(n, formula, {})


def _with_expiry_and_deletion(
    pre: SymState, post: SymState, o: Options, out: list[Family]
) -> list[Family]:
    """The families with KIP-211 expiry and group deletion (``Options.offset_expiry``,
    ``Options.group_deletion``): ``ExpireOffsets`` and ``DeleteGroup`` added before
    ``Unchanged``; every other family keeps the deletion fields — but a heartbeat at epoch 0
    that passes validation, which creates a deleted group again
    (``coordinator.handle_consumer_group_heartbeat``: ``deleted`` cleared before the
    pipeline; at another epoch a deleted group answers GROUP_ID_NOT_FOUND, and has no
    member anyway) — and which partitions exist — but a metadata change, which may create or
    delete topics."""
    extra = [
        *([expire_offsets(pre, post, o)] if o.offset_expiry else []),
        *([delete_group(pre, post, o)] if o.group_deletion else []),
    ]
    kept: list[Family] = []
    for f in out:
        formula = f.formula
        if f.name != "MetadataChange":
            formula = z3.And(formula, _present_kept(pre, post))
        elif post.present is not None:
            # A metadata change drops the offsets of deleted topics only
            # (``system._delete_topic``, ``_recreate_topic``: drop_offsets_of_topic).
            formula = z3.And(
                formula,
                z3.ForAll(
                    [_m, _p],
                    z3.Implies(
                        z3.And(pre.committed_by(_m, _p), z3.Not(post.committed_by(_m, _p))),
                        z3.Not(post.present(_p)),
                    ),
                ),
            )
        if f.name == "DeliverMessage.heartbeat" and pre.deleted is not None:
            assert post.deleted is not None
            r, owned = f.params["epoch"], f.params["owned"]
            creates = z3.And(
                z3.Not(pre.loading),
                z3.Not(f.params["invalid"]),
                r == 0,
                z3.Not(f.params["owned_null"]),
                z3.ForAll([_p], z3.Not(owned(_p))),
            )
            formula = z3.And(
                formula,
                post.deleted == z3.And(pre.deleted, z3.Not(creates)),
                post.deletions == pre.deletions,
            )
        else:
            formula = z3.And(formula, _deletion_kept(pre, post))
        kept.append(replace(f, formula=formula))
    return kept[:-1] + extra + kept[-1:] if kept and kept[-1].name == "Unchanged" else kept + extra


def initial_expiry_and_deletion(s: SymState) -> BoolRef:
    """``system.consumer_initial`` on the expiry and deletion fields a state keeps: every
    partition exists as the configuration declares it, the group is not deleted and never
    was."""
    out: list[BoolRef] = []
    if s.deleted is not None:
        out += [z3.Not(s.deleted), s.deletions == 0]
    return z3.And(*out) if out else z3.BoolVal(True)
