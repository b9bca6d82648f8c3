"""Argument types and option groups shared by the CLI's commands (argparse only)."""

from __future__ import annotations

import argparse


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
    parser.add_argument("--mode", choices=("safety", "conformance"), default="safety")
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
        help="safety: events after the last perturbation before convergence is required "
        "(default 100)",
    )
