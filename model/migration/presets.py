"""The mixed groups' presets: online migration between the classic and the consumer
protocol (KIP-848 "Online Migration"), each registered where it is declared
(``model.preset_registry``); ``model.presets`` collects them into ``PRESETS``.
"""

from __future__ import annotations

from dataclasses import replace

from model.config import ClientSpec, Config
from model.preset_registry import of_kind, register

MIGRATION_UPGRADE = register(
    Config(
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
    ),
    kind="migration",
)
"""An upgrade: the cooperative classic client A forms a classic group on ``foo``; the
consumer-protocol client B subscribes — before A joined, it makes a consumer group that
A's JoinGroup then enters; after, its join converts A's classic group to a consumer group
in which A, a classic member, gives up a partition through its own cooperative
rebalance."""

MIGRATION_ROUNDTRIP = register(
    replace(
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
    ),
    kind="migration",
)
"""A round trip: the classic A and the consumer-protocol B both start subscribed, so
either forms the group first (B's join upgrades A's classic group); then a client may
leave — the consumer-protocol client B leaving a group whose other member is the classic A converts
it back to a classic group, at generation = the group epoch, with a rebalance. B reports
the partitions it is about to add (``report_pending_additions``): without, a JoinGroup
of A's closed process that arrives after A's member expired makes the coordinator take
B's unreported partition for a revoked one (docs/findings.md F1), which this preset is
not about."""

MIGRATION_DISABLED = register(
    replace(
        MIGRATION_UPGRADE,
        name="MIGRATION_DISABLED",
        kafka_version="4.4",  # KAFKA-20640; the KIP's epoch layout kept
        clients=MIGRATION_ROUNDTRIP.clients,
        migration_policy="disabled",
        max_perturbations=0,
        perturbations=frozenset(),
        required_witnesses=("GroupConverges",),
    ),
    kind="migration",
)
"""``group.consumer.migration.policy=disabled``: the classic A and the consumer-protocol B
both join; whoever comes second is refused (B: GROUP_ID_NOT_FOUND, A:
INCONSISTENT_GROUP_PROTOCOL, KAFKA-20640), so the group never mixes."""

MIXED_STATIC = register(
    Config(
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
    ),
    kind="migration",
)
"""Static members migrating through replacement: B (consumer protocol, instance ``b``)
consumes ``foo``; B may close (a static member's leave, epoch -2) and a classic process B2
of instance ``b`` start — replacing B, the last consumer-protocol member, it downgrades
the group (KAFKA-17317); started before B joined, B replaces it and upgrades the group
(KAFKA-17228). B reports the partitions it is about to
add (``report_pending_additions``, docs/findings.md F1)."""

MIXED_STATIC_RESUBSCRIBE = register(
    replace(
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
    ),
    kind="migration",
)
"""``MIXED_STATIC`` with a change of topics across the migration: B (consumer protocol)
consumes ``foo``; the classic process B2 of the same instance subscribes to ``bar``. When
B2 replaces B after B's -2 leave, the downgraded classic group must rebalance rather than
keep B's ``foo`` for B2 (KAFKA-19546)."""

MIGRATION_OFFLOAD = register(
    replace(
        MIGRATION_UPGRADE,
        name="MIGRATION_OFFLOAD",
        kafka_version="4.4",
        epoch_layout="kafka-4.3",
        report_pending_additions=True,
        assignor_offload=True,
    ),
    kind="migration",
)
"""``MIGRATION_UPGRADE`` under KIP-1263 assignor offload (Kafka 4.3 epochs): the
consumer group's assignor runs go to the executor, for the classic member's joins too,
and a classic member is told to rejoin only once its member epoch is behind the *target
assignment* epoch — after a run completed — not as soon as the group epoch moved on
(KIP-1263 JoinGroup, SyncGroup and Heartbeat Request Handling). B reports the partitions
it is about to add (``report_pending_additions``, docs/findings.md F1)."""

MIGRATION_BATCHING = register(
    replace(
        MIGRATION_UPGRADE,
        name="MIGRATION_BATCHING",
        kafka_version="4.4",
        epoch_layout="kafka-4.3",
        report_pending_additions=True,
        assignment_interval_ms=1000,
    ),
    kind="migration",
)
"""``MIGRATION_UPGRADE`` under KIP-1263 assignment batching (1 s interval, Kafka 4.3
epochs): a classic member's join that needs a new target waits for the interval like a
consumer-protocol heartbeat does, and the classic member rejoins when the target
assignment epoch, not the group epoch, is ahead of it. B reports the partitions it is
about to add (``report_pending_additions``, docs/findings.md F1)."""

MIXED_STATIC_ASSIGNOR = register(
    Config(
        name="MIXED_STATIC_ASSIGNOR",
        kafka_version="4.4",
        epoch_layout="kip-848",  # a variant of 4.4: the KIP's epoch layout, as the state counts pin
        assignment_interval_ms=0,  # no batching
        protocol="mixed",
        topics=(("foo", 1),),
        clients=(
            ClientSpec("C", ("foo",), group_protocol="consumer"),
            ClientSpec(
                "B2", ("foo",), instance_id="b", group_protocol="classic", assignors=("range",)
            ),
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
    ),
    kind="migration",
)
"""A static member replaced by one of the other protocol changes the group's preferred
assignor: C (consumer protocol, no server assignor asked for) and the classic static B2
(instance ``b``) share ``foo`` (one partition); B, a consumer-protocol process of instance
``b`` asking for the ``range`` server assignor, replaces B2 (a classic holder is replaced
at once, KAFKA-17228). Classic members ask for no server assignor, so ``range`` becomes
the group's preferred assignor and the join must bump the group epoch (KAFKA-20434). B
reports the partitions it is about to add (``report_pending_additions``,
docs/findings.md F1)."""

MIXED_INSTANCE_RENAME = register(
    Config(
        name="MIXED_INSTANCE_RENAME",
        kafka_version="4.4",
        epoch_layout="kip-848",  # a variant of 4.4: the KIP's epoch layout, as the state counts pin
        assignment_interval_ms=0,  # no batching
        protocol="mixed",
        topics=(("foo", 1),),
        clients=(
            ClientSpec(
                "A", ("foo",), instance_id="a", alt_instance_id="a2", group_protocol="consumer"
            ),
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
    ),
    kind="migration",
)
"""A static member renamed in a mixed group: the consumer-protocol static A (instance
``a``) on ``foo`` may rejoin at epoch 0 with its member id under instance ``a2``
(``ChangeInstanceId``, KAFKA-20747) and leave with -2 (``TemporaryLeave``), and C, a
classic process of instance ``a``, may join: once A renamed itself instance ``a`` is free
and C joins as a new member; before, C replaces A only once it left with -2. A classic
client does not rename itself here: Kafka answers its JoinGroup with a member id and an
instance id no member holds UNKNOWN_MEMBER_ID (docs/fidelity.md M14). A reports the
partitions it is about to add (``report_pending_additions``, docs/findings.md F1)."""

MIGRATION_PRESETS: tuple[Config, ...] = of_kind("migration")
"""The mixed-group presets (``protocol = "mixed"``)."""
