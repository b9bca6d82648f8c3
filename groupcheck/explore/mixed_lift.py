"""Lifting a path of a mixed group's bounded model checking
(``invariants.z3.proof.mixed_bmc``) to a trace of the Python migration model.

As ``groupcheck.explore.classic_lift``: the path's states are projections of mixed states
(``mixed_state.MixedValue``) named with the configuration's own member ids, so a model
state matches a path state when its projection equals it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from groupcheck.explore.lift_exact import lift_exact
from invariants.z3.engine import Lifted
from invariants.z3.proof.mixed_bmc import SymPath
from invariants.z3.proof.mixed_state import project
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
    return lift_exact(path.states, config, max_states, project)


def lift_witness(
    hit: Callable[[Any, Action, Any], bool],
) -> Callable[[SymPath, Config, int], tuple[list[Action] | None, int, int | None]]:
    """A lift (``mixed_witness.reach``'s) of a path whose last step is a witness's: a trace
    as :func:`lift`'s, violating no property, whose last step ``hit`` holds of (the
    witness's own reading, ``invariants.liveness``)."""

    def run(
        path: SymPath, config: Config, max_states: int
    ) -> tuple[list[Action] | None, int, int | None]:
        trace, _, visited, matched = lift_exact(path.states, config, max_states, project, hit)
        return trace, visited, matched

    return run
