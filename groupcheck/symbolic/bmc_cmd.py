"""``groupcheck explore --engine bmc``: bounded model checking over the symbolic relations
(``invariants.z3.proof``, each searched by the engine ``invariants.z3.engine``).
:func:`cmd_bmc` asks the capability table (``symbolic.capabilities``), then runs the
family's search: the KIP-848 core's safety
goals here, its Convergence lassos in ``symbolic.lasso_cmd``, the classic coordinator in
``symbolic.classic_cmd``, a mixed group in ``groupcheck.symbolic.mixed_bmc``."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from groupcheck import exitcodes
from groupcheck.mutants import bmc_depths
from groupcheck.mutants.catalogue import after_assignor
from groupcheck.progress import progress_for
from groupcheck.symbolic.bmc_lifted import chosen_goals, mutant_bound
from groupcheck.symbolic.capabilities import BMC, bmc_facts, check
from groupcheck.symbolic.classic_cmd import cmd_bmc_classic
from groupcheck.symbolic.lasso_cmd import cmd_lasso
from groupcheck.symbolic.mixed_bmc import cmd_bmc_mixed
from groupcheck.symbolic.runs import bmc_doc, initial_group_epoch, lift_and_write, rows_result
from reports.escape import visible
from reports.publish import check_target


def cmd_bmc(args: argparse.Namespace, chosen: Any) -> int:
    """``groupcheck explore --engine bmc``: bounded model checking over the symbolic core,
    every counterexample replayed through the Python coordinator (invariants.z3.proof.bmc),
    then lifted to a model trace (``groupcheck.explore.lift``, bounded by ``--max-states``
    per level) and, when lifted, written as a run directory like the other engines'."""
    from groupcheck.explore.lift import DEFAULT_LIFT_STATES
    from invariants.z3.engine import render_path
    from invariants.z3.proof.bmc import (
        EPOCH_GOALS,
        GOALS,
        OFFLOAD_GOALS,
        OFFLOAD_STEP_GOALS,
        ReplayDiverged,
        confirmed,
        replay,
        search_all,
        universe_of,
    )
    from invariants.z3.proof.bmc_client_replay import replay_clients
    from invariants.z3.proof.bmc_clients import (
        CLIENT_GOALS,
        CLIENT_STEP_GOALS,
        CLIENT_VARIANTS,
        LEAVE_VARIANTS,
        POLL_GOALS,
        POLL_VARIANTS,
        Layer,
        confirmed_clients,
    )
    from invariants.z3.proof.state import render
    from invariants.z3.proof.transition import VARIANTS, Options
    from reports.artifacts import run_label, run_name

    config = chosen.config
    variant = chosen.mutant.name if chosen.mutant is not None else None
    family = config.protocol
    # What the relations do not cover, asked before the search is chosen
    # (symbolic.capabilities; a mixed config's rows are all asked here).
    facts = bmc_facts(args, chosen)
    check(BMC, family, "any", facts)
    if family == "classic":
        return cmd_bmc_classic(args, chosen, variant)
    if family == "mixed":
        return cmd_bmc_mixed(args, chosen, variant)
    from invariants.z3.proof.bmc_lasso import CONVERGENCE, LASSO_VARIANTS

    if variant in LASSO_VARIANTS or (args.only and CONVERGENCE in args.only):
        # Convergence: a lasso search over the client layer (invariants.z3.proof.bmc_lasso).
        return cmd_lasso(args, chosen, variant)
    check(BMC, "consumer", "safety", facts)
    goals = list(GOALS)
    if config.assignment_epochs:
        # The states keep the KIP-1251 fields: HolderCommitsAccepted is read too.
        goals += [c.name for c in EPOCH_GOALS]
    goals += expiry_goals(config)
    if config.assignor_offload:
        # The states keep the KIP-1263 assignor runs: their properties are read too.
        goals += [c.name for c in OFFLOAD_GOALS] + [s.name for s in OFFLOAD_STEP_GOALS]
    # The client layer only for a client-side variant: its properties read the clients.
    layer = None
    if variant in CLIENT_VARIANTS:
        goals += [c.name for c in CLIENT_GOALS]
        if variant in POLL_VARIANTS:
            # A client rejoins only after its poll timer expired: asked where the layer
            # has its poll timers.
            goals += [c.name for c in POLL_GOALS]
        if variant in LEAVE_VARIANTS:
            # A client's epoch goes down only when it leaves: asked where the layer has
            # its leaves.
            goals += [c.name for c in CLIENT_STEP_GOALS]
    goals = chosen_goals(args.only, goals)
    # Without --depth: the depth of the variant's shortest path, where one is known
    # (the catalogue entry's Mutant.bmc_depth).
    known = bmc_depths(VARIANTS).get(variant or "")
    depth = args.depth or known or 3
    lift_states = args.max_states or DEFAULT_LIFT_STATES
    out_dir = Path(args.out)
    scenario = chosen.preset or config.name.split("+")[0]
    run_dir = out_dir / run_name(run_label(scenario, chosen.change, "bmc", None))
    check_target(run_dir)  # refuse an output location before searching, not after
    options = Options.of(config, variant)
    # The configuration's finite domains: quantifier-free unrollings.
    universe = universe_of(config)
    if variant in CLIENT_VARIANTS:
        layer = Layer.of(config, universe, variant)
    group_epoch = initial_group_epoch(config)
    progress = progress_for(args.quiet)
    start = time.monotonic()
    rows: list[dict[str, Any]] = []
    if progress is not None:
        progress(f"bmc: {', '.join(goals)} up to depth {depth}")
    outcomes = search_all(
        goals,
        depth,
        options,
        timeout_ms=int(args.budget * 1000),
        universe=universe,
        group_epoch=group_epoch,
        layer=layer,
    )
    client_goals = {c.name for c in (*CLIENT_GOALS, *CLIENT_STEP_GOALS, *POLL_GOALS)}
    for goal, out in outcomes.items():
        row: dict[str, Any] = {
            "property": goal,
            "status": out.status,
            "depth": out.depth,
            "seconds": round(out.seconds, 3),
        }
        if out.reason:
            row["reason"] = out.reason
        if out.path is not None:
            row["path"] = render_path(out.path, render)
            try:
                if layer is not None:
                    # Clients and coordinator replayed together; a client property read
                    # on the Python snapshot of the last state (every heartbeat of the
                    # layer is accepted: no UNKNOWN_SERVER_ERROR).
                    states, snaps = replay_clients(
                        out.path,
                        config.rules,
                        config,
                        after_assignor=after_assignor(config.rules),
                    )
                    row["replayed"] = (
                        confirmed_clients(goal, snaps)
                        if goal in client_goals
                        else confirmed(out.path, states, False)
                    )
                else:
                    states, server_error = replay(
                        out.path,
                        config.rules,
                        config,
                        after_assignor=after_assignor(config.rules),
                    )
                    row["replayed"] = confirmed(out.path, states, server_error)
            except ReplayDiverged as e:
                row["replayed"] = False
                row["replay_error"] = str(e)
        rows.append(row)
    written = lift_and_write(
        args, chosen, outcomes, rows, universe, lift_states, out_dir, run_dir, progress
    )
    seconds = time.monotonic() - start
    violated = [r for r in rows if r["status"] == "violation"]
    result = rows_result(rows)
    result, bound = mutant_bound(
        result,
        variant,
        depth,
        given=args.depth is not None,
        known=known,
    )
    doc = bmc_doc(result, config.name, variant, depth, seconds, rows, lift_states, written, bound)
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        head = {"ok": "ok", "violation": "VIOLATION", "inconclusive": "INCONCLUSIVE"}[result]
        print(f"{head} (bmc over the symbolic core, depth {depth}; {round(seconds, 3)} s)")
        for r in rows:
            extra = f" ({r['reason']})" if r.get("reason") else ""
            print(f"  {r['status']:9} {r['property']} (depth {r['depth']}){extra}")
        if bound:
            print(f"  {bound}")
        for r in violated:
            replayed = "confirmed" if r["replayed"] else "NOT confirmed"
            print(f"\nVIOLATION of {r['property']} in {r['depth']} steps; Python replay {replayed}")
            for line in r["path"]:
                print(f"  {visible(line)}")
            if r.get("replay_error"):
                print(f"  replay: {visible(r['replay_error'])}")
            if r.get("lift"):
                print(f"  lift: {visible(r['lift']['summary'])}")
        if doc["run_dir"] is not None:
            print(
                f"\nMODEL COUNTEREXAMPLE of {doc['property']} (lifted from the bmc path of "
                f"{doc['lifted_from']}): {doc['length']} steps"
            )
            print(f"  {visible(doc['message'] or '')}")
            for i, step in enumerate(doc["steps_taken"], 1):
                print(f"    {i:3}. {visible(step)}")
            print(f"  Z3 re-check: {doc['z3']}")
            print(f"  written to {doc['trace']}")
            print(f"  report: {doc['report']}")
            print(f"  reproduce: {doc['reproduce']}")
        elif violated:
            print("\nno run directory written: no counterexample was lifted to a model trace")
    if violated:
        # A violation the Python coordinator does not reproduce is a bug of the encoding.
        if not all(r["replayed"] for r in violated):
            return exitcodes.INTERNAL_ERROR
        return exitcodes.VIOLATION
    return exitcodes.INCONCLUSIVE if result == "inconclusive" else exitcodes.OK


def expiry_goals(config: Any) -> list[str]:
    """The step properties BMC reads besides ``GOALS`` where the states keep which
    partitions exist (KIP-211 expiry) or the deletion fields (group deletion)."""
    from invariants.z3.proof.bmc import DELETION_GOALS, EXPIRY_GOALS
    from invariants.z3.proof.transition import Options

    options = Options.of(config)
    goals = [s.name for s in EXPIRY_GOALS] if options.offset_expiry else []
    return goals + ([s.name for s in DELETION_GOALS] if options.group_deletion else [])
