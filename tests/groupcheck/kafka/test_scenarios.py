"""Scenarios against the real broker (one per session, ``conftest.py``): the real Java
consumer driven through the capture proxy, and the verdicts each scenario's truth calls
for — a crash's hand-over valid once the crash is merged in, a cut-off member's hand-over
reported as a zombie window, classic and cooperative hand-overs clean. Every process a run
starts is gone when it returns."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from groupcheck.kafka.broker import Broker
from groupcheck.kafka.run import run_scenario
from groupcheck.kafka.scenario import find, load

pytestmark = pytest.mark.kafka


def _run(name: str, tmp_path: Path, broker: Broker) -> dict[str, Any]:
    scenario = load(find(name))
    prefix = f"t{uuid.uuid4().hex[:8]}-"
    meta, error = run_scenario(
        scenario, tmp_path, kafka_version=broker.version, broker=broker, prefix=prefix
    )
    assert error is None, error
    for events in (tmp_path / "clients").glob("*.events.ndjson"):
        pids = [
            json.loads(line)["pid"] for line in events.read_text().splitlines() if '"ready"' in line
        ]
        for pid in pids:
            assert not os.path.exists(f"/proc/{pid}"), f"driver {events.name} still runs"
    return meta


def _header(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text().splitlines()[0])


def test_a_crashed_consumer_hand_over_is_valid(tmp_path: Path, kafka_broker: Broker) -> None:
    meta = _run("consumer-crash", tmp_path, kafka_broker)
    safety = meta["verdicts"]["safety"]
    assert safety["result"] == "ok", safety
    # The crash is merged in: the survivors get c3's partitions after its session expired,
    # and the validator knows the owner was dead.
    assert safety["handovers"].get("after-expiry-owner-dead", 0) >= 1, safety
    assert "premature" not in safety["handovers"]
    header = _header(tmp_path / "capture.ndjson")
    assert header["implementation"]["version"] == "4.4.0"
    assert header["implementation"]["commit"] == kafka_broker.commit_id
    assert header["session_timeout_ms"] == 6000
    crashes = [
        line for line in (tmp_path / "capture.ndjson").read_text().splitlines() if '"Crash"' in line
    ]
    assert len(crashes) == 1


def test_a_cut_off_consumer_is_a_zombie_window(tmp_path: Path, kafka_broker: Broker) -> None:
    meta = _run("consumer-fenced", tmp_path, kafka_broker)
    safety = meta["verdicts"]["safety"]
    # Not a violation by default: the coordinator waited for the session timeout; the cut
    # member kept believing it owned its partitions until it was fenced.
    assert safety["result"] == "ok", safety
    assert safety["zombie_windows"] >= 1, safety
    assert safety["handovers"].get("zombie-window", 0) >= 1, safety
    assert "premature" not in safety["handovers"]


def test_classic_cooperative_joins_and_crash(tmp_path: Path, kafka_broker: Broker) -> None:
    meta = _run("classic-cooperative", tmp_path, kafka_broker)
    safety = meta["verdicts"]["safety"]
    assert safety["result"] == "ok", safety
    header = _header(tmp_path / "capture.ndjson")
    assert header["protocol"] == "classic"


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_f1_on_the_real_java_client(tmp_path: Path, kafka_broker: Broker) -> None:
    """F1's own shape (docs/findings.md): c2's full heartbeat, sent while its
    onPartitionsAssigned for p runs, reports an assignment without p at its old epoch; the
    broker moves c2 on without p and gives p to another member before c2's callback
    returns; c2 then owns p alongside it, which safety mode reports."""
    meta = _run("f1", tmp_path, kafka_broker)
    safety = meta["verdicts"]["safety"]
    assert safety["result"] == "violation", safety
    found = [v for v in safety["violations"] if "Observed.NoDoubleOwnership: c2 reports" in v]
    assert found, safety
    partition = found[0].split("owning ")[1].split(" ")[0]  # foo-N, the prefix stripped
    lines = (tmp_path / "capture.ndjson").read_text().splitlines()
    header = json.loads(lines[0])
    names = header["clients"]
    member = next(m for m, n in names.items() if n == "c2")
    driver = _events(tmp_path / "clients" / "c2.events.ndjson")
    assigned = next(e for e in driver if e["event"] == "assigned" and e["partitions"])
    ended = next(e for e in driver if e["event"] == "callback_end")
    ours = [p for p in assigned["partitions"] if p.endswith(partition)]
    assert ours, (assigned, partition)
    index = int(partition.rsplit("-", 1)[1])
    events = [json.loads(line) for line in lines[1:]]
    wire = [e for e in events if e["kind"] == "DeliverMessage"]
    # c2's full heartbeat while its callback runs: every field, TopicPartitions without p.
    full = [
        (n, e)
        for n, e in enumerate(wire)
        if e["payload"]["client"] == member
        and e["payload"]["direction"] == "request"
        and "SubscribedTopicNames" in e["payload"]["body"]
        and assigned["ts"] <= e["ts"] <= ended["ts"]
    ]
    assert full, "no full heartbeat from c2 while its callback ran"
    n, request = full[0]
    reported = {
        p
        for tp in request["payload"]["body"].get("TopicPartitions") or []
        for p in tp["Partitions"]
    }
    assert index not in reported
    response = next(
        e
        for e in wire[n + 1 :]
        if e["payload"]["client"] == member and e["payload"]["direction"] == "response"
    )
    body = response["payload"]["body"]
    assert body["MemberEpoch"] > request["payload"]["body"]["MemberEpoch"]
    given = {p for tp in body["Assignment"]["TopicPartitions"] for p in tp["Partitions"]}
    assert index not in given
    # p goes to another member before c2's callback returns.
    handed = [
        e
        for e in wire[n + 1 :]
        if e["payload"]["client"] != member
        and e["payload"]["direction"] == "response"
        and e["ts"] < ended["ts"]
        and index
        in {
            p
            for tp in (e["payload"]["body"].get("Assignment") or {}).get("TopicPartitions") or []
            for p in tp["Partitions"]
        }
    ]
    assert handed, "p was not given to another member while c2 applied it"
