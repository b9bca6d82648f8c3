"""The trace format: model paths round-trip through NDJSON; malformed input is a one-line
error naming line and column, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path as FsPath

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from groupcheck.explore.bfs import bfs
from groupcheck.explore.walk import walk
from groupcheck.mutants import get_mutant
from model.presets import PRESETS
from model.trace import (
    FORMAT,
    VERSION,
    TraceError,
    decode_action,
    parse_event,
    parse_header,
    path_lines,
    read_path,
)
from model.trace.codec import (
    version_for,
)

SCHEMA = FsPath(__file__).resolve().parents[2] / "docs" / "trace-format.schema.json"


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_walk_paths_round_trip(name: str) -> None:
    config = PRESETS[name]
    import random

    from model import system

    rng = random.Random(name)
    state = system.initial(config)
    actions = []
    for _ in range(60):
        enabled = system.enabled(state, config)
        if not enabled:
            break
        action = enabled[rng.randrange(len(enabled))]
        actions.append(action)
        state = system.step(state, action, config)
    from model.path import Path

    path = Path(config, tuple(actions))
    lines = list(path_lines(path))
    header = json.loads(lines[0])
    assert (header["format"], header["version"]) == (FORMAT, version_for(config.protocol))
    assert header["version"] == (3 if config.protocol == "mixed" else VERSION)
    assert len(lines) == len(actions) + 1
    assert read_path(config, lines).actions == path.actions


def test_counterexample_round_trip_uses_kafka_field_names() -> None:
    config = get_mutant("revoke-without-waiting").mutated_config()
    result = bfs(config)
    assert result.path is not None
    lines = list(path_lines(result.path))
    text = "\n".join(lines)
    for field in (
        "MemberId",
        "MemberEpoch",
        "SubscribedTopicNames",
        "TopicPartitions",
        "Assignment",
        "ErrorCode",
        "HeartbeatIntervalMs",
    ):
        assert f'"{field}"' in text
    assert read_path(config, lines).actions == result.path.actions


def test_walk_counterexample_round_trip() -> None:
    config = get_mutant("adopt-negative-epoch").mutated_config()
    result = walk(config, seed=0, walks=300, max_steps=40)
    assert result.path is not None
    assert read_path(config, path_lines(result.path)).actions == result.path.actions


def _good_lines() -> list[str]:
    """A valid trace of TINY: the first 30 steps taking the first enabled action."""
    from model import system
    from model.path import Path

    config = PRESETS["TINY"]
    state, actions = system.initial(config), []
    for _ in range(30):
        enabled = system.enabled(state, config)
        if not enabled:
            break
        actions.append(enabled[0])
        state = system.step(state, enabled[0], config)
    return list(path_lines(Path(config, tuple(actions))))


GOOD = _good_lines()


@pytest.mark.parametrize(
    ("lines", "where", "needle"),
    [
        ([], "1:1", "empty trace"),
        (["{"], "1:", "not JSON"),
        (["[1]"], "1:1", "JSON object"),
        ([json.dumps({"format": "other", "version": 1})], "1:", "not a groupcheck-trace"),
        (
            [json.dumps({"format": FORMAT, "version": 9, "protocol": "consumer", "topics": {}})],
            "1:",
            "unsupported version",
        ),
        (
            [
                json.dumps(
                    {
                        "format": FORMAT,
                        "version": 1,
                        "protocol": "consumer",
                        "topics": {"foo": 2},
                        "extra": 1,
                    }
                )
            ],
            "1:",
            "unknown field 'extra'",
        ),
    ],
)
def test_malformed_headers(lines: list[str], where: str, needle: str) -> None:
    with pytest.raises(TraceError) as info:
        read_path(PRESETS["TINY"], lines)
    assert str(info.value).startswith(where)
    assert needle in str(info.value)


def _header() -> str:
    return json.dumps(
        {
            "format": FORMAT,
            "version": 1,
            "protocol": "consumer",
            "topics": {"foo": 2},
            "config": "TINY",
        }
    )


@pytest.mark.parametrize(
    ("event", "needle"),
    [
        (
            {"seq": 1, "ts": None, "source": "x", "kind": "Teleport", "payload": {}},
            "unknown event kind",
        ),
        (
            {"seq": "1", "ts": None, "source": "x", "kind": "SendHeartbeat", "payload": {}},
            "'seq' must be int",
        ),
        (
            {"seq": 10**20, "ts": None, "source": "x", "kind": "SendHeartbeat", "payload": {}},
            "'seq' out of the int64 range",
        ),
        (
            {
                "seq": 1,
                "ts": None,
                "source": "x",
                "kind": "SendHeartbeat",
                "payload": {"client": 3},
            },
            "'client' must be str",
        ),
        (
            {
                "seq": 1,
                "ts": None,
                "source": "x",
                "kind": "SendHeartbeat",
                "payload": {"client": "Z"},
            },
            "not enabled",
        ),
        (
            {
                "seq": 1,
                "ts": None,
                "source": "x",
                "kind": "SendHeartbeat",
                "payload": {"client": "A", "bogus": 1},
            },
            "unknown field 'bogus'",
        ),
    ],
)
def test_malformed_events_name_line_and_reason(event: dict[str, object], needle: str) -> None:
    with pytest.raises(TraceError) as info:
        read_path(PRESETS["TINY"], [_header(), json.dumps(event)])
    assert str(info.value).startswith("2:")
    assert needle in str(info.value)
    assert "\n" not in str(info.value)


@given(st.data())
def test_fuzzed_lines_give_trace_errors_only(data: st.DataObject) -> None:
    """Truncated lines, wrong types, unknown kinds, huge numbers, odd characters: always a
    TraceError, never another exception."""
    base = list(GOOD) if len(GOOD) > 1 else [_header()]
    i = data.draw(st.integers(0, len(base) - 1))
    mutation = data.draw(st.sampled_from(["truncate", "junk", "retype", "number"]))
    line = base[i]
    if mutation == "truncate":
        line = line[: data.draw(st.integers(0, max(0, len(line) - 1)))]
    elif mutation == "junk":
        line = data.draw(st.text(max_size=80))
    elif mutation == "retype":
        obj = json.loads(line)
        key = data.draw(st.sampled_from(sorted(obj)))
        obj[key] = data.draw(
            st.one_of(
                st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2)
            )
        )
        line = json.dumps(obj)
    else:
        line = line.replace("0", str(data.draw(st.integers(-(2**70), 2**70))), 1)
    lines = [*base[:i], line, *base[i + 1 :]]
    error = _trace_error(lines)
    # A mutation may leave a valid trace; otherwise the error is "line:column: reason".
    assert error is None or error.split(":")[0].isdigit()


def _trace_error(lines: list[str]) -> str | None:
    """The TraceError message reading ``lines`` raises (any other exception propagates)."""
    try:
        read_path(PRESETS["TINY"], lines)
    except TraceError as e:
        return str(e)
    return None


def _schema_validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _codec_error(line: str) -> str | None:
    """The TraceError the codec raises for ``line`` as the header (``"{"…``) or as an event."""
    obj = json.loads(line)
    try:
        if "format" in obj:
            parse_header(line)
        else:
            decode_action(parse_event(line, 2), line, 2)
    except TraceError as e:
        return str(e)
    return None


def test_model_traces_match_the_json_schema() -> None:
    """docs/trace-format.schema.json describes what the codec writes."""
    validator = _schema_validator()
    config = get_mutant("client-acks-before-revoking").mutated_config()
    result = bfs(config)
    assert result.path is not None
    for line in [*GOOD, *path_lines(result.path)]:
        errors = [e.message for e in validator.iter_errors(json.loads(line))]
        assert not errors, (line, errors)
    assert not validator.is_valid(
        {"format": FORMAT, "version": 4, "protocol": "consumer", "topics": {}}
    )


def _message_event(**body: object) -> str:
    heartbeat = {"MemberId": "A", "MemberEpoch": 0, "TopicPartitions": [], **body}
    payload = {
        "client": "A",
        "incarnation": 0,
        "connection": 0,
        "direction": "request",
        "api": "ConsumerGroupHeartbeat",
        "body": heartbeat,
    }
    return json.dumps({"seq": 1, "source": "A", "kind": "DeliverMessage", "payload": payload})


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (_message_event(MemberEpoch=2**31), "int32 maximum"),
        (_message_event(MemberEpoch=-(2**31) - 1), "int32 minimum"),
        (
            json.dumps(
                {"seq": 2**63, "source": "A", "kind": "Subscribe", "payload": {"client": "A"}}
            ),
            "int64 maximum",
        ),
        (
            _message_event(TopicPartitions=[{"TopicId": "foo", "Partitions": [2**31]}]),
            "partition index maximum",
        ),
        (
            json.dumps(
                {"format": FORMAT, "version": 1, "protocol": "consumer", "topics": {"foo": 2**31}}
            ),
            "partition count maximum (schema-valued additionalProperties)",
        ),
        (
            json.dumps(
                {"format": FORMAT, "version": 1, "protocol": "consumer", "topics": {"foo": "two"}}
            ),
            "extra property of the wrong type under a schema-valued additionalProperties",
        ),
        (_message_event(Generation=1), "unknown body field"),
    ],
)
def test_schema_and_codec_reject_the_same_values(line: str, why: str) -> None:
    """What the codec refuses, the schema refuses too: values over a ``maximum`` and
    properties that break a schema-valued ``additionalProperties`` included."""
    assert not _schema_validator().is_valid(json.loads(line)), why
    assert _codec_error(line) is not None, why


def test_schema_and_codec_accept_the_extremes() -> None:
    """The largest values both accept (the boundary of the ranges above)."""
    line = _message_event(
        MemberEpoch=2**31 - 1, TopicPartitions=[{"TopicId": "foo", "Partitions": [2**31 - 1]}]
    )
    assert _schema_validator().is_valid(json.loads(line))
    assert _codec_error(line) is None
    header = json.dumps(
        {"format": FORMAT, "version": 1, "protocol": "consumer", "topics": {"foo": 2**31 - 1}}
    )
    assert _schema_validator().is_valid(json.loads(header))
    assert _codec_error(header) is None


@pytest.mark.parametrize(
    ("line", "column", "reason"),
    [
        # "kind" twice: the second one, where it stands (it used to win silently).
        (
            '{"seq": 1, "ts": null, "source": "x", "kind": "Crash", "kind": "SendHeartbeat", '
            '"payload": {"client": "A"}}',
            56,
            "key 'kind' given twice",
        ),
        (
            '{"seq": 1, "ts": null, "source": "x", "kind": "SendHeartbeat", '
            '"payload": {"client": "A", "client": "B"}}',
            91,
            "key 'client' given twice",
        ),
        (
            '{"seq": 1' + "7" * 5000 + ', "ts": null, "source": "x", "kind": "SendHeartbeat", '
            '"payload": {"client": "A"}}',
            9,
            "number with more than 4300 digits",
        ),
        (
            '{"seq": 1, "ts": null, "source": "x", "kind": "SendHeartbeat", '
            '"payload": {"client": "A\\ud800"}}',
            88,
            "lone surrogate escape",
        ),
        (
            '{"seq": NaN, "ts": null, "source": "x", "kind": "SendHeartbeat", "payload": {}}',
            9,
            "NaN is not JSON",
        ),
    ],
)
def test_strict_json_errors_at_their_column(line: str, column: int, reason: str) -> None:
    """Every event line is read with ``model.trace.strict_json``: what ``json`` accepts
    silently or reports without a position is a TraceError at the offending column."""
    with pytest.raises(TraceError) as info:
        read_path(PRESETS["TINY"], [_header(), line])
    assert (info.value.line, info.value.column, info.value.reason) == (2, column, reason)


def test_error_messages_stay_short_whatever_the_input() -> None:
    """A field name or a config name of a megabyte is cut in the message that names it."""
    huge = "k" * 1_000_000
    event = {"seq": 1, "ts": None, "source": "x", "kind": "SendHeartbeat", "payload": {}}
    for obj in ({**event, huge: 1}, {**event, "payload": {"client": "A", huge: 1}}):
        with pytest.raises(TraceError) as info:
            read_path(PRESETS["TINY"], [_header(), json.dumps(obj)])
        assert "unknown field 'kkkk" in str(info.value)
        assert len(str(info.value)) < 200
