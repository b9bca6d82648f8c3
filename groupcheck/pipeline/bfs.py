"""Level-synchronous exhaustive BFS on Spark (``groupcheck pipeline bfs``).

Each level is a directory ``OUT/levels/NNNNN/`` holding two Parquet datasets: ``frontier``
(the level's states, pickled, with fingerprint and discovery key) and ``visited`` (each
state's fingerprint, its parent's and the action index: the parent pointers), plus
``level.json`` (counts and the level's violations). ``visited`` is written in Spark's
bucketed layout: B buckets by fingerprint (``plan.json``'s ``buckets``; a bucket's rows in
files named ``..._BBBBB.c000.snappy.parquet``, bucket = ``pmod(hash(fp), B)``, Spark's
Murmur3 hash partitioning). A level is computed under ``OUT/levels/.NNNNN.tmp`` and renamed
into place whole, so a killed job leaves complete levels and at most one temporary
directory, which the rerun replaces: rerunning the same command resumes at the last
complete level. ``OUT/plan.json`` records what is searched; a rerun with another config is
refused.

One level on Spark is one job of two stages (``_spark_level``, RDDs): ``slots`` tasks
each expand an even run of the frontier's rows, read from its Parquet files
(``bfs_tasks.expand_slices``: convergence and step checks, successors with their keys,
the least key per fingerprint within the task), each successor keyed by its bucket
(``bfs_tasks.bucket_of``); after the shuffle into the B buckets, task k keeps each
fingerprint's least key (the serial engine's first discovery), drops the fingerprints of
bucket k of every committed level's ``visited`` (read from the bucket files, remembered by
the Python worker: committed levels never change), checks the new states' state
properties, and writes bucket k of the level's ``frontier`` and ``visited`` itself
(``bfs_tasks.new_states``; through a hidden name and a rename, so a re-executed task
replaces its file with the same rows). Only the side rows (violations, counts, witnesses)
reach the driver; they travel through the shuffle like the successors, so a map task
Spark recomputes (a lost executor) counts once. The least violation of a level in the
serial engine's order is the serial engine's counterexample (``groupcheck.explore.pbfs``);
its path is rebuilt from the parent pointers, replayed by action index, minimised and
written like any other run's (``reports.artifacts``) under ``OUT``. ``VisitedTable``
reads the committed levels as one bucketed table (for readers and the layout's test; the
search itself does not use it).

A level whose frontier holds fewer than ``driver_states`` states is computed on the driver
by the same task functions over the whole frontier (``_driver_level``), against the
visited fingerprints it holds in memory, and written in the same layout
(``_write_driver_level``): no Spark job, so small levels cost milliseconds.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession

from groupcheck.pipeline import bfs_tasks
from groupcheck.pipeline.errors import PipelineError
from invariants.liveness import required_witnesses, undecided_reason
from invariants.verdict import conclude
from model import system
from model.actions import Action
from model.config import Config
from model.path import Path as ModelPath
from model.settings import config_to_mapping

Progress = Callable[[str], None]


@dataclass
class SparkBfsResult:
    """What a Spark BFS found: ``result`` ok / violation / inconclusive."""

    result: str
    distinct_states: int
    steps: int
    depth: int
    levels_resumed: int
    seconds: float
    property: str | None = None
    message: str | None = None
    path: ModelPath | None = None
    reasons: list[str] | None = None
    level_seconds: list[float] | None = None
    witnesses: list[str] | None = None
    missed_witnesses: list[str] | None = None


def _level_dir(out: Path, depth: int) -> Path:
    return out / "levels" / f"{depth:05d}"


def _plan(config: Config, mutant: str | None, check_convergence: bool) -> dict[str, Any]:
    return {
        "kind": "bfs",
        "config": config_to_mapping(config),
        "mutant": mutant,
        "check_convergence": check_convergence,
    }


def prepare_out(out: Path, plan: dict[str, Any], buckets: int | None, default: int) -> int:
    """Create ``out`` for this search, or check that it holds this search's levels; the
    number of buckets of ``visited``: the stored one when resuming (``buckets`` None or
    equal to it), else ``buckets`` or ``default``."""
    plan_file = out / "plan.json"
    if out.exists() and any(out.iterdir()):
        if not plan_file.exists():
            raise PipelineError(f"--out {out}: not empty and not a pipeline bfs directory")
        stored = json.loads(plan_file.read_text(encoding="utf-8"))
        layout = stored.pop("buckets", None)
        if stored != plan:
            raise PipelineError(
                f"--out {out}: holds a search of another config; choose another directory"
            )
        if not isinstance(layout, int) or layout < 1:
            raise PipelineError(
                f"--out {out}: its visited sets are not bucketed (written by an earlier "
                "version); choose another directory"
            )
        if buckets is not None and buckets != layout:
            raise PipelineError(
                f"--buckets {buckets}: {out} holds a search with {layout} buckets; "
                f"leave out --buckets or pass {layout}"
            )
        return layout
    chosen = buckets or default
    (out / "levels").mkdir(parents=True, exist_ok=True)
    tmp = out / ".plan.json.tmp"
    doc = {**plan, "buckets": chosen}
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, plan_file)
    return chosen


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


class VisitedTable:
    """Every committed level's ``visited`` as the partitions of one bucketed external
    table of the session's catalog (partition ``level``, B buckets on ``fp``). The table
    holds no data of its own: each partition's location is a level's ``visited``
    directory, so dropping the table leaves the files."""

    def __init__(self, spark: SparkSession, out: Path, buckets: int) -> None:
        self.spark = spark
        self.out = out.resolve()
        self.buckets = buckets
        self.name = f"groupcheck_visited_{uuid.uuid4().hex}"
        self.levels: set[int] = set()
        spark.sql(
            f"CREATE TABLE {self.name} (fp BIGINT, parent BIGINT, action INT, level INT) "
            f"USING parquet PARTITIONED BY (level) CLUSTERED BY (fp) INTO {buckets} BUCKETS "
            f"LOCATION {_sql_string(str(self.out / 'levels'))}"
        )

    def add(self, depth: int) -> None:
        """Make committed level ``depth`` part of the table."""
        if depth in self.levels:
            return
        where = _sql_string(str(_level_dir(self.out, depth) / "visited"))
        self.spark.sql(
            f"ALTER TABLE {self.name} ADD IF NOT EXISTS PARTITION (level={depth}) LOCATION {where}"
        )
        self.levels.add(depth)

    def anti_join(self, candidates: DataFrame) -> DataFrame:
        """The rows of ``candidates`` whose ``fp`` no level added so far holds."""
        return candidates.join(self.spark.table(self.name).select("fp"), "fp", "left_anti")

    def drop(self) -> None:
        self.spark.sql(f"DROP TABLE IF EXISTS {self.name}")


def _commit(spark_tmp: Path, final: Path) -> None:
    os.rename(spark_tmp, final)


DRIVER_STATES = 2_000
"""Default of ``driver_states``: a level whose frontier holds fewer states is computed on
the driver, in plain Python (the same task functions), without a Spark job."""

DRIVER_VISITED = 1_000_000
"""The driver computes a level only while the search has visited at most this many states
(it holds their fingerprints in memory)."""


def _write_level_json(tmp: Path, side: _Side) -> None:
    meta = {
        "states": side.states,
        "steps": side.steps,
        "witnesses": sorted(side.witnesses),
        "undecided": side.undecided,
    }
    (tmp / "level.json").write_text(
        json.dumps({**meta, "events": side.events}, indent=1) + "\n", encoding="utf-8"
    )


@dataclass
class _Side:
    """What the tasks of a level report beside the states: violations, transitions taken,
    new states, witnesses seen, and the states whose fair schedule the bound cut without
    showing non-convergence with the largest bound in force (``[n, bound]``,
    ``bfs_tasks.UNDECIDED`` rows)."""

    events: list[dict[str, Any]]
    steps: int
    states: int
    witnesses: set[str]
    undecided: list[int] = field(default_factory=lambda: [0, 0])

    @classmethod
    def of(cls, rows: list[dict[str, Any]]) -> _Side:
        side = cls([], 0, 0, set())
        for r in rows:
            prop = r["property"]
            if prop is None:
                continue
            if prop == bfs_tasks.STEPS:
                side.steps += int(r["action"])
            elif prop == bfs_tasks.STATES:
                side.states += int(r["action"])
            elif prop == bfs_tasks.WITNESSES:
                side.witnesses.update(w for w in (r["message"] or "").split(",") if w)
            elif prop == bfs_tasks.UNDECIDED:
                side.undecided = [
                    side.undecided[0] + int(r["action"]),
                    max(side.undecided[1], int(r["message"])),
                ]
            elif not prop.startswith("#"):
                side.events.append(
                    {
                        "fp": r["fp"],
                        "action": r["action"],
                        "property": prop,
                        "message": r["message"],
                        "order": bytes(r["order"]).hex(),
                    }
                )
        return side


def _write_driver_level(tmp: Path, states: list[dict[str, Any]], buckets: int) -> None:
    """A level computed on the driver, in the layout Spark writes: one ``frontier`` file,
    ``visited`` a file per bucket named as Spark's bucketed writes name them
    (``..._BBBBB.c000.snappy.parquet``, bucket ``pmod(hash(fp), B)``)."""
    job = uuid.uuid4()
    table = pa.Table.from_pylist(states, schema=bfs_tasks.SCHEMA)
    (tmp / "frontier").mkdir(parents=True)
    pq.write_table(
        table.select(["fp", "key", "state"]),
        str(tmp / "frontier" / f"part-00000-{job}-c000.snappy.parquet"),
        compression="snappy",
    )
    (tmp / "frontier" / "_SUCCESS").touch()
    (tmp / "visited").mkdir()
    by_bucket: dict[int, list[int]] = {}
    for i, row in enumerate(states):
        by_bucket.setdefault(bfs_tasks.bucket_of(row["fp"], buckets), []).append(i)
    pointers = table.select(["fp", "parent", "action"])
    for b in sorted(by_bucket):
        pq.write_table(
            pointers.take(by_bucket[b]),
            str(tmp / "visited" / f"part-00000-{job}_{b:05d}.c000.snappy.parquet"),
            compression="snappy",
        )
    (tmp / "visited" / "_SUCCESS").touch()


class DriverVisited:
    """The fingerprints of committed levels in the driver's memory, read once per level
    (from its ``visited``) or added when the driver writes the level."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.fps: set[int] = set()
        self.levels: set[int] = set()

    def through(self, depth: int) -> set[int]:
        for d in range(depth + 1):
            if d not in self.levels:
                table = pq.read_table(str(_level_dir(self.out, d) / "visited"), columns=["fp"])
                self.fps.update(table["fp"].to_pylist())
                self.levels.add(d)
        return self.fps

    def add(self, depth: int, fps: list[int]) -> None:
        self.fps.update(fps)
        self.levels.add(depth)


def _rows_of(batches: Any) -> list[dict[str, Any]]:
    return [row for batch in batches for row in batch.to_pylist()]


def _driver_level(
    blob: bytes,
    check_convergence: bool,
    deeper: bool,
    frontier_dir: Path | None,
    known: set[int],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One level in plain Python on the driver with the tasks' own functions: the whole
    frontier as one task's input, so ``expand`` keeps the least key of each successor over
    the level and ``check`` reports the level's least violating state (what Spark's
    grouping and the driver's minimum over tasks compute). The new states and the side
    rows. ``frontier_dir`` None: level 0 (the initial state)."""
    side: list[dict[str, Any]] = []
    if frontier_dir is None:
        candidates = _rows_of(bfs_tasks.initial(blob, check_convergence, iter(())))
    else:
        frontier = pq.read_table(str(frontier_dir), columns=["fp", "key", "state"])
        expanded = _rows_of(
            bfs_tasks.expand(blob, check_convergence, deeper, iter(frontier.to_batches()))
        )
        candidates = []
        for row in expanded:
            if row["property"] is not None:
                side.append(row)
            elif row["fp"] not in known:
                candidates.append(row)
    batch = _arrow_batch(candidates)
    checked = _rows_of(bfs_tasks.check(blob, check_convergence, iter([batch])))
    states = [r for r in checked if r["property"] is None]
    side.extend(r for r in checked if r["property"] is not None)
    return states, side


def _arrow_batch(rows: list[dict[str, Any]]) -> Any:
    return pa.RecordBatch.from_pylist(rows, schema=bfs_tasks.SCHEMA)


def spark_bfs(
    spark: SparkSession,
    config: Config,
    out: Path,
    *,
    mutant: str | None = None,
    check_convergence: bool = True,
    max_depth: int | None = None,
    partitions: int | None = None,
    buckets: int | None = None,
    progress: Progress | None = None,
    stop_after: int | None = None,
    driver_states: int = DRIVER_STATES,
) -> SparkBfsResult:
    """Search ``config`` exhaustively on Spark, committing each level under ``out``;
    ``stop_after`` ends the run after that level is committed (as a kill would: the
    result is inconclusive and a rerun resumes). ``buckets``: of the visited set, fixed
    when ``out`` is created (default: ``partitions``), also the reduce tasks of a level;
    ``partitions`` the expanding tasks. A level whose frontier
    holds fewer than ``driver_states`` states (0: none) is computed on the driver while at
    most ``DRIVER_VISITED`` states are visited; the level it writes is the one Spark
    would."""
    start = time.perf_counter()
    slots = partitions or max(2, spark.sparkContext.defaultParallelism)
    layout = prepare_out(out, _plan(config, mutant, check_convergence), buckets, slots)
    return _search(
        spark,
        config,
        out,
        layout,
        check_convergence=check_convergence,
        max_depth=max_depth,
        slots=slots,
        progress=progress,
        stop_after=stop_after,
        start=start,
        driver_states=driver_states,
    )


def _search(
    spark: SparkSession,
    config: Config,
    out: Path,
    layout: int,
    *,
    check_convergence: bool,
    max_depth: int | None,
    slots: int,
    progress: Progress | None,
    stop_after: int | None,
    start: float,
    driver_states: int,
) -> SparkBfsResult:
    blob = pickle.dumps(config, protocol=pickle.HIGHEST_PROTOCOL)
    run = uuid.uuid4().hex  # names this run's cache of visited files in the Python workers
    levels = out / "levels"
    for leftover in levels.glob(".*.tmp"):
        shutil.rmtree(leftover)  # a level a killed run of this search did not finish
    resumed = 0
    level_seconds: list[float] = []
    on_driver = DriverVisited(out)
    if not _level_dir(out, 0).exists():
        tick = time.perf_counter()
        tmp = levels / ".00000.tmp"
        if driver_states > 0:
            states, rows = _driver_level(blob, check_convergence, True, None, set())
            side = _Side.of(rows)
            _write_driver_level(tmp, states, layout)
        else:
            side = _spark_level(
                spark, blob, check_convergence, True, out, None, tmp, slots, layout, -1, run
            )
        _write_level_json(tmp, side)
        _commit(tmp, _level_dir(out, 0))
        level_seconds.append(time.perf_counter() - tick)
    depth = 0
    distinct = 0
    steps = 0
    seen: set[str] = set()
    required = required_witnesses(config)

    undecided = [0, 0]  # states whose fair schedule the bound cut, the largest bound

    def finished(result_depth: int, total_steps: int) -> SparkBfsResult:
        missed = sorted(required - seen)
        result, reasons = conclude(
            violated=False,
            complete=True,
            missed_witnesses=missed,
            unchecked=undecided_reason(*undecided),
        )
        return SparkBfsResult(
            result.value,
            distinct,
            total_steps,
            result_depth,
            resumed,
            time.perf_counter() - start,
            reasons=reasons,
            level_seconds=level_seconds,
            witnesses=sorted(seen),
            missed_witnesses=missed,
        )

    while True:
        here = _level_dir(out, depth)
        meta = json.loads((here / "level.json").read_text(encoding="utf-8"))
        distinct += meta["states"]
        steps += meta["steps"]
        seen.update(meta["witnesses"])
        cut, bound = meta.get("undecided", [0, 0])  # a level written before: none
        undecided[0] += cut
        undecided[1] = max(undecided[1], bound)
        if meta["events"]:
            first = min(meta["events"], key=lambda e: bytes.fromhex(e["order"]))
            at_state = bytes.fromhex(first["order"])[-1] == 1  # a state property
            path = _rebuild(out, config, first, depth, at_state)
            return SparkBfsResult(
                result="violation",
                distinct_states=distinct,
                steps=steps,
                depth=depth,
                levels_resumed=resumed,
                seconds=time.perf_counter() - start,
                property=first["property"],
                message=first["message"],
                path=path,
                reasons=[],
                level_seconds=level_seconds,
            )
        if meta["states"] == 0:
            return finished(depth - 1, steps)
        if progress:
            progress(f"bfs on Spark: level {depth}, {meta['states']} states, {distinct} in all")
        nxt = _level_dir(out, depth + 1)
        if nxt.exists():
            resumed += 1
            depth += 1
            continue
        if stop_after is not None and depth >= stop_after:
            return SparkBfsResult(
                "inconclusive",
                distinct,
                steps,
                depth,
                resumed,
                time.perf_counter() - start,
                reasons=[f"stopped after level {depth} (rerun to resume)"],
                level_seconds=level_seconds,
            )
        deeper = max_depth is None or depth < max_depth
        tick = time.perf_counter()
        tmp = levels / f".{depth + 1:05d}.tmp"
        if meta["states"] < driver_states and distinct <= DRIVER_VISITED:
            known = on_driver.through(depth)
            states, rows = _driver_level(blob, check_convergence, deeper, here / "frontier", known)
            side = _Side.of(rows)
            _write_driver_level(tmp, states, layout)
            on_driver.add(depth + 1, [r["fp"] for r in states])
        else:
            if distinct > DRIVER_VISITED:
                on_driver = DriverVisited(out)  # never needed again: free the fingerprints
            side = _spark_level(
                spark, blob, check_convergence, deeper, out, here, tmp, slots, layout, depth, run
            )
        _write_level_json(tmp, side)
        _commit(tmp, nxt)
        level_seconds.append(time.perf_counter() - tick)
        if not deeper and not side.events:
            # Depth bound reached: the states beyond it were not expanded.
            seen.update(side.witnesses)
            return finished(depth, steps + side.steps)
        depth += 1


def _frontier_files(frontier: Path) -> list[tuple[str, int]]:
    """A committed level's ``frontier`` files (hidden and ``_`` names skipped, as Spark
    skips them) with their row counts, from the Parquet footers."""
    names = sorted(
        p for p in frontier.iterdir() if p.suffix == ".parquet" and p.name[0] not in "._"
    )
    return [(str(p), pq.ParquetFile(p).metadata.num_rows) for p in names]


def _spark_level(
    spark: SparkSession,
    blob: bytes,
    check_convergence: bool,
    deeper: bool,
    out: Path,
    here: Path | None,
    tmp: Path,
    slots: int,
    buckets: int,
    depth: int,
    run: str,
) -> _Side:
    """Level ``depth + 1`` on Spark in one job of two stages (``here`` None: level 0, the
    initial state). Stage 1: ``slots`` tasks each expand an even run of the frontier's rows
    (``bfs_tasks.expand_slices``), keyed by bucket. Stage 2, after a shuffle into the B
    buckets: task k keeps each candidate's least key, drops the fingerprints of bucket k
    of every committed level's ``visited``, checks the new states and writes bucket k of
    the level's ``frontier`` and ``visited`` (``bfs_tasks.new_states``); only the side
    rows reach the driver."""
    plans: list[list[bfs_tasks.Slice] | None]
    if here is None:
        plans = [None]
    else:
        plans = list(bfs_tasks.frontier_slices(_frontier_files(here / "frontier"), slots))
    for part in ("frontier", "visited"):
        (tmp / part).mkdir(parents=True)
    visited_dirs = [str((_level_dir(out, d) / "visited").resolve()) for d in range(depth + 1)]
    job = str(uuid.uuid4())
    sc = spark.sparkContext
    rows = (
        sc.parallelize(plans, len(plans))
        .mapPartitionsWithIndex(
            functools.partial(bfs_tasks.expand_slices, blob, check_convergence, deeper, buckets)
        )
        .partitionBy(buckets, bfs_tasks.partition_of)
        .mapPartitionsWithIndex(
            functools.partial(
                bfs_tasks.new_states,
                blob,
                check_convergence,
                run,
                visited_dirs,
                str(tmp.resolve()),
                job,
            )
        )
        .collect()
    )
    for part in ("frontier", "visited"):
        for leftover in (tmp / part).glob(".*"):
            leftover.unlink()  # a task attempt that did not finish its file
        (tmp / part / "_SUCCESS").touch()
    return _Side.of(rows)


def _parent(out: Path, depth: int, fp: int) -> tuple[int, int]:
    table = pq.read_table(str(_level_dir(out, depth) / "visited"))
    hit = table.filter(pc.equal(table["fp"], fp))
    if hit.num_rows != 1:
        raise PipelineError(f"the parent pointers of level {depth} lack state {fp}")
    return int(hit["parent"][0].as_py()), int(hit["action"][0].as_py())


def _rebuild(
    out: Path, config: Config, event: dict[str, Any], depth: int, at_state: bool
) -> ModelPath:
    """The path of a violation recorded on level ``depth``: to the violating state (a state
    property, on this level), or to the expanded state of the level above and then, for a
    step property, its ``action``-th transition."""
    fp = int(event["fp"])
    order = bytes.fromhex(event["order"])
    level = depth if at_state else depth - 1
    indices: list[int] = []
    for d in range(level, 0, -1):
        fp, action = _parent(out, d, fp)
        indices.append(action)
    indices.reverse()
    if not at_state and order[-3:] != b"\x00\x00\x00":
        indices.append(int(event["action"]))
    state = system.initial(config)
    actions: list[Action] = []
    for i in indices:
        chosen = system.enabled(state, config)[i]
        actions.append(chosen)
        state = system.step(state, chosen, config)
    return ModelPath(config, tuple(actions))
