"""Verdicts: check states and steps against the properties; collect witnesses.

The engines call :class:`Checker`; it projects each state once and evaluates every state
property on the snapshot, and every step property on a pair of snapshots.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from invariants.expr import Snapshot, StepSnapshot
from invariants.liveness import WITNESSES, Witness
from invariants.properties import STATE_PROPERTIES, STEP_PROPERTIES, Property
from invariants.snapshot import project
from model.actions import Action
from model.records import State


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

    def snapshot(self, state: State) -> Snapshot:
        return project(state)

    def check_state(self, state: State, snap: Snapshot | None = None) -> list[Violation]:
        snap = snap if snap is not None else project(state)
        return [
            Violation(p.name, p.explain(snap), p.kind.value)
            for p in self.state_properties
            if not p.holds(snap)
        ]

    def note_witnesses(self, pre: State, action: Action, post: State) -> None:
        """Record the ``SOMETIMES`` witnesses a step shows (without checking properties)."""
        for w in self.witnesses:
            if w.prop.name not in self.seen and w.seen(pre, action, post):
                self.seen.add(w.prop.name)

    def check_step(
        self,
        pre: State,
        action: Action,
        post: State,
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
            if not p.holds(step)
        ]

    def missed_witnesses(self) -> list[str]:
        return [w.prop.name for w in self.witnesses if w.prop.name not in self.seen]


def all_properties() -> Iterable[Property]:
    """Every named property, state and step first."""
    from invariants.liveness import CONVERGENCE

    yield from STATE_PROPERTIES
    yield from STEP_PROPERTIES
    yield CONVERGENCE
    for w in WITNESSES:
        yield w.prop
