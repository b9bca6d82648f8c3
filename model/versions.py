"""The Apache Kafka versions the model knows and the rules that differ between them.

One declaration: every coordinator rule of the model that changed between Kafka 4.2 and
4.4, with the first version that has it (``VERSION_RULES``), and per known version the
record of those rules (``KAFKA_VERSIONS``). ``Config.kafka_version`` names one of them
(default :data:`DEFAULT_KAFKA_VERSION`) and gives the defaults of the options that switch a
rule (``VersionRule.option``) wherever a config does not set them; ``groupcheck validate
--mode coordinator`` looks a capture's ``implementation.version`` up here
(:func:`kafka_rules`). docs/fidelity.md, "Version-dependent rules", is this table in prose.
"""

from __future__ import annotations

from dataclasses import dataclass

Version = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class VersionRule:
    """A rule that some Kafka versions have and earlier ones do not."""

    name: str
    """The field of :class:`KafkaRules` that says whether a version has it."""
    since: Version
    """The first release that has it."""
    kafka: str
    """Where Kafka has it: class / method and JIRA."""
    option: str | None
    """The ``Config`` option that switches it, or None when the model has only the newer
    rule (the older one is re-created by ``mutant``)."""
    mutant: str | None = None


VERSION_RULES: tuple[VersionRule, ...] = (
    VersionRule(
        "epochs_start_at_one",
        (4, 3, 0),
        "GroupMetadataManager.consumerGroupHeartbeat: a new group starts at group epoch 1 "
        "with an empty target at assignment epoch 1 (KAFKA-20268)",
        "epoch_layout",
    ),
    VersionRule(
        "assignment_batching",
        (4, 3, 0),
        "GroupMetadataManager target-assignment update, canComputeNextTargetAssignment "
        "(KAFKA-20291); GroupCoordinatorConfig.CONSUMER_GROUP_ASSIGNMENT_INTERVAL_MS_DEFAULT "
        "= 1000 (KAFKA-20300)",
        "assignment_interval_ms",
    ),
    VersionRule(
        "assignment_epochs",
        (4, 3, 0),
        "ConsumerGroup.validateOffsetCommit / createAssignmentEpochValidator, "
        "ConsumerGroupMember assignment epochs (KIP-1251, KAFKA-20066)",
        "assignment_epochs",
    ),
    VersionRule(
        "realign_empty_group",
        (4, 4, 0),
        "GroupMetadataManager.consumerGroupFenceMember: the last member's removal realigns "
        "the assignment epoch (KAFKA-20442)",
        "realign_empty_group",
    ),
    VersionRule(
        "classic_join_refused_when_migration_disabled",
        (4, 3, 1),
        "GroupMetadataManager.throwIfClassicMemberCannotJoinConsumerGroup (KAFKA-20640)",
        None,
        "mixed-admits-when-disabled",
    ),
    VersionRule(
        "assignor_change_bumps_epoch",
        (4, 4, 0),
        "GroupMetadataManager.hasPreferredServerAssignorChanged (KAFKA-20434)",
        None,
        "no-bump-on-assignor-change",
    ),
    VersionRule(
        "static_index_follows_instance_id",
        (4, 4, 0),
        "ConsumerGroup.updateStaticMember drops the old instance id (KAFKA-20747)",
        None,
        "stale-static-mapping",
    ),
)
"""Every rule of the model that depends on the Kafka version, oldest first."""


@dataclass(frozen=True, slots=True)
class KafkaRules:
    """The version-dependent rules of one Kafka version (``VERSION_RULES``)."""

    version: str
    epochs_start_at_one: bool
    assignment_batching: bool
    assignment_epochs: bool
    realign_empty_group: bool
    classic_join_refused_when_migration_disabled: bool
    assignor_change_bumps_epoch: bool
    static_index_follows_instance_id: bool

    @property
    def epoch_layout(self) -> str:
        """``Config.epoch_layout``'s value for this version."""
        return "kafka-4.3" if self.epochs_start_at_one else "kip-848"

    @property
    def assignment_interval_ms(self) -> int:
        """``group.consumer.assignment.interval.ms``'s default: 1000 where batching exists,
        else 0 (a target on every heartbeat that needs one)."""
        return 1000 if self.assignment_batching else 0

    def option_defaults(self, protocol: str) -> dict[str, object]:
        """The defaults this version gives the ``Config`` options of :data:`VERSION_OPTIONS`
        for a config of ``protocol``: a classic group has none of these rules, a mixed
        config models the epoch layout and batching only (``model.config``,
        ``MIXED_CONSUMER_OPTIONS``); what a protocol does not read stays off."""
        values: dict[str, object] = dict(OFF)
        if protocol in ("consumer", "mixed"):
            values["epoch_layout"] = self.epoch_layout
            values["assignment_interval_ms"] = self.assignment_interval_ms
        if protocol == "consumer":
            values["assignment_epochs"] = self.assignment_epochs
            values["realign_empty_group"] = self.realign_empty_group
        return values


OFF: dict[str, object] = {
    "epoch_layout": "kip-848",
    "assignment_interval_ms": 0,
    "assignment_epochs": False,
    "realign_empty_group": False,
}
"""The value of each version-dependent option that switches its rule off (Kafka 4.2's)."""

VERSION_OPTIONS: tuple[str, ...] = tuple(r.option for r in VERSION_RULES if r.option)
"""The ``Config`` options whose default the Kafka version gives."""


def parse_version(text: str) -> Version | None:
    """``"4.3.1"`` → ``(4, 3, 1)`` (a missing patch is 0; a suffix such as ``-SNAPSHOT``
    ends the numbers); None for text that does not start with ``major.minor``."""
    numbers: list[int] = []
    for part in text.split("."):
        digits = ""
        for ch in part:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        numbers.append(int(digits))
        if digits != part:
            break
    if len(numbers) < 2:
        return None
    return (numbers[0], numbers[1], numbers[2] if len(numbers) > 2 else 0)


def kafka_rules(version: str | Version) -> KafkaRules:
    """The rules of a Kafka release (``"4.2"``, ``"4.3.1"``, ``(4, 4, 0)``): each rule of
    ``VERSION_RULES`` it has by its number. A release older than the oldest known version
    gets that version's rules, a newer one the newest's (the model knows no later change).
    Raises ValueError for text that is no version."""
    number = parse_version(version) if isinstance(version, str) else version
    if number is None:
        raise ValueError(f"not a Kafka version: {version!r:.40}; give major.minor[.patch]")
    known = [parse_version(v) or (0, 0, 0) for v in KAFKA_VERSION_NAMES]
    number = max(known[0], min(number, (*known[-1][:2], 2**31)))
    name = f"{number[0]}.{number[1]}"
    has = {r.name: number >= r.since for r in VERSION_RULES}
    return KafkaRules(name, **has)


KAFKA_VERSION_NAMES: tuple[str, ...] = ("4.2", "4.3", "4.4")
"""The Kafka versions a config may follow (``Config.kafka_version``), oldest first; each
stands for its first release (4.3 is 4.3.0: KAFKA-20640 came in 4.3.1)."""

DEFAULT_KAFKA_VERSION = "4.4"
"""The version a config follows unless it names one."""

KAFKA_VERSIONS: dict[str, KafkaRules] = {v: kafka_rules(v) for v in KAFKA_VERSION_NAMES}
"""Version → its rules."""
