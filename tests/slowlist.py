"""The tests ``make check`` leaves out: the list ``tests/slow_tests.txt``, read by
``tests/conftest.py``, which marks every test it lists ``slow``.

An entry is a node id as pytest prints it from the repository root: a module
(``tests/invariants/z3/proof/test_proof.py``: every test in it), a test (``…::test_x``: every
parameter of it) or one parametrized case (``…::test_x[a-b]``). ``#`` starts a comment.

The list is refreshed from a ``--durations`` report of a full run (``make test`` with
``--durations=0``, or any ``--durations=N``)::

    python -m tests.slowlist REPORT [--min-seconds S]

adds every test whose setup, call and teardown together took at least ``S`` seconds
(default 1.5) in the report; the entries already listed stay, so remove by hand a test
that became fast. The file is replaced atomically.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

SLOW_TESTS = Path(__file__).with_name("slow_tests.txt")

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s (?:setup|call|teardown)\s+(\S+)\s*$")


def read_entries(text: str) -> tuple[str, ...]:
    """The entries of a list's text, comments and blank lines left out."""
    entries = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return tuple(e for e in entries if e)


def prefixes(nodeid: str) -> set[str]:
    """``nodeid`` and every entry that would select it: its module, every ``::`` level
    below it, and the test without its parameters."""
    parts = nodeid.split("::")
    found = {"::".join(parts[:i]) for i in range(1, len(parts) + 1)}
    found.add(nodeid.split("[", 1)[0])
    return found


def listed(nodeid: str, entries: Iterable[str]) -> bool:
    """Whether an entry of ``entries`` selects the test ``nodeid``."""
    return not prefixes(nodeid).isdisjoint(entries)


def durations(report: str) -> dict[str, float]:
    """Node id → seconds (setup, call and teardown added up) of a ``--durations`` report."""
    seconds: dict[str, float] = {}
    for line in report.splitlines():
        match = _DURATION.match(line)
        if match is not None:
            nodeid = match.group(2)
            seconds[nodeid] = seconds.get(nodeid, 0.0) + float(match.group(1))
    return seconds


def refreshed(current: str, report: str, min_seconds: float) -> str:
    """The list's text with the tests of ``report`` that took ``min_seconds`` or more
    added: the leading comment block is kept, the entries are sorted."""
    lines = current.splitlines()
    header: list[str] = []
    for line in lines:
        if line.startswith("#") or not line.strip():
            header.append(line)
        else:
            break
    entries = set(read_entries(current))
    for nodeid, seconds in durations(report).items():
        if seconds >= min_seconds and not listed(nodeid, entries):
            entries.add(nodeid)
    while header and not header[-1].strip():
        header.pop()
    return "\n".join([*header, "", *sorted(entries)] if header else sorted(entries)) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.slowlist", description=__doc__)
    parser.add_argument("report", type=Path, help="a pytest --durations report")
    parser.add_argument("--min-seconds", type=float, default=1.5)
    args = parser.parse_args(argv)
    try:
        report = args.report.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        print(f"{args.report}: {error.strerror or error}", file=sys.stderr)
        return 2
    if not durations(report):
        print(f"{args.report}: no --durations lines (e.g. '3.21s call tests/…')", file=sys.stderr)
        return 2
    text = refreshed(SLOW_TESTS.read_text(encoding="utf-8"), report, args.min_seconds)
    fd, tmp = tempfile.mkstemp(dir=SLOW_TESTS.parent, prefix=".slow_tests.")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, SLOW_TESTS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
