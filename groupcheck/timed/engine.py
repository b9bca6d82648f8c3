"""A seeded discrete-event simulation on the model: every event is a model action
(the consumer family's ``enabled`` / ``step``: ``groupcheck.families.TIMED``; a family
without a timed facet is refused by name), and the simulation only decides *when* each one
happens, so a timed run is a valid path whose trace replays in conformance mode.

Time (milliseconds) advances from event to event. Which enabled action comes next is the
one ready first:

* ``SendHeartbeat``: at the client's next heartbeat — one heartbeat interval after its
  previous one, the interval restarting at every send as the Java client's heartbeat
  timer does — or at once when the client has something to say (joining, acknowledging a
  reconciled assignment, leaving: ``ConsumerMembershipManager.shouldHeartbeatNow``);
* ``DeliverMessage``: a request reaches the coordinator ``network_ms`` after it was sent
  and waits for the coordinator thread (one thread, requests in arrival order), which
  spends ``request_ms`` on it, plus ``assignor_ms`` when the heartbeat ran the assignor
  inline; the response reaches the client ``network_ms`` after the coordinator is done;
* the client's own steps (``Reconcile``, ``ReleaseAssignment``, ``Rejoin``,
  ``CompleteCallback``, ``Poll``): at once — clients revoke almost instantly, as
  KIP-1263's rebalance-time tables assume;
* ``AssignmentIntervalElapses`` (KIP-1263 batching): the assignment interval after the
  last target computation finished. It computes nothing: the gate it opens is read by the
  next heartbeat that needs a new target, which computes it (Kafka 4.4's
  ``GroupMetadataManager.canComputeNextTargetAssignment``, evaluated on a heartbeat: no
  timer, KAFKA-20291);
* ``CompleteAssignorRun`` (KIP-1263 offload): ``assignor_ms`` after a thread of the
  coordinator's executor (``executor_threads``) took the run;
* ``SessionTimeout``, only in a run with ``session_timers``: the session timeout after the
  coordinator last processed a heartbeat of the member (``GroupMetadataManager``
  ``scheduleConsumerGroupSessionTimeout``, re-armed on every heartbeat), once the model
  enables it (the member's client crashed, …);
* perturbations happen only when the scenario schedules them (``Scheduled``); other
  timers, losses and crashes never fire by themselves.

Ties go to the action that became ready first, then to ``enabled``'s order. The seed
draws each client's first heartbeat (its phase) within the first interval.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from groupcheck.families import TIMED, TimedFacet, facet_for
from invariants.liveness import converged
from model.actions import (
    Action,
    CompleteCallback,
    DeliverMessage,
    Poll,
    Reconcile,
    Rejoin,
    ReleaseAssignment,
    SendHeartbeat,
    SessionTimeout,
    Subscribe,
)
from model.config import Config
from model.consumer import system
from model.records import (
    Client,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Message,
    State,
)
from model.status import ClientStatus, ConfigError

URGENT = frozenset({ClientStatus.JOINING, ClientStatus.ACKNOWLEDGING, ClientStatus.LEAVING})
"""Client statuses that heartbeat at once (``ConsumerMembershipManager.shouldHeartbeatNow``)."""

CLIENT_STEPS = (Reconcile, ReleaseAssignment, Rejoin, CompleteCallback, Poll)
"""The client's own progress, taken as soon as it is enabled."""

INTERVAL_ACTION = "AssignmentIntervalElapses"
RUN_ACTION = "CompleteAssignorRun"


@dataclass(frozen=True)
class Timing:
    """How long things take (milliseconds) and how many executor threads there are."""

    network_ms: float = 1.0
    """One way, client to coordinator or back."""
    request_ms: float = 0.05
    """The coordinator thread's time for one request, without an assignor run."""
    assignor_ms: float = 20.0
    """One assignor run (inline on the coordinator thread, or on an executor thread)."""
    executor_threads: int = 2
    """``group.coordinator.background.threads`` (KIP-1263 default 2)."""

    def __post_init__(self) -> None:
        for name in ("network_ms", "request_ms", "assignor_ms"):
            value = getattr(self, name)
            if not 0 <= value <= 3_600_000:
                raise ConfigError(f"{name} must be in 0..3600000 ms, got {value}")
        if not 1 <= self.executor_threads <= 1024:
            raise ConfigError(f"executor_threads must be in 1..1024, got {self.executor_threads}")


@dataclass(frozen=True)
class Scheduled:
    """A perturbation the scenario takes at ``at_ms`` (it must be enabled then)."""

    at_ms: float
    action: Action


@dataclass
class Coordinator:
    """The coordinator's shared resources: its one thread and its executor's threads
    (each as the time it is next free). One per run, or one shared by the runs of several
    groups on the same coordinator (:func:`run_together`): KIP-1263's executor is the
    coordinator's, shared by all its groups."""

    thread_free: float = 0.0
    executor: list[float] = field(default_factory=list)


@dataclass
class Measures:
    """What a timed run measured."""

    end_ms: float = 0.0
    coordinator_busy_ms: float = 0.0
    executor_busy_ms: float = 0.0
    assignor_runs: int = 0
    heartbeats: int = 0
    heartbeat_latencies_ms: list[float] = field(default_factory=list)
    assignor_waits_ms: list[float] = field(default_factory=list)
    """For each offloaded run: how long it waited for an executor thread."""
    converged_at_ms: list[float] = field(default_factory=list)
    """Every time the group became converged (``invariants.liveness.converged``)."""

    def utilisation(self, start_ms: float = 0.0) -> float:
        """The coordinator thread's busy share of the time since ``start_ms``."""
        span = self.end_ms - start_ms
        return self.coordinator_busy_ms / span if span > 0 else 0.0


@dataclass
class TimedRun:
    """A run in progress: the state, the clock and everything scheduled."""

    config: Config
    timing: Timing
    seed: int
    state: State = field(init=False)
    _family: TimedFacet = field(init=False, repr=False)
    """The config's family's timed facet (``groupcheck.families.TIMED``)."""
    now: float = 0.0
    actions: list[Action] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    measures: Measures = field(default_factory=Measures)
    _net: list[float] = field(default_factory=list)
    """When each message in ``state.network`` (same positions) can be delivered."""
    _next_heartbeat: dict[str, float] = field(default_factory=dict)
    _sent_at: dict[str, float] = field(default_factory=dict)
    coordinator: Coordinator = field(default_factory=Coordinator)
    """The coordinator thread and executor (shared by the runs of :func:`run_together`)."""
    _enabled: tuple[State, tuple[Action, ...]] | None = None
    _runs: list[float] = field(default_factory=list)
    _interval_due: float | None = None
    _was_converged: bool = False
    phases: dict[str, float] = field(default_factory=dict)
    """Each client's seeded phase in the first heartbeat interval (scenarios join it then)."""
    session_timers: bool = False
    """Fire ``SessionTimeout`` when the model enables it, the session timeout after the
    coordinator last processed the member's heartbeat (off: the session timers never fire,
    as in the KIP-1263 scenarios)."""
    _heard: dict[str, float] = field(default_factory=dict)
    """Member id → when the coordinator last processed one of its heartbeats."""

    def __post_init__(self) -> None:
        # A family without a timed simulation (classic, mixed) is refused by name.
        self._family = facet_for(TIMED, self.config)
        state: State = self._family.initial(self.config)
        self.state = state
        self._net = [0.0] * len(state.network)
        rng = random.Random(self.seed)
        interval = self.config.heartbeat_interval_ms
        for c in state.clients:
            self.phases[c.name] = rng.uniform(0, interval)
            self._next_heartbeat[c.name] = self.phases[c.name]
        if not self.coordinator.executor:
            self.coordinator.executor = [0.0] * self.timing.executor_threads
        self._was_converged = converged(state)

    @property
    def is_converged(self) -> bool:
        """Whether the group is converged now (``invariants.liveness.converged``)."""
        return self._was_converged

    def client_joined(self, name: str) -> bool:
        """Whether client ``name`` is a member at an epoch above 0."""
        c = self.state.client(name)
        return c.member_epoch > 0 and c.member_id in self.state.group.members

    # ------------------------------------------------------------------ readiness

    def _ready(
        self, action: Action, position: dict[Message, int], clients: dict[str, Client]
    ) -> tuple[float, float] | None:
        """When ``action`` would happen and when it became ready (None: not by itself)."""
        now = self.now
        if isinstance(action, DeliverMessage):
            arrival = self._net[position[action.message]]
            if action.message.to_coordinator:
                return max(arrival, self.coordinator.thread_free, now), arrival
            return max(arrival, now), arrival
        if isinstance(action, SendHeartbeat):
            if clients[action.client].status in URGENT:
                return now, now
            due = self._next_heartbeat.get(action.client, now)
            return max(due, now), due
        if isinstance(action, CLIENT_STEPS):
            return now, now
        if action.kind == INTERVAL_ACTION:
            # No computation timed yet (the interval passed before the run): at once.
            due = now if self._interval_due is None else self._interval_due
            return max(due, now), due
        if action.kind == RUN_ACTION and self._runs:
            return max(self._runs[0], now), self._runs[0]
        if isinstance(action, SessionTimeout) and self.session_timers:
            heard = self._heard.get(action.member_id)
            if heard is None:
                return None
            due = heard + self.config.session_timeout_ms
            return max(due, now), due
        return None

    def next_action(self) -> tuple[float, Action] | None:
        """The enabled action that happens first, and when."""
        enabled = self.enabled()
        position: dict[Message, int] = {}
        for i, m in enumerate(self.state.network):
            position.setdefault(m, i)
        clients = {c.name: c for c in self.state.clients}
        best: tuple[float, float, int] | None = None
        chosen: Action | None = None
        for order, action in enumerate(enabled):
            when = self._ready(action, position, clients)
            if when is None:
                continue
            key = (when[0], when[1], order)
            if best is None or key < best:
                best, chosen = key, action
        if best is None or chosen is None:
            return None
        return best[0], chosen

    def enabled(self) -> tuple[Action, ...]:
        """The family's ``enabled`` of the current state (kept until the state changes)."""
        if self._enabled is None or self._enabled[0] is not self.state:
            self._enabled = (self.state, self._family.enabled(self.state, self.config))
        return self._enabled[1]

    # ------------------------------------------------------------------ stepping

    def take(self, at_ms: float, action: Action, *, checked: bool = False) -> None:
        """Take ``action`` at ``at_ms`` and do the bookkeeping of its timing
        (``checked``: the caller took it from ``enabled``)."""
        if not checked and action not in self.enabled():
            raise ConfigError(f"at {at_ms:.1f} ms: {action} is not enabled")
        self.now = max(self.now, at_ms)
        pre = self.state
        post: State = self._family.step(pre, action, self.config)
        done = self.now
        if isinstance(action, DeliverMessage) and action.message.to_coordinator:
            body = action.message.body
            if isinstance(body, ConsumerGroupHeartbeatRequest) and body.member_id:
                self._heard[body.member_id] = self.now  # the session timer is re-armed
            cost = self.timing.request_ms
            if _ran_assignor_inline(pre, post):
                cost += self.timing.assignor_ms
                self.measures.assignor_runs += 1
                self._computed(self.now + cost)
            done = self.now + cost
            self.coordinator.thread_free = done
            self.measures.coordinator_busy_ms += cost
        elif isinstance(action, SendHeartbeat):
            self._next_heartbeat[action.client] = self.now + self.config.heartbeat_interval_ms
            self._sent_at[action.client] = self.now
            self.measures.heartbeats += 1
        elif isinstance(action, DeliverMessage):
            body = action.message.body
            sent = self._sent_at.pop(action.message.client, None)
            if isinstance(body, ConsumerGroupHeartbeatResponse) and sent is not None:
                self.measures.heartbeat_latencies_ms.append(self.now - sent)
        elif action.kind == RUN_ACTION:
            self._runs.pop(0)
            self._computed(self.now)
        elif action.kind == INTERVAL_ACTION:
            self._interval_due = None
        self._align_network(pre, post, done)
        self._track_runs(pre, post)
        self.state = post
        self.actions.append(action)
        self.times.append(self.now)
        self.measures.end_ms = self.now
        now_converged = converged(post)
        if now_converged and not self._was_converged:
            self.measures.converged_at_ms.append(self.now)
        self._was_converged = now_converged

    def _computed(self, finished_ms: float) -> None:
        """A target computation finished: the assignment interval restarts."""
        interval = _assignment_interval(self.config)
        if interval > 0:
            self._interval_due = finished_ms + interval

    def _align_network(self, pre: State, post: State, done: float) -> None:
        """Carry each message's delivery time over; new messages get theirs."""
        old = list(zip(pre.network, self._net, strict=True))
        out: list[float] = []
        i = 0
        for m in post.network:
            j = i
            while j < len(old) and old[j][0] != m:
                j += 1
            if j < len(old):
                out.append(old[j][1])
                i = j + 1
                continue
            start = self.now if m.to_coordinator else done
            out.append(start + self.timing.network_ms)
        self._net = out

    def _track_runs(self, pre: State, post: State) -> None:
        """Assignor runs the step handed to the executor (KIP-1263 offload)."""
        before = len(getattr(pre.group, "assignor_runs", ()))
        after = len(getattr(post.group, "assignor_runs", ()))
        for _ in range(after - before):
            threads = self.coordinator.executor
            k = min(range(len(threads)), key=threads.__getitem__)
            start = max(self.now, threads[k])
            threads[k] = start + self.timing.assignor_ms
            self.measures.assignor_waits_ms.append(start - self.now)
            self._runs.append(start + self.timing.assignor_ms)
            self.measures.executor_busy_ms += self.timing.assignor_ms
            self.measures.assignor_runs += 1
        while len(self._runs) > after:  # runs dropped without completing (a failover)
            self._runs.pop(0)

    def run(
        self,
        until_ms: float,
        script: Sequence[Scheduled] = (),
        stop: Callable[[TimedRun], bool] | None = None,
        before: Callable[[TimedRun, Action], Sequence[Action]] | None = None,
    ) -> bool:
        """Advance to ``until_ms``, taking the scheduled perturbations at their times;
        ``before`` may add actions just before the one chosen (a scenario's own
        behaviour, e.g. a subscription change before every heartbeat). Returns True when
        ``stop`` ended the run after a step, False when ``until_ms`` was reached."""
        pending = sorted(script, key=lambda s: s.at_ms)
        k = 0
        while True:
            nxt = self.next_action()
            due = pending[k] if k < len(pending) and pending[k].at_ms <= until_ms else None
            if due is not None and (nxt is None or due.at_ms <= nxt[0]):
                self.take(due.at_ms, due.action)
                k += 1
            elif nxt is not None and nxt[0] <= until_ms:
                at, action = nxt
                extras = before(self, action) if before is not None else ()
                for extra in extras:
                    self.take(at, extra)
                if not extras or action in self.enabled():
                    self.take(at, action, checked=True)
            else:
                self.now = max(self.now, until_ms)
                self.measures.end_ms = self.now
                return False
            if stop is not None and stop(self):
                return True


def _assignment_interval(config: Config) -> int:
    """The group's assignment interval (0 without KIP-1263 batching)."""
    effective = getattr(config, "effective_assignment_interval_ms", None)
    return int(effective()) if callable(effective) else 0


def _ran_assignor_inline(pre: State, post: State) -> bool:
    """Whether a heartbeat computed a new target on the coordinator thread: the
    assignment epoch moved to the group epoch with a run of the assignor."""
    return post.group.assignment_epoch > pre.group.assignment_epoch and bool(post.group.members)


def joined_at(run: TimedRun, client: str) -> float | None:
    """When ``client`` subscribed in this run (None: not in it)."""
    for t, a in zip(run.times, run.actions, strict=True):
        if isinstance(a, Subscribe) and a.client == client:
            return t
    return None


def run_together(
    runs: Sequence[TimedRun],
    until_ms: float,
    before: Callable[[TimedRun, Action], Sequence[Action]] | None = None,
) -> None:
    """Advance several groups' runs on one coordinator to ``until_ms``: the enabled
    action that is ready first over all of them is taken next, so their requests queue
    for the one coordinator thread and their offloaded runs for the executor threads of
    the ``Coordinator`` they share (the caller gives them the same one). ``before`` is as
    for :meth:`TimedRun.run`. Ties go to the earlier run in ``runs``."""
    clock = max((r.now for r in runs), default=0.0)
    while True:
        best: tuple[float, int, Action] | None = None
        for i, r in enumerate(runs):
            r.now = clock  # nothing happens in the past of the shared clock
            nxt = r.next_action()
            if nxt is not None and nxt[0] <= until_ms and (best is None or nxt[0] < best[0]):
                best = (nxt[0], i, nxt[1])
        if best is None:
            for r in runs:
                r.now = max(r.now, until_ms)
                r.measures.end_ms = r.now
            return
        at, i, action = best
        run = runs[i]
        extras = before(run, action) if before is not None else ()
        for extra in extras:
            run.take(at, extra)
        if not extras or action in run.enabled():
            run.take(at, action, checked=True)
        clock = run.now


TIMED.register(
    "consumer",
    TimedFacet(
        initial=system.consumer_initial,
        enabled=system.consumer_enabled,
        step=system.consumer_step,
    ),
)
"""The consumer family's timed simulation (KIP-848 heartbeats, KIP-1263 assignor timing)."""
