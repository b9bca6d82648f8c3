"""The pipeline on real Spark: local mode, a killed job resumed, a corpus, and a standalone
master and worker on loopback.

Every test here starts or uses a JVM, so all of them live in this one module, share one
session-scoped ``local[2]`` session (``conftest.LocalSpark``), and carry the ``spark`` mark:
``make test`` runs them in a separate pytest invocation without xdist (one JVM;
docs/pipeline.md). The CLI called in-process reuses the fixture's session; a subprocess
starts its own. The standalone-cluster test stops the shared session for its own run; a
test after it gets a new one, so the tests pass in any order.
"""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from tracelines import progress_walk

import groupcheck
from groupcheck.cli import main
from groupcheck.explore.bfs import bfs
from groupcheck.explore.minimise import first_violations
from groupcheck.mutants import get_mutant
from groupcheck.pipeline import spark as spark_module
from groupcheck.pipeline.bfs import SparkBfsResult, spark_bfs
from groupcheck.pipeline.corpus import plan_corpus, validate_range
from groupcheck.pipeline.errors import PipelineError
from groupcheck.pipeline.grid import load_grid
from groupcheck.pipeline.spark import session
from groupcheck.pipeline.standalone import StandaloneCluster
from groupcheck.pipeline.work import Job, execute_table, run_parts
from groupcheck.timed.engine import Timing
from groupcheck.timed.scenarios import Kip1263, scale_up
from model.path import Path as Path_
from model.presets import TINY, preset
from model.trace import path_lines

pytestmark = pytest.mark.spark

FAST_JVM = {"JAVA_TOOL_OPTIONS": "-XX:TieredStopAtLevel=1"}
"""For the JVMs a test starts outside the shared session (a CLI subprocess, a standalone
master, worker and executor): C1-only JIT starts them faster, as ``fast_start`` does."""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object], str]:
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def cli(*argv: str) -> list[str]:
    return [sys.executable, "-m", "groupcheck", "pipeline", *argv]


def plain_python(grid: Path, runs: int) -> pa.Table:
    """The same runs, in this process, without Spark."""
    plan = load_grid(grid, runs)
    return execute_table(Job("explore", "-", plan, ()), 0, plan.total)


def test_explore_on_spark_equals_plain_python_and_resumes(
    spark: SparkSession,
    tmp_path: Path,
    grid_file: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(spark_module, "PROGRESS_EVERY", 0.05)  # a "long" job, for progress
    out = tmp_path / "o"
    args = (
        "pipeline",
        "explore",
        "--grid",
        str(grid_file),
        "--runs",
        "6",
        "--part-size",
        "4",
        "--out",
        str(out),
    )
    code, summary, err = run(capsys, *args)
    assert (summary["parts"], summary["computed"], summary["runs"]) == (6, 6, 24)
    assert code == 1
    assert summary["violations"] > 0
    expected = plain_python(grid_file, 6)
    assert pq.read_table(out / "parts").equals(expected)
    # Progress while the job runs: committed parts so far, never more than there are.
    progress = [
        re.fullmatch(r"groupcheck: pipeline: (\d+)/6 parts done in \d+ s(, about \d+ s left)?", x)
        for x in err.splitlines()
        if "parts done" in x
    ]
    assert progress
    assert all(progress)
    done = [int(m.group(1)) for m in progress if m]
    assert done == sorted(done)
    assert done[-1] <= 6

    # Restart: only the missing parts are computed; the others are not touched.
    for i in (1, 4):
        (out / "parts" / f"part-{i:05d}.parquet").unlink()
    (out / "_SUCCESS.json").unlink()
    kept = {p.name: p.stat().st_mtime_ns for p in (out / "parts").iterdir()}
    code, summary, err = run(capsys, *args)
    assert (summary["computed"], summary["reused"]) == (2, 4)
    assert "resuming: 4 of 6 parts already committed" in err
    assert all((out / "parts" / n).stat().st_mtime_ns == t for n, t in kept.items())
    assert pq.read_table(out / "parts").equals(expected)


def test_classic_cell_on_spark_finds_the_late_sync_mutant(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A classic-protocol grid end to end: the reference rules and the KAFKA-14016 mutant
    on MUTC_LATE_SYNC, by seeded walks on Spark; the rows equal a plain-Python run, the
    reference cell converges everywhere, and the mutant cell's violation replays."""
    grid = tmp_path / "g.json"
    grid.write_text(
        json.dumps(
            {
                "presets": ["MUTC_LATE_SYNC"],
                "mutants": ["none", "late-sync-resets-generation"],
                "engines": ["walk"],
                "seed": 0,
                "walk": {"max_steps": 60},
            }
        )
    )
    out = tmp_path / "o"
    code, summary, _ = run(
        capsys,
        "pipeline",
        "explore",
        "--grid",
        str(grid),
        "--runs",
        "6",
        "--part-size",
        "4",
        "--out",
        str(out),
    )
    table = pq.read_table(out / "parts")
    assert table.equals(plain_python(grid, 6))
    assert (summary["runs"], summary["parts"]) == (12, 3)
    rows = table.to_pylist()
    reference = [r for r in rows if r["mutant"] is None]
    mutant = [r for r in rows if r["mutant"] == "late-sync-resets-generation"]
    assert len(reference) == len(mutant) == 6
    assert all(r["violation"] is None and r["converged"] for r in reference)
    found = [r for r in mutant if r["violation"] is not None]
    assert found, "no walk of the mutant cell found its violation"
    assert {r["violation"] for r in found} == {"LostOnlyWhenOut"}
    assert code == 1
    assert summary["by_property"] == {"LostOnlyWhenOut": len(found)}
    # The minimised path of the Parquet row replays to the same violation.
    config = get_mutant("late-sync-resets-generation").mutated_config()
    path = Path_.decode(config, found[0]["path_code"])
    assert len(path.actions) == found[0]["path_length"]
    violations = first_violations(config, path.actions, check_convergence=True)
    assert violations is not None
    assert "LostOnlyWhenOut" in {v.property for v in violations[0]}


def test_killed_job_is_not_complete_and_resumes(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps({"presets": ["TINY"], "seed": 100, "walk": {"max_steps": 20}}))
    out = tmp_path / "o"
    args = ("explore", "--grid", str(grid), "--runs", "200", "--part-size", "5", "--out", str(out))
    proc = subprocess.Popen(
        cli(*args, "--quiet"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        # A killed driver cannot remove its scratch directory: keep it under tmp_path.
        env={**os.environ, **FAST_JVM, "TMPDIR": str(tmp_path)},
    )
    try:
        deadline = time.monotonic() + 120
        while len(list((out / "parts").glob("part-*.parquet"))) < 3:
            assert proc.poll() is None, "the job ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and its JVM
        proc.wait()
    # Spark's Python workers run in their own process group; they notice the JVM is gone
    # and exit, possibly after committing the part they were on. Wait for them.
    committed = settled(out / "parts")
    assert not (out / "_SUCCESS.json").exists()
    assert 3 <= len(committed) < 40
    plan = load_grid(grid, 200)
    job = Job("explore", str(out), plan, tuple(run_parts(plan.total, 5)))
    first = int(committed[0].name[5:10])
    start, stop = job.parts[first]
    assert pq.read_table(committed[0]).equals(execute_table(job, start, stop))
    for part in committed:  # every visible part is whole
        assert pq.read_table(part).num_rows == 5
    assert main(["pipeline", "report", str(out)]) == 2
    assert "incomplete" in capsys.readouterr().err

    code, summary, _ = run(capsys, "pipeline", *args)
    assert summary["runs"] == 200
    assert summary["parts"] == 40
    assert summary["computed"] == 40 - len(committed)
    table = pq.read_table(out / "parts")
    assert table.column("run").to_pylist() == list(range(200))
    assert not [p for p in (out / "parts").iterdir() if not p.name.startswith("part-")]
    # The summary and the exit status cover all 200 runs, the parts the killed job
    # committed included, not only the parts this run computed.
    violations = table.filter(pc.is_valid(table["violation"]))
    assert summary["violations"] == violations.num_rows
    assert summary["by_property"] == dict(
        sorted(
            (d["values"], d["counts"]) for d in pc.value_counts(violations["violation"]).to_pylist()
        )
    )
    assert summary["errors"] == len(table["error"].drop_null())
    assert summary["result"] == (
        "violation"
        if violations.num_rows
        else "inconclusive"
        if summary["errors"] or summary["missed_witnesses"]
        else "ok"
    )
    assert code == (
        1
        if violations.num_rows
        else 4
        if summary["errors"]
        else 3
        if summary["missed_witnesses"]
        else 0
    )


def settled(parts: Path, quiet: float = 2.0, limit: float = 60.0) -> list[Path]:
    """The committed parts once no part or temporary file has appeared for ``quiet`` s."""
    end = time.monotonic() + limit
    seen: list[str] = []
    calm_since = time.monotonic()
    while time.monotonic() < end:
        now = sorted(p.name for p in parts.iterdir())
        if now != seen:
            seen, calm_since = now, time.monotonic()
        elif time.monotonic() - calm_since >= quiet:
            break
        time.sleep(0.1)
    return sorted(parts.glob("part-*.parquet"))


def test_validate_corpus_reports_each_trace(
    spark: SparkSession, tmp_path: Path, corpus: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "v"
    pattern = str(tmp_path / "corpus" / "**" / "*.ndjson")
    code, summary, _ = run(capsys, "pipeline", "validate", "--traces", pattern, "--out", str(out))
    assert code == 1  # a violation; malformed traces are reported per trace
    assert (
        summary["traces"],
        summary["ok"],
        summary["with_violations"],
        summary["inconclusive"],
        summary["malformed"],
    ) == (11, 6, 1, 0, 4)
    assert summary["result"] == "violation"
    assert summary["by_property"] == {"Observed.NoDoubleOwnership": 1}
    table = pq.read_table(out / "parts")
    assert dict(zip(table["trace"].to_pylist(), table["result"].to_pylist(), strict=True)) == corpus
    plan = plan_corpus([pattern])
    assert table.equals(validate_range(plan, 0, plan.total))

    assert main(["pipeline", "report", str(out)]) == 0
    findings = pq.read_table(out / "report" / "findings.parquet").to_pylist()
    assert [(Path(f["trace"]).name, f["line"], f["property"]) for f in findings] == [
        ("double.ndjson", 6, "Observed.NoDoubleOwnership")
    ]
    html = (out / "report" / "report.html").read_text()
    assert "dangling.ndjson" in html
    assert "No such file or directory" in html


def test_validate_conformance_mode(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--mode conformance`` reaches the tasks: a trace with one event left out is valid
    for safety but does not conform (the model cannot take its next event)."""
    root = tmp_path / "corpus"
    root.mkdir()
    lines = list(path_lines(progress_walk(TINY, 0, 160, idle="stop")))
    (root / "whole.ndjson").write_text("\n".join(lines) + "\n", encoding="utf-8")
    skipped = root / "skipped.ndjson"
    skipped.write_text("\n".join(lines[:2] + lines[3:]) + "\n", encoding="utf-8")
    pattern = str(root / "*.ndjson")
    out = tmp_path / "c"
    code, summary, _ = run(
        capsys,
        "pipeline",
        "validate",
        "--traces",
        pattern,
        "--mode",
        "conformance",
        "--out",
        str(out),
        "--quiet",
    )
    assert code == 1
    assert (summary["traces"], summary["ok"], summary["with_violations"]) == (2, 1, 1)
    assert summary["by_property"] == {"Conformance": 1}
    table = pq.read_table(out / "parts")
    assert set(table["mode"].to_pylist()) == {"conformance"}
    assert table.equals(validate_range(plan_corpus([pattern], "conformance"), 0, 2))
    (finding,) = table.filter(pc.equal(table["trace"], str(skipped)))["violations"].to_pylist()[0]
    assert (finding["line"], finding["property"]) == (3, "Conformance")
    safety = validate_range(plan_corpus([pattern], "safety"), 0, 2)
    # Safety: 160 events, enough for --settle's 100: convergence checked, and it holds.
    assert safety["result"].to_pylist() == ["ok", "ok"]


def test_timed_sweep_on_spark_reports_the_timed_simulations_numbers(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 2×2 KIP-1263 sweep (group size × assignment interval) on the shared session: the
    report's rebalance times are those of ``scale_up`` called directly for the same cells."""
    grid = tmp_path / "t.toml"
    grid.write_text(
        "seeds = [1, 2]\n[timed]\nmembers = [2, 6]\nassignment_interval_ms = [0, 1000]\n"
        "assignor_ms = 20\n",
        encoding="utf-8",
    )
    out = tmp_path / "o"
    code, summary, _ = run(capsys, "pipeline", "timed", "--grid", str(grid), "--out", str(out))
    assert code == 0, summary
    assert (summary["runs"], summary["result"], summary["unfinished"]) == (8, "ok", 0)
    code, verdict, _ = run(capsys, "pipeline", "report", str(out))
    assert code == 0
    assert verdict["result"] == "ok"
    cells = pq.read_table(out / "report" / "timed_cells.parquet").to_pylist()
    assert len(cells) == 4
    timing = Timing(assignor_ms=20.0)
    for cell in cells:
        times = [
            scale_up(
                members=cell["members"],
                kip1263=Kip1263(cell["assignment_interval_ms"], False),
                seed=seed,
                timing=timing,
            ).rebalance_ms
            for seed in (1, 2)
        ]
        assert None not in times
        assert cell["rebalance_ms_median"] == statistics.median(times)
        assert cell["rebalance_ms_max"] == max(times)
    # KIP-1263's table: a 1,000 ms interval costs the larger group a heartbeat interval.
    by = {(c["members"], c["assignment_interval_ms"]): c["rebalance_ms_median"] for c in cells}
    assert by[(6, 1000)] > by[(6, 0)] + 4000
    html = (out / "report" / "report.html").read_text(encoding="utf-8")
    assert "Median rebalance time after the last join" in html
    assert "<polyline" in html


def test_session_warm_up_imports_the_project_in_the_workers(spark: SparkSession) -> None:
    """The warm-up runs the task code's imports in Spark's Python workers; a worker that
    cannot import them is one ``PipelineError`` line with the worker's own error."""
    here = str(Path(groupcheck.__file__).parent)
    assert spark_module.warm_up_workers(spark) == [here]
    with pytest.raises(PipelineError) as caught:
        spark_module.warm_up_workers(spark, ["groupcheck.pipeline.runs", "groupcheck_absent"])
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("Spark's Python workers cannot run the project's code: ")
    assert "ModuleNotFoundError: No module named 'groupcheck_absent'" in message
    assert spark_module.warm_up_workers(spark, ["json"]) == [here]  # the session goes on


def _executor_pids(group: int) -> list[int]:
    """The executor JVMs in process group ``group`` (a worker the test started)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes()
            if b"CoarseGrainedExecutorBackend" in cmd and os.getpgid(int(proc.name)) == group:
                pids.append(int(proc.name))
        except (OSError, ProcessLookupError):
            continue
    return pids


def _lose_an_executor_mid_level(cluster: StandaloneCluster, tmp_path: Path) -> None:
    """On the cluster's two workers, SIGKILL the first worker's executor while a level's
    job runs (its temporary directory exists, the level is not committed): Spark runs the
    lost tasks again (and the map stage whose shuffle output died with it), the reduce
    tasks rewrite their files, and the search ends with the serial engine's states,
    transitions and depth — each count arrives once."""
    config = preset("MUT2")
    serial = bfs(config, check_convergence=False, max_depth=10)
    out = tmp_path / "lost"
    victim_group = cluster._procs[1].pid  # the first worker's process group
    with session(cluster.url) as spark:
        result: list[SparkBfsResult] = []
        search = threading.Thread(
            target=lambda: result.append(
                spark_bfs(
                    spark,
                    config,
                    out,
                    check_convergence=False,
                    max_depth=10,
                    partitions=2,
                    buckets=2,
                    driver_states=0,
                )
            )
        )
        search.start()
        killed_at = None
        for _ in range(20000):  # bounded poll; the search ends it
            pending = sorted((out / "levels").glob(".0000[6-9].tmp")) if out.exists() else []
            victims = _executor_pids(victim_group)
            if pending and victims:
                level = int(pending[0].name[1:6])
                os.kill(victims[0], signal.SIGKILL)
                killed_at = level if not (out / "levels" / f"{level:05d}").exists() else None
                break
            if not search.is_alive():
                break
            time.sleep(0.01)
        search.join()
    assert killed_at is not None  # killed while a level was in progress
    (res,) = result
    assert isinstance(res, SparkBfsResult)
    assert res.result == serial.result
    assert res.distinct_states == serial.distinct_states
    assert res.steps == serial.steps
    assert res.depth == serial.depth
    assert not list((out / "levels").glob(".*"))


def test_standalone_cluster_gives_the_same_results(
    no_local_spark: None,
    tmp_path: Path,
    grid_file: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A real ``spark://`` master and worker on loopback (free ports), the project shipped
    as a zip; a master without workers is a bounded wait and exit 2, and leaves no output
    directory behind; ``pipeline bfs`` runs on two workers, and a search that loses an
    executor mid-level ends as the serial engine's (one cluster for both: its JVMs are most
    of the test's time)."""
    for key, value in FAST_JVM.items():
        monkeypatch.setenv(key, value)
    with StandaloneCluster(tmp_path / "cluster", cores=2, memory="1g") as cluster:
        began = time.monotonic()
        code = main(
            [
                "pipeline",
                "explore",
                "--grid",
                str(grid_file),
                "--runs",
                "1",
                "--out",
                str(tmp_path / "x"),
                "--master",
                cluster.url,
                "--connect-timeout",
                "1",
                "--quiet",
            ]
        )
        err = capsys.readouterr().err
        assert code == 2
        assert time.monotonic() - began < 60
        assert err.strip().splitlines()[-1] == (
            f"groupcheck: error: no executor registered with the Spark master {cluster.url} "
            "within 1 s; is a worker running with free cores and memory?"
        )
        assert not (tmp_path / "x").exists()
        cluster.start_worker()
        code, summary, _ = run(
            capsys,
            "pipeline",
            "explore",
            "--grid",
            str(grid_file),
            "--runs",
            "2",
            "--part-size",
            "3",
            "--out",
            str(tmp_path / "o"),
            "--master",
            cluster.url,
            "--quiet",
        )
        # The Spark BFS on two workers: an executor on each (its directory under the
        # worker's work directory), the serial engine's counterexample; every level on the
        # executors (--driver-states 0: these levels are small enough for the driver).
        cluster.start_worker(cores=1)
        assert cluster.alive_workers() == 2
        bfs_code, found_bfs, _ = run(
            capsys,
            "pipeline",
            "bfs",
            "--mutant",
            "revoke-without-waiting",
            "--partitions",
            "2",
            "--driver-states",
            "0",
            "--out",
            str(tmp_path / "bfs"),
            "--master",
            cluster.url,
            "--quiet",
        )
        apps = [sorted(p.name for p in work.glob("app-*")) for work in cluster.work_dirs]
        # A job that loses an executor mid-level finishes with the same result.
        _lose_an_executor_mid_level(cluster, tmp_path)
    assert len(apps[0]) == 2  # the explore job's executor, then the BFS's
    assert len(apps[1]) == 1
    assert apps[1][0] == apps[0][1]
    mutant = get_mutant("revoke-without-waiting")
    serial = bfs(replace(mutant.config, rules=mutant.rules))
    assert serial.path is not None
    assert bfs_code == 1
    assert found_bfs["property"] == serial.property
    assert found_bfs["original_length"] == len(serial.path.actions)
    assert summary["parts"] == 3
    assert summary["computed"] == 3
    assert summary["code"] == ["groupcheck-project.zip/groupcheck"]  # the shipped code ran
    expected = plain_python(grid_file, 2)
    assert pq.read_table(tmp_path / "o" / "parts").equals(expected)
    # What the cluster reports is what the same runs find in plain Python.
    found = len(expected["violation"].drop_null())
    assert summary["violations"] == found
    assert code == (1 if found else 3 if summary["missed_witnesses"] else 0)
