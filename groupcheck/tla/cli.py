"""``groupcheck tla check|crosscheck|mutants``: TLC on the specification in ``tla/``.

Every subcommand ends with a three-way result (``invariants.verdict``), in the text and in
``--json`` (``"result"``, ``"reasons"``), and exits through ``groupcheck.exitcodes``:

- ``check``: TLC's result; ``inconclusive`` when ``--max-states`` stopped TLC before it
  exhausted the state space;
- ``crosscheck``: ``violation`` when a state one side reaches is missing from the other
  side's complete search; ``inconclusive`` when a side was cut short (``--max-states``, or
  TLC stopped at a violation) and no such state shows; ``ok`` when the sets are equal;
- ``mutants``: a disagreement between the Python engine and TLC is a violation of
  agreement; ``inconclusive`` when the Python search ran out of budget without a violation.

Exit 0 ok, 1 violation, 3 inconclusive, 2 bad input (an unknown configuration or mutant,
bad options), 4 when TLC cannot run or fails (no Java, no TLC jar, a TLC error): one line.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from groupcheck import exitcodes
from invariants.verdict import Result
from model.status import ConfigError

MAX_STATES = 100_000_000
"""The largest ``--max-states``."""
MAX_WORKERS = 256
"""The most TLC worker threads."""
MAX_EXAMPLES = 1000
"""The most differing states ``crosscheck`` shows per side."""


def _bounded(low: int, high: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected an integer in {low}..{high}, got {value}")
        return value

    return parse


def register(sub: Any) -> None:
    """Add the ``tla`` command and its subcommands."""
    tla = sub.add_parser(
        "tla",
        help="run TLC on the TLA+ specification and cross-check it with the Python model",
        description=(
            "TLC on tla/KIP848.tla. 'check' model-checks one configuration; 'crosscheck' "
            "compares the reachable states of the Python model and of TLC as sets; "
            "'mutants' checks that mutants with a TLA+ counterpart are found by both and "
            "that the Python counterexample replays in TLC. Each ends with a result (ok, "
            "violation, inconclusive) and its reasons. Exit 0 ok (no violation, or "
            "agreement), 1 a violation or a disagreement, 3 inconclusive (a search cut "
            "short), 2 bad input, 4 when TLC cannot run or fails."
        ),
    )
    tsub = tla.add_subparsers(dest="tla_command", metavar="SUBCOMMAND", required=True)
    check = tsub.add_parser(
        "check",
        help="model-check one configuration with TLC",
        description=(
            "Model-check one configuration with TLC. Exit 0 when TLC exhausted the state "
            "space without a violation, 1 on a violation, 3 when --max-states stopped it "
            "first, 2 on bad input, 4 when TLC cannot run or fails."
        ),
    )
    check.add_argument(
        "--config",
        required=True,
        help="configuration name (tla/<NAME>.cfg) or a config file (*.toml, *.json) in scope",
    )
    check.add_argument("--mutant", help="switch a mutant on in the spec")
    check.add_argument(
        "--liveness",
        action="store_true",
        help="check Convergence under FairSpec instead of the step properties",
    )
    check.add_argument(
        "--symmetry",
        action="store_true",
        help="permute interchangeable clients (exact up to the assignor's member-order ties)",
    )
    check.add_argument(
        "--max-states",
        type=_bounded(1, MAX_STATES),
        metavar="N",
        help="stop expanding states once TLC has found N distinct states (then the result "
        "is inconclusive unless a violation was found); not with --liveness",
    )
    check.add_argument(
        "--workers",
        type=_bounded(1, MAX_WORKERS),
        default=2,
        help="TLC worker threads (default 2)",
    )
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.set_defaults(handler=cmd_check)
    cross = tsub.add_parser(
        "crosscheck",
        help="compare Python and TLC reachable state sets",
        description=(
            "Compare the reachable states of the Python model and of TLC as sets. Exit 0 "
            "when they are equal, 1 when one side reaches a state the other's complete "
            "search does not, 3 when a side was cut short without such a state, 2 on bad "
            "input, 4 when TLC cannot run or fails."
        ),
    )
    cross.add_argument(
        "--config",
        required=True,
        help="configuration name (tla/<NAME>.cfg) or a config file (*.toml, *.json) in scope",
    )
    cross.add_argument(
        "--rules",
        metavar="FILE.py:NAME",
        help="run the Python side under your own rules: the states only one side reaches are "
        "what the change adds or removes against the reference specification",
    )
    cross.add_argument(
        "--examples",
        type=_bounded(0, MAX_EXAMPLES),
        default=3,
        help="differing states to show (default 3)",
    )
    cross.add_argument(
        "--max-states",
        type=_bounded(1, MAX_STATES),
        metavar="N",
        help="bound each side's search: N model states in Python, N distinct states in TLC",
    )
    cross.add_argument("--json", action="store_true", help="print one JSON object")
    cross.set_defaults(handler=cmd_crosscheck)
    mut = tsub.add_parser(
        "mutants",
        help="mutant agreement and counterexample replay in TLC",
        description=(
            "For each mutant with a TLA+ counterpart: the Python BFS and TLC must report the "
            "same violated property and the Python counterexample must replay in TLC. Exit "
            "0 when all agree, 1 on a disagreement, 3 when the Python search ran out of "
            "budget without a violation, 2 on bad input, 4 when TLC cannot run or fails."
        ),
    )
    mut.add_argument("names", nargs="*", help="mutants (default: all with a TLA+ counterpart)")
    mut.add_argument("--json", action="store_true", help="print one JSON object")
    mut.set_defaults(handler=cmd_mutants)


def _progress(enabled: bool) -> Any:
    if not enabled:
        return None
    return lambda message: print(f"... {message}", file=sys.stderr, flush=True)


def _error(message: str) -> int:
    print(f"groupcheck: error: {message}", file=sys.stderr)
    return exitcodes.BAD_INPUT


def _tlc_failed(error: Exception) -> int:
    """TLC could not run or failed: an internal error (one line), not bad input."""
    text = " ".join(str(error).split())
    print(f"groupcheck: internal error: {text}", file=sys.stderr)
    return exitcodes.INTERNAL_ERROR


def _print_reasons(reasons: list[str]) -> None:
    for reason in reasons:
        print(f"  {reason}")


def cmd_check(args: argparse.Namespace) -> int:
    from groupcheck.tla.configs import cfg_text, check_mutant, config_named
    from groupcheck.tla.tlc import TlcError, run_tlc, with_mutant

    try:
        config = config_named(args.config)
        check_mutant(args.mutant)
        if args.liveness and args.max_states is not None:
            raise ConfigError(
                "--max-states cannot bound a liveness check: a state constraint cuts the "
                "behaviours Convergence is checked on"
            )
        cfg = with_mutant(
            cfg_text(config, liveness=args.liveness, symmetry=args.symmetry), args.mutant
        )
    except ConfigError as e:
        return _error(str(e))
    try:
        result = run_tlc(
            cfg,
            workers=args.workers,
            progress=_progress(not args.json),
            max_states=args.max_states,
        )
    except TlcError as e:
        return _tlc_failed(e)
    doc = {
        "config": config.name,
        "mutant": args.mutant,
        "result": result.result,
        "reasons": result.reasons,
        "distinct_states": result.distinct_states,
        "states_generated": result.states_generated,
        "max_states": args.max_states,
        "violated": result.violated,
        "trace_length": len(result.trace) - 1 if result.trace else None,
        "seconds": round(result.seconds, 2),
    }
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print(
            f"{config.name}: {result.result}; {result.distinct_states} distinct states "
            f"in {result.seconds:.1f} s"
            + (
                f"; {result.violated} violated in {len(result.trace) - 1} steps"
                if result.violated
                else ""
            )
        )
        _print_reasons(result.reasons)
    return exitcodes.exit_code(result.result)


def cmd_crosscheck(args: argparse.Namespace) -> int:
    from groupcheck.tla.crosscheck import crosscheck
    from groupcheck.tla.tlc import TlcError

    try:
        doc = crosscheck(
            args.config,
            examples=args.examples,
            progress=_progress(not args.json),
            max_states=args.max_states,
            rules_spec=args.rules,
        )
    except ConfigError as e:
        return _error(str(e))
    except TlcError as e:
        return _tlc_failed(e)
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        verdict = "equal" if doc["equal"] else "DIFFERENT"
        print(
            f"{doc['config']}: {doc['result']}: reachable states {verdict}: Python "
            f"{doc['python_states']}, TLC {doc['tlc_states']} (only in Python "
            f"{doc['only_in_python_count']}, only in TLC {doc['only_in_tlc_count']})"
        )
        _print_reasons(doc["reasons"])
        for side in ("only_in_python", "only_in_tlc"):
            for state in doc[side]:
                print(f"\n{side.replace('_', ' ')}:")
                for name, value in state.items():
                    print(f"  {name} = {value}")
    return exitcodes.exit_code(doc["result"])


def cmd_mutants(args: argparse.Namespace) -> int:
    from groupcheck.tla.crosscheck import TLA_MUTANTS, mutant_agreement
    from groupcheck.tla.tlc import TlcError

    names = args.names or list(TLA_MUTANTS)
    unknown = [n for n in names if n not in TLA_MUTANTS]
    if unknown:
        return _error(
            f"mutant {unknown[0]!r} has no TLA+ counterpart; those with one: "
            f"{', '.join(TLA_MUTANTS)}"
        )
    rows = []
    try:
        for name in names:
            if not args.json:
                print(f"... {name}", file=sys.stderr, flush=True)
            rows.append(mutant_agreement(name))
    except ConfigError as e:
        return _error(str(e))
    except TlcError as e:
        return _tlc_failed(e)
    results = {r["result"] for r in rows}
    if Result.VIOLATION in results:
        result = Result.VIOLATION
        reasons = []
    else:
        result = Result.INCONCLUSIVE if Result.INCONCLUSIVE in results else Result.OK
        reasons = [reason for r in rows for reason in r["reasons"]]
    if args.json:
        doc = {
            "result": str(result),
            "reasons": reasons,
            "agree": result is Result.OK,
            "mutants": rows,
        }
        print(json.dumps(doc, indent=1))
    else:
        for r in rows:
            print(
                f"{r['mutant']:<30} {r['config']:<12} {r['result']:<12} Python "
                f"{r['python_violated']} ({r['python_length']} steps), TLC {r['tlc_violated']} "
                f"({r['tlc_length']} steps), same: {r['same_property']}, replayed in TLC: "
                f"{r['replayed_in_tlc']}"
            )
        print(f"result: {result}")
        _print_reasons(reasons)
    return exitcodes.exit_code(result)
