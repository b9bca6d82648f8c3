"""Argument types and option groups shared by the CLI's commands (argparse only)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from groupcheck.usercode import DEFAULT_USER_MEMORY_MB


def positive(text: str) -> int:
    """An integer >= 1."""
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def non_negative(text: str) -> int:
    """An integer >= 0."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value}")
    return value


MAX_WORKERS = 128
"""The most ``--workers`` (processes) a search may start (issue 42: 10,000 tried to fork
10,000 processes); ``explore --workers`` and ``GROUPCHECK_WORKERS`` above it are refused."""
MAX_STEPS = 100_000
"""The most steps ``simulate --steps`` plays and ``explore --max-steps`` takes a walk."""


def at_most(limit: int, what: str) -> Callable[[str], int]:
    """An integer from 1 to ``limit`` (``what`` names the limit in the refusal)."""

    def parse(text: str) -> int:
        value = positive(text)
        if value > limit:
            raise argparse.ArgumentTypeError(f"expected at most {limit} {what}, got {value}")
        return value

    parse.__name__ = "integer"  # argparse names the type in some messages
    return parse


def steps(text: str) -> int:
    """A number of steps from 0 to ``MAX_STEPS``."""
    value = non_negative(text)
    if value > MAX_STEPS:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_STEPS} steps, got {value}")
    return value


def positive_float(text: str) -> float:
    """A number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text}")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def add_validation_options(parser: argparse.ArgumentParser) -> None:
    """``--mode``, ``--format`` and ``--settle``: how ``groupcheck validate`` and
    ``groupcheck pipeline validate`` check each trace file."""
    parser.add_argument(
        "--mode",
        choices=("safety", "conformance", "coordinator", "client"),
        default="safety",
        help="safety: what a (partial) trace observes; conformance: replay a model trace; "
        "coordinator: replay a consumer capture's requests through the model's coordinator "
        "and compare each response; client: replay each member's client (its responses and "
        "client events) through the model's client and compare its requests and callbacks "
        "(default safety)",
    )
    parser.add_argument(
        "--format",
        choices=("auto", "ndjson", "itf"),
        default="auto",
        help="input format (auto: ITF for *.itf.json, else the NDJSON trace format)",
    )
    parser.add_argument(
        "--settle",
        type=non_negative,
        default=100,
        help="safety: events a quiet window between perturbations (and the trace's tail) must "
        "hold before convergence is required at its end (default 100)",
    )


def milliseconds(text: str) -> int:
    """A duration in milliseconds: an integer from 1 to 2^31 - 1 (a trace's int32)."""
    value = positive(text)
    if value > 2**31 - 1:
        raise argparse.ArgumentTypeError(f"expected at most 2147483647 ms, got {value}")
    return value


def add_timing_options(parser: argparse.ArgumentParser) -> None:
    """The timing ``groupcheck validate`` classifies hand-overs with (each overrides the
    trace header's), the clock tolerance, and ``--fail-on-zombie``."""
    group = parser.add_argument_group(
        "timing (safety mode; docs/trace-format.md, 'Hand-overs of unreleased partitions'; "
        "--heartbeat-interval-ms also coordinator mode)"
    )
    for name, what in (
        ("session-timeout-ms", "the session timeout the coordinator applies"),
        ("rebalance-timeout-ms", "the members' rebalance timeout"),
        ("heartbeat-interval-ms", "the heartbeat interval"),
    ):
        group.add_argument(
            f"--{name}",
            type=milliseconds,
            metavar="MS",
            help=f"{what}, in ms (supplies or overrides the header's {name.replace('-', '_')})",
        )
    group.add_argument(
        "--clock-tolerance-ms",
        type=non_negative,
        default=100,
        metavar="MS",
        help="a hand-over is premature only if it came more than this before the owner's "
        "deadline (timestamps of several clocks, timers firing late; default 100)",
    )
    group.add_argument(
        "--settle-ms",
        type=non_negative,
        default=0,
        metavar="MS",
        help="convergence is required of a quiet window only once it also lasts this long "
        "by its timestamps (default 0: --settle events suffice)",
    )
    group.add_argument(
        "--fail-on-zombie",
        action="store_true",
        help="report a hand-over after the owner's session expired, while nothing shows "
        "the owner stopped (Observed.ZombieWindow), as a violation",
    )


RULES_HELP = (
    "run with your own rules: NAME in FILE.py is a Rules value or a mapping of Rules "
    "fields to functions (docs/tutorial.md, 'Checking your own protocol change')"
)
"""``--rules``'s help for the commands that run the model."""


def add_rules_option(parser: argparse.ArgumentParser, *, help: str = RULES_HELP) -> None:
    """``--rules FILE.py:NAME``: a protocol change of your own (groupcheck/rulesfile.py)."""
    parser.add_argument("--rules", metavar="FILE.py:NAME", help=help)
    add_user_memory_option(parser)


def add_user_memory_option(parser: argparse.ArgumentParser) -> None:
    """``--user-memory MB``: the memory a user's rule may take (groupcheck.usercode)."""
    parser.add_argument(
        "--user-memory",
        type=non_negative,
        default=DEFAULT_USER_MEMORY_MB,
        metavar="MB",
        help="stop a rule of yours (--rules, mutants --from) once groupcheck's peak memory "
        "has grown by MB while it ran, summed over its calls, and report it as your code "
        f"failing (exit 8); 0: no limit (default {DEFAULT_USER_MEMORY_MB})",
    )
