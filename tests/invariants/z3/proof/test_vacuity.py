"""``groupcheck prove`` checks its own premises (invariants/z3/proof/vacuity.py): on a
relation made vacuous on purpose — no initial state, leave and both timers turned into
no-ops, no honest heartbeat for the ranking — the run fails with its own message, naming
exactly the premises that became unsatisfiable, while every obligation is still proved.

Bounded by obligations: one goal (--only) besides the premises, never by seconds.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import z3

from groupcheck.cli import main
from invariants.z3.proof import induction, ranking, vacuity
from invariants.z3.proof import transition as tr
from invariants.z3.proof.state import MEMBER


def _impossible_initial(s: Any) -> Any:
    return z3.BoolVal(False)


def _no_op_remove(
    pre: Any, post: Any, o: Any, name: str, *, answers: bool
) -> tr.Family:  # a leave or a timer that leaves the state as it was
    x = z3.Const(f"{name}.member@{post.tag}", MEMBER)
    return tr.Family(name, tr.unchanged(pre, post), {"member": x})


def _vacuous(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in (tr, induction, ranking):
        monkeypatch.setattr(module, "initial", _impossible_initial)
    monkeypatch.setattr(tr, "_remove", _no_op_remove)
    monkeypatch.setattr(ranking, "honest", lambda f, pre: z3.BoolVal(False))


VACUOUS = {
    "Init",
    "Init ∧ I",
    "Step.DeliverMessage.leave",
    "Step.SessionTimeout",
    "Step.RebalanceTimeout",
    "Ranking.Decreases.DeliverMessage.heartbeat",
}


def test_prove_fails_on_vacuous_premises(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _vacuous(monkeypatch)
    goal = "NoServerError"
    code = main(["prove", "--json", "--quiet", "--only", goal])
    doc = json.loads(capsys.readouterr().out)
    # The obligations alone would not notice: every one of them is proved.
    assert doc["summary"]["failed"] == doc["summary"]["unknown"] == 0
    assert doc["summary"]["proved"] > 0
    assert code == 1
    assert doc["result"] == "violation"
    premises = doc["non_vacuity"]["premises"]
    assert doc["non_vacuity"]["result"] == "vacuous"
    assert {p["premise"] for p in premises if p["status"] == "vacuous"} == VACUOUS
    assert {p["status"] for p in premises} == {"vacuous", "satisfiable"}
    assert any(r.startswith("VACUOUS") for r in doc["reasons"])
    code = main(["prove", "--quiet", "--only", goal])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("VACUOUS, NOT PROVED")
    for name in VACUOUS:
        assert f"VACUOUS {name}:" in out


def test_every_premise_of_the_reference_relation_is_satisfiable() -> None:
    options = tr.Options()
    premises = vacuity.check(
        options, induction.invariant_for(options), with_ranking=True, timeout_ms=60_000
    )
    assert vacuity.verdict(premises) == "satisfiable"
    names = {p.name for p in premises}
    # Every family but the stutter, and every premise of the ranking's obligations.
    assert names >= VACUOUS
    assert {ranking.ENABLED, ranking.ZERO} <= names
    assert "Step.Unchanged" not in names


def test_an_unknown_premise_is_inconclusive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(z3.Solver, "check", lambda self, *a: z3.unknown)
    monkeypatch.setattr(z3.Solver, "reason_unknown", lambda self: "timeout")
    premises = vacuity.check(
        tr.Options(), induction.INVARIANT, with_ranking=False, timeout_ms=1_000
    )
    assert vacuity.verdict(premises) == "unknown"
    assert all(p.reason == "timeout" for p in premises)


# --------------------------------------------------------------------------- CTI reachability


def test_a_cti_says_whether_its_violation_is_reachable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """bookkeeping-drops-pending's CTI (Lemma.PartitionEpochs on a heartbeat) is real: BMC
    on the mutant's scenario reaches a violation in 3 steps, which the Python coordinator
    under the mutant's rules walks; within 2 steps there is none, and that is all it says."""
    variant, goal = "bookkeeping-drops-pending", "Lemma.PartitionEpochs"
    code = main(["prove", "--json", "--quiet", "--variant", variant, "--only", goal])
    assert code == 1
    doc = json.loads(capsys.readouterr().out)
    failed = [ob for ob in doc["obligations"] if ob["status"] == "failed"]
    assert [ob["family"] for ob in failed] == ["DeliverMessage.heartbeat"]
    reach = failed[0]["reach"]
    assert reach["status"] == "reachable"
    assert reach["depth"] == 3
    assert reach["replayed"] is True
    assert reach["config"] == "MUT2_CRASH"
    assert reach["path"][0] == "initial:"
    assert doc["reachability"][goal]["depth"] == 3

    from groupcheck.mutants import MUTANTS
    from invariants.z3.proof.cti_reach import reach as search

    mutant = MUTANTS[variant]
    short = search(
        goal,
        state=next(c.expr for c in induction.INVARIANT if c.name == goal),
        step=None,
        config=mutant.config,
        variant=variant,
        bound=2,
        timeout_ms=60_000,
        rules=mutant.rules,
    )
    assert short.status == "not reachable within bound"
    assert short.depth is None
    assert "not reachable within bound 2" in short.summary()
    assert "unreachable" not in short.summary()
