"""Configuration: the group's topics and clients, the protocol options, the perturbation
budget and the injected rules. Impossible configurations raise :class:`ConfigError`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Literal

from model.classic.assignors import CLIENT_ASSIGNORS
from model.records import Record, hash_once
from model.rules import DEFAULT_RULES, Rules
from model.status import ConfigError
from model.versions import (
    DEFAULT_KAFKA_VERSION,
    KAFKA_VERSIONS,
    OFF,
    VERSION_OPTIONS,
    VERSION_RULES,
)


class _FromKafkaVersion:
    def __repr__(self) -> str:
        return "<from kafka_version>"


_FROM_VERSION: Any = _FromKafkaVersion()
"""The default of the options of ``model.versions.VERSION_OPTIONS``: replaced, when the
config is made, by the value its ``kafka_version`` gives (``Config.__post_init__``)."""

EpochLayout = Literal["kip-848", "kafka-4.3"]
"""How a new group numbers its epochs. ``kip-848``: group and assignment epoch start at 0
and the first join bumps to 1 (the KIP's case studies, Kafka ≤ 4.2). ``kafka-4.3``: a new
group starts at group epoch 1 with an empty target at assignment epoch 1, so the first
real assignment is epoch 2 (KAFKA-20268, KIP-1263)."""

PERTURBATIONS = frozenset(
    {
        "Subscribe",
        "Leave",
        "TemporaryLeave",
        "Crash",
        "Restart",
        "ChangeSubscription",
        "ChangeServerAssignor",
        "AddPartitions",
        "RecreateTopic",
        "LoseMessage",
        "AbandonRequest",
        "StallRevocation",
        "PollTimerExpires",
        "CoordinatorFailover",
        "CreateTopic",
        "DeleteTopic",
        "ChangePartitionRacks",
        "Bounce",
        "StallAssignment",
        "ExpireOffsets",
        "DeleteGroup",
        "ChangeInstanceId",
    }
)
"""Names of the perturbation action families a config may switch on."""

StaleRun = Literal["install", "discard"]
"""What the coordinator does with an offloaded assignor run whose group epoch was passed
while it ran (KIP-1263 "Assignment Offload"). ``install``: the KIP text — install the
result at the run's epoch after re-applying what changed meanwhile; the bumped group epoch
starts another run. ``discard``: drop it; the next heartbeat starts a run on fresh inputs."""

Protocol = Literal["consumer", "classic", "mixed"]
"""The group protocol of a config's clients: ``consumer`` (KIP-848) or ``classic``
(JoinGroup/SyncGroup; each client eager or cooperative by its assignors, KIP-429); ``mixed``:
each client speaks its own (``ClientSpec.group_protocol``) and the coordinator converts the
group between the two as ``migration_policy`` allows (KIP-848 "Online Migration")."""

ClientProtocol = Literal["consumer", "classic"]
"""The ``group.protocol`` of one client of a mixed config."""

MigrationPolicy = Literal["bidirectional", "upgrade", "downgrade", "disabled"]
"""The broker's ``group.consumer.migration.policy`` (``ConsumerGroupMigrationPolicy``):
which conversions between a classic and a consumer group it allows."""

MIGRATION_POLICIES = ("bidirectional", "upgrade", "downgrade", "disabled")

MIXED_PERTURBATIONS = frozenset(
    {"Subscribe", "Leave", "TemporaryLeave", "Crash", "Restart", "LoseMessage", "ChangeInstanceId"}
)
"""The perturbations the mixed (migration) family models: each acts on one client."""

CLASSIC_PERTURBATIONS = frozenset(
    {
        "Subscribe",
        "Leave",
        "Crash",
        "Restart",
        "Bounce",
        "ChangeSubscription",
        "AddPartitions",
        "LoseMessage",
        "AbandonRequest",
        "StallAssignment",
        "ExpireOffsets",
        "DeleteGroup",
    }
)
"""The perturbations the classic protocol family models."""

OptionCategory = Literal["setting", "switch", "bound", "expectation", "rules"]
"""What a ``Config`` field is (issue 39: a config is the protocol's settings, the
exploration's bounds and the checking's expectations, kept apart as TLA+ specs keep a
protocol's constants apart from the model checker's)."""

CATEGORIES: dict[OptionCategory, str] = {
    "setting": "protocol setting: the group and its clients as Kafka configures them — "
    "topics, clients, the broker's, the group's and the client's settings",
    "switch": "rule switch: which of Kafka's rules the model follows — a Kafka version's "
    "(``kafka_version`` and the options it gives a default), or a variant the model offers",
    "bound": "exploration bound: what a search lets the environment do — the "
    "perturbations, how many, what they choose from, the interleavings and the start",
    "expectation": "checking expectation: what a complete run must show for its result to be ok",
    "rules": "injected rules: the step functions the model calls (``model.rules.Rules``), "
    "which a mutant or a user's rules replace",
}
"""Each option category and what its options say."""

Family = Literal["consumer", "classic", "mixed"]
"""A protocol family, named as ``Config.protocol`` names it (``mixed``: the migration
family, ``model/migration/``)."""

FAMILIES: tuple[Family, ...] = ("consumer", "classic", "mixed")


def option(category: OptionCategory, *families: Family) -> dict[str, object]:
    """The metadata of a ``Config`` field: its category and the protocol families whose
    configs may set it (none named: all of them). A config of another family must leave
    it at its default (``check_config``: its rules do not read it, or the family does not
    model it)."""
    return {"category": category, "families": frozenset(families or FAMILIES)}


DEFAULT_CLIENT_ASSIGNORS = ("range", "cooperative-sticky")
"""``partition.assignment.strategy``'s default (``ConsumerConfig``, Kafka 3.0+): the range
assignor, EAGER, with cooperative-sticky listed for the upgrade path."""

KNOWN_ASSIGNORS = ("uniform", "range")


@dataclass(frozen=True, slots=True)
class ClientSpec:
    """One consumer process: its name (also its first member id), optional static
    ``group.instance.id``, subscription and ``group.remote.assignor``; ``subscribed``
    says whether it has called ``subscribe()`` in the initial state."""

    name: str
    subscription: tuple[str, ...]
    instance_id: str | None = None
    server_assignor: str | None = None
    subscribed: bool = True
    rack: str | None = None
    """The client's ``client.rack`` (sent as ``RackId``)."""
    regex: str | None = None
    """A regular-expression subscription (``subscribe(SubscriptionPattern)``, KIP-848
    ``SubscribedTopicRegex``) the coordinator resolves against the topics; used with an
    empty ``subscription``."""
    assignors: tuple[str, ...] = DEFAULT_CLIENT_ASSIGNORS
    """Classic protocol: the client-side assignors (``partition.assignment.strategy``) in
    preference order; the client is COOPERATIVE when every one supports it (KIP-429)."""
    kip429: bool = True
    """Classic protocol: False for byte code older than KIP-429 (Kafka ≤ 2.3), which knows
    only EAGER and, as leader, reads no owned partitions."""
    bounces: tuple[tuple[str, ...], ...] = ()
    """Classic protocol: the assignors of the processes a rolling bounce starts, in order
    (``Bounce``; every bounced process runs byte code that knows KIP-429)."""
    group_protocol: ClientProtocol | None = None
    """A mixed config: the client's ``group.protocol`` (``consumer`` or ``classic``); None,
    and ignored, for a config of one protocol."""
    alt_instance_id: str | None = None
    """A static client's other ``group.instance.id``: it may rejoin under it keeping its
    member id (``ChangeInstanceId``, KAFKA-20747) — a consumer-protocol client, or a
    classic client of a mixed config while the group is a consumer group; None: it never
    changes it."""


@dataclass(frozen=True, slots=True)
class Config(Record):
    """Everything that fixes a model instance. See ``model.presets`` for named ones.

    A config keeps its hash once computed (``hash_once``): the memoised rules of
    ``model.system`` are keyed by it."""

    name: str = field(metadata=option("setting"))
    """The config's name (a preset's name; run directories and reports carry it)."""
    topics: tuple[tuple[str, int], ...] = field(metadata=option("setting"))
    """The topics that exist at first: (name, partition count) pairs."""
    clients: tuple[ClientSpec, ...] = field(metadata=option("setting"))
    """The consumer processes (``ClientSpec``), in a fixed order."""
    protocol: Protocol = field(default="consumer", metadata=option("setting"))
    """The group protocol of the clients (``Protocol``): ``consumer``, ``classic`` or
    ``mixed``; ``model.system.initial`` dispatches on it."""
    max_perturbations: int = field(default=0, metadata=option("bound"))
    """How many perturbation actions a path may take in all (progress is never bounded)."""
    perturbations: frozenset[str] = field(default=frozenset(), metadata=option("bound"))
    """The perturbation families a search may take (``PERTURBATIONS`` names)."""
    subscription_choices: tuple[tuple[str, ...], ...] = field(default=(), metadata=option("bound"))
    """The subscriptions ``ChangeSubscription`` may switch a client to."""
    absent_topics: tuple[tuple[str, int], ...] = field(default=(), metadata=option("bound"))
    """Topics (name, partitions) that do not exist at first and that ``CreateTopic`` may
    create; ``DeleteTopic`` may delete any topic."""
    server_assignors: tuple[str, ...] = field(default=KNOWN_ASSIGNORS, metadata=option("setting"))
    """The broker's server-side assignors (``group.consumer.assignors``), the first the
    default; a client may name one with ``server_assignor``."""
    max_partitions_per_topic: int = field(default=4, metadata=option("bound"))
    """How many partitions a topic may have, ``AddPartitions`` included (a bound of the
    model: a state holds every partition)."""
    max_group_size: int = field(default=2**31 - 1, metadata=option("setting"))
    """The broker's ``group.consumer.max.size``: a join beyond it is refused
    (GROUP_MAX_SIZE_REACHED)."""
    heartbeat_interval_ms: int = field(default=5000, metadata=option("setting"))
    """The broker's ``group.consumer.heartbeat.interval.ms``, returned in every
    ConsumerGroupHeartbeat response."""
    session_timeout_ms: int = field(default=45000, metadata=option("setting"))
    """The session timeout (``group.consumer.session.timeout.ms``; a classic member's
    ``session.timeout.ms``)."""
    rebalance_timeout_ms: int = field(default=300000, metadata=option("setting"))
    """The client's ``max.poll.interval.ms``, sent as ``RebalanceTimeoutMs``: how long a
    member may take to revoke before the rebalance timer fences it."""
    kafka_version: str = field(default=DEFAULT_KAFKA_VERSION, metadata=option("switch"))
    """The Apache Kafka version whose rules the model follows (``model.versions``:
    ``4.2``, ``4.3`` or ``4.4``). It gives the default of ``epoch_layout``,
    ``assignment_interval_ms``, ``assignment_epochs`` and ``realign_empty_group``: each
    takes the version's value unless the config sets it (docs/fidelity.md,
    "Version-dependent rules"). ``dataclasses.replace`` keeps the values the old version
    gave; ``model.versions``' rules for another version come with
    ``with_kafka_version``."""
    compute_target_in_heartbeat: bool = field(default=True, metadata=option("switch", "consumer"))
    """The target assignment is computed inside the heartbeat that sees a group epoch
    newer than the assignment epoch, as Kafka does (``GroupMetadataManager``); False: a step
    of its own, ``ComputeTargetAssignment``, as the KIP's case studies narrate it
    (docs/fidelity.md row 2)."""
    reconcile_while_assigning: bool = field(default=True, metadata=option("switch", "consumer"))
    """A member reconciles towards the installed target while the group epoch is ahead of
    the assignment epoch, as Kafka does; False: it waits for the new target (KIP-848 "Member
    Epoch")."""
    epoch_layout: EpochLayout = field(
        default=_FROM_VERSION, metadata=option("switch", "consumer", "mixed")
    )
    """``kip-848`` (Kafka 4.2) or ``kafka-4.3`` (4.3+), ``EpochLayout``."""
    rejoin_with_epoch_zero: bool = field(default=True, metadata=option("switch", "consumer"))
    """A rejoin at epoch 0 by a stored member is accepted (KAFKA-19233); False: the check
    before that fix (docs/fidelity.md row 11)."""
    realign_empty_group: bool = field(default=_FROM_VERSION, metadata=option("switch", "consumer"))
    """KAFKA-20442 (Kafka 4.4): the removal of a group's last member realigns its
    assignment epoch with the group epoch (docs/fidelity.md row 14)."""
    static_rejoin_same_member_id: bool = field(default=True, metadata=option("switch", "consumer"))
    """A static member rejoining at epoch 0 under its own member id while still held is
    a rejoin (upstream PR #23542); False: trunk's UNRELEASED_INSTANCE_ID (docs/fidelity.md
    row 12)."""
    report_pending_additions: bool = field(
        default=False, metadata=option("switch", "consumer", "mixed")
    )
    """A client that still has to apply a target also reports the partitions it is about
    to add (``model.consumer.client.reported_partitions``; the client-side fix of docs/findings.md
    F1)."""
    reorder: bool = field(default=False, metadata=option("bound", "consumer", "classic"))
    """A client's successive connections are channels of their own, so an old connection's
    messages may arrive after a new one's (``model/network.py``)."""
    slow_clients: bool = field(default=False, metadata=option("bound", "consumer", "classic"))
    """The coordinator's timers may also fire for a live client that is merely slow, not
    only for one whose process is gone."""
    live_timers: bool = field(default=False, metadata=option("bound", "consumer", "classic"))
    """The coordinator's timers as Kafka runs them for live clients too: the session timer
    expires a live member whose heartbeat (or its response) was lost, and the rebalance
    timer fences a live member whose application hangs in its revocation
    (``StallRevocation``). A live client whose member was expired is a *zombie* until it
    hears so (docs/fidelity.md N4)."""
    callback_steps: bool = field(default=False, metadata=option("bound", "consumer"))
    """Rebalance callbacks run as steps of their own: ``onPartitionsRevoked``,
    ``onPartitionsAssigned`` and ``onPartitionsLost`` start, and finish with
    ``CompleteCallback``, so a response, a fencing or a rejoin can arrive while one runs
    (``AbstractMembershipManager.revokeAndAssign``, ``maybeAbortReconciliation``). With
    False a callback finishes in the step that starts it."""
    assignment_epochs: bool = field(default=_FROM_VERSION, metadata=option("switch", "consumer"))
    """KIP-1251 (Kafka 4.3+): the coordinator records, for every partition a member holds,
    the epoch at which it was assigned, and accepts an offset commit at an older member
    epoch for partitions the member held since that epoch
    (``ConsumerGroup.validateOffsetCommit``). False: strict epoch equality (Kafka ≤ 4.2)."""
    assignment_interval_ms: int = field(
        default=_FROM_VERSION, metadata=option("setting", "consumer", "mixed")
    )
    """KIP-1263 assignment batching: the broker's ``group.consumer.assignment.interval.ms``
    (by the version: Kafka 4.3+'s default 1000; 4.2 has no batching, 0, which computes a
    target on every heartbeat that needs one). A positive interval makes the gate lazy: a
    new target is computed on the first heartbeat after the interval passed since the last
    computation finished
    (``AssignmentIntervalElapses``), not by a timer."""
    min_assignment_interval_ms: int = field(
        default=0, metadata=option("setting", "consumer", "mixed")
    )
    """``group.consumer.min.assignment.interval.ms`` (default 0): the lower bound of the
    broker interval and of the group override."""
    max_assignment_interval_ms: int = field(
        default=15000, metadata=option("setting", "consumer", "mixed")
    )
    """``group.consumer.max.assignment.interval.ms`` (default 15000): the upper bound."""
    group_assignment_interval_ms: int = field(
        default=-1, metadata=option("setting", "consumer", "mixed")
    )
    """The group-level override ``consumer.assignment.interval.ms``; -1 means the broker's
    ``assignment_interval_ms``."""
    assignor_offload: bool = field(default=False, metadata=option("setting", "consumer", "mixed"))
    """KIP-1263 assignment offload (``group.consumer.assignor.offload.enable``): a heartbeat
    that needs a new target starts an assignor run on the coordinator's executor instead
    of computing it inline; at most one run per group is in flight, and its result is
    installed when it completes (``CompleteAssignorRun``). Needs the kafka-4.3 epoch layout
    (epoch 1 is the empty target a first member is answered with)."""
    offload_stale_run: StaleRun = field(
        default="install", metadata=option("switch", "consumer", "mixed")
    )
    """What becomes of a run whose group epoch was passed meanwhile (``StaleRun``)."""
    delete_expired_groups: bool = field(
        default=False, metadata=option("switch", "consumer", "classic")
    )
    """Delete an empty group once the offset cleanup has removed its last committed offset
    (``GroupCoordinatorShard.cleanupGroupMetadata`` / ``maybeDeleteGroup``, as Kafka always
    does). Off by default so that the offset-expiry presets keep their pinned state counts;
    with it, ``ExpireOffsets`` of an empty group's last offsets also deletes the group."""
    auto_commit: bool = field(default=False, metadata=option("setting", "consumer", "classic"))
    """The client's ``enable.auto.commit``: a client commits what it owns as a step of
    its own (``CommitOffsets``)."""
    commit_on_revoke: bool = field(default=True, metadata=option("setting"))
    """The application commits the offsets of the partitions it revokes before it
    acknowledges the revocation (``onPartitionsRevoked``)."""
    warm_start: bool = field(default=False, metadata=option("bound", "classic"))
    """Classic protocol: start from the group already formed — the state where the clients
    that start subscribed have joined and the group is STABLE (the first progress action
    enabled taken until none is), so a preset's perturbations explore what follows."""
    max_restarts: int = field(default=1, metadata=option("bound"))
    """How many times a client process may restart (``Restart``: a new incarnation)."""
    max_rebalance_steps: int | None = field(default=None, metadata=option("expectation"))
    """A declared bound on rebalance time: from the state after the last perturbation, the
    fair schedule must converge within this many steps (``RebalanceTimeBound``; None: no
    bound beyond Convergence's own)."""
    migration_policy: MigrationPolicy = field(
        default="bidirectional", metadata=option("setting", "mixed")
    )
    """A mixed config: ``group.consumer.migration.policy`` (Kafka's default since 4.0,
    ``bidirectional``); read only when ``protocol`` is ``mixed``."""
    classic_replaces_live_holder: bool = field(default=False, metadata=option("switch", "mixed"))
    """A mixed config: a classic static JoinGroup takes over its instance from a
    consumer-protocol holder that has not left with -2, as Kafka does
    (``GroupMetadataManager.getOrMaybeSubscribeStaticConsumerGroupMember`` checks the
    release only when both members speak the consumer protocol; docs/fidelity.md V10).
    False, the default: only once that holder left with -2 (M12), so two processes of one
    instance never hold its partitions at once in an exploration. The conformance vectors
    run with Kafka's rule."""
    replacement_bumps_group_epoch: bool = field(default=True, metadata=option("switch", "mixed"))
    """A mixed config: the consumer-protocol join that converts a classic group and
    replaces the classic holder of its instance bumps the group epoch, so a new target is
    computed over every member (``mco.bump_for_replacement``; docs/fidelity.md M12, V13).
    False: as Kafka 4.3.0 and 4.4.0 do, no bump — ``ConsumerGroup.fromClassicGroup``
    writes the subscription metadata hash and the copy keeps the holder's subscription,
    so the converted group keeps the classic assignment as its target
    (docs/findings.md F5)."""
    required_witnesses: tuple[str, ...] | None = field(default=None, metadata=option("expectation"))
    """The ``SOMETIMES`` witnesses a complete run of this config must hit for its result to
    be ok (``invariants.liveness.WITNESSES`` names; None: every witness). A config that
    cannot reach a behaviour — no perturbation that fences a member, say — names the ones
    it can, so its exhaustive exploration is not reported as possibly vacuous."""
    rules: Rules = field(default=DEFAULT_RULES, compare=False, repr=False, metadata=option("rules"))
    """The step functions the model calls (``model.rules.Rules``); a mutant or a user's rules
    file replaces one. Not compared: two configs that differ only in their rules are equal."""

    def __post_init__(self) -> None:
        _apply_kafka_version(self)
        check_config(self)

    @property
    def settings(self) -> Mapping[str, object]:
        """The protocol settings (``CATEGORIES``), read-only: option name → value."""
        return self.of_category("setting")

    @property
    def switches(self) -> Mapping[str, object]:
        """The rule switches (``CATEGORIES``), read-only: option name → value."""
        return self.of_category("switch")

    @property
    def bounds(self) -> Mapping[str, object]:
        """The exploration bounds (``CATEGORIES``), read-only: option name → value."""
        return self.of_category("bound")

    @property
    def expectations(self) -> Mapping[str, object]:
        """The checking expectations (``CATEGORIES``), read-only: option name → value."""
        return self.of_category("expectation")

    def of_category(self, category: OptionCategory) -> Mapping[str, object]:
        """The options of ``category``, in declaration order, read-only."""
        return MappingProxyType({name: getattr(self, name) for name in options_of(category)})

    def allows(self, perturbation: str) -> bool:
        """Whether the perturbation family is switched on."""
        return perturbation in self.perturbations

    def effective_assignment_interval_ms(self) -> int:
        """The group's assignment interval: its ``consumer.assignment.interval.ms`` unless
        that is -1, else the broker's ``group.consumer.assignment.interval.ms`` (KIP-1263
        ConsumerGroupHeartbeat Request Handling)."""
        if self.group_assignment_interval_ms != -1:
            return self.group_assignment_interval_ms
        return self.assignment_interval_ms


INT32_MAX = 2**31 - 1
"""The largest Kafka ``int`` (a protocol ``int32``)."""

KAFKA_INT_FIELDS: dict[str, str] = {
    "heartbeat_interval_ms": "group.consumer.heartbeat.interval.ms",
    "session_timeout_ms": "group.consumer.session.timeout.ms",
    "rebalance_timeout_ms": "max.poll.interval.ms, sent as RebalanceTimeoutMs",
    "max_group_size": "group.consumer.max.size",
}
"""Fields that stand for a Kafka setting of type ``int`` with ``atLeast(1)``
(``GroupCoordinatorConfig.CONFIG_DEF``, ``ConsumerConfig``; the ConsumerGroupHeartbeat
fields are ``int32``): each must be in 1..``INT32_MAX``."""

ASSIGNMENT_INTERVAL_FIELDS: dict[str, str] = {
    "assignment_interval_ms": "group.consumer.assignment.interval.ms",
    "min_assignment_interval_ms": "group.consumer.min.assignment.interval.ms",
    "max_assignment_interval_ms": "group.consumer.max.assignment.interval.ms",
}
"""KIP-1263's broker settings of type ``int`` with ``atLeast(0)``."""

MODEL_BOUNDS: dict[str, int] = {
    "max_partitions_per_topic": 1000,
    "max_restarts": 100,
    "max_perturbations": 10_000,
}
"""Bounds of the model itself (each field must be in 0..bound): a state holds every
partition and every incarnation, so larger values only make states that no engine can
explore."""

hash_once(Config)


def option_category(name: str) -> OptionCategory:
    """The category of the ``Config`` field ``name`` (``option``)."""
    category: OptionCategory = Config.__dataclass_fields__[name].metadata["category"]
    return category


def option_families(name: str) -> frozenset[Family]:
    """The families whose configs may set the ``Config`` field ``name`` (``option``)."""
    families: frozenset[Family] = Config.__dataclass_fields__[name].metadata["families"]
    return families


def options_of(category: OptionCategory) -> tuple[str, ...]:
    """The ``Config`` fields of ``category``, in declaration order."""
    return tuple(f.name for f in fields(Config) if f.metadata["category"] == category)


def options_outside(family: Family) -> tuple[str, ...]:
    """The ``Config`` fields a config of ``family`` must leave at their defaults."""
    return tuple(f.name for f in fields(Config) if family not in f.metadata["families"])


CONSUMER_ONLY_OPTIONS: tuple[str, ...] = tuple(
    name for name in options_outside("classic") if "consumer" in option_families(name)
)
"""Options of the consumer protocol that a classic config must leave at their defaults."""

MIXED_CONSUMER_OPTIONS: tuple[str, ...] = tuple(
    name for name in CONSUMER_ONLY_OPTIONS if "mixed" in option_families(name)
)
"""Consumer-protocol options a mixed config may set: the consumer-protocol clients'
``report_pending_additions``, and KIP-1263's batching and offload, which the consumer group
applies to its classic members' joins too (KIP-1263 JoinGroup Request Handling)."""


def _apply_kafka_version(config: Config) -> None:
    """Give each option of ``VERSION_OPTIONS`` the config does not set its
    ``kafka_version``'s value (for the config's protocol: ``KafkaRules.option_defaults``)."""
    if config.kafka_version not in KAFKA_VERSIONS:
        raise ConfigError(
            f"config {config.name!r}: kafka_version must be one of "
            f"{', '.join(KAFKA_VERSIONS)}, got {config.kafka_version!r:.40}"
        )
    defaults = KAFKA_VERSIONS[config.kafka_version].option_defaults(config.protocol)
    for option in VERSION_OPTIONS:
        if getattr(config, option) is _FROM_VERSION:
            object.__setattr__(config, option, defaults[option])


def with_kafka_version(config: Config, version: str, **changes: Any) -> Config:
    """``config`` following Kafka ``version``: its version-dependent options
    (``model.versions.VERSION_OPTIONS``) take that version's values, except those
    ``changes`` sets."""
    reset = {o: _FROM_VERSION for o in VERSION_OPTIONS if o not in changes}
    return replace(config, kafka_version=version, **reset, **changes)


def _default(option: str) -> object:
    """The value of ``option`` that a config which does not use it keeps: the field's
    default, or for a version-dependent option the one that switches its rule off."""
    if option in OFF:
        return OFF[option]
    return Config.__dataclass_fields__[option].default


_BOOL_FIELDS = (
    "compute_target_in_heartbeat",
    "reconcile_while_assigning",
    "rejoin_with_epoch_zero",
    "realign_empty_group",
    "static_rejoin_same_member_id",
    "classic_replaces_live_holder",
    "replacement_bumps_group_epoch",
    "report_pending_additions",
    "reorder",
    "slow_clients",
    "live_timers",
    "callback_steps",
    "assignment_epochs",
    "auto_commit",
    "commit_on_revoke",
    "warm_start",
    "assignor_offload",
    "delete_expired_groups",
)


def _number(value: int) -> str:
    """An integer for a message (a huge one is not spelt out)."""
    return str(value) if -(10**20) < value < 10**20 else "a number beyond 10**20 in size"


def _check_ranges(config: Config, where: str) -> None:
    """Types and ranges of the scalar fields (before anything compares them)."""
    for name in _BOOL_FIELDS:
        value = getattr(config, name)
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: {name} must be true or false, got {value!r:.40}")
    for name, setting in KAFKA_INT_FIELDS.items():
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: {name} must be an integer, got {value!r:.40}")
        if not 1 <= value <= INT32_MAX:
            raise ConfigError(
                f"{where}: {name} must be in 1..{INT32_MAX} (Kafka's {setting}: an int "
                f"of at least 1), got {_number(value)}"
            )
    for name, bound in MODEL_BOUNDS.items():
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: {name} must be an integer, got {value!r:.40}")
        if not 0 <= value <= bound:
            raise ConfigError(f"{where}: {name} must be in 0..{bound}, got {_number(value)}")
    for name, setting in (
        *ASSIGNMENT_INTERVAL_FIELDS.items(),
        ("group_assignment_interval_ms", "consumer.assignment.interval.ms"),
    ):
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: {name} ({setting}) must be an integer, got {value!r:.40}")
        if not (-1 if name == "group_assignment_interval_ms" else 0) <= value <= INT32_MAX:
            low = "-1 (the broker default)" if name == "group_assignment_interval_ms" else "0"
            raise ConfigError(
                f"{where}: {name} ({setting}) must be in {low}..{INT32_MAX}, got {_number(value)}"
            )
    for topic, partitions in config.topics:
        if isinstance(partitions, bool) or not isinstance(partitions, int):
            raise ConfigError(
                f"{where}: topic {topic!r:.40} has {partitions!r:.40} partitions; give an integer"
            )


def _check_regex(client: ClientSpec, where: str) -> None:
    """A regular-expression subscription must compile and stand alone (the Java client
    subscribes either to names or to a pattern; the coordinator answers
    INVALID_REGULAR_EXPRESSION to one that does not compile)."""
    if client.subscription:
        raise ConfigError(
            f"{where}: client {client.name} subscribes to topic names and a regex; give one"
        )
    try:
        re.compile(client.regex or "")
    except re.error as e:
        raise ConfigError(
            f"{where}: client {client.name} regex {client.regex!r:.60} does not compile: {e}"
        ) from None


def _check_classic(config: Config, where: str) -> None:
    """A classic config: classic perturbations only, consumer options at their defaults,
    known client assignors."""
    unknown = sorted(config.perturbations - CLASSIC_PERTURBATIONS)
    if unknown:
        raise ConfigError(
            f"{where}: perturbation {unknown[0]} is not modelled for the classic protocol; "
            f"use {', '.join(sorted(CLASSIC_PERTURBATIONS))}"
        )
    for name in options_outside("classic"):
        if getattr(config, name) != _default(name):
            raise ConfigError(f"{where}: {name} is a consumer-protocol option; drop it")
    for c in config.clients:
        if c.regex is not None or c.rack is not None or c.server_assignor is not None:
            raise ConfigError(
                f"{where}: client {c.name}: regex, rack and server_assignor are "
                "consumer-protocol fields; a classic client has assignors"
            )
        for assignors in (c.assignors, *c.bounces):
            if not assignors:
                raise ConfigError(f"{where}: client {c.name} has an empty assignors list")
            for name in assignors:
                if name not in CLIENT_ASSIGNORS:
                    raise ConfigError(
                        f"{where}: client {c.name} names assignor {name!r}; "
                        f"known: {', '.join(CLIENT_ASSIGNORS)}"
                    )
    if "Bounce" in config.perturbations and not any(c.bounces for c in config.clients):
        raise ConfigError(f"{where}: Bounce needs a client with bounces (its next assignors)")


def _check_mixed(config: Config, where: str) -> None:
    """A mixed config names each client's protocol and a migration policy, and keeps to
    the perturbations and options the mixed family models; other configs name neither."""
    if config.protocol != "mixed":
        if any(c.group_protocol is not None for c in config.clients):
            raise ConfigError(
                f"{where}: group_protocol is a setting of a mixed config; set protocol = 'mixed'"
            )
        if config.migration_policy != "bidirectional":
            raise ConfigError(
                f"{where}: migration_policy is a setting of a mixed config; set protocol = 'mixed'"
            )
        if config.classic_replaces_live_holder:
            raise ConfigError(
                f"{where}: classic_replaces_live_holder is a setting of a mixed config; "
                "set protocol = 'mixed'"
            )
        if not config.replacement_bumps_group_epoch:
            raise ConfigError(
                f"{where}: replacement_bumps_group_epoch is a setting of a mixed config; "
                "set protocol = 'mixed'"
            )
        return
    if config.migration_policy not in MIGRATION_POLICIES:
        raise ConfigError(
            f"{where}: migration_policy must be one of {', '.join(MIGRATION_POLICIES)}"
        )
    for c in config.clients:
        if c.group_protocol not in ("consumer", "classic"):
            raise ConfigError(
                f"{where}: client {c.name}: a mixed config gives every client a "
                "group_protocol, 'consumer' or 'classic'"
            )
        if c.bounces or not c.kip429 or c.regex is not None:
            raise ConfigError(
                f"{where}: client {c.name}: bounces, kip429 and regex are not modelled in a "
                "mixed config"
            )
    unknown = sorted(config.perturbations - MIXED_PERTURBATIONS)
    if unknown:
        raise ConfigError(
            f"{where}: perturbation {unknown[0]} is not modelled for a mixed config; "
            f"use {', '.join(sorted(MIXED_PERTURBATIONS))}"
        )
    for name in options_outside("mixed"):
        if getattr(config, name) != _default(name):
            raise ConfigError(f"{where}: {name} is not modelled for a mixed config; drop it")


def _check_instance_id_change(config: Config, where: str) -> None:
    """``ChangeInstanceId`` and ``ClientSpec.alt_instance_id`` go together: a static
    client with another instance id to take — a consumer-protocol client, or a classic
    client of a mixed config (the classic family does not model it)."""
    changing = [c for c in config.clients if c.alt_instance_id is not None]
    if "ChangeInstanceId" in config.perturbations and not changing:
        raise ConfigError(f"{where}: ChangeInstanceId needs a client with alt_instance_id")
    for c in changing:
        if "ChangeInstanceId" not in config.perturbations:
            raise ConfigError(
                f"{where}: client {c.name}: alt_instance_id needs the ChangeInstanceId perturbation"
            )
        if c.instance_id is None or c.alt_instance_id == c.instance_id:
            raise ConfigError(
                f"{where}: client {c.name}: alt_instance_id is for a static client "
                "(instance_id) and must differ from its instance_id"
            )


def _check_kip1263(config: Config, where: str) -> None:
    """KIP-1263's settings: the assignment interval within the broker's bounds (the group
    override too, unless -1), and the options the gate and the offload need."""
    low, high = config.min_assignment_interval_ms, config.max_assignment_interval_ms
    if low > high:
        raise ConfigError(
            f"{where}: min_assignment_interval_ms ({low}) exceeds max_assignment_interval_ms "
            f"({high}); raise the maximum or lower the minimum"
        )
    if not low <= config.assignment_interval_ms <= high:
        raise ConfigError(
            f"{where}: assignment_interval_ms (group.consumer.assignment.interval.ms) must be "
            f"in {low}..{high} (group.consumer.min/max.assignment.interval.ms), got "
            f"{config.assignment_interval_ms}"
        )
    group = config.group_assignment_interval_ms
    if group != -1 and not low <= group <= high:
        raise ConfigError(
            f"{where}: group_assignment_interval_ms (consumer.assignment.interval.ms) must be "
            f"-1 (the broker default) or in {low}..{high}, got {group}"
        )
    if config.offload_stale_run not in ("install", "discard"):
        raise ConfigError(f"{where}: offload_stale_run must be 'install' or 'discard'")
    batching = config.effective_assignment_interval_ms() > 0
    if (batching or config.assignor_offload) and not config.compute_target_in_heartbeat:
        raise ConfigError(
            f"{where}: assignment batching and offload gate the target computed in the "
            "heartbeat; set compute_target_in_heartbeat = true"
        )
    if config.assignor_offload and config.epoch_layout != "kafka-4.3":
        raise ConfigError(
            f"{where}: assignor_offload needs epoch_layout = 'kafka-4.3': a first member is "
            "answered before any run completes, with the empty target of epoch 1 (KIP-1263)"
        )


def check_config(config: Config) -> None:
    """Reject impossible configurations early, saying what to do instead."""
    where = f"config {config.name!r}"
    _check_ranges(config, where)
    if config.protocol not in ("consumer", "classic", "mixed"):
        raise ConfigError(f"{where}: protocol must be 'consumer', 'classic' or 'mixed'")
    _check_mixed(config, where)
    if config.protocol == "classic":
        _check_classic(config, where)
    elif config.protocol == "mixed":
        pass
    elif config.warm_start:
        raise ConfigError(f"{where}: warm_start is a classic-protocol option")
    elif any(c.bounces or not c.kip429 for c in config.clients) or config.perturbations & {
        "Bounce",
        "StallAssignment",
    }:
        raise ConfigError(
            f"{where}: bounces, kip429, Bounce and StallAssignment are classic-protocol "
            "settings; set protocol = 'classic'"
        )
    if not config.topics:
        raise ConfigError(f"{where}: no topics; give at least one (name, partitions) pair")
    names = [t for t, _ in config.topics]
    if len(set(names)) != len(names):
        raise ConfigError(f"{where}: duplicate topic names {sorted(names)}")
    for topic, partitions in config.topics:
        if partitions < 0 or partitions > config.max_partitions_per_topic:
            raise ConfigError(
                f"{where}: topic {topic!r} has {partitions} partitions; use 0.."
                f"{config.max_partitions_per_topic} (raise max_partitions_per_topic)"
            )
    if not config.clients:
        raise ConfigError(f"{where}: no clients; give at least one ClientSpec")
    client_names = [c.name for c in config.clients]
    if len(set(client_names)) != len(client_names):
        raise ConfigError(f"{where}: duplicate client names {client_names}")
    instance_ids = [c.instance_id for c in config.clients if c.instance_id is not None]
    if len(set(instance_ids)) != len(instance_ids) and config.protocol == "consumer":
        # A classic config may run two processes of one static instance (KAFKA-8500): the
        # coordinator replaces the older one's member id and fences it (KIP-345).
        raise ConfigError(
            f"{where}: two clients share a group.instance.id; only a classic config may "
            "run two processes of one instance"
        )
    absent = [t for t, _ in config.absent_topics]
    if set(absent) & set(names) or len(set(absent)) != len(absent):
        raise ConfigError(f"{where}: absent_topics must name topics once, none of topics")
    for topic, partitions in config.absent_topics:
        if partitions < 1 or partitions > config.max_partitions_per_topic:
            raise ConfigError(
                f"{where}: absent topic {topic!r} has {partitions} partitions; use 1.."
                f"{config.max_partitions_per_topic}"
            )
    for c in config.clients:
        if not c.name or "." in c.name:
            raise ConfigError(f"{where}: client name {c.name!r} must be non-empty without '.'")
        for t in c.subscription:
            if t not in names and t not in absent:
                raise ConfigError(f"{where}: client {c.name} subscribes to unknown topic {t!r}")
        if c.regex is not None:
            _check_regex(c, where)
        if c.server_assignor is not None and c.server_assignor not in config.server_assignors:
            raise ConfigError(
                f"{where}: client {c.name} asks for assignor {c.server_assignor!r}; "
                f"known: {', '.join(config.server_assignors)}"
            )
    unknown = config.perturbations - PERTURBATIONS
    if unknown:
        raise ConfigError(
            f"{where}: unknown perturbations {sorted(unknown)}; known: {sorted(PERTURBATIONS)}"
        )
    if not config.server_assignors or any(
        a not in KNOWN_ASSIGNORS for a in config.server_assignors
    ):
        raise ConfigError(
            f"{where}: server_assignors must be a non-empty subset of {KNOWN_ASSIGNORS}"
        )
    if config.epoch_layout not in ("kip-848", "kafka-4.3"):
        raise ConfigError(f"{where}: epoch_layout must be 'kip-848' or 'kafka-4.3'")
    _check_kip1263(config, where)
    _check_instance_id_change(config, where)
    if "TemporaryLeave" in config.perturbations and not instance_ids:
        raise ConfigError(f"{where}: TemporaryLeave needs at least one static client (instance_id)")
    if "ChangeSubscription" in config.perturbations and not config.subscription_choices:
        raise ConfigError(f"{where}: ChangeSubscription needs subscription_choices")
    for choice in config.subscription_choices:
        for t in choice:
            if t not in names:
                raise ConfigError(f"{where}: subscription choice names unknown topic {t!r}")
    if config.heartbeat_interval_ms >= config.session_timeout_ms:
        raise ConfigError(
            f"{where}: heartbeat_interval_ms must be below session_timeout_ms (KAFKA-17618)"
        )
    if config.max_rebalance_steps is not None and not (
        isinstance(config.max_rebalance_steps, int) and 1 <= config.max_rebalance_steps <= 100_000
    ):
        raise ConfigError(
            f"{where}: max_rebalance_steps must be an integer in 1..100000 (or absent)"
        )


def version_departures(config: Config) -> list[str]:
    """Where ``config`` does not follow its ``kafka_version``'s rules: each option it sets
    to another value than the version gives, and each rule the model has only in its
    newer form (``VersionRule.option`` None) that the version lacks and the config can
    reach. Empty: the config follows that version throughout."""
    rules = KAFKA_VERSIONS[config.kafka_version]
    defaults = rules.option_defaults(config.protocol)
    out = [
        f"{option} = {getattr(config, option)!r} (Kafka {config.kafka_version}: "
        f"{defaults[option]!r})"
        for option in VERSION_OPTIONS
        if getattr(config, option) != defaults[option]
    ]
    reachable = {
        "classic_join_refused_when_migration_disabled": config.protocol == "mixed"
        and config.migration_policy == "disabled",
        "assignor_change_bumps_epoch": config.protocol != "classic"
        and (
            "ChangeServerAssignor" in config.perturbations
            or any(c.server_assignor is not None for c in config.clients)
        ),
        "static_index_follows_instance_id": "ChangeInstanceId" in config.perturbations,
    }
    for rule in VERSION_RULES:
        if rule.option is None and reachable[rule.name] and not getattr(rules, rule.name):
            since = ".".join(map(str, rule.since))
            out.append(
                f"{rule.name}: the model has only Kafka {since}'s rule ({rule.kafka}); "
                f"mutant {rule.mutant} re-creates the older one"
            )
    return out
