"""Convergence of the KIP-848 coordinator core: a ranking function, for groups of any size.

After the last perturbation — no join (a re-creation of a deleted group included), leave,
timer, subscription or metadata change, failover: every step that bumps the group epoch or
changes membership — the group must reach the state where every member is STABLE at the
assignment epoch and holds its whole target (``CurrentAssignmentBuilder`` has nothing
left to do). The argument is a lexicographic ranking of finite sets (each component a set
of members or of member × partition pairs, compared by inclusion, so that "decreases" is
first order and holds for groups of any size):

``T``  the group epoch is ahead of the assignment epoch (a target is still to compute);
``A``  members whose epoch is not the assignment epoch;
``B``  members of ``A`` not yet told to revoke (not UNREVOKED_PARTITIONS);
``C``  pairs (m, p) of a member at the assignment epoch and a partition of its target
       that it subscribes to and is not assigned (still to be handed out);
``D``  members in UNRELEASED_PARTITIONS.

(and ``L``, the coordinator is loading; ``H`` and ``R``, partitions held off the
assignment epoch and pending revocation at it: ``RANKING``.)

A *quiet* step is one of ``DeliverMessage.heartbeat`` without a group-epoch bump,
``DeliverMessage.offset_commit``, ``ComputeTargetAssignment``, ``CoordinatorLoaded``,
``Unchanged`` and, with KIP-211 expiry or group deletion, ``ExpireOffsets`` (it changes
only committed offsets, which the ranking does not read; an expiry that deletes the
emptied group is a deletion) and ``DeleteGroup`` (refused unless the group is empty, and
of an empty group only ``L`` and, with offload, ``S`` can be non-zero, and a deletion
keeps both: it removes no member and leaves a run in flight running). Re-creating a
deleted group is a join, which bumps the group epoch: a perturbation. An *honest*
heartbeat of a member is the one its client sends once it has released its pending
partitions: its own epoch, its assigned partitions as owned, its subscription unchanged.
The obligations (each one Z3 query over the uninterpreted sorts, assuming the inductive
invariant ``I`` of ``invariants.z3.proof.induction`` for the configuration,
``invariant_for``, and the lemma below):

* the lemmas ``RANKING_LEMMAS`` (initiation and consecution per family, like the
  invariant's conjuncts);
* ``Ranking.NonIncreasing`` / family — no quiet step increases the ranking;
* ``Ranking.Decreases`` — an honest heartbeat of an *enabled* member (one whose heartbeat
  has something to do: the ``enabled`` predicate below) strictly decreases it, and so does
  every step of the coordinator's own fair families (``PROGRESS_FAMILIES``);
* ``Ranking.Enabled`` — a state whose ranking is not zero has an enabled member (or a
  coordinator step is enabled: loading, a separate computation due, a run in flight);
* ``Ranking.ZeroIsConverged`` — a state whose ranking is zero is converged.

Together, with weak fairness on every member's honest heartbeat and on the coordinator's
own steps, the ranking reaches zero after the last perturbation, and zero is convergence.

**KIP-1263 assignor offload** (``Options.assignor_offload``; ``OFFLOAD_RANKING``). A
heartbeat that needs a new target starts a run instead of installing one
(``target.start_assignor_run``), and the target stays due until ``CompleteAssignorRun``
installs the run's result at its epoch (``target.install_assignor_run``). Fairness assumed:
weak fairness on ``CompleteAssignorRun`` — the coordinator's executor completes a run in
flight while the coordinator is not loading (it is then continuously enabled) — besides
the members' honest heartbeats; a run is not a perturbation. Two flags follow ``T``:

``S``  a run is in flight that will not install the due target: none is due, or the
       oldest run is stale (its epoch behind the group epoch) or its group was deleted;
``W``  a target is due and the oldest run in flight is not a live run at the group epoch.

and ``A`` … ``D`` are counted only while no target is due: until the run installs the new
target a heartbeat reconciles against the previous one with subscriptions changed since,
and may move partitions to pending revocation. A heartbeat that starts a run at the group
epoch clears ``W``; ``CompleteAssignorRun`` clears ``S`` (a stale or deleted run is
discarded, or installed with the target still due) or ``T`` (a current run installs the
due target at the group epoch). While a target is due a member is enabled only when no
run is in flight (its heartbeat starts one); otherwise only ``CompleteAssignorRun`` makes
progress. Converged also means no run in flight.

**KIP-1263 assignment batching** (``Options.batching``; ``BATCHING_RANKING``). A
heartbeat computes the due target only while the assignment interval is not pending
(``target.assignment_interval_open``); a computation makes it pending again
(``target.record_assignment_time``) and ``AssignmentIntervalElapses`` lets it pass.
Fairness assumed: weak fairness on ``AssignmentIntervalElapses`` — the interval passes
while the coordinator is not loading the group (it is then continuously enabled until it
fires: only a computation, a realigned emptied group or a deletion changes the interval,
and none of them makes it pending without the ranking above it decreasing or the interval
being recorded anew) — besides the members' honest heartbeats; the interval passing is not
a perturbation. One flag follows ``T`` (with offload too, after ``S``):

``P``  the assignment interval is pending (``SymState.interval_pending``).

and ``A`` … ``D`` are counted only while no target is due, as with offload: while one is
due and the interval pending a heartbeat reconciles against the previous target. A
heartbeat that computes the due target clears ``T`` (and sets ``P``); an installed run
clears ``T`` or ``S`` (and sets ``P``); ``AssignmentIntervalElapses`` clears ``P``. While a
target is due a member is enabled only when the interval is not pending (and, with
offload, no run is in flight); otherwise ``AssignmentIntervalElapses`` (or
``CompleteAssignorRun``) makes progress.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import z3

from invariants.z3.proof.induction import (
    Conjunct,
    Cti,
    _fresh_pair,
    _holds,
    invariant_for,
    params_of,
)
from invariants.z3.proof.obligations import Obligation, Policy, Query, Result
from invariants.z3.proof.obligations import check as run_one
from invariants.z3.proof.reading import read
from invariants.z3.proof.state import (
    MEMBER,
    PARTITION,
    STABLE,
    UNRELEASED,
    UNREVOKED,
    RunSlot,
    SymState,
    decode,
)
from invariants.z3.proof.transition import (
    Family,
    Options,
    families,
    initial,
    initial_expiry_and_deletion,
)

_m = z3.Const("rank.m", MEMBER)
_p = z3.Const("rank.p", PARTITION)

QUIET_FAMILIES = (
    "DeliverMessage.heartbeat",
    "ComputeTargetAssignment",
    "DeliverMessage.offset_commit",
    "CoordinatorLoaded",
    "ExpireOffsets",
    "DeleteGroup",
    "Unchanged",
)

PROGRESS_FAMILIES = (
    "DeliverMessage.heartbeat",
    "ComputeTargetAssignment",
    "CompleteAssignorRun",
    "CoordinatorLoaded",
    "AssignmentIntervalElapses",
)
"""The families whose step ``Ranking.Decreases`` is stated for (the fair ones): a
member's honest heartbeat, and the coordinator's own steps."""

NON_INCREASING = "Ranking.NonIncreasing"
DECREASES = "Ranking.Decreases"
ENABLED = "Ranking.Enabled"
ZERO = "Ranking.ZeroIsConverged"
GOALS = (
    "Ranking.NoTargetAtEpochZero",
    "Ranking.EpochZeroHoldsNothing",
    "Ranking.UnrevokedHasPending",
    "Ranking.AssignedOrPending",
    NON_INCREASING,
    DECREASES,
    ENABLED,
    ZERO,
)


@dataclass(frozen=True)
class Component:
    """One component of the ranking: a set of members (``arity`` 1), of member ×
    partition pairs (2) or a flag (0), as a formula of a state."""

    name: str
    arity: int
    member_of: Callable[..., Any]
    meaning: str = ""

    def args(self) -> list[Any]:
        return [[], [_m], [_m, _p]][self.arity]

    def subset(self, post: SymState, pre: SymState) -> Any:
        xs = self.args()
        inner = z3.Implies(self.member_of(post, *xs), self.member_of(pre, *xs))
        return z3.ForAll(xs, inner) if xs else inner

    def equal(self, post: SymState, pre: SymState) -> Any:
        xs = self.args()
        inner = self.member_of(post, *xs) == self.member_of(pre, *xs)
        return z3.ForAll(xs, inner) if xs else inner

    def strictly_smaller(self, post: SymState, pre: SymState) -> Any:
        xs = self.args()
        gone = z3.And(self.member_of(pre, *xs), z3.Not(self.member_of(post, *xs)))
        return z3.And(self.subset(post, pre), z3.Exists(xs, gone) if xs else gone)

    def empty(self, s: SymState) -> Any:
        xs = self.args()
        inner = z3.Not(self.member_of(s, *xs))
        return z3.ForAll(xs, inner) if xs else inner


def _missing(s: SymState, m: Any, p: Any) -> Any:
    return z3.And(
        s.is_member(m),
        s.epoch(m) == s.assignment_epoch,
        s.target(m, p),
        s.subscribed(m, p),
        z3.Not(s.assigned(m, p)),
    )


RANKING: tuple[Component, ...] = (
    Component("L", 0, lambda s: s.loading, meaning="the coordinator is loading the group"),
    Component(
        "T",
        0,
        lambda s: z3.And(s.group_epoch != s.assignment_epoch, z3.Exists([_m], s.is_member(_m))),
        meaning="a target is still to compute (the group epoch is ahead of the assignment "
        "epoch, and the group has members)",
    ),
    Component(
        "A",
        1,
        lambda s, m: z3.And(s.is_member(m), s.epoch(m) != s.assignment_epoch),
        meaning="members whose epoch is not the assignment epoch",
    ),
    Component(
        "B",
        1,
        lambda s, m: z3.And(
            s.is_member(m), s.epoch(m) != s.assignment_epoch, s.mstate(m) != UNREVOKED
        ),
        meaning="members not at the assignment epoch that are not yet told to revoke",
    ),
    Component(
        "H",
        2,
        lambda s, m, p: z3.And(s.is_member(m), s.epoch(m) != s.assignment_epoch, s.holds(m, p)),
        meaning="partitions held by members not at the assignment epoch",
    ),
    Component(
        "C",
        2,
        _missing,
        meaning="partitions of a target that a member at the assignment epoch subscribes "
        "to and is not assigned",
    ),
    Component(
        "R",
        2,
        lambda s, m, p: z3.And(s.is_member(m), s.epoch(m) == s.assignment_epoch, s.revoking(m, p)),
        meaning="partitions pending revocation of members at the assignment epoch",
    ),
    Component(
        "D",
        1,
        lambda s, m: z3.And(s.is_member(m), s.mstate(m) == UNRELEASED),
        meaning="members in UNRELEASED_PARTITIONS",
    ),
)
"""The ranking, most significant component first (module docstring)."""


def _due(s: SymState) -> Any:
    """``T``: a target is due (the group epoch is ahead, and the group has members)."""
    return RANKING[1].member_of(s)


def _live(r: RunSlot) -> Any:
    """The run's group was not deleted while it ran (``AssignorRun.group_deleted``)."""
    return z3.Not(r.deleted) if r.deleted is not None else z3.BoolVal(True)


def in_flight(s: SymState) -> Any:
    """An assignor run is in flight (any slot; ``Group.assignor_runs`` not empty)."""
    return z3.Or(*[r.on for r in s.runs]) if s.runs else z3.BoolVal(False)


def _current_run(s: SymState) -> Any:
    """The oldest run in flight is live and at the group epoch: completing it installs
    the due target (``target.install_assignor_run``)."""
    if not s.runs:
        return z3.BoolVal(False)
    r = s.runs[0]
    return z3.And(r.on, _live(r), r.epoch == s.group_epoch)


def _masked(c: Component) -> Component:
    """``c`` counted only while no target is due (empty while ``T``)."""

    def member_of(s: SymState, *xs: Any) -> Any:
        return z3.And(z3.Not(_due(s)), c.member_of(s, *xs))

    return Component(c.name, c.arity, member_of, meaning=f"{c.meaning}, while no target is due")


OFFLOAD_RANKING: tuple[Component, ...] = (
    RANKING[0],
    RANKING[1],
    Component(
        "S",
        0,
        lambda s: z3.And(in_flight(s), z3.Not(z3.And(_due(s), _current_run(s)))),
        meaning="an assignor run is in flight that will not install the due target (none "
        "is due, or the run is stale or its group was deleted)",
    ),
    Component(
        "W",
        0,
        lambda s: z3.And(_due(s), z3.Not(_current_run(s))),
        meaning="a target is due and no live run at the group epoch is in flight",
    ),
    *[_masked(c) for c in RANKING[2:]],
)
"""The ranking with KIP-1263 assignor offload (module docstring): ``L`` and ``T``, then
``S`` and ``W`` on the run in flight, then ``A`` … ``D`` counted only while no target is
due — while one is, a heartbeat reconciles against the previous target with the members'
new subscriptions and may move partitions to pending revocation, until the run installs
the new target."""


def _pending(s: SymState) -> Any:
    """The KIP-1263 assignment interval is pending (false where the states keep none)."""
    return s.interval_pending if s.interval_pending is not None else z3.BoolVal(False)


PENDING = Component(
    "P",
    0,
    _pending,
    meaning="the KIP-1263 assignment interval is pending since the last computation",
)

BATCHING_RANKING: tuple[Component, ...] = (
    RANKING[0],
    RANKING[1],
    PENDING,
    *[_masked(c) for c in RANKING[2:]],
)
"""The ranking with KIP-1263 assignment batching (module docstring): ``L`` and ``T``, then
``P``, then ``A`` … ``D`` counted only while no target is due."""

OFFLOAD_BATCHING_RANKING: tuple[Component, ...] = (
    *OFFLOAD_RANKING[:3],
    PENDING,
    *OFFLOAD_RANKING[3:],
)
"""The ranking with KIP-1263 assignor offload and batching: ``OFFLOAD_RANKING`` with ``P``
after ``S`` (a run installed, stale or not, makes the interval pending again)."""


def components(options: Options) -> tuple[Component, ...]:
    """The ranking of ``options``' relation, most significant component first."""
    if options.assignor_offload:
        return OFFLOAD_BATCHING_RANKING if options.batching else OFFLOAD_RANKING
    return BATCHING_RANKING if options.batching else RANKING


def smaller(post: SymState, pre: SymState, ranking: tuple[Component, ...] = RANKING) -> Any:
    """``post``'s ranking is lexicographically smaller than ``pre``'s."""
    cases = []
    for i, c in enumerate(ranking):
        same = [d.equal(post, pre) for d in ranking[:i]]
        cases.append(z3.And(*same, c.strictly_smaller(post, pre)))
    return z3.Or(*cases)


def same(post: SymState, pre: SymState, ranking: tuple[Component, ...] = RANKING) -> Any:
    return z3.And(*[c.equal(post, pre) for c in ranking])


def zero(s: SymState, ranking: tuple[Component, ...] = RANKING) -> Any:
    return z3.And(*[c.empty(s) for c in ranking])


def _unrevoked_has_pending(s: SymState) -> Any:
    q = z3.Const("rank.q", PARTITION)
    return z3.ForAll(
        [_m],
        z3.Implies(
            z3.And(s.is_member(_m), s.mstate(_m) == UNREVOKED),
            z3.Exists([q], s.revoking(_m, q)),
        ),
    )


def _assigned_or_pending(s: SymState) -> Any:
    return z3.ForAll(
        [_m, _p],
        z3.Implies(s.is_member(_m), z3.Not(z3.And(s.assigned(_m, _p), s.revoking(_m, _p)))),
    )


def _epoch_zero_holds_nothing(s: SymState) -> Any:
    return z3.ForAll(
        [_m, _p],
        z3.Implies(z3.And(s.is_member(_m), s.epoch(_m) == 0), z3.Not(s.holds(_m, _p))),
    )


def _no_target_at_epoch_zero(s: SymState) -> Any:
    return z3.Implies(s.assignment_epoch == 0, z3.ForAll([_m, _p], z3.Not(s.target(_m, _p))))


RANKING_LEMMAS: dict[str, Callable[[SymState], Any]] = {
    "Ranking.NoTargetAtEpochZero": _no_target_at_epoch_zero,
    "Ranking.EpochZeroHoldsNothing": _epoch_zero_holds_nothing,
    "Ranking.UnrevokedHasPending": _unrevoked_has_pending,
    "Ranking.AssignedOrPending": _assigned_or_pending,
}
"""Lemmas the ranking needs besides ``I`` (which has ``Lemma.AtTargetEpochHoldsTarget``):
the target at assignment epoch 0 is empty (a target is only computed for a bumped group
epoch); a member at epoch 0 holds nothing (so its honest heartbeat, a join, reports
nothing); a member in UNREVOKED_PARTITIONS has a partition pending revocation; no
partition is both assigned to a member and pending its revocation."""


def lemma(s: SymState, leave_out: frozenset[str] = frozenset()) -> Any:
    """The ranking's lemmas (but those named in ``leave_out``) on ``s``."""
    return z3.And(*[f(s) for name, f in RANKING_LEMMAS.items() if name not in leave_out])


def enabled(s: SymState, m: Any, options: Options) -> Any:
    """Whether ``m``'s honest heartbeat has something to do in ``s``: a target to
    compute (when heartbeats compute it), an epoch to move to, a revocation to
    acknowledge, or, when UNRELEASED, a partition that was released or nothing left
    to wait for."""
    to_compute = (
        s.group_epoch != s.assignment_epoch
        if options.compute_target_in_heartbeat
        else z3.BoolVal(False)
    )
    p = z3.Const("rank.q", PARTITION)
    released = z3.Exists([p], z3.And(_missing(s, m, p), z3.Not(s.pe_held(p))))
    nothing_left = z3.ForAll([p], z3.Not(_missing(s, m, p)))
    member_work = z3.Or(
        s.epoch(m) != s.assignment_epoch,
        s.mstate(m) == UNREVOKED,
        z3.And(s.mstate(m) == UNRELEASED, z3.Or(released, nothing_left)),
    )
    if options.assignor_offload:
        # While a target is due the heartbeat's work is to start the run computing it,
        # which it does when no run is in flight (target.start_assignor_run) and, with
        # batching, the interval is not pending (target.assignment_interval_open).
        starts = z3.And(
            z3.BoolVal(options.compute_target_in_heartbeat),
            z3.Not(s.runs[0].on),
            z3.Not(_pending(s)),
        )
        return z3.And(s.is_member(m), z3.If(_due(s), starts, member_work))
    if options.batching:
        # While a target is due the heartbeat's work is to compute it, which it does
        # when the interval is not pending.
        computes = z3.And(z3.BoolVal(options.compute_target_in_heartbeat), z3.Not(_pending(s)))
        return z3.And(s.is_member(m), z3.If(_due(s), computes, member_work))
    return z3.And(s.is_member(m), z3.Or(to_compute, member_work))


def _invariant(s: SymState, invariant: tuple[Conjunct, ...]) -> list[Any]:
    return [read(c.expr, now=s) for c in invariant]


def quiet(f: Family, pre: SymState) -> Any:
    """The family's formula restricted to a quiet step (a heartbeat of a member that does
    not bump the group epoch)."""
    if f.name == "DeliverMessage.heartbeat":
        return z3.And(f.formula, pre.is_member(f.params["member"]), z3.Not(f.params["bump"]))
    return f.formula


def honest(f: Family, pre: SymState) -> Any:
    """The heartbeat family restricted to an honest heartbeat (module docstring)."""
    p = f.params
    hm = p["member"]
    return z3.And(
        f.formula,
        pre.is_member(hm),
        p["epoch"] == pre.epoch(hm),
        z3.Not(p["owned_null"]),
        z3.ForAll([_p], p["owned"](_p) == pre.assigned(hm, _p)),
        z3.ForAll([_p], p["subscribed"](_p) == pre.subscribed(hm, _p)),
        z3.Not(p["subscription_changed"]),
        z3.Not(p["bump"]),
        z3.Not(p["invalid"]),
        z3.Not(p["group_full"]),
    )


def obligations(options: Options, only: Iterable[str] | None = None) -> list[Obligation]:
    """The ranking's obligations (module docstring), of the goals in ``only`` when
    given."""
    pre, post = _fresh_pair(options)
    names = [f.name for f in families(pre, post, options)]
    out = []
    for name in RANKING_LEMMAS:
        out += [Obligation("ranking", name, None)]
        out += [Obligation("ranking", name, f) for f in names]
    out += [Obligation("ranking", NON_INCREASING, f) for f in names if f in QUIET_FAMILIES]
    out += [Obligation("ranking", DECREASES, f) for f in PROGRESS_FAMILIES if f in names]
    out += [Obligation("ranking", ENABLED, None), Obligation("ranking", ZERO, None)]
    wanted = set(only) if only is not None else None
    return [ob for ob in out if wanted is None or ob.goal in wanted]


def query(
    ob: Obligation,
    options: Options,
    *,
    leave_out: frozenset[str] = frozenset(),
) -> Query:
    """One obligation's formulas for the obligation runner; a model of its negation is
    decoded into a counterexample. ``leave_out`` drops lemmas from the assumptions (to show
    what they are for)."""
    pre, post = _fresh_pair(options)
    invariant = invariant_for(options)
    rank = components(options)
    fam: Family | None = None
    two_states = True
    conclusion: Any = None
    if ob.goal in RANKING_LEMMAS and ob.family is None:
        premise: tuple[Any, ...] = (initial(pre), initial_expiry_and_deletion(pre))
        conclusion = RANKING_LEMMAS[ob.goal](pre)
        two_states = False
    elif ob.goal in (ENABLED, ZERO):
        assumed = (*_invariant(pre, invariant), lemma(pre, leave_out))
        if ob.goal == ENABLED:
            x = z3.Const("rank.x", MEMBER)
            # Loading ends with CoordinatorLoaded, a target due without heartbeats that
            # compute it with ComputeTargetAssignment, a run in flight with
            # CompleteAssignorRun, a pending interval with AssignmentIntervalElapses:
            # each always enabled then. No state of ranking other than zero has none of
            # them and no enabled member.
            due = z3.And(
                z3.BoolVal(not options.compute_target_in_heartbeat),
                RANKING[1].member_of(pre),
            )
            running = pre.runs[0].on if pre.runs else z3.BoolVal(False)
            premise = (
                *assumed,
                z3.Not(zero(pre, rank)),
                z3.Not(pre.loading),
                z3.Not(due),
                z3.Not(running),
                z3.Not(_pending(pre)),
                z3.ForAll([x], z3.Not(enabled(pre, x, options))),
            )
        else:
            premise = (*assumed, zero(pre, rank))
            conclusion = converged(pre)
        two_states = False
    else:
        fam = next(f for f in families(pre, post, options) if f.name == ob.family)
        assumed = (*_invariant(pre, invariant), lemma(pre, leave_out))
        if ob.goal in RANKING_LEMMAS:
            premise = (*assumed, fam.formula)
            conclusion = RANKING_LEMMAS[ob.goal](post)
        elif ob.goal == NON_INCREASING:
            premise = (*assumed, quiet(fam, pre))
            conclusion = z3.Or(smaller(post, pre, rank), same(post, pre, rank))
        elif fam.name == "DeliverMessage.heartbeat":
            premise = (
                *assumed,
                honest(fam, pre),
                z3.Not(pre.loading),
                enabled(pre, fam.params["member"], options),
            )
            conclusion = smaller(post, pre, rank)
        else:
            premise = (*assumed, fam.formula)
            conclusion = smaller(post, pre, rank)

    def decode_cti(model: Any) -> Cti:
        before, members, partitions = decode(model, pre)
        after = decode(model, post)[0] if two_states else None
        params = params_of(model, fam, members, partitions) if fam is not None else {}
        snap = before.snapshot()
        if after is not None:
            doms = (set(before.member_domain()) | set(after.member_domain()), ())
            snap = before.snapshot(*doms)
        holds_before = all(_holds(c.expr, snap) for c in invariant)
        return Cti(
            before,
            after,
            fam.name if fam is not None else None,
            params,
            holds_before,
            python_says=(
                "the invariant holds before"
                if holds_before
                else "the invariant does NOT hold before (the encoding disagrees)"
            ),
        )

    return Query(ob, premise, conclusion, decode=decode_cti)


def check(
    ob: Obligation,
    options: Options,
    timeout_ms: int,
    *,
    leave_out: frozenset[str] = frozenset(),
) -> Result:
    """One obligation, run by the obligation runner: proved (unsat), failed (a decoded
    counterexample) or unknown (Z3's reason)."""
    return run_one(lambda: query(ob, options, leave_out=leave_out), Policy(timeout_ms))


def converged(s: SymState) -> Any:
    """Every member is STABLE at the assignment epoch, which equals the group epoch
    (unless the group is empty), holds no partition pending revocation and is assigned
    exactly the partitions of its target it subscribes to; no assignor run is in flight
    (where the states keep runs)."""
    return z3.And(
        z3.Not(in_flight(s)),
        z3.Implies(z3.Exists([_m], s.is_member(_m)), s.group_epoch == s.assignment_epoch),
        z3.ForAll(
            [_m],
            z3.Implies(
                s.is_member(_m),
                z3.And(s.epoch(_m) == s.assignment_epoch, s.mstate(_m) == STABLE),
            ),
        ),
        z3.ForAll(
            [_m, _p],
            z3.Implies(
                s.is_member(_m),
                z3.And(
                    z3.Not(s.revoking(_m, _p)),
                    s.assigned(_m, _p) == z3.And(s.target(_m, _p), s.subscribed(_m, _p)),
                ),
            ),
        ),
    )
