"""The timed simulation (groupcheck/timed): every event a model action at a simulated time."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.timed.engine import TimedRun, Timing
from groupcheck.timed.scenarios import Kip1263, churn, scale_up
from groupcheck.validate.conformance import validate_conformance
from model.actions import SendHeartbeat
from model.presets import preset

HB = 5000


def test_a_scaling_group_converges_one_heartbeat_interval_after_the_last_join() -> None:
    """KIP-1263's table without batching: the last member gains the revoked partitions at
    its next heartbeat, one interval after it joined."""
    result = scale_up(members=10, kip1263=Kip1263(), seed=1, heartbeat_interval_ms=HB)
    assert result.rebalance_ms is not None
    assert HB <= result.rebalance_ms <= HB + 100


def test_a_single_member_is_assigned_at_once() -> None:
    result = scale_up(members=1, kip1263=Kip1263(), seed=1, heartbeat_interval_ms=HB)
    assert result.rebalance_ms is not None
    assert result.rebalance_ms < 100


def test_the_same_seed_gives_the_same_run_and_another_seed_other_phases() -> None:
    a = scale_up(members=6, kip1263=Kip1263(), seed=3).run
    b = scale_up(members=6, kip1263=Kip1263(), seed=3).run
    c = scale_up(members=6, kip1263=Kip1263(), seed=4).run
    assert (a.actions, a.times) == (b.actions, b.times)
    assert a.phases != c.phases


def test_clients_heartbeat_every_interval_when_nothing_happens() -> None:
    config = preset("TINY")
    run = TimedRun(config, Timing(), seed=2)
    run.run(until_ms=6 * config.heartbeat_interval_ms)
    sends = [t for t, a in zip(run.times, run.actions, strict=True) if isinstance(a, SendHeartbeat)]
    late = [t for t in sends if t > 2 * config.heartbeat_interval_ms]
    gaps = {round(b - a, 6) for a, b in itertools.pairwise(late)}
    assert gaps == {float(config.heartbeat_interval_ms)}


def test_a_timed_run_is_a_model_trace_that_replays(tmp_path: Path) -> None:
    out = tmp_path / "timed.ndjson"
    argv = ["simulate", "--timed", "--preset", "SMALL", "--seed", "1", "--steps", "80"]
    assert main([*argv, "--trace", str(out), "--json"]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 81
    stamps = [int(line.split('"ts": ')[1].split("}")[0].split(",")[0]) for line in lines[1:]]
    assert stamps == sorted(stamps)
    assert stamps[-1] > 0
    report = validate_conformance(str(out), lines)
    assert report.result == "ok", report


def test_trace_never_replaces_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mine.ndjson"
    out.write_text("keep\n", encoding="utf-8")
    argv = ["simulate", "--timed", "--preset", "TINY", "--seed", "1", "--trace", str(out)]
    assert main(argv) == 2
    assert out.read_text(encoding="utf-8") == "keep\n"
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["simulate", "--preset", "TINY", "--seed", "1", "--trace", str(out)]) == 2


def test_an_assignor_run_per_heartbeat_saturates_the_coordinator_thread() -> None:
    """KIP-1263's motivation: 20 ms runs demanded 200 times a second cannot be served."""
    slow = churn(members=20, kip1263=Kip1263(), seed=1, heartbeat_interval_ms=100, window_ms=2000)
    assert slow.coordinator_utilisation > 0.95
    assert slow.latency_max_ms > 100
    fast = churn(
        members=20,
        kip1263=Kip1263(),
        seed=1,
        heartbeat_interval_ms=100,
        window_ms=2000,
        timing=Timing(assignor_ms=0.1),
    )
    assert fast.coordinator_utilisation < 0.2
    assert fast.latency_max_ms < 10
