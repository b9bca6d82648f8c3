"""Random-walk throughput of ``system.enabled`` + ``system.step`` (goal ≥ 20,000 steps/s).

Seeded walks on a preset, restarted from the initial state every ``WALK_LENGTH`` steps so
the walk keeps visiting the busy part of the state space (joins, revocations) rather than
idling in a settled group. Counts every step taken, on one core.
"""

from __future__ import annotations

import random
import time

from model import system
from model.presets import preset

GOAL_STEPS_PER_SECOND = 20_000
WALK_LENGTH = 300


def walk(preset_name: str, steps: int, seed: int = 1) -> int:
    """Take ``steps`` random steps; return how many states were distinct from their
    predecessor (a sanity count that the walk really moves)."""
    config = preset(preset_name)
    rng = random.Random(seed)
    state = system.initial(config)
    moved = 0
    for i in range(steps):
        if i % WALK_LENGTH == 0:
            state = system.initial(config)
        actions = system.enabled(state, config)
        if not actions:
            state = system.initial(config)
            continue
        new = system.step(state, actions[rng.randrange(len(actions))], config)
        moved += new is not state
        state = new
    return moved


def run(preset_name: str = "SMALL", steps: int = 100_000) -> dict[str, object]:
    """Best of three timed walks."""
    best = float("inf")
    moved = 0
    for seed in (1, 2, 3):
        start = time.perf_counter()
        moved = walk(preset_name, steps, seed)
        best = min(best, time.perf_counter() - start)
    rate = steps / best
    return {
        "benchmark": "step_throughput",
        "preset": preset_name,
        "steps": steps,
        "seconds": round(best, 4),
        "steps_per_second": round(rate),
        "moving_steps": moved,
        "goal_steps_per_second": GOAL_STEPS_PER_SECOND,
        "meets_goal": rate >= GOAL_STEPS_PER_SECOND,
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
