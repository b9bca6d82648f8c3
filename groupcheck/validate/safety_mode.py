"""The checks of safety mode (``groupcheck validate --mode safety``) of every protocol: the
consumer protocol's (``groupcheck.validate.safety``) and the classic protocol's
(``safety_classic``, which builds on the former), for the report's descriptions."""

from __future__ import annotations

from groupcheck.validate.safety import OBSERVED_CHECKS
from groupcheck.validate.safety_classic import CLASSIC_OBSERVED_CHECKS
from groupcheck.validate.timing import TIMED_CHECKS


def observed_text(name: str | None) -> tuple[str, str]:
    """(description, reference) of the safety-mode check called ``name``, else empty (the
    consumer protocol's first; then those of classic traces, ``safety_classic``)."""
    for check in (*OBSERVED_CHECKS, *TIMED_CHECKS, *CLASSIC_OBSERVED_CHECKS):
        if check.name == name:
            return check.description, check.reference
    return "", ""
