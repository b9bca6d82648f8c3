"""The Hypothesis engine: run the model's state machine and hand back the first failing
example's path (callers minimise it with delta debugging, ``groupcheck.explore.minimise``).

``PROFILES`` is the one table of Hypothesis effort (``ci``, the CI default; ``dev``;
``deep``): the engine runs a profile's examples in seeded batches, and the test suite
registers the same profiles as Hypothesis settings (``hypothesis_settings``). A run is
complete when every example of the profile ran; a time budget that stops it first makes
the result inconclusive. Every example ends with the Convergence check (the machine's
``teardown``), so the engine checks every property the other engines check.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.internal.conjecture import providers
from hypothesis.internal.constants_ast import Constants
from hypothesis.stateful import get_state_machine_test

from groupcheck.explore.machine import PropertyViolated, machine_for
from groupcheck.explore.result import Found, Violations
from invariants.check import Checker
from invariants.liveness import DEFAULT_BOUND
from model.config import Config
from model.path import Path


@dataclass(frozen=True)
class Profile:
    """Hypothesis effort: examples (state-machine runs, or examples of a property test),
    steps per state-machine run, and examples per seeded batch of the engine."""

    examples: int
    steps: int
    batch: int


PROFILES: dict[str, Profile] = {
    "ci": Profile(examples=100, steps=40, batch=50),
    "dev": Profile(examples=1000, steps=60, batch=100),
    "deep": Profile(examples=10000, steps=100, batch=250),
}

SUPPRESSED_HEALTH_CHECKS = (HealthCheck.too_slow,)
"""A state-machine step runs the model and checks every property: Hypothesis calls that
slow. The other health checks stay on."""


def hypothesis_settings(name: str, **overrides: object) -> settings:
    """The Hypothesis settings of profile ``name`` (the test suite's profiles)."""
    prof = PROFILES[name]
    values: dict[str, object] = {
        "max_examples": prof.examples,
        "stateful_step_count": prof.steps,
        "deadline": None,
        "suppress_health_check": SUPPRESSED_HEALTH_CHECKS,
    }
    values.update(overrides)
    return settings(**values)  # type: ignore[arg-type]


@contextmanager
def without_local_constants() -> Iterator[None]:
    """Make a seeded Hypothesis run depend on its seed only.

    Hypothesis sometimes draws an integer from the literals of the *local* modules that
    happen to be imported (``hypothesis.internal.conjecture.providers._get_local_constants``),
    e.g. the ``100`` of a CLI default becomes a candidate for the stateful machine's
    ``draw_integer(0, 254)``. Which modules are imported differs between a CLI process, a
    test process and a Spark worker, so the same seed gave different runs. The pool is
    pinned to empty for the run (pinned hypothesis version; see pyproject.toml)."""
    saved = providers._get_local_constants
    empty = Constants()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = saved
        providers.CONSTANTS_CACHE.cache.clear()


@dataclass(frozen=True)
class HypothesisOutcome:
    """What a Hypothesis run found; ``complete`` says whether every example ran."""

    path: Path | None
    property: str | None
    message: str | None
    examples: int
    steps: int
    seen: frozenset[str]
    seconds: float
    complete: bool = True
    found: tuple[Found, ...] = ()
    undecided: tuple[int, ...] = ()
    """The bound of each example's Convergence check that the bound cut without a fair
    loop or a stuck state showing non-convergence (the run is then inconclusive)."""
    """With ``violations`` active: the shortest violation of each property met."""


def run_hypothesis(
    config: Config,
    seed: int = 0,
    profile: str | Profile = "ci",
    budget_seconds: float | None = None,
    checker_factory: Callable[[], Checker] = Checker,
    progress: Callable[[int, int], None] | None = None,
    check_convergence: bool = True,
    violations: Violations | None = None,
    convergence_bound: int = DEFAULT_BOUND,
) -> HypothesisOutcome:
    """Explore ``config`` with the Hypothesis state machine (``profile``: a profile name,
    or a ``Profile`` for callers that size their own runs, like the pipeline's sweeps).
    With ``violations`` active, violations are recorded rather than ending the run, until
    ``Violations.note`` says to stop (``found``). ``convergence_bound``: the fair
    schedule's bound at each example's end (``invariants.liveness.convergence_bound``); a
    schedule it cuts without a fair loop or a stuck state is kept in ``undecided``."""
    prof = profile if isinstance(profile, Profile) else PROFILES[profile]
    machine = machine_for(
        config,
        checker_factory,
        check_convergence=check_convergence,
        violations=violations,
        convergence_bound=convergence_bound,
    )
    found = () if violations is None else violations.found
    start = time.perf_counter()
    batch_settings = settings(
        max_examples=prof.batch,
        stateful_step_count=prof.steps,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=SUPPRESSED_HEALTH_CHECKS,
        # No shrink phase: every caller minimises the path it gets with delta debugging
        # (groupcheck.explore.minimise), and Hypothesis's own shrinking re-ran the machine,
        # with a convergence check at every teardown, for minutes on a liveness violation.
        phases=[Phase.generate],
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
    )
    batches = max(1, prof.examples // prof.batch)
    complete = True
    with without_local_constants():
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
                    complete=False,
                    found=tuple(found.values()) if found else (),
                    undecided=tuple(machine.undecided),
                )
            if progress is not None:
                progress(machine.examples, machine.steps)
            if (
                b + 1 < batches
                and budget_seconds is not None
                and time.perf_counter() - start > budget_seconds
            ):
                complete = False
                break
    return HypothesisOutcome(
        None,
        None,
        None,
        machine.examples,
        machine.steps,
        frozenset(machine.seen),
        time.perf_counter() - start,
        complete,
        tuple(found.values()) if found else (),
        tuple(machine.undecided),
    )
