"""The plan of a trace-corpus validation and one trace's verdict.

The corpus is the sorted list of files the ``--traces`` globs match (expanded on the
driver). Each file is validated on its own, exactly as ``groupcheck validate`` does
(``groupcheck.validate``: safety or conformance mode; ITF for ``*.itf.json``); a file that
cannot be read (missing, a directory, not UTF-8) or is malformed is reported for that
file — the others are still validated. Files are read where the task runs, so in cluster
mode the corpus must be on a filesystem every executor sees (docs/pipeline.md). A trace's
``result`` is ``ok | violation | inconclusive | malformed`` (``pipeline/verdict.py``).
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from groupcheck.pipeline.errors import PipelineError
from groupcheck.pipeline.verdict import trace_verdict
from groupcheck.validate import validate_file

if TYPE_CHECKING:
    import pyarrow as pa

FORMATS = ("auto", "ndjson", "itf")


@dataclass(frozen=True)
class CorpusPlan:
    """The files of a corpus (absolute, sorted), their sizes and how to validate them."""

    files: tuple[str, ...]
    sizes: tuple[int, ...]
    mtimes: tuple[int, ...]
    mode: str
    settle: int
    format: str

    @property
    def total(self) -> int:
        return len(self.files)

    def to_json(self) -> dict[str, Any]:
        return {
            "files": len(self.files),
            "bytes": sum(s for s in self.sizes if s > 0),
            "mode": self.mode,
            "settle": self.settle,
            "format": self.format,
        }

    def fingerprint(self) -> str:
        """A digest of the corpus (names, sizes, modification times) and the options."""
        doc = {
            "files": self.files,
            "sizes": self.sizes,
            "mtimes": self.mtimes,
            "mode": self.mode,
            "settle": self.settle,
            "format": self.format,
        }
        text = json.dumps(doc, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def plan_corpus(
    patterns: Sequence[str], mode: str = "safety", settle: int = 100, fmt: str = "auto"
) -> CorpusPlan:
    """Expand ``patterns`` (``**`` recurses) into a corpus plan."""
    if mode not in ("safety", "conformance"):
        raise PipelineError(f"--mode: expected safety or conformance, got {mode!r}")
    if fmt not in FORMATS:
        raise PipelineError(f"--format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    found: set[str] = set()
    for pattern in patterns:
        matches = glob.glob(os.path.expanduser(pattern), recursive=True)
        if not matches:
            raise PipelineError(f"--traces {pattern!r}: matches no file")
        found.update(os.path.abspath(m) for m in matches)
    files = tuple(sorted(found))
    sizes: list[int] = []
    mtimes: list[int] = []
    for name in files:
        try:
            st = os.stat(name)
            sizes.append(st.st_size)
            mtimes.append(st.st_mtime_ns)
        except OSError:  # reported per trace when it is validated
            sizes.append(-1)
            mtimes.append(-1)
    return CorpusPlan(files, tuple(sizes), tuple(mtimes), mode, settle, fmt)


def byte_parts(sizes: Sequence[int], parts_hint: int = 64) -> list[tuple[int, int]]:
    """Split files into contiguous parts of about equal bytes: about ``parts_hint`` parts,
    each at least 64 KiB (but at least one file) and at most 64 MiB or 256 files. The
    split depends on the corpus only, so a rerun on another cluster finds the same parts."""
    total = sum(max(s, 0) for s in sizes)
    target = min(max(total // max(parts_hint, 1), 64 * 1024), 64 * 1024 * 1024)
    out: list[tuple[int, int]] = []
    start, acc = 0, 0
    for i, size in enumerate(sizes):
        acc += max(size, 1)
        if acc >= target or i + 1 - start >= 256:
            out.append((start, i + 1))
            start, acc = i + 1, 0
    if start < len(sizes):
        out.append((start, len(sizes)))
    return out


def trace_schema() -> pa.Schema:
    import pyarrow as pa  # noqa: PLC0415  pyarrow (the spark extra) only in a task

    finding = pa.struct([("line", pa.int64()), ("property", pa.string()), ("message", pa.string())])
    return pa.schema(
        [
            ("index", pa.int64()),
            ("trace", pa.string()),
            ("bytes", pa.int64()),
            ("mode", pa.string()),
            ("result", pa.string()),
            ("events", pa.int64()),
            ("violations", pa.list_(finding)),
            ("error", pa.string()),
            ("notes", pa.list_(pa.string())),
        ]
    )


def validate_range(plan: CorpusPlan, start: int, stop: int) -> pa.Table:
    """Validate files ``start`` … ``stop - 1`` of the corpus into a table of verdicts."""
    import pyarrow as pa  # noqa: PLC0415  pyarrow (the spark extra) only in a task

    rows: dict[str, list[Any]] = {name: [] for name in trace_schema().names}
    for i in range(start, stop):
        name = plan.files[i]
        report = validate_file(name, plan.mode, plan.settle, plan.format)
        rows["index"].append(i)
        rows["trace"].append(name)
        rows["bytes"].append(plan.sizes[i] if plan.sizes[i] >= 0 else None)
        rows["mode"].append(report.mode)
        rows["result"].append(trace_verdict(report.result, report.notes))
        rows["events"].append(report.events)
        rows["violations"].append(
            [
                {"line": v.line, "property": v.property, "message": v.message}
                for v in report.violations
            ]
        )
        rows["error"].append(report.error)
        # Why a trace is inconclusive comes first among its notes.
        rows["notes"].append([*getattr(report, "reasons", []), *report.notes])
    return pa.table(rows, schema=trace_schema())
