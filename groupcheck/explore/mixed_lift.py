"""Lifting a path of a mixed group's bounded model checking
(``invariants.z3.proof.mixed_bmc``) to a trace of the Python migration model.

As ``groupcheck.explore.classic_lift``: the path's states are projections of mixed states
(``mixed_state.MixedValue``) named with the configuration's own member ids, so a model
state matches a path state when its projection equals it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from typing import Any

from groupcheck.explore.bfs import channel_normal_form
from invariants.check import Checker
from invariants.snapshot import project_key, snapshot_key
from invariants.z3.proof.mixed_bmc import Lifted, SymPath
from invariants.z3.proof.mixed_state import project
from model import system
from model.actions import Action
from model.config import Config


def lift(path: SymPath, config: Config, max_states: int) -> Lifted:
    """A trace of the Python migration model whose states go through ``path``'s states in
    order — steps that leave the projection as it is are free, any other change must be
    the next state — and whose last step is its first violation (``Checker``'s state and
    step properties); a breadth-first search over (model state, states matched) of at most
    ``max_states`` nodes. Returns the actions (None: none found), the violations of the
    last step, the nodes visited and, when the search was exhausted, how many of the
    path's states after the initial one some trace matched (None: the search was cut)."""
    checker = Checker()
    normal = channel_normal_form(config)
    targets = path.states
    last = len(targets) - 1
    init = system.initial(config)
    if project(init) != targets[0]:  # type: ignore[arg-type]
        return None, [], 1, -1
    Key = tuple[Hashable, int]
    start: Key = (normal(init), 0)
    parent: dict[Key, tuple[Key, Action] | None] = {start: None}
    states: dict[Key, Any] = {start: init}
    queue: deque[Key] = deque([start])
    matched = 0

    def trace(key: Key) -> list[Action]:
        actions: list[Action] = []
        link = parent[key]
        while link is not None:
            key, action = link
            actions.append(action)
            link = parent[key]
        return actions[::-1]

    while queue:
        if len(parent) >= max_states:
            return None, [], len(parent), None
        key = queue.popleft()
        k = key[1]
        state = states[key]
        pre_snap = project_key(snapshot_key(state))
        for action in system.enabled(state, config):
            new = system.step(state, action, config)
            now = project(new)  # type: ignore[arg-type]
            js = [j for j in (k, k + 1) if j <= last and now == targets[j]]
            if not js:
                continue
            snap = project_key(snapshot_key(new))
            bad = checker.check_step(state, action, new, pre_snap, snap)
            bad += checker.check_state(new, snap)
            if bad:
                if js[-1] == last and k == last - 1:
                    return [*trace(key), action], bad, len(parent), last
                continue
            for j in js:
                new_key: Key = (normal(new), j)
                if new_key in parent:
                    continue
                matched = max(matched, j)
                parent[new_key] = (key, action)
                states[new_key] = new
                queue.append(new_key)
    return None, [], len(parent), matched
