"""Inductive invariants of the KIP-848 coordinator core, for groups of any size.

The invariant ``I`` is a conjunction of catalogue properties (``invariants.properties``,
the same expressions the Python engines evaluate) and strengthening lemmas, written in the
same language (docs/invariants.md, "Proofs for groups of any size"). The obligations:

* **initiation** — ``Init ⇒ C`` for every conjunct ``C`` of ``I``;
* **consecution** — ``I ∧ F ⇒ C′`` for every conjunct ``C`` and every action family ``F``
  of the transition relation (one query each, so a failure names the family);
* **step properties** — ``I ∧ F ⇒ S(pre, post)`` for every step property ``S``.

Each is one Z3 query of the obligation runner (``invariants.z3.proof.obligations``): the
negation is asserted and ``unsat`` proves it. Every quantifier
ranges over the uninterpreted sorts of member ids and partitions, and the formulas stay in
the many-sorted effectively-propositional shape (∀ over the sorts, existentials only at
the top of the negated goal or of the relation's case conditions, no function from one
sort into another) plus linear integer arithmetic on epochs; Z3's model-based
quantifier instantiation decides them in practice. A query that times out is
``unknown`` with Z3's reason, never proved.

A ``sat`` answer is a counterexample to induction (CTI): a pre-state satisfying ``I``, a
transition of family ``F`` and a post-state violating ``C`` (or a step violating ``S``).
It is decoded into concrete values (``invariants.z3.proof.state.Concrete``) and
re-checked with the Python reading of the invariant and of the failed formula.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import z3

from invariants.expr import (
    Cmp,
    Const,
    Expr,
    Fn,
    Implies,
    Not,
    Rel,
    Same,
    StepSnapshot,
    Var,
    all_of,
    any_of,
    compile_expr,
    exists,
    forall,
)
from invariants.properties import (
    ASSIGNMENT_EPOCH_BOUNDED,
    ASSIGNMENT_EPOCH_HOLDER_UNIQUE,
    AT_MOST_ONE_ASSIGNOR_RUN,
    EPOCH_COMMIT_FROM_HOLDER,
    GROUP_DELETED_ONLY_WHEN_EMPTY,
    HAND_OUT_ONLY_RELEASED,
    HOLDER_COMMITS_ACCEPTED,
    MEMBER_EPOCH_BOUNDED,
    MEMBER_EPOCH_MONOTONE,
    NO_DOUBLE_MEMBER_ASSIGNMENT,
    NO_LIVE_OFFSET_EXPIRES,
    NO_SERVER_ERROR,
    OFFSET_COMMIT_AT_VALID_EPOCH,
    STATIC_INSTANCE_UNIQUE,
    STATUS_EMPTY,
    STATUS_STABLE,
    TARGET_EPOCH_ADVANCES,
    TARGET_ONLY_MEMBERS,
    TARGET_ONLY_SUBSCRIBED,
    TARGET_UNIQUE,
    Property,
)
from invariants.z3.proof.obligations import (
    DEFAULT_TIMEOUT_MS,
    Obligation,
    Policy,
    Query,
    Result,
    check,
)
from invariants.z3.proof.reading import read
from invariants.z3.proof.state import (
    MEMBER,
    PARTITION,
    Concrete,
    SymState,
    decode,
    render,
)
from invariants.z3.proof.transition import (
    Family,
    Options,
    families,
    initial,
    initial_expiry_and_deletion,
)

_m, _m1, _m2, _p = (
    Var("m", "member"),
    Var("m1", "member"),
    Var("m2", "member"),
    Var("p", "partition"),
)
_FRESH = Cmp("==", Fn("group_epoch"), Fn("assignment_epoch"))


@dataclass(frozen=True)
class Conjunct:
    """A conjunct of the inductive invariant: a property of the catalogue or a lemma."""

    name: str
    expr: Expr
    lemma: bool
    why: str


def _property(prop: Property) -> Conjunct:
    assert prop.expr is not None
    return Conjunct(prop.name, prop.expr, False, prop.description)


LEMMAS: tuple[Conjunct, ...] = (
    Conjunct(
        "Lemma.HeldOnlyByMembers",
        forall(_m, _p)(Implies(Rel("holds", (_m, _p)), Rel("is_member", (_m,)))),
        True,
        "Only a member of the group holds partitions: fencing removes a member with its "
        "assigned and pending partitions (ConsumerGroup.removeMember).",
    ),
    Conjunct(
        "Lemma.TargetOnlyOfMembers",
        forall(_m, _p)(Implies(Rel("target", (_m, _p)), Rel("is_member", (_m,)))),
        True,
        "The target assignment has entries for members only: a new target is computed for "
        "the members, and fencing deletes the member's entry.",
    ),
    Conjunct(
        "Lemma.PartitionEpochs",
        forall(_m, _p)(
            Implies(
                Rel("holds", (_m, _p)),
                all_of(
                    Rel("partition_held", (_p,)),
                    Cmp("==", Fn("partition_epoch", (_p,)), Fn("member_epoch", (_m,))),
                ),
            )
        ),
        True,
        "Every partition a member holds has an entry in the group's partition epochs, at "
        "the holder's member epoch (ConsumerGroup.currentPartitionEpoch): what makes the "
        "bookkeeping's checks and the reconciliation's 'is it free' question sound.",
    ),
    Conjunct(
        "Lemma.PartitionEpochsOnlyOfHolders",
        forall(_p)(
            Implies(
                Rel("partition_held", (_p,)),
                exists(_m)(Rel("holds", (_m, _p))),
            )
        ),
        True,
        "A partition has an entry in the partition epochs only while some member holds it: "
        "the bookkeeping removes a member's entries when it releases or loses them.",
    ),
    Conjunct(
        "Lemma.PendingOnlyWhileUnrevoked",
        forall(_m, _p)(Implies(Rel("revoking", (_m, _p)), Rel("unrevoked", (_m,)))),
        True,
        "Only a member in UNREVOKED_PARTITIONS has partitions pending revocation: "
        "CurrentAssignmentBuilder sets them together and clears them together.",
    ),
    Conjunct(
        "Lemma.MemberStates",
        forall(_m)(
            Implies(
                Rel("is_member", (_m,)),
                any_of(Rel("stable", (_m,)), Rel("unrevoked", (_m,)), Rel("unreleased", (_m,))),
            )
        ),
        True,
        "A member is STABLE, UNREVOKED_PARTITIONS or UNRELEASED_PARTITIONS.",
    ),
    Conjunct(
        "Lemma.MemberEpochNonNegative",
        forall(_m)(
            Implies(Rel("is_member", (_m,)), Cmp("<=", Const(0), Fn("member_epoch", (_m,))))
        ),
        True,
        "A dynamic member's epoch starts at 0 and only moves to the assignment epoch (the "
        "-2 of a static member's temporary leave is outside the abstraction).",
    ),
    Conjunct(
        "Lemma.AssignmentEpochNonNegative",
        Cmp("<=", Const(0), Fn("assignment_epoch")),
        True,
        "The assignment epoch starts at 0 (or 1) and only grows: a joining member's epoch "
        "0 never exceeds it.",
    ),
    Conjunct(
        "Lemma.AtTargetEpochHoldsTarget",
        forall(_m, _p)(
            Implies(
                all_of(
                    Rel("is_member", (_m,)),
                    Cmp("==", Fn("member_epoch", (_m,)), Fn("assignment_epoch")),
                ),
                all_of(
                    Implies(Rel("holds", (_m, _p)), Rel("target", (_m, _p))),
                    Implies(
                        all_of(_FRESH, Rel("holds", (_m, _p))),
                        Rel("subscribed", (_m, _p)),
                    ),
                    Implies(
                        all_of(
                            _FRESH,
                            Rel("stable", (_m,)),
                            Rel("target", (_m, _p)),
                            Rel("subscribed", (_m, _p)),
                        ),
                        Rel("assigned", (_m, _p)),
                    ),
                ),
            )
        ),
        True,
        "A member at the assignment epoch holds only partitions of its target and, when no "
        "new target is due, only partitions it subscribes to and, when STABLE, every "
        "partition of its target it subscribes to: CurrentAssignmentBuilder moved it to "
        "that epoch with the target as it is, and a change of target or subscription bumps "
        "the group epoch first. GroupStatusConsistent.Stable and the convergence ranking "
        "rest on it.",
    ),
    Conjunct(
        "Lemma.UnrevokedHasPending",
        forall(_m)(
            Implies(
                all_of(
                    Rel("is_member", (_m,)),
                    Rel("unrevoked", (_m,)),
                    Cmp("!=", Fn("member_epoch", (_m,)), Const(-2)),
                ),
                exists(_p)(Rel("revoking", (_m, _p))),
            )
        ),
        True,
        "A member in UNREVOKED_PARTITIONS has partitions pending revocation: "
        "CurrentAssignmentBuilder enters that state only with partitions to revoke, and a "
        "new coordinator loads them with the member "
        "(ConsumerGroupCurrentMemberAssignment.PartitionsPendingRevocation). A static "
        "member's temporary leave (epoch -2) drops them and keeps the state "
        "(consumerGroupStaticMemberGroupLeave): such a member is not meant.",
    ),
)

STATE_TARGETS: tuple[Conjunct, ...] = tuple(
    _property(p)
    for p in (
        NO_DOUBLE_MEMBER_ASSIGNMENT,
        ASSIGNMENT_EPOCH_BOUNDED,
        MEMBER_EPOCH_BOUNDED,
        TARGET_UNIQUE,
        NO_SERVER_ERROR,
        TARGET_ONLY_SUBSCRIBED,
        STATUS_EMPTY,
        STATUS_STABLE,
    )
)
"""The catalogue's state properties proved inductive (with the lemmas)."""

STEP_TARGETS: tuple[Property, ...] = (
    MEMBER_EPOCH_MONOTONE,
    HAND_OUT_ONLY_RELEASED,
    OFFSET_COMMIT_AT_VALID_EPOCH,
)
"""The catalogue's step properties proved to hold on every step from a state in ``I``."""

INVARIANT: tuple[Conjunct, ...] = STATE_TARGETS + LEMMAS

STATIC_LEMMAS: tuple[Conjunct, ...] = (
    Conjunct(
        "Lemma.MemberEpochNonNegativeOrLeft",
        forall(_m)(
            Implies(
                Rel("is_member", (_m,)),
                any_of(
                    Cmp("<=", Const(0), Fn("member_epoch", (_m,))),
                    Cmp("==", Fn("member_epoch", (_m,)), Const(-2)),
                ),
            )
        ),
        True,
        "With static members, Lemma.MemberEpochNonNegative's place: a member's epoch is "
        "at least 0, or -2 after a static member's temporary leave "
        "(consumerGroupStaticMemberGroupLeave).",
    ),
    replace(
        _property(STATIC_INSTANCE_UNIQUE),
        name="Lemma.StaticInstanceUnique",
        lemma=True,
        why="At most one member holds an instance id (the catalogue's StaticInstanceUnique, "
        "read on the consumer group): a static join finding a holder replaces it or is "
        "refused, so the static-member index read off the members' instance ids is a "
        "function.",
    ),
    Conjunct(
        "Lemma.AssignedOnlyAfterComputation",
        forall(_m, _p)(
            Implies(
                any_of(Rel("target", (_m, _p)), Rel("holds", (_m, _p))),
                Cmp("<", Const(0), Fn("assignment_epoch")),
            )
        ),
        True,
        "A target names partitions, and a member holds any, only once a target was "
        "computed, at a group epoch above the first: a replacement's copy at epoch 0 is "
        "never at the assignment epoch of a target or of what it holds.",
    ),
)
"""The lemmas of the invariant with static members (``Options.static_members``)."""

STATIC_INVARIANT: tuple[Conjunct, ...] = (
    STATE_TARGETS
    + tuple(c for c in LEMMAS if c.name != "Lemma.MemberEpochNonNegative")
    + STATIC_LEMMAS
)
"""The invariant with static members: ``Lemma.MemberEpochNonNegative`` (false of a member
at -2) gives way to ``STATIC_LEMMAS``."""


EXPIRY_LEMMAS: tuple[Conjunct, ...] = (
    Conjunct(
        "Lemma.SubscribedOnlyByMembers",
        forall(_m, _p)(Implies(Rel("subscribed", (_m, _p)), Rel("is_member", (_m,)))),
        True,
        "Only a member of the group subscribes to anything: a heartbeat stores the "
        "subscription of the member it writes, fencing removes it with the member "
        "(ConsumerGroup.removeMember), a metadata change moves members' subscriptions only, "
        "and a deletion leaves no member (GroupMetadataManager.deleteGroup). Needed by "
        "NoLiveOffsetExpires on a deletion: the deleted group's offsets belong to topics "
        "nobody subscribes to.",
    ),
)
"""The lemmas added with KIP-211 expiry or group deletion (``Options.offset_expiry``,
``group_deletion``)."""


_IN_FLIGHT = Cmp("==", Fn("run_in_flight"), Const(1))
_LIVE_RUN = all_of(_IN_FLIGHT, Cmp("==", Fn("run_group_deleted"), Const(0)))
_CURRENT_RUN = all_of(_LIVE_RUN, Cmp("==", Fn("run_epoch"), Fn("group_epoch")))

OFFLOAD_TARGETS: tuple[Conjunct, ...] = (
    _property(AT_MOST_ONE_ASSIGNOR_RUN),
    _property(TARGET_ONLY_MEMBERS),
)
"""The catalogue's state properties on KIP-1263 assignor runs proved inductive where the
states keep them (``Options.assignor_offload``). ``ValidTargetAssignment.OnlyMembers`` is
``Lemma.TargetOnlyOfMembers``, which it replaces there."""

OFFLOAD_LEMMAS: tuple[Conjunct, ...] = (
    Conjunct(
        "Lemma.RunsOldestFirst",
        Implies(Cmp("<=", Const(1), Fn("assignor_runs")), _IN_FLIGHT),
        True,
        "The run slots in use are a prefix: a heartbeat hands its run to the first free "
        "slot and a completing run's successors move up (target.start_assignor_run, "
        "install_assignor_run). With AssignorRunsInFlight.AtMostOne the run in flight is "
        "the oldest slot's, the one the other lemmas read.",
    ),
    Conjunct(
        "Lemma.RunTargetUnique",
        forall(_m1, _m2, _p)(
            Implies(
                all_of(_IN_FLIGHT, Rel("run_target", (_m1, _p)), Rel("run_target", (_m2, _p))),
                Same(_m1, _m2),
            )
        ),
        True,
        "A run's result gives each partition to at most one member: it is the assignor's "
        "valid target (AssignorRun.target_assignment), and installing it keeps that.",
    ),
    Conjunct(
        "Lemma.RunTargetOfItsMembers",
        forall(_m, _p)(
            Implies(
                all_of(_IN_FLIGHT, Rel("run_target", (_m, _p))),
                Rel("run_member", (_m,)),
            )
        ),
        True,
        "A run's result names only the members the group had when the run started "
        "(AssignorRun.member_ids).",
    ),
    Conjunct(
        "Lemma.RunEpochBounded",
        Implies(_LIVE_RUN, Cmp("<=", Fn("run_epoch"), Fn("group_epoch"))),
        True,
        "A run's epoch is the group epoch it started at, which only grows until the group "
        "is deleted, and a deletion marks the run as its deleted group's "
        "(AssignorRun.group_deleted): installing a live run keeps "
        "EpochOrder.AssignmentEpoch.",
    ),
    Conjunct(
        "Lemma.CurrentRunOnlySubscribed",
        forall(_m, _p)(
            Implies(
                all_of(_CURRENT_RUN, Rel("run_target", (_m, _p)), Rel("is_member", (_m,))),
                Rel("subscribed", (_m, _p)),
            )
        ),
        True,
        "While the group epoch is still a live run's epoch, its result gives a member only "
        "partitions it subscribes to: a change of subscription bumps the group epoch "
        "(ConsumerGroup.computeSubscriptionMetadata, on_metadata_change). Installing such "
        "a run keeps ValidTargetAssignment.OnlySubscribed.",
    ),
    Conjunct(
        "Lemma.CurrentRunMembersStay",
        forall(_m)(
            Implies(
                all_of(
                    _CURRENT_RUN,
                    Rel("run_member", (_m,)),
                    Cmp("==", Fn("run_instance", (_m,)), Const(0)),
                ),
                Rel("is_member", (_m,)),
            )
        ),
        True,
        "While the group epoch is still a live run's epoch every dynamic member the run "
        "assigned is in the group: a leave or a timer fences with a bump "
        "(consumerGroupFenceMember), so a member cannot leave and join again at that epoch.",
    ),
)
"""The lemmas added with KIP-1263 assignor offload (``Options.assignor_offload``), about
the run in flight."""

STATIC_OFFLOAD_LEMMAS: tuple[Conjunct, ...] = (
    Conjunct(
        "Lemma.RunMembersKeepInstance",
        forall(_m)(
            Implies(
                all_of(_IN_FLIGHT, Rel("run_member", (_m,)), Rel("is_member", (_m,))),
                Cmp("==", Fn("instance", (_m,)), Fn("run_instance", (_m,))),
            )
        ),
        True,
        "A member a run in flight assigned has the instance id it had when the run started "
        "(AssignorRun.static_members; 0 for a dynamic member): a process's instance id is "
        "fixed, and a replacement's copy takes the holder's, the one its own process has.",
    ),
    Conjunct(
        "Lemma.CurrentRunInstancesHeld",
        forall(_m)(
            Implies(
                all_of(
                    _CURRENT_RUN,
                    Rel("run_member", (_m,)),
                    Cmp("!=", Fn("run_instance", (_m,)), Const(0)),
                ),
                exists(_m2)(
                    all_of(
                        Rel("is_member", (_m2,)),
                        Cmp("==", Fn("instance", (_m2,)), Fn("run_instance", (_m,))),
                    )
                ),
            )
        ),
        True,
        "While the group epoch is still a live run's epoch the instance id of every static "
        "member the run assigned is held by a member: a replacement hands it to the new "
        "member id without a bump (consumerGroupStaticMemberGroupLeave, "
        "replace_static_member), a fence bumps.",
    ),
    Conjunct(
        "Lemma.CurrentRunInstanceSubscribed",
        forall(_m, _m2, _p)(
            Implies(
                all_of(
                    _CURRENT_RUN,
                    Rel("run_member", (_m2,)),
                    Rel("run_target", (_m2, _p)),
                    Rel("is_member", (_m,)),
                    Cmp("!=", Fn("run_instance", (_m2,)), Const(0)),
                    Cmp("==", Fn("instance", (_m,)), Fn("run_instance", (_m2,))),
                ),
                Rel("subscribed", (_m, _p)),
            )
        ),
        True,
        "While the group epoch is still a live run's epoch the member holding the instance "
        "id of a static member the run assigned subscribes to that member's entry: a "
        "replacement copies the subscription (a changed one bumps). Installing the run, "
        "whose entry moves to the instance's current member (KAFKA-20292), keeps "
        "ValidTargetAssignment.OnlySubscribed.",
    ),
)
"""The offload lemmas with static members (``Options.static_members``)."""


HISTORY_TARGETS: tuple[Conjunct, ...] = (
    _property(HOLDER_COMMITS_ACCEPTED),
    _property(ASSIGNMENT_EPOCH_HOLDER_UNIQUE),
)
"""The catalogue's state properties on the KIP-1251 assignment epochs and their history,
proved inductive where the states keep them (``Options.assignment_epochs``:
``SymState.since``, ``holder_rejected``, ``history``)."""

HISTORY_LEMMAS: tuple[Conjunct, ...] = (
    Conjunct(
        "Lemma.AssignedSinceNonNegative",
        forall(_m, _p)(
            Implies(
                all_of(Rel("is_member", (_m,)), Rel("holds", (_m, _p))),
                Cmp("<=", Const(0), Fn("assigned_since", (_m, _p))),
            )
        ),
        True,
        "A partition a member holds was stamped with a member epoch of at least 0 "
        "(stamp_assignment_epochs; the -2 reset of a static member's temporary leave is "
        "not encoded with assignment epochs): what OffsetCommitAtValidEpoch's KIP-1251 "
        "branch reads.",
    ),
    Conjunct(
        "Lemma.HeldStampRecorded",
        forall(_m, _p)(
            Implies(
                all_of(Rel("is_member", (_m,)), Rel("holds", (_m, _p))),
                Rel("stamp_recorded", (_m, _p)),
            )
        ),
        True,
        "A partition a member holds is in the assignment history with the member and the "
        "epoch it holds it since (Member.assignment_epochs): the system records every "
        "member's stamps after each step (coordinator.record_assignment_history).",
    ),
    Conjunct(
        "Lemma.HistoryNotAhead",
        forall(_m, _p)(Not(Rel("stamped_above_assignment_epoch", (_m, _p)))),
        True,
        "No stamp is newer than the assignment epoch: a partition enters a member's "
        "assignment only at the member epoch CurrentAssignmentBuilder moves it to, the "
        "target's, and the assignment epoch only grows until a deletion, which takes the "
        "history with it.",
    ),
    Conjunct(
        "Lemma.HistoryAtAssignmentEpochFollowsTarget",
        forall(_m1, _m2, _p)(
            Implies(
                all_of(
                    Rel("stamped_at_assignment_epoch", (_m1, _p)),
                    Rel("target", (_m2, _p)),
                ),
                Same(_m1, _m2),
            )
        ),
        True,
        "A member stamped with a partition at the assignment epoch is the one the current "
        "target gives it to, if any: it was stamped because the target gave it the "
        "partition, and the target changes only with a new assignment epoch or by losing "
        "a leaving member's entry.",
    ),
    Conjunct(
        "Lemma.HeldSinceExclusive",
        forall(_m1, _m2, _p)(Implies(Rel("stamped_since_held", (_m2, _m1, _p)), Same(_m1, _m2))),
        True,
        "While a member holds a partition no other member was stamped with it at an epoch "
        "no older than the member's stamp: another member is stamped only with a free "
        "partition (the partition epochs), and stamps made before were at older epochs. "
        "What an offset commit at an older epoch (KIP-1251) needs to come from the holder "
        "(EpochCommitFromHolder).",
    ),
)
"""The lemmas on the KIP-1251 assignment history (``Options.assignment_epochs``)."""


def history_invariant(options: Options) -> tuple[Conjunct, ...]:
    """``HISTORY_TARGETS`` and ``HISTORY_LEMMAS`` where the states keep the KIP-1251
    assignment history (``Options.assignment_epochs``), else none."""
    return HISTORY_TARGETS + HISTORY_LEMMAS if options.assignment_epochs else ()


def invariant_for(options: Options) -> tuple[Conjunct, ...]:
    """The invariant the obligations of ``options``' relation are about."""
    base = STATIC_INVARIANT if options.static_members else INVARIANT
    return offload_invariant(base, options) + expiry_lemmas(options) + history_invariant(options)


def offload_invariant(base: tuple[Conjunct, ...], options: Options) -> tuple[Conjunct, ...]:
    """``base`` with KIP-1263 assignor offload (``Options.assignor_offload``):
    ``OFFLOAD_TARGETS`` (``ValidTargetAssignment.OnlyMembers`` in place of
    ``Lemma.TargetOnlyOfMembers``, the same formula) and ``OFFLOAD_LEMMAS``; else
    ``base``."""
    if not options.assignor_offload:
        return base
    kept = tuple(c for c in base if c.name != "Lemma.TargetOnlyOfMembers")
    static = STATIC_OFFLOAD_LEMMAS if options.static_members else ()
    return (
        kept[: len(STATE_TARGETS)]
        + OFFLOAD_TARGETS
        + kept[len(STATE_TARGETS) :]
        + (OFFLOAD_LEMMAS + static)
    )


def expiry_lemmas(options: Options) -> tuple[Conjunct, ...]:
    """``EXPIRY_LEMMAS`` where the relation has KIP-211 expiry or group deletion, else
    none."""
    return EXPIRY_LEMMAS if options.offset_expiry or options.group_deletion else ()


def steps_for(options: Options) -> tuple[Property, ...]:
    """The step properties proved of ``options``' relation: ``STEP_TARGETS``, and
    ``TargetEpochAdvances`` with KIP-1263 assignor offload, ``NoLiveOffsetExpires`` with
    KIP-211 expiry (the states keep which partitions exist), ``GroupDeletedOnlyWhenEmpty``
    with group deletion, ``EpochCommitFromHolder`` with KIP-1251 assignment epochs (the
    states keep the assignment history)."""
    out = STEP_TARGETS
    if options.assignor_offload:
        out += (TARGET_EPOCH_ADVANCES,)
    if options.offset_expiry:
        out += (NO_LIVE_OFFSET_EXPIRES,)
    if options.group_deletion:
        out += (GROUP_DELETED_ONLY_WHEN_EMPTY,)
    if options.assignment_epochs:
        out += (EPOCH_COMMIT_FROM_HOLDER,)
    return out


def _fresh_pair(options: Options) -> tuple[SymState, SymState]:
    """The pre- and post-state of an obligation of ``options``' relation."""
    kept = {
        "static": options.static_members,
        "expiry": options.offset_expiry,
        "deletion": options.group_deletion,
    }
    runs = options.run_slots
    batching = options.batching
    epochs = options.assignment_epochs  # with the KIP-1251 history: SymState.history
    return (
        SymState.fresh("pre", epochs, runs=runs, **kept, batching=batching, history=epochs),
        SymState.fresh("post", epochs, runs=runs, **kept, batching=batching, history=epochs),
    )


@dataclass(frozen=True)
class Cti:
    """A counterexample to induction, decoded."""

    pre: Concrete
    post: Concrete | None
    family: str | None
    params: dict[str, object]
    python_confirms: bool
    """The Python reading agrees: ``I`` holds on the pre-state and the goal fails."""
    python_says: str | None = None
    """What the Python reading checked, when it is not the invariant and the goal (the
    ranking's obligations: only the invariant before)."""

    def lines(self) -> list[str]:
        out = ["pre-state (satisfies the invariant):"]
        out += ["  " + line for line in render(self.pre)]
        if self.family is not None:
            shown = ", ".join(f"{k}={v}" for k, v in self.params.items())
            out.append(f"action {self.family}({shown})")
        if self.post is not None:
            out.append("post-state:")
            out += ["  " + line for line in render(self.post)]
        if self.python_says is not None:
            out.append("Python reading: " + self.python_says)
            return out
        out.append(
            "Python reading: "
            + (
                "confirms (invariant holds before, goal fails)"
                if self.python_confirms
                else "DISAGREES"
            )
        )
        return out


@dataclass
class Prover:
    """The obligations of one encoding (options), built for the obligation runner
    (``invariants.z3.proof.obligations``): :meth:`obligations` names them, :meth:`query`
    builds one's formulas and CTI decoder, :meth:`check` runs one."""

    options: Options = field(default_factory=Options)
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    invariant: tuple[Conjunct, ...] = INVARIANT
    steps: tuple[Property, ...] = STEP_TARGETS

    def obligations(self, only: Iterable[str] | None = None) -> list[Obligation]:
        """Initiation and consecution of every conjunct, every step property on every
        family (of the goals in ``only``, when given)."""
        names = [f.name for f in self._families]
        out = [Obligation("initiation", c.name, None) for c in self.invariant]
        out += [Obligation("consecution", c.name, f) for c in self.invariant for f in names]
        out += [Obligation("step", s.name, f) for s in self.steps for f in names]
        wanted = set(only) if only is not None else None
        return [ob for ob in out if wanted is None or ob.goal in wanted]

    def policy(self) -> Policy:
        return Policy(self.timeout_ms)

    def check(self, ob: Obligation) -> Result:
        return check(lambda: self.query(ob), self.policy())

    @cached_property
    def _pair(self) -> tuple[SymState, SymState]:
        return _fresh_pair(self.options)

    @cached_property
    def _families(self) -> list[Family]:
        return families(*self._pair, self.options)

    @cached_property
    def _assumed(self) -> tuple[Any, ...]:
        """The invariant on the pre-state, every conjunct."""
        return tuple(read(c.expr, now=self._pair[0]) for c in self.invariant)

    def query(self, ob: Obligation) -> Query:
        """``Init ⇒ C`` (initiation), ``I ∧ F ⇒ C′`` (consecution), ``I ∧ F ⇒ S`` (step)."""
        pre, post = self._pair
        # The history's successor is a definition (transition.history_recorded): as a
        # macro Z3 finds a counterexample to induction on it in seconds (a
        # stamp-request-epoch one: unknown after 30 s without).
        params = (("smt.macro_finder", True),) if pre.history is not None else ()
        conjuncts = {c.name: c for c in self.invariant}
        if ob.kind == "initiation":
            premise: tuple[Any, ...] = (initial(pre), initial_expiry_and_deletion(pre))
            goal = read(conjuncts[ob.goal].expr, now=pre)
            fam = None
        else:
            fam = next(f for f in self._families if f.name == ob.family)
            premise = (*self._assumed, fam.formula)
            if ob.kind == "consecution":
                goal = read(conjuncts[ob.goal].expr, now=post)
            else:
                step = next(s for s in self.steps if s.name == ob.goal)
                assert step.expr is not None
                goal = read(step.expr, pre=pre, post=post)
        return Query(
            ob,
            premise,
            goal,
            decode=lambda model: self._cti(ob, model, pre, post, fam),
            params=params,
        )

    def _cti(
        self, ob: Obligation, model: Any, pre: SymState, post: SymState, fam: Family | None
    ) -> Cti:
        before, members, partitions = decode(model, pre)
        if ob.kind == "initiation":
            snap = before.snapshot()
            goal = next(c for c in self.invariant if c.name == ob.goal)
            return Cti(before, None, None, {}, not _holds(goal.expr, snap))
        after, _, _ = decode(model, post)
        params = params_of(model, fam, members, partitions) if fam is not None else {}
        b, a = before.snapshot(), after.snapshot()
        doms = (set(b.members) | set(a.members), set(b.partitions) | set(a.partitions))
        b, a = before.snapshot(*doms), after.snapshot(*doms)
        invariant_before = all(_holds(c.expr, b) for c in self.invariant)
        if ob.kind == "consecution":
            goal_expr = next(c for c in self.invariant if c.name == ob.goal).expr
            goal_fails = not _holds(goal_expr, a)
        else:
            step = next(s for s in self.steps if s.name == ob.goal)
            goal_fails = not step.holds(StepSnapshot(b, a))
        return Cti(
            before, after, fam.name if fam else None, params, invariant_before and goal_fails
        )


def _holds(expr: Expr, snap: Any) -> bool:
    return compile_expr(expr)(snap, {})


def params_of(
    model: Any, fam: Family, members: dict[str, Any], partitions: dict[str, Any]
) -> dict[str, object]:
    """A family's parameters in a Z3 model, readable: members and partitions by their
    decoded names, sets of partitions as sorted name lists."""

    def ev(x: Any) -> Any:
        return model.eval(x, model_completion=True)

    def member_name(x: Any) -> str:
        v = ev(x)
        for name, e in members.items():
            if z3.is_true(model.eval(e == v, model_completion=True)):
                return name
        return str(v)

    out: dict[str, object] = {}
    for key, x in fam.params.items():
        if isinstance(x, z3.FuncDeclRef):
            doms = [x.domain(i) for i in range(x.arity())]
            if doms == [PARTITION]:
                out[key] = sorted(n for n, q in partitions.items() if z3.is_true(ev(x(q))))
            elif doms == [MEMBER, PARTITION]:
                out[key] = sorted(
                    f"{mn}:{pn}"
                    for mn, me in members.items()
                    for pn, q in partitions.items()
                    if z3.is_true(ev(x(me, q)))
                )
        elif x.sort() == MEMBER:
            out[key] = member_name(x)
        elif x.sort() == PARTITION:
            v = ev(x)
            out[key] = next(
                (
                    n
                    for n, q in partitions.items()
                    if z3.is_true(model.eval(q == v, model_completion=True))
                ),
                str(v),
            )
        elif z3.is_bool(x):
            out[key] = bool(z3.is_true(ev(x)))
        elif z3.is_int(x):
            out[key] = ev(x).as_long()
        else:
            out[key] = str(ev(x))
    return out
