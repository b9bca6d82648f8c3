"""Reading trace files, and validating one file as ``groupcheck validate`` does.

Traces are read through ``model.trace.lines.text_lines``: in chunks, a line at a time, at
most ``MAX_LINE_BYTES`` (16 MiB) a line, decoded from UTF-8 with the line and byte column
of an invalid byte, a leading byte-order mark skipped. Memory stays bounded whatever the
file holds (``/dev/zero`` is "line longer than 16 MiB" after 16 MiB). ``-`` names standard
input, shown as ``<stdin>`` in messages.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import BinaryIO

from groupcheck.crash import one_line
from groupcheck.validate.client_mode import validate_client
from groupcheck.validate.conformance import validate_conformance
from groupcheck.validate.coordinator_mode import validate_coordinator
from groupcheck.validate.itf import MAX_ITF_BYTES, parse_itf, validate_itf
from groupcheck.validate.report import Report
from groupcheck.validate.safety import validate_safety
from groupcheck.validate.timing import TimingOptions
from model.trace.lines import text_lines

STDIN = "-"
"""The file name that stands for standard input."""
STDIN_NAME = "<stdin>"
"""How messages name standard input."""
CHUNK_BYTES = 64 * 1024
"""Bytes read at a time."""


def display_name(name: str) -> str:
    """How messages name the file ``name``."""
    return STDIN_NAME if name == STDIN else name


@contextmanager
def opened(name: str) -> Iterator[BinaryIO]:
    """The file ``name`` (standard input for ``-``, which is left open) for reading bytes."""
    if name == STDIN:
        yield sys.stdin.buffer
        return
    with open(name, "rb") as f:
        yield f


@contextmanager
def trace_lines(name: str) -> Iterator[Iterator[str]]:
    """The lines of the trace file ``name`` (``text_lines``: bounded, decoded, without
    their line breaks). ``OSError`` when it cannot be opened or read; ``TraceError`` from
    the iterator for a line too long or not UTF-8."""
    with opened(name) as f:
        yield text_lines(iter(partial(f.read, CHUNK_BYTES), b""))


def is_itf(name: str, fmt: str) -> bool:
    """Whether ``name`` is read as ITF: ``--format itf``, or ``auto`` and ``*.itf.json``."""
    return fmt == "itf" or (fmt == "auto" and name.endswith(".itf.json"))


def validate_path(
    name: str,
    mode: str,
    settle: int = 100,
    fmt: str = "auto",
    *,
    reference: bool = False,
    timing: TimingOptions | None = None,
    epoch_layout: str = "auto",
    all_divergences: bool = False,
    assignment_interval_ms: int | None = None,
    client_profile: str = "auto",
) -> Report:
    """Validate one trace file (``-``: standard input): ITF when :func:`is_itf`, else the
    NDJSON trace format in ``mode`` (``safety`` or ``conformance``). A file that cannot be
    read or is malformed gives a report with ``error`` set; a failure of the validator
    itself is raised, as any other exception."""
    shown = display_name(name)
    itf = is_itf(name, fmt)
    try:
        if itf:
            with opened(name) as f:
                data = f.read(MAX_ITF_BYTES + 1)
            if len(data) > MAX_ITF_BYTES:
                size = f"{MAX_ITF_BYTES // 2**20} MiB"
                error = f"{shown}: larger than {size}, the most an ITF document may be"
                return Report(shown, "itf", error=error)
            doc = parse_itf(shown, data)
            return doc if isinstance(doc, Report) else validate_itf(shown, doc)
        with trace_lines(name) as lines:
            if mode == "conformance":
                return _no_events(validate_conformance(shown, lines, reference=reference))
            if mode == "client":
                return _no_events(validate_client(shown, lines, client_profile))
            if mode == "coordinator":
                return validate_coordinator(
                    shown, lines, timing, epoch_layout, all_divergences, assignment_interval_ms
                )
            return _no_events(validate_safety(shown, lines, settle=settle, timing=timing))
    except OSError as e:
        return Report(shown, "itf" if itf else mode, error=f"{shown}: {e.strerror or e}")


NO_EVENTS = "the trace has no events after its header: nothing was checked"
"""Why a well-formed trace without events is inconclusive, not ok (issue 42)."""


def _no_events(report: Report) -> Report:
    """A trace with a header and no event is inconclusive: no verdict on nothing."""
    if report.error is None and report.events == 0 and not report.violations:
        report.reasons.append(NO_EVENTS)
    return report


def validate_file(name: str, mode: str, settle: int = 100, fmt: str = "auto") -> Report:
    """:func:`validate_path` that never raises, for validating many files (``groupcheck
    pipeline validate``): a validator that fails gives a report with ``internal_error``
    set (result ``internal-error``) — a fault of groupcheck, not a verdict on the file."""
    try:
        return validate_path(name, mode, settle, fmt)
    except Exception as e:
        return Report(display_name(name), mode, internal_error=one_line(e))
