"""Seeded random walks with swarm selection of action families.

Each walk draws, from its own seeded PRNG, a random subset of the perturbation families
to allow ("swarm testing": a walk that never loses messages explores deeper joins, one
that only loses messages explores retries), then takes uniformly random steps among the
enabled actions of the kept families, checking state and step properties after every
step and convergence under a fair schedule at the end of the walk.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from groupcheck.explore.rebalance import RebalanceTimes
from groupcheck.explore.result import ExploreResult, Violations, settle
from groupcheck.usercode import UserCodeError
from invariants.check import Checker, Violation
from invariants.liveness import (
    CONVERGENCE,
    DEFAULT_BOUND,
    REBALANCE_TIME,
    fair_loop,
    fair_schedule,
    required_witnesses,
    undecided_reason,
)
from invariants.snapshot import project
from invariants.verdict import conclude
from model import system
from model.actions import Action
from model.config import Config
from model.path import Path

ProgressFn = Callable[[int, int], None]


def swarm(rng: random.Random, config: Config) -> frozenset[str]:
    """The perturbation families one walk may use (each kept with probability 1/2, at least
    one when the config has any)."""
    families = sorted(config.perturbations)
    kept = frozenset(f for f in families if rng.random() < 0.5)
    if families and not kept:
        kept = frozenset({rng.choice(families)})
    return kept


def walk(
    config: Config,
    seed: int = 0,
    walks: int = 1000,
    max_steps: int = 60,
    *,
    checker_factory: Callable[[], Checker] = Checker,
    budget_seconds: float | None = None,
    convergence_bound: int = DEFAULT_BOUND,
    progress: ProgressFn | None = None,
    check_convergence: bool = True,
    rebalance: RebalanceTimes | None = None,
    violations: Violations | None = None,
) -> ExploreResult:
    """Run ``walks`` walks of up to ``max_steps`` steps; stop at the first violation —
    unless ``violations`` is active (``Violations``): then a walk goes on past violations
    and every walk runs, and each property's shortest violation met is recorded. The
    result is "ok" only when every walk was run (``budget_seconds`` cutting the series
    short makes it "inconclusive") and every witness was hit. ``rebalance`` receives each
    walk's rebalance time, measured from the state after its last perturbation
    (``groupcheck.explore.rebalance``); a config's ``max_rebalance_steps`` is checked
    against it."""
    bound = config.max_rebalance_steps
    if bound is not None and rebalance is None:
        rebalance = RebalanceTimes()
    start = time.perf_counter()
    checker = checker_factory()
    undecided: list[int] = []  # the bound of each undecided state
    required = required_witnesses(config)
    total = 0
    done = 0
    longest_tail: int | None = None
    collect = violations if violations is not None and violations.active else None
    stopped = False
    for w in range(walks):
        if budget_seconds is not None and time.perf_counter() - start > budget_seconds:
            break
        done += 1
        rng = random.Random(f"{seed}:{w}")
        kept = swarm(rng, config)
        state = system.initial(config)
        snap = project(state)
        path: list[Action] = []
        violation: Violation | None = None
        rebalance_from, rebalance_after = state, 0  # where the walk's last rebalance starts
        for _ in range(max_steps):
            doing: Action | None = None
            try:
                enabled = system.enabled(state, config)
                choices = [a for a in enabled if not a.PERTURBATION or a.kind in kept] or list(
                    enabled
                )
                if not choices:
                    break
                action = doing = choices[rng.randrange(len(choices))]
                new = system.step(state, action, config)
            except UserCodeError as e:  # a user's rule failed: say on which path
                raise e.at(config, tuple(path), doing) from None
            new_snap = project(new)
            path.append(action)
            total += 1
            bad = checker.check_step(state, action, new, snap, new_snap) + checker.check_state(
                new, new_snap
            )
            state, snap = new, new_snap
            if action.PERTURBATION:
                rebalance_from, rebalance_after = state, len(path)
            if bad and collect is not None:
                for v in bad:
                    stopped = (
                        collect.note(v.property, v.message, Path(config, tuple(path))) or stopped
                    )
                if stopped:
                    break
            elif bad:
                violation = bad[0]
                break
        if stopped:
            break
        if violation is None and check_convergence:
            tail, _, ok = fair_schedule(state, config, convergence_bound)
            why = None if ok else fair_loop(state, config, convergence_bound)
            if ok:
                longest_tail = max(longest_tail or 0, len(tail))
            elif why is not None and not why.shown:
                undecided.append(why.bound)  # the bound cut the schedule: not a violation
            else:
                message = CONVERGENCE.description + (
                    f" Shown: {why.describe()}." if why is not None else ""
                )
                violation = Violation(CONVERGENCE.name, message, CONVERGENCE.kind.value)
                if collect is not None:
                    stopped = collect.note(
                        violation.property, violation.message, Path(config, tuple(path))
                    )
                    violation = None
                    if stopped:
                        break
        if violation is None and rebalance is not None:
            measured = rebalance.note(rebalance_from, config, actions=tuple(path[:rebalance_after]))
            if bound is not None and measured.converged and measured.steps > bound:
                violation = Violation(
                    REBALANCE_TIME.name,
                    f"after the last perturbation the group needs {measured.steps} fair steps "
                    f"to converge; the config allows {bound}",
                    REBALANCE_TIME.kind.value,
                )
                if collect is not None:
                    stopped = collect.note(
                        violation.property, violation.message, Path(config, tuple(path))
                    )
                    violation = None
                    if stopped:
                        break
        if violation is not None:
            return ExploreResult(
                engine="walk",
                result="violation",
                property=violation.property,
                message=violation.message,
                path=Path(config, tuple(path)),
                steps=total,
                witnesses=sorted(checker.seen),
                missed_witnesses=checker.missed_witnesses(required),
                seconds=time.perf_counter() - start,
                checked=f"{w + 1} walks of up to {max_steps} steps ({total} steps), up to the "
                "first violation",
            )
        if progress is not None and w % 50 == 0:
            progress(w + 1, total)
    if rebalance is not None:
        rebalance.complete = done == walks
    missed = checker.missed_witnesses(required)
    result, reasons = conclude(
        violated=False,
        complete=done == walks and not stopped,
        incomplete_reason=f"the walks stopped at a violation after {done} of {walks} walks"
        if stopped
        else f"the time budget ({budget_seconds} s) ran out after {done} of {walks} walks",
        missed_witnesses=missed,
        unchecked=undecided_reason(len(undecided), max(undecided, default=0)),
    )
    out = ExploreResult(
        engine="walk",
        result=result.value,
        steps=total,
        witnesses=sorted(checker.seen),
        missed_witnesses=missed,
        seconds=time.perf_counter() - start,
        convergence_steps=longest_tail,
        convergence_undecided=len(undecided),
        reasons=reasons,
        checked=f"{done} walks of up to {max_steps} steps ({total} steps)",
    )
    if collect is not None:
        settle(out, collect)
    return out
