"""The lifted search's names ``classic_client_bmc`` imports, until it moves onto the engine
(``invariants.z3.engine``, issue 39): the engine's outcome, lift answer and fresh solver,
and its depth loop asked as a lifted search of one goal."""

from __future__ import annotations

from collections.abc import Callable

from invariants.z3 import engine
from invariants.z3.engine import FreshSolver, Lift, Lifted, Outcome, Symbolic
from model.config import Config

__all__ = ["FreshSolver", "Lifted", "Outcome", "search_lifted"]


def search_lifted(
    unroll: Symbolic,
    goal: str,
    depth: int,
    config: Config,
    *,
    lifter: Lift,
    attempts: int,
    lift_states: int,
    progress: Callable[[str], None] | None = None,
    start_depth: int = 1,
) -> Outcome:
    """``engine.search`` of one goal under push/pop scopes, every path lifted by
    ``lifter``."""
    return engine.search(
        unroll,
        [goal],
        depth,
        config=config,
        lift=lifter,
        attempts=attempts,
        lift_states=lift_states,
        scoped=True,
        progress=progress,
        start_depth=start_depth,
    )[goal]
