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

The worst case hides a change that is slower only in some states. So the rebalances are
also compared **start by start** (``compare_starts``): a start is a state value (up to the
order of independent channels, and of interchangeable clients under ``--symmetry``), so
the same start reached under both rules is measured under each, and the comparison says in
how many starts the change is slower, by how much, in how many faster, with the shortest
path to an example of each. Starts that only one of the two rules reaches are counted,
not compared. BFS compares every start both searches reached (bounded by the same
``--max-states``/``--depth``); the walk engine compares each walk's start with the state
the reference rules reach on the same path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from groupcheck.explore.channels import channel_normal_form
from invariants.liveness import DEFAULT_BOUND, fair_schedule
from model import system
from model.actions import Action, SendHeartbeat
from model.config import Config
from model.path import Path
from model.rules import DEFAULT_RULES
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


@dataclass(frozen=True)
class Start:
    """A start's rebalance, and how far it is from the initial state: BFS depth, or the
    length of the walk's path to it (``actions``; BFS finds its path with
    ``RebalanceTimes.path_to``)."""

    tail: Tail
    depth: int
    actions: tuple[Action, ...] | None = None


@dataclass
class RebalanceTimes:
    """Rebalances measured during an exploration (see the module docstring)."""

    starts: int = 0
    histogram: Counter[int] = field(default_factory=Counter)
    worst: Tail | None = None
    worst_key: Hashable | None = None
    worst_actions: tuple[Action, ...] | None = None
    unconverged: int = 0
    per_start: dict[Hashable, Start] | None = None
    """Every start's rebalance by its state key (``RebalanceTimes(per_start={})`` asks for
    it; ``compare_starts`` reads it)."""
    path_to: Callable[[Hashable], tuple[Action, ...]] | None = None
    """BFS with ``per_start``: the BFS path to a start's key (set when the search ends)."""
    complete: bool = False
    """The engine's work was complete (BFS: exhausted, or every state within its depth;
    walk: every walk ran); a search cut short or stopped at a violation leaves it False."""

    def note(
        self,
        state: AnyState,
        config: Config,
        key: Hashable = None,
        actions: tuple[Action, ...] = (),
        depth: int | None = None,
    ) -> Tail:
        """Measure the rebalance starting at ``state`` (reached by ``actions``, or known to
        BFS by ``key`` at ``depth``)."""
        tail = measure(state, config)
        self.starts += 1
        if self.per_start is not None:
            self._keep(state, config, tail, key, actions, depth)
        if not tail.converged:
            self.unconverged += 1
            return tail
        self.histogram[tail.steps] += 1
        if self.worst is None or (tail.steps, tail.rounds) > (self.worst.steps, self.worst.rounds):
            self.worst, self.worst_key, self.worst_actions = tail, key, actions
        return tail

    def _keep(
        self,
        state: AnyState,
        config: Config,
        tail: Tail,
        key: Hashable,
        actions: tuple[Action, ...],
        depth: int | None,
    ) -> None:
        """Record a start for ``compare_starts``: BFS gives its key and depth; a walk its
        path (the shortest path to the same start is kept)."""
        assert self.per_start is not None
        if key is None:
            key = state_key(config)(state)
        if depth is None:
            known = self.per_start.get(key)
            if known is not None and known.depth <= len(actions):
                return
            self.per_start[key] = Start(tail, len(actions), actions)
        else:
            self.per_start.setdefault(key, Start(tail, depth))

    def actions_to(self, key: Hashable) -> tuple[Action, ...]:
        """The recorded path to the start ``key``."""
        assert self.per_start is not None
        start = self.per_start[key]
        if start.actions is not None:
            return start.actions
        assert self.path_to is not None, "a BFS start's path is known once the search ends"
        return self.path_to(key)

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


def state_key(config: Config) -> Callable[[AnyState], Hashable]:
    """The key of a state as BFS stores it without ``--symmetry`` (the same under any
    rules: it orders the network by channel and reads nothing else of the config)."""
    return channel_normal_form(config)


def reference_config(config: Config) -> Config:
    """``config`` under the reference rules, with no rebalance bound (the comparison
    measures the reference rules; it does not check them)."""
    return replace(
        config, rules=DEFAULT_RULES, name=f"{config.name}-reference", max_rebalance_steps=None
    )


def replayed(config: Config, change: RebalanceTimes) -> RebalanceTimes:
    """The walk engine's reference side: each start of ``change`` replayed under the
    reference rules on the same path, kept when they reach the same state (not when an
    action is not enabled, or another state is reached)."""
    assert change.per_start is not None
    ref = reference_config(config)
    key_of = state_key(config)
    kept: dict[Hashable, Start] = {}
    times = RebalanceTimes(per_start=kept, complete=True)
    for key, start in change.per_start.items():
        actions = start.actions or ()
        state = system.initial(ref)
        for action in actions:
            if action not in system.enabled(state, ref):
                break
            state = system.step(state, action, ref)
        else:
            if key_of(state) == key:
                kept[key] = Start(measure(state, ref), len(actions), actions)
    return times


def _cost(tail: Tail) -> tuple[float, float]:
    """What "slower" orders by: heartbeat rounds first (each is a heartbeat interval of
    wall-clock time), then fair steps; a rebalance that does not converge within the
    bound costs more than any that does."""
    if not tail.converged:
        return (float("inf"), float("inf"))
    return (tail.rounds, tail.steps)


def compare_starts(
    config: Config,
    change: RebalanceTimes,
    reference: RebalanceTimes,
    scope: str = "every start both searches reached",
) -> dict[str, Any]:
    """Compare the rebalance of every start both rules reach (``per_start`` of each):
    "slower" when the change needs more heartbeat rounds — or as many and more fair
    steps — in some start (a true statement whatever the bounds: both reached it);
    "not slower" only when both searches were complete and share a start; else
    "inconclusive" with the reasons. The starts only the reference reached are counted
    when the reference side was a search (None for walks: it replayed the change's paths).
    ``scope`` says in words which starts were compared."""
    assert change.per_start is not None
    assert reference.per_start is not None
    ref_config = reference_config(config)
    slower: list[tuple[Hashable, Start, Start]] = []
    faster: list[tuple[Hashable, Start, Start]] = []
    same = 0
    for key, mine in change.per_start.items():
        theirs = reference.per_start.get(key)
        if theirs is None:
            continue
        a, b = _cost(mine.tail), _cost(theirs.tail)
        if a > b:
            slower.append((key, mine, theirs))
        elif a < b:
            faster.append((key, mine, theirs))
        else:
            same += 1
    compared = len(slower) + len(faster) + same
    only_change = len(change.per_start) - compared
    only_reference = None
    if reference.path_to is not None:
        only_reference = len(reference.per_start) - compared
    reasons: list[str] = []
    if not change.complete:
        reasons.append("the search under the change was cut short (a bound, the time budget)")
    if not reference.complete:
        reasons.append(
            "the reference rules' search was cut short (a bound, the time budget): a start "
            "it did not reach is not compared"
        )
    if compared == 0:
        reasons.append("no start was reached under both rules: nothing to compare")
    if slower:
        verdict = "slower"
    elif reasons:
        verdict = "inconclusive"
    else:
        verdict = "not slower"

    def example(found: list[tuple[Hashable, Start, Start]]) -> dict[str, Any] | None:
        if not found:
            return None
        key, mine, theirs = min(
            found,
            key=lambda f: (f[1].depth, -abs(f[1].tail.rounds - f[2].tail.rounds)),
        )
        actions = change.actions_to(key)
        on_reference = _same_path(ref_config, actions, key) or reference.actions_to(key)
        return {
            "path": Path(config, actions).encode(),
            "length": len(actions),
            "reference_path": Path(ref_config, on_reference).encode(),
            "reference_length": len(on_reference),
            "same_actions": on_reference == actions,
            "steps": mine.tail.steps,
            "heartbeat_rounds": mine.tail.rounds,
            "converged": mine.tail.converged,
            "reference_steps": theirs.tail.steps,
            "reference_heartbeat_rounds": theirs.tail.rounds,
            "reference_converged": theirs.tail.converged,
        }

    def by(found: list[tuple[Hashable, Start, Start]], sign: int) -> tuple[int, int]:
        both = [(m.tail, t.tail) for _, m, t in found if m.tail.converged and t.tail.converged]
        rounds = max((sign * (m.rounds - t.rounds) for m, t in both), default=0)
        steps = max((sign * (m.steps - t.steps) for m, t in both), default=0)
        return rounds, steps

    slower_rounds, slower_steps = by(slower, 1)
    faster_rounds, faster_steps = by(faster, -1)
    return {
        "verdict": verdict,
        "reasons": reasons,
        "scope": scope,
        "compared": compared,
        "slower": len(slower),
        "slower_by_rounds": slower_rounds,
        "slower_by_steps": slower_steps,
        "slower_unconverged": sum(1 for _, m, _ in slower if not m.tail.converged),
        "faster": len(faster),
        "faster_by_rounds": faster_rounds,
        "faster_by_steps": faster_steps,
        "same": same,
        "only_change": only_change,
        "only_reference": only_reference,
        "shortest_slower": example(slower),
        "shortest_faster": example(faster),
    }


def _same_path(config: Config, actions: tuple[Action, ...], key: Hashable) -> tuple[Action, ...]:
    """``actions`` when they replay under ``config`` to the start ``key`` (so one scenario
    shows both rules), else ()."""
    key_of = state_key(config)
    state = system.initial(config)
    for action in actions:
        if action not in system.enabled(state, config):
            return ()
        state = system.step(state, action, config)
    return actions if key_of(state) == key else ()


def summary(comparison: Mapping[str, Any]) -> str:
    """One line: "slower in N starts by up to K heartbeat rounds …, faster in M …"."""
    c = comparison

    def by(kind: str) -> str:
        if not c[kind]:
            return ""
        rounds, steps = c[f"{kind}_by_rounds"], c[f"{kind}_by_steps"]
        return f" by up to {_n(rounds, 'heartbeat round')} and {_n(steps, 'fair step')}"

    unconverged = c["slower_unconverged"]
    parts = [
        f"slower in {_n(c['slower'], 'start')}"
        + by("slower")
        + (f" ({unconverged} not converging)" if unconverged else ""),
        f"faster in {c['faster']}" + by("faster"),
        f"the same in {c['same']}",
    ]
    only = f"{c['only_change']} reached only under the change"
    if c["only_reference"] is not None:
        only += f", {c['only_reference']} only under the reference rules"
    else:
        only += " (the reference rules reach another state on the same path)"
    return ", ".join(parts) + f" (of {c['compared']} starts both reach; {only})"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
