"""``CreateTopic`` events carry the partition count the topic was created with
(docs/trace-format.md, "Administrator events"): the model's trace writer writes it, the
reader takes it (optional: traces written before it are still read), and the coordinator
replays (consumer, and classic or mixed) use it instead of guessing from the header."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path as FsPath
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from groupcheck.validate import coordinator_mode, mixed_coordinator
from groupcheck.validate.coordinator_mode import validate_coordinator
from model.actions import CreateTopic, ResolveRegularExpressions
from model.config import ClientSpec, Config
from model.consumer.target import compute_target_assignment
from model.path import Path
from model.records import TopicMetadata
from model.scenario import Script
from model.trace import TraceError
from model.trace.codec import decode_action, parse_event, path_lines, read_path

ROOT = FsPath(__file__).resolve().parents[3]
SCHEMA = json.loads((ROOT / "docs" / "trace-format.schema.json").read_text(encoding="utf-8"))
CAPTURES = ROOT / "tests" / "groupcheck" / "kafka" / "captures"

CONFIG = Config(
    kafka_version="4.2",
    name="regex",
    topics=(("foo", 1),),
    absent_topics=(("foo2", 3),),
    clients=(ClientSpec("A", (), regex="foo.*"),),
    max_perturbations=1,
    perturbations=frozenset({"CreateTopic"}),
    max_restarts=0,
)


def _created_path() -> Path:
    """A joins with its regex, foo2 (3 partitions) is created and resolved, A consumes."""
    script = Script(CONFIG)
    script.heartbeat("A")
    script.do(ResolveRegularExpressions())
    script.heartbeat("A")
    script.do(CreateTopic("foo2", partitions=3))
    script.do(ResolveRegularExpressions())
    script.heartbeat("A")
    return Path(CONFIG, tuple(script.actions))


def _create_lines(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if json.loads(line).get("kind") == "CreateTopic"]


def _set_count(lines: list[str], count: int | None) -> list[str]:
    """The lines with every CreateTopic's ``partitions`` set to ``count`` (None: removed,
    as a trace written before the count was recorded)."""
    out = list(lines)
    for i in _create_lines(lines):
        event = json.loads(lines[i])
        event["payload"].pop("partitions", None)
        if count is not None:
            event["payload"]["partitions"] = count
        out[i] = json.dumps(event)
    return out


def test_the_model_offers_and_applies_the_configured_count() -> None:
    path = _created_path()
    (create,) = [a for a in path.actions if isinstance(a, CreateTopic)]
    assert create == CreateTopic("foo2", partitions=3)
    assert path.final().topics["foo2"].partitions == 3


def test_the_trace_writer_writes_the_count_and_the_reader_reads_it_back() -> None:
    path = _created_path()
    lines = list(path_lines(path))
    (i,) = _create_lines(lines)
    event = json.loads(lines[i])
    assert event["payload"] == {"topic": "foo2", "partitions": 3}
    assert event["source"] == "coordinator"
    validator = Draft202012Validator(SCHEMA)
    assert [e.message for line in lines for e in validator.iter_errors(json.loads(line))] == []
    assert read_path(CONFIG, lines).actions == path.actions


def test_a_trace_without_the_count_is_still_read() -> None:
    path = _created_path()
    old = _set_count(list(path_lines(path)), None)
    (i,) = _create_lines(old)
    assert json.loads(old[i])["payload"] == {"topic": "foo2"}
    assert list(Draft202012Validator(SCHEMA).iter_errors(json.loads(old[i]))) == []
    action = decode_action(parse_event(old[i], i + 1), old[i], i + 1)
    assert action == CreateTopic("foo2", partitions=None)
    # replay: the config's count stands in for the missing one
    assert read_path(CONFIG, old).actions == path.actions


def test_a_count_the_config_does_not_create_is_not_enabled() -> None:
    lines = _set_count(list(path_lines(_created_path())), 2)
    with pytest.raises(TraceError, match="CreateTopic is not enabled"):
        read_path(CONFIG, lines)


@pytest.mark.parametrize(("count", "reason"), [(0, "at least 1"), ("3", "partitions")])
def test_a_bad_count_is_malformed_at_its_column(count: Any, reason: str) -> None:
    line = json.dumps(
        {
            "seq": 5,
            "ts": None,
            "source": "admin",
            "kind": "CreateTopic",
            "payload": {"topic": "t", "partitions": count},
        }
    )
    with pytest.raises(TraceError, match=reason) as raised:
        decode_action(parse_event(line, 5), line, 5)
    assert raised.value.line == 5
    assert raised.value.column == line.index('"partitions"') + 1
    assert list(Draft202012Validator(SCHEMA).iter_errors(json.loads(line)))  # schema agrees


def _counts_seen(monkeypatch: pytest.MonkeyPatch, module: object, topic: str) -> list[int | None]:
    """Record the partition count of ``topic`` in the metadata every target computation of
    ``module``'s replay is given (None: the topic is not in it)."""
    seen: list[int | None] = []

    def recording(group: Any, topics: Mapping[str, TopicMetadata], assignor: str) -> Any:
        seen.append(topics[topic].partitions if topic in topics else None)
        return compute_target_assignment(group, topics, assignor)

    monkeypatch.setattr(module, "compute_target_assignment", recording)
    return seen


@pytest.mark.parametrize(("count", "used"), [(None, 1), (2, 2), (5, 5)])
def test_the_consumer_replay_uses_the_events_count(
    monkeypatch: pytest.MonkeyPatch, count: int | None, used: int
) -> None:
    """consumer-regex creates orders-ap with 2 partitions; the header (the topics at the
    start) does not hold it. Without a count the replay can only guess 1; with one it
    takes the event's."""
    lines = (CAPTURES / "consumer-regex.ndjson").read_text(encoding="utf-8").splitlines()
    assert "orders-ap" not in json.loads(lines[0])["topics"]
    seen = _counts_seen(monkeypatch, coordinator_mode, "orders-ap")
    report = validate_coordinator("consumer-regex", _set_count(lines, count))
    assert report.violations == []
    assert report.reasons == [], report.reasons
    created = [c for c in seen if c is not None]
    assert created
    assert set(created) == {used}


@pytest.mark.parametrize(("count", "used"), [(None, 1), (6, 6)])
def test_the_mixed_replay_uses_the_events_count(
    monkeypatch: pytest.MonkeyPatch, count: int | None, used: int
) -> None:
    """A topic created before migration-upgrade's first event (the group does not exist
    yet, so nothing is bumped): the consumer group's target computations see the event's
    count, or the guess of 1 without one."""
    lines = (CAPTURES / "migration-upgrade.ndjson").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[1])
    payload: dict[str, Any] = {"topic": "extra"}
    if count is not None:
        payload["partitions"] = count
    event = {"seq": 0, "ts": first["ts"], "source": "admin", "kind": "CreateTopic"}
    lines.insert(1, json.dumps({**event, "payload": payload}))
    seen = _counts_seen(monkeypatch, mixed_coordinator, "extra")
    validate_coordinator("migration-upgrade", lines)
    assert seen
    assert set(seen) == {used}
