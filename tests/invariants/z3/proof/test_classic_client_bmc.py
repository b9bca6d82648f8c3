"""The client layer linked to the classic coordinator's relation
(invariants/z3/proof/classic_client_bmc.py): model steps, with the group, the clients and
the network pinned on both sides, are steps of the linked relation; a client variant's own
step is one of its variant and not of the reference rules. The BMC searches that find the
two client mutants take minutes (docs/benchmarks.md). Bounded by states, never by
seconds."""

from __future__ import annotations

import json
import pathlib
from dataclasses import replace
from typing import Any

import pytest
import z3

from groupcheck.cli import main
from groupcheck.explore.classic_lift import lift_clients
from groupcheck.mutants import MUTANTS
from invariants.z3.proof.classic_agreement import bfs_steps
from invariants.z3.proof.classic_bmc import universe_of
from invariants.z3.proof.classic_client_agreement import case
from invariants.z3.proof.classic_client_bmc import (
    ClientPath,
    Linked,
    check_linked_step,
    lift_images,
    partition_images,
    project_net,
    project_state,
    reduce_interleavings,
    rename_partitions,
    search,
    supported,
)
from invariants.z3.proof.classic_clients import (
    ClientOptions,
    acting_client,
    client_family_of,
    pin_client,
)
from invariants.z3.proof.classic_state import pin
from invariants.z3.proof.classic_transition import ClassicOptions
from model.actions import DeliverMessage, SessionTimeout
from model.classic.messages import JoinGroupRequest, SyncGroupRequest, SyncGroupResponse
from model.classic.records import ClassicState
from model.path import Path
from model.presets import PRESETS

NO_CLOCK = ["--budget", "3600"]
"""The command's wall-clock budget (60 s by default) out of the way: these searches are
bounded by depth, and a loaded machine's clock must not cut one short (inconclusive, exit
3, and a Z3 context left cancelled for the next test)."""

BOUND = 3_000


def _first(
    config_name: str, want: type, body: type | None = None
) -> tuple[ClassicState, ClassicState]:
    config = PRESETS[config_name]
    for pre, action, post in bfs_steps(config, BOUND):
        if not isinstance(action, want):
            continue
        if body is not None and not (
            isinstance(action, DeliverMessage) and isinstance(action.message.body, body)
        ):
            continue
        if project_net(pre) is not None and project_net(post) is not None:
            return pre, post
    raise AssertionError(f"no such step within {BOUND} states")


@pytest.mark.parametrize(
    ("want", "body"),
    [
        (DeliverMessage, JoinGroupRequest),
        (DeliverMessage, SyncGroupRequest),
        (DeliverMessage, SyncGroupResponse),
        (SessionTimeout, None),
    ],
)
def test_a_model_step_is_a_step_of_the_linked_relation(want: type, body: type | None) -> None:
    pre, post = _first("MUTC_COOPERATIVE", want, body)
    assert check_linked_step(pre, post, PRESETS["MUTC_COOPERATIVE"]) == "yes"


DEPARTS = {
    "lost-partitions-kept": ("000000000000000011000000111", 23),
    "late-sync-resets-generation": ("000000000000000000111122222", 26),
}
"""Each client mutant's breadth-first counterexample (``model.path`` code) and the index of
its step the mutated rule decides."""


@pytest.mark.parametrize("name", sorted(DEPARTS))
def test_the_variant_step_is_linked_and_the_reference_relation_refuses_it(name: str) -> None:
    code, k = DEPARTS[name]
    config = MUTANTS[name].mutated_config()
    path = Path.decode(config, code)
    states = list(path.states())
    pre, action, post = states[k], path.actions[k], states[k + 1]
    assert isinstance(pre, ClassicState)
    assert isinstance(post, ClassicState)
    family, who = client_family_of(action), acting_client(action)
    assert family is not None
    assert who is not None
    assert case(pre, action, family, who) in (
        "SendJoinGroup:reset:owning",
        "DeliverMessage.sync_response:REBALANCE_IN_PROGRESS",
    )
    assert check_linked_step(pre, post, config, variant=name) == "yes"
    assert check_linked_step(pre, post, config) == "no"


def test_explore_engine_bmc_with_a_client_goal(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    """``--only`` a client goal on a classic config runs the linked relation. No path of at
    most 2 steps violates LostOnlyWhenOut on MUTC_LATE_SYNC (no message loss): ok, exit 0.
    On MUTC_COOPERATIVE, which loses messages, the link drops requests the model still
    delivers, so "no path" is no bound for the model: inconclusive, exit 3."""
    args = ["explore", "--engine", "bmc", "--depth", "2", "--json", "--quiet", *NO_CLOCK]
    args += ["--out", str(tmp_path)]
    assert main([*args, "--preset", "MUTC_LATE_SYNC", "--only", "LostOnlyWhenOut"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["properties"]
    assert (row["property"], row["status"], row["paths_tried"]) == ("LostOnlyWhenOut", "ok", 0)
    code = main([*args, "--preset", "MUTC_COOPERATIVE", "--only", "NoDoubleClientOwnership"])
    assert code == 3
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["properties"]
    assert (row["property"], row["status"], row["paths_tried"]) == (
        "NoDoubleClientOwnership",
        "unknown",
        0,
    )
    assert "not a bound for the model" in row["reason"]
    assert doc["result"] == "inconclusive"
    # A client variant with --depth: its goal, depth by depth (without --depth, one query
    # at depth 27: docs/benchmarks.md).
    one = ["explore", "--engine", "bmc", "--depth", "1", "--json", "--quiet", *NO_CLOCK, "--out"]
    assert main([*one, str(tmp_path), "--mutant", "late-sync-resets-generation"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["properties"]
    assert (row["property"], row["status"], row["depth"]) == ("LostOnlyWhenOut", "ok", 1)


def test_the_link_names_what_it_does_not_cover(capsys: pytest.CaptureFixture[str]) -> None:
    assert supported(PRESETS["MUTC_COOPERATIVE"]) is None
    assert supported(PRESETS["MUTC_LATE_SYNC"]) is None
    assert "static" in (supported(PRESETS["MUTC_STATIC"]) or "")
    code = main(
        ["explore", "--engine", "bmc", "--preset", "MUTC_STATIC", "--only", "LostOnlyWhenOut"]
    )
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "MUTC_STATIC" in err[0]


def _final_states(unroll: Any) -> list[Any]:
    """The group-and-clients states at the end of some path of ``unroll`` (every one: found,
    blocked, asked again)."""
    last = unroll.frames[-1]
    seen: list[Any] = []
    unroll.solver.push()
    while unroll.solver.check() == z3.sat:
        state = unroll.decode_state(unroll.solver.model(), last)
        seen.append(state)
        same = pin(last.group, state.group, unroll.u)
        for n in unroll.names:
            same += pin_client(last.clients[n], state.clients[n], unroll.u)
        unroll.solver.add(z3.Not(z3.And(*same)))
    unroll.solver.pop()
    return seen


def test_the_interleaving_reduction_keeps_every_reachable_state() -> None:
    """The reduced relation (consecutive local steps of two clients in the clients' order,
    ``reduce_interleavings``) reaches the same states in 3 steps as the unreduced one, on
    MUTC_COOPERATIVE (A joins, B may subscribe, messages may be lost), and does forbid
    something: B's Subscribe before A's SendJoinGroup."""
    config = PRESETS["MUTC_COOPERATIVE"]
    unroll = Linked(
        config, universe_of(config), ClassicOptions.of(config), ClientOptions.of(config)
    )
    for _ in range(3):
        unroll.extend()
    first = next(s for s, n in unroll.choices[0] if n == "Subscribe(B)")
    second = next(s for s, n in unroll.choices[1] if n == "SendJoinGroup(A)")
    assert unroll.solver.check(first, second) == z3.sat
    unreduced = _final_states(unroll)
    # The constraint the reduced unrolling adds once its third step is added.
    unroll.solver.add(*reduce_interleavings(unroll.local[0], unroll.local[1]))
    assert unroll.solver.check(first, second) == z3.unsat
    reduced = _final_states(unroll)
    assert len(reduced) == len(unreduced) > 1
    assert all(s in unreduced for s in reduced)


def test_the_factored_steps_reach_the_same_states() -> None:
    """Each step stated once by the conjuncts its families share, one family a step
    (``factored.one_of``), reaches the same states in 3 steps as the steps stated family by
    family, on MUTC_COOPERATIVE with the interleaving reduction."""
    config = PRESETS["MUTC_COOPERATIVE"]
    reached = []
    for factor in (False, True):
        unroll = Linked(
            config,
            universe_of(config),
            ClassicOptions.of(config),
            ClientOptions.of(config),
            reduce=True,
            factor=factor,
        )
        for _ in range(3):
            unroll.extend()
        reached.append(_final_states(unroll))
    plain, factored = reached
    assert len(plain) == len(factored) > 1
    assert all(s in plain for s in factored)


@pytest.mark.parametrize("sent", ["as sent", "another generation", "fewer owned"])
def test_the_join_group_claims_are_the_request_s(sent: str) -> None:
    """A JoinGroup's claims (owned partitions, user data, their generation) reach the
    coordinator's family as the client sent them: on `late-sync-resets-generation`'s
    breadth-first counterexample A rejoins at generation 3 owning foo-0 and foo-1 (step 10);
    the group after its delivery keeps those claims, so the step is linked with the request
    as sent and not with a request claiming another generation or fewer partitions."""
    name = "late-sync-resets-generation"
    config = MUTANTS[name].mutated_config()
    path = Path.decode(config, DEPARTS[name][0])
    states = list(path.states())
    pre, post = states[10], states[11]
    assert isinstance(pre, ClassicState)
    assert isinstance(post, ClassicState)
    (msg,) = [m for m in pre.network if isinstance(m.body, JoinGroupRequest)]
    sub = msg.body.subscription
    assert (sub.generation_id, len(sub.owned_partitions)) == (3, 2)
    if sent == "another generation":
        sub = replace(sub, generation_id=2)
    elif sent == "fewer owned":
        sub = replace(sub, owned_partitions=frozenset(sorted(sub.owned_partitions)[:1]))
    body = replace(msg.body, subscription=sub)
    pre = replace(pre, network=tuple(replace(m, body=body) if m is msg else m for m in pre.network))
    want = "yes" if sent == "as sent" else "no"
    assert check_linked_step(pre, post, config, variant=name) == want


def test_a_path_lifts_as_its_image_under_a_renaming_of_partitions() -> None:
    """`late-sync-resets-generation`'s counterexample with foo-0 and foo-1 swapped (A owns
    both from the start, so the initial state is the same) is a path the model does not
    follow — its cooperative-sticky leader keeps A's foo-0, not foo-1 — but its image back
    lifts: ``lift_images`` finds the 27-step trace and names that image."""
    name = "late-sync-resets-generation"
    config = MUTANTS[name].mutated_config()
    path = Path.decode(config, DEPARTS[name][0])
    states = tuple(project_state(s) for s in path.states())
    found = ClientPath("LostOnlyWhenOut", states, tuple("" for _ in path.actions))
    swapped = rename_partitions(found, {("foo", 0): ("foo", 1), ("foo", 1): ("foo", 0)})
    assert swapped.states != found.states
    assert [p.states for p in partition_images(swapped)] == [swapped.states, found.states]
    trace, _, _, matched = lift_clients(swapped, config, 1_000)
    assert trace is None
    assert matched is not None
    assert matched < 27
    lifted: dict[int, ClientPath] = {}
    trace, violations, _, _ = lift_images(lift_clients, lifted)(swapped, config, 1_000)
    assert trace is not None
    assert len(trace) == 27
    assert [v.property for v in violations] == ["LostOnlyWhenOut"]
    assert lifted[id(swapped)].states == found.states


def test_a_search_from_a_start_depth_is_no_bound_below_it() -> None:
    """No path of exactly 2 steps violates LostOnlyWhenOut on MUTC_COOPERATIVE; asked from
    depth 2 only, that is inconclusive (the paths of 1 step were not asked), not ok."""
    out = search(
        "LostOnlyWhenOut", 2, PRESETS["MUTC_COOPERATIVE"], lifter=lift_clients, start_depth=2
    )
    assert (out.status, out.tried) == ("inconclusive", 0)
    assert out.message == "no symbolic path of 2 steps; paths of fewer than 2 steps not asked"
