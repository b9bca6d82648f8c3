"""Issue 42: the search for the shortest counterexample is bounded in memory on a large
config (``SHORTEST_MAX_BYTES``, ``groupcheck/explore/run.py``): on a 2,000-client input —
built directly, not explored — the states it may store, the last expansion's overshoot
included, fit in the cap, measured with ``tracemalloc`` on real successor states."""

from __future__ import annotations

import gc
import tracemalloc
from dataclasses import replace
from typing import Any

import pytest

from groupcheck.explore import run as run_module
from groupcheck.explore.channels import channel_normal_form
from groupcheck.explore.result import ExploreResult
from model import system
from model.config import Config
from model.presets import preset

CLIENTS = 2000
MEASURED = 20
"""Successor states whose memory is measured (each step of a 2,000-client state is
about 10 ms)."""


def _large() -> Config:
    base = preset("SMALL")
    clients = tuple(replace(base.clients[0], name=f"c{i}") for i in range(CLIENTS))
    return replace(base, name=f"SMALL{CLIENTS}", clients=clients)


def test_the_shortest_search_on_2000_clients_fits_its_memory_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = _large()
    estimate = run_module.state_bytes(config)
    asked: list[int | None] = []

    def spy(config: Config, max_states: int | None = None, **_: Any) -> ExploreResult:
        asked.append(max_states)
        return ExploreResult(engine="bfs", result="inconclusive")

    monkeypatch.setattr(run_module, "bfs", spy)  # where shortest_length looks it up
    assert run_module.shortest_length(config, "Convergence") is None
    (cap,) = asked
    assert cap is not None
    # The byte cap binds on this input, not the state count.
    assert cap == run_module.SHORTEST_MAX_BYTES // estimate < run_module.SHORTEST_MAX_STATES

    # What one stored state really takes — the state and its key, as the BFS keeps them
    # (successors share the clients they did not change) — measured on successors of the
    # initial state.
    normal = channel_normal_form(config)
    init = system.initial(config)
    actions = system.enabled(init, config)
    picked = actions[:: len(actions) // MEASURED][:MEASURED]
    kept: list[tuple[Any, Any]] = []
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for action in picked:
            new = system.step(init, action, config)
            kept.append((normal(new), new))
        gc.collect()
        per_state = (tracemalloc.get_traced_memory()[0] - before) / len(kept)
    finally:
        tracemalloc.stop()
    assert 0 < per_state <= estimate  # the estimate overstates, as documented
    # The search stops at the cap, after at most one more expansion: every state it may
    # hold fits in SHORTEST_MAX_BYTES.
    assert (cap + len(actions)) * per_state <= run_module.SHORTEST_MAX_BYTES

    # A cap below two states' worth: no search at all.
    asked.clear()
    monkeypatch.setattr(run_module, "SHORTEST_MAX_BYTES", estimate)
    assert run_module.shortest_length(config, "Convergence") is None
    assert asked == []
