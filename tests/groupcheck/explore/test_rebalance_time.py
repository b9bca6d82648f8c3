"""Rebalance time as a checked quantity: the worst case under BFS, a distribution under
walks, a declared bound (``RebalanceTimeBound``), a slower rule change as a finding, and
the start-by-start comparison that sees a change slower below the worst case
(``--fail-on-slower``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.explore.bfs import bfs
from groupcheck.explore.minimise import first_violations
from groupcheck.explore.rebalance import RebalanceTimes, compare_starts, measure
from groupcheck.explore.run import explore
from groupcheck.explore.walk import walk
from groupcheck.rulesfile import load_rules, with_rules
from model.config import ClientSpec, Config
from model.path import Path as ModelPath
from model.rules import DEFAULT_RULES

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

LATE_ACK = Path(__file__).parents[2] / "data" / "late_ack_rules.py"


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


# Start by start: a change slower in some starts but not in the worst one.

FIRST_ASSIGNMENT = Path(__file__).parents[2] / "data" / "first_assignment_rules.py"


def _changed(name: str) -> Config:
    rules, source = load_rules(f"{FIRST_ASSIGNMENT}:{name}")
    return with_rules(JOIN, rules, source)


def _join_file(tmp_path: Path) -> str:
    config = tmp_path / "join.toml"
    config.write_text(
        'name = "JOIN"\nkafka_version = "4.2"\n'
        'max_perturbations = 1\nperturbations = ["Subscribe"]\n'
        'required_witnesses = ["RevocationCompletes", "WaitsOnUnreleasedPartitions", '
        '"GroupConverges"]\n[topics]\nfoo = 2\n[[clients]]\nname = "A"\nsubscription = ["foo"]\n'
        '[[clients]]\nname = "B"\nsubscription = ["foo"]\nsubscribed = false\n'
    )
    return str(config)


def test_a_change_slower_below_the_worst_case_is_found_start_by_start() -> None:
    changed = _changed("DELAY")
    outcome = explore(changed, engine="bfs", rebalance=True)
    reference = explore(JOIN, engine="bfs", rebalance=True)
    assert outcome.result == "ok"
    assert outcome.rebalance is not None
    assert reference.rebalance is not None
    # The worst case does not move, so the worst-case comparison reports nothing ...
    assert outcome.rebalance["worst_steps"] == reference.rebalance["worst_steps"]
    assert outcome.findings == []
    # ... while some starts are slower (and others faster).
    comparison = outcome.rebalance["per_start"]
    assert comparison["verdict"] == "slower"
    assert comparison["reasons"] == []
    assert comparison["slower"] >= 1
    assert comparison["faster"] >= 1
    assert comparison["slower_by_rounds"] >= 1
    assert (
        comparison["slower"] + comparison["faster"] + comparison["same"] == comparison["compared"]
    )
    assert comparison["compared"] + comparison["only_change"] == outcome.rebalance["starts"]
    assert reference.rebalance["starts"] == comparison["compared"] + comparison["only_reference"]
    # The examples replay: from the end of each path, each rule takes what is reported.
    reference_config = replace(JOIN, rules=DEFAULT_RULES)
    for kind in ("slower", "faster"):
        ex = comparison[f"shortest_{kind}"]
        mine = measure(ModelPath.decode(changed, ex["path"]).final(), changed)
        theirs = measure(
            ModelPath.decode(reference_config, ex["reference_path"]).final(), reference_config
        )
        assert (mine.steps, mine.rounds) == (ex["steps"], ex["heartbeat_rounds"])
        assert (theirs.steps, theirs.rounds) == (
            ex["reference_steps"],
            ex["reference_heartbeat_rounds"],
        )
        ordered = (mine.rounds, mine.steps) > (theirs.rounds, theirs.steps)
        assert ordered is (kind == "slower")
    # The shortest slower start is the initial state: a member alone waits for nobody.
    assert comparison["shortest_slower"]["length"] == 0


def test_a_change_that_is_nowhere_slower() -> None:
    outcome = explore(_changed("LATE_JOINER"), engine="bfs", rebalance=True)
    comparison = outcome.rebalance["per_start"] if outcome.rebalance else None
    assert comparison is not None
    assert comparison["verdict"] == "not slower"
    assert comparison["slower"] == 0
    assert comparison["shortest_slower"] is None
    assert comparison["compared"] > 0
    # The reference rules compared with themselves: the same in every start.
    times = RebalanceTimes(per_start={})
    bfs(JOIN, rebalance=times)
    same = compare_starts(JOIN, times, times)
    assert (same["verdict"], same["slower"], same["faster"]) == ("not slower", 0, 0)


def test_a_bounded_comparison() -> None:
    # A state bound cutting the searches short: inconclusive, not "not slower".
    cut = explore(_changed("LATE_JOINER"), engine="bfs", rebalance=True, max_states=200)
    comparison = cut.rebalance["per_start"] if cut.rebalance else None
    assert comparison is not None
    assert comparison["verdict"] == "inconclusive"
    assert any("cut short" in r for r in comparison["reasons"])
    # Every state within a depth: complete within it; the slower initial start is found.
    within = explore(_changed("DELAY"), engine="bfs", rebalance=True, max_depth=3)
    comparison = within.rebalance["per_start"] if within.rebalance else None
    assert comparison is not None
    assert comparison["verdict"] == "slower"
    assert comparison["shortest_slower"]["length"] == 0


def test_walks_compare_each_start_on_the_same_path() -> None:
    # Walks short enough that some end before B subscribes: the initial start is sampled.
    outcome = explore(_changed("DELAY"), engine="walk", rebalance=True, walks=60, max_steps=6)
    comparison = outcome.rebalance["per_start"] if outcome.rebalance else None
    assert comparison is not None
    assert comparison["verdict"] == "slower"
    assert comparison["scope"] == "the starts of 60 walks of up to 6 steps"
    assert comparison["only_reference"] is None  # walks replay the change's paths only
    ex = comparison["shortest_slower"]
    assert ex["same_actions"] is True


def test_fail_on_slower(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["explore", "--config", _join_file(tmp_path), "--out", str(tmp_path / "runs")]
    delay = ["--rules", f"{FIRST_ASSIGNMENT}:DELAY"]
    # Without the flag a slower change is reported, not failed.
    assert main([*argv, *delay, "--rebalance-time"]) == 0
    out = capsys.readouterr().out
    assert "start by start against the reference rules: SLOWER" in out
    assert "slower in 1 start by up to 1 heartbeat round and 3 fair steps" in out
    assert "shortest slower: path ''" in out
    assert main([*argv, *delay, "--fail-on-slower", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["findings"] == []  # the worst case alone would have passed it
    assert doc["rebalance"]["per_start"]["verdict"] == "slower"
    late = ["--rules", f"{FIRST_ASSIGNMENT}:LATE_JOINER"]
    assert main([*argv, *late, "--fail-on-slower"]) == 0
    out = capsys.readouterr().out
    assert "against the reference rules: NOT SLOWER" in out
    assert "slower in 0 starts, faster in" in out
    # A bound that cuts the search: inconclusive (3), never "not slower".
    assert main([*argv, *late, "--fail-on-slower", "--max-states", "200", "--json"]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "inconclusive"
    assert any(r.startswith("rebalance-time comparison:") for r in doc["reasons"])
    # Nothing to compare, or an engine that does not measure rebalance time: usage errors.
    assert main([*argv, "--fail-on-slower"]) == 2
    assert "--mutant NAME or --rules" in capsys.readouterr().err
    assert main([*argv, *delay, "--fail-on-slower", "--engine", "hypothesis"]) == 2


def test_replay_measures_the_rebalance(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = _join_file(tmp_path)
    argv = ["replay", "--config", config, "--path", "", "--rebalance-time", "--json"]
    assert main([*argv, "--rules", f"{FIRST_ASSIGNMENT}:DELAY"]) == 0
    slow = json.loads(capsys.readouterr().out)["rebalance"]
    assert main(argv) == 0
    fast = json.loads(capsys.readouterr().out)["rebalance"]
    assert slow["converged"]
    assert fast["converged"]
    assert (slow["heartbeat_rounds"], slow["steps"]) > (fast["heartbeat_rounds"], fast["steps"])
