"""``groupcheck pipeline bfs``: the level-synchronous BFS on Spark (local[2], the shared
session of ``conftest``) searches what the serial engine searches, finds its
counterexample, and resumes a stopped search at its last complete level. Small configs
only: every level costs a few Spark jobs."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from groupcheck.cli import main
from groupcheck.explore.bfs import bfs
from groupcheck.mutants import get_mutant
from groupcheck.pipeline.bfs import spark_bfs
from groupcheck.pipeline.bfs_tasks import stable_fingerprint
from groupcheck.tla.configs import CONFIGS
from model import system
from model.presets import preset

pytestmark = pytest.mark.spark


def test_stable_fingerprint_is_a_function_of_the_value() -> None:
    config = preset("TINY")
    a, b = system.initial(config), system.initial(config)
    assert a is not b
    assert stable_fingerprint(a) == stable_fingerprint(b)
    after = system.step(a, system.enabled(a, config)[0], config)
    assert stable_fingerprint(after) != stable_fingerprint(a)
    assert stable_fingerprint(frozenset({"x", "y"})) == stable_fingerprint(frozenset({"y", "x"}))


def test_tiny_same_states_as_serial(spark: SparkSession, tmp_path: Path) -> None:
    config = CONFIGS["TINY1"]  # TINY with one perturbation: 2,062 states (tla/manifest.json)
    serial = bfs(config)
    res = spark_bfs(spark, config, tmp_path / "tiny1", partitions=2)
    assert res.distinct_states == serial.distinct_states == 2062
    assert res.steps == serial.steps
    assert res.depth == serial.depth
    # Exhausted, but one perturbation cannot fence a member: honest about the witness.
    assert serial.result == res.result == "inconclusive"
    assert res.missed_witnesses == serial.missed_witnesses == ["FencedMemberRejoins"]
    assert res.witnesses == serial.witnesses


def test_mutant_same_counterexample_and_resume(spark: SparkSession, tmp_path: Path) -> None:
    mutant = get_mutant("revoke-without-waiting")
    config = replace(mutant.config, rules=mutant.rules)
    serial = bfs(config)
    assert serial.path is not None
    out = tmp_path / "mut"
    stopped = spark_bfs(spark, config, out, mutant=mutant.name, stop_after=4, partitions=2)
    assert stopped.result == "inconclusive"
    assert stopped.distinct_states == 81  # levels 0-4
    levels = sorted(p.name for p in (out / "levels").iterdir())
    assert levels == ["00000", "00001", "00002", "00003", "00004"]
    # A level a killed run left half-written is replaced, not read.
    (out / "levels" / ".00005.tmp" / "frontier").mkdir(parents=True)
    resumed = spark_bfs(spark, config, out, mutant=mutant.name, partitions=2)
    assert resumed.levels_resumed == 4
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
