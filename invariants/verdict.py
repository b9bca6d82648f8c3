"""The result of a check: ok, violation or inconclusive — never more than was checked.

- **ok**: the bounded space was exhausted, or the requested depth, steps, runs or examples
  were all done, and every ``SOMETIMES`` witness was hit;
- **violation**: a property failed (with a replayable path where there is one);
- **inconclusive**: nothing failed, but the check is incomplete — a budget ran out
  first, a witness was missed (the run may be vacuous), a property was not checked, or a
  solver answered unknown. ``reasons`` says which.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Result(StrEnum):
    """Three-way result of every engine, prover and validator."""

    OK = "ok"
    VIOLATION = "violation"
    INCONCLUSIVE = "inconclusive"


def conclude(
    *,
    violated: bool,
    complete: bool,
    incomplete_reason: str = "the budget ran out before the search was done",
    missed_witnesses: Iterable[str] = (),
    unchecked: Iterable[str] = (),
) -> tuple[Result, list[str]]:
    """The result of a check and, when it is inconclusive, why."""
    if violated:
        return Result.VIOLATION, []
    reasons: list[str] = []
    if not complete:
        reasons.append(incomplete_reason)
    missed = sorted(missed_witnesses)
    if missed:
        reasons.append("witnesses missed (the run may be vacuous): " + ", ".join(missed))
    skipped = sorted(unchecked)
    if skipped:
        reasons.append("not checked: " + ", ".join(skipped))
    return (Result.INCONCLUSIVE if reasons else Result.OK), reasons
