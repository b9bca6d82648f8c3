"""Convergence and the ``SOMETIMES`` witnesses.

Convergence (``EVENTUALLY``): once perturbations stop and messages flow, every member
reaches the target epoch and the group is STABLE within a bounded number of steps. It is
checked by running a *fair* schedule of progress actions from a state — round-robin over
the enabled progress actions, so every enabled action is taken within a bounded delay —
and requiring a converged state within ``bound`` steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from invariants.properties import Kind, Property
from model import system
from model.actions import Action, Rejoin
from model.client import IN_GROUP
from model.config import Config
from model.coordinator import group_status
from model.records import State
from model.status import ClientStatus, ConfigError, GroupStatus, MemberState

DEFAULT_BOUND = 400
"""Default bound on fair progress steps until convergence."""


def converged(state: State) -> bool:
    """The group is STABLE (or EMPTY) and every client in the group is STABLE at its
    member's epoch, consuming exactly what its member is assigned."""
    g = state.group
    status = group_status(g)
    if status not in (GroupStatus.STABLE, GroupStatus.EMPTY):
        return False
    for c in state.clients:
        if not c.alive or (c.status not in IN_GROUP and c.status is not ClientStatus.FENCED):
            continue
        member = g.members.get(c.member_id)
        if c.status is not ClientStatus.STABLE or member is None:
            return False
        if c.member_epoch != member.member_epoch or c.owned != member.assigned_partitions:
            return False
    return True


def fair_actions(state: State, config: Config) -> list[Action]:
    """Progress actions only (no perturbations)."""
    return [a for a in system.enabled(state, config) if not a.PERTURBATION]


def fair_schedule(state: State, config: Config, bound: int) -> tuple[list[Action], State, bool]:
    """Run a round-robin fair schedule of progress actions from ``state`` for up to
    ``bound`` steps: the enabled action that has waited longest goes first (ties: enabled
    order). Returns the actions taken, the last state and whether it converged."""
    taken: list[Action] = []
    if converged(state):
        return taken, state, True
    last_taken: dict[Action, int] = {}
    for i in range(1, bound + 1):
        acts = fair_actions(state, config)
        if not acts:
            return taken, state, converged(state)
        action = min(acts, key=lambda a: last_taken.get(a, -1))
        last_taken[action] = i
        taken.append(action)
        state = system.step(state, action, config)
        if converged(state):
            return taken, state, True
    return taken, state, False


def run_fair(state: State, config: Config, bound: int) -> tuple[State, int, bool]:
    """``fair_schedule`` without the actions: the last state, the steps taken, converged."""
    taken, last, ok = fair_schedule(state, config, bound)
    return last, len(taken), ok


CONVERGENCE = Property(
    "Convergence",
    Kind.EVENTUALLY,
    "After the last perturbation, with messages flowing, every member reaches the target "
    "epoch and the group is STABLE within the bound.",
    "KIP-848 Rebalance Process (members converge to the target assignment)",
)


# --------------------------------------------------------------------------- witnesses


@dataclass(frozen=True)
class Witness:
    """A ``SOMETIMES`` property: some run must show it, or a pass is vacuous."""

    prop: Property
    seen: Callable[[State, Action, State], bool]


def _revocation_completes(pre: State, action: Action, post: State) -> bool:
    for mid, m in pre.group.members.items():
        after = post.group.members.get(mid)
        if (
            m.state is MemberState.UNREVOKED_PARTITIONS
            and after is not None
            and after.state is not MemberState.UNREVOKED_PARTITIONS
        ):
            return True
    return False


def _waits_on_unreleased(pre: State, action: Action, post: State) -> bool:
    return any(m.state is MemberState.UNRELEASED_PARTITIONS for m in post.group.members.values())


def _fenced_and_rejoins(pre: State, action: Action, post: State) -> bool:
    return isinstance(action, Rejoin)


def _group_converges(pre: State, action: Action, post: State) -> bool:
    return bool(post.group.members) and not converged(pre) and converged(post)


def _witness(
    name: str, description: str, reference: str, f: Callable[[State, Action, State], bool]
) -> Witness:
    return Witness(Property(name, Kind.SOMETIMES, description, reference, witness_of=f), f)


def required_witnesses(config: Config) -> frozenset[str]:
    """The witness names a complete run of ``config`` must hit (``Config.required_witnesses``;
    every witness when it names none). Unknown names are a ``ConfigError``."""
    names = frozenset(w.prop.name for w in WITNESSES)
    if config.required_witnesses is None:
        return names
    unknown = sorted(set(config.required_witnesses) - names)
    if unknown:
        raise ConfigError(
            f"config {config.name!r}: required_witnesses names unknown witness {unknown[0]!r}; "
            f"known: {', '.join(sorted(names))}"
        )
    return frozenset(config.required_witnesses)


WITNESSES: tuple[Witness, ...] = (
    _witness(
        "RevocationCompletes",
        "A member acknowledges a revocation and leaves UNREVOKED_PARTITIONS.",
        "KIP-848 Reconciliation, phase 2",
        _revocation_completes,
    ),
    _witness(
        "WaitsOnUnreleasedPartitions",
        "A member waits for partitions another member has not released yet.",
        "KIP-848 Reconciliation, phase 3",
        _waits_on_unreleased,
    ),
    _witness(
        "FencedMemberRejoins",
        "A fenced client rejoins with epoch 0.",
        "KIP-848 Consumer Group Heartbeat API (FENCED_MEMBER_EPOCH)",
        _fenced_and_rejoins,
    ),
    _witness(
        "GroupConverges",
        "The group converges: every member STABLE at the target epoch.",
        "KIP-848 Group States",
        _group_converges,
    ),
)
