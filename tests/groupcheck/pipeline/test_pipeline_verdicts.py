"""Three-way results of pipeline jobs (ok / violation / inconclusive, with reasons), their
exit statuses, and the report that shows them — without a JVM: the parts are computed in
this process, and the CLI then finds every part committed and only sums them up."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from groupcheck.cli import main
from groupcheck.pipeline import runs as runs_module
from groupcheck.pipeline import store
from groupcheck.pipeline.corpus import byte_parts, plan_corpus
from groupcheck.pipeline.grid import load_grid
from groupcheck.pipeline.verdict import trace_verdict, validate_verdict
from groupcheck.pipeline.work import Job, execute_part, run_parts
from invariants.liveness import WITNESSES
from model.presets import PRESETS
from reports.publish import MARKER

ALL_WITNESSES = [w.prop.name for w in WITNESSES if w.applies(PRESETS["TINY"])]
"""The witnesses TINY's cells must hit (the ones its config can show)."""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def grid(tmp_path: Path, doc: dict[str, object], name: str = "g.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def explore(
    capsys: pytest.CaptureFixture[str], grid_path: Path, out: Path, runs: int, *extra: str
) -> tuple[int, str, str]:
    """Compute every part here, then run ``pipeline explore`` on the finished parts."""
    plan = load_grid(grid_path, runs)
    parts = run_parts(plan.total)
    store.prepare(out, "explore", plan.to_json(), plan.fingerprint(), parts)
    job = Job("explore", str(out), plan, tuple(parts))
    for i in range(len(parts)):
        execute_part(job, i)
    args = ["pipeline", "explore", "--grid", str(grid_path), "--runs", str(runs)]
    return run(capsys, *args, "--out", str(out), "--quiet", *extra)


def validate(
    capsys: pytest.CaptureFixture[str], patterns: list[str], out: Path, *extra: str
) -> tuple[int, str, str]:
    """Validate every part here, then run ``pipeline validate`` on the finished parts."""
    settle = int(extra[extra.index("--settle") + 1]) if "--settle" in extra else 100
    plan = plan_corpus(patterns, "safety", settle)
    parts = byte_parts(plan.sizes)
    store.prepare(out, "validate", plan.to_json(), plan.fingerprint(), parts)
    job = Job("validate", str(out), plan, tuple(parts))
    for i in range(len(parts)):
        execute_part(job, i)
    traces = [a for p in patterns for a in ("--traces", p)]
    return run(capsys, "pipeline", "validate", *traces, "--out", str(out), "--quiet", *extra)


# --------------------------------------------------------------------------- explore


def test_explore_is_ok_when_every_cell_hits_every_witness(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = explore(capsys, grid(tmp_path, {"presets": ["LOSSY"]}), tmp_path / "o", 8)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[1] == "  result: ok"
    assert "  runs with a violation: 0" in lines


def test_explore_is_inconclusive_when_a_cell_misses_a_witness(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three-step walks of TINY hit no witness at all: nothing was violated, but nothing
    says the runs did anything either."""
    doc = {"presets": ["TINY", "LOSSY"], "walk": {"max_steps": 3}}
    code, out, err = explore(capsys, grid(tmp_path, doc), tmp_path / "o", 2, "--json")
    assert (code, err) == (3, "")
    summary = json.loads(out)
    assert summary["result"] == "inconclusive"
    assert summary["violations"] == summary["errors"] == 0
    missed = {m["config"]: m["missed"] for m in summary["missed_witnesses"]}
    assert missed["TINY walk"] == ALL_WITNESSES
    assert summary["reasons"][0] == (
        "2 of 2 cells missed SOMETIMES witnesses (their runs may be vacuous)"
    )
    assert f"TINY walk: missed {', '.join(ALL_WITNESSES)}" in summary["reasons"]
    success = json.loads((tmp_path / "o" / store.SUCCESS).read_text())
    assert (success["result"], success["reasons"]) == (summary["result"], summary["reasons"])


def test_explore_names_at_most_max_reasons_cells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from groupcheck.pipeline import verdict

    monkeypatch.setattr(verdict, "MAX_REASONS", 1)
    doc = {"presets": ["TINY"], "options": {"reorder": [False, True]}, "walk": {"max_steps": 2}}
    code, out, _ = explore(capsys, grid(tmp_path, doc), tmp_path / "o", 1, "--json")
    summary = json.loads(out)
    assert code == 3
    assert len(summary["missed_witnesses"]) == 2
    assert summary["reasons"][1].startswith("TINY walk reorder=false: missed ")
    assert summary["reasons"][2] == "… and 1 more cells (missed_witnesses lists them all)"


def test_a_run_that_raised_is_an_internal_error_unless_a_run_found_a_violation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = runs_module._run

    def crash_on_seed_1(plan: object, cell: object, seed: int, row: object) -> None:
        if seed == 1:
            raise RuntimeError("the model fell over")
        real(plan, cell, seed, row)  # type: ignore[arg-type]

    monkeypatch.setattr(runs_module, "_run", crash_on_seed_1)
    code, out, err = explore(capsys, grid(tmp_path, {"presets": ["LOSSY"]}), tmp_path / "o", 3)
    assert code == 4
    assert err == (
        "groupcheck: internal error: 1 runs raised an error (a model crash, an internal "
        "error); the first: LOSSY walk seed 1: RuntimeError: the model fell over\n"
    )
    assert "  result: inconclusive" in out.splitlines()
    assert "  runs that raised an error: 1" in out.splitlines()

    doc = {"presets": ["TINY"], "mutants": ["revoke-without-waiting"]}
    code, out, err = explore(capsys, grid(tmp_path, doc, "m.json"), tmp_path / "m", 6, "--json")
    summary = json.loads(out)
    assert (summary["result"], summary["errors"]) == ("violation", 1)
    assert summary["violations"] > 0
    assert summary["reasons"] == []
    assert (code, err) == (1, "")


def test_runs_beyond_the_limit_are_one_line_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = grid(tmp_path, {"presets": ["TINY"]})
    out = tmp_path / "o"
    args = ["pipeline", "explore", "--grid", str(path), "--out", str(out)]
    code, stdout, err = run(capsys, *args, "--runs", "99999999999999999999")
    assert (code, stdout) == (2, "")
    assert err == (
        "groupcheck: error: --runs: at most 10,000,000 runs per cell, "
        "got 99,999,999,999,999,999,999\n"
    )
    assert not out.exists()


# --------------------------------------------------------------------------- validate


def test_validate_counts_inconclusive_traces_and_exits_by_the_worst(
    tmp_path: Path, corpus: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "corpus"
    walks = [str(root / "valid-*.ndjson"), str(root / "nested" / "valid-*.ndjson")]
    # 160 events each (158 after the join): with --settle 1000 convergence is not checked.
    code, out, _ = validate(capsys, walks, tmp_path / "a", "--settle", "1000", "--json")
    summary = json.loads(out)
    assert code == 3
    assert (summary["ok"], summary["inconclusive"], summary["result"]) == (0, 6, "inconclusive")
    (reason,) = summary["reasons"]
    assert reason.startswith("6 traces are inconclusive; the first: ")
    assert (
        "Observed.Convergence not checked: only 158 events follow the last perturbation" in reason
    )

    code, out, _ = validate(capsys, walks, tmp_path / "b", "--settle", "5", "--json")
    summary = json.loads(out)
    assert (code, summary["result"], summary["ok"], summary["reasons"]) == (0, "ok", 6, [])

    broken = [*walks, str(root / "broken.ndjson")]
    code, out, err = validate(capsys, broken, tmp_path / "c", "--settle", "5")
    assert code == 2
    assert "  result: inconclusive" in out.splitlines()
    named = "    1 traces are malformed or unreadable (not validated); the first: "
    assert named + str(root / "broken.ndjson") + ":" in out
    assert err.splitlines()[-1].startswith(f"groupcheck: error: {root / 'broken.ndjson'}:")
    assert "  ok 6, with violations 0, inconclusive 0, malformed or unreadable 1" in out

    double = [*broken, str(root / "double.ndjson")]
    code, out, _ = validate(capsys, double, tmp_path / "d", "--settle", "5", "--json")
    summary = json.loads(out)
    assert (code, summary["result"], summary["with_violations"]) == (1, "violation", 1)


def test_trace_verdicts_in_either_spelling() -> None:
    assert trace_verdict("valid") == trace_verdict("ok") == "ok"
    assert trace_verdict("valid", ["f: convergence inconclusive: only 3 events"]) == "inconclusive"
    assert trace_verdict("violations") == trace_verdict("violation") == "violation"
    assert trace_verdict("inconclusive") == "inconclusive"
    assert trace_verdict("malformed") == "malformed"
    with pytest.raises(ValueError, match="unknown trace verdict 'maybe'"):
        trace_verdict("maybe")
    finding = pa.struct([("line", pa.int64()), ("property", pa.string()), ("message", pa.string())])
    old_and_new = pa.table(
        {
            "result": ["valid", "valid", "violations", "malformed", "ok", "inconclusive"],
            "notes": [[], ["x: convergence inconclusive"], [], [], [], []],
            "violations": pa.array(
                [[], [], [{"line": 2, "property": "P", "message": "m"}], [], [], []],
                pa.list_(finding),
            ),
        }
    )
    summary = validate_verdict(old_and_new)
    counts = [summary[k] for k in ("ok", "with_violations", "inconclusive", "malformed")]
    assert counts == [2, 1, 2, 1]
    assert summary["by_property"] == {"P": 1}
    assert summary["result"] == "violation"


# --------------------------------------------------------------------------- report


def test_report_shows_the_result_and_is_published_atomically(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = {"presets": ["TINY"], "walk": {"max_steps": 3}}
    out = tmp_path / "o"
    assert explore(capsys, grid(tmp_path, doc), out, 2)[0] == 3
    report = out / "report"

    # A report directory groupcheck did not write is refused, and left as it is.
    report.mkdir()
    (report / "mine.txt").write_text("keep me")
    code, stdout, err = run(capsys, "pipeline", "report", str(out))
    assert (code, stdout) == (2, "")
    assert err == (
        f"groupcheck: error: {report}: exists, is not empty and was not written by "
        "groupcheck; choose a new or empty directory\n"
    )
    assert [p.name for p in report.iterdir()] == ["mine.txt"]
    (report / "mine.txt").unlink()

    # A report written before reports were marked (only report files in it) is replaced.
    (report / "report.html").write_text("old")
    (report / "cells.parquet").write_bytes(b"old")
    code, stdout, err = run(capsys, "pipeline", "report", str(out), "--json")
    assert code == 0
    # Never silently: the one line says which earlier output was replaced.
    assert err.startswith(f"groupcheck: note: replaced {report}"), err
    assert err.count("\n") == 1
    doc_out = json.loads(stdout)
    assert doc_out["result"] == "inconclusive"
    assert doc_out["reasons"][1] == f"TINY walk: missed {', '.join(ALL_WITNESSES)}"
    assert (report / MARKER).is_file()
    html = (report / "report.html").read_text()
    assert '<p>Result: <b style="color:#b70">inconclusive</b></p>' in html
    assert f"<li>TINY walk: missed {', '.join(ALL_WITNESSES)}</li>" in html

    # Again: the previous report is exchanged for the new one; nothing is left beside it.
    code, stdout, _ = run(capsys, "pipeline", "report", str(out))
    assert code == 0
    assert stdout.splitlines()[1:4] == [
        "  result: inconclusive",
        "    1 of 1 cells missed SOMETIMES witnesses (their runs may be vacuous)",
        f"    TINY walk: missed {', '.join(ALL_WITNESSES)}",
    ]
    assert not [p for p in out.iterdir() if p.name.startswith(".")]
    assert sorted(p.name for p in report.iterdir()) == sorted(
        [
            MARKER,
            "report.html",
            *(
                f"{n}.parquet"
                for n in ("cells", "violations", "convergence", "coverage", "witnesses")
            ),
        ]
    )
