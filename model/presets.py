"""Named configurations. Presets bound perturbations, never progress (README.md,
Conventions).

``KIP848_CASE_STUDY`` reproduces the KIP text's own step structure: the target assignment
is computed as a separate coordinator step and epochs start at 0.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from model.config import ClientSpec, Config
from model.status import ConfigError

TINY = Config(
    name="TINY",
    kafka_version="4.2",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
    max_perturbations=2,
    perturbations=frozenset({"Subscribe", "Leave", "Crash"}),
    max_restarts=0,
)
"""Two clients, one topic of two partitions; B may join, someone may leave or crash."""

SMALL = Config(
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
)
"""Three clients over three partitions, with joins, leaves, crashes and message loss."""

STATIC = Config(
    name="STATIC",
    kafka_version="4.2",
    topics=(("foo", 2),),
    clients=(
        ClientSpec("A", ("foo",), instance_id="a"),
        ClientSpec("B", ("foo",), instance_id="b"),
    ),
    max_perturbations=3,
    perturbations=frozenset({"TemporaryLeave", "Subscribe", "Crash", "Restart", "LoseMessage"}),
)
"""Two static members that leave temporarily (-2), crash and come back."""

LOSSY = Config(
    name="LOSSY",
    kafka_version="4.2",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
    max_perturbations=3,
    perturbations=frozenset({"LoseMessage", "AbandonRequest", "Leave", "Subscribe"}),
    reorder=True,
    auto_commit=True,
)
"""Two clients over a network that loses messages and delivers abandoned requests late
and out of order."""

TOPICS = Config(
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
)
"""Subscription changes, partitions added, a topic recreated, an assignor switch."""

KIP848_CASE_STUDY = Config(
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
)
"""The KIP-848 "Basic" case study: A, B and C join one by one; the target assignment is
a step of its own."""

TIMERS = Config(
    name="TIMERS",
    kafka_version="4.2",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
    max_perturbations=2,
    perturbations=frozenset({"Subscribe", "LoseMessage", "StallRevocation"}),
    live_timers=True,
    report_pending_additions=True,
    max_restarts=0,
)
"""The coordinator's timers for live clients (``live_timers``): a lost heartbeat lets a
live member's session expire (a zombie consumes beside the new owner until it hears so),
and a member whose application hangs in its revocation callback is removed by the
rebalance timer (KIP-848 "Rebalance timeout")."""

CALLBACKS = Config(
    name="CALLBACKS",
    kafka_version="4.2",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
    max_perturbations=2,
    perturbations=frozenset({"Subscribe", "LoseMessage", "PollTimerExpires"}),
    callback_steps=True,
    report_pending_additions=True,
    max_restarts=0,
)
"""Rebalance callbacks as steps of their own (``callback_steps``): a heartbeat response,
a fencing or the poll timer can arrive while ``onPartitionsRevoked``,
``onPartitionsAssigned`` or ``onPartitionsLost`` runs, and a reconciliation that outlived
its membership is dropped (``maybeAbortReconciliation``)."""

BATCHING = Config(
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
)
"""KIP-1263 assignment batching (``group.consumer.assignment.interval.ms`` = 1 s): a new
target is computed on the first heartbeat after the interval passed since the last one
(``AssignmentIntervalElapses``); until then members reconcile towards the stale target.
B may join; a client may crash (an emptied group starts afresh, KAFKA-20442). No live
client is fenced here, so ``FencedMemberRejoins`` is not required."""

OFFLOAD = Config(
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

OFFLOAD_LOSSY = Config(
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
)
"""Offload over a network that may lose a message; a run the group epoch passed while it
ran is discarded (``offload_stale_run = "discard"``) and the next heartbeat starts
another. Nobody leaves or is fenced, so no run outlives a member."""

EXAMPLES: tuple[Config, ...] = (
    TINY,
    SMALL,
    STATIC,
    LOSSY,
    TOPICS,
    KIP848_CASE_STUDY,
    TIMERS,
    CALLBACKS,
    BATCHING,
    OFFLOAD,
    OFFLOAD_LOSSY,
)
"""The presets that show the protocol (README), with Kafka's rules: some of them exhibit
the findings of docs/findings.md."""


# --------------------------------------------------------------------------- mutant scenarios
# The scenarios the mutant kill matrix hunts in (groupcheck/mutants/catalogue.py). Each runs
# with the client-side fix for finding F1 (docs/findings.md), so its baseline — the default
# rules — violates nothing and a kill means the mutant's rule.

MUT2 = Config(
    name="MUT2",
    kafka_version="4.2",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
    max_perturbations=2,
    perturbations=frozenset({"Subscribe", "Leave", "Crash"}),
    max_restarts=0,
    report_pending_additions=True,
)
"""A consumes foo-0 and foo-1; B may join (A must revoke one); someone may leave or crash."""

MUT3 = Config(
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
)
"""KAFKA-16147's shape: B joins (A must revoke), B leaves before A acknowledges (the
target gives the partition back to A), C joins (the target gives it to C)."""

MUT2_CRASH = Config(
    name="MUT2_CRASH",
    kafka_version="4.2",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
    max_perturbations=2,
    perturbations=frozenset({"Crash", "Restart"}),
    max_restarts=1,
    report_pending_additions=True,
    commit_on_revoke=False,
)
"""KAFKA-16147 with two clients: B's arrival makes A revoke foo-1; B crashes before A
acknowledges, its session expires and the target gives foo-1 back to A; B restarts under a
new member id and the target gives foo-1 to it."""

MUT2_LOSSY = replace(
    MUT2,
    name="MUT2_LOSSY",
    max_perturbations=3,
    perturbations=frozenset({"Subscribe", "LoseMessage", "Crash"}),
    required_witnesses=("RevocationCompletes", "WaitsOnUnreleasedPartitions", "GroupConverges"),
)
"""B may join, a client may crash, and heartbeats or their responses may be lost: a member
retries at its previous epoch, which the coordinator accepts while it owns a subset of its
assignment (``GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid``). No member
is fenced within three perturbations, so ``FencedMemberRejoins`` is not required: a retry
is fenced only once the member's epoch moved twice past the client's, which takes two
target changes and two lost responses (B joins, A's acknowledgement's response is lost, B
crashes and its session expires, the retry's response is lost too — 23 steps with a fourth
perturbation)."""

MUT2_COMMIT = replace(
    MUT2,
    name="MUT2_COMMIT",
    perturbations=frozenset({"Subscribe", "Crash", "AbandonRequest"}),
    max_perturbations=3,
    auto_commit=True,
    max_restarts=0,
)
"""Auto-commit on; a commit can be delayed past a rebalance or outlive its client."""

MUT2_FAILOVER = replace(
    MUT2,
    name="MUT2_FAILOVER",
    perturbations=frozenset({"Subscribe", "CoordinatorFailover"}),
)
"""B may join; the coordinator may fail over (requests in flight fail with NOT_COORDINATOR,
the new coordinator loads the group from its records)."""

MUT2_REGEX = Config(
    name="MUT2_REGEX",
    kafka_version="4.2",
    topics=(("foo", 1),),
    absent_topics=(("foo2", 1),),
    clients=(ClientSpec("A", (), regex="foo.*"), ClientSpec("B", ("foo",))),
    max_perturbations=1,
    perturbations=frozenset({"CreateTopic", "DeleteTopic"}),
    max_restarts=0,
    report_pending_additions=True,
)
"""A subscribes with the regular expression ``foo.*``, B to ``foo`` by name; ``foo2`` may
be created or a topic deleted: the coordinator resolves the expression again."""

MUT2_COMMIT_EPOCHS = replace(MUT2_COMMIT, name="MUT2_COMMIT_EPOCHS", assignment_epochs=True)
"""``MUT2_COMMIT`` with KIP-1251 assignment epochs: a commit at an older epoch is accepted
for partitions its member held since then."""

MUT2_EPOCH_HISTORY = Config(
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
)
"""A and B share ``foo`` with KIP-1251 assignment epochs and auto-commit; one of them may
change its subscription to ``bar`` — also while a member is still revoking — so
``foo``'s partitions move between members and commits at older epochs meet the group's
assignment history (``AssignmentEpochHolderUnique``, ``EpochCommitFromHolder``)."""

MUT2_STATIC = Config(
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
)
"""A static member leaves temporarily (-2) and a new instance takes its place."""

MUT2_TOPICS = Config(
    name="MUT2_TOPICS",
    kafka_version="4.2",
    topics=(("foo", 1), ("bar", 1)),
    clients=(ClientSpec("A", ("foo", "bar")), ClientSpec("B", ("foo", "bar"))),
    max_perturbations=1,
    perturbations=frozenset({"ChangeSubscription", "AddPartitions"}),
    subscription_choices=(("foo",),),
    max_partitions_per_topic=2,
    report_pending_additions=True,
)
"""A subscription change or a partition added must start a rebalance."""

MUT2_REJOIN = replace(
    MUT2,
    name="MUT2_REJOIN",
    perturbations=frozenset({"Leave", "Subscribe"}),
    max_perturbations=2,
)
"""A client leaves and subscribes again while its leave heartbeat is in flight."""


MUT2_CALLBACKS = replace(
    MUT2,
    name="MUT2_CALLBACKS",
    perturbations=frozenset({"Subscribe", "PollTimerExpires"}),
    callback_steps=True,
)
"""Rebalance callbacks as steps of their own; the poll timer may expire while one runs."""

MUT2_POLL = replace(
    MUT2,
    name="MUT2_POLL",
    perturbations=frozenset({"Subscribe", "PollTimerExpires"}),
)
"""A client's poll timer expires (max.poll.interval.ms): it leaves, goes STALE, rejoins."""

MUT2_OFFLOAD = replace(
    MUT2,
    name="MUT2_OFFLOAD",
    perturbations=frozenset({"Subscribe", "Leave"}),
    epoch_layout="kafka-4.3",
    assignor_offload=True,
)
"""KIP-1263 assignment offload: B may join while a run is in flight, and a client may
leave during a run."""

MUT2_OFFLOAD_STATIC = replace(
    MUT2_STATIC,
    name="MUT2_OFFLOAD_STATIC",
    epoch_layout="kafka-4.3",
    assignor_offload=True,
)
"""KIP-1263 assignment offload with static members: a static member leaves temporarily
(-2) and a new instance replaces it while a run is in flight."""


SCENARIOS: tuple[Config, ...] = (
    MUT2,
    MUT3,
    MUT2_CRASH,
    MUT2_LOSSY,
    MUT2_COMMIT,
    MUT2_STATIC,
    MUT2_TOPICS,
    MUT2_REJOIN,
    MUT2_CALLBACKS,
    MUT2_POLL,
    MUT2_COMMIT_EPOCHS,
    MUT2_EPOCH_HISTORY,
    MUT2_FAILOVER,
    MUT2_REGEX,
    MUT2_OFFLOAD,
    MUT2_OFFLOAD_STATIC,
)
"""The mutant scenarios, as presets of their own."""

PRESETS: dict[str, Config] = {c.name: c for c in (*EXAMPLES, *SCENARIOS)}


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


# --------------------------------------------------------------------------- the classic protocol
# Classic groups (JoinGroup / SyncGroup), eager and cooperative (KIP-429), with client-side
# assignors run by the leader.

CLASSIC_EAGER = Config(
    name="CLASSIC_EAGER",
    kafka_version="4.4",
    protocol="classic",
    topics=(("foo", 2),),
    clients=(
        ClientSpec("A", ("foo",), assignors=("range",)),
        ClientSpec("B", ("foo",), assignors=("range",), subscribed=False),
    ),
    max_perturbations=2,
    perturbations=frozenset({"Subscribe", "Leave", "Crash"}),
    max_restarts=0,
)
"""Eager rebalancing with the range assignor: B may join (A revokes everything before it
rejoins), someone may leave or crash."""

CLASSIC_COOPERATIVE = Config(
    name="CLASSIC_COOPERATIVE",
    kafka_version="4.4",
    protocol="classic",
    topics=(("foo", 2),),
    clients=(
        ClientSpec("A", ("foo",), assignors=("cooperative-sticky",)),
        ClientSpec("B", ("foo",), assignors=("cooperative-sticky",), subscribed=False),
    ),
    max_perturbations=2,
    perturbations=frozenset({"Subscribe", "Leave", "Crash"}),
    max_restarts=0,
)
"""Incremental cooperative rebalancing (KIP-429): A keeps what it owns across B's join,
revokes one partition after the first rebalance and a follow-up rebalance gives it to B."""

CLASSIC_STATIC = Config(
    name="CLASSIC_STATIC",
    kafka_version="4.4",
    protocol="classic",
    topics=(("foo", 2),),
    clients=(
        ClientSpec("A", ("foo",), instance_id="a", assignors=("cooperative-sticky",)),
        ClientSpec("B", ("foo",), instance_id="b", assignors=("cooperative-sticky",)),
    ),
    max_perturbations=3,
    perturbations=frozenset({"Crash", "Restart", "LoseMessage"}),
    max_restarts=1,
    warm_start=True,
)
"""Two static members (KIP-345) of a group already formed: a restarted instance replaces
its old member id without a rebalance in a STABLE group; the old id is fenced
(FENCED_INSTANCE_ID)."""

UPGRADE_TWO_BOUNCES = Config(
    name="UPGRADE_TWO_BOUNCES",
    kafka_version="4.4",
    protocol="classic",
    topics=(("foo", 2),),
    clients=(
        ClientSpec(
            "A",
            ("foo",),
            assignors=("range",),
            kip429=False,
            bounces=(("range", "cooperative-sticky"), ("cooperative-sticky",)),
        ),
        ClientSpec(
            "B",
            ("foo",),
            assignors=("range",),
            kip429=False,
            bounces=(("range", "cooperative-sticky"), ("cooperative-sticky",)),
        ),
    ),
    max_perturbations=4,
    perturbations=frozenset({"Bounce", "AddPartitions"}),
    max_partitions_per_topic=3,
    warm_start=True,
)
"""KIP-429's upgrade path: byte code without KIP-429 running ``range`` is bounced to
``range, cooperative-sticky`` (still EAGER), then to ``cooperative-sticky`` alone
(COOPERATIVE), one instance at a time once the group settled; a partition may be added
on the way. Starts from the group formed on the old byte code."""

UPGRADE_ONE_BOUNCE = Config(
    name="UPGRADE_ONE_BOUNCE",
    kafka_version="4.4",
    protocol="classic",
    topics=(("foo", 4),),
    clients=(
        ClientSpec("A", ("foo",), assignors=("cooperative-sticky",), kip429=False),
        ClientSpec(
            "B",
            ("foo",),
            assignors=("cooperative-sticky",),
            kip429=False,
            bounces=(("cooperative-sticky",),),
        ),
        ClientSpec(
            "C", ("foo",), assignors=("cooperative-sticky",), kip429=False, subscribed=False
        ),
    ),
    max_perturbations=2,
    perturbations=frozenset({"Bounce", "Subscribe"}),
    warm_start=True,
)
"""The upgrade done wrong, in one bounce: an assignor that gained COOPERATIVE support
(as ``cooperative-sticky`` stands for here) is kept while the byte code is upgraded, so
a bounced member follows COOPERATIVE and keeps its partitions while the leader, still on
the old byte code, assigns as if everyone had revoked (KIP-429 "Compatibility and Upgrade
Path"). A and B start on four partitions; B is bounced; C may join."""

CLASSIC: tuple[Config, ...] = (
    CLASSIC_EAGER,
    CLASSIC_COOPERATIVE,
    CLASSIC_STATIC,
    UPGRADE_TWO_BOUNCES,
    UPGRADE_ONE_BOUNCE,
)
"""The classic protocol's presets."""

PRESETS.update({c.name: c for c in CLASSIC})


# The classic protocol's mutant scenarios (groupcheck/mutants/catalogue.py).

MUTC_STICKY = Config(
    name="MUTC_STICKY",
    kafka_version="4.4",
    protocol="classic",
    topics=(("foo", 2),),
    clients=(
        ClientSpec("A", ("foo",), assignors=("sticky",)),
        ClientSpec("B", ("foo",), assignors=("sticky",)),
    ),
    max_perturbations=2,
    perturbations=frozenset({"AddPartitions", "LoseMessage"}),
    live_timers=True,
    max_partitions_per_topic=3,
    warm_start=True,
)
"""Eager ``sticky`` (KIP-341) in a formed group: a partition is added; a lost request lets
the coordinator's timer remove a live member, which rejoins with the previous assignment
of an older generation in its user data."""

MUTC_COOPERATIVE = Config(
    name="MUTC_COOPERATIVE",
    kafka_version="4.4",
    protocol="classic",
    topics=(("foo", 2),),
    clients=(
        ClientSpec("A", ("foo",), assignors=("cooperative-sticky",)),
        ClientSpec("B", ("foo",), assignors=("cooperative-sticky",), subscribed=False),
    ),
    max_perturbations=2,
    perturbations=frozenset({"Subscribe", "LoseMessage"}),
    live_timers=True,
    max_restarts=0,
)
"""``cooperative-sticky``: B joins (A revokes one partition in a follow-up rebalance); a
lost request lets the coordinator's timer remove a live member, which rejoins with owned
partitions of an older generation."""

MUTC_STATIC = Config(
    name="MUTC_STATIC",
    kafka_version="4.4",
    protocol="classic",
    topics=(("foo", 2),),
    clients=(
        ClientSpec("A", ("foo",), instance_id="a", assignors=("range",)),
        ClientSpec("B", ("foo",), instance_id="b", assignors=("range",)),
        ClientSpec("C", ("foo",), assignors=("range",), subscribed=False),
    ),
    max_perturbations=3,
    perturbations=frozenset({"Subscribe", "Crash", "Restart"}),
    max_restarts=1,
    warm_start=True,
)
"""Two static members of a formed group; a dynamic member may join while a static member's
process is replaced by a new one."""

MUTC_STALL = replace(
    MUTC_STICKY,
    name="MUTC_STALL",
    clients=(
        ClientSpec("A", ("foo",), assignors=("range",)),
        ClientSpec("B", ("foo",), assignors=("range",), subscribed=False),
    ),
    perturbations=frozenset({"Subscribe", "StallAssignment"}),
    live_timers=False,
)
"""B joins; a member's application may hang after its JoinGroup response, before it sends
SyncGroup, while its heartbeat thread keeps the session."""

MUTC_MISSED_ROUND = Config(
    name="MUTC_MISSED_ROUND",
    kafka_version="4.4",
    protocol="classic",
    topics=(("foo", 3),),
    clients=(
        ClientSpec("A", ("foo",), assignors=("cooperative-sticky",)),
        ClientSpec("B", ("foo",), assignors=("cooperative-sticky",)),
        ClientSpec("C", ("foo",), assignors=("cooperative-sticky",), subscribed=False),
    ),
    max_perturbations=2,
    perturbations=frozenset({"Subscribe", "LoseMessage"}),
    warm_start=True,
    max_restarts=0,
)
"""``cooperative-sticky`` with three members: A and B form the group on three partitions,
C joins. A lost JoinGroup response makes a member miss a round: it joins the next one
still owning, and claiming, the partitions of an older generation while the others claim
theirs at the newer one (KAFKA-14639)."""

MUTC_LATE_SYNC = replace(
    MUTC_MISSED_ROUND,
    name="MUTC_LATE_SYNC",
    max_perturbations=1,
    perturbations=frozenset({"Subscribe"}),
)
"""As ``MUTC_MISSED_ROUND`` without lost messages: C joins, and a member whose SyncGroup
arrives after the next rebalance started (a member revoking a partition rejoins at once)
is answered REBALANCE_IN_PROGRESS (KAFKA-14016)."""

MUTC_TWO_PROCESSES = Config(
    name="MUTC_TWO_PROCESSES",
    kafka_version="4.4",
    protocol="classic",
    topics=(("foo", 2),),
    clients=(
        ClientSpec("A", ("foo",), instance_id="a", assignors=("range",)),
        ClientSpec("A2", ("foo",), instance_id="a", assignors=("range",), subscribed=False),
        ClientSpec("C", ("foo",), assignors=("range",), subscribed=False),
    ),
    max_perturbations=2,
    perturbations=frozenset({"Subscribe"}),
    warm_start=True,
    max_restarts=0,
)
"""Two live processes of one static instance ``a`` (KAFKA-8500): A forms the group; a
second process A2 of the same instance may start while A still runs, and a dynamic member
C may join, so A2's JoinGroup can arrive in any group state."""

MUTC_LEAVE = Config(
    name="MUTC_LEAVE",
    kafka_version="4.4",
    protocol="classic",
    topics=(("foo", 3),),
    clients=(
        ClientSpec("A", ("foo",), assignors=("cooperative-sticky",)),
        ClientSpec("B", ("foo",), assignors=("cooperative-sticky",)),
        ClientSpec("C", ("foo",), assignors=("cooperative-sticky",)),
    ),
    max_perturbations=1,
    perturbations=frozenset({"Leave"}),
    warm_start=True,
    max_restarts=0,
    required_witnesses=("CooperativeMemberKeepsPartition", "GroupConverges"),
)
"""``cooperative-sticky`` with three members on three partitions, formed first; one member
leaves and the others share its partition, keeping their own. Nobody revokes anything, so
no follow-up rebalance (the FollowUpRebalance witness) is reachable."""

CLASSIC_SCENARIOS: tuple[Config, ...] = (
    MUTC_STICKY,
    MUTC_COOPERATIVE,
    MUTC_STATIC,
    MUTC_STALL,
    MUTC_MISSED_ROUND,
    MUTC_LATE_SYNC,
    MUTC_TWO_PROCESSES,
    MUTC_LEAVE,
)
"""The classic protocol's mutant scenarios, as presets of their own."""

PRESETS.update({c.name: c for c in CLASSIC_SCENARIOS})


# Offset expiry (KIP-211).

OFFSETS_EXPIRY = Config(
    name="OFFSETS_EXPIRY",
    kafka_version="4.2",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",))),
    max_perturbations=3,
    perturbations=frozenset({"Leave", "ExpireOffsets"}),
    max_restarts=0,
    required_witnesses=("RevocationCompletes", "GroupConverges", "OffsetExpiredAfterEmpty"),
)
"""KIP-211 in a consumer group: A and B share ``foo`` and commit a partition's offset when
they give it up; a member may leave, and the offsets of topics no member subscribes to
may expire (``ExpireOffsets``) — with both gone, those of the emptied group."""

CLASSIC_OFFSETS_EXPIRY = Config(
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
)
"""KIP-211 in a formed classic group: A consumes ``foo`` and B ``bar``; a member may leave
(the group rebalances: while it does nothing expires, KAFKA-13636), and the offsets of an
Empty group, or of a Stable group's unsubscribed topics, may expire."""

OFFSET_PRESETS: tuple[Config, ...] = (OFFSETS_EXPIRY, CLASSIC_OFFSETS_EXPIRY)

PRESETS.update({c.name: c for c in OFFSET_PRESETS})


# Group deletion (DeleteGroups; an empty group deleted once its last offsets expired).

GROUP_DELETION = Config(
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
)
"""Group deletion in a consumer group (``OFFSETS_EXPIRY``'s): A and B share ``foo`` and
commit what they give up; a member may leave, an administrator may delete the group
(refused while it has members), and an empty group whose last offsets expire is deleted.
``OFFLOAD_DELETION`` has a client that subscribes again and creates the group anew."""

CLASSIC_GROUP_DELETION = replace(
    CLASSIC_OFFSETS_EXPIRY,
    name="CLASSIC_GROUP_DELETION",
    perturbations=frozenset({"Leave", "ExpireOffsets", "DeleteGroup"}),
    delete_expired_groups=True,
    required_witnesses=("GroupConverges", "OffsetExpiredAfterEmpty", "GroupDeletedAfterExpiry"),
)
"""Group deletion in a formed classic group (``CLASSIC_OFFSETS_EXPIRY``'s): a member may
leave, and the Empty group may be deleted by an administrator (refused while it has
members) or once its last offsets expired."""

OFFLOAD_DELETION = Config(
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
)
"""KIP-1263 offload and group deletion: A joins and its assignor run is offloaded; A may
leave while the run is in flight, the empty group may be deleted, and A may subscribe
again — the run that completes then belongs to the deleted group and is discarded."""

ZOMBIE_DELETION = Config(
    name="ZOMBIE_DELETION",
    kafka_version="4.2",
    topics=(("foo", 1),),
    clients=(ClientSpec("A", ("foo",)),),
    max_perturbations=2,
    perturbations=frozenset({"LoseMessage", "DeleteGroup"}),
    live_timers=True,
    max_restarts=0,
    required_witnesses=("GroupConverges", "ZombieFindsGroupDeleted"),
)
"""A zombie meets its deleted group: A's heartbeat is lost, the coordinator expires A's
session while A goes on consuming, the empty group is deleted, and A's next heartbeat at
its old epoch finds no group (GROUP_ID_NOT_FOUND, fatal for the Java client)."""

DELETION_PRESETS: tuple[Config, ...] = (
    GROUP_DELETION,
    CLASSIC_GROUP_DELETION,
    OFFLOAD_DELETION,
    ZOMBIE_DELETION,
)

PRESETS.update({c.name: c for c in DELETION_PRESETS})
# Online migration between the classic and the consumer protocol (KIP-848 "Online Migration").

MIGRATION_UPGRADE = Config(
    name="MIGRATION_UPGRADE",
    kafka_version="4.2",
    protocol="mixed",
    topics=(("foo", 2),),
    clients=(
        ClientSpec("A", ("foo",), group_protocol="classic", assignors=("cooperative-sticky",)),
        ClientSpec("B", ("foo",), group_protocol="consumer", subscribed=False),
    ),
    max_perturbations=1,
    perturbations=frozenset({"Subscribe"}),
    max_restarts=0,
    required_witnesses=("GroupUpgrades", "GroupConverges"),
)
"""An upgrade: the cooperative classic client A forms a classic group on ``foo``; the
consumer-protocol client B subscribes — before A joined, it makes a consumer group that
A's JoinGroup then enters; after, its join converts A's classic group to a consumer group
in which A, a classic member, gives up a partition through its own cooperative
rebalance."""

MIGRATION_ROUNDTRIP = replace(
    MIGRATION_UPGRADE,
    name="MIGRATION_ROUNDTRIP",
    clients=(
        ClientSpec("A", ("foo",), group_protocol="classic", assignors=("cooperative-sticky",)),
        ClientSpec("B", ("foo",), group_protocol="consumer"),
    ),
    max_perturbations=1,
    perturbations=frozenset({"Leave"}),
    report_pending_additions=True,
    required_witnesses=("GroupUpgrades", "GroupDowngrades", "GroupConverges"),
)
"""A round trip: the classic A and the consumer-protocol B both start subscribed, so
either forms the group first (B's join upgrades A's classic group); then a client may
leave — the consumer-protocol client B leaving a group whose other member is the classic A converts
it back to a classic group, at generation = the group epoch, with a rebalance. B reports
the partitions it is about to add (``report_pending_additions``): without, a JoinGroup
of A's closed process that arrives after A's member expired makes the coordinator take
B's unreported partition for a revoked one (docs/findings.md F1), which this preset is
not about."""

MIGRATION_DISABLED = replace(
    MIGRATION_UPGRADE,
    name="MIGRATION_DISABLED",
    kafka_version="4.4",  # KAFKA-20640; the KIP's epoch layout kept
    clients=MIGRATION_ROUNDTRIP.clients,
    migration_policy="disabled",
    max_perturbations=0,
    perturbations=frozenset(),
    required_witnesses=("GroupConverges",),
)
"""``group.consumer.migration.policy=disabled``: the classic A and the consumer-protocol B
both join; whoever comes second is refused (B: GROUP_ID_NOT_FOUND, A:
INCONSISTENT_GROUP_PROTOCOL, KAFKA-20640), so the group never mixes."""

MIXED_STATIC = Config(
    name="MIXED_STATIC",
    kafka_version="4.2",
    protocol="mixed",
    topics=(("foo", 2),),
    clients=(
        ClientSpec("B", ("foo",), instance_id="b", group_protocol="consumer"),
        ClientSpec(
            "B2",
            ("foo",),
            instance_id="b",
            group_protocol="classic",
            assignors=("range",),
            subscribed=False,
        ),
    ),
    max_perturbations=2,
    perturbations=frozenset({"Subscribe", "TemporaryLeave"}),
    max_restarts=0,
    report_pending_additions=True,
    required_witnesses=("GroupUpgrades", "GroupDowngrades", "GroupConverges"),
)
"""Static members migrating through replacement: B (consumer protocol, instance ``b``)
consumes ``foo``; B may close (a static member's leave, epoch -2) and a classic process B2
of instance ``b`` start — replacing B, the last consumer-protocol member, it downgrades
the group (KAFKA-17317); started before B joined, B replaces it and upgrades the group
(KAFKA-17228). B reports the partitions it is about to
add (``report_pending_additions``, docs/findings.md F1)."""

MIXED_STATIC_RESUBSCRIBE = replace(
    MIXED_STATIC,
    name="MIXED_STATIC_RESUBSCRIBE",
    topics=(("foo", 1), ("bar", 1)),
    clients=(
        ClientSpec("B", ("foo",), instance_id="b", group_protocol="consumer"),
        ClientSpec(
            "B2",
            ("bar",),
            instance_id="b",
            group_protocol="classic",
            assignors=("range",),
            subscribed=False,
        ),
    ),
    required_witnesses=("GroupDowngrades", "GroupConverges"),
)
"""``MIXED_STATIC`` with a change of topics across the migration: B (consumer protocol)
consumes ``foo``; the classic process B2 of the same instance subscribes to ``bar``. When
B2 replaces B after B's -2 leave, the downgraded classic group must rebalance rather than
keep B's ``foo`` for B2 (KAFKA-19546)."""

MIXED_STATIC_ASSIGNOR = Config(
    name="MIXED_STATIC_ASSIGNOR",
    kafka_version="4.4",
    epoch_layout="kip-848",  # a variant of 4.4: the KIP's epoch layout, as the state counts pin
    assignment_interval_ms=0,  # no batching
    protocol="mixed",
    topics=(("foo", 1),),
    clients=(
        ClientSpec("C", ("foo",), group_protocol="consumer"),
        ClientSpec("B2", ("foo",), instance_id="b", group_protocol="classic", assignors=("range",)),
        ClientSpec(
            "B",
            ("foo",),
            instance_id="b",
            group_protocol="consumer",
            server_assignor="range",
            subscribed=False,
        ),
    ),
    max_perturbations=1,
    perturbations=frozenset({"Subscribe"}),
    max_restarts=0,
    report_pending_additions=True,
    required_witnesses=("GroupConverges",),
)
"""A static member replaced by one of the other protocol changes the group's preferred
assignor: C (consumer protocol, no server assignor asked for) and the classic static B2
(instance ``b``) share ``foo`` (one partition); B, a consumer-protocol process of instance
``b`` asking for the ``range`` server assignor, replaces B2 (a classic holder is replaced
at once, KAFKA-17228). Classic members ask for no server assignor, so ``range`` becomes
the group's preferred assignor and the join must bump the group epoch (KAFKA-20434). B
reports the partitions it is about to add (``report_pending_additions``,
docs/findings.md F1)."""

MIGRATION_OFFLOAD = replace(
    MIGRATION_UPGRADE,
    name="MIGRATION_OFFLOAD",
    kafka_version="4.4",
    epoch_layout="kafka-4.3",
    report_pending_additions=True,
    assignor_offload=True,
)
"""``MIGRATION_UPGRADE`` under KIP-1263 assignor offload (Kafka 4.3 epochs): the
consumer group's assignor runs go to the executor, for the classic member's joins too,
and a classic member is told to rejoin only once its member epoch is behind the *target
assignment* epoch — after a run completed — not as soon as the group epoch moved on
(KIP-1263 JoinGroup, SyncGroup and Heartbeat Request Handling). B reports the partitions
it is about to add (``report_pending_additions``, docs/findings.md F1)."""

MIGRATION_BATCHING = replace(
    MIGRATION_UPGRADE,
    name="MIGRATION_BATCHING",
    kafka_version="4.4",
    epoch_layout="kafka-4.3",
    report_pending_additions=True,
    assignment_interval_ms=1000,
)
"""``MIGRATION_UPGRADE`` under KIP-1263 assignment batching (1 s interval, Kafka 4.3
epochs): a classic member's join that needs a new target waits for the interval like a
consumer-protocol heartbeat does, and the classic member rejoins when the target
assignment epoch, not the group epoch, is ahead of it. B reports the partitions it is
about to add (``report_pending_additions``, docs/findings.md F1)."""

MIXED_INSTANCE_RENAME = Config(
    name="MIXED_INSTANCE_RENAME",
    kafka_version="4.4",
    epoch_layout="kip-848",  # a variant of 4.4: the KIP's epoch layout, as the state counts pin
    assignment_interval_ms=0,  # no batching
    protocol="mixed",
    topics=(("foo", 1),),
    clients=(
        ClientSpec("A", ("foo",), instance_id="a", alt_instance_id="a2", group_protocol="consumer"),
        ClientSpec(
            "C",
            ("foo",),
            instance_id="a",
            group_protocol="classic",
            assignors=("range",),
            subscribed=False,
        ),
    ),
    max_perturbations=3,
    perturbations=frozenset({"Subscribe", "ChangeInstanceId", "TemporaryLeave"}),
    max_restarts=0,
    report_pending_additions=True,
    required_witnesses=("GroupConverges",),
)
"""A static member renamed in a mixed group: the consumer-protocol static A (instance
``a``) on ``foo`` may rejoin at epoch 0 with its member id under instance ``a2``
(``ChangeInstanceId``, KAFKA-20747) and leave with -2 (``TemporaryLeave``), and C, a
classic process of instance ``a``, may join: once A renamed itself instance ``a`` is free
and C joins as a new member; before, C replaces A only once it left with -2. A classic
client does not rename itself here: Kafka answers its JoinGroup with a member id and an
instance id no member holds UNKNOWN_MEMBER_ID (docs/fidelity.md M14). A reports the
partitions it is about to add (``report_pending_additions``, docs/findings.md F1)."""

MIGRATION_PRESETS: tuple[Config, ...] = (
    MIGRATION_UPGRADE,
    MIGRATION_ROUNDTRIP,
    MIGRATION_DISABLED,
    MIXED_STATIC,
    MIXED_STATIC_RESUBSCRIBE,
    MIGRATION_OFFLOAD,
    MIGRATION_BATCHING,
    MIXED_STATIC_ASSIGNOR,
    MIXED_INSTANCE_RENAME,
)
"""The mixed-group presets (``protocol = "mixed"``)."""

PRESETS.update({c.name: c for c in MIGRATION_PRESETS})


# --------------------------------------------------------------------------- benchmarks
# The benchmark configurations (docs/benchmarks.md): ``--preset`` names them, but they are
# kept out of PRESETS, which the test suite and ``prove --agreement --all-presets`` iterate
# over: an exhaustive search of MUT2_LOSS4 visits over two million states.

MUT2_LOSS4 = replace(
    MUT2,
    name="MUT2_LOSS4",
    max_perturbations=4,
    perturbations=frozenset({"Subscribe", "Leave", "Crash", "LoseMessage"}),
)
"""MUT2 with four perturbations of every kind the TLA+ specification models (B joins, a
client leaves or crashes, a message is lost): 2,373,717 distinct states, the configuration
``bench/bench_pbfs.py`` runs the parallel BFS, the serial BFS and TLC on
(``tla/MUT2_LOSS4.cfg``)."""

MUT2_LOSS2 = replace(MUT2_LOSS4, name="MUT2_LOSS2", max_perturbations=2)
"""MUT2_LOSS4's smaller sibling (two perturbations, 46,993 states)."""

MUT3_LOSS2 = replace(
    MUT2_LOSS4,
    name="MUT3_LOSS2",
    clients=(
        ClientSpec("A", ("foo",)),
        ClientSpec("B", ("foo",)),
        ClientSpec("C", ("foo",), subscribed=False),
    ),
    max_perturbations=2,
)
"""Three clients on foo's two partitions, A and B in the group and C may join, two
perturbations of MUT2_LOSS4's kinds: 10,898,588 distinct states, the configuration
``bench/bench_pbfs_memory.py`` measures the parallel BFS's memory on."""

BENCHMARK_PRESETS: dict[str, Config] = {c.name: c for c in (MUT2_LOSS2, MUT2_LOSS4, MUT3_LOSS2)}
"""The presets of the benchmarks, which ``preset`` accepts and ``PRESETS`` leaves out."""


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
