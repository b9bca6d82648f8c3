"""The Kafka versions the model knows (``model.versions``): one declaration gives the
defaults of the version-dependent options, every preset names its version, and coordinator
mode replays a capture with the rules of the version its header names."""

from __future__ import annotations

import json

import pytest
from tracelines import progress_walk

from groupcheck.validate.coordinator_mode import validate_coordinator
from model.config import ClientSpec, Config, version_departures, with_kafka_version
from model.presets import BENCHMARK_PRESETS, PRESETS
from model.settings import config_from_mapping, config_to_mapping
from model.status import ConfigError
from model.trace import path_lines
from model.versions import (
    DEFAULT_KAFKA_VERSION,
    KAFKA_VERSIONS,
    VERSION_OPTIONS,
    VERSION_RULES,
    kafka_rules,
)

TWO = (ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",)))


def test_every_preset_declares_a_known_version() -> None:
    for name, config in {**PRESETS, **BENCHMARK_PRESETS}.items():
        assert config.kafka_version in KAFKA_VERSIONS, name
        # A preset's departures from its version are what `config show` lists.
        assert all(isinstance(d, str) for d in version_departures(config))


def test_the_version_gives_the_defaults_of_its_options() -> None:
    assert DEFAULT_KAFKA_VERSION == "4.4"
    c44 = Config(name="x", topics=(("foo", 2),), clients=TWO)
    assert c44.kafka_version == "4.4"
    assert (c44.epoch_layout, c44.assignment_interval_ms) == ("kafka-4.3", 1000)
    assert c44.assignment_epochs
    assert c44.realign_empty_group
    c43 = Config(name="x", topics=(("foo", 2),), clients=TWO, kafka_version="4.3")
    assert (c43.epoch_layout, c43.assignment_epochs, c43.realign_empty_group) == (
        "kafka-4.3",
        True,
        False,
    )
    c42 = Config(name="x", topics=(("foo", 2),), clients=TWO, kafka_version="4.2")
    assert (c42.epoch_layout, c42.assignment_interval_ms) == ("kip-848", 0)
    assert not c42.assignment_epochs
    assert not c42.realign_empty_group
    assert version_departures(c42) == version_departures(c44) == []
    # A config sets an option explicitly: a variant of its version, listed as such.
    mixed = Config(
        name="x", topics=(("foo", 2),), clients=TWO, kafka_version="4.2", assignment_epochs=True
    )
    assert mixed.assignment_epochs
    assert version_departures(mixed)
    # Another version's rules, except what the caller sets.
    assert with_kafka_version(c42, "4.4") == c44
    assert with_kafka_version(c42, "4.4", realign_empty_group=False).realign_empty_group is False
    # A classic config has none of these rules, whatever its version.
    classic = Config(name="c", protocol="classic", topics=(("foo", 1),), clients=TWO)
    assert classic.epoch_layout == "kip-848"
    assert classic.assignment_interval_ms == 0
    with pytest.raises(ConfigError, match=r"kafka_version must be one of 4\.2, 4\.3, 4\.4"):
        Config(name="x", topics=(("foo", 2),), clients=TWO, kafka_version="3.9")


def test_the_declaration_by_release() -> None:
    assert kafka_rules("4.2.1") == KAFKA_VERSIONS["4.2"]
    assert kafka_rules("3.9.0") == KAFKA_VERSIONS["4.2"]  # older: the oldest known
    assert kafka_rules("4.5.0") == KAFKA_VERSIONS["4.4"]  # newer: the newest known
    assert not KAFKA_VERSIONS["4.3"].classic_join_refused_when_migration_disabled
    assert kafka_rules("4.3.1").classic_join_refused_when_migration_disabled  # KAFKA-20640
    assert set(VERSION_OPTIONS) == {r.option for r in VERSION_RULES if r.option}
    assert all(r.mutant for r in VERSION_RULES if r.option is None)


def test_config_files_carry_the_version() -> None:
    presets = {**PRESETS, **BENCHMARK_PRESETS}
    for name in ("TINY", "BATCHING", "TOPICS", "MIGRATION_DISABLED", "CLASSIC_EAGER"):
        config = presets[name]
        data = config_to_mapping(config)
        assert data["kafka_version"] == config.kafka_version
        assert config_from_mapping(data, "f", presets) == config
    # A preset with another version: that version's rules where the file sets nothing.
    tiny44 = config_from_mapping({"preset": "TINY", "kafka_version": "4.4"}, "f", presets)
    assert tiny44.epoch_layout == "kafka-4.3"
    assert tiny44.assignment_interval_ms == 1000


def _declared(lines: list[str], version: str) -> list[str]:
    """A trace whose header says it comes from Apache Kafka ``version``."""
    header = json.loads(lines[0])
    header["implementation"] = {"name": "Apache Kafka", "version": version}
    return [json.dumps(header), *lines[1:]]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_42_capture_conforms_with_42s_rules_only(seed: int) -> None:
    """TINY follows Kafka 4.2 (a first member answered at epoch 1, KIP-848's layout, no
    batching): declared 4.2.x its trace conforms with no option given; declared 4.4.0 the
    replay takes 4.4's rules (groups start at epoch 1, KAFKA-20268) and diverges."""
    lines = list(path_lines(progress_walk(PRESETS["TINY"], seed, 80)))
    assert PRESETS["TINY"].kafka_version == "4.2"
    as42 = validate_coordinator("as-4.2", _declared(lines, "4.2.1"))
    assert as42.error is None
    assert as42.violations == []
    assert as42.result == "ok"
    as44 = validate_coordinator("as-4.4", _declared(lines, "4.4.0"))
    assert as44.violations, "4.4's rules must not accept a 4.2-shaped trace"
    assert "MemberEpoch" in as44.violations[0].message
