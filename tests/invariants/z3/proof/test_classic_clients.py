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
    check_join_request,
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
    if name == "lost-partitions-kept":
        # The JoinGroup it sent reports the kept partitions: the variant's facts, not the
        # reference family's (which reports none).
        assert check_join_request(pre, action, post, config, options=options) == "yes"
        assert (
            check_join_request(pre, action, post, config, options=ClientOptions.of(config)) == "no"
        )


def test_every_client_variant_is_a_classic_catalogue_mutant_of_a_client_rule() -> None:
    for name in CLIENT_VARIANTS:
        assert MUTANTS[name].config.protocol == "classic"
        assert MUTANTS[name].field in ("classic_join_group", "classic_on_sync_response")


TRACES = {
    "lost-partitions-kept": ("NoDoubleClientOwnership", "000000000000000011000000111"),
    "late-sync-resets-generation": ("LostOnlyWhenOut", "000000000000000000111122222"),
}
"""Each client mutant's first violation as breadth-first search finds it (``groupcheck
explore --mutant M --engine bfs``), as ``model.path`` codes."""


@pytest.mark.parametrize("name", sorted(TRACES))
def test_the_client_goal_holds_exactly_where_the_python_property_fails(name: str) -> None:
    """Along the mutant's BFS counterexample, the goal over the pinned group and clients
    holds at a step iff the Python checker reports the property there: at the last step
    only."""
    import z3

    from invariants.check import Checker
    from invariants.snapshot import project_key, snapshot_key
    from invariants.z3.proof.classic_clients import (
        CLIENT_GOALS,
        ClientSym,
        client_partitions,
        pin_client,
        project_client,
    )
    from invariants.z3.proof.classic_state import ClassicSym, pin, project
    from invariants.z3.proof.classic_transition import grounded
    from invariants.z3.proof.state import Universe
    from model.path import Path

    goal, code = TRACES[name]
    config = MUTANTS[name].mutated_config()
    states = list(Path.decode(config, code).states())
    path = Path.decode(config, code)
    checker = Checker()
    verdicts = []
    for pre, action, post in zip(states[:-1], path.actions, states[1:], strict=True):
        assert isinstance(pre, ClassicState)
        assert isinstance(post, ClassicState)
        snaps = project_key(snapshot_key(pre)), project_key(snapshot_key(post))
        bad = checker.check_step(pre, action, post, *snaps) + checker.check_state(post, snaps[1])
        fails = any(v.property == goal for v in bad)
        gv = [project(s) for s in (pre, post)]
        cv = [{c.name: project_client(s, c) for c in s.clients} for s in (pre, post)]
        values = [v for d in cv for v in d.values()]
        members = {m for v in gv for m in v.member_domain()}
        members |= {v.member for v in values if v.member}
        parts = {p for v in gv for p in v.partition_domain()} | client_partitions(values)
        u = Universe.of(members, parts)
        gs = [ClassicSym.fresh(t) for t in ("pre", "post")]
        cs = [{n: ClientSym.fresh(n, t) for n in cv[0]} for t in ("pre", "post")]
        s = z3.Solver()
        if len(u.member_consts) > 1:
            s.add(z3.Distinct(*u.member_consts.values()))
        if len(u.partition_consts) > 1:
            s.add(z3.Distinct(*u.partition_consts.values()))
        for i in (0, 1):
            s.add(*pin(gs[i], gv[i], u))
            for n, v in cv[i].items():
                s.add(*pin_client(cs[i][n], v, u))
        with grounded(u.member_consts.values(), u.partition_consts.values()):
            s.add(CLIENT_GOALS[goal](gs[0], cs[0], gs[1], cs[1]))
        verdicts.append((s.check() == z3.sat, fails))
    assert len(verdicts) == len(path.actions) == len(code)
    assert all(sym == py for sym, py in verdicts), verdicts
    assert verdicts[-1] == (True, True)
