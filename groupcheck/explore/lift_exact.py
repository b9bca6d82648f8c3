"""Lifting a path of a bounded model checking whose states are exact projections of model
states (the classic coordinator's, with or without its clients, and a mixed group's) to a
trace of the Python model: ``groupcheck.explore.lift`` at its ``exact`` level, for any
projection."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from groupcheck.explore.channels import channel_normal_form
from invariants.check import Checker
from invariants.snapshot import project_key, snapshot_key
from invariants.z3.engine import Lifted
from model import system
from model.actions import Action
from model.config import Config


def lift_exact(
    targets: Sequence[Any],
    config: Config,
    max_states: int,
    projector: Callable[[Any], Any],
    hit: Callable[[Any, Action, Any], bool] | None = None,
) -> Lifted:
    """A trace of the Python model whose states project (``projector``) onto ``targets``
    in order — steps that leave the projection as it is are free, any other change must be
    the next target — and whose last step is its first violation (``Checker``'s state and
    step properties); a breadth-first search over (model state, targets matched) of at most
    ``max_states`` nodes. With ``hit`` the last step is instead one ``hit(pre, action,
    post)`` holds of (a witness's), and the trace violates no property."""
    checker = Checker()
    normal = channel_normal_form(config)
    last = len(targets) - 1
    init = system.initial(config)
    if projector(init) != targets[0]:
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
            now = projector(new)
            js = [j for j in (k, k + 1) if j <= last and now == targets[j]]
            if not js:
                continue
            snap = project_key(snapshot_key(new))
            bad = checker.check_step(state, action, new, pre_snap, snap)
            bad += checker.check_state(new, snap)
            if bad:
                if hit is None and js[-1] == last and k == last - 1:
                    return [*trace(key), action], bad, len(parent), last
                continue
            if hit is not None and js[-1] == last and k == last - 1 and hit(state, action, new):
                return [*trace(key), action], [], len(parent), last
            for j in js:
                # A path state equal to the next one (a step that changed nothing) is
                # followed both ways.
                new_key: Key = (normal(new), j)
                if new_key in parent:
                    continue
                matched = max(matched, j)
                parent[new_key] = (key, action)
                states[new_key] = new
                queue.append(new_key)
    return None, [], len(parent), matched
