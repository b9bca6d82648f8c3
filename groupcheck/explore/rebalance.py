"""Rebalance time as a checked quantity.

A *rebalance* starts where the perturbations stop: at the initial state, and at every
state a perturbation (a join, a leave, a crash, a lost message …) leads to. Its length is
what the fair schedule of progress actions (``invariants.liveness.fair_schedule``) needs
from there to a converged group: the number of **steps**, and the number of **heartbeat
rounds** (the most heartbeats any one client sent on the way). BFS measures it at every
start it visits, so it reports the worst case over the explored states; the walk engine
measures it once per walk, from the state after the walk's last perturbation, so it
reports a distribution.

A config may declare a bound (``Config.max_rebalance_steps``): a rebalance that needs more
steps violates ``RebalanceTimeBound`` (``invariants.liveness``). Explored under rules
other than the reference ones (a mutant, ``--rules``), the worst case is compared with the
reference rules' on the same config, and a slower one is reported as a finding of its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from invariants.liveness import DEFAULT_BOUND, fair_schedule
from model.actions import Action, SendHeartbeat
from model.config import Config
from model.path import Path
from model.system import AnyState


@dataclass(frozen=True)
class Tail:
    """One rebalance: its steps, heartbeat rounds and whether it converged in the bound."""

    steps: int
    rounds: int
    converged: bool


def measure(state: AnyState, config: Config, bound: int = DEFAULT_BOUND) -> Tail:
    """The rebalance that starts at ``state``."""
    schedule, _, ok = fair_schedule(state, config, bound)
    return Tail(len(schedule), heartbeat_rounds(schedule), ok)


def heartbeat_rounds(actions: list[Action]) -> int:
    """The most heartbeats any one client sends among ``actions``."""
    sent = Counter(a.client for a in actions if isinstance(a, SendHeartbeat))
    return max(sent.values(), default=0)


@dataclass
class RebalanceTimes:
    """Rebalances measured during an exploration (see the module docstring)."""

    starts: int = 0
    histogram: Counter[int] = field(default_factory=Counter)
    worst: Tail | None = None
    worst_key: Hashable | None = None
    worst_actions: tuple[Action, ...] | None = None
    unconverged: int = 0

    def note(
        self,
        state: AnyState,
        config: Config,
        key: Hashable = None,
        actions: tuple[Action, ...] = (),
    ) -> Tail:
        """Measure the rebalance starting at ``state`` (reached by ``actions``, or known to
        BFS by ``key``)."""
        tail = measure(state, config)
        self.starts += 1
        if not tail.converged:
            self.unconverged += 1
            return tail
        self.histogram[tail.steps] += 1
        if self.worst is None or (tail.steps, tail.rounds) > (self.worst.steps, self.worst.rounds):
            self.worst, self.worst_key, self.worst_actions = tail, key, actions
        return tail

    def quantile(self, q: float) -> int | None:
        """The ``q`` quantile of the measured steps (None before any)."""
        total = sum(self.histogram.values())
        if not total:
            return None
        rank = q * (total - 1)
        seen = 0
        for steps in sorted(self.histogram):
            seen += self.histogram[steps]
            if seen > rank:
                return steps
        return max(self.histogram)

    def to_json(self, path: Path | None = None) -> dict[str, Any]:
        worst = self.worst
        return {
            "starts": self.starts,
            "worst_steps": worst.steps if worst else None,
            "worst_heartbeat_rounds": worst.rounds if worst else None,
            "median_steps": self.quantile(0.5),
            "p95_steps": self.quantile(0.95),
            "histogram": {str(k): v for k, v in sorted(self.histogram.items())},
            "worst_start": path.encode() if path is not None else None,
        }
