"""The output directory without a JVM: parts committed whole or not at all, a job finished
from committed parts, the report, and the CLI's one-line errors for bad input."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from groupcheck.cli import main
from groupcheck.explore.run import replay
from groupcheck.pipeline import store
from groupcheck.pipeline.corpus import byte_parts, plan_corpus
from groupcheck.pipeline.errors import PipelineError
from groupcheck.pipeline.grid import load_grid
from groupcheck.pipeline.verdict import trace_verdict
from groupcheck.pipeline.work import Job, execute_part, run_parts
from groupcheck.validate import validate_file
from model.actions import ACTION_TYPES
from model.path import Path as ModelPath


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def explore_job(grid: Path, out: Path, runs: int, part_size: int | None = None) -> Job:
    """The job ``groupcheck pipeline explore`` would run, with every part computed here."""
    plan = load_grid(grid, runs)
    parts = run_parts(plan.total, part_size)
    store.prepare(out, "explore", plan.to_json(), plan.fingerprint(), parts)
    job = Job("explore", str(out), plan, tuple(parts))
    for i in range(len(parts)):
        execute_part(job, i)
    return job


def test_a_failed_write_leaves_no_part(
    tmp_path: Path, grid_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = load_grid(grid_file, 2)
    parts = run_parts(plan.total, 2)
    store.prepare(tmp_path / "o", "explore", plan.to_json(), plan.fingerprint(), parts)
    job = Job("explore", str(tmp_path / "o"), plan, tuple(parts))

    def half_then_fail(table: object, where: str, **kwargs: object) -> None:
        Path(where).write_bytes(b"PAR1 half a file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq, "write_table", half_then_fail)
    with pytest.raises(OSError, match="No space left"):
        execute_part(job, 1)
    assert list((tmp_path / "o" / "parts").iterdir()) == []
    assert store.done_parts(tmp_path / "o", len(parts)) == set()


def test_committed_parts_finish_without_spark_and_report(
    tmp_path: Path, grid_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    job = explore_job(grid_file, out, runs=8, part_size=5)
    before = {p.name: p.stat().st_mtime_ns for p in (out / "parts").iterdir()}
    assert len(before) == len(job.parts) == 7  # 32 runs in parts of 5
    code, stdout, err = run(
        capsys,
        "pipeline",
        "explore",
        "--grid",
        str(grid_file),
        "--runs",
        "8",
        "--out",
        str(out),
        "--json",
    )
    summary = json.loads(stdout)
    assert (summary["computed"], summary["reused"], summary["runs"]) == (0, 7, 32)
    assert "already committed" in err
    assert summary["violations"] > 0
    assert code == 1
    assert {p.name: p.stat().st_mtime_ns for p in (out / "parts").iterdir()} == before
    assert json.loads((out / "_SUCCESS.json").read_text())["runs"] == 32

    code, stdout, _ = run(capsys, "pipeline", "report", str(out), "--json")
    assert code == 0
    doc = json.loads(stdout)
    report = out / "report"
    assert doc["html"] == str(report / "report.html")
    runs = pq.read_table(out / "parts").to_pylist()
    cells = pq.read_table(report / "cells.parquet").to_pylist()
    assert [c["runs"] for c in cells] == [8, 8, 8, 8]
    assert sum(c["violations"] for c in cells) == summary["violations"]
    assert all(c["violations"] == 0 for c in cells if c["mutant"] is None)

    violations = pq.read_table(report / "violations.parquet").to_pylist()
    assert sum(v["runs"] for v in violations) == summary["violations"]
    for v in violations:  # the shortest counterexample per cell replays to its property
        config = job.plan.cells[v["cell"]].config()
        found = replay(ModelPath.decode(config, v["shortest_path_code"]))
        assert found is not None
        assert v["property"] in {x.property for x in found[0]}
        assert v["shortest_length"] == min(
            r["path_length"]
            for r in runs
            if r["cell"] == v["cell"] and r["violation"] == v["property"]
        )

    convergence = pq.read_table(report / "convergence.parquet").to_pylist()
    assert sum(r["runs"] for r in convergence) == sum(
        1 for r in runs if r["convergence_steps"] is not None
    )

    coverage = pq.read_table(report / "coverage.parquet").to_pylist()
    assert [r["kind"] for r in coverage] == [t.__name__ for t in ACTION_TYPES]
    taken = {a["kind"] for r in runs for a in r["actions"]}
    never = [r["kind"] for r in coverage if r["runs"] == 0]
    assert never
    assert set(never) == {t.__name__ for t in ACTION_TYPES} - taken
    html = (report / "report.html").read_text()
    assert html.count("<svg") >= 3
    assert "Never taken: <b>" + ", ".join(never) + "</b>" in html
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_incomplete_or_foreign_directories_are_refused(
    tmp_path: Path, grid_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    explore_job(grid_file, out, runs=2, part_size=3)  # 8 runs, 3 parts, no _SUCCESS yet
    code, _, err = run(capsys, "pipeline", "report", str(out))
    assert code == 2
    assert err.strip() == (
        f"groupcheck: error: {out}: the explore job is incomplete (3 of 3 parts); "
        "rerun it with the same arguments to finish"
    )
    code, _, err = run(
        capsys, "pipeline", "explore", "--grid", str(grid_file), "--runs", "3", "--out", str(out)
    )
    assert code == 2
    assert "holds the results of 'pipeline explore' with another plan" in err
    assert len(err.strip().splitlines()) == 1
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    code, _, err = run(
        capsys,
        "pipeline",
        "explore",
        "--grid",
        str(grid_file),
        "--runs",
        "1",
        "--out",
        str(foreign),
    )
    assert code == 2
    assert "exists and is not a pipeline output directory" in err
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
    code, _, err = run(capsys, "pipeline", "report", str(tmp_path / "nothing"))
    assert code == 2
    assert "no such output directory" in err


@pytest.mark.parametrize(
    ("grid_text", "suffix", "message"),
    [
        (None, ".toml", "no such grid file"),
        ('{"presets": ["TINY"]', ".json", ":1:21: malformed JSON grid"),
        ('presets = "TINY', ".toml", "malformed TOML grid"),
        (
            '{"presets": ["TINY"], "options": {"reorder": "yes"}}',
            ".json",
            "options.reorder: expected true or false",
        ),
    ],
)
def test_cli_bad_grid_is_one_line_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    grid_text: str | None,
    suffix: str,
    message: str,
) -> None:
    grid = tmp_path / f"grid{suffix}"
    if grid_text is not None:
        grid.write_text(grid_text)
    code, out, err = run(
        capsys,
        "pipeline",
        "explore",
        "--grid",
        str(grid),
        "--runs",
        "2",
        "--out",
        str(tmp_path / "o"),
    )
    assert code == 2
    assert out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(f"groupcheck: error: {grid}")
    assert message in line
    assert not (tmp_path / "o").exists()


def test_unreachable_master_fails_fast(
    tmp_path: Path, grid_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out, err = run(
        capsys,
        "pipeline",
        "explore",
        "--grid",
        str(grid_file),
        "--runs",
        "1",
        "--out",
        str(tmp_path / "o"),
        "--master",
        f"spark://127.0.0.1:{port}",
        "--quiet",
    )
    assert code == 2
    assert out == ""
    assert err.strip() == (
        f"groupcheck: error: cannot reach the Spark master spark://127.0.0.1:{port}: "
        f"127.0.0.1:{port} (Connection refused); is the master running and the address right?"
    )
    assert not (tmp_path / "o").exists()  # probed before the output directory is made


def test_bad_master_url_and_missing_traces(
    tmp_path: Path, grid_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        capsys,
        "pipeline",
        "explore",
        "--grid",
        str(grid_file),
        "--runs",
        "1",
        "--out",
        str(tmp_path / "o"),
        "--master",
        "mesos://x:1",
    )
    assert code == 2
    assert "--master 'mesos://x:1': not a Spark master URL" in err
    assert not (tmp_path / "o").exists()
    code, _, err = run(
        capsys,
        "pipeline",
        "validate",
        "--traces",
        str(tmp_path / "*.ndjson"),
        "--out",
        str(tmp_path / "v"),
    )
    assert code == 2
    assert "matches no file" in err
    code, _, err = run(capsys, "pipeline")
    assert code == 2
    assert "choose a step" in err


def test_corpus_plan_and_per_file_verdicts(corpus: dict[str, str], tmp_path: Path) -> None:
    plan = plan_corpus([str(tmp_path / "corpus" / "**" / "*.ndjson")])
    assert list(plan.files) == sorted(corpus)
    verdicts = {name: validate_file(name, "safety", 100, "auto") for name in plan.files}
    assert {n: trace_verdict(r.result, r.notes) for n, r in verdicts.items()} == corpus
    errors = {Path(n).name: r.error for n, r in verdicts.items() if r.error}
    assert errors["dir.ndjson"].endswith("Is a directory")
    assert errors["dangling.ndjson"].endswith("No such file or directory")
    assert "not UTF-8" in errors["latin1.ndjson"]
    assert errors["broken.ndjson"].startswith(str(tmp_path / "corpus" / "broken.ndjson") + ":2:")
    (finding,) = verdicts[str(tmp_path / "corpus" / "double.ndjson")].violations
    assert (finding.line, finding.property) == (6, "Observed.NoDoubleOwnership")


def test_byte_parts_cover_the_corpus() -> None:
    sizes = [10, 5_000_000, 1, -1, 70_000, 0] * 50
    parts = byte_parts(sizes)
    assert [i for a, b in parts for i in range(a, b)] == list(range(len(sizes)))
    assert all(b - a <= 256 for a, b in parts)
    assert byte_parts([100] * 1000) == [(0, 256), (256, 512), (512, 768), (768, 1000)]


def test_prepare_twice_keeps_the_manifest(tmp_path: Path) -> None:
    m1 = store.prepare(tmp_path / "o", "validate", {"x": 1}, "abc", [(0, 2)])
    (tmp_path / "o" / "parts" / ".part-00000.parquet.123.tmp").write_bytes(b"junk")
    m2 = store.prepare(tmp_path / "o", "validate", {"x": 1}, "abc", [(0, 2)])
    assert m1 == m2
    assert list((tmp_path / "o" / "parts").iterdir()) == []  # a dead job's temporary is gone
    with pytest.raises(PipelineError, match="another plan"):
        store.prepare(tmp_path / "o", "validate", {"x": 1}, "abd", [(0, 2)])


def test_a_job_that_fails_before_any_part_leaves_nothing(
    tmp_path: Path,
    grid_file: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Spark failing to start (or to reach an executor, or to import the project in its
    workers) after the output directory was made: the directory goes again, so a rerun with
    any arguments starts from nothing; committed parts of an earlier run are kept."""
    from contextlib import contextmanager

    import groupcheck.pipeline.spark as spark_module

    @contextmanager
    def no_spark(*args: object, **kwargs: object) -> Iterator[None]:
        raise PipelineError("cannot start Spark with master local[*]: no Java runtime")
        yield

    monkeypatch.setattr(spark_module, "session", no_spark)
    args = ["pipeline", "explore", "--grid", str(grid_file), "--runs", "1", "--quiet"]
    code, out, err = run(capsys, *args, "--out", str(tmp_path / "new"))
    assert code == 2
    assert out == ""
    assert err == "groupcheck: error: cannot start Spark with master local[*]: no Java runtime\n"
    assert not (tmp_path / "new").exists()

    empty = tmp_path / "empty"  # made by the user: kept, and left empty
    empty.mkdir()
    assert run(capsys, *args, "--out", str(empty))[0] == 2
    assert list(empty.iterdir()) == []

    started = tmp_path / "started"  # one part committed by an earlier run: resumable
    explore_job(grid_file, started, runs=1, part_size=1)
    (started / "parts" / "part-00001.parquet").unlink()
    assert run(capsys, *args, "--out", str(started))[0] == 2
    assert (started / store.MANIFEST).exists()
    assert len(store.done_parts(started, 4)) == 3


def test_report_says_what_it_leaves_out(
    tmp_path: Path,
    corpus: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Charts and tables cut to a maximum say how many rows they leave out, and where the
    rest is."""
    from groupcheck.pipeline import report

    monkeypatch.setattr(report, "MAX_BARS", 1)
    monkeypatch.setattr(report, "MAX_HISTOGRAMS", 1)
    monkeypatch.setattr(report, "MAX_TRACE_ROWS", 2)
    grid = tmp_path / "two.json"  # two cells, each finding the mutant within 6 seeds
    grid.write_text(
        json.dumps(
            {
                "presets": ["TINY"],
                "mutants": ["revoke-without-waiting"],
                "options": {"reorder": [False, True]},
            }
        )
    )
    out = tmp_path / "o"
    explore_job(grid, out, runs=6)
    assert (
        run(capsys, "pipeline", "explore", "--grid", str(grid), "--runs", "6", "--out", str(out))[0]
        == 1
    )
    html = report.build_report(out).read_text()
    violations = pq.read_table(out / "report" / "violations.parquet").to_pylist()
    assert len(violations) >= 2
    assert f"… and {len(violations) - 1} more: only 1 of {len(violations)} rows" in html
    assert "… and 1 more: only 1 of 2 cells have a histogram" in html
    top = max(violations, key=lambda v: v["runs"])
    chart = html.split("per grid cell</text>")[1].split("</svg>")[0]
    assert chart.count("<rect") == 1
    assert f"{top['config']} · {top['property']}" in chart

    plan = plan_corpus([str(tmp_path / "corpus" / "**" / "*.ndjson")])
    parts = byte_parts(plan.sizes)
    checks = tmp_path / "v"
    store.prepare(checks, "validate", plan.to_json(), plan.fingerprint(), parts)
    job = Job("validate", str(checks), plan, tuple(parts))
    for i in range(len(parts)):
        execute_part(job, i)
    pattern = str(tmp_path / "corpus" / "**" / "*.ndjson")
    # A violation (double.ndjson) comes before malformed traces (exitcodes.worst).
    assert run(capsys, "pipeline", "validate", "--traces", pattern, "--out", str(checks))[0] == 1
    html = report.build_report(checks).read_text()
    bad = sum(1 for v in corpus.values() if v != "ok")
    assert f"… and {bad - 2} more: only 2 of {bad} traces that are not ok are listed" in html

    monkeypatch.setattr(report, "MAX_TRACE_ROWS", 500)
    assert "more:" not in report.build_report(checks).read_text()


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1", "3601"])
def test_connect_timeout_is_a_bounded_number_of_seconds(
    tmp_path: Path, grid_file: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    args = ["pipeline", "explore", "--grid", str(grid_file), "--runs", "1"]
    code, out, err = run(capsys, *args, "--out", str(tmp_path / "o"), f"--connect-timeout={value}")
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith("groupcheck pipeline explore: argument --connect-timeout: expected")
    assert not (tmp_path / "o").exists()


def test_a_damaged_part_is_bad_input_naming_it(
    tmp_path: Path, grid_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 42: ``pipeline report`` on a damaged Parquet part was an internal error."""
    out = tmp_path / "o"
    explore_job(grid_file, out, runs=1, part_size=8)
    run(
        capsys,
        "pipeline",
        "explore",
        "--grid",
        str(grid_file),
        "--runs",
        "1",
        "--out",
        str(out),
        "--quiet",
        "--json",
    )
    part = sorted((out / "parts").iterdir())[0]
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])
    code, _stdout, err = run(capsys, "pipeline", "report", str(out))
    assert code == 2, err
    assert err.count("\n") == 1
    assert err.startswith(f"groupcheck: error: {part}: not a readable result part")


def test_a_malformed_trace_in_a_corpus_is_named(
    corpus: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 42: a corpus with a garbage file said inconclusive without naming it. The
    parts are computed here (no JVM); the command finishes the job from them."""
    from groupcheck.pipeline.corpus import byte_parts

    garbage = tmp_path / "only" / "garbage.ndjson"
    garbage.parent.mkdir()
    garbage.write_bytes(b"\xff\xfe not a trace\n")
    good = next(name for name, verdict in corpus.items() if verdict == "ok")
    (tmp_path / "only" / "good.ndjson").write_bytes(Path(good).read_bytes())
    pattern = str(tmp_path / "only" / "*.ndjson")
    plan = plan_corpus([pattern])
    parts = byte_parts(plan.sizes)
    out = tmp_path / "v"
    store.prepare(out, "validate", plan.to_json(), plan.fingerprint(), parts)
    job = Job("validate", str(out), plan, tuple(parts))
    for i in range(len(parts)):
        execute_part(job, i)
    code, stdout, err = run(
        capsys, "pipeline", "validate", "--traces", pattern, "--out", str(out), "--quiet", "--json"
    )
    assert code == 2
    summary = json.loads(stdout)
    assert summary["ok"] == 1
    assert summary["malformed"] == 1
    assert str(garbage) in summary["reasons"][0]
    assert err.count("\n") == 1
    assert err.startswith(f"groupcheck: error: {garbage}:1:1: not UTF-8")
