"""The timed scenarios of KIP-1263's arguments.

* :func:`scale_up` — "Impact on Rebalance Times": a group of ``members`` with one
  subscription is scaling up; the last two members join ``join_gap_ms`` apart and the
  rebalance time is measured from the last join until the group has converged
  (``invariants.liveness.converged``: every member at the target epoch, consuming exactly
  its target).
* :func:`churn` — "Motivation": every member changes its subscription just before each
  of its heartbeats (an application that makes the group rebalance on every heartbeat);
  measured over a window: the coordinator thread's utilisation, the executor's, heartbeat
  latency and assignor runs per second.

Both start from a group formed by the seeded timed run itself (members join at their
seeded phases in the first heartbeat interval and the group converges), so every number
comes from model actions taken at simulated times.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace
from typing import Literal

from groupcheck.timed.engine import Scheduled, TimedRun, Timing
from model.actions import Action, ChangeSubscription, SendHeartbeat, Subscribe
from model.config import ClientSpec, Config
from model.status import ClientStatus, ConfigError

WARM_UP_INTERVALS = 40
"""Heartbeat intervals the forming group may take to converge before a scenario starts;
one that has not converged by then is reported, not measured."""

DEFAULT_TIMING = Timing()

MAX_CHANGES = 10_000
"""The most perturbations a config may allow (``model.config.MODEL_BOUNDS``): a churn run
changes no subscription beyond it (its window is then cut short, and says so)."""

TOPIC = "foo"
OTHER_TOPIC = "bar"
TOPIC_SIZE = 1000
"""Partitions per topic at most (``model.config.MODEL_BOUNDS``): a larger group's
partitions are spread over topics ``foo``, ``foo1``, ``foo2`` … that every member
subscribes to."""


def topic_names(partitions: int) -> list[tuple[str, int]]:
    """``partitions`` spread over topics of at most :data:`TOPIC_SIZE` partitions."""
    out: list[tuple[str, int]] = []
    left, i = partitions, 0
    while left > 0 or not out:
        size = min(left, TOPIC_SIZE)
        out.append((TOPIC if i == 0 else f"{TOPIC}{i}", max(size, 1)))
        left -= size
        i += 1
    return out


@dataclass(frozen=True)
class Kip1263:
    """The KIP-1263 settings of a run: the assignment interval and offload."""

    assignment_interval_ms: int = 0
    assignor_offload: bool = False

    @property
    def label(self) -> str:
        """How the KIP's tables name the setting."""
        parts = [f"assignment.interval.ms = {self.assignment_interval_ms:,}"]
        parts.append(f"assignor.offload.enable = {str(self.assignor_offload).lower()}")
        return ", ".join(parts)


def group_config(
    *,
    members: int,
    partitions: int,
    heartbeat_interval_ms: int,
    kip1263: Kip1263,
    churn: bool = False,
) -> Config:
    """A consumer group of ``members`` clients ``C001…`` subscribed to one topic, none
    subscribed at first (the scenario makes them join)."""
    if not 1 <= members <= 5000:
        raise ConfigError(f"members must be in 1..5000, got {members}")
    width = len(str(members))
    base = topic_names(partitions)
    names = tuple(name for name, _ in base)
    clients = tuple(
        ClientSpec(f"C{i:0{width}d}", names, subscribed=False) for i in range(1, members + 1)
    )
    options: dict[str, object] = {}
    if kip1263.assignment_interval_ms or kip1263.assignor_offload:
        options = {
            "assignment_interval_ms": kip1263.assignment_interval_ms,
            "assignor_offload": kip1263.assignor_offload,
            "epoch_layout": "kafka-4.3",
        }
    topics: tuple[tuple[str, int], ...] = tuple(base)
    perturbations = {"Subscribe"}
    choices: tuple[tuple[str, ...], ...] = ()
    if churn:
        topics = (*topics, (OTHER_TOPIC, base[0][1]))
        perturbations.add("ChangeSubscription")
        choices = (tuple(sorted(names)), tuple(sorted((*names, OTHER_TOPIC))))
    return Config(
        name=f"TIMED_{members}",
        topics=topics,
        clients=clients,
        max_perturbations=MAX_CHANGES,
        perturbations=frozenset(perturbations),
        subscription_choices=choices,
        max_partitions_per_topic=max(4, *(n for _, n in topics)),
        heartbeat_interval_ms=heartbeat_interval_ms,
        max_restarts=0,
        **options,  # type: ignore[arg-type]
    )


def _form_group(run: TimedRun, names: list[str]) -> float:
    """Subscribe ``names`` at their seeded phases; run until the group has converged.
    Returns the time it converged."""
    phases = run.phases
    script = [Scheduled(phases[n], Subscribe(n)) for n in names]
    if not names:
        return 0.0
    limit = WARM_UP_INTERVALS * run.config.heartbeat_interval_ms
    joined = set(names)

    def formed(r: TimedRun) -> bool:
        in_group = {c.name for c in r.state.clients if c.status is not ClientStatus.UNSUBSCRIBED}
        return joined <= in_group and bool(r.measures.converged_at_ms) and r.is_converged

    if not run.run(limit, script, stop=formed):
        raise ConfigError(f"the group did not form within {WARM_UP_INTERVALS} heartbeat intervals")
    return run.now


@dataclass(frozen=True)
class ScaleUp:
    """One scale-up run's result."""

    members: int
    kip1263: Kip1263
    seed: int
    rebalance_ms: float | None
    """From the last join to convergence (None: not converged within the horizon)."""
    run: TimedRun


def scale_up(
    *,
    members: int,
    kip1263: Kip1263,
    seed: int,
    timing: Timing = DEFAULT_TIMING,
    partitions_per_member: int = 50,
    heartbeat_interval_ms: int = 5000,
    join_gap_ms: float = 200.0,
    horizon_intervals: int = 10,
) -> ScaleUp:
    """KIP-1263 "Impact on Rebalance Times": the group of ``members - 2`` formed, member
    ``members - 1`` joins, and ``join_gap_ms`` later member ``members``; the rebalance
    time runs from the last join to convergence. The topic has ``partitions_per_member``
    partitions per member (KIP-1263's scale: 50,000 for 1,000 members), so the last member
    takes partitions from that many members, and one of them is all but certain to
    heartbeat before the batched target is computed, as the KIP's table assumes."""
    config = group_config(
        members=members,
        partitions=partitions_per_member * members,
        heartbeat_interval_ms=heartbeat_interval_ms,
        kip1263=kip1263,
    )
    run = TimedRun(config, timing, seed)
    names = [c.name for c in config.clients]
    start = _form_group(run, names[:-2])
    last = start + heartbeat_interval_ms
    script = [Scheduled(last, Subscribe(names[-1]))]
    if members >= 2:
        script.append(Scheduled(last - join_gap_ms, Subscribe(names[-2])))

    def done(r: TimedRun) -> bool:
        return r.now >= last and r.is_converged and r.client_joined(names[-1])

    horizon = last + horizon_intervals * heartbeat_interval_ms
    finished = run.run(horizon, script, stop=done)
    return ScaleUp(members, kip1263, seed, run.now - last if finished else None, run)


@dataclass(frozen=True)
class Load:
    """One churn run's measures over its window."""

    members: int
    kip1263: Kip1263
    seed: int
    window_ms: float
    heartbeats_per_second: float
    assignor_runs_per_second: float
    coordinator_utilisation: float
    executor_utilisation: float
    latency_mean_ms: float
    latency_p99_ms: float
    latency_max_ms: float


def churn(
    *,
    members: int,
    kip1263: Kip1263,
    seed: int,
    timing: Timing = DEFAULT_TIMING,
    heartbeat_interval_ms: int = 1000,
    window_ms: float = 10_000.0,
    partitions: int | None = None,
) -> Load:
    """KIP-1263 "Motivation": a group that rebalances on every heartbeat."""
    config = group_config(
        members=members,
        partitions=partitions if partitions is not None else members,
        heartbeat_interval_ms=heartbeat_interval_ms,
        kip1263=kip1263,
        churn=True,
    )
    run = TimedRun(config, timing, seed)
    start = _form_group(run, [c.name for c in config.clients])
    base = replace(run.measures)
    base_latencies = len(run.measures.heartbeat_latencies_ms)

    def flip(r: TimedRun, action: Action) -> list[Action]:
        if not isinstance(action, SendHeartbeat):
            return []
        c = r.state.client(action.client)
        if c.status is not ClientStatus.STABLE or r.state.perturbations >= MAX_CHANGES:
            return []
        choices = r.config.subscription_choices
        wanted = choices[0] if OTHER_TOPIC in c.subscription else choices[1]
        return [ChangeSubscription(c.name, wanted)]

    run.run(start + window_ms, before=flip)
    m = run.measures
    span = run.now - start
    latencies = sorted(m.heartbeat_latencies_ms[base_latencies:])
    return Load(
        members=members,
        kip1263=kip1263,
        seed=seed,
        window_ms=span,
        heartbeats_per_second=(m.heartbeats - base.heartbeats) * 1000 / span,
        assignor_runs_per_second=(m.assignor_runs - base.assignor_runs) * 1000 / span,
        coordinator_utilisation=(m.coordinator_busy_ms - base.coordinator_busy_ms) / span,
        executor_utilisation=(m.executor_busy_ms - base.executor_busy_ms)
        / (span * timing.executor_threads),
        latency_mean_ms=statistics.fmean(latencies) if latencies else 0.0,
        latency_p99_ms=latencies[int(0.99 * (len(latencies) - 1))] if latencies else 0.0,
        latency_max_ms=latencies[-1] if latencies else 0.0,
    )


Kind = Literal["scale-up", "churn"]
