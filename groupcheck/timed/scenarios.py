"""The timed scenarios of KIP-1263's arguments.

* :func:`scale_up` — "Impact on Rebalance Times": a group of ``members`` with one
  subscription is scaling up; the last two members join ``join_gap_ms`` apart and the
  rebalance time is measured from the last join until the group has converged
  (``invariants.liveness.converged``: every member at the target epoch, consuming exactly
  its target).
* :func:`crash` — a formed group loses a member without a leave (its process crashes):
  the coordinator expires its session (the session timeout after it last heard the
  member) and its partitions go to the others; measured from the crash until the group
  has converged without it. Kafka 4.4's consumer-crash scenario (docs/timed.md, "Against
  Kafka 4.4").
* :func:`churn` — "Motivation": every member changes its subscription just before each
  of its heartbeats (an application that makes the group rebalance on every heartbeat);
  measured over a window: the coordinator thread's utilisation, the executor's, heartbeat
  latency and assignor runs per second. With ``groups`` G > 1, G such groups share one
  coordinator — its thread and its executor's threads (KIP-1263: the executor belongs to
  the coordinator, not to a group) — and the offloaded runs queue for the threads.

Both start from a group formed by the seeded timed run itself (members join at their
seeded phases in the first heartbeat interval and the group converges), so every number
comes from model actions taken at simulated times.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass, replace
from typing import Literal

from groupcheck.timed.engine import Coordinator, Scheduled, TimedRun, Timing, run_together
from model.actions import Action, ChangeSubscription, Crash, SendHeartbeat, Subscribe
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


MAX_MEMBERS = 64
"""The largest group a timed run simulates. The model steps every member's heartbeats and
assignments in full (no sampling), so a run's cost grows faster than the square of the
group: ``groupcheck timed rebalance-times --members 64`` takes 17 s of CPU, 100 members
40 s and 1.3 GB, 200 members 215 s and 4.1 GB (``/usr/bin/time groupcheck timed
rebalance-times --members N --quiet``, docs/timed.md); 5,000, the maximum once allowed,
did not finish in 90 s (issue 42)."""


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
    session_timeout_ms: int | None = None,
    crash: bool = False,
) -> Config:
    """A consumer group of ``members`` clients ``C001…`` subscribed to one topic, none
    subscribed at first (the scenario makes them join)."""
    if not 1 <= members <= MAX_MEMBERS:
        raise ConfigError(f"members must be in 1..{MAX_MEMBERS}, got {members}")
    width = len(str(members))
    base = topic_names(partitions)
    names = tuple(name for name, _ in base)
    clients = tuple(
        ClientSpec(f"C{i:0{width}d}", names, subscribed=False) for i in range(1, members + 1)
    )
    # The interval is always set: the timed rows say which interval they use, whatever
    # the default of the Kafka version the config follows.
    options: dict[str, object] = {
        "assignment_interval_ms": kip1263.assignment_interval_ms,
        "assignor_offload": kip1263.assignor_offload,
    }
    if kip1263.assignment_interval_ms or kip1263.assignor_offload:
        options["epoch_layout"] = "kafka-4.3"
    topics: tuple[tuple[str, int], ...] = tuple(base)
    perturbations = {"Subscribe"}
    if crash:
        perturbations.add("Crash")
    if session_timeout_ms is not None:
        options["session_timeout_ms"] = session_timeout_ms
    choices: tuple[tuple[str, ...], ...] = ()
    if churn:
        topics = (*topics, (OTHER_TOPIC, base[0][1]))
        perturbations.add("ChangeSubscription")
        choices = (tuple(sorted(names)), tuple(sorted((*names, OTHER_TOPIC))))
    return Config(
        kafka_version="4.2",
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
    rest_ms: float | None = None,
) -> ScaleUp:
    """KIP-1263 "Impact on Rebalance Times": the group of ``members - 2`` formed, member
    ``members - 1`` joins, and ``join_gap_ms`` later member ``members``; the rebalance
    time runs from the last join to convergence. The topic has ``partitions_per_member``
    partitions per member (KIP-1263's scale: 50,000 for 1,000 members), so the last member
    takes partitions from that many members, and one of them is all but certain to
    heartbeat before the batched target is computed, as the KIP's table assumes.

    ``rest_ms``: from the formed group's convergence to the last join (default: one
    heartbeat interval, or the assignment interval plus ``join_gap_ms`` when that is
    longer). Member ``members - 1`` then joins after the interval has passed since the
    formed group's last target computation, so its join computes a target at once and
    member ``members``'s is the one deferred (Kafka 4.4's
    ``canComputeNextTargetAssignment``), as the KIP's table assumes."""
    config = group_config(
        members=members,
        partitions=partitions_per_member * members,
        heartbeat_interval_ms=heartbeat_interval_ms,
        kip1263=kip1263,
    )
    run = TimedRun(config, timing, seed)
    names = [c.name for c in config.clients]
    start = _form_group(run, names[:-2])
    if rest_ms is None:
        rest_ms = max(heartbeat_interval_ms, kip1263.assignment_interval_ms + join_gap_ms)
    last = start + rest_ms
    script = [Scheduled(last, Subscribe(names[-1]))]
    if members >= 2:
        script.append(Scheduled(last - join_gap_ms, Subscribe(names[-2])))

    def done(r: TimedRun) -> bool:
        return r.now >= last and r.is_converged and r.client_joined(names[-1])

    # The deferred target waits for the assignment interval first (a heartbeat only
    # computes it once the interval has passed): the horizon counts from there.
    horizon = last + kip1263.assignment_interval_ms + horizon_intervals * heartbeat_interval_ms
    finished = run.run(horizon, script, stop=done)
    return ScaleUp(members, kip1263, seed, run.now - last if finished else None, run)


@dataclass(frozen=True)
class CrashResult:
    """One crash run's result."""

    members: int
    seed: int
    settled_ms: float | None
    """From the crash until the group converged without the member (None: not within
    the horizon)."""
    expired_ms: float | None
    """From the crash until the coordinator expired the member's session."""
    run: TimedRun


def crash(
    *,
    members: int,
    seed: int,
    timing: Timing = DEFAULT_TIMING,
    partitions: int = 6,
    heartbeat_interval_ms: int = 500,
    session_timeout_ms: int = 6000,
    assignment_interval_ms: int = 0,
    rest_ms: float | None = None,
    horizon_intervals: int = 10,
) -> CrashResult:
    """A group of ``members`` forms and converges; ``rest_ms`` later (default: the
    assignment interval plus three heartbeat intervals, the quiet time of
    ``groupcheck kafka``'s ``wait = "stable"``) and a seeded part of a heartbeat interval
    more, the last member's process crashes without a leave. Its session expires
    ``session_timeout_ms`` after the coordinator last processed its heartbeat (the run
    fires the session timers); the next heartbeat of a survivor computes the new target
    and the survivors take its partitions. Timed from the crash until the group has
    converged without it."""
    kip1263 = Kip1263(assignment_interval_ms, False)
    config = group_config(
        members=members,
        partitions=partitions,
        heartbeat_interval_ms=heartbeat_interval_ms,
        kip1263=kip1263,
        session_timeout_ms=session_timeout_ms,
        crash=True,
    )
    run = TimedRun(config, timing, seed, session_timers=True)
    names = [c.name for c in config.clients]
    start = _form_group(run, names)
    if rest_ms is None:
        rest_ms = assignment_interval_ms + 3 * heartbeat_interval_ms
    # The crash falls anywhere in the victim's heartbeat interval (seeded): the formed
    # group's convergence, often the victim's own acknowledgement, would otherwise put it
    # on one of the victim's heartbeats whenever the rest is a multiple of the interval.
    at = start + rest_ms + random.Random(f"crash-{seed}").uniform(0, heartbeat_interval_ms)
    victim = names[-1]
    member_id = run.state.client(victim).member_id
    run.run(at)
    run.take(at, Crash(victim))
    expired: list[float] = []

    def done(r: TimedRun) -> bool:
        gone = member_id not in r.state.group.members
        if gone and not expired:
            expired.append(r.now)
        return gone and r.is_converged

    horizon = at + session_timeout_ms + horizon_intervals * heartbeat_interval_ms
    finished = run.run(horizon, stop=done)
    return CrashResult(
        members,
        seed,
        run.now - at if finished else None,
        expired[0] - at if expired else None,
        run,
    )


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
    groups: int = 1
    """Groups of ``members`` each on the one coordinator (the measures are over all)."""
    assignor_wait_mean_ms: float = 0.0
    """How long an offloaded run waited for an executor thread (mean, p99)."""
    assignor_wait_p99_ms: float = 0.0


def churn(
    *,
    members: int,
    kip1263: Kip1263,
    seed: int,
    timing: Timing = DEFAULT_TIMING,
    heartbeat_interval_ms: int = 1000,
    window_ms: float = 10_000.0,
    partitions: int | None = None,
    groups: int = 1,
) -> Load:
    """KIP-1263 "Motivation": a group that rebalances on every heartbeat; with ``groups``
    G > 1, G such groups (group ``g`` seeded ``seed * 1000 + g``) formed one by one, then
    measured together on one coordinator."""
    if not 1 <= groups <= MAX_GROUPS:
        raise ConfigError(f"groups must be in 1..{MAX_GROUPS}, got {groups}")
    config = group_config(
        members=members,
        partitions=partitions if partitions is not None else members,
        heartbeat_interval_ms=heartbeat_interval_ms,
        kip1263=kip1263,
        churn=True,
    )
    if groups > 1:
        return _churn_groups(config, kip1263, seed, timing, window_ms, groups)
    run = TimedRun(config, timing, seed)
    start = _form_group(run, [c.name for c in config.clients])
    base = replace(run.measures)
    base_latencies = len(run.measures.heartbeat_latencies_ms)
    base_waits = len(run.measures.assignor_waits_ms)

    run.run(start + window_ms, before=_flip)
    m = run.measures
    span = run.now - start
    latencies = sorted(m.heartbeat_latencies_ms[base_latencies:])
    waits = sorted(m.assignor_waits_ms[base_waits:])
    return Load(
        members=members,
        kip1263=kip1263,
        seed=seed,
        window_ms=span,
        heartbeats_per_second=(m.heartbeats - base.heartbeats) * 1000 / span,
        assignor_runs_per_second=(m.assignor_runs - base.assignor_runs) * 1000 / span,
        coordinator_utilisation=(m.coordinator_busy_ms - base.coordinator_busy_ms) / span,
        executor_utilisation=(
            m.executor_busy_ms - base.executor_busy_ms - _booked_after(run.coordinator, run.now)
        )
        / (span * timing.executor_threads),
        latency_mean_ms=statistics.fmean(latencies) if latencies else 0.0,
        latency_p99_ms=latencies[int(0.99 * (len(latencies) - 1))] if latencies else 0.0,
        latency_max_ms=latencies[-1] if latencies else 0.0,
        assignor_wait_mean_ms=statistics.fmean(waits) if waits else 0.0,
        assignor_wait_p99_ms=_p99(waits),
    )


MAX_GROUPS = 100
"""The most groups :func:`churn` puts on one coordinator."""


def _booked_after(coordinator: Coordinator, end_ms: float) -> float:
    """Executor time booked beyond ``end_ms``: a run is booked when it starts, and a run
    that starts after ``end_ms`` starts when its thread is free (back to back), so a
    thread's booked time beyond the window is exactly how far past it the thread is free."""
    return sum(max(0.0, free - end_ms) for free in coordinator.executor)


def _queued_after(coordinator: Coordinator, end_ms: float, timing: Timing) -> int:
    """Runs handed to the executor that start only after ``end_ms`` (queued back to back
    behind the run in progress on their thread): not counted as the window's runs."""
    if timing.assignor_ms <= 0:
        return 0
    return sum(int(max(0.0, free - end_ms) // timing.assignor_ms) for free in coordinator.executor)


def _p99(ordered: list[float]) -> float:
    return ordered[int(0.99 * (len(ordered) - 1))] if ordered else 0.0


def _flip(r: TimedRun, action: Action) -> list[Action]:
    """Before a STABLE member's heartbeat: change its subscription (the churn)."""
    if not isinstance(action, SendHeartbeat):
        return []
    c = r.state.client(action.client)
    if c.status is not ClientStatus.STABLE or r.state.perturbations >= MAX_CHANGES:
        return []
    choices = r.config.subscription_choices
    wanted = choices[0] if OTHER_TOPIC in c.subscription else choices[1]
    return [ChangeSubscription(c.name, wanted)]


def _churn_groups(
    config: Config, kip1263: Kip1263, seed: int, timing: Timing, window_ms: float, groups: int
) -> Load:
    """``groups`` churning groups of ``config`` on one coordinator: each formed on its
    own and run on (steady, at its members' phases) until the last one has formed, then
    all measured together over ``window_ms`` sharing one ``Coordinator``."""
    runs = []
    for g in range(groups):
        run = TimedRun(config, timing, seed * 1000 + g)
        _form_group(run, [c.name for c in config.clients])
        runs.append(run)
    start = max(r.now for r in runs)
    for r in runs:  # each group goes on heartbeating at its own phases until all formed
        r.run(start)
    shared = Coordinator(
        thread_free=max(r.coordinator.thread_free for r in runs),
        executor=[max(t for r in runs for t in r.coordinator.executor)] * timing.executor_threads,
    )
    bases = []
    for r in runs:
        r.coordinator = shared
        m = r.measures
        bases.append(
            (
                m.heartbeats,
                m.assignor_runs,
                m.coordinator_busy_ms,
                m.executor_busy_ms,
                len(m.heartbeat_latencies_ms),
                len(m.assignor_waits_ms),
            )
        )
    run_together(runs, start + window_ms, before=_flip)
    span = max(r.now for r in runs) - start
    heartbeats = runs_done = 0
    busy = executor = 0.0
    latencies: list[float] = []
    waits: list[float] = []
    for r, (hb, ar, cb, eb, nl, nw) in zip(runs, bases, strict=True):
        m = r.measures
        heartbeats += m.heartbeats - hb
        runs_done += m.assignor_runs - ar
        busy += m.coordinator_busy_ms - cb
        executor += m.executor_busy_ms - eb
        latencies += m.heartbeat_latencies_ms[nl:]
        waits += m.assignor_waits_ms[nw:]
    latencies.sort()
    waits.sort()
    return Load(
        members=len(config.clients),
        kip1263=kip1263,
        seed=seed,
        window_ms=span,
        heartbeats_per_second=heartbeats * 1000 / span,
        assignor_runs_per_second=(runs_done - _queued_after(shared, start + span, timing))
        * 1000
        / span,
        coordinator_utilisation=busy / span,
        executor_utilisation=(executor - _booked_after(shared, start + span))
        / (span * timing.executor_threads),
        latency_mean_ms=statistics.fmean(latencies) if latencies else 0.0,
        latency_p99_ms=_p99(latencies),
        latency_max_ms=latencies[-1] if latencies else 0.0,
        groups=groups,
        assignor_wait_mean_ms=statistics.fmean(waits) if waits else 0.0,
        assignor_wait_p99_ms=_p99(waits),
    )


Kind = Literal["scale-up", "churn"]
