"""``groupcheck explore --engine bmc`` on a classic configuration: the classic
coordinator's relation (``invariants.z3.proof.classic_bmc``), its client layer
(``classic_client_bmc``), or a Convergence lasso (``symbolic.lasso_cmd``); every path
counts once lifted to a trace of the Python classic model (``groupcheck.symbolic.bmc_lifted``)."""

from __future__ import annotations

import argparse
from typing import Any

from groupcheck.mutants import MUTANTS, bmc_depths, outside
from groupcheck.symbolic.bmc_lifted import Relation, chosen_goals, run_goals
from groupcheck.symbolic.capabilities import BMC, COORDINATOR, bmc_facts, check
from groupcheck.symbolic.lasso_cmd import cmd_classic_lasso


def cmd_bmc_classic(args: argparse.Namespace, chosen: Any, variant: str | None) -> int:
    """``explore --engine bmc`` on a classic configuration: bounded model checking over the
    classic coordinator's relation (``invariants.z3.proof.classic_bmc``), every path lifted
    to a trace of the Python classic model (``groupcheck.explore.classic_lift``) before it
    counts as a violation; the first lifted trace is written as a run directory."""
    from groupcheck.explore.classic_lift import lift, next_states
    from invariants.z3.proof.classic_bmc import (
        DEFAULT_ATTEMPTS,
        DEFAULT_LIFT_STATES,
        GOAL_VARIANTS,
        GOALS,
        VARIANT_ATTEMPTS,
        VARIANT_UNREACHED,
        render_path,
        search,
    )
    from invariants.z3.proof.classic_clients import CLIENT_GOALS, CLIENT_VARIANTS
    from invariants.z3.proof.classic_lasso import CONVERGENCE, LASSO_VARIANTS
    from invariants.z3.proof.classic_transition import VARIANTS as CLASSIC_VARIANTS
    from invariants.z3.proof.classic_transition import ClassicOptions

    config = chosen.config
    # Every goal a classic config has, whichever search reads it.
    chosen_goals(args.only, [*GOALS, CONVERGENCE, *CLIENT_GOALS])
    client_variant = variant in CLIENT_VARIANTS and not outside(variant)
    if client_variant or (variant is None and args.only and set(args.only) <= set(CLIENT_GOALS)):
        # A client rule or a goal that reads the clients: the client layer linked to the
        # coordinator's relation (classic_client_bmc).
        return cmd_bmc_classic_clients(args, chosen, variant)
    # The coordinator's relation: the mutant must be a variant of it, an assignor rule only
    # where the relation states the assignor (symbolic.capabilities).
    check(BMC, "classic", COORDINATOR, bmc_facts(args, chosen))
    if variant in LASSO_VARIANTS or (args.only and CONVERGENCE in args.only):
        # Convergence: a lasso search over the classic relation (classic_lasso).
        return cmd_classic_lasso(args, chosen, variant)
    goals = chosen_goals(args.only, list(GOALS))
    if not args.only and variant in GOAL_VARIANTS:
        # An assignor rule: the property it breaks, which kills the mutant (Mutant.killed_by;
        # the others read other rules).
        goals = [MUTANTS[variant].killed_by]
    # Without --depth: the depth of the variant's shortest path (Mutant.bmc_depth).
    known = bmc_depths(CLASSIC_VARIANTS).get(variant or "")
    depth = args.depth or known or 3
    lift_states = args.max_states or DEFAULT_LIFT_STATES
    options = ClassicOptions.of(config, variant)
    return run_goals(
        args,
        chosen,
        variant=variant,
        goals=goals,
        depth=depth,
        lift_states=lift_states,
        relation=Relation("the classic coordinator", "classic", "coordinator steps", render_path),
        search=lambda goal, _progress: search(
            goal,
            depth,
            config,
            options,
            lifter=lift,
            lift_states=lift_states,
            attempts=VARIANT_ATTEMPTS.get(variant or "", DEFAULT_ATTEMPTS),
            successors=next_states,
        ),
        known=known,
        unreached=VARIANT_UNREACHED.get(variant or ""),
    )


def cmd_bmc_classic_clients(args: argparse.Namespace, chosen: Any, variant: str | None) -> int:
    """``explore --engine bmc`` for a classic client mutant (``classic_clients.CLIENT_VARIANTS``)
    or the goals that read the clients (``CLIENT_GOALS``, with ``--only``): bounded model
    checking over the client layer linked to the classic coordinator's relation
    (``invariants.z3.proof.classic_client_bmc``), every path lifted to a trace of the Python
    classic model (``classic_lift.lift_clients``) before it counts as a violation."""
    from groupcheck.explore.classic_lift import lift_clients
    from invariants.z3.proof.classic_bmc import DEFAULT_LIFT_STATES
    from invariants.z3.proof.classic_client_bmc import (
        DEFAULT_DEPTH,
        GOAL_VARIANTS,
        render_client_path,
        search,
    )
    from invariants.z3.proof.classic_clients import CLIENT_GOALS

    config = chosen.config
    check(BMC, "classic", "client layer", bmc_facts(args, chosen))
    # The link drops the requests in flight on the connection a request timeout closes,
    # where the model still delivers them: with message loss (the only way a classic
    # client's request times out) "no path" speaks of fewer behaviours than the model's.
    restricted = (
        "which drops a timed-out client's requests in flight where the model delivers them "
        "(this config loses messages): not a bound for the model"
        if config.max_perturbations > 0 and "LoseMessage" in config.perturbations
        else None
    )
    goals = chosen_goals(args.only, list(CLIENT_GOALS))
    if not args.only and chosen.mutant is not None and chosen.mutant.expected in goals:
        goals = [chosen.mutant.expected]
    if not args.only and variant in GOAL_VARIANTS:
        goals = [MUTANTS[variant].killed_by]  # the property that kills the mutant
    depth = args.depth or DEFAULT_DEPTH
    # A client variant without --depth: one query at its counterexample's depth (the
    # depths below it are not asked: no path is then inconclusive, never ok).
    start_depth = depth if args.depth is None and variant in GOAL_VARIANTS else 1
    lift_states = args.max_states or DEFAULT_LIFT_STATES
    return run_goals(
        args,
        chosen,
        variant=variant,
        goals=goals,
        depth=depth,
        lift_states=lift_states,
        relation=Relation(
            "the classic coordinator and its clients",
            "classic clients",
            "steps",
            render_client_path,
            restricted,
        ),
        search=lambda goal, progress: search(
            goal,
            depth,
            config,
            variant=variant,
            lifter=lift_clients,
            lift_states=lift_states,
            progress=progress,
            start_depth=start_depth,
        ),
        # The default depth holds each client variant's shortest counterexample.
        known=DEFAULT_DEPTH,
    )
