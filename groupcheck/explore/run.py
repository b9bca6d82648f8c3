"""One entry point for every engine: explore a config, minimise what is found, report.

``explore`` runs the chosen engine, and on a violation delta-debugs the path, measures the
BFS-shortest counterexample length for comparison (bounded by states, so the answer does
not depend on how fast the machine is), re-checks the violation with Z3 for state
properties, and returns an ``Outcome`` the CLI prints.

The result is three-way (``invariants.verdict``): "ok" only when the engine's work was
complete — BFS exhausted the state space (or every state within ``max_depth``), every walk
ran, every Hypothesis example ran — and every witness was hit; "inconclusive" with the
reasons otherwise.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from groupcheck import budget
from groupcheck.explore.bfs import bfs
from groupcheck.explore.minimise import (
    convergence_violation,
    first_violations,
    minimise_path,
    replay_verdict,
    shrink_config,
)
from groupcheck.explore.rebalance import (
    RebalanceTimes,
    compare_starts,
    measure,
    replayed,
)
from groupcheck.explore.reference import reference_times
from groupcheck.explore.result import Found, Violations
from groupcheck.explore.walk import walk
from invariants.check import Checker, Violation, all_properties, select_properties
from invariants.expr import StepSnapshot
from invariants.liveness import (
    CONVERGENCE,
    DEFAULT_BOUND,
    WITNESSES,
    Lasso,
    required_witnesses,
    undecided_reason,
)
from invariants.properties import STATE_PROPERTIES, STEP_PROPERTIES, Kind, Property
from invariants.snapshot import project
from invariants.verdict import Result, conclude
from model import system
from model.config import Config
from model.path import Path
from model.rules import DEFAULT_RULES

ENGINES = ("bfs", "walk", "hypothesis")

SHORTEST_MAX_STATES = 100_000
"""The BFS that measures the shortest counterexample of a walk or Hypothesis finding visits
at most this many states; beyond it the shortest length is reported as unknown (None)."""

DEFAULT_WALKS = 1000
DEFAULT_MAX_STEPS = 60


@dataclass
class Outcome:
    """The result of one exploration, engine-independent."""

    engine: str
    result: str
    property: str | None = None
    message: str | None = None
    path: Path | None = None
    original_length: int | None = None
    shortest: int | None = None
    distinct_states: int | None = None
    exhausted: bool | None = None
    examples: int | None = None
    steps: int = 0
    witnesses: list[str] = field(default_factory=list)
    missed_witnesses: list[str] = field(default_factory=list)
    seconds: float = 0.0
    z3: str | None = None
    shrunk_config: Config | None = None
    reasons: list[str] = field(default_factory=list)
    checked: str = ""
    properties: list[str] = field(default_factory=list)
    """The properties checked (every state and step property and Convergence, unless
    ``--only`` chose some)."""
    rebalance: dict[str, Any] | None = None
    """Rebalance time (``groupcheck.explore.rebalance``) when measured."""
    findings: list[dict[str, Any]] = field(default_factory=list)
    """Findings that are not property violations: a rule change that makes rebalances
    slower than the reference rules on the same config."""
    workers: int | None = None
    """BFS: the worker processes that searched (1: the serial engine)."""
    collision_probability: float | None = None
    """BFS on fingerprints: TLC's estimate of the probability of a fingerprint collision."""
    bytes_per_state: float | None = None
    """BFS on fingerprints: stored bytes per distinct state."""
    violations: list[Found] = field(default_factory=list)
    """Every property's violation (``every_property``, ``expected``; minimised like the
    one shown), in the order found; empty when the run stopped at its first violation."""
    expected: list[str] = field(default_factory=list)
    """Properties the run declared as known findings (``--expect``): their violations are
    reported but neither fail the run nor stop the search."""
    every_property: bool = False
    """Whether the search went on past violations to report each property's."""
    search_result: str | None = None
    search_reasons: list[str] = field(default_factory=list)
    """With ``every_property`` or ``expected``: the verdict of the search itself, as if
    nothing had been violated (complete and every witness hit: "ok")."""
    baseline: dict[str, Any] | None = None
    """Under rules other than the reference ones (``baseline``): the reference rules' run on
    the same config, engine, seed and bounds, and the comparison property by property
    (``compare_with_reference``)."""


Progress = Callable[[str], None]


@dataclass(frozen=True)
class Selection:
    """Which properties an exploration checks."""

    state: tuple[Property, ...]
    step: tuple[Property, ...]
    convergence: bool

    @staticmethod
    def of(only: Sequence[str] | None) -> Selection:
        if not only:
            return Selection(STATE_PROPERTIES, STEP_PROPERTIES, True)
        return Selection(*select_properties(only))

    @property
    def names(self) -> list[str]:
        return [p.name for p in (*self.state, *self.step)] + (
            ["Convergence"] if self.convergence else []
        )

    def checker(self) -> Checker:
        return Checker(state_properties=self.state, step_properties=self.step)


def explore(
    config: Config,
    engine: str = "bfs",
    seed: int = 0,
    budget_seconds: float | None = None,
    profile: str = "ci",
    z3: bool = False,
    minimise: bool = True,
    shortest: bool = True,
    progress: Progress | None = None,
    symmetry: bool = False,
    shrink: bool = False,
    *,
    max_states: int | None = None,
    max_depth: int | None = None,
    walks: int = DEFAULT_WALKS,
    max_steps: int = DEFAULT_MAX_STEPS,
    only: Sequence[str] | None = None,
    rebalance: bool = False,
    workers: int = 1,
    serial_until: int = 0,
    expected: Sequence[str] = (),
    every_property: bool = False,
    baseline: bool = False,
) -> Outcome:
    """Explore ``config`` with ``engine``; minimise and measure any counterexample.
    ``budget_seconds`` stops a search early (the result is then inconclusive); the work
    itself is fixed by ``max_states``/``max_depth`` (bfs), ``walks``/``max_steps`` (walk)
    and the profile (hypothesis). ``only`` checks just the named properties
    (``invariants.check.select_properties``); the result's ``properties`` lists what was
    checked. ``rebalance`` measures rebalance time (bfs and walk; always when the config
    declares ``max_rebalance_steps``) and, under rules other than the reference ones,
    compares it with the reference rules' on the same config. ``workers`` > 1 runs BFS on
    that many processes (``groupcheck.explore.pbfs``: the same states, the same
    counterexample), starting them once a level holds ``serial_until`` states
    (``parallel_bfs``); rebalance-time measurement runs on the serial engine.

    ``every_property`` goes on past violations and reports the first (bfs: a shortest) or
    shortest (walk, hypothesis) violation of each property, within the same bounds;
    ``expected`` names known findings whose violations are reported but neither stop the
    search nor fail the run. ``baseline`` (under rules other than the reference ones; it
    implies ``every_property``) also runs the reference rules on the same config, engine,
    seed and bounds and compares the two property by property: the run fails only on a
    violation the reference rules do not have (``compare_with_reference``)."""
    start = time.perf_counter()
    budget_seconds = budget.share(budget_seconds)  # within the command's whole budget
    selection = Selection.of(only)
    baseline = baseline and config.rules != DEFAULT_RULES
    every_property = every_property or baseline
    collect: Violations | None = None
    if every_property or expected:
        collect = Violations(
            expected=frozenset(expected),
            every_property=every_property,
            properties=frozenset(selection.names),
        )
    times = None
    if engine != "hypothesis" and (rebalance or config.max_rebalance_steps is not None):
        # Under a change, every start is kept to be compared with the reference rules'.
        times = RebalanceTimes(per_start={} if config.rules != DEFAULT_RULES else None)
    with budget.stage(f"the {engine} search"):
        if engine == "hypothesis":
            outcome = _hypothesis(
                config, seed, budget_seconds, profile, progress, selection, collect
            )
        elif engine == "bfs":
            outcome = _bfs(
                config,
                budget_seconds,
                z3,
                progress,
                symmetry,
                max_states,
                max_depth,
                selection,
                times,
                workers,
                serial_until,
                collect,
            )
        elif engine == "walk":
            outcome = _walk(
                config, seed, budget_seconds, progress, walks, max_steps, selection, times, collect
            )
        else:
            raise ValueError(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}")
    outcome.properties = selection.names
    outcome.expected = sorted(expected)
    outcome.every_property = every_property
    if baseline:
        if progress:
            progress("running the reference rules on the same config, engine, seed and bounds")
        key = (
            replace(config, rules=DEFAULT_RULES, name=""),  # a name is only a label
            engine,
            seed,
            profile if isinstance(profile, str) else None,
            symmetry,
            max_states,
            max_depth,
            walks,
            max_steps,
            tuple(only or ()),
            tuple(sorted(expected)),
        )
        reference = _REFERENCE_RUNS.get(key) if engine != "hypothesis" else None
        if reference is None:
            reference = explore(
                replace(config, rules=DEFAULT_RULES, name=reference_name(config)),
                engine=engine,
                seed=seed,
                budget_seconds=budget_seconds,
                profile=profile,
                minimise=False,
                shortest=False,
                symmetry=symmetry,
                max_states=max_states,
                max_depth=max_depth,
                walks=walks,
                max_steps=max_steps,
                only=only,
                expected=expected,
                every_property=True,
            )
            _remember_reference(key, engine, reference)
        outcome.baseline = compare_with_reference(config, outcome, reference)
        _judge_against_reference(outcome)
    if times is not None:
        outcome.rebalance = _rebalance_json(config, times)
        if config.rules != DEFAULT_RULES and outcome.result != "violation":
            if progress:
                progress("measuring the reference rules' rebalance time on the same config")
            reference_rebalance = reference_times(
                config,
                engine,
                per_start=engine == "bfs",
                seed=seed,
                walks=walks,
                max_steps=max_steps,
                max_states=max_states,
                max_depth=max_depth,
                budget_seconds=budget.share(budget_seconds),
                symmetry=symmetry,
            )
            slower = slower_rebalance(config, times, reference_rebalance.to_json())
            if slower is not None:
                outcome.findings.append(slower)
            # Start by start (the worst case hides a change slower only elsewhere).
            if engine == "walk":
                scope = f"the starts of {walks} walks of up to {max_steps} steps"
                comparison = compare_starts(config, times, replayed(config, times), scope)
            else:
                within = f" within {max_depth} steps" if max_depth is not None else ""
                scope = f"every start both searches reached{within}"
                comparison = compare_starts(config, times, reference_rebalance, scope)
            outcome.rebalance["per_start"] = comparison
    if outcome.path is not None and outcome.property is not None:
        outcome.original_length = len(outcome.path.actions)
        if minimise:
            if progress:
                progress(f"minimising a {outcome.original_length}-step counterexample")
            with budget.stage("minimising the counterexample"):
                outcome.path = minimise_path(
                    outcome.path, outcome.property, deadline=budget.expired
                )
            if budget.expired():
                outcome.reasons.append(
                    "the time budget ran out while the counterexample was minimised: it may "
                    "be longer than it needs to be"
                )
        if engine == "bfs" and outcome.property != "Convergence":
            outcome.shortest = outcome.original_length  # BFS order: already a shortest one
        elif shortest:
            if progress:
                progress("measuring the shortest counterexample (bfs)")
            with budget.stage("measuring the shortest counterexample"):
                outcome.shortest = shortest_length(
                    config, outcome.property, budget_seconds=budget.remaining()
                )
        if shrink:
            if progress:
                progress("shrinking the config")
            with budget.stage("shrinking the config"):
                smaller, small_path = shrink_config(
                    config, outcome.property, remaining=budget.remaining
                )
            if small_path is not None and smaller != config:
                outcome.shrunk_config = smaller
                outcome.path = minimise_path(small_path, outcome.property)
                outcome.shortest = len(small_path.actions)
                again = first_violations(smaller, outcome.path.actions, check_convergence=True)
                if again is not None:
                    named = [v for v in again[0] if v.property == outcome.property]
                    outcome.message = (named or again[0])[0].message
        # Every violation of a state or step property is re-checked with Z3 (README.md,
        # Conventions).
        outcome.z3 = z3_recheck(outcome.path, outcome.property)
    if minimise and outcome.violations:
        outcome.violations = [
            replace(f, path=outcome.path)
            if f.property == outcome.property
            and outcome.path is not None
            and outcome.shrunk_config is None
            else replace(f, path=minimise_path(f.path, f.property))
            for f in outcome.violations
        ]
    outcome.seconds = time.perf_counter() - start
    return outcome


def replay_violates(path: Path, prop: str) -> bool:
    """Whether ``path`` replays step for step under its config and violates ``prop`` there:
    on the way (state and step properties) or, for Convergence, from where it ends."""
    config = path.config
    checker = Checker()
    state = system.initial(config)
    if any(v.property == prop for v in checker.check_state(state)):
        return True
    for action in path.actions:
        if action not in system.enabled(state, config):
            return False
        new = system.step(state, action, config)
        bad = checker.check_step(state, action, new) + checker.check_state(new)
        if any(v.property == prop for v in bad):
            return True
        state = new
    if prop == CONVERGENCE.name:  # claimed only when shown: a fair loop or a stuck state
        return isinstance(convergence_violation(state, config, DEFAULT_BOUND), Violation)
    return False


def reference_reproduces(path: Path, prop: str) -> bool:
    """Whether the reference rules violate ``prop`` on ``path`` (found under other rules)."""
    return replay_violates(Path(replace(path.config, rules=DEFAULT_RULES), path.actions), prop)


def reference_name(config: Config) -> str:
    """The name of ``config`` run under the reference rules."""
    return f"{config.name}-reference"


COMPARISONS = ("introduces", "both", "removes", "neither")
"""A change against the reference rules, on the same config, engine, seed and bounds: it
introduces a violation the reference rules do not have; both violate (the change adds
nothing there); the change removes a violation the reference rules have; neither
violates."""


def _found_json(f: Found | None) -> dict[str, Any] | None:
    if f is None:
        return None
    return {"message": f.message, "path": f.path.encode(), "length": len(f.path.actions)}


_REFERENCE_RUNS: dict[tuple[Any, ...], Outcome] = {}
"""The reference rules' runs of this process, by config and search (engine, seed, bounds,
properties): a second change judged on the same search reads the first one's (the model
is a pure function of the config, and a walk of its seed). Only complete searches of the
deterministic engines are kept — never one a time budget cut short — and at most
``_REFERENCE_RUNS_KEPT``."""
_REFERENCE_RUNS_KEPT = 16


def _remember_reference(key: tuple[Any, ...], engine: str, reference: Outcome) -> None:
    said = [reference.checked or "", *reference.reasons, *reference.search_reasons]
    if engine == "hypothesis" or any("time budget" in text for text in said):
        return
    if len(_REFERENCE_RUNS) >= _REFERENCE_RUNS_KEPT:
        _REFERENCE_RUNS.pop(next(iter(_REFERENCE_RUNS)))
    _REFERENCE_RUNS[key] = reference


def compare_with_reference(config: Config, change: Outcome, reference: Outcome) -> dict[str, Any]:
    """Property by property: what the change (``change``, run with ``every_property``)
    violates against what the reference rules (``reference``) violate on the same config,
    engine, seed and bounds. A property one side violates and the other's search did not
    meet is checked once more by replay — the change's counterexample under the reference
    rules, the reference's under the change — and a replay that violates it makes the
    property violated by both. ``comparison`` is the first of ``COMPARISONS`` that holds of
    some property not expected (``neither`` when none is violated)."""
    mine = {f.property: f for f in change.violations}
    theirs = {f.property: f for f in reference.violations}
    complete = (change.search_result or change.result) == "ok"
    rows: list[dict[str, Any]] = []
    for prop in [*mine, *(p for p in theirs if p not in mine)]:
        c, r = mine.get(prop), theirs.get(prop)
        if c is not None and r is None:
            again = reference_reproduces(c.path, prop)
            outcome = "both" if again else "introduced"
            note = (
                "the change's counterexample violates it under the reference rules too "
                "(their search did not meet it within the bounds)"
                if again
                else "the reference rules violate it neither within the same bounds nor on "
                "the change's counterexample"
            )
        elif c is not None and r is not None:
            outcome = "both"
            note = "the reference rules violate it too" + (
                ""
                if reference_reproduces(c.path, prop)
                else ", though not on the change's counterexample"
            )
        else:
            assert r is not None
            again = replay_violates(Path(config, r.path.actions), prop)
            outcome = "both" if again else "removed"
            note = (
                "the reference's counterexample violates it under the change too (the "
                "change's search did not meet it within the bounds)"
                if again
                else "the change violates it neither within the same bounds"
                + ("" if complete else " (its search was incomplete)")
                + " nor on the reference's counterexample"
            )
        rows.append(
            {
                "property": prop,
                "outcome": outcome,
                "expected": prop in change.expected,
                "note": note,
                "change": _found_json(c),
                "reference": _found_json(r),
            }
        )
    present = {row["outcome"] for row in rows if not row["expected"]}
    comparison = "neither"
    for name, row_outcome in zip(COMPARISONS, ("introduced", "both", "removed"), strict=False):
        if row_outcome in present:
            comparison = name
            break
    return {
        "comparison": comparison,
        "properties": rows,
        "reference": {
            "config": reference_name(config),
            "result": reference.search_result or reference.result,
            "reasons": reference.search_reasons if reference.search_result else reference.reasons,
            "checked": reference.checked,
            "violated": sorted(theirs),
            "seconds": round(reference.seconds, 3),
        },
    }


def _judge_against_reference(outcome: Outcome) -> None:
    """The change's verdict once compared: a violation only of a property it introduces
    (and did not expect), shown with that property's counterexample — one the reference
    rules do not produce; else the verdict of its search (complete, witnesses hit)."""
    assert outcome.baseline is not None
    introduced = [
        row["property"]
        for row in outcome.baseline["properties"]
        if row["outcome"] == "introduced" and not row["expected"]
    ]
    by_name = {f.property: f for f in outcome.violations}
    if introduced:
        first = by_name[introduced[0]]
        outcome.result, outcome.reasons = "violation", []
        outcome.property, outcome.message, outcome.path = first.property, first.message, first.path
        return
    outcome.result = outcome.search_result or outcome.result
    outcome.reasons = list(outcome.search_reasons)
    outcome.property = outcome.message = None
    outcome.path = None


def _rebalance_json(config: Config, times: RebalanceTimes) -> dict[str, Any]:
    path = Path(config, times.worst_actions) if times.worst_actions is not None else None
    doc = times.to_json(path)
    doc["bound"] = config.max_rebalance_steps
    return doc


def slower_rebalance(
    config: Config, times: RebalanceTimes, reference: dict[str, Any] | None
) -> dict[str, Any] | None:
    """A finding when the rules of ``config`` make the worst rebalance slower than the
    reference rules' worst on the same config: the path to the start of the slowest
    rebalance, its steps, and what the reference rules need from the same path when it is
    one of theirs too."""
    if reference is None or times.worst is None or reference.get("worst_steps") is None:
        return None
    if times.worst.steps <= reference["worst_steps"]:
        return None
    actions = times.worst_actions or ()
    at_start = None
    reference_config = replace(config, rules=DEFAULT_RULES)
    state = system.initial(reference_config)
    replayable = True
    for action in actions:
        if action not in system.enabled(state, reference_config):
            replayable = False
            break
        state = system.step(state, action, reference_config)
    if replayable:
        at_start = measure(state, reference_config).steps
    return {
        "kind": "slower-rebalance",
        "steps": times.worst.steps,
        "heartbeat_rounds": times.worst.rounds,
        "reference_worst_steps": reference["worst_steps"],
        "reference_steps_from_the_same_path": at_start,
        "path": Path(config, tuple(actions)).encode(),
        "length": len(actions),
        "message": (
            f"these rules need {times.worst.steps} fair steps to converge after the path's "
            f"last perturbation; the reference rules need at most "
            f"{reference['worst_steps']} on this config"
            + (f" ({at_start} from the same path)" if at_start is not None else "")
        ),
    }


SHORTEST_MAX_BYTES = 1 << 30
"""The memory the BFS measuring the shortest counterexample may take, estimated from the
size of the initial state (a 2,000-client config's search grew to 3.7 GB, issue 42): it
visits at most this many bytes' worth of states (and at most ``SHORTEST_MAX_STATES``)."""


def shortest_length(
    config: Config,
    prop: str,
    max_states: int = SHORTEST_MAX_STATES,
    budget_seconds: float | None = None,
) -> int | None:
    """Length of the BFS-shortest path violating ``prop`` (None when BFS did not find one
    within ``max_states`` states, within the states ``SHORTEST_MAX_BYTES`` holds, or
    within ``budget_seconds``)."""
    if budget_seconds is not None and budget_seconds <= 0:
        return None
    max_states = min(max_states, SHORTEST_MAX_BYTES // state_bytes(config))
    if max_states < 2:
        return None
    res = bfs(config, max_states=max_states, stop_on=prop, budget_seconds=budget_seconds)
    if res.path is None or res.property != prop:
        return None
    return len(res.path.actions)


def state_bytes(config: Config) -> int:
    """An estimate of the memory one stored state of ``config`` takes: its initial state's
    pickled size (states share structure, so this overstates rather than understates)."""
    return max(1, len(pickle.dumps(system.initial(config), protocol=pickle.HIGHEST_PROTOCOL)))


def z3_recheck(path: Path, prop: str) -> str:
    """Re-check the final violation with Z3 (state and step properties): "violated" when Z3
    agrees, "proved" when it does not (a disagreement), "unknown" when it cannot tell."""
    from invariants.z3.check import recheck  # noqa: PLC0415  z3 only when a symbolic check runs

    props = {p.name: p for p in all_properties()}
    target = props.get(prop)
    if target is None or target.expr is None:
        return "not applicable (a convergence or witness property)"
    states = list(path.states())
    if target.kind is Kind.ALWAYS_STATE:
        return str(recheck(target, project(states[-1])).value)
    if len(states) < 2:
        return "not applicable (no step)"
    return str(recheck(target, StepSnapshot(project(states[-2]), project(states[-1]))).value)


def _hypothesis(
    config: Config,
    seed: int,
    budget: float | None,
    profile: str,
    progress: Progress | None,
    selection: Selection,
    collect: Violations | None = None,
) -> Outcome:
    from groupcheck.explore.hypothesis_engine import PROFILES, run_hypothesis  # noqa: PLC0415  hypothesis only for its engine

    out = run_hypothesis(
        config,
        seed=seed,
        profile=profile,
        budget_seconds=budget,
        checker_factory=selection.checker,
        check_convergence=selection.convergence,
        violations=collect,
        progress=(lambda ex, st: progress(f"hypothesis: {ex} examples, {st} steps"))
        if progress
        else None,
    )

    required = required_witnesses(config)
    missed = [w.prop.name for w in WITNESSES if w.prop.name in required - out.seen]
    planned = PROFILES[profile].examples
    unchecked = undecided_reason(len(out.undecided), max(out.undecided, default=0))
    result, reasons = conclude(
        violated=out.path is not None,
        complete=out.complete,
        incomplete_reason=f"the time budget ({budget} s) ran out before the profile's "
        f"{planned} examples were run",
        missed_witnesses=missed,
        unchecked=unchecked,
    )
    found = list(out.found)
    search_result: str | None = None
    search_reasons: list[str] = []
    prop, message, path = out.property, out.message, out.path
    if collect is not None:
        clean, search_reasons = conclude(
            violated=False,
            complete=out.complete,
            incomplete_reason=f"the examples stopped at a violation of {out.property}"
            if out.path is not None
            else f"the time budget ({budget} s) ran out before the profile's {planned} "
            "examples were run",
            missed_witnesses=missed,
            unchecked=unchecked,
        )
        search_result = clean.value
        unexpected = [f for f in found if f.property not in collect.expected]
        if unexpected:
            result, reasons = Result.VIOLATION, []
            prop, message, path = unexpected[0].property, unexpected[0].message, unexpected[0].path
        else:
            result, reasons = clean, search_reasons
            prop = message = path = None
    return Outcome(
        engine="hypothesis",
        result=result.value,
        property=prop,
        message=message,
        path=path,
        violations=found,
        search_result=search_result,
        search_reasons=search_reasons,
        examples=out.examples,
        steps=out.steps,
        witnesses=sorted(out.seen),
        missed_witnesses=missed,
        reasons=reasons,
        checked=f"profile {profile!r}: {out.examples} examples of up to "
        f"{PROFILES[profile].steps} steps ({out.steps} steps)",
    )


def _from_result(engine: str, res: Any) -> Outcome:
    """Adapt an engine's result record to an ``Outcome``."""
    return Outcome(
        engine=engine,
        result=str(res.result),
        property=res.property,
        message=res.message,
        path=res.path,
        distinct_states=res.distinct_states,
        exhausted=res.exhausted,
        steps=int(res.steps or 0),
        witnesses=list(res.witnesses or []),
        missed_witnesses=list(res.missed_witnesses or []),
        reasons=list(res.reasons),
        checked=res.checked or _until_violation(engine, res),
        violations=list(res.violations),
        search_result=res.search_result,
        search_reasons=list(res.search_reasons),
    )


def _until_violation(engine: str, res: Any) -> str:
    """What a search that stopped at a violation checked, in words (an engine fills
    ``checked`` only when it ran to its end; docs/json.md: it is never empty)."""
    steps = int(res.steps or 0)
    if engine == "bfs" and res.distinct_states is not None:
        return f"{res.distinct_states} distinct states ({steps} steps), up to the first violation"
    return f"{steps} steps, up to the first violation"


def _bfs(
    config: Config,
    budget: float | None,
    z3: bool,
    progress: Progress | None,
    symmetry: bool,
    max_states: int | None,
    max_depth: int | None,
    selection: Selection,
    times: RebalanceTimes | None,
    workers: int = 1,
    serial_until: int = 0,
    collect: Violations | None = None,
) -> Outcome:
    cb = None
    if progress is not None:
        started = time.perf_counter()

        def cb(states: int, depth: int, frontier: int) -> None:
            rate = states / max(time.perf_counter() - started, 1e-9)
            progress(
                f"bfs: {states} states, depth {depth}, frontier {frontier}, {rate:.0f} states/s"
            )

    if workers > 1 and times is not None and progress is not None:
        progress(
            "bfs: rebalance-time measurement runs on the serial engine only: searching on 1 worker"
        )
    if workers > 1 and collect is not None and times is None and progress is not None:
        progress(
            "bfs: a search past violations (--expect, every property) runs on the serial "
            "engine only: searching on 1 worker"
        )
    if workers > 1 and times is None and collect is None:
        from groupcheck.explore.pbfs import parallel_bfs  # noqa: PLC0415  numpy only for the parallel engine

        res = parallel_bfs(
            config,
            workers=workers,
            budget_seconds=budget,
            progress=cb,
            z3=z3,
            symmetry=symmetry,
            max_states=max_states,
            max_depth=max_depth,
            checker_factory=selection.checker,
            check_convergence=selection.convergence,
            serial_until=serial_until,
        )
        outcome = _from_result("bfs", res)
        outcome.workers = res.workers
        outcome.collision_probability = res.collision_probability
        outcome.bytes_per_state = res.bytes_per_state
        return outcome
    res = bfs(
        config,
        budget_seconds=budget,
        progress=cb,
        z3=z3,
        symmetry=symmetry,
        max_states=max_states,
        max_depth=max_depth,
        checker_factory=selection.checker,
        check_convergence=selection.convergence,
        rebalance=times,
        violations=collect,
    )
    outcome = _from_result("bfs", res)
    outcome.workers = 1
    return outcome


def _walk(
    config: Config,
    seed: int,
    budget: float | None,
    progress: Progress | None,
    walks: int,
    max_steps: int,
    selection: Selection,
    times: RebalanceTimes | None,
    collect: Violations | None = None,
) -> Outcome:
    cb = None
    if progress is not None:

        def cb(done: int, steps: int) -> None:
            progress(f"walk: {done}/{walks} walks, {steps} steps")

    res = walk(
        config,
        seed=seed,
        walks=walks,
        max_steps=max_steps,
        budget_seconds=budget,
        progress=cb,
        checker_factory=selection.checker,
        check_convergence=selection.convergence,
        rebalance=times,
        violations=collect,
    )
    return _from_result("walk", res)


def replay(path: Path) -> tuple[list[Violation], int] | None:
    """Violations of the first violating step of ``path`` (and that step), or None."""
    found = first_violations(path.config, path.actions, check_convergence=True)
    return None if found is None else (list(found[0]), found[1])


def replay_undecided(path: Path) -> tuple[tuple[list[Violation], int] | None, Lasso | None]:
    """``replay``, and when nothing is violated the undecided Convergence check, if any:
    the fair schedule from the path's end hit its bound (named in the ``Lasso``) without
    showing a fair loop or a stuck state — the replay is then inconclusive, not ok."""
    found, undecided = replay_verdict(path.config, path.actions, check_convergence=True)
    return (None if found is None else (list(found[0]), found[1])), undecided


__all__ = [
    "ENGINES",
    "Outcome",
    "Result",
    "explore",
    "replay",
    "replay_undecided",
    "shortest_length",
]
