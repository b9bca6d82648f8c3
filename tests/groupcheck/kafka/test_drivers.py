"""The client drivers against a real broker: the Java driver (consumer and classic
protocols), the librdkafka driver, a crash, and EOF on a driver's stdin.

The broker is the session's (``conftest.py``); the Java driver's classpath is the
fetched Kafka jars and the ``GroupcheckDriver`` ``make setup`` compiled. Every test makes
its own topic (4 partitions) and groups.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from groupcheck.kafka.artifacts import Artifacts
from groupcheck.kafka.broker import Broker
from groupcheck.kafka.clients import Driver

BROKER = ""
"""The session broker's address, set by the ``_broker`` fixture before every test."""
PARTITIONS = 4
WAIT_S = 30.0

pytestmark = pytest.mark.kafka


@pytest.fixture(autouse=True)
def _broker(kafka_broker: Broker) -> None:
    global BROKER  # noqa: PLW0603 (the helpers below build commands with it)
    BROKER = kafka_broker.bootstrap


@pytest.fixture
def classpath(kafka_artifacts: Artifacts) -> str:
    return kafka_artifacts.driver_classpath


@pytest.fixture
def topic() -> Iterator[str]:
    from confluent_kafka.admin import AdminClient
    from confluent_kafka.cimpl import NewTopic

    admin = AdminClient({"bootstrap.servers": BROKER})
    name = f"drivers-{uuid.uuid4().hex[:10]}"
    admin.create_topics([NewTopic(name, PARTITIONS, 1)])[name].result(timeout=WAIT_S)
    yield name
    admin.delete_topics([name])[name].result(timeout=WAIT_S)


def _group() -> str:
    return f"drivers-{uuid.uuid4().hex[:10]}"


def create(
    client: str, group: str, protocol: str, assignor: str | None, **extra: Any
) -> dict[str, Any]:
    cmd: dict[str, Any] = {
        "cmd": "create",
        "client": client,
        "bootstrap": BROKER,
        "group": group,
        "protocol": protocol,
        "assignor": assignor,
        "instance_id": None,
        "max_poll_interval_ms": None,
        "session_timeout_ms": None,
        "heartbeat_interval_ms": None,
        "props": {},
    }
    if protocol == "classic":
        # The broker's minimum session timeout; quick heartbeats make rebalances quick.
        cmd |= {"session_timeout_ms": 6000, "heartbeat_interval_ms": 500}
    cmd |= extra
    return cmd


def is_event(name: str, client: str | None = None) -> Callable[[dict[str, Any]], bool]:
    return lambda e: e.get("event") == name and (client is None or e.get("client") == client)


def assignment(driver: Driver, client: str) -> set[str] | None:
    """The client's last reported assignment (None before any)."""
    found = None
    for event in driver.events():
        if event.get("event") == "assignment" and event.get("client") == client:
            found = set(event["partitions"])
    return found


def wait_until(check: Callable[[], bool], what: str, drivers: list[Driver]) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    tails = {d.name: d.events()[-8:] for d in drivers}
    pytest.fail(f"not within {WAIT_S:g} s: {what}; last events: {tails}")


def all_partitions(topic: str) -> set[str]:
    return {f"{topic}-{p}" for p in range(PARTITIONS)}


def check_pair(
    first: tuple[Driver, str], second: tuple[Driver, str], topic: str, *, epochs: bool
) -> None:
    """The first consumer gets every partition, the second joins, they split 2/2."""
    (d1, c1), (d2, c2) = first, second
    d1.wait_for(
        lambda e: is_event("assignment", c1)(e) and set(e["partitions"]) == all_partitions(topic),
        timeout_s=WAIT_S,
    )
    assigned = set().union(
        *(set(e["partitions"]) for e in d1.events() if is_event("assigned", c1)(e))
    )
    assert assigned == all_partitions(topic)
    if epochs:
        member = d1.wait_for(
            lambda e: is_event("member", c1)(e) and e["epoch"] >= 1, timeout_s=WAIT_S
        )
        assert member["member_id"]
    else:
        member = d1.wait_for(
            lambda e: is_event("member", c1)(e) and bool(e["member_id"]), timeout_s=WAIT_S
        )
        assert member["epoch"] is None

    d2.send({"cmd": "subscribe", "client": c2, "topics": [topic]})

    def split() -> bool:
        a1, a2 = assignment(d1, c1), assignment(d2, c2)
        return (
            a1 is not None
            and a2 is not None
            and len(a1) == len(a2) == PARTITIONS // 2
            and a1 | a2 == all_partitions(topic)
        )

    wait_until(split, f"{c1} and {c2} split {topic} 2/2", [d1, d2])
    a1, a2 = assignment(d1, c1), assignment(d2, c2)
    assert a1 is not None
    assert a2 is not None
    assert not a1 & a2
    for driver, client in (first, second):
        driver.send({"cmd": "close", "client": client, "leave": "leave"})
    for driver, client in (first, second):
        driver.wait_for(is_event("closed", client), timeout_s=WAIT_S)
        assert not [e for e in driver.events() if e.get("event") == "error"]


@pytest.mark.parametrize(
    ("protocol", "assignor"), [("consumer", "uniform"), ("classic", "cooperative-sticky")]
)
def test_java_pair_splits_and_leaves(
    classpath: str, topic: str, tmp_path: Path, protocol: str, assignor: str
) -> None:
    group = _group()
    with (
        Driver.java(classpath=classpath, name="j1", log_dir=tmp_path) as d1,
        Driver.java(classpath=classpath, name="j2", log_dir=tmp_path) as d2,
    ):
        assert d1.library.startswith("kafka-clients ")
        assert d1.alive()
        assert d2.alive()
        d1.send(create("j1", group, protocol, assignor))
        d1.send({"cmd": "subscribe", "client": "j1", "topics": [topic]})
        d2.send(create("j2", group, protocol, assignor))
        check_pair((d1, "j1"), (d2, "j2"), topic, epochs=True)
        # The Java driver exits by itself after close.
        assert d1.stop() == 0
        assert d2.stop() == 0
    assert (tmp_path / "j1.events.ndjson").read_text().count('"event":"closed"') == 1


@pytest.mark.parametrize(
    ("protocol", "assignor"), [("consumer", "uniform"), ("classic", "cooperative-sticky")]
)
def test_rdkafka_pair_splits_and_leaves(
    topic: str, tmp_path: Path, protocol: str, assignor: str
) -> None:
    group = _group()
    with Driver.rdkafka(name="rd", log_dir=tmp_path) as d:
        assert d.library.startswith("librdkafka ")
        d.send(create("r1", group, protocol, assignor))
        d.send({"cmd": "subscribe", "client": "r1", "topics": [topic]})
        d.send(create("r2", group, protocol, assignor))
        check_pair((d, "r1"), (d, "r2"), topic, epochs=False)
        assert d.alive()  # two consumers closed: the process lives on until exit
        assert d.stop() == 0


def test_java_crash_leaves_no_process(classpath: str, topic: str, tmp_path: Path) -> None:
    with Driver.java(classpath=classpath, name="victim", log_dir=tmp_path) as d:
        d.send(create("victim", _group(), "consumer", "uniform"))
        d.send({"cmd": "subscribe", "client": "victim", "topics": [topic]})
        d.wait_for(
            lambda e: is_event("assignment")(e) and len(e["partitions"]) == PARTITIONS,
            timeout_s=WAIT_S,
        )
        d.send({"cmd": "crash", "client": "victim"})
        d.wait_for(is_event("crash", "victim"), timeout_s=WAIT_S)
        wait_until(lambda: not d.alive(), "the crashed driver exits", [d])
        assert d.stop() == 137
        assert not [e for e in d.events() if e.get("event") == "closed"]
    with pytest.raises(ProcessLookupError):
        os.kill(d.pid, 0)


def test_java_exits_on_eof(classpath: str, topic: str, tmp_path: Path) -> None:
    with Driver.java(classpath=classpath, name="orphan", log_dir=tmp_path) as d:
        d.send({"cmd": "no-such-command", "client": "orphan"})
        d.wait_for(
            lambda e: is_event("error")(e) and "no-such-command" in e["message"],
            timeout_s=WAIT_S,
        )
        d.send(create("orphan", _group(), "consumer", "uniform"))
        d.send({"cmd": "subscribe", "client": "orphan", "topics": [topic]})
        d.wait_for(is_event("subscribed", "orphan"), timeout_s=WAIT_S)
        d.close_input()
        d.wait_for(is_event("closed", "orphan"), timeout_s=WAIT_S)
        wait_until(lambda: not d.alive(), "the driver exits on EOF", [d])
        assert d.stop() == 0
    with pytest.raises(ProcessLookupError):
        os.kill(d.pid, 0)
