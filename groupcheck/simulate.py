"""Seeded simulation: play one scenario of a preset and show every step.

The scenario is a random walk through ``system.enabled``/``system.step`` with a seeded
PRNG (randomness lives here, never in ``model``). Progress actions are preferred so the
group keeps moving; a perturbation is taken with probability ``PERTURBATION_RATE`` when one
is enabled. The same preset and seed always give the same run.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from model import system
from model.actions import Action
from model.config import Config
from model.system import AnyState

PERTURBATION_RATE = 0.15


@dataclass(frozen=True)
class SimStep:
    """One step of a simulation: its number, the action and the state after it."""

    index: int
    action: Action
    state: AnyState


def choose(rng: random.Random, actions: tuple[Action, ...]) -> Action:
    """Pick an action: a perturbation with probability ``PERTURBATION_RATE`` (when any is
    enabled), otherwise a progress action, uniformly within the chosen kind."""
    progress = [a for a in actions if not a.PERTURBATION]
    perturb = [a for a in actions if a.PERTURBATION]
    if perturb and (not progress or rng.random() < PERTURBATION_RATE):
        return perturb[rng.randrange(len(perturb))]
    return progress[rng.randrange(len(progress))]


def simulate(config: Config, seed: int, steps: int) -> Iterator[SimStep]:
    """Yield up to ``steps`` steps; stops early when nothing is enabled (deadlock)."""
    rng = random.Random(seed)
    state = system.initial(config)
    for i in range(1, steps + 1):
        actions = system.enabled(state, config)
        if not actions:
            return
        action = choose(rng, actions)
        state = system.step(state, action, config)
        yield SimStep(i, action, state)
