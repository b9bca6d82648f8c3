"""Rebalance time as a checked quantity: the worst case under BFS, a distribution under
walks, a declared bound (``RebalanceTimeBound``) and a slower rule change as a finding."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.explore.bfs import bfs
from groupcheck.explore.minimise import first_violations
from groupcheck.explore.rebalance import RebalanceTimes
from groupcheck.explore.run import explore
from groupcheck.explore.walk import walk
from groupcheck.rulesfile import load_rules, with_rules
from model.config import ClientSpec, Config

JOIN = Config(
    kafka_version="4.2",
    name="JOIN",
    topics=(("foo", 2),),
    clients=(ClientSpec("A", ("foo",)), ClientSpec("B", ("foo",), subscribed=False)),
    max_perturbations=1,
    perturbations=frozenset({"Subscribe"}),
    required_witnesses=("RevocationCompletes", "WaitsOnUnreleasedPartitions", "GroupConverges"),
)
"""A settles alone or with B joining at any moment."""

LATE_ACK = Path(__file__).parent / "data" / "late_ack_rules.py"


def test_bfs_measures_the_worst_rebalance() -> None:
    times = RebalanceTimes()
    result = bfs(JOIN, rebalance=times)
    assert result.result == "ok"
    assert times.worst is not None
    assert times.starts > 1  # the initial state and every state B's join leads to
    assert sum(times.histogram.values()) == times.starts - times.unconverged
    assert times.worst.steps == max(times.histogram)
    assert times.worst.rounds >= 2  # a revocation takes heartbeats from both clients
    assert times.worst_actions is not None
    assert times.worst_actions[-1].kind == "Subscribe"


def test_walks_give_a_distribution() -> None:
    times = RebalanceTimes()
    walk(JOIN, seed=1, walks=80, max_steps=30, rebalance=times)
    assert times.starts == 80
    median, p95 = times.quantile(0.5), times.quantile(0.95)
    assert median is not None
    assert p95 is not None
    assert median <= p95 <= max(times.histogram)


def test_a_declared_bound_is_checked() -> None:
    times = RebalanceTimes()
    bfs(JOIN, rebalance=times)
    assert times.worst is not None
    worst = times.worst.steps
    assert bfs(replace(JOIN, max_rebalance_steps=worst)).result == "ok"
    tight = replace(JOIN, max_rebalance_steps=worst - 1)
    result = bfs(tight)
    assert result.property == "RebalanceTimeBound"
    assert f"needs {worst} fair steps" in (result.message or "")
    assert result.path is not None
    found = first_violations(tight, result.path.actions, check_convergence=True)
    assert found is not None
    assert found[0][0].property == "RebalanceTimeBound"
    # The walk engine checks the bound too.
    walked = walk(tight, seed=0, walks=200, max_steps=30)
    assert walked.property == "RebalanceTimeBound"


def test_a_slower_rule_change_is_a_finding() -> None:
    rules, source = load_rules(f"{LATE_ACK}:SLOW")
    outcome = explore(with_rules(JOIN, rules, source), engine="bfs", rebalance=True)
    assert outcome.result == "ok"  # slower, but nothing is violated
    assert outcome.rebalance is not None
    [finding] = outcome.findings
    assert finding["kind"] == "slower-rebalance"
    assert finding["steps"] > finding["reference_worst_steps"]
    assert finding["reference_steps_from_the_same_path"] is not None
    assert finding["steps"] == outcome.rebalance["worst_steps"]
    # The reference rules are no slower than themselves.
    same = explore(JOIN, engine="bfs", rebalance=True)
    assert same.findings == []


def test_explore_json_reports_rebalance_time(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "join.toml"
    config.write_text(
        'name = "JOIN"\nmax_perturbations = 1\nperturbations = ["Subscribe"]\n'
        'required_witnesses = ["RevocationCompletes", "WaitsOnUnreleasedPartitions", '
        '"GroupConverges"]\n[topics]\nfoo = 2\n[[clients]]\nname = "A"\nsubscription = ["foo"]\n'
        '[[clients]]\nname = "B"\nsubscription = ["foo"]\nsubscribed = false\n'
    )
    argv = ["explore", "--config", str(config), "--rebalance-time", "--out", str(tmp_path / "runs")]
    assert main([*argv, "--json", "--rules", f"{LATE_ACK}:SLOW"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rebalance"]["worst_steps"] > 0
    assert doc["findings"][0]["kind"] == "slower-rebalance"
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "rebalance time: worst" in out
