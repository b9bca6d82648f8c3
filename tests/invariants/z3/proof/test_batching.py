"""KIP-1263 assignment batching in the KIP-848 symbolic relation
(``SymState.interval_pending``, ``Options.batching``, the ``AssignmentIntervalElapses``
family; the ranking's ``P``): a heartbeat that finds the interval pending computes no
target, as the model's, and the relation without the gate refuses that step; the pending
interval is counted by the convergence ranking, whose obligations on the families that
move it are proved, and a ranking that leaves it out fails with a counterexample the Python
reading confirms; BMC unrolls the interval passing and the Python coordinator replays it.
(Every obligation of ``prove --preset BATCHING`` is measured in
docs/benchmarks.md, not run here.)

Bounded by states and obligations, never by seconds.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace

import pytest
import z3

from invariants.z3.proof import bmc, ranking
from invariants.z3.proof.agreement import check_step
from invariants.z3.proof.induction import Prover, invariant_for, steps_for
from invariants.z3.proof.obligations import Obligation
from invariants.z3.proof.transition import Options, family_of
from model import system
from model.actions import Action
from model.presets import PRESETS
from model.records import State

TIMEOUT_MS = 60_000
ELAPSES = "AssignmentIntervalElapses"
HEARTBEAT = "DeliverMessage.heartbeat"


def _first_steps(
    config: object, max_states: int
) -> tuple[tuple[State, Action, State], tuple[State, Action, State]]:
    """In BFS order within ``max_states`` states: the first heartbeat that finds a target
    due and the interval pending (so computes none), and the first interval elapsing."""
    init = system.initial(config)  # type: ignore[arg-type]
    seen, queue = {init}, deque([init])
    gated = elapsed = None
    while queue and len(seen) < max_states and (gated is None or elapsed is None):
        s = queue.popleft()
        for a in system.enabled(s, config):  # type: ignore[arg-type]
            t = system.step(s, a, config)  # type: ignore[arg-type]
            g = s.group
            pending = g.assignment_timestamp != 0 and not g.assignment_interval_elapsed
            due = t.group.group_epoch > t.group.assignment_epoch
            if gated is None and family_of(a) == HEARTBEAT and pending and due:
                gated = (s, a, t)
            if elapsed is None and family_of(a) == ELAPSES:
                elapsed = (s, a, t)
            if t not in seen:
                seen.add(t)
                queue.append(t)
    assert gated is not None
    assert elapsed is not None
    return gated, elapsed


def test_a_heartbeat_under_a_pending_interval_agrees_and_the_gate_matters() -> None:
    """On ``BATCHING`` (B joins while A's target was just computed): the heartbeat that
    finds the interval pending keeps the stale target and epoch, and ``AssignmentIntervalElapses``
    lets the interval pass; each is the relation's only successor. Read without the gate
    (the relation of an unbatched config) the same heartbeat is refused: the relation would
    compute the target."""
    config = PRESETS["BATCHING"]
    gated, elapsed = _first_steps(config, 200)
    assert gated[2].group.assignment_epoch == gated[0].group.assignment_epoch
    for pre, action, post in (gated, elapsed):
        check = check_step(pre, action, post, config)
        assert (check.allowed, check.unique) == ("yes", "yes"), (action, check)
    ungated = replace(Options.of(config), batching=False)
    check = check_step(*gated, config, options=ungated)
    assert check.allowed == "no"


def test_the_pending_interval_is_counted_and_its_steps_keep_the_invariant(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On ``BATCHING``: every conjunct of the invariant and every step property holds after
    ``AssignmentIntervalElapses``; the ranking (``L``, ``T``, ``P``, …) decreases on the
    interval passing and on an enabled member's honest heartbeat, a state off zero has an
    enabled member or a pending interval to pass, and no quiet heartbeat increases it.
    Without ``P`` the interval passing decreases nothing: ``Ranking.Decreases`` fails on
    ``AssignmentIntervalElapses``, with a pre-state the Python reading says satisfies the
    invariant."""
    options = Options.of(PRESETS["BATCHING"])
    assert options.batching
    prover = Prover(options, TIMEOUT_MS, invariant=invariant_for(options), steps=steps_for(options))
    safety = [ob for ob in prover.obligations() if ob.family == ELAPSES]
    assert len(safety) == len(invariant_for(options)) + len(steps_for(options))
    results = [prover.check(ob) for ob in safety]
    assert [(r.obligation.name, r.status) for r in results if r.status != "proved"] == []
    assert [c.name for c in ranking.components(options)][:3] == ["L", "T", "P"]
    chosen = [
        Obligation("ranking", ranking.DECREASES, ELAPSES),
        Obligation("ranking", ranking.DECREASES, HEARTBEAT),
        Obligation("ranking", ranking.NON_INCREASING, HEARTBEAT),
        Obligation("ranking", ranking.ENABLED, None),
    ]
    results = [ranking.check(ob, options, TIMEOUT_MS) for ob in chosen]
    assert [(r.obligation.name, r.status) for r in results if r.status != "proved"] == []
    without = tuple(c for c in ranking.BATCHING_RANKING if c.name != "P")
    monkeypatch.setattr(ranking, "BATCHING_RANKING", without)
    result = ranking.check(chosen[0], options, TIMEOUT_MS)
    assert result.status == "failed"
    assert result.cti is not None
    assert result.cti.python_confirms
    assert result.cti.pre.interval_pending is True


def test_bmc_unrolls_the_interval_and_the_python_coordinator_replays_it() -> None:
    """BMC over ``BATCHING``: a path of four steps through ``AssignmentIntervalElapses``
    to a second computed target exists (a computation, the interval passing, a bump and the
    next computation), and the Python coordinator replays it state by state, the interval
    flag included; no path of four steps has a heartbeat install a new target while the
    interval is pending."""
    config = PRESETS["BATCHING"]
    run = bmc.bmc_unrolling(
        Options.of(config),
        4,
        universe=bmc.universe_of(config),
        group_epoch=1,
        timeout_ms=TIMEOUT_MS,
    )
    for _ in range(4):
        run.extend()

    def chosen(i: int, family: str) -> z3.BoolRef:
        return z3.Or(*[flag for flag, f, _ in run.choices[i] if f.name == family])

    s = run.states
    run.solver.push()
    run.solver.add(z3.Or(*[chosen(i, ELAPSES) for i in range(4)]))
    run.solver.add(run.encode(s[-1].assignment_epoch >= 3))
    assert run.solver.check() == z3.sat
    path = run.path(run.solver.model(), "second target")
    run.solver.pop()
    assert ELAPSES in [family for family, _ in path.steps]
    states, _ = bmc.replay(path, config.rules, config)
    assert len(states) == len(path.states)
    assert [v.interval_pending for v in states] == [v.interval_pending for v in path.states]
    gated = [
        z3.And(
            chosen(i, HEARTBEAT),
            run.encode(
                z3.And(s[i].interval_pending, s[i + 1].assignment_epoch > s[i].assignment_epoch)
            ),
        )
        for i in range(4)
    ]
    run.solver.add(z3.Or(*gated))
    assert run.solver.check() == z3.unsat
