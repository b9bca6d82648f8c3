"""The ``groupcheck`` command line.

Exit codes: 0 success, 1 a property violated (commands that check), 2 bad input or usage.
Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import NoReturn

from model.presets import PRESETS, preset
from model.status import ConfigError


class UsageError(Exception):
    """Bad command-line input: reported on one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value}")
    return value


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
    sim.add_argument(
        "--preset", required=True, help=f"preset name, one of: {', '.join(PRESETS)}"
    )
    sim.add_argument("--seed", required=True, type=_non_negative, help="PRNG seed (>= 0)")
    sim.add_argument("--steps", type=_non_negative, default=40, help="steps to play (default 40)")
    sim.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return parser


def cmd_simulate(args: argparse.Namespace) -> int:
    from groupcheck.simulate import simulate
    from reports.casestudy import describe_action, group_view, render_group

    config = preset(args.preset)
    if args.json:
        steps = [
            {"step": s.index, "action": describe_action(s.action), "kind": s.action.kind,
             "group": group_view(s.state)}
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


COMMANDS = {"simulate": cmd_simulate}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``groupcheck`` console script."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        return COMMANDS[args.command](args)
    except UsageError as e:
        print(f"{e} (see 'groupcheck --help')", file=sys.stderr)
        return 2
    except ConfigError as e:
        print(f"groupcheck: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
