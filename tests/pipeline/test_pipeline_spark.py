"""The pipeline on real Spark: local mode, a killed job resumed, a corpus, and a standalone
master and worker on loopback.

Every test here starts or uses a JVM, so all of them live in this one module, share one
session-scoped ``local[2]`` session, and carry the ``spark`` mark: ``make test`` runs them in
a separate pytest invocation without xdist (one JVM; docs/pipeline.md). The CLI called
in-process reuses the fixture's session; a subprocess starts its own.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from groupcheck.cli import main
from groupcheck.pipeline.corpus import plan_corpus, validate_range
from groupcheck.pipeline.grid import load_grid
from groupcheck.pipeline.spark import session
from groupcheck.pipeline.standalone import StandaloneCluster
from groupcheck.pipeline.work import Job, execute_table, run_parts

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    with session(
        "local[2]",
        fast_start=True,
        conf=[("spark.default.parallelism", "2"), ("spark.sql.shuffle.partitions", "2")],
    ) as s:
        yield s


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
    spark: SparkSession, tmp_path: Path, grid_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
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
    code, summary, _ = run(capsys, *args)
    assert (summary["parts"], summary["computed"], summary["runs"]) == (6, 6, 24)
    assert code == 1
    assert summary["violations"] > 0
    expected = plain_python(grid_file, 6)
    assert pq.read_table(out / "parts").equals(expected)

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


def test_killed_job_is_not_complete_and_resumes(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps({"presets": ["SMALL"], "seed": 100}))
    out = tmp_path / "o"
    args = ("explore", "--grid", str(grid), "--runs", "400", "--part-size", "10", "--out", str(out))
    proc = subprocess.Popen(
        cli(*args, "--quiet"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
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
    plan = load_grid(grid, 400)
    job = Job("explore", str(out), plan, tuple(run_parts(plan.total, 10)))
    first = int(committed[0].name[5:10])
    start, stop = job.parts[first]
    assert pq.read_table(committed[0]).equals(execute_table(job, start, stop))
    for part in committed:  # every visible part is whole
        assert pq.read_table(part).num_rows == 10
    assert main(["pipeline", "report", str(out)]) == 2
    assert "incomplete" in capsys.readouterr().err

    code, summary, _ = run(capsys, "pipeline", *args)
    assert summary["runs"] == 400
    assert summary["parts"] == 40
    assert summary["computed"] == 40 - len(committed)
    table = pq.read_table(out / "parts")
    assert table.column("run").to_pylist() == list(range(400))
    assert not [p for p in (out / "parts").iterdir() if not p.name.startswith("part-")]
    assert code == (1 if summary["violations"] or summary["errors"] else 0)


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
    assert code == 2  # malformed traces, reported per trace
    assert (
        summary["traces"],
        summary["valid"],
        summary["with_violations"],
        summary["malformed"],
    ) == (
        11,
        6,
        1,
        4,
    )
    assert summary["by_property"] == {"NoDoubleClientOwnership": 1}
    table = pq.read_table(out / "parts")
    assert dict(zip(table["trace"].to_pylist(), table["result"].to_pylist(), strict=True)) == corpus
    plan = plan_corpus([pattern])
    assert table.equals(validate_range(plan, 0, plan.total))

    assert main(["pipeline", "report", str(out)]) == 0
    findings = pq.read_table(out / "report" / "findings.parquet").to_pylist()
    assert [(Path(f["trace"]).name, f["line"], f["property"]) for f in findings] == [
        ("double.ndjson", 6, "NoDoubleClientOwnership")
    ]
    html = (out / "report" / "report.html").read_text()
    assert "dangling.ndjson" in html
    assert "No such file or directory" in html


def test_standalone_cluster_gives_the_same_results(
    spark: SparkSession, tmp_path: Path, grid_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real ``spark://`` master and worker on loopback (free ports), the project shipped
    as a zip; a master without workers is a bounded wait and exit 2. Last in this module:
    it stops the shared local session (one SparkContext per process at a time)."""
    spark.stop()
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
                "2",
                "--quiet",
            ]
        )
        err = capsys.readouterr().err
        assert code == 2
        assert time.monotonic() - began < 60
        assert err.strip().splitlines()[-1] == (
            f"groupcheck: error: no executor registered with the Spark master {cluster.url} "
            "within 2 s; is a worker running with free cores and memory?"
        )
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
    assert summary["parts"] == 3
    assert summary["computed"] == 3
    assert summary["code"] == ["groupcheck-project.zip/groupcheck"]  # the shipped code ran
    assert pq.read_table(tmp_path / "o" / "parts").equals(plain_python(grid_file, 2))
    assert code == (1 if summary["violations"] else 0)
