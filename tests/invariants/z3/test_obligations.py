"""The obligation runner (invariants/z3/proof/obligations.py) on a toy family declared
here: one obligation it proves, one it refutes with a decoded counterexample, one whose
Z3 budget runs out (unknown, never proved), and an interrupted query that leaves nothing
cancelled for the next one.

Every bound here is a number of obligations; the budgets are Z3's own timeouts.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest
import z3

from invariants.z3.proof.obligations import (
    Obligation,
    Policy,
    Query,
    Result,
    check,
    interrupt,
    run,
    summary,
)

x, y, z = z3.Ints("toy.x toy.y toy.z")


@dataclass(frozen=True)
class Witness:
    """The toy family's counterexample: the value of ``x``, re-checked in Python."""

    x: int
    python_confirms: bool

    def lines(self) -> list[str]:
        said = "confirms" if self.python_confirms else "DISAGREES"
        return [f"x = {self.x}", f"Python reading: {said}"]


def _decode(model: z3.ModelRef) -> Witness:
    value = model.eval(x, model_completion=True).as_long()
    return Witness(value, 0 < value <= 5)  # the premise holds, the conclusion fails


PROVABLE = Obligation("step", "Toy.AboveTwoIsAboveOne", None)
REFUTABLE = Obligation("step", "Toy.PositiveIsAboveFive", None)
HARD = Obligation("step", "Toy.NoCubeSum", None)


def _query(ob: Obligation) -> Query:
    if ob == PROVABLE:
        return Query(ob, (x > 2,), x > 1, decode=_decode)
    if ob == REFUTABLE:
        return Query(ob, (x > 0,), x > 5, decode=_decode)
    # x³ + y³ = z³ has no positive solution (Euler), which Z3's nonlinear arithmetic does
    # not find out within a small budget.
    cubes = x * x * x + y * y * y == z * z * z
    return Query(ob, (x > 0, y > 0, z > 0, cubes), None, decode=_decode)


@pytest.mark.parametrize("isolated", [True, False], ids=["own-context", "main-context"])
def test_the_runner_proves_refutes_and_runs_out(isolated: bool) -> None:
    results = run([PROVABLE, REFUTABLE, HARD], _query, Policy(timeout_ms=50, isolated=isolated))
    by_goal = {r.obligation.goal: r for r in results}
    assert [r.obligation for r in results] == [PROVABLE, REFUTABLE, HARD]
    assert by_goal[PROVABLE.goal].status == "proved"
    refuted = by_goal[REFUTABLE.goal]
    assert refuted.status == "failed"
    assert isinstance(refuted.cti, Witness)
    assert refuted.cti.python_confirms
    assert refuted.to_json()["cti"][0].startswith("x = ")
    hard = by_goal[HARD.goal]
    assert hard.status == "unknown"  # inconclusive, never proved
    assert hard.reason
    assert hard.cti is None
    assert summary(results) == {"proved": 1, "failed": 1, "unknown": 1}


def test_progress_names_each_obligation_before_it_runs() -> None:
    seen: list[tuple[int, int, str]] = []
    run(
        [PROVABLE, REFUTABLE],
        _query,
        Policy(timeout_ms=5_000),
        progress=lambda i, n, ob: seen.append((i, n, ob.name)),
    )
    assert seen == [(1, 2, PROVABLE.name), (2, 2, REFUTABLE.name)]


def test_an_interrupted_query_is_unknown_and_leaves_nothing_cancelled() -> None:
    """A query interrupted in its own context (``interrupt``: what a budget's watchdog and
    Ctrl-C call) is unknown; the next obligation, in a fresh context, is proved."""
    stop = threading.Event()

    def keep_interrupting() -> None:
        while not stop.wait(0.05):
            interrupt()

    watcher = threading.Thread(target=keep_interrupting, daemon=True)
    watcher.start()
    try:
        cut = check(_query(HARD), Policy(timeout_ms=600_000))
    finally:
        stop.set()
        watcher.join()
    assert cut.status == "unknown"
    assert cut.reason
    after: Result = check(_query(PROVABLE), Policy(timeout_ms=5_000))
    assert after.status == "proved"
