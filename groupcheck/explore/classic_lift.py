"""Lifting a path of the classic coordinator's bounded model checking
(``invariants.z3.proof.classic_bmc``) to a trace of the Python classic model.

The classic counterpart of ``groupcheck.explore.lift`` at its ``exact`` level: the path's
states are projections of classic groups (``classic_state.ClassicValue``) named with the
configuration's own member ids, so a model state matches a path state when its projection
equals it. :func:`lift_lasso` lifts the prefix of a Convergence lasso
(``invariants.z3.proof.classic_lasso``) and runs the model's fair schedule from its end.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

from groupcheck.explore.channels import channel_normal_form
from groupcheck.explore.lift_exact import lift_exact
from groupcheck.explore.minimise import convergence_violation
from invariants.check import Checker, Violation
from invariants.liveness import DEFAULT_BOUND, FairMemo
from invariants.snapshot import project_key, snapshot_key
from invariants.z3.engine import Lifted, SymPath
from invariants.z3.proof.classic_client_bmc import ClientPath, project_state
from invariants.z3.proof.classic_lasso import LassoLifted
from invariants.z3.proof.classic_state import ClassicValue, project
from model import system
from model.actions import Action
from model.config import Config


def lift(
    path: SymPath[ClassicValue],
    config: Config,
    max_states: int,
    *,
    projector: Callable[[Any], Any] = project,
) -> Lifted:
    """A trace of the Python classic model whose group goes through ``path``'s states in
    order — client steps that leave its projection as it is are free, any other change must
    be the next state — and whose last step is its first violation (``Checker``'s state
    and step properties); a breadth-first search over (model state, states matched) of at
    most ``max_states`` nodes. Returns the actions (None: none found), the violations of
    the last step, the nodes visited and, when the search was exhausted, how many of the
    path's states after the initial one some trace matched (None: the search was cut).
    ``projector`` reads a path state off a model state (by default its group's projection;
    :func:`lift_clients`: its group and clients)."""
    return lift_exact(path.states, config, max_states, projector)


def lift_clients(path: ClientPath, config: Config, max_states: int) -> Lifted:
    """:func:`lift` of a path of the classic coordinator with its clients
    (``invariants.z3.proof.classic_client_bmc``): a model state matches a path state when its
    group and every client project onto it (``classic_client_bmc.project_state``)."""
    return lift(path, config, max_states, projector=project_state)  # type: ignore[arg-type]


def lift_lasso(
    path: SymPath[ClassicValue], config: Config, max_states: int, *, bound: int | None = None
) -> LassoLifted:
    """A trace of the Python classic model whose group goes through the states of
    ``path`` — the prefix of a lasso of ``invariants.z3.proof.classic_lasso``, up to the
    loop's entry — as :func:`lift` matches them (no step of it violating a state or step
    property), and from whose last state ``invariants.liveness``'s fair schedule (with
    ``bound``, by default ``DEFAULT_BOUND``) is shown not to converge — a fair loop or a
    stuck state (``minimise.convergence_violation``; a schedule the bound only cut is not
    counted as converging, and is no lasso either);
    the first such trace of a breadth-first search of at most ``max_states`` nodes.
    Returns the actions (None: none found), the nodes visited, how many model states
    matching the entry were reached and how many of them converged, and — when the search
    was exhausted — how many of the path's states after the initial one some trace
    matched (None: the search was cut) and, when that is ``m`` short of the end, every group
    state a step from a model state matching the path's ``m``-th reaches (other than it)."""
    steps = DEFAULT_BOUND if bound is None else bound
    memo = FairMemo()
    checker = Checker()
    normal = channel_normal_form(config)
    targets = path.states
    last = len(targets) - 1
    init = system.initial(config)
    if project(init) != targets[0]:  # type: ignore[arg-type]
        return LassoLifted(None, 1, 0, 0, -1)
    Key = tuple[Hashable, int]
    start: Key = (normal(init), 0)
    parent: dict[Key, tuple[Key, Action] | None] = {start: None}
    states: dict[Key, Any] = {start: init}
    queue: deque[Key] = deque([start])
    matched = 0
    entry = {"matching": 0, "converging": 0}
    # Per index j < last: the states the group takes in a step from a model state matching
    # the path's state j (other than that state).
    moves: dict[int, list[Any]] = {}

    def trace(key: Key) -> list[Action]:
        actions: list[Action] = []
        link = parent[key]
        while link is not None:
            key, action = link
            actions.append(action)
            link = parent[key]
        return actions[::-1]

    def diverges(state: Any) -> bool:
        entry["matching"] += 1
        verdict = convergence_violation(state, config, steps, memo=memo)
        entry["converging"] += verdict is None
        return isinstance(verdict, Violation)

    if last == 0 and diverges(init):
        return LassoLifted([], 1, entry["matching"], entry["converging"], 0)
    while queue:
        if len(parent) >= max_states:
            return LassoLifted(None, len(parent), entry["matching"], entry["converging"], None)
        key = queue.popleft()
        k = key[1]
        state = states[key]
        for action, new, now, js in _matching_steps(state, k, targets, config, checker):
            if k < last and now != targets[k] and now not in moves.setdefault(k, []):
                moves[k].append(now)
            for j in js:
                new_key: Key = (normal(new), j)
                if new_key in parent:
                    continue
                matched = max(matched, j)
                parent[new_key] = (key, action)
                states[new_key] = new
                if j == last and diverges(new):
                    found = trace(new_key)
                    return LassoLifted(
                        found, len(parent), entry["matching"], entry["converging"], last
                    )
                queue.append(new_key)
    return LassoLifted(
        None,
        len(parent),
        entry["matching"],
        entry["converging"],
        matched,
        tuple(moves.get(matched, ())) if matched < last else None,
    )


def _matching_steps(
    state: Any, k: int, prefix: Sequence[ClassicValue], config: Config, checker: Checker
) -> Iterator[tuple[Action, Any, ClassicValue, list[int]]]:
    """Every model step out of ``state``, which matches ``prefix[k]``: the action, the new
    state, its group's projection, and the indices ``j`` (``k`` or ``k + 1``) of the
    prefix states it matches as :func:`lift` does — none when the step or the new state
    violates a property (a trace's first violation would end it there)."""
    last = len(prefix) - 1
    pre_snap = project_key(snapshot_key(state))
    for action in system.enabled(state, config):
        new = system.step(state, action, config)
        now = project(new)  # type: ignore[arg-type]
        js = [j for j in (k, k + 1) if j <= last and now == prefix[j]]
        if js:
            snap = project_key(snapshot_key(new))
            if checker.check_step(state, action, new, pre_snap, snap) or checker.check_state(
                new, snap
            ):
                js = []
        yield action, new, now, js


def next_states(
    prefix: Sequence[ClassicValue], config: Config, max_states: int
) -> tuple[ClassicValue, ...] | None:
    """Every group state (other than the last of ``prefix``) a model step takes the group
    to from a model state matching ``prefix``'s last state, over the traces that go through
    ``prefix``'s states as :func:`lift` matches them without a violation on the way (the
    only traces a lift of a path through ``prefix`` can extend); a breadth-first search of
    at most ``max_states`` nodes (None: the search was cut, or the initial state does not
    match)."""
    checker = Checker()
    normal = channel_normal_form(config)
    last = len(prefix) - 1
    init = system.initial(config)
    if project(init) != prefix[0]:  # type: ignore[arg-type]
        return None
    start = (normal(init), 0)
    seen: set[Hashable] = {start}
    queue: deque[tuple[Any, int]] = deque([(init, 0)])
    out: list[ClassicValue] = []
    while queue:
        if len(seen) >= max_states:
            return None
        state, k = queue.popleft()
        for _, new, now, js in _matching_steps(state, k, prefix, config, checker):
            if k == last and now != prefix[last] and now not in out:
                out.append(now)
            for j in js:
                key = (normal(new), j)
                if key not in seen:
                    seen.add(key)
                    queue.append((new, j))
    return tuple(out)
