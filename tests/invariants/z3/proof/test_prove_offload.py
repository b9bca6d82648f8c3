"""``groupcheck prove`` over KIP-1263 assignor offload (invariants/z3/proof/induction.py,
``OFFLOAD_TARGETS``, ``OFFLOAD_LEMMAS``): the invariant is stated over the run in flight,
its lemmas hold on the model's reachable states, the obligations of the family that
installs a run are proved, and each offload variant whose harm a property states turns a
proof into a counterexample to induction the Python reading confirms. (The whole proof of
``OFFLOAD`` — 315 obligations — is measured in docs/benchmarks.md, not run here.)

Every bound here is a number of states or obligations, never seconds.
"""

from __future__ import annotations

import json

import pytest

from groupcheck.cli import main
from invariants.expr import compile_expr
from invariants.z3.proof.crosscheck import bfs_steps
from invariants.z3.proof.induction import (
    OFFLOAD_LEMMAS,
    STATIC_OFFLOAD_LEMMAS,
    Prover,
    invariant_for,
    steps_for,
)
from invariants.z3.proof.state import project
from invariants.z3.proof.transition import OFFLOAD_VARIANTS, Options
from model.presets import PRESETS


def _prover(preset: str, variant: str | None = None) -> Prover:
    options = Options.of(PRESETS[preset], variant)
    return Prover(options, invariant=invariant_for(options), steps=steps_for(options))


def test_the_offload_invariant_names_the_runs() -> None:
    """With offload the invariant adds the catalogue's run properties and the run lemmas
    (``ValidTargetAssignment.OnlyMembers`` in place of its lemma twin), the static lemmas
    with instance ids; without offload it is unchanged."""
    names = [c.name for c in invariant_for(Options.of(PRESETS["OFFLOAD"]))]
    assert {"AssignorRunsInFlight.AtMostOne", "ValidTargetAssignment.OnlyMembers"} <= set(names)
    assert {c.name for c in OFFLOAD_LEMMAS} <= set(names)
    assert "Lemma.TargetOnlyOfMembers" not in names
    assert not {c.name for c in STATIC_OFFLOAD_LEMMAS} & set(names)
    static = {c.name for c in invariant_for(Options.of(PRESETS["MUT2_OFFLOAD_STATIC"]))}
    assert {c.name for c in STATIC_OFFLOAD_LEMMAS} <= static
    assert "TargetEpochAdvances" in {s.name for s in steps_for(Options.of(PRESETS["OFFLOAD"]))}
    plain = [c.name for c in invariant_for(Options())]
    assert "Lemma.TargetOnlyOfMembers" in plain
    assert not any("Run" in n for n in plain)


@pytest.mark.parametrize("preset", ["MUT2_OFFLOAD", "MUT2_OFFLOAD_STATIC", "OFFLOAD_DELETION"])
def test_offload_lemmas_hold_on_reached_states(preset: str) -> None:
    """Every conjunct of the offload invariant is true of the model's reachable states
    (the Python reading of the same expressions on the projection with its runs), and
    some of those states have a run in flight, so the run lemmas are not read vacuously."""
    config = PRESETS[preset]
    options = Options.of(config)
    invariant = invariant_for(options)
    with_run = 0
    for _, _, post in bfs_steps(config, max_states=150):
        value = project(post, offload=True, deletion=options.group_deletion)
        with_run += bool(value.runs)
        snap = value.snapshot()
        for c in invariant:
            assert compile_expr(c.expr)(snap, {}), (preset, c.name)
    assert with_run > 0


def test_installing_a_run_keeps_the_invariant() -> None:
    """Every property (state and step) and every run lemma is proved on
    ``CompleteAssignorRun``, the family offload adds (the other lemmas there, and every
    family, are in the whole proof)."""
    prover = _prover("OFFLOAD")
    lemmas = {c.name for c in prover.invariant if c.lemma} - {c.name for c in OFFLOAD_LEMMAS}
    chosen = [
        ob
        for ob in prover.obligations()
        if ob.family == "CompleteAssignorRun" and ob.goal not in lemmas
    ]
    assert len(chosen) == len(prover.invariant) - len(lemmas) + len(prover.steps)
    results = [prover.check(ob) for ob in chosen]
    failed = [(r.obligation.name, r.status, r.reason) for r in results if r.status != "proved"]
    assert not failed


def test_a_static_replacement_moves_a_current_entry_it_subscribes_to() -> None:
    """With static members, installing a run whose member was replaced meanwhile moves
    its entry to the new member id (KAFKA-20292): the target is still unique, of members
    and subscribed (``Lemma.CurrentRunInstanceSubscribed``)."""
    prover = _prover("MUT2_OFFLOAD_STATIC")
    goals = {
        "ValidTargetAssignment.Unique",
        "ValidTargetAssignment.OnlySubscribed",
        "ValidTargetAssignment.OnlyMembers",
    }
    chosen = [
        ob for ob in prover.obligations() if ob.family == "CompleteAssignorRun" and ob.goal in goals
    ]
    assert len(chosen) == len(goals)
    assert [prover.check(ob).status for ob in chosen] == ["proved"] * len(goals)


@pytest.mark.parametrize(
    ("variant", "preset", "goal", "family"),
    [
        ("two-runs-in-flight", "MUT2_OFFLOAD", "AssignorRunsInFlight.AtMostOne", "heartbeat"),
        ("install-without-epoch", "MUT2_OFFLOAD", "TargetEpochAdvances", "run"),
        (
            "install-without-reapplying-removals",
            "MUT2_OFFLOAD",
            "ValidTargetAssignment.OnlyMembers",
            "run",
        ),
        ("install-run-after-deletion", "OFFLOAD_DELETION", "EpochOrder.AssignmentEpoch", "run"),
    ],
)
def test_an_offload_variant_gives_a_decoded_cti(
    variant: str, preset: str, goal: str, family: str
) -> None:
    """Each offload variant whose harm a property states fails that property on the
    family it changes, and the Python reading confirms the counterexample (BMC reaches
    the same property: tests/groupcheck/symbolic/test_bmc_mutants.py); the reference rules prove
    it."""
    name = "DeliverMessage.heartbeat" if family == "heartbeat" else "CompleteAssignorRun"
    for v, status in ((variant, "failed"), (None, "proved")):
        prover = _prover(preset, v)
        (ob,) = [o for o in prover.obligations() if (o.goal, o.family) == (goal, name)]
        result = prover.check(ob)
        assert result.status == status, (v, result.reason)
        if v is not None:
            assert result.cti is not None
            assert result.cti.python_confirms
            assert any("assignor run" in line for line in result.cti.lines())


def test_prove_command_reads_offload(capsys: pytest.CaptureFixture[str]) -> None:
    """``prove --variant`` of an offload rule runs on a config that has it (one property's
    obligations: a CTI, exit 1), is refused without one, and refuses the variant whose only
    harm is a property ``prove`` does not state; ``--clients`` is refused on offload; the
    reasons say the ranking counts the run in flight (its obligations are those of
    ``--only``: none here)."""
    args = ["prove", "--preset", "MUT2_OFFLOAD", "--json", "--quiet"]
    only = ["--only", "ValidTargetAssignment.OnlyMembers"]
    variant = ["--variant", "install-without-reapplying-removals"]
    assert main([*args, *variant, *only]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "violation"
    assert doc["options"]["assignor_offload"] is True
    failed = [ob for ob in doc["obligations"] if ob["status"] == "failed"]
    assert [ob["family"] for ob in failed] == ["CompleteAssignorRun"]
    assert any("ranking counts the run in flight" in r for r in doc["reasons"])
    assert not any("ranking" in r and "not checked" in r for r in doc["reasons"])
    assert doc["ranking"]["obligations"] == []
    assert main(["prove", "--variant", "two-runs-in-flight", "--quiet"]) == 2
    assert (
        main(["prove", "--preset", "MUT2_OFFLOAD", *variant[:1], "install-run-after-deletion"]) == 2
    )
    static = ["prove", "--preset", "MUT2_OFFLOAD_STATIC", "--quiet"]
    assert main([*static, "--variant", "install-before-static-replacement"]) == 2
    assert main(["prove", "--preset", "OFFLOAD", "--clients", "--quiet"]) == 2
    assert main(["prove", "--variant", "reject-epoch-zero-rejoin", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 5
    assert "ranking's fairness is on honest heartbeats" in err
    assert "a config that has offload and it" in err
    assert "offload and group deletion" in err
    assert "ValidTargetAssignment.Covers" in err
    assert "no KIP-1263 assignor runs" in err
    assert {"install-before-static-replacement"} < OFFLOAD_VARIANTS
