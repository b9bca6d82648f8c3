"""Z3 as a prover (invariants/z3/proof/): the symbolic relation agrees with the Python
model on model steps, the inductive invariant is proved, a broken rule gives a decoded
counterexample to induction, and Z3's unknown is a verdict.

Every bound here is a number of states, steps or obligations, never seconds.
"""

from __future__ import annotations

import json
import pathlib
import random
from collections.abc import Iterator
from dataclasses import replace

import pytest
import z3

from groupcheck.cli import main
from groupcheck.mutants import MUTANTS
from invariants.expr import compile_expr
from invariants.z3.proof.agreement import StepCheck, check_step
from invariants.z3.proof.bmc import search
from invariants.z3.proof.clients import REQUEST_REPORTS, diagnose
from invariants.z3.proof.crosscheck import bfs_steps
from invariants.z3.proof.induction import (
    INVARIANT,
    LEMMAS,
    OFFLOAD_LEMMAS,
    STATIC_INVARIANT,
    STATIC_LEMMAS,
    STATIC_OFFLOAD_LEMMAS,
    STEP_TARGETS,
    Prover,
    invariant_for,
    steps_for,
)
from invariants.z3.proof.obligations import Obligation, Result, run
from invariants.z3.proof.reading import OutsideAbstraction, read
from invariants.z3.proof.state import Concrete, SymState, project
from invariants.z3.proof.transition import VARIANTS, Options, families, family_of
from model import system
from model.actions import Action, DeliverMessage, SendHeartbeat, Subscribe
from model.config import Config
from model.consumer import system as consumer_system
from model.path import Path
from model.presets import PRESETS
from model.records import State
from model.scenario import Script, stable_state

Step = tuple[State, Action, State]


def _run(prover: Prover, only: list[str] | None = None) -> list[Result]:
    """The prover's obligations (of the goals in ``only``), run by the obligation runner."""
    return run(prover.obligations(only), prover.query, prover.policy())


def _walk_steps(config: Config, seed: int, walks: int, length: int) -> Iterator[Step]:
    rng = random.Random(seed)
    for _ in range(walks):
        s = system.initial(config)
        assert isinstance(s, State)
        for _ in range(length):
            actions = system.enabled(s, config)
            if not actions:
                break
            a = rng.choice(actions)
            t = system.step(s, a, config)
            assert isinstance(t, State)
            yield s, a, t
            s = t


def _values(state: State) -> Concrete:
    """The projection without its domain hints (the member ids of the clients)."""
    return replace(project(state), extra_members=(), extra_partitions=())


def _check(steps: Iterator[Step], config: Config) -> dict[str, int]:
    """Every step is allowed by its family, and where the family is deterministic given
    the step, the model's successor is the relation's only one. ``Unchanged`` steps are
    compared on the projection directly (that is all the family says)."""
    seen: dict[str, int] = {}
    for pre, action, post in steps:
        family = family_of(action)
        seen[family] = seen.get(family, 0) + 1
        if family == "Unchanged":
            assert _values(pre) == _values(post), action
            continue
        result = check_step(pre, action, post, config)
        assert result.allowed == "yes", (action, result)
        assert result.unique in (None, "yes"), (action, result)
    return seen


# --------------------------------------------------------------------------- agreement


def test_relation_allows_every_tiny_step_bfs() -> None:
    seen = _check(bfs_steps(PRESETS["TINY"], max_states=100), PRESETS["TINY"])
    assert seen["DeliverMessage.heartbeat"] > 20
    assert {"DeliverMessage.leave", "SessionTimeout"} <= set(seen), seen


@pytest.mark.parametrize(
    ("preset", "families_expected"),
    [
        ("SMALL", {"DeliverMessage.heartbeat", "DeliverMessage.offset_commit"}),
        ("MUT2_CRASH", {"DeliverMessage.heartbeat", "SessionTimeout"}),
        ("MUT2_TOPICS", {"DeliverMessage.heartbeat", "MetadataChange"}),
        ("MUT2_FAILOVER", {"CoordinatorFailover", "CoordinatorLoaded"}),
        ("KIP848_CASE_STUDY", {"ComputeTargetAssignment"}),
        # KIP-1251 assignment epochs: the fields the relation keeps with them agree too.
        ("MUT2_COMMIT_EPOCHS", {"DeliverMessage.heartbeat", "DeliverMessage.offset_commit"}),
    ],
)
def test_relation_allows_model_walks(preset: str, families_expected: set[str]) -> None:
    config = PRESETS[preset]
    seen = _check(_walk_steps(config, seed=1, walks=3, length=30), config)
    assert families_expected <= set(seen), seen


@pytest.mark.parametrize("variant", [None, "strict-commit-epoch"])
def test_relation_agrees_on_a_commit_racing_the_epoch_bump(variant: str | None) -> None:
    """KAFKA-20066's race (tests/model/test_assignment_epochs.py): A's auto-commit at
    epoch 1 arrives after its acknowledgement moved it to epoch 2. Every step is allowed
    and determined by the relation over the KIP-1251 fields — the commit accepted by the
    reference rule, refused by the mutant's with ``holder_rejected`` set."""
    from tests.model.test_assignment_epochs import RACE, race

    config = RACE if variant is None else replace(RACE, rules=MUTANTS[variant].rules)
    options = Options.of(config, variant)
    assert options.assignment_epochs
    state = consumer_system.consumer_initial(config)
    for action in race(config).actions:
        post = consumer_system.consumer_step(state, action, config)
        if family_of(action) != "Unchanged":
            result = check_step(state, action, post, config, options=options)
            assert (result.allowed, result.unique) == ("yes", "yes"), (action, result)
        state = post
    assert family_of(action) == "DeliverMessage.offset_commit"
    assert project(state, epochs=True).holder_rejected is (variant is not None)


STATIC_PATH = (
    ("SendHeartbeat", "A"),
    ("DeliverMessage", "A", True),
    ("DeliverMessage", "A", False),
    ("SendHeartbeat", "B"),
    ("DeliverMessage", "B", True),
    ("TemporaryLeave", "A"),
    ("ReleaseAssignment", "A"),
    ("SendHeartbeat", "A"),
    ("DeliverMessage", "A", True),
    ("Restart", "A"),
    ("SendHeartbeat", "A"),
    ("DeliverMessage", "A", True),
)
"""On ``MUT2_STATIC``: A joins and is assigned, B joins, A leaves with -2 (its partitions
stay held at epoch -2) and a new process of instance ``a`` joins under a new member id,
replacing it (``replace_static_member``)."""


def _matches(action: Action, want: tuple[object, ...]) -> bool:
    if type(action).__name__ != want[0]:
        return False
    if isinstance(action, DeliverMessage):
        return action.message.client == want[1] and action.message.to_coordinator == want[2]
    return getattr(action, "client", None) == want[1]


@pytest.mark.parametrize("variant", [None, "static-replacement-keeps-both"])
def test_relation_agrees_on_a_static_replacement(variant: str | None) -> None:
    """Every coordinator step of ``STATIC_PATH`` is allowed and determined by the relation
    with static members — the -2 leave, and the replacement that the reference rules write
    (the holder's assignment moved to the new member id) and the mutant's refuses
    (UNKNOWN_SERVER_ERROR: the copy's partitions are still held at -2)."""
    base = PRESETS["MUT2_STATIC"]
    config = base if variant is None else replace(base, rules=MUTANTS[variant].rules)
    options = Options.of(config, variant)
    assert options.static_members
    state = consumer_system.consumer_initial(config)
    families = []
    for want in STATIC_PATH:
        action = next(a for a in system.enabled(state, config) if _matches(a, want))
        post = consumer_system.consumer_step(state, action, config)
        family = family_of(action)
        families.append(family)
        if family != "Unchanged":
            result = check_step(state, action, post, config, options=options)
            assert (result.allowed, result.unique) == ("yes", "yes"), (action, result)
        state = post
    assert "DeliverMessage.static_leave" in families
    members = set(state.group.members)
    # The reference rules replaced A by A.1; the mutant's write was refused: A stays at -2.
    assert members == ({"A.1", "B"} if variant is None else {"A", "B"})


def test_relation_allows_the_f1_path_of_small() -> None:
    """F1's path through a lost heartbeat (docs/findings.md) is a path of the relation:
    the coordinator's release of the unreported partition is one of its heartbeats."""
    config = PRESETS["SMALL"]
    path = Path.decode(config, "0000a221200")
    states = list(path.states())
    steps = [
        (s, a, t)
        for a, s, t in zip(path.actions, states[:-1], states[1:], strict=True)
        if isinstance(s, State) and isinstance(t, State)
    ]
    assert len(steps) == len(path.actions)
    seen = _check(iter(steps), config)
    assert seen["DeliverMessage.heartbeat"] == 3


def _revocation_step(config: Config) -> Step:
    """A holds foo-0 and foo-1 at epoch 1; B joins and is targeted one of them; the step
    is the coordinator handling A's next heartbeat (the revocation)."""
    script = Script(config, stable_state(config, 1, {"A": {("foo", 0), ("foo", 1)}}))
    script.do(Subscribe("B"))
    script.heartbeat("B")
    script.do(SendHeartbeat("A"))
    pre = script.state
    post = script.deliver("A", to_coordinator=True)
    return pre, script.actions[-1], post


def test_agreement_catches_a_model_rule_the_relation_does_not_have() -> None:
    """The check can fail: with a mutant's rules the Python model takes a heartbeat step
    the reference relation, given the same request, does not produce; with the reference
    rules the same step is the relation's only successor."""
    mutant = MUTANTS["revoke-without-waiting"]
    reference = mutant.config
    pre, action, post = _revocation_step(reference)
    assert family_of(action) == "DeliverMessage.heartbeat"
    assert any(m.revoking for m in project(post).members.values())
    assert check_step(pre, action, post, reference) == StepCheck(
        "DeliverMessage.heartbeat", "yes", "yes"
    )
    broken = replace(reference, rules=mutant.rules)
    pre, action, post = _revocation_step(broken)
    assert not any(m.revoking for m in project(post).members.values())
    result = check_step(pre, action, post, broken, options=Options.of(reference))
    assert result.unique == "no"


def test_lemmas_hold_on_reached_states() -> None:
    """The strengthening lemmas are true of the model's reachable states (Python reading
    of the same expressions on the abstraction's snapshot)."""
    for preset in ("TINY", "MUT2_CRASH", "MUT2_FAILOVER", "MUT2_STATIC"):
        config = PRESETS[preset]
        invariant = invariant_for(Options.of(config))
        for _, _, post in bfs_steps(config, max_states=200):
            snap = project(post).snapshot()
            for c in invariant:
                assert compile_expr(c.expr)(snap, {}), (preset, c.name)


# --------------------------------------------------------------------------- proofs


def test_every_family_is_satisfiable_under_the_invariant() -> None:
    """No proof is vacuous: from a state of the invariant, every family has a step, and
    the heartbeat family has one that changes a member's assignment."""
    pre, post = SymState.fresh("pre"), SymState.fresh("post")
    for fam in families(pre, post, Options()):
        s = z3.Solver()
        for c in INVARIANT:
            s.add(read(c.expr, now=pre))
        s.add(fam.formula)
        if fam.name == "DeliverMessage.heartbeat":
            m, p = fam.params["member"], z3.Const("q", pre.pe.domain(0))
            s.add(pre.is_member(m), z3.Exists([p], post.assigned(m, p) != pre.assigned(m, p)))
        assert s.check() == z3.sat, fam.name


@pytest.mark.parametrize(
    "options",
    [
        Options(),
        Options(
            compute_target_in_heartbeat=False,
            reconcile_while_assigning=False,
            rejoin_with_epoch_zero=False,
            realign_empty_group=True,
        ),
    ],
    ids=["defaults", "separate-target-and-old-switches"],
)
def test_the_invariant_is_proved(options: Options) -> None:
    """One proof: every obligation of the reference encoding is unsat (under the default
    switches, and under the other value of each switch the core reads)."""
    results = _run(Prover(options))
    failed = [(r.obligation.name, r.status, r.reason) for r in results if r.status != "proved"]
    assert not failed
    goals = {r.obligation.goal for r in results}
    assert {
        "NoDoubleMemberAssignment",
        "HandOutOnlyReleased",
        "EpochOrder.AssignmentEpoch",
        "EpochOrder.MemberEpoch",
        "MemberEpochMonotone",
        "OffsetCommitAtValidEpoch",
    } <= goals
    n = len(families(*_two(), options))
    assert len(results) == len(INVARIANT) * (1 + n) + len(STEP_TARGETS) * n


def _two() -> tuple[SymState, SymState]:
    return SymState.fresh("a"), SymState.fresh("b")


@pytest.mark.parametrize(
    ("variant", "goal", "family"),
    [
        ("bookkeeping-drops-pending", "Lemma.PartitionEpochs", "DeliverMessage.heartbeat"),
        ("ignore-partition-epochs", "NoServerError", "DeliverMessage.heartbeat"),
        ("accept-stale-commit-epoch", "OffsetCommitAtValidEpoch", "DeliverMessage.offset_commit"),
    ],
)
def test_a_broken_rule_gives_a_decoded_cti(variant: str, goal: str, family: str) -> None:
    assert variant in MUTANTS  # the variant encodes a mutant of the catalogue
    mutant = MUTANTS[variant]
    options = Options(variant=variant, kernel=mutant.kernel, commit_kernel=mutant.commit_kernel)
    results = _run(Prover(options), only=[goal])
    failed = [r for r in results if r.status == "failed"]
    assert [r.obligation.family for r in failed] == [family]
    cti = failed[0].cti
    assert cti is not None
    assert cti.python_confirms
    assert cti.family == family
    text = "\n".join(cti.lines())
    assert "pre-state" in text
    assert "post-state" in text


def test_variants_are_catalogue_mutants() -> None:
    assert set(VARIANTS) <= set(MUTANTS)


def test_unknown_is_never_proved(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(z3.Solver, "check", lambda self, *a: z3.unknown)
    monkeypatch.setattr(z3.Solver, "reason_unknown", lambda self: "timeout")
    results = _run(Prover(), only=["EpochOrder.AssignmentEpoch"])
    assert results
    assert {r.status for r in results} == {"unknown"}
    assert {r.reason for r in results} == {"timeout"}


def test_a_client_property_is_outside_the_abstraction() -> None:
    from invariants.properties import OWNED_PARTITIONS_ARE_HELD

    assert OWNED_PARTITIONS_ARE_HELD.expr is not None
    with pytest.raises(OutsideAbstraction):
        read(OWNED_PARTITIONS_ARE_HELD.expr, now=SymState.fresh("x"))


STATIC_OBLIGATIONS = (
    Obligation("initiation", "Lemma.StaticInstanceUnique", None),
    Obligation("consecution", "Lemma.StaticInstanceUnique", "DeliverMessage.heartbeat"),
    Obligation("consecution", "NoServerError", "DeliverMessage.heartbeat"),
    Obligation("consecution", "Lemma.PartitionEpochs", "DeliverMessage.static_leave"),
    Obligation("consecution", "Lemma.MemberEpochNonNegativeOrLeft", "DeliverMessage.static_leave"),
    Obligation("step", "HandOutOnlyReleased", "DeliverMessage.heartbeat"),
)
"""A sample of the static relation's obligations (``prove --preset MUT2_STATIC`` checks all
250 of them, about 31 CPU seconds): the replacement and the -2 leave."""


def test_the_static_invariant_is_proved_on_a_sample() -> None:
    """With static members the invariant (``STATIC_INVARIANT``) is inductive: sampled here
    on the heartbeat's replacement and the -2 leave; the family is not vacuous either (a
    replacement is a step from a state of the invariant)."""
    options = Options(static_members=True)
    prover = Prover(options, invariant=STATIC_INVARIANT)
    assert {ob.family for ob in prover.obligations()} >= {"DeliverMessage.static_leave"}
    for ob in STATIC_OBLIGATIONS:
        assert prover.check(ob).status == "proved", ob.name
    pre, post = SymState.fresh("pre", static=True), SymState.fresh("post", static=True)
    fam = next(f for f in families(pre, post, options) if f.name == "DeliverMessage.heartbeat")
    s = z3.Solver()
    for c in STATIC_INVARIANT:
        s.add(read(c.expr, now=pre))
    hm, holder = fam.params["member"], fam.params["holder"]
    s.add(fam.formula, fam.facts["accepted"], hm != holder, pre.is_member(holder))
    s.add(fam.params["epoch"] == 0, post.is_member(hm), z3.Not(post.is_member(holder)))
    assert s.check() == z3.sat


def test_the_static_mutant_gives_a_decoded_cti() -> None:
    """``static-replacement-keeps-both`` breaks ``NoServerError`` at the heartbeat: the copy's
    partitions are still held at -2 by the holder it keeps."""
    prover = Prover(
        Options(static_members=True, variant="static-replacement-keeps-both"),
        invariant=STATIC_INVARIANT,
    )
    result = prover.check(Obligation("consecution", "NoServerError", "DeliverMessage.heartbeat"))
    assert result.status == "failed"
    assert result.cti is not None
    assert result.cti.python_confirms


def test_lemmas_are_documented() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[4] / "docs" / "invariants.md").read_text()
    for lemma in (*LEMMAS, *STATIC_LEMMAS, *OFFLOAD_LEMMAS, *STATIC_OFFLOAD_LEMMAS):
        assert f"`{lemma.name}`" in doc, lemma.name


# --------------------------------------------------------------------------- the command


def test_prove_command_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    # A subset of the obligations proves nothing inductive: the others are assumed.
    assert main(["prove", "--json", "--quiet", "--only", "EpochOrder.MemberEpoch"]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "inconclusive"
    assert doc["summary"]["failed"] == 0
    assert all(ob["status"] == "proved" for ob in doc["obligations"])
    assert "Lemma.PartitionEpochs" in doc["reasons"][0]
    code = main(
        [
            "prove",
            "--json",
            "--quiet",
            "--variant",
            "accept-stale-commit-epoch",
            "--only",
            "OffsetCommitAtValidEpoch",
        ]
    )
    assert code == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "violation"
    assert any("cti" in ob for ob in doc["obligations"])
    assert main(["prove", "--preset", "STATIC", "--clients", "--quiet"]) == 2
    capsys.readouterr()
    layer = ["--only", "Lemma.ReceivedTargetIsHeld"]
    code = main(["prove", "--json", "--quiet", "--clients", "--natural-lemmas", *layer])
    assert code == 1
    doc = json.loads(capsys.readouterr().out)
    failed = [ob for ob in doc["client_layer"]["obligations"] if ob["status"] == "failed"]
    assert [ob["family"] for ob in failed] == ["DeliverMessage.heartbeat"]
    assert failed[0]["python_confirms"] is True


def test_prove_command_unknown_exits_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(z3.Solver, "check", lambda self, *a: z3.unknown)
    monkeypatch.setattr(z3.Solver, "reason_unknown", lambda self: "timeout")
    assert main(["prove", "--quiet", "--only", "EpochOrder.AssignmentEpoch"]) == 3
    assert "UNKNOWN" in capsys.readouterr().out


# --------------------------------------------------------------------------- F1 (client layer)


def test_f1_is_where_owned_partitions_are_held_stops_being_inductive() -> None:
    """Without the client-side fix, the natural strengthening of OwnedPartitionsAreHeld
    (what a client received is held by its member) fails at the coordinator's heartbeat:
    the request does not report a received target, the coordinator takes it as revoked
    (docs/findings.md, F1)."""
    results = diagnose(
        fix=False,
        request_lemma=False,
        only=("OwnedPartitionsAreHeld", "Lemma.ReceivedTargetIsHeld"),
    )
    failed = [r for r in results if r.status == "failed"]
    assert {(r.obligation.goal, r.obligation.family) for r in failed} <= {
        ("OwnedPartitionsAreHeld", "DeliverMessage.heartbeat"),
        ("Lemma.ReceivedTargetIsHeld", "DeliverMessage.heartbeat"),
    }
    received = [r for r in failed if r.obligation.goal == "Lemma.ReceivedTargetIsHeld"]
    assert received
    assert received[0].cti is not None
    assert received[0].cti.python_confirms
    assert "not applied yet" in "\n".join(received[0].cti.lines())
    assert not [r for r in results if r.status == "unknown"]


def test_without_the_fix_the_heartbeat_does_not_report_what_the_client_will_consume() -> None:
    results = diagnose(fix=False, request_lemma=True, only=(REQUEST_REPORTS.name,))
    failed = [r for r in results if r.status == "failed"]
    assert [r.obligation.family for r in failed] == ["SendHeartbeat"]
    assert failed[0].cti is not None
    assert failed[0].cti.python_confirms


def test_reporting_pending_additions_makes_the_client_layer_inductive() -> None:
    results = diagnose(fix=True, request_lemma=True)
    assert {r.obligation.goal for r in results} >= {"OwnedPartitionsAreHeld", REQUEST_REPORTS.name}
    assert [(r.obligation.name, r.status) for r in results if r.status != "proved"] == []


# --------------------------------------------------------------------------- bounded model checking


def test_bmc_finds_nothing_shallow_in_the_reference_rules() -> None:
    for goal in ("NoDoubleMemberAssignment", "OffsetCommitAtValidEpoch"):
        assert search(goal, 2, Options()).status == "ok"


def test_explore_engine_bmc(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["explore", "--engine", "bmc", "--depth", "2", "--json", "--quiet"]
    args += ["--out", str(tmp_path), "--max-states", "200", "--budget", "3600"]
    code = main(
        [*args, "--mutant", "accept-stale-commit-epoch", "--only", "OffsetCommitAtValidEpoch"]
    )
    assert code == 1
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["properties"]
    assert row["status"] == "violation"
    assert row["replayed"] is True
    capsys.readouterr()
    # A catalogue mutant listed outside (stamp-request-epoch; here one more) is refused with its
    # reason, in one line.
    monkeypatch.setitem(
        MUTANTS,
        "validate-stale-claims",
        replace(MUTANTS["validate-stale-claims"], outside="a classic assignor rule, say"),
    )
    assert main([*args, "--mutant", "validate-stale-claims"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "outside the symbolic core" in err
    assert "classic assignor rule, say" in err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["prove", "--preset", "CLASSIC_COOPERATIVE"], "this config is classic"),
        (
            ["prove", "--preset", "BATCHING", "--clients"],
            "the client layer has no KIP-1263 assignment interval",
        ),
        (
            [
                *("explore", "--engine", "bmc", "--depth", "1"),
                *("--preset", "BATCHING", "--mutant", "ack-while-revoking"),
            ],
            "client layer has no KIP-1263 assignment interval",
        ),
    ],
)
def test_prove_refuses_rules_outside_its_abstraction(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A proof is never reported for rules the symbolic relation (or the client layer on
    top of it) does not read."""
    from groupcheck.cli import main

    assert main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert words in err


def test_expiry_and_deletion_step_properties_are_proved_and_their_variants_fail(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With KIP-211 expiry and group deletion in the relation (``GROUP_DELETION``: both,
    and ``delete_expired_groups``), ``NoLiveOffsetExpires`` and
    ``GroupDeletedOnlyWhenEmpty`` hold on every step from a state of the invariant (with
    ``Lemma.SubscribedOnlyByMembers``) — here on the families that remove offsets or
    delete the group, which keep that lemma too; under each mutant's variant its property
    fails on the family the variant changes. ``prove --variant`` of either without a
    config that has the family is refused. (``prove --preset GROUP_DELETION`` proves all
    its 283 obligations: docs/benchmarks.md.)"""
    from invariants.z3.proof.induction import invariant_for, steps_for
    from model.presets import PRESETS

    config = PRESETS["GROUP_DELETION"]
    options = Options.of(config)
    invariant = invariant_for(options)
    steps = steps_for(options)
    assert "Lemma.SubscribedOnlyByMembers" in {c.name for c in invariant}
    new = {"NoLiveOffsetExpires", "GroupDeletedOnlyWhenEmpty"}
    assert new <= {s.name for s in steps}
    prover = Prover(options, invariant=invariant, steps=steps)
    # The families that remove offsets or delete the group (the others keep both).
    movers = ("ExpireOffsets", "DeleteGroup", "MetadataChange", "DeliverMessage.offset_commit")
    obligations = [
        ob
        for ob in prover.obligations()
        if ob.family in movers
        and (ob.goal in new or (ob.goal == "Lemma.SubscribedOnlyByMembers" and ob.kind != "step"))
    ]
    assert len(obligations) == 3 * len(movers)
    assert all(prover.check(ob).status == "proved" for ob in obligations)
    for variant, goal, family in (
        ("expire-by-commit-time", "NoLiveOffsetExpires", "ExpireOffsets"),
        ("delete-non-empty-group", "GroupDeletedOnlyWhenEmpty", "DeleteGroup"),
    ):
        mutated = Prover(Options.of(config, variant), invariant=invariant, steps=steps)
        (ob,) = [o for o in mutated.obligations() if (o.goal, o.family) == (goal, family)]
        result = mutated.check(ob)
        assert result.status == "failed"
        assert result.cti is not None
        assert result.cti.python_confirms
        assert main(["prove", "--variant", variant, "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert "a config that has it" in err


def test_prove_and_bmc_refuse_a_mixed_config(capsys: pytest.CaptureFixture[str]) -> None:
    """The proof's relation is the consumer protocol's: a mixed config (classic members,
    conversions) is refused, never reported proved; BMC's mixed relation refuses a mixed
    config with what it lacks (KIP-1263 offload)."""
    from groupcheck.cli import main

    assert main(["prove", "--clients", "--preset", "MIGRATION_UPGRADE", "--quiet"]) == 2
    bmc = ["explore", "--engine", "bmc", "--depth", "1", "--preset", "MIGRATION_OFFLOAD"]
    assert main(bmc) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2
    assert "this config is mixed" in err
    assert "the mixed relation has no KIP-1263 assignor offload" in err


def test_prove_refuses_kip1251_variants_without_assignment_epochs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A variant of a rule on the KIP-1251 assignment epochs is proved against only on a
    config that records them: without one it is refused, not reported proved."""
    assert main(["prove", "--variant", "strict-commit-epoch", "--quiet"]) == 2
    assert main(["prove", "--variant", "stamp-request-epoch", "--preset", "MUT2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2
    assert err.count("KIP-1251") == 2
    assert "--preset MUT2_EPOCH_HISTORY" in err


def test_assignment_history_proved_and_stamp_request_epoch_breaks_it() -> None:
    """The KIP-1251 history properties are inductive for any group size
    (``AssignmentEpochHolderUnique``; ``EpochCommitFromHolder`` on every step), and the
    catalogue's ``stamp-request-epoch`` turns the first into a counterexample to induction
    at the heartbeat — a join stamped at epoch 0 like an earlier holder — that the Python
    reading confirms. (The heartbeat's obligations here; every family's: ``prove --preset
    MUT2_EPOCH_HISTORY``, 334 proved, docs/invariants.md.)"""
    config = PRESETS["MUT2_EPOCH_HISTORY"]
    options = Options.of(config)
    prover = Prover(options, invariant=invariant_for(options), steps=steps_for(options))
    goals = ["AssignmentEpochHolderUnique", "EpochCommitFromHolder"]
    # The heartbeat, the step that stamps (every family's: ``prove``); the commit check.
    proved = prover.check(Obligation("consecution", goals[0], "DeliverMessage.heartbeat"))
    assert proved.status == "proved", proved.status
    results = _run(prover, only=goals[1:])
    assert results
    assert {r.status for r in results} == {"proved"}
    broken = Options.of(config, "stamp-request-epoch")
    prover = Prover(broken, invariant=invariant_for(broken), steps=steps_for(broken))
    result = prover.check(Obligation("consecution", goals[0], "DeliverMessage.heartbeat"))
    assert result.status == "failed"
    assert result.cti is not None
    assert result.cti.python_confirms
    assert any("assignment history" in line for line in result.cti.lines())


FAMILIES_OF_EPOCH_CONFIG = (
    "DeliverMessage.heartbeat",
    "DeliverMessage.leave",
    "DeliverMessage.offset_commit",
    "SessionTimeout",
    "RebalanceTimeout",
    "MetadataChange",
    "CoordinatorFailover",
    "CoordinatorLoaded",
    "Unchanged",
)
"""The families of ``MUT2_EPOCH_HISTORY``'s relation (nine: no offload, expiry or deletion)."""


def test_bmc_refuses_a_convergence_lasso_outside_the_lasso_layer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The lasso search runs over the client layer, which has dynamic members only, and
    its fairness names no poll-timer steps."""
    argv = ["explore", "--engine", "bmc", "--depth", "2", "--only", "Convergence", "--quiet"]
    assert main([*argv, "--preset", "MUT2_STATIC"]) == 2
    assert main([*argv, "--mutant", "poll-timeout-keeps-partitions"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2
    assert "dynamic members only" in err
    assert "no poll timers" in err
