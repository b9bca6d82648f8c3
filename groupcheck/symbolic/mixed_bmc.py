"""``groupcheck explore --engine bmc`` on a mixed configuration (``protocol = "mixed"``):
bounded model checking over a mixed group's relation (``invariants.z3.proof.mixed_bmc``),
every path lifted to a trace of the Python migration model
(``groupcheck.explore.mixed_lift``) before it counts as a violation; the first lifted
trace is written as a run directory, as ``groupcheck.symbolic`` does for the other
relations. A mutant killed by a lost witness (``mixed_witness.LOST``) is searched for that
instead (:func:`cmd_witness_lost`)."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from typing import Any

from groupcheck import exitcodes
from groupcheck.mutants import bmc_depths
from groupcheck.progress import progress_for
from groupcheck.symbolic.bmc_lifted import Relation, chosen_goals, run_goals
from groupcheck.symbolic.runs import bmc_doc
from invariants.liveness import WITNESSES
from model.rules import DEFAULT_RULES
from reports.casestudy import describe_action
from reports.escape import visible


def cmd_bmc_mixed(args: argparse.Namespace, chosen: Any, variant: str | None) -> int:
    """Run the mixed BMC (module docstring) on a request ``symbolic.bmc_cmd.cmd_bmc`` has
    checked against the capability table; exit 1 for a lifted violation, 3 when a
    symbolic path did not lift, 0 when no path of the relation violates a goal."""
    from groupcheck.explore.mixed_lift import lift
    from invariants.z3.proof.mixed_bmc import (
        DEFAULT_LIFT_STATES,
        GOALS,
        render_path,
        search,
    )
    from invariants.z3.proof.mixed_transition import VARIANTS, MixedOptions
    from invariants.z3.proof.mixed_witness import LOST

    # The mutant (a variant of the mixed relation) and the config (in its scope) were
    # asked of the capability table before (symbolic.capabilities, stage "any").
    config = chosen.config

    if variant in LOST:
        return cmd_witness_lost(args, chosen, variant)
    goals = list(GOALS)
    goals = chosen_goals(args.only, goals)
    # Without --depth: the depth of the variant's shortest path.
    known = bmc_depths(VARIANTS).get(variant or "")  # Mutant.bmc_depth
    depth = args.depth or known or 3
    lift_states = args.max_states or DEFAULT_LIFT_STATES
    options = MixedOptions.of(config, variant)
    return run_goals(
        args,
        chosen,
        variant=variant,
        goals=goals,
        depth=depth,
        lift_states=lift_states,
        relation=Relation(
            "the mixed group's coordinator", "mixed group", "coordinator steps", render_path
        ),
        search=lambda goal, _progress: search(
            goal, depth, config, options, lifter=lift, lift_states=lift_states
        ),
        known=known,
    )


def cmd_witness_lost(args: argparse.Namespace, chosen: Any, variant: str) -> int:
    """A mutant killed by a lost witness (``invariants.z3.proof.mixed_witness``): a
    violation (exit 1) only if the witness is proved unreachable under the mutant's rules
    (every obligation unsatisfiable) and a path of the reference relation reaching it is
    lifted to a model trace; otherwise inconclusive (exit 3) with the reason. Nothing is
    written: the lifted trace is the reference rules', no counterexample."""
    from groupcheck.explore.mixed_lift import lift_witness
    from invariants.z3.proof.mixed_bmc import DEFAULT_LIFT_STATES, render_path
    from invariants.z3.proof.mixed_state import ID_SLOTS
    from invariants.z3.proof.mixed_witness import INVARIANT, LOST, prove, reach

    witness = LOST[variant]
    chosen_goals(args.only, [witness])
    config = chosen.config
    reference = replace(config, rules=DEFAULT_RULES)
    depth = args.depth or 3
    lift_states = args.max_states or DEFAULT_LIFT_STATES
    progress = progress_for(args.quiet)
    start = time.monotonic()
    if progress is not None:
        progress(f"bmc (mixed group): {witness} lost under {variant}: induction")
    proof = prove(config, variant)
    if progress is not None:
        progress(f"bmc (mixed group): {witness} under the reference rules up to depth {depth}")
    seen = next(w.seen for w in WITNESSES if w.prop.name == witness)
    found = reach(witness, depth, reference, lifter=lift_witness(seen), lift_states=lift_states)
    cpu = sum(r.seconds for r in proof.results) + found.seconds
    obligations = len(proof.results)
    proved = (
        f"unreachable under {variant}'s rules at every depth: the invariant {INVARIANT} is "
        f"inductive and excludes {witness}'s step ({obligations} obligations, each "
        f"unsatisfiable, on the universe of {ID_SLOTS} member ids per classic client)"
    )
    reasons: list[str] = []
    if not proof.proved:
        bad = proof.failures()
        reasons.append(
            f"not proved unreachable under {variant}'s rules: "
            + ", ".join(f"{r.obligation.name} {r.status}" for r in bad)
        )
    if proof.reference_step != "sat":
        reasons.append(
            f"the reference relation's {witness} step from a state satisfying {INVARIANT}: "
            f"{proof.reference_step}"
        )
    actions = list(found.trace.actions) if found.trace is not None else []
    if found.status != "violation":
        reasons.append(
            found.message
            or (
                f"{found.tried} path(s) of the reference relation to {witness}, none lifted"
                if found.tried
                else f"no path of the reference relation to {witness} up to depth {depth}"
            )
        )
    status = "unknown" if reasons else "violation"
    row: dict[str, Any] = {
        "property": witness,
        "status": status,
        "kind": "witness lost",
        "depth": found.depth,
        "seconds": round(cpu, 3),
        "paths_tried": found.tried,
        "proof": [r.to_json() for r in proof.results],
        "reference_step": proof.reference_step,
        "replayed": found.trace is not None,
    }
    if reasons:
        row["reason"] = "; ".join(reasons)
    else:
        row["reason"] = proved
    if found.path is not None:
        row["path"] = render_path(found.path)
    steps = [describe_action(a) for a in actions]
    if found.trace is not None:
        row["lift"] = {
            "status": "lifted",
            "length": len(actions),
            "summary": f"lifted to a {len(actions)}-step model trace under the reference "
            f"rules matching the path's states exactly; its last step is {witness}'s",
        }
    seconds = time.monotonic() - start
    result = "inconclusive" if reasons else "violation"
    written: dict[str, Any] = {"run_dir": None, "trace": None, "report": None, "reproduce": None}
    written |= {"lifted_from": None, "property": None, "message": None, "length": None}
    written |= {"z3": None, "steps_taken": steps}
    doc = bmc_doc(result, config.name, variant, depth, seconds, [row], lift_states, written)
    if args.json:
        print(json.dumps(doc, indent=1))
        return exitcodes.VIOLATION if result == "violation" else exitcodes.INCONCLUSIVE
    head = "VIOLATION" if result == "violation" else "INCONCLUSIVE"
    print(f"{head} (bmc over the mixed group's coordinator, depth {depth}; {round(seconds, 3)} s)")
    print(f"  {status:9} {witness} (depth {found.depth}) (witness lost: {row['reason']})")
    if found.path is not None and found.trace is not None:
        print(f"\n{witness} under the reference rules in {found.depth} coordinator steps; lifted")
        for line in row["path"]:
            print(f"  {visible(line)}")
        print(f"\nMODEL TRACE (reference rules) to {witness}: {len(steps)} steps")
        for i, step in enumerate(steps, 1):
            print(f"    {i:3}. {visible(step)}")
    return exitcodes.VIOLATION if result == "violation" else exitcodes.INCONCLUSIVE
