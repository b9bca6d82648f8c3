"""Issue 42: a Convergence violation is claimed only when shown — a fair loop or a stuck
state — in replay, minimisation and lifting (``groupcheck.explore.minimise``) and the
Spark pipeline's BFS tasks and runs (without starting Spark); a fair schedule its bound
cut shows nothing, and the verdict is inconclusive with the bound named. Each case here
was a Convergence violation before."""

from __future__ import annotations

import json
import pickle
from dataclasses import replace
from pathlib import Path as FsPath

import pytest

from groupcheck.cli import main
from invariants import liveness
from model import system
from model.config import Config
from model.presets import preset
from model.settings import config_to_toml


def _tiny() -> Config:
    """TINY with no perturbations: every state is checked for Convergence."""
    return replace(preset("TINY"), max_perturbations=0)


def test_replay_and_minimisation_claim_convergence_only_when_shown() -> None:
    from groupcheck.explore.minimise import first_violations, minimise_path, replay_verdict

    tiny = _tiny()
    found, undecided = replay_verdict(tiny, (), check_convergence=True, bound=3)
    assert found is None  # before: a Convergence violation after a cut schedule
    assert undecided is not None
    assert (undecided.bound, undecided.shown) == (3, False)
    # minimise and lift accept a candidate only through first_violations: a cut schedule
    # is no counterexample, so a minimised path keeps showing its loop.
    assert first_violations(tiny, (), check_convergence=True, bound=3) is None
    assert first_violations(tiny, (), check_convergence=True) is None  # it converges

    from groupcheck.explore.bfs import bfs
    from groupcheck.mutants import MUTANTS

    looping = MUTANTS["reject-epoch-zero-rejoin"].mutated_config()
    out = bfs(looping, max_states=3000, stop_on="Convergence")
    assert out.path is not None
    small = minimise_path(out.path, "Convergence")
    again = first_violations(looping, small.actions, check_convergence=True)
    assert again is not None
    assert "Shown: the fair schedule loops without converging" in again[0][0].message
    lasso = liveness.fair_loop(small.final(), looping)
    assert lasso is not None
    assert lasso.shown
    assert lasso.loop


def test_replay_of_a_large_group_whose_bound_ran_out_is_inconclusive(
    capsys: pytest.CaptureFixture[str], tmp_path: FsPath, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's case: a fixed bound of 400 fair steps (steps per client set to 1 here)
    and a group of 45 members, which needs 483: the schedule is cut while the group is
    still forming. Before: "violation" after a one-step path; now inconclusive, naming
    the bound."""
    monkeypatch.setattr(liveness, "STEPS_PER_CLIENT", 1)
    base = preset("SMALL")
    clients = tuple(replace(base.clients[0], name=f"c{i}") for i in range(45))
    config = replace(base, name="SMALL45", clients=clients, max_perturbations=0)
    file = tmp_path / "large.toml"
    file.write_text(config_to_toml(config), encoding="utf-8")
    code = main(["replay", "--config", str(file), "--path", "0", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 3
    assert doc["result"] == "inconclusive"
    assert doc["violations"] == []
    (reason,) = doc["not_checked"]
    assert "its bound of 400 fair steps" in reason
    code = main(["replay", "--config", str(file), "--path", "0"])
    text = capsys.readouterr().out
    assert code == 3
    assert "inconclusive: not checked: Convergence from 1 state(s)" in text


def test_pipeline_bfs_task_counts_a_cut_schedule_as_undecided() -> None:
    import pyarrow as pa

    from groupcheck.pipeline import bfs_tasks

    tiny = _tiny()
    blob = pickle.dumps(tiny, protocol=pickle.HIGHEST_PROTOCOL)
    (first,) = bfs_tasks.initial(blob, True, iter(()))
    out = pa.Table.from_batches(
        list(bfs_tasks.expand(blob, True, False, iter([first]), bound=3))
    ).to_pylist()
    properties = [r["property"] for r in out]
    assert "Convergence" not in properties  # before: a Convergence event
    (cut,) = [r for r in out if r["property"] == bfs_tasks.UNDECIDED]
    assert (cut["action"], cut["message"]) == (1, "3")
    # With the default bound the schedule converges: no event, no undecided row.
    out = pa.Table.from_batches(
        list(bfs_tasks.expand(blob, True, False, iter([first])))
    ).to_pylist()
    assert not [r for r in out if r["property"] in ("Convergence", bfs_tasks.UNDECIDED)]


def test_pipeline_run_leaves_a_cut_schedule_unmeasured() -> None:
    from groupcheck.pipeline.runs import RunRow, Trajectory, _hypothesis_convergence

    tiny = _tiny()
    row = RunRow(0, 0, "TINY", "TINY", None, "hypothesis", "{}", 0)
    trajectories = [Trajectory(last=system.initial(tiny))]
    assert _hypothesis_convergence(tiny, trajectories, row, bound=3) is None
    assert row.converged is None  # before: converged False and a Convergence violation
    assert _hypothesis_convergence(tiny, trajectories, row) is None
    assert row.converged is True
    assert row.convergence_steps is not None
    assert row.convergence_steps > 3


def test_a_walk_cut_by_its_bound_is_not_a_converged_run() -> None:
    from groupcheck.explore.walk import walk

    res = walk(_tiny(), seed=0, walks=2, max_steps=3, convergence_bound=3)
    assert res.result == "inconclusive"
    assert res.convergence_undecided == 2


def test_a_sweep_with_an_undecided_run_is_inconclusive() -> None:
    from groupcheck.pipeline.runs import RunRow, rows_table
    from groupcheck.pipeline.verdict import explore_verdict

    def row(run: int, converged: bool | None) -> RunRow:
        r = RunRow(run, 0, "TINY", "TINY", None, "walk", "{}", run, converged=converged)
        r.witnesses = ["GroupConverges"]
        return r

    required = {0: {"GroupConverges"}}
    decided = explore_verdict(rows_table([row(0, True), row(1, True)]), {0: "TINY"}, required)
    assert decided["result"] == "ok"
    table = rows_table([row(0, True), row(1, None)])
    summary = explore_verdict(table, {0: "TINY"}, required)
    assert summary["result"] == "inconclusive"  # before: ok
    assert summary["reasons"] == [
        "1 runs left Convergence undecided: the fair schedule's bound cut it without "
        "showing a fair loop or a stuck state"
    ]
