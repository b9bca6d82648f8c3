"""Named configurations, the collection point of every protocol family's presets (issue
39). Presets bound perturbations, never progress (README.md, Conventions).

A preset is registered where it is declared (``model.preset_registry.register``), beside
its family: the consumer protocol's (KIP-848) and those shared by the families (offset
expiry, group deletion) here, the classic protocol's in ``model/classic/presets.py``, the
mixed groups' in ``model/migration/presets.py``. This module imports every family's
presets module, so :data:`PRESETS` and :data:`BENCHMARK_PRESETS` (read-only views of the
registry) hold every preset, and re-exports each preset's name (``__all__``): import
``PRESETS``, ``preset`` and ``EXPECTED`` from here, a family's own presets from here or
from its module.

``KIP848_CASE_STUDY`` reproduces the KIP text's own step structure: the target assignment
is computed as a separate coordinator step and epochs start at 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from model.classic.presets import (
    CLASSIC,
    CLASSIC_COOPERATIVE,
    CLASSIC_EAGER,
    CLASSIC_SCENARIOS,
    CLASSIC_STATIC,
    MUTC_COOPERATIVE,
    MUTC_LATE_SYNC,
    MUTC_LEAVE,
    MUTC_MISSED_ROUND,
    MUTC_STALL,
    MUTC_STATIC,
    MUTC_STICKY,
    MUTC_TWO_PROCESSES,
    UPGRADE_ONE_BOUNCE,
    UPGRADE_TWO_BOUNCES,
)
from model.config import ClientSpec, Config
from model.migration.presets import (
    MIGRATION_BATCHING,
    MIGRATION_DISABLED,
    MIGRATION_OFFLOAD,
    MIGRATION_PRESETS,
    MIGRATION_ROUNDTRIP,
    MIGRATION_UPGRADE,
    MIXED_INSTANCE_RENAME,
    MIXED_STATIC,
    MIXED_STATIC_ASSIGNOR,
    MIXED_STATIC_RESUBSCRIBE,
)
from model.preset_registry import BENCHMARKS, LISTED, of_kind, register
from model.status import ConfigError

__all__ = [
    "BATCHING",
    "BENCHMARK_PRESETS",
    "CALLBACKS",
    "CLASSIC",
    "CLASSIC_COOPERATIVE",
    "CLASSIC_EAGER",
    "CLASSIC_GROUP_DELETION",
    "CLASSIC_OFFSETS_EXPIRY",
    "CLASSIC_SCENARIOS",
    "CLASSIC_STATIC",
    "DELETION_PRESETS",
    "EXAMPLES",
    "EXPECTED",
    "GROUP_DELETION",
    "KIP848_CASE_STUDY",
    "LOSSY",
    "MIGRATION_BATCHING",
    "MIGRATION_DISABLED",
    "MIGRATION_OFFLOAD",
    "MIGRATION_PRESETS",
    "MIGRATION_ROUNDTRIP",
    "MIGRATION_UPGRADE",
    "MIXED_INSTANCE_RENAME",
    "MIXED_STATIC",
    "MIXED_STATIC_ASSIGNOR",
    "MIXED_STATIC_RESUBSCRIBE",
    "MUT2",
    "MUT2_CALLBACKS",
    "MUT2_COMMIT",
    "MUT2_COMMIT_EPOCHS",
    "MUT2_CRASH",
    "MUT2_EPOCH_HISTORY",
    "MUT2_FAILOVER",
    "MUT2_LOSS2",
    "MUT2_LOSS4",
    "MUT2_LOSSY",
    "MUT2_OFFLOAD",
    "MUT2_OFFLOAD_STATIC",
    "MUT2_POLL",
    "MUT2_REGEX",
    "MUT2_REJOIN",
    "MUT2_STATIC",
    "MUT2_TOPICS",
    "MUT3",
    "MUT3_LOSS2",
    "MUTC_COOPERATIVE",
    "MUTC_LATE_SYNC",
    "MUTC_LEAVE",
    "MUTC_MISSED_ROUND",
    "MUTC_STALL",
    "MUTC_STATIC",
    "MUTC_STICKY",
    "MUTC_TWO_PROCESSES",
    "OFFLOAD",
    "OFFLOAD_DELETION",
    "OFFLOAD_LOSSY",
    "OFFSETS_EXPIRY",
    "OFFSET_PRESETS",
    "PRESETS",
    "SCENARIOS",
    "SMALL",
    "STATIC",
    "TIMERS",
    "TINY",
    "TOPICS",
    "UPGRADE_ONE_BOUNCE",
    "UPGRADE_TWO_BOUNCES",
    "ZOMBIE_DELETION",
    "Expected",
    "preset",
]


# --------------------------------------------------------------------------- examples
# The consumer protocol (KIP-848) as the README shows it.

TINY = register(
    Config(
        name="TINY",
        kafka_version="4.2",
        topics=(("foo", 2),),
        clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
        max_perturbations=2,
        perturbations=frozenset({"Subscribe", "Leave", "Crash"}),
        max_restarts=0,
    ),
    kind="example",
)
"""Two clients, one topic of two partitions; B may join, someone may leave or crash."""

SMALL = register(
    Config(
        name="SMALL",
        kafka_version="4.2",
        topics=(("foo", 3),),
        clients=(
            ClientSpec("A", ("foo",)),
            ClientSpec("B", ("foo",)),
            ClientSpec("C", ("foo",), subscribed=False),
        ),
        max_perturbations=4,
        perturbations=frozenset({"Subscribe", "Leave", "Crash", "Restart", "LoseMessage"}),
        auto_commit=True,
    ),
    kind="example",
)
"""Three clients over three partitions, with joins, leaves, crashes and message loss."""

STATIC = register(
    Config(
        name="STATIC",
        kafka_version="4.2",
        topics=(("foo", 2),),
        clients=(
            ClientSpec("A", ("foo",), instance_id="a"),
            ClientSpec("B", ("foo",), instance_id="b"),
        ),
        max_perturbations=3,
        perturbations=frozenset({"TemporaryLeave", "Subscribe", "Crash", "Restart", "LoseMessage"}),
    ),
    kind="example",
)
"""Two static members that leave temporarily (-2), crash and come back."""

LOSSY = register(
    Config(
        name="LOSSY",
        kafka_version="4.2",
        topics=(("foo", 2),),
        clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
        max_perturbations=3,
        perturbations=frozenset({"LoseMessage", "AbandonRequest", "Leave", "Subscribe"}),
        reorder=True,
        auto_commit=True,
    ),
    kind="example",
)
"""Two clients over a network that loses messages and delivers abandoned requests late
and out of order."""

TOPICS = register(
    Config(
        name="TOPICS",
        kafka_version="4.4",
        epoch_layout="kip-848",  # a variant of 4.4: the KIP's epoch layout, as the state counts pin
        assignment_interval_ms=0,  # no batching
        assignment_epochs=False,
        realign_empty_group=False,
        topics=(("foo", 1), ("bar", 1)),
        clients=(ClientSpec("A", ("foo", "bar")), ClientSpec("B", ("foo",))),
        max_perturbations=3,
        perturbations=frozenset(
            {"ChangeSubscription", "AddPartitions", "RecreateTopic", "ChangeServerAssignor"}
        ),
        subscription_choices=(("foo",), ("foo", "bar"), ("bar",)),
        max_partitions_per_topic=2,
    ),
    kind="example",
)
"""Subscription changes, partitions added, a topic recreated, an assignor switch."""

KIP848_CASE_STUDY = register(
    Config(
        name="KIP848_CASE_STUDY",
        kafka_version="4.2",
        topics=(("foo", 3),),
        clients=(
            ClientSpec("A", ("foo",), subscribed=False),
            ClientSpec("B", ("foo",), subscribed=False),
            ClientSpec("C", ("foo",), subscribed=False),
        ),
        max_perturbations=3,
        perturbations=frozenset({"Subscribe"}),
        compute_target_in_heartbeat=False,
        reconcile_while_assigning=False,
        epoch_layout="kip-848",
    ),
    kind="example",
)
"""The KIP-848 "Basic" case study: A, B and C join one by one; the target assignment is
a step of its own."""

TIMERS = register(
    Config(
        name="TIMERS",
        kafka_version="4.2",
        topics=(("foo", 2),),
        clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
        max_perturbations=2,
        perturbations=frozenset({"Subscribe", "LoseMessage", "StallRevocation"}),
        live_timers=True,
        report_pending_additions=True,
        max_restarts=0,
    ),
    kind="example",
)
"""The coordinator's timers for live clients (``live_timers``): a lost heartbeat lets a
live member's session expire (a zombie consumes beside the new owner until it hears so),
and a member whose application hangs in its revocation callback is removed by the
rebalance timer (KIP-848 "Rebalance timeout")."""

CALLBACKS = register(
    Config(
        name="CALLBACKS",
        kafka_version="4.2",
        topics=(("foo", 2),),
        clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
        max_perturbations=2,
        perturbations=frozenset({"Subscribe", "LoseMessage", "PollTimerExpires"}),
        callback_steps=True,
        report_pending_additions=True,
        max_restarts=0,
    ),
    kind="example",
)
"""Rebalance callbacks as steps of their own (``callback_steps``): a heartbeat response,
a fencing or the poll timer can arrive while ``onPartitionsRevoked``,
``onPartitionsAssigned`` or ``onPartitionsLost`` runs, and a reconciliation that outlived
its membership is dropped (``maybeAbortReconciliation``)."""

BATCHING = register(
    Config(
        name="BATCHING",
        kafka_version="4.4",
        assignment_epochs=False,  # a variant of 4.4: no KIP-1251, as the state counts pin
        topics=(("foo", 2),),
        clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
        max_perturbations=2,
        perturbations=frozenset({"Subscribe", "Crash"}),
        max_restarts=0,
        epoch_layout="kafka-4.3",
        realign_empty_group=True,
        assignment_interval_ms=1000,
        required_witnesses=("RevocationCompletes", "WaitsOnUnreleasedPartitions", "GroupConverges"),
    ),
    kind="example",
)
"""KIP-1263 assignment batching (``group.consumer.assignment.interval.ms`` = 1 s): a new
target is computed on the first heartbeat after the interval passed since the last one
(``AssignmentIntervalElapses``); until then members reconcile towards the stale target.
B may join; a client may crash (an emptied group starts afresh, KAFKA-20442). No live
client is fenced here, so ``FencedMemberRejoins`` is not required."""

OFFLOAD = register(
    Config(
        name="OFFLOAD",
        kafka_version="4.2",
        topics=(("foo", 2),),
        clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
        max_perturbations=2,
        perturbations=frozenset({"Subscribe", "Crash"}),
        max_restarts=0,
        epoch_layout="kafka-4.3",
        assignor_offload=True,
        report_pending_additions=True,
        required_witnesses=(
            "RevocationCompletes",
            "WaitsOnUnreleasedPartitions",
            "GroupConverges",
            "AssignorRunOutlivesMember",
            "StaleAssignorRunFollowedUp",
        ),
    ),
    kind="example",
)
"""KIP-1263 assignment offload (``group.consumer.assignor.offload.enable``): a heartbeat
that needs a new target starts an assignor run on the executor, at most one at a time,
and its result is installed when it completes (``CompleteAssignorRun``) with the members
fenced meanwhile removed. B may join while A's first run is in flight (the run goes stale
and a second one follows); a client may crash and its session expire during a run. With
the client-side fix for finding F1: a run completing between a member's response and its
next heartbeat changes the target under it, and without the fix this two-client group
reaches F1 (docs/findings.md). No live client is fenced, so ``FencedMemberRejoins`` is
not required."""

OFFLOAD_LOSSY = register(
    Config(
        name="OFFLOAD_LOSSY",
        kafka_version="4.2",
        topics=(("foo", 2),),
        clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
        max_perturbations=2,
        perturbations=frozenset({"Subscribe", "LoseMessage"}),
        max_restarts=0,
        epoch_layout="kafka-4.3",
        assignor_offload=True,
        offload_stale_run="discard",
        report_pending_additions=True,
        required_witnesses=(
            "RevocationCompletes",
            "WaitsOnUnreleasedPartitions",
            "GroupConverges",
            "StaleAssignorRunFollowedUp",
        ),
    ),
    kind="example",
)
"""Offload over a network that may lose a message; a run the group epoch passed while it
ran is discarded (``offload_stale_run = "discard"``) and the next heartbeat starts
another. Nobody leaves or is fenced, so no run outlives a member."""

EXAMPLES: tuple[Config, ...] = of_kind("example")
"""The presets that show the protocol (README), with Kafka's rules: some of them exhibit
the findings of docs/findings.md."""


# --------------------------------------------------------------------------- mutant scenarios
# The scenarios the mutant kill matrix hunts in (groupcheck/mutants/catalogue.py). Each runs
# with the client-side fix for finding F1 (docs/findings.md), so its baseline — the default
# rules — violates nothing and a kill means the mutant's rule.


MUT2 = register(
    Config(
        name="MUT2",
        kafka_version="4.2",
        topics=(("foo", 2),),
        clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
        max_perturbations=2,
        perturbations=frozenset({"Subscribe", "Leave", "Crash"}),
        max_restarts=0,
        report_pending_additions=True,
    ),
    kind="scenario",
)
"""A consumes foo-0 and foo-1; B may join (A must revoke one); someone may leave or crash."""

MUT3 = register(
    Config(
        name="MUT3",
        kafka_version="4.2",
        topics=(("foo", 2),),
        clients=(
            ClientSpec("A", ("foo",)),
            ClientSpec("B", ("foo",), subscribed=False),
            ClientSpec("C", ("foo",), subscribed=False),
        ),
        max_perturbations=3,
        perturbations=frozenset({"Subscribe", "Leave"}),
        report_pending_additions=True,
        commit_on_revoke=False,
    ),
    kind="scenario",
)
"""KAFKA-16147's shape: B joins (A must revoke), B leaves before A acknowledges (the
target gives the partition back to A), C joins (the target gives it to C)."""

MUT2_CRASH = register(
    Config(
        name="MUT2_CRASH",
        kafka_version="4.2",
        topics=(("foo", 2),),
        clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
        max_perturbations=2,
        perturbations=frozenset({"Crash", "Restart"}),
        max_restarts=1,
        report_pending_additions=True,
        commit_on_revoke=False,
    ),
    kind="scenario",
)
"""KAFKA-16147 with two clients: B's arrival makes A revoke foo-1; B crashes before A
acknowledges, its session expires and the target gives foo-1 back to A; B restarts under a
new member id and the target gives foo-1 to it."""

MUT2_LOSSY = register(
    replace(
        MUT2,
        name="MUT2_LOSSY",
        max_perturbations=3,
        perturbations=frozenset({"Subscribe", "LoseMessage", "Crash"}),
        required_witnesses=("RevocationCompletes", "WaitsOnUnreleasedPartitions", "GroupConverges"),
    ),
    kind="scenario",
)
"""B may join, a client may crash, and heartbeats or their responses may be lost: a member
retries at its previous epoch, which the coordinator accepts while it owns a subset of its
assignment (``GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid``). No member
is fenced within three perturbations, so ``FencedMemberRejoins`` is not required: a retry
is fenced only once the member's epoch moved twice past the client's, which takes two
target changes and two lost responses (B joins, A's acknowledgement's response is lost, B
crashes and its session expires, the retry's response is lost too — 23 steps with a fourth
perturbation)."""

MUT2_COMMIT = register(
    replace(
        MUT2,
        name="MUT2_COMMIT",
        perturbations=frozenset({"Subscribe", "Crash", "AbandonRequest"}),
        max_perturbations=3,
        auto_commit=True,
        max_restarts=0,
    ),
    kind="scenario",
)
"""Auto-commit on; a commit can be delayed past a rebalance or outlive its client."""

MUT2_STATIC = register(
    Config(
        name="MUT2_STATIC",
        kafka_version="4.2",
        topics=(("foo", 2),),
        clients=(
            ClientSpec("A", ("foo",), instance_id="a"),
            ClientSpec("B", ("foo",), instance_id="b"),
        ),
        max_perturbations=2,
        perturbations=frozenset({"TemporaryLeave", "Restart"}),
        report_pending_additions=True,
    ),
    kind="scenario",
)
"""A static member leaves temporarily (-2) and a new instance takes its place."""

MUT2_TOPICS = register(
    Config(
        name="MUT2_TOPICS",
        kafka_version="4.2",
        topics=(("foo", 1), ("bar", 1)),
        clients=(ClientSpec("A", ("foo", "bar")), ClientSpec("B", ("foo", "bar"))),
        max_perturbations=1,
        perturbations=frozenset({"ChangeSubscription", "AddPartitions"}),
        subscription_choices=(("foo",),),
        max_partitions_per_topic=2,
        report_pending_additions=True,
    ),
    kind="scenario",
)
"""A subscription change or a partition added must start a rebalance."""

MUT2_REJOIN = register(
    replace(
        MUT2,
        name="MUT2_REJOIN",
        perturbations=frozenset({"Leave", "Subscribe"}),
        max_perturbations=2,
    ),
    kind="scenario",
)
"""A client leaves and subscribes again while its leave heartbeat is in flight."""

MUT2_CALLBACKS = register(
    replace(
        MUT2,
        name="MUT2_CALLBACKS",
        perturbations=frozenset({"Subscribe", "PollTimerExpires"}),
        callback_steps=True,
    ),
    kind="scenario",
)
"""Rebalance callbacks as steps of their own; the poll timer may expire while one runs."""

MUT2_POLL = register(
    replace(
        MUT2,
        name="MUT2_POLL",
        perturbations=frozenset({"Subscribe", "PollTimerExpires"}),
    ),
    kind="scenario",
)
"""A client's poll timer expires (max.poll.interval.ms): it leaves, goes STALE, rejoins."""

MUT2_COMMIT_EPOCHS = register(
    replace(MUT2_COMMIT, name="MUT2_COMMIT_EPOCHS", assignment_epochs=True),
    kind="scenario",
)
"""``MUT2_COMMIT`` with KIP-1251 assignment epochs: a commit at an older epoch is accepted
for partitions its member held since then."""

MUT2_EPOCH_HISTORY = register(
    Config(
        name="MUT2_EPOCH_HISTORY",
        kafka_version="4.2",
        topics=(("foo", 2), ("bar", 1)),
        clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
        max_perturbations=1,
        perturbations=frozenset({"ChangeSubscription"}),
        subscription_choices=(("bar",),),
        max_restarts=0,
        auto_commit=True,
        assignment_epochs=True,
        report_pending_additions=True,
    ),
    kind="scenario",
)
"""A and B share ``foo`` with KIP-1251 assignment epochs and auto-commit; one of them may
change its subscription to ``bar`` — also while a member is still revoking — so
``foo``'s partitions move between members and commits at older epochs meet the group's
assignment history (``AssignmentEpochHolderUnique``, ``EpochCommitFromHolder``)."""

MUT2_FAILOVER = register(
    replace(
        MUT2,
        name="MUT2_FAILOVER",
        perturbations=frozenset({"Subscribe", "CoordinatorFailover"}),
    ),
    kind="scenario",
)
"""B may join; the coordinator may fail over (requests in flight fail with NOT_COORDINATOR,
the new coordinator loads the group from its records)."""

MUT2_REGEX = register(
    Config(
        name="MUT2_REGEX",
        kafka_version="4.2",
        topics=(("foo", 1),),
        absent_topics=(("foo2", 1),),
        clients=(ClientSpec("A", (), regex="foo.*"), ClientSpec("B", ("foo",))),
        max_perturbations=1,
        perturbations=frozenset({"CreateTopic", "DeleteTopic"}),
        max_restarts=0,
        report_pending_additions=True,
    ),
    kind="scenario",
)
"""A subscribes with the regular expression ``foo.*``, B to ``foo`` by name; ``foo2`` may
be created or a topic deleted: the coordinator resolves the expression again."""

MUT2_OFFLOAD = register(
    replace(
        MUT2,
        name="MUT2_OFFLOAD",
        perturbations=frozenset({"Subscribe", "Leave"}),
        epoch_layout="kafka-4.3",
        assignor_offload=True,
    ),
    kind="scenario",
)
"""KIP-1263 assignment offload: B may join while a run is in flight, and a client may
leave during a run."""

MUT2_OFFLOAD_STATIC = register(
    replace(
        MUT2_STATIC,
        name="MUT2_OFFLOAD_STATIC",
        epoch_layout="kafka-4.3",
        assignor_offload=True,
    ),
    kind="scenario",
)
"""KIP-1263 assignment offload with static members: a static member leaves temporarily
(-2) and a new instance replaces it while a run is in flight."""

SCENARIOS: tuple[Config, ...] = of_kind("scenario")
"""The mutant scenarios, as presets of their own."""


# --------------------------------------------------------------------------- shared presets
# Offset expiry (KIP-211), in a consumer and in a classic group.

OFFSETS_EXPIRY = register(
    Config(
        name="OFFSETS_EXPIRY",
        kafka_version="4.2",
        topics=(("foo", 2),),
        clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
        max_perturbations=3,
        perturbations=frozenset({"Leave", "ExpireOffsets"}),
        max_restarts=0,
        required_witnesses=("RevocationCompletes", "GroupConverges", "OffsetExpiredAfterEmpty"),
    ),
    kind="offsets",
)
"""KIP-211 in a consumer group: A and B share ``foo`` and commit a partition's offset when
they give it up; a member may leave, and the offsets of topics no member subscribes to
may expire (``ExpireOffsets``) — with both gone, those of the emptied group."""

CLASSIC_OFFSETS_EXPIRY = register(
    Config(
        name="CLASSIC_OFFSETS_EXPIRY",
        kafka_version="4.4",
        protocol="classic",
        topics=(("foo", 1), ("bar", 1)),
        clients=(
            ClientSpec("A", ("foo",), assignors=("range",)),
            ClientSpec("B", ("bar",), assignors=("range",)),
        ),
        max_perturbations=3,
        perturbations=frozenset({"Leave", "ExpireOffsets"}),
        auto_commit=True,
        max_restarts=0,
        warm_start=True,
        required_witnesses=("GroupConverges", "OffsetExpiredAfterEmpty"),
    ),
    kind="offsets",
)
"""KIP-211 in a formed classic group: A consumes ``foo`` and B ``bar``; a member may leave
(the group rebalances: while it does nothing expires, KAFKA-13636), and the offsets of an
Empty group, or of a Stable group's unsubscribed topics, may expire."""

OFFSET_PRESETS: tuple[Config, ...] = of_kind("offsets")
"""The offset-expiry presets (KIP-211), of both protocols."""


# Group deletion (DeleteGroups; an empty group deleted once its last offsets expired).

GROUP_DELETION = register(
    Config(
        name="GROUP_DELETION",
        kafka_version="4.2",
        topics=(("foo", 1),),
        clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
        max_perturbations=3,
        perturbations=frozenset({"Leave", "ExpireOffsets", "DeleteGroup"}),
        delete_expired_groups=True,
        max_restarts=0,
        required_witnesses=(
            "GroupConverges",
            "OffsetExpiredAfterEmpty",
            "GroupDeletedAfterExpiry",
        ),
    ),
    kind="deletion",
)
"""Group deletion in a consumer group (``OFFSETS_EXPIRY``'s): A and B share ``foo`` and
commit what they give up; a member may leave, an administrator may delete the group
(refused while it has members), and an empty group whose last offsets expire is deleted.
``OFFLOAD_DELETION`` has a client that subscribes again and creates the group anew."""

CLASSIC_GROUP_DELETION = register(
    replace(
        CLASSIC_OFFSETS_EXPIRY,
        name="CLASSIC_GROUP_DELETION",
        perturbations=frozenset({"Leave", "ExpireOffsets", "DeleteGroup"}),
        delete_expired_groups=True,
        required_witnesses=("GroupConverges", "OffsetExpiredAfterEmpty", "GroupDeletedAfterExpiry"),
    ),
    kind="deletion",
)
"""Group deletion in a formed classic group (``CLASSIC_OFFSETS_EXPIRY``'s): a member may
leave, and the Empty group may be deleted by an administrator (refused while it has
members) or once its last offsets expired."""

OFFLOAD_DELETION = register(
    Config(
        name="OFFLOAD_DELETION",
        kafka_version="4.2",
        topics=(("foo", 2),),
        clients=(ClientSpec("A", ("foo",)),),
        max_perturbations=3,
        perturbations=frozenset({"Leave", "Subscribe", "DeleteGroup"}),
        epoch_layout="kafka-4.3",
        assignor_offload=True,
        max_restarts=0,
        required_witnesses=(
            "GroupConverges",
            "GroupRecreatedAfterDeletion",
            "RunDiscardedAfterDeletion",
        ),
    ),
    kind="deletion",
)
"""KIP-1263 offload and group deletion: A joins and its assignor run is offloaded; A may
leave while the run is in flight, the empty group may be deleted, and A may subscribe
again — the run that completes then belongs to the deleted group and is discarded."""

ZOMBIE_DELETION = register(
    Config(
        name="ZOMBIE_DELETION",
        kafka_version="4.2",
        topics=(("foo", 1),),
        clients=(ClientSpec("A", ("foo",)),),
        max_perturbations=2,
        perturbations=frozenset({"LoseMessage", "DeleteGroup"}),
        live_timers=True,
        max_restarts=0,
        required_witnesses=("GroupConverges", "ZombieFindsGroupDeleted"),
    ),
    kind="deletion",
)
"""A zombie meets its deleted group: A's heartbeat is lost, the coordinator expires A's
session while A goes on consuming, the empty group is deleted, and A's next heartbeat at
its old epoch finds no group (GROUP_ID_NOT_FOUND, fatal for the Java client)."""

DELETION_PRESETS: tuple[Config, ...] = of_kind("deletion")
"""The group-deletion presets, of both protocols."""


# --------------------------------------------------------------------------- benchmarks
# The benchmark configurations (docs/benchmarks.md): ``--preset`` names them, but they are
# kept out of PRESETS, which the test suite and ``prove --agreement --all-presets`` iterate
# over: an exhaustive search of MUT2_LOSS4 visits over two million states.

MUT2_LOSS2 = register(
    replace(
        MUT2,
        name="MUT2_LOSS2",
        max_perturbations=2,
        perturbations=frozenset({"Subscribe", "Leave", "Crash", "LoseMessage"}),
    ),
    kind="benchmark",
)
"""MUT2 with two perturbations of every kind the TLA+ specification models (B joins, a
client leaves or crashes, a message is lost): MUT2_LOSS4's smaller sibling (46,993
states)."""

MUT2_LOSS4 = register(replace(MUT2_LOSS2, name="MUT2_LOSS4", max_perturbations=4), kind="benchmark")
"""MUT2 with four perturbations of every kind the TLA+ specification models (B joins, a
client leaves or crashes, a message is lost): 2,373,717 distinct states, the configuration
``bench/bench_pbfs.py`` runs the parallel BFS, the serial BFS and TLC on
(``tla/MUT2_LOSS4.cfg``)."""

MUT3_LOSS2 = register(
    replace(
        MUT2_LOSS2,
        name="MUT3_LOSS2",
        clients=(
            ClientSpec("A", ("foo",)),
            ClientSpec("B", ("foo",)),
            ClientSpec("C", ("foo",), subscribed=False),
        ),
    ),
    kind="benchmark",
)
"""Three clients on foo's two partitions, A and B in the group and C may join, two
perturbations of MUT2_LOSS4's kinds: 10,898,588 distinct states, the configuration
``bench/bench_pbfs_memory.py`` measures the parallel BFS's memory on."""


# --------------------------------------------------------------------------- the collection

PRESETS: Mapping[str, Config] = LISTED
"""Every preset but the benchmarks, by name (read-only), in the order of
``model.preset_registry.LISTED_KINDS`` — ``EXAMPLES``, ``SCENARIOS``, ``CLASSIC``,
``CLASSIC_SCENARIOS``, ``OFFSET_PRESETS``, ``DELETION_PRESETS``, ``MIGRATION_PRESETS`` —
and of declaration within each."""

BENCHMARK_PRESETS: Mapping[str, Config] = BENCHMARKS
"""The presets of the benchmarks, which ``preset`` accepts and ``PRESETS`` leaves out
(read-only)."""


def preset(name: str) -> Config:
    """The preset called ``name`` (case-insensitive): one of ``PRESETS`` or of
    ``BENCHMARK_PRESETS``."""
    config = PRESETS.get(name.upper()) or BENCHMARK_PRESETS.get(name.upper())
    if config is None:
        raise ConfigError(
            f"unknown preset {name!r}; known presets: {', '.join(PRESETS)}; benchmark "
            f"presets: {', '.join(BENCHMARK_PRESETS)}"
        )
    return config


# --------------------------------------------------------------------------- expected verdicts
# What each preset's exploration finds under the reference rules (``model.rules``'s
# DEFAULT_RULES), per engine it is meant for. ``groupcheck presets table --into
# docs/presets.md`` writes them as a table; ``groupcheck presets check NAME`` runs them;
# tests/groupcheck/test_preset_verdicts.py runs those cheap enough for CI and checks the table.


@dataclass(frozen=True, slots=True)
class Expected:
    """A preset's verdict under the reference rules with one engine (docs/presets.md).

    ``verdict`` is "ok" (bfs: every reachable state, every required witness hit; walk:
    every walk) or "violation" of ``property``, which ``finding`` names: an entry of
    docs/findings.md (``F1``) or the source that calls the behaviour intended — or, for a
    preset no complete run was made of, "inconclusive" with ``depth``: a bounded
    expectation, no violation within ``depth`` steps (every state within them visited),
    nothing claimed beyond. ``only`` restricts the check to one property (``explore
    --only``); ``seed`` and ``walks`` fix a walk. ``ci_max_states`` is the bfs state bound
    within which the verdict is reached in CI (a violation found, or every state
    exhausted); None: the full check is left to ``groupcheck presets check`` (``states``
    then records what a complete run visited, when one was made; with ``depth``, the
    states within it)."""

    engine: str = "bfs"
    verdict: str = "ok"
    property: str | None = None
    finding: str | None = None
    only: str | None = None
    seed: int = 0
    walks: int = 1000
    ci_max_states: int | None = None
    checked_by: str | None = None
    """Where else CI checks this verdict (a test file), when not here by ``ci_max_states``."""
    states: int | None = None
    depth: int | None = None
    """A bounded expectation's depth (verdict "inconclusive"), checked in CI."""
    run: str | None = None
    """The largest run made of the preset: when, how long, and what it found (a complete
    run's, or one a budget cut short)."""


_CUT = (
    "2026-12-07, the preset's bfs with `--max-states 200000` on one process: cut at "
    "200,000 states, no violation among them"
)


def _baseline(depth: int) -> str:
    """tests/quality/test_mutants.py's check of a mutant scenario under the reference
    rules: no violation within ``depth`` steps, its ``BASELINE_DEPTH`` in
    groupcheck/mutants/catalogue.py (a bounded check)."""
    return f"tests/quality/test_mutants.py (clean to depth {depth}, its catalogue.BASELINE_DEPTH)"


def _within(depth: int, states: int, run: str = _CUT) -> Expected:
    """A mutant scenario not "ok" on a complete run (none within 200,000 states, or one
    that missed a required witness: ``run`` says which): a bounded expectation to its
    ``BASELINE_DEPTH`` (``depth``), ``states`` within it, checked in CI by
    tests/quality/test_mutants.py."""
    return Expected(
        verdict="inconclusive", depth=depth, states=states, checked_by=_baseline(depth), run=run
    )


def _missed(states: int, witness: str, cpu: str) -> str:
    """The run of a mutant scenario whose bfs exhausts without a violation but misses a
    required witness (so not "ok")."""
    return (
        f"2026-12-07, the preset's bfs on one process (`groupcheck explore --engine bfs`): "
        f"exhausted, {states:,} states, no violation, but the required witness {witness} "
        f"is never hit (inconclusive); {cpu} CPU s"
    )


def _exhausted(depth: int, states: int, cpu: str) -> Expected:
    """A mutant scenario whose bfs exhausts: "ok" on that complete run (``states``,
    ``cpu`` seconds on one process), checked in CI only to its ``BASELINE_DEPTH``
    (``depth``) by tests/quality/test_mutants.py; ``groupcheck presets check`` runs it whole."""
    return Expected(
        states=states,
        checked_by=_baseline(depth),
        run=f"2026-12-07, the preset's bfs on one process (as `groupcheck presets check` runs "
        f"it) on the shared 2-core machine: ok, exhausted, every required witness hit; "
        f"{cpu} CPU s",
    )


F1_OWNED = Expected(verdict="violation", property="OwnedPartitionsAreHeld", finding="F1")

EXPECTED: dict[str, tuple[Expected, ...]] = {
    # The examples.
    "TINY": (Expected(ci_max_states=30_000, states=26_424),),
    "SMALL": (replace(F1_OWNED, engine="walk"),),
    "STATIC": (replace(F1_OWNED, ci_max_states=30_000),),
    "LOSSY": (
        replace(F1_OWNED, ci_max_states=20_000),
        replace(F1_OWNED, engine="walk"),
        Expected(
            engine="walk",
            verdict="violation",
            property="Convergence",
            finding="F3",
            only="Convergence",
        ),
    ),
    # No complete run: a search on 2 workers was cut by a 600 s budget, its frontier
    # doubling with each level (docs/presets.md).
    "TOPICS": (
        Expected(
            verdict="inconclusive",
            depth=5,
            states=7_028,
            run="2026-12-07, `groupcheck explore --preset TOPICS --engine bfs --workers 2 "
            "--budget 600` on the shared 2-core machine: cut by the budget after 541 s, "
            "597,850 states (11 levels, frontier 280,717 and doubling), no violation among them",
        ),
    ),
    "KIP848_CASE_STUDY": (replace(F1_OWNED, ci_max_states=15_000),),
    "TIMERS": (Expected(states=51_429),),
    "CALLBACKS": (Expected(states=112_815),),
    "BATCHING": (Expected(checked_by="tests/model/test_kip1263_presets.py", states=40_208),),
    "OFFLOAD": (Expected(checked_by="tests/model/test_kip1263_presets.py", states=54_192),),
    "OFFLOAD_LOSSY": (Expected(checked_by="tests/model/test_kip1263_presets.py", states=55_268),),
    # The mutant scenarios: their baseline is clean, so that a kill is the mutant's.
    "MUT2": (_exhausted(19, 32_407, "3.0"),),
    "MUT3": (
        Expected(
            verdict="inconclusive",
            depth=12,
            states=14_803,
            run="2026-12-07, `groupcheck explore --preset MUT3 --engine bfs --workers 2 "
            "--budget 600` on the shared 2-core machine: cut by the budget after 542 s, "
            "889,397 states (23 levels, frontier 195,675 and growing), no violation among them",
        ),
    ),
    "MUT2_CRASH": (_within(15, 24_421),),
    "MUT2_LOSSY": (_exhausted(12, 105_169, "11.3"),),
    "MUT2_COMMIT": (_within(13, 21_131),),
    "MUT2_STATIC": (_within(11, 3_724),),
    "MUT2_TOPICS": (_within(8, 982, _missed(96_658, "FencedMemberRejoins", "13.1")),),
    "MUT2_REJOIN": (Expected(ci_max_states=30_000, states=24_558),),
    "MUT2_CALLBACKS": (_exhausted(10, 82_208, "12.5"),),
    "MUT2_POLL": (_exhausted(8, 32_037, "4.0"),),
    "MUT2_COMMIT_EPOCHS": (_within(13, 21_140),),
    "MUT2_EPOCH_HISTORY": (_within(12, 5_670),),
    "MUT2_FAILOVER": (_within(11, 1_333, _missed(33_435, "FencedMemberRejoins", "4.0")),),
    "MUT2_REGEX": (_within(8, 739, _missed(102_884, "FencedMemberRejoins", "13.8")),),
    "MUT2_OFFLOAD": (_exhausted(12, 118_812, "17.3"),),
    "MUT2_OFFLOAD_STATIC": (_within(13, 16_153),),
    # The classic protocol.
    "CLASSIC_EAGER": (Expected(checked_by="tests/model/test_classic_protocol.py", states=7_354),),
    "CLASSIC_COOPERATIVE": (
        Expected(checked_by="tests/model/test_classic_protocol.py", states=11_216),
    ),
    "CLASSIC_STATIC": (Expected(checked_by="tests/model/test_classic_protocol.py", states=9_227),),
    "UPGRADE_TWO_BOUNCES": (
        Expected(
            states=432_790,
            run="2026-12-07, `groupcheck explore --preset UPGRADE_TWO_BOUNCES --engine bfs "
            "--workers 2 --budget 1200` on the shared 2-core machine: ok, exhausted, every "
            "required witness hit; 435 s of search (7 min 17 s wall); fingerprint collision "
            "probability 1.5e-08",
        ),
    ),
    "UPGRADE_ONE_BOUNCE": (
        Expected(
            verdict="violation",
            property="MovesOnlyReleased",
            finding="KIP-429 Compatibility and Upgrade Path (the upgrade done in one bounce)",
            checked_by="tests/model/test_classic_protocol.py",
        ),
    ),
    "MUTC_STICKY": (Expected(ci_max_states=5_000, states=3_371),),
    "MUTC_COOPERATIVE": (_exhausted(27, 30_552, "5.5"),),
    "MUTC_STATIC": (_within(8, 984),),
    "MUTC_STALL": (Expected(ci_max_states=1_000, states=197),),
    "MUTC_MISSED_ROUND": (_exhausted(37, 26_089, "6.3"),),
    "MUTC_LATE_SYNC": (Expected(ci_max_states=2_000, states=1_104),),
    "MUTC_TWO_PROCESSES": (Expected(ci_max_states=2_000, states=1_786),),
    "MUTC_LEAVE": (Expected(ci_max_states=3_000, states=2_233),),
    # Offset expiry and group deletion.
    "OFFSETS_EXPIRY": (Expected(checked_by="tests/model/test_offset_expiry.py"),),
    "CLASSIC_OFFSETS_EXPIRY": (Expected(checked_by="tests/model/test_offset_expiry.py"),),
    "GROUP_DELETION": (
        Expected(checked_by="tests/model/test_group_deletion.py (to depth 14)", states=33_173),
    ),
    "CLASSIC_GROUP_DELETION": (Expected(checked_by="tests/model/test_group_deletion.py"),),
    "OFFLOAD_DELETION": (Expected(checked_by="tests/model/test_group_deletion.py"),),
    "ZOMBIE_DELETION": (Expected(checked_by="tests/model/test_group_deletion.py"),),
    # Mixed groups.
    "MIGRATION_UPGRADE": (Expected(checked_by="tests/model/test_migration.py"),),
    "MIGRATION_ROUNDTRIP": (Expected(checked_by="tests/model/test_migration.py"),),
    "MIGRATION_DISABLED": (Expected(checked_by="tests/model/test_migration.py"),),
    "MIXED_STATIC": (Expected(checked_by="tests/model/test_migration.py"),),
    "MIXED_STATIC_RESUBSCRIBE": (Expected(ci_max_states=5_000, states=3_701),),
    "MIGRATION_OFFLOAD": (Expected(checked_by="tests/model/test_migration_kip1263.py"),),
    "MIGRATION_BATCHING": (Expected(checked_by="tests/model/test_migration_kip1263.py"),),
    "MIXED_STATIC_ASSIGNOR": (_exhausted(9, 124_456, "34.5"),),
    "MIXED_INSTANCE_RENAME": (_exhausted(14, 23_588, "4.5"),),
    # The benchmarks (docs/benchmarks.md; ``make bench`` runs them).
    "MUT2_LOSS2": (Expected(states=46_993),),
    "MUT2_LOSS4": (Expected(states=2_373_717),),
    "MUT3_LOSS2": (Expected(states=10_898_588),),
}
"""Every preset's expected verdicts under the reference rules, per engine (docs/presets.md)."""
