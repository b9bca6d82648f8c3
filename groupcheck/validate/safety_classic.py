"""Safety mode on a classic-protocol trace: what its JoinGroup, SyncGroup, Heartbeat,
LeaveGroup and OffsetCommit messages observe.

A trace whose header says ``"protocol": "classic"`` has no ConsumerGroupHeartbeat; its
members report what they still own in their JoinGroup metadata
(``ConsumerProtocolSubscription.OwnedPartitions``, KIP-429) and are given partitions in
SyncGroup responses. Read in the order the coordinator processed them, these messages
tell what each client process may be consuming:

* a successful SyncGroup response it reads: exactly its assignment — under EAGER it
  revoked everything before joining, under COOPERATIVE it revokes what it owned and was
  not given, then takes the rest (``ConsumerCoordinator.onJoinComplete``) — unless the
  assignment names a topic it does not subscribe to, which it does not take (it rejoins);
* a JoinGroup request it sends: what it reports in ``OwnedPartitions`` — an EAGER member
  (and byte code without KIP-429, which knows only EAGER) reports none, having revoked
  everything in ``onJoinPrepare``; one whose generation was reset reports none, having
  lost everything;
* a LeaveGroup request, a response with a fatal error (``FENCED_INSTANCE_ID``,
  ``INCONSISTENT_GROUP_PROTOCOL``: ``poll()`` throws and the application closes the
  consumer) and, in model traces, ``Leave``, ``Bounce``, ``Crash``, ``Restart`` and
  ``StallAssignment`` (a hung application consumes nothing): nothing.

A live process behind a member the coordinator removed (``SessionTimeout``,
``RebalanceTimeout``) still counts as consuming — a zombie, which Kafka fences at its
offset commits (``ClassicGroup.validateOffsetCommit``), not by exclusivity. Responses are
read only by the live process of the incarnation, on the connection, they were sent to
(``groupcheck.validate.safety._Processes``).

The checks (:data:`CLASSIC_OBSERVED_CHECKS`, ``docs/trace-format.md``) are named
``Observed.*`` like those of the consumer protocol's safety mode: they read messages, not
the coordinator's state the model's properties of similar name read. A trace that starts
from a group already formed (the model's ``warm_start`` presets, a capture started late)
tells nothing of what its members owned before their first message, so nothing is checked
against it; an offset commit of a member whose JoinGroup response the trace does not show
is not checked, and a note says how many were not.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from groupcheck.families import CHECK_WORDING, SAFETY
from groupcheck.validate.report import Finding, Report
from groupcheck.validate.safety import Names, ObservedCheck, _Processes, trace_events
from groupcheck.validate.timing import (
    PREMATURE,
    UNCLASSIFIED,
    ZOMBIE,
    HandOver,
    Timing,
    TimingOptions,
    classify,
    premature_finding,
    report_handovers,
)
from model.actions import (
    AbandonRequest,
    Bounce,
    ChangeSubscription,
    Crash,
    DeliverMessage,
    Leave,
    LoseMessage,
    RebalanceTimeout,
    RequestTimeout,
    Restart,
    SessionTimeout,
    StallAssignment,
)
from model.classic.client import CLASSIC_FATAL_ERRORS
from model.classic.messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from model.ids import EMPTY, Assignment
from model.records import Message, OffsetCommitRequest, OffsetCommitResponse
from model.status import ErrorCode
from model.trace import TraceError
from model.trace.codec import TraceHeader
from reports.escape import shown

CLASSIC_NO_DOUBLE_OWNERSHIP = ObservedCheck(
    "Observed.NoDoubleOwnership",
    "No partition is given to a member in a SyncGroup response while another client may "
    "still be consuming it: it was given that partition earlier and has not rejoined since "
    "(an EAGER member), or its JoinGroup of the current rebalance still reported it in "
    "OwnedPartitions (a COOPERATIVE member), whether or not it has read its own SyncGroup "
    "response of that generation (the partition moved within one rebalance).",
    "KIP-429 Rebalance Protocol (revoke before the partition moves); "
    "ConsumerCoordinator.onJoinPrepare, ConsumerCoordinator.onJoinComplete",
    "NoDoubleClientOwnership",
)
GENERATION_MONOTONE = ObservedCheck(
    "Observed.GenerationMonotone",
    "The generation id in the successful JoinGroup responses a member reads never decreases.",
    "ClassicGroup.initNextGeneration; JoinGroupResponse.GenerationId",
    "GenerationMonotone",
)
COMMIT_FENCED = ObservedCheck(
    "Observed.CommitFenced",
    "An offset commit is accepted (ErrorCode 0) only from a member of the group at the "
    "generation it last got in a JoinGroup response: the commit of a member the "
    "coordinator removed (a timer, a LeaveGroup) and that has not joined since, or of a "
    "stale generation, is refused.",
    "ClassicGroup.validateOffsetCommit (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID)",
    "OffsetCommitAtValidEpoch",
)
CLASSIC_OBSERVED_CHECKS = (CLASSIC_NO_DOUBLE_OWNERSHIP, GENERATION_MONOTONE, COMMIT_FENCED)
"""Every check of safety mode on a classic trace."""

CHECK_WORDING.register(
    "classic", {c.name: (c.description, c.reference) for c in CLASSIC_OBSERVED_CHECKS}
)

_STOPS_CONSUMING = (Leave, Bounce, Crash, Restart, StallAssignment)


@dataclass
class _ClientView:
    """What the trace tells of one client (its live process)."""

    member_id: str | None = None
    """The member id it last used or was given."""
    consumes: Assignment = EMPTY
    """What it may be consuming."""
    why: str = ""
    """How the trace shows it may consume ``consumes``: a line and what happened there."""
    topics: frozenset[str] | None = None
    """Its subscription, as its last JoinGroup (or ``ChangeSubscription``) told."""
    generation: int | None = None
    """The generation of the last successful JoinGroup response it read."""
    stalled: bool = False
    """Its application hangs (``StallAssignment``): it consumes and takes nothing until a
    new process replaces it."""
    dead_holds: Assignment = EMPTY
    """What it may have been consuming when its process died (``Crash``, ``Restart``)."""
    last_heartbeat_ts: int | None = None
    """When its last Heartbeat, JoinGroup or SyncGroup request was seen (each resets the
    session timer: ``GroupCoordinator.completeAndScheduleNextHeartbeatExpiration``)."""
    last_heartbeat_line: int | None = None
    join_line: int | None = None  # its last JoinGroup request
    session_timeout_ms: int | None = None  # its JoinGroup's SessionTimeoutMs
    rebalance_timeout_ms: int | None = None  # its JoinGroup's RebalanceTimeoutMs
    join_sent_ts: int | None = None  # its last JoinGroup request
    join_owned: Assignment = EMPTY
    """What its last JoinGroup request reported in ``OwnedPartitions``."""
    join_generation: int | None = None
    """The generation its last JoinGroup request joined (its response's), while the
    process that sent it runs: its ``join_owned`` is what the leader's assignor saw owned
    in that rebalance."""
    joined_ts: int | None = None
    """When it sent the JoinGroup its generation came from: the next rebalance, which may
    remove it when it does not rejoin within its rebalance timeout, started later."""


@dataclass
class _PendingCommit:
    """An OffsetCommit request the coordinator processed, waiting for its response."""

    line: int
    member_id: str
    generation: int
    expected: int | None
    """The member's generation from its last JoinGroup response then (None: unknown)."""
    removed: int | None
    """The line where the coordinator removed the member, if it had then (and the member
    has not joined since)."""


@dataclass
class _ClassicSafety:
    """The state of one pass over a classic trace."""

    file: str
    report: Report
    processes: _Processes = field(default_factory=_Processes)
    clients: dict[str, _ClientView] = field(default_factory=dict)
    generations: dict[str, int] = field(default_factory=dict)
    """Per member id, the generation of the last successful JoinGroup response read."""
    removed: dict[str, int] = field(default_factory=dict)
    """Member ids the coordinator removed (a session or rebalance timer, a LeaveGroup) and
    which have not joined again since, with the line where it happened."""
    commits: dict[tuple[str, int, int], deque[_PendingCommit]] = field(default_factory=dict)
    """Per connection (client, incarnation, connection), its OffsetCommit requests the
    coordinator processed, oldest first: a connection answers them in order."""
    unchecked_commits: int = 0
    options: TimingOptions = field(default_factory=TimingOptions)
    timing: Timing = field(default_factory=Timing)
    names: Names | None = None
    handovers: list[HandOver] = field(default_factory=list)
    classified: set[tuple[str, tuple[str, int]]] = field(default_factory=set)

    def client(self, name: str) -> _ClientView:
        view = self.clients.get(name)
        if view is None:
            view = self.clients[name] = _ClientView()
        return view

    def stop(self, name: str) -> None:
        """The client consumes nothing (until it is given partitions again)."""
        view = self.client(name)
        view.consumes, view.why = EMPTY, ""
        view.join_owned, view.join_generation = EMPTY, None

    def on_event(self, n: int, action: object) -> None:
        """A non-message event of a model trace."""
        if isinstance(action, SessionTimeout | RebalanceTimeout):
            self.removed[action.member_id] = n
        if isinstance(action, Crash | Restart | RequestTimeout | AbandonRequest):
            self.processes.on_event(action)
        if isinstance(action, Crash | Restart):
            view = self.client(action.client)
            view.dead_holds = view.dead_holds | view.consumes
        if isinstance(action, _STOPS_CONSUMING):
            self.stop(action.client)
            view = self.client(action.client)
            view.stalled = isinstance(action, StallAssignment)
        if isinstance(action, Leave | Bounce):
            # close(): the connection is dropped (responses to it are read by nobody);
            # a bounce starts the next process.
            p = self.processes.of(action.client)
            p.connection += 1
            if isinstance(action, Bounce):
                p.alive, p.incarnation = True, p.incarnation + 1
        if isinstance(action, ChangeSubscription):
            self.client(action.client).topics = frozenset(action.topics)
        if isinstance(action, LoseMessage) and isinstance(
            action.message.body, OffsetCommitResponse
        ):
            queue = self.pending(action.message)
            if queue:  # the response to its oldest commit is lost
                queue.popleft()

    def pending(self, m: Message) -> deque[_PendingCommit]:
        key = (m.client, m.incarnation, m.connection)
        queue = self.commits.get(key)
        if queue is None:
            queue = self.commits[key] = deque()
        return queue

    def on_request(self, n: int, m: Message, ts: int | None = None) -> None:
        body = m.body
        process = self.processes.of(m.client)
        # Sent by the running process on its current connection: a request from a process
        # that is gone, or from before the connection was closed (a request timeout, a
        # leave), says nothing of what the client consumes now.
        current = process.sent(m) and m.connection == process.connection
        if isinstance(body, OffsetCommitRequest):
            member = body.member_id
            commit = _PendingCommit(
                n,
                member,
                body.generation_id_or_member_epoch,
                self.generations.get(member),
                self.removed.get(member),
            )
            self.pending(m).append(commit)
            return
        if isinstance(body, LeaveGroupRequest) and body.instance_id is None:
            # A dynamic member leaves (a static one named with another member id would be
            # fenced instead: FENCED_INSTANCE_ID).
            self.removed[body.member_id] = n
        if not current:
            return
        view = self.client(m.client)
        if isinstance(body, JoinGroupRequest | SyncGroupRequest | HeartbeatRequest):
            view.last_heartbeat_ts, view.last_heartbeat_line = ts, n
        if isinstance(body, JoinGroupRequest):
            view.session_timeout_ms = body.session_timeout_ms
            view.rebalance_timeout_ms = body.rebalance_timeout_ms
            view.join_sent_ts = ts
            view.dead_holds = EMPTY
            sub = body.subscription
            view.member_id = body.member_id or view.member_id
            view.topics = sub.topics
            view.consumes = sub.owned_partitions
            view.why = f"its JoinGroup at line {n} reported owning it"
            view.join_owned, view.join_generation = sub.owned_partitions, None
            view.join_line = n
        elif isinstance(body, LeaveGroupRequest):
            view.consumes, view.why = EMPTY, ""
            view.join_owned, view.join_generation = EMPTY, None

    def on_response(self, n: int, m: Message, ts: int | None = None) -> None:
        body = m.body
        if isinstance(body, OffsetCommitResponse):
            queue = self.pending(m)
            if queue:
                self.check_commit(n, queue.popleft(), body)
            return
        process = self.processes.of(m.client)
        if not process.reads(m):
            return
        view = self.client(m.client)
        assert isinstance(
            body, JoinGroupResponse | SyncGroupResponse | HeartbeatResponse | LeaveGroupResponse
        ), type(body)
        error = body.error_code
        if error in CLASSIC_FATAL_ERRORS:
            self.stop(m.client)  # poll() throws: the application closes the consumer
            process.connection += 1
            return
        if error is ErrorCode.UNKNOWN_MEMBER_ID or error is ErrorCode.ILLEGAL_GENERATION:
            self.zombie_fenced(m.client, n, ts)
        if error is not ErrorCode.NONE:
            return
        if isinstance(body, JoinGroupResponse):
            self.check_generation(n, body)
            self.removed.pop(body.member_id, None)
            view.member_id, view.generation = body.member_id, body.generation_id
            view.joined_ts = view.join_sent_ts
            view.join_generation = body.generation_id
        elif isinstance(body, SyncGroupResponse) and not view.stalled:
            assigned = body.assignment
            if view.topics is not None and any(t not in view.topics for t, _ in assigned):
                return  # an assignment of topics it does not subscribe to: it rejoins
            self.check_hand_out(n, m.client, view, assigned, ts)
            generation = "?" if view.generation is None else str(view.generation)
            view.consumes = assigned
            view.why = f"it was given it at line {n} (generation {generation})"

    def check_hand_out(
        self, n: int, client: str, view: _ClientView, assigned: Assignment, ts: int | None
    ) -> None:
        """:data:`CLASSIC_NO_DOUBLE_OWNERSHIP` for ``assigned`` given to ``client``; a
        partition of an owner outside the new generation (it has not joined it: the
        coordinator removed it) is a hand-over to classify by its timing instead."""
        for other_name, other in sorted(self.clients.items()):
            if other_name == client:
                continue
            live = assigned & other.consumes
            # A partition its JoinGroup of this rebalance reported owning: it revokes it
            # when it reads its own SyncGroup response of this generation, which the
            # coordinator sent with this one — in whichever order the two were read, the
            # partition moved within one rebalance (KIP-429: it must be revoked first).
            moved = EMPTY
            if view.generation is not None and other.join_generation == view.generation:
                moved = (assigned & other.join_owned) - live
            dead = (assigned & other.dead_holds) - live - moved
            removed = view.generation is not None and (
                other.generation is None or other.generation < view.generation
            )
            clash = live | moved
            if removed:
                classify_now = sorted(
                    tp for tp in live | dead if (other_name, tp) not in self.classified
                )
                clash = self.classify(n, ts, client, other_name, other, classify_now, dead)
            if not clash:
                continue
            topic, index = sorted(clash)[0]
            member = self.name(client)
            owner = self.name(other_name)
            why = other.why
            if (topic, index) not in live:
                why = (
                    f"its JoinGroup at line {other.join_line} of this rebalance (generation "
                    f"{view.generation}) reported owning it"
                )
            self.report.violations.append(
                Finding(
                    self.file,
                    n,
                    CLASSIC_NO_DOUBLE_OWNERSHIP.name,
                    f"{self.part(topic, index)} is given to {member} while {owner} may still "
                    f"be consuming it ({why})",
                )
            )

    def classify(
        self,
        n: int,
        ts: int | None,
        to: str,
        owner: str,
        other: _ClientView,
        parts: list[tuple[str, int]],
        dead: Assignment,
    ) -> Assignment:
        """Classify the hand-overs of ``parts`` from ``owner`` to ``to``; the live ones
        that could not be classified are returned (reported as before)."""
        unclassified: set[tuple[str, int]] = set()
        premature: list[HandOver] = []
        for tp in parts:
            h = HandOver(
                n,
                self.part(*tp),
                owner,
                to,
                ts,
                owner_dead=tp in dead,
                last_heartbeat_line=other.last_heartbeat_line,
                last_heartbeat_ts=other.last_heartbeat_ts,
            )
            o = self.options
            session = o.session_timeout_ms or other.session_timeout_ms
            rebalance = o.rebalance_timeout_ms or other.rebalance_timeout_ms
            if rebalance is None:
                rebalance = self.timing.rebalance_timeout_ms
            classify(h, self.timing, rebalance, other.joined_ts, session)
            self.handovers.append(h)
            if h.classification == UNCLASSIFIED:
                if not h.owner_dead:
                    unclassified.add(tp)
                continue
            self.classified.add((owner, tp))
            if h.classification == PREMATURE:
                premature.append(h)
        if premature:
            self.report.violations.append(
                premature_finding(self.file, premature, self.name, self.timing.tolerance_ms)
            )
        return frozenset(unclassified)

    def zombie_fenced(self, client: str, n: int, ts: int | None) -> None:
        """The zombie windows of ``client`` close: the coordinator told it it was removed."""
        for h in self.handovers:
            if h.owner == client and h.classification == ZOMBIE and h.zombie_until_line is None:
                h.zombie_until_line, h.zombie_until_ts = n, ts

    def name(self, client: str) -> str:
        """How messages name a client: its client.id (a capture's header), else its
        member id, else the trace's name for it."""
        view = self.clients.get(client)
        member = (view.member_id if view is not None else None) or client
        if self.names is not None and client in self.names.clients:
            return self.names.member(client)
        return shown(member)

    def part(self, topic: str, index: int) -> str:
        return f"{shown(topic)}-{index}"

    def check_generation(self, n: int, body: JoinGroupResponse) -> None:
        """:data:`GENERATION_MONOTONE` for a successful JoinGroup response."""
        member = body.member_id
        before = self.generations.get(member)
        if before is not None and body.generation_id < before:
            self.report.violations.append(
                Finding(
                    self.file,
                    n,
                    GENERATION_MONOTONE.name,
                    f"{shown(member)}'s generation went from {before} to {body.generation_id}",
                )
            )
        self.generations[member] = body.generation_id

    def check_commit(self, n: int, commit: _PendingCommit, body: OffsetCommitResponse) -> None:
        """:data:`COMMIT_FENCED` for the response to ``commit``."""
        if body.error_code is not ErrorCode.NONE:
            return
        if commit.removed is not None:
            self.report.violations.append(
                Finding(
                    self.file,
                    n,
                    COMMIT_FENCED.name,
                    f"an offset commit of {shown(commit.member_id)} (line {commit.line}) is "
                    f"accepted, but the coordinator removed the member at line "
                    f"{commit.removed} and it has not joined since",
                )
            )
            return
        if commit.expected is None:
            self.unchecked_commits += 1
            return
        if commit.generation != commit.expected:
            self.report.violations.append(
                Finding(
                    self.file,
                    n,
                    COMMIT_FENCED.name,
                    f"an offset commit of {shown(commit.member_id)} at generation "
                    f"{commit.generation} (line {commit.line}) is accepted, but its last "
                    f"JoinGroup response gave it generation {commit.expected}",
                )
            )


def validate_classic_safety(
    file: str, header: TraceHeader, lines: Iterator[str], timing: TimingOptions | None = None
) -> Report:
    """Check the :data:`CLASSIC_OBSERVED_CHECKS` on the events of a classic trace whose
    header (line 1) has been read (``lines`` goes on from line 2); with timing, classify
    the hand-overs of partitions of members the coordinator removed."""
    report = Report(file, "safety")
    options = timing or TimingOptions()
    run = _ClassicSafety(
        file, report, options=options, timing=options.resolve(header), names=Names(header)
    )
    report.timing = run.timing.to_json()
    report.protocol = "classic"
    try:
        for n, ts, action in trace_events(lines, header):
            report.events += 1
            if ts is not None:
                report.timing["timestamps"] = True
            if not isinstance(action, DeliverMessage):
                run.on_event(n, action)
            elif action.message.to_coordinator:
                run.on_request(n, action.message, ts)
            else:
                run.on_response(n, action.message, ts)
    except TraceError as e:
        report.error = f"{file}:{e}"
        return report
    report_handovers(
        report,
        file,
        run.handovers,
        run.name,
        run.timing,
        options.fail_on_zombie,
        CLASSIC_NO_DOUBLE_OWNERSHIP.name,
    )
    if run.unchecked_commits:
        report.notes.append(
            f"{file}: {COMMIT_FENCED.name}: {run.unchecked_commits} accepted offset commit(s) "
            "of members whose JoinGroup response the trace does not show were not checked"
        )
    return report


def _classic_safety(
    file: str, header: TraceHeader, lines: Iterator[str], settle: int, timing: TimingOptions | None
) -> Report:
    """``groupcheck.families.SAFETY``'s check of a classic trace (it settles nothing)."""
    return validate_classic_safety(file, header, lines, timing)


SAFETY.register("classic", _classic_safety)
