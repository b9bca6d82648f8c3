"""The ``groupcheck`` command line.

Exit codes: 0 success, 1 a property violated (commands that check), 2 bad input or usage.
Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from groupcheck.argtypes import non_negative, positive_float
from model.presets import PRESETS, preset
from model.status import ConfigError


class UsageError(Exception):
    """Bad command-line input: reported on one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="groupcheck",
        description="A workbench for checking Kafka consumer-group rebalance protocols.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sim = sub.add_parser(
        "simulate",
        help="play a seeded scenario of a preset and print every step",
        description=(
            "Play a seeded scenario of a preset: each step prints the action and the group "
            "in the KIP-848 case-study layout (group epoch and members; target assignment "
            "epoch and partitions; each member's epoch, partitions, pending partitions)."
        ),
    )
    sim.add_argument("--preset", required=True, help=f"preset name, one of: {', '.join(PRESETS)}")
    sim.add_argument("--seed", required=True, type=non_negative, help="PRNG seed (>= 0)")
    sim.add_argument("--steps", type=non_negative, default=40, help="steps to play (default 40)")
    sim.add_argument("--json", action="store_true", help="print one JSON object instead of text")

    exp = sub.add_parser(
        "explore",
        help="explore a preset (or a mutant's scenario) and check every property",
        description=(
            "Explore a preset with one engine and check every property. Exit 0 when nothing "
            "is violated, 1 when a property is violated (the minimised counterexample is "
            "written under reports/out/<run>/ with a reproducer), 2 on bad input."
        ),
    )
    exp.add_argument(
        "--preset",
        help=f"preset name ({', '.join(PRESETS)}); default: the mutant's scenario, else SMALL",
    )
    exp.add_argument("--engine", choices=("bfs", "walk", "hypothesis"), default="bfs")
    exp.add_argument("--mutant", help="explore with this mutant's rules (see 'groupcheck mutants')")
    exp.add_argument("--seed", type=non_negative, default=0)
    exp.add_argument(
        "--budget",
        type=positive_float,
        default=60.0,
        metavar="SECONDS",
        help="time budget (default 60)",
    )
    exp.add_argument(
        "--profile",
        choices=("ci", "dev", "deep"),
        default=None,
        help="Hypothesis profile (default: ci under CI=true, else dev)",
    )
    exp.add_argument(
        "--z3",
        action="store_true",
        help="bfs: also check every visited state with Z3 (every reported violation is "
        "re-checked with Z3 in any case)",
    )
    exp.add_argument(
        "--symmetry", action="store_true", help="bfs: merge states of interchangeable clients"
    )
    exp.add_argument(
        "--shrink-config",
        action="store_true",
        help="after a violation, also shrink the config (fewer clients, partitions, topics, "
        "perturbations) while the same property fails",
    )
    exp.add_argument("--out", default="reports/out", help="where run artifacts go")
    exp.add_argument("--json", action="store_true", help="print one JSON object")

    mut = sub.add_parser(
        "mutants",
        help="the mutant kill matrix: explore every mutant and report what killed it",
    )
    mut.add_argument(
        "--budget",
        type=positive_float,
        default=60.0,
        metavar="SECONDS",
        help="per-mutant time budget (default 60)",
    )
    mut.add_argument("--only", nargs="*", default=None, metavar="MUTANT", help="only these")
    mut.add_argument("--json", action="store_true", help="print a JSON list")

    rep = sub.add_parser(
        "replay",
        help="replay a path code on a preset or mutant scenario and check every property",
    )
    rep.add_argument("--preset", help="preset name (default: the mutant's scenario)")
    rep.add_argument("--mutant", help="replay with this mutant's rules")
    rep.add_argument("--path", required=True, help="the compact action-index code")
    rep.add_argument("--json", action="store_true", help="print one JSON object")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(sub)
    return parser


def _config_for(preset_name: str | None, mutant_name: str | None, default: str = "SMALL"):  # type: ignore[no-untyped-def]
    """The config a command runs on: the preset (or the mutant's scenario) with the
    mutant's rules installed."""
    from dataclasses import replace

    from groupcheck.mutants import MUTANTS

    mutant = None
    if mutant_name is not None:
        if mutant_name not in MUTANTS:
            raise ConfigError(f"unknown mutant {mutant_name!r}; known: {', '.join(MUTANTS)}")
        mutant = MUTANTS[mutant_name]
    if preset_name is not None:
        config = preset(preset_name)
    elif mutant is not None:
        config = mutant.config
    else:
        config = preset(default)
    if mutant is not None:
        config = replace(config, rules=mutant.rules, name=f"{config.name}+{mutant.name}")
    preset_label = preset_name.upper() if preset_name is not None else None
    return config, mutant, preset_label


def cmd_simulate(args: argparse.Namespace) -> int:
    from groupcheck.simulate import simulate
    from reports.casestudy import describe_action, group_view, render_group

    config = preset(args.preset)
    if args.json:
        steps = [
            {
                "step": s.index,
                "action": describe_action(s.action),
                "kind": s.action.kind,
                "group": group_view(s.state),
            }
            for s in simulate(config, args.seed, args.steps)
        ]
        print(json.dumps({"preset": config.name, "seed": args.seed, "steps": steps}, indent=1))
        return 0
    from model import system

    print(f"# groupcheck simulate --preset {config.name} --seed {args.seed} --steps {args.steps}")
    print(render_group(system.initial(config)))
    played = 0
    for s in simulate(config, args.seed, args.steps):
        played = s.index
        print(f"\nstep {s.index}: {describe_action(s.action)}")
        print(render_group(s.state))
    if played < args.steps:
        print(f"\nno action enabled after step {played}: the run ends here")
    return 0


def _progress(enabled: bool):  # type: ignore[no-untyped-def]
    """A progress printer on stderr (only when stderr is a terminal or asked for)."""
    import time

    last = [0.0]

    def show(message: str) -> None:
        now = time.monotonic()
        if now - last[0] >= 1.0:
            last[0] = now
            print(f"groupcheck: {message}", file=sys.stderr, flush=True)

    return show if enabled else None


STATE_GRAPH_LIMIT = 1500
"""Counterexamples of explorations with fewer than this many states get a state-graph
picture (``reports.render.dot.state_graph_dot`` draws at most 400 of them whole)."""


def _small_state_graph(path: Any) -> tuple[Any, Sequence[Any]]:
    """The state graph around a counterexample when the exploration is small (else None)."""
    from groupcheck.explore.bfs import channel_normal_form, state_graph

    graph = state_graph(path.config, max_states=STATE_GRAPH_LIMIT)
    if graph.number_of_nodes() >= STATE_GRAPH_LIMIT:
        return None, ()
    normal = channel_normal_form(path.config)
    keys = [normal(s) for s in path.states()]
    if not all(k in graph for k in keys):
        return None, ()
    return graph, keys


def cmd_explore(args: argparse.Namespace) -> int:
    import os

    from groupcheck.explore.run import explore
    from reports.artifacts import Counterexample, write_counterexample
    from reports.casestudy import describe_action

    config, mutant, preset_label = _config_for(args.preset, args.mutant)
    profile = args.profile or ("ci" if os.environ.get("CI") == "true" else "dev")
    outcome = explore(
        config,
        engine=args.engine,
        seed=args.seed,
        budget_seconds=args.budget,
        profile=profile,
        z3=args.z3,
        symmetry=args.symmetry,
        shrink=args.shrink_config,
        progress=_progress(not args.json and sys.stderr.isatty()),
    )
    trace = None
    reproduce = None
    if outcome.path is not None and outcome.property is not None:
        shrunk = outcome.shrunk_config is not None
        ce = Counterexample(
            path=outcome.path,
            property=outcome.property,
            message=outcome.message or "",
            preset=preset_label,
            mutant=mutant.name if mutant else None,
            named_config=not shrunk,
            engine=outcome.engine,
            seed=args.seed,
            shortest=outcome.shortest,
            original_length=outcome.original_length,
        )
        graph, graph_path = _small_state_graph(outcome.path)
        run_dir = write_counterexample(
            ce, out=__import__("pathlib").Path(args.out), graph=graph, graph_path=graph_path
        )
        trace = str(run_dir / "trace.ndjson")
        reproduce = ce.cli()
    doc = {
        "result": outcome.result,
        "engine": outcome.engine,
        "config": config.name,
        "property": outcome.property,
        "message": outcome.message,
        "length": len(outcome.path.actions) if outcome.path is not None else None,
        "original_length": outcome.original_length,
        "shortest": outcome.shortest,
        "trace": trace,
        "report": str(__import__("pathlib").Path(trace).parent / "index.html") if trace else None,
        "reproduce": reproduce,
        "distinct_states": outcome.distinct_states,
        "exhausted": outcome.exhausted,
        "examples": outcome.examples,
        "steps": outcome.steps,
        "witnesses": outcome.witnesses,
        "missed_witnesses": outcome.missed_witnesses,
        "z3": outcome.z3,
        "shrunk_config": repr(outcome.shrunk_config) if outcome.shrunk_config else None,
        "seconds": round(outcome.seconds, 3),
        "steps_taken": (
            [describe_action(a) for a in outcome.path.actions] if outcome.path is not None else []
        ),
    }
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        _print_outcome(doc)
    return 1 if outcome.result == "violation" else 0


def _print_outcome(doc: dict[str, object]) -> None:
    if doc["result"] == "violation":
        print(f"VIOLATION of {doc['property']} ({doc['engine']}, {doc['seconds']} s)")
        print(f"  {doc['message']}")
        print(
            f"  counterexample: {doc['length']} steps (found {doc['original_length']}, "
            f"BFS-shortest {doc['shortest']})"
        )
        if doc["shrunk_config"]:
            print(f"  config shrunk to: {doc['shrunk_config']}")
        steps: list[str] = doc["steps_taken"]  # type: ignore[assignment]
        for i, step in enumerate(steps, 1):
            print(f"    {i:3}. {step}")
        if doc["property"] == "Convergence":
            print("    …then, with no more perturbations, a fair schedule never converges")
        if doc["z3"]:
            print(f"  Z3 re-check: {doc['z3']}")
        print(f"  written to {doc['trace']}")
        print(f"  report: {doc['report']}")
        print(f"  reproduce: {doc['reproduce']}")
        return
    size = (
        f"{doc['distinct_states']} distinct states"
        + ("" if doc["exhausted"] else " (bounded: budget reached)")
        if doc["distinct_states"] is not None
        else f"{doc['examples'] or 0} examples, {doc['steps']} steps"
    )
    print(f"ok: no property violated ({doc['engine']}, {size}, {doc['seconds']} s)")
    print(f"  witnesses hit: {', '.join(doc['witnesses']) or 'none'}")  # type: ignore[arg-type]
    if doc["missed_witnesses"]:
        print(f"  WITNESSES MISSED (the run may be vacuous): {', '.join(doc['missed_witnesses'])}")  # type: ignore[arg-type]


def cmd_mutants(args: argparse.Namespace) -> int:
    from groupcheck.mutants.matrix import kill_matrix

    rows = kill_matrix(
        args.only,
        budget_seconds=args.budget,
        progress=_progress(not args.json and sys.stderr.isatty()),
    )
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        header = ("mutant", "killed", "property", "seconds", "length", "shortest")
        print("{:36} {:7} {:36} {:>8} {:>6} {:>8}".format(*header))
        for r in rows:
            print(
                f"{r['mutant']:36} {'yes' if r['killed'] else 'NO':7} {r['property']!s:36} "
                f"{r['seconds']:8.2f} {r['length']!s:>6} {r['shortest']!s:>8}"
            )
        killed = sum(1 for r in rows if r["killed"])
        print(f"{killed}/{len(rows)} mutants killed")
    return 0 if all(r["killed"] for r in rows) else 1


def cmd_replay(args: argparse.Namespace) -> int:
    from groupcheck.explore.run import replay
    from model.path import Path
    from reports.casestudy import describe_action, render_group

    config, _, _ = _config_for(args.preset, args.mutant)
    path = Path.decode(config, args.path)
    found = replay(path)
    if args.json:
        print(
            json.dumps(
                {
                    "result": "violation" if found else "ok",
                    "length": len(path.actions),
                    "step": found[1] if found else None,
                    "violations": [{"property": v.property, "message": v.message} for v in found[0]]
                    if found
                    else [],
                    "actions": [describe_action(a) for a in path.actions],
                },
                indent=1,
            )
        )
    else:
        states = list(path.states())
        print(render_group(states[0]))
        for i, (a, st) in enumerate(zip(path.actions, states[1:], strict=True), 1):
            print(f"\nstep {i}: {describe_action(a)}")
            print(render_group(st))
            if found and found[1] == i:
                for v in found[0]:
                    print(f"\n>>> VIOLATION of {v.property}: {v.message}")
                break
        if not found:
            print("\nno property violated")
    return 1 if found else 0


# Subcommands that live in their own room (validate, capture, render, tla, pipeline) register
# themselves: each module's ``register(sub)`` adds its parser and sets ``handler`` with
# ``set_defaults``. ``register`` must not import heavy dependencies (pyspark, kio); the
# handler imports them when it runs.
COMMAND_MODULES: tuple[str, ...] = (
    "groupcheck.validate.command",
    "groupcheck.tla.cli",
    "groupcheck.render",
    "groupcheck.capture.cli",
    "groupcheck.pipeline.cli",
)

COMMANDS = {
    "simulate": cmd_simulate,
    "explore": cmd_explore,
    "mutants": cmd_mutants,
    "replay": cmd_replay,
}


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every ``finally`` and cleanup handler
    runs (a run's temporary output is removed) before the process exits with 143."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``groupcheck`` console script. Exit statuses:
    ``groupcheck.exitcodes`` (0 ok, 1 violation, 2 bad input, 3 inconclusive, 4 internal
    error). No path ends in a traceback: an unexpected exception prints one line and the
    file its traceback was saved to."""
    import signal
    import threading

    from groupcheck import exitcodes
    from groupcheck.crash import one_line, save_traceback

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return exitcodes.BAD_INPUT
        handler = getattr(args, "handler", None) or COMMANDS[args.command]
        return int(handler(args))
    except UsageError as e:
        print(f"{e} (see 'groupcheck --help')", file=sys.stderr)
        return exitcodes.BAD_INPUT
    except ConfigError as e:
        print(f"groupcheck: error: {printable(str(e))}", file=sys.stderr)
        return exitcodes.BAD_INPUT
    except KeyboardInterrupt:
        print("groupcheck: interrupted", file=sys.stderr)
        return exitcodes.INTERRUPTED
    except Terminated:
        print("groupcheck: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except BrokenPipeError:
        _quiet_stdout()
        return exitcodes.OK
    except Exception as e:
        command = " ".join(["groupcheck", *(sys.argv[1:] if argv is None else argv)])
        saved = save_traceback(e, command)
        where = f"traceback saved to {saved}" if saved else "no traceback file could be written"
        print(f"groupcheck: internal error: {one_line(e)} ({where})", file=sys.stderr)
        return exitcodes.INTERNAL_ERROR
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def printable(text: str) -> str:
    """``text`` safe for a terminal: control and invisible formatting characters escaped
    (``reports.render.escape.visible``)."""
    from reports.render.escape import visible

    return visible(text)


def _quiet_stdout() -> None:
    """After a closed pipe, point stdout at /dev/null so the interpreter's final flush
    does not raise again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
