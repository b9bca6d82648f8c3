"""``groupcheck explore --engine bmc`` for Convergence: the shortest fair non-converging
lasso of the KIP-848 client layer (``invariants.z3.proof.bmc_lasso``) or of the classic
coordinator's relation (``classic_lasso``), confirmed in the Python model and written as a
run directory like the BFS engine's Convergence counterexamples."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from groupcheck.mutants import lasso_depths
from groupcheck.symbolic.bmc_lifted import mutant_bound
from groupcheck.symbolic.capabilities import BMC, bmc_facts, check
from groupcheck.symbolic.runs import bmc_doc, initial_group_epoch, path_lines, write_lifted


def cmd_classic_lasso(args: argparse.Namespace, chosen: Any, variant: str | None) -> int:
    """``explore --engine bmc`` for Convergence on a classic configuration: the shortest
    fair non-converging lasso of the classic coordinator's relation
    (``invariants.z3.proof.classic_lasso``) up to ``--depth`` whose prefix lifts to a model
    trace from which the model's fair schedule does not converge
    (``groupcheck.explore.classic_lift.lift_lasso``); that trace is written as a run
    directory like the BFS engine's Convergence counterexamples."""
    from pathlib import Path

    from groupcheck import exitcodes
    from groupcheck.explore.classic_lift import lift_lasso
    from groupcheck.progress import progress_for
    from invariants.z3.proof.classic_bmc import DEFAULT_LIFT_STATES, render_path
    from invariants.z3.proof.classic_lasso import (
        CONVERGENCE,
        DEFAULT_DEPTH,
        LASSO_VARIANTS,
        SHIFTED_VARIANTS,
        search_lasso,
    )
    from invariants.z3.proof.classic_transition import ClassicOptions
    from reports.artifacts import run_label, run_name
    from reports.casestudy import describe_action
    from reports.publish import check_target

    config = chosen.config
    check(BMC, "classic", "lasso", bmc_facts(args, chosen))
    depth = args.depth or DEFAULT_DEPTH
    lift_states = args.max_states or DEFAULT_LIFT_STATES
    shifts = variant in SHIFTED_VARIANTS
    out_dir = Path(args.out)
    scenario = chosen.preset or config.name.split("+")[0]
    run_dir = out_dir / run_name(run_label(scenario, chosen.change, "bmc", None))
    check_target(run_dir)
    progress = progress_for(args.quiet)
    start = time.monotonic()
    if progress is not None:
        kind = "up to a generation shift" if shifts else "fair non-converging lassos"
        progress(f"bmc (classic): {CONVERGENCE} ({kind}) up to depth {depth}")
    out = search_lasso(
        depth,
        config,
        ClassicOptions.of(config, variant),
        confirmer=lift_lasso,
        lift_states=lift_states,
        shifts=shifts,
    )
    row: dict[str, Any] = {
        "property": CONVERGENCE,
        "status": {"inconclusive": "unknown"}.get(out.status, out.status),
        "depth": out.depth,
        "seconds": round(out.seconds, 3),
        "lassos_tried": out.tried,
        "replayed": out.trace is not None,
    }
    if out.status == "ok":
        row["checked"] = (
            f"no fair non-converging lasso of at most {depth} steps of the classic relation"
            + (" (up to a generation shift)" if shifts else "")
        )
    if out.status == "inconclusive":
        row["reason"] = (
            f"Z3 gave no answer at depth {out.depth}"
            if out.unanswered and not out.tried
            else f"{out.tried} lasso(s), none confirmed: no model trace through the prefix, "
            "or the model's fair schedule converges from its end"
            + (f"; Z3 gave no answer at depth {out.depth}" if out.unanswered else "")
        )
    if out.lasso is not None:
        row["loop"] = {
            "entry": out.lasso.loop,
            "steps": out.lasso.loop_steps(),
            "generation_shift": out.lasso.shift,
        }
        row["path"] = render_path(out.lasso.path)
    written: dict[str, Any] = {
        "run_dir": None,
        "trace": None,
        "report": None,
        "reproduce": None,
        "property": None,
        "length": None,
        "steps_taken": [],
    }
    if out.trace is not None and out.lasso is not None:
        loop = row["loop"]
        message = (
            f"{CONVERGENCE}: from the end of this trace the model's fair schedule does not "
            f"converge. The bmc lasso of {out.depth} steps loops from its state "
            f"{loop['entry']} through {', '.join(loop['steps'])}"
            + (
                f", back to that state with every generation {out.lasso.shift} larger."
                if out.lasso.shift
                else "."
            )
        )
        written.update(
            **write_lifted(chosen, out.trace, CONVERGENCE, message, out_dir, run_dir),
            property=CONVERGENCE,
            length=len(out.trace.actions),
            steps_taken=[describe_action(a) for a in out.trace.actions],
        )
        row["lift"] = {
            "status": "lifted",
            "length": len(out.trace.actions),
            "property": CONVERGENCE,
            "summary": f"the prefix lifted to a {len(out.trace.actions)}-step model trace "
            "from whose end the model's fair schedule does not converge",
        }
    seconds = time.monotonic() - start
    result = {"violation": "violation", "ok": "ok"}.get(out.status, "inconclusive")
    # The known depth: the family's variants' Mutant.lasso_depth.
    result, bound = lasso_bound(result, variant, depth, args, lasso_depths(LASSO_VARIANTS))
    doc = bmc_doc(result, config.name, variant, depth, seconds, [row], lift_states, written, bound)
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        loop_note = ""
        if "loop" in row:
            shift = row["loop"]["generation_shift"]
            confirmed = "confirmed" if out.trace is not None else "NOT confirmed"
            loop_note = (
                f" (back with every generation {shift} larger)" if shift else ""
            ) + f"; {confirmed} by the model's fair schedule"
        print_lasso(
            result,
            layer="the classic coordinator",
            prop=CONVERGENCE,
            depth=depth,
            seconds=seconds,
            row=row,
            bound=bound,
            loop_note=loop_note,
            steps=written["steps_taken"] if written["run_dir"] is not None else None,
            written=written,
        )
    if result == "violation":
        return exitcodes.VIOLATION
    return exitcodes.INCONCLUSIVE if result == "inconclusive" else exitcodes.OK


def print_lasso(
    result: str,
    *,
    layer: str,
    prop: str,
    depth: int,
    seconds: float,
    row: dict[str, Any],
    bound: str | None,
    loop_note: str,
    steps: list[str] | None,
    written: dict[str, Any],
    extra: tuple[str, ...] | list[str] = (),
) -> None:
    """The text form of a Convergence search's verdict: its row, the lasso found (its loop,
    then ``loop_note``), ``extra`` lines, and the model counterexample written (``steps``,
    the lifted prefix described step by step; ``None`` when nothing was written)."""
    from reports.escape import visible

    head = {"ok": "ok", "violation": "VIOLATION", "inconclusive": "INCONCLUSIVE"}[result]
    print(f"{head} (bmc over {layer}, depth {depth}; {round(seconds, 3)} s)")
    reason = f" ({row['reason']})" if row.get("reason") else ""
    print(f"  {row['status']:9} {prop} (depth {row['depth']}){reason}")
    if row.get("checked"):
        print(f"  checked: {row['checked']}")
    if bound:
        print(f"  {bound}")
    if "loop" in row:
        loop = row["loop"]
        print(
            f"\nLASSO of {row['depth']} steps, the loop from state {loop['entry']}: "
            f"{', '.join(loop['steps'])}{loop_note}"
        )
        for line in row["path"]:
            print(f"  {visible(line)}")
        for line in extra:
            print(f"  {visible(line)}")
    if steps is not None:
        print(
            f"\nMODEL COUNTEREXAMPLE of {prop} (the lasso's prefix lifted to a model "
            f"trace): {len(steps)} steps"
        )
        for i, step in enumerate(steps, 1):
            print(f"    {i:3}. {visible(step)}")
        print("    …then, with no more perturbations, a fair schedule never converges")
        print(f"  written to {written['trace']}")
        print(f"  report: {written['report']}")
        print(f"  reproduce: {written['reproduce']}")


def lasso_bound(
    result: str, variant: str | None, depth: int, args: argparse.Namespace, known: dict[str, int]
) -> tuple[str, str | None]:
    """``mutant_bound`` for a Convergence search: a liveness-only variant's shortest lasso
    is known (``known``); any other mutant is here only by ``--only Convergence``, which
    asks for a lasso its kill is not."""
    if variant is None or variant in known:
        return mutant_bound(
            result, variant, depth, given=args.depth is not None, known=known.get(variant or "")
        )
    return mutant_bound(
        result,
        variant,
        depth,
        given=True,
        known=None,
        unreached="its kill is a safety property, not a lasso",
    )


def lasso_row(
    lasso: Any, config: Any, universe: Any, *, lift_states: int, bound: int | None = None
) -> tuple[dict[str, Any], Any]:
    """Confirm a lasso in Python (``bmc_lasso.replay_lasso``, then
    ``groupcheck.explore.lift.lift_lasso``: a model trace to the loop's entry from which the
    fair schedule does not converge). Returns the report's row (``status`` "violation"
    only when both hold; "inconclusive" when the model's fair schedule converges from every
    state matching the loop's entry it reached; "violation" with ``replayed`` False when the
    Python clients and coordinator do not walk the path: an encoding bug) and the lift."""
    from groupcheck.explore.lift import lift_lasso
    from groupcheck.mutants.catalogue import after_assignor
    from invariants.z3.proof.bmc import ReplayDiverged
    from invariants.z3.proof.bmc_lasso import CONVERGENCE, replay_lasso

    path = lasso.path
    row: dict[str, Any] = {
        "property": CONVERGENCE,
        "status": "violation",
        "depth": len(path.steps),
        "loop": {"entry": lasso.loop, "steps": lasso.loop_steps()},
        "path": path_lines(path),
    }
    try:
        closes = replay_lasso(
            lasso, config.rules, config, after_assignor=after_assignor(config.rules)
        )
    except ReplayDiverged as e:
        row.update(replayed=False, replay_error=str(e))
        return row, None
    if not closes:
        row.update(replayed=False, replay_error="the Python loop does not close")
        return row, None
    row["replayed"] = True
    lifted = lift_lasso(lasso, config, universe, max_states=lift_states, bound=bound)
    row["lift"] = lifted.to_json()
    if lifted.path is None:
        matching = sum(a.get("matching", 0) for a in lifted.attempts)
        row["status"] = "inconclusive"
        row["reason"] = (
            f"the lasso is not fair in the model's sense: the model's fair schedule converges "
            f"from each of the {matching} states matching the loop's entry it reached"
            if matching
            else f"no model state matching the loop's entry within {lift_states} states per level"
        )
    return row, lifted


def cmd_lasso(args: argparse.Namespace, chosen: Any, variant: str | None) -> int:
    """``explore --engine bmc`` for Convergence: the shortest fair non-converging lasso of
    the client layer (``invariants.z3.proof.bmc_lasso``) up to ``--depth``, confirmed by
    :func:`lasso_row` (the layer's confirmer in the one lasso search,
    ``invariants.z3.lasso``) and written as a run directory like the BFS engine's Convergence
    counterexamples (the trace to the loop's entry)."""
    from pathlib import Path

    from groupcheck import exitcodes
    from groupcheck.explore.lift import DEFAULT_LIFT_STATES
    from groupcheck.progress import progress_for
    from invariants.z3.lasso import Confirmation, Lasso
    from invariants.z3.proof.bmc import universe_of
    from invariants.z3.proof.bmc_clients import Layer
    from invariants.z3.proof.bmc_lasso import CONVERGENCE, LASSO_VARIANTS, search_lasso
    from invariants.z3.proof.transition import Options
    from reports.artifacts import run_label, run_name
    from reports.publish import check_target

    config = chosen.config
    check(BMC, "consumer", "lasso", bmc_facts(args, chosen))
    # Without --depth: the length of the variant's shortest lasso, where one is known.
    depth = args.depth or lasso_depths(LASSO_VARIANTS).get(variant or "", 3)
    lift_states = args.max_states or DEFAULT_LIFT_STATES
    out_dir = Path(args.out)
    scenario = chosen.preset or config.name.split("+")[0]
    run_dir = out_dir / run_name(run_label(scenario, chosen.change, "bmc", None))
    check_target(run_dir)
    universe = universe_of(config)
    # Lossy where the configuration loses messages: a fenced client and its rejoin.
    layer = Layer.of(config, universe, variant, lossy=True)
    progress = progress_for(args.quiet)
    start = time.monotonic()
    if progress is not None:
        progress(f"bmc: {CONVERGENCE} (fair non-converging lassos) up to depth {depth}")
    confirmed: list[tuple[dict[str, Any], Any]] = []

    def confirm(lasso: Lasso) -> Confirmation:
        """The layer's confirmer: :func:`lasso_row` (the first lasso decides)."""
        if progress is not None:
            progress("bmc: replaying the lasso and running the model's fair schedule")
        found, lifted = lasso_row(lasso, config, universe, lift_states=lift_states)
        confirmed.append((found, lifted))
        ok = found["status"] == "violation" and bool(found.get("replayed"))
        return Confirmation(ok, trace=lifted)

    out = search_lasso(
        depth,
        Options.of(config, variant),
        universe=universe,
        layer=layer,
        group_epoch=initial_group_epoch(config),
        timeout_ms=int(args.budget * 1000),
        confirm=confirm,
    )
    row: dict[str, Any] = {
        "property": CONVERGENCE,
        "status": "unknown" if out.unanswered else out.status,
        "depth": out.depth,
        "seconds": round(out.seconds, 3),
    }
    if out.reason:
        row["reason"] = out.reason
    if out.status == "ok":
        row["checked"] = (
            f"no fair non-converging lasso of at most {depth} steps over the client layer"
        )
    lifted = None
    if confirmed:
        found, lifted = confirmed[-1]
        row.update({k: v for k, v in found.items() if k != "depth"})
    written: dict[str, Any] = {"run_dir": None, "trace": None, "report": None, "reproduce": None}
    if lifted is not None and lifted.path is not None:
        loop = row["loop"]
        message = (
            f"{lifted.message or ''} The bmc lasso of {row['depth']} steps loops from its "
            f"state {loop['entry']} through {', '.join(loop['steps'])}."
        ).strip()
        written = write_lifted(chosen, lifted.path, CONVERGENCE, message, out_dir, run_dir)
    seconds = time.monotonic() - start
    result = {"violation": "violation", "ok": "ok"}.get(row["status"], "inconclusive")
    # The known depth: the family's variants' Mutant.lasso_depth.
    result, bound = lasso_bound(result, variant, depth, args, lasso_depths(LASSO_VARIANTS))
    doc = bmc_doc(result, config.name, variant, depth, seconds, [row], lift_states, written, bound)
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        from reports.casestudy import describe_action

        replayed = "confirmed" if row.get("replayed") else "NOT confirmed"
        extra = []
        if row.get("replay_error"):
            extra.append(f"replay: {row['replay_error']}")
        if row.get("lift"):
            extra.append(f"lift: {row['lift']['summary']}")
        model_path = lifted.path if lifted is not None else None
        print_lasso(
            result,
            layer="the client layer",
            prop=CONVERGENCE,
            depth=depth,
            seconds=seconds,
            row=row,
            bound=bound,
            loop_note=f"; Python replay {replayed}",
            extra=extra,
            steps=None if model_path is None else [describe_action(a) for a in model_path.actions],
            written=written,
        )
    if result == "violation":
        if not row.get("replayed"):
            return exitcodes.INTERNAL_ERROR
        return exitcodes.VIOLATION
    return exitcodes.INCONCLUSIVE if result == "inconclusive" else exitcodes.OK
