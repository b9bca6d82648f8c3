"""The Hypothesis engine: run the model's state machine, shrink failures to a path.

Profiles (``PROFILES``): ``ci`` (the default), ``dev``, ``deep``. A run is a sequence of
seeded Hypothesis batches until the profile's example count or the time budget is spent;
the first failure's shrunk path is returned (Hypothesis replays the minimal example last,
and the machine keeps its path).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.stateful import get_state_machine_test

from groupcheck.explore.machine import PropertyViolated, machine_for
from invariants.check import Checker
from model.config import Config
from model.path import Path


@dataclass(frozen=True)
class Profile:
    examples: int
    steps: int
    batch: int


PROFILES: dict[str, Profile] = {
    "ci": Profile(examples=200, steps=40, batch=50),
    "dev": Profile(examples=1000, steps=60, batch=100),
    "deep": Profile(examples=10000, steps=100, batch=250),
}


@dataclass(frozen=True)
class HypothesisOutcome:
    """What a Hypothesis run found."""

    path: Path | None
    property: str | None
    message: str | None
    examples: int
    steps: int
    seen: frozenset[str]
    seconds: float


def run_hypothesis(
    config: Config,
    seed: int = 0,
    profile: str | Profile = "ci",
    budget_seconds: float | None = None,
    checker_factory: Callable[[], Checker] = Checker,
    progress: Callable[[int, int], None] | None = None,
) -> HypothesisOutcome:
    """Explore ``config`` with the Hypothesis state machine (``profile``: a profile name,
    or a ``Profile`` for callers that size their own runs, like the pipeline's sweeps)."""
    prof = profile if isinstance(profile, Profile) else PROFILES[profile]
    machine = machine_for(config, checker_factory)
    start = time.perf_counter()
    batch_settings = settings(
        max_examples=prof.batch,
        stateful_step_count=prof.steps,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate, Phase.shrink],
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
    )
    batches = max(1, prof.examples // prof.batch)
    for b in range(batches):
        test = hypothesis_seed(seed * 100_003 + b)(
            get_state_machine_test(machine, settings=batch_settings)
        )
        try:
            test()
        except PropertyViolated:
            violation = machine.last_violation
            assert violation is not None
            return HypothesisOutcome(
                Path(config, machine.last_path),
                violation.property,
                violation.message,
                machine.examples,
                machine.steps,
                frozenset(machine.seen),
                time.perf_counter() - start,
            )
        if progress is not None:
            progress(machine.examples, machine.steps)
        if budget_seconds is not None and time.perf_counter() - start > budget_seconds:
            break
    return HypothesisOutcome(
        None,
        None,
        None,
        machine.examples,
        machine.steps,
        frozenset(machine.seen),
        time.perf_counter() - start,
    )
