"""Is a counterexample to induction reachable? Bounded model checking of its goal.

A CTI of ``groupcheck prove`` is a state satisfying the invariant from which one step
breaks a goal; it says nothing of whether the state is reachable. :func:`reach` unrolls
the relation from ``Init`` on a configuration's finite universe (``bmc.bmc_unrolling``:
the families BMC replays, ``explore --engine bmc``'s; the engine's depth loop,
``invariants.z3.engine.search``) for 1, 2, … ``bound`` steps and asks
for a path whose last state violates the goal (a conjunct of the invariant) or whose last
step does (a step property). Three answers:

* ``reachable`` at depth k, with the path (replayed through the Python coordinator under
  the configuration's rules: ``replayed`` says whether it walks the path and the Python
  reading of the goal fails at its end);
* ``not reachable within bound B`` — no path of at most B steps of those families on that
  universe violates the goal; a longer path, a larger group or another family (the
  unrolling leaves out the timers and a separate target computation) may, so this is
  never "unreachable";
* ``unknown`` — Z3's reason.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from typing import Any, Literal

from invariants.expr import Expr, StepSnapshot, compile_expr
from invariants.properties import Property
from invariants.z3 import engine
from invariants.z3.proof.bmc import ReplayDiverged, bmc_unrolling, replay, universe_of
from invariants.z3.proof.state import render
from invariants.z3.proof.transition import Options
from model.consumer.system import consumer_initial

Status = Literal["reachable", "not reachable within bound", "unknown"]


@dataclass(frozen=True)
class Reach:
    """What the search found for one goal."""

    goal: str
    status: Status
    bound: int
    config: str
    seconds: float
    depth: int | None = None
    path: list[str] = field(default_factory=list)
    replayed: bool | None = None
    replay_error: str = ""
    reason: str = ""

    def summary(self) -> str:
        if self.status == "reachable":
            replayed = {
                True: "the Python coordinator walks it and the goal fails at its end",
                False: "NOT confirmed by the Python coordinator"
                + (f" ({self.replay_error})" if self.replay_error else ""),
                None: "not replayed",
            }[self.replayed]
            return (
                f"reachable: a path of {self.depth} steps from the initial state of "
                f"{self.config} violates {self.goal} ({replayed})"
            )
        if self.status == "unknown":
            return f"reachability unknown within {self.bound} steps on {self.config}: {self.reason}"
        return (
            f"not reachable within bound {self.bound}: no path of at most {self.bound} "
            f"steps (BMC's families) on {self.config}'s universe violates {self.goal}; a "
            "longer path or a larger group may"
        )

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "goal": self.goal,
            "status": self.status,
            "bound": self.bound,
            "config": self.config,
            "seconds": round(self.seconds, 3),
            "summary": self.summary(),
        }
        if self.depth is not None:
            doc.update(depth=self.depth, path=self.path, replayed=self.replayed)
        if self.reason:
            doc["reason"] = self.reason
        return doc


def reach(
    goal: str,
    *,
    state: Expr | None,
    step: Property | None,
    config: Any,
    variant: str | None,
    bound: int,
    timeout_ms: int,
    rules: Any,
    after_assignor: Any = None,
) -> Reach:
    """The shortest path (up to ``bound`` steps) on ``config``'s universe under the
    relation's ``variant`` to a state violating ``state`` or a step violating ``step``
    (module docstring)."""
    start = time.monotonic()
    options = Options.of(
        config,
        variant,
        kernel=getattr(rules.reconcile, "kernel", None),
        commit_kernel=getattr(rules.validate_offset_commit, "kernel", None),
    )
    run = bmc_unrolling(
        options,
        bound,
        universe=universe_of(config),
        group_epoch=int(consumer_initial(config).group.group_epoch),
        timeout_ms=timeout_ms,
    )
    if state is not None:
        core = run.asking({goal: state}, {})
    else:
        assert step is not None
        assert step.expr is not None
        core = run.asking({}, {goal: step.expr})
    out = engine.search(core, [goal], bound)[goal]
    if out.status == "unknown":
        return Reach(
            goal, "unknown", bound, config.name, time.monotonic() - start, reason=out.reason
        )
    if out.status == "violation":
        path = out.path
        replayed: bool | None
        error = ""
        try:
            states, server_error = replay(path, rules, config, after_assignor=after_assignor)
            replayed = _fails(states, server_error, state, step)
        except ReplayDiverged as e:
            replayed, error = False, str(e)
        return Reach(
            goal,
            "reachable",
            bound,
            config.name,
            time.monotonic() - start,
            depth=out.depth,
            path=engine.render_path(path, render),
            replayed=replayed,
            replay_error=error,
        )
    return Reach(goal, "not reachable within bound", bound, config.name, time.monotonic() - start)


def _fails(
    states: list[Any], server_error: bool, state: Expr | None, step: Property | None
) -> bool:
    """The Python reading of the goal fails at the end of the replayed states."""
    if state is not None:
        last = dc_replace(states[-1], server_error=server_error)
        return not compile_expr(state)(last.snapshot(), {})
    assert step is not None
    a, b = states[-2], states[-1]
    ms = set(a.member_domain()) | set(b.member_domain())
    ps = set(a.partition_domain()) | set(b.partition_domain())
    return not step.holds(StepSnapshot(a.snapshot(ms, ps), b.snapshot(ms, ps)))
