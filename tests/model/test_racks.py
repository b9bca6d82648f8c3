"""Racks: a client's ``client.rack`` reaches its member as ``RackId``; a change of the racks
of a subscribed topic's partitions changes the group's metadata hash and bumps the group
epoch; Kafka's built-in server assignors ignore racks (KAFKA-16694), so the new target is
the old one (docs/fidelity.md, row 23)."""

from __future__ import annotations

from dataclasses import replace

from groupcheck.explore.bfs import bfs
from model.actions import ChangePartitionRacks
from model.config import ClientSpec, Config
from model.path import Path
from model.scenario import Script
from model.trace.codec import path_lines, read_path

CONFIG = Config(
    kafka_version="4.2",
    name="racks",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",), rack="r1"), ClientSpec("B", ("foo",), rack="r2")),
    max_perturbations=1,
    perturbations=frozenset({"ChangePartitionRacks"}),
    max_restarts=0,
)


def settled() -> Script:
    script = Script(CONFIG)
    for name in ("A", "B", "A", "B", "A", "B"):
        script.heartbeat(name)
        client = script.state.client(name)
        if (
            client.target is not None
            and client.reconciling is None
            and client.target != client.owned
        ):
            script.reconcile(name)
    return script


def test_the_rack_is_sent_on_join_and_stored() -> None:
    script = Script(CONFIG)
    script.heartbeat("A")
    member = script.state.group.members[script.state.client("A").member_id]
    assert member.rack_id == "r1"
    script.heartbeat("A")  # a delta heartbeat does not repeat it; the member keeps it
    member = script.state.group.members[script.state.client("A").member_id]
    assert member.rack_id == "r1"
    lines = list(path_lines(Path(CONFIG, tuple(script.actions))))
    assert sum('"RackId": "r1"' in line for line in lines) == 1
    assert read_path(CONFIG, lines).actions == tuple(script.actions)


def test_a_rack_change_bumps_the_epoch_and_keeps_the_target() -> None:
    script = settled()
    before = script.state.group
    script.do(ChangePartitionRacks("foo"))
    after = script.state.group
    assert after.group_epoch == before.group_epoch + 1
    script.heartbeat("A")  # the new target, computed with racks ignored
    assert script.state.group.assignment_epoch == after.group_epoch
    assert script.state.group.target_assignment == before.target_assignment


def test_rack_config_is_exhausted_with_its_witness() -> None:
    config = replace(
        CONFIG,
        topics=(("foo", 1),),
        required_witnesses=("RackChangeRebalances", "GroupConverges"),
    )
    result = bfs(config)
    assert result.exhausted
    assert result.result == "ok", (result.property, result.message, result.reasons)
