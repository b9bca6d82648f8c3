"""Convergence by bounded model checking over the classic coordinator's relation
(invariants/z3/proof/classic_lasso.py): the two classic liveness-only variants of a
coordinator rule agree with their mutated rules step by step; ``no-pending-sync-timer`` is
found as a shortest fair non-converging lasso whose prefix lifts to a model trace from
which the model's fair schedule does not converge, and the reference rules have no lasso
at that depth; the confirmation of a ``static-replace-without-rebalance`` lasso holds under
the mutated rules and fails under the reference ones; ``validate-stale-claims`` is found
up to a generation shift, whose closing condition shifts every generation by one amount
and leaves the sentinel -1 alone, and the prefix of its lasso is confirmed under the
mutated rules only. Bounded by depth and states, never by seconds (the search on
MUTC_STATIC, five member ids, costs over ten CPU seconds: docs/benchmarks.md).
"""

from __future__ import annotations

import json
import pathlib
from dataclasses import replace

import pytest
import z3

from groupcheck.cli import main
from groupcheck.explore.classic_lift import lift_lasso
from groupcheck.explore.minimise import first_violations
from groupcheck.mutants import MUTANTS, lasso_depths, outside_reasons
from invariants.z3.engine import SymPath
from invariants.z3.proof.classic_agreement import check_step
from invariants.z3.proof.classic_bmc import distinct, universe_of
from invariants.z3.proof.classic_lasso import (
    CONVERGENCE,
    DEFAULT_DEPTH,
    LASSO_VARIANTS,
    SHIFTED_VARIANTS,
    LassoLifted,
    search_lasso,
)
from invariants.z3.proof.classic_state import COMPLETING, PREPARING, ClassicValue, project
from invariants.z3.proof.classic_transition import VARIANTS, ClassicOptions, family_of, grounded
from model import system
from model.actions import Action
from model.config import Config
from model.path import Path

NO_CLOCK = ["--budget", "3600"]
"""The command's wall-clock budget (60 s by default) out of the way: these searches are
bounded by depth, and a loaded machine's clock must not cut one short (inconclusive, exit
3, and a Z3 context left cancelled for the next test)."""

BFS_PATHS = {
    "static-replace-without-rebalance": "0000001",
    "no-pending-sync-timer": "000000000000002",
    "validate-stale-claims": "0000000000",
}
"""Per variant: the BFS engine's Convergence counterexample on the mutant's scenario (the
path code ``groupcheck replay --path`` reads)."""

COORDINATOR_RULES = ("static-replace-without-rebalance", "no-pending-sync-timer")
"""The variants of a coordinator rule (``validate-stale-claims`` is the leader's assignor:
tests/invariants/z3/proof/test_classic_assignor.py)."""

SHIFT_DEPTH = 6
"""The shortest lasso of ``validate-stale-claims`` up to a generation shift: C's two
JoinGroups, then A, B and C rejoin around B's SyncGroup, a generation later."""

STALL_DEPTH = 6
"""The shortest lasso of ``no-pending-sync-timer``: five steps to the SyncGroup phase
with the leader's SyncGroup missing (its OffsetCommit, sent before its JoinGroup, included),
then its pending-sync timer firing to no effect."""


def _run(name: str) -> tuple[Config, list[Action]]:
    """The mutant's BFS counterexample, then 20 steps of the model's fair schedule."""
    from invariants.liveness import fair_schedule

    config = MUTANTS[name].mutated_config()
    actions = list(Path.decode(config, BFS_PATHS[name]).actions)
    state = system.initial(config)
    for a in actions:
        state = system.step(state, a, config)
    more, _, ok = fair_schedule(state, config, 20)
    assert not ok
    return config, actions + more


def test_the_lasso_variants_are_classic_variants_no_longer_outside() -> None:
    depths = lasso_depths(LASSO_VARIANTS)  # the catalogue entries' Mutant.lasso_depth
    assert set(LASSO_VARIANTS) == set(BFS_PATHS) == set(depths)
    assert depths["no-pending-sync-timer"] == STALL_DEPTH
    assert max(depths.values()) == DEFAULT_DEPTH
    assert set(LASSO_VARIANTS) <= set(VARIANTS)
    assert not set(LASSO_VARIANTS) & set(outside_reasons())


@pytest.mark.parametrize("name", COORDINATOR_RULES)
def test_the_variant_takes_the_mutated_steps_the_reference_refuses(name: str) -> None:
    """Along the BFS counterexample and the fair schedule after it, every JoinGroup and
    join or pending-sync timer of the mutated rules (each group step once) is the
    variant's only successor; the reference relation refuses
    at least one of them (the mutated rule's)."""
    config, actions = _run(name)
    variant = ClassicOptions.of(config, name)
    reference = ClassicOptions.of(config)
    state = system.initial(config)
    refused = 0
    seen: list[tuple[str | None, object, object]] = []
    for action in actions:
        after = system.step(state, action, config)
        step = (family_of(action), project(state), project(after))  # type: ignore[arg-type]
        if step[0] in ("DeliverMessage.join_group", "RebalanceTimeout") and step not in seen:
            seen.append(step)
            got = check_step(state, action, after, config, options=variant)
            assert (got.allowed, got.unique) == ("yes", "yes"), (action, got)
            refused += check_step(state, action, after, config, options=reference).allowed == "no"
        state = after
    assert refused >= 1


def test_the_stall_lasso_is_found_and_confirmed_by_the_cli(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    name = "no-pending-sync-timer"
    args = ["explore", "--engine", "bmc", "--mutant", name, "--json", "--quiet", *NO_CLOCK]
    assert main([*args, "--out", str(tmp_path)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert (doc["result"], doc["depth"], doc["property"]) == ("violation", 6, CONVERGENCE)
    (row,) = doc["properties"]
    assert (row["status"], row["depth"], row["replayed"]) == ("violation", STALL_DEPTH, True)
    assert row["loop"]["steps"]
    assert all(s.startswith("RebalanceTimeout(") for s in row["loop"]["steps"])
    assert pathlib.Path(doc["trace"]).is_file()
    assert f"--mutant {name}" in doc["reproduce"]
    # Convergence alone: another property is refused in one line (exit 2).
    assert main([*args, "--out", str(tmp_path), "--only", "NoLiveOffsetExpires"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "Convergence alone" in err


def test_the_reference_rules_have_no_stall_lasso_at_that_depth() -> None:
    config = MUTANTS["no-pending-sync-timer"].config
    out = search_lasso(STALL_DEPTH, config, ClassicOptions.of(config), confirmer=lift_lasso)
    assert (out.status, out.tried) == ("ok", 0), out


def test_a_static_lasso_prefix_is_confirmed_under_the_mutant_only() -> None:
    """The group states of the BFS counterexample of ``static-replace-without-rebalance``
    (consecutive repeats dropped) as a lasso's prefix: the mutated rules lift it to a trace
    from which the fair schedule does not converge, and that trace replays to a Convergence
    failure; the reference rules reach no model state matching its end (their
    JoinGroup rebalances)."""
    name = "static-replace-without-rebalance"
    config, actions = _run(name)
    states = _states(config, actions)
    prefix = SymPath(CONVERGENCE, tuple(states), ())
    lifted = lift_lasso(prefix, config, 20_000)
    assert lifted.actions is not None
    found = first_violations(config, lifted.actions, check_convergence=True)
    assert found is not None
    assert found[1] == len(lifted.actions)
    assert [v.property for v in found[0]] == [CONVERGENCE]
    reference = MUTANTS[name].config
    refused = lift_lasso(prefix, reference, 20_000)
    assert refused.actions is None
    assert refused.matched is not None
    assert refused.matched < len(states) - 1


def test_an_unconfirmed_lasso_is_inconclusive_never_a_violation() -> None:
    """A confirmer that confirms nothing: the lassos found are blocked one by one, each
    new one differs, and the verdict is inconclusive with no trace."""
    name = "no-pending-sync-timer"
    config = MUTANTS[name].mutated_config()
    seen: list[SymPath[ClassicValue]] = []

    def refuse(prefix: SymPath[ClassicValue], config: Config, max_states: int) -> LassoLifted:
        seen.append(prefix)
        return LassoLifted(None, 1, 0, 0, None)

    out = search_lasso(
        STALL_DEPTH, config, ClassicOptions.of(config, name), confirmer=refuse, attempts=3
    )
    assert (out.status, out.tried, out.trace) == ("inconclusive", 3, None)
    assert out.lasso is not None
    assert len(seen) == 3
    assert all(a.states != b.states for i, a in enumerate(seen) for b in seen[:i])


def test_no_answer_from_z3_is_inconclusive_not_ok(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(z3.Solver, "check", lambda self, *a: z3.unknown)
    config = MUTANTS["no-pending-sync-timer"].config
    out = search_lasso(3, config, ClassicOptions.of(config), confirmer=lift_lasso)
    assert (out.status, out.depth, out.tried, out.unanswered) == ("inconclusive", 1, 0, True)


def _states(config: Config, actions: list[Action]) -> list[ClassicValue]:
    """The group states ``actions`` take the classic model through, repeats dropped."""
    state = system.initial(config)
    states = [project(state)]  # type: ignore[arg-type]
    for action in actions:
        state = system.step(state, action, config)
        now = project(state)  # type: ignore[arg-type]
        if now != states[-1]:
            states.append(now)
    return states


def test_a_shifted_state_closes_the_loop_with_one_shift_and_the_sentinel_kept() -> None:
    """``shifted``: the group's generation and every member's claims one amount larger
    closes the loop, the -1 of claims without a generation kept and ``assigned`` (written
    only) not compared; another generation, a shifted -1 or two amounts do not."""
    from invariants.z3.proof.classic_lasso import shifted, write_only
    from invariants.z3.proof.classic_state import ClassicMemberValue, ClassicSym, pin

    config, actions = _run("validate-stale-claims")
    entry = next(v for v in _states(config, actions) if v.status == COMPLETING)
    mvs = entry.members
    assert {mv.claim_gen for mv in mvs.values()} == {-1, entry.generation - 1}

    def moved(d: int, gen: int | None = None, sentinel: int = -1) -> ClassicValue:
        def one(mv: ClassicMemberValue) -> ClassicMemberValue:
            g = mv.claim_gen + d if mv.claim_gen >= 0 else sentinel
            return replace(mv, claim_gen=g, assigned=frozenset())

        members = {mid: one(mv) for mid, mv in mvs.items()}
        g = entry.generation + d if gen is None else gen
        return replace(entry, generation=g, members=members)

    domains = universe_of(config)
    u = domains.universe
    pre, post, d = ClassicSym.fresh("e"), ClassicSym.fresh("k"), z3.Int("d")

    def closes(value: ClassicValue) -> bool:
        s = z3.Solver()
        s.add(*distinct(u), *pin(pre, entry, u), *pin(post, value, u), d >= 0)
        with grounded(tuple(u.member_consts.values()), tuple(u.partition_consts.values())):
            s.add(shifted(post, pre, d, write_only(domains)))
        return bool(s.check() == z3.sat)

    assert closes(moved(2))
    assert closes(moved(0))
    assert not closes(moved(2, gen=entry.generation + 1))
    assert not closes(moved(2, sentinel=1))


def test_the_stuck_leader_lasso_is_found_up_to_a_generation_shift(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    name = "validate-stale-claims"
    assert name in SHIFTED_VARIANTS
    args = ["explore", "--engine", "bmc", "--mutant", name, "--json", "--quiet", *NO_CLOCK]
    assert main([*args, "--out", str(tmp_path)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert (doc["result"], doc["property"]) == ("violation", CONVERGENCE)
    (row,) = doc["properties"]
    assert (row["status"], row["depth"], row["replayed"]) == ("violation", SHIFT_DEPTH, True)
    assert row["loop"]["generation_shift"] >= 1
    assert any(s.startswith("DeliverMessage.join_group(") for s in row["loop"]["steps"])
    assert pathlib.Path(doc["trace"]).is_file()
    assert f"--mutant {name}" in doc["reproduce"]


def test_the_stuck_leader_prefix_is_confirmed_under_the_mutant_only() -> None:
    """The lasso's prefix — C's two JoinGroups, the join phase C's second starts — lifts
    under the mutated rules to a trace from which the fair schedule does not converge;
    the same client steps under the reference rules (whose warm group has A claim at the
    generation it joined) give a prefix every model state matching whose end converges."""
    name = "validate-stale-claims"
    config, actions = _run(name)
    reference = MUTANTS[name].config
    for rules, confirmed in ((config, True), (reference, False)):
        states = _states(rules, actions[: len(BFS_PATHS[name])])
        entry = next(i for i, v in enumerate(states) if v.status == PREPARING)
        prefix = SymPath(CONVERGENCE, tuple(states[: entry + 1]), ())
        lifted = lift_lasso(prefix, rules, 20_000)
        if not confirmed:
            assert lifted.actions is None
            assert lifted.matching == lifted.converging > 0
            continue
        assert lifted.actions is not None
        found = first_violations(rules, lifted.actions, check_convergence=True)
        assert found is not None
        assert [v.property for v in found[0]] == [CONVERGENCE]
