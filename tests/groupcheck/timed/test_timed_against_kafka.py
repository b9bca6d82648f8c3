"""The timed simulation beside Kafka 4.4 (docs/timed.md, "Against Kafka 4.4"): the
deferred target at the first heartbeat after the interval, session timers for a crash, and
``groupcheck kafka timing`` on small synthetic run directories (no broker)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from groupcheck.kafka import timing
from groupcheck.timed.engine import Scheduled, TimedRun, Timing
from groupcheck.timed.scenarios import Kip1263, crash, group_config, scale_up
from model import system
from model.actions import Crash, DeliverMessage, SessionTimeout, Subscribe
from model.records import ConsumerGroupHeartbeatRequest

HB = 500


def test_after_a_rest_longer_than_the_interval_only_the_last_join_is_deferred() -> None:
    """Kafka 4.4 (``canComputeNextTargetAssignment``): member N-1's join, an interval after
    the formed group's last computation, computes a target at once; member N's, 200 ms
    later, waits for the first heartbeat after the interval since then, and the members
    learn the new target at their next heartbeats."""
    interval = 1000
    result = scale_up(
        members=10,
        kip1263=Kip1263(interval, False),
        seed=1,
        heartbeat_interval_ms=HB,
        partitions_per_member=10,
        rest_ms=interval + 3 * HB + 200,
    )
    assert result.rebalance_ms is not None
    assert interval - 200 <= result.rebalance_ms <= interval - 200 + 2 * HB + 100
    run = result.run
    last_join = max(t for t, a in zip(run.times, run.actions, strict=True) if a.kind == "Subscribe")
    elapsed = [
        t
        for t, a in zip(run.times, run.actions, strict=True)
        if a.kind == "AssignmentIntervalElapses" and t > last_join - 200
    ]
    # The interval opened by N-1's join elapses once, after N's join: N's target waited.
    assert len(elapsed) == 1
    assert elapsed[0] >= last_join + interval - 200


def test_the_deferred_computation_is_taken_by_a_heartbeat_not_by_the_interval() -> None:
    """The interval's end computes nothing (no timer, KAFKA-20291): the assignment epoch
    moves only when a heartbeat request reaches the coordinator."""
    result = scale_up(
        members=10,
        kip1263=Kip1263(1000, False),
        seed=2,
        heartbeat_interval_ms=HB,
        partitions_per_member=10,
        rest_ms=2700,
    )
    run = result.run
    state = system.initial(run.config)
    movers = []
    for action in run.actions:
        post = system.step(state, action, run.config)
        if post.group.assignment_epoch != state.group.assignment_epoch:  # type: ignore[union-attr]
            movers.append(action)
        state = post
    assert movers
    for action in movers:
        assert isinstance(action, DeliverMessage)
        assert isinstance(action.message.body, ConsumerGroupHeartbeatRequest)


def test_a_long_interval_converges_within_the_horizon() -> None:
    """The horizon counts from the end of the assignment interval: a 5 s interval with a
    500 ms heartbeat still converges."""
    result = scale_up(
        members=10,
        kip1263=Kip1263(5000, False),
        seed=1,
        heartbeat_interval_ms=HB,
        partitions_per_member=10,
        rest_ms=5000 + 3 * HB + 200,
    )
    assert result.rebalance_ms is not None
    assert 4800 <= result.rebalance_ms <= 4800 + 2 * HB + 100


def test_a_crashed_member_expires_a_session_timeout_after_its_last_heartbeat() -> None:
    for seed in (1, 2, 3):
        result = crash(members=3, seed=seed, assignment_interval_ms=1000)
        assert result.expired_ms is not None
        assert result.settled_ms is not None
        # the crash comes at most one heartbeat interval after its last heartbeat
        assert 6000 - HB - 5 <= result.expired_ms <= 6000 + 5
        # the survivors learn the new target at their next heartbeats
        assert result.expired_ms <= result.settled_ms <= result.expired_ms + 2 * HB + 50


def test_session_timers_fire_only_in_runs_that_ask_for_them() -> None:
    config = group_config(
        members=2,
        partitions=2,
        heartbeat_interval_ms=HB,
        kip1263=Kip1263(),
        session_timeout_ms=2000,
        crash=True,
    )
    for timers in (False, True):
        run = TimedRun(config, Timing(), 1, session_timers=timers)
        run.run(
            1000, [Scheduled(10.0 * i, Subscribe(c.name)) for i, c in enumerate(config.clients)]
        )
        run.take(run.now, Crash(config.clients[-1].name))
        run.run(run.now + 5000)
        fired = [a for a in run.actions if isinstance(a, SessionTimeout)]
        assert bool(fired) is timers


# --------------------------------------------------------------------------- kafka timing


def _write_run(
    d: Path,
    *,
    steps: list[dict[str, Any]],
    clients: dict[str, str],
    wire: list[tuple[int, str, int]],
    events: list[dict[str, Any]] | None = None,
    group_config: dict[str, str] | None = None,
    partitions: int = 100,
) -> Path:
    d.mkdir(parents=True)
    meta = {
        "scenario": "synthetic",
        "broker_settings": {
            "group.consumer.session.timeout.ms": "6000",
            "group.consumer.heartbeat.interval.ms": str(HB),
        },
        "group_config": group_config or {},
        "steps": steps,
        "error": None,
    }
    (d / "verdicts.json").write_text(json.dumps(meta), encoding="utf-8")
    header = {
        "format": "groupcheck-trace",
        "version": 2,
        "protocol": "consumer",
        "topics": {"foo": partitions},
        "heartbeat_interval_ms": HB,
        "session_timeout_ms": 6000,
        "clients": clients,
    }
    lines = [json.dumps(header)]
    for seq, (ts, member, epoch) in enumerate(wire):
        lines.append(
            json.dumps(
                {
                    "kind": "DeliverMessage",
                    "payload": {
                        "api": "ConsumerGroupHeartbeat",
                        "direction": "request",
                        "body": {"MemberId": member, "MemberEpoch": epoch},
                    },
                    "seq": seq,
                    "source": "network",
                    "ts": ts,
                }
            )
        )
    (d / "capture.ndjson").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (d / "clients").mkdir()
    (d / "clients" / "c.events.ndjson").write_text(
        "".join(json.dumps(e) + "\n" for e in events or []), encoding="utf-8"
    )
    return d


def test_a_join_is_timed_from_the_members_first_heartbeat_on_the_wire(tmp_path: Path) -> None:
    """The client's own delay before its first heartbeat (here 300 ms) is not counted:
    the time runs from the join request to the settled state."""
    d = _write_run(
        tmp_path / "batching-0-1",
        steps=[
            {"step": 1, "ts": 1000, "what": "start m*"},
            {"step": 2, "ts": 1010, "what": "subscribe m1 topics=['foo']"},
            {
                "step": 3,
                "ts": 1010,
                "what": "wait stable timeout_s=60 label=1 member",
                "label": "1 member",
                "settled_ms": 400,
            },
        ],
        clients={"id-m1": "m1"},
        wire=[(1310, "id-m1", 0), (1330, "id-m1", 2)],
        group_config={"consumer.assignment.interval.ms": "0"},
    )
    data = timing.measured([d])
    key = ("join", 0, 1, HB, 6000)
    assert [s.ms for s in data[key]] == [100]
    assert [s.delay_ms for s in data[key]] == [300]
    text = timing.table([d])
    row = next(line for line in text.splitlines() if line.startswith("| last join"))
    assert row == "| last join | 0 | 1 | 1 | 100 / 100 / 100 | 22 | yes | 300 |"


def test_the_interval_defaults_to_kafkas_and_a_crash_is_timed_from_the_crash(
    tmp_path: Path,
) -> None:
    d = _write_run(
        tmp_path / "consumer-crash-1",
        steps=[
            {"step": 1, "ts": 1000, "what": "start c*"},
            {"step": 2, "ts": 1000, "what": "subscribe c* topics=['foo']"},
            {"step": 3, "ts": 1000, "what": "wait stable", "settled_ms": 2000},
            {"step": 4, "ts": 9000, "what": "crash c3"},
            {"step": 5, "ts": 9010, "what": "wait stable timeout_s=40", "settled_ms": 6300},
        ],
        clients={"a": "c1", "b": "c2", "c": "c3"},
        wire=[],
        partitions=6,
    )
    data = timing.measured([d])
    # no group or broker setting: Kafka 4.4's default interval, 1,000 ms
    assert [s.ms for s in data[("crash", 1000, 3, HB, 6000)]] == [6310]
    row = next(line for line in timing.table([d]).splitlines() if line.startswith("| crash"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:5] == ["crash", "1,000", "3", "1", "6,310 / 6,310 / 6,310"]
    assert 5500 <= int(cells[5].replace(",", "")) <= 7000
    assert cells[6] == "yes"


def test_a_cut_is_timed_to_the_others_last_change_before_the_heal(tmp_path: Path) -> None:
    d = _write_run(
        tmp_path / "consumer-fenced-1",
        steps=[
            {"step": 1, "ts": 1000, "what": "start c*"},
            {"step": 4, "ts": 10000, "what": "cut c3"},
            {"step": 5, "ts": 10000, "what": "sleep_ms 9000"},
            {"step": 6, "ts": 19000, "what": "heal c3"},
            {"step": 7, "ts": 19001, "what": "sever c3"},
            {"step": 8, "ts": 19002, "what": "wait stable timeout_s=40", "settled_ms": 998},
        ],
        clients={"a": "c1", "b": "c2", "c": "c3"},
        wire=[],
        events=[
            {"ts": 16000, "client": "c1", "event": "member", "epoch": 5},
            {"ts": 16200, "client": "c2", "event": "assignment", "partitions": []},
            {"ts": 18000, "client": "c3", "event": "member", "epoch": 4},  # the cut one
            {"ts": 19500, "client": "c1", "event": "member", "epoch": 6},  # after the heal
        ],
        partitions=6,
    )
    data = timing.measured([d])
    assert [s.ms for s in data[("cut", 1000, 3, HB, 6000)]] == [6200]
    assert [s.ms for s in data[("heal", 1000, 3, HB, 6000)]] == [1000]
    heal = next(line for line in timing.table([d]).splitlines() if line.startswith("| heal"))
    assert "| — | — |" in heal  # measured only: the simulation has no cut-off client
