"""The ``groupcheck`` command line.

Exit statuses (``groupcheck.exitcodes``): 0 ok, 1 a property violated, 2 bad input or
usage, 3 inconclusive (nothing violated, but the check was incomplete: a budget ran out,
a witness was missed), 4 internal error, 8 a user's rules or mutants file failed
(``groupcheck.usercode``). Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from groupcheck.argtypes import (
    MAX_STEPS,
    MAX_WORKERS,
    RULES_HELP,
    add_rules_option,
    add_user_memory_option,
    at_most,
    non_negative,
    positive,
    positive_float,
    steps,
)
from groupcheck.signals import Terminated
from model.status import ConfigError

# Only light imports above (the standard library, argparse types, ConfigError): ``main``
# installs the SIGTERM handler before anything heavy is imported (issue 42).


class UsageError(Exception):
    """Bad command-line input: reported on one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    from model.presets import BENCHMARK_PRESETS, PRESETS

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
    add_config_options(sim, required=True)
    sim.add_argument("--mutant", help="play with this mutant's rules")
    add_rules_option(sim)
    sim.add_argument("--seed", required=True, type=non_negative, help="PRNG seed (>= 0)")
    sim.add_argument(
        "--steps",
        type=steps,
        default=40,
        help=f"steps to play (default 40, at most {MAX_STEPS})",
    )
    sim.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    sim.add_argument(
        "--budget",
        type=positive_float,
        default=60.0,
        metavar="SECONDS",
        help="wall-clock limit of the whole command (default 60), loading a --rules file "
        "included, as for explore: past it the command stops, says what overran and exits "
        "3 (inconclusive)",
    )
    sim.add_argument(
        "--timed",
        action="store_true",
        help="a timed run (groupcheck/timed): each action at a simulated time — heartbeats "
        "every heartbeat interval from a seeded phase, network and coordinator delays — "
        "with no perturbation; --steps bounds the actions",
    )
    sim.add_argument(
        "--trace",
        metavar="FILE",
        help="with --timed: write the run as a trace (NDJSON, ts in ms) to FILE (a new file)",
    )

    exp = sub.add_parser(
        "explore",
        help="explore a preset (or a mutant's scenario) and check every property",
        description=(
            "Explore a config with one engine and check every property (state and step "
            "properties, Convergence, and the SOMETIMES witnesses). Exit 0 when the "
            "exploration was complete (bfs: every reachable state, or every state within "
            "--depth; walk: every walk; hypothesis: every example of the profile) and every "
            "witness was hit; 1 when a property is violated (the minimised counterexample is "
            "written under --out/<run>/ with a reproducer and an HTML report; a property named "
            "by --expect never fails the run, and under --mutant or --rules only a violation the "
            "reference rules do not have on the same config, engine, seed and bounds does); 3 when "
            "nothing was violated but the check was incomplete (the time budget or "
            "--max-states cut it short, or a witness was missed); 2 on bad input."
        ),
    )
    add_config_options(
        exp, required=False, default_help="default: the mutant's scenario, else SMALL"
    )
    exp.add_argument(
        "--engine",
        choices=("bfs", "walk", "hypothesis", "bmc"),
        default="bfs",
        help="bmc: bounded model checking of the coordinator core's properties with Z3 "
        "over the symbolic relation (invariants/z3/proof/), up to --depth steps (default: with "
        "--mutant, the steps of its shortest known path, else 3; a classic client rule's "
        "run asks only that depth, 27; a mutant run that finds nothing says what its depth "
        "bounds, and is inconclusive without --depth when no path of the mutant, or no "
        "shorter one, was asked); "
        "a counterexample is replayed through the Python coordinator, then lifted to a "
        "model trace (bounded by --max-states) and, when lifted, written under --out like "
        "bfs's; with --only Convergence (and for the liveness-only mutants) a search for "
        "fair non-converging lassos of the client layer (on a classic config: of the "
        "classic coordinator's relation, default depth 6), each confirmed by the model's "
        "fair schedule",
    )
    exp.add_argument("--mutant", help="explore with this mutant's rules (see 'groupcheck mutants')")
    add_rules_option(
        exp,
        help=RULES_HELP + "; --engine bmc reads a replacement of the reconciliation kernel "
        "(model.consumer.reconcile.kernel_rule) or of the offset-commit check "
        "(model.consumer.coordinator.commit_kernel_rule) only, and refuses any other",
    )
    exp.add_argument("--seed", type=non_negative, default=0, help="walk, hypothesis: the seed")
    exp.add_argument(
        "--budget",
        type=positive_float,
        default=60.0,
        metavar="SECONDS",
        help="wall-clock limit (default 60); a search it cuts short is inconclusive (exit 3)",
    )
    exp.add_argument(
        "--max-states",
        type=positive,
        metavar="N",
        help="bfs: stop after N distinct states; bmc: the bound of each level's search that "
        "lifts a counterexample to a model trace (default 50000 states)",
    )
    exp.add_argument(
        "--depth",
        type=positive,
        metavar="K",
        help="bfs: explore every state within K steps (ok means: no violation within K); "
        "bmc: search paths of at most K steps (see --engine)",
    )
    exp.add_argument(
        "--walks", type=positive, default=1000, metavar="N", help="walk: walks (default 1000)"
    )
    exp.add_argument(
        "--max-steps",
        type=at_most(MAX_STEPS, "steps"),
        default=60,
        metavar="N",
        help=f"walk: steps per walk (default 60, at most {MAX_STEPS})",
    )
    exp.add_argument(
        "--profile",
        choices=("ci", "dev", "deep"),
        default=None,
        help="hypothesis: effort profile (default: ci under CI=true, else dev)",
    )
    exp.add_argument(
        "--only",
        action="append",
        metavar="PROPERTY",
        help="check only this property (repeatable; a split invariant's name selects its "
        "conjuncts; 'Convergence' for convergence); the output lists what was checked",
    )
    exp.add_argument(
        "--expect",
        action="append",
        default=[],
        metavar="PROPERTY",
        help="a known finding (repeatable; e.g. OwnedPartitionsAreHeld, F1 in "
        "docs/findings.md): its violations are reported as expected, and neither fail the run "
        "nor stop the search, which goes on to the other properties",
    )
    exp.add_argument(
        "--every-property",
        action="store_true",
        help="bfs, walk, hypothesis: do not stop at the first violation; report the shortest "
        "violation of each property within the same bounds (always so under --mutant and "
        "--rules)",
    )
    exp.add_argument(
        "--no-baseline",
        action="store_true",
        help="under --mutant or --rules: do not run the reference rules on the same config, "
        "engine, seed and bounds (by default a change fails only on a violation the "
        "reference rules do not have)",
    )
    exp.add_argument(
        "--rebalance-time",
        action="store_true",
        help="bfs, walk: measure rebalance time (fair steps and heartbeat rounds from the last "
        "perturbation to convergence: the worst case under bfs, a distribution under walk); "
        "under a mutant or --rules, compare it with the reference rules on the same config: "
        "the worst case, and start by start (slower in N starts by up to K heartbeat rounds, "
        "faster in M, with the shortest path to each)",
    )
    exp.add_argument(
        "--fail-on-slower",
        action="store_true",
        help="with a mutant or --rules (bfs, walk; implies --rebalance-time): exit 1 when "
        "the change needs more heartbeat rounds (or as many and more fair steps) to converge "
        "than the reference rules from some start both reach; exit 3 when the comparison "
        "is inconclusive (a bound or the budget cut either search, or no start is shared)",
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
        "--workers",
        type=at_most(MAX_WORKERS, "worker processes"),
        default=None,
        metavar="N",
        help=f"bfs: worker processes, at most {MAX_WORKERS} (default: $GROUPCHECK_WORKERS if "
        "set, else every core "
        "this process may use (capped by a container's CPU quota), the "
        "processes started once a level holds 1000 states, so that a small search stays in "
        "one process; 1: the serial engine, which stores whole states). With N > 1 states "
        "are partitioned by fingerprint over N processes and stored as 64-bit fingerprints "
        "with parent pointers (34 bytes a state, and 8 a worker for each state known to "
        "converge): the same states, verdict and "
        "counterexample as --workers 1, faster on large configs (docs/benchmarks.md). "
        "--rebalance-time runs on the serial engine",
    )
    exp.add_argument(
        "--shrink-config",
        action="store_true",
        help="after a violation, also shrink the config (fewer clients, partitions, topics, "
        "perturbations) while the same property fails",
    )
    exp.add_argument(
        "--out",
        default="reports/out",
        help="directory of run directories (default reports/out); a run writes only its own "
        "<out>/<run>/ and the index groupcheck keeps there; a directory holding anything "
        "else is refused",
    )
    exp.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (docs/json/explore.schema.json; docs/json.md)",
    )
    exp.add_argument("--quiet", action="store_true", help="no progress lines on stderr")

    mut = sub.add_parser(
        "mutants",
        help="the mutant kill matrix: explore every mutant and report what killed it",
        description=(
            "Explore every mutant's scenario (BFS, then seeded walks) until a property "
            "fails. Exit 0 when every mutant was killed (by its expected property, when it "
            "names one); 1 when a mutant survived an exhaustive BFS (a property is missing "
            "or the mutant is equivalent there) or was killed by another property than its "
            "expected one; 3 when a mutant was neither killed nor exhausted within its "
            "budget; 8 when a mutant's rule from a --from file failed (raised, exited, "
            "returned the wrong type)."
        ),
    )
    mut.add_argument(
        "--budget",
        type=positive_float,
        default=60.0,
        metavar="SECONDS",
        help="per-mutant time budget (default 60)",
    )
    mut.add_argument("--only", nargs="*", default=None, metavar="MUTANT", help="only these")
    mut.add_argument(
        "--from",
        dest="from_files",
        action="append",
        default=[],
        metavar="FILE.py",
        help="also run the mutants FILE.py defines (MUTANTS: name, field, function, "
        "scenario, expected property, optionally also: further fields); may be repeated",
    )
    add_user_memory_option(mut)
    mut.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object, a row a mutant under 'mutants' (docs/json.md)",
    )
    mut.add_argument("--quiet", action="store_true", help="no progress lines on stderr")

    rep = sub.add_parser(
        "replay",
        help="replay a path code on a preset or mutant scenario and check every property",
    )
    add_config_options(rep, required=False, default_help="default: the mutant's scenario")
    rep.add_argument("--mutant", help="replay with this mutant's rules")
    add_rules_option(rep)
    rep.add_argument("--path", required=True, help="the compact action-index code")
    rep.add_argument(
        "--rebalance-time",
        action="store_true",
        help="also measure the rebalance from the end of the path under these rules (fair "
        "steps and heartbeat rounds to convergence), as explore --rebalance-time does",
    )
    rep.add_argument("--json", action="store_true", help="print one JSON object")
    rep.add_argument(
        "--budget",
        type=positive_float,
        default=60.0,
        metavar="SECONDS",
        help="wall-clock limit of the whole command (default 60), loading a --rules file "
        "included, as for explore: past it the command stops, says what overran and exits "
        "3 (inconclusive)",
    )

    cfg = sub.add_parser(
        "config",
        help="print a preset as a config file (TOML) to copy and edit for --config",
        description=(
            "Print a preset (or a mutant's scenario) in the --config file format: TOML "
            "with the keys of a pipeline grid's options plus topics and clients "
            "(docs/tutorial.md). Save it, edit it, and pass it as --config FILE."
        ),
    )
    cfg_sub = cfg.add_subparsers(dest="config_command", metavar="SUBCOMMAND", required=True)
    show = cfg_sub.add_parser("show", help="print one preset as TOML (or JSON)")
    show.add_argument(
        "name",
        metavar="PRESET",
        help=f"one of: {', '.join(PRESETS)}; benchmark presets: {', '.join(BENCHMARK_PRESETS)}",
    )
    show.add_argument("--json", action="store_true", help="print JSON instead of TOML")
    show.set_defaults(handler=cmd_config_show)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(sub)
    return parser


def add_config_options(
    parser: argparse.ArgumentParser, *, required: bool, default_help: str = ""
) -> None:
    """``--preset NAME`` or ``--config FILE`` (one of them; ``required`` says whether one
    must be given)."""
    from model.presets import BENCHMARK_PRESETS, PRESETS

    group = parser.add_mutually_exclusive_group(required=required)
    group.add_argument(
        "--preset",
        help=f"preset name ({', '.join(PRESETS)}; benchmark presets: "
        f"{', '.join(BENCHMARK_PRESETS)})" + (f"; {default_help}" if default_help else ""),
    )
    group.add_argument(
        "--config",
        metavar="FILE",
        help="a config file (TOML or JSON; 'groupcheck config show PRESET' prints one)",
    )


@dataclass(frozen=True)
class Chosen:
    """The config a command runs on and where it came from: a preset (``preset``), a
    config file (``config_file``) or a mutant's scenario; with a mutant's rules or rules
    from a file (``rules``) installed."""

    config: Any
    mutant: Any = None
    preset: str | None = None
    config_file: str | None = None
    rules: Any = None

    @property
    def change(self) -> str | None:
        """The rules change's label in run names: the mutant, or ``rules-NAME``."""
        if self.mutant is not None:
            return str(self.mutant.name)
        return None if self.rules is None else str(self.rules.label)


def _config_for(args: argparse.Namespace, default: str | None = "SMALL") -> Chosen:
    """The config a command runs on — the preset, the config file, or the mutant's
    scenario — with the mutant's rules or the ``--rules`` file's installed."""
    from dataclasses import replace

    from groupcheck.mutants import MUTANTS
    from model.presets import preset

    mutant_name = getattr(args, "mutant", None)
    rules_spec = getattr(args, "rules", None)
    if mutant_name is not None and rules_spec is not None:
        raise ConfigError("--mutant and --rules both replace rules; give one of them")
    mutant = None
    if mutant_name is not None:
        if mutant_name not in MUTANTS:
            raise ConfigError(f"unknown mutant {mutant_name!r}; known: {', '.join(MUTANTS)}")
        mutant = MUTANTS[mutant_name]
    preset_label = None
    config_file = getattr(args, "config", None)
    if config_file is not None:
        from groupcheck.configfile import load_config_file

        config = load_config_file(config_file)
    elif args.preset is not None:
        config = preset(args.preset)
        preset_label = config.name
    elif mutant is not None:
        config = mutant.config
    elif default is not None:
        config = preset(default)
        preset_label = config.name
    else:
        raise ConfigError("give --preset NAME, --config FILE or --mutant NAME")
    source = None
    if mutant is not None:
        config = replace(config, rules=mutant.rules, name=f"{config.name}+{mutant.name}")
    elif rules_spec is not None:
        from groupcheck.rulesfile import load_rules, with_rules

        rules, source = load_rules(rules_spec)
        config = with_rules(config, rules, source)
    _CHOSEN["config"] = config
    return Chosen(config, mutant, preset_label, config_file, source)


def cmd_simulate(args: argparse.Namespace) -> int:
    """``groupcheck simulate``: the whole command — loading a rules file included — runs
    within ``--budget`` (``groupcheck.budget``), as ``explore`` does."""
    from groupcheck.budget import watchdog

    with watchdog(args.budget, started=_CHOSEN.get("started")):
        return _cmd_simulate(args)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from groupcheck.budget import stage

    config = _config_for(args).config
    if args.trace is not None and not args.timed:
        raise UsageError("groupcheck simulate: --trace needs --timed")
    if args.timed:
        from groupcheck.timed.command import simulate_timed

        with stage("the timed simulation"):
            return simulate_timed(config, args)
    with stage("the simulation"):
        return _play(config, args)


def _play(config: Any, args: argparse.Namespace) -> int:
    from groupcheck.simulate import simulate
    from reports.casestudy import describe_action, group_view, render_group

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

    source = f"--config {args.config}" if args.config else f"--preset {config.name}"
    print(f"# groupcheck simulate {source} --seed {args.seed} --steps {args.steps}")
    print(render_group(system.initial(config)))
    played = 0
    for s in simulate(config, args.seed, args.steps):
        played = s.index
        print(f"\nstep {s.index}: {describe_action(s.action)}")
        print(render_group(s.state))
    if played < args.steps:
        print(f"\nno action enabled after step {played}: the run ends here")
    return 0


def cmd_explore(args: argparse.Namespace) -> int:
    """``groupcheck explore``: the whole command — loading a rules file, the search,
    minimising, writing — runs within ``--budget`` (``groupcheck.budget``)."""
    from groupcheck.budget import watchdog

    with watchdog(args.budget, started=_CHOSEN.get("started")):
        return _cmd_explore(args)


def _cmd_explore(args: argparse.Namespace) -> int:
    from pathlib import Path

    from groupcheck import exitcodes
    from groupcheck.explore.bfs import small_state_graph
    from groupcheck.explore.run import explore
    from groupcheck.progress import progress_for
    from model.settings import config_to_mapping
    from reports.artifacts import Counterexample, run_label, run_name, write_counterexample
    from reports.casestudy import describe_action
    from reports.publish import check_runs_dir, check_target

    chosen = _config_for(args)
    check_runs_dir(Path(args.out))  # a user's files are not mixed with runs (README)
    if args.engine == "bmc":
        from groupcheck.budget import stage
        from groupcheck.symbolic.bmc_cmd import cmd_bmc

        with stage("the bmc search"):
            return cmd_bmc(args, chosen)
    config = chosen.config
    if args.fail_on_slower:
        if chosen.change is None:
            raise UsageError(
                "groupcheck explore: --fail-on-slower compares a change with the reference "
                "rules: give --mutant NAME or --rules FILE.py:NAME"
            )
        if args.engine not in ("bfs", "walk"):
            raise UsageError(
                f"groupcheck explore: --fail-on-slower measures rebalance time with bfs or "
                f"walk, not {args.engine}"
            )
    workers, serial_until = _workers(args.workers)
    out = Path(args.out)
    scenario = chosen.preset or config.name.split("+")[0]
    run_dir = out / run_name(run_label(scenario, chosen.change, args.engine, args.seed))
    check_target(run_dir)  # refuse an output location before exploring, not after
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
        progress=progress_for(args.quiet),
        max_states=args.max_states,
        max_depth=args.depth,
        walks=args.walks,
        max_steps=args.max_steps,
        only=args.only,
        rebalance=args.rebalance_time or args.fail_on_slower,
        workers=workers,
        serial_until=serial_until,
        expected=_expected(args.expect),
        every_property=args.every_property,
        baseline=not args.no_baseline,
    )
    trace = None
    reproduce = None
    if outcome.path is not None and outcome.property is not None:
        shrunk = outcome.shrunk_config is not None
        ce = Counterexample(
            path=outcome.path,
            property=outcome.property,
            message=outcome.message or "",
            preset=chosen.preset,
            mutant=chosen.mutant.name if chosen.mutant else None,
            named_config=chosen.config_file is None and not shrunk,
            rules=chosen.rules.to_json() if chosen.rules else None,
            engine=outcome.engine,
            seed=args.seed,
            shortest=outcome.shortest,
            original_length=outcome.original_length,
        )
        graph, graph_path = small_state_graph(outcome.path)
        written = write_counterexample(ce, out=out, graph=graph, graph_path=graph_path)
        trace = str(written / "trace.ndjson")
        reproduce = (
            ce.cli(rules_file=chosen.rules.path if chosen.rules else None)
            if ce.named_config
            else f"sh {written / 'reproduce.sh'}"
        )
    doc = {
        "result": outcome.result,
        "reasons": outcome.reasons,
        "checked": outcome.checked,
        "properties": outcome.properties,
        "only": bool(args.only),
        "engine": outcome.engine,
        "config": config.name,
        "property": outcome.property,
        "message": outcome.message,
        "length": len(outcome.path.actions) if outcome.path is not None else None,
        "original_length": outcome.original_length,
        "shortest": outcome.shortest,
        "trace": trace,
        "report": str(Path(trace).parent / "index.html") if trace else None,
        "reproduce": reproduce,
        "distinct_states": outcome.distinct_states,
        "workers": outcome.workers,
        "collision_probability": outcome.collision_probability,
        "bytes_per_state": outcome.bytes_per_state,
        "exhausted": outcome.exhausted,
        "examples": outcome.examples,
        "steps": outcome.steps,
        "witnesses": outcome.witnesses,
        "missed_witnesses": outcome.missed_witnesses,
        "z3": outcome.z3,
        "every_property": outcome.every_property,
        "expected": outcome.expected,
        "violations": [
            {
                "property": f.property,
                "message": f.message,
                "length": len(f.path.actions),
                "path": f.path.encode(),
                "expected": f.property in outcome.expected,
            }
            for f in outcome.violations
        ],
        "baseline": outcome.baseline,
        "rebalance": outcome.rebalance,
        "findings": outcome.findings,
        "shrunk_config": config_to_mapping(outcome.shrunk_config)
        if outcome.shrunk_config
        else None,
        "seconds": round(outcome.seconds, 3),
        "steps_taken": (
            [describe_action(a) for a in outcome.path.actions] if outcome.path is not None else []
        ),
    }
    code = exitcodes.exit_code(outcome.result)
    if args.fail_on_slower:
        code = _gate_on_slower(doc, code)
    if args.json:
        from groupcheck.jsonout import emit

        emit("explore", doc)
    else:
        _print_outcome(doc)
    return code


def _gate_on_slower(doc: dict[str, Any], code: int) -> int:
    """``--fail-on-slower``: 1 when the start-by-start comparison found the change slower;
    an inconclusive comparison makes an ok run inconclusive (its reasons join the run's)."""
    from groupcheck import exitcodes

    comparison = (doc["rebalance"] or {}).get("per_start")
    if comparison is not None and comparison["verdict"] == "slower":
        return exitcodes.VIOLATION
    if doc["result"] == "violation":
        return code
    if comparison is None:
        reasons = ["no rebalance-time comparison was made (the rules equal the reference rules)"]
    elif comparison["verdict"] == "inconclusive":
        reasons = [f"rebalance-time comparison: {r}" for r in comparison["reasons"]]
    else:
        return code
    doc["result"] = "inconclusive"
    doc["reasons"] = [*doc["reasons"], *reasons]
    return exitcodes.worst(code, exitcodes.INCONCLUSIVE)


def _expected(names: Sequence[str]) -> list[str]:
    """``--expect`` names, checked like ``--only``'s (a split invariant's name stands for
    its conjuncts)."""
    from invariants.check import select_properties

    out: list[str] = []
    for name in names:
        state, step, convergence = select_properties([name])
        out += [p.name for p in (*state, *step)] + (["Convergence"] if convergence else [])
    return sorted(set(out))


COMPARISON_WORDS = {
    "introduces": "the change introduces a violation the reference rules do not have",
    "both": "both violate: the change adds nothing here",
    "removes": "the change removes a violation the reference rules have",
    "neither": "neither violates a property",
}


def _print_violations(doc: dict[str, Any]) -> None:
    """Every property's violation (under --every-property, --expect, a change), and the
    comparison with the reference rules."""
    shown = doc["property"]
    for v in doc["violations"]:
        if v["property"] == shown:
            continue
        tag = "expected" if v["expected"] else "also violated"
        print(f"  {tag}: {v['property']} ({v['length']} steps, path {v['path']})")
    if doc["every_property"] and not doc["violations"]:
        print("  every property checked past violations: none violated")
    for name in doc["expected"]:
        if name not in {v["property"] for v in doc["violations"]}:
            print(f"  expected {name}, not violated within these bounds")
    base = doc["baseline"]
    if base is None:
        return
    ref = base["reference"]
    violated = ", ".join(ref["violated"]) or "nothing"
    print(
        f"  against the reference rules (same config, engine, seed and bounds: "
        f"{ref['checked']}; they violate {violated}): {COMPARISON_WORDS[base['comparison']]}"
    )
    for row in base["properties"]:
        mark = " (expected)" if row["expected"] else ""
        print(f"    {row['property']}: {row['outcome']}{mark} — {row['note']}")


def _print_outcome(doc: dict[str, Any]) -> None:
    if doc["result"] == "violation":
        print(f"VIOLATION of {doc['property']} ({doc['engine']}, {doc['seconds']} s)")
        print(f"  {printable(doc['message'] or '')}")
        print(
            f"  counterexample: {doc['length']} steps (found {doc['original_length']}, "
            f"BFS-shortest {doc['shortest'] if doc['shortest'] is not None else 'unknown'})"
        )
        if doc["shrunk_config"]:
            print(f"  config shrunk to: {json.dumps(doc['shrunk_config'])}")
        for i, step in enumerate(doc["steps_taken"], 1):
            print(f"    {i:3}. {printable(step)}")
        if doc["property"] == "Convergence":
            print("    …then, with no more perturbations, a fair schedule never converges")
        if doc["z3"]:
            print(f"  Z3 re-check: {doc['z3']}")
        _print_violations(doc)
        _print_fingerprints(doc)
        print(f"  written to {doc['trace']}")
        print(f"  report: {doc['report']}")
        print(f"  reproduce: {doc['reproduce']}")
        return
    head = "ok" if doc["result"] == "ok" else "INCONCLUSIVE"
    what = "no property violated" if doc["result"] == "ok" else "nothing violated, but"
    print(f"{head}: {what} ({doc['engine']}: {doc['checked']}; {doc['seconds']} s)")
    for reason in doc["reasons"]:
        print(f"  - {reason}")
    if doc["only"]:
        print(f"  checked only: {', '.join(doc['properties'])}")
    print(f"  witnesses hit: {', '.join(doc['witnesses']) or 'none'}")
    _print_violations(doc)
    _print_fingerprints(doc)
    _print_rebalance(doc)


WORKERS_ENV = "GROUPCHECK_WORKERS"
"""An environment variable standing for ``--workers`` when it is not given (a test
runner that already runs one test per core sets it to 1)."""


def _workers(given: int | None) -> tuple[int, int]:
    """``explore``'s ``workers`` and ``serial_until`` for ``--workers``: as given (or as
    ``GROUPCHECK_WORKERS`` gives it), else every core this process may use, started once a
    level is large enough to pay for them."""
    from groupcheck.explore.pbfs import SERIAL_UNTIL, default_workers

    if given is not None:
        return given, 0
    configured = os.environ.get(WORKERS_ENV)
    if configured is not None:
        try:
            return at_most(MAX_WORKERS, "worker processes")(configured), 0
        except argparse.ArgumentTypeError as e:
            raise UsageError(f"groupcheck explore: {WORKERS_ENV}: {e}") from None
    return default_workers(), SERIAL_UNTIL


def _print_fingerprints(doc: dict[str, Any]) -> None:
    if doc.get("collision_probability") is not None:
        per_state = doc["bytes_per_state"]
        stored = f", {per_state:.1f} bytes stored per state" if per_state else ""
        processes = f"{doc['workers']} worker{'s' if doc['workers'] != 1 else ''}"
        print(
            f"  fingerprints: {processes}; probability of a collision "
            f"{doc['collision_probability']:.2e} (calculated as TLC does){stored}"
        )


def _print_rebalance(doc: dict[str, Any]) -> None:
    times = doc["rebalance"]
    if times and times["worst_steps"] is not None:
        bound = f" (bound {times['bound']})" if times["bound"] is not None else ""
        print(
            f"  rebalance time: worst {times['worst_steps']} fair steps, "
            f"{times['worst_heartbeat_rounds']} heartbeat rounds{bound}; median "
            f"{times['median_steps']}, p95 {times['p95_steps']} over {times['starts']} starts"
        )
    for finding in doc["findings"]:
        print(f"  FINDING {finding['kind']}: {finding['message']}")
        print(f"    the path to that rebalance: {finding['path']}")
    comparison = times.get("per_start") if times else None
    if comparison is not None:
        from groupcheck.explore.rebalance import summary

        verdict = comparison["verdict"].upper()
        print(f"  rebalance time start by start against the reference rules: {verdict}")
        print(f"    {summary(comparison)}")
        print(f"    compared: {comparison['scope']}")
        for reason in comparison["reasons"]:
            print(f"    - {reason}")
        for kind in ("slower", "faster"):
            ex = comparison[f"shortest_{kind}"]
            if ex is None:
                continue
            same = "the same path" if ex["same_actions"] else f"path {ex['reference_path']!r}"
            mine = _tail(ex["steps"], ex["heartbeat_rounds"], ex["converged"])
            theirs = _tail(
                ex["reference_steps"], ex["reference_heartbeat_rounds"], ex["reference_converged"]
            )
            print(
                f"    shortest {kind}: path {ex['path']!r} ({ex['length']} actions): {mine}; "
                f"the reference rules, on {same}: {theirs}"
            )


def _tail(steps: int, rounds: int, converged: bool) -> str:
    what = f"{steps} fair steps, {rounds} heartbeat rounds"
    return what if converged else f"no convergence within {steps} fair steps"


def cmd_mutants(args: argparse.Namespace) -> int:
    from groupcheck.mutants.matrix import kill_matrix, matrix_document, matrix_status
    from groupcheck.progress import progress_for

    extra = []
    if args.from_files:
        from groupcheck.budget import watchdog
        from groupcheck.mutants import MUTANTS
        from groupcheck.rulesfile import load_mutants

        known: dict[str, Any] = dict(MUTANTS)
        for path in args.from_files:
            with watchdog(args.budget):  # a file that never loads is stopped
                loaded = load_mutants(path, known)
            known.update((m.name, m) for m in loaded)
            extra.extend(loaded)
    rows = kill_matrix(
        args.only, budget_seconds=args.budget, progress=progress_for(args.quiet), extra=extra
    )
    code = matrix_status(rows)
    if args.json:
        from groupcheck.jsonout import emit

        emit("mutants", matrix_document(rows))
    else:
        header = ("mutant", "result", "property", "seconds", "length", "shortest")
        print("{:36} {:12} {:36} {:>8} {:>6} {:>8}".format(*header))
        for r in rows:
            what = r["property"]
            if r.get("kill") == "witness lost":
                what = "witness lost: " + ", ".join(r["witnesses_lost"])
            print(
                f"{r['mutant']:36} {r['result']:12} {what!s:36} "
                f"{r['seconds']:8.2f} {r['length']!s:>6} {r['shortest']!s:>8}"
            )
            for reason in r["reasons"]:
                print(f"    - {reason}")
            if r["expected"] is not None and r["killed"] and not r["as_expected"]:
                print(f"    - expected {r['expected']}, but {r['property']} failed first")
        killed = sum(1 for r in rows if r["killed"])
        print(f"{killed}/{len(rows)} mutants killed")
    return code


def cmd_replay(args: argparse.Namespace) -> int:
    """``groupcheck replay``: the whole command — loading a rules file included — runs
    within ``--budget`` (``groupcheck.budget``), as ``explore`` does."""
    from groupcheck.budget import watchdog

    with watchdog(args.budget, started=_CHOSEN.get("started")):
        return _cmd_replay(args)


def _cmd_replay(args: argparse.Namespace) -> int:
    from groupcheck import exitcodes
    from groupcheck.budget import stage
    from groupcheck.explore.run import replay_undecided
    from invariants.liveness import undecided_reason
    from model.path import Path
    from reports.casestudy import describe_action, render_group

    config = _config_for(args, default=None).config
    path = Path.decode(config, args.path)
    with stage("replaying the path"):
        found, undecided = replay_undecided(path)
    # Nothing violated, but the fair schedule from the end hit its bound without showing a
    # fair loop or a stuck state: inconclusive, the bound named (issue 42).
    unchecked = undecided_reason(1, undecided.bound) if undecided is not None else []
    result = "violation" if found else "inconclusive" if unchecked else "ok"
    rebalance = None
    if args.rebalance_time:
        from groupcheck.explore.rebalance import measure

        with stage("measuring the rebalance"):
            tail = measure(path.final(), config)
        rebalance = {"steps": tail.steps, "heartbeat_rounds": tail.rounds}
    if args.json:
        print(
            json.dumps(
                {
                    "result": result,
                    "rebalance": None
                    if rebalance is None
                    else {**rebalance, "converged": tail.converged},
                    "length": len(path.actions),
                    "step": found[1] if found else None,
                    "violations": [{"property": v.property, "message": v.message} for v in found[0]]
                    if found
                    else [],
                    "actions": [describe_action(a) for a in path.actions],
                    "not_checked": unchecked,
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
                    print(f"\n>>> VIOLATION of {v.property}: {printable(v.message)}")
                break
        if found and any(v.property == "Convergence" for v in found[0]):
            from invariants.liveness import fair_loop
            from reports.render.lasso import lasso_lines

            lasso = fair_loop(states[found[1]], config)
            if lasso is not None:
                print()
                print("\n".join(printable(line) for line in lasso_lines(lasso, found[1] + 1)))
        if not found:
            print("\nno property violated")
        for reason in unchecked:
            print(f"inconclusive: not checked: {reason}")
        if rebalance is not None:
            tail_text = _tail(tail.steps, tail.rounds, tail.converged)
            print(f"\nrebalance from the end of the path: {tail_text}")
    return exitcodes.exit_code(result)


def cmd_config_show(args: argparse.Namespace) -> int:
    from groupcheck.mutants import MUTANTS
    from model.presets import preset
    from model.settings import config_to_mapping, config_to_toml

    name = args.name
    scenarios = {m.config.name: m.config for m in MUTANTS.values()}
    config = scenarios.get(name.upper()) or preset(name)
    if args.json:
        print(json.dumps(config_to_mapping(config), indent=1))
    else:
        from model.config import version_departures

        # The Kafka version the preset follows, and where it does not (model.versions).
        text = config_to_toml(config)
        notes = [
            f"# follows Kafka {config.kafka_version}'s rules (docs/fidelity.md, "
            "Version-dependent rules)"
        ]
        notes += [f"#   except {d}" for d in version_departures(config)]
        head, _, rest = text.partition("\n")
        print("\n".join([head, *notes, rest]), end="")
    return 0


# themselves: each module's ``register(sub)`` adds its parser and sets ``handler`` with
# ``set_defaults``. ``register`` must not import heavy dependencies (pyspark, kio); the
# handler imports them when it runs.
COMMAND_MODULES: tuple[str, ...] = (
    "groupcheck.validate.command",
    "groupcheck.tla.cli",
    "groupcheck.render",
    "groupcheck.capture.cli",
    "groupcheck.kafka.cli",
    "groupcheck.pipeline.cli",
    "groupcheck.optimality",
    "groupcheck.timed.cli",
    "groupcheck.symbolic.prove_cmd",
    "groupcheck.vectors.cli",
    "groupcheck.expected",
)

COMMANDS = {
    "config": cmd_config_show,
    "simulate": cmd_simulate,
    "explore": cmd_explore,
    "mutants": cmd_mutants,
    "replay": cmd_replay,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``groupcheck`` console script. Exit statuses:
    ``groupcheck.exitcodes`` (0 ok, 1 violation, 2 bad input, 3 inconclusive, 4 internal
    error). No path ends in a traceback: an unexpected exception prints one line and the
    file its traceback was saved to."""
    import signal
    import threading

    # First of all (issue 42): a SIGTERM at any moment — while the subcommands' modules
    # are imported too — is one line and 143, Ctrl-C one line and 130.
    previous = None
    interrupter = None
    if threading.current_thread() is threading.main_thread():
        from groupcheck.signals import Z3Interrupter, install

        previous = install()
        # A signal interrupts a running Z3 query at once (it holds the main thread in C).
        interrupter = Z3Interrupter()
    try:
        return _main(argv)
    except KeyboardInterrupt:
        from groupcheck.signals import forget_interrupt

        forget_interrupt()
        return _stopped("interrupted", 130)
    except Terminated:
        from groupcheck.signals import caught

        caught()
        return _stopped("terminated", 128 + signal.SIGTERM)
    finally:
        if interrupter is not None:
            interrupter.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _stopped(what: str, status: int) -> int:
    """Say that a signal stopped the command, ignoring further signals while saying it."""
    import signal
    import threading

    main_thread = threading.current_thread() is threading.main_thread()
    if main_thread:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # main restores its caller's
        interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        print(f"groupcheck: {what}", file=sys.stderr)
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, interrupt)
    return status


def _main(argv: Sequence[str] | None) -> int:
    from groupcheck import exitcodes
    from groupcheck.budget import BudgetExpired, process_started
    from groupcheck.crash import one_line, save_traceback
    from groupcheck.usercode import UserCodeError

    args: argparse.Namespace | None = None
    _CHOSEN.clear()
    # From the command line a budget counts the interpreter's start-up too; called from
    # Python (a test, a user's script), from the call.
    _CHOSEN["started"] = process_started() if argv is None else time.monotonic()
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            print("groupcheck: error: choose a command (above)", file=sys.stderr)
            return exitcodes.BAD_INPUT
        handler = getattr(args, "handler", None) or COMMANDS[args.command]
        if getattr(args, "user_memory", None) is not None:
            from groupcheck.usercode import set_memory_limit

            set_memory_limit(args.user_memory)
        return int(handler(args))
    except UserCodeError as e:
        return _user_code_failed(e, args)
    except BudgetExpired as e:
        return _budget_expired(e, args)
    except UsageError as e:
        print(f"{e} (see 'groupcheck --help')", file=sys.stderr)
        _json_error(args, argv, "malformed", printable(str(e)), exitcodes.BAD_INPUT)
        return exitcodes.BAD_INPUT
    except ConfigError as e:
        print(f"groupcheck: error: {printable(str(e))}", file=sys.stderr)
        _json_error(args, argv, "malformed", printable(str(e)), exitcodes.BAD_INPUT)
        return exitcodes.BAD_INPUT
    except BrokenPipeError:
        _quiet_stdout()
        return exitcodes.OK
    except Exception as e:
        from groupcheck.budget import fired
        from groupcheck.signals import surfaced

        signalled = surfaced(e)
        if signalled is not None:  # SIGTERM or Ctrl-C, surfaced as another exception
            raise signalled from None
        stopped = fired(e)
        if stopped is not None:  # the watchdog's exception, surfaced as another
            return _budget_expired(stopped, args)
        command = " ".join(["groupcheck", *(sys.argv[1:] if argv is None else argv)])
        saved = save_traceback(e, command)
        where = f"traceback saved to {saved}" if saved else "no traceback file could be written"
        print(f"groupcheck: internal error: {one_line(e)} ({where})", file=sys.stderr)
        _json_error(
            args,
            argv,
            "internal-error",
            f"internal error: {one_line(e)} ({where})",
            exitcodes.INTERNAL_ERROR,
        )
        return exitcodes.INTERNAL_ERROR


def _json_error(
    args: argparse.Namespace | None,
    argv: Sequence[str] | None,
    result: str,
    error: str,
    status: int,
    **extra: Any,
) -> bool:
    """Under ``--json`` of a command with a documented schema (``groupcheck.jsonout``):
    the error document on stdout, beside the line on stderr; whether it was printed."""
    from groupcheck import jsonout

    if args is not None:
        command = getattr(args, "command", None)
        if not getattr(args, "json", False) or command not in jsonout.COMMANDS:
            return False
    else:
        command = jsonout.requested(sys.argv[1:] if argv is None else argv)
        if command is None:
            return False
    try:
        jsonout.emit_error(command, result, error, status, **extra)
    except BrokenPipeError:
        _quiet_stdout()
    return True


_CHOSEN: dict[str, Any] = {}
"""The config the running command chose (``_config_for``): where a failing user rule is
located."""


def _user_code_failed(error: Any, args: argparse.Namespace | None) -> int:
    """A user's rule or file failed (exit 8): the rule, the file, the step and the path
    (located by a bounded breadth-first search when the engine did not record it), the
    user's frames; with ``--json`` the same as a JSON object on stdout."""
    from groupcheck import exitcodes
    from groupcheck.budget import BudgetExpired, watchdog
    from groupcheck.usercode import locate

    config = _CHOSEN.get("config")
    if config is not None and error.rule is not None and error.actions is None:
        try:
            with watchdog(LOCATE_SECONDS):
                locate(error, config)
        except BudgetExpired:
            error.located = f" (the search for the path was stopped after {LOCATE_SECONDS} s)"
    for line in error.report():
        print(printable(line), file=sys.stderr)
    if args is not None and getattr(args, "json", False):
        details = error.to_json()
        del details["result"]
        line = printable(f"{error.what}: {error.failure}")
        if not _json_error(args, None, "user code error", line, 8, **details):
            print(json.dumps(error.to_json(), indent=1))  # replay, simulate
    return exitcodes.USER_CODE_ERROR


LOCATE_SECONDS = 10.0
"""How long the search for the path to a failing user rule may take."""


def _budget_expired(error: Any, args: argparse.Namespace | None) -> int:
    """The budget's watchdog stopped work that overran it: inconclusive (exit 3), saying
    what overran."""
    from groupcheck import exitcodes

    reason = f"{error}; stopped there"
    print(f"groupcheck: inconclusive: {printable(reason)}", file=sys.stderr)
    said = _json_error(args, None, "inconclusive", printable(reason), 3, reasons=[reason])
    if not said and args is not None and getattr(args, "json", False):
        print(json.dumps({"result": "inconclusive", "reasons": [reason]}, indent=1))
    return exitcodes.INCONCLUSIVE


def printable(text: str) -> str:
    """``text`` safe for a terminal: control and invisible formatting characters escaped
    (``reports.escape.visible``)."""
    from reports.escape import visible

    return visible(text)


def _quiet_stdout() -> None:
    """After a closed pipe, point stdout at /dev/null so the interpreter's final flush
    does not raise again."""

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
