"""The goal loop and the output of ``explore --engine bmc`` over a relation whose paths count
only once lifted to a model trace: the classic coordinator (``classic_bmc``), the classic
coordinator with its clients (``classic_client_bmc``) and a mixed group
(``mixed_bmc``). Each goal is searched up to the depth; a lifted path is a violation and
the first one is written as a run directory (``groupcheck.symbolic.runs.write_lifted``); paths
that never lift make the goal unknown; no path is ok — or unknown with the reason, when
the relation restricts the model (``Relation.restricted``)."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupcheck import exitcodes
from groupcheck.progress import progress_for
from groupcheck.symbolic.runs import bmc_doc, rows_result, unwritten, write_lifted
from model.status import ConfigError
from reports.casestudy import describe_action
from reports.escape import visible
from reports.publish import check_target

Progress = Callable[[str], None] | None


@dataclass(frozen=True)
class Relation:
    """What the output says of the relation searched."""

    name: str
    """In the headline: ``bmc over <name>, depth D``."""
    tag: str
    """In the progress lines: ``bmc (<tag>): GOAL up to depth D``."""
    steps: str
    """What a path's steps are: ``coordinator steps`` or ``steps``."""
    render: Callable[[Any], list[str]]
    """A path's lines."""
    restricted: str | None = None
    """Why "no path" is no bound for the model (None: it is one)."""


def mutant_bound(
    result: str,
    variant: str | None,
    depth: int,
    *,
    given: bool,
    known: int | None,
    unreached: str | None = None,
    steps: str = "steps",
) -> tuple[str, str | None]:
    """A mutant run's result and what its depth says of the mutant (``bound``; None for a
    violation or a run without a mutant). BMC sees no path longer than the depth, so a
    mutant run that found nothing says so: the depth bounds it, the shortest known path of
    the variant (``known``: the default depth) or that none is known (with ``unreached``,
    what is), and that the mutant matrix kills the mutant. A run without ``--depth``
    (``given``) is meant to find the mutant: when no path of it is known, its ok is no
    answer and the result is inconclusive; with ``--depth K`` ok says what it always
    says, no violation within K."""
    if variant is None or result == "violation":
        return result, None
    matrix = "the mutant matrix (groupcheck mutants) kills it"
    if known is None:
        what = f" ({unreached})" if unreached else ""
        bound = (
            f"bounded by depth {depth}: the depth a path of {variant} needs is not "
            f"known{what}; {matrix}"
        )
        return ("inconclusive" if not given else result), bound
    if depth < known:
        return result, (
            f"bounded by depth {depth}: the shortest known path of {variant} has {known} "
            f"{steps} (the depth without --depth); {matrix}"
        )
    return result, (
        f"bounded by depth {depth} (the shortest known path of {variant} has {known} "
        f"{steps}); {matrix}"
    )


def chosen_goals(only: list[str] | None, goals: list[str]) -> list[str]:
    """``goals`` narrowed to ``--only`` (``ConfigError`` naming a goal it does not have)."""
    if not only:
        return goals
    unknown = [g for g in only if g not in goals]
    if unknown:
        raise ConfigError(f"--only {unknown[0]!r}: --engine bmc checks {', '.join(goals)}")
    return [g for g in goals if g in only]


def run_goals(
    args: argparse.Namespace,
    chosen: Any,
    *,
    variant: str | None,
    goals: list[str],
    depth: int,
    lift_states: int,
    relation: Relation,
    search: Callable[[str, Progress], Any],
    known: int | None = None,
    unreached: str | None = None,
) -> int:
    """Search every goal with ``search(goal, progress)`` (an outcome with ``status``,
    ``depth``, ``seconds``, ``tried``, ``path``, ``trace``, ``property``, ``message``),
    print the result (``--json`` or text) and return the exit status: 1 for a lifted
    violation, 3 when a goal is unknown (or, for a mutant, as :func:`mutant_bound` says
    with ``known`` and ``unreached``), 0 otherwise."""
    from groupcheck.explore.run import z3_recheck  # noqa: PLC0415  networkx only when a state graph is built
    from reports.artifacts import run_label, run_name  # noqa: PLC0415  networkx only when a state graph is built

    config = chosen.config
    out_dir = Path(args.out)
    scenario = chosen.preset or config.name.split("+")[0]
    run_dir = out_dir / run_name(run_label(scenario, chosen.change, "bmc", None))
    check_target(run_dir)
    progress = progress_for(args.quiet)
    start = time.monotonic()
    rows: list[dict[str, Any]] = []
    written = unwritten()
    for goal in goals:
        if progress is not None:
            progress(f"bmc ({relation.tag}): {goal} up to depth {depth}")
        out = search(goal, progress)
        status = {"violation": "violation", "ok": "ok", "inconclusive": "unknown"}[out.status]
        row: dict[str, Any] = {
            "property": goal,
            "status": status,
            "depth": out.depth,
            "seconds": round(out.seconds, 3),
            "paths_tried": out.tried,
        }
        if out.status == "inconclusive":
            unlifted = f"{out.tried} symbolic path(s), none lifted to a model trace"
            # ``message``: the depth Z3 gave no answer at (invariants.z3.engine.search).
            reasons = ([unlifted] if out.tried else []) + ([out.message] if out.message else [])
            row["reason"] = "; ".join(reasons) or unlifted
        elif out.status == "ok" and relation.restricted is not None:
            row["status"] = "unknown"
            row["reason"] = (
                f"no path of the relation up to depth {out.depth}, {relation.restricted}"
            )
        if out.path is not None:
            row["path"] = relation.render(out.path)
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
                    **write_lifted(
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
    result = rows_result(rows)
    result, bound = mutant_bound(
        result,
        variant,
        depth,
        given=args.depth is not None,
        known=known,
        unreached=unreached,
        steps=relation.steps,
    )
    doc = bmc_doc(result, config.name, variant, depth, seconds, rows, lift_states, written, bound)
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        _print(doc, rows, violated, relation, depth, seconds)
    if violated:
        return exitcodes.VIOLATION
    return exitcodes.INCONCLUSIVE if result == "inconclusive" else exitcodes.OK


def _print(
    doc: dict[str, Any],
    rows: list[dict[str, Any]],
    violated: list[dict[str, Any]],
    relation: Relation,
    depth: int,
    seconds: float,
) -> None:
    head = {"ok": "ok", "violation": "VIOLATION", "inconclusive": "INCONCLUSIVE"}[doc["result"]]
    print(f"{head} (bmc over {relation.name}, depth {depth}; {round(seconds, 3)} s)")
    for r in rows:
        extra = f" ({r['reason']})" if r.get("reason") else ""
        print(f"  {r['status']:9} {r['property']} (depth {r['depth']}){extra}")
    if doc["bound"]:
        print(f"  {doc['bound']}")
    for r in violated:
        print(f"\nVIOLATION of {r['property']} in {r['depth']} {relation.steps}; lifted")
        for line in r["path"]:
            print(f"  {visible(line)}")
    if doc["run_dir"] is not None:
        print(f"\nMODEL COUNTEREXAMPLE of {doc['property']}: {doc['length']} steps")
        print(f"  {visible(doc['message'] or '')}")
        for i, step in enumerate(doc["steps_taken"], 1):
            print(f"    {i:3}. {visible(step)}")
        print(f"  Z3 re-check: {doc['z3']}")
        print(f"  written to {doc['trace']}")
        print(f"  report: {doc['report']}")
        print(f"  reproduce: {doc['reproduce']}")
