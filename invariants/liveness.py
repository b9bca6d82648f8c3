"""Convergence and the ``SOMETIMES`` witnesses.

Convergence (``EVENTUALLY``): once perturbations stop and messages flow, every member
reaches the target epoch and the group is STABLE within a bounded number of steps. It is
checked by running a *fair* schedule of progress actions from a state — round-robin over
the enabled progress actions, so every enabled action is taken within a bounded delay —
and requiring a converged state within ``bound`` steps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from invariants.families import CONVERGED
from invariants.mixed_liveness import group_downgrades, group_upgrades
from invariants.properties import CLASSIC, Kind, Property, declare
from invariants.registry import Registry
from model import system
from model.actions import (
    Action,
    ChangePartitionRacks,
    CompleteAssignorRun,
    CompleteCallback,
    CoordinatorLoaded,
    DeliverMessage,
    ExpireOffsets,
    Poll,
    RebalanceTimeout,
    Rejoin,
    ResolveRegularExpressions,
)
from model.classic.client import rebalance_protocol
from model.classic.messages import SyncGroupResponse
from model.classic.records import ClassicState
from model.config import Config
from model.consumer.client import (
    IN_GROUP,
    ON_PARTITIONS_ASSIGNED,
    ON_PARTITIONS_REVOKED,
    reconciliation_aborted,
)
from model.consumer.coordinator import group_status, regexes_stale
from model.family import family_of
from model.records import (
    CommittedOffset,
    ConsumerGroupHeartbeatResponse,
    OffsetCommitRequest,
    State,
)
from model.status import (
    ClassicClientStatus,
    ClassicGroupStatus,
    ClientStatus,
    ConfigError,
    ErrorCode,
    GroupStatus,
    MemberState,
    RebalanceProtocol,
)
from model.system import AnyState

DEFAULT_BOUND = 400
"""Default bound on fair progress steps until convergence: for groups of up to
``DEFAULT_BOUND // STEPS_PER_CLIENT`` clients; a larger group's is derived from its size
(:func:`convergence_bound`)."""

STEPS_PER_CLIENT = 40
"""Fair steps allowed per client for a group to converge: four times what the fair
schedule takes to form a group (about ten a member, measured on SMALL with 2 to 300
clients: 43 steps for 2, 3,033 for 300), so that a large group's slow convergence is not
reported as a violation (issue 42: 300 members, a "violation" after one step under a
fixed bound of 400)."""


def convergence_bound(config: Config, bound: int = DEFAULT_BOUND) -> int:
    """The fair steps within which ``config``'s group must converge: ``bound``, or
    :data:`STEPS_PER_CLIENT` per client when that is more. A bound below
    :data:`DEFAULT_BOUND` — a caller's deliberately short schedule — is kept as given."""
    if bound < DEFAULT_BOUND:
        return bound
    return max(bound, STEPS_PER_CLIENT * len(config.clients))


def converged(state: AnyState) -> bool:
    """The group is STABLE (or EMPTY), its coordinator loaded and its regular expressions
    resolved against the current topics, and every client in the group is STABLE at its
    member's epoch, consuming exactly what its member is assigned — in the words of the
    state's family (``CONVERGED``: ``consumer_converged``, ``classic_converged``,
    ``invariants.mixed_liveness.mixed_converged``)."""
    return CONVERGED.of_state(state)(state)


def consumer_converged(state: State) -> bool:
    """``converged`` of a KIP-848 state: the group is STABLE (or EMPTY), its coordinator
    loaded and its regular expressions resolved against the current topics, and every
    client in the group is STABLE at its member's epoch, consuming exactly what its member
    is assigned."""
    g = state.group
    status = group_status(g)
    if status not in (GroupStatus.STABLE, GroupStatus.EMPTY):
        return False
    if state.coordinator_loading or regexes_stale(g, state.topics):
        return False  # a coordinator still loading, or a regex refresh due, is not settled
    for c in state.clients:
        if not c.alive or (c.status not in IN_GROUP and c.status is not ClientStatus.FENCED):
            continue
        if c.stalled:
            continue  # its application hangs: the group converges around it
        member = g.members.get(c.member_id)
        if c.status is not ClientStatus.STABLE or member is None:
            return False
        if c.member_epoch != member.member_epoch or c.owned != member.assigned_partitions:
            return False
    return True


CONVERGED.register("consumer", consumer_converged)


def classic_converged(state: ClassicState) -> bool:
    """A classic group has converged when it is STABLE (or EMPTY), nothing is in flight,
    every subscribed client whose application runs is STABLE at the group's generation with
    no rejoin pending — a cooperative follow-up rebalance included — consuming exactly its
    member's assignment, and every subscribed partition is assigned."""
    g = state.group
    if g.status not in (ClassicGroupStatus.STABLE, ClassicGroupStatus.EMPTY):
        return False
    if state.network:
        return False
    for c in state.clients:
        if not c.alive or c.status is ClassicClientStatus.UNSUBSCRIBED or c.stalled:
            continue
        member = g.members.get(c.member_id)
        rejoin = c.rejoin_needed or c.assignment_stale
        if c.status is not ClassicClientStatus.STABLE or member is None or rejoin:
            return False
        if c.generation_id != g.generation_id or c.owned != member.assignment:
            return False
    return _classic_covered(state)


def _classic_covered(state: ClassicState) -> bool:
    """Every existing partition of a topic some member subscribes to is assigned to a
    member: a cooperative group converges only after its follow-up rebalance gave out what
    it held back (KIP-429)."""
    g = state.group
    assigned = {tp for m in g.members.values() for tp in m.assignment}
    for m in g.members.values():
        for name in m.subscription.topics:
            meta = state.topics.get(name)
            if meta is None:
                continue
            if any((meta.topic_id, i) not in assigned for i in range(meta.partitions)):
                return False
    return True


CONVERGED.register("classic", classic_converged)


def fair_actions(state: AnyState, config: Config) -> list[Action]:
    """Progress actions only (no perturbations)."""
    return [a for a in system.enabled(state, config) if not a.PERTURBATION]


class FairMemo:
    """What fair schedules ask of a state — whether it has converged, its progress actions
    (``fair_actions``) and the successor under each action taken — kept across the
    schedules of one search of one config. Each answer is a function of the state alone,
    so a schedule that reuses them takes the same actions and reaches the same states as
    one that computes them; the schedules that start at neighbouring states run through the
    same states again and again (on ``MUT2_LOSSY`` five schedule steps for each distinct
    state they pass). Bounded: it keeps the states of the last ``limit`` answers it
    computed or found in two generations of ``limit // 2``, the older dropped when the
    newer is full (and keeps nothing with ``limit=0``)."""

    __slots__ = ("_converged", "_enabled", "_older", "_states", "limit", "step")

    def __init__(self, limit: int = 50_000) -> None:
        self.limit = limit
        self._states: dict[AnyState, _Known] = {}
        self._older: dict[AnyState, _Known] = {}
        self._converged: Callable[[Any], bool] | None = None
        self._enabled: Callable[[Any, Config], tuple[Action, ...]] = system.enabled
        self.step: Callable[[Any, Action, Config], Any] = system.step
        """The family's ``step`` once the memo has met a state (``resolve``)."""

    def resolve(self, config: Config) -> Callable[[Any], bool]:
        """The family of ``config``'s ``converged``, ``enabled`` and ``step``, looked up
        once for the memo's search (``CONVERGED``, ``model.family.family_of``)."""
        done = self._converged
        if done is None:
            family = family_of(config)
            self._enabled, self.step = family.enabled, family.step
            done = self._converged = CONVERGED.of(family)
        return done

    def known(self, state: AnyState, config: Config) -> _Known:
        """The answers for ``state`` (computed now if they are not kept)."""
        entry = self._states.get(state)
        if entry is not None:
            return entry
        entry = self._older.get(state)
        if entry is None:
            done = (self._converged or self.resolve(config))(state)
            acts = [] if done else [a for a in self._enabled(state, config) if not a.PERTURBATION]
            entry = _Known(done, acts, [None] * len(acts))
        if self.limit > 0:
            if len(self._states) >= self.limit // 2:
                self._older = self._states
                self._states = {}
            self._states[state] = entry
        return entry


@dataclass(slots=True)
class _Known:
    converged: bool
    actions: list[Action]
    """The progress actions enabled (none asked for once converged)."""
    successors: list[AnyState | None]
    """The successor under each of ``actions``, once a schedule has taken it."""


def fair_schedule(
    state: AnyState,
    config: Config,
    bound: int,
    *,
    states: list[AnyState] | None = None,
    memo: FairMemo | None = None,
) -> tuple[list[Action], AnyState, bool]:
    """Run a round-robin fair schedule of progress actions from ``state`` for up to
    ``bound`` steps (grown with the group, :func:`convergence_bound`): the enabled action
    that has waited longest goes first (ties: enabled order). Returns the actions taken,
    the last state and whether it converged; ``states``, when given, receives the state
    after each action taken (so that a caller need not replay the schedule); ``memo``
    keeps what the schedules of a search learn about each state (``FairMemo``: the same
    schedule, computed once per state)."""
    if memo is None:
        memo = FairMemo(limit=0)  # keeps nothing: each answer computed when asked
    taken: list[Action] = []
    known = memo.known(state, config)
    if known.converged:
        return taken, state, True
    last_taken: dict[Action, int] = {}
    for i in range(1, convergence_bound(config, bound) + 1):
        acts = known.actions
        if not acts:
            return taken, state, known.converged
        at = min(range(len(acts)), key=lambda j: last_taken.get(acts[j], -1))
        action = acts[at]
        last_taken[action] = i
        taken.append(action)
        after = known.successors[at]
        if after is None:
            after = known.successors[at] = memo.step(state, action, config)
        state = after
        if states is not None:
            states.append(state)
        known = memo.known(state, config)
        if known.converged:
            return taken, state, True
    return taken, state, False


def run_fair(state: AnyState, config: Config, bound: int) -> tuple[AnyState, int, bool]:
    """``fair_schedule`` without the actions: the last state, the steps taken, converged."""
    taken, last, ok = fair_schedule(state, config, bound)
    return last, len(taken), ok


@dataclass(frozen=True)
class Lasso:
    """Why the fair schedule from a state did not converge within ``bound`` fair steps
    (``fair_loop``). A Convergence violation is *shown* (issue 42: claimed only when shown)
    when the schedule is ``stuck`` — no progress action enabled and the group not converged:
    nothing will ever change — or reaches a *fair loop*: after the ``stem``, the ``loop``'s
    actions lead back to the state they start from, and every progress action enabled in
    every state of the loop is taken in it, so repeating the loop for ever is a fair run
    that never converges. Otherwise (``loop`` empty, not stuck) the bound only cut the
    schedule: the state is undecided.

    ``states`` holds the state where the stem starts and the state after each action of
    ``stem + loop`` (so the loop's last state equals its entry, ``states[len(stem)]``); with
    no loop, the stem is the whole schedule. ``steps``: the fair steps the schedule took."""

    stem: tuple[Action, ...]
    loop: tuple[Action, ...]
    states: tuple[AnyState, ...]
    stuck: bool
    bound: int
    steps: int

    @property
    def fair(self) -> bool:
        """The tail is a fair run: stuck, or a loop (every loop found is fair)."""
        return self.stuck or bool(self.loop)

    @property
    def shown(self) -> bool:
        """Non-convergence is shown (a fair loop or a stuck state), not just not seen."""
        return self.fair

    @property
    def entry(self) -> AnyState:
        """The state the loop starts from and returns to."""
        return self.states[len(self.stem)]

    @property
    def loop_states(self) -> tuple[AnyState, ...]:
        """The states of one turn of the loop, its entry first (not repeated at the end)."""
        start = len(self.stem)
        return self.states[start : start + max(len(self.loop), 1)]

    def describe(self) -> str:
        if self.stuck:
            return (
                f"after {self.steps} fair steps no progress action is enabled and the group "
                "has not converged"
            )
        if self.loop:
            first, last = len(self.stem), len(self.stem) + len(self.loop)
            return (
                f"the fair schedule loops without converging: steps {first + 1}-{last} return "
                f"to the state after step {first}, and every progress action enabled "
                "throughout them is taken in them (a fair loop)"
            )
        return (
            f"the fair schedule did not converge within its bound of {self.bound} fair steps "
            f"({DEFAULT_BOUND}, or {STEPS_PER_CLIENT} per client when that is more) and "
            "showed no fair loop: undecided"
        )


def fair_loop(
    state: AnyState, config: Config, bound: int = DEFAULT_BOUND, *, memo: FairMemo | None = None
) -> Lasso | None:
    """Run the fair schedule from ``state`` (``fair_schedule``, the bound in force
    :func:`convergence_bound`): None when it converges, else its :class:`Lasso` — the one
    definition of a fair schedule that never converges, read by the explorers (is a
    violation shown?) and by the reports (what to draw and tell).

    The schedule is stuck when its last state has no progress action enabled. Else the
    first fair loop in it: the schedule's states are read in order, and at each state seen
    before, the steps since its latest occurrence are a loop; it is fair when every
    progress action enabled in all of its states is taken in it. No fair loop: the stem is
    the whole schedule and the loop empty (undecided). ``memo``: as for ``fair_schedule``
    (the same schedule, so the same answer)."""
    after: list[AnyState] = []
    taken, last, ok = fair_schedule(state, config, bound, states=after, memo=memo)
    if ok:
        return None
    limit = convergence_bound(config, bound)
    seq = [state, *after]
    if not fair_actions(last, config):
        return Lasso(tuple(taken), (), tuple(seq), stuck=True, bound=limit, steps=len(taken))
    seen: dict[AnyState, int] = {}
    enabled: list[frozenset[Action]] = []
    for j, s in enumerate(seq):
        enabled.append(frozenset(fair_actions(s, config)))
        i = seen.get(s)
        if i is not None and frozenset.intersection(*enabled[i:j]) <= set(taken[i:j]):
            return Lasso(
                tuple(taken[:i]),
                tuple(taken[i:j]),
                tuple(seq[: j + 1]),
                stuck=False,
                bound=limit,
                steps=len(taken),
            )
        seen[s] = j
    return Lasso(tuple(taken), (), tuple(seq), stuck=False, bound=limit, steps=len(taken))


def undecided_reason(states: int, bound: int) -> list[str]:
    """The ``not checked`` entry of a run in which the fair schedule hit its bound without
    showing non-convergence from ``states`` states (``bound``: the largest bound in force,
    ``Lasso.bound``; empty when there were none)."""
    if not states:
        return []
    return [
        f"Convergence from {states} state(s): the fair schedule ran its bound of "
        f"{bound} fair steps ({DEFAULT_BOUND}, or {STEPS_PER_CLIENT} per client when that is "
        "more) without converging, and showed neither a fair loop nor a stuck state"
    ]


ALL_FAMILIES = frozenset({"consumer", "classic", "mixed"})
"""The protocol families of a property read in every one: Convergence (each family has
its "converged", ``invariants.families.CONVERGED``), GroupConverges."""

CONVERGENCE = declare(
    Property(
        "Convergence",
        Kind.EVENTUALLY,
        "After the last perturbation, with messages flowing, every member reaches the target "
        "epoch and the group is STABLE within the bound (400 fair steps, or 40 per client "
        "when that is more).",
        "KIP-848 Rebalance Process (members converge to the target assignment)",
        families=ALL_FAMILIES,
    )
)


REBALANCE_TIME = declare(
    Property(
        "RebalanceTimeBound",
        Kind.EVENTUALLY,
        "After the last perturbation the fair schedule converges within the config's declared "
        "bound (max_rebalance_steps).",
        "KIP-848 Rebalance Process; a config's declared rebalance-time bound",
        families=ALL_FAMILIES,
        note="Checked only when a config declares one (`--rebalance-time`).",
    )
)


def rebalance_start(config: Config, actions: Sequence[Action]) -> AnyState:
    """The state after the last perturbation of ``actions`` (the initial state when there
    is none): where the rebalance the path ends in starts."""
    state = system.initial(config)
    start = state
    for action in actions:
        state = system.step(state, action, config)
        if action.PERTURBATION:
            start = state
    return start


# --------------------------------------------------------------------------- witnesses


@dataclass(frozen=True)
class Witness:
    """A ``SOMETIMES`` property: some run must show it, or a pass is vacuous. ``applies``
    says whether a config can show it at all (a config whose options rule the behaviour
    out is not required to)."""

    prop: Property
    seen: Callable[[Any, Action, Any], bool]
    applies: Callable[[Config], bool] = lambda config: True
    actions: tuple[type[Action], ...] | None = None
    """The actions whose steps may show it (``_shown_by``); None: a step of any action.
    ``seen`` is False on a step of any other action, so the checker asks it only on these
    (``Checker.note_witnesses``)."""


_SHOWN_BY: dict[Callable[..., bool], tuple[type[Action], ...]] = {}

W = TypeVar("W", bound=Callable[..., bool])


def _shown_by(*actions: type[Action]) -> Callable[[W], W]:
    """Declare the actions whose steps a witness function may be true on (it starts by
    testing the action's type): ``Witness.actions``."""

    def declare(f: W) -> W:
        _SHOWN_BY[f] = actions
        return f

    return declare


def _revocation_completes(pre: State, action: Action, post: State) -> bool:
    for mid, m in pre.group.members.items():
        after = post.group.members.get(mid)
        if (
            m.state is MemberState.UNREVOKED_PARTITIONS
            and after is not None
            and after.state is not MemberState.UNREVOKED_PARTITIONS
        ):
            return True
    return False


def _waits_on_unreleased(pre: State, action: Action, post: State) -> bool:
    return any(m.state is MemberState.UNRELEASED_PARTITIONS for m in post.group.members.values())


@_shown_by(Rejoin, CompleteCallback)
def _fenced_and_rejoins(pre: State, action: Action, post: State) -> bool:
    if isinstance(action, Rejoin):
        return True
    # With callback steps the end of onPartitionsLost rejoins.
    return (
        isinstance(action, CompleteCallback)
        and pre.client(action.client).status is ClientStatus.FENCED
        and post.client(action.client).status is ClientStatus.JOINING
    )


def _group_converges(pre: AnyState, action: Action, post: AnyState) -> bool:
    return bool(post.group.members) and not converged(pre) and converged(post)


def _zombie_overlap(pre: State, action: Action, post: State) -> bool:
    for c in post.clients:  # a search asks this of every step: most have no zombie
        if c.expired:
            break
    else:
        return False
    members = post.group.members
    zombies = [
        c.owned
        for c in post.clients
        if c.alive and c.expired and c.member_id not in members and not c.stalled
    ]
    if not zombies:
        return False
    others = [
        c.owned
        for c in post.clients
        if c.alive and not (c.expired and c.member_id not in members) and not c.stalled
    ]
    return any(z & o for z in zombies for o in others)


@_shown_by(RebalanceTimeout)
def _stalled_member_removed(pre: State, action: Action, post: State) -> bool:
    if not isinstance(action, RebalanceTimeout):
        return False
    return any(c.stalled and c.member_id == action.member_id for c in post.clients)


@_shown_by(CompleteCallback)
def _reconciliation_aborted(pre: State, action: Action, post: State) -> bool:
    if not isinstance(action, CompleteCallback):
        return False
    c = pre.client(action.client)
    return (
        c.callback in (ON_PARTITIONS_REVOKED, ON_PARTITIONS_ASSIGNED)
        and c.reconciling is not None
        and reconciliation_aborted(c)
    )


@_shown_by(Poll)
def _stale_member_rejoins(pre: State, action: Action, post: State) -> bool:
    return isinstance(action, Poll)


@_shown_by(DeliverMessage)
def _older_epoch_commit_accepted(pre: State, action: Action, post: State) -> bool:
    if not isinstance(action, DeliverMessage):
        return False
    req = action.message.body
    if not isinstance(req, OffsetCommitRequest) or not req.topics:
        return False
    member = pre.group.members.get(req.member_id)
    if member is None or req.generation_id_or_member_epoch >= member.member_epoch:
        return False
    record = post.group.committed_offsets.get(next(iter(req.topics)))
    return record == CommittedOffset(req.member_id, req.generation_id_or_member_epoch)


def _partition_moves_under_epochs(pre: State, action: Action, post: State) -> bool:
    """A step stamps a member with a partition the group's history already names another
    member (not a process of the same static instance) for, at an older epoch. A witness
    of the consumer family only: the checker asks it on KIP-848 steps only
    (``Checker._witnesses_of``)."""
    before, after = pre.group.assignment_history, post.group.assignment_history
    if after is before or not after:
        return False
    for (tp, epoch), holders in after.items():
        for holder in holders - before.get((tp, epoch), frozenset()):
            for (tp2, older), others in before.items():
                if tp2 == tp and older < epoch and any(_other_holder(holder, o) for o in others):
                    return True
    return False


def _other_holder(a: tuple[str, str | None], b: tuple[str, str | None]) -> bool:
    """Two holders of the assignment history that are not one member or one static
    instance."""
    if a[1] is not None or b[1] is not None:
        return a[1] != b[1]
    return a[0] != b[0]


@_shown_by(ResolveRegularExpressions)
def _regex_resolved(pre: State, action: Action, post: State) -> bool:
    return (
        isinstance(action, ResolveRegularExpressions)
        and post.group.resolved_regexes != pre.group.resolved_regexes
        and any(post.group.resolved_regexes.values())
    )


@_shown_by(ChangePartitionRacks)
def _rack_change_rebalances(pre: State, action: Action, post: State) -> bool:
    return (
        isinstance(action, ChangePartitionRacks) and post.group.group_epoch > pre.group.group_epoch
    )


@_shown_by(CoordinatorLoaded)
def _group_reloaded(pre: State, action: Action, post: State) -> bool:
    return isinstance(action, CoordinatorLoaded) and bool(pre.group.members)


@_shown_by(ExpireOffsets)
def _offset_expired_after_empty(pre: AnyState, action: Action, post: AnyState) -> bool:
    """The cleanup removes offsets of a group with no members."""
    return (
        isinstance(action, ExpireOffsets)
        and not pre.group.members
        and post.group.committed_offsets != pre.group.committed_offsets
    )


@_shown_by(CompleteAssignorRun)
def _run_outlives_member(pre: State, action: Action, post: State) -> bool:
    if not isinstance(action, CompleteAssignorRun) or not pre.group.assignor_runs:
        return False
    return not pre.group.assignor_runs[0].member_ids() <= frozenset(pre.group.members)


@_shown_by(CompleteAssignorRun)
def _stale_run_followed_up(pre: State, action: Action, post: State) -> bool:
    if not isinstance(action, CompleteAssignorRun) or not pre.group.assignor_runs:
        return False
    return bool(post.group.members) and pre.group.assignor_runs[0].group_epoch < (
        post.group.group_epoch
    )


@_shown_by(ExpireOffsets)
def _group_deleted_after_expiry(pre: AnyState, action: Action, post: AnyState) -> bool:
    """The cleanup removes an empty group's last offsets and deletes the group."""
    return isinstance(action, ExpireOffsets) and post.group.deletions > pre.group.deletions


def _group_recreated(pre: AnyState, action: Action, post: AnyState) -> bool:
    """A member joins the group created again after a deletion."""
    return post.group.deletions > 0 and not pre.group.members and bool(post.group.members)


@_shown_by(CompleteAssignorRun)
def _run_discarded_after_deletion(pre: State, action: Action, post: State) -> bool:
    if not isinstance(action, CompleteAssignorRun) or not pre.group.assignor_runs:
        return False
    return pre.group.assignor_runs[0].group_deleted


@_shown_by(DeliverMessage)
def _zombie_finds_group_deleted(pre: State, action: Action, post: State) -> bool:
    """A client's heartbeat is answered GROUP_ID_NOT_FOUND: its group was deleted."""
    if not isinstance(action, DeliverMessage) or action.message.to_coordinator:
        return False
    body = action.message.body
    return (
        isinstance(body, ConsumerGroupHeartbeatResponse)
        and body.error_code is ErrorCode.GROUP_ID_NOT_FOUND
    )


def _deletes_groups(config: Config) -> bool:
    return config.allows("DeleteGroup") or (
        config.delete_expired_groups and config.allows("ExpireOffsets")
    )


def _offload(config: Config) -> bool:
    return config.assignor_offload


def _live_timers(config: Config) -> bool:
    return config.live_timers or config.slow_clients


WITNESS_REGISTRY: Registry[Witness] = Registry("witness")
"""Every witness, in declaration order (``_witness``); its property is registered in
``invariants.properties.PROPERTIES`` too."""


def _witness(
    name: str,
    description: str,
    reference: str,
    f: Callable[[Any, Action, Any], bool],
    applies: Callable[[Config], bool] = lambda config: True,
    families: frozenset[str] = frozenset({"consumer"}),
) -> Witness:
    """Declare a witness of the protocol families ``families`` (registered, with its
    property, in declaration order: ``WITNESSES``): it applies to a config of one of them
    that ``applies`` accepts."""
    prop = declare(
        Property(name, Kind.SOMETIMES, description, reference, witness_of=f, families=families)
    )

    def applies_in_family(config: Config) -> bool:
        # The families the witness declares (as ``invariants.check`` asks of a state's).
        return family_of(config).name in prop.families and applies(config)

    return WITNESS_REGISTRY.register(name, Witness(prop, f, applies_in_family, _SHOWN_BY.get(f)))


_witness(
    "RevocationCompletes",
    "A member acknowledges a revocation and leaves UNREVOKED_PARTITIONS.",
    "KIP-848 Reconciliation, phase 2",
    _revocation_completes,
)

_witness(
    "WaitsOnUnreleasedPartitions",
    "A member waits for partitions another member has not released yet.",
    "KIP-848 Reconciliation, phase 3",
    _waits_on_unreleased,
)

_witness(
    "FencedMemberRejoins",
    "A fenced client rejoins with epoch 0.",
    "KIP-848 Consumer Group Heartbeat API (FENCED_MEMBER_EPOCH)",
    _fenced_and_rejoins,
)

_witness(
    "GroupConverges",
    "The group converges: every member STABLE at the target epoch (classic: at the "
    "group's generation).",
    "KIP-848 Group States; ClassicGroupState STABLE",
    _group_converges,
    families=ALL_FAMILIES,
)

_witness(
    "ZombieOverlap",
    "A zombie (a live client whose session the coordinator expired) still consumes a "
    "partition that a member of the group consumes too.",
    "KIP-848 Session timeout; offset commits fenced by member epoch",
    _zombie_overlap,
    _live_timers,
)

_witness(
    "StalledMemberRemoved",
    "The rebalance timer removes a member whose application hangs in its revocation callback.",
    "KIP-848 Rebalance timeout",
    _stalled_member_removed,
    lambda config: _live_timers(config) and config.allows("StallRevocation"),
)

_witness(
    "ReconciliationAborted",
    "A rebalance callback finishes after the client was fenced, left or rejoined, and "
    "the reconciliation it belonged to is dropped.",
    "AbstractMembershipManager.maybeAbortReconciliation",
    _reconciliation_aborted,
    lambda config: config.callback_steps,
)

_witness(
    "StaleMemberRejoins",
    "A client whose poll timer expired (it left, STALE) polls again and rejoins.",
    "AbstractMembershipManager.maybeRejoinStaleMember (max.poll.interval.ms)",
    _stale_member_rejoins,
    lambda config: config.allows("PollTimerExpires"),
)

_witness(
    "OlderEpochCommitAccepted",
    "An offset commit sent at a member epoch older than the member's current one is "
    "accepted: the member held its partitions since then.",
    "KIP-1251; ConsumerGroup.validateOffsetCommit",
    _older_epoch_commit_accepted,
    lambda config: config.assignment_epochs,
)

_witness(
    "PartitionMovesUnderEpochs",
    "A member is stamped with a partition whose KIP-1251 assignment history already "
    "names another member at an older epoch: the partition moved, and the history "
    "AssignmentEpochHolderUnique and EpochCommitFromHolder read is exercised.",
    "KIP-1251; CurrentAssignmentBuilder.computeNextAssignment",
    _partition_moves_under_epochs,
    lambda config: config.assignment_epochs,
)

_witness(
    "GroupReloadedAfterFailover",
    "A new coordinator loads a group that has members from its records after a failover.",
    "GroupMetadataManager.onLoaded",
    _group_reloaded,
    lambda config: config.allows("CoordinatorFailover"),
)

_witness(
    "RegexSubscriptionResolved",
    "The coordinator resolves a member's regular expression to topics, or to other "
    "topics after the metadata changed.",
    "GroupMetadataManager.handleRegularExpressionsResult",
    _regex_resolved,
    lambda config: any(c.regex is not None for c in config.clients),
)

_witness(
    "RackChangeRebalances",
    "The racks of a subscribed topic's partitions change and the group epoch is bumped "
    "(the metadata hash includes partition racks).",
    "GroupMetadataManager metadata hash (KIP-1101)",
    _rack_change_rebalances,
    lambda config: config.allows("ChangePartitionRacks"),
)

_witness(
    "OffsetExpiredAfterEmpty",
    "The committed offsets of a group that has emptied expire.",
    "KIP-211 Proposed Changes (expiry once the group is Empty)",
    _offset_expired_after_empty,
    lambda config: config.allows("ExpireOffsets"),
    families=frozenset({"consumer", "classic"}),
)

_witness(
    "AssignorRunOutlivesMember",
    "An offloaded assignor run completes after a member it assigned left, was fenced "
    "or was replaced, and its result is installed without it.",
    "KIP-1263 Assignment Offload",
    _run_outlives_member,
    _offload,
)

_witness(
    "StaleAssignorRunFollowedUp",
    "An offloaded assignor run completes after the group epoch moved past the one it "
    "started at, so a second run is needed.",
    "KIP-1263 Assignment Offload (another run on a future heartbeat)",
    _stale_run_followed_up,
    _offload,
)

_witness(
    "GroupDeletedAfterExpiry",
    "The last committed offsets of an empty group expire and the group is deleted.",
    "GroupCoordinatorShard.cleanupGroupMetadata / maybeDeleteGroup (KIP-211)",
    _group_deleted_after_expiry,
    lambda config: config.delete_expired_groups and config.allows("ExpireOffsets"),
    families=frozenset({"consumer", "classic"}),
)

_witness(
    "GroupRecreatedAfterDeletion",
    "A member joins the group created again, from scratch, after the group was deleted.",
    "GroupMetadataManager.getOrMaybeCreateConsumerGroup / getOrMaybeCreateClassicGroup",
    _group_recreated,
    _deletes_groups,
    families=frozenset({"consumer", "classic"}),
)

_witness(
    "ZombieFindsGroupDeleted",
    "A heartbeat at an epoch other than 0 meets the deleted group and is answered "
    "GROUP_ID_NOT_FOUND: a zombie (a live client whose member a timer removed) at its "
    "old epoch, or a leave.",
    "GroupMetadataManager.getOrMaybeCreateConsumerGroup (created only at epoch 0)",
    _zombie_finds_group_deleted,
    lambda config: _deletes_groups(config) and _live_timers(config),  # the zombie case
)

_witness(
    "RunDiscardedAfterDeletion",
    "An offloaded assignor run completes after its group was deleted, and its result is discarded.",
    "KIP-1263 Assignment Offload (deleted groups have their assignments discarded)",
    _run_discarded_after_deletion,
    lambda config: _offload(config) and _deletes_groups(config),
)


@_shown_by(DeliverMessage)
def _cooperative_keeps(pre: ClassicState, action: Action, post: ClassicState) -> bool:
    """A cooperative client applies a SyncGroup assignment of a later generation and keeps
    a partition it consumed before."""
    if not isinstance(action, DeliverMessage) or not isinstance(
        action.message.body, SyncGroupResponse
    ):
        return False
    before, after = pre.client(action.message.client), post.client(action.message.client)
    return (
        rebalance_protocol(after) is RebalanceProtocol.COOPERATIVE
        and before.assigned_generation >= 0
        and after.assigned_generation > before.assigned_generation
        and bool(before.owned & after.owned)
    )


@_shown_by(DeliverMessage)
def _follow_up_rebalance(pre: ClassicState, action: Action, post: ClassicState) -> bool:
    """A cooperative client revokes what a SyncGroup assignment took away and asks for the
    follow-up rebalance (KIP-429)."""
    if not isinstance(action, DeliverMessage) or not isinstance(
        action.message.body, SyncGroupResponse
    ):
        return False
    before, after = pre.client(action.message.client), post.client(action.message.client)
    return bool(before.owned - after.owned) and after.rejoin_needed


def _static_member_replaced(pre: ClassicState, action: Action, post: ClassicState) -> bool:
    """A new process of a static member takes over its instance id under a new member id."""
    old = {m.instance_id: mid for mid, m in pre.group.members.items() if m.instance_id}
    return any(
        m.instance_id in old and old[m.instance_id] != mid for mid, m in post.group.members.items()
    )


@_shown_by(RebalanceTimeout)
def _classic_member_removed(pre: ClassicState, action: Action, post: ClassicState) -> bool:
    """The coordinator's join or SyncGroup timer removes a member that does not take part."""
    return isinstance(action, RebalanceTimeout) and action.member_id not in post.group.members


def _cooperative(config: Config) -> bool:
    return any(
        all(a == "cooperative-sticky" for a in assignors)
        for spec in config.clients
        for assignors in (spec.assignors if spec.kip429 else ("range",), *spec.bounces)
    )


_witness(
    "CooperativeMemberKeepsPartition",
    "A cooperative member keeps a partition it consumed across a rebalance.",
    "KIP-429 Proposed Changes (incremental cooperative rebalancing)",
    _cooperative_keeps,
    _cooperative,
    families=frozenset({"classic"}),
)

_witness(
    "FollowUpRebalance",
    "A cooperative member revokes a partition its new assignment took away and rejoins "
    "for the follow-up rebalance.",
    "KIP-429 Proposed Changes; ConsumerCoordinator.onJoinComplete",
    _follow_up_rebalance,
    _cooperative,
    families=frozenset({"classic"}),
)

_witness(
    "StaticMemberReplaced",
    "A restarted static member takes over its group.instance.id under a new member id.",
    "KIP-345; GroupMetadataManager.classicGroupJoinNewStaticMember",
    _static_member_replaced,
    lambda config: any(c.instance_id for c in config.clients) and config.allows("Restart"),
    families=frozenset({"classic"}),
)

_witness(
    "ClassicMemberRemovedByTimer",
    "The join or SyncGroup timer removes a member that does not rejoin or sync in time.",
    "GroupMetadataManager classic join and pending-sync timers (KAFKA-12890)",
    _classic_member_removed,
    lambda config: config.allows("StallAssignment"),
    families=frozenset({"classic"}),
)

_witness(
    "GroupUpgrades",
    "A consumer-protocol member's join converts a classic group with members to a consumer group.",
    "KIP-848 Online Migration; GroupMetadataManager.convertToConsumerGroup",
    group_upgrades,
    lambda config: config.migration_policy in ("upgrade", "bidirectional"),
    families=frozenset({"mixed"}),
)

_witness(
    "GroupDowngrades",
    "The last consumer-protocol member leaves, is fenced or is replaced and the consumer "
    "group of classic members becomes a classic group.",
    "KIP-848 Online Migration; GroupMetadataManager.convertToClassicGroup",
    group_downgrades,
    lambda config: (
        config.migration_policy in ("downgrade", "bidirectional")
        and (config.allows("Leave") or config.allows("Crash"))
    ),
    families=frozenset({"mixed"}),
)


WITNESSES: tuple[Witness, ...] = WITNESS_REGISTRY.where(lambda w: True)
"""Every witness, in declaration order (a view of ``WITNESS_REGISTRY``)."""

CLASSIC_WITNESSES: tuple[Witness, ...] = WITNESS_REGISTRY.where(
    lambda w: w.prop.families == CLASSIC
)
"""The witnesses of the classic protocol only (a view of ``WITNESS_REGISTRY``)."""


def required_witnesses(config: Config) -> frozenset[str]:
    """The witness names a complete run of ``config`` must hit (``Config.required_witnesses``;
    every witness that applies to the config when it names none). Unknown names are a
    ``ConfigError``."""
    names = frozenset(w.prop.name for w in WITNESSES)
    if config.required_witnesses is None:
        return frozenset(w.prop.name for w in WITNESSES if w.applies(config))
    unknown = sorted(set(config.required_witnesses) - names)
    if unknown:
        raise ConfigError(
            f"config {config.name!r}: required_witnesses names unknown witness {unknown[0]!r}; "
            f"known: {', '.join(sorted(names))}"
        )
    return frozenset(config.required_witnesses)
