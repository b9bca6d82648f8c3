"""Safety mode: what a (possibly partial) trace of another implementation shows.

A trace of the classic protocol (header ``"protocol": "classic"``) is checked by
``groupcheck.validate.safety_classic`` instead; this module reads the consumer
protocol's ConsumerGroupHeartbeat messages.

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

Convergence needs a quiet tail: when fewer than ``settle`` events follow the last
perturbation, it is not checked and the result is *inconclusive*, not ok.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from groupcheck.validate.report import Finding, Report
from model.actions import (
    AbandonRequest,
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
from model.trace import TraceError, decode_action, parse_event, parse_header
from reports.render.escape import shown


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
    "When at least --settle events follow the last perturbation (a join, a leave, a "
    "fencing, an expiry), every member still in the group is at one member epoch and has "
    "acknowledged (reported owning) exactly its last assignment.",
    "KIP-848 Rebalance Process (members converge to the target assignment)",
    "Convergence",
)
OBSERVED_CHECKS = (NO_DOUBLE_OWNERSHIP, MEMBER_EPOCH_MONOTONE, FENCING_RESPECTED, CONVERGENCE)
"""Every check of safety mode."""


def observed_text(name: str | None) -> tuple[str, str]:
    """(description, reference) of the safety-mode check called ``name``, else empty (the
    consumer protocol's first; then those of classic traces, ``safety_classic``)."""
    from groupcheck.validate.safety_classic import CLASSIC_OBSERVED_CHECKS

    for check in (*OBSERVED_CHECKS, *CLASSIC_OBSERVED_CHECKS):
        if check.name == name:
            return check.description, check.reference
    return "", ""


@dataclass
class _Process:
    """What a trace tells of one client process (mirroring ``model.client.Client``)."""

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
    """Which client process and connection read the responses, mirroring ``model.system``:
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

    def owns(self) -> Assignment:
        """What the member may be consuming: what it last reported, plus what it was
        given since (it may have started on it)."""
        return self.reported | self.received


def validate_safety(file: str, lines: Iterable[str], settle: int = 100) -> Report:
    """Check the :data:`OBSERVED_CHECKS` on a (possibly partial) trace."""
    report = Report(file, "safety")
    members: dict[str, _MemberView] = {}
    processes = _Processes()
    last_perturbation = 0
    last_line = 1
    perturbation_line: int | None = None
    it = iter(lines)
    try:
        first = next(it, None)
        if first is None:
            raise TraceError(1, 1, "empty trace: no header line")
        header = parse_header(first)
        if header.protocol == "classic":
            from groupcheck.validate.safety_classic import validate_classic_safety

            return validate_classic_safety(file, header, it)
        for n, line in enumerate(it, 2):
            if not line.strip():
                continue
            event = parse_event(line, n)
            action = decode_action(event, line, n, header)
            report.events += 1
            last_line = n
            if action.PERTURBATION:
                last_perturbation, perturbation_line = report.events, n
            if not isinstance(action, DeliverMessage):
                if isinstance(action, _PROCESS_EVENTS):
                    processes.on_event(action)
                    if isinstance(action, _STOPS_CONSUMING):
                        _on_stopped_consuming(action.client, members)
                elif isinstance(action, _EXPIRIES):
                    _on_expiry(action.member_id, members)
                    last_perturbation, perturbation_line = report.events, n
                continue
            message = action.message
            body = message.body
            process = processes.of(message.client)
            if isinstance(body, ConsumerGroupHeartbeatRequest):
                if body.member_epoch <= 0:  # a join or a leave
                    last_perturbation, perturbation_line = report.events, n
                if process.sent(message):
                    _on_request(file, n, message.client, body, members, report)
            elif isinstance(body, ConsumerGroupHeartbeatResponse) and process.reads(message):
                if body.error_code in FENCING_ERRORS:
                    last_perturbation, perturbation_line = report.events, n
                takes = not process.leaving
                _on_response(file, n, message.client, body, takes, members, report)
            elif message.to_coordinator:
                process.sent(message)  # an OffsetCommit request: it names the connection
    except TraceError as e:
        report.error = f"{file}:{e}"
        return report
    quiet = report.events - last_perturbation
    _check_convergence(file, last_line, perturbation_line, report, members, quiet, settle)
    return report


def _check_convergence(
    file: str,
    line: int,
    perturbation_line: int | None,
    report: Report,
    members: dict[str, _MemberView],
    quiet: int,
    settle: int,
) -> None:
    live = {
        m: v
        for m, v in members.items()
        if not (v.fenced or v.left or v.expired) and v.epoch is not None
    }
    if not live:
        return
    if quiet < settle:
        after = (
            f"follow the last perturbation (line {perturbation_line})"
            if perturbation_line is not None
            else "are in the trace"
        )
        report.reasons.append(
            f"{CONVERGENCE.name} not checked: only {quiet} events {after}, and --settle "
            f"asks for {settle}"
        )
        return
    epochs = {v.epoch for v in live.values()}
    if len(epochs) > 1:
        report.violations.append(
            Finding(
                file,
                line,
                CONVERGENCE.name,
                f"{quiet} events after the last perturbation the members are at different "
                f"epochs: " + ", ".join(f"{shown(m)}={v.epoch}" for m, v in sorted(live.items())),
            )
        )
        return
    for m, v in sorted(live.items()):
        if v.assignment is not None and v.reported != v.assignment:
            report.violations.append(
                Finding(
                    file,
                    line,
                    CONVERGENCE.name,
                    f"{quiet} events after the last perturbation {shown(m)} has not "
                    "acknowledged its assignment",
                )
            )


def _on_stopped_consuming(client: str, members: dict[str, _MemberView]) -> None:
    """The client consumes nothing any more: its process is gone (``Crash``, or the
    ``Restart`` that replaces a closed or crashed process), or it is leaving and has run its
    revocation callbacks (``ReleaseAssignment``; the consumer's ``PREPARE_LEAVING`` →
    ``LEAVING``), after which it takes no assignment. Its members stay in the group until
    the leave heartbeat arrives or the coordinator expires their sessions (KIP-848
    "Session timeout"), but they no longer count for convergence."""
    for view in members.values():
        if view.client == client:
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


def _on_request(
    file: str,
    n: int,
    client: str,
    req: ConsumerGroupHeartbeatRequest,
    members: dict[str, _MemberView],
    report: Report,
) -> None:
    view = members.setdefault(req.member_id, _MemberView())
    view.client = client
    if view.fenced and req.member_epoch > 0:
        report.violations.append(
            Finding(
                file,
                n,
                FENCING_RESPECTED.name,
                f"{shown(req.member_id)} was fenced but heartbeats with epoch {req.member_epoch} "
                "instead of rejoining with 0",
            )
        )
    if req.member_epoch < 0:  # leaving: it has stopped consuming
        view.reported, view.received, view.left = EMPTY, EMPTY, True
        return
    if req.member_epoch == 0:
        view.fenced = view.left = view.expired = False
    if req.topic_partitions is not None:
        claimed = req.topic_partitions - view.owns()
        _double_ownership(file, n, req.member_id, claimed, False, members, report)
        view.reported = req.topic_partitions
        view.received = EMPTY


def _double_ownership(
    file: str,
    n: int,
    member_id: str,
    partitions: Assignment,
    given: bool,
    members: dict[str, _MemberView],
    report: Report,
) -> None:
    """Report the first of ``partitions`` that another member may still be consuming: it
    is given to ``member_id`` (``given``), or ``member_id`` reports owning it without having
    been given it since, before its owner released it."""
    if not partitions:
        return
    for other_id, other in members.items():
        if other_id == member_id:
            continue
        clash = partitions & other.owns()
        if clash:
            topic, index = sorted(clash)[0]
            member, partition = shown(member_id), f"{shown(topic)}-{index}"
            what = (
                f"{partition} is given to {member}"
                if given
                else f"{member} reports owning {partition}"
            )
            report.violations.append(
                Finding(
                    file,
                    n,
                    NO_DOUBLE_OWNERSHIP.name,
                    f"{what} while {shown(other_id)} has not released it",
                )
            )


def _on_response(
    file: str,
    n: int,
    client: str,
    resp: ConsumerGroupHeartbeatResponse,
    takes_assignment: bool,
    members: dict[str, _MemberView],
    report: Report,
) -> None:
    member_id = resp.member_id or client
    view = members.setdefault(member_id, _MemberView())
    if resp.error_code in FENCING_ERRORS:
        view.fenced, view.epoch = True, None
        view.reported, view.received = EMPTY, EMPTY
        return
    if resp.error_code is not ErrorCode.NONE or resp.member_epoch < 0:
        return
    if view.epoch is not None and resp.member_epoch < view.epoch:
        report.violations.append(
            Finding(
                file,
                n,
                MEMBER_EPOCH_MONOTONE.name,
                f"{shown(member_id)}'s epoch went from {view.epoch} to {resp.member_epoch}",
            )
        )
    view.epoch = resp.member_epoch
    if resp.assignment is None or not takes_assignment:
        return
    _double_ownership(file, n, member_id, resp.assignment, True, members, report)
    view.received = resp.assignment
    view.assignment = resp.assignment
