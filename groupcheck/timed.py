"""A seeded discrete-event simulation on the model (``groupcheck simulate --timed``).

The checker's time is logical; this gives the same actions timestamps (KIP-1263 argues
with time: heartbeat interval, assignor duration, executor threads). Every event is a
model action taken through ``system.enabled``/``system.step``, so a timed run is a model
path and its trace passes conformance replay. What is timed:

- each client heartbeats every ``heartbeat_interval_ms`` from a seeded phase offset, and
  at once when it has something to acknowledge (a join, a finished reconciliation: the
  Java client does not wait for the interval then); its application steps (reconcile,
  release, rejoin) are instant — "clients revoke partitions and notify the broker almost
  instantly", as the KIP's tables assume;
- a message takes ``latency_ms`` one way; the coordinator thread handles one request at a
  time, and a heartbeat that runs the assignor inline holds it ``assignor_ms`` longer;
- an offloaded assignor run completes ``assignor_ms`` after it started, on one of
  ``executor_threads`` threads (with one group there is at most one run at a time);
- the assignment interval passes ``assignment_interval_ms`` after a computation finished;
- clients that start unsubscribed subscribe at ``join_at_ms`` (a group scaling up).

Timers that fire only for dead clients (session, rebalance) and other perturbations are
not scheduled: the scenario is the KIP's scale-up, not a failure. Randomness (the phase
offsets) lives here, never in ``model``.
"""

from __future__ import annotations

import heapq
import json
import random
import statistics
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from invariants.liveness import converged
from model import system
from model.actions import (
    Action,
    AssignmentIntervalElapses,
    ChangeSubscription,
    CompleteAssignorRun,
    DeliverMessage,
    Reconcile,
    ReleaseAssignment,
    SendHeartbeat,
    Subscribe,
)
from model.config import ClientSpec, Config
from model.path import Path
from model.records import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Message,
    State,
)
from model.status import ClientStatus, ConfigError
from model.trace.codec import path_lines

INSTANT_STEPS = (Reconcile, ReleaseAssignment)
"""Application steps a client takes the moment they are enabled."""


@dataclass(frozen=True)
class TimedSettings:
    """The durations of a timed run (milliseconds)."""

    latency_ms: int = 1
    assignor_ms: int = 20
    executor_threads: int = 2
    join_at_ms: int = 10_000
    join_spacing_ms: int = 0
    """The i-th client that starts unsubscribed subscribes at ``join_at_ms + i *
    join_spacing_ms`` (a group scaling up by several members one after the other)."""
    duration_ms: int = 40_000
    churn: bool = False
    """Before each scheduled heartbeat the client switches to its other subscription
    choice (``ChangeSubscription``), so every heartbeat bumps the group epoch: the badly
    behaved group of KIP-1263's Motivation."""

    def check(self) -> None:
        """Refuse impossible durations."""
        for name in ("latency_ms", "assignor_ms", "join_at_ms", "join_spacing_ms", "duration_ms"):
            if getattr(self, name) < 0:
                raise ConfigError(f"--timed: {name.replace('_', '-')} must be >= 0")
        if self.executor_threads < 1:
            raise ConfigError("--timed: executor-threads must be >= 1")


@dataclass(frozen=True)
class TimedEvent:
    """One model action and the time it happened at."""

    time_ms: int
    action: Action


@dataclass
class TimedRun:
    """A timed run: the events in order, the last state, when the last client subscribed,
    and when the group had converged after it (None: not within the duration)."""

    config: Config
    seed: int
    settings: TimedSettings
    events: list[TimedEvent] = field(default_factory=list)
    state: State | None = None
    joined_ms: int | None = None
    converged_ms: int | None = None
    coordinator_busy_ms: int = 0
    heartbeat_latencies_ms: list[int] = field(default_factory=list)
    """Per heartbeat answered: from the request's send to its response's delivery."""

    @property
    def rebalance_ms(self) -> int | None:
        """How long the group took to converge after the last join."""
        if self.joined_ms is None or self.converged_ms is None:
            return None
        return self.converged_ms - self.joined_ms

    def trace_lines(self) -> Iterator[str]:
        """The run as a model trace whose events carry their timestamps (``ts``)."""
        lines = path_lines(Path(self.config, tuple(e.action for e in self.events)))
        yield next(lines)
        for event, line in zip(self.events, lines, strict=True):
            obj = json.loads(line)
            obj["ts"] = event.time_ms
            yield json.dumps(obj, sort_keys=True)


class _Sim:
    """The event loop. The agenda holds (time, order, what) entries; ``what`` is a client
    name (its heartbeat tick), a message (its delivery), or a coordinator-side action."""

    def __init__(self, config: Config, seed: int, settings: TimedSettings) -> None:
        if config.protocol != "consumer":
            raise ConfigError("--timed models the KIP-848 consumer protocol only")
        settings.check()
        self.config = config
        self.settings = settings
        self.rng = random.Random(seed)
        self.run = TimedRun(config, seed, settings)
        self.state: State = system.consumer_initial(config)
        self.now = 0
        self.order = 0
        self.agenda: list[tuple[int, int, object]] = []
        self.coordinator_free_ms = 0
        self.scheduled: Counter[Message] = Counter()
        self.sent: list[Message] = []
        self.heartbeat_sent_ms: dict[str, int] = {}
        interval = config.heartbeat_interval_ms
        joiners = 0
        for c in self.state.clients:
            self._at(self.rng.randrange(interval), ("tick", c.name))
            if c.status is ClientStatus.UNSUBSCRIBED:
                at = settings.join_at_ms + joiners * settings.join_spacing_ms
                self._at(at, ("join", c.name))
                joiners += 1

    def _at(self, time_ms: int, what: object) -> None:
        self.order += 1
        heapq.heappush(self.agenda, (time_ms, self.order, what))

    def _take(self, action: Action, response_delay: int = 0) -> bool:
        if action not in system.enabled(self.state, self.config):
            return False
        before = self.state
        self.state = system.consumer_step(self.state, action, self.config)
        self.run.events.append(TimedEvent(self.now, action))
        self._after(before, action)
        for message in self.sent:
            if not message.to_coordinator:
                delay = response_delay + self.settings.latency_ms
                self._at(self.now + delay, ("deliver", message))
        return True

    def _after(self, before: State, action: Action) -> None:
        """Schedule what the step set going: messages sent, a run started, an interval."""
        new = Counter(self.state.network) - Counter(before.network) - self.scheduled
        self.sent = sorted(new.elements(), key=repr)
        for message in self.sent:
            if isinstance(message.body, ConsumerGroupHeartbeatRequest):
                self.heartbeat_sent_ms[message.client] = self.now
            self.scheduled[message] += 1
            if message.to_coordinator:
                self._at(self.now + self.settings.latency_ms, ("deliver", message))
        g0, g1 = before.group, self.state.group
        if len(g1.assignor_runs) > len(g0.assignor_runs):
            self._at(self.now + self.settings.assignor_ms, ("complete",))
        recorded = g1.assignment_timestamp != 0 and not g1.assignment_interval_elapsed
        fresh = (
            g0.assignment_timestamp == 0
            or g0.assignment_interval_elapsed
            or g1.assignment_epoch != g0.assignment_epoch
        )
        if recorded and fresh and self.config.effective_assignment_interval_ms() > 0:
            self._at(self.now + self.config.effective_assignment_interval_ms(), ("elapse",))
        if (
            self.run.joined_ms is not None
            and self.run.converged_ms is None
            and converged(self.state)
        ):
            self.run.converged_ms = self.now

    def _client_steps(self) -> None:
        """Instant application steps, then an immediate heartbeat where one is owed."""
        progressed = True
        while progressed:
            progressed = False
            for action in system.enabled(self.state, self.config):
                if isinstance(action, INSTANT_STEPS) and self._take(action):
                    progressed = True
                    break
        for c in self.state.clients:
            if c.status in (ClientStatus.JOINING, ClientStatus.ACKNOWLEDGING, ClientStatus.LEAVING):
                self._take(SendHeartbeat(c.name))

    def _deliver(self, message: Message) -> None:
        self.scheduled[message] -= 1
        if self.scheduled[message] <= 0:
            del self.scheduled[message]
        if not message.to_coordinator:
            if self._take(DeliverMessage(message)) and isinstance(
                message.body, ConsumerGroupHeartbeatResponse
            ):
                sent = self.heartbeat_sent_ms.pop(message.client, None)
                if sent is not None:
                    self.run.heartbeat_latencies_ms.append(self.now - sent)
            return
        start = max(self.now, self.coordinator_free_ms)
        if start > self.now:  # the coordinator thread is busy: the request waits
            self.scheduled[message] += 1
            self._at(start, ("deliver", message))
            return
        # The assignor runs on the coordinator thread when it is not offloaded: the
        # response leaves, and the next request is read, only when it finished.
        action = DeliverMessage(message)
        busy = 0 if self.config.assignor_offload else self._inline_assignor_ms(action)
        if self._take(action, response_delay=busy):
            self.coordinator_free_ms = self.now + busy
            self.run.coordinator_busy_ms += busy

    def _inline_assignor_ms(self, action: Action) -> int:
        """``assignor_ms`` when handling ``action`` computes a target inline, else 0."""
        if action not in system.enabled(self.state, self.config):
            return 0
        after = system.consumer_step(self.state, action, self.config)
        computed = after.group.assignment_epoch != self.state.group.assignment_epoch
        computed = computed and bool(after.group.members)
        return self.settings.assignor_ms if computed else 0

    def _churn(self, name: str) -> None:
        """The client subscribes to the other of its subscription choices."""
        current = self.state.client(name).subscription
        for choice in self.config.subscription_choices:
            if frozenset(choice) != current:
                self._take(ChangeSubscription(name, tuple(sorted(choice))))
                return

    def play(self) -> TimedRun:
        interval = self.config.heartbeat_interval_ms
        while self.agenda:
            time_ms, _, what = heapq.heappop(self.agenda)
            if time_ms > self.settings.duration_ms:
                break
            self.now = time_ms
            assert isinstance(what, tuple)
            kind = what[0]
            if kind == "tick":
                if self.settings.churn:
                    self._churn(what[1])
                self._take(SendHeartbeat(what[1]))
                self._at(self.now + interval, what)
            elif kind == "join":
                if self._take(Subscribe(what[1])):
                    self.run.joined_ms = self.now
            elif kind == "deliver":
                self._deliver(what[1])
            elif kind == "complete":
                self._take(CompleteAssignorRun())
            elif kind == "elapse":
                self._take(AssignmentIntervalElapses())
            self._client_steps()
        self.run.state = self.state
        return self.run


def simulate_timed(config: Config, seed: int, settings: TimedSettings) -> TimedRun:
    """Play ``config`` in time from a seed (module docstring). The same arguments give the
    same run."""
    return _Sim(config, seed, settings).play()


def scale_up(
    members: int,
    partitions: int,
    *,
    assignment_interval_ms: int = 0,
    assignor_offload: bool = False,
    joiners: int = 1,
) -> Config:
    """The KIP-1263 "Impact on Rebalance Times" scenario: ``members - joiners`` members
    share a topic, and the last ``joiners`` join (``TimedSettings.join_at_ms``,
    ``join_spacing_ms``)."""
    if members < 1 or partitions < 1 or not 1 <= joiners <= members:
        raise ConfigError("scale_up needs a member, a partition and 1..members joiners")
    clients = tuple(
        ClientSpec(f"M{i}", ("foo",), subscribed=i <= members - joiners)
        for i in range(1, members + 1)
    )
    return Config(
        name=f"SCALE_UP_{members}",
        topics=(("foo", partitions),),
        clients=clients,
        max_perturbations=joiners,
        perturbations=frozenset({"Subscribe"}),
        max_restarts=0,
        max_partitions_per_topic=max(partitions, 4),
        epoch_layout="kafka-4.3",
        assignment_interval_ms=assignment_interval_ms,
        assignor_offload=assignor_offload,
        report_pending_additions=True,
    )


MODES: tuple[tuple[str, dict[str, int | bool]], ...] = (
    ("inline, interval 0", {}),
    ("batching, 1000 ms", {"assignment_interval_ms": 1000}),
    ("offload", {"assignor_offload": True}),
    ("batching + offload", {"assignment_interval_ms": 1000, "assignor_offload": True}),
)
"""The KIP-1263 settings the rebalance-time table compares."""


def rebalance_table(
    members: int, joiners: int, spacing_ms: int, seeds: int = 20
) -> list[tuple[str, int, int, int, int]]:
    """Per mode of ``MODES``: the median and the largest rebalance time after the last
    join (ms) over ``seeds`` seeded runs of ``scale_up``, the median time the assignor held
    the coordinator thread (ms), and how many runs did not converge within the duration."""
    rows = []
    for label, options in MODES:
        times: list[int] = []
        busy: list[int] = []
        missed = 0
        for seed in range(seeds):
            config = scale_up(members, 2 * members, joiners=joiners, **options)  # type: ignore[arg-type]
            run = simulate_timed(
                config, seed, TimedSettings(join_spacing_ms=spacing_ms, duration_ms=60_000)
            )
            busy.append(run.coordinator_busy_ms)
            if run.rebalance_ms is None:
                missed += 1
            else:
                times.append(run.rebalance_ms)
        rows.append(
            (
                label,
                int(statistics.median(times)) if times else -1,
                max(times, default=-1),
                int(statistics.median(busy)),
                missed,
            )
        )
    return rows


def churning_group(
    members: int,
    heartbeat_interval_ms: int,
    *,
    assignment_interval_ms: int = 0,
    assignor_offload: bool = False,
) -> Config:
    """KIP-1263's Motivation in small: ``members`` members heartbeating every
    ``heartbeat_interval_ms`` (``members * 1000 / heartbeat_interval_ms`` heartbeats a
    second), each switching its subscription between ``foo`` and ``foo, bar`` before every
    heartbeat (``TimedSettings.churn``), so the group rebalances on every heartbeat."""
    return Config(
        name=f"CHURN_{members}",
        topics=(("foo", members), ("bar", members)),
        clients=tuple(ClientSpec(f"M{i}", ("foo",)) for i in range(1, members + 1)),
        max_perturbations=10_000,
        perturbations=frozenset({"ChangeSubscription"}),
        subscription_choices=(("foo",), ("bar", "foo")),
        max_restarts=0,
        max_partitions_per_topic=max(members, 4),
        heartbeat_interval_ms=heartbeat_interval_ms,
        epoch_layout="kafka-4.3",
        assignment_interval_ms=assignment_interval_ms,
        assignor_offload=assignor_offload,
        report_pending_additions=True,
    )


def coordinator_load_table(
    members: int = 10, heartbeat_interval_ms: int = 50, duration_ms: int = 4000, seed: int = 1
) -> list[tuple[str, int, float, int, int]]:
    """Per mode of ``MODES``, for ``churning_group``: heartbeats answered, the share of the
    coordinator thread's time the assignor took, and the median and longest heartbeat
    round trip (ms)."""
    rows = []
    for label, options in MODES:
        config = churning_group(members, heartbeat_interval_ms, **options)  # type: ignore[arg-type]
        run = simulate_timed(
            config, seed, TimedSettings(churn=True, join_at_ms=0, duration_ms=duration_ms)
        )
        latencies = sorted(run.heartbeat_latencies_ms)
        rows.append(
            (
                label,
                len(latencies),
                run.coordinator_busy_ms / duration_ms,
                latencies[len(latencies) // 2] if latencies else -1,
                latencies[-1] if latencies else -1,
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    """``python -m groupcheck.timed [rebalance|load]``: print the tables of
    docs/tutorial.md section 8 as measured now."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m groupcheck.timed", description=main.__doc__)
    parser.add_argument("table", choices=("rebalance", "load"))
    args = parser.parse_args(argv)
    if args.table == "rebalance":
        print("| members | joiners | mode | median | max | busy (median) |")
        print("|---|---|---|---|---|---|")
        for members, joiners, spacing in ((2, 1, 0), (20, 2, 300)):
            where = f"{joiners}, {spacing} ms apart" if joiners > 1 else str(joiners)
            for label, median, top, busy, missed in rebalance_table(members, joiners, spacing):
                extra = f" ({missed} runs did not converge)" if missed else ""
                print(f"| {members} | {where} | {label}{extra} | {median} | {top} | {busy} |")
        return 0
    print(
        "| mode | heartbeats answered | assignor's share of the coordinator thread "
        "| median round trip (ms) | longest (ms) |"
    )
    print("|---|---|---|---|---|")
    for label, answered, share, median, longest in coordinator_load_table():
        print(f"| {label} | {answered} | {share:.2f} | {median} | {longest} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
