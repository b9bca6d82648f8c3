"""The timed simulation (``groupcheck simulate --timed``): a seeded discrete-event run whose
events are model actions with timestamps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.timed import TimedSettings, scale_up, simulate_timed
from model.actions import AssignmentIntervalElapses, CompleteAssignorRun, DeliverMessage
from model.presets import CLASSIC_EAGER, OFFLOAD
from model.records import ConsumerGroupHeartbeatRequest
from model.status import ConfigError

SETTINGS = TimedSettings(join_at_ms=10_000, duration_ms=40_000)


def test_the_same_seed_gives_the_same_run_and_another_seed_other_phases() -> None:
    config = scale_up(3, 6)
    one = simulate_timed(config, 7, SETTINGS)
    again = simulate_timed(config, 7, SETTINGS)
    other = simulate_timed(config, 8, SETTINGS)
    assert one.events == again.events
    assert [e.time_ms for e in one.events] != [e.time_ms for e in other.events]
    times = [e.time_ms for e in one.events]
    assert times == sorted(times)


@pytest.mark.parametrize(
    "options",
    [{}, {"assignment_interval_ms": 1000}, {"assignor_offload": True}],
    ids=["inline", "batching", "offload"],
)
def test_a_group_scaling_up_converges_within_two_heartbeat_intervals(
    options: dict[str, object],
) -> None:
    config = scale_up(4, 8, **options)  # type: ignore[arg-type]
    run = simulate_timed(config, 1, SETTINGS)
    assert run.joined_ms == SETTINGS.join_at_ms
    assert run.rebalance_ms is not None
    assert 0 < run.rebalance_ms <= 2 * config.heartbeat_interval_ms


def test_the_assignor_holds_the_coordinator_thread_only_when_it_runs_inline() -> None:
    inline = simulate_timed(scale_up(3, 6), 1, SETTINGS)
    offload = simulate_timed(scale_up(3, 6, assignor_offload=True), 1, SETTINGS)
    assert inline.coordinator_busy_ms > 0
    assert inline.coordinator_busy_ms % SETTINGS.assignor_ms == 0
    assert offload.coordinator_busy_ms == 0


def test_an_offloaded_run_completes_its_duration_after_the_heartbeat_that_started_it() -> None:
    settings = TimedSettings(assignor_ms=300, join_at_ms=10_000, duration_ms=20_000)
    run = simulate_timed(OFFLOAD, 3, settings)
    completions = [e for e in run.events if isinstance(e.action, CompleteAssignorRun)]
    assert completions
    starts = [
        e.time_ms
        for e in run.events
        if isinstance(e.action, DeliverMessage)
        and isinstance(e.action.message.body, ConsumerGroupHeartbeatRequest)
    ]
    for done in completions:
        assert done.time_ms - settings.assignor_ms in starts


def test_the_assignment_interval_passes_its_length_after_a_computation() -> None:
    config = scale_up(3, 6, assignment_interval_ms=1000)
    run = simulate_timed(config, 2, SETTINGS)
    elapsed = [e.time_ms for e in run.events if isinstance(e.action, AssignmentIntervalElapses)]
    assert elapsed
    times = {e.time_ms for e in run.events}
    assert all(t - 1000 in times for t in elapsed)


def test_a_timed_trace_carries_timestamps_and_passes_conformance(tmp_path: Path) -> None:
    file = tmp_path / "timed.ndjson"
    code = main(["simulate", "--preset", "OFFLOAD", "--seed", "1", "--timed", "--trace", str(file)])
    assert code == 0
    lines = file.read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines[1:]]
    assert events
    assert all(isinstance(e["ts"], int) for e in events)
    assert [e["ts"] for e in events] == sorted(e["ts"] for e in events)
    assert "CompleteAssignorRun" in {e["kind"] for e in events}
    from jsonschema import Draft202012Validator

    schema_file = Path(__file__).resolve().parents[2] / "docs" / "trace-format.schema.json"
    validator = Draft202012Validator(json.loads(schema_file.read_text(encoding="utf-8")))
    for line in lines:
        assert not [e.message for e in validator.iter_errors(json.loads(line))], line
    assert main(["validate", "--mode", "conformance", str(file)]) == 0
    # An existing file is never replaced.
    assert (
        main(["simulate", "--preset", "OFFLOAD", "--seed", "1", "--timed", "--trace", str(file)])
        == 2
    )


def test_timed_json_reports_the_rebalance_time(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--preset", "BATCHING", "--seed", "1", "--timed", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["joined_ms"] == 10_000
    assert doc["rebalance_ms"] is not None
    assert doc["rebalance_ms"] > 0
    assert doc["timeline"][0]["ts"] <= doc["timeline"][-1]["ts"]


def test_impossible_settings_and_classic_configs_are_refused() -> None:
    with pytest.raises(ConfigError, match="executor-threads"):
        simulate_timed(OFFLOAD, 1, TimedSettings(executor_threads=0))
    with pytest.raises(ConfigError, match="consumer protocol only"):
        simulate_timed(CLASSIC_EAGER, 1, SETTINGS)


def test_the_rebalance_table_compares_the_four_modes() -> None:
    from groupcheck.timed import MODES, rebalance_table

    rows = rebalance_table(6, 2, 300, seeds=3)
    assert [r[0] for r in rows] == [label for label, _ in MODES]
    by_mode = {label: (median, top, busy, missed) for label, median, top, busy, missed in rows}
    assert all(missed == 0 for _, _, _, missed in by_mode.values())
    assert all(0 < median <= top for median, top, _, _ in by_mode.values())
    assert by_mode["offload"][2] == by_mode["batching + offload"][2] == 0
    assert by_mode["batching, 1000 ms"][2] <= by_mode["inline, interval 0"][2]


def test_an_inline_assignor_delays_heartbeats_and_an_offloaded_one_does_not() -> None:
    settings = TimedSettings(assignor_ms=400, latency_ms=1, join_at_ms=10_000)
    inline = simulate_timed(scale_up(3, 6), 1, settings)
    offload = simulate_timed(scale_up(3, 6, assignor_offload=True), 1, settings)
    assert max(inline.heartbeat_latencies_ms) >= settings.assignor_ms + 2
    assert max(offload.heartbeat_latencies_ms) == 2  # one latency each way


def test_a_group_rebalancing_on_every_heartbeat_saturates_only_an_inline_assignor() -> None:
    from groupcheck.timed import coordinator_load_table

    rows = {r[0]: r[1:] for r in coordinator_load_table(members=6, duration_ms=1500)}
    answered, share, _, longest = rows["inline, interval 0"]
    assert share > 0.9  # 120 heartbeats/s x 20 ms of assignor each: more than the thread has
    assert longest > 10 * 2  # heartbeats queue behind the assignor
    assert rows["batching, 1000 ms"][1] < 0.1
    assert rows["offload"][1] == 0.0
    assert rows["offload"][3] == 2  # one latency each way
    assert answered < rows["offload"][0]


def test_the_load_table_command_prints_the_tutorial_rows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from groupcheck.timed import main as timed_main

    assert timed_main(["load"]) == 0
    printed = capsys.readouterr().out.splitlines()
    tutorial = (Path(__file__).resolve().parents[2] / "docs" / "tutorial.md").read_text(
        encoding="utf-8"
    )
    rows = [line for line in printed if line.startswith("| ") and "---" not in line][1:]
    assert len(rows) == 4
    for row in rows:
        assert row in tutorial, row
