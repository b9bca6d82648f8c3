"""KIP-1263: assignment batching (a lazy gate on ``group.consumer.assignment.interval.ms``,
``AssignmentIntervalElapses`` as logical time) and assignor offload (one run in flight,
``CompleteAssignorRun`` installs it with the changes made meanwhile re-applied)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from groupcheck.cli import main
from model import system
from model.actions import (
    AssignmentIntervalElapses,
    CompleteAssignorRun,
    CoordinatorFailover,
    CoordinatorLoaded,
    Leave,
    ReleaseAssignment,
    Restart,
    SendHeartbeat,
    Subscribe,
    TemporaryLeave,
)
from model.config import ClientSpec, Config
from model.consumer.target import install_assignor_run, reapply_changes
from model.ids import FrozenMap
from model.path import Path
from model.presets import BATCHING, OFFLOAD, OFFLOAD_LOSSY
from model.records import AssignorRun, TopicMetadata
from model.scenario import Script
from model.status import ConfigError, MemberState
from model.trace.codec import path_lines, read_path

TWO = (ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False))

BATCH = Config(
    kafka_version="4.2",
    name="batch",
    topics=(("foo", 2),),
    clients=TWO,
    max_perturbations=2,
    perturbations=frozenset({"Subscribe", "Leave"}),
    max_restarts=0,
    epoch_layout="kafka-4.3",
    assignment_interval_ms=1000,
)

OFF = Config(
    kafka_version="4.2",
    name="off",
    topics=(("foo", 2), ("bar", 1)),
    clients=TWO,
    max_perturbations=3,
    perturbations=frozenset({"Subscribe", "Leave", "Crash", "DeleteTopic"}),
    max_restarts=0,
    epoch_layout="kafka-4.3",
    assignor_offload=True,
)

STATIC_OFF = Config(
    kafka_version="4.2",
    name="static-off",
    topics=(("foo", 2),),
    clients=(
        ClientSpec("A", ("foo",), instance_id="a"),
        ClientSpec("B", ("foo",), instance_id="b"),
    ),
    max_perturbations=2,
    perturbations=frozenset({"TemporaryLeave", "Restart"}),
    epoch_layout="kafka-4.3",
    assignor_offload=True,
)


# --------------------------------------------------------------------------- config


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"min_assignment_interval_ms": 2000, "max_assignment_interval_ms": 1000}, "exceeds"),
        ({"assignment_interval_ms": 20000}, r"must be in 0\.\.15000"),
        ({"min_assignment_interval_ms": 500, "assignment_interval_ms": 100}, r"in 500\.\.15000"),
        ({"group_assignment_interval_ms": 16000}, r"-1 \(the broker default\) or in 0\.\.15000"),
        ({"group_assignment_interval_ms": -2}, r"must be in -1 \(the broker default\)"),
        ({"assignment_interval_ms": -1}, r"must be in 0\.\."),
        ({"assignment_interval_ms": "1000"}, "must be an integer"),
        ({"assignor_offload": "yes"}, "must be true or false"),
        ({"offload_stale_run": "keep"}, "'install' or 'discard'"),
        ({"assignor_offload": True, "epoch_layout": "kip-848"}, "needs epoch_layout"),
        ({"assignment_interval_ms": 1000, "compute_target_in_heartbeat": False}, "heartbeat"),
    ],
)
def test_impossible_kip1263_settings_are_config_errors(
    change: dict[str, object], message: str
) -> None:
    base = {"name": "x", "topics": (("foo", 2),), "clients": TWO, "epoch_layout": "kafka-4.3"}
    with pytest.raises(ConfigError, match=message):
        Config(**{**base, **change})  # type: ignore[arg-type]


def test_the_group_override_wins_unless_it_is_minus_one() -> None:
    assert BATCH.effective_assignment_interval_ms() == 1000
    assert replace(BATCH, group_assignment_interval_ms=0).effective_assignment_interval_ms() == 0
    assert (
        replace(BATCH, group_assignment_interval_ms=-1).effective_assignment_interval_ms() == 1000
    )


def test_classic_configs_refuse_the_kip1263_options() -> None:
    classic = Config(name="c", protocol="classic", topics=(("foo", 1),), clients=TWO)
    with pytest.raises(ConfigError, match="consumer-protocol option"):
        replace(classic, assignment_interval_ms=1000)


# --------------------------------------------------------------------------- batching


def test_the_first_target_is_computed_at_once_and_the_next_waits_for_the_interval() -> None:
    s = Script(BATCH)
    s.heartbeat("A")
    g = s.state.group
    assert (g.group_epoch, g.assignment_epoch, g.assignment_timestamp) == (2, 2, 1)
    assert AssignmentIntervalElapses() in system.enabled(s.state, BATCH)
    s.do(Subscribe("B"))
    s.heartbeat("B")
    g = s.state.group
    # B's join bumped the group epoch, but the interval has not passed: no new target.
    assert (g.group_epoch, g.assignment_epoch) == (3, 2)
    assert "B" not in g.target_assignment
    s.heartbeat("A")
    assert s.state.group.assignment_epoch == 2  # the gate is lazy: still closed
    s.do(AssignmentIntervalElapses())
    assert AssignmentIntervalElapses() not in system.enabled(s.state, BATCH)
    s.heartbeat("B")  # the first heartbeat after the interval computes it
    g = s.state.group
    assert (g.assignment_epoch, g.assignment_interval_elapsed) == (3, False)
    assert g.target_assignment["B"]


def test_without_an_interval_nothing_is_recorded_and_time_never_passes() -> None:
    config = replace(BATCH, group_assignment_interval_ms=0)
    s = Script(config)
    s.heartbeat("A")
    assert s.state.group.assignment_timestamp == 0
    assert AssignmentIntervalElapses() not in system.enabled(s.state, config)
    s.do(Subscribe("B"))
    s.heartbeat("B")
    assert s.state.group.assignment_epoch == s.state.group.group_epoch


def test_an_emptied_group_is_realigned_with_timestamp_zero() -> None:
    config = replace(BATCH, realign_empty_group=True)
    s = Script(config)
    s.heartbeat("A")
    s.do(Leave("A"))
    s.do(ReleaseAssignment("A"))
    s.heartbeat("A")
    g = s.state.group
    assert not g.members
    assert (g.assignment_epoch, g.assignment_timestamp) == (g.group_epoch, 0)
    # Without KAFKA-20442 the timestamp stays: the next member waits for the interval.
    s2 = Script(BATCH)
    s2.heartbeat("A")
    s2.do(Leave("A"))
    s2.do(ReleaseAssignment("A"))
    s2.heartbeat("A")
    assert s2.state.group.assignment_timestamp == 1


# --------------------------------------------------------------------------- offload


def test_a_first_member_is_answered_with_the_empty_epoch_one_target_while_its_run_runs() -> None:
    s = Script(OFF)
    s.heartbeat("A")
    g = s.state.group
    assert (g.group_epoch, g.assignment_epoch) == (2, 1)
    assert [r.group_epoch for r in g.assignor_runs] == [2]
    assert s.state.client("A").member_epoch == 1
    s.heartbeat("A")  # a run is in flight: no second one
    assert len(s.state.group.assignor_runs) == 1
    s.do(CompleteAssignorRun())
    g = s.state.group
    assert (g.assignment_epoch, g.assignor_runs) == (2, ())
    assert g.target_assignment["A"] == {("foo", 0), ("foo", 1)}


def test_a_run_completing_after_a_member_left_is_installed_without_it() -> None:
    s = Script(OFF)
    s.heartbeat("A")
    s.do(CompleteAssignorRun())
    s.reconcile("A")
    s.heartbeat("A")
    s.do(Subscribe("B"))
    s.heartbeat("B")  # starts the run at epoch 3 with A and B
    run = s.state.group.assignor_runs[0]
    assert run.member_ids() == {"A", "B"}
    s.do(Leave("B"))
    s.do(ReleaseAssignment("B"))
    s.heartbeat("B")
    assert "B" not in s.state.group.members
    s.do(CompleteAssignorRun())
    g = s.state.group
    assert set(g.target_assignment) == {"A"}
    assert g.assignment_epoch == 3 < g.group_epoch  # stale: another run follows
    s.do(SendHeartbeat("A"))
    s.deliver("A", to_coordinator=True)
    assert s.state.group.assignor_runs[0].group_epoch == g.group_epoch


def test_a_replaced_static_members_result_moves_to_its_new_member_id() -> None:
    s = Script(STATIC_OFF)
    s.heartbeat("A")  # run at epoch 2 for A
    s.do(TemporaryLeave("A"))
    s.do(ReleaseAssignment("A"))
    s.heartbeat("A")
    s.do(Restart("A"))
    s.heartbeat("A")  # A.1 replaces A under instance a; no epoch bump
    assert set(s.state.group.members) == {"A.1"}
    s.do(CompleteAssignorRun())
    g = s.state.group
    assert g.target_assignment == {"A.1": frozenset({("foo", 0), ("foo", 1)})}
    assert g.assignment_epoch == g.group_epoch == 2


def test_partitions_of_a_topic_deleted_during_the_run_are_not_installed() -> None:
    s = Script(replace(OFF, clients=(ClientSpec("A", ("foo", "bar")), TWO[1])))
    s.heartbeat("A")
    assert ("bar", 0) in s.state.group.assignor_runs[0].target_assignment["A"]
    from model.actions import DeleteTopic

    s.do(DeleteTopic("bar"))
    s.do(CompleteAssignorRun())
    g = s.state.group
    assert g.target_assignment["A"] == {("foo", 0), ("foo", 1)}
    assert g.group_epoch > g.assignment_epoch  # the deletion bumped it: another run


def test_reapply_changes_keeps_only_members_and_existing_partitions() -> None:
    s = Script(OFF)
    s.heartbeat("A")
    group = s.state.group
    run = AssignorRun(
        group_epoch=2,
        target_assignment=FrozenMap({"A": frozenset({("foo", 0), ("x", 0)}), "Z": frozenset()}),
        static_members=FrozenMap(),
    )
    topics = {"foo": TopicMetadata("foo", 2)}
    assert reapply_changes(run, group, topics) == {"A": frozenset({("foo", 0)})}


def test_a_run_older_than_the_assignment_epoch_is_discarded_never_installed() -> None:
    s = Script(OFF)
    s.heartbeat("A")
    group = replace(s.state.group, assignment_epoch=2, group_epoch=3)
    out = install_assignor_run(group, dict(s.state.topics), 0, False)
    assert (out.assignment_epoch, out.target_assignment, out.assignor_runs) == (
        2,
        group.target_assignment,
        (),
    )


def test_a_stale_run_is_discarded_when_the_config_says_so() -> None:
    config = replace(OFF, offload_stale_run="discard")
    s = Script(config)
    s.heartbeat("A")
    s.do(Subscribe("B"))
    s.heartbeat("B")  # group epoch 3; the run at 2 is stale
    s.do(CompleteAssignorRun())
    g = s.state.group
    assert (g.assignment_epoch, g.group_epoch, g.assignor_runs) == (1, 3, ())
    s.do(SendHeartbeat("A"))
    s.deliver("A", to_coordinator=True)
    assert s.state.group.assignor_runs[0].group_epoch == 3


def test_a_failover_loses_the_run_and_the_next_heartbeat_starts_another() -> None:
    config = replace(OFF, perturbations=frozenset({"CoordinatorFailover"}))
    s = Script(config)
    s.heartbeat("A")
    s.do(CoordinatorFailover())
    assert CompleteAssignorRun() not in system.enabled(s.state, config)
    s.do(CoordinatorLoaded())
    assert s.state.group.assignor_runs == ()
    s.heartbeat("A")
    assert len(s.state.group.assignor_runs) == 1


def test_a_member_reconciles_only_once_the_run_is_installed() -> None:
    s = Script(OFF)
    s.heartbeat("A")
    s.reconcile("A")
    s.heartbeat("A")
    assert s.state.group.members["A"].assigned_partitions == frozenset()
    s.do(CompleteAssignorRun())
    s.heartbeat("A")
    member = s.state.group.members["A"]
    assert (member.member_epoch, member.state) == (2, MemberState.STABLE)
    assert member.assigned_partitions == {("foo", 0), ("foo", 1)}


# --------------------------------------------------------------------------- traces


@pytest.mark.parametrize("config", [BATCHING, OFFLOAD, OFFLOAD_LOSSY], ids=lambda c: c.name)
def test_new_actions_round_trip_through_the_trace_codec_and_conformance(
    config: Config, tmp_path: object
) -> None:
    from pathlib import Path as FsPath

    from invariants.liveness import fair_schedule

    state = system.initial(config)
    actions, state, ok = fair_schedule(state, config, 400)
    assert ok
    join = Subscribe("B")
    assert join in system.enabled(state, config)
    state = system.step(state, join, config)
    more, _, ok = fair_schedule(state, config, 400)
    assert ok
    path = Path(config, (*actions, join, *more))
    kinds = {a.kind for a in path.actions}
    if config.assignor_offload:
        assert "CompleteAssignorRun" in kinds
    if config.effective_assignment_interval_ms() > 0:
        assert "AssignmentIntervalElapses" in kinds
    lines = list(path_lines(path))
    assert read_path(config, lines).actions == path.actions
    from jsonschema import Draft202012Validator

    schema_file = FsPath(__file__).resolve().parents[2] / "docs" / "trace-format.schema.json"
    validator = Draft202012Validator(json.loads(schema_file.read_text(encoding="utf-8")))
    for line in lines:
        assert not [e.message for e in validator.iter_errors(json.loads(line))], line
    file = FsPath(str(tmp_path)) / "trace.ndjson"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["validate", "--mode", "conformance", str(file)]) == 0


def test_a_new_kafka_4_3_group_starts_with_the_empty_epoch_one_target() -> None:
    """KAFKA-20268: a new group is at group epoch 1 with an empty target at assignment
    epoch 1 (``AssignmentTimestamp`` 0: no computation yet), batching and offload or not;
    the first computed target is epoch 2. The KIP-848 layout starts at 0 and computes 1."""
    plain = replace(BATCH, assignment_interval_ms=0)
    for config in (BATCH, OFF, plain):
        g = system.initial(config).group
        assert (g.group_epoch, g.assignment_epoch, g.assignment_timestamp) == (1, 1, 0)
        assert not g.target_assignment
    s = Script(plain)
    s.heartbeat("A")
    g = s.state.group
    assert (g.group_epoch, g.assignment_epoch) == (2, 2)
    assert g.target_assignment["A"] == {("foo", 0), ("foo", 1)}
    old = replace(plain, epoch_layout="kip-848")
    g0 = system.initial(old).group
    assert (g0.group_epoch, g0.assignment_epoch) == (0, 0)
    s = Script(old)
    s.heartbeat("A")
    assert (s.state.group.group_epoch, s.state.group.assignment_epoch) == (1, 1)
