"""Timed grids (KIP-1263 sweeps) without Spark: the plan, one-line errors, one cell's run
against the timed simulation called directly, the per-cell aggregation of the report."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from groupcheck.cli import main
from groupcheck.pipeline.errors import PipelineError
from groupcheck.pipeline.grid import load_grid
from groupcheck.pipeline.report import timed_cells
from groupcheck.pipeline.timed_grid import load_timed_grid, parse_timed_grid
from groupcheck.pipeline.timed_runs import timed_one, timed_table, timed_verdict
from groupcheck.pipeline.work import Job, execute_table, findings
from groupcheck.timed.engine import Timing
from groupcheck.timed.scenarios import Kip1263, churn, scale_up

GRID = """\
seeds = [1, 2]
[timed]
members = [2, 6]
assignment_interval_ms = [0, 1000]
assignor_offload = [false, true]
assignor_ms = 5
executor_threads = [1, 2]
"""


def test_timed_grid_makes_the_cross_product(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(GRID, encoding="utf-8")
    plan = load_timed_grid(str(path), None)
    assert len(plan.cells) == 2 * 2 * 2 * 2
    assert tuple(plan.seeds) == (1, 2)
    first, last = plan.cells[0], plan.cells[-1]
    assert (first.scenario, first.members, first.assignment_interval_ms) == ("scale-up", 2, 0)
    assert (first.assignor_offload, first.executor_threads) == (False, 1)
    assert (last.members, last.assignment_interval_ms, last.assignor_offload) == (6, 1000, True)
    assert last.executor_threads == 2
    # fixed and per-scenario defaults
    assert (first.heartbeat_interval_ms, first.assignor_ms, first.partitions_per_member) == (
        5000,
        5.0,
        50,
    )
    assert plan.run(3) == (plan.cells[1], 2)
    assert len({c.label for c in plan.cells}) == len(plan.cells)
    churn_plan = parse_timed_grid({"seed": 0, "timed": {"scenario": "churn", "members": 4}}, 3)
    only = churn_plan.cells[0]
    assert (only.heartbeat_interval_ms, only.assignor_ms) == (250, 20.0)
    assert tuple(churn_plan.seeds) == (0, 1, 2)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"timed": {"members": [2]}, "seeds": [1], "presets": ["TINY"]}, "unknown key 'presets'"),
        ({"seeds": [1]}, "timed: expected a table"),
        ({"timed": {"members": 2, "speed": 1}, "seeds": [1]}, "timed.speed: unknown key"),
        ({"timed": {"assignor_ms": 1}, "seeds": [1]}, "timed.members: missing"),
        ({"timed": {"members": 0}, "seeds": [1]}, "timed.members: expected a value in 1..64"),
        ({"timed": {"members": 2.5}, "seeds": [1]}, "timed.members: expected an integer"),
        ({"timed": {"members": [2, 2]}, "seeds": [1]}, "timed.members: a value is listed twice"),
        ({"timed": {"members": 2, "assignor_offload": 1}, "seeds": [1]}, "expected true or false"),
        ({"timed": {"members": 2, "assignor_ms": -1}, "seeds": [1]}, "timed.assignor_ms"),
        ({"timed": {"members": 2, "executor_threads": 0}, "seeds": [1]}, "executor_threads"),
        ({"timed": {"members": 2, "scenario": "burst"}, "seeds": [1]}, "timed.scenario"),
        ({"timed": {"members": 2, "window_ms": [1, 2]}, "seeds": [1]}, "not a list"),
        ({"timed": {"members": 2}}, "give --runs N"),
        ({"timed": {"members": 2, "groups": [1, 2]}, "seeds": [1]}, "is a churn axis"),
        ({"timed": {"members": 2, "groups": 101}, "seeds": [1]}, "timed.groups"),
        # Config's own check: the broker's max.assignment.interval.ms is 15,000 by default
        (
            {"timed": {"members": 2, "assignment_interval_ms": 20000}, "seeds": [1]},
            "is not valid: ",
        ),
    ],
)
def test_bad_timed_grids_are_one_line_errors(doc: dict[str, object], message: str) -> None:
    with pytest.raises(PipelineError) as e:
        parse_timed_grid(doc, None, "g.toml")
    assert message in str(e.value)
    assert str(e.value).startswith("g.toml")
    assert "\n" not in str(e.value)


def test_bad_timed_grid_on_the_cli_exits_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = tmp_path / "t.toml"
    grid.write_text("seeds = [1]\n[timed]\nmembers = [2, -3]\n", encoding="utf-8")
    out = tmp_path / "out"
    code = main(["pipeline", "timed", "--grid", str(grid), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert "timed.members: expected a value in 1..64" in lines[0]
    assert not out.exists()
    # and an explore grid names the step a timed grid belongs to
    with pytest.raises(PipelineError, match="run it with 'groupcheck pipeline timed'"):
        load_grid(grid, None)


def test_a_timed_cell_is_the_timed_simulation() -> None:
    plan = parse_timed_grid(
        {
            "seeds": [3],
            "timed": {
                "scenario": ["scale-up", "churn"],
                "members": 5,
                "assignment_interval_ms": 1000,
                "assignor_offload": True,
                "assignor_ms": 5,
                "heartbeat_interval_ms": 500,
                "window_ms": 1000,
            },
        },
        None,
    )
    up, load = plan.cells
    timing = Timing(assignor_ms=5.0)
    direct = scale_up(
        members=5, kip1263=Kip1263(1000, True), seed=3, timing=timing, heartbeat_interval_ms=500
    )
    row = timed_one(up, 3)
    assert row.error is None
    assert not row.unfinished
    assert row.rebalance_ms == direct.rebalance_ms is not None
    assert row.assignor_runs == direct.run.measures.assignor_runs > 0
    measured = churn(
        members=5,
        kip1263=Kip1263(1000, True),
        seed=3,
        timing=timing,
        heartbeat_interval_ms=500,
        window_ms=1000.0,
    )
    row = timed_one(load, 3, run=1)
    assert row.rebalance_ms is None
    assert row.coordinator_utilisation == measured.coordinator_utilisation
    assert row.executor_utilisation == measured.executor_utilisation
    assert row.latency_p99_ms == measured.latency_p99_ms
    assert row.heartbeats_per_second == measured.heartbeats_per_second > 0
    # the same rows through the pipeline's unit of work, and their aggregation
    table = execute_table(Job("timed", "-", plan, ()), 0, plan.total)
    assert table.equals(timed_table(plan, 0, plan.total))
    assert findings(table) == 0
    assert timed_verdict(table)["result"] == "ok"
    cells = timed_cells(table)
    assert cells[0]["rebalance_ms_median"] == direct.rebalance_ms
    assert cells[1]["coordinator_utilisation"] == measured.coordinator_utilisation


def test_unfinished_and_crashed_runs_make_the_sweep_inconclusive() -> None:
    plan = parse_timed_grid({"seeds": [1, 2, 3], "timed": {"members": 2}}, None)
    table = timed_table(plan, 0, plan.total)
    rows = table.to_pylist()
    rows[0].update(unfinished=True, rebalance_ms=None, note="did not converge")
    rows[1].update(error="RuntimeError: boom")
    broken = pa.Table.from_pylist(rows, schema=table.schema)
    verdict = timed_verdict(broken)
    assert verdict["result"] == "inconclusive"
    assert (verdict["unfinished"], verdict["errors"]) == (1, 1)
    assert findings(broken) == 1
    (cell,) = timed_cells(broken)
    # median and worst over the finished runs only
    assert cell["runs"] == 3
    assert cell["unfinished"] == 1
    finished = sorted(r["rebalance_ms"] for r in rows if r["rebalance_ms"] is not None)
    assert len(finished) == 2
    assert cell["rebalance_ms_median"] == (finished[0] + finished[1]) / 2
    assert cell["rebalance_ms_max"] == finished[-1]


def test_a_churn_cell_with_groups_sharing_the_coordinator() -> None:
    plan = parse_timed_grid(
        {
            "seeds": [2],
            "timed": {
                "scenario": "churn",
                "members": 3,
                "groups": 3,
                "assignor_offload": True,
                "executor_threads": 1,
                "window_ms": 500,
            },
        },
        None,
    )
    (cell,) = plan.cells
    assert cell.label.endswith(" groups=3")
    row = timed_one(cell, 2)
    direct = churn(
        members=3,
        kip1263=Kip1263(0, True),
        seed=2,
        timing=Timing(executor_threads=1),
        heartbeat_interval_ms=250,
        window_ms=500.0,
        groups=3,
    )
    assert row.groups == 3
    assert row.assignor_wait_mean_ms == direct.assignor_wait_mean_ms
    assert row.assignor_runs_per_second == direct.assignor_runs_per_second > 0
    (summary,) = timed_cells(timed_table(plan, 0, 1))
    assert summary["groups"] == 3
    assert summary["assignor_wait_mean_ms"] == direct.assignor_wait_mean_ms
