"""``groupcheck explore --engine bmc`` on a mixed configuration (``protocol = "mixed"``):
bounded model checking over a mixed group's relation (``invariants.z3.proof.mixed_bmc``),
every path lifted to a trace of the Python migration model
(``groupcheck.explore.mixed_lift``) before it counts as a violation; the first lifted
trace is written as a run directory, as ``groupcheck.prove`` does for the other
relations."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any


def cmd_bmc_mixed(args: argparse.Namespace, chosen: Any, variant: str | None) -> int:
    """Run the mixed BMC (module docstring); exit 1 for a lifted violation, 3 when a
    symbolic path did not lift, 0 when no path of the relation violates a goal."""
    from groupcheck import exitcodes
    from groupcheck.explore.mixed_lift import lift
    from groupcheck.explore.run import z3_recheck
    from groupcheck.progress import progress_for
    from groupcheck.prove import _bmc_doc, _write_lifted
    from invariants.z3.proof.mixed_bmc import DEFAULT_LIFT_STATES, GOALS, render_path, search
    from invariants.z3.proof.mixed_transition import VARIANTS, MixedOptions, unsupported
    from invariants.z3.proof.transition import OUTSIDE
    from model.status import ConfigError
    from reports.artifacts import run_label, run_name
    from reports.casestudy import describe_action
    from reports.publish import check_target

    config = chosen.config
    if variant is not None and variant in OUTSIDE:
        raise ConfigError(
            f"--engine bmc: mutant {variant!r} is outside the symbolic core: {OUTSIDE[variant]}"
        )
    if variant is not None and variant not in VARIANTS:
        raise ConfigError(
            f"--engine bmc has no mixed-group symbolic variant of mutant {variant!r}; known: "
            f"{', '.join(VARIANTS)}"
        )
    why = unsupported(config)
    if why is not None:
        raise ConfigError(f"--engine bmc: {why}; explore it instead")
    goals = list(GOALS)
    if args.only:
        unknown = [g for g in args.only if g not in goals]
        if unknown:
            raise ConfigError(f"--only {unknown[0]!r}: --engine bmc checks {', '.join(goals)}")
        goals = [g for g in goals if g in args.only]
    depth = args.depth or 3
    lift_states = args.max_states or DEFAULT_LIFT_STATES
    out_dir = Path(args.out)
    scenario = chosen.preset or config.name.split("+")[0]
    run_dir = out_dir / run_name(run_label(scenario, chosen.change, "bmc", None))
    check_target(run_dir)
    options = MixedOptions.of(config, variant)
    progress = progress_for(args.quiet)
    start = time.monotonic()
    rows: list[dict[str, Any]] = []
    written: dict[str, Any] = {
        "run_dir": None,
        "trace": None,
        "report": None,
        "reproduce": None,
        "lifted_from": None,
        "property": None,
        "message": None,
        "length": None,
        "z3": None,
        "steps_taken": [],
    }
    for goal in goals:
        if progress is not None:
            progress(f"bmc (mixed group): {goal} up to depth {depth}")
        out = search(goal, depth, config, options, lifter=lift, lift_states=lift_states)
        status = {"violation": "violation", "ok": "ok", "inconclusive": "unknown"}[out.status]
        row: dict[str, Any] = {
            "property": goal,
            "status": status,
            "depth": out.depth,
            "seconds": round(out.seconds, 3),
            "paths_tried": out.tried,
        }
        if out.status == "inconclusive":
            row["reason"] = f"{out.tried} symbolic path(s), none lifted to a model trace"
        if out.path is not None:
            row["path"] = render_path(out.path)
        row["replayed"] = out.trace is not None
        if out.trace is not None and out.property is not None:
            row["lift"] = {
                "status": "lifted",
                "length": len(out.trace.actions),
                "property": out.property,
                "summary": f"lifted to a {len(out.trace.actions)}-step model trace matching the "
                f"path's states exactly; it violates {out.property}",
            }
            if written["run_dir"] is None:
                written.update(
                    **_write_lifted(
                        chosen, out.trace, out.property, out.message or "", out_dir, run_dir
                    ),
                    lifted_from=goal,
                    property=out.property,
                    message=out.message,
                    length=len(out.trace.actions),
                    z3=z3_recheck(out.trace, out.property),
                    steps_taken=[describe_action(a) for a in out.trace.actions],
                )
        rows.append(row)
    seconds = time.monotonic() - start
    violated = [r for r in rows if r["status"] == "violation"]
    result = "ok"
    if violated:
        result = "violation"
    elif any(r["status"] == "unknown" for r in rows):
        result = "inconclusive"
    doc = _bmc_doc(result, config.name, variant, depth, seconds, rows, lift_states, written)
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        from groupcheck.cli import printable

        head = {"ok": "ok", "violation": "VIOLATION", "inconclusive": "INCONCLUSIVE"}[result]
        where = f"bmc over the mixed group's coordinator, depth {depth}"
        print(f"{head} ({where}; {round(seconds, 3)} s)")
        for r in rows:
            extra = f" ({r['reason']})" if r.get("reason") else ""
            print(f"  {r['status']:9} {r['property']} (depth {r['depth']}){extra}")
        for r in violated:
            print(f"\nVIOLATION of {r['property']} in {r['depth']} coordinator steps; lifted")
            for line in r["path"]:
                print(f"  {printable(line)}")
        if doc["run_dir"] is not None:
            print(f"\nMODEL COUNTEREXAMPLE of {doc['property']}: {doc['length']} steps")
            print(f"  {printable(doc['message'] or '')}")
            for i, step in enumerate(doc["steps_taken"], 1):
                print(f"    {i:3}. {printable(step)}")
            print(f"  Z3 re-check: {doc['z3']}")
            print(f"  written to {doc['trace']}")
            print(f"  report: {doc['report']}")
            print(f"  reproduce: {doc['reproduce']}")
    if violated:
        return exitcodes.VIOLATION
    return exitcodes.INCONCLUSIVE if result == "inconclusive" else exitcodes.OK
