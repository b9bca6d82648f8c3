"""``groupcheck validate --mode coordinator``: each captured request replayed through the
model's coordinator, each response compared field by field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tracelines import progress_walk

from groupcheck.cli import main
from groupcheck.mutants import get_mutant
from groupcheck.validate.coordinator_mode import _Fallback, _Front, _stream, validate_coordinator
from groupcheck.validate.report import Report
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


def _streamed(steps: int, window: int) -> tuple[Report, _Front]:
    """A SMALL progress walk of ``steps`` events replayed by the streaming reader."""
    lines = list(path_lines(progress_walk(PRESETS["SMALL"], 3, steps)))
    fronts: list[_Front] = []
    report = _stream("walk", iter(lines), None, "auto", False, None, window, fronts)
    assert report is not None
    whole = validate_coordinator("walk", lines, _whole=True)
    assert report.to_json() == whole.to_json()  # the same verdict, notes and all
    return report, fronts[0]


def test_a_trace_without_timestamps_is_replayed_in_bounded_memory() -> None:
    """Issue 40: coordinator mode holds no more of a trace twice as long. The streaming
    reader holds at most its window of decoded events, and what the replay retains at the
    end (requests awaiting a response, targets, remembered answers …) stays as small as
    the group, whatever the trace's length; the report is the one of the whole replay."""
    short, short_front = _streamed(1500, 64)
    long, long_front = _streamed(3000, 64)
    assert short.result == long.result == "ok"
    assert (short.events, long.events) == (1500, 3000)
    assert short_front.peak == long_front.peak == 65  # the window and the event handed out
    members = len(PRESETS["SMALL"].clients)
    for kind, held in long_front.retained.items():
        assert held <= max(short_front.retained[kind], 2 * members), (kind, held)
    assert long_front.retained["target_entries"] == short_front.retained["target_entries"]
    assert long_front.retained["memo"] == short_front.retained["memo"]


def test_a_target_shown_beyond_the_window_makes_the_replay_inconclusive() -> None:
    """The streaming replay reads the capture's targets a window ahead: a target it took
    before the capture showed all of it is no verdict, never a false ok or divergence."""
    lines = list(path_lines(progress_walk(PRESETS["SMALL"], 3, 400)))
    fronts: list[_Front] = []
    report = _stream("walk", iter(lines), None, "auto", False, None, 1, fronts)
    assert report is not None
    assert fronts[0].built.stale is not None
    assert report.result == "inconclusive"
    assert any("shows more of a target" in r for r in report.reasons)


def _timed(lines: list[str], every: int) -> list[str]:
    """``lines`` with a timestamp on every event: one millisecond per ``every`` events."""
    out = [lines[0]]
    for i, line in enumerate(lines[1:]):
        event = json.loads(line)
        event["ts"] = 1_000 + i // every
        out.append(json.dumps(event))
    return out


def _streamed_timed(steps: int, window: int, every: int = 1) -> tuple[Report, _Front]:
    """A SMALL progress walk of ``steps`` events, with timestamps, replayed by the
    streaming reader; its report is the whole replay's."""
    lines = _timed(list(path_lines(progress_walk(PRESETS["SMALL"], 3, steps))), every)
    fronts: list[_Front] = []
    report = _stream("walk", iter(lines), None, "auto", False, None, window, fronts)
    assert report is not None
    whole = validate_coordinator("walk", lines, _whole=True)
    assert report.to_json() == whole.to_json()  # the same verdict, notes and all
    return report, fronts[0]


def test_a_trace_with_timestamps_is_replayed_in_bounded_memory() -> None:
    """A timed trace is streamed too, cut at its quiet points (no request awaiting its
    response, the next event later than every earlier one), which no reordering of the
    whole replay crosses: the reader holds its window and the segments not handed out
    yet, not the trace; the report is the one of the whole replay."""
    short, short_front = _streamed_timed(1000, 64)
    long, long_front = _streamed_timed(2000, 64)
    assert short.result == long.result == "ok"
    assert (short.events, long.events) == (1000, 2000)
    assert short_front.timed
    assert long_front.timed
    # the window read ahead of the replay, and the segments read ahead of the window
    assert long_front.peak <= 3 * 64, long_front.peak
    assert short_front.peak <= 3 * 64, short_front.peak
    members = len(PRESETS["SMALL"].clients)
    for kind, held in long_front.retained.items():
        assert held <= max(short_front.retained[kind], 2 * members), (kind, held)
    assert long_front.retained["segments"] == 0  # every segment handed out and dropped


def test_a_timed_trace_the_stream_cannot_order_is_replayed_whole() -> None:
    """Events of one millisecond whose order the whole replay changes across what would
    be a quiet point (a join sorted after its own response) are not streamed: the
    replay of the whole trace gives the verdict."""
    lines = _timed(list(path_lines(progress_walk(PRESETS["SMALL"], 3, 400))), 3)
    with pytest.raises(_Fallback):
        _stream("walk", iter(lines), None, "auto", False, None, 16, [])
    streamed = validate_coordinator("walk", iter(lines))
    assert streamed.to_json() == validate_coordinator("walk", lines, _whole=True).to_json()


def test_a_divergence_in_a_streamed_timed_trace_is_the_whole_replays() -> None:
    """A changed response late in a timed trace, at an exchange no other overlaps: the
    streaming replay finds the divergence the whole replay finds, report for report."""
    lines = _timed(list(path_lines(progress_walk(PRESETS["SMALL"], 3, 600))), 1)
    at = max(i for i, line in enumerate(lines) if '"direction": "response"' in line)
    event = json.loads(lines[at])
    event["payload"]["body"]["HeartbeatIntervalMs"] += 1
    lines[at] = json.dumps(event)
    fronts: list[_Front] = []
    report = _stream("walk", iter(lines), None, "auto", False, None, 64, fronts)
    assert report is not None
    assert fronts[0].timed
    assert fronts[0].peak < 600  # streamed, not read whole
    assert report.result == "violation"
    assert [f.line for f in report.violations] == [at + 1]
    assert report.to_json() == validate_coordinator("walk", lines, _whole=True).to_json()
