"""Verdicts: check states and steps against the properties; collect witnesses.

The engines call :class:`Checker`; it projects each state once and evaluates every state
property on the snapshot, and every step property on a pair of snapshots.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from enum import Enum

from invariants.expr import Snapshot, StepSnapshot
from invariants.liveness import (
    CONVERGENCE,
    DEFAULT_BOUND,
    REBALANCE_TIME,
    WITNESSES,
    Lasso,
    Witness,
    fair_loop,
    fair_schedule,
)
from invariants.properties import STATE_PROPERTIES, STEP_PROPERTIES, Property
from invariants.snapshot import project
from model import system
from model.actions import Action
from model.config import Config
from model.family import family_of_state
from model.status import ConfigError
from model.system import AnyState


class Verdict(Enum):
    """Three-way results: proved, violated (with evidence) or unknown (with the reason)."""

    PROVED = "proved"
    VIOLATED = "violated"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Violation:
    """A property that failed, where, and a message that names the elements involved."""

    property: str
    message: str
    kind: str


@dataclass
class Checker:
    """Evaluates a chosen set of properties; remembers which witnesses were seen."""

    state_properties: tuple[Property, ...] = STATE_PROPERTIES
    step_properties: tuple[Property, ...] = STEP_PROPERTIES
    witnesses: tuple[Witness, ...] = WITNESSES
    seen: set[str] = field(default_factory=set)
    _pending: dict[tuple[type, type], list[tuple[str, Callable[..., bool]]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def snapshot(self, state: AnyState) -> Snapshot:
        return project(state)

    def check_state(self, state: AnyState, snap: Snapshot | None = None) -> list[Violation]:
        snap = snap if snap is not None else project(state)
        return [
            Violation(p.name, p.explain(snap), p.kind.value)
            for p in self.state_properties
            if p.applies(snap) and not p.holds(snap)
        ]

    def note_witnesses(self, pre: AnyState, action: Action, post: AnyState) -> None:
        """Record the ``SOMETIMES`` witnesses a step shows (without checking properties)."""
        kind = (type(pre), type(action))
        pending = self._pending.get(kind)
        if pending is None:
            pending = self._pending[kind] = self._witnesses_of(pre, action)
        if not pending:
            return
        found = False
        # The list holds the witnesses unseen when it was made, and is made again once one
        # is seen: no need to look each up in ``seen``.
        for name, shows in pending:
            if shows(pre, action, post):
                self.seen.add(name)
                found = True
        if found:
            self._pending.clear()  # made again, without what was seen, when next needed

    def _witnesses_of(
        self, state: AnyState, action: Action
    ) -> list[tuple[str, Callable[..., bool]]]:
        """The witnesses a step of this action from a state of this kind may show, less
        those seen already: those of the state's protocol family that any action may show
        or this one (``Witness.actions``). ``note_witnesses`` keeps one list per kind of
        state and of action, and drops the witnesses as they are seen: an exhaustive search
        would otherwise ask every step for witnesses it has long had, or that only another
        action shows."""
        family = family_of_state(state).name
        return [
            (w.prop.name, w.seen)
            for w in self.witnesses
            if family in w.prop.families
            and w.prop.name not in self.seen
            and (w.actions is None or isinstance(action, w.actions))
        ]

    def check_step(
        self,
        pre: AnyState,
        action: Action,
        post: AnyState,
        pre_snap: Snapshot | None = None,
        post_snap: Snapshot | None = None,
    ) -> list[Violation]:
        self.note_witnesses(pre, action, post)
        if post is pre:
            return []
        step = StepSnapshot(
            pre_snap if pre_snap is not None else project(pre),
            post_snap if post_snap is not None else project(post),
        )
        return [
            Violation(p.name, p.explain(step), p.kind.value)
            for p in self.step_properties
            if p.applies(step) and not p.holds(step)
        ]

    def missed_witnesses(self, required: Collection[str] | None = None) -> list[str]:
        """The witnesses not seen so far (of ``required`` only, when given)."""
        return [
            w.prop.name
            for w in self.witnesses
            if w.prop.name not in self.seen and (required is None or w.prop.name in required)
        ]


def check_fair_tail(
    state: AnyState, config: Config, checker: Checker, bound: int = DEFAULT_BOUND
) -> tuple[list[Action], Violation | None, Lasso | None]:
    """Convergence from ``state``, with every state and step property checked along the
    fair schedule: the schedule's actions up to the first violating step and that
    violation; else the whole schedule and a Convergence violation when it does not
    converge and a fair loop or a stuck state shows it (``fair_loop``; its message says
    which); else the schedule and no violation — with the undecided ``Lasso`` when the
    bound in force (``Lasso.bound``) cut the schedule without showing either (issue 42:
    the check is then inconclusive, not ok). A safety violation on the way is reported as
    such rather than as a failure to converge."""
    start = state
    tail, _, ok = fair_schedule(state, config, bound)
    for i, action in enumerate(tail):
        new = system.step(state, action, config)
        bad = checker.check_step(state, action, new) + checker.check_state(new)
        if bad:
            return tail[: i + 1], bad[0], None
        state = new
    if ok:
        return tail, None, None
    why = fair_loop(start, config, bound)
    if why is None or not why.shown:
        return tail, None, why
    message = f"{CONVERGENCE.description} Shown: {why.describe()}."
    return tail, Violation(CONVERGENCE.name, message, CONVERGENCE.kind.value), None


def select_properties(
    names: Iterable[str],
) -> tuple[tuple[Property, ...], tuple[Property, ...], bool]:
    """The state and step properties ``names`` select, and whether Convergence is among
    them. A name selects the property of that name or, for a split invariant, all its
    conjuncts (``ValidTargetAssignment`` selects ``ValidTargetAssignment.Unique`` …).
    Unknown names — and witnesses, which are not checked alone — are a ``ConfigError``."""
    state: list[Property] = []
    step: list[Property] = []
    convergence = False
    checkable = [*STATE_PROPERTIES, *STEP_PROPERTIES]
    for name in names:
        if name == CONVERGENCE.name:
            convergence = True
            continue
        chosen = [p for p in checkable if p.name == name or p.name.startswith(name + ".")]
        if not chosen:
            known = sorted({p.name for p in checkable} | {CONVERGENCE.name})
            raise ConfigError(f"--only {name!r}: no such property; known: {', '.join(known)}")
        for p in chosen:
            target = state if p in STATE_PROPERTIES else step
            if p not in target:
                target.append(p)
    return tuple(state), tuple(step), convergence


def all_properties() -> Iterable[Property]:
    """Every named property, state and step first."""
    yield from STATE_PROPERTIES
    yield from STEP_PROPERTIES
    yield CONVERGENCE
    yield REBALANCE_TIME
    for w in WITNESSES:
        yield w.prop
