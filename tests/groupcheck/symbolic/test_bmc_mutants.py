"""Every catalogue mutant is either inside the symbolic core — a variant BMC finds on the
mutant's scenario at its shortest depth, replayed by the Python coordinator — or outside
it, with the reason (invariants/z3/proof/transition.py ``VARIANTS``; the catalogue entry's
``Mutant.outside`` and ``Mutant.bmc_depth``; the
classic coordinator's variants: tests/invariants/z3/proof/test_classic_bmc.py; a mixed group's:
tests/invariants/z3/proof/test_mixed_relation.py). A
client-side variant (``bmc_clients.CLIENT_VARIANTS``) is found with the client layer
unrolled and replayed by the Python clients and coordinator together.

Every bound here is a depth, never seconds.
"""

from __future__ import annotations

import pytest

from groupcheck.mutants import MUTANTS, bmc_depths, outside_reasons
from groupcheck.mutants.catalogue import after_assignor
from groupcheck.prove import _initial_group_epoch
from invariants.z3.proof.bmc import (
    DELETION_GOALS,
    EPOCH_GOALS,
    EXPIRY_GOALS,
    GOALS,
    OFFLOAD_GOALS,
    OFFLOAD_STEP_GOALS,
    ReplayDiverged,
    confirmed,
    replay,
    search,
    search_all,
    universe_of,
)
from invariants.z3.proof.bmc_client_replay import replay_clients
from invariants.z3.proof.bmc_clients import (
    CLIENT_GOALS,
    CLIENT_STEP_GOALS,
    CLIENT_VARIANTS,
    POLL_GOALS,
    POLL_VARIANTS,
    Layer,
    confirmed_clients,
)
from invariants.z3.proof.bmc_lasso import LASSO_VARIANTS
from invariants.z3.proof.classic_clients import CLIENT_VARIANTS as CLASSIC_CLIENT_VARIANTS
from invariants.z3.proof.classic_transition import VARIANTS as CLASSIC_VARIANTS
from invariants.z3.proof.mixed_transition import VARIANTS as MIXED_VARIANTS
from invariants.z3.proof.transition import VARIANTS, Options
from model.rules import DEFAULT_RULES

FOUND = {
    "ignore-partition-epochs": ("NoServerError", 2),
    "bookkeeping-drops-pending": ("HandOutOnlyReleased", 4),
    "accept-stale-commit-epoch": ("OffsetCommitAtValidEpoch", 2),
    "accept-commit-from-unknown-member": ("OffsetCommitAtValidEpoch", 1),
    "revoke-without-waiting": ("GroupStatusConsistent.Stable", 2),
    "no-epoch-bump-on-fence": ("ValidTargetAssignment.Covers", 3),
    "assignor-assigns-twice": ("ValidTargetAssignment.Unique", 2),
    "no-bump-on-subscription-change": ("ValidTargetAssignment.OnlySubscribed", 2),
    "no-bump-on-metadata-change": ("ValidTargetAssignment.OnlySubscribed", 2),
    "failover-drops-pending-revocation": ("Lemma.UnrevokedHasPending", 4),
    "regex-resolution-without-bump": ("ValidTargetAssignment.Covers", 2),
    "client-acks-before-revoking": ("OwnedPartitionsAreHeld", 5),
    "ack-while-revoking": ("RevokedBeforeReassigned", 12),
    "adopt-negative-epoch": ("ClientEpochMonotone", 4),
    "poll-timeout-keeps-partitions": ("JoiningClientOwnsNothing", 5),
    "callback-ignores-abort": ("OwnedPartitionsAreHeld", 6),
    "strict-commit-epoch": ("HolderCommitsAccepted", 3),
    "static-replacement-keeps-both": ("NoServerError", 3),
    "expire-by-commit-time": ("NoLiveOffsetExpires", 3),
    "delete-non-empty-group": ("GroupDeletedOnlyWhenEmpty", 2),
    "two-runs-in-flight": ("AssignorRunsInFlight.AtMostOne", 2),
    "install-without-epoch": ("TargetEpochAdvances", 2),
    "install-without-reapplying-removals": ("ValidTargetAssignment.OnlyMembers", 3),
    "install-before-static-replacement": ("ValidTargetAssignment.Covers", 4),
    "install-run-after-deletion": ("EpochOrder.AssignmentEpoch", 4),
}
"""Per variant, the property BMC reports and the length of its shortest path
(``groupcheck explore --engine bmc --mutant M --depth D``; docs/invariants.md)."""

KILL_LENGTH = {
    "ignore-partition-epochs": 6,
    "bookkeeping-drops-pending": 15,
    "accept-stale-commit-epoch": 13,
    "accept-commit-from-unknown-member": 8,
    "revoke-without-waiting": 9,
    "no-epoch-bump-on-fence": 7,
    "assignor-assigns-twice": 5,
    "no-bump-on-subscription-change": 6,
    "no-bump-on-metadata-change": 3,
    "failover-drops-pending-revocation": 11,
    "regex-resolution-without-bump": 3,
    "client-acks-before-revoking": 12,
    "ack-while-revoking": 19,
    "adopt-negative-epoch": 8,
    "poll-timeout-keeps-partitions": 7,
    "callback-ignores-abort": 10,
    "strict-commit-epoch": 13,
    "static-replacement-keeps-both": 11,
    "expire-by-commit-time": 8,
    "delete-non-empty-group": 3,
    "two-runs-in-flight": 5,
    "install-without-epoch": 3,
    "install-without-reapplying-removals": 8,
    "install-before-static-replacement": 11,
    "install-run-after-deletion": 9,
}
"""The kill matrix's counterexample lengths (``groupcheck mutants``): full model traces,
client steps included, so BMC's request paths are never longer."""


def test_every_mutant_is_a_variant_or_outside_with_a_reason() -> None:
    outside = outside_reasons()  # the catalogue entries' Mutant.outside
    variants = [VARIANTS, CLASSIC_VARIANTS, CLASSIC_CLIENT_VARIANTS, MIXED_VARIANTS]
    assert set(outside).union(*variants) == set(MUTANTS)
    # Each mutant in one place only.
    assert sum(len(v) for v in variants) + len(outside) == len(MUTANTS)
    assert all(reason.strip() for reason in outside.values())
    # The liveness-only variants are lassos (tests/groupcheck/symbolic/test_bmc_lasso.py).
    assert set(FOUND) | set(LASSO_VARIANTS) == set(VARIANTS)
    # explore --engine bmc --mutant M's default depth: the shortest path's, found below.
    assert {name: depth for name, (_, depth) in FOUND.items()} == bmc_depths(VARIANTS)
    assert not set(FOUND) & set(LASSO_VARIANTS)
    assert set(CLIENT_VARIANTS) <= set(VARIANTS)
    client_goals = {c.name for c in (*CLIENT_GOALS, *CLIENT_STEP_GOALS, *POLL_GOALS)}
    epoch_goals = {c.name for c in EPOCH_GOALS}
    expiry_goals = {s.name for s in (*EXPIRY_GOALS, *DELETION_GOALS)}
    offload_goals = {c.name for c in OFFLOAD_GOALS} | {s.name for s in OFFLOAD_STEP_GOALS}
    assert {goal for goal, _ in FOUND.values()} <= (
        set(GOALS) | client_goals | epoch_goals | expiry_goals | offload_goals
    )


DIVERGES = {"ignore-partition-epochs", "bookkeeping-drops-pending"}
"""The variants whose path the reference coordinator cannot walk at all (``replay`` raises
``ReplayDiverged``), not only walks without the violation: KAFKA-16147's bookkeeping
(formerly also pinned by tests/invariants/z3/proof/test_bmc.py) and the partition epochs ignored
(formerly by tests/invariants/z3/proof/test_proof.py), whose path also ends in the server error it
reports."""

SLOW = {"ack-while-revoking", "install-before-static-replacement"}
"""The client layer at depth 12: about 10 CPU seconds; static members with assignor offload
at depth 4: about 7."""


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(FOUND)],
)
def test_bmc_finds_the_variant_at_its_shortest_depth_and_the_model_replays_it(name: str) -> None:
    mutant = MUTANTS[name]
    goal, depth = FOUND[name]
    assert depth <= KILL_LENGTH[name]
    # A variant of the reconciliation or of the offset-commit check is its mutant's kernel
    # (transition.KERNEL_VARIANTS, COMMIT_KERNEL_VARIANTS).
    options = Options.of(
        mutant.config, name, kernel=mutant.kernel, commit_kernel=mutant.commit_kernel
    )
    universe = universe_of(mutant.config)
    epoch = _initial_group_epoch(mutant.config)
    layer = Layer.of(mutant.config, universe, name) if name in CLIENT_VARIANTS else None
    out = search(goal, depth, options, universe=universe, group_epoch=epoch, layer=layer)
    assert out.status == "violation", out
    assert out.depth == depth
    assert out.path is not None
    if layer is not None:
        _, snaps = replay_clients(
            out.path, mutant.rules, mutant.config, after_assignor=after_assignor(mutant.rules)
        )
        assert confirmed_clients(goal, snaps)
        # The reference clients do not walk the path (they report otherwise).
        try:
            _, snaps = replay_clients(out.path, DEFAULT_RULES, mutant.config)
        except ReplayDiverged:
            pass
        else:
            assert not confirmed_clients(goal, snaps)
        # None shorter: ``search`` asks every depth from 1 up and stops at the first
        # violation, so ``out.depth == depth`` says depth - 1 steps have none (one
        # incremental unrolling: the client layer's deeper paths are the costly ones).
        return
    states, server_error = replay(
        out.path, mutant.rules, mutant.config, after_assignor=after_assignor(mutant.rules)
    )
    assert confirmed(out.path, states, server_error)
    assert server_error or goal != "NoServerError"
    # The violation is the mutant's: the reference coordinator does not walk the path.
    try:
        states, server_error = replay(out.path, DEFAULT_RULES, mutant.config)
    except ReplayDiverged:
        pass
    else:
        assert name not in DIVERGES
        assert not confirmed(out.path, states, server_error)
    # None shorter: ``search`` asks every depth from 1 up and stops at the first violation
    # (an unknown answer would end it as "unknown"), so ``out.depth == depth`` says depth - 1
    # steps have none.


def test_the_reference_rules_keep_covers_under_a_covering_assignor() -> None:
    """``Covers`` is a BMC goal only because the reference rules keep it: on the scenario
    of the no-bump mutants, no path of four steps breaks it."""
    config = MUTANTS["no-bump-on-subscription-change"].config
    out = search(
        "ValidTargetAssignment.Covers",
        4,
        Options.of(config),
        universe=universe_of(config),
        group_epoch=_initial_group_epoch(config),
    )
    assert (out.status, out.depth) == ("ok", 4)


@pytest.mark.parametrize("name", ["expire-by-commit-time", "delete-non-empty-group"])
def test_the_reference_rules_keep_the_expiry_and_deletion_goals(name: str) -> None:
    """``NoLiveOffsetExpires`` and ``GroupDeletedOnlyWhenEmpty`` are BMC goals only because
    the reference rules keep them: on the mutant's scenario, at the variant's depth, the
    reference relation has no path violating either."""
    config = MUTANTS[name].config
    options = Options.of(config)
    assert options.offset_expiry
    assert options.group_deletion == (name == "delete-non-empty-group")
    goals = [s.name for s in EXPIRY_GOALS]
    goals += [s.name for s in DELETION_GOALS] if options.group_deletion else []
    depth = FOUND[name][1]
    outs = search_all(
        goals,
        depth,
        options,
        universe=universe_of(config),
        group_epoch=_initial_group_epoch(config),
    )
    assert {(o.status, o.depth) for o in outs.values()} == {("ok", depth)}


def test_the_reference_clients_keep_the_client_goals() -> None:
    """The client goals are BMC goals only because the reference clients keep them: with
    the client layer on ``MUT2`` and the reference rules, no path of five steps (the
    length of ``client-acks-before-revoking``'s) violates either."""
    config = MUTANTS["client-acks-before-revoking"].config
    universe = universe_of(config)
    outs = search_all(
        [c.name for c in CLIENT_GOALS],
        5,
        Options.of(config),
        universe=universe,
        group_epoch=_initial_group_epoch(config),
        layer=Layer.of(config, universe),
    )
    assert {(o.status, o.depth) for o in outs.values()} == {("ok", 5)}


def test_the_reference_clients_keep_their_epochs_through_a_leave() -> None:
    """``ClientEpochMonotone`` is a BMC goal only because the reference clients keep it:
    with the client layer's leaves on ``MUT2_REJOIN`` and the reference rules, no path of
    four steps violates it, where the same unrolling but for the mutant's rule does
    (``adopt-negative-epoch``'s row above)."""
    config = MUTANTS["adopt-negative-epoch"].config
    universe = universe_of(config)
    layer = Layer.of(config, universe, "adopt-negative-epoch")
    assert layer.leaves
    out = search(
        "ClientEpochMonotone",
        4,
        Options.of(config),
        universe=universe,
        group_epoch=_initial_group_epoch(config),
        layer=layer,
    )
    assert (out.status, out.depth) == ("ok", 4)


def test_the_reference_rules_accept_the_holders_commits() -> None:
    """``HolderCommitsAccepted`` is a BMC goal only because the reference rules keep it:
    over the KIP-1251 assignment epochs of ``MUT2_COMMIT_EPOCHS``, no path of three steps
    (the length of ``strict-commit-epoch``'s) violates it."""
    config = MUTANTS["strict-commit-epoch"].config
    options = Options.of(config)
    assert options.assignment_epochs
    out = search(
        "HolderCommitsAccepted",
        3,
        options,
        universe=universe_of(config),
        group_epoch=_initial_group_epoch(config),
    )
    assert (out.status, out.depth) == ("ok", 3)


def test_the_reference_rules_keep_the_offload_goals() -> None:
    """The KIP-1263 goals are BMC goals only because the reference rules keep them: over
    the assignor runs of ``MUT2_OFFLOAD``, no path of three steps (the length of the
    offload variants' longest) violates any of them."""
    config = MUTANTS["two-runs-in-flight"].config
    options = Options.of(config)
    assert options.assignor_offload
    goals = [c.name for c in OFFLOAD_GOALS] + [s.name for s in OFFLOAD_STEP_GOALS]
    outs = search_all(
        goals, 3, options, universe=universe_of(config), group_epoch=_initial_group_epoch(config)
    )
    assert {(o.status, o.depth) for o in outs.values()} == {("ok", 3)}


def test_the_reference_rules_discard_a_deleted_groups_run() -> None:
    """``install-run-after-deletion``'s kill is the mutant's: over assignor offload and
    group deletion together (``OFFLOAD_DELETION``), where a run in flight outlives its
    group, the reference rules have no path of its length breaking the property that
    reports it, nor any offload or deletion goal."""
    config = MUTANTS["install-run-after-deletion"].config
    options = Options.of(config)
    assert options.assignor_offload
    assert options.group_deletion
    goal, depth = FOUND["install-run-after-deletion"]
    goals = [goal, *(c.name for c in OFFLOAD_GOALS), *(s.name for s in OFFLOAD_STEP_GOALS)]
    goals += [s.name for s in DELETION_GOALS]
    epoch = _initial_group_epoch(config)
    outs = search_all(goals, depth, options, universe=universe_of(config), group_epoch=epoch)
    assert {(o.status, o.depth) for o in outs.values()} == {("ok", depth)}


@pytest.mark.parametrize("name", sorted(POLL_VARIANTS))
def test_the_reference_clients_keep_the_kill_through_a_poll_timeout(name: str) -> None:
    """The property that reports each poll-timer variant is a BMC goal of its layer only
    because the reference clients keep it: with the same layer (poll timers, and on
    ``MUT2_CALLBACKS`` callbacks as steps) and the reference rules, no path of the
    variant's length violates it."""
    config = MUTANTS[name].config
    goal, depth = FOUND[name]
    universe = universe_of(config)
    layer = Layer.of(config, universe, name)
    assert layer.polls
    assert layer.callbacks == (name == "callback-ignores-abort")
    out = search(
        goal,
        depth,
        Options.of(config),
        universe=universe,
        group_epoch=_initial_group_epoch(config),
        layer=layer,
    )
    assert (out.status, out.depth) == ("ok", depth)
