"""The timed simulation (groupcheck/timed): every event a model action at a simulated time."""

from __future__ import annotations

import itertools
import json
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


def test_batching_makes_a_large_group_take_one_more_heartbeat_interval() -> None:
    """KIP-1263 Impact on Rebalance Times (batching): members that heartbeat before the
    batched target is computed learn of it one interval later, and the last member gains
    the rest of its partitions at its second heartbeat."""
    for seed in (1, 2):
        result = scale_up(members=10, kip1263=Kip1263(1000, False), seed=seed)
        assert result.rebalance_ms is not None
        assert 2 * HB <= result.rebalance_ms <= 2 * HB + 100


def test_batching_leaves_small_groups_alone() -> None:
    for members in (1, 2):
        plain = scale_up(members=members, kip1263=Kip1263(), seed=1).rebalance_ms
        batched = scale_up(members=members, kip1263=Kip1263(1000, False), seed=1).rebalance_ms
        assert plain is not None
        assert batched is not None
        # the same heartbeats; at most one inline assignor run lands elsewhere
        assert abs(batched - plain) <= Timing().assignor_ms + 1


def test_offload_leaves_a_large_group_rebalance_time_unchanged() -> None:
    """KIP-1263 Impact on Rebalance Times (offload), with instant runs as the KIP assumes."""
    plain = scale_up(members=10, kip1263=Kip1263(), seed=3, timing=Timing(assignor_ms=0))
    offloaded = scale_up(members=10, kip1263=Kip1263(0, True), seed=3, timing=Timing(assignor_ms=0))
    assert plain.rebalance_ms is not None
    assert offloaded.rebalance_ms is not None
    assert abs(offloaded.rebalance_ms - plain.rebalance_ms) < 10


def test_a_scale_up_with_batching_and_offload_replays_as_a_model_trace() -> None:
    from model.path import Path as ModelPath
    from model.trace.codec import path_lines

    run = scale_up(members=4, kip1263=Kip1263(1000, True), seed=1).run
    kinds = {a.kind for a in run.actions}
    assert {"CompleteAssignorRun", "AssignmentIntervalElapses"} <= kinds
    lines = list(
        path_lines(
            ModelPath(run.config, tuple(run.actions)), timestamps=[round(t) for t in run.times]
        )
    )
    assert validate_conformance("scale-up", lines).result == "ok"


def test_offload_moves_the_assignor_off_the_coordinator_thread() -> None:
    offloaded = churn(
        members=20, kip1263=Kip1263(0, True), seed=1, heartbeat_interval_ms=100, window_ms=2000
    )
    assert offloaded.coordinator_utilisation < 0.1
    assert offloaded.executor_utilisation > 0.3
    assert offloaded.latency_max_ms < 10


def test_rebalance_times_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rt"
    argv = ["timed", "rebalance-times", "--members", "3", "--seeds", "1", "--quiet"]
    assert main([*argv, "--json", "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "ok"
    assert [row["setting"] for row in doc["rows"]][1].startswith("assignment.interval.ms = 1,000")
    assert set(doc["rows"][0]["sizes"]) == {"1", "2", "3"}
    assert sorted(p.name for p in out.iterdir()) == [
        ".groupcheck",
        "report.html",
        "results.json",
        "table.md",
    ]
    assert "<svg" in (out / "report.html").read_text(encoding="utf-8")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep", encoding="utf-8")
    assert main([*argv, "--out", str(mine)]) == 2
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "keep"


def test_a_rendered_timed_trace_shows_time_and_offloaded_runs(tmp_path: Path) -> None:
    from groupcheck.render import build

    out = tmp_path / "offload.ndjson"
    argv = ["simulate", "--timed", "--preset", "OFFLOAD", "--seed", "1", "--steps", "12"]
    assert main([*argv, "--trace", str(out), "--json"]) == 0
    view, _, _ = build(str(out), out.read_text(encoding="utf-8").splitlines())
    labels = [row.label for row in view.rows]
    assert any("assignor run started" in label for label in labels)
    assert any("assignor run of group epoch" in label for label in labels)
    assert view.rows[0].elapsed_ms == 0
    assert max(row.elapsed_ms or 0 for row in view.rows) >= 5000


def test_runs_on_one_coordinator_step_as_one_run_does_alone() -> None:
    """``run_together`` with a single run takes the very actions at the very times
    ``TimedRun.run`` takes (the multi-group scheduler adds nothing of its own)."""
    from groupcheck.timed.engine import run_together
    from groupcheck.timed.scenarios import _flip, _form_group, group_config

    config = group_config(
        members=4, partitions=4, heartbeat_interval_ms=250, kip1263=Kip1263(0, True), churn=True
    )
    alone, together = TimedRun(config, Timing(), 7), TimedRun(config, Timing(), 7)
    for r in (alone, together):
        _form_group(r, [c.name for c in config.clients])
    alone.run(alone.now + 1000, before=_flip)
    run_together([together], together.now + 1000, before=_flip)
    assert len(alone.actions) > 40
    assert (alone.actions, alone.times) == (together.actions, together.times)


def test_groups_sharing_the_executor_queue_their_assignor_runs() -> None:
    """KIP-1263's executor belongs to the coordinator: 6 churning groups with offload on
    one executor thread ask for more runs than it can do (20 ms each: at most 50 a second)
    and wait for it; four threads run more of them and wait less."""

    def load(threads: int, groups: int) -> object:
        return churn(
            members=4,
            kip1263=Kip1263(0, True),
            seed=1,
            timing=Timing(executor_threads=threads),
            heartbeat_interval_ms=250,
            window_ms=1000.0,
            groups=groups,
        )

    one = load(1, 6)
    four = load(4, 6)
    alone = load(1, 1)
    assert one.groups == 6  # type: ignore[attr-defined]
    assert one.assignor_runs_per_second <= 50 + 1  # type: ignore[attr-defined]
    assert one.executor_utilisation > 0.9  # type: ignore[attr-defined]
    assert four.assignor_runs_per_second > one.assignor_runs_per_second  # type: ignore[attr-defined]
    assert one.assignor_wait_mean_ms > 4 * four.assignor_wait_mean_ms  # type: ignore[attr-defined]
    assert alone.assignor_wait_mean_ms == 0  # type: ignore[attr-defined]
    # heartbeats are answered by the coordinator thread, not the executor
    assert one.latency_max_ms < 5  # type: ignore[attr-defined]


def test_load_groups_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["timed", "load", "--groups", "101"]) == 2
    assert "at most 100 groups" in capsys.readouterr().err
    code = main(
        [
            "timed",
            "load",
            "--members",
            "3",
            "--groups",
            "2",
            "--threads",
            "1",
            "--window-ms",
            "500",
            "--json",
            "--quiet",
        ]
    )
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["groups"], doc["executor_threads"]) == (2, 1)
    assert all(r["groups"] == 2 for r in doc["rows"])
    assert all("assignor_wait_p99_ms" in r for r in doc["rows"])
