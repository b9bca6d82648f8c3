"""One run of a sweep: its metrics agree with the engines' own counts and witnesses, a
violation's path code replays to the violation, and a run depends only on (cell, seed)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path as FsPath

import pytest

from groupcheck.explore.run import replay
from groupcheck.pipeline.grid import parse_grid
from groupcheck.pipeline.runs import RunRow, rows_table, run_one, run_schema
from model.actions import ACTIONS_BY_KIND
from model.path import Path


def consistent(row: RunRow) -> None:
    """Metrics that two independent sources must agree on."""
    assert row.error is None
    # every step the engine counted went through the metrics checker, once
    assert sum(a["count"] for a in row.actions) == row.steps
    assert all(a["kind"] in ACTIONS_BY_KIND for a in row.actions)
    # the witnesses (invariants/liveness.py) see the same transitions the metrics count
    assert ("RevocationCompletes" in row.witnesses) == (row.revocations > 0)
    assert ("WaitsOnUnreleasedPartitions" in row.witnesses) == (row.longest_unreleased_wait > 0)
    if row.violation is None:
        assert row.converged is True
        assert row.convergence_steps is not None
        assert row.convergence_steps >= 0
    assert row.longest_unreleased_wait <= row.steps


def test_walk_metrics_agree_with_the_engine() -> None:
    plan = parse_grid({"presets": ["SMALL", "STATIC"]}, 25)
    rows = [run_one(plan, i) for i in range(plan.total)]
    for row in rows:
        consistent(row)
        assert row.examples == 1
        assert 0 < row.steps <= 60
    # the sweep is not vacuous: revocations and waits happen in some runs
    assert any(r.revocations for r in rows)
    assert any(r.longest_unreleased_wait for r in rows)
    assert any(r.convergence_steps for r in rows)


def test_hypothesis_metrics_agree_with_the_engine() -> None:
    plan = parse_grid(
        {
            "presets": ["TINY"],
            "engines": ["hypothesis"],
            "hypothesis": {"examples": 4, "steps": 15},
        },
        2,
    )
    rows = [run_one(plan, i) for i in range(plan.total)]
    for row in rows:
        consistent(row)
        assert row.examples >= 4
    # the seed changes what the run does, not only the row's run and seed columns
    metrics = [{k: v for k, v in asdict(r).items() if k not in ("run", "seed")} for r in rows]
    assert metrics[0] != metrics[1]


def test_violation_path_code_replays_to_the_violation() -> None:
    plan = parse_grid({"presets": ["TINY"], "mutants": ["revoke-without-waiting"]}, 10)
    rows = [run_one(plan, i) for i in range(plan.total)]
    bad = [r for r in rows if r.violation is not None]
    assert bad, "the mutant is found within 10 seeded walks"
    for row in bad:
        assert row.path_code
        assert row.path_length is not None
        assert row.found_length is not None
        assert row.path_length <= row.found_length
        path = Path.decode(plan.cells[row.cell].config(), row.path_code)
        assert len(path.actions) == row.path_length
        found = replay(path)
        assert found is not None
        assert row.violation in {v.property for v in found[0]}


def test_a_crash_is_recorded_for_that_run(monkeypatch: pytest.MonkeyPatch) -> None:
    import groupcheck.pipeline.runs as runs_module  # where run_one looks walk up

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("model crashed")

    monkeypatch.setattr(runs_module, "walk", boom)
    row = run_one(parse_grid({"presets": ["TINY"]}, 1), 0)
    assert row.error == "RuntimeError: model crashed"
    assert row.violation is None


_CHILD = """
import json, sys
from dataclasses import asdict
from pathlib import Path as FsPath
from groupcheck.pipeline.grid import parse_grid
from groupcheck.pipeline.runs import run_one
plan = parse_grid(json.loads(sys.argv[1]), 6)
print(json.dumps([asdict(run_one(plan, i)) for i in range(plan.total)]))
"""


def test_same_seed_same_row_in_another_process() -> None:
    """Rows depend on (cell, seed) only: not on the process, its hash seed, or what ran
    before in it."""
    grid = {
        "presets": ["SMALL", "LOSSY"],
        "engines": ["walk", "hypothesis"],
        "hypothesis": {"examples": 3, "steps": 10},
    }
    plan = parse_grid(grid, 6)
    here = [asdict(run_one(plan, i)) for i in reversed(range(plan.total))][::-1]
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(grid)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    assert json.loads(out.stdout) == json.loads(json.dumps(here))


def test_hypothesis_runs_do_not_depend_on_imported_modules(
    tmp_path: FsPath, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hypothesis may draw integers from the literals of imported local modules; a module
    imported between two runs (a CLI, a test, a Spark worker import different ones) must
    not change a seeded run."""
    plan = parse_grid(
        {
            "presets": ["TINY"],
            "engines": ["hypothesis"],
            "hypothesis": {"examples": 3, "steps": 12},
        },
        8,
    )
    before = [run_one(plan, i) for i in range(plan.total)]
    (tmp_path / "pipeline_literals.py").write_text(
        "LIMITS = [" + ", ".join(str(n) for n in range(100, 255, 3)) + "]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("pipeline_literals")
    assert [run_one(plan, i) for i in range(plan.total)] == before


def test_rows_table_has_the_schema() -> None:
    plan = parse_grid({"presets": ["TINY"]}, 3)
    table = rows_table([run_one(plan, i) for i in range(3)])
    assert table.schema == run_schema()
    assert table.column("run").to_pylist() == [0, 1, 2]
    assert table.column("seed").to_pylist() == [0, 1, 2]


def test_classic_presets_run_in_a_sweep() -> None:
    plan = parse_grid({"presets": ["CLASSIC_COOPERATIVE", "UPGRADE_ONE_BOUNCE"]}, 6)
    rows = [run_one(plan, i) for i in range(plan.total)]
    for row in rows:
        consistent(row)
        assert 0 < row.steps <= 60
    assert {r.preset for r in rows} == {"CLASSIC_COOPERATIVE", "UPGRADE_ONE_BOUNCE"}
    # KIP-848's revocation bookkeeping does not exist in a classic group
    assert all(r.revocations == 0 and r.longest_unreleased_wait == 0 for r in rows)
    assert any(r.converged for r in rows)
