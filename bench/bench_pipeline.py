"""The Spark pipeline against a plain loop and a process pool, on the same 10,000 runs.

One grid (TINY, swarm random walks of 40 steps, seeds 0..9,999) is split into the
pipeline's default parts (32 parts of about 313 runs); each part is computed and committed as a
Parquet file by ``groupcheck.pipeline.work.execute_part`` — the very function a Spark
task runs — in three ways, one after the other in this process:

- a plain Python loop over the parts;
- ``multiprocessing.Pool(2)`` mapping the parts (one part per task);
- the pipeline's Spark job in local mode (``local[*]``), timed from the moment the
  session is up. Session start-up is measured separately; it includes the session's
  warm-up, which starts Spark's Python workers and imports the project in them, as the
  pool's workers have it imported from their parent before they fork.

The three output directories must hold identical tables (checked). Goals: the Spark job
within 10 % of the pool's wall time, and at least 1.8× faster than the loop (2 cores).
The load average before and after is recorded: other processes on the machine make the
numbers noisy, and this benchmark does not filter them out.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import tempfile
import time
from pathlib import Path

from groupcheck.pipeline import store
from groupcheck.pipeline.grid import parse_grid
from groupcheck.pipeline.work import Job, execute_part, run_parts

GOAL_VS_POOL = 1.10
GOAL_VS_LOOP = 1.8
RUNS = 10_000
GRID = {"presets": ["TINY"], "engines": ["walk"], "seed": 0, "walk": {"max_steps": 40}}


def _job(out: Path, runs: int):  # type: ignore[no-untyped-def]

    plan = parse_grid(GRID, runs)
    parts = run_parts(plan.total)
    store.prepare(out, "explore", plan.to_json(), plan.fingerprint(), parts)
    return Job("explore", str(out), plan, tuple(parts))


_POOL_STATE: dict[str, object] = {}
"""The job each pool worker process runs (set once per process by ``_pool_init``)."""


def _pool_init(job) -> None:  # type: ignore[no-untyped-def]
    _POOL_STATE["job"] = job


def _pool_part(index: int) -> int:
    return execute_part(_POOL_STATE["job"], index).rows  # type: ignore[arg-type]


def run(runs: int = RUNS) -> dict[str, object]:
    import pyarrow.parquet as pq  # noqa: PLC0415  the spark extra, only for the run that reads parquet

    from groupcheck.pipeline.spark import run_job, session  # noqa: PLC0415  pyspark (the spark extra) only when this benchmark runs

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as tmp:
        root = Path(tmp)

        job = _job(root / "loop", runs)
        start = time.perf_counter()
        for i in range(len(job.parts)):
            execute_part(job, i)
        loop = time.perf_counter() - start

        job = _job(root / "pool", runs)
        start = time.perf_counter()
        with multiprocessing.Pool(2, initializer=_pool_init, initargs=(job,)) as pool:
            rows = sum(pool.map(_pool_part, range(len(job.parts)), chunksize=1))
        pooled = time.perf_counter() - start
        assert rows == runs

        job = _job(root / "spark", runs)
        start = time.perf_counter()
        with session() as spark:
            started = time.perf_counter() - start
            start = time.perf_counter()
            summaries = run_job(spark, job, list(range(len(job.parts))))
            sparked = time.perf_counter() - start
        assert sum(s.rows for s in summaries) == runs

        tables = [pq.read_table(root / name / "parts") for name in ("loop", "pool", "spark")]
        identical = tables[0].equals(tables[1]) and tables[0].equals(tables[2])
        violations = tables[0]["violation"].drop_null().to_pylist()
    load_after = os.getloadavg()
    vs_pool = sparked / pooled
    vs_loop = loop / sparked
    return {
        "benchmark": "pipeline",
        "runs": runs,
        "parts": len(job.parts),
        "grid": GRID,
        "cpus": os.cpu_count(),
        "loop_seconds": round(loop, 2),
        "pool2_seconds": round(pooled, 2),
        "spark_session_start_seconds": round(started, 2),
        "spark_job_seconds": round(sparked, 2),
        "spark_job_over_pool": round(vs_pool, 3),
        "speedup_over_loop": round(vs_loop, 2),
        "runs_per_hour_spark_job": round(runs / sparked * 3600),
        "runs_per_hour_with_session_start": round(runs / (sparked + started) * 3600),
        "results_identical": identical,
        "runs_with_violation": len(violations),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "goal": f"spark job <= {GOAL_VS_POOL} x pool and >= {GOAL_VS_LOOP} x faster than loop",
        "meets_goal": identical and vs_pool <= GOAL_VS_POOL and vs_loop >= GOAL_VS_LOOP,
    }


if __name__ == "__main__":
    import sys

    # An optional argument runs fewer runs (a quick check that the benchmark works).
    print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS), indent=2))
