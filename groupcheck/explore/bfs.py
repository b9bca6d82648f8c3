"""Exhaustive breadth-first search, with optional symmetry reduction.

Symmetry reduction (``symmetry=True``, CLI ``--symmetry``) merges states that differ by a
renaming of interchangeable clients; it halves the distinct states of two symmetric
clients but costs a renaming per successor, so on small presets plain BFS is faster in
wall-clock time and is the default.

Every state reachable through ``system.enabled``/``system.step`` is visited once (up to
symmetry); state properties are checked on every new state, step properties on every
transition, and convergence under a fair schedule from every state whose perturbation
budget is spent — after the last perturbation (memoised: every state on a converging
schedule is known to converge). BFS order makes the first counterexample a shortest one;
a convergence counterexample is a shortest path to a state from which the fair schedule
does not converge (replay runs the schedule).

States that differ only in how the network's channels interleave are merged
(``channel_normal_form``): without ``Config.reorder`` the model delivers only the head of
each channel and reads the network as a set otherwise, so two such states have the same
enabled actions and corresponding successors, and every property reads them alike. The
merge is exact — it only saves work — and keeps BFS counterexamples shortest.
"""

from __future__ import annotations

import functools
import gc
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec

import networkx as nx

from groupcheck.explore.channels import channel_normal_form
from groupcheck.explore.rebalance import RebalanceTimes
from groupcheck.explore.result import ExploreResult, Violations, settle
from groupcheck.explore.symmetry import canonicaliser
from groupcheck.explore.views import Views
from invariants.check import Checker, Violation
from invariants.liveness import (
    CONVERGENCE,
    DEFAULT_BOUND,
    REBALANCE_TIME,
    FairMemo,
    fair_loop,
    fair_schedule,
    required_witnesses,
    undecided_reason,
)
from invariants.verdict import conclude
from model.actions import Action
from model.classic.records import ClassicClient
from model.config import Config
from model.family import family_of
from model.path import Path
from model.records import Client
from model.system import AnyState

ProgressFn = Callable[[int, int, int], None]


@dataclass(slots=True)
class _Node:
    state: AnyState
    depth: int
    parent: Hashable | None
    action: Action | None
    view: int = -1
    """The number of the state's snapshot key (``view_of``) once computed: a state's key
    is computed when it is reached and read again when it is expanded."""


def _path_to(nodes: dict[Hashable, _Node], key: Hashable, config: Config) -> list[Action]:
    actions: list[Action] = []
    node = nodes[key]
    while node.parent is not None:
        assert node.action is not None
        actions.append(node.action)
        node = nodes[node.parent]
    actions.reverse()
    return actions


YOUNG_COLLECTION_EVERY = 2048
"""States expanded between two collections of the young generations (``bfs``)."""


P = ParamSpec("P")


def _young_collections_only(search: Callable[P, ExploreResult]) -> Callable[P, ExploreResult]:
    """Run ``search`` with the cyclic garbage collector's automatic runs off; the search
    collects the young generations itself every ``YOUNG_COLLECTION_EVERY`` states
    (``gc.collect(1)``). States are acyclic values that live until the search ends, so the
    full collections that the growing visited set triggers walk every stored state and free
    nothing (as in the parallel workers, ``groupcheck.explore.pbfs._serve``)."""

    @functools.wraps(search)
    def run(*args: P.args, **kwargs: P.kwargs) -> ExploreResult:
        enabled = gc.isenabled()
        gc.disable()
        try:
            return search(*args, **kwargs)
        finally:
            if enabled:
                gc.enable()

    return run


@_young_collections_only
def bfs(
    config: Config,
    *,
    checker_factory: Callable[[], Checker] = Checker,
    max_states: int | None = None,
    max_depth: int | None = None,
    symmetry: bool = False,
    check_convergence: bool = True,
    convergence_bound: int = DEFAULT_BOUND,
    budget_seconds: float | None = None,
    progress: ProgressFn | None = None,
    stop_on: str | None = None,
    z3: bool = False,
    graph: nx.DiGraph | None = None,
    rebalance: RebalanceTimes | None = None,
    violations: Violations | None = None,
) -> ExploreResult:
    """Explore ``config`` breadth-first. With ``violations`` active (``Violations``: known
    findings expected, or every property asked for) the search goes on past violations —
    past violating states too — recording each property's first violation, a shortest one
    in BFS order, until ``violations`` says to stop or the search ends. ``stop_on`` ignores
    violations of other properties (used to measure the shortest counterexample of one
    property). ``z3`` re-checks every
    state property on every visited state with Z3 as well. ``graph`` (a networkx DiGraph)
    receives the state graph: nodes are canonical keys with ``depth``, edges carry ``kind``.
    ``rebalance`` receives the rebalance time measured at every state a perturbation leads
    to (``groupcheck.explore.rebalance``); a config that declares ``max_rebalance_steps``
    is checked against it (``RebalanceTimeBound``).

    The result is "ok" only when the search is complete — every reachable state visited
    (``exhausted``), or every state within ``max_depth`` steps when a depth is given — and
    every witness was hit; ``max_states`` or ``budget_seconds`` cutting it short makes it
    "inconclusive" (``invariants.verdict``)."""
    start = time.perf_counter()
    checker = checker_factory()
    required = required_witnesses(config)
    normal = channel_normal_form(config)
    if symmetry:
        by_symmetry = canonicaliser(config)

        def canonical(s: AnyState) -> Hashable:
            return normal(by_symmetry(normal(s)))  # type: ignore[arg-type]

    else:
        canonical = normal  # type: ignore[assignment]
    # Properties read a state only through its snapshot: verdicts are memoised per view
    # (``groupcheck.explore.views``).
    views = Views(checker)
    view_of = views.of
    check_state = views.check_state

    family = family_of(config)  # resolved once: every state of the search is of it
    enabled, step, epoch = family.enabled, family.step, family.client_epoch
    init = family.initial(config)
    init_key = canonical(init)
    nodes: dict[Hashable, _Node] = {init_key: _Node(init, 0, None, None)}
    queue: deque[tuple[Hashable, _Node]] = deque([(init_key, nodes[init_key])])
    steps = 0
    converged_checked: set[Hashable] = set()
    fair_memo = FairMemo()
    z3_check = _z3_checker(checker) if z3 else None
    if graph is not None:
        graph.add_node(init_key, depth=0, state=init)

    collect = violations if violations is not None and violations.active else None

    undecided: list[int] = []  # the bound of each undecided state
    """States from which the fair schedule hit its bound without showing non-convergence."""

    def found(violation: Violation, key: Hashable, extra: list[Action]) -> ExploreResult | None:
        actions = _path_to(nodes, key, config) + extra
        if collect is not None:
            if not collect.note(
                violation.property, violation.message, Path(config, tuple(actions))
            ):
                return None
            why = (
                "the search stopped once every property it checks was violated"
                if collect.done()
                else f"the search stopped at a violation of {violation.property}"
            )
            return finish(why, exhausted=False)
        return ExploreResult(
            engine="bfs",
            result="violation",
            property=violation.property,
            message=violation.message,
            path=Path(config, tuple(actions)),
            distinct_states=len(nodes),
            depth=nodes[key].depth,
            steps=steps,
            witnesses=sorted(checker.seen),
            missed_witnesses=checker.missed_witnesses(required),
            seconds=time.perf_counter() - start,
            exhausted=False,
        )

    def relevant(vs: list[Violation]) -> list[Violation]:
        return [v for v in vs if stop_on is None or v.property == stop_on]

    def found_all(vs: list[Violation], key: Hashable, extra: list[Action]) -> ExploreResult | None:
        """``found`` for each violated property (one violation each) up to a stop."""
        seen: set[str] = set()
        for v in vs:
            if v.property in seen:
                continue
            seen.add(v.property)
            stop = found(v, key, extra)
            if stop is not None:
                return stop
        return None

    def finish(cut: str | None, *, exhausted: bool) -> ExploreResult:
        """The result of a search that ran to its end (or was cut, ``cut`` saying why)."""
        if rebalance is not None and rebalance.worst_key is not None:
            rebalance.worst_actions = tuple(_path_to(nodes, rebalance.worst_key, config))
        if rebalance is not None:
            rebalance.complete = cut is None
            if rebalance.per_start is not None:  # the comparison's examples need their paths
                rebalance.path_to = lambda k: tuple(_path_to(nodes, k, config))
        missed = checker.missed_witnesses(required)
        result, reasons = conclude(
            violated=False,
            complete=cut is None,
            incomplete_reason=cut or "",
            missed_witnesses=missed,
            unchecked=undecided_reason(len(undecided), max(undecided, default=0)),
        )
        scope = clean_scope(len(nodes), exhausted=exhausted, cut=cut, max_depth=max_depth)
        out = ExploreResult(
            engine="bfs",
            result=result.value,
            distinct_states=len(nodes),
            depth=max_seen_depth,
            steps=steps,
            witnesses=sorted(checker.seen),
            missed_witnesses=missed,
            seconds=time.perf_counter() - start,
            exhausted=exhausted,
            reasons=reasons,
            checked=scope,
        )
        if collect is not None:
            settle(out, collect)
        return out

    max_seen_depth = 0
    init_view = nodes[init_key].view = view_of(init)
    bad = relevant(check_state(init, init_view))
    if bad:
        stop = found_all(bad, init_key, [])
        if stop is not None:
            return stop
    bound = config.max_rebalance_steps if stop_on in (None, REBALANCE_TIME.name) else None
    if bound is not None and rebalance is None:
        rebalance = RebalanceTimes()

    def too_slow(state: AnyState, key: Hashable, depth: int) -> Violation | None:
        """Measure the rebalance starting at ``state``; a violation when it exceeds the
        config's bound."""
        assert rebalance is not None
        tail = rebalance.note(state, config, key=key, depth=depth)
        if bound is None or not tail.converged or tail.steps <= bound:
            return None
        message = (
            f"after the last perturbation the group needs {tail.steps} fair steps to "
            f"converge; the config allows {bound}"
        )
        return Violation(REBALANCE_TIME.name, message, REBALANCE_TIME.kind.value)

    if rebalance is not None:
        slow = too_slow(init, init_key, 0)
        if slow is not None:
            stop = found(slow, init_key, [])
            if stop is not None:
                return stop
    expanded = 0
    exhausted = True
    cut: str | None = None  # why the search stopped before it was complete
    if progress is not None:
        progress(len(nodes), 0, len(queue))  # a first line at once, as the parallel engine
    while queue:
        if max_states is not None and len(nodes) >= max_states:
            exhausted = False
            cut = f"the state bound ({max_states} states) was reached before the search was done"
            break
        if budget_seconds is not None and time.perf_counter() - start > budget_seconds:
            exhausted = False
            cut = f"the time budget ({budget_seconds:g} s) ran out before the search was done"
            break
        key, node = queue.popleft()
        state = node.state
        expanded += 1
        if expanded % YOUNG_COLLECTION_EVERY == 0:
            gc.collect(1)
        pre_view = node.view
        if (
            check_convergence
            # After the last perturbation; when measuring the shortest convergence
            # counterexample (stop_on), from every state — as minimisation does.
            and (state.perturbations >= config.max_perturbations or stop_on == CONVERGENCE.name)
            and (stop_on is None or stop_on == CONVERGENCE.name)
            and _added(converged_checked, key)
        ):
            reached: list[AnyState] = []
            _, _, ok = fair_schedule(
                state, config, convergence_bound, states=reached, memo=fair_memo
            )
            if not ok:
                # The counterexample is the path to a state from which the fair schedule
                # does not converge — when a fair loop or a stuck state shows it (else the
                # bound only cut the schedule: undecided, and the run inconclusive);
                # replaying it runs that schedule again.
                why = fair_loop(state, config, convergence_bound, memo=fair_memo)
                if why is not None and not why.shown:
                    undecided.append(why.bound)
                else:
                    message = CONVERGENCE.description + (
                        f" Shown: {why.describe()}." if why is not None else ""
                    )
                    v = Violation(CONVERGENCE.name, message, CONVERGENCE.kind.value)
                    stop = found(v, key, [])
                    if stop is not None:
                        return stop
            else:
                # Every state on a converging fair schedule converges too (its suffix is
                # fair).
                for s in reached:
                    converged_checked.add(canonical(s))
        if max_depth is not None and node.depth >= max_depth:
            exhausted = False
            continue
        for action in enabled(state, config):
            new = step(state, action, config)
            steps += 1
            new_key = canonical(new)
            post_view = -1
            if _step_may_matter(state, new, epoch):
                if pre_view < 0:
                    pre_view = node.view = view_of(state)
                post_view = views.after(pre_view, state, new)
                bad = relevant(views.check_step(state, pre_view, action, new, post_view))
            else:
                checker.note_witnesses(state, action, new)
                bad = []
            if graph is not None:
                graph.add_edge(key, new_key, kind=action.kind)
                graph.nodes[new_key].setdefault("state", new)  # drawn as the node's label
            if bad:
                if collect is None:
                    nodes.setdefault(new_key, _Node(new, node.depth + 1, key, action))
                stop = found_all(bad, key, [action])
                if stop is not None:
                    nodes.setdefault(new_key, _Node(new, node.depth + 1, key, action))
                    return stop
            new_node = _Node(new, node.depth + 1, key, action)
            if nodes.setdefault(new_key, new_node) is not new_node:
                continue  # visited (one hash of the key, where a lookup and a store took two)
            if graph is not None:
                graph.nodes[new_key]["depth"] = node.depth + 1
            max_seen_depth = max(max_seen_depth, node.depth + 1)
            if post_view < 0:
                post_view = view_of(new)
            new_node.view = post_view
            bad = relevant(check_state(new, post_view))
            if not bad and z3_check is not None:
                bad = relevant(z3_check(views.snapshots[post_view]))
            if bad:
                stop = found_all(bad, new_key, [])
                if stop is not None:
                    return stop
            if rebalance is not None and action.PERTURBATION:
                slow = too_slow(new, new_key, node.depth + 1)
                if slow is not None:
                    stop = found(slow, new_key, [])
                    if stop is not None:
                        return stop
            queue.append((new_key, new_node))
            if progress is not None and len(nodes) % 1000 == 0:
                progress(len(nodes), node.depth + 1, len(queue))
    return finish(cut, exhausted=exhausted)


def _added(keys: set[Hashable], key: Hashable) -> bool:
    """Add ``key`` to ``keys``; whether it was new (one hash of the key)."""
    before = len(keys)
    keys.add(key)
    return len(keys) > before


def clean_scope(distinct: int, *, exhausted: bool, cut: str | None, max_depth: int | None) -> str:
    """What a BFS that violated nothing checked, in words (``ExploreResult.checked``)."""
    if cut is None and not exhausted:
        return f"every state within {max_depth} steps ({distinct} distinct states)"
    return f"{distinct} distinct states" + (", exhausted" if exhausted else "")


def _step_may_matter(pre: AnyState, post: AnyState, epoch: Callable[[Any], int]) -> bool:
    """Whether a step property could be falsified by this transition: every step property
    reads only the group and the clients' epochs (``epoch``: the family's
    ``ProtocolFamily.client_epoch``) and incarnations."""
    if post is pre:
        return False
    if post.group is not pre.group:
        return True
    pairs: Iterable[tuple[Client | ClassicClient, Client | ClassicClient]] = zip(
        pre.clients, post.clients, strict=True
    )
    for a, b in pairs:  # a loop, not any(): this runs on every transition of a search
        if a is not b and (epoch(a) != epoch(b) or a.incarnation != b.incarnation):
            return True
    return False


def _z3_checker(checker: Checker) -> Callable[[object], list[Violation]]:
    from invariants.z3.check import z3_holds  # noqa: PLC0415  z3 only when a symbolic check runs

    def check(snap: object) -> list[Violation]:
        return [
            Violation(p.name, p.description + " (Z3)", p.kind.value)
            for p in checker.state_properties
            if not z3_holds(p, snap)  # type: ignore[arg-type]
        ]

    return check


def state_graph(config: Config, max_states: int = 5000, symmetry: bool = False) -> nx.DiGraph:
    """The reachable state graph of a small config as a networkx DiGraph."""
    g: nx.DiGraph = nx.DiGraph()
    bfs(config, max_states=max_states, symmetry=symmetry, check_convergence=False, graph=g)
    return g


STATE_GRAPH_LIMIT = 1500
"""Counterexamples of explorations with fewer than this many states get a state-graph
picture (``reports.render.dot.state_graph_dot`` draws at most 400 of them whole)."""


def small_state_graph(path: Path) -> tuple[nx.DiGraph | None, Sequence[AnyState]]:
    """The state graph around a counterexample when the exploration is small (else None)."""
    graph = state_graph(path.config, max_states=STATE_GRAPH_LIMIT)
    if graph.number_of_nodes() >= STATE_GRAPH_LIMIT:
        return None, ()
    normal = channel_normal_form(path.config)
    keys = [normal(s) for s in path.states()]
    if not all(k in graph for k in keys):
        return None, ()
    return graph, keys
