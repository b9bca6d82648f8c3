"""Agreement between the Python model and ``tla/KIP848.tla``, checked with TLC.

* ``crosscheck``: the reachable states of the Python model, projected onto the TLA+
  variables (``project``), equal the states TLC reaches — as sets, read from TLC's state
  dump. A state one side reaches and the other, having explored everything, does not is
  a disagreement (``violation``); when a side was cut short (``max_states``, or TLC stopped
  at a violation) and no such state shows, the result is ``inconclusive``.
* ``convergence_agreement``: TLC's liveness check of ``Convergence`` under ``FairSpec``
  and the Python engine's bounded fair-schedule check give the same verdict.
* ``mutant_agreement``: for a mutant with a TLA+ counterpart (the same rule replaced
  under ``Mutant = "<name>"``), TLC reports the same violated property as the Python
  engine, and the Python counterexample replays in TLC as a behaviour of the mutated spec
  that ends in the violation. Anything else is a disagreement (``violation``), unless the
  Python search stopped at its budget without finding a violation (``inconclusive``).
"""

from __future__ import annotations

import tempfile
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from groupcheck.families import TLA, facet_for
from groupcheck.mutants import get_mutant, tla_mutants
from groupcheck.rulesfile import load_rules, with_rules
from groupcheck.tla.configs import (
    MODEL_VALUES,
    STATE_INVARIANTS,
    cfg_text,
    check_in_scope,
    check_mutant,
    config_named,
    tla_name,
)
from groupcheck.tla.tlc import TlcResult, run_tlc, with_mutant
from groupcheck.tla.values import Fn, Seq, State, read_dump
from invariants.verdict import Result
from model import system
from model.config import Config
from model.path import Path as ModelPath
from model.status import ConfigError

Progress = Callable[[str], None]

TLA_MUTANTS = tla_mutants(agreement=True)
"""Mutants whose rule ``tla/KIP848.tla`` replaces the same way under ``Mutant`` and whose
Python counterexample violates a safety property: the catalogue entries with
``tla="agreement"`` (``Mutant.tla``). (``ack-ignored`` and ``reject-epoch-zero-rejoin``
violate only Convergence: ``convergence_agreement``.)"""


def python_states(config: Config, progress: Progress | None = None) -> set[State]:
    """Every reachable state of the Python model, projected onto the TLA+ variables."""
    return bounded_python_states(config, progress)[0]


def bounded_python_states(
    config: Config, progress: Progress | None = None, max_states: int | None = None
) -> tuple[set[State], bool]:
    """The reachable states of the Python model (breadth-first, at most ``max_states``
    model states), projected onto the TLA+ variables, and whether they are all of them
    (a config of a family without a TLA+ projection is refused: ``groupcheck.families.TLA``)."""
    project = facet_for(TLA, config)
    partitions = config.topics[0][1]
    init = system.initial(config)
    seen = {init}
    queue = deque([init])
    complete = True
    while queue and complete:
        state = queue.popleft()
        for action in system.enabled(state, config):
            nxt = system.step(state, action, config)
            if nxt not in seen:
                if max_states is not None and len(seen) >= max_states:
                    complete = False
                    break
                seen.add(nxt)
                queue.append(nxt)
                if progress and len(seen) % 20000 == 0:
                    progress(f"Python model: {len(seen)} states")
    return {project(s, partitions) for s in seen}, complete


def tlc_states(
    config: Config, progress: Progress | None = None, max_states: int | None = None
) -> tuple[set[State], TlcResult]:
    """The states TLC reaches on ``config`` (its ``-dump``), and the run's result."""
    with tempfile.TemporaryDirectory(prefix="groupcheck-dump-") as tmp:
        dump = Path(tmp) / "states.dump"
        # A bounded search with several workers stops at a state set that depends on their
        # timing; one worker's breadth-first order is the same every run.
        workers = 1 if max_states is not None else 2
        result = run_tlc(
            cfg_text(config), dump=dump, progress=progress, max_states=max_states, workers=workers
        )
        states = set(read_dump(str(dump)))
    return states, result


def _verdict(disagree: bool, cut: list[str]) -> Result:
    if disagree:
        return Result.VIOLATION
    return Result.INCONCLUSIVE if cut else Result.OK


def _show(state: State) -> dict[str, Any]:
    return {name: to_tla(value) for name, value in state}


def crosscheck(
    name: str,
    examples: int = 3,
    progress: Progress | None = None,
    max_states: int | None = None,
    rules_spec: str | None = None,
) -> dict[str, Any]:
    """Compare the reachable state sets of configuration ``name``; ``max_states`` bounds
    each side's search (Python: model states; TLC: distinct states). ``rules_spec``
    (``FILE.py:NAME``) runs the Python side under rules from a file against the reference
    specification: the states only one side reaches are what the rule change adds or
    removes."""
    config = config_named(name)
    check_in_scope(config)
    if rules_spec is not None:
        rules, source = load_rules(rules_spec)
        config = with_rules(config, rules, source)
    if progress:
        progress(f"exploring {config.name} with the Python model")
    py, py_complete = bounded_python_states(config, progress, max_states)
    if progress:
        progress(f"exploring {config.name} with TLC")
    tl, result = tlc_states(config, progress, max_states)
    only_py = sorted(py - tl, key=repr)[:examples]
    only_tlc = sorted(tl - py, key=repr)[:examples]
    cut: list[str] = []
    if not py_complete:
        cut.append(
            f"the Python search stopped at the bound of {max_states} model states: "
            "the state space may be larger"
        )
    if result.result == "violation":
        cut.append(f"TLC stopped at a violation of {result.violated}")
    cut += result.reasons
    # A state one side reaches is a disagreement only if the other side saw everything.
    disagree = (bool(py - tl) and result.complete) or (bool(tl - py) and py_complete)
    verdict = _verdict(disagree, cut)
    return {
        "config": config.name,
        "result": str(verdict),
        "reasons": cut if verdict is Result.INCONCLUSIVE else [],
        "python_states": len(py),
        "python_complete": py_complete,
        "tlc_states": len(tl),
        "tlc_distinct_states": result.distinct_states,
        "tlc_complete": result.complete,
        "equal": py == tl,
        "only_in_python": [_show(s) for s in only_py],
        "only_in_tlc": [_show(s) for s in only_tlc],
        "only_in_python_count": len(py - tl),
        "only_in_tlc_count": len(tl - py),
    }


# --------------------------------------------------------------------------- TLA+ text


def to_tla(value: Any) -> str:
    """A canonical value in TLA+ syntax (model values bare, other strings quoted)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value if value in MODEL_VALUES else '"' + value.replace('"', '\\"') + '"'
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(to_tla(v) for v in value)) + "}"
    if isinstance(value, Seq):
        return "<<" + ", ".join(to_tla(v) for v in value.items) + ">>"
    if isinstance(value, Fn):
        keys = [k for k, _ in value.items]
        if all(isinstance(k, str) and k not in MODEL_VALUES for k in keys):
            return "[" + ", ".join(f"{k} |-> {to_tla(v)}" for k, v in value.items) + "]"
        return "(" + " @@ ".join(f"{to_tla(k)} :> {to_tla(v)}" for k, v in value.items) + ")"
    raise TypeError(f"no TLA+ form for {value!r}")


def trace_module(states: Iterable[State], violated: str) -> str:
    """A module whose behaviours follow ``states`` step by step through ``Next``; its
    invariant ``NotReplayedToViolation`` fails exactly when TLC replays the whole trace
    and the last state (or step) violates ``violated``."""
    states = list(states)
    names = [n for n, _ in states[0]]
    rows = ",\n    ".join(
        "[" + ", ".join(f"{n} |-> {to_tla(v)}" for n, v in s) + "]" for s in states
    )
    match_now = " /\\ ".join(f"{n} = Trace[1].{n}" for n in names)
    match_next = " /\\ ".join(f"{n}' = Trace[step + 1].{n}" for n in names)
    prop = tla_name(violated)
    if prop in STATE_INVARIANTS:
        check = f"NotReplayedToViolation == ~(step = Len(Trace) /\\ ~{prop})\nReplayed == TRUE\n"
    else:
        check = (
            "NotReplayedToViolation == TRUE\n"
            f"Replayed == [][~(step' = Len(Trace) /\\ ~{prop}_Step)]_<<vars, step>>\n"
        )
    return (
        "---------------------------- MODULE TraceReplay ----------------------------\n"
        "EXTENDS MC\n"
        "VARIABLE step\n"
        f"Trace == <<\n    {rows}\n    >>\n"
        f"TraceInit == Init /\\ step = 1 /\\ {match_now}\n"
        f"TraceNext == step < Len(Trace) /\\ Next /\\ step' = step + 1 /\\ {match_next}\n"
        "StepReached == step\n"
        f"{check}"
        "=============================================================================\n"
    )


def trace_cfg(base_cfg: str) -> str:
    """The replay configuration: the constants of ``base_cfg`` and the replay checks."""
    constants = base_cfg.split("INIT", 1)[0]
    return (
        constants
        + "INIT TraceInit\nNEXT TraceNext\n"
        + "INVARIANT NotReplayedToViolation\nPROPERTY Replayed\n"
    )


def replay_in_tlc(path: ModelPath, violated: str, mutant: str | None) -> TlcResult:
    """Replay a Python path in TLC (with ``mutant`` switched on in the spec)."""
    config = path.config
    project = facet_for(TLA, config)
    partitions = config.topics[0][1]
    states = [project(s, partitions) for s in path.states()]
    base = with_mutant(cfg_text(config), mutant)
    return run_tlc(
        trace_cfg(base),
        module="TraceReplay",
        workers=1,
        extra_modules={"TraceReplay.tla": trace_module(states, violated)},
    )


def mutant_agreement(mutant: str, budget: float = 120.0) -> dict[str, Any]:
    """Python engine and TLC on one mutant: the same violated property, and the Python
    counterexample replayed in TLC."""
    from groupcheck.explore.run import explore  # noqa: PLC0415  networkx only when a state graph is built

    if mutant not in TLA_MUTANTS:
        raise ConfigError(
            f"mutant {mutant!r} has no TLA+ counterpart; those with one: {', '.join(TLA_MUTANTS)}"
        )
    m = get_mutant(mutant)
    config = m.mutated_config()
    scenario = config_named(m.config.name)
    check_in_scope(scenario)
    outcome = explore(config, engine="bfs", budget_seconds=budget, shortest=False)
    # One worker: TLC's breadth-first search then reports a shortest counterexample, as
    # the Python BFS does, so the two lengths are comparable.
    tlc = run_tlc(with_mutant(cfg_text(scenario), mutant), workers=1)
    doc: dict[str, Any] = {
        "mutant": mutant,
        "config": scenario.name,
        "python_violated": outcome.property,
        "python_length": len(outcome.path.actions) if outcome.path is not None else None,
        "tlc_violated": tlc.violated,
        "tlc_length": len(tlc.trace) - 1 if tlc.trace else None,
        "same_property": outcome.property is not None and outcome.property == tlc.violated,
    }
    if outcome.path is not None and outcome.property is not None:
        replay = replay_in_tlc(outcome.path, outcome.property, mutant)
        doc["replayed_in_tlc"] = replay.result == "violation"
    else:
        doc["replayed_in_tlc"] = False
    agree = doc["same_property"] and doc["replayed_in_tlc"]
    cut: list[str] = []
    if not agree and outcome.property is None and not outcome.exhausted:
        cut.append(
            f"{mutant}: the Python BFS stopped at its budget ({budget:g} s) without a violation"
        )
    if not agree and tlc.violated is None and not tlc.complete:
        cut += [f"{mutant}: {r}" for r in tlc.reasons]
    # Disagreement is a violation of agreement, unless a side was cut short before it could
    # find the mutant's violation.
    verdict = _verdict(not agree and not cut, cut)
    doc["result"] = str(verdict)
    doc["reasons"] = cut if verdict is Result.INCONCLUSIVE else []
    return doc


def convergence_agreement(name: str, mutant: str | None = None) -> dict[str, Any]:
    """``Convergence`` on configuration ``name`` (with ``mutant`` switched on in both):
    TLC under ``FairSpec`` and the Python BFS engine's fair-schedule check."""
    from groupcheck.explore.bfs import bfs  # noqa: PLC0415  networkx only when a state graph is built

    config = config_named(name)
    check_in_scope(config)
    check_mutant(mutant)
    python_config = config if mutant is None else replace(config, rules=get_mutant(mutant).rules)
    py = bfs(python_config, check_convergence=True)
    tlc = run_tlc(with_mutant(cfg_text(config, liveness=True), mutant))
    # The two agree when both searches are complete and both say violated (the same
    # property) or both say not violated. Witnesses are not part of this comparison (TLC
    # checks none): a Python search that is complete but missed a witness still says
    # "not violated".
    python_says = "violation" if py.property is not None else ("ok" if py.exhausted else None)
    return {
        "config": config.name,
        "mutant": mutant,
        "python_result": py.result,
        "python_exhausted": py.exhausted,
        "python_violated": py.property,
        "tlc_result": tlc.result,
        "tlc_violated": tlc.violated,
        "tlc_distinct_states": tlc.distinct_states,
        "agree": python_says is not None
        and (python_says, py.property) == (tlc.result, tlc.violated),
    }
