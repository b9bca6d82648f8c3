"""The data every picture reads: one row per step of a trace.

A model path gives full states, so ownership is what each client consumes and "pending"
is what the coordinator has pending revocation or waits to hand out. An external trace
gives only messages, so ownership is read as the safety validator reads it: a member owns
what it last reported plus what it was given since, and a partition given but not yet
reported is pending.

A heartbeat response's arrow also names what it means for the member (KIP-848 "Member
Reconciliation"): the partitions it is **revoked** — it held them and the new assignment
no longer contains them — and its **pending** partitions — in a model path the target
partitions the coordinator withholds until their previous owner releases them
(``UNRELEASED_PARTITIONS``, ``CurrentAssignmentBuilder``); in an external trace the
partitions it is given that another member still holds.

A classic group (JoinGroup / SyncGroup, ``model.classic``) has no member epochs and no
target assignment. Its rows keep, per client, the **generation** it knows (where a consumer
row keeps member epochs) and the group's generation after the step; a client consumes
what it owns unless its application hangs (``StallAssignment``), as
``invariants.classic_snapshot`` reads it. "Pending" is what a member's assignment of the
last SyncGroup phase and what its client consumes disagree on: given but not yet taken up,
or still consumed though no longer assigned. A SyncGroup response's arrow names the
partitions it revokes (the client owned them and the assignment no longer contains them,
KIP-429) and as **pending** the partitions it gives that another client still consumes. In
an external classic trace a member consumes what it reported owning in its last JoinGroup
(KIP-429 ``OwnedPartitions``; an eager member reports none, having revoked everything) and,
from its SyncGroup response on, what that assigned.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import cast

from invariants.liveness import Lasso
from model.actions import ACTIONS_BY_KIND, Action, DeliverMessage, LoseMessage
from model.classic.messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
    classic_api,
)
from model.classic.records import ClassicClient, ClassicState
from model.consumer.coordinator import pending_partitions
from model.family import family_of_state
from model.ids import EMPTY, Assignment, TopicPartition
from model.records import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    State,
)
from model.status import ErrorCode
from model.system import AnyState
from reports.escape import shown
from reports.families import RENDER, RenderFacet

COORDINATOR = "coordinator"


@dataclass(frozen=True)
class Row:
    """One step: where it happens, what it says, and who owns what after it."""

    index: int  # 1-based step number
    line: int | None  # line of the trace file, when read from one
    kind: str
    source: str  # lane the step starts on
    target: str  # lane it ends on (== source for a local step)
    label: str
    lost: bool
    owners: dict[TopicPartition, tuple[str, ...]]
    pending: frozenset[TopicPartition]
    epochs: dict[str, int]
    quiet: bool  # nothing but a routine heartbeat round trip
    violation: bool = False
    revoked: frozenset[TopicPartition] = frozenset()  # a response takes these away
    member_pending: frozenset[TopicPartition] = frozenset()  # a response leaves these pending
    generation: int | None = None  # classic: the group's generation after the step
    elapsed_ms: int | None = None  # a timed trace: ms since its first timestamped event
    noted: bool = False  # carries a remark (a hand-over's timing): never collapsed
    phase: str = ""
    """A Convergence lasso's tail (``invariants.liveness.Lasso``): ``stem`` for the fair
    steps after the counterexample's prefix, ``loop`` for the part that repeats for ever;
    empty for the prefix and any other trace. Loop rows are never collapsed."""


@dataclass
class TraceView:
    """Lanes (coordinator first), partitions and rows of a trace."""

    lanes: list[str]
    partitions: list[TopicPartition]
    rows: list[Row]
    violation: str | None = None
    message: str | None = None
    notes: list[str] = field(default_factory=list)
    protocol: str = "consumer"
    """``consumer`` (KIP-848) or ``classic``: classic rows' ``epochs`` are the generation
    each client knows, and their ``generation`` the group's."""
    coordinator: list[dict[TopicPartition, str]] = field(default_factory=list)
    """A model path: per row, what the coordinator assigns each partition to after that
    step (``A``; ``A→B`` while A still has it pending revocation or unreleased and B is
    given it in the target) — beside the clients' ownership, so that a fault inside the
    coordinator shows. Empty for an external trace."""


class Window:
    """The events of a long trace that are drawn: at most ``limit`` of them, in order —
    with a ``focus`` line (the first violation's) the ``limit // 2`` events before it and
    the rest from it on, else the first ``limit``. Rows offered outside it are counted,
    not kept, so drawing a trace takes memory for ``limit`` rows, whatever its length."""

    def __init__(self, limit: int, focus: int | None = None) -> None:
        if limit < 1:
            raise ValueError("a window draws at least one event")
        self.limit = limit
        self.focus = focus
        self.seen = 0
        self._before: deque[tuple[Row, tuple[int, Action]]] = deque(
            maxlen=limit // 2 if focus is not None else limit
        )
        self._after: list[tuple[Row, tuple[int, Action]]] = []
        self._reached = focus is None

    @property
    def full(self) -> bool:
        """Whether no later row will be kept."""
        if not self._reached:
            return False
        return len(self._before) + len(self._after) >= self.limit

    def offer(self, row: Row, event: tuple[int, Action]) -> None:
        """Count ``row`` (with its ``(line, action)``), keeping it when it is drawn."""
        self.seen += 1
        if self.full:
            return
        if not self._reached and row.line is not None and row.line >= (self.focus or 0):
            self._reached = True
        if self._reached and self.focus is not None:
            self._after.append((row, event))
        else:
            self._before.append((row, event))

    def kept(self) -> list[tuple[Row, tuple[int, Action]]]:
        """The drawn rows with their events, in order."""
        return [*self._before, *self._after]


def _parts(a: Assignment | None) -> str:
    if a is None:
        return "–"
    by_topic: dict[str, list[int]] = {}
    for t, p in sorted(a):
        by_topic.setdefault(t, []).append(p)
    return (
        "[" + ", ".join(f"{shown(t)}-{','.join(map(str, ps))}" for t, ps in by_topic.items()) + "]"
    )


def response_detail(revoked: Assignment, pending: Assignment) -> str:
    """The second line of a heartbeat (or SyncGroup) response's label: revoked and pending
    partitions."""
    bits = []
    if revoked:
        bits.append(f"revoked={_parts(revoked)}")
    if pending:
        bits.append(f"pending={_parts(pending)}")
    return ("\n" + " ".join(bits)) if bits else ""


def _response(action: Action) -> tuple[str, Assignment] | None:
    """(client, assignment) when ``action`` delivers or loses a successful heartbeat
    response that carries an assignment, or a successful SyncGroup response."""
    if not isinstance(action, DeliverMessage | LoseMessage):
        return None
    b = action.message.body
    if isinstance(b, SyncGroupResponse):
        if b.error_code is not ErrorCode.NONE:
            return None
        return action.message.client, b.assignment
    if not isinstance(b, ConsumerGroupHeartbeatResponse):
        return None
    if b.error_code is not ErrorCode.NONE or b.assignment is None:
        return None
    return action.message.client, b.assignment


def _request_client(action: Action) -> str | None:
    """The client whose heartbeat request ``action`` delivers to the coordinator."""
    if isinstance(action, DeliverMessage) and isinstance(
        action.message.body, ConsumerGroupHeartbeatRequest
    ):
        return action.message.client
    return None


def _classic_label(b: object) -> str | None:
    """The label of a classic group request or response (None for another body):
    ``JoinGroup member=B.m2 owned=[foo-1,3] gen=3``, ``JoinGroup gen=4 member=A.m1
    leader=A.m1``, ``SyncGroup gen=4 A.m1=[foo-0,3] …``, ``SyncGroup assigned=[foo-1]``,
    ``Heartbeat gen=3``, ``Heartbeat REBALANCE_IN_PROGRESS``, ``LeaveGroup member=B.m1``."""
    if isinstance(b, JoinGroupRequest):
        who = f" member={shown(b.member_id)}" if b.member_id else ""
        sub = b.subscription
        gen = f" gen={sub.generation_id}" if sub.generation_id >= 0 else ""
        return f"JoinGroup{who} owned={_parts(sub.owned_partitions)}{gen}"
    if isinstance(b, JoinGroupResponse):
        who = f" member={shown(b.member_id)}" if b.member_id else ""
        if b.error_code is not ErrorCode.NONE:
            return f"JoinGroup {b.error_code.name}{who}"
        return f"JoinGroup gen={b.generation_id}{who} leader={shown(b.leader)}"
    if isinstance(b, SyncGroupRequest):
        given = "".join(f" {shown(m)}={_parts(a)}" for m, a in b.assignments.items())
        return f"SyncGroup gen={b.generation_id}{given}"
    if isinstance(b, SyncGroupResponse):
        if b.error_code is not ErrorCode.NONE:
            return f"SyncGroup {b.error_code.name}"
        return f"SyncGroup assigned={_parts(b.assignment)}"
    if isinstance(b, HeartbeatRequest):
        return f"Heartbeat gen={b.generation_id}"
    if isinstance(b, HeartbeatResponse):
        return f"Heartbeat {b.error_code.name}"
    if isinstance(b, LeaveGroupRequest):
        return f"LeaveGroup member={shown(b.member_id)}"
    if isinstance(b, LeaveGroupResponse):
        return f"LeaveGroup {b.error_code.name}"
    return None


def message_label(action: Action, classic: bool = False) -> tuple[str, str, str, bool]:
    """(source lane, target lane, label, lost) of a message action, else of a local one.
    ``classic``: an offset commit carries a generation (``commit gen=3``), not a member
    epoch."""
    if isinstance(action, DeliverMessage | LoseMessage):
        m = action.message
        b = m.body
        lost = isinstance(action, LoseMessage)
        src, dst = (m.client, COORDINATOR) if m.to_coordinator else (COORDINATOR, m.client)
        classic_text = _classic_label(b)
        if classic_text is not None:
            text = classic_text
        elif isinstance(b, ConsumerGroupHeartbeatRequest):
            owned = "" if b.topic_partitions is None else f" owned={_parts(b.topic_partitions)}"
            text = f"HB epoch={b.member_epoch}{owned}"
        elif isinstance(b, ConsumerGroupHeartbeatResponse):
            if b.error_code is not ErrorCode.NONE:
                text = f"HB {b.error_code.name}"
            else:
                given = "" if b.assignment is None else f" assigned={_parts(b.assignment)}"
                text = f"HB epoch={b.member_epoch}{given}"
        elif isinstance(b, OffsetCommitRequest):
            field_name = "gen" if classic else "epoch"
            text = f"commit {field_name}={b.generation_id_or_member_epoch} {_parts(b.topics)}"
        else:
            assert isinstance(b, OffsetCommitResponse)
            text = f"commit {b.error_code.name}"
        return src, dst, ("lost: " if lost else "") + text, lost
    lane = getattr(action, "client", None) or COORDINATOR
    detail = getattr(action, "member_id", None)
    label = action.kind + (f" {shown(detail)}" if detail else "")
    return lane, lane, label, False


def _routine(action: Action) -> bool:
    if not isinstance(action, DeliverMessage):
        return action.kind == "SendHeartbeat"
    b = action.message.body
    if isinstance(b, ConsumerGroupHeartbeatRequest):
        return b.member_epoch > 0 and b.topic_partitions is None
    if isinstance(b, ConsumerGroupHeartbeatResponse):
        return b.error_code is ErrorCode.NONE and b.assignment is None
    if isinstance(b, HeartbeatRequest):
        return True
    if isinstance(b, HeartbeatResponse):
        return b.error_code is ErrorCode.NONE
    return False


def consumes(c: ClassicClient) -> Assignment:
    """What a classic client consumes: what it owns, unless its process is down or its
    application hangs (``invariants.classic_snapshot``'s ``client_owns``)."""
    return EMPTY if c.stalled or not c.alive else c.owned


def _classic_ownership(
    state: ClassicState,
) -> tuple[dict[TopicPartition, tuple[str, ...]], frozenset[TopicPartition], dict[str, int]]:
    """Owners (clients consuming each partition), pending partitions (a member's
    assignment and its client's consumption disagree) and each client's generation."""
    owners: dict[TopicPartition, list[str]] = {}
    pending: set[TopicPartition] = set()
    members = state.group.members
    for c in state.clients:
        now = consumes(c)
        for tp in now:
            owners.setdefault(tp, []).append(c.name)
        member = members.get(c.member_id) if c.alive and c.member_id else None
        if member is not None:
            pending |= member.assignment ^ now
    generations = {c.name: c.generation_id for c in state.clients}
    return {tp: tuple(v) for tp, v in owners.items()}, frozenset(pending), generations


def _state_ownership(
    state: AnyState,
) -> tuple[dict[TopicPartition, tuple[str, ...]], frozenset[TopicPartition], dict[str, int]]:
    """Who consumes each partition, what is pending and each lane's epoch, as
    ``state``'s family draws it (``RenderFacet.ownership``)."""
    owned: tuple[dict[TopicPartition, tuple[str, ...]], frozenset[TopicPartition], dict[str, int]]
    owned = RENDER.of_state(state).ownership(state)
    return owned


def _consumer_ownership(
    state: State,
) -> tuple[dict[TopicPartition, tuple[str, ...]], frozenset[TopicPartition], dict[str, int]]:
    owners: dict[TopicPartition, list[str]] = {}
    for c in state.clients:
        for tp in c.owned:
            owners.setdefault(tp, []).append(c.name)
    pending: set[TopicPartition] = set()
    for m in state.group.members.values():
        pending |= m.partitions_pending_revocation
        pending |= pending_partitions(state.group, m)
    epochs = {mid: m.member_epoch for mid, m in state.group.members.items()}
    return {tp: tuple(v) for tp, v in owners.items()}, frozenset(pending), epochs


def _assignor_run_note(pre: State, post: State) -> str:
    """KIP-1263 offload on the chart: a step that hands an assignor run to the executor,
    and the run's completion, which installs its target."""
    before, after = pre.group.assignor_runs, post.group.assignor_runs
    if len(after) > len(before):
        return f" · assignor run started (group epoch {after[-1].group_epoch})"
    if len(after) < len(before):
        installed = post.group.assignment_epoch != pre.group.assignment_epoch
        done = f"target epoch {post.group.assignment_epoch}" if installed else "discarded"
        return f" · assignor run of group epoch {before[0].group_epoch} done: {done}"
    return ""


def coordinator_assignment(state: AnyState) -> dict[TopicPartition, str]:
    """What the coordinator assigns each partition to in ``state``: the member(s) it is
    assigned to, ``A rev`` for a member that still has it pending revocation, ``B wait`` for
    a member whose target holds it while another has not released it (classic: each
    member's assignment of the last SyncGroup phase)."""
    assigned: dict[TopicPartition, str] = RENDER.of_state(state).coordinator_assignment(state)
    return assigned


def _classic_coordinator_assignment(state: ClassicState) -> dict[TopicPartition, str]:
    out: dict[TopicPartition, list[str]] = {}
    by_id = {c.member_id: c.name for c in state.clients if c.alive}
    for cm in state.group.members.values():
        for tp in cm.assignment:
            out.setdefault(tp, []).append(by_id.get(cm.member_id, cm.member_id))
    return {tp: ", ".join(shown(m) for m in v) for tp, v in out.items()}


def _consumer_coordinator_assignment(state: State) -> dict[TopicPartition, str]:
    out: dict[TopicPartition, list[str]] = {}
    names = {c.member_id: c.name for c in state.clients}
    for m in state.group.members.values():
        name = names.get(m.member_id, m.member_id)
        for tp in m.assigned_partitions:
            out.setdefault(tp, []).append(name)
        for tp in m.partitions_pending_revocation:
            out.setdefault(tp, []).append(f"{name} rev")
        for tp in pending_partitions(state.group, m):
            out.setdefault(tp, []).append(f"{name} wait")
    return {tp: ", ".join(shown(x) for x in v) for tp, v in out.items()}


def _hand_out_note(pre: State, post: State) -> str:
    """A step where the coordinator gives a member partitions another member still holds
    (assigned or pending revocation) or another client still consumes: the hand-out, named
    on the step that makes it (a fault inside the coordinator shows where it happens)."""
    names = {c.member_id: c.name for c in post.clients}
    bits = []
    for mid, m in post.group.members.items():
        before = pre.group.members.get(mid)
        gained = m.assigned_partitions - (before.assigned_partitions if before else frozenset())
        if not gained:
            continue
        holders: set[str] = set()
        for other in post.group.members.values():
            if other.member_id != mid and gained & (
                other.assigned_partitions | other.partitions_pending_revocation
            ):
                holders.add(names.get(other.member_id, other.member_id))
        for c in post.clients:
            if c.member_id != mid and gained & c.owned:
                holders.add(c.name)
        if holders:
            held = ", ".join(shown(h) for h in sorted(holders))
            bits.append(
                f"coordinator gives {shown(names.get(mid, mid))} {_parts(gained)} "
                f"still held by {held}"
            )
    return ("\n" + "; ".join(bits)) if bits else ""


def one_family(states: Sequence[AnyState]) -> list[State | ClassicState]:
    """A path's states, a mixed state shown as a state of its group's family
    (``model.family.ProtocolFamily.one_family``: ``model.migration.system.family_state``)."""
    return [family_of_state(s).one_family(s) for s in states]


def view_of_path(
    states: Sequence[AnyState],
    actions: Sequence[Action],
    violation: str | None = None,
    message: str | None = None,
    violation_step: int | None = None,
    first_index: int = 1,
) -> TraceView:
    """The view of a model path (``states`` has one more element than ``actions``), of
    either protocol family (a mixed state as its group's family: ``family_state``).
    ``first_index`` numbers the first action (a stretch of a longer path: its step
    number there)."""
    states = one_family(states)
    facet = RENDER.of_state(states[0])
    classic = facet.in_generations
    lanes = [COORDINATOR, *(c.name for c in states[0].clients)]
    partitions: set[TopicPartition] = set()
    for s in states:
        for name, meta in s.topics.items():
            partitions.update((meta.topic_id, i) for i in range(meta.partitions))
            del name
    rows = []
    coordinator = []
    # What the coordinator withholds from each client's member, as of the last heartbeat
    # request it handled: the response to that request is the one delivered next.
    withheld: dict[str, Assignment] = {}
    steps = zip(actions, states[:-1], states[1:], strict=True)
    for i, (action, pre, post) in enumerate(steps, first_index):
        src, dst, label, lost = message_label(action, classic)
        # A mixed path's group may change family on a step (KIP-848 Online Migration).
        before, after = RENDER.of_state(pre), RENDER.of_state(post)
        if before is after:
            label += after.step_note(pre, post)
        owners, pending, epochs = after.ownership(post)
        coordinator.append(after.coordinator_assignment(post))
        asked = _request_client(action)
        if asked is not None and after.withheld is not None:
            withheld[asked] = after.withheld(post, asked)
        revoked: Assignment = frozenset()
        member_pending: Assignment = frozenset()
        answer = _response(action)
        if answer is not None:
            name, assignment = answer
            held: Assignment = frozenset()
            for c in pre.clients:
                if c.name == name:
                    held = c.owned
            revoked = held - assignment
            if before.withheld is None:
                member_pending = assignment & _consumed_elsewhere(cast(ClassicState, pre), name)
            else:
                member_pending = withheld.get(name, frozenset())
            label += response_detail(revoked, member_pending)
        rows.append(
            Row(
                i,
                None,
                action.kind,
                src,
                dst,
                label,
                lost,
                owners,
                pending,
                epochs,
                quiet=_routine(action),
                violation=i == violation_step,
                revoked=revoked,
                member_pending=member_pending,
                generation=after.generation(post),
            )
        )
    protocol = facet.protocol
    return TraceView(
        lanes,
        sorted(partitions),
        rows,
        violation,
        message,
        protocol=protocol,
        coordinator=coordinator,
    )


def view_of_lasso(
    states: Sequence[AnyState],
    actions: Sequence[Action],
    lasso: Lasso,
    violation: str | None = None,
    message: str | None = None,
) -> TraceView:
    """The view of a Convergence counterexample drawn whole: the prefix (``states``,
    ``actions``), then the fair schedule's stem and one turn of its loop
    (``invariants.liveness.Lasso``), the stem's rows marked ``stem`` and the loop's
    ``loop``; the loop's first row carries the violation (the loop repeats for ever
    without the group converging)."""
    first_loop = len(actions) + len(lasso.stem) + 1
    view = view_of_path(
        [*states, *lasso.states[1:]],
        [*actions, *lasso.stem, *lasso.loop],
        violation,
        message,
        violation_step=first_loop if lasso.loop else len(actions) + len(lasso.stem),
    )
    rows = [
        replace(
            r, phase="" if r.index <= len(actions) else "loop" if r.index >= first_loop else "stem"
        )
        for r in view.rows
    ]
    return replace(view, rows=rows)


def _consumed_elsewhere(state: ClassicState, client_name: str) -> Assignment:
    """What the classic clients other than ``client_name`` consume in ``state``."""
    out: set[TopicPartition] = set()
    for c in state.clients:
        if c.name != client_name:
            out |= consumes(c)
    return frozenset(out)


def _withheld(state: State, client_name: str) -> Assignment:
    """The unreleased partitions the coordinator withholds from ``client_name``'s member."""
    client = next((c for c in state.clients if c.name == client_name), None)
    member = state.group.members.get(client.member_id) if client is not None else None
    return pending_partitions(state.group, member) if member is not None else frozenset()


@dataclass
class _Member:
    reported: Assignment = frozenset()
    received: Assignment = frozenset()
    epoch: int = 0


CLASSIC_RESETS = frozenset(
    {ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION, ErrorCode.FENCED_INSTANCE_ID}
)
"""Classic errors after which a member has lost its partitions (``resetStateAndRejoin``:
``onPartitionsLost`` before it joins again, or a fatal error)."""


def _read_classic(members: dict[str, _Member], client: str, b: object) -> Assignment:
    """Update the member views with a delivered classic body; returns the partitions of
    the assignment it gives (for the trace's set of partitions)."""
    view = members.setdefault(client, _Member(epoch=-1))
    if isinstance(b, JoinGroupRequest):
        view.reported = b.subscription.owned_partitions
        view.received = frozenset()
    elif isinstance(b, LeaveGroupRequest):
        members[client] = _Member(epoch=-1)
    elif isinstance(b, JoinGroupResponse | SyncGroupResponse | HeartbeatResponse):
        if b.error_code in CLASSIC_RESETS:
            members[client] = _Member(epoch=-1)
        elif isinstance(b, JoinGroupResponse) and b.error_code is ErrorCode.NONE:
            view.epoch = b.generation_id
        elif isinstance(b, SyncGroupResponse) and b.error_code is ErrorCode.NONE:
            view.reported = b.assignment
            view.received = frozenset()
            return b.assignment
    return frozenset()


def view_of_events(
    actions: Iterable[tuple[int, Action]],
    violations: dict[int, str] | None = None,
    times: dict[int, int] | None = None,
    notes: dict[int, str] | None = None,
    *,
    window: Window | None = None,
    start_ms: int | None = None,
) -> TraceView:
    """The view of an external trace's (line, action) events; ``violations`` maps a line
    to the property the validator reported there, ``times`` a line to its event's
    timestamp (ms; each row then carries the time since ``start_ms``, by default the
    first), ``notes`` a line to a remark added to its row's label (a hand-over's timing).
    A trace with classic bodies (JoinGroup, SyncGroup …) is read as a classic one: its
    rows' ``epochs`` are generations. With a ``window`` only its rows are kept (and the
    events are read only until it is full): the view's lanes are those its rows use."""
    violations = violations or {}
    times = times if times is not None else {}
    notes = notes or {}
    start = start_ms if start_ms is not None else (min(times.values()) if times else None)
    members: dict[str, _Member] = {}
    lanes = [COORDINATOR]
    partitions: set[TopicPartition] = set()
    rows: list[Row] = []
    first: tuple[str, str] | None = None
    classic = False
    generation: int | None = None
    for i, (line, action) in enumerate(actions, 1):
        if isinstance(action, DeliverMessage | LoseMessage):
            classic = classic or classic_api(action.message.body) is not None
        src, dst, label, lost = message_label(action, classic)
        revoked: Assignment = frozenset()
        member_pending: Assignment = frozenset()
        answer = _response(action)
        if answer is not None:
            name, assignment = answer
            before = members.get(name, _Member())
            revoked = (before.reported | before.received) - assignment
            elsewhere: set[TopicPartition] = set()
            for other, mv in members.items():
                if other != name:
                    elsewhere |= mv.reported | mv.received
            member_pending = (assignment - before.reported) & frozenset(elsewhere)
            label += response_detail(revoked, member_pending)
        if line in notes:
            label += f"\n{notes[line]}"
        for lane in (src, dst):
            if lane not in lanes:
                lanes.append(lane)
        if isinstance(action, DeliverMessage):
            m = action.message
            b = m.body
            if classic_api(b) is not None:
                partitions.update(_read_classic(members, m.client, b))
                if isinstance(b, JoinGroupResponse) and b.error_code is ErrorCode.NONE:
                    generation = max(generation or 0, b.generation_id)
            else:
                view = members.setdefault(m.client, _Member(epoch=-1 if classic else 0))
                if isinstance(b, ConsumerGroupHeartbeatRequest):
                    if b.member_epoch < 0:
                        members[m.client] = _Member()
                    elif b.topic_partitions is not None:
                        view.reported = b.topic_partitions
                        view.received = view.received & b.topic_partitions
                elif isinstance(b, ConsumerGroupHeartbeatResponse):
                    if b.error_code is not ErrorCode.NONE:
                        if b.error_code.name in ("FENCED_MEMBER_EPOCH", "UNKNOWN_MEMBER_ID"):
                            members[m.client] = _Member()
                    else:
                        view.epoch = max(view.epoch, b.member_epoch)
                        if b.assignment is not None:
                            view.received = b.assignment
                            partitions.update(b.assignment)
        owners: dict[TopicPartition, list[str]] = {}
        pending: set[TopicPartition] = set()
        for name, mv in members.items():
            for tp in mv.reported | mv.received:
                owners.setdefault(tp, []).append(name)
                partitions.add(tp)
            pending |= mv.received - mv.reported
        bad = line in violations
        if bad and first is None:
            first = (violations[line], f"line {line}")
        row = Row(
            i,
            line,
            action.kind,
            src,
            dst,
            label,
            lost,
            {tp: tuple(v) for tp, v in owners.items()},
            frozenset(pending),
            {n: mv.epoch for n, mv in members.items()},
            quiet=_routine(action) and not bad and line not in notes,
            noted=line in notes,
            violation=bad,
            revoked=revoked,
            member_pending=member_pending,
            generation=generation if classic else None,
            elapsed_ms=(times[line] - start if line in times and start is not None else None),
        )
        if window is None:
            rows.append(row)
            continue
        window.offer(row, (line, action))
        if window.full:
            break
    if window is not None:
        rows = [row for row, _ in window.kept()]
        drawn = {lane for row in rows for lane in (row.source, row.target)}
        lanes = [lane for lane in lanes if lane == COORDINATOR or lane in drawn]
    return TraceView(
        lanes,
        sorted(partitions),
        rows,
        first[0] if first else None,
        f"reported at {first[1]}" if first else None,
        protocol="classic" if classic else "consumer",
    )


QUIET_RUN = 3
"""Quiet stretches longer than this are collapsed in long traces."""


def _perturbation(kind: str) -> bool:
    cls = ACTIONS_BY_KIND.get(kind)
    return cls is not None and cls.PERTURBATION


def collapse(rows: Sequence[Row], keep_all_below: int = 60) -> list[Row | int]:
    """The rows to draw: in traces longer than ``keep_all_below``, a stretch of more than
    ``QUIET_RUN`` quiet steps — no perturbation, no violation, and no change of ownership,
    pending partitions or member epochs — is replaced by the number of steps it holds."""
    if len(rows) <= keep_all_below:
        return list(rows)
    out: list[Row | int] = []
    run: list[Row] = []

    def flush() -> None:
        if len(run) > QUIET_RUN:
            out.append(len(run))
        else:
            out.extend(run)
        run.clear()

    previous: Row | None = None
    for row in rows:
        unchanged = previous is not None and (
            row.owners == previous.owners
            and row.pending == previous.pending
            and row.epochs == previous.epochs
        )
        quiet = not row.violation and not row.noted and row.phase != "loop"
        if unchanged and quiet and not _perturbation(row.kind):
            run.append(row)
        else:
            flush()
            out.append(row)
        previous = row
    flush()
    return out


def member_names(clients: dict[str, str]) -> dict[str, str]:
    """Member id → the name pictures give it: its ``client.id``, followed by the id when
    several members share that client.id."""
    counts: dict[str, int] = {}
    for name in clients.values():
        counts[name] = counts.get(name, 0) + 1
    return {m: name if counts[name] == 1 else f"{name} ({m})" for m, name in clients.items()}


def renamed_text(text: str, topics: dict[str, str], members: dict[str, str]) -> str:
    """``text`` with every topic id and member id replaced by its name."""
    for old, new in (*topics.items(), *members.items()):
        text = text.replace(old, new)
    return text


def renamed(view: TraceView, topics: dict[str, str], clients: dict[str, str]) -> TraceView:
    """``view`` with topic ids and member ids replaced by the names a capture's header
    gives (``topic_names``: id → topic name; ``clients``: member id → ``client.id``), in
    lanes, partitions, owners, epochs and labels. A name several members share keeps the
    id after it (``c1 (ID)``), so lanes stay distinct."""
    counts: dict[str, int] = {}
    for name in clients.values():
        counts[name] = counts.get(name, 0) + 1
    members = {m: name if counts[name] == 1 else f"{name} ({m})" for m, name in clients.items()}

    def member(m: str) -> str:
        return members.get(m, m)

    def part(tp: TopicPartition) -> TopicPartition:
        return (topics.get(tp[0], tp[0]), tp[1])

    def text(label: str) -> str:
        return renamed_text(label, topics, members)

    rows = [
        replace(
            r,
            source=member(r.source),
            target=member(r.target),
            label=text(r.label),
            owners={part(tp): tuple(member(o) for o in v) for tp, v in r.owners.items()},
            pending=frozenset(part(tp) for tp in r.pending),
            epochs={member(m): e for m, e in r.epochs.items()},
            revoked=frozenset(part(tp) for tp in r.revoked),
            member_pending=frozenset(part(tp) for tp in r.member_pending),
        )
        for r in view.rows
    ]
    return replace(
        view,
        lanes=[member(lane) for lane in view.lanes],
        partitions=sorted({part(tp) for tp in view.partitions}),
        rows=rows,
        message=None if view.message is None else text(view.message),
    )


def _no_generation(state: State) -> None:
    """A KIP-848 chart's rows carry no generation (the member epochs are the lanes')."""
    return


def _classic_generation(state: ClassicState) -> int:
    return state.group.generation_id


def _no_note(pre: ClassicState, post: ClassicState) -> str:
    return ""


def _consumer_step_note(pre: State, post: State) -> str:
    return _assignor_run_note(pre, post) + _hand_out_note(pre, post)


RENDER.register(
    "consumer",
    RenderFacet(
        protocol="consumer",
        in_generations=False,
        ownership=_consumer_ownership,
        coordinator_assignment=_consumer_coordinator_assignment,
        step_note=_consumer_step_note,
        withheld=_withheld,
        generation=_no_generation,
    ),
)
RENDER.register(
    "classic",
    RenderFacet(
        protocol="classic",
        in_generations=True,
        ownership=_classic_ownership,
        coordinator_assignment=_classic_coordinator_assignment,
        step_note=_no_note,
        withheld=None,
        generation=_classic_generation,
    ),
)
