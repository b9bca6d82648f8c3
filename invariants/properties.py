"""The named properties of the KIP-848 model (docs/invariants.md).

Each property is a value: a name, a kind, a one-sentence description in KIP terms, the KIP
section or Kafka rule it comes from and — for state and step properties — one expression
in the ``invariants.expr`` language, compiled to Python here and encoded into Z3 by
``invariants.z3``. Big invariants are split into conjuncts (``Invariant.Conjunct``) so a
violation names the conjunct.

Every property is registered in ``PROPERTIES`` where it is declared (``declare``: here
through ``_prop``, in ``invariants.liveness`` for Convergence and the witnesses), in
declaration order, and a name declared twice is refused. ``STATE_PROPERTIES`` and
``STEP_PROPERTIES`` are views of it: a property is checked in the order it is declared
below. The catalogue table of docs/invariants.md is generated from it too
(``python -m reports.catalogue --into docs/invariants.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from invariants.expr import (
    Cmp,
    Compiled,
    Const,
    Expr,
    Fn,
    Implies,
    Not,
    Or,
    Rel,
    Same,
    Snapshot,
    StepSnapshot,
    Var,
    all_of,
    any_of,
    compile_expr,
    exists,
    forall,
    witness,
)
from invariants.registry import Registry
from model.actions import Action
from model.system import AnyState

CONSUMER = frozenset({"consumer"})
CLASSIC = frozenset({"classic"})
BOTH = frozenset({"consumer", "classic"})


class Kind(Enum):
    """When a property must hold."""

    ALWAYS_STATE = "always (state)"
    ALWAYS_STEP = "always (step)"
    SOMETIMES = "sometimes"
    EVENTUALLY = "eventually"


@dataclass(frozen=True)
class Property:
    """A named property. ``expr`` is set for state and step properties; ``witness_of`` for
    ``SOMETIMES`` witnesses that need more than the snapshot (e.g. the action taken)."""

    name: str
    kind: Kind
    description: str
    reference: str
    expr: Expr | None = None
    witness_of: Callable[[AnyState, Action, AnyState], bool] | None = None
    compiled: Compiled | None = field(default=None, compare=False, repr=False)
    families: frozenset[str] = CONSUMER
    """The protocol families whose states the property reads (``Snapshot.family``)."""
    note: str = field(default="", compare=False)
    """What docs/invariants.md's catalogue adds to ``description``: how the model reads
    the property (its ghosts, the config options it needs); not part of a report."""

    def applies(self, structure: Snapshot | StepSnapshot) -> bool:
        """Whether the property reads states of ``structure``'s protocol family. A step
        that converts the group to the other type (a mixed config) is read only by the
        properties of both families, whose vocabulary both states share — and not at all
        when the group it replaces is empty (Kafka deletes the empty group and creates the
        new one at epoch 0: the two states are of two different groups)."""
        if isinstance(structure, Snapshot):
            return structure.family in self.families
        pre, post = structure.pre, structure.post
        if pre.family != post.family:
            return bool(pre.relations["is_member"]) and {pre.family, post.family} <= self.families
        return pre.family in self.families

    def holds(self, structure: Snapshot | StepSnapshot) -> bool:
        """Evaluate the Python reading of the expression."""
        assert self.compiled is not None, f"{self.name} has no expression"
        return self.compiled(structure, {})

    def explain(self, structure: Snapshot | StepSnapshot) -> str:
        """Name the elements that falsify a universally quantified property."""
        assert self.expr is not None
        binding = witness(self.expr, structure)
        if not binding:
            return self.description
        parts = []
        for k, v in binding.items():
            parts.append(f"{k}={v[0]}-{v[1]}" if isinstance(v, tuple) else f"{k}={v}")
        return f"{self.description} Counterexample: " + ", ".join(parts) + "."


PROPERTIES: Registry[Property] = Registry("property")
"""Every named property, witnesses included, in declaration order (``declare``)."""


def declare(prop: Property) -> Property:
    """Register ``prop`` in ``PROPERTIES`` and return it: a property's declaration (a
    name declared twice is a ``ValueError``)."""
    return PROPERTIES.register(prop.name, prop)


def _prop(
    name: str,
    kind: Kind,
    description: str,
    reference: str,
    expr: Expr,
    families: frozenset[str] = frozenset({"consumer"}),
    note: str = "",
) -> Property:
    """Declare a state or step property: its expression compiled, registered."""
    return declare(
        Property(
            name,
            kind,
            description,
            reference,
            expr,
            None,
            compile_expr(expr),
            families=families,
            note=note,
        )
    )


c1, c2, c = Var("c1", "client"), Var("c2", "client"), Var("c", "client")
m1, m2, m = Var("m1", "member"), Var("m2", "member"), Var("m", "member")
p, q = Var("p", "partition"), Var("q", "partition")


def R(name: str, *args: Var, when: str = "now") -> Rel:
    return Rel(name, args, when)  # type: ignore[arg-type]


def F(name: str, *args: Var, when: str = "now") -> Fn:
    return Fn(name, args, when)  # type: ignore[arg-type]


FRESH_TARGET = Cmp("==", F("group_epoch"), F("assignment_epoch"))
"""The target assignment reflects the current group metadata (no rebalance pending)."""


# --------------------------------------------------------------------------- state

NO_DOUBLE_CLIENT_OWNERSHIP = _prop(
    "NoDoubleClientOwnership",
    Kind.ALWAYS_STATE,
    "No partition is consumed by two clients at once — a zombie apart (a live client whose "
    "member a coordinator timer removed: KIP-848 fences its offset commits instead, "
    "OffsetCommitAtValidEpoch).",
    "KIP-848 Member Epoch - Reconciliation (revoke before assign); KAFKA-20332; KIP-848 "
    "Session timeout",
    forall(c1, c2, p)(
        Implies(
            all_of(
                R("client_owns", c1, p),
                R("client_owns", c2, p),
                Not(R("zombie", c1)),
                Not(R("zombie", c2)),
            ),
            Same(c1, c2),
        )
    ),
    families=BOTH,
)

NO_DOUBLE_MEMBER_ASSIGNMENT = _prop(
    "NoDoubleMemberAssignment",
    Kind.ALWAYS_STATE,
    "No partition is assigned to, or pending revocation from, two members at once.",
    "KIP-848 Member Epoch - Reconciliation; ConsumerGroup partition epochs (KAFKA-16147)",
    forall(m1, m2, p)(Implies(all_of(R("holds", m1, p), R("holds", m2, p)), Same(m1, m2))),
    families=BOTH,
)

OWNED_PARTITIONS_ARE_HELD = _prop(
    "OwnedPartitionsAreHeld",
    Kind.ALWAYS_STATE,
    "A client consumes only partitions its member holds at the coordinator (a zombie "
    "apart: see NoDoubleClientOwnership); classic: a client that completed the group's "
    "current generation consumes only what that generation assigned its member.",
    "KIP-848 Member Epoch - Reconciliation; ConsumerGroup.currentPartitionEpoch; "
    "ClassicGroup.setAndPropagateAssignment",
    forall(c, p)(
        Implies(
            all_of(R("client_owns", c, p), Not(R("zombie", c)), R("client_synced", c)),
            exists(m)(all_of(R("client_member", c, m), R("holds", m, p))),
        )
    ),
    families=BOTH,
)

TARGET_UNIQUE = _prop(
    "ValidTargetAssignment.Unique",
    Kind.ALWAYS_STATE,
    "The target assignment gives each partition to at most one member.",
    "KIP-848 Assignment Process",
    forall(m1, m2, p)(Implies(all_of(R("target", m1, p), R("target", m2, p)), Same(m1, m2))),
)

TARGET_ONLY_SUBSCRIBED = _prop(
    "ValidTargetAssignment.OnlySubscribed",
    Kind.ALWAYS_STATE,
    "A current target assignment gives partitions only to members subscribed to their topic.",
    "KIP-848 Assignment Process",
    Implies(
        FRESH_TARGET,
        forall(m, p)(Implies(R("target", m, p), all_of(R("is_member", m), R("subscribed", m, p)))),
    ),
)

TARGET_COVERS = _prop(
    "ValidTargetAssignment.Covers",
    Kind.ALWAYS_STATE,
    "A current target assignment gives every subscribed partition to some member.",
    "KIP-848 Assignment Process",
    Implies(
        FRESH_TARGET,
        forall(p)(
            Implies(
                exists(m1)(all_of(R("is_member", m1), R("subscribed", m1, p))),
                exists(m2)(R("target", m2, p)),
            )
        ),
    ),
)

ASSIGNMENT_EPOCH_BOUNDED = _prop(
    "EpochOrder.AssignmentEpoch",
    Kind.ALWAYS_STATE,
    "The assignment epoch never exceeds the group epoch.",
    "KIP-848 Assignment Epoch; ConsumerGroup.maybeUpdateGroupState",
    Cmp("<=", F("assignment_epoch"), F("group_epoch")),
)

MEMBER_EPOCH_BOUNDED = _prop(
    "EpochOrder.MemberEpoch",
    Kind.ALWAYS_STATE,
    "A member epoch never exceeds the assignment epoch.",
    "KIP-848 Member Epoch; ConsumerGroup.maybeUpdateGroupState",
    forall(m)(Implies(R("is_member", m), Cmp("<=", F("member_epoch", m), F("assignment_epoch")))),
)

STATUS_EMPTY = _prop(
    "GroupStatusConsistent.Empty",
    Kind.ALWAYS_STATE,
    "The group is EMPTY exactly when it has no members.",
    "KIP-848 Group States",
    Or(
        (
            all_of(Cmp("==", F("group_status"), Const(0)), Not(exists(m)(R("is_member", m)))),
            all_of(Cmp("!=", F("group_status"), Const(0)), exists(m)(R("is_member", m))),
        )
    ),
)

STATUS_STABLE = _prop(
    "GroupStatusConsistent.Stable",
    Kind.ALWAYS_STATE,
    "A STABLE group has every member at the assignment epoch holding exactly its target.",
    "KIP-848 Group States; ConsumerGroup.maybeUpdateGroupState",
    Implies(
        Cmp("==", F("group_status"), Const(3)),
        all_of(
            FRESH_TARGET,
            forall(m, p)(
                Implies(
                    R("is_member", m),
                    all_of(
                        Cmp("==", F("member_epoch", m), F("assignment_epoch")),
                        R("stable", m),
                        Not(R("revoking", m, p)),
                        Or(
                            (
                                all_of(R("assigned", m, p), R("target", m, p)),
                                all_of(Not(R("assigned", m, p)), Not(R("target", m, p))),
                            )
                        ),
                    ),
                )
            ),
        ),
    ),
)

NO_SERVER_ERROR = _prop(
    "NoServerError",
    Kind.ALWAYS_STATE,
    "The coordinator never fails a heartbeat with UNKNOWN_SERVER_ERROR: its own bookkeeping "
    "refusing a write means the rules disagree with each other.",
    "ConsumerGroup.addPartitionEpochs hardening (KAFKA-16147)",
    forall(c)(Not(R("server_error", c))),
)

REVOKED_BEFORE_REASSIGNED = _prop(
    "RevokedBeforeReassigned",
    Kind.ALWAYS_STATE,
    "A partition a client is still revoking — its offset being committed or "
    "onPartitionsRevoked running — is consumed by no other client (zombies apart).",
    "KIP-848 Consumer Group Heartbeat API (the member acknowledges a revocation only after "
    "its callback); ConsumerRebalanceListener.onPartitionsRevoked",
    forall(c1, c2, p)(
        Implies(
            all_of(
                R("client_revoking", c1, p),
                R("client_owns", c2, p),
                Not(R("zombie", c1)),
                Not(R("zombie", c2)),
            ),
            Same(c1, c2),
        )
    ),
)

JOINING_OWNS_NOTHING = _prop(
    "JoiningClientOwnsNothing",
    Kind.ALWAYS_STATE,
    "A client joins or rejoins at epoch 0 owning no partition: what it held was revoked or "
    "lost first (onPartitionsLost before a rejoin).",
    "KIP-848 Consumer Group Heartbeat API (FENCED_MEMBER_EPOCH); "
    "AbstractMembershipManager.transitionToFenced, transitionToStale",
    forall(c, p)(Implies(R("client_joining", c), Not(R("client_owns", c, p)))),
)

HOLDER_COMMITS_ACCEPTED = _prop(
    "HolderCommitsAccepted",
    Kind.ALWAYS_STATE,
    "An offset commit from the member that holds every partition of it since an epoch no "
    "newer than the request's is accepted, even when the member epoch moved on meanwhile "
    "(no false fencing of the true owner; read only with KIP-1251 assignment epochs).",
    "KIP-1251; KAFKA-20066; ConsumerGroup.validateOffsetCommit",
    Cmp("==", F("holder_commit_rejected"), Const(0)),
    note=(
        "The coordinator judges each refused commit against KIP-1251's rule (ghost "
        "`Group.holder_commit_rejected`), only with `Config.assignment_epochs`, which records "
        "the epochs that judgement needs."
    ),
)

ASSIGNMENT_EPOCH_HOLDER_UNIQUE = _prop(
    "AssignmentEpochHolderUnique",
    Kind.ALWAYS_STATE,
    "Over the group's history, a (partition, KIP-1251 assignment epoch) pair names at most "
    "one member — the processes of one static instance count as one: two members are "
    "never stamped with a partition at the same epoch, at once or at different times "
    "(ghost Group.assignment_history; read only with KIP-1251 assignment epochs).",
    "KIP-1251 (an older-epoch commit is fenced by the partition's assignment epoch); "
    "CurrentAssignmentBuilder.computeNextAssignment; ConsumerGroup.validateOffsetCommit",
    forall(m, p)(Not(R("epoch_clash", m, p))),
    note=(
        "KIP-1251 assignment epochs are `Config.assignment_epochs`, which carries the ghost "
        '(below, "The assignment history").'
    ),
)

TARGET_ONLY_MEMBERS = _prop(
    "ValidTargetAssignment.OnlyMembers",
    Kind.ALWAYS_STATE,
    "The target assignment names only members of the group — a target installed from an "
    "offloaded assignor run too, though a member it assigned left, was fenced or was "
    "replaced while it ran.",
    "KIP-1263 Assignment Offload (removed members' assignments discarded, replaced static "
    "members' moved); GroupMetadataManager.consumerGroupFenceMember",
    forall(m, p)(Implies(R("target", m, p), R("is_member", m))),
)

AT_MOST_ONE_ASSIGNOR_RUN = _prop(
    "AssignorRunsInFlight.AtMostOne",
    Kind.ALWAYS_STATE,
    "At most one assignor run of the group is in flight on the coordinator's executor.",
    "KIP-1263 Assignment Offload (new calculations disallowed while one is in flight)",
    Cmp("<=", F("assignor_runs"), Const(1)),
)

STATIC_INSTANCE_UNIQUE = _prop(
    "StaticInstanceUnique",
    Kind.ALWAYS_STATE,
    "At most one member of the group holds a static group.instance.id: a new process of "
    "the instance replaces the old member id, which is fenced.",
    "KIP-345 Static Membership; GroupMetadataManager.classicGroupJoinNewStaticMember",
    forall(m1, m2)(
        Implies(
            all_of(
                R("is_member", m1),
                R("is_member", m2),
                Cmp("!=", F("instance", m1), Const(0)),
                Cmp("==", F("instance", m1), F("instance", m2)),
            ),
            Same(m1, m2),
        )
    ),
    families=CLASSIC,
)

MIGRATION_POLICY_HONOURED = _prop(
    "MigrationPolicyHonoured",
    Kind.ALWAYS_STATE,
    "A consumer group follows group.consumer.migration.policy: under 'disabled' it holds "
    "no classic member; under a policy that allows a downgrade it never consists of "
    "classic members only (the last consumer-protocol member's leave, fencing or "
    "replacement converts it to a classic group).",
    "KIP-848 Online Migration; ConsumerGroupMigrationPolicy; KAFKA-20640; KAFKA-17317",
    Cmp("==", F("policy_breached"), Const(0)),
    note="Read through the ghost `Group.migration_policy_breached`, in mixed configs.",
)

STABLE_ASSIGNMENT_SUBSCRIBED = _prop(
    "StableAssignmentSubscribed",
    Kind.ALWAYS_STATE,
    "In a Stable classic group every member's assignment lies within its subscription: a "
    "member that joined with other topics was given partitions of those, through a "
    "rebalance, before the group became Stable.",
    "KIP-848 Online Migration (the classic group a downgrade creates); "
    "GroupMetadataManager.convertToClassicGroup (KAFKA-19546)",
    Implies(
        Cmp("==", F("group_status"), Const(3)),
        forall(m, p)(
            Implies(
                all_of(R("target", m, p), R("exists", p)),
                R("subscribed", m, p),
            )
        ),
    ),
    families=CLASSIC,
    note="Only partitions of existing topics count.",
)

TARGET_BY_PREFERRED_ASSIGNOR = _prop(
    "TargetByPreferredAssignor",
    Kind.ALWAYS_STATE,
    "A current target (assignment epoch = group epoch) was computed by the server "
    "assignor the members ask for most: a change of the group's preferred assignor — a "
    "member switching assignors, or a static member replaced by one of the other protocol "
    "— bumps the group epoch so the target is computed again.",
    "KIP-848 Assignor Selection; ConsumerGroup.computePreferredServerAssignor; KAFKA-20434",
    Cmp("==", F("assignor_outdated"), Const(0)),
    note=(
        "Read through the ghost `Group.target_assignor`: members that ask for no assignor "
        "leave the target's assignor standing, so a switch back to the configured default is "
        "not judged."
    ),
)

STATIC_INDEX_CONSISTENT = _prop(
    "StaticIndexConsistent",
    Kind.ALWAYS_STATE,
    "The group's static-member index agrees with its members: every static member is "
    "indexed under its own group.instance.id, and every entry names a member that holds "
    "that instance id — no entry is left behind for an instance id a member gave up or a "
    "member that left, so a later join of that instance id finds no one.",
    "KIP-345 Static Membership; ConsumerGroup.updateMember / removeMember "
    "(ConsumerGroup.staticMembers); KAFKA-20747",
    forall(m)(
        all_of(
            Implies(
                all_of(R("is_member", m), Cmp("!=", F("instance", m), Const(0))),
                R("indexed", m),
            ),
            any_of(
                all_of(R("indexed", m), Cmp("==", F("index_entries", m), Const(1))),
                all_of(Not(R("indexed", m)), Cmp("==", F("index_entries", m), Const(0))),
            ),
        )
    ),
)

# --------------------------------------------------------------------------- step

MEMBER_EPOCH_MONOTONE = _prop(
    "MemberEpochMonotone",
    Kind.ALWAYS_STEP,
    "A member's epoch at the coordinator never decreases, except to -2 on a static "
    "member's temporary leave (fencing removes the member).",
    "KIP-848 Member Epoch",
    forall(m)(
        Implies(
            all_of(R("is_member", m, when="pre"), R("is_member", m, when="post")),
            any_of(
                Cmp(">=", F("member_epoch", m, when="post"), F("member_epoch", m, when="pre")),
                Cmp("==", F("member_epoch", m, when="post"), Const(-2)),
            ),
        )
    ),
    families=BOTH,
)

CLIENT_EPOCH_MONOTONE = _prop(
    "ClientEpochMonotone",
    Kind.ALWAYS_STEP,
    "A client process's member epoch never decreases except when it is fenced or leaves "
    "(back to 0).",
    "KIP-848 Consumer Group Heartbeat API; KAFKA-19335",
    forall(c)(
        Implies(
            Cmp(
                "==",
                F("client_incarnation", c, when="pre"),
                F("client_incarnation", c, when="post"),
            ),
            any_of(
                Cmp(">=", F("client_epoch", c, when="post"), F("client_epoch", c, when="pre")),
                Cmp("==", F("client_epoch", c, when="post"), Const(0)),
            ),
        )
    ),
)

HAND_OUT_ONLY_RELEASED = _prop(
    "HandOutOnlyReleased",
    Kind.ALWAYS_STEP,
    "A member is given a partition only when no other member still holds it (a static "
    "member's new instance may take over the partitions of the instance it replaces).",
    "KIP-848 Member Epoch - Reconciliation, phase 3; Static Membership",
    forall(m1, m2, p)(
        Implies(
            all_of(
                R("assigned", m1, p, when="post"),
                Not(R("holds", m1, p, when="pre")),
                R("holds", m2, p, when="pre"),
            ),
            any_of(
                Same(m1, m2),
                all_of(
                    Cmp("!=", F("instance", m2, when="pre"), Const(0)),
                    Cmp("==", F("instance", m1, when="post"), F("instance", m2, when="pre")),
                    Not(R("is_member", m2, when="post")),
                ),
            ),
        )
    ),
)

OFFSET_COMMIT_AT_VALID_EPOCH = _prop(
    "OffsetCommitAtValidEpoch",
    Kind.ALWAYS_STEP,
    "An offset is committed only by a member of the group at its current member epoch, "
    "or (KIP-1251) at an older epoch by the member that holds the partition since an epoch "
    "no newer than that (no zombie commits).",
    "KIP-848 OffsetCommit API; KIP-1251; ConsumerGroup.validateOffsetCommit",
    forall(m, p)(
        Implies(
            all_of(
                R("committed_by", m, p, when="post"),
                any_of(
                    Not(R("committed_by", m, p, when="pre")),
                    Cmp(
                        "!=",
                        F("committed_epoch", p, when="pre"),
                        F("committed_epoch", p, when="post"),
                    ),
                ),
            ),
            all_of(
                R("is_member", m, when="pre"),
                any_of(
                    Cmp(
                        "==",
                        F("member_epoch", m, when="pre"),
                        F("committed_epoch", p, when="post"),
                    ),
                    all_of(
                        R("holds", m, p, when="pre"),
                        Cmp("<=", Const(0), F("assigned_since", m, p, when="pre")),
                        Cmp(
                            "<=",
                            F("assigned_since", m, p, when="pre"),
                            F("committed_epoch", p, when="post"),
                        ),
                        Cmp(
                            "<",
                            F("committed_epoch", p, when="post"),
                            F("member_epoch", m, when="pre"),
                        ),
                    ),
                ),
            ),
        )
    ),
    families=BOTH,
    note=(
        "Without `Config.assignment_epochs` no assignment epoch is defined and the rule is "
        "KIP-848's strict equality."
    ),
)

EPOCH_COMMIT_FROM_HOLDER = _prop(
    "EpochCommitFromHolder",
    Kind.ALWAYS_STEP,
    "An offset commit accepted at an epoch E older than its member's (KIP-1251) for "
    "partition P comes from the member that held (P, E) by the group's history: the "
    "member was stamped with P at an epoch s <= E and no other member at an epoch in "
    "[s, E] (ghost Group.assignment_history; read only with KIP-1251 assignment epochs).",
    "KIP-1251; ConsumerGroup.validateOffsetCommit",
    forall(m, p)(
        Implies(
            all_of(
                R("committed_by", m, p, when="post"),
                any_of(
                    Not(R("committed_by", m, p, when="pre")),
                    Cmp(
                        "!=",
                        F("committed_epoch", p, when="pre"),
                        F("committed_epoch", p, when="post"),
                    ),
                ),
                Cmp("<", F("committed_epoch", p, when="post"), F("member_epoch", m, when="pre")),
            ),
            R("commit_by_epoch_holder", m, p, when="post"),
        )
    ),
    note="KIP-1251 assignment epochs are `Config.assignment_epochs`.",
)

GENERATION_MONOTONE = _prop(
    "GenerationMonotone",
    Kind.ALWAYS_STEP,
    "The group's generation never decreases, except when the group is deleted (a new one "
    "starts at 0), nor does a client process's generation, except when it is reset (-1) "
    "to rejoin.",
    "ClassicGroup.initNextGeneration; AbstractCoordinator.resetStateAndGeneration; "
    "GroupMetadataManager.deleteGroup",
    all_of(
        any_of(
            Cmp(">=", F("group_epoch", when="post"), F("group_epoch", when="pre")),
            Cmp("!=", F("group_deletions", when="post"), F("group_deletions", when="pre")),
        ),
        forall(c)(
            Implies(
                Cmp(
                    "==",
                    F("client_incarnation", c, when="pre"),
                    F("client_incarnation", c, when="post"),
                ),
                any_of(
                    Cmp(">=", F("client_epoch", c, when="post"), F("client_epoch", c, when="pre")),
                    Cmp("==", F("client_epoch", c, when="post"), Const(-1)),
                ),
            )
        ),
    ),
    families=CLASSIC,
)

MOVES_ONLY_RELEASED = _prop(
    "MovesOnlyReleased",
    Kind.ALWAYS_STEP,
    "A member is assigned a partition only when no other member still reports owning it "
    "at the current generation: under the cooperative protocol a partition moves only "
    "after its owner revoked it, across two rebalances.",
    "KIP-429 Cooperative Sticky Assignor; ConsumerCoordinator.validateCooperativeAssignment",
    forall(m1, m2, p)(
        Implies(
            all_of(
                R("assigned", m1, p, when="post"),
                Not(R("assigned", m1, p, when="pre")),
                R("claims", m2, p, when="post"),
                R("is_member", m2, when="post"),
            ),
            Same(m1, m2),
        )
    ),
    families=CLASSIC,
)

NO_LIVE_OFFSET_EXPIRES = _prop(
    "NoLiveOffsetExpires",
    Kind.ALWAYS_STEP,
    "A committed offset is removed only when its partition is gone or no member of the "
    "group subscribes to its topic: the offsets of a topic a live group consumes never "
    "expire.",
    "KIP-211 Proposed Changes; OffsetMetadataManager.cleanupExpiredOffsets (KAFKA-4682, "
    "KAFKA-13636)",
    forall(p)(
        Implies(
            all_of(
                exists(m1)(R("committed_by", m1, p, when="pre")),
                Not(exists(m2)(R("committed_by", m2, p, when="post"))),
                R("exists", p, when="post"),
            ),
            Not(exists(m)(R("subscribed", m, p, when="pre"))),
        )
    ),
    families=BOTH,
)

ASSIGNMENT_EPOCH_MONOTONE = _prop(
    "AssignmentEpochMonotone",
    Kind.ALWAYS_STEP,
    "The assignment epoch never goes back: an assignor run that completes after a newer "
    "target was installed, after the emptied group was realigned, or after the group was "
    "deleted, is not installed (a deletion itself starts a new group from scratch).",
    "KIP-1263 Assignment Offload; KIP-848 Assignment Epoch; KAFKA-20442",
    any_of(
        Cmp(">=", F("assignment_epoch", when="post"), F("assignment_epoch", when="pre")),
        Cmp("!=", F("group_deletions", when="post"), F("group_deletions", when="pre")),
    ),
    note="The ghost `group_deletions()` tells the groups apart.",
)

INSTALLED_TARGET_EXISTS = _prop(
    "InstalledTarget.OnlyExisting",
    Kind.ALWAYS_STEP,
    "A newly installed target assignment gives only partitions that exist — none of a "
    "topic deleted or recreated while an offloaded assignor run computed it.",
    "KIP-1263 Assignment Offload (changes made during a run re-applied); KIP-516 topic ids",
    Implies(
        Cmp("!=", F("assignment_epoch", when="post"), F("assignment_epoch", when="pre")),
        forall(m, p)(Implies(R("target", m, p, when="post"), R("exists", p, when="post"))),
    ),
)

TARGET_EPOCH_ADVANCES = _prop(
    "TargetEpochAdvances",
    Kind.ALWAYS_STEP,
    "A member's target gains a partition only with a new assignment epoch: every target "
    "installed, inline or from an offloaded run, is stamped with the group epoch it was "
    "computed at.",
    "KIP-848 Target Assignment (assignment epoch); KIP-1263 Assignment Offload",
    forall(m, p)(
        Implies(
            all_of(
                R("target", m, p, when="post"),
                Not(R("target", m, p, when="pre")),
                R("is_member", m, when="pre"),
            ),
            Cmp(">", F("assignment_epoch", when="post"), F("assignment_epoch", when="pre")),
        )
    ),
)

STICKY_ASSIGNMENT = _prop(
    "StickyAssignment",
    Kind.ALWAYS_STEP,
    "When a sticky assignor's assignment is installed, a member keeps every partition only "
    "it reports owning unless it keeps at least its fair share without it, and then it is "
    "given no partition it did not report owning.",
    "KIP-54 and KIP-429 (stickiness); AbstractStickyAssignor.ConstrainedAssignmentBuilder",
    forall(m, p)(
        Implies(
            all_of(
                Cmp("==", F("group_status", when="pre"), Const(2)),
                Cmp("==", F("group_status", when="post"), Const(3)),
                Cmp("==", F("sticky_assignor", when="post"), Const(1)),
                R("claims", m, p, when="post"),
                forall(m2)(Implies(R("claims", m2, p, when="post"), Same(m2, m))),
                R("subscribed", m, p, when="post"),
                Not(R("assigned", m, p, when="post")),
            ),
            all_of(
                Not(R("under_share", m, when="post")),
                forall(q)(
                    Implies(R("assigned", m, q, when="post"), R("claims", m, q, when="post"))
                ),
            ),
        )
    ),
    families=CLASSIC,
    note=(
        "Read only while the selected assignor is `sticky` or `cooperative-sticky`, every "
        "member lists only those and all subscribe to the same topics."
    ),
)

LOST_ONLY_WHEN_OUT = _prop(
    "LostOnlyWhenOut",
    Kind.ALWAYS_STEP,
    "A client still in the group resets its generation, giving up its partitions as lost, "
    "only when the coordinator no longer has its member at that generation: a member the "
    "group still counts keeps its partitions, and only an assignment moves them.",
    "KIP-429 (partitions lost only by a member that fell out of the group); "
    "AbstractCoordinator.resetStateAndGeneration; ConsumerCoordinator.onJoinPrepare",
    forall(c)(
        Implies(
            all_of(
                Cmp(
                    "==",
                    F("client_incarnation", c, when="pre"),
                    F("client_incarnation", c, when="post"),
                ),
                R("client_in_group", c, when="post"),
                Cmp(">=", F("client_epoch", c, when="pre"), Const(0)),
                Cmp("==", F("client_epoch", c, when="post"), Const(-1)),
            ),
            Not(
                exists(m)(
                    all_of(
                        R("client_member", c, m, when="pre"),
                        R("is_member", m, when="pre"),
                        Cmp(
                            "==", F("member_epoch", m, when="pre"), F("client_epoch", c, when="pre")
                        ),
                    )
                )
            ),
        )
    ),
    families=CLASSIC,
)

GROUP_DELETED_ONLY_WHEN_EMPTY = _prop(
    "GroupDeletedOnlyWhenEmpty",
    Kind.ALWAYS_STEP,
    "A group is deleted — by the DeleteGroups API or after its last offset expired — only "
    "when it has no member: no member, and no client that is one, finds its group gone.",
    "ConsumerGroup.validateDeleteGroup / ClassicGroup.validateDeleteGroup (NON_EMPTY_GROUP); "
    "GroupMetadataManager.maybeDeleteGroup",
    Implies(
        Cmp("!=", F("group_deletions", when="post"), F("group_deletions", when="pre")),
        Not(exists(m)(R("is_member", m, when="pre"))),
    ),
    families=BOTH,
    note=(
        "Read through the ghost `group_deletions()` (how often the group was deleted, "
        "`Group.deletions`)."
    ),
)

STATE_PROPERTIES: tuple[Property, ...] = PROPERTIES.where(lambda p: p.kind is Kind.ALWAYS_STATE)
"""The ``ALWAYS_STATE`` properties, in declaration order (a view of ``PROPERTIES``)."""

STEP_PROPERTIES: tuple[Property, ...] = PROPERTIES.where(lambda p: p.kind is Kind.ALWAYS_STEP)
"""The ``ALWAYS_STEP`` properties, in declaration order (a view of ``PROPERTIES``)."""
