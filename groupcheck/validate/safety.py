"""Safety mode: what a (possibly partial) trace of another implementation shows.

A trace of the classic protocol (header ``"protocol": "classic"``) is checked by
``groupcheck.validate.safety_classic`` instead, and a ``mixed`` one (members of both
protocols in one group) by ``groupcheck.validate.safety_mixed``; this module reads the
consumer protocol's ConsumerGroupHeartbeat messages.

An implementation with another assignor, or a log of only what crossed the wire, cannot be
replayed against the model. Safety mode reads what the trace observes — the heartbeat
requests (what a member reports owning, ``TopicPartitions``) and responses (what the
coordinator assigns, ``Assignment``), in the order the coordinator processed them — and
tracks what each member may be consuming: what it last reported, plus what it was given
since. From that it checks the :data:`OBSERVED_CHECKS`, named ``Observed.*`` because they
are not the model's properties of similar name (``invariants.properties``): those look at
what clients really consume and at the coordinator's own state, which a trace does not
show. ``docs/trace-format.md`` ("Validation modes") describes each.

Process events, when a trace has them (the model's traces do: ``Crash``, ``Restart``,
``RequestTimeout``, ``ReleaseAssignment``, ``SessionTimeout`` …), say which responses a
live process read and when a client stopped consuming; a wire capture has none, so a client
that dies silently still counts as consuming (docs/capture.md).

Convergence is checked at the end of every quiet window between perturbations that holds
``settle`` events (and lasts ``--settle-ms``); when the last window is shorter, the result
is *inconclusive*, not ok. With timing (``groupcheck.validate.timing``) every hand-over of
an unreleased partition is classified: premature, after expiry with its owner dead, or a
zombie window.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from groupcheck.families import SAFETY
from groupcheck.validate.concurrency import releases_first
from groupcheck.validate.events import EventReader
from groupcheck.validate.report import Finding, Report
from groupcheck.validate.timing import (
    PREMATURE,
    UNCLASSIFIED,
    ZOMBIE,
    HandOver,
    TimingOptions,
    classify,
    premature_finding,
    report_handovers,
    seconds,
)
from model.actions import (
    AbandonRequest,
    Action,
    Crash,
    DeliverMessage,
    RebalanceTimeout,
    ReleaseAssignment,
    RequestTimeout,
    Restart,
    SessionTimeout,
    Subscribe,
)
from model.ids import EMPTY, Assignment
from model.records import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Message,
)
from model.status import FENCING_ERRORS, ErrorCode
from model.trace import TraceError, TraceHeader, parse_header
from reports.escape import shown


@dataclass(frozen=True)
class ObservedCheck:
    """A check of safety mode: its finding's name, what it checks, where the protocol
    asks for it, and the model property of similar name it stands in for."""

    name: str
    description: str
    reference: str
    model_property: str


NO_DOUBLE_OWNERSHIP = ObservedCheck(
    "Observed.NoDoubleOwnership",
    "No partition is given to a member, or reported owned by a member that was not given "
    "it since, while another member may still be consuming it (has not reported releasing "
    "it): read from heartbeat requests (TopicPartitions) and responses (Assignment).",
    "KIP-848 Member Epoch - Reconciliation (revoke before assign)",
    "NoDoubleClientOwnership",
)
MEMBER_EPOCH_MONOTONE = ObservedCheck(
    "Observed.MemberEpochMonotone",
    "A member's epoch in successful heartbeat responses never decreases, unless the "
    "member was fenced (a fencing error) or removed by the coordinator (an expiry) in "
    "between.",
    "KIP-848 Member Epoch",
    "MemberEpochMonotone",
)
FENCING_RESPECTED = ObservedCheck(
    "Observed.FencingRespected",
    "After a response with a fencing error (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID), the "
    "member's next heartbeat rejoins with member epoch 0 or leaves.",
    "KIP-848 Consumer Group Heartbeat API (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID)",
    "",
)
CONVERGENCE = ObservedCheck(
    "Observed.Convergence",
    "At the end of every quiet window of at least --settle events (and --settle-ms) between "
    "perturbations (a join, a leave, a fencing, an expiry), every member still in the group "
    "is at one member epoch and has acknowledged (reported owning) exactly its last "
    "assignment.",
    "KIP-848 Rebalance Process (members converge to the target assignment)",
    "Convergence",
)
OBSERVED_CHECKS = (NO_DOUBLE_OWNERSHIP, MEMBER_EPOCH_MONOTONE, FENCING_RESPECTED, CONVERGENCE)
"""Every check of safety mode."""


@dataclass
class _Process:
    """What a trace tells of one client process (mirroring ``model.consumer.client.Client``)."""

    alive: bool = True
    incarnation: int = 0
    connection: int = 0
    leaving: bool = False  # revocation callbacks ran: it takes no assignment any more

    def sent(self, message: Message) -> bool:
        """A request of this client reaches the coordinator (which processes every
        request): note the incarnation and connection it names, and tell whether its
        sender still runs — a request delivered after its sender crashed (or was
        replaced) tells nothing of what any live process consumes."""
        if message.incarnation > self.incarnation or (
            message.incarnation == self.incarnation and message.connection > self.connection
        ):
            self.incarnation, self.connection = message.incarnation, message.connection
        return self.alive and message.incarnation == self.incarnation

    def reads(self, message: Message) -> bool:
        """Whether this process reads a response: only a live process of the incarnation,
        on the connection, it was sent to."""
        return (
            self.alive
            and message.incarnation == self.incarnation
            and message.connection == self.connection
        )


_PROCESS_EVENTS = (Crash, Restart, RequestTimeout, AbandonRequest, ReleaseAssignment, Subscribe)
_STOPS_CONSUMING = (Crash, Restart, ReleaseAssignment)
_EXPIRIES = (SessionTimeout, RebalanceTimeout)


@dataclass
class _Processes:
    """Which client process and connection read the responses, mirroring ``model.consumer.system``:
    a response is read only by a live process of the incarnation and on the connection it
    was sent to. A process that is gone (``Crash``; ``Restart`` starts the next incarnation)
    or a connection closed by a request timeout (``RequestTimeout``, ``AbandonRequest``:
    Kafka's ``NetworkClient``) reads nothing, and a leaving consumer that has released its
    partitions (``ReleaseAssignment``) takes no assignment, so such a response gives nothing
    to consume. Wire captures have none of these events: there, each request names the
    connection in use and responses on it are read."""

    clients: dict[str, _Process] = field(default_factory=dict)

    def on_event(
        self,
        action: Crash | Restart | RequestTimeout | AbandonRequest | ReleaseAssignment | Subscribe,
    ) -> None:
        """Follow a process event (``_PROCESS_EVENTS``) of a model trace."""
        p = self.of(action.client)
        if isinstance(action, Crash):
            p.alive = False
        elif isinstance(action, Restart):
            p.alive, p.incarnation, p.leaving = True, p.incarnation + 1, False
        elif isinstance(action, RequestTimeout | AbandonRequest):
            p.connection += 1
        else:
            p.leaving = isinstance(action, ReleaseAssignment)

    def of(self, client: str) -> _Process:
        """The client's process (as the trace has told of it so far)."""
        p = self.clients.get(client)
        if p is None:
            p = self.clients[client] = _Process()
        return p


@dataclass
class _MemberView:
    client: str | None = None  # the client process that sends this member's heartbeats
    epoch: int | None = None
    reported: Assignment = EMPTY
    received: Assignment = EMPTY
    fenced: bool = False
    left: bool = False
    expired: bool = False  # removed by the coordinator's session or rebalance timer
    assignment: Assignment | None = None  # the last assignment received
    dead_holds: Assignment = EMPTY
    """What it may have been consuming when its process died (``Crash``, ``Restart``):
    nobody consumes it now, but the coordinator still counts it as the member's."""
    last_heartbeat_ts: int | None = None
    last_heartbeat_line: int | None = None
    rebalance_timeout_ms: int | None = None  # its requests' RebalanceTimeoutMs
    revoke_asked: dict[tuple[str, int], int] = field(default_factory=dict)
    """Partition → when the exchange began whose response took it out of the member's
    assignment (the coordinator asked it to revoke it: its rebalance timer started)."""

    def owns(self) -> Assignment:
        """What the member may be consuming: what it last reported, plus what it was
        given since (it may have started on it)."""
        return self.reported | self.received

    def in_group(self) -> bool:
        return not (self.fenced or self.left or self.expired) and self.epoch is not None


class Names:
    """How messages name members and partitions: by the ``client.id`` and topic name the
    header's ``clients`` and ``topic_names`` give (a capture's), else by their ids."""

    def __init__(self, header: TraceHeader) -> None:
        self.topics = dict(header.topic_names or {})
        self.clients = dict(header.clients or {})
        counts: dict[str, int] = {}
        for name in self.clients.values():
            counts[name] = counts.get(name, 0) + 1
        self.shared = {name for name, k in counts.items() if k > 1}

    def member(self, member_id: str) -> str:
        """``consumer-2``; ``consumer-2 (ID)`` when several members had that client.id."""
        name = self.clients.get(member_id)
        if name is None:
            return shown(member_id)
        return shown(name) if name not in self.shared else f"{shown(name)} ({shown(member_id)})"

    def partition(self, topic: str, index: int) -> str:
        """``orders-3``."""
        return f"{shown(self.topics.get(topic, topic))}-{index}"


@dataclass
class _Window:
    """A quiet window: the events between two perturbations."""

    first_line: int | None = None
    last_line: int | None = None
    events: int = 0
    first_ts: int | None = None
    last_ts: int | None = None

    def add(self, line: int, ts: int | None) -> None:
        if self.first_line is None:
            self.first_line, self.first_ts = line, ts
        self.last_line, self.events = line, self.events + 1
        if ts is not None:
            self.first_ts = self.first_ts if self.first_ts is not None else ts
            self.last_ts = ts

    @property
    def ms(self) -> int | None:
        if self.first_ts is None or self.last_ts is None:
            return None
        return self.last_ts - self.first_ts

    def describe(self) -> str:
        span = f"lines {self.first_line}-{self.last_line}, {self.events} events"
        return span + (f", {seconds(self.ms)}" if self.ms is not None else "")


def trace_events(
    lines: Iterable[str], header: TraceHeader
) -> Iterator[tuple[int, int | None, Action]]:
    """(line number, ``ts``, action) of each event of a trace whose header has been read
    (``lines`` goes on from line 2); blank lines are skipped, a malformed one raises
    ``TraceError`` — and so does one that is impossible on its face (:class:`_OnItsFace`:
    time running backwards, a member epoch below -2)."""
    face = _OnItsFace()
    decode = EventReader(header).decode
    for n, line in enumerate(lines, 2):
        if line.strip():
            ts, _, action = decode(line, n)
            face.check(n, line, ts, action)
            yield n, ts, action


MIN_MEMBER_EPOCH = -2
"""The lowest member epoch a ConsumerGroupHeartbeat carries: -1 a member leaving, -2 a
static member leaving temporarily (KIP-848 Consumer Group Heartbeat API)."""


@dataclass
class _OnItsFace:
    """What no trace can show, whoever wrote it (docs/trace-format.md, "Timestamps"):

    - time running backwards on one connection: Kafka handles a connection's requests one
      at a time, in order, so along the file the requests of one client on one connection
      never go back in time, nor do its responses, and a response is never stamped before
      the request it answers (the last request of that client and connection above it).
      Across connections the file may go back: a capture writes exchanges in the order the
      coordinator handled them, which is neither the order the requests were sent nor the
      order the responses came back (``groupcheck/capture/proxy.py``);
    - a ConsumerGroupHeartbeat member epoch below :data:`MIN_MEMBER_EPOCH`."""

    requests: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)
    """(client, connection) → the ``ts`` and line of its latest request."""
    responses: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)
    """(client, connection) → the ``ts`` and line of its latest response."""

    def check(self, n: int, line: str, ts: int | None, action: Action) -> None:
        if ts is None and not isinstance(action, DeliverMessage):
            return
        body = action.message.body if isinstance(action, DeliverMessage) else None
        epoch = getattr(body, "member_epoch", None)
        if (
            isinstance(body, ConsumerGroupHeartbeatRequest | ConsumerGroupHeartbeatResponse)
            and isinstance(epoch, int)
            and epoch < MIN_MEMBER_EPOCH
        ):
            raise TraceError(
                n,
                _column(line, "MemberEpoch"),
                f"member epoch {epoch} is below {MIN_MEMBER_EPOCH}, the lowest a "
                "ConsumerGroupHeartbeat carries",
            )
        if ts is None or not isinstance(action, DeliverMessage):
            return
        message = action.message
        key = (message.client, message.connection)
        if message.to_coordinator:
            self._forward(n, line, ts, self.requests, key, "request")
            return
        self._forward(n, line, ts, self.responses, key, "response")
        sent = self.requests.get(key)
        if sent is not None and ts < sent[0]:
            raise TraceError(
                n,
                _column(line, "ts"),
                f"ts {ts} is before ts {sent[0]} of its client's request at line "
                f"{sent[1]}: a response cannot precede the request",
            )

    @staticmethod
    def _forward(
        n: int,
        line: str,
        ts: int,
        latest: dict[tuple[str, int], tuple[int, int]],
        key: tuple[str, int],
        what: str,
    ) -> None:
        before = latest.get(key)
        if before is not None and ts < before[0]:
            raise TraceError(
                n,
                _column(line, "ts"),
                f"ts {ts} is before ts {before[0]} of the {what} at line {before[1]} on the "
                "same connection: time runs backwards",
            )
        latest[key] = (ts, n)


def _column(line: str, key: str) -> int:
    """The 1-based column of ``"key"`` in ``line`` (1 when absent)."""
    i = line.find(f'"{key}"')
    return i + 1 if i >= 0 else 1


def validate_safety(
    file: str,
    lines: Iterable[str],
    settle: int = 100,
    timing: TimingOptions | None = None,
) -> Report:
    """Check the :data:`OBSERVED_CHECKS` on a (possibly partial) trace; with its timing
    known (the header's, or ``timing``'s options), classify every hand-over of an
    unreleased partition (``groupcheck.validate.timing``)."""
    report = Report(file, "safety")
    it = iter(lines)
    try:
        first = next(it, None)
        if first is None:
            raise TraceError(1, 1, "empty trace: no header line")
        header = parse_header(first)
        return SAFETY.named(header.protocol)(file, header, it, settle, timing)
    except TraceError as e:
        report.error = f"{file}:{e}"
        return report


def validate_consumer_safety(
    file: str,
    header: TraceHeader,
    lines: Iterator[str],
    settle: int,
    timing: TimingOptions | None = None,
) -> Report:
    """Safety mode on a KIP-848 trace whose header (line 1) has been read (``lines`` goes
    on from line 2)."""
    report = Report(file, "safety")
    try:
        checker = _Safety(file, report, settle, timing or TimingOptions(), header)
        for n, ts, action in releases_first(trace_events(lines, header)):
            checker.on_event(n, ts, action)
    except TraceError as e:
        report.error = f"{file}:{e}"
        return report
    checker.finish()
    return report


SAFETY.register("consumer", validate_consumer_safety)


@dataclass
class _Safety:
    file: str
    report: Report
    settle: int
    options: TimingOptions
    header: TraceHeader
    members: dict[str, _MemberView] = field(default_factory=dict)
    processes: _Processes = field(default_factory=_Processes)
    window: _Window = field(default_factory=_Window)
    perturbation_line: int | None = None
    last_line: int = 1
    last_ts: int | None = None
    client_request_ts: dict[str, int | None] = field(default_factory=dict)
    classified: set[tuple[str, tuple[str, int]]] = field(default_factory=set)
    handovers: list[HandOver] = field(default_factory=list)
    perturbed: bool = False
    windows_checked: int = 0
    windows_unchecked: int = 0
    """Quiet windows with members in the group that were too short to be checked."""
    longest_unchecked: _Window | None = None

    def __post_init__(self) -> None:
        self.names = Names(self.header)
        self.timing = self.options.resolve(self.header)
        self.report.timing = self.timing.to_json()
        self.report.protocol = "consumer"

    # ----------------------------------------------------------------- events

    def on_event(self, n: int, ts: int | None, action: Action) -> None:
        # The convergence of the state before this event, in case it ends a quiet window.
        before, members_before = self._before(self._long_enough(self.window))
        self.perturbed = bool(action.PERTURBATION)
        self._implied_expiries(ts)
        self._apply(n, ts, action)
        self.report.events += 1
        if self.perturbed:
            self._close_window(before, members_before)
            self.perturbation_line = n
            self.window = _Window()
        else:
            self.window.add(n, ts)
        self.last_line = n
        if ts is not None:
            self.last_ts = ts
            if self.report.timing is not None:
                self.report.timing["timestamps"] = True

    def _implied_expiries(self, ts: int | None) -> None:
        """With the session timeout known, a member with no heartbeat for longer than it
        (and the clock tolerance) by ``ts`` has been removed by the coordinator: an expiry,
        which the trace does not show but the time does."""
        if ts is None or not self.timing.known:
            return
        assert self.timing.session_timeout_ms is not None
        limit = self.timing.session_timeout_ms + self.timing.tolerance_ms
        for view in self.members.values():
            if (
                view.in_group()
                and view.last_heartbeat_ts is not None
                and ts > view.last_heartbeat_ts + limit
            ):
                view.expired, view.epoch = True, None
                self.perturbed = True

    def _apply(self, n: int, ts: int | None, action: Action) -> None:
        members, processes = self.members, self.processes
        if not isinstance(action, DeliverMessage):
            if isinstance(action, _PROCESS_EVENTS):
                processes.on_event(action)
                if isinstance(action, _STOPS_CONSUMING):
                    died = not isinstance(action, ReleaseAssignment)
                    _on_stopped_consuming(action.client, members, died)
            elif isinstance(action, _EXPIRIES):
                _on_expiry(action.member_id, members)
                self.perturbed = True
            return
        message = action.message
        body = message.body
        process = processes.of(message.client)
        if isinstance(body, ConsumerGroupHeartbeatRequest):
            self.client_request_ts[message.client] = ts
            if body.member_epoch <= 0:  # a join or a leave
                self.perturbed = True
            if process.sent(message):
                self._on_request(n, ts, message.client, body)
        elif isinstance(body, ConsumerGroupHeartbeatResponse) and process.reads(message):
            if body.error_code in FENCING_ERRORS:
                self.perturbed = True
            self._on_response(n, ts, message.client, body, not process.leaving)
        elif message.to_coordinator:
            process.sent(message)  # an OffsetCommit request: it names the connection

    def _on_request(
        self, n: int, ts: int | None, client: str, req: ConsumerGroupHeartbeatRequest
    ) -> None:
        view = self.members.setdefault(req.member_id, _MemberView())
        view.client = client
        view.last_heartbeat_ts, view.last_heartbeat_line = ts, n
        if req.rebalance_timeout_ms > 0:
            view.rebalance_timeout_ms = req.rebalance_timeout_ms
        if view.fenced and req.member_epoch > 0:
            self._violation(
                n,
                FENCING_RESPECTED.name,
                f"{self._m(req.member_id)} was fenced but heartbeats with epoch "
                f"{req.member_epoch} instead of rejoining with 0",
            )
        if req.member_epoch < 0:  # leaving: it has stopped consuming
            view.reported, view.received, view.left = EMPTY, EMPTY, True
            return
        if req.member_epoch == 0:
            view.fenced = view.left = view.expired = False
            view.dead_holds = EMPTY
        if req.topic_partitions is not None:
            claimed = req.topic_partitions - view.owns()
            self._reported_clash(n, req.member_id, claimed)
            view.reported = req.topic_partitions
            view.received = EMPTY

    def _on_response(
        self,
        n: int,
        ts: int | None,
        client: str,
        resp: ConsumerGroupHeartbeatResponse,
        takes_assignment: bool,
    ) -> None:
        member_id = resp.member_id or client
        view = self.members.setdefault(member_id, _MemberView())
        if resp.error_code in FENCING_ERRORS:
            view.fenced, view.epoch = True, None
            view.reported, view.received = EMPTY, EMPTY
            self._zombie_fenced(member_id, n, ts)
            return
        if resp.error_code is not ErrorCode.NONE or resp.member_epoch < 0:
            return
        if view.epoch is not None and resp.member_epoch < view.epoch:
            self._violation(
                n,
                MEMBER_EPOCH_MONOTONE.name,
                f"{self._m(member_id)}'s epoch went from {view.epoch} to {resp.member_epoch}",
            )
        view.epoch = resp.member_epoch
        if resp.assignment is None:
            return
        if view.assignment is not None:
            started = self.client_request_ts.get(client)
            for tp in view.assignment - resp.assignment:
                if started is not None:
                    view.revoke_asked.setdefault(tp, started)
        for tp in resp.assignment:
            view.revoke_asked.pop(tp, None)
        if not takes_assignment:
            return
        self._hand_over(n, ts, member_id, resp.assignment)
        view.received = resp.assignment
        view.assignment = resp.assignment

    # ------------------------------------------------------------ ownership

    def _reported_clash(self, n: int, member_id: str, claimed: Assignment) -> None:
        """``member_id`` reports owning ``claimed``, which it was not given since: the
        first that another member may still be consuming is reported."""
        if not claimed:
            return
        for other_id, other in self.members.items():
            clash = claimed & other.owns() if other_id != member_id else EMPTY
            if clash:
                topic, index = sorted(clash)[0]
                self._violation(
                    n,
                    NO_DOUBLE_OWNERSHIP.name,
                    f"{self._m(member_id)} reports owning {self._p(topic, index)} while "
                    f"{self._m(other_id)} has not released it",
                )

    def _hand_over(self, n: int, ts: int | None, member_id: str, given: Assignment) -> None:
        """``given`` goes to ``member_id``: each partition of it another member has not
        released is a hand-over to classify (without timing: the first one of each
        owner that may still consume it is an ``Observed.NoDoubleOwnership``, as ever)."""
        for other_id, other in list(self.members.items()):
            if other_id == member_id:
                continue
            live = given & other.owns()
            dead = (given & other.dead_holds) - live
            clash = sorted(tp for tp in live | dead if (other_id, tp) not in self.classified)
            if not clash:
                continue
            unclassified_live: list[tuple[str, int]] = []
            premature: list[HandOver] = []
            for tp in clash:
                h = HandOver(
                    n,
                    self.names.partition(*tp),
                    other_id,
                    member_id,
                    ts,
                    owner_dead=tp in dead,
                    last_heartbeat_line=other.last_heartbeat_line,
                    last_heartbeat_ts=other.last_heartbeat_ts,
                )
                rebalance = self.options.rebalance_timeout_ms or other.rebalance_timeout_ms
                if rebalance is None:
                    rebalance = self.timing.rebalance_timeout_ms
                classify(h, self.timing, rebalance, other.revoke_asked.get(tp))
                self.handovers.append(h)
                if h.classification == UNCLASSIFIED:
                    if not h.owner_dead:
                        unclassified_live.append(tp)
                    continue
                self.classified.add((other_id, tp))
                if h.classification == PREMATURE:
                    premature.append(h)
                # The coordinator has removed the owner (in time or not): an expiry the
                # trace shows only through this hand-over.
                if other.in_group():
                    other.expired, other.epoch = True, None
                    self.perturbed = True
            if premature:
                self._premature(premature)
            if unclassified_live:
                topic, index = unclassified_live[0]
                self._violation(
                    n,
                    NO_DOUBLE_OWNERSHIP.name,
                    f"{self._p(topic, index)} is given to {self._m(member_id)} while "
                    f"{self._m(other_id)} has not released it",
                )

    def _premature(self, group: list[HandOver]) -> None:
        self.report.violations.append(
            premature_finding(self.file, group, self._m, self.timing.tolerance_ms)
        )

    def _zombie_fenced(self, member_id: str, n: int, ts: int | None) -> None:
        """The zombie windows of ``member_id`` close: it has learnt it was removed."""
        for h in self.handovers:
            if h.owner == member_id and h.classification == ZOMBIE and h.zombie_until_line is None:
                h.zombie_until_line, h.zombie_until_ts = n, ts

    def _m(self, member_id: str) -> str:
        return self.names.member(member_id)

    def _p(self, topic: str, index: int) -> str:
        return self.names.partition(topic, index)

    def _violation(self, n: int, name: str, message: str) -> None:
        self.report.violations.append(Finding(self.file, n, name, message))

    # ---------------------------------------------------------- convergence

    def _before(self, long_enough: bool) -> tuple[str | None, bool]:
        """Before an event: why the members have not converged (when the window is
        ``long_enough`` to ask; else None), and whether any member is in the group. One
        pass over the members in the common case — the converged group of a steady trace —
        and :meth:`_convergence` for the message otherwise."""
        epoch: int | None = None
        members = False
        for v in self.members.values():
            if v.fenced or v.left or v.expired or v.epoch is None:  # not in_group()
                continue
            if not long_enough:
                return None, True
            if members and v.epoch != epoch:
                return self._convergence(), True
            epoch, members = v.epoch, True
            if v.assignment is not None and v.reported != v.assignment:
                return self._convergence(), True
        return None, members

    def _convergence(self) -> str | None:
        """Why the members have not converged (None: they have, or there are none)."""
        live = {m: v for m, v in self.members.items() if v.in_group()}
        epochs = {v.epoch for v in live.values()}
        if len(epochs) > 1:
            return "the members are at different epochs: " + ", ".join(
                f"{self._m(m)}={v.epoch}" for m, v in sorted(live.items())
            )
        for m, v in sorted(live.items()):
            if v.assignment is not None and v.reported != v.assignment:
                return f"{self._m(m)} has not acknowledged its assignment"
        return None

    def _long_enough(self, w: _Window) -> bool:
        """Whether the quiet window ``w`` is long enough to require convergence: at least
        --settle events, and (with --settle-ms) timestamps at least that far apart."""
        if w.events < self.settle:
            return False
        settle_ms = self.options.settle_ms
        return not settle_ms or (w.ms is not None and w.ms >= settle_ms)

    def _close_window(self, verdict: str | None, members: bool) -> None:
        """A perturbation ends the quiet window: with --settle events in it, the members
        must have converged by its end (``verdict``: why they had not); a shorter one with
        ``members`` in the group is counted as unchecked."""
        w = self.window
        if w.last_line is None:
            return
        if not self._long_enough(w):
            if members:
                self._unchecked(w)
            return
        self.windows_checked += 1
        self.report.windows.append(_window_json(w, verdict))
        if verdict is not None:
            self._violation(
                w.last_line,
                CONVERGENCE.name,
                f"at the end of the quiet window ({w.describe()}) {verdict}",
            )

    def _unchecked(self, w: _Window) -> None:
        self.windows_unchecked += 1
        longest = self.longest_unchecked
        if longest is None or (w.events, w.ms or 0) > (longest.events, longest.ms or 0):
            self.longest_unchecked = w

    def _asks(self) -> str:
        settle_ms = self.options.settle_ms
        asks = f"--settle asks for {self.settle}"
        if settle_ms:
            asks += f" and --settle-ms for {seconds(settle_ms)}"
        return asks

    def finish(self) -> None:
        self._implied_expiries(self.last_ts)
        self._finish_windows()
        report = self.report
        report.convergence = {
            "checked": self.windows_checked > 0 and not report.reasons,
            "windows_checked": self.windows_checked,
            "windows_unchecked": self.windows_unchecked,
            "settle": self.settle,
            "settle_ms": self.options.settle_ms,
        }
        if self.windows_checked == 0 and self.windows_unchecked and not report.reasons:
            # Members were in the group, but no quiet window was long enough to demand
            # convergence: nothing says the group ever converged.
            w = self.longest_unchecked
            assert w is not None
            report.reasons.append(
                f"{CONVERGENCE.name} not checked: no quiet window was long enough — "
                f"{self.windows_unchecked} with members in the group, the longest "
                f"{w.describe()} — and {self._asks()}"
            )
        self._report_handovers()

    def _finish_windows(self) -> None:
        report, w = self.report, self.window
        live = any(v.in_group() for v in self.members.values())
        if self._long_enough(w):
            verdict = self._convergence()
            self.windows_checked += 1
            report.windows.append(_window_json(w, verdict))
            if verdict is not None and w.last_line is not None:
                self._violation(
                    self.last_line,
                    CONVERGENCE.name,
                    f"{w.events} events after the last perturbation ({w.describe()}) {verdict}",
                )
        elif live:
            after = (
                f"follow the last perturbation (line {self.perturbation_line})"
                if self.perturbation_line is not None
                else "are in the trace"
            )
            settle_ms = self.options.settle_ms
            span = f" over {seconds(w.ms)}" if settle_ms and w.ms is not None else ""
            report.reasons.append(
                f"{CONVERGENCE.name} not checked: only {w.events} events{span} {after}, "
                f"and {self._asks()}"
            )

    def _report_handovers(self) -> None:
        report_handovers(
            self.report,
            self.file,
            self.handovers,
            self._m,
            self.timing,
            self.options.fail_on_zombie,
            NO_DOUBLE_OWNERSHIP.name,
        )


def _window_json(w: _Window, verdict: str | None) -> dict[str, object]:
    return {
        "first_line": w.first_line,
        "last_line": w.last_line,
        "events": w.events,
        "ms": w.ms,
        "converged": verdict is None,
        "why_not": verdict,
    }


def _on_stopped_consuming(client: str, members: dict[str, _MemberView], died: bool) -> None:
    """The client consumes nothing any more: its process is gone (``Crash``, or the
    ``Restart`` that replaces a closed or crashed process: ``died``), or it is leaving and
    has run its revocation callbacks (``ReleaseAssignment``; the consumer's
    ``PREPARE_LEAVING`` → ``LEAVING``), after which it takes no assignment. Its members stay
    in the group until the leave heartbeat arrives or the coordinator expires their
    sessions (KIP-848 "Session timeout"), but they no longer count for convergence. What a
    dead process held, it never released: the coordinator hands it on only once it expired
    the member (``dead_holds``)."""
    for view in members.values():
        if view.client == client:
            if died:
                view.dead_holds = view.dead_holds | view.owns()
            view.reported, view.received, view.left = EMPTY, EMPTY, True


def _on_expiry(member_id: str, members: dict[str, _MemberView]) -> None:
    """A ``SessionTimeout`` or ``RebalanceTimeout``: the coordinator removes the member
    (its epochs start again if it rejoins) and may hand its partitions on. The client does
    not know yet, so this is no fencing it must respect; and what it consumes is unchanged:
    a live client behind an expired session is a zombie, and what it still consumes counts
    (KIP-848 relies on offset-commit fencing there, not on exclusivity; docs/fidelity.md
    N4)."""
    view = members.setdefault(member_id, _MemberView())
    view.expired, view.epoch = True, None
