"""What validating one trace file gives: its findings and its result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from groupcheck import exitcodes
from invariants.verdict import Result

MALFORMED = "malformed"
"""The result of a file that could not be read or is not a trace (exit status 2)."""
INTERNAL_ERROR = "internal-error"
"""The result of a file whose validator failed (``validate_file`` only; exit status 4)."""
RESULTS = (Result.OK.value, Result.VIOLATION.value, Result.INCONCLUSIVE.value, MALFORMED)
"""The results ``groupcheck validate`` reports, per file and overall."""


@dataclass(frozen=True)
class Finding:
    """A violation at a line of a trace file (a state index for ITF)."""

    file: str
    line: int
    property: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "property": self.property,
            "message": self.message,
        }


@dataclass
class Report:
    """The outcome for one file: events read, violations, why the check is incomplete
    (``reasons``), or the malformed input that stopped it (``error``, one
    ``FILE:LINE:COLUMN: reason`` line). ``internal_error`` is set only by
    ``validate_file``, for a validator that failed: that is no verdict on the file."""

    file: str
    mode: str
    events: int = 0
    violations: list[Finding] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    internal_error: str | None = None
    handovers: list[dict[str, Any]] = field(default_factory=list)
    """Safety mode: every hand-over of a partition its owner had not released, classified
    (``groupcheck.validate.timing``)."""
    zombie_windows: list[Finding] = field(default_factory=list)
    """Safety mode: ``Observed.ZombieWindow`` findings that are not violations."""
    windows: list[dict[str, Any]] = field(default_factory=list)
    """Safety mode: the quiet windows whose convergence was checked."""
    convergence: dict[str, Any] | None = None
    """Safety mode on a consumer or mixed trace: whether ``Observed.Convergence`` was
    checked (``checked``: in some quiet window, and not left unchecked at the end), in how
    many quiet windows (``windows_checked``), how many with members in the group were too
    short (``windows_unchecked``), and the ``settle``/``settle_ms`` asked for. None: the
    mode or protocol has no convergence check."""
    timing: dict[str, Any] | None = None
    """Safety mode: the timing the trace was validated with."""
    protocol: str | None = None
    """Safety mode: the trace's protocol (``consumer`` or ``classic``)."""

    @property
    def result(self) -> str:
        """``ok``, ``violation``, ``inconclusive`` (nothing violated, but not everything
        could be checked: ``reasons``), ``malformed``, or ``internal-error``."""
        if self.internal_error is not None:
            return INTERNAL_ERROR
        if self.error is not None:
            return MALFORMED
        if self.violations:
            return Result.VIOLATION.value
        return Result.INCONCLUSIVE.value if self.reasons else Result.OK.value

    @property
    def exit_code(self) -> int:
        """This file's exit status (``groupcheck.exitcodes``)."""
        result = self.result
        if result == INTERNAL_ERROR:
            return exitcodes.INTERNAL_ERROR
        if result == MALFORMED:
            return exitcodes.BAD_INPUT
        return exitcodes.exit_code(result)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "mode": self.mode,
            "result": self.result,
            "events": self.events,
            "violations": [v.to_json() for v in self.violations],
            "reasons": list(self.reasons),
            "notes": list(self.notes),
            "error": self.error,
            "timing": self.timing,
            "handovers": list(self.handovers),
            "zombie_windows": [z.to_json() for z in self.zombie_windows],
            "convergence_windows": list(self.windows),
            "convergence": self.convergence,
        }


def overall(reports: list[Report]) -> tuple[str, int]:
    """The result and exit status of several files: a violation anywhere first, then an
    internal error, malformed input, an inconclusive file; else ok."""
    code = exitcodes.worst(*(r.exit_code for r in reports))
    names = {
        exitcodes.VIOLATION: Result.VIOLATION.value,
        exitcodes.INTERNAL_ERROR: INTERNAL_ERROR,
        exitcodes.BAD_INPUT: MALFORMED,
        exitcodes.INCONCLUSIVE: Result.INCONCLUSIVE.value,
    }
    return names.get(code, Result.OK.value), code
