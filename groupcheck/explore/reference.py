"""The reference rules' rebalance times on a config (``groupcheck explore --rebalance``):
the change's search is compared against them (``groupcheck.explore.rebalance``). Its own
module since it runs the engines (``bfs``, ``walk``), which record into a
``RebalanceTimes``."""

from __future__ import annotations

from groupcheck.explore.bfs import bfs
from groupcheck.explore.rebalance import RebalanceTimes, reference_config
from groupcheck.explore.walk import walk
from invariants.check import Checker
from model.config import Config


def reference_times(
    config: Config,
    engine: str,
    *,
    per_start: bool,
    seed: int = 0,
    walks: int = 1000,
    max_steps: int = 60,
    max_states: int | None = None,
    max_depth: int | None = None,
    budget_seconds: float | None = None,
    symmetry: bool = False,
) -> RebalanceTimes:
    """The reference rules' rebalances on ``config`` under the same bounds as the change's
    search. No property is checked (the comparison is about time; a property the reference
    rules violate on this config does not stop it)."""

    def nothing() -> Checker:
        return Checker(state_properties=(), step_properties=(), witnesses=())

    ref = reference_config(config)
    times = RebalanceTimes(per_start={} if per_start else None)
    if engine == "bfs":
        bfs(
            ref,
            max_states=max_states,
            max_depth=max_depth,
            symmetry=symmetry,
            budget_seconds=budget_seconds,
            checker_factory=nothing,
            check_convergence=False,
            rebalance=times,
        )
    elif engine == "walk":
        walk(
            ref,
            seed=seed,
            walks=walks,
            max_steps=max_steps,
            budget_seconds=budget_seconds,
            checker_factory=nothing,
            check_convergence=False,
            rebalance=times,
        )
    else:
        raise ValueError(f"rebalance time is measured by bfs and walk, not {engine!r}")
    return times
