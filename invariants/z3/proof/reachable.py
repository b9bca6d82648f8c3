"""The states k steps of BMC reach, against the states a Python breadth-first search
reaches with the same steps, on small finite domains.

The BMC engine (``invariants.z3.proof.bmc``) unrolls the families the replay can drive —
a heartbeat, a leave, an offset commit, each from any member of the universe with any
request the family allows — on a configuration's members and partitions. Its state set
at depth ≤ k is enumerated with blocking clauses: :func:`z3_states` asks the unrolling
(with ``Unchanged`` as a step, so the last state ranges over depth ≤ k) for a last state,
decodes it, blocks its key and asks again until ``unsat``.

:func:`python_states` runs a breadth-first search of the same depth with the Python
coordinator (``model.consumer.coordinator``, the functions ``system.step`` runs when it delivers a
request, via ``bmc.apply_step``), over every request of those families on the same
universe: every member id; member epochs 0, the member's epoch and its previous epoch
(every other epoch is refused and leaves the group as it is); every owned set and every
subscription; and, when the coordinator computes a target, every valid target (each
partition to at most one member that subscribes to it). An offset commit carries the
member's epoch (the reference rules refuse every other one, so a different epoch only
stutters); a leave is from a member.

Both sides project a state to the same key (:func:`key`: the members with their epochs,
state and partitions, the target, the committed offsets with their epochs, the partition
epochs, the group and assignment epochs), and :func:`compare` reports the differences in
both directions. The server-error ghost is not in the key: a refused write leaves the
group as it is. The reference rules and the symbolic variants whose state sets stay
finite are compared: a mutant that accepts any commit epoch reaches infinitely many
states.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import z3

from invariants.z3.proof.bmc import (
    Unrolling,
    _abstract,
    apply_step,
    replay_projection,
    replay_topics,
)
from invariants.z3.proof.state import Concrete, Universe, pin
from invariants.z3.proof.transition import Options
from model.ids import FrozenMap
from model.records import Group

Key = tuple[object, ...]


def key(value: Concrete) -> Key:
    """The fields both sides pin, hashable (partitions named as the replay names them)."""
    return (
        tuple(sorted(value.members.items())),
        value.target,
        tuple(sorted(value.committed.items())),
        tuple(sorted(value.partition_epochs.items())),
        value.group_epoch,
        value.assignment_epoch,
    )


@dataclass(frozen=True)
class Domain:
    """A small universe: ``members`` member ids and ``partitions`` partitions, named as the
    BMC decodes them (``m0``…, ``p0``…)."""

    members: int
    partitions: int
    group_epoch: int = 0

    def universe(self) -> Universe:
        return Universe.of(
            [f"m{i}" for i in range(self.members)],
            [("p", i) for i in range(self.partitions)],
        )


class TooManyStates(RuntimeError):
    """The enumeration passed its bound before it was complete."""


def z3_states(
    domain: Domain, depth: int, *, options: Options | None = None, limit: int = 20_000
) -> set[Key]:
    """Every state the BMC unrolling reaches in at most ``depth`` steps (under the
    reference rules, or ``options``' variant), enumerated with blocking clauses."""
    u = domain.universe()
    run = Unrolling(
        options if options is not None else Options(),
        universe=u,
        group_epoch=domain.group_epoch,
        stutter=True,
        max_depth=depth,
        timeout_ms=600_000,
    )
    for _ in range(depth):
        run.extend()
    last = run.states[-1]
    out: set[Key] = set()
    while True:
        answer = run.solver.check()
        if answer == z3.unsat:
            return out
        if answer != z3.sat:
            raise RuntimeError(f"z3 answered {answer}: {run.solver.reason_unknown()}")
        value = run.decode(run.solver.model(), len(run.states) - 1)
        value = Concrete(
            members=value.members,
            target=value.target,
            committed=value.committed,
            partition_epochs=value.partition_epochs,
            group_epoch=value.group_epoch,
            assignment_epoch=value.assignment_epoch,
            loading=value.loading,
        )
        out.add(key(_abstract(value)))
        if len(out) > limit:
            raise TooManyStates(f"more than {limit} states at depth {depth}")
        run.add(z3.Not(z3.And(*pin(last, value, u))))


def _subsets(xs: list[str]) -> Iterable[list[str]]:
    for r in range(len(xs) + 1):
        yield from (list(c) for c in itertools.combinations(xs, r))


def _requests(group: Any, domain: Domain) -> Iterable[tuple[str, dict[str, Any]]]:
    """Every request of the BMC's families on ``group`` (module docstring), without the
    target (chosen after the coordinator asks for one)."""
    parts = [f"p{i}" for i in range(domain.partitions)]
    for i in range(domain.members):
        mid = f"m{i}"
        member = group.members.get(mid)
        epochs = {0} if member is None else {0, member.member_epoch, member.previous_member_epoch}
        for epoch in sorted(e for e in epochs if e >= 0):
            for owned in _subsets(parts):
                for subscribed in _subsets(parts):
                    yield (
                        "DeliverMessage.heartbeat",
                        {"member": mid, "epoch": epoch, "owned": owned, "subscribed": subscribed},
                    )
        if member is not None:
            yield "DeliverMessage.leave", {"member": mid}
            if member.member_epoch > 0:
                for committed in _subsets(parts):
                    if committed:
                        yield (
                            "DeliverMessage.offset_commit",
                            {"member": mid, "epoch": member.member_epoch, "partitions": committed},
                        )


def _targets(group: Any, params: dict[str, Any], domain: Domain) -> Iterable[list[str]]:
    """Every valid target after the heartbeat's member update: each partition to nobody
    or to one member (after the update) that subscribes to it."""
    mid = params["member"]
    subs: dict[str, set[str]] = {
        m: set(member.subscribed_topic_names) for m, member in group.members.items()
    }
    subs[mid] = set(params["subscribed"])
    choices = []
    for i in range(domain.partitions):
        p = f"p{i}"
        choices.append([None] + [m for m in sorted(subs) if p in subs[m]])
    for pick in itertools.product(*choices):
        yield [f"{m}:p{i}" for i, m in enumerate(pick) if m is not None]


def python_states(domain: Domain, depth: int, config: Any, *, limit: int = 20_000) -> set[Key]:
    """Every state the Python coordinator reaches in at most ``depth`` requests of the
    BMC's families (module docstring), breadth first."""
    topics = replay_topics(domain.partitions)
    rules = config.rules
    group = Group(
        group_epoch=domain.group_epoch,
        assignment_epoch=domain.group_epoch,
        target_assignment=FrozenMap(),
        members=FrozenMap(),
        partition_epochs=FrozenMap(),
        committed_offsets=FrozenMap(),
    )
    seen = {key(replay_projection(group, topics)): group}
    frontier = [group]
    for _ in range(depth):
        nxt = []
        for g in frontier:
            for family, params in _requests(g, domain):
                used: list[bool] = []
                probe = {**params, "target": []}
                after, _ = apply_step(g, topics, family, probe, rules, config, target_used=used)
                results = [after]
                if used:
                    results = [
                        apply_step(g, topics, family, {**params, "target": t}, rules, config)[0]
                        for t in _targets(g, params, domain)
                    ]
                for r in results:
                    k = key(replay_projection(r, topics))
                    if k not in seen:
                        seen[k] = r
                        nxt.append(r)
                        if len(seen) > limit:
                            raise TooManyStates(f"more than {limit} states at depth {depth}")
        frontier = nxt
    return set(seen)


@dataclass(frozen=True)
class Comparison:
    """The two state sets and their differences."""

    depth: int
    z3: frozenset[Key]
    python: frozenset[Key]

    @property
    def only_z3(self) -> frozenset[Key]:
        return self.z3 - self.python

    @property
    def only_python(self) -> frozenset[Key]:
        return self.python - self.z3

    @property
    def equal(self) -> bool:
        return self.z3 == self.python


def compare(
    domain: Domain, depth: int, config: Any, *, options: Options | None = None
) -> Comparison:
    """Both state sets at depth ≤ ``depth`` (``config`` gives the Python side's rules and
    request settings, ``options`` the symbolic side's variant of them)."""
    return Comparison(
        depth,
        frozenset(z3_states(domain, depth, options=options)),
        frozenset(python_states(domain, depth, config)),
    )
