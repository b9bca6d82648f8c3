"""``groupcheck prove --agreement``: the relation against the Python model on seeded walks
(invariants/z3/proof/crosscheck.py). Every budget here is a number of walks and steps."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import z3

from groupcheck.cli import main
from groupcheck.mutants import MUTANTS
from invariants.z3.proof.agreement import StepCheck, check_step, refused_write
from invariants.z3.proof.crosscheck import bfs_steps, cross_check, possible_families
from invariants.z3.proof.transition import Options
from model import system
from model.presets import PRESETS

AGREE = ["prove", "--agreement", "--quiet", "--bfs", "0"]  # the walks alone, as written


def test_agreement_ok_on_a_small_preset(capsys: pytest.CaptureFixture[str]) -> None:
    small = ["--preset", "MUT2_REGEX", "--walks", "1", "--length", "15", "--seed", "1"]
    code = main([*AGREE, *small])
    text = capsys.readouterr().out
    assert code == 0, text
    code = main([*AGREE, "--json", *small])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["result"], doc["walks"], doc["length"], doc["seed"]) == ("ok", 1, 15, 1)
    assert doc["skipped"] == []
    (row,) = doc["configs"]
    assert row["config"] == "MUT2_REGEX"
    assert row["missing"] == []
    assert row["disagreement"] is None
    checked = {f["family"]: f for f in row["families"]}
    assert set(row["possible"]) <= {name for name, f in checked.items() if f["steps"]}
    assert sum(f["steps"] for f in checked.values()) == row["steps"]
    assert all(f["allowed"] == f["steps"] and f["unknown"] == 0 for f in checked.values())
    heartbeat = checked["DeliverMessage.heartbeat"]
    assert heartbeat["deterministic"] == heartbeat["unique"] == heartbeat["steps"] > 0
    assert f"{row['steps']} steps" in text


def test_agreement_names_the_families_not_reached(capsys: pytest.CaptureFixture[str]) -> None:
    short = ["--preset", "TINY", "--walks", "1", "--length", "2"]
    assert main([*AGREE, *short, "--seek", "0"]) == 3
    out = capsys.readouterr().out
    assert out.startswith("INCONCLUSIVE")
    assert "not reached: " in out
    assert "SessionTimeout" in out.split("not reached: ")[1]
    # A search of the model finds a state for each family the walk missed (the steps it
    # checks are counted apart); within 100 states it does not find them all.
    assert main([*AGREE, *short, "--json", "--seek", "100"]) == 3
    cut = json.loads(capsys.readouterr().out)["configs"][0]
    assert main([*AGREE, *short, "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["configs"]
    assert row["missing"] == []
    assert row["seek_steps"] >= len(cut["missing"]) > 0
    assert row["steps"] == row["seek_steps"] + 2 + row["side_steps"]


def test_a_model_rule_the_relation_does_not_have_is_a_disagreement(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check can fail: MUT2 with the rules of a mutant that removes a member without
    bumping the group epoch; the reference relation's timer always bumps it."""
    mutant = MUTANTS["no-epoch-bump-on-fence"]
    broken = replace(PRESETS["MUT2"], rules=mutant.rules)
    outcome = cross_check(broken, walks=2, length=20, seed=2, options=Options.of(broken))
    (found,) = outcome.disagreements()
    assert outcome.verdict == "violation"
    assert found.family == "SessionTimeout" == type(found.action).__name__
    assert found.check is not None
    assert found.check.allowed == "no"
    assert found.post.group.group_epoch == found.pre.group.group_epoch
    monkeypatch.setattr("model.presets.PRESETS", {**PRESETS, "MUT2": broken})
    code = main([*AGREE, "--preset", "MUT2", "--walks", "2", "--length", "20", "--seed", "2"])
    out = capsys.readouterr().out
    assert code == 1
    assert "DISAGREEMENT in MUT2" in out
    assert "family: SessionTimeout (allowed no" in out
    assert "action: SessionTimeout" in out
    assert "pre-state:" in out


def test_deletion_recreation_and_expiry_agree_step_by_step() -> None:
    """Group deletion and KIP-211 expiry step by step (``Options.group_deletion``,
    ``offset_expiry``): on ``GROUP_DELETION`` with one client that may subscribe again, the
    first step (in BFS order) of each kind below is the relation's, the model's successor
    the only one — a join that creates a deleted group again, an expiry that deletes the
    emptied group, a DeleteGroups refused while the group has a member; and the same
    refused request, deleting the group under ``delete-non-empty-group``'s rules, is its
    variant's step and not the reference relation's."""
    from collections.abc import Callable

    from model.actions import Action, DeleteGroup, ExpireOffsets
    from model.config import ClientSpec
    from model.records import State

    config = replace(
        PRESETS["GROUP_DELETION"],
        name="GROUP_DELETION_RESUBSCRIBE",
        clients=(ClientSpec("A", ("foo",)),),
        perturbations=frozenset({"Leave", "Subscribe", "DeleteGroup", "ExpireOffsets"}),
        max_perturbations=4,
    )
    kinds: dict[str, Callable[[State, Action, State], bool]] = {
        "recreated": lambda pre, a, post: pre.group.deleted and not post.group.deleted,
        "expired and deleted": lambda pre, a, post: (
            isinstance(a, ExpireOffsets) and post.group.deleted
        ),
        "refused": lambda pre, a, post: isinstance(a, DeleteGroup) and bool(pre.group.members),
    }
    found: dict[str, tuple[State, Action, State]] = {}
    for pre, action, post in bfs_steps(config, 2_000):
        for kind, test in kinds.items():
            if kind not in found and test(pre, action, post):
                found[kind] = (pre, action, post)
        if len(found) == len(kinds):
            break
    assert set(found) == set(kinds)
    options = Options.of(config)
    assert options.group_deletion
    assert options.offset_expiry
    for pre, action, post in found.values():
        check = check_step(pre, action, post, config, options=options)
        assert (check.allowed, check.unique) == ("yes", "yes"), check
    pre, action, _ = found["refused"]
    mutant = MUTANTS["delete-non-empty-group"]
    mutated = replace(config, rules=mutant.rules)
    stepped = system.step(pre, action, mutated)
    assert isinstance(stepped, State)
    assert stepped.group.deleted
    variant = Options.of(mutated, "delete-non-empty-group")
    assert check_step(pre, action, stepped, mutated, options=variant).allowed == "yes"
    assert check_step(pre, action, stepped, mutated, options=options).allowed == "no"


def test_offload_runs_agree_and_an_offload_rule_the_relation_does_not_have_is_caught() -> None:
    """KIP-1263 assignor offload: on a short walk of ``MUT2_OFFLOAD`` a run is started and
    installed, and the relation allows exactly the model's steps; with the rules of
    ``install-without-epoch`` the reference relation refuses the install (its assignment
    epoch stays), and the variant's relation allows it."""
    config = PRESETS["MUT2_OFFLOAD"]
    outcome = cross_check(config, walks=1, length=8, seed=0, seek_states=300)
    assert outcome.disagreements() == []
    (run,) = [f for f in outcome.families if f.family == "CompleteAssignorRun"]
    assert run.steps == run.allowed == run.unique > 0
    mutant = MUTANTS["install-without-epoch"]
    broken = replace(config, rules=mutant.rules)
    outcome = cross_check(broken, walks=1, length=8, seed=0, seek_states=300)
    (found,) = outcome.disagreements()
    assert found.family == "CompleteAssignorRun"
    assert found.check is not None
    assert found.check.allowed == "no"
    options = Options.of(broken, "install-without-epoch")
    check = check_step(found.pre, found.action, found.post, broken, options=options)
    assert (check.allowed, check.unique) == ("yes", "yes")


def test_a_static_replacement_while_a_run_is_in_flight_agrees() -> None:
    """KIP-1263 with static members (KAFKA-20292): A joins and starts a run, leaves with -2,
    a new process of its instance replaces it, and the run completes: the replacement and
    the install that moves A's entry to the new member id are each the relation's only
    successor."""
    config = PRESETS["MUT2_OFFLOAD_STATIC"]
    script = [
        "SendHeartbeat(client='A')",
        "coordinator",
        "coordinator → A",
        "TemporaryLeave(client='A')",
        "ReleaseAssignment(client='A')",
        "SendHeartbeat(client='A')",
        "coordinator",
        "Restart(client='A')",
        "SendHeartbeat(client='A')",
        "coordinator",
        "CompleteAssignorRun()",
    ]
    state = system.initial(config)
    for k, want in enumerate(script):
        enabled = system.enabled(state, config)
        if want.startswith("coordinator"):
            action = next(a for a in enabled if _delivers(a, want))
        else:
            action = next(a for a in enabled if repr(a) == want)
        post = system.step(state, action, config)
        if k >= len(script) - 2:  # the replacement and the install
            check = check_step(state, action, post, config)
            assert (check.allowed, check.unique) == ("yes", "yes"), (action, check)
        state = post
    (member,) = state.group.members
    assert member == "A.1"
    assert state.group.target_assignment[member]
    assert state.group.assignment_epoch == state.group.group_epoch


def _delivers(action: object, want: str) -> bool:
    """A delivery to the coordinator (``coordinator``) or to A (``coordinator → A``)."""
    from model.actions import DeliverMessage

    if not isinstance(action, DeliverMessage):
        return False
    to_coordinator = action.message.to_coordinator
    return to_coordinator if want == "coordinator" else not to_coordinator


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ([*AGREE, "--preset", "MIGRATION_BATCHING"], "no KIP-1263 assignor offload or batching"),
        (
            [*AGREE, "--variant", "no-downgrade-on-replacement", "--preset", "TINY"],
            "a variant of a mixed group's relation; this config is consumer",
        ),
        (
            [*AGREE, "--variant", "ignore-partition-epochs", "--preset", "MIXED_STATIC"],
            "this config is mixed",
        ),
        (
            [*AGREE, "--variant", "expire-while-rebalancing", "--preset", "MUT2"],
            "a variant of the classic coordinator's relation; this config is consumer",
        ),
        (
            [*AGREE, "--variant", "ignore-partition-epochs", "--preset", "CLASSIC_EAGER"],
            "this config is classic",
        ),
        ([*AGREE, "--preset", "NOPE"], "unknown preset"),
        (AGREE, "--agreement needs --preset"),
        ([*AGREE, "--all-presets", "--variant", "ignore-partition-epochs"], "--variant"),
        ([*AGREE, "--all-variants", "--variant", "ignore-partition-epochs"], "--variant"),
        ([*AGREE, "--variant", "nope"], "no symbolic variant of mutant 'nope'"),
        ([*AGREE, "--variant", "ack-while-revoking"], "a rule of the clients"),
        ([*AGREE, "--variant", "lost-partitions-kept"], "a rule of the classic protocol's clients"),
        (["prove", "--variant", "late-sync-resets-generation"], "explore --engine bmc --mutant"),
        (["prove", "--all-variants"], "--all-variants needs --agreement"),
        (["prove", "--walks", "3"], "--walks needs --agreement"),
        (["prove", "--all-presets"], "--all-presets needs --agreement"),
        (["prove", "--seek", "10"], "--seek needs --agreement"),
        ([*AGREE, "--preset", "TINY", "--walks", "0"], "--walks"),
    ],
)
def test_agreement_bad_input(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert words in captured.err


def test_agreement_refuses_a_mutant_outside_the_relations(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every catalogue mutant has a variant today; one listed outside is refused with its
    reason, in one line."""
    monkeypatch.setitem(
        MUTANTS,
        "lost-partitions-kept",
        replace(MUTANTS["lost-partitions-kept"], outside="a rule the relation lacks, say"),
    )
    assert main([*AGREE, "--variant", "lost-partitions-kept"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "outside the symbolic core: a rule the relation lacks, say" in err


def test_agreement_unknown_is_inconclusive(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(z3.Solver, "check", lambda self, *a: z3.unknown)
    monkeypatch.setattr(z3.Solver, "reason_unknown", lambda self: "timeout")
    code = main([*AGREE, "--json", "--preset", "TINY", "--walks", "1", "--length", "8"])
    assert code == 3
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["configs"]
    queried = [f for f in row["families"] if f["family"] != "Unchanged" and f["steps"]]
    assert queried
    assert all(f["unknown"] == f["steps"] and f["reasons"] == ["timeout"] for f in queried)
    assert all(f["allowed"] == 0 for f in queried)
    assert any("unknown" in r and "timeout" in r for r in row["reasons"])


def test_possible_families_follow_the_switches() -> None:
    tiny = set(possible_families(PRESETS["TINY"]))
    assert {"DeliverMessage.leave", "SessionTimeout", "RebalanceTimeout"} <= tiny
    assert not tiny & {"MetadataChange", "CoordinatorFailover", "ComputeTargetAssignment"}
    failover = set(possible_families(PRESETS["MUT2_FAILOVER"]))
    assert {"CoordinatorFailover", "CoordinatorLoaded"} <= failover
    assert "DeliverMessage.leave" not in failover
    assert "ComputeTargetAssignment" in possible_families(PRESETS["KIP848_CASE_STUDY"])
    assert "MetadataChange" in possible_families(PRESETS["MUT2_REGEX"])
    assert not {"DeliverMessage.offset_commit", "DeliverMessage.leave"} & set(
        possible_families(PRESETS["MUT2_CRASH"])
    )


def test_agreement_checks_a_variant_on_the_mutants_rules(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--variant``: the walks run the mutant's rules and each step is checked against the
    relation's variant; ``ok`` needs a step the mutated rule decided that the reference
    relation refuses. A family no reachable state enables (a search expanded them all) is
    not one missed: this mutant never waits for a revocation, so no rebalance timeout."""
    one = replace(PRESETS["MUT2"], max_perturbations=1)
    monkeypatch.setattr("model.presets.PRESETS", {**PRESETS, "MUT2": one})
    argv = [*AGREE, "--json", "--preset", "MUT2", "--walks", "1", "--length", "10"]
    assert main([*argv, "--variant", "revoke-without-waiting"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["configs"]
    assert (row["config"], row["variant"]) == (
        "MUT2+revoke-without-waiting",
        "revoke-without-waiting",
    )
    assert row["distinguished_steps"] >= 1
    assert row["mutated_steps"] >= row["distinguished_steps"]
    assert (row["missing"], row["unreachable"]) == ([], ["RebalanceTimeout"])
    # The reference relation refuses the mutant's step: the check can fail.
    mutant = MUTANTS["revoke-without-waiting"]
    broken = replace(one, rules=mutant.rules)
    outcome = cross_check(
        broken,
        walks=1,
        length=10,
        seed=0,
        seek_states=1000,
        options=Options.of(one),
        reference=one,
    )
    (found,) = outcome.disagreements()
    assert found.family == "DeliverMessage.heartbeat"
    assert outcome.mutated == outcome.distinguished == 1


def test_a_variant_its_steps_never_exercise_is_inconclusive(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--preset", "TINY", "--walks", "1", "--length", "4", "--seek", "0"]
    assert main([*AGREE, *argv, "--variant", "ignore-partition-epochs"]) == 3
    out = capsys.readouterr().out
    assert "0 decided by the mutated rules, 0 of them refused by the reference relation" in out
    assert "the variant was not told apart" in out


@pytest.mark.parametrize(
    ("variant", "field"),
    [
        ("sticky-forgets-ownership", "classic_arbitrate_claims"),
        ("assign-without-withholding", "classic_leader_assignment"),
    ],
)
def test_an_assignor_variant_not_told_apart_says_why_in_one_line(variant: str, field: str) -> None:
    """A classic assignor rule runs in the leader's client step, ``Unchanged`` to the
    relation: the reason names the rule and the SyncGroup delivery test that tells it apart
    (``prove --agreement --variant M`` ends inconclusive with it)."""
    from types import SimpleNamespace

    from groupcheck.symbolic.agreement import _row

    outcome = SimpleNamespace(
        missing=(),
        unreachable=(),
        families=(),
        distinguished=0,
        mutated=194,
        verdict="inconclusive",
        steps=283,
        side_steps=7,
        bfs_steps=0,
        seek_steps=192,
        possible=(),
        disagreements=list,
    )
    (reason,) = _row("MUTC_LEAVE", outcome, variant)["reasons"]
    assert "\n" not in reason
    assert reason.startswith(f"no step checked was one decided by {variant}'s rules")
    assert f"its rule (Rules.{field}, the leader's assignor) runs in the leader's client " in reason
    assert "which the relation sees as Unchanged" in reason
    assert "test_the_leader_assignment_is_one_its_assignor_allows" in reason
    other = _row("TINY", outcome, "ignore-partition-epochs")["reasons"]
    assert other[0].endswith("the variant was not told apart")


def test_a_refused_write_is_the_relations_server_error() -> None:
    """A heartbeat answered UNKNOWN_SERVER_ERROR (a partition-epoch conflict) is pinned as
    the relation's ``server_error`` ghost, so the reference relation, which never hands
    out an unreleased partition, refuses the step of a mutant that does."""
    mutant = MUTANTS["ignore-partition-epochs"]
    broken = mutant.mutated_config()
    step = next(
        (s, a, t)
        for s, a, t in bfs_steps(broken, 500)
        if system.step(s, a, mutant.config) != t and refused_write(s, t)
    )
    assert check_step(*step, broken, options=Options.of(mutant.config)).allowed == "no"
    variant = Options.of(broken, mutant.name)
    assert check_step(*step, broken, options=variant) == StepCheck(
        "DeliverMessage.heartbeat", "yes", "yes"
    )


def test_agreement_checks_a_classic_preset_against_the_classic_relation(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A classic config is checked against the classic coordinator's relation
    (``classic_agreement.walk_check``), with the same output; a partition added
    (``UPGRADE_TWO_BOUNCES``'s ``AddPartitions``) is a MetadataChange step. The check can
    fail: with the rules of a mutant that deletes a non-Empty group the reference relation
    refuses the deletion."""
    argv = [*AGREE, "--json", "--preset", "UPGRADE_TWO_BOUNCES", "--walks", "1"]
    assert main([*argv, "--length", "12", "--seed", "2"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["configs"]
    assert (doc["result"], row["config"], row["missing"]) == ("ok", "UPGRADE_TWO_BOUNCES", [])
    checked = {f["family"]: f for f in row["families"]}
    assert set(row["possible"]) <= {name for name, f in checked.items() if f["steps"]}
    assert "MetadataChange" in row["possible"]
    assert sum(f["steps"] for f in checked.values()) == row["steps"]
    for name, f in checked.items():
        assert f["allowed"] == f["steps"]
        if name != "Unchanged":
            assert f["unique"] == f["deterministic"] == f["steps"]
    mutant = MUTANTS["classic-delete-non-empty-group"]
    monkeypatch.setattr(
        "model.presets.PRESETS", {**PRESETS, "CLASSIC_GROUP_DELETION": mutant.mutated_config()}
    )
    argv = [*AGREE, "--preset", "CLASSIC_GROUP_DELETION", "--walks", "1", "--length", "12"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "DISAGREEMENT in CLASSIC_GROUP_DELETION+classic-delete-non-empty-group" in out
    assert "family: DeleteGroup (allowed no" in out


def test_agreement_checks_a_classic_variant(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--variant`` of a classic mutant: its rules against the classic relation's variant
    (on its scenario with fewer perturbations, to keep the search short), ``ok`` once a
    step they decided was refused by the reference relation; on a config whose steps never
    exercise the mutated rule (no DeleteGroups) it is inconclusive."""
    smaller = replace(
        PRESETS["CLASSIC_GROUP_DELETION"],
        perturbations=frozenset({"Leave", "DeleteGroup"}),
        max_perturbations=2,
    )
    monkeypatch.setattr("model.presets.PRESETS", {**PRESETS, "CLASSIC_GROUP_DELETION": smaller})
    argv = [*AGREE, "--json", "--walks", "1", "--length", "12"]
    argv += ["--preset", "CLASSIC_GROUP_DELETION"]
    assert main([*argv, "--variant", "classic-delete-non-empty-group"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["configs"]
    assert (row["variant"], row["missing"]) == ("classic-delete-non-empty-group", [])
    assert row["mutated_steps"] >= row["distinguished_steps"] >= 1
    short = [*AGREE, "--walks", "1", "--length", "4", "--seek", "0", "--preset", "CLASSIC_EAGER"]
    assert main([*short, "--variant", "classic-delete-non-empty-group"]) == 3
    assert "the variant was not told apart" in capsys.readouterr().out


def test_classic_unknown_is_inconclusive() -> None:
    from invariants.z3.proof.classic_agreement import walk_check

    def unknown(*args: object, **kwargs: object) -> StepCheck:
        return StepCheck("any", "unknown", "unknown", "timeout")

    config = PRESETS["CLASSIC_EAGER"]
    out = walk_check(config, walks=1, length=6, seed=0, checker=unknown)
    queried = [f for f in out.families if f.family != "Unchanged" and f.steps]
    assert out.verdict == "inconclusive"
    assert queried
    assert all(f.unknown == f.steps and f.reasons == ["timeout"] for f in queried)


def test_agreement_checks_a_mixed_preset_against_the_mixed_relation(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mixed config is checked against a mixed group's relation
    (``mixed_agreement.walk_check``), with the same output: every step that changes the
    projection allowed by its family as its only successor (``ClassicGroup`` one way); a
    family the search finds no reachable state for is unreachable, not missed. The check
    can fail: the rules of a mutant that admits a classic JoinGroup under the policy
    'disabled' against the reference relation are a disagreement."""
    argv = [*AGREE, "--json", "--preset", "MIXED_STATIC"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["configs"]
    assert (doc["result"], row["missing"], row["unreachable"]) == ("ok", [], ["RebalanceTimeout"])
    checked = {f["family"]: f for f in row["families"]}
    reached = {name for name, f in checked.items() if f["steps"]}
    assert reached == set(row["possible"]) - {"RebalanceTimeout"}
    assert "DeliverMessage.static_leave" in reached
    assert sum(f["steps"] for f in checked.values()) == row["steps"]
    for name, f in checked.items():
        assert f["allowed"] == f["steps"]
        if name not in ("Unchanged", "ClassicGroup"):
            assert f["unique"] == f["deterministic"] == f["steps"]
    assert checked["ClassicGroup"]["deterministic"] == 0
    mutant = MUTANTS["mixed-admits-when-disabled"]
    monkeypatch.setattr(
        "model.presets.PRESETS", {**PRESETS, "MIGRATION_DISABLED": mutant.mutated_config()}
    )
    assert main([*AGREE, "--preset", "MIGRATION_DISABLED"]) == 1
    out = capsys.readouterr().out
    assert "DISAGREEMENT in MIGRATION_DISABLED+mixed-admits-when-disabled" in out
    assert "family: DeliverMessage.classic_join (allowed no" in out


def test_all_presets_checks_the_mixed_presets_in_scope_and_skips_the_others(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--all-presets`` (over three mixed presets here): one the mixed relation covers is
    checked, those it refuses are skipped, one line each with the reason."""
    chosen = ("MIGRATION_DISABLED", "MIGRATION_OFFLOAD", "MIGRATION_BATCHING")
    monkeypatch.setattr("model.presets.PRESETS", {n: PRESETS[n] for n in chosen})
    assert main([*AGREE, "--all-presets"]) == 0
    out = capsys.readouterr().out
    assert "  ok           MIGRATION_DISABLED: " in out
    skipped = [line for line in out.splitlines() if line.startswith("  skipped")]
    assert skipped == [
        "  skipped      MIGRATION_OFFLOAD: the mixed relation has no KIP-1263 assignor offload "
        "or batching",
        "  skipped      MIGRATION_BATCHING: the mixed relation has no KIP-1263 assignor offload "
        "or batching",
    ]


def test_agreement_checks_a_mixed_variant(capsys: pytest.CaptureFixture[str]) -> None:
    """``--variant`` of a mixed mutant: its rules on its scenario against the mixed
    relation's variant, ``ok`` with steps the mutated rule decided that the reference
    relation refuses; on a scenario whose steps never exercise the rule (no classic
    JoinGroup to a consumer group under 'disabled'), inconclusive."""
    argv = [*AGREE, "--json", "--variant", "no-bump-on-assignor-change"]
    assert main(argv) == 0
    (row,) = json.loads(capsys.readouterr().out)["configs"]
    assert row["config"] == "MIXED_STATIC_ASSIGNOR+no-bump-on-assignor-change"
    assert row["missing"] == []
    assert row["mutated_steps"] >= row["distinguished_steps"] >= 1
    short = [*AGREE, "--seek", "0", "--preset", "MIGRATION_DISABLED"]
    assert main([*short, "--variant", "no-downgrade-on-replacement"]) == 3
    assert "the variant was not told apart" in capsys.readouterr().out
