"""One real Kafka broker for every test under tests/groupcheck/kafka (they are one xdist work unit,
``tests/conftest.py``), started from the artifacts ``make setup`` fetched — nothing is
downloaded here — and stopped, with its directory, when the session ends."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from groupcheck.kafka.artifacts import DEFAULT_VERSION, Artifacts, KafkaSetupError, artifacts
from groupcheck.kafka.broker import Broker

TEST_GROUP_SETTINGS = {
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.session.timeout.ms": "1000",
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "100",
    "group.min.session.timeout.ms": "1000",
}
"""The shared broker's group settings: the scenarios' defaults (``groupcheck.kafka.broker``)."""


@pytest.fixture(scope="session")
def kafka_artifacts() -> Artifacts:
    """The fetched Kafka version; a missing setup fails (``make test`` runs ``make setup``
    first), unless ``GROUPCHECK_SKIP_KAFKA=1`` says this machine has no Kafka on purpose."""
    try:
        return artifacts(DEFAULT_VERSION)
    except KafkaSetupError as e:
        if os.environ.get("GROUPCHECK_SKIP_KAFKA") == "1":
            pytest.skip(f"GROUPCHECK_SKIP_KAFKA=1: {e}")
        pytest.fail(str(e))


@pytest.fixture(scope="session")
def kafka_broker(kafka_artifacts: Artifacts) -> Iterator[Broker]:
    broker = Broker(properties=TEST_GROUP_SETTINGS)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()
