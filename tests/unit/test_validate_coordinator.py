"""``groupcheck validate --mode coordinator``: each captured request replayed through the
model's coordinator, each response compared field by field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tracelines import progress_walk

from groupcheck.cli import main
from groupcheck.mutants import get_mutant
from groupcheck.validate.coordinator_mode import validate_coordinator
from groupcheck.validate.timing import TimingOptions
from model.presets import PRESETS
from model.trace import path_lines


@pytest.mark.parametrize("name", ["TINY", "SMALL", "LOSSY", "STATIC", "TIMERS"])
def test_the_models_own_traces_replay_without_divergence(name: str) -> None:
    """Targets taken from the responses, expiries from the trace's timer events: the
    model's coordinator answers every request as the trace shows (or the replay says why
    it cannot tell), never a false divergence."""
    config = PRESETS[name]
    ok = 0
    for seed in range(40):
        lines = list(path_lines(progress_walk(config, seed, 80, perturb=True)))
        report = validate_coordinator(f"{name}-{seed}", lines, epoch_layout=config.epoch_layout)
        assert report.error is None
        assert report.violations == [], (seed, report.violations[0].message)
        ok += report.result == "ok"
    assert ok >= 30


def _tampered(field: str, value: object) -> tuple[list[str], int]:
    """A TINY trace with the first successful heartbeat response's ``field`` changed."""
    lines = list(path_lines(progress_walk(PRESETS["TINY"], 1, 80)))
    for i, line in enumerate(lines[1:], 1):
        e = json.loads(line)
        p = e["payload"]
        if (
            e["kind"] == "DeliverMessage"
            and p["api"] == "ConsumerGroupHeartbeat"
            and p["direction"] == "response"
            and p["body"]["ErrorCode"] == 0
        ):
            p["body"][field] = value
            lines[i] = json.dumps(e)
            return lines, i + 1
    raise AssertionError("no response")


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        ("MemberEpoch", 7, "CurrentAssignmentBuilder"),
        ("HeartbeatIntervalMs", 1234, "group.consumer.heartbeat.interval.ms"),
        ("ErrorCode", 25, "UNKNOWN_MEMBER_ID"),
    ],
)
def test_a_changed_response_is_the_first_divergence(field: str, value: object, rule: str) -> None:
    lines, line = _tampered(field, value)
    report = validate_coordinator("t", lines, epoch_layout="kip-848")
    (finding,) = report.violations
    assert (finding.line, finding.property) == (line, "Coordinator.Divergence")
    assert f"differs in {field}" in finding.message
    assert "the model's coordinator answers ErrorCode NONE (0)" in finding.message
    assert rule in finding.message
    assert any(f"the first divergence at line {line}" in n for n in report.notes)
    assert any(n.endswith("replay stopped") for n in report.notes)
    assert not any("after the first divergence" in n for n in report.notes)


def test_all_divergences_goes_on_and_lists_the_later_ones_as_notes() -> None:
    lines, first = _tampered("HeartbeatIntervalMs", 1234)
    # and every later successful response too
    for i in range(first, len(lines)):
        e = json.loads(lines[i])
        p = e["payload"]
        if (
            e["kind"] == "DeliverMessage"
            and p.get("direction") == "response"
            and p["api"] == "ConsumerGroupHeartbeat"
            and p["body"]["ErrorCode"] == 0
        ):
            p["body"]["HeartbeatIntervalMs"] = 1234
            lines[i] = json.dumps(e)
    report = validate_coordinator("t", lines, epoch_layout="kip-848", all_divergences=True)
    (finding,) = report.violations
    assert finding.line == first
    later = [n for n in report.notes if "after the first divergence" in n]
    assert len(later) >= 2
    assert all("HeartbeatIntervalMs" in n for n in later)


def test_a_mutant_coordinators_trace_diverges_from_the_reference() -> None:
    """revoke-without-waiting hands partitions out before they are released: replayed
    through the reference coordinator, its trace shows a response Kafka would not send."""
    mutant = get_mutant("revoke-without-waiting")
    found = 0
    for seed in range(40):
        path = progress_walk(mutant.mutated_config(), seed, 120, perturb=True)
        lines = list(path_lines(path, mutant.config.name))
        report = validate_coordinator("t", lines, epoch_layout="kip-848")
        assert report.error is None
        found += bool(report.violations)
    assert found


def test_cli_mode_coordinator(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines, line = _tampered("MemberEpoch", 7)
    path = tmp_path / "t.ndjson"
    path.write_text("\n".join(lines) + "\n")
    assert main(["validate", "--mode", "coordinator", "--epoch-layout", "kip-848", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:{line}: Coordinator.Divergence: " in out
    assert main(["validate", "--mode", "coordinator", "--json", str(path)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["files"][0]["mode"] == "coordinator"
    classic = tmp_path / "c.ndjson"
    classic.write_text(
        json.dumps(
            {"format": "groupcheck-trace", "version": 2, "protocol": "classic", "topics": {}}
        )
        + "\n"
    )
    # A well-formed classic trace with nothing to compare is not bad input: no verdict.
    assert main(["validate", "--mode", "coordinator", str(classic)]) == 3
    assert "no classic or ConsumerGroupHeartbeat response to compare" in capsys.readouterr().out


def _capture_without(*keys: str, topics: dict[str, int] | None = None) -> list[str]:
    """A stored Kafka 4.4 capture whose header lacks ``keys`` (or has other ``topics``)."""
    path = Path(__file__).parents[1] / "kafka" / "captures" / "consumer-join-leave.ndjson"
    lines = path.read_text(encoding="utf-8").splitlines()
    header = {k: v for k, v in json.loads(lines[0]).items() if k not in keys}
    if topics is not None:
        header["topics"] = topics
    return [json.dumps(header), *lines[1:]]


@pytest.mark.parametrize(
    ("keys", "topics", "named"),
    [
        (("heartbeat_interval_ms",), None, "the heartbeat interval (the header's heartbeat_"),
        ((), {}, "the partition count of the subscribed topics 'foo' (line 3)"),
    ],
    ids=["heartbeat-interval", "topics"],
)
def test_a_capture_without_what_the_replay_needs_is_inconclusive(
    keys: tuple[str, ...],
    topics: dict[str, int] | None,
    named: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Not a divergence: the replay cannot start, and the reason names what is missing."""
    lines = _capture_without(*keys, topics=topics)
    report = validate_coordinator("t", lines)
    assert report.violations == []
    (reason,) = report.reasons
    assert reason.startswith("the replay needs what the trace does not give: ")
    assert named in reason
    assert report.result == "inconclusive"
    trace = tmp_path / "t.ndjson"
    trace.write_text("\n".join(lines) + "\n")
    assert main(["validate", "--mode", "coordinator", str(trace)]) == 3
    assert named in capsys.readouterr().out
    if keys:  # given as an option, the replay runs and agrees
        assert (
            validate_coordinator("t", lines, timing=TimingOptions(heartbeat_interval_ms=500)).result
            == "ok"
        )
