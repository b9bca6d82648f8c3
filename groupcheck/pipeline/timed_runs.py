"""One seeded run of a timed sweep (``groupcheck.pipeline.timed_grid``) and its row.

A run is one timed simulation (``groupcheck.timed.scenarios``) of a cell with one seed:

- ``scale-up``: ``rebalance_ms``, from the last join to a converged group (null when it
  did not converge within the scenario's horizon: ``unfinished``), the assignor runs of
  the whole run and its heartbeat latencies;
- ``churn``: over the window, heartbeats and assignor runs per second, the coordinator
  thread's and the executor's utilisation, heartbeat latency (mean, p99, max), and with
  ``groups`` > 1 groups on the coordinator the offloaded runs' wait for an executor thread.

A group that did not form, or a rebalance that did not converge, is ``unfinished`` with
its ``note``; an exception of the model is ``error``. Everything is a function of (cell,
seed): simulated time only, so a rerun anywhere gives the same row.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from groupcheck import exitcodes
from groupcheck.timed.engine import Timing
from groupcheck.timed.scenarios import Kip1263, churn, scale_up
from model.status import ConfigError

if TYPE_CHECKING:
    import pyarrow as pa

    from groupcheck.pipeline.timed_grid import TimedCell, TimedPlan


@dataclass
class TimedRow:
    """The result row of one timed run (see the module docstring)."""

    run: int
    cell: int
    config: str
    scenario: str
    members: int
    assignment_interval_ms: int
    assignor_offload: bool
    heartbeat_interval_ms: int
    assignor_ms: float
    executor_threads: int
    groups: int
    seed: int
    unfinished: bool = False
    rebalance_ms: float | None = None
    assignor_runs: int = 0
    heartbeats_per_second: float | None = None
    assignor_runs_per_second: float | None = None
    coordinator_utilisation: float | None = None
    executor_utilisation: float | None = None
    latency_mean_ms: float | None = None
    latency_p99_ms: float | None = None
    latency_max_ms: float | None = None
    assignor_wait_mean_ms: float | None = None
    assignor_wait_p99_ms: float | None = None
    note: str | None = None
    error: str | None = None


def timed_schema() -> pa.Schema:
    """The Arrow schema of timed rows."""
    import pyarrow as pa  # noqa: PLC0415  pyarrow (the spark extra) only in a task

    types = {
        "run": pa.int64(),
        "cell": pa.int32(),
        "config": pa.string(),
        "scenario": pa.string(),
        "members": pa.int32(),
        "assignment_interval_ms": pa.int64(),
        "assignor_offload": pa.bool_(),
        "heartbeat_interval_ms": pa.int64(),
        "assignor_ms": pa.float64(),
        "executor_threads": pa.int32(),
        "groups": pa.int32(),
        "seed": pa.int64(),
        "unfinished": pa.bool_(),
        "assignor_runs": pa.int64(),
        "note": pa.string(),
        "error": pa.string(),
    }
    return pa.schema([(f.name, types.get(f.name, pa.float64())) for f in fields(TimedRow)])


def timed_one(cell: TimedCell, seed: int, run: int = 0) -> TimedRow:
    """The timed simulation of ``cell`` with ``seed`` (run ``run`` of its plan)."""
    row = TimedRow(
        run=run,
        cell=cell.index,
        config=cell.label,
        scenario=cell.scenario,
        members=cell.members,
        assignment_interval_ms=cell.assignment_interval_ms,
        assignor_offload=cell.assignor_offload,
        heartbeat_interval_ms=cell.heartbeat_interval_ms,
        assignor_ms=cell.assignor_ms,
        executor_threads=cell.executor_threads,
        groups=cell.groups,
        seed=seed,
    )
    try:
        _simulate(cell, seed, row)
    except ConfigError as e:  # the group did not form: measured nothing
        row.unfinished, row.note = True, str(e)
    except Exception as e:  # a model crash is a finding about that run, not a job failure
        row.error = f"{type(e).__name__}: {e}"
    return row


def _simulate(cell: TimedCell, seed: int, row: TimedRow) -> None:
    timing = Timing(cell.network_ms, cell.request_ms, cell.assignor_ms, cell.executor_threads)
    kip1263 = Kip1263(cell.assignment_interval_ms, cell.assignor_offload)
    if cell.scenario == "scale-up":
        one = scale_up(
            members=cell.members,
            kip1263=kip1263,
            seed=seed,
            timing=timing,
            partitions_per_member=cell.partitions_per_member,
            heartbeat_interval_ms=cell.heartbeat_interval_ms,
            join_gap_ms=cell.join_gap_ms,
        )
        m = one.run.measures
        row.rebalance_ms = one.rebalance_ms
        row.assignor_runs = m.assignor_runs
        latencies = sorted(m.heartbeat_latencies_ms)
        if latencies:
            row.latency_mean_ms = statistics.fmean(latencies)
            row.latency_p99_ms = latencies[int(0.99 * (len(latencies) - 1))]
            row.latency_max_ms = latencies[-1]
        if one.rebalance_ms is None:
            row.unfinished = True
            row.note = "the rebalance did not converge within the scenario's horizon"
        return
    load = churn(
        members=cell.members,
        kip1263=kip1263,
        seed=seed,
        timing=timing,
        heartbeat_interval_ms=cell.heartbeat_interval_ms,
        window_ms=cell.window_ms,
        groups=cell.groups,
    )
    row.assignor_runs = round(load.assignor_runs_per_second * load.window_ms / 1000)
    row.heartbeats_per_second = load.heartbeats_per_second
    row.assignor_runs_per_second = load.assignor_runs_per_second
    row.coordinator_utilisation = load.coordinator_utilisation
    row.executor_utilisation = load.executor_utilisation
    row.latency_mean_ms = load.latency_mean_ms
    row.latency_p99_ms = load.latency_p99_ms
    row.latency_max_ms = load.latency_max_ms
    row.assignor_wait_mean_ms = load.assignor_wait_mean_ms
    row.assignor_wait_p99_ms = load.assignor_wait_p99_ms


def timed_table(plan: TimedPlan, start: int, stop: int) -> pa.Table:
    """The rows of runs ``start`` … ``stop - 1`` of ``plan``."""
    import pyarrow as pa  # noqa: PLC0415  pyarrow (the spark extra) only in a task

    rows = []
    for i in range(start, stop):
        cell, seed = plan.run(i)
        rows.append(timed_one(cell, seed, i))
    schema = timed_schema()
    return pa.table({n: [getattr(r, n) for r in rows] for n in schema.names}, schema=schema)


def timed_verdict(table: pa.Table) -> dict[str, Any]:
    """The result of a timed sweep: inconclusive when a run is unfinished or raised an
    error (the first of each is named), else ok. A timed sweep measures; it checks no
    property, so it has no violation."""
    import pyarrow.compute as pc  # noqa: PLC0415  pyarrow (the spark extra) only in a task

    errored = table.filter(pc.is_valid(table["error"]))
    unfinished = table.filter(pc.fill_null(table["unfinished"], False))
    reasons = []
    if errored.num_rows:
        first = errored.slice(0, 1).to_pylist()[0]
        reasons.append(
            f"{errored.num_rows} runs raised an error (an internal error); the first: "
            f"{first['config']} seed {first['seed']}: {first['error']}"
        )
    if unfinished.num_rows:
        first = unfinished.slice(0, 1).to_pylist()[0]
        reasons.append(
            f"{unfinished.num_rows} runs are unfinished (not measured); the first: "
            f"{first['config']} seed {first['seed']}: {first['note']}"
        )
    return {
        "result": "inconclusive" if reasons else "ok",
        "reasons": reasons,
        "runs": table.num_rows,
        "unfinished": unfinished.num_rows,
        "errors": errored.num_rows,
    }


def timed_exit(summary: dict[str, Any]) -> int:
    """An error 4; else unfinished runs 3 (inconclusive); else 0."""
    if summary["errors"]:
        return exitcodes.INTERNAL_ERROR
    return exitcodes.INCONCLUSIVE if summary["unfinished"] else exitcodes.OK
