"""The convergence ranking (invariants/z3/proof/ranking.py): proved for groups of any
size, and each lemma it rests on is needed (leaving one out gives a decoded
counterexample). Bounded by obligations, never by seconds."""

from __future__ import annotations

import json

import pytest

from groupcheck.cli import main
from invariants.z3.proof import ranking
from invariants.z3.proof.obligations import Policy, Result, run
from invariants.z3.proof.transition import Options

TIMEOUT_MS = 60_000


def _run(goals: list[str], leave_out: frozenset[str] = frozenset()) -> list[Result]:
    """The ranking's obligations of ``goals`` on the reference relation, run by the
    obligation runner."""
    options = Options()
    return run(
        ranking.obligations(options, goals),
        lambda ob: ranking.query(ob, options, leave_out=leave_out),
        Policy(TIMEOUT_MS),
    )


def test_the_ranking_decreases_and_zero_is_convergence() -> None:
    goals = [ranking.NON_INCREASING, ranking.DECREASES, ranking.ENABLED, ranking.ZERO]
    results = _run(goals)
    assert {r.obligation.goal for r in results} == set(goals)
    assert [(r.obligation.name, r.status) for r in results if r.status != "proved"] == []


def test_without_a_lemma_an_honest_heartbeat_need_not_decrease_the_ranking() -> None:
    """Without ``Ranking.AssignedOrPending`` a member could report a partition pending its
    revocation as owned, and its heartbeat would change nothing."""
    results = _run([ranking.DECREASES], leave_out=frozenset({"Ranking.AssignedOrPending"}))
    failed = [r for r in results if r.status != "proved"]
    assert [r.obligation.family for r in failed] == ["DeliverMessage.heartbeat"]
    (result,) = failed
    assert result.status == "failed"
    assert result.cti is not None
    assert result.cti.python_confirms  # the Python reading of I holds on the pre-state
    assert any(m.assigned & m.revoking for m in result.cti.pre.members.values())


def test_prove_json_reports_the_ranking(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["prove", "--json", "--quiet", "--only", ranking.ENABLED])
    doc = json.loads(capsys.readouterr().out)
    assert code == 3  # the invariant and the lemmas are assumed, not checked
    assert [c["name"] for c in doc["ranking"]["components"]] == [c.name for c in ranking.RANKING]
    (ob,) = doc["ranking"]["obligations"]
    assert (ob["goal"], ob["status"]) == (ranking.ENABLED, "proved")
    assert "Ranking.AssignedOrPending" in doc["reasons"][-1]
