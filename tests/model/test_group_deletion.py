"""Group deletion (docs/fidelity.md O4–O7): the ``DeleteGroup`` perturbation, refused
unless the group is empty; ``delete_expired_groups``; what a deleted group answers; an
offloaded assignor run whose group was deleted; the deletion presets."""

from __future__ import annotations

import dataclasses

import pytest

from groupcheck.explore.bfs import bfs
from model import system
from model.actions import (
    CompleteAssignorRun,
    DeleteGroup,
    DeliverMessage,
    ExpireOffsets,
    Leave,
    ReleaseAssignment,
    SendHeartbeat,
)
from model.classic import coordinator as classic_co
from model.classic.messages import HeartbeatRequest
from model.classic.records import ClassicState
from model.config import ClientSpec, Config
from model.consumer.coordinator import handle_consumer_group_heartbeat, handle_offset_commit
from model.ids import FrozenMap
from model.presets import (
    CLASSIC_GROUP_DELETION,
    GROUP_DELETION,
    OFFLOAD_DELETION,
    ZOMBIE_DELETION,
)
from model.records import (
    CommittedOffset,
    ConsumerGroupHeartbeatRequest,
    OffsetCommitRequest,
    State,
)
from model.scenario import stable_state
from model.status import ClassicGroupStatus, ErrorCode

CONFIG = Config(
    kafka_version="4.2",
    name="group-deletion",
    topics=(("foo", 1), ("bar", 1)),
    clients=(ClientSpec("A", ("foo",)),),
    perturbations=frozenset({"ExpireOffsets", "DeleteGroup"}),
    max_perturbations=2,
    delete_expired_groups=True,
)
OFFSETS = FrozenMap({("foo", 0): CommittedOffset("A", 3), ("bar", 0): CommittedOffset("B", 2)})


def _consumer(state: object) -> State:
    assert isinstance(state, State)
    return state


def _empty_with_offsets(config: Config = CONFIG) -> State:
    state = _consumer(system.initial(config))
    group = dataclasses.replace(state.group, group_epoch=4, assignment_epoch=4)
    return dataclasses.replace(state, group=dataclasses.replace(group, committed_offsets=OFFSETS))


def test_delete_group_is_refused_while_the_group_has_members_and_changes_nothing() -> None:
    state = stable_state(CONFIG, 3, {"A": frozenset({("foo", 0)})})
    assert DeleteGroup() in system.enabled(state, CONFIG)
    assert system.step(state, DeleteGroup(), CONFIG) is state  # not even the budget


def test_delete_group_starts_a_new_group_from_scratch() -> None:
    state = _empty_with_offsets()
    after = _consumer(system.step(state, DeleteGroup(), CONFIG))
    g = after.group
    assert (g.group_epoch, g.assignment_epoch) == (0, 0)
    assert not g.members
    assert not g.committed_offsets
    assert not g.target_assignment
    assert (g.deleted, g.deletions) == (True, 1)
    assert after.perturbations == 1
    # A second request finds no group (GROUP_ID_NOT_FOUND): nothing changes.
    assert system.step(after, DeleteGroup(), CONFIG) is after


def test_a_deleted_group_answers_group_id_not_found_until_a_join_creates_it() -> None:
    deleted = _consumer(system.step(_empty_with_offsets(), DeleteGroup(), CONFIG)).group
    zombie = ConsumerGroupHeartbeatRequest(member_id="A", member_epoch=3)
    group, resp = handle_consumer_group_heartbeat(deleted, {}, zombie, CONFIG)
    assert (group, resp.error_code) == (deleted, ErrorCode.GROUP_ID_NOT_FOUND)
    leave = ConsumerGroupHeartbeatRequest(member_id="A", member_epoch=-1)
    assert handle_consumer_group_heartbeat(deleted, {}, leave, CONFIG)[1].error_code is (
        ErrorCode.GROUP_ID_NOT_FOUND
    )
    commit = OffsetCommitRequest("A", 3, frozenset({("foo", 0)}))
    group, commit_resp = handle_offset_commit(deleted, commit, CONFIG)
    assert (group, commit_resp.error_code) == (deleted, ErrorCode.GROUP_ID_NOT_FOUND)
    join = ConsumerGroupHeartbeatRequest(
        member_id="A",
        member_epoch=0,
        rebalance_timeout_ms=1000,
        subscribed_topic_names=frozenset({"foo"}),
        topic_partitions=frozenset(),
    )
    state = _consumer(system.initial(CONFIG))
    group, resp = handle_consumer_group_heartbeat(deleted, state.topics, join, CONFIG)
    assert resp.error_code is ErrorCode.NONE
    assert resp.member_epoch == 1
    assert not group.deleted
    assert group.deletions == 1
    assert set(group.members) == {"A"}
    # The zombie's old epoch now meets the new group: fenced, not GROUP_ID_NOT_FOUND.
    _, resp = handle_consumer_group_heartbeat(group, state.topics, zombie, CONFIG)
    assert resp.error_code is ErrorCode.FENCED_MEMBER_EPOCH


def test_the_last_offsets_of_an_empty_group_expiring_delete_it() -> None:
    state = _empty_with_offsets()
    one = _consumer(system.step(state, ExpireOffsets("bar"), CONFIG))
    assert not one.group.deleted
    assert one.group.committed_offsets
    two = _consumer(system.step(one, ExpireOffsets("foo"), CONFIG))
    assert two.group.deleted
    assert two.group.deletions == 1
    assert two.group.group_epoch == 0


def test_without_delete_expired_groups_the_emptied_group_stays() -> None:
    config = dataclasses.replace(CONFIG, delete_expired_groups=False)
    state = _empty_with_offsets(config)
    state = _consumer(system.step(state, ExpireOffsets("bar"), config))
    state = _consumer(system.step(state, ExpireOffsets("foo"), config))
    assert not state.group.committed_offsets
    assert (state.group.deleted, state.group.deletions, state.group.group_epoch) == (False, 0, 4)


def _run(state: State, actions: list[object], config: Config) -> State:
    for action in actions:
        assert action in system.enabled(state, config), action
        state = _consumer(system.step(state, action, config))  # type: ignore[arg-type]
    return state


def _deliver_next(state: State, config: Config) -> State:
    deliveries = [a for a in system.enabled(state, config) if isinstance(a, DeliverMessage)]
    return _consumer(system.step(state, deliveries[0], config))


def test_an_assignor_run_whose_group_was_deleted_is_discarded() -> None:
    config = OFFLOAD_DELETION
    state = _run(_consumer(system.initial(config)), [SendHeartbeat("A")], config)
    state = _deliver_next(state, config)  # the join starts a run at group epoch 2
    assert [r.group_epoch for r in state.group.assignor_runs] == [2]
    state = _deliver_next(state, config)  # the join response
    state = _run(state, [Leave("A"), ReleaseAssignment("A"), SendHeartbeat("A")], config)
    state = _deliver_next(state, config)  # the leave: the group is empty, the run in flight
    assert not state.group.members
    assert state.group.assignor_runs
    state = _run(state, [DeleteGroup()], config)
    assert state.group.assignor_runs[0].group_deleted
    done = _run(state, [CompleteAssignorRun()], config)
    assert done.group.assignor_runs == ()
    assert (done.group.group_epoch, done.group.assignment_epoch) == (1, 1)
    assert not done.group.target_assignment


def test_classic_group_deletion() -> None:
    state = system.initial(CLASSIC_GROUP_DELETION)
    assert isinstance(state, ClassicState)
    assert state.group.status is ClassicGroupStatus.STABLE
    assert system.step(state, DeleteGroup(), CLASSIC_GROUP_DELETION) is state  # not Empty
    empty = dataclasses.replace(
        state.group, status=ClassicGroupStatus.EMPTY, members=FrozenMap(), leader_id=None
    )
    deleted = classic_co.classic_delete_group(empty)
    assert (deleted.generation_id, deleted.deletions) == (0, 1)
    assert not deleted.committed_offsets
    assert not deleted.members
    assert deleted.issued_member_ids == empty.issued_member_ids  # ids stay unique (UUIDs)
    assert classic_co.classic_validate_delete_group(deleted) is ErrorCode.GROUP_ID_NOT_FOUND
    member_id = next(iter(state.group.members))
    old = HeartbeatRequest(member_id, state.group.generation_id, None)
    assert classic_co.handle_heartbeat(deleted, old, CLASSIC_GROUP_DELETION).error_code is (
        ErrorCode.UNKNOWN_MEMBER_ID
    )


@pytest.mark.parametrize(
    "config", [CLASSIC_GROUP_DELETION, OFFLOAD_DELETION, ZOMBIE_DELETION], ids=lambda c: c.name
)
def test_deletion_presets_are_clean_and_reach_their_witnesses(config: Config) -> None:
    result = bfs(config, max_states=50_000)
    assert result.exhausted
    assert result.result == "ok", (result.property, result.message)
    assert not result.missed_witnesses


def test_group_deletion_preset_is_clean_to_depth_and_deletes_after_expiry() -> None:
    # The whole preset (33,173 states) takes about 10 s; 14 steps reach every witness.
    result = bfs(GROUP_DELETION, max_depth=14)
    assert result.result == "ok", (result.property, result.message)
    assert "GroupDeletedAfterExpiry" in result.witnesses


@pytest.mark.parametrize("config", [OFFLOAD_DELETION, CLASSIC_GROUP_DELETION], ids=lambda c: c.name)
def test_a_deletion_round_trips_through_the_trace_codec_and_conformance(
    config: Config, tmp_path: object
) -> None:
    import json
    from pathlib import Path as FsPath

    from jsonschema import Draft202012Validator

    from groupcheck.cli import main
    from invariants.liveness import fair_schedule
    from model.path import Path
    from model.trace.codec import path_lines, read_path

    # Members leave first, then progress, until the group can be deleted; then the fair
    # schedule: the trace shows both.
    state = system.initial(config)
    actions: list[object] = []
    while DeleteGroup() not in system.enabled(state, config) or not _deletable(state, config):
        enabled = system.enabled(state, config)
        leaves = [a for a in enabled if isinstance(a, Leave)]
        progress = [a for a in enabled if not a.PERTURBATION and a.kind != "CommitOffsets"]
        step = (leaves or progress or list(enabled))[0]
        actions.append(step)
        state = system.step(state, step, config)
        assert len(actions) < 200
    actions.append(DeleteGroup())
    state = system.step(state, DeleteGroup(), config)
    assert state.group.deletions == 1
    more, _, ok = fair_schedule(state, config, 400)
    assert ok
    path = Path(config, (*actions, *more))  # type: ignore[arg-type]
    lines = list(path_lines(path))
    assert read_path(config, lines).actions == path.actions
    schema_file = FsPath(__file__).resolve().parents[2] / "docs" / "trace-format.schema.json"
    validator = Draft202012Validator(json.loads(schema_file.read_text(encoding="utf-8")))
    for line in lines:
        assert not [e.message for e in validator.iter_errors(json.loads(line))], line
    file = FsPath(str(tmp_path)) / "trace.ndjson"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["validate", "--mode", "conformance", str(file)]) == 0


def _deletable(state: object, config: Config) -> bool:
    """Whether DeleteGroup would delete the group (not be refused) in ``state``."""
    after = system.step(state, DeleteGroup(), config)  # type: ignore[arg-type]
    return after is not state
