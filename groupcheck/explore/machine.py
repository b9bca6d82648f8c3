"""A Hypothesis ``RuleBasedStateMachine`` built from the model.

One rule per action family (the action's class name, the model's vocabulary); each rule
draws which of the enabled actions of its family to take. State properties are checked
as invariants after every step, step properties inside the rule, and Convergence at the
end of every example (``teardown``: from the last state, a fair schedule of progress
actions must reach a converged group — the check the walk engine makes at the end of each
walk; claimed only when a fair loop or a stuck state shows it, the bound's cuts kept in
``undecided``). A failure raises ``PropertyViolated`` naming the property, and the path of the
(shrunk) failing example is kept on the machine class so callers can report and minimise
it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from groupcheck.explore.result import Violations
from invariants.check import Checker, Violation, check_fair_tail
from invariants.liveness import CONVERGENCE, DEFAULT_BOUND
from invariants.snapshot import project
from model import system
from model.actions import ACTION_TYPES, Action
from model.config import Config
from model.path import Path
from model.system import AnyState


class PropertyViolated(AssertionError):
    """A property failed during a Hypothesis run."""

    def __init__(self, violation: Violation) -> None:
        super().__init__(f"{violation.property}: {violation.message}")
        self.violation = violation


class ModelMachine(RuleBasedStateMachine):
    """Base class; ``machine_for`` makes a subclass per config."""

    config: ClassVar[Config]
    check_convergence: ClassVar[bool] = True
    convergence_bound: ClassVar[int] = DEFAULT_BOUND
    checker_factory: ClassVar[Callable[[], Checker]] = Checker
    last_path: ClassVar[tuple[Action, ...]] = ()
    last_violation: ClassVar[Violation | None] = None
    violations: ClassVar[Violations | None] = None
    """When active: violations are recorded (the shortest of each property) and raise only
    when ``Violations.note`` says to stop (``groupcheck.explore.result``)."""
    seen: ClassVar[set[str]] = set()
    undecided: ClassVar[list[int]] = []
    """The bound of each example's Convergence check that its bound cut without showing
    non-convergence (``check_fair_tail``)."""
    examples: ClassVar[int] = 0
    steps: ClassVar[int] = 0

    def __init__(self) -> None:
        super().__init__()
        cls = type(self)
        cls.examples += 1
        self.state: AnyState = system.initial(cls.config)
        self.snap = project(self.state)
        self.path: list[Action] = []
        self.checker = cls.checker_factory()
        self.enabled = system.enabled(self.state, cls.config)
        self.failed = False

    def _family(self, kind: type[Action]) -> list[Action]:
        return [a for a in self.enabled if type(a) is kind]

    def take(self, kind: type[Action], choice: int) -> None:
        cls = type(self)
        family = self._family(kind)
        action = family[choice % len(family)]
        pre, pre_snap = self.state, self.snap
        self.state = system.step(self.state, action, cls.config)
        self.snap = project(self.state)
        self.path.append(action)
        cls.steps += 1
        self.enabled = system.enabled(self.state, cls.config)
        violations = self.checker.check_step(pre, action, self.state, pre_snap, self.snap)
        cls.seen |= self.checker.seen
        if violations:
            self._fail(*violations)

    def _fail(self, violation: Violation, *more: Violation) -> None:
        cls = type(self)
        collect = cls.violations
        if collect is not None and collect.active:
            stop = None
            for v in (violation, *more):
                if collect.note(v.property, v.message, Path(cls.config, tuple(self.path))):
                    stop = stop or v
            if stop is None:
                return  # recorded; the example goes on
            violation = stop
        self.failed = True
        cls.last_path = tuple(self.path)
        cls.last_violation = violation
        raise PropertyViolated(violation)

    @invariant()
    def state_properties(self) -> None:
        violations = self.checker.check_state(self.state, self.snap)
        if violations:
            self._fail(*violations)

    def teardown(self) -> None:
        """Convergence: with no more perturbations, the fair schedule converges (every
        property checked on the way: a safety violation there is reported as such, with
        the schedule's steps appended to the path)."""
        cls = type(self)
        if not cls.check_convergence or self.failed:
            return  # a safety violation already ended this example
        # A checker of its own for the tail: the schedule is not a step of the example
        # (callers that record the example's steps through their checker see only those).
        tail_checker = Checker(
            state_properties=self.checker.state_properties,
            step_properties=self.checker.step_properties,
        )
        tail, violation, undecided = check_fair_tail(
            self.state, cls.config, tail_checker, cls.convergence_bound
        )
        if undecided is not None:
            # The bound cut the schedule without showing a fair loop or a stuck state: not
            # a violation, and the run is inconclusive (issue 42).
            cls.undecided.append(undecided.bound)
        if violation is not None:
            if violation.property != CONVERGENCE.name:
                self.path.extend(tail)  # the safety violation lies on the fair schedule
            self._fail(violation)
            self.failed = True  # the example ends here in any case


def _make_rule(kind: type[Action]) -> Any:
    def has_family(self: ModelMachine) -> bool:
        return any(type(a) is kind for a in self.enabled)

    def take_family(self: ModelMachine, choice: int) -> None:
        self.take(kind, choice)

    # Name the rule after the action family before Hypothesis records it.
    take_family.__name__ = take_family.__qualname__ = kind.__name__
    return precondition(has_family)(
        rule(choice=st.integers(min_value=0, max_value=15))(take_family)
    )


def _deadlocked(self: ModelMachine) -> bool:
    return not self.enabled


@precondition(_deadlocked)
@rule()
def Stutter(self: ModelMachine) -> None:
    """Nothing is enabled (every client gone or fatal): the run can only stutter."""


def machine_for(
    config: Config,
    checker_factory: Callable[[], Checker] = Checker,
    *,
    check_convergence: bool = True,
    violations: Violations | None = None,
    convergence_bound: int = DEFAULT_BOUND,
) -> type[ModelMachine]:
    """A state-machine class for ``config``: one rule per action family
    (``convergence_bound``: the fair schedule's bound, ``invariants.liveness``)."""
    namespace: dict[str, Any] = {
        "config": config,
        "check_convergence": check_convergence,
        "convergence_bound": convergence_bound,
        "checker_factory": staticmethod(checker_factory),
        "last_path": (),
        "last_violation": None,
        "violations": violations,
        "seen": set(),
        "undecided": [],
        "examples": 0,
        "steps": 0,
    }
    for kind in ACTION_TYPES:
        namespace[kind.__name__] = _make_rule(kind)
    namespace["Stutter"] = Stutter
    return type(
        f"Machine_{config.name.replace('+', '_').replace('-', '_')}", (ModelMachine,), namespace
    )
