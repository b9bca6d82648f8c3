"""The KIP-1251 assignment history (ghost ``Group.assignment_history``): who held a
(partition, assignment epoch) pair over the group's history, ``AssignmentEpochHolderUnique``
and the commit-side ``EpochCommitFromHolder`` (docs/invariants.md, "The assignment
history"). Work is bounded by depth, never by seconds."""

from __future__ import annotations

from dataclasses import replace

from groupcheck.explore.bfs import bfs
from groupcheck.mutants import MUTANTS
from invariants.check import Checker
from invariants.expr import StepSnapshot
from invariants.properties import (
    ASSIGNMENT_EPOCH_HOLDER_UNIQUE,
    EPOCH_COMMIT_FROM_HOLDER,
    STATE_PROPERTIES,
    STEP_PROPERTIES,
)
from invariants.snapshot import project
from model import system
from model.consumer.coordinator import new_group, record_assignment_history
from model.ids import EMPTY, FrozenMap
from model.presets import MUT2_COMMIT, MUT2_EPOCH_HISTORY
from model.records import CommittedOffset, Group, Member, State, new_member
from model.status import MemberState

NEW = {ASSIGNMENT_EPOCH_HOLDER_UNIQUE.name, EPOCH_COMMIT_FROM_HOLDER.name}
FOO0 = ("foo-id", 0)


def _without_history_properties() -> Checker:
    """The checker as it was before the history properties: every other one."""
    return Checker(
        state_properties=tuple(p for p in STATE_PROPERTIES if p.name not in NEW),
        step_properties=tuple(p for p in STEP_PROPERTIES if p.name not in NEW),
    )


def _holding(member_id: str, epoch: int, since: int) -> Member:
    """A member at ``epoch`` holding foo-0 since ``since``."""
    return replace(
        new_member(member_id, None),
        member_epoch=epoch,
        previous_member_epoch=epoch - 1,
        state=MemberState.STABLE,
        assigned_partitions=frozenset({FOO0}),
        assignment_epochs=FrozenMap({FOO0: since}),
    )


def _group(*members: Member) -> Group:
    g = new_group(MUT2_EPOCH_HISTORY)
    return replace(g, members=FrozenMap((m.member_id, m) for m in members))


def _state(group: Group) -> State:
    return State(group=group, topics=FrozenMap(), clients=(), network=())


def test_history_is_recorded_only_with_assignment_epochs() -> None:
    """The ghost is carried by configs with KIP-1251 assignment epochs only, so no other
    config's states (and state counts) change; with them it records every stamp of the
    members' assignment epochs, step by step."""
    for config, kept in ((MUT2_EPOCH_HISTORY, True), (MUT2_COMMIT, False)):
        state = system.initial(config)
        seen = False
        for _ in range(40):  # the first enabled action each time: a deterministic run
            actions = system.enabled(state, config)
            if not actions:
                break
            state = system.step(state, actions[0], config)
            assert isinstance(state, State)
            history = state.group.assignment_history
            for mid, m in state.group.members.items():
                for tp, epoch in m.assignment_epochs.items():
                    assert (mid, m.instance_id) in history[(tp, epoch)]
            seen = seen or bool(history)
        assert seen is kept


def test_record_keeps_every_pair_and_holder() -> None:
    a = _holding("A", 3, 3)
    g = record_assignment_history(_group(a))
    assert dict(g.assignment_history) == {(FOO0, 3): frozenset({("A", None)})}
    assert record_assignment_history(g) is g  # nothing new: the same record
    # A released foo-0; B is stamped with it at the same epoch: the pair names two members.
    b = _holding("B", 3, 3)
    later = record_assignment_history(replace(g, members=FrozenMap({"B": b})))
    assert later.assignment_history[(FOO0, 3)] == frozenset({("A", None), ("B", None)})
    snap = project(_state(later))
    assert not ASSIGNMENT_EPOCH_HOLDER_UNIQUE.holds(snap)
    assert "m=A" in ASSIGNMENT_EPOCH_HOLDER_UNIQUE.explain(snap)
    # Two processes of one static instance are one holder.
    sa, sb = replace(a, instance_id="a"), replace(b, instance_id="a")
    static = record_assignment_history(
        replace(record_assignment_history(_group(sa)), members=FrozenMap({"B": sb}))
    )
    snap = project(_state(static))
    assert ASSIGNMENT_EPOCH_HOLDER_UNIQUE.holds(snap)


def test_commit_side_check_names_the_holder_of_the_pair() -> None:
    """B holds foo-0 since epoch 4 (the history also has A at 2); B's commit at epoch 5
    (B is at 6) comes from the holder of (foo-0, 5). A commit at epoch 3 accepted from B
    does not: at 3 the history names A, and B was stamped later."""
    a_then, b = _holding("A", 2, 2), _holding("B", 6, 4)
    g = record_assignment_history(_group(a_then))
    g = record_assignment_history(replace(g, members=FrozenMap({"B": b})))
    pre = project(_state(g))
    for epoch, ok in ((5, True), (4, True), (3, False), (2, False)):
        post_group = replace(g, committed_offsets=FrozenMap({FOO0: CommittedOffset("B", epoch)}))
        post = project(_state(post_group))
        assert EPOCH_COMMIT_FROM_HOLDER.holds(StepSnapshot(pre, post)) is ok, epoch
    # A commit at B's current epoch is KIP-848's, not judged by the history.
    post_group = replace(g, committed_offsets=FrozenMap({FOO0: CommittedOffset("B", 6)}))
    post = project(_state(post_group))
    assert EPOCH_COMMIT_FROM_HOLDER.holds(StepSnapshot(pre, post))


def test_the_reference_rules_keep_the_history_and_exercise_it() -> None:
    result = bfs(MUT2_EPOCH_HISTORY, max_depth=12, check_convergence=False)
    assert result.property is None, f"{result.property}: {result.message}"
    assert "PartitionMovesUnderEpochs" in result.witnesses
    assert "OlderEpochCommitAccepted" in result.witnesses


def test_stamp_request_epoch_was_missed_and_is_caught_now() -> None:
    """The mutant, explored to the depth of its kill, violates none of the properties
    there were before; with the history properties it is killed, and its counterexample
    breaks only those."""
    mutant = MUTANTS["stamp-request-epoch"]
    config = mutant.mutated_config()
    before = bfs(
        config, max_depth=12, check_convergence=False, checker_factory=_without_history_properties
    )
    assert before.property is None, f"{before.property}: {before.message}"
    assert before.checked.startswith("every state within 12 steps")
    now = bfs(config, max_depth=12, check_convergence=False)
    assert now.property == ASSIGNMENT_EPOCH_HOLDER_UNIQUE.name
    assert now.path is not None
    # Along the counterexample every other state and step property holds.
    checker, state = _without_history_properties(), system.initial(config)
    assert not checker.check_state(state)
    for action in now.path.actions:
        post = system.step(state, action, config)
        assert not checker.check_state(post)
        assert not checker.check_step(state, action, post)
        state = post
    assert not ASSIGNMENT_EPOCH_HOLDER_UNIQUE.holds(project(state))


def test_unused_empty_assignment_is_not_a_stamp() -> None:
    """A member that holds nothing adds nothing to the history."""
    m = replace(new_member("A", None), member_epoch=1, assigned_partitions=EMPTY)
    g = _group(m)
    assert record_assignment_history(g) is g
