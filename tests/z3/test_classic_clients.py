"""The classic client layer (invariants/z3/proof/classic_clients.py) against the Python
classic model: each client family's Z3 successor of a reachable model state is the Python
successor, branch by branch of the rule (``classic_client_agreement.client_cross_check``),
and each client variant is its mutant's rule, which the reference family refuses. Bounded
by states, never by seconds."""

from __future__ import annotations

import pytest

from groupcheck.mutants import MUTANTS
from invariants.z3.proof.classic_agreement import bfs_steps
from invariants.z3.proof.classic_client_agreement import (
    case,
    check_client_step,
    client_cross_check,
)
from invariants.z3.proof.classic_clients import (
    CLIENT_VARIANTS,
    ClientOptions,
    acting_client,
    client_family_of,
)
from model.actions import Action
from model.classic.records import ClassicState
from model.presets import PRESETS

DISTINCT = {
    "lost-partitions-kept": "SendJoinGroup:reset:owning",
    "late-sync-resets-generation": "DeliverMessage.sync_response:REBALANCE_IN_PROGRESS",
}
"""The branch of its rule where each client mutant departs from the reference rule."""

BOUND = 8000


@pytest.mark.parametrize(
    ("name", "musts"),
    [
        (
            "MUTC_COOPERATIVE",
            {
                DISTINCT["lost-partitions-kept"],
                "SendJoinGroup:prepare:owning",
                "DeliverMessage.join_response:UNKNOWN_MEMBER_ID",
                "DeliverMessage.sync_response:NONE",
                "RequestTimeout",
            },
        ),
        ("MUTC_LATE_SYNC", {DISTINCT["late-sync-resets-generation"], "SendSyncGroup:leader"}),
    ],
)
def test_every_client_family_agrees_with_the_classic_model(name: str, musts: set[str]) -> None:
    out = client_cross_check(PRESETS[name], max_states=BOUND, per_family=1)
    assert out.verdict == "ok", out.disagreements
    assert musts <= set(out.checked), sorted(out.checked)


def _departing_step(name: str) -> tuple[ClassicState, Action, ClassicState]:
    """The first BFS step of the mutated config where the mutant's rule is the one that
    acts differently."""
    config = MUTANTS[name].mutated_config()
    for pre, action, post in bfs_steps(config, BOUND):
        family, who = client_family_of(action), acting_client(action)
        if family and who and case(pre, action, family, who) == DISTINCT[name]:
            return pre, action, post
    raise AssertionError(f"{name}: no departing step within {BOUND} states")


@pytest.mark.parametrize("name", sorted(CLIENT_VARIANTS))
def test_the_variant_is_the_mutants_rule_and_the_reference_refuses_it(name: str) -> None:
    config = MUTANTS[name].mutated_config()
    pre, action, post = _departing_step(name)
    options = ClientOptions.of(config, name)
    variant = check_client_step(pre, action, post, config, options=options, as_sent=True)
    assert (variant.allowed, variant.unique) == ("yes", "yes")
    reference = check_client_step(
        pre,
        action,
        post,
        config,
        options=ClientOptions.of(config),
        as_sent=True,
    )
    assert reference.allowed == "no"


def test_every_client_variant_is_a_classic_catalogue_mutant_of_a_client_rule() -> None:
    for name in CLIENT_VARIANTS:
        assert MUTANTS[name].config.protocol == "classic"
        assert MUTANTS[name].field in ("classic_join_group", "classic_on_sync_response")
