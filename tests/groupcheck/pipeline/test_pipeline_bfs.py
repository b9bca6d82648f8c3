"""``groupcheck pipeline bfs``: the level-synchronous BFS on Spark (local[2], the shared
session of ``conftest``) searches what the serial engine searches, finds its
counterexample, and resumes a stopped search at its last complete level. Small configs
only: a level on Spark costs a Spark job of two stages. The tests run levels on Spark
(``driver_states=0``) and on the driver (the default for levels this small), and resume
one path's levels with the other's."""

from __future__ import annotations

import json
import os
import pickle
import re
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from groupcheck.cli import main
from groupcheck.explore.bfs import bfs
from groupcheck.mutants import get_mutant
from groupcheck.pipeline import bfs_tasks
from groupcheck.pipeline.bfs import VisitedTable, spark_bfs
from groupcheck.pipeline.bfs_tasks import bucket_of, spark_hash_long, stable_fingerprint
from groupcheck.pipeline.errors import PipelineError
from groupcheck.tla.configs import CONFIGS
from model import system
from model.presets import preset
from model.settings import config_to_mapping

pytestmark = pytest.mark.spark


def test_stable_fingerprint_is_a_function_of_the_value() -> None:
    config = preset("TINY")
    a, b = system.initial(config), system.initial(config)
    assert a is not b
    assert stable_fingerprint(a) == stable_fingerprint(b)
    after = system.step(a, system.enabled(a, config)[0], config)
    assert stable_fingerprint(after) != stable_fingerprint(a)
    assert stable_fingerprint(frozenset({"x", "y"})) == stable_fingerprint(frozenset({"y", "x"}))


def test_fast_encoding_is_the_plain_one() -> None:
    """``_encode`` (by type, remembering parts) writes the bytes of ``_encode_slow`` (the
    plain definition) for every state within 6 steps of MUT2, their canonical forms, and
    values of every kind; so fingerprints stored by an earlier version still match."""
    config = preset("MUT2")
    ctx = bfs_tasks.context(pickle.dumps(config), False)
    frontier, seen = [system.initial(config)], []
    for _ in range(6):
        frontier = [system.step(s, a, config) for s in frontier for a in system.enabled(s, config)]
        frontier = frontier[:400]
        seen.extend(frontier)
    values: list[object] = [*seen, *(ctx.canonical(s) for s in seen)]
    values += [None, True, 3, -7, "x", 1.5, (1, "a"), frozenset({"y", "x"}), {2, 1}]
    for value in values:
        plain: list[bytes] = []
        bfs_tasks._encode_slow(value, plain)
        assert bfs_tasks._encode(value) == b"".join(plain)
        assert bfs_tasks._encode(value) == b"".join(plain)  # remembered: the same


def test_bucket_of_is_sparks_hash_partitioning() -> None:
    """The driver files a level's fingerprints into the buckets Spark would: ``hash(fp)``
    and ``pmod(hash(fp), 7)`` as Spark 4.3 computed them (``F.hash``, ``F.pmod``)."""
    spark_said = {
        0: (-1670924195, 4),
        1: (-1712319331, 5),
        -1: (-939490007, 6),
        2**63 - 1: (-1604625029, 0),
        -(2**63): (-853646085, 2),
        123456789012345: (1130168193, 0),
        -987654321987: (-1353568891, 4),
        42: (1316951768, 6),
    }
    for fp, (hashed, bucket) in spark_said.items():
        assert spark_hash_long(fp) == hashed, fp
        assert bucket_of(fp, 7) == bucket, fp


def _bucketed_layout(spark: SparkSession, out: Path, buckets: int) -> None:
    """Every level's ``visited`` is in Spark's bucketed layout: at most one file per bucket,
    each holding only fingerprints of its bucket (``pmod(hash(fp), B)``, the hash
    partitioning of the shuffle), and the anti-join against it plans no exchange of the
    visited side (its scan is bucketed; the one exchange groups the candidates)."""
    names = []
    for level in sorted(p for p in (out / "levels").iterdir() if p.name.isdigit()):
        files = sorted(f.name for f in (level / "visited").glob("part-*.parquet"))
        found = [
            re.fullmatch(r"part-\d+-[0-9a-f-]+_(\d{5})\.c000\.snappy\.parquet", f) for f in files
        ]
        ids = [int(m[1]) for m in found if m is not None]
        assert len(ids) == len(files), files
        assert len(set(ids)) == len(ids), files  # one file per bucket
        assert all(0 <= b < buckets for b in ids), files
        names.append(str(level / "visited"))
    rows = (
        spark.read.parquet(*names)
        .select(
            F.pmod(F.hash("fp"), buckets).alias("bucket"),
            F.regexp_extract(F.input_file_name(), r"_(\d{5})\.c000", 1).cast("int").alias("file"),
        )
        .groupBy((F.col("bucket") == F.col("file")).alias("same"))
        .count()
        .collect()
    )
    assert {r.same: r["count"] for r in rows}.keys() == {True}
    table = VisitedTable(spark, out, buckets)
    try:
        for depth in range(len(names)):
            table.add(depth)
        frontier = spark.read.parquet(str(out / "levels" / f"{len(names) - 1:05d}" / "frontier"))
        old = spark.conf.get("spark.sql.shuffle.partitions")
        spark.conf.set("spark.sql.shuffle.partitions", str(buckets))
        try:
            candidates = frontier.groupBy("fp").agg(F.min("key").alias("key"))
            joined = table.anti_join(candidates)
            plan = joined._jdf.queryExecution().executedPlan().toString()
            assert joined.count() == 0  # the last level's states are visited
        finally:
            spark.conf.set("spark.sql.shuffle.partitions", old or "2")
    finally:
        table.drop()
    assert "Bucketed: true" in plan, plan
    assert f"SelectedBucketsCount: {buckets} out of {buckets}" in plan, plan
    assert plan.count("Exchange") == 1, plan
    assert (
        plan.index("LeftAnti")
        < plan.index("Exchange hashpartitioning(fp")
        < plan.index("FileScan parquet spark_catalog")
    ), plan


def test_mutant_same_counterexample_and_resume(spark: SparkSession, tmp_path: Path) -> None:
    """Also: the visited sets are bucketed (3 buckets, not the 2 partitions of the session)
    and a stopped search resumes across them with the buckets its directory records. Levels
    0-4 are computed on Spark, the rest on the driver, in the same layout."""
    mutant = get_mutant("revoke-without-waiting")
    config = replace(mutant.config, rules=mutant.rules)
    serial = bfs(config)
    assert serial.path is not None
    out = tmp_path / "mut"
    stopped = spark_bfs(
        spark,
        config,
        out,
        mutant=mutant.name,
        stop_after=4,
        partitions=2,
        buckets=3,
        driver_states=0,
    )
    assert stopped.result == "inconclusive"
    assert stopped.distinct_states == 81  # levels 0-4
    assert spark.conf.get("spark.sql.shuffle.partitions") == "2"  # restored
    levels = sorted(p.name for p in (out / "levels").iterdir())
    assert levels == ["00000", "00001", "00002", "00003", "00004"]
    assert json.loads((out / "plan.json").read_text(encoding="utf-8"))["buckets"] == 3
    _bucketed_layout(spark, out, 3)
    with pytest.raises(PipelineError, match="holds a search with 3 buckets"):
        spark_bfs(spark, config, out, mutant=mutant.name, partitions=2, buckets=2)
    unbucketed = tmp_path / "unbucketed"  # a directory of the layout before buckets
    unbucketed.mkdir()
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    del plan["buckets"]
    (unbucketed / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    with pytest.raises(PipelineError, match="not bucketed"):
        spark_bfs(spark, config, unbucketed, mutant=mutant.name, partitions=2)
    # A level a killed run left half-written is replaced, not read.
    (out / "levels" / ".00005.tmp" / "frontier").mkdir(parents=True)
    resumed = spark_bfs(spark, config, out, mutant=mutant.name, partitions=2)
    assert resumed.levels_resumed == 4
    _bucketed_layout(spark, out, 3)
    assert resumed.result == "violation"
    assert resumed.property == serial.property
    assert resumed.message == serial.message
    assert resumed.path is not None
    assert resumed.path.actions == serial.path.actions
    assert not list((out / "levels").glob(".*"))
    # A run from scratch finds the same: test_cli_writes_the_serial_engines_artifacts.


def test_cli_writes_the_serial_engines_artifacts(
    spark: SparkSession, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["--mutant", "revoke-without-waiting", "--json", "--quiet"]
    assert main(["explore", *argv, "--workers", "1", "--out", str(tmp_path / "serial")]) == 1
    capsys.readouterr()
    code = main(["pipeline", "bfs", *argv, "--out", str(tmp_path / "spark")])
    assert code == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["property"] == "OwnedPartitionsAreHeld"
    run = Path(doc["trace"]).parent
    serial_run = tmp_path / "serial" / run.name
    files = sorted(p.relative_to(serial_run) for p in serial_run.rglob("*") if p.is_file())
    assert files
    for rel in files:
        assert (run / rel).read_bytes() == (serial_run / rel).read_bytes(), rel
    # Another config into the same directory is refused.
    assert main(["pipeline", "bfs", "--preset", "TINY", "--out", str(tmp_path / "spark")]) == 2


def _complete_levels(levels: Path) -> list[str]:
    return sorted(p.name for p in levels.iterdir() if p.name.isdigit())


def test_killed_job_resumes_at_its_last_complete_level(
    spark: SparkSession, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """SIGKILL a ``pipeline bfs`` process (and its JVM) once it has committed level 3;
    the same command resumes at the last level it committed and ends with the serial
    engine's distinct states, steps, depth, witnesses and verdict on TINY1 (the two runs
    together compute each level once: this is also the test of a complete search). The
    killed run computes its levels on Spark (``--driver-states 0``), the resumed one on the
    driver."""
    config = CONFIGS["TINY1"]
    config_file = tmp_path / "tiny1.json"
    config_file.write_text(json.dumps(config_to_mapping(config)), encoding="utf-8")
    out = tmp_path / "killed"
    argv = ["pipeline", "bfs", "--config", str(config_file), "--out", str(out)]
    on_spark = ["--driver-states", "0", "--master", "local[1]", "--partitions", "2"]
    root = Path(__file__).resolve().parents[3]
    env = dict(os.environ, PYTHONPATH=str(root))
    proc = subprocess.Popen(
        [sys.executable, "-m", "groupcheck", *argv, *on_spark],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: the JVM goes down with it
    )
    try:
        # Poll for the commit of level 3; the guard only stops a hung test.
        for _ in range(3000):
            if (out / "levels" / "00003").exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
    # Nothing the kill interrupted looks complete: numbered levels are whole (their
    # datasets and level.json written), a level in progress has a hidden name, and no
    # counterexample or summary was written.
    levels = out / "levels"
    complete = _complete_levels(levels)
    assert complete == [f"{d:05d}" for d in range(len(complete))]
    assert len(complete) >= 4
    for name in complete:
        for part in ("frontier/_SUCCESS", "visited/_SUCCESS", "level.json"):
            assert (levels / name / part).exists(), (name, part)
    assert all(p.name.startswith(".") for p in levels.iterdir() if p.name not in complete)
    assert sorted(p.name for p in out.iterdir()) == ["levels", "plan.json"]
    stamps = {n: (levels / n / "level.json").stat().st_mtime_ns for n in complete}

    capsys.readouterr()
    code = main([*argv, "--json", "--quiet", "--partitions", "2"])
    doc = json.loads(capsys.readouterr().out)
    serial = bfs(config)
    assert doc["levels_resumed"] == len(complete) - 1  # from the last complete level
    for name, stamp in stamps.items():  # not recomputed
        assert (levels / name / "level.json").stat().st_mtime_ns == stamp, name
    assert doc["distinct_states"] == serial.distinct_states == 2062  # tla/manifest.json
    assert doc["steps"] == serial.steps
    assert doc["depth"] == serial.depth
    # Exhausted, but one perturbation cannot fence a member: honest about the witness.
    assert doc["result"] == serial.result == "inconclusive"
    assert doc["missed_witnesses"] == serial.missed_witnesses == ["FencedMemberRejoins"]
    assert doc["witnesses"] == serial.witnesses
    assert code == 3
    assert not list(levels.glob(".*"))
