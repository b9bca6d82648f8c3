"""What every ``explore --engine bmc`` search writes and prints alike: its JSON document
(:func:`bmc_doc`), a lifted counterexample published as a run directory
(:func:`write_lifted`, :func:`lift_and_write`) and a symbolic path as text."""

from __future__ import annotations

import argparse
from typing import Any

from groupcheck.jsonout import document
from model.consumer.system import consumer_initial
from reports.casestudy import describe_action


def initial_group_epoch(config: Any) -> int:
    return int(consumer_initial(config).group.group_epoch)


def unwritten() -> dict[str, Any]:
    """A BMC document's run-directory fields when no counterexample was lifted and written
    (no directory)."""
    return {
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


def rows_result(rows: list[dict[str, Any]]) -> str:
    """The verdict of a BMC run's goal rows: a violation if any goal was violated, else
    inconclusive if any was left unknown, else ok."""
    if any(r["status"] == "violation" for r in rows):
        return "violation"
    if any(r["status"] == "unknown" for r in rows):
        return "inconclusive"
    return "ok"


def lift_and_write(
    args: argparse.Namespace,
    chosen: Any,
    outcomes: dict[str, Any],
    rows: list[dict[str, Any]],
    universe: Any,
    lift_states: int,
    out_dir: Any,
    run_dir: Any,
    progress: Any,
) -> dict[str, Any]:
    """Lift the confirmed counterexamples, in the order of ``rows``, to model traces until
    one lifts (``groupcheck.explore.lift``; each row gains ``lift``), and write that one's
    run directory as the other engines do. Returns the document's run-directory fields
    (all None when nothing was lifted: no directory is written)."""
    from groupcheck.explore.lift import lift  # noqa: PLC0415  z3 only when a symbolic check runs
    from groupcheck.explore.run import z3_recheck  # noqa: PLC0415  networkx only when a state graph is built

    fields = unwritten()
    config = chosen.config
    for row in rows:
        if row["status"] != "violation" or not row.get("replayed"):
            continue
        if fields["run_dir"] is not None:
            row["lift"] = {
                "status": "not attempted",
                "summary": f"not attempted: {run_dir} holds the counterexample of "
                f"{fields['lifted_from']}",
            }
            continue
        if progress is not None:
            progress(f"bmc: lifting the path of {row['property']} to a model trace")
        lifted = lift(outcomes[row["property"]].path, config, universe, max_states=lift_states)
        row["lift"] = lifted.to_json()
        if lifted.path is None or lifted.property is None:
            continue
        written = write_lifted(
            chosen, lifted.path, lifted.property, lifted.message or "", out_dir, run_dir
        )
        fields.update(
            **written,
            lifted_from=row["property"],
            property=lifted.property,
            message=lifted.message,
            length=len(lifted.path.actions),
            z3=z3_recheck(lifted.path, lifted.property),
            steps_taken=[describe_action(a) for a in lifted.path.actions],
        )
    return fields


def write_lifted(
    chosen: Any, path: Any, prop: str, message: str, out_dir: Any, run_dir: Any
) -> dict[str, str]:
    """Publish a lifted BMC counterexample as a run directory (``write_counterexample``)
    and say where: its directory, trace, report and the command that reproduces it."""
    from groupcheck.explore.bfs import small_state_graph  # noqa: PLC0415  networkx only when a state graph is built
    from reports.artifacts import Counterexample, write_counterexample  # noqa: PLC0415  networkx only when a state graph is built

    ce = Counterexample(
        path=path,
        property=prop,
        message=message,
        preset=chosen.preset,
        mutant=chosen.mutant.name if chosen.mutant else None,
        named_config=chosen.config_file is None,
        engine="bmc",
        original_length=len(path.actions),
    )
    graph, graph_path = small_state_graph(path)
    done = write_counterexample(
        ce, out=out_dir, name=run_dir.name, graph=graph, graph_path=graph_path
    )
    return {
        "run_dir": str(done),
        "trace": str(done / "trace.ndjson"),
        "report": str(done / "index.html"),
        "reproduce": ce.cli() if ce.named_config else f"sh {done / 'reproduce.sh'}",
    }


def bmc_doc(
    result: str,
    config_name: str,
    variant: str | None,
    depth: int,
    seconds: float,
    rows: list[dict[str, Any]],
    lift_states: int,
    written: dict[str, Any],
    bound: str | None = None,
) -> dict[str, Any]:
    """``explore --engine bmc``'s JSON document (safety goals and Convergence lassos);
    ``bound``: what the depth says of the mutant, when a mutant run found no violation
    (``groupcheck.symbolic.bmc_lifted.mutant_bound``). ``schema`` and ``version`` are those of
    ``explore``'s documents (``groupcheck.jsonout``, docs/json.md)."""
    what = "property" if len(rows) == 1 else "properties"
    checked = f"{len(rows)} {what} on every path of at most {depth} steps of the symbolic relation"
    return document(
        "explore",
        {
            "result": result,
            "checked": checked,
            "engine": "bmc",
            "config": config_name,
            "variant": variant,
            "depth": depth,
            "bound": bound,
            "seconds": round(seconds, 3),
            "properties": rows,
            "lift_states": lift_states,
            **written,
        },
    )


def path_lines(path: Any) -> list[str]:
    """A BMC path as text: each state (and the layer's clients) after the step taken."""
    from invariants.z3.proof.state import render  # noqa: PLC0415  z3 only when a symbolic check runs

    lines = ["initial:"] + ["  " + x for x in render(path.states[0])]
    lines += ["  " + c.render() for c in (path.clients[:1] or [()])[0]]
    for i, ((family, params), state) in enumerate(zip(path.steps, path.states[1:], strict=True), 1):
        shown = ", ".join(f"{k}={v}" for k, v in params.items())
        lines.append(f"{family}({shown}):")
        lines += ["  " + x for x in render(state)]
        if path.clients:
            lines += ["  " + c.render() for c in path.clients[i]]
    return lines
