"""Validate traces of other implementations (or of the model) against the reference.

Two modes, both streaming (one pass, memory independent of trace length):

* **conformance** replays the trace against the model: every event must be an action the
  model has enabled at that point — a delivered response must be exactly the response the
  model's coordinator produced — and every property must hold. The first divergent event
  is reported with the actions the model had enabled there.
* **safety** is for implementations with other assignors or partial logs. From requests
  (what a member reports owning) and responses (what the coordinator assigns) it tracks
  what each member may be consuming and checks: no partition owned by two members at once,
  member epochs monotone except through fencing, fencing respected (a fenced member's
  next heartbeat rejoins with epoch 0 or leaves), and convergence: when the trace goes on
  for at least ``settle`` events after the last perturbation (a join, a leave, a fencing),
  every member still in the group ends at one member epoch having acknowledged exactly
  its last assignment. A shorter tail is reported as inconclusive, not as passing.
  Process events, when a trace has them (the model's traces do: ``Crash``, ``Restart``,
  ``RequestTimeout``, ``ReleaseAssignment``, ``SessionTimeout`` …), say which responses a
  live process read and when a client stopped consuming; a wire capture has none, so a
  client that dies silently still counts as consuming (docs/capture.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from invariants.check import Checker
from model import system
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
from model.config import Config
from model.ids import EMPTY, Assignment
from model.presets import PRESETS
from model.records import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    Message,
)
from model.status import FENCING_ERRORS, ErrorCode
from model.trace import TraceError, decode_action, parse_event, parse_header
from reports.casestudy import describe_action

MODES = ("conformance", "safety")


@dataclass(frozen=True)
class Finding:
    """A violation at a line of a trace file."""

    file: str
    line: int
    property: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "property": self.property,
            "message": self.message,
        }


@dataclass
class Report:
    """The outcome for one file: events read, violations, or a malformed-input error."""

    file: str
    mode: str
    events: int = 0
    violations: list[Finding] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def result(self) -> str:
        if self.error is not None:
            return "malformed"
        return "violations" if self.violations else "valid"


def _config_for(header_config: str | None, topics: dict[str, int]) -> Config:
    """The reference config a trace names: a preset, or a mutant scenario (``SCENARIO`` or
    ``SCENARIO+mutant``) with the *default* rules — so replaying a mutant's trace shows
    where that implementation departs from the reference."""
    from groupcheck.mutants import MUTANTS

    name = (header_config or "").split("+")[0]
    candidates = [PRESETS.get(name.upper())]
    candidates += [m.config for m in MUTANTS.values() if m.config.name == name]
    for config in candidates:
        if config is not None and dict(config.topics) == topics:
            return config
    raise TraceError(
        1,
        1,
        f"conformance needs the model config: the header names {header_config!r}, "
        f"which is no preset or mutant scenario with topics {topics}",
    )


def validate_conformance(
    file: str,
    lines: Iterable[str],
    config: Config | None = None,
    on_step: Callable[[Action], None] | None = None,
) -> Report:
    """Replay ``lines`` against the model (see the module docstring). ``on_step`` is called
    with every action the replay took, in order — the path the trace describes — without
    the validator keeping them."""
    report = Report(file, "conformance")
    it = iter(lines)
    try:
        first = next(it, None)
        if first is None:
            raise TraceError(1, 1, "empty trace: no header line")
        header = parse_header(first)
        config = config or _config_for(header.config, dict(header.topics))
        checker = Checker()
        state = system.initial(config)
        for n, line in enumerate(it, 2):
            if not line.strip():
                continue
            event = parse_event(line, n)
            action = decode_action(event, line, n)
            report.events += 1
            enabled = system.enabled(state, config)
            if action not in enabled:
                shown = "; ".join(describe_action(a) for a in enabled[:8])
                more = f" (+{len(enabled) - 8} more)" if len(enabled) > 8 else ""
                report.violations.append(
                    Finding(
                        file,
                        n,
                        "Conformance",
                        f"{describe_action(action)} is not what the model does here; "
                        f"enabled: {shown}{more}",
                    )
                )
                return report
            new = system.step(state, action, config)
            if on_step is not None:
                on_step(action)
            for v in checker.check_step(state, action, new) + checker.check_state(new):
                report.violations.append(Finding(file, n, v.property, v.message))
            state = new
    except TraceError as e:
        report.error = f"{file}:{e.line}:{e.column}: {e.reason}"
    return report


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
    """Check the safety properties and convergence on a (possibly partial) trace."""
    report = Report(file, "safety")
    members: dict[str, _MemberView] = {}
    processes = _Processes()
    last_perturbation = 0
    last_line = 1
    it = iter(lines)
    try:
        first = next(it, None)
        if first is None:
            raise TraceError(1, 1, "empty trace: no header line")
        parse_header(first)
        for n, line in enumerate(it, 2):
            if not line.strip():
                continue
            event = parse_event(line, n)
            action = decode_action(event, line, n)
            report.events += 1
            last_line = n
            if action.PERTURBATION:
                last_perturbation = report.events
            if not isinstance(action, DeliverMessage):
                if isinstance(action, _PROCESS_EVENTS):
                    processes.on_event(action)
                    if isinstance(action, _STOPS_CONSUMING):
                        _on_stopped_consuming(action.client, members)
                elif isinstance(action, _EXPIRIES):
                    _on_expiry(action.member_id, members)
                    last_perturbation = report.events
                continue
            message = action.message
            body = message.body
            process = processes.of(message.client)
            if isinstance(body, ConsumerGroupHeartbeatRequest):
                if body.member_epoch <= 0:
                    last_perturbation = report.events  # a join or a leave
                if process.sent(message):
                    _on_request(file, n, message.client, body, members, report)
            elif isinstance(body, ConsumerGroupHeartbeatResponse) and process.reads(message):
                if body.error_code in FENCING_ERRORS:
                    last_perturbation = report.events
                takes = not process.leaving
                _on_response(file, n, message.client, body, takes, members, report)
            elif message.to_coordinator:
                process.sent(message)  # an OffsetCommit request: it names the connection
    except TraceError as e:
        report.error = f"{file}:{e.line}:{e.column}: {e.reason}"
        return report
    _check_convergence(file, last_line, report, members, report.events - last_perturbation, settle)
    return report


def _check_convergence(
    file: str, line: int, report: Report, members: dict[str, _MemberView], quiet: int, settle: int
) -> None:
    live = {
        m: v
        for m, v in members.items()
        if not (v.fenced or v.left or v.expired) and v.epoch is not None
    }
    if not live:
        return
    if quiet < settle:
        report.notes.append(
            f"{file}: convergence inconclusive: only {quiet} events after the last "
            f"perturbation (need {settle})"
        )
        return
    epochs = {v.epoch for v in live.values()}
    if len(epochs) > 1:
        report.violations.append(
            Finding(
                file,
                line,
                "Convergence",
                f"{quiet} events after the last perturbation the members are at different "
                f"epochs: " + ", ".join(f"{m}={v.epoch}" for m, v in sorted(live.items())),
            )
        )
        return
    for m, v in sorted(live.items()):
        if v.assignment is not None and v.reported != v.assignment:
            report.violations.append(
                Finding(
                    file,
                    line,
                    "Convergence",
                    f"{quiet} events after the last perturbation {m} has not acknowledged its "
                    f"assignment",
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
                "FencingRespected",
                f"{req.member_id} was fenced but heartbeats with epoch {req.member_epoch} "
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
            what = (
                f"{topic}-{index} is given to {member_id}"
                if given
                else f"{member_id} reports owning {topic}-{index}"
            )
            report.violations.append(
                Finding(
                    file,
                    n,
                    "NoDoubleClientOwnership",
                    f"{what} while {other_id} has not released it",
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
                "MemberEpochMonotone",
                f"{member_id}'s epoch went from {view.epoch} to {resp.member_epoch}",
            )
        )
    view.epoch = resp.member_epoch
    if resp.assignment is None or not takes_assignment:
        return
    _double_ownership(file, n, member_id, resp.assignment, True, members, report)
    view.received = resp.assignment
    view.assignment = resp.assignment


def validate_itf(file: str, doc: object) -> Report:
    """Check an ITF state sequence (``invariants.itf``): every state property on every state,
    every step property on every pair of consecutive states. ``line`` is the state index."""
    from invariants.expr import StepSnapshot
    from invariants.itf import ItfError, from_itf
    from invariants.properties import STATE_PROPERTIES, STEP_PROPERTIES

    report = Report(file, "itf")
    try:
        if not isinstance(doc, dict):
            raise ItfError("not an ITF trace: expected a JSON object")
        snaps = from_itf(doc)
    except ItfError as e:
        report.error = f"{file}: {e}"
        return report
    for i, snap in enumerate(snaps):
        report.events += 1
        for prop in STATE_PROPERTIES:
            if not prop.holds(snap):
                report.violations.append(Finding(file, i, prop.name, prop.explain(snap)))
        if i:
            step = StepSnapshot(snaps[i - 1], snap)
            for prop in STEP_PROPERTIES:
                if not prop.holds(step):
                    report.violations.append(Finding(file, i, prop.name, prop.explain(step)))
    return report


def utf8_error(name: str) -> TraceError | None:
    """Where a file is not UTF-8: the first undecodable line, with the byte column."""
    with open(name, "rb") as binary:
        for n, raw in enumerate(binary, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                return TraceError(n, e.start + 1, f"not UTF-8: {e.reason}")
    return None


def validate_file(name: str, mode: str, settle: int = 100, fmt: str = "auto") -> Report:
    """Validate one trace file as ``groupcheck validate`` does: ITF for ``fmt == "itf"``
    (or ``"auto"`` and a name ending ``.itf.json``), else the NDJSON trace format in
    ``mode``. An unreadable or malformed file — or a validator failure — gives a report
    with ``error`` set, never an exception."""
    itf = fmt == "itf" or (fmt == "auto" and name.endswith(".itf.json"))
    try:
        if itf:
            with open(name, encoding="utf-8", errors="strict") as f:
                try:
                    doc = json.load(f)
                except json.JSONDecodeError as e:
                    return Report(name, "itf", error=f"{name}:{e.lineno}:{e.colno}: {e.msg}")
            return validate_itf(name, doc)
        # Lines keep their line break: the trace reader allows white space around an event.
        with open(name, encoding="utf-8", errors="strict") as lines:
            if mode == "conformance":
                return validate_conformance(name, lines)
            return validate_safety(name, lines, settle=settle)
    except UnicodeDecodeError as e:
        # Decoding runs ahead of the lines read, so find the line and column anew.
        where = utf8_error(name)
        if where is None:
            return Report(name, mode, error=f"{name}: not UTF-8 ({e.reason})")
        return Report(name, mode, error=f"{name}:{where.line}:{where.column}: {where.reason}")
    except OSError as e:
        return Report(name, mode, error=f"{name}: {e.strerror or e}")
    except Exception as e:  # one file's validator failure is reported for that file only
        return Report(name, mode, error=f"{name}: validator failed: {type(e).__name__}: {e}")
