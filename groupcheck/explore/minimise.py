"""Counterexample minimisation: delta debugging of a path, then a shortest search on
smaller configs.

``ddmin`` removes chunks of actions (halves, quarters, … single actions) while the path
still replays — every action enabled where it is taken — and still violates the same
property. Replay is *relaxed*: an action that is not enabled verbatim (a message whose
contents changed because an earlier step was removed) is replaced by the unique enabled
action of the same family and actor (same kind, client or member, direction), so removing
an early step does not invalidate every later delivery.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import fields, replace

from invariants.check import Checker, Violation
from invariants.liveness import (
    CONVERGENCE,
    DEFAULT_BOUND,
    REBALANCE_TIME,
    FairMemo,
    Lasso,
    fair_loop,
    rebalance_start,
    run_fair,
)
from invariants.snapshot import project
from model import system
from model.actions import Action, DeliverMessage, LoseMessage
from model.config import Config
from model.path import Path
from model.status import ConfigError
from model.system import AnyState


def _actor(action: Action) -> tuple[object, ...]:
    if isinstance(action, DeliverMessage | LoseMessage):
        m = action.message
        return (action.kind, m.client, m.to_coordinator, m.api)
    values = tuple(getattr(action, f.name) for f in fields(action))
    return (action.kind, *values)


def relaxed_replay(config: Config, actions: Sequence[Action]) -> list[Action]:
    """Replay ``actions``, repairing actions that are not enabled verbatim by the unique
    enabled action of the same family and actor, and dropping those that have none (the
    delivery of a message that was never sent, say). The result replays exactly."""
    state = system.initial(config)
    out: list[Action] = []
    for wanted in actions:
        enabled = system.enabled(state, config)
        action = wanted
        if wanted not in enabled:
            key = _actor(wanted)
            candidates = [a for a in enabled if _actor(a) == key]
            if len(candidates) != 1:
                continue
            action = candidates[0]
        out.append(action)
        state = system.step(state, action, config)
    return out


def convergence_violation(
    state: AnyState, config: Config, bound: int, *, memo: FairMemo | None = None
) -> Violation | Lasso | None:
    """Convergence from ``state``, claimed only when shown (issue 42): a Convergence
    violation when the fair schedule reaches a fair loop or gets stuck (its message says
    which, as the explorers' do), the undecided :class:`Lasso` when the bound in force cut
    the schedule without showing either, None when it converges (``memo``: as for
    ``fair_loop``)."""
    why = fair_loop(state, config, bound, memo=memo)
    if why is None or not why.shown:
        return why
    message = f"{CONVERGENCE.description} Shown: {why.describe()}."
    return Violation(CONVERGENCE.name, message, CONVERGENCE.kind.value)


def replay_verdict(
    config: Config,
    actions: Sequence[Action],
    check_convergence: bool = False,
    bound: int = DEFAULT_BOUND,
) -> tuple[tuple[list[Violation], int] | None, Lasso | None]:
    """``first_violations``, and — when no violation is found — the undecided
    :class:`Lasso` of a Convergence check whose fair schedule the bound cut without showing
    a fair loop or a stuck state (None otherwise): the path's verdict is then inconclusive,
    not ok."""
    checker = Checker()
    state = system.initial(config)
    snap = project(state)
    bad = checker.check_state(state, snap)
    if bad:
        return (bad, 0), None
    for i, action in enumerate(actions, 1):
        if action not in system.enabled(state, config):
            return None, None
        new = system.step(state, action, config)
        new_snap = project(new)
        bad = checker.check_step(state, action, new, snap, new_snap) + checker.check_state(
            new, new_snap
        )
        if bad:
            return (bad, i), None
        state, snap = new, new_snap
    undecided = None
    if check_convergence:
        verdict = convergence_violation(state, config, bound)
        if isinstance(verdict, Violation):
            return ([verdict], len(actions)), None
        undecided = verdict
        if config.max_rebalance_steps is not None:
            _, steps, _ = run_fair(rebalance_start(config, actions), config, bound)
            if steps > config.max_rebalance_steps:
                message = (
                    f"after the last perturbation the group needs {steps} fair steps to "
                    f"converge; the config allows {config.max_rebalance_steps}"
                )
                violation = Violation(REBALANCE_TIME.name, message, REBALANCE_TIME.kind.value)
                return ([violation], len(actions)), None
    return None, undecided


def first_violations(
    config: Config,
    actions: Sequence[Action],
    check_convergence: bool = False,
    bound: int = DEFAULT_BOUND,
) -> tuple[list[Violation], int] | None:
    """Replay exactly (every action must be enabled) and return the violations of the first
    violating step with the number of actions taken up to it; a convergence failure at the
    end counts too, when shown (``convergence_violation``: a fair loop or a stuck state —
    so a minimised or lifted Convergence counterexample still shows its loop)."""
    return replay_verdict(config, actions, check_convergence, bound)[0]


def ddmin(
    config: Config,
    actions: Sequence[Action],
    prop: str,
    check_convergence: bool | None = None,
    deadline: Callable[[], bool] | None = None,
) -> list[Action]:
    """Delta-debug ``actions`` down to a path that still violates ``prop``."""
    liveness = prop in ("Convergence", "RebalanceTimeBound")
    conv = liveness if check_convergence is None else check_convergence

    def fails(candidate: Sequence[Action]) -> list[Action] | None:
        repaired = relaxed_replay(config, candidate)
        found = first_violations(config, repaired, conv)
        if found is None or prop not in {v.property for v in found[0]}:
            return None
        return repaired[: found[1]] if not liveness else repaired

    current = fails(actions)
    if current is None:
        return list(actions)
    n = 2
    while len(current) >= 2:
        if deadline is not None and deadline():
            break
        chunk = max(1, len(current) // n)
        reduced = False
        for start in range(0, len(current), chunk):
            if deadline is not None and deadline():
                return current
            candidate = current[:start] + current[start + chunk :]
            result = fails(candidate)
            if result is not None:
                current = result
                n = max(n - 1, 2)
                reduced = True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(current), n * 2)
    return current


def minimise_path(path: Path, prop: str, deadline: Callable[[], bool] | None = None) -> Path:
    """The delta-debugged version of ``path`` (same config, same violated property)."""
    return Path(path.config, tuple(ddmin(path.config, path.actions, prop, deadline=deadline)))


def smaller_configs(config: Config) -> list[Config]:
    """One-step reductions of a config: a client fewer, a partition fewer, a topic fewer
    (removed from every subscription), a perturbation fewer. Invalid ones are skipped."""
    out: list[Config] = []

    def add(**changes: object) -> None:
        with suppress(ConfigError):  # an impossible reduction is simply not a candidate
            out.append(replace(config, **changes))  # type: ignore[arg-type]

    if len(config.clients) > 1:
        for spec in reversed(config.clients):
            add(clients=tuple(c for c in config.clients if c is not spec))
    for i, (topic, n) in enumerate(config.topics):
        if n > 1:
            topics = list(config.topics)
            topics[i] = (topic, n - 1)
            add(topics=tuple(topics))
    if len(config.topics) > 1:
        for topic, _ in config.topics:
            clients = tuple(
                replace(c, subscription=tuple(t for t in c.subscription if t != topic))
                for c in config.clients
            )
            choices = tuple(
                tuple(t for t in ch if t != topic) for ch in config.subscription_choices
            )
            add(
                topics=tuple(t for t in config.topics if t[0] != topic),
                clients=clients,
                subscription_choices=tuple(ch for ch in choices if ch),
            )
    if config.max_perturbations > 0:
        add(max_perturbations=config.max_perturbations - 1)
    return out


SHRINK_MAX_STATES = 50_000
"""States the BFS of each candidate config may visit while shrinking a config."""


def shrink_config(
    config: Config,
    prop: str,
    max_states: int = SHRINK_MAX_STATES,
    remaining: Callable[[], float | None] | None = None,
) -> tuple[Config, Path | None]:
    """Greedily shrink ``config`` while a BFS of at most ``max_states`` states still finds
    a violation of ``prop``; returns the smallest config found and its shortest
    counterexample. Bounded by states, so the result does not depend on the machine;
    ``remaining`` (seconds left of the command's budget) may only cut it short."""
    from groupcheck.explore.bfs import bfs  # noqa: PLC0415  networkx only when a state graph is built

    best: Path | None = None
    improved = True
    while improved:
        improved = False
        for candidate in smaller_configs(config):
            left = None if remaining is None else remaining()
            if left is not None and left <= 0:
                return config, best
            res = bfs(candidate, stop_on=prop, max_states=max_states, budget_seconds=left)
            if res.property == prop and res.path is not None:
                config, best = candidate, res.path
                improved = True
                break
    return config, best
