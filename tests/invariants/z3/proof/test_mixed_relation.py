"""The mixed group's symbolic relation (invariants/z3/proof/mixed_transition.py): every
step of the Python migration model that changes the group's projection is allowed by its
family, with the parameters the step took, as its only successor (on the mixed presets, in
BFS order, bounded by steps and states; invariants/z3/proof/mixed_agreement.py), a changed
successor is not,
and BMC (invariants/z3/proof/mixed_bmc.py) finds each mixed variant at its shortest
symbolic depth and lifts it to a model trace that violates the property
(groupcheck/explore/mixed_lift.py), while the reference rules give no path at that depth.
Bounded by steps, depth and states, never by seconds."""

from __future__ import annotations

import dataclasses
import json
import pathlib
from collections import deque
from collections.abc import Iterator

import pytest

from groupcheck.cli import main
from groupcheck.explore.mixed_lift import lift
from groupcheck.mutants import MUTANTS, bmc_depths, outside_reasons
from invariants.z3.proof.mixed_agreement import check_step
from invariants.z3.proof.mixed_bmc import GOALS, search
from invariants.z3.proof.mixed_state import project
from invariants.z3.proof.mixed_transition import FAMILY_NAMES, VARIANTS, MixedOptions, family_of
from invariants.z3.proof.mixed_witness import LOST
from model import system
from model.actions import Action
from model.classic.records import ClassicGroup
from model.config import Config
from model.migration.records import MixedState
from model.presets import PRESETS
from model.records import Group

# The searches are bounded by depth, not by explore's 60 s wall-clock default (a loaded
# machine would cut them).
NO_CLOCK = ["--budget", "3600"]

FOUND = {
    "mixed-admits-when-disabled": ("MigrationPolicyHonoured", 3, 7),
    "no-bump-on-assignor-change": ("TargetByPreferredAssignor", 3, 7),
    "no-downgrade-on-replacement": ("MigrationPolicyHonoured", 3, 10),
    "downgrade-keeps-old-assignment": ("StableAssignmentSubscribed", 3, 10),
    "stale-static-mapping": ("StaticIndexConsistent", 2, 11),
}
"""Per variant: the property, the depth of the shortest symbolic path (coordinator steps)
and the length of the lifted model trace (client steps included)."""

NOT_FOUND: set[str] = set()
"""Variants BMC finds no path of on their mutant's scenario (docs/invariants.md): none
since ``StaticIndexConsistent`` reads the static-member index (``stale-static-mapping``
is found at depth 2: A's join, then its rename)."""


def group_steps(
    config: Config, per_family: int, max_states: int = 3000
) -> Iterator[tuple[MixedState, Action, MixedState]]:
    """Model steps that change the projection, in BFS order over at most ``max_states``
    states, at most ``per_family`` of each family (``family_of``)."""
    init = system.initial(config)
    seen = {init}
    queue = deque([init])
    taken: dict[str, int] = {}
    while queue and len(seen) < max_states:
        state = queue.popleft()
        for action in system.enabled(state, config):
            new = system.step(state, action, config)
            if project(state) != project(new):  # type: ignore[arg-type]
                family = family_of(state, action)  # type: ignore[arg-type]
                if taken.get(family, 0) < per_family:
                    taken[family] = taken.get(family, 0) + 1
                    yield state, action, new  # type: ignore[misc]
            if new not in seen:
                seen.add(new)
                queue.append(new)


AGREEMENT = {
    "MIGRATION_DISABLED": ("ClassicGroup", "DeliverMessage.consumer_join"),
    "MIXED_STATIC_ASSIGNOR": (
        "ClassicGroup",
        "DeliverMessage.classic_join",
        "DeliverMessage.consumer_join",
    ),
    "MIXED_STATIC": (
        "ClassicGroup",
        "DeliverMessage.classic_join",
        "DeliverMessage.consumer_join",
        "DeliverMessage.static_leave",
        "SessionTimeout",
    ),
    "MIGRATION_ROUNDTRIP": (
        "ClassicGroup",
        "DeliverMessage.classic_join",
        "DeliverMessage.classic_leave",
        "DeliverMessage.consumer_join",
        "DeliverMessage.consumer_leave",
        "RebalanceTimeout",
        "SessionTimeout",
    ),
}
"""Per preset: the families its steps reach (at most ``PER_FAMILY`` steps of each are
checked)."""

PER_FAMILY = 8


@pytest.mark.parametrize("preset", sorted(AGREEMENT))
def test_every_model_step_is_allowed_by_its_family(preset: str) -> None:
    config = PRESETS[preset]
    families: set[str] = set()
    for pre, action, post in group_steps(config, PER_FAMILY):
        check = check_step(pre, action, post, config)
        assert check.allowed, (action, project(pre), project(post))  # type: ignore[arg-type]
        # The successor is the only one (the ClassicGroup family is checked one way).
        assert check.unique is (None if check.family == "ClassicGroup" else True), action
        families.add(check.family)
    assert families == set(AGREEMENT[preset])


def test_the_presets_reach_every_family() -> None:
    reached = {f for fams in AGREEMENT.values() for f in fams}
    assert reached == set(FAMILY_NAMES) - {"Unchanged"}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_bmc_finds_the_variant_and_the_mutant_model_agrees_with_it_only(name: str) -> None:
    """BMC finds the variant at its depth and lifts the path to a model trace of the
    mutant violating the property; every step of that trace is allowed by the variant; the
    reference relation refuses the step that breaks the rule (the variant is what makes
    the relation follow the mutant)."""
    mutant = MUTANTS[name]
    config = mutant.mutated_config()
    goal, depth, length = FOUND[name]
    out = search(goal, depth, config, MixedOptions.of(config, name), lifter=lift)
    assert out.status == "violation", out
    assert out.depth == depth
    assert out.property == goal
    assert out.trace is not None
    assert len(out.trace.actions) == length
    state = system.initial(config)
    refused = 0
    for action in out.trace.actions:
        new = system.step(state, action, config)
        if project(state) != project(new):  # type: ignore[arg-type]
            check = check_step(state, action, new, config, variant=name)
            assert check.allowed
            assert check.unique is not False
            refused += not check_step(state, action, new, config).allowed
        state = new  # type: ignore[assignment]
    # mixed-admits-when-disabled: the MEMBER_ID_REQUIRED answer too (no id is handed out
    # under 'disabled').
    assert refused == (2 if name == "mixed-admits-when-disabled" else 1)


def test_a_changed_successor_is_refused() -> None:
    """The family pins the successor's epochs, target assignor and ghost: a model step with
    any of them changed is not allowed; nor, on a step that computes no target (not a join:
    a temporary leave, a fencing), a target entry dropped (a join that computes one takes
    it as a parameter)."""
    checked = targets = 0
    for name, per_family, states in (("MIXED_STATIC_ASSIGNOR", 4, 3000), ("MIXED_STATIC", 2, 600)):
        config = PRESETS[name]
        for pre, action, post in group_steps(config, per_family, states):
            g = post.group
            if not isinstance(g, Group):
                continue
            changes: list[dict[str, object]] = []
            if name == "MIXED_STATIC_ASSIGNOR":
                changes = [
                    {"group_epoch": g.group_epoch + 1},
                    {"assignment_epoch": g.assignment_epoch + 1},
                    {"target_assignor": "range" if g.target_assignor != "range" else "uniform"},
                    {"migration_policy_breached": not g.migration_policy_breached},
                ]
            held = [mid for mid, parts in g.target_assignment.items() if parts]
            if held and not family_of(pre, action).endswith("join"):
                changes.append({"target_assignment": g.target_assignment.remove(held[0])})
                targets += 1
            for change in changes:
                bad = dataclasses.replace(post, group=dataclasses.replace(g, **change))
                assert not check_step(pre, action, bad, config).allowed, (action, change)
                checked += 1
    assert checked >= 8
    assert targets >= 2


def test_every_mixed_variant_has_a_goal_and_left_no_outside_entry() -> None:
    assert set(FOUND) | set(LOST) | NOT_FOUND == set(VARIANTS)
    assert not set(FOUND) & set(LOST)
    assert not (set(FOUND) | set(LOST)) & NOT_FOUND
    assert {goal for goal, _, _ in FOUND.values()} <= set(GOALS)
    # explore --engine bmc --mutant M's default depth: the shortest path's, found below.
    # (the catalogue entries' Mutant.bmc_depth)
    assert {name: depth for name, (_, depth, _) in FOUND.items()} == bmc_depths(VARIANTS)
    assert not set(VARIANTS) & set(outside_reasons())


@pytest.mark.parametrize("name", sorted(FOUND))
def test_the_reference_rules_give_no_violation_at_that_depth(name: str) -> None:
    goal, depth, _ = FOUND[name]
    config = MUTANTS[name].config
    out = search(goal, depth, config, MixedOptions.of(config), lifter=lift)
    assert out.status == "ok", out
    assert out.tried == 0


def test_explore_engine_bmc_on_a_mixed_mutant(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    """The command lifts the path, writes the run directory and exits 1; a mixed mutant
    killed by a lost witness is a violation only with the proof and the reference path
    (exit 1, nothing written), inconclusive where the proof fails."""
    code = main(
        [
            "explore",
            "--mutant",
            "mixed-admits-when-disabled",
            "--engine",
            "bmc",
            *NO_CLOCK,
            "--only",
            "MigrationPolicyHonoured",
            "--quiet",
            "--json",
            "--out",
            str(tmp_path),
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert doc["result"] == "violation"
    assert doc["property"] == "MigrationPolicyHonoured"
    assert doc["length"] == 7
    assert pathlib.Path(doc["trace"]).exists()
    code = main(
        [
            "explore",
            "--mutant",
            "classic-holder-unreleased",
            "--engine",
            "bmc",
            *NO_CLOCK,
            "--quiet",
            "--json",
            "--out",
            str(tmp_path / "lost"),
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["properties"]
    assert code == 1
    assert (doc["result"], row["property"], row["kind"]) == (
        "violation",
        "GroupUpgrades",
        "witness lost",
    )
    # The invariant's obligations (initiation, then per family consecution and no upgrade
    # step) are each unsatisfiable under the mutant; the reference relation takes the
    # step, and a 2-step path to it lifts to a 5-step model trace under the reference rules.
    assert [r["status"] for r in row["proof"]] == ["proved"] * (1 + 2 * len(FAMILY_NAMES))
    assert row["reference_step"] == "sat"
    assert (row["depth"], row["lift"]["length"]) == (2, 5)
    assert doc["run_dir"] is None
    assert "ConsumerGroupHeartbeat(MemberId=B, MemberEpoch=0" in doc["steps_taken"][-1]
    # Where the mutant's rules upgrade the group too (a dynamic classic member holds no
    # instance), the step obligation fails and the verdict is inconclusive (exit 3).
    code = main(
        [
            "explore",
            "--mutant",
            "classic-holder-unreleased",
            "--preset",
            "MIGRATION_UPGRADE",
            "--engine",
            "bmc",
            *NO_CLOCK,
            "--quiet",
            "--json",
            "--out",
            str(tmp_path / "upgrade"),
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    assert (code, doc["result"]) == (3, "inconclusive")
    (row,) = doc["properties"]
    assert "no GroupUpgrades / DeliverMessage.consumer_join failed" in row["reason"]


def test_a_step_with_more_ids_than_the_universe_widens_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A walk may hand a classic client more member ids than BMC's universe has: the
    step's universe is widened to the ids its states hold (here with one slot by default,
    on a step handing out a second id)."""
    from invariants.z3.proof import mixed_agreement
    from invariants.z3.proof.walks import model_bfs

    config = PRESETS["MIXED_STATIC"]
    step = next(
        (pre, action, post)
        for pre, action, post in model_bfs(config, 1000)
        if "B2.m2" in project(post).issued and project(pre) != project(post)
    )
    monkeypatch.setattr(mixed_agreement, "ID_SLOTS", 1)
    check = check_step(*step, config)
    assert (check.family, check.allowed, check.unique) == (
        "DeliverMessage.classic_join",
        True,
        True,
    )


def test_kafkas_static_replacement_of_a_live_holder_is_allowed_with_its_option() -> None:
    """``Config.classic_replaces_live_holder`` (Kafka's rule, docs/fidelity.md V10): on
    ``MIXED_STATIC`` a classic static JoinGroup replaces the consumer-protocol B while B is
    still in the group at its epoch (no -2 leave); the relation, reading the option, allows
    every step, that replacement included — and the same replacement is refused under the
    default options."""
    config = dataclasses.replace(PRESETS["MIXED_STATIC"], classic_replaces_live_holder=True)
    live_replacements = 0
    for pre, action, post in group_steps(config, 4, 1500):
        check = check_step(pre, action, post, config)
        assert check.allowed, (action, project(pre), project(post))  # type: ignore[arg-type]
        g, after = pre.group, post.group
        if check.family != "DeliverMessage.classic_join" or not isinstance(g, Group):
            continue
        gone = [
            m
            for mid, m in g.members.items()
            if m.classic is None and m.member_epoch != -2 and mid not in after.members
        ]
        if gone:
            live_replacements += 1
            default = PRESETS["MIXED_STATIC"]
            assert not check_step(pre, action, post, default).allowed
    assert live_replacements >= 1


def test_kafkas_converting_replacement_without_bump_is_allowed_with_its_option() -> None:
    """``Config.replacement_bumps_group_epoch`` off (Kafka's rule, docs/fidelity.md V13):
    on ``MIXED_STATIC`` the relation, reading the option, allows every step of the path of
    docs/findings.md F5 and of a BFS prefix; the converting replacement that keeps the
    classic generation is refused under the default options."""
    from model.path import Path

    config = dataclasses.replace(PRESETS["MIXED_STATIC"], replacement_bumps_group_epoch=False)
    for pre, action, post in group_steps(config, 4, 1500):
        check = check_step(pre, action, post, config)
        assert check.allowed, (action, project(pre), project(post))  # type: ignore[arg-type]
    state = system.initial(config)
    actions = Path.decode(config, "00011").actions
    for action in actions[:-1]:
        state = system.step(state, action, config)  # type: ignore[assignment]
    after = system.step(state, actions[-1], config)
    assert isinstance(state.group, ClassicGroup)
    assert isinstance(after.group, Group)
    assert after.group.group_epoch == state.group.generation_id
    assert not set(state.group.members) & set(after.group.members)
    check = check_step(state, actions[-1], after, config)
    assert (check.family, check.allowed) == ("DeliverMessage.consumer_join", True)
    assert not check_step(state, actions[-1], after, PRESETS["MIXED_STATIC"]).allowed
