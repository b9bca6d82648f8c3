"""``groupcheck tla check|crosscheck|mutants``: TLC on the specification in ``tla/``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(sub: Any) -> None:
    """Add the ``tla`` command and its subcommands."""
    tla = sub.add_parser(
        "tla",
        help="run TLC on the TLA+ specification and cross-check it with the Python model",
        description=(
            "TLC on tla/KIP848.tla. 'check' model-checks one configuration; 'crosscheck' "
            "compares the reachable states of the Python model and of TLC as sets; "
            "'mutants' checks that mutants with a TLA+ counterpart are found by both and "
            "that the Python counterexample replays in TLC. Exit 0 agreement or no "
            "violation, 1 a violation or a disagreement, 2 bad input or TLC failure."
        ),
    )
    tsub = tla.add_subparsers(dest="tla_command", metavar="SUBCOMMAND", required=True)
    check = tsub.add_parser("check", help="model-check one configuration with TLC")
    check.add_argument("--config", required=True, help="configuration name (tla/<NAME>.cfg)")
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
    check.add_argument("--workers", type=int, default=2, help="TLC worker threads (default 2)")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.set_defaults(handler=cmd_check)
    cross = tsub.add_parser("crosscheck", help="compare Python and TLC reachable state sets")
    cross.add_argument("--config", required=True, help="configuration name (tla/<NAME>.cfg)")
    cross.add_argument("--examples", type=int, default=3, help="differing states to show")
    cross.add_argument("--json", action="store_true", help="print one JSON object")
    cross.set_defaults(handler=cmd_crosscheck)
    mut = tsub.add_parser("mutants", help="mutant agreement and counterexample replay in TLC")
    mut.add_argument("names", nargs="*", help="mutants (default: all with a TLA+ counterpart)")
    mut.add_argument("--json", action="store_true", help="print one JSON object")
    mut.set_defaults(handler=cmd_mutants)


def _progress(enabled: bool) -> Any:
    if not enabled:
        return None
    return lambda message: print(f"... {message}", file=sys.stderr, flush=True)


def _error(message: str) -> int:
    print(f"groupcheck: error: {message}", file=sys.stderr)
    return 2


def cmd_check(args: argparse.Namespace) -> int:
    from groupcheck.tla.configs import cfg_text, check_mutant, config_named
    from groupcheck.tla.tlc import TlcError, run_tlc, with_mutant
    from model.status import ConfigError

    try:
        config = config_named(args.config)
        check_mutant(args.mutant)
        result = run_tlc(
            with_mutant(
                cfg_text(config, liveness=args.liveness, symmetry=args.symmetry), args.mutant
            ),
            workers=args.workers,
            progress=_progress(not args.json),
        )
    except (ConfigError, TlcError) as e:
        return _error(str(e))
    doc = {
        "config": config.name,
        "mutant": args.mutant,
        "result": result.result,
        "distinct_states": result.distinct_states,
        "states_generated": result.states_generated,
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
    return 1 if result.result == "violation" else 0


def cmd_crosscheck(args: argparse.Namespace) -> int:
    from groupcheck.tla.crosscheck import crosscheck
    from groupcheck.tla.tlc import TlcError
    from model.status import ConfigError

    try:
        doc = crosscheck(args.config, examples=args.examples, progress=_progress(not args.json))
    except (ConfigError, TlcError) as e:
        return _error(str(e))
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        verdict = "equal" if doc["equal"] else "DIFFERENT"
        print(
            f"{doc['config']}: reachable states {verdict}: Python {doc['python_states']}, "
            f"TLC {doc['tlc_states']} (only in Python {doc['only_in_python_count']}, "
            f"only in TLC {doc['only_in_tlc_count']})"
        )
        for side in ("only_in_python", "only_in_tlc"):
            for state in doc[side]:
                print(f"\n{side.replace('_', ' ')}:")
                for name, value in state.items():
                    print(f"  {name} = {value}")
    return 0 if doc["equal"] else 1


def cmd_mutants(args: argparse.Namespace) -> int:
    from groupcheck.tla.crosscheck import TLA_MUTANTS, mutant_agreement
    from groupcheck.tla.tlc import TlcError
    from model.status import ConfigError

    names = args.names or list(TLA_MUTANTS)
    rows = []
    try:
        for name in names:
            if not args.json:
                print(f"... {name}", file=sys.stderr, flush=True)
            rows.append(mutant_agreement(name))
    except (ConfigError, TlcError) as e:
        return _error(str(e))
    ok = all(r["same_property"] and r["replayed_in_tlc"] for r in rows)
    if args.json:
        print(json.dumps({"agree": ok, "mutants": rows}, indent=1))
    else:
        for r in rows:
            print(
                f"{r['mutant']:<30} {r['config']:<12} Python {r['python_violated']} "
                f"({r['python_length']} steps), TLC {r['tlc_violated']} ({r['tlc_length']} "
                f"steps), same: {r['same_property']}, replayed in TLC: {r['replayed_in_tlc']}"
            )
    return 0 if ok else 1
