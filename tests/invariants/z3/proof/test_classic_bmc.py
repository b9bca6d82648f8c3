"""BMC over the classic coordinator's relation (invariants/z3/proof/classic_bmc.py): each
classic variant is found at its shortest symbolic depth and lifted to a trace of the
Python classic model that violates the property (groupcheck/explore/classic_lift.py); the
reference rules give no symbolic path at all at that depth. Bounded by depth and states,
never by seconds."""

from __future__ import annotations

import json
import pathlib
from dataclasses import replace
from typing import Any

import pytest

from groupcheck.cli import main
from groupcheck.explore.classic_lift import lift, next_states
from groupcheck.mutants import MUTANTS, bmc_depths
from invariants.z3.proof.classic_bmc import (
    GOAL_VARIANTS,
    GOALS,
    VARIANT_ATTEMPTS,
    VARIANT_UNREACHED,
    search,
)
from invariants.z3.proof.classic_lasso import LASSO_VARIANTS
from invariants.z3.proof.classic_transition import VARIANTS, ClassicOptions
from model.config import Config

NO_CLOCK = ["--budget", "3600"]
"""The command's wall-clock budget (60 s by default) out of the way: these searches are
bounded by depth, and a loaded machine's clock must not cut one short (inconclusive, exit
3, and a Z3 context left cancelled for the next test)."""

FOUND = {
    "classic-delete-non-empty-group": ("NoLiveOffsetExpires", 1, 1),
    "expire-while-rebalancing": ("NoLiveOffsetExpires", 2, 3),
    "static-replaced-only-when-stable": ("StaticInstanceUnique", 3, 9),
}
"""Per variant: the property, the depth of the shortest symbolic path (coordinator steps)
and the length of the lifted model trace (the BFS counterexample's, client steps
included)."""

VARIANT_GOALS = {name: MUTANTS[name].killed_by for name in GOAL_VARIANTS}
"""Per assignor variant searched for one goal, that goal: the property that kills the
mutant (its catalogue entry's ``Mutant.killed_by``)."""

VARIANT_DEPTHS = bmc_depths(VARIANTS)
"""Per classic variant, ``explore --engine bmc --mutant``'s default depth: its catalogue
entry's ``Mutant.bmc_depth``."""


def test_every_classic_variant_has_a_goal() -> None:
    # The liveness-only variants are lassos (tests/invariants/z3/proof/test_classic_lasso.py); the
    # assignor rules' goals are the properties that kill them (test_an_assignor_variant_is_found).
    assert set(FOUND) | set(LASSO_VARIANTS) | set(VARIANT_GOALS) == set(VARIANTS)
    assert not set(FOUND) & set(LASSO_VARIANTS)
    assert not (set(FOUND) | set(LASSO_VARIANTS)) & set(VARIANT_GOALS)
    assert {goal for goal, _, _ in FOUND.values()} | set(VARIANT_GOALS.values()) <= set(GOALS)
    # The default depth of a coordinator rule's variant is its shortest (found there below);
    # an assignor rule's is that of a lifted path, or none is known (VARIANT_UNREACHED).
    assert {n: VARIANT_DEPTHS[n] for n in FOUND} == {n: d for n, (_, d, _) in FOUND.items()}
    assert set(VARIANT_DEPTHS) - set(FOUND) <= set(VARIANT_GOALS)
    assert set(VARIANT_UNREACHED) == set(VARIANT_GOALS) - set(VARIANT_DEPTHS)
    assert set(VARIANT_ATTEMPTS) <= set(VARIANT_DEPTHS)


@pytest.mark.parametrize("name", sorted(FOUND))
def test_bmc_finds_the_variant_and_the_model_replays_it(name: str) -> None:
    goal, depth, length = FOUND[name]
    config = MUTANTS[name].mutated_config()
    out = search(goal, depth, config, ClassicOptions.of(config, name), lifter=lift)
    assert out.status == "violation", out
    assert out.depth == depth
    assert out.trace is not None
    assert out.property == goal
    assert len(out.trace.actions) == length


@pytest.mark.parametrize("name", sorted(FOUND))
def test_the_reference_rules_give_no_violation_at_that_depth(name: str) -> None:
    goal, depth, _ = FOUND[name]
    config = MUTANTS[name].config
    out = search(goal, depth, config, ClassicOptions.of(config), lifter=lift)
    assert out.status == "ok", out
    assert out.tried == 0


def _warm_cooperative(mutated: bool) -> Config:
    """MUTC_COOPERATIVE from the group A formed alone (a warm start), B's subscription the
    one perturbation: B's join is four coordinator steps away from the leader's SyncGroup
    that gives B a partition."""
    mutant = MUTANTS["assign-without-withholding"]
    config = replace(
        mutant.config,
        name="MUTC_COOPERATIVE_WARM",
        warm_start=True,
        max_perturbations=1,
        perturbations=frozenset({"Subscribe"}),
        live_timers=False,
    )
    return replace(config, rules=mutant.rules) if mutated else config


@pytest.mark.parametrize("mutated", [True, False])
def test_an_assignor_variant_is_found(mutated: bool) -> None:
    """The leader's assignment is constrained by its assignor (``classic_assignor``): the
    cooperative-sticky leader that withholds nothing (assign-without-withholding) gives B
    the partition A still reports owning in 4 coordinator steps, which lift to a model
    trace violating MovesOnlyReleased; the reference leader withholds it, and no path of
    at most 4 steps violates the property. The search rules out the states no model step
    reaches after a prefix a lift matched (``classic_lift.next_states``) and still finds
    the path."""
    name = "assign-without-withholding"
    goal = VARIANT_GOALS[name]
    config = _warm_cooperative(mutated)
    options = ClassicOptions.of(config, name if mutated else None)
    assert options.assignor == "cooperative-sticky"
    out = search(goal, 4, config, options, lifter=lift, successors=next_states)
    if not mutated:
        assert (out.status, out.tried) == ("ok", 0), out
        return
    assert (out.status, out.depth, out.property) == ("violation", 4, goal), out
    assert out.trace is not None
    assert out.path.steps[-1][0] == "DeliverMessage.sync_group"


def test_explore_engine_bmc_on_a_classic_mutant(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command lifts the path, writes the run directory and exits 1; a classic mutant
    without a variant is refused with its reason (exit 2), and so is a classic variant by
    prove (not by prove --agreement: tests/groupcheck/symbolic/test_agreement_command.py)."""
    args = ["explore", "--engine", "bmc", "--depth", "1", "--json", "--quiet"]
    args += ["--out", str(tmp_path), "--only", "NoLiveOffsetExpires"]
    assert main([*args, "--mutant", "classic-delete-non-empty-group"]) == 1
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["properties"]
    assert (row["status"], row["depth"], row["replayed"]) == ("violation", 1, True)
    assert doc["property"] == "NoLiveOffsetExpires"
    assert doc["z3"] == "violated"
    assert pathlib.Path(doc["trace"]).is_file()
    monkeypatch.setitem(
        MUTANTS,
        "lost-partitions-kept",
        replace(MUTANTS["lost-partitions-kept"], outside="a rule the relation lacks, say"),
    )
    assert main([*args, "--mutant", "lost-partitions-kept"]) == 2
    assert "outside the symbolic core" in capsys.readouterr().err
    # An assignor rule where the relation states no assignor (range): one line, exit 2.
    assert main([*args, "--mutant", "sticky-forgets-ownership", "--preset", "CLASSIC_EAGER"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "rule of the leader's assignor" in err
    # prove reads the consumer protocol's relation only (its --agreement reads both).
    assert main(["prove", "--variant", "expire-while-rebalancing", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "explore --engine bmc --mutant expire-while-rebalancing" in err


def test_bmc_unrolls_a_partition_added(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    """With ``AddPartitions`` the domains hold the partitions up to
    ``max_partitions_per_topic``; one MetadataChange step subscribes the warm group's
    members to the new partition (and no other family can); the reference rules of
    UPGRADE_TWO_BOUNCES give no violating path within 2 steps, and ``explore --engine
    bmc`` takes the config."""
    import z3

    from invariants.z3.proof.classic_bmc import Unrolling, universe_of
    from model.presets import PRESETS

    config = PRESETS["MUTC_STICKY"]
    domains = universe_of(config)
    assert domains.growth == {
        "foo": (frozenset({("foo", 0), ("foo", 1), ("foo", 2)}), frozenset({("foo", 2)}))
    }
    unroll = Unrolling(config, ClassicOptions.of(config), domains)
    unroll.extend()
    post = unroll.states[-1]
    new = domains.universe.partition_consts[("foo", 2)]
    members = [domains.universe.member_consts[m] for m in ("A.m1", "B.m1")]
    unroll.solver.add(*[post.subscribed(m, new) for m in members])
    assert unroll.solver.check() == z3.sat
    (chosen,) = [f.name for s, f in unroll.choices[0] if z3.is_true(unroll.solver.model().eval(s))]
    assert chosen == "MetadataChange"
    (sel,) = [s for s, f in unroll.choices[0] if f.name == "MetadataChange"]
    unroll.solver.add(z3.Not(sel))
    assert unroll.solver.check() == z3.unsat
    args = ["explore", "--engine", "bmc", "--depth", "2", "--json", "--quiet", *NO_CLOCK]
    args += ["--out", str(tmp_path), "--only", "NoLiveOffsetExpires"]
    assert main([*args, "--preset", "UPGRADE_TWO_BOUNCES"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["properties"]
    assert (row["status"], row["depth"]) == ("ok", 2)


def test_no_answer_from_z3_is_inconclusive_not_ok(monkeypatch: pytest.MonkeyPatch) -> None:
    import z3

    monkeypatch.setattr(z3.Solver, "check", lambda self, *a: z3.unknown)
    config = MUTANTS["classic-delete-non-empty-group"].config
    goal = "NoLiveOffsetExpires"
    out = search(goal, 2, config, ClassicOptions.of(config), lifter=lift)
    assert (out.status, out.depth, out.tried) == ("inconclusive", 1, 0)
    assert out.message == "Z3 gave no answer at depth 1"


def _claims_allowed(
    d: Any, history: list[Any], requester: str, member: str, sub: Any, commit: Any = None
) -> bool:
    """Whether ``classic_bmc._claims_history`` allows a JoinGroup of ``requester`` (its
    member id ``member``, empty for none) with the subscription ``sub`` after ``history``
    (the group's states so far); with ``commit``, an OffsetCommit of those partitions."""
    import z3

    from invariants.z3.proof.classic_bmc import _claims_history, distinct
    from invariants.z3.proof.classic_state import ClassicSym, pin
    from invariants.z3.proof.transition import Family

    u = d.universe
    mc, pc = u.member_consts, u.partition_consts
    syms = [ClassicSym.fresh(f"h{k}") for k in range(len(history))]
    s = z3.Solver()
    s.add(*distinct(u))
    for sym, value in zip(syms, history, strict=True):
        s.add(*pin(sym, value, u))

    def holds(parts: frozenset[Any]) -> Any:
        return lambda q: z3.Or([q == c for tp, c in pc.items() if tp in parts])

    if commit is not None:
        params = {"member": mc[member], "partitions": holds(commit)}
    else:
        params = {
            "unknown": z3.BoolVal(not member),
            "member": mc[member or requester],
            "new_id": mc[requester],
            "claim_gen": z3.IntVal(sub.generation_id),
            "user_data": holds(sub.user_data),
            "owned": holds(sub.owned_partitions),
        }
    name = "DeliverMessage.join_group" if commit is None else "DeliverMessage.offset_commit"
    s.add(*_claims_history(Family(name, z3.BoolVal(True), params), syms, d))
    return bool(s.check() == z3.sat)


@pytest.mark.parametrize("name", ["sticky-without-generation", "highest-generation-claims-only"])
def test_the_model_clients_send_the_claims_the_unrolling_allows(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Soundness of the link between a JoinGroup's claims (and an OffsetCommit's
    partitions) and the SyncGroup answers its client received
    (``classic_bmc._claims_history``): along seeded walks of the Python model (the
    mutant's scenario, perturbations included), every JoinGroup and OffsetCommit the
    coordinator receives, with the group's states so far as the history, satisfies the
    link; and the link refuses B's claim, at the start, of a partition the group gave A,
    B's commit of it and (KIP-792) B's claim of a generation no JoinGroup answer gave it."""
    import random

    from invariants.z3.proof import classic_bmc
    from invariants.z3.proof.classic_state import project
    from model import system
    from model.actions import DeliverMessage
    from model.classic.messages import ClassicSubscription, JoinGroupRequest
    from model.classic.records import ClassicState
    from model.records import OffsetCommitRequest

    monkeypatch.setattr(classic_bmc, "ID_SLOTS", 3)
    config = MUTANTS[name].mutated_config()
    d = classic_bmc.universe_of(config)
    assert d.linked
    assert not d.restarts
    init = system.initial(config)
    assert isinstance(init, ClassicState)
    start = project(init)
    a_owns = sorted(start.members["A.m1"].assigned)[0]
    b = init.client("B")
    honest = ClassicSubscription(
        topics=b.subscription,
        owned_partitions=b.owned if d.joined_generation else frozenset(),
        generation_id=b.generation_id if d.joined_generation else b.assigned_generation,
        user_data=b.assigned,
    )
    assert _claims_allowed(d, [start], "B.m1", "B.m1", honest)
    # A's partition is no answer B received, under its member id or a new one.
    stale = replace(honest, user_data=frozenset({a_owns}))
    if d.joined_generation:
        stale = replace(stale, owned_partitions=frozenset({a_owns}))
    assert not _claims_allowed(d, [start], "B.m1", "B.m1", stale)
    assert not _claims_allowed(d, [start], "B.m2", "", stale)
    assert _claims_allowed(d, [start], "", "B.m1", None, b.assigned)
    assert not _claims_allowed(d, [start], "", "B.m1", None, frozenset({a_owns}))
    if d.joined_generation:
        # A generation no JoinGroup answer gave B (KIP-792's claimed generation).
        later = replace(honest, generation_id=start.generation + 1)
        assert not _claims_allowed(d, [start], "B.m1", "B.m1", later)
    checked = 0
    for seed in range(3):
        rng = random.Random(seed)
        state: ClassicState = init
        history = [start]
        for _ in range(40):
            enabled = system.enabled(state, config)
            if not enabled:
                break
            action = rng.choice(enabled)
            message = action.message if isinstance(action, DeliverMessage) else None
            if message and isinstance(message.body, JoinGroupRequest) and message.to_coordinator:
                body, client = message.body, message.client
                fresh = f"{client}.m{state.group.issued_member_ids.get(client, 0) + 1}"
                requester = body.member_id or fresh
                if requester in d.universe.member_consts:
                    allowed = _claims_allowed(
                        d, history, requester, body.member_id, body.subscription
                    )
                    assert allowed, (seed, body, history)
                    checked += 1
            if message and isinstance(message.body, OffsetCommitRequest) and message.to_coordinator:
                commit = message.body
                allowed = _claims_allowed(d, history, "", commit.member_id, None, commit.topics)
                assert allowed, (seed, commit, history)
                checked += 1
            after = system.step(state, action, config)
            assert isinstance(after, ClassicState)
            state = after
            if project(state) != history[-1]:
                history.append(project(state))
    assert checked >= 10, checked
