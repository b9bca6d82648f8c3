"""The classic coordinator's symbolic relation (invariants/z3/proof/classic_transition.py)
against the Python classic model: from reachable model states, each family's Z3 successor
is the Python successor (``classic_agreement.cross_check``: the first BFS step of every
family the preset can take). Bounded by states, never by seconds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from groupcheck.mutants import MUTANTS
from invariants.z3.proof.classic_agreement import bfs_steps, check_step, cross_check
from invariants.z3.proof.classic_transition import VARIANTS, ClassicOptions
from model import system
from model.actions import Action, AddPartitions, DeleteGroup, DeliverMessage, RebalanceTimeout
from model.classic.messages import SyncGroupRequest
from model.classic.records import ClassicState
from model.config import Config
from model.presets import PRESETS
from model.status import ClassicGroupStatus

PRESET_NAMES = (
    "CLASSIC_GROUP_DELETION",
    "CLASSIC_OFFSETS_EXPIRY",
    "MUTC_TWO_PROCESSES",
    "CLASSIC_STATIC",
    "UPGRADE_TWO_BOUNCES",
)


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_every_family_agrees_with_the_classic_model(name: str) -> None:
    out = cross_check(PRESETS[name], max_states=40_000, per_family=1)
    assert out.verdict == "ok", out
    checked = {r.family for r in out.families if r.steps}
    assert set(out.possible) <= checked
    assert {"DeliverMessage.join_group", "DeliverMessage.sync_group"} <= checked
    assert all(r.allowed == r.unique == r.steps for r in out.families)


def test_the_reference_relation_refuses_a_mutated_step() -> None:
    """A non-Empty group deleted (classic-delete-non-empty-group's rule) is not a step of
    the reference DeleteGroup family, and is the only successor of its variant."""
    name = "classic-delete-non-empty-group"
    config = MUTANTS[name].mutated_config()
    pre = system.initial(config)
    post = system.step(pre, DeleteGroup(), config)
    assert isinstance(pre, ClassicState)
    assert isinstance(post, ClassicState)
    assert pre.group.members
    assert post.group.deletions == 1
    assert check_step(pre, DeleteGroup(), post, config).allowed == "no"
    variant = ClassicOptions.of(config, name)
    mutated = check_step(pre, DeleteGroup(), post, config, options=variant)
    assert (mutated.allowed, mutated.unique) == ("yes", "yes")


def test_every_variant_is_a_classic_catalogue_mutant() -> None:
    assert set(VARIANTS) <= set(MUTANTS)
    assert all(MUTANTS[v].config.protocol == "classic" for v in VARIANTS)


def test_a_partition_added_is_subscribed_by_the_members_of_its_topic() -> None:
    """MUTC_STICKY's warm group grows ``foo`` by a partition: every member, subscribed to
    ``foo``, is subscribed to the new one, the only successor of MetadataChange; the group
    as it was (no member subscribed to the new partition) is no successor of it."""
    config = PRESETS["MUTC_STICKY"]
    pre = system.initial(config)
    action = AddPartitions("foo")
    assert action in system.enabled(pre, config)
    post = system.step(pre, action, config)
    assert isinstance(pre, ClassicState)
    assert isinstance(post, ClassicState)
    assert len(pre.group.members) == 2
    check = check_step(pre, action, post, config)
    assert (check.family, check.allowed, check.unique) == ("MetadataChange", "yes", "yes")
    assert check_step(pre, action, pre, config).allowed == "no"


def _leader_syncs(config: Config, limit: int) -> list[tuple[ClassicState, Action, ClassicState]]:
    """The first ``limit`` steps in BFS order that install a leader's assignment."""
    found = []
    for pre, action, post in bfs_steps(config, 20_000):
        body = action.message.body if isinstance(action, DeliverMessage) else None
        if (
            isinstance(body, SyncGroupRequest)
            and pre.group.status is ClassicGroupStatus.COMPLETING_REBALANCE
            and post.group.status is ClassicGroupStatus.STABLE
        ):
            found.append((pre, action, post))
            if len(found) == limit:
                break
    return found


def test_the_leader_assignment_is_one_its_assignor_allows() -> None:
    """The SyncGroup family constrains the leader's assignment by its assignor
    (``classic_assignor``, with the claims the JoinGroups carried: ``owned``,
    ``user_data``, ``claim_gen``): MUTC_LEAVE's leader installs (cooperative-sticky) and
    MUTC_STICKY's (the eager sticky's user data) are its steps, and the only successors;
    the assignment of assign-without-withholding's leader, which gives a partition its
    owner still claims, is refused by the reference family and allowed by the variant."""
    for name in ("MUTC_LEAVE", "MUTC_STICKY"):
        config = PRESETS[name]
        assert ClassicOptions.of(config).assignor is not None
        steps = _leader_syncs(config, 4)
        assert len(steps) == 4
        for pre, action, post in steps:
            check = check_step(pre, action, post, config)
            assert (check.allowed, check.unique) == ("yes", "yes"), (name, check)
    name = "assign-without-withholding"
    mutant = MUTANTS[name]
    # From the group A formed alone, B joins (tests/invariants/z3/proof/test_classic_bmc.py).
    config = replace(
        mutant.mutated_config(),
        warm_start=True,
        max_perturbations=1,
        perturbations=frozenset({"Subscribe"}),
        live_timers=False,
    )
    variant = ClassicOptions.of(config, name)
    refused = None
    for pre, action, post in _leader_syncs(config, 10):
        if check_step(pre, action, post, config).allowed == "no":
            refused = (pre, action, post)
            break
    assert refused is not None
    assert check_step(*refused, config, options=variant).allowed == "yes"


def test_the_join_timer_of_a_static_member_agrees_with_the_classic_model() -> None:
    """``completeClassicGroupJoin`` keeps a static member that did not rejoin: the
    RebalanceTimeout family's successor of such a step is the model's (the first three in
    CLASSIC_STATIC's BFS order), and the member is still in the group."""
    config = PRESETS["CLASSIC_STATIC"]
    checked = 0
    for pre, action, post in bfs_steps(config, 5_000):
        if not isinstance(action, RebalanceTimeout):
            continue
        if pre.group.status is not ClassicGroupStatus.PREPARING_REBALANCE:
            continue
        if pre.group.members[action.member_id].instance_id is None:
            continue
        assert action.member_id in post.group.members
        out = check_step(pre, action, post, config)
        assert (out.allowed, out.unique) == ("yes", "yes"), out
        checked += 1
        if checked == 3:
            break
    assert checked == 3
