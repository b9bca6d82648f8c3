"""Exhaustive breadth-first search on several processes, states stored as fingerprints.

Each state is known by a 64-bit fingerprint of its canonical key (``fingerprint``). The
search is level-synchronous, and **full states cross processes only to even the workers
out**: the worker that finds a successor keeps it. Each level every worker checks and
expands its part of the frontier and keeps, as candidates for the next level, the
successors it has not seen (the first discovery of each in its rank order, less the
visited fingerprints); it sends the coordinator only each candidate's fingerprint, its
discovery key (parent rank, action index) and the Python hash of the state as found, as
numpy arrays through its pipe. The coordinator picks, of the discoveries of a state, the
one with the least key (``_assign``) and answers each worker which of its candidates it
keeps; the states the others found again are dropped where they are. The worker whose
discovery won stores the state's parent pointer (the parent's fingerprint and the index
of the action in ``system.enabled(parent)``: 18 bytes). The state itself is held and
expanded by that worker or by another that found the same value (the same hash of the
state as found, not only of its canonical key: the order of the enabled actions is the
found state's), as evens the workers' parts out (``_even_out``); what differences remain,
the workers holding most hand states over, pickled, to those holding least (``_balance``,
``exchange``). Every worker also keeps the fingerprints of every visited state (8 bytes a
state and worker: its filter of candidates) and the convergence memo; full states only
for its part of the frontier and its candidates.

The search begins in the calling process as the only worker, and the workers are forked
from it once it has expanded a level of at least ``serial_until`` states and one state
per worker (``_Worker.adopt``): every copy holds that worker's candidates, and they take
the states of the next level by rank, in turn. The visited fingerprints, the memoised
verdicts, the convergence memo and the witnesses gathered hold for every copy. From then
on a worker's part of each level is the successors of its own part, less those another
worker found first, plus those moved to it by ``_even_out``; it memoises property
verdicts by view as the serial engine does (each worker checks a view it meets once).

**The same search as the serial engine** (``groupcheck.explore.bfs``). The serial engine
visits the states of a level in the order it discovered them: a state ranks by the rank
of the parent that discovered it first, then by the index of the action. The parallel
engine computes the same order: the coordinator keeps, of the discoveries of a state,
the one with the least (parent rank, action index) — the serial engine's first — and
ranks the level by these keys. Every event the serial engine stops at has a place in
that order: the convergence check of the state of rank ``r`` (before its successors),
the step check of its ``a``-th transition, the state checks of the successor that
transition discovered. Each worker works through its part in rank order and stops at
its first event; the state checks run on the worker that holds the state, when the
level is kept, before it is expanded (the serial engine checks a state when it
discovers it, before any state of its level is expanded). The coordinator takes the
least violating event of a level, so the counterexample is the one the serial engine
returns: the same path, hence the same minimised counterexample and byte-identical run
artifacts. The path is rebuilt from parent pointers and replayed from the initial state
by action index, which recreates exactly the states the workers stored.

Distinct states and steps of a complete search equal the serial engine's (up to
fingerprint collisions: the probability that one merged two states is reported as TLC
does, ``collision_probability``), and so do those of a search cut by ``max_states``: the
serial engine stops before the first state it would expand with ``max_states`` states
known, and the coordinator finds that state in the level's keys (the workers have
expanded the whole level; what lies beyond the cut is not reported). A time budget stops
the workers where they are. Rebalance-time measurement and the state graph run on the
serial engine only (``groupcheck.explore.run`` falls back to it).

**What it costs beyond the serial engine's work** (docs/benchmarks.md, "Parallel BFS"):
the fingerprints and the arrays of each level's candidates, the candidates another worker
found first (generated and held until the coordinator answers), a view checked once on
each worker that meets it, the states handed over (pickled and unpickled: about a quarter
of their expansion), and the wait at the end of each level for the slower worker (the
parts are even in states, not in the time each takes).
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import pickle
import sys
import time
import traceback
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, NamedTuple

import numpy as np

from groupcheck.cores import usable_cores
from groupcheck.explore.bfs import (
    _step_may_matter,
    _z3_checker,
    clean_scope,
)
from groupcheck.explore.channels import channel_normal_form
from groupcheck.explore.result import ExploreResult
from groupcheck.explore.symmetry import canonicaliser
from groupcheck.explore.views import Views
from groupcheck.usercode import UserCodeError
from invariants.check import Checker, Violation
from invariants.liveness import (
    CONVERGENCE,
    DEFAULT_BOUND,
    FairMemo,
    fair_loop,
    fair_schedule,
    required_witnesses,
    undecided_reason,
)
from invariants.verdict import conclude
from model import system
from model.actions import Action
from model.config import Config
from model.family import family_of, family_of_state
from model.path import Path
from model.system import AnyState

ProgressFn = Callable[[int, int, int], None]

MASK64 = (1 << 64) - 1
ACTION_BITS = 16
"""Keys pack (parent rank, action index) into one int64; no state enables 65,536 actions."""
BATCH = 4096
"""Successors a worker generates between two filterings against the visited fingerprints
(``_Candidates.add``)."""
CHECK_EVERY = 256
"""States a worker expands between two looks at the clock."""
SERIAL_UNTIL = 1000
"""The level size at which ``groupcheck explore`` without ``--workers`` starts its worker
processes (``parallel_bfs``'s ``serial_until``): below it a level takes a fraction of a
second to expand, too little for a second process to win back its start-up and the
round trips of each level (``MIGRATION_UPGRADE``, whose levels hold at most 60 states,
took as long on 2 workers as on 1, docs/benchmarks.md)."""


YOUNG_COLLECTIONS_APART = 16
"""The most commands a worker serves between two collections of the young generations
(``_serve``): the distance doubles after each collection that finds no cyclic garbage
(none does on MUT2_LOSS4) and falls back to 1 after one that finds some."""

HAND_OVER_LEAST = 64
"""The fewest states a worker hands over to another to even a level out (``_balance``):
below it the difference costs less than the pickling, the round trip and the wait."""


def fingerprint(key: Hashable) -> int:
    """A 64-bit fingerprint of a canonical state key: Python's hash of the key (equal keys,
    equal hashes; the workers are forked, so they share the hash secret) through the
    splitmix64 finaliser, which spreads its bits over all 64 (a bijection: two keys share
    a fingerprint exactly when they share a hash)."""
    z = (hash(key) + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def _mix(raw: np.ndarray) -> np.ndarray:
    """``fingerprint`` of many keys at once, from their Python hashes (as uint64): the same
    splitmix64 finaliser, in numpy (uint64 arithmetic wraps, as ``& MASK64`` does)."""
    with np.errstate(over="ignore"):
        z = raw + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        mixed: np.ndarray = z ^ (z >> np.uint64(31))
    return mixed


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Which of ``values`` are in the sorted array ``sorted_set``: a binary search per
    value (``np.isin`` would sort the whole set again on every call), in increasing order
    of the values, so that successive searches walk near paths of a set too large for the
    caches (three times faster on two million fingerprints)."""
    if len(sorted_set) == 0:
        return np.zeros(len(values), dtype=bool)
    order = np.argsort(values)
    ordered = values[order]
    at = np.searchsorted(sorted_set, ordered)
    at[at == len(sorted_set)] = 0
    found = np.empty(len(values), dtype=bool)
    found[order] = sorted_set[at] == ordered
    return found


def _unique(values: np.ndarray) -> np.ndarray:
    """``values`` sorted, without duplicates: ``np.unique``'s result, by a sort and a
    comparison of neighbours (``np.unique`` took thirteen times as long on a level's
    fingerprints, numpy 2.4)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def _merge(sorted_set: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The sorted array of ``sorted_set`` and ``values``, without duplicates: the values
    are sorted and inserted (``np.union1d`` would sort the whole set again, a cost that
    grows with every level)."""
    add = _unique(values)
    add = add[~_member(add, sorted_set)]
    return np.insert(sorted_set, np.searchsorted(sorted_set, add), add)


def collision_probability(distinct: int, generated: int) -> float:
    """TLC's optimistic estimate of the probability that two of the states were given the
    same fingerprint: n·(m − n) / 2^64 for n distinct states among m generated."""
    return distinct * max(generated - distinct, 0) / float(1 << 64)


def default_workers() -> int:
    """The cores this process may run on, capped by its cgroup's CPU quota
    (``groupcheck.cores.usable_cores``)."""
    return usable_cores()


@dataclass(frozen=True)
class Event:
    """A violation at its place in the serial engine's order: ``(rank, action, phase)`` of
    the level being expanded (``action`` -1: the convergence check before the successors;
    ``phase`` 0: the step check, 1: the successor's state checks). ``fp`` is the state the
    counterexample path leads to, ``extra`` the action index appended after it (a step
    violation)."""

    order: tuple[int, int, int]
    violation: Violation
    fp: int
    extra: int | None = None


@dataclass
class _Level:
    """A worker's part of one level: fingerprints sorted, with their parents."""

    fps: np.ndarray
    parents: np.ndarray
    actions: np.ndarray


class _Share(NamedTuple):
    """What a worker keeps of its candidates for a level (indices into them): those whose
    parent pointers it stores (``record``: its discovery was the least), and those it
    holds and expands (``hold``, in rank order) with their ranks and the least key of
    their discoveries (any worker's). ``give``: the candidates it hands over to another
    worker to even the level out (``_balance``), in rank order, with their ranks, keys
    and the workers they go to (``give_to``)."""

    record: np.ndarray
    hold: np.ndarray
    ranks: np.ndarray
    keys: np.ndarray
    give: np.ndarray = np.zeros(0, dtype=np.int64)
    give_ranks: np.ndarray = np.zeros(0, dtype=np.int64)
    give_keys: np.ndarray = np.zeros(0, dtype=np.int64)
    give_to: np.ndarray = np.zeros(0, dtype=np.int64)


class _Candidates:
    """A worker's candidates for the next level, in the order it found them (increasing
    keys): fingerprint, key, the parent's fingerprint, the Python hash of the state as
    found (``exact``: two discoveries of a state that hash alike are taken for the same
    value, not only the same canonical key), the state and its view."""

    def __init__(self) -> None:
        self.chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self.states: list[AnyState] = []
        self.views: list[int] = []
        self.fps = np.zeros(0, dtype=np.uint64)
        self.keys = np.zeros(0, dtype=np.int64)
        self.parents = np.zeros(0, dtype=np.uint64)
        self.exact = np.zeros(0, dtype=np.int64)

    def add(
        self,
        hashes: list[int],
        keys: list[int],
        parents: list[int],
        states: list[AnyState],
        views: list[int],
        visited: np.ndarray,
    ) -> None:
        """Add the successors whose canonical keys have the Python hashes ``hashes`` (and
        the rest, alike) less those in ``visited``, and empty the lists (a batch at a
        time: the visited successors, most of them, are dropped early)."""
        if hashes:
            fps = _mix(np.array(hashes, dtype=np.int64).view(np.uint64))
            fresh = np.flatnonzero(~_member(fps, visited))
            exact = []
            for j in fresh.tolist():
                state = states[j]
                self.states.append(state)
                self.views.append(views[j])
                exact.append(hash(state))
            self.chunks.append(
                (
                    fps[fresh],
                    np.array(keys, dtype=np.int64)[fresh],
                    np.array(parents, dtype=np.uint64)[fresh],
                    np.array(exact, dtype=np.int64),
                )
            )
        for batch in (hashes, keys, parents, states, views):
            batch.clear()

    def close(self) -> None:
        """Join the batches into ``fps``, ``keys``, ``parents`` and ``exact``."""
        if self.chunks:
            self.fps, self.keys, self.parents, self.exact = (
                np.concatenate([c[i] for c in self.chunks]) for i in range(4)
            )
            self.chunks = []


@dataclass
class _Worker:
    """One worker's part of the search (lives in the worker process)."""

    index: int
    config: Config
    checker: Checker
    canonical: Callable[[AnyState], Hashable]
    check_convergence: bool
    convergence_bound: int
    z3: bool
    max_depth: int | None
    visited: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))
    """The fingerprints of every state visited on the levels expanded so far, by any
    worker: a successor found there is not a candidate."""
    levels: list[_Level] = field(default_factory=list)
    frontier: list[tuple[int, AnyState, int, int]] = field(default_factory=list)
    """This worker's part of the level: fingerprint, state, view (-1: not looked up) and
    rank, in rank order."""
    candidates: _Candidates = field(default_factory=_Candidates)
    converged: set[int] = field(default_factory=set)
    fair_memo: FairMemo = field(default_factory=FairMemo)
    undecided: list[int] = field(default_factory=list)
    converged_done: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))
    views: Views = field(init=False)
    """The views met, memoised as in the serial engine (``groupcheck.explore.views``)."""
    exchange: Callable[[dict[int, bytes]], list[bytes]] | None = None
    """Sends the coordinator the states this worker hands over (pickled, by the worker
    they go to) and answers those handed over to it (``_serve``)."""

    def __post_init__(self) -> None:
        self.views = Views(self.checker)

    # -- property checks -----------------------------------------------------------------
    def check_state(self, s: AnyState, view: int) -> list[Violation]:
        verdict = self.views.check_state(s, view)
        if not verdict and self.z3:
            verdict = _z3_checker(self.checker)(self.views.snapshots[view])
        return verdict

    def seed(self, init: AnyState, fp: int) -> None:
        """Hold the initial state as the one candidate of level 0 (key -1: before every
        discovery)."""
        self.candidates = _Candidates()
        self.candidates.add([hash(self.canonical(init))], [-1], [0], [init], [-1], self.visited)
        self.candidates.close()
        assert int(self.candidates.fps[0]) == fp

    def adopt(self, index: int) -> None:
        """Become worker ``index`` after searching the first levels alone (as worker 0 of
        1, then forked): every copy holds the candidates of the next level, and the
        coordinator tells each which of them it keeps. The parent pointers
        of the levels searched so far stay with worker 0. The visited fingerprints, the
        memoised verdicts, the convergence memo and the witnesses seen are valid for every
        worker and stay as they are."""
        self.index = index
        if index:
            empty = np.zeros(0, dtype=np.uint64)
            self.levels = [_Level(empty, empty, np.zeros(0, dtype=np.uint16)) for _ in self.levels]

    def known_to_converge(self, fp: int) -> bool:
        if fp in self.converged:
            return True
        i = int(np.searchsorted(self.converged_done, fp))
        return i < len(self.converged_done) and int(self.converged_done[i]) == fp

    # -- a level: keep the candidates that won, check them, expand them ----------------
    def advance(
        self,
        depth: int,
        expand: bool,
        deadline: float | None,
        level: np.ndarray,
        converged: np.ndarray,
        moving: bool,
        share: _Share,
    ) -> dict[str, Any]:
        """Keep this worker's ``share`` of the candidates of level ``depth`` and check
        them (``keep``); unless one violates a property or ``expand`` is False, expand
        them (``expand``). ``level``: the fingerprints of the whole level, sorted
        (every worker's visited set takes them); ``converged``: the states every worker
        found to converge on the level before (fair schedules pass through states other
        workers hold: without them each worker would run those schedules again).
        ``moving``: some worker hands states over this level (``_balance``): every worker
        sends the states it gives and takes those given to it (``exchange``)."""
        gifts = self.gifts(share) if moving else {}
        self.visited = _merge(self.visited, level)
        if len(converged):
            self.converged_done = _merge(self.converged_done, converged)
        taken: list[tuple[int, int, AnyState, int]] = []
        if moving:
            if self.exchange is None:
                raise RuntimeError("a worker alone cannot hand states over")
            for payload in self.exchange(gifts):
                taken.extend(
                    (rank, key, _shared(state), fp)
                    for rank, key, state, fp in pickle.loads(payload)
                )
        checked = self.keep(share, taken)
        answer: dict[str, Any] = {"checked": checked}
        if checked is None and expand:
            answer.update(self.expand(depth, deadline))
        answer["seen"] = sorted(self.checker.seen)
        return answer

    def gifts(self, share: _Share) -> dict[int, bytes]:
        """The candidates this worker hands over (``share.give``), pickled for each
        worker that takes some: (rank, key, state, fingerprint), in rank order."""
        held = self.candidates
        out: dict[int, list[tuple[int, int, AnyState, int]]] = {}
        for j, rank, key, to in zip(
            share.give.tolist(),
            share.give_ranks.tolist(),
            share.give_keys.tolist(),
            share.give_to.tolist(),
            strict=True,
        ):
            out.setdefault(to, []).append((rank, key, held.states[j], int(held.fps[j])))
        return {to: pickle.dumps(part, pickle.HIGHEST_PROTOCOL) for to, part in out.items()}

    def keep(
        self, share: _Share, taken: list[tuple[int, int, AnyState, int]] | None = None
    ) -> Event | None:
        """Store the parent pointers of the candidates this worker discovered first
        (``share.record``), make those it holds for the level (``share.hold``) and those
        handed over to it (``taken``: rank, key, state, fingerprint) its part of the
        level, in rank order, and check their state properties up to the first violation
        (later ones of this worker cannot come first)."""
        held = self.candidates
        self.candidates = _Candidates()
        fps = held.fps[share.record]
        keys = held.keys[share.record]
        order = np.argsort(fps)
        actions = np.where(keys < 0, 0, keys & ((1 << ACTION_BITS) - 1)).astype(np.uint16)
        self.levels.append(_Level(fps[order], held.parents[share.record][order], actions[order]))
        self.frontier = []
        states, views, all_fps = held.states, held.views, held.fps
        part: Iterable[tuple[int, int, AnyState, int, int]] = (
            (rank, key, states[j], views[j], int(all_fps[j]))
            for j, rank, key in zip(
                share.hold.tolist(), share.ranks.tolist(), share.keys.tolist(), strict=True
            )
        )
        if taken:
            part = sorted(
                [*part, *((rank, key, s, -1, fp) for rank, key, s, fp in taken)],
                key=lambda entry: entry[0],
            )
        for rank, key, state, found_view, fp in part:
            view = self.views.of(state) if found_view < 0 else found_view
            bad = self.check_state(state, view)
            if bad:
                order_of = (key >> ACTION_BITS, key & ((1 << ACTION_BITS) - 1), 1)
                return Event(order_of if key >= 0 else (-1, -1, 1), bad[0], fp)
            self.frontier.append((fp, state, view, rank))
        return None

    def expand(self, depth: int, deadline: float | None) -> dict[str, Any]:
        """Check convergence on and expand this worker's frontier of level ``depth`` (in
        rank order), holding each successor not visited yet as a candidate of the next
        level (its first discovery here: this worker's least key); stop at the first
        violation (later events of this worker cannot come first). The answer: the
        candidates' fingerprints and keys, the transitions of each state expanded, the
        violation, the states found to converge."""
        config = self.config
        family = family_of(config)  # resolved once per frontier, not per state
        enabled, step, epoch = family.enabled, family.step, family.client_epoch
        canonical_of = self.canonical
        table = self.views
        note_witnesses = self.checker.note_witnesses
        held = self.candidates
        visited = self.visited
        sent: set[int] = set()
        raws: list[int] = []
        keys: list[int] = []
        parents: list[int] = []
        news: list[AnyState] = []
        views: list[int] = []
        counts: list[tuple[int, int]] = []
        event: Event | None = None
        cut = False
        deeper = self.max_depth is None or depth < self.max_depth
        for i, (fp, state, known_view, rank) in enumerate(self.frontier):
            if deadline is not None and i % CHECK_EVERY == 0 and time.time() > deadline:
                cut = True
                break
            if (
                self.check_convergence
                and state.perturbations >= config.max_perturbations
                and not self.known_to_converge(fp)
            ):
                self.converged.add(fp)
                reached: list[AnyState] = []
                _, _, ok = fair_schedule(
                    state, config, self.convergence_bound, states=reached, memo=self.fair_memo
                )
                if not ok:
                    # Claimed only when shown, as the serial engine does (a fair loop or a
                    # stuck state); else the bound only cut the schedule: undecided.
                    why = fair_loop(state, config, self.convergence_bound, memo=self.fair_memo)
                    if why is not None and not why.shown:
                        self.undecided.append(why.bound)
                    else:
                        message = CONVERGENCE.description + (
                            f" Shown: {why.describe()}." if why is not None else ""
                        )
                        v = Violation(CONVERGENCE.name, message, CONVERGENCE.kind.value)
                        event = Event((rank, -1, 0), v, fp)
                        break
                for s in reached:
                    self.converged.add(fingerprint(canonical_of(s)))
            if not deeper:
                continue
            n = 0
            pre_view = known_view  # looked up once per state
            base = rank << ACTION_BITS
            for a, action in enumerate(enabled(state, config)):
                new = step(state, action, config)
                n += 1
                post_view = -1
                if _step_may_matter(state, new, epoch):
                    if pre_view < 0:
                        pre_view = table.of(state)
                    post_view = table.after(pre_view, state, new)
                    bad = table.check_step(state, pre_view, action, new, post_view)
                else:
                    note_witnesses(state, action, new)
                    bad = []
                if new is not state:
                    raw = hash(canonical_of(new))
                    if raw not in sent:
                        # The first discovery in rank order is this worker's least one.
                        sent.add(raw)
                        raws.append(raw)
                        keys.append(base | a)
                        parents.append(fp)
                        news.append(new)
                        views.append(post_view)
                        if len(raws) >= BATCH:
                            held.add(raws, keys, parents, news, views, visited)
                if bad:
                    event = Event((rank, a, 0), bad[0], fp, extra=a)
                    break
            counts.append((rank, n))
            if event is not None:
                break
        held.add(raws, keys, parents, news, views, visited)
        held.close()
        self.frontier = []
        marked = np.fromiter(self.converged, dtype=np.uint64, count=len(self.converged))
        if self.converged:
            self.converged_done = _merge(self.converged_done, marked)
            self.converged = set()
        return {
            "fps": held.fps,
            "keys": held.keys,
            "exact": held.exact,
            "converged": marked,
            "counts": np.array(counts, dtype=np.int64).reshape(-1, 2),
            "event": event,
            "cut": cut,
            "undecided": self.take_undecided(),
        }

    def take_undecided(self) -> list[int]:
        """The states met since the last answer whose fair schedule hit its bound without
        showing non-convergence (``invariants.liveness.fair_loop``)."""
        taken, self.undecided = self.undecided, []
        return taken

    def parent(self, depth: int, fp: int) -> tuple[int, int] | None:
        """The parent pointer of state ``fp`` of level ``depth`` when this worker kept it."""
        level = self.levels[depth]
        i = int(np.searchsorted(level.fps, np.uint64(fp)))
        if i >= len(level.fps) or int(level.fps[i]) != fp:
            return None
        return int(level.parents[i]), int(level.actions[i])

    def memory(self) -> int:
        """Bytes of the stored fingerprints, parent pointers and convergence memo."""
        return int(
            self.visited.nbytes
            + sum(lv.fps.nbytes + lv.parents.nbytes + lv.actions.nbytes for lv in self.levels)
            + self.converged_done.nbytes
        )


def _shared(state: AnyState) -> AnyState:
    """A state another worker handed over, with the group record this worker's steps
    build for its value (``model.consumer.system.with_shared_group``): an unpickled group
    is an equal record of its own, which the memos and view tables would compare field
    by field, in the state and in every successor that leaves the group as it is."""
    shared: AnyState = family_of_state(state).shared(state)
    return shared


def _serve(worker: _Worker, conn: Connection, index: int) -> None:
    """A worker's command loop (``index``: the worker a forked copy of the search's only
    worker becomes, ``_Worker.adopt``). The cyclic garbage collector runs only on the
    young generations, between commands: states are acyclic values, and full collections
    that walk every live frontier state and memo entry cost a fifth of a worker's time on
    MUT2_LOSSY (docs/benchmarks.md). A collection walks every young object still alive,
    the next level's states among them, and on MUT2_LOSS4 finds nothing to free: after
    each that frees nothing the worker serves twice as many commands before the next,
    up to ``YOUNG_COLLECTIONS_APART``, so cyclic garbage, were some step to make any, lives
    for at most that many levels."""
    gc.disable()
    apart, since = 1, 0

    def exchange(gifts: dict[int, bytes]) -> list[bytes]:
        conn.send(("ok", gifts))
        taken: list[bytes] = conn.recv()
        return taken

    worker.exchange = exchange
    try:
        worker.adopt(index)
        while True:
            since += 1
            if since >= apart:
                apart, since = _apart_after(apart, freed=gc.collect(1)), 0
            command, *args = conn.recv()
            if command == "stop":
                conn.send(("ok", None))
                return
            conn.send(("ok", _run(worker, command, args)))
    except UserCodeError as e:  # a user's rule failed: the coordinator reports it as such
        conn.send(("user", e))
    except BaseException:  # reported to the coordinator, which raises it
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def _apart_after(apart: int, *, freed: int) -> int:
    """The commands a worker serves before its next collection of the young generations,
    after one that freed ``freed`` objects and came ``apart`` commands after the one
    before it (``_serve``)."""
    return 1 if freed else min(2 * apart, YOUNG_COLLECTIONS_APART)


def _run(worker: _Worker, command: str, args: list[Any]) -> Any:
    if command == "advance":
        return worker.advance(*args)
    if command == "parent":
        return worker.parent(*args)
    if command == "memory":
        return worker.memory()
    raise ValueError(f"unknown worker command {command!r}")


class _Inline:
    """The search's only worker, in the calling process: the first levels of a search, and
    the whole of a search whose levels stay small."""

    workers = 1

    def __init__(self, worker: _Worker) -> None:
        self.worker = worker

    def all(
        self, command: str, *args: Any, each: list[Any] | None = None, relay: bool = False
    ) -> list[Any]:
        assert not relay, "a worker alone hands no state over"
        return [_run(self.worker, command, list(args) if each is None else [*args, each[0]])]

    def close(self) -> None:
        pass


class _Pool:
    """The worker processes (forked: they inherit the config, its rules and the hash
    secret that fingerprints depend on)."""

    def __init__(self, n: int, worker: _Worker) -> None:
        """``n`` workers forked from ``worker``, the one that searched the levels so far:
        each copy adopts its part of it (``_Worker.adopt``)."""
        ctx = mp.get_context("fork")
        self.workers = n
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        for i in range(n):
            here, there = ctx.Pipe()
            p = ctx.Process(target=_serve, args=(worker, there, i), daemon=True)
            p.start()
            there.close()
            self.conns.append(here)
            self.procs.append(p)

    def all(
        self, command: str, *args: Any, each: list[Any] | None = None, relay: bool = False
    ) -> list[Any]:
        """Send ``command`` with ``args`` (and ``each[i]`` to worker ``i``) to every
        worker; their answers. With ``relay`` each worker first sends the states it hands
        over, by the worker they go to, and each is sent those handed over to it
        (``_Worker.advance``), still pickled."""
        for i, conn in enumerate(self.conns):
            conn.send((command, *args) if each is None else (command, *args, each[i]))
        if relay:
            gifts: list[dict[int, bytes]] = [self._answer(conn) for conn in self.conns]
            for i, conn in enumerate(self.conns):
                conn.send([g[i] for g in gifts if i in g])
        return [self._answer(conn) for conn in self.conns]

    @staticmethod
    def _answer(conn: Connection) -> Any:
        status, value = conn.recv()
        if status == "user":
            raise value
        if status == "error":
            raise RuntimeError(f"a BFS worker failed:\n{value}")
        return value

    def close(self) -> None:
        if sys.exc_info()[0] is not None:
            # Leaving on an exception (the budget's watchdog, a signal, a failed worker):
            # a worker may be deep in a rule that never returns — do not wait for it.
            self.abort()
            return
        for conn, p in zip(self.conns, self.procs, strict=True):
            if p.is_alive():
                try:
                    conn.send(("stop",))
                    conn.recv()
                except (OSError, EOFError):
                    pass
            conn.close()
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
                p.join()

    def abort(self) -> None:
        """End every worker now (SIGTERM, then SIGKILL after a second)."""
        for p in self.procs:
            if p.is_alive():
                p.terminate()
        for conn, p in zip(self.conns, self.procs, strict=True):
            conn.close()
            p.join(timeout=1)
            if p.is_alive():
                p.kill()
                p.join()


def parallel_bfs(
    config: Config,
    *,
    workers: int,
    checker_factory: Callable[[], Checker] = Checker,
    max_states: int | None = None,
    max_depth: int | None = None,
    symmetry: bool = False,
    check_convergence: bool = True,
    convergence_bound: int = DEFAULT_BOUND,
    budget_seconds: float | None = None,
    progress: ProgressFn | None = None,
    z3: bool = False,
    serial_until: int = 0,
) -> ExploreResult:
    """Explore ``config`` breadth-first on ``workers`` processes (module docstring). The
    result is "ok" only when every reachable state (or every state within ``max_depth``)
    was visited and every witness hit; ``max_states`` and ``budget_seconds`` cutting the
    search short make it "inconclusive".

    The search runs in the calling process, as the only worker, until it has expanded a
    level of at least ``serial_until`` states and at least ``workers`` states; then the
    workers are forked from it and take over the next level (``_Worker.adopt``). The
    search is the same either way; with ``serial_until`` a small config is searched
    without starting processes whose start-up and per-level round trips would cost more
    than they save. The result's ``workers`` says how many processes searched."""
    start = time.perf_counter()
    deadline = None if budget_seconds is None else time.time() + budget_seconds
    normal = channel_normal_form(config)
    if symmetry:
        by_symmetry = canonicaliser(config)

        def canonical(s: AnyState) -> Hashable:
            return normal(by_symmetry(normal(s)))  # type: ignore[arg-type]

    else:
        canonical = normal  # type: ignore[assignment]
    required = required_witnesses(config)
    init = system.initial(config)
    init_fp = fingerprint(canonical(init))

    worker = _Worker(
        index=0,
        config=config,
        checker=checker_factory(),
        canonical=canonical,
        check_convergence=check_convergence,
        convergence_bound=convergence_bound,
        z3=z3,
        max_depth=max_depth,
    )
    worker.seed(init, init_fp)
    # The search begins as the only worker; the workers are forked from it once a level
    # holds a state for each (and ``serial_until`` states).
    hand_over = max(serial_until, workers)
    pool: _Pool | _Inline = _Inline(worker)
    # Each worker's candidates for the level: fingerprints, keys, exact hashes.
    candidates = [(worker.candidates.fps, worker.candidates.keys, worker.candidates.exact)]
    del worker  # the workers forked from it hold it from then on
    try:
        split = False  # the candidates are the one worker's that the forked copies share
        distinct = 0
        steps = 0
        depth = 0
        seen: set[str] = set()
        cut: str | None = None
        undecided: list[int] = []  # the bound of each undecided state
        exhausted = True
        pending: list[Event] = []  # violations met expanding the previous level
        counts = np.zeros((0, 2), dtype=np.int64)  # (rank, transitions) of that level
        converged = np.zeros(0, dtype=np.uint64)  # states found to converge on that level
        while True:
            merged, level, shares = _assign(candidates, pool.workers, split)
            split = False
            bound = f"the state bound ({max_states} states) was reached before the search was done"
            full = max_states is not None and distinct + len(merged) >= max_states
            late = deadline is not None and time.time() > deadline
            expand = not (pending or full or late)
            answers = []
            if len(merged):
                moving = any(len(share.give) for share in shares)
                answers = pool.all(
                    "advance",
                    depth,
                    expand,
                    deadline,
                    level,
                    converged,
                    moving,
                    each=shares,
                    relay=moving,
                )
            for a in answers:
                seen.update(a["seen"])
            events = pending + [a["checked"] for a in answers if a["checked"] is not None]
            if full:
                assert max_states is not None
                # The serial engine stops before the first state it would pop holding
                # max_states states: state ``stop`` of the level expanded last (it has not
                # met the events from there on).
                stop = (int(merged[max_states - distinct - 1]) >> ACTION_BITS) + 1 if depth else 0
                events = [e for e in events if depth == 0 or e.order < (stop, -1, 0)]
                if not events:
                    if depth:
                        distinct += int(np.searchsorted(merged, stop << ACTION_BITS))
                        steps += int(counts[counts[:, 0] < stop, 1].sum())
                    else:
                        distinct = 1
                    cut = bound
                    break
            if events:
                first = min(events, key=lambda e: e.order)
                return _violation(
                    pool,
                    config,
                    workers,
                    first,
                    depth,
                    distinct,
                    steps,
                    merged,
                    counts,
                    seen=seen,
                    missed=_missed(checker_factory, required, seen),
                    seconds=time.perf_counter() - start,
                )
            distinct += len(merged)
            steps += int(counts[:, 1].sum())
            if len(merged) == 0:
                depth -= 1
                break
            if progress is not None:
                progress(distinct, depth, len(merged))
            if late:
                cut = f"the time budget ({budget_seconds:g} s) ran out before the search was done"
                break
            for a in answers:
                undecided.extend(a["undecided"])
            converged = np.concatenate([a["converged"] for a in answers])
            counts = np.concatenate([a["counts"] for a in answers])
            candidates = [(a["fps"], a["keys"], a["exact"]) for a in answers]
            pending = [a["event"] for a in answers if a["event"] is not None]
            if pending:
                depth += 1  # the candidates found before the violation are checked first
                continue
            if any(a["cut"] for a in answers):
                steps += int(counts[:, 1].sum())
                cut = f"the time budget ({budget_seconds:g} s) ran out before the search was done"
                break
            if max_depth is not None and depth >= max_depth:
                break
            if isinstance(pool, _Inline) and workers > 1 and len(level) >= hand_over:
                pool = _Pool(workers, pool.worker)
                split = True
            depth += 1
        if cut is not None or (max_depth is not None and depth >= max_depth and distinct):
            exhausted = False
        memory = sum(pool.all("memory"))
    finally:
        pool.close()
    missed = _missed(checker_factory, required, seen)
    result, reasons = conclude(
        violated=False,
        complete=cut is None,
        incomplete_reason=cut or "",
        missed_witnesses=missed,
        unchecked=undecided_reason(len(undecided), max(undecided, default=0)),
    )
    scope = clean_scope(distinct, exhausted=exhausted, cut=cut, max_depth=max_depth)
    return ExploreResult(
        engine="bfs",
        result=result.value,
        distinct_states=distinct,
        depth=depth,
        steps=steps,
        witnesses=sorted(seen),
        missed_witnesses=missed,
        seconds=time.perf_counter() - start,
        exhausted=exhausted,
        reasons=reasons,
        checked=scope + _where(pool.workers, workers, hand_over),
        collision_probability=collision_probability(distinct, steps),
        bytes_per_state=memory / distinct if distinct else None,
        workers=pool.workers,
    )


def _assign(
    candidates: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    workers: int,
    split: bool,
    least: int | None = None,
) -> tuple[np.ndarray, np.ndarray, list[_Share]]:
    """The level from every worker's candidates (fingerprints, keys, ``exact`` hashes):
    of the discoveries of a state, the least key wins — the serial engine's first — and
    the worker that made it stores the state's parent pointer. Returns the winners' keys
    sorted (a state's rank is the index of its key), their fingerprints sorted, and each
    worker's share.

    Which worker holds and expands a state is free among those whose discovery is the same
    value as the least one (the same ``exact`` hash, not only the same canonical key: the
    order of the enabled actions, hence the keys of the successors, is the found state's):
    each state goes to the one that discovered it first, then states found alike by
    several workers move from the workers holding most to those holding least, without a
    state crossing processes (``_even_out``). What differences remain, the workers holding
    most hand states over to those holding least (``_balance``, ``least``: the smallest
    hand-over, ``HAND_OVER_LEAST`` by default); the state itself goes, the value found,
    so its enabled actions stay the same. With ``split`` every worker is a forked copy of
    the one worker that found the candidates: they hold the states by rank, in turn."""
    if least is None:
        least = HAND_OVER_LEAST
    sizes = [len(c[0]) for c in candidates]
    fps = np.concatenate([c[0] for c in candidates])
    keys = np.concatenate([c[1] for c in candidates])
    exact = np.concatenate([c[2] for c in candidates])
    order = np.lexsort((keys, fps))
    by_fp = fps[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = by_fp[1:] != by_fp[:-1]
    lead = order[first]  # each state's least discovery
    lead_keys = keys[lead]
    by_key = np.argsort(lead_keys)
    merged = lead_keys[by_key]
    ranks = np.empty(len(by_key), dtype=np.int64)
    ranks[by_key] = np.arange(len(by_key))  # the keys differ: a state's rank is its key's
    level = by_fp[first]
    if split:
        shares = []
        for i in range(workers):
            mine = np.flatnonzero(ranks % workers == i)
            mine = mine[np.argsort(ranks[mine])]
            rows = lead[mine]
            shares.append(_Share(np.sort(rows), rows, ranks[mine], lead_keys[mine]))
        return merged, level, shares
    finder = np.repeat(np.arange(len(candidates)), sizes)
    holder = lead.copy()
    group = np.cumsum(first) - 1
    alike = ~first & (exact[order] == exact[lead][group])
    _even_out(holder, finder, order[alike], group[alike], workers)
    held_by = finder[holder]
    to = _balance(held_by, workers, least)
    shares = []
    at = 0
    for i, size in enumerate(sizes):
        recorded = lead[finder[lead] == i]
        mine = np.flatnonzero((held_by == i) & (to == i))
        mine = mine[np.argsort(ranks[mine])]
        given = np.flatnonzero((held_by == i) & (to != i))
        given = given[np.argsort(ranks[given])]
        shares.append(
            _Share(
                np.sort(recorded) - at,
                holder[mine] - at,
                ranks[mine],
                lead_keys[mine],
                give=holder[given] - at,
                give_ranks=ranks[given],
                give_keys=lead_keys[given],
                give_to=to[given],
            )
        )
        at += size
    return merged, level, shares


def _balance(held_by: np.ndarray, workers: int, least: int) -> np.ndarray:
    """The worker that checks and expands each state of a level (``held_by``: the worker
    holding it): the states stay where they are, but for those handed over from the
    workers holding most to those holding least until no two differ by ``2 * least`` or
    more. Which states go is spread evenly over those of the giver, so that both keep
    states of every part of the level. Handing a state over costs its pickling and
    unpickling (about a quarter of its expansion, docs/benchmarks.md): ``least`` keeps
    small differences where they are."""
    to = held_by.copy()
    loads = np.bincount(held_by, minlength=workers)
    for _ in range(workers * workers):  # each round moves the largest difference left
        heavy, light = int(np.argmax(loads)), int(np.argmin(loads))
        excess = int(loads[heavy] - loads[light]) // 2
        if excess < least or excess == 0:
            break
        can = np.flatnonzero(to == heavy)
        take = can[np.linspace(0, len(can) - 1, excess).astype(np.int64)]
        to[take] = light
        loads[heavy] -= excess
        loads[light] += excess
    return to


def _even_out(
    holder: np.ndarray, finder: np.ndarray, rows: np.ndarray, groups: np.ndarray, workers: int
) -> None:
    """Move states from the workers holding most to those holding least: state
    ``groups[k]`` may go to the worker that found it as row ``rows[k]`` (``holder``: the
    row each state is held by, changed in place; ``finder``: the worker of each row)."""
    loads = np.bincount(finder[holder], minlength=workers)
    for _ in range(2):
        for heavy in np.argsort(-loads, kind="stable").tolist():
            for light in np.argsort(loads, kind="stable").tolist():
                excess = int(loads[heavy] - loads[light]) // 2
                if excess <= 0:
                    break
                can = np.flatnonzero((finder[rows] == light) & (finder[holder[groups]] == heavy))
                if len(can) == 0:
                    continue
                # Evenly spread over the level, so that both keep states of every rank.
                take = can[np.linspace(0, len(can) - 1, min(excess, len(can))).astype(np.int64)]
                take = _unique(take)
                holder[groups[take]] = rows[take]
                loads[heavy] -= len(take)
                loads[light] += len(take)


def _where(used: int, workers: int, hand_over: int) -> str:
    """Where a search ran, in words (the end of ``ExploreResult.checked``)."""
    if used > 1:
        return f" on {used} workers"
    if workers > 1:
        return f" in one process (no level reached {hand_over} states)"
    return " on 1 worker"


def _missed(
    checker_factory: Callable[[], Checker], required: set[str] | frozenset[str], seen: set[str]
) -> list[str]:
    checker = checker_factory()
    checker.seen.update(seen)
    return checker.missed_witnesses(required)


def _violation(
    pool: _Pool | _Inline,
    config: Config,
    workers: int,
    first: Event,
    depth: int,
    before: int,
    steps: int,
    merged: np.ndarray,
    counts: np.ndarray,
    *,
    seen: set[str],
    missed: list[str],
    seconds: float,
) -> ExploreResult:
    """The result for the first violating event; ``depth`` is the level just absorbed,
    ``before`` the states of the levels above it, ``merged`` its keys and ``counts`` the
    transitions of the level expanded before it. The states and steps reported are those
    the serial engine had met when it stopped at the same event."""
    rank, action, phase = first.order
    if rank < 0:  # the initial state
        found_states, found_steps, at = 1, 0, 0
    else:
        if action < 0:  # convergence, checked before the state's successors
            found_states = before + int(np.searchsorted(merged, rank << ACTION_BITS))
        else:
            key = (rank << ACTION_BITS) | action
            found_states = before + int(np.searchsorted(merged, key, side="right"))
        prior = int(counts[counts[:, 0] < rank, 1].sum())
        found_steps = steps + prior + action + 1
        at = depth if phase == 1 else depth - 1
    path = _rebuild(pool, config, workers, first.fp, at, first.extra)
    return ExploreResult(
        engine="bfs",
        result="violation",
        property=first.violation.property,
        message=first.violation.message,
        path=path,
        distinct_states=found_states,
        depth=at,
        steps=found_steps,
        witnesses=sorted(seen),
        missed_witnesses=missed,
        seconds=seconds,
        exhausted=False,
        collision_probability=collision_probability(found_states, found_steps),
        workers=pool.workers,
    )


def _rebuild(
    pool: _Pool | _Inline, config: Config, workers: int, fp: int, depth: int, extra: int | None
) -> Path:
    """The path to the state ``fp`` of level ``depth`` (then the ``extra``-th action),
    from the parent pointers, replayed from the initial state by action index."""
    indices: list[int] = []
    for d in range(depth, 0, -1):
        found = [p for p in pool.all("parent", d, fp) if p is not None]
        assert len(found) == 1, "a state has one owner"
        parent, action = found[0]
        indices.append(action)
        fp = parent
    indices.reverse()
    if extra is not None:
        indices.append(extra)
    state = system.initial(config)
    actions: list[Action] = []
    for i in indices:
        action = system.enabled(state, config)[i]
        actions.append(action)
        state = system.step(state, action, config)
    return Path(config, tuple(actions))
