"""Safety mode (``groupcheck validate --mode safety``): reads a trace's header and checks
its events with the checker of its protocol — the consumer protocol's
(``groupcheck.validate.safety``), the classic protocol's (``safety_classic``) or a mixed
group's (``safety_mixed``, which builds on both)."""

from __future__ import annotations

from collections.abc import Iterable

from groupcheck.validate.concurrency import releases_first
from groupcheck.validate.report import Report
from groupcheck.validate.safety import OBSERVED_CHECKS, _Safety, trace_events
from groupcheck.validate.safety_classic import CLASSIC_OBSERVED_CHECKS, validate_classic_safety
from groupcheck.validate.safety_mixed import validate_mixed_safety
from groupcheck.validate.timing import TIMED_CHECKS, TimingOptions
from model.trace import TraceError, parse_header


def observed_text(name: str | None) -> tuple[str, str]:
    """(description, reference) of the safety-mode check called ``name``, else empty (the
    consumer protocol's first; then those of classic traces, ``safety_classic``)."""
    for check in (*OBSERVED_CHECKS, *TIMED_CHECKS, *CLASSIC_OBSERVED_CHECKS):
        if check.name == name:
            return check.description, check.reference
    return "", ""


def validate_safety(
    file: str,
    lines: Iterable[str],
    settle: int = 100,
    timing: TimingOptions | None = None,
) -> Report:
    """Check the :data:`OBSERVED_CHECKS` on a (possibly partial) trace; with its timing
    known (the header's, or ``timing``'s options), classify every hand-over of an
    unreleased partition (``groupcheck.validate.timing``)."""
    report = Report(file, "safety")
    it = iter(lines)
    try:
        first = next(it, None)
        if first is None:
            raise TraceError(1, 1, "empty trace: no header line")
        header = parse_header(first)
        if header.protocol == "classic":
            return validate_classic_safety(file, header, it, timing)
        if header.protocol == "mixed":
            return validate_mixed_safety(file, header, it, settle, timing)
        checker = _Safety(file, report, settle, timing or TimingOptions(), header)
        for n, ts, action in releases_first(trace_events(it, header)):
            checker.on_event(n, ts, action)
    except TraceError as e:
        report.error = f"{file}:{e}"
        return report
    checker.finish()
    return report
