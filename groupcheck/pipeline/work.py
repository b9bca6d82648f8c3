"""The unit of work of a Spark task: one part of a plan, committed atomically.

A ``Job`` is pure data — the plan, the output directory and each part's range of items
(runs of a sweep, files of a corpus) — so Spark pickles it into every task, and the same
``execute_part`` runs in a plain loop, a process pool (``bench/bench_pipeline.py``) or an
executor. A part whose file is already there is not recomputed (a retried or speculative
task, or a rerun after a crash).
"""

from __future__ import annotations

import importlib
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import groupcheck
from groupcheck.pipeline.corpus import CorpusPlan, validate_range
from groupcheck.pipeline.grid import ExplorePlan
from groupcheck.pipeline.runs import rows_table, run_one
from groupcheck.pipeline.store import MANIFEST, part_path, write_parquet_atomic
from groupcheck.pipeline.timed_grid import TimedPlan
from groupcheck.pipeline.timed_runs import timed_table

if TYPE_CHECKING:
    import pyarrow as pa

MARK = "groupcheck-pipeline:"
"""Prefix of the messages tasks raise on purpose, so the driver can show them alone."""

DEFAULT_PARTS = 32
"""Parts a plan is split into by default. Each part is one Spark task with a fixed cost
(scheduling, a Python worker round trip, a result file), so a task should do about a
second of work or more; 32 parts keep two cores busy to the end, and a killed job loses
at most about 1/32 of its work per running task (docs/pipeline.md, "Benchmark")."""


@dataclass(frozen=True)
class Job:
    """A pipeline job: ``kind`` is ``explore``, ``validate`` or ``timed``."""

    kind: str
    out: str
    plan: ExplorePlan | CorpusPlan | TimedPlan
    parts: tuple[tuple[int, int], ...]

    @property
    def items(self) -> int:
        return self.plan.total


@dataclass(frozen=True)
class PartSummary:
    """What a task reports back to the driver (the rows themselves are in the part)."""

    part: int
    rows: int
    findings: int
    computed: bool
    seconds: float
    host: str
    code: str


def run_parts(total: int, part_size: int | None = None) -> list[tuple[int, int]]:
    """Contiguous ranges of runs: ``part_size`` runs each (default: about
    ``DEFAULT_PARTS`` parts, 1 to 500 runs each)."""
    size = part_size or min(max(-(-total // DEFAULT_PARTS), 1), 500)
    return [(start, min(start + size, total)) for start in range(0, total, size)]


def execute_table(job: Job, start: int, stop: int) -> pa.Table:
    """Compute the rows of items ``start`` … ``stop - 1``."""
    if isinstance(job.plan, ExplorePlan):
        return rows_table([run_one(job.plan, i) for i in range(start, stop)])
    if isinstance(job.plan, TimedPlan):
        return timed_table(job.plan, start, stop)

    return validate_range(job.plan, start, stop)


def findings(table: pa.Table) -> int:
    """Rows that are findings: a violation, an error, a malformed trace."""
    import pyarrow as pa  # noqa: PLC0415  pyarrow (the spark extra) only in a task
    import pyarrow.compute as pc  # noqa: PLC0415  pyarrow (the spark extra) only in a task

    if "rebalance_ms" in table.column_names:  # timed runs: a crash (unfinished is no finding)
        return int(pc.sum(pc.cast(pc.is_valid(table["error"]), "int64")).as_py() or 0)
    if "path_code" in table.column_names:  # runs
        bad = pc.or_(pc.is_valid(table["violation"]), pc.is_valid(table["error"]))
    else:  # traces: a violation or a malformed trace, in either spelling (pipeline/verdict.py)
        bad = pc.is_in(table["result"], pa.array(["violation", "violations", "malformed"]))
    return int(pc.sum(pc.cast(bad, "int64")).as_py() or 0)


def execute_part(job: Job, index: int) -> PartSummary:
    """Compute part ``index`` and commit it, unless it is already committed."""
    out = Path(job.out)
    path = part_path(out, index)
    host = socket.gethostname()
    code = str(Path(groupcheck.__file__).parent)
    if not (out / MANIFEST).exists():
        raise RuntimeError(
            f"{MARK} output directory {job.out} is not visible on executor host {host}; "
            "--out must be on a filesystem that the driver and every executor share"
        )
    if path.exists():
        import pyarrow.parquet as pq  # noqa: PLC0415  pyarrow (the spark extra) only in a task

        table = pq.read_table(path)
        return PartSummary(index, table.num_rows, findings(table), False, 0.0, host, code)
    began = time.perf_counter()
    start, stop = job.parts[index]
    table = execute_table(job, start, stop)
    write_parquet_atomic(path, table)
    return PartSummary(
        index, table.num_rows, findings(table), True, time.perf_counter() - began, host, code
    )


TASK_MODULES = (
    "pyarrow.parquet",
    "groupcheck.pipeline.runs",
    "groupcheck.pipeline.corpus",
    "groupcheck.explore.walk",
    "groupcheck.explore.hypothesis_engine",
    "groupcheck.explore.minimise",
    "groupcheck.validate",
    "invariants.liveness",
    "groupcheck.pipeline.timed_runs",
    "groupcheck.timed.scenarios",
)
"""What a task imports: loaded by ``warm_up`` before the first part."""


def warm_up(
    modules: tuple[str, ...], batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function of a session's warm-up: imports ``modules`` (normally
    ``TASK_MODULES``: the model, the engines, the validator) and yields, per input row,
    where it found ``groupcheck``. Run once per Python worker when the session starts, so
    worker start-up and imports are not charged to a job's first parts, and an executor
    that cannot import the project fails before any part is computed."""
    import pyarrow as pa  # noqa: PLC0415  pyarrow (the spark extra) only in a task

    for name in modules:
        importlib.import_module(name)
    code = str(Path(groupcheck.__file__).parent)
    for batch in batches:
        yield pa.RecordBatch.from_pydict({"code": pa.array([code] * batch.num_rows, pa.string())})


WARM_UP_DDL = "code string"
"""The Spark schema of the rows ``warm_up`` yields."""


SUMMARY_DDL = (
    "part int, rows long, findings long, computed boolean, seconds double, host string, code string"
)
"""The Spark schema of the rows ``map_parts`` yields (``PartSummary``)."""


def map_parts(
    job: Job, pending: tuple[int, ...], batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function: each input row is an id into ``pending``; each output
    row is the summary of that part."""
    import pyarrow as pa  # noqa: PLC0415  pyarrow (the spark extra) only in a task

    for batch in batches:
        summaries = [execute_part(job, pending[i]) for i in batch.column(0).to_pylist()]
        yield pa.RecordBatch.from_pydict(
            {
                "part": pa.array([s.part for s in summaries], pa.int32()),
                "rows": pa.array([s.rows for s in summaries], pa.int64()),
                "findings": pa.array([s.findings for s in summaries], pa.int64()),
                "computed": pa.array([s.computed for s in summaries], pa.bool_()),
                "seconds": pa.array([s.seconds for s in summaries], pa.float64()),
                "host": pa.array([s.host for s in summaries], pa.string()),
                "code": pa.array([s.code for s in summaries], pa.string()),
            }
        )
